#!/usr/bin/env bash
# tests/e2e/demo.sh — `make demo` (tests/tools/demo.sh) on the synthetic
# model it falls back to without fixtures, with two presets and 12 kB of
# text: it must finish
# with exit 0 and print a full table (every row's PPL, KLD and same-top rate
# numbers). The fixture path is what `make demo` shows by default and is not
# repeated here (the other e2e scripts cover its steps).
source "$(dirname "$0")/lib.sh"
W=$TMP/demo
mkdir -p "$W"
if [ ! -x "$BIN/tests/tools/mkhf" ]; then
    skip "demo on the synthetic model" "no $BIN/tests/tools/mkhf"
    exit 0
fi
GGUFKIT_FIXTURES=$W/no-fixtures DEMO_WORK=$W/work DEMO_PRESETS="Q4_K_M Q8_0" DEMO_TEXT=12000 BUILD=$BUILD \
    bash "$ROOT/tests/tools/demo.sh" >"$W/out" 2>"$W/err"; rc=$?
if [ $rc -eq 0 ] && grep -q '^model: synthetic LLaMA' "$W/out"; then
    pass "demo on the synthetic model: exit 0"
else
    fail "demo on the synthetic model: exit 0" "exit $rc: $(tail -6 "$W/err" | tr '\n' ' ')"
fi
num='-?[0-9]+\.[0-9]+'
for t in F16 Q4_K_M Q8_0; do
    if grep -qE "^$t +$num +$num +$num +$num +$num%$" "$W/out"; then
        pass "demo table: $t row has size, bpw, PPL, KLD and same top"
    else
        fail "demo table: $t row has size, bpw, PPL, KLD and same top" "$(grep "^$t " "$W/out")"
    fi
done
exit 0
