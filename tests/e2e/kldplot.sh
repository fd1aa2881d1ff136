#!/usr/bin/env bash
# tests/e2e/kldplot.sh — tests/tools/kldplot.sh, the SVG of mean KLD (log
# scale) against file size that `make demo` draws beside its table.
#
# A drawing is well-formed XML with one marker per row (class "pt SERIES"),
# each row's label, both axis titles and tick labels on both axes; a KLD of
# 0 or below is drawn at the floor and named in the note; one point, equal
# sizes and a range of 270 decades still give finite coordinates and a
# bounded number of tick labels; a size far past the others breaks the x
# axis; labels are escaped. Bad rows are refused
# with the file and line named, exit 1 and nothing written (an existing
# output left as it was); the input, a directory or a missing folder is
# never written.
source "$(dirname "$0")/lib.sh"
PLOT=$ROOT/tests/tools/kldplot.sh
W=$TMP/kldplot
mkdir -p "$W"

# svg_stats SVG: "WELLFORMED MARKERS" — WELLFORMED is ok when the file
# parses as XML (python3's minidom, else xmllint), MARKERS the elements
# whose class starts with "pt ".
svg_stats() {
    if command -v python3 >/dev/null; then
        python3 - "$1" <<'PY' 2>/dev/null || echo "bad 0"
import sys, xml.dom.minidom
d = xml.dom.minidom.parse(sys.argv[1])
n = sum(1 for e in d.getElementsByTagName("*") if e.getAttribute("class").startswith("pt "))
print("ok", n)
PY
    elif command -v xmllint >/dev/null; then
        if xmllint --noout "$1" 2>/dev/null; then echo "ok $(grep -c 'class="pt ' "$1")"; else echo "bad 0"; fi
    else
        echo "unchecked $(grep -c 'class="pt ' "$1")"
    fi
}
# plot_ok FILE NAME ROWS WANT_MARKERS [ARGS...]: kldplot ROWS -> FILE.svg
# exits 0 and the SVG is well-formed with WANT_MARKERS markers, no nan or inf.
plot_ok() {
    local file=$1 name=$2 rows=$3 want=$4 st
    shift 4
    if ! bash "$PLOT" "$@" "$rows" "$W/$file.svg" 2>"$W/$file.err"; then
        fail "kldplot: $name" "exit $?: $(cat "$W/$file.err")"; return
    fi
    st=$(svg_stats "$W/$file.svg")
    if [[ $st == unchecked* ]]; then skip "kldplot: $name: well-formed" "neither python3 nor xmllint"; fi
    if [[ $st == "ok $want" || $st == "unchecked $want" ]] && ! grep -qiE 'nan|inf[^o]' "$W/$file.svg"; then
        pass "kldplot: $name: well-formed, $want markers, finite coordinates"
    else
        fail "kldplot: $name" "$st (want ok $want); $(grep -ioE '.{20}(nan|inf[^o]).{10}' "$W/$file.svg" | head -1)"
    fi
}
# xticks / yticks SVG: how many tick labels each axis has
xticks() { sed -n '/<g class="xticks"/,/<\/g>/p' "$1" | grep -o '<text' | wc -l; }
yticks() { sed -n '/<g class="yticks"/,/<\/g>/p' "$1" | grep -o '<text' | wc -l; }

T=$'\t'
cat >"$W/demo.tsv" <<EOF2
# a comment, then rows as demo.sh writes them
F16${T}stock-plain${T}10590592${T}0.000001
Q2_K${T}stock-plain${T}2460000${T}0.038239
Q2_K+im${T}stock${T}2460224${T}0.020117
Q2_K${T}target${T}2460000${T}0.011218

Q4_K_M+im${T}stock${T}3442848${T}0.002453
Q4_K_M${T}target${T}3442080${T}0.001450
IQ2_XS+im${T}stock${T}2100000${T}0.061
EOF2
plot_ok demo "six presets" "$W/demo.tsv" 7 -t "wp-llama-5m: KLD & size"
S=$W/demo.svg
miss=""
for l in F16 Q2_K Q2_K+im Q4_K_M+im Q4_K_M IQ2_XS+im; do grep -q ">$l</text>" "$S" || miss="$miss $l"; done
[ "$(grep -c '>Q2_K</text>' "$S")" = 2 ] || miss="$miss Q2_K(twice)"
if [ -z "$miss" ]; then pass "kldplot: every row's label is drawn"; else fail "kldplot: labels" "missing:$miss"; fi
if grep -q 'class="xlabel"[^>]*>file size (MiB)</text>' "$S" && grep -q 'class="ylabel"[^>]*>mean KL divergence against F32 (log scale)</text>' "$S" &&
   grep -q '>wp-llama-5m: KLD &amp; size</text>' "$S"; then
    pass "kldplot: axis titles and the title (escaped)"
else fail "kldplot: axis titles" "$(grep -E 'xlabel|ylabel' "$S" | head -2)"; fi
# KLD 1e-6 .. 0.061: decades 1e-6 .. 0.1, one label each; sizes 2.0 .. 10.1 MiB
if [ "$(yticks "$S")" = 6 ] && grep -q '>1e-6</text>' "$S" && grep -q '>0.1</text>' "$S" && [ "$(xticks "$S")" -ge 4 ]; then
    pass "kldplot: tick labels on both axes (6 decades: 1e-6 .. 0.1)"
else fail "kldplot: ticks" "x $(xticks "$S"), y $(yticks "$S")"; fi
[ "$(grep -c 'class="pt target"' "$S")" = 2 ] && [ "$(grep -c 'class="pt stock"' "$S")" = 3 ] &&
    [ "$(grep -c 'class="pt stock-plain"' "$S")" = 2 ]
check "kldplot: a marker per row in its series (3 stock, 2 stock-plain, 2 target)" test $? = 0
# a higher KLD is drawn higher (smaller y), a larger file further right
y_of() { sed -nE "s/.*class=\"pt $1\" c?x=\"([0-9.]+)\" c?y=\"([0-9.]+)\".*<title>$2:.*/\\2/p" "$S"; }
x_of() { sed -nE "s/.*class=\"pt $1\" c?x=\"([0-9.]+)\" c?y=\"([0-9.]+)\".*<title>$2:.*/\\1/p" "$S"; }
if awk -v a="$(y_of stock 'Q2_K[+]im')" -v b="$(y_of target Q2_K)" -v c="$(x_of stock-plain F16)" -v d="$(x_of stock-plain Q2_K)" \
       'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0 && c + 0 > d + 0) }'; then
    pass "kldplot: KLD up, size right"
else fail "kldplot: orientation" "Q2_K+im y $(y_of stock 'Q2_K[+]im'), target y $(y_of target Q2_K)"; fi

# KLD 0 and below: clamped to the floor, named
printf 'F16\tstock-plain\t10590592\t-0.000000\nF16b\tstock-plain\t10590592\t0\nQ8_0\tstock\t5675616\t6.9e-05\n' >"$W/zero.tsv"
plot_ok zero "KLD 0 and -0" "$W/zero.tsv" 3
if grep -q 'drawn at the floor 1e-6: F16, F16b<' "$W/zero.svg" && [ "$(grep -c '(clamped)</text>' "$W/zero.svg")" = 2 ]; then
    pass "kldplot: KLD of 0 and -0 drawn at the floor and named"
else fail "kldplot: clamp" "$(grep 'class="note"' "$W/zero.svg")"; fi
printf 'F16\tstock-plain\t10590592\t0\n' >"$W/allzero.tsv"
plot_ok allzero "all KLD 0" "$W/allzero.tsv" 1
# one point; two at one size; 270 decades; sizes of a byte or two
printf 'Q4_K_M\ttarget\t3442080\t0.00145\n' >"$W/one.tsv"
plot_ok one "one point" "$W/one.tsv" 1
if [ "$(xticks "$W/one.svg")" -ge 2 ] && [ "$(yticks "$W/one.svg")" -ge 2 ]; then pass "kldplot: one point still has ticks on both axes"
else fail "kldplot: one point ticks" "x $(xticks "$W/one.svg"), y $(yticks "$W/one.svg")"; fi
printf 'a\tstock\t1000\t0.5\nb\ttarget\t1000\t0.5\n' >"$W/same.tsv"
plot_ok same "one size, one KLD" "$W/same.tsv" 2
printf 'a\tstock\t1\t1e-250\nb\ttarget\t2\t1e20\nc\tstock-plain\t999999999999999\t3\n' >"$W/huge.tsv"
plot_ok huge "1e-250 to 1e20, 1 byte to 1e15 bytes" "$W/huge.tsv" 3
n=$(yticks "$W/huge.svg")
if [ "$n" -ge 2 ] && [ "$n" -le 11 ]; then pass "kldplot: 270 decades get $n tick labels (2 to 11)"
else fail "kldplot: huge range ticks" "$n"; fi
# F16 at 10.1 MiB beside files of 2.0 to 3.3: the axis breaks, F16 in a
# strip of its own with its size as tick label; close sizes do not break it
if grep -q 'class="break"' "$S" && grep -q '>10.10</text>' "$S" && ! grep -q 'class="break"' "$W/zero.svg" 2>/dev/null; then
    pass "kldplot: a size far past the others breaks the x axis (F16 in a strip)"
else fail "kldplot: axis break" "$(grep -c 'class="break"' "$S") break marks"; fi

printf 'a<b & "c">\tstock\t1000\t0.5\n' >"$W/esc.tsv"
plot_ok esc "a label with & < > \"" "$W/esc.tsv" 1
check "kldplot: the label is escaped" grep -q '>a&lt;b &amp; &quot;c&quot;&gt;</text>' "$W/esc.svg"

# refusals: exit 1, file:line named, nothing written
bad_rows() { # NAME WANT CONTENT
    printf '%b' "$3" >"$W/bad.tsv"
    fails_cleanly "kldplot refuses $1" "$W/bad.svg" "$2" bash "$PLOT" "$W/bad.tsv" "$W/bad.svg"
}
bad_rows "a missing field" "bad.tsv:2: want 4 tab-separated fields" 'a\tstock\t10\t0.1\nb\tstock\t10\n'
bad_rows "a size that is not a number" "bad.tsv:1: size '12a'" 'a\tstock\t12a\t0.1\n'
bad_rows "a size of 0" "bad.tsv:1: size '0'" 'a\tstock\t0\t0.1\n'
bad_rows "a negative size" "bad.tsv:1: size '-5'" 'a\tstock\t-5\t0.1\n'
bad_rows "a size past 1e15" "bad.tsv:1: size '1000000000000000'" 'a\tstock\t1000000000000000\t0.1\n'
bad_rows "a KLD that is not a number" "bad.tsv:1: KLD 'abc' is not a number" 'a\tstock\t10\tabc\n'
bad_rows "a KLD of nan" "bad.tsv:1: KLD 'nan' is not a number" 'a\tstock\t10\tnan\n'
bad_rows "a KLD of 1e400" "bad.tsv:1: KLD '1e400' is out of range" 'a\tstock\t10\t1e400\n'
bad_rows "a KLD of 1e-320" "bad.tsv:1: KLD '1e-320' is out of range" 'a\tstock\t10\t1e-320\n'
bad_rows "an unknown series" "bad.tsv:3: series 'best'" '# x\n\na\tbest\t10\t0.1\n'
bad_rows "an empty label" "bad.tsv:1: the label must be" '\tstock\t10\t0.1\n'
bad_rows "a control character in a label" "bad.tsv:1: the label holds a control character" 'a\033b\tstock\t10\t0.1\n'
bad_rows "no rows" "bad.tsv:0: no rows to draw" '# only a comment\n\n'
fails_cleanly "kldplot refuses a missing input" "$W/bad.svg" "nothing.tsv: no such file" bash "$PLOT" "$W/nothing.tsv" "$W/bad.svg"
fails_cleanly "kldplot refuses an output in a missing folder" "$W/no/x.svg" "its folder .* does not exist" \
    bash "$PLOT" "$W/demo.tsv" "$W/no/x.svg"
cp "$W/demo.tsv" "$W/in.tsv"
bash "$PLOT" "$W/in.tsv" "$W/in.tsv" >/dev/null 2>"$W/self.err"; rc=$?
if [ $rc = 1 ] && grep -q 'is the input: refusing' "$W/self.err" && cmp -s "$W/in.tsv" "$W/demo.tsv"; then
    pass "kldplot refuses to write over its input, which is unchanged"
else fail "kldplot: output = input" "exit $rc: $(cat "$W/self.err")"; fi
ln -sf "$W/in.tsv" "$W/link.svg"
bash "$PLOT" "$W/in.tsv" "$W/link.svg" >/dev/null 2>"$W/self.err"; rc=$?
if [ $rc = 1 ] && grep -q 'is the input' "$W/self.err" && cmp -s "$W/in.tsv" "$W/demo.tsv"; then pass "kldplot refuses a link to its input"
else fail "kldplot: link to input" "exit $rc: $(cat "$W/self.err")"; fi
mkdir -p "$W/dir.svg"
bash "$PLOT" "$W/in.tsv" "$W/dir.svg" >/dev/null 2>"$W/dir.err"; rc=$?
if [ $rc = 1 ] && grep -q 'dir.svg: not a regular file' "$W/dir.err"; then pass "kldplot refuses a directory as output"
else fail "kldplot: directory output" "exit $rc: $(cat "$W/dir.err")"; fi
bash "$PLOT" "$W/in.tsv" /dev/null >/dev/null 2>"$W/dev.err"; rc=$?
if [ $rc = 1 ] && grep -q '/dev/null: not a regular file' "$W/dev.err"; then pass "kldplot refuses a device as output"
else fail "kldplot: device output" "exit $rc: $(cat "$W/dev.err")"; fi
# a refused run leaves an existing output as it was, and no temporary file
cp "$S" "$W/keep.svg"
printf 'a\tstock\t10\tzz\n' >"$W/bad.tsv"
bash "$PLOT" "$W/bad.tsv" "$W/keep.svg" >/dev/null 2>&1; rc=$?
if [ $rc = 1 ] && cmp -s "$S" "$W/keep.svg" && [ -z "$(find "$W" -name '.kldplot.*')" ]; then
    pass "kldplot: a refused run leaves the old output whole and no temporary file"
else fail "kldplot: refused run" "exit $rc"; fi
bash "$PLOT" >/dev/null 2>&1; rc=$?
check "kldplot: no arguments is a usage error (exit 2)" test $rc = 2
exit 0
