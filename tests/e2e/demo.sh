#!/usr/bin/env bash
# tests/e2e/demo.sh — `make demo` (tests/tools/demo.sh) on the synthetic
# model it falls back to without fixtures, on two presets (a k-quant and an
# i-quant) and 12 kB of text, with a small calibration (8 chunks for the
# imatrix, 1 for a three-type sensitivity table). It must finish with exit
# 0 and print a full table: the k-quant without and with the imatrix, the
# i-quant with it only, each preset's target-size row right under its stock
# row with the imatrix and a verdict that agrees with the two rows' numbers
# (mean KLD change; "beats" when the mean and the 99th percentile are
# lower), a count of the target rows that beat theirs; kld-vs-size.svg
# well-formed with one marker per row but F32's, in the row's series;
# calibration and scoring text never the same bytes. DEMO_IMATRIX=0 leaves
# the imatrix, the i-quant and the target rows out; a bad knob stops the
# demo before it starts. The fixture path is what `make demo` shows by
# default and is not repeated here (the other e2e scripts cover its steps).
source "$(dirname "$0")/lib.sh"
W=$TMP/demo
mkdir -p "$W"
if [ ! -x "$BIN/tests/tools/mkhf" ]; then
    skip_block "demo on the synthetic model" "no $BIN/tests/tools/mkhf" 16
    exit 0
fi
demo() { # OUT ENV...: demo.sh on the synthetic model with ENV, its stdout in OUT.out
    local out=$1
    shift
    env GGUFKIT_FIXTURES="$W/no-fixtures" DEMO_WORK="$W/$out" DEMO_TEXT=12000 DEMO_CALIB_TEXT=20000 BUILD="$BUILD" \
        "$@" bash "$ROOT/tests/tools/demo.sh" >"$W/$out.out" 2>"$W/$out.err"
}
demo work DEMO_PRESETS="Q4_K_M IQ4_XS" DEMO_IMATRIX_CHUNKS=8 DEMO_SENS_CHUNKS=1 DEMO_SENS_TYPES=q4_K,q6_K,q8_0; rc=$?
O=$W/work.out D=$W/work
if [ $rc -eq 0 ] && grep -q '^model: synthetic LLaMA' "$O"; then
    pass "demo on the synthetic model: exit 0"
else
    fail "demo on the synthetic model: exit 0" "exit $rc: $(tail -6 "$W/work.err" | tr '\n' ' ')"
fi
num='-?[0-9]+\.[0-9]+'
stats="+$num +$num +$num +$num +$num +$num%"
for r in "F16 +stock +-" "Q4_K_M +stock +-" "Q4_K_M +stock +yes" "IQ4_XS +stock +yes"; do
    if grep -qE "^$r $stats +-$" "$O"; then
        pass "demo table: '$r' row has size, bpw, PPL, KLD, KLD p99 and same top"
    else
        fail "demo table: '$r' row" "$(grep -E "^${r%% *} " "$O" | tr '\n' '|')"
    fi
done
check "demo table: no IQ4_XS row without the imatrix" test -z "$(grep -E '^IQ4_XS +stock +- ' "$O")"
# each target row: right under its stock row with the imatrix, with the
# verdict that row's numbers give
for t in Q4_K_M IQ4_XS; do
    got=$(awk -v t="$t" '$1 == t && $2 == "stock" && $3 == "yes" { s = $0; getline; print s; print }' "$O")
    want=$(awk 'NR == 1 { k = $7; p = $8 } NR == 2 {
        d = k > 0 ? sprintf("%+.0f%%", ($7 - k) / k * 100) : "n/a"
        print d, ($7 < k && $8 < p ? "beats" : $7 < k ? "mean only, p99 not lower" : "does not beat") }' <<<"$got")
    line2=$(sed -n 2p <<<"$got")
    if [[ $line2 =~ ^$t\ +target\ +yes\ $stats\ +(.*)$ ]] && [[ ${BASH_REMATCH[1]} == "$want"* ]]; then
        pass "demo table: $t's target row under its stock row, verdict '${BASH_REMATCH[1]}'"
    else
        fail "demo table: $t's target row" "want '$want' under the stock row: $(tr '\n' '|' <<<"$got")"
    fi
done
nbeat=$(grep -cE ' target +yes .* beats' "$O")
check "demo: the count of target rows that beat their stock preset ($nbeat of 2)" \
    grep -qE "same imatrix .*: $nbeat of 2$" "$O"
# the table is kept beside the plot
check "demo: table.txt holds the table" cmp -s <(sed -n '/^PRESET /,/ of 2$/p' "$O" | grep -v '^$') <(grep -v '^$' "$D/table.txt")
# calibration and scoring text: the docs' head and tail, not meeting
if [ -s "$D/text.txt" ] && [ -s "$D/calib.txt" ] &&
   cmp -s "$D/text.txt" <(head -c 12000 "$D/docs.txt") && cmp -s "$D/calib.txt" <(tail -c 20000 "$D/docs.txt") &&
   [ $((12000 + 20000)) -le "$(stat -c %s "$D/docs.txt")" ]; then
    pass "demo: calibrated on the docs' last 20 kB, scored on their first 12 kB"
else fail "demo: calibration and scoring text" "$(ls -l "$D"/*.txt | tr '\n' '|')"; fi
# the plot: well-formed, a marker per row but F32 in its series
S=$D/kld-vs-size.svg
rows=$(awk '/^PRESET /,/^$/' "$O" | grep -cE "^[A-Z0-9_]+ +(stock|target) ")
want_series=$(awk '/^PRESET /,/^$/' "$O" | awk '$2 == "target" { t++ } $2 == "stock" && $3 == "yes" { s++ } $2 == "stock" && $3 == "-" { p++ }
                                          END { printf "%d %d %d", s, p, t }')
got_series="$(grep -c 'class="pt stock"' "$S") $(grep -c 'class="pt stock-plain"' "$S") $(grep -c 'class="pt target"' "$S")"
if [ -s "$S" ] && [ "$rows" = 6 ] && [ "$got_series" = "$want_series" ]; then
    pass "demo plot: a marker per row but F32 ($rows: stock+imatrix, stock, target = $got_series)"
else fail "demo plot: markers" "rows $rows, want $want_series, got $got_series"; fi
if command -v python3 >/dev/null; then
    if python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$S" 2>"$W/xml.err"; then
        pass "demo plot: well-formed XML"
    else fail "demo plot: well-formed XML" "$(tail -1 "$W/xml.err")"; fi
else skip "demo plot: well-formed XML" "no python3"; fi
check "demo: says where the plot is" grep -q "^plot: $S " "$O"

# DEMO_IMATRIX=0: the stock rows without one alone
demo plain DEMO_IMATRIX=0 DEMO_PRESETS="Q8_0 IQ4_XS"; rc=$?
P=$W/plain.out
if [ $rc -eq 0 ] && [ "$(awk '/^PRESET /,/^$/' "$P" | grep -cE ' (stock|target) ')" = 2 ] && grep -qE "^Q8_0 +stock +- $stats +-$" "$P" &&
   grep -q '^left out (they need an imatrix; DEMO_IMATRIX=0): IQ4_XS$' "$P" && [ ! -e "$W/plain/calib.imatrix" ] &&
   [ "$(grep -c 'class="pt ' "$W/plain/kld-vs-size.svg")" = 2 ]; then
    pass "demo DEMO_IMATRIX=0: F16 and Q8_0 alone, IQ4_XS left out and said so, no imatrix"
else fail "demo DEMO_IMATRIX=0" "exit $rc: $(tr '\n' '|' <"$P" | tail -c 400)"; fi
# a bad knob: stop at once, saying which
demo bad DEMO_SENS_CHUNKS=6x; rc=$?
if [ $rc -eq 1 ] && grep -q "^demo: DEMO_SENS_CHUNKS='6x': want a whole number from 1 to 100000$" "$W/bad.err" && [ ! -e "$W/bad" ]; then
    pass "demo refuses DEMO_SENS_CHUNKS=6x before it starts"
else fail "demo: bad knob" "exit $rc: $(cat "$W/bad.err")"; fi
exit 0
