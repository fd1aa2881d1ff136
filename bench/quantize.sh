#!/usr/bin/env bash
# bench/quantize.sh — gguf-quantize against llama-quantize, same input,
# same presets, same thread count, same importance matrix.
#
#   bench/quantize.sh [THREADS]          (BUILD=build by default)
#
# Input: MODEL=FILE.gguf, or by default a synthetic LLaMA-shaped f16 model
# made with tests/tools/mkmodel (1024 wide, 16 layers, ffn 2816, 32000-token
# vocabulary: 266M weights, 0.5 GB). The i-quant presets (IQ*) get an
# importance matrix, IMATRIX=FILE or by default one gguf-run --imatrix
# collects on the model over 4 chunks of 128 tokens of TEXT (default: the
# fixtures' held-out corpus, else this script); llama-quantize reads the same
# file (the GGUF imatrix format).
#
# For each preset (PRESETS, default Q4_K_M Q8_0 Q2_K IQ4_XS IQ3_M IQ2_XXS
# IQ1_M) the two tools run alternately, RUNS times each (default 5: ours,
# theirs, ours, …), wall time per run; it prints the medians and the ratio
# llama-quantize / gguf-quantize (above 1: we are faster), and compares the
# two outputs tensor by tensor (sha256 of data), so a speedup that cost
# exactness would show. COMPETE=1 runs a busy loop on one core meanwhile.
# llama-quantize is found through LLAMA_CPP_BIN (a directory) or PATH;
# without it only our times are printed.
#
# RSS=1 measures memory instead of time: the peak resident set size
# (/usr/bin/time -v) of each preset (PRESETS_RSS, default Q8_0 Q4_K_M) on a
# model whose token_embd and output are one 2 GiB f16 tensor each (4096 ×
# 262144: 4.2 GB on disk, made with mkmodel in TMPDIR unless MODEL=), once
# per preset, with llama-quantize beside it when found. gguf-quantize goes
# through a tensor in pieces of 64 MiB: its peak stays at a few pieces
# whatever the tensor's size.
#
# Results are in docs/gguf-quantize.md ("Exactness and speed"). Last for
# Q8_0 (2026-11-28, default model, 2 threads, shared machine): f16 → q8_0
# in one pass, PRESETS=Q8_0 3.51× and 3.09× in two runs; alternating with
# the previous build, medians of 5: 0.905 s against 1.394 s before and
# 4.637 s for llama-quantize (5.13×, was 3.33×), outputs identical.
#
# A benchmark, not a test: it never runs under `make test`.
set -euo pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) BIN=$BUILD ;; *) BIN=$ROOT/$BUILD ;; esac
THREADS=${1:-$(nproc)}
RUNS=${RUNS:-5}
PRESETS=${PRESETS:-"Q4_K_M Q8_0 Q2_K IQ4_XS IQ3_M IQ2_XXS IQ1_M"}
FIX=${GGUFKIT_FIXTURES:-$ROOT/../shared/fixtures}

OURS=$BIN/gguf-quantize
INSPECT=$BIN/gguf-inspect
MKMODEL=$BIN/tests/tools/mkmodel
for b in "$OURS" "$INSPECT" "$MKMODEL" "$BIN/gguf-run"; do
    [ -x "$b" ] || { echo "build first: make all build/tests/tools/mkmodel (no $b)" >&2; exit 1; }
done
if [ -n "${LLAMA_CPP_BIN:-}" ] && [ -x "$LLAMA_CPP_BIN/llama-quantize" ]; then
    THEIRS=$LLAMA_CPP_BIN/llama-quantize
else
    THEIRS=$(command -v llama-quantize || true)
fi
[ -n "$THEIRS" ] || echo "llama-quantize not found (set LLAMA_CPP_BIN or PATH): timing gguf-quantize alone"
command -v jq >/dev/null || { echo "needs jq" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/quantize-bench.XXXXXX")
COMPETITOR=
cleanup() { [ -z "$COMPETITOR" ] || kill "$COMPETITOR" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
if [ "${RSS:-0}" = 1 ]; then
    [ -x /usr/bin/time ] || { echo "RSS=1 needs /usr/bin/time (GNU time)" >&2; exit 1; }
    if [ -z "${MODEL:-}" ]; then
        MODEL=$WORK/model-2g.gguf
        "$MKMODEL" "$MODEL" --dim 4096 --layers 1 --ffn 256 --heads 32 --kv-heads 8 \
            --vocab 262144 --type f16 >/dev/null
    fi
    [ -f "$MODEL" ] || { echo "MODEL=$MODEL: not a file" >&2; exit 1; }
    largest=$("$INSPECT" --json "$MODEL" | jq '[.tensors[].bytes] | max')
    echo "input: $MODEL ($(du -h "$MODEL" | cut -f1), largest tensor $((largest >> 20)) MiB), threads: $THREADS"
    rss() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ { print int($2 / 1024) }'; }
    printf '%-8s %20s %21s\n' preset "gguf-quantize MiB" "llama-quantize MiB"
    for p in ${PRESETS_RSS:-Q8_0 Q4_K_M}; do
        ours=$(rss "$OURS" -q "$MODEL" "$WORK/ours.gguf" "$p" "$THREADS")
        theirs=-
        [ -z "$THEIRS" ] || theirs=$(rss "$THEIRS" "$MODEL" "$WORK/theirs.gguf" "$p" "$THREADS")
        printf '%-8s %20s %21s\n' "$p" "$ours" "$theirs"
        rm -f "$WORK/ours.gguf" "$WORK/theirs.gguf"
    done
    exit 0
fi
if [ -n "${MODEL:-}" ]; then
    [ -f "$MODEL" ] || { echo "MODEL=$MODEL: not a file" >&2; exit 1; }
else
    MODEL=$WORK/model-f16.gguf
    "$MKMODEL" "$MODEL" --dim 1024 --layers 16 --ffn 2816 --heads 16 --kv-heads 16 \
        --vocab 32000 --type f16 >/dev/null
fi
if [ -z "${IMATRIX:-}" ] && grep -q 'IQ' <<<"$PRESETS"; then
    TEXT=${TEXT:-$FIX/corpora/war-and-peace-heldout.txt}
    [ -f "$TEXT" ] || TEXT=$0
    IMATRIX=$WORK/imatrix.gguf
    "$BIN/gguf-run" -m "$MODEL" --imatrix "$IMATRIX" -f "$TEXT" --ctx-size 128 --chunks 4 \
        -t "$THREADS" >/dev/null 2>&1
fi
echo "input: $MODEL ($(du -h "$MODEL" | cut -f1)), threads: $THREADS, runs: $RUNS each, alternating"
[ -n "${IMATRIX:-}" ] && echo "imatrix (IQ presets): $IMATRIX"
[ -n "$THEIRS" ] && echo "llama-quantize: $THEIRS"
if [ "${COMPETE:-0}" = 1 ]; then
    (while :; do :; done) &
    COMPETITOR=$!
    echo "with one busy-loop competitor (pid $COMPETITOR)"
fi

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
hashes() { "$INSPECT" --hash --json "$1" | jq -r '.tensors[] | "\(.name) \(.sha256)"' | sort; }

printf '%-8s %12s %14s %8s  %s\n' preset gguf-quantize llama-quantize ratio outputs
for p in $PRESETS; do
    im=()
    [[ $p == IQ* ]] && im=(--imatrix "$IMATRIX")
    : >"$WORK/ours.t"
    : >"$WORK/theirs.t"
    for ((i = 0; i < RUNS; i++)); do
        t0=$(now)
        "$OURS" -q "${im[@]}" "$MODEL" "$WORK/ours.gguf" "$p" "$THREADS"
        echo "$(now) - $t0" | bc -l >>"$WORK/ours.t"
        if [ -n "$THEIRS" ]; then
            t0=$(now)
            "$THEIRS" "${im[@]}" "$MODEL" "$WORK/theirs.gguf" "$p" "$THREADS" >/dev/null 2>&1
            echo "$(now) - $t0" | bc -l >>"$WORK/theirs.t"
        fi
    done
    ours=$(median <"$WORK/ours.t")
    if [ -n "$THEIRS" ]; then
        theirs=$(median <"$WORK/theirs.t")
        if cmp -s <(hashes "$WORK/ours.gguf") <(hashes "$WORK/theirs.gguf"); then same=identical
        else same=DIFFERENT; fi
        printf '%-8s %11.3fs %13.3fs %7.2fx  %s\n' "$p" "$ours" "$theirs" \
            "$(echo "$theirs / $ours" | bc -l)" "$same"
    else
        printf '%-8s %11.3fs %14s %8s\n' "$p" "$ours" - -
    fi
    rm -f "$WORK/ours.gguf" "$WORK/theirs.gguf"
done
