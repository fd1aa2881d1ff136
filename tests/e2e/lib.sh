# tests/e2e/lib.sh — sourced by every e2e script.
#
# Each check prints exactly one of "PASS: name", "FAIL: name (why)" or
# "SKIP: name (why)"; tests/run.sh counts them. Fixture-dependent checks call
# need_fixture first and are skipped (visibly) when it is missing.
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
case "$BUILD" in /*) BIN=$BUILD ;; *) BIN=$ROOT/$BUILD ;; esac
FIX=${GGUFKIT_FIXTURES:-$ROOT/../shared/fixtures}
TMP=${GGUFKIT_TMP:-$(mktemp -d)}
mkdir -p "$TMP"

INSPECT=$BIN/gguf-inspect

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1${2:+ ($2)}"; }
skip() { echo "SKIP: $1${2:+ ($2)}"; }

# check NAME CMD...: PASS when CMD succeeds, FAIL otherwise.
check() { local n=$1; shift; if "$@" >/dev/null 2>&1; then pass "$n"; else fail "$n"; fi; }

# need_fixture REL NAME: returns 1 (after printing SKIP) when absent.
need_fixture() {
    if [ -e "$FIX/$1" ]; then return 0; fi
    skip "$2" "fixture $1 not found"
    return 1
}
