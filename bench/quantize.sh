#!/usr/bin/env bash
# bench/quantize.sh — gguf-quantize against llama-quantize, same input,
# same presets, same thread count.
#
#   bench/quantize.sh [THREADS]          (BUILD=build by default)
#
# Generates a synthetic LLaMA-shaped f16 model with tests/tools/mkmodel
# (1024 wide, 16 layers, ffn 2816, 32000-token vocabulary: 266M weights,
# 0.5 GB) and times both tools with hyperfine on presets Q4_K_M, Q8_0 and
# Q2_K, printing each median and the ratio llama-quantize / gguf-quantize
# (above 1: we are faster). llama-quantize is found through LLAMA_CPP_BIN
# (a directory) or PATH; without it only our times are printed. Each pair's
# outputs are also compared tensor by tensor (sha256 of data), so a speedup
# that cost exactness would show.
#
# A benchmark, not a test: it never runs under `make test`.
set -euo pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) BIN=$BUILD ;; *) BIN=$ROOT/$BUILD ;; esac
THREADS=${1:-$(nproc)}
RUNS=${RUNS:-3}
PRESETS=${PRESETS:-"Q4_K_M Q8_0 Q2_K"}

OURS=$BIN/gguf-quantize
INSPECT=$BIN/gguf-inspect
MKMODEL=$BIN/tests/tools/mkmodel
for b in "$OURS" "$INSPECT" "$MKMODEL"; do
    [ -x "$b" ] || { echo "build first: make all build/tests/tools/mkmodel (no $b)" >&2; exit 1; }
done
if [ -n "${LLAMA_CPP_BIN:-}" ] && [ -x "$LLAMA_CPP_BIN/llama-quantize" ]; then
    THEIRS=$LLAMA_CPP_BIN/llama-quantize
else
    THEIRS=$(command -v llama-quantize || true)
fi
[ -n "$THEIRS" ] || echo "llama-quantize not found (set LLAMA_CPP_BIN or PATH): timing gguf-quantize alone"
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/quantize-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MODEL=$WORK/model-f16.gguf
"$MKMODEL" "$MODEL" --dim 1024 --layers 16 --ffn 2816 --heads 16 --kv-heads 16 \
    --vocab 32000 --type f16 >/dev/null
echo "input: $(du -h "$MODEL" | cut -f1) f16, threads: $THREADS, runs: $RUNS"
[ -n "$THEIRS" ] && echo "llama-quantize: $THEIRS"

median() { jq -r '.results[0].median' "$1"; }
hashes() { "$INSPECT" --hash --json "$1" | jq -r '.tensors[] | "\(.name) \(.sha256)"' | sort; }

printf '%-8s %12s %14s %8s  %s\n' preset gguf-quantize llama-quantize ratio outputs
for p in $PRESETS; do
    hyperfine -N --runs "$RUNS" --warmup 1 --export-json "$WORK/ours.json" \
        "$OURS -q $MODEL $WORK/ours.gguf $p $THREADS" >/dev/null
    ours=$(median "$WORK/ours.json")
    if [ -n "$THEIRS" ]; then
        hyperfine -N --runs "$RUNS" --warmup 1 --export-json "$WORK/theirs.json" \
            "$THEIRS $MODEL $WORK/theirs.gguf $p $THREADS" >/dev/null 2>&1
        theirs=$(median "$WORK/theirs.json")
        if cmp -s <(hashes "$WORK/ours.gguf") <(hashes "$WORK/theirs.gguf"); then same=identical
        else same=DIFFERENT; fi
        printf '%-8s %11.3fs %13.3fs %7.2fx  %s\n' "$p" "$ours" "$theirs" \
            "$(echo "$theirs / $ours" | bc -l)" "$same"
    else
        printf '%-8s %11.3fs %14s %8s\n' "$p" "$ours" - -
    fi
    rm -f "$WORK/ours.gguf" "$WORK/theirs.gguf"
done
