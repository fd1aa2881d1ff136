#!/usr/bin/env bash
# tests/tools/demo.sh — what `make demo` runs: the whole ggufkit path on one
# model, ending in a table that says what each quantization preset costs and
# what a mix chosen for the same size costs, and a picture of it.
#
#   checkpoint ─gguf-convert→ F32 and F16 GGUF
#   calibration text ─gguf-run --imatrix→ importance matrix
#                    ─gguf-run --sensitivity→ KLD per tensor and type
#   F16 ─gguf-quantize→ every preset: k-quants without and with the
#        imatrix, i-quants with it, and at each preset's size a target mix
#        (--imatrix --sensitivity)
#   each file ─gguf-run→ perplexity, KL divergence (mean, 99th percentile)
#        and same-top-token rate against the F32 model on the scoring text
#   the rows ─tests/tools/kldplot.sh→ kld-vs-size.svg beside table.txt
#
# The model is ../shared/fixtures' wp-llama-5m (a real 5M-parameter LLaMA
# trained on War and Peace), calibrated on botchan and scored on the
# held-out War and Peace text, when present; else a synthetic LLaMA with its
# own tokenizer made by tests/tools/mkhf (random weights: the numbers then
# only show that everything runs), calibrated on the tail of this
# repository's docs and scored on their head (never the same bytes).
# Calibration never sees the scoring text.
#
# Knobs (environment):
#   DEMO_WORK      where the files go (default $BUILD/demo; emptied first)
#   DEMO_PRESETS   the presets, in table order; IQ* and Q2_K_S are made
#                  with the imatrix only, the others without and with it
#   DEMO_TEXT      bytes of scoring text (default 60000)
#   DEMO_IMATRIX=0 no imatrix: the stock rows without one alone (the
#                  presets that need one are left out), no target rows
#   DEMO_TARGET=0  no sensitivity table and no target-size rows
#   DEMO_IMATRIX_CHUNKS / DEMO_SENS_CHUNKS  chunks of 128 tokens of
#                  calibration text for the imatrix (64) and the
#                  sensitivity table (6)
#   DEMO_SENS_TYPES  the types the sensitivity table tries (gguf-run's
#                  --sensitivity-types; default gguf-run's own list)
#   DEMO_CALIB_TEXT  synthetic model only: bytes of docs to calibrate on
#                  (default 60000)
# (tests/e2e/demo.sh runs a few presets on 12 kB of the synthetic model.)
set -euo pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) BIN=$BUILD ;; *) BIN=$ROOT/$BUILD ;; esac
FIX=${GGUFKIT_FIXTURES:-$ROOT/../shared/fixtures}
WORK=${DEMO_WORK:-$BIN/demo}
read -r -a PRESETS <<<"${DEMO_PRESETS:-IQ2_XS Q2_K IQ3_XXS Q3_K_S IQ3_S Q3_K_M Q3_K_L IQ4_XS Q4_0 IQ4_NL Q4_1 Q4_K_S Q4_K_M Q5_0 Q5_1 Q5_K_S Q5_K_M Q6_K Q8_0}"
CTX=256
CAL_CTX=128

# knob NAME VALUE MIN MAX: VALUE, a whole number in [MIN, MAX], or stop.
knob() {
    if ! [[ $2 =~ ^[0-9]{1,9}$ ]] || [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then
        echo "demo: $1='$2': want a whole number from $3 to $4" >&2
        exit 1
    fi
    echo "$2"
}
TEXT_BYTES=$(knob DEMO_TEXT "${DEMO_TEXT:-60000}" 1000 100000000)
CAL_BYTES=$(knob DEMO_CALIB_TEXT "${DEMO_CALIB_TEXT:-60000}" 1000 100000000)
USE_IMATRIX=$(knob DEMO_IMATRIX "${DEMO_IMATRIX:-1}" 0 1)
USE_TARGET=$(knob DEMO_TARGET "${DEMO_TARGET:-1}" 0 1)
[ "$USE_IMATRIX" = 1 ] || USE_TARGET=0
IM_CHUNKS=$(knob DEMO_IMATRIX_CHUNKS "${DEMO_IMATRIX_CHUNKS:-64}" 1 100000)
SENS_CHUNKS=$(knob DEMO_SENS_CHUNKS "${DEMO_SENS_CHUNKS:-6}" 1 100000)
[ ${#PRESETS[@]} -gt 0 ] || { echo "demo: DEMO_PRESETS names no preset" >&2; exit 1; }
for t in "${PRESETS[@]}"; do
    [[ $t =~ ^[A-Z0-9_]{1,16}$ ]] || { echo "demo: DEMO_PRESETS: '$t' is not a preset name" >&2; exit 1; }
done
rm -rf "$WORK"
mkdir -p "$WORK"

if [ -d "$FIX/models/wp-llama-5m/hf" ] && [ -f "$FIX/corpora/war-and-peace-heldout.txt" ] &&
   [ -f "$FIX/corpora/botchan.txt" ]; then
    SRC=$FIX/models/wp-llama-5m/hf
    MODEL=wp-llama-5m
    head -c "$TEXT_BYTES" "$FIX/corpora/war-and-peace-heldout.txt" >"$WORK/text.txt"
    cp "$FIX/corpora/botchan.txt" "$WORK/calib.txt"
    SCORED="$((TEXT_BYTES / 1000)) kB of held-out War and Peace"
    echo "model: wp-llama-5m (../shared/fixtures), scored on $SCORED, calibrated on botchan"
else
    SRC=$WORK/synthetic
    MODEL="synthetic LLaMA"
    "$BIN/tests/tools/mkhf" "$SRC" --dim 256 --layers 4 --ffn 768 --heads 8 --kv-heads 4 \
        --vocab 2048 --dtype f32
    # (not cat | head: under pipefail, cat's SIGPIPE once the docs pass
    # the text's length would end the script)
    cat "$ROOT"/README.md "$ROOT"/docs/*.md >"$WORK/docs.txt"
    have=$(stat -c %s "$WORK/docs.txt")
    if [ $((TEXT_BYTES + CAL_BYTES)) -gt "$have" ]; then
        echo "demo: the docs hold $have bytes, fewer than DEMO_TEXT + DEMO_CALIB_TEXT ($TEXT_BYTES + $CAL_BYTES) for two parts that do not meet" >&2
        exit 1
    fi
    head -c "$TEXT_BYTES" "$WORK/docs.txt" >"$WORK/text.txt"
    tail -c "$CAL_BYTES" "$WORK/docs.txt" >"$WORK/calib.txt"
    SCORED="the first $((TEXT_BYTES / 1000)) kB of the docs"
    echo "model: synthetic LLaMA (random weights, generated tokenizer), scored on the docs' head, calibrated on their tail"
fi

"$BIN/gguf-convert" -q "$SRC" --outtype f32 -o "$WORK/model-F32.gguf"
"$BIN/gguf-convert" -q "$SRC" --outtype f16 -o "$WORK/model-F16.gguf"
# step LOG WHAT CMD...: CMD with its output in LOG; when it fails, say
# WHAT failed, show LOG's last lines and stop.
step() {
    local log=$1 what=$2
    shift 2
    if ! "$@" >"$log" 2>&1; then
        echo "demo: $what failed:" >&2
        tail -5 "$log" >&2
        exit 1
    fi
}

step "$WORK/F32.log" "gguf-run --perplexity on F32" "$BIN/gguf-run" -m "$WORK/model-F32.gguf" \
    --perplexity "$WORK/text.txt" --ctx-size $CTX --kl-divergence-base "$WORK/base.kld"
ppl32=$(sed -nE 's/^perplexity: ([0-9.]+).*/\1/p' "$WORK/F32.log")

IM=$WORK/calib.imatrix SENS=$WORK/sensitivity.tsv
if [ "$USE_IMATRIX" = 1 ]; then
    step "$WORK/imatrix.log" "gguf-run --imatrix" "$BIN/gguf-run" -m "$WORK/model-F16.gguf" \
        --imatrix "$IM" -f "$WORK/calib.txt" -c $CAL_CTX --chunks "$IM_CHUNKS"
    sed -nE 's/^imatrix: (.*) written to .*/imatrix: \1 of the calibration text (gguf-run --imatrix)/p' "$WORK/imatrix.log"
fi
if [ "$USE_TARGET" = 1 ]; then
    step "$WORK/sensitivity.log" "gguf-run --sensitivity" "$BIN/gguf-run" -m "$WORK/model-F16.gguf" \
        --sensitivity "$SENS" -f "$WORK/calib.txt" -c $CAL_CTX --chunks "$SENS_CHUNKS" \
        --sensitivity-imatrix "$IM" ${DEMO_SENS_TYPES:+--sensitivity-types "$DEMO_SENS_TYPES"}
    echo "sensitivity: $(sed -nE 's/^sensitivity: ([0-9]+) measurements.*/\1/p' "$WORK/sensitivity.log") measurements over $(sed -nE 's/^# ([0-9]+ chunks of [0-9]+ tokens).*/\1/p' "$SENS") of the calibration text (gguf-run --sensitivity)"
fi

bpw() { # file -> bits per weight of its tensor data
    "$BIN/gguf-inspect" --no-tensors "$1" | sed -nE 's/^bits per weight: +([0-9.]+)/\1/p'
}
size_mib() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.2f", b / 1048576 }'; }
# needs_imatrix PRESET: made with the imatrix only (the i-quants; Q2_K_S,
# which llama.cpp makes only with one)
needs_imatrix() { [[ $1 == IQ* || $1 == Q2_K_S ]]; }

TABLE=$WORK/table.txt ROWS=$WORK/rows.tsv SVG=$WORK/kld-vs-size.svg
: >"$ROWS"
row_fmt='%-8s %-6s %-7s %8s %7s %10s %9s %9s %8s  %s\n'
# out ARGS...: a table line, on stdout and in table.txt
out() {
    # shellcheck disable=SC2059
    printf "$row_fmt" "$@" | tee -a "$TABLE"
}
echo
printf "$row_fmt" PRESET MIX IMATRIX "SIZE MiB" BPW PPL KLD "KLD p99" "SAME TOP" "KLD VS STOCK" | tee "$TABLE"
out F32 - - "$(size_mib "$WORK/model-F32.gguf")" "$(bpw "$WORK/model-F32.gguf")" "$ppl32" - - - -

# measure NAME FILE: KLD etc. of FILE into ppl kld p99 top
measure() {
    step "$WORK/$1.log" "gguf-run --kl-divergence on $1" "$BIN/gguf-run" -m "$2" --kl-divergence \
        --kl-divergence-base "$WORK/base.kld"
    local line
    line=$(grep '^kl-divergence:' "$WORK/$1.log")
    kld=$(sed -nE 's/.*mean (-?[0-9.]+).*/\1/p' <<<"$line") # F16 can be -0.000000, as in llama-perplexity
    top=$(sed -nE 's/.*same top ([0-9.]+%).*/\1/p' <<<"$line")
    ppl=$(sed -nE 's/.*, ppl ([0-9.]+),.*/\1/p' <<<"$line")
    p99=$(sed -nE 's/^99\.0% +KLD: +(-?[0-9.]+).*/\1/p' "$WORK/$1.log")
}
# quantize NAME PRESET ARGS...: gguf-quantize F16 -> model-NAME.gguf
quantize() {
    local name=$1 preset=$2
    shift 2
    step "$WORK/$name.quantize.log" "gguf-quantize to $name" "$BIN/gguf-quantize" "$@" \
        "$WORK/model-F16.gguf" "$WORK/model-$name.gguf" "$preset"
}
# row NAME PRESET MIX IMATRIX SERIES LABEL [VS]: model-NAME.gguf's line
# and point (measured here unless VS is given: then measure ran before)
row() {
    local f=$WORK/model-$1.gguf
    [ $# -gt 6 ] || measure "$1" "$f"
    out "$2" "$3" "$4" "$(size_mib "$f")" "$(bpw "$f")" "$ppl" "$kld" "$p99" "$top" "${7:--}"
    printf '%s\t%s\t%s\t%s\n' "$6" "$5" "$(stat -c %s "$f")" "$kld" >>"$ROWS"
}

row F16 F16 stock - stock-plain F16
beat=0 tried=0 skipped=()
for t in "${PRESETS[@]}"; do
    if ! needs_imatrix "$t"; then
        quantize "$t" "$t"
        row "$t" "$t" stock - stock-plain "$t"
    elif [ "$USE_IMATRIX" = 0 ]; then
        skipped+=("$t")
        continue
    fi
    [ "$USE_IMATRIX" = 1 ] || continue
    quantize "$t+im" "$t" --imatrix "$IM"
    row "$t+im" "$t" stock yes stock "$t+im"
    [ "$USE_TARGET" = 1 ] || continue
    skld=$kld sp99=$p99 sbytes=$(stat -c %s "$WORK/model-$t+im.gguf")
    quantize "$t+target" "$t" --imatrix "$IM" --sensitivity "$SENS"
    tbytes=$(stat -c %s "$WORK/model-$t+target.gguf")
    measure "$t+target" "$WORK/model-$t+target.gguf"
    # the verdict: mean KLD change against the stock preset with the same
    # imatrix; it beats it when the mean and the 99th percentile are lower
    vs=$(awk -v s="$skld" -v k="$kld" -v sp="$sp99" -v p="$p99" -v sb="$sbytes" -v tb="$tbytes" 'BEGIN {
        d = s > 0 ? sprintf("%+.0f%%", (k - s) / s * 100) : "n/a"
        v = k < s && p < sp ? "beats" : k < s ? "mean only, p99 not lower" : "does not beat"
        z = (tb - sb) / sb * 100
        printf "%s %s%s", d, v, (z > 1 || z < -1 ? sprintf(" (size %+.1f%%)", z) : "") }')
    grep -q "own mix kept" "$WORK/$t+target.quantize.log" && vs="$vs (stock mix kept)"
    tried=$((tried + 1))
    [[ $vs == *" beats"* ]] && beat=$((beat + 1))
    row "$t+target" "$t" target yes target "$t" "$vs"
done
echo
[ ${#skipped[@]} -eq 0 ] || echo "left out (they need an imatrix; DEMO_IMATRIX=0): ${skipped[*]}"
if [ "$USE_TARGET" = 1 ]; then
    echo "target-size mixes (gguf-quantize --imatrix --sensitivity at the preset's size) beating their stock preset with the same imatrix (mean and 99th-percentile KLD lower): $beat of $tried" |
        tee -a "$TABLE"
fi
bash "$ROOT/tests/tools/kldplot.sh" -t "$MODEL: mean KL divergence against file size ($SCORED, ctx $CTX)" \
    "$ROWS" "$SVG"
echo "plot: $SVG (every row but F32, the reference)"
echo "files and logs: $WORK"
