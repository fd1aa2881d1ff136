#!/usr/bin/env bash
# tests/run.sh — runs every Check unit test binary and every e2e script, then
# prints one closing line: "summary: N passed, N failed, N skipped".
#
# Unit binaries print Check's own line ("100%: Checks: 9, Failures: 0,
# Errors: 0") and "SKIPPED: n" for fixture tests they could not run. e2e
# scripts print "PASS: name", "FAIL: name" or "SKIP: name (why)" per check.
set -u
BUILD=${BUILD:-build}
export BUILD
export GGUFKIT_FIXTURES=${GGUFKIT_FIXTURES:-$(cd "$(dirname "$0")/.." && pwd)/../shared/fixtures}
export GGUFKIT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ggufkit-test.XXXXXX")
# make san: the OpenMP runtime's thread pool is not ours to free
# (tests/lsan.supp). use_tls=0: clang 14's LSan crashes in its exit-time
# scan of dynamic TLS on this glibc ("Tracer caught signal 11" after "DTLS 5
# at 0x...a7"), depending on the heap's layout (gguf-quantize's output path
# was enough to flip it); we keep no heap pointers in thread-local storage.
# print_suppressions=0: a run whose only leaks are suppressed prints nothing
# (the suppression table would follow gguf-run's last line, its timing).
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp:use_tls=0:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
trap 'rm -rf "$GGUFKIT_TMP"' EXIT

passed=0 failed=0 skipped=0
failures=()

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    out=$("$t" 2>&1); rc=$?
    printf '%s\n' "$out" | sed "s/^/[$name] /"
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: ' | tail -1)
    if [ -z "$line" ]; then
        failed=$((failed + 1)); failures+=("$name (no Check summary, exit $rc)"); continue
    fi
    n=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
    f=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
    e=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
    s=$(printf '%s\n' "$out" | sed -nE 's/^SKIPPED: ([0-9]+).*/\1/p' | tail -1)
    passed=$((passed + n - f - e)); failed=$((failed + f + e)); skipped=$((skipped + ${s:-0}))
    if [ "$rc" -ne 0 ] || [ $((f + e)) -ne 0 ]; then failures+=("$name"); fi
done

for s in tests/e2e/*.sh; do
    [ -f "$s" ] || continue
    name=$(basename "$s" .sh)
    out=$(bash "$s" 2>&1); rc=$?
    printf '%s\n' "$out" | sed "s/^/[$name] /"
    p=$(grep -c '^PASS: ' <<<"$out"); f=$(grep -c '^FAIL: ' <<<"$out"); k=$(grep -c '^SKIP: ' <<<"$out")
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
