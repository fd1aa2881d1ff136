#!/usr/bin/env bash
# tests/tools/target_table.sh — the rows of docs/gguf-quantize.md's
# --sensitivity tables: for one model, stock Q3_K_M / Q4_K_M / Q5_K_M against
# gguf-quantize --sensitivity's mix at each one's size, both with the same
# importance matrix, scored by gguf-run --kl-divergence on other text.
# Not part of make test (minutes on a large model).
#
#   tests/tools/target_table.sh F16.gguf CALIB.txt SCORE.txt WORKDIR
#   tests/tools/target_table.sh --samples F16.gguf FIRST LAST OUT.txt
#
# The second form writes a text of the model's own: one sample per seed
# FIRST..LAST, "Once upon a time" and 240 tokens at temperature 1 (for a
# model whose domain no fixture text covers; reproducible: gguf-run's
# sampling is a function of the seed).
#
# Environment (defaults as the wp-llama-5m table):
#   BUILD=build          the tools
#   CTX=128              tokens per chunk, everywhere
#   IM_CHUNKS=64         chunks of CALIB for the importance matrix
#   SENS_CHUNKS=6        chunks of CALIB for the sensitivity table
#   SCORE_CHUNKS=        chunks of SCORE scored (empty: all of it)
#   TYPES=               --sensitivity-types (empty: gguf-run's default)
#   PRESETS="Q3_K_M Q4_K_M Q5_K_M"
#   THREADS=2
#
# Prints one Markdown row per preset: size of | stock bytes | stock mean KLD |
# stock p99 | target bytes | mean KLD | p99 | mean KLD change | and, after
# the rows, what gguf-quantize said of each mix (retyped, or the stock mix kept).
# WORKDIR keeps everything made (imatrix, table, files, recipes, logs).
set -eu
B=${BUILD:-build}
if [ $# = 5 ] && [ "$1" = --samples ]; then
    for s in $(seq "$3" "$4"); do
        "$B/gguf-run" -m "$2" -p "Once upon a time" -n 240 --temp 1 --seed "$s" 2>/dev/null
        echo
    done >"$5"
    exit 0
fi
if [ $# -ne 4 ]; then
    sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
M=$1 CAL=$2 SCORE=$3 W=$4
CTX=${CTX:-128} IM_CHUNKS=${IM_CHUNKS:-64} SENS_CHUNKS=${SENS_CHUNKS:-6}
SCORE_CHUNKS=${SCORE_CHUNKS:-} TYPES=${TYPES:-} THREADS=${THREADS:-2}
PRESETS=${PRESETS:-Q3_K_M Q4_K_M Q5_K_M}
for f in "$M" "$CAL" "$SCORE"; do
    [ -r "$f" ] || { echo "target_table.sh: $f: cannot read" >&2; exit 1; }
done
mkdir -p "$W"
RUN=$B/gguf-run QUANTIZE=$B/gguf-quantize

"$RUN" -m "$M" --imatrix "$W/cal.imatrix" -f "$CAL" -c "$CTX" --chunks "$IM_CHUNKS" \
    -t "$THREADS" >"$W/imatrix.log" 2>&1
"$RUN" -m "$M" --sensitivity "$W/sens.tsv" -f "$CAL" -c "$CTX" --chunks "$SENS_CHUNKS" \
    --sensitivity-imatrix "$W/cal.imatrix" ${TYPES:+--sensitivity-types "$TYPES"} \
    -t "$THREADS" >"$W/sens.log" 2>&1
"$RUN" -m "$M" --perplexity "$SCORE" -c "$CTX" ${SCORE_CHUNKS:+--chunks "$SCORE_CHUNKS"} \
    --kl-divergence-base "$W/base.kld" -t "$THREADS" >"$W/base.log" 2>&1

# kld FILE: "mean p99" of its KL divergence from the F16 model on SCORE
kld() {
    "$RUN" -m "$1" --kl-divergence --kl-divergence-base "$W/base.kld" -t "$THREADS" 2>/dev/null |
        awk '/^Mean +KLD:/ { m = $3 } /^99.0% +KLD:/ { p = $3 } END { print m, p }'
}
notes=
for p in $PRESETS; do
    "$QUANTIZE" -q --imatrix "$W/cal.imatrix" "$M" "$W/s-$p.gguf" "$p" >"$W/s-$p.log" 2>&1
    "$QUANTIZE" --imatrix "$W/cal.imatrix" --sensitivity "$W/sens.tsv" \
        --write-recipe "$W/t-$p.recipe" "$M" "$W/t-$p.gguf" "$p" >"$W/t-$p.log" 2>&1
    sb=$(stat -c %s "$W/s-$p.gguf") tb=$(stat -c %s "$W/t-$p.gguf")
    read -r sm sp <<<"$(kld "$W/s-$p.gguf")"
    read -r tm tp <<<"$(kld "$W/t-$p.gguf")"
    ch=$(awk -v s="$sm" -v t="$tm" 'BEGIN { c = 100 * (t - s) / s; printf "%s%.0f%%", c < 0 ? "−" : "+", c < 0 ? -c : c }')
    echo "| $p | $sb | $sm | $sp | $tb | $tm | $tp | $ch |"
    notes="$notes$p: $(grep '^target:' "$W/t-$p.log" || echo '(no target line)')"$'\n'
done
printf '\n%s' "$notes"
