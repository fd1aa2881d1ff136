#!/usr/bin/env bash
# tests/run.sh — runs every Check unit test binary and every e2e script, then
# prints one closing line: "summary: N passed, N failed, N skipped".
#
# Unit binaries print Check's own line ("100%: Checks: 9, Failures: 0,
# Errors: 0") and "SKIPPED: n" for fixture tests they could not run. e2e
# scripts print "PASS: name", "FAIL: name" or "SKIP: name (why)" per check;
# a SKIP that stands for a whole block of checks ends in "[N checks]" and
# counts N. Every line is printed as it comes, so a long suite is never
# silent.
# With an argument, runs one suite: a unit test (test_reader) or an e2e
# script by name (inspect: tests/e2e/inspect.sh).
set -u
only=${1:-}
BUILD=${BUILD:-build}
export BUILD
export GGUFKIT_FIXTURES=${GGUFKIT_FIXTURES:-$(cd "$(dirname "$0")/.." && pwd)/../shared/fixtures}
export GGUFKIT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ggufkit-test.XXXXXX")
# make san: tests/lsan.supp holds what glibc keeps, not ours. use_tls=0: clang 14's LSan crashes in its exit-time
# scan of dynamic TLS on this glibc ("Tracer caught signal 11" after "DTLS 5
# at 0x...a7"), depending on the heap's layout (gguf-quantize's output path
# was enough to flip it); we keep no heap pointers in thread-local storage.
# print_suppressions=0: a run whose only leaks are suppressed prints nothing
# (the suppression table would follow gguf-run's last line, its timing).
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp:use_tls=0:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
trap 'rm -rf "$GGUFKIT_TMP"' EXIT

passed=0 failed=0 skipped=0
failures=()

# run_streamed NAME LOG CMD...: runs CMD, printing each line as it comes
# (prefixed "[NAME] ") and keeping it in LOG; returns CMD's exit status.
run_streamed() {
    local name=$1 log=$2; shift 2
    "$@" 2>&1 | tee "$log" | sed -u "s/^/[$name] /"
    return "${PIPESTATUS[0]}"
}
log=$GGUFKIT_TMP/suite.log

if [ -n "$only" ] && [ ! -x "$BUILD/tests/$only" ] && [ ! -f "tests/e2e/$only.sh" ]; then
    echo "no suite '$only': neither $BUILD/tests/$only nor tests/e2e/$only.sh" >&2
    exit 2
fi

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    [ -z "$only" ] || [ "$name" = "$only" ] || continue
    run_streamed "$name" "$log" "$t"; rc=$?
    line=$(grep -E '^[0-9]+%: Checks: ' "$log" | tail -1)
    if [ -z "$line" ]; then
        failed=$((failed + 1)); failures+=("$name (no Check summary, exit $rc)"); continue
    fi
    n=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
    f=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
    e=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
    s=$(sed -nE 's/^SKIPPED: ([0-9]+).*/\1/p' "$log" | tail -1)
    passed=$((passed + n - f - e)); failed=$((failed + f + e)); skipped=$((skipped + ${s:-0}))
    if [ "$rc" -ne 0 ] || [ $((f + e)) -ne 0 ]; then failures+=("$name"); fi
done

for s in tests/e2e/*.sh; do
    [ -f "$s" ] || continue
    name=$(basename "$s" .sh)
    [ -z "$only" ] || [ "$name" = "$only" ] || continue
    run_streamed "$name" "$log" bash "$s"; rc=$?
    p=$(grep -c '^PASS: ' "$log"); f=$(grep -c '^FAIL: ' "$log")
    # a SKIP line stands for [N] checks when it says so, else for one
    k=$(sed -nE 's/^SKIP: .*\[([0-9]+) checks?\]$/\1/p; t; s/^SKIP: .*/1/p' "$log" |
        awk '{ n += $1 } END { print n + 0 }')
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + k))
    if [ "$f" -ne 0 ]; then failures+=("$name"); fi
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        failed=$((failed + 1)); failures+=("$name (exit $rc)")
    fi
done

echo
[ ${#failures[@]} -eq 0 ] || printf 'failed: %s\n' "${failures[@]}"
echo "summary: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
