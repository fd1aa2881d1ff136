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

CHECKS=0 # checks reported so far, for counted blocks
pass() { CHECKS=$((CHECKS + 1)); echo "PASS: $1"; }
fail() { CHECKS=$((CHECKS + 1)); echo "FAIL: $1${2:+ ($2)}"; }
skip() { CHECKS=$((CHECKS + 1)); echo "SKIP: $1${2:+ ($2)}"; }

# usage_error BIN NAME WANT ARGS...: BIN ARGS exits 2 with one line
# "TOOL: error: ...WANT... (see 'TOOL --help')" on stderr (TOOL is BIN's name).
usage_error() {
    local bin=$1 name=$2 want=$3 tool out rc
    tool=$(basename "$bin")
    shift 3
    out=$("$bin" "$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 2 ] && [[ $out == "$tool: error: "*"$want"*" (see '$tool --help')" ]]; then
        pass "usage: $name"
    else
        fail "usage: $name" "exit $rc: $out"
    fi
}

# skip_block NAME WHY N: one SKIP line standing for N checks.
skip_block() { CHECKS=$((CHECKS + 1)); echo "SKIP: $1 ($2) [$3 check$([ "$3" = 1 ] || echo s)]"; }

# check NAME CMD...: PASS when CMD succeeds, FAIL otherwise.
check() { local n=$1; shift; if "$@" >/dev/null 2>&1; then pass "$n"; else fail "$n"; fi; }

# need_fixture REL NAME [N]: returns 1 (after printing SKIP) when absent.
# With N, the block of checks it guards holds N checks: when the fixture is
# absent its one SKIP line ends in "[N checks]" and tests/run.sh counts N
# skips; when present, the block must end with fixture_block_end, which
# fails if the block did not report exactly N checks (so N cannot go stale).
BLOCK_NAME='' BLOCK_N=0 BLOCK_AT=0
need_fixture() {
    if [ -e "$FIX/$1" ]; then
        if [ -n "${3:-}" ]; then
            [ -z "$BLOCK_NAME" ] || fail "test block '$BLOCK_NAME' has no fixture_block_end"
            BLOCK_NAME=$2 BLOCK_N=$3 BLOCK_AT=$CHECKS
        fi
        return 0
    fi
    CHECKS=$((CHECKS + 1))
    echo "SKIP: $2 (fixture $1 not found)${3:+ [$3 check$([ "$3" = 1 ] || echo s)]}"
    return 1
}
fixture_block_end() {
    local ran=$((CHECKS - BLOCK_AT))
    if [ -n "$BLOCK_NAME" ] && [ "$ran" -ne "$BLOCK_N" ]; then
        fail "test block '$BLOCK_NAME' reported $ran checks, its need_fixture says $BLOCK_N (update it)"
    fi
    BLOCK_NAME=''
}
