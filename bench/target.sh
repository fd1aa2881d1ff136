#!/usr/bin/env bash
# bench/target.sh — what a target-size mix costs in time against a stock
# quantization of the same model (issue: the search within 10× of it).
#
#   bench/target.sh [THREADS]            (BUILD=build by default)
#
# Model: MODEL=F16.gguf, or by default the 250M LLaMA of bench/run.sh's
# llama250m row (tests/tools/mkhf: dim 1024, 16 layers, ffn 2816, GQA 16/4,
# vocabulary 32000; random weights), converted to F16 by gguf-convert. One
# importance matrix first (gguf-run --imatrix, IM_CHUNKS chunks of 128
# tokens of TEXT, default the fixtures' botchan, else the docs): the stock
# preset and the target mix both quantize with it, so its time is common
# and printed apart.
#
# Then, alternately (stock, search, stock, …), RUNS times each (default 5):
#   stock:  gguf-quantize --imatrix IM F16 out PRESET
#   search: gguf-run --sensitivity (gguf-run's default: q4_K measured per
#           matrix, SENS_CHUNKS chunks of SENS_CTX tokens) + gguf-quantize
#           --imatrix IM --sensitivity TABLE F16 out PRESET (the estimate
#           of the other types, the allocation and the file)
# and prints the medians and search / stock. COMPETE=1 runs a busy loop on
# one core meanwhile (users' machines are never idle).
#
# Measured (2026-11-28, 2 cores, 250M default model, Q4_K_M, 5 runs each):
# idle, stock 3.64 s, search 30.5 s: 8.4× (single runs 6.0–12.1×, other
# jobs on the machine in two); one busy loop beside, stock 4.52 s, search
# 43.4 s: 9.6×. The importance matrix (8 chunks) took 4.7 s.
#
# A benchmark, not a test: it never runs under `make test`.
. "$(dirname "$0")/lib.sh"
THREADS=${1:-$(nproc)}
RUNS=${RUNS:-5}
PRESET=${PRESET:-Q4_K_M}
IM_CHUNKS=${IM_CHUNKS:-8}
SENS_CHUNKS=${SENS_CHUNKS:-1}
SENS_CTX=${SENS_CTX:-64}
FIX=${GGUFKIT_FIXTURES:-$ROOT/../shared/fixtures}
for b in gguf-convert gguf-quantize gguf-run tests/tools/mkhf; do
    [ -x "$BIN/$b" ] || { echo "build first: make all build/tests/tools/mkhf (no $BIN/$b)" >&2; exit 1; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ggufkit-target.XXXXXX")
busy=
stop_busy() { if [ -n "$busy" ]; then kill "$busy" 2>/dev/null; wait "$busy" 2>/dev/null || true; busy=; fi; }
trap 'stop_busy; rm -rf "$WORK"' EXIT

if [ -n "${MODEL:-}" ]; then
    M=$MODEL
else
    "$BIN/tests/tools/mkhf" "$WORK/hf" --dim 1024 --layers 16 --ffn 2816 --heads 16 --kv-heads 4 \
        --dtype f16 >/dev/null
    "$BIN/gguf-convert" -q "$WORK/hf" --outtype f16 -o "$WORK/model-f16.gguf"
    rm -rf "$WORK/hf"
    M=$WORK/model-f16.gguf
fi
if [ -n "${TEXT:-}" ]; then T=$TEXT
elif [ -f "$FIX/corpora/botchan.txt" ]; then T=$FIX/corpora/botchan.txt
else cat "$ROOT"/README.md "$ROOT"/docs/*.md >"$WORK/text.txt"; T=$WORK/text.txt; fi

# secs CMD...: the wall time of CMD in seconds (its output dropped; a failure stops the run)
secs() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>"$WORK/err" || { echo "failed: $*" >&2; tail -3 "$WORK/err" >&2; exit 1; }
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

[ "${COMPETE:-0}" = 1 ] && { ( while :; do :; done ) & busy=$!; }
echo "model: $M ($(stat -c %s "$M") bytes), $THREADS threads, preset $PRESET, $RUNS runs each${busy:+, one busy loop beside}"
im=$(secs "$BIN/gguf-run" -m "$M" --imatrix "$WORK/im.gguf" -f "$T" -c 128 --chunks "$IM_CHUNKS" -t "$THREADS")
echo "importance matrix ($IM_CHUNKS chunks of 128, common to both): $im s"
search() {
    "$BIN/gguf-run" -m "$M" --sensitivity "$WORK/s.tsv" -f "$T" -c "$SENS_CTX" --chunks "$SENS_CHUNKS" \
        --sensitivity-imatrix "$WORK/im.gguf" -t "$THREADS" &&
    "$BIN/gguf-quantize" -q --imatrix "$WORK/im.gguf" --sensitivity "$WORK/s.tsv" "$M" \
        "$WORK/t.gguf" "$PRESET" "$THREADS"
}
: >"$WORK/stock" ; : >"$WORK/search"
for r in $(seq "$RUNS"); do
    secs "$BIN/gguf-quantize" -q --imatrix "$WORK/im.gguf" "$M" "$WORK/s.gguf" "$PRESET" "$THREADS" >>"$WORK/stock"
    secs search >>"$WORK/search"
    echo "run $r: stock $(tail -1 "$WORK/stock") s, search $(tail -1 "$WORK/search") s"
done
s=$(median <"$WORK/stock") t=$(median <"$WORK/search")
echo "median: stock $s s, search $t s (table: $(grep -vc '^#' "$WORK/s.tsv") measurements of $SENS_CHUNKS × $SENS_CTX tokens), search / stock $(awk -v a="$t" -v b="$s" 'BEGIN { printf "%.2f", a / b }')"
echo "sizes: stock $(stat -c %s "$WORK/s.gguf"), target $(stat -c %s "$WORK/t.gguf")"
