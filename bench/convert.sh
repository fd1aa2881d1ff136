#!/usr/bin/env bash
# bench/convert.sh — gguf-convert's wall time and peak memory on a generated
# Hugging Face model of about 1.9 GB (BF16 safetensors: 2048 wide, 16
# layers, ffn 5632, vocabulary 32000), to F16; and llama.cpp's
# convert_hf_to_gguf.py on the same folder when it can run (CONVERT_HF_PY
# pointing at the script, and a python3 with torch, numpy, safetensors and
# sentencepiece), with the ratio.
#
#   bench/convert.sh            (BUILD=build by default; TOKENIZER=... to
#                                pick the tokenizer.model copied in)
#
# A benchmark, not a test: it never runs under `make test`.
set -euo pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) BIN=$BUILD ;; *) BIN=$ROOT/$BUILD ;; esac
FIX=${GGUFKIT_FIXTURES:-$ROOT/../shared/fixtures}
TOKENIZER=${TOKENIZER:-$FIX/models/wp-llama-5m/hf/tokenizer.model}
RUNS=${RUNS:-3}
for b in "$BIN/gguf-convert" "$BIN/tests/tools/mkhf"; do
    [ -x "$b" ] || { echo "build first: make all build/tests/tools/mkhf (no $b)" >&2; exit 1; }
done
[ -f "$TOKENIZER" ] || { echo "no tokenizer.model at $TOKENIZER (set TOKENIZER)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/convert-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MODEL=$WORK/model
"$BIN/tests/tools/mkhf" "$MODEL" --tokenizer "$TOKENIZER" --dim 2048 --layers 16 --ffn 5632 \
    --heads 16 --kv-heads 16 --vocab 32000 --dtype bf16
size=$(stat -c %s "$MODEL/model.safetensors")
largest=$((32000 * 2048 * 4)) # the embedding as f32, the converter's largest buffer
echo "input: $((size / 1048576)) MiB BF16 safetensors; largest tensor as f32: $((largest / 1048576)) MiB"

hyperfine -N --runs "$RUNS" --warmup 1 --export-json "$WORK/ours.json" \
    "$BIN/gguf-convert -q $MODEL --outtype f16 -o $WORK/ours.gguf" >/dev/null
ours=$(jq -r '.results[0].median' "$WORK/ours.json")
rss=$(/usr/bin/time -f %M "$BIN/gguf-convert" -q "$MODEL" --outtype f16 -o "$WORK/ours.gguf" 2>&1 >/dev/null | tail -1)
printf 'gguf-convert:       median %.3f s, peak RSS %d MiB (goal: at most the largest tensor + 64 = %d MiB)\n' \
    "$ours" $((rss / 1024)) $((largest / 1048576 + 64))

if [ -n "${CONVERT_HF_PY:-}" ] && python3 -c 'import torch, numpy, safetensors, sentencepiece' 2>/dev/null; then
    hyperfine -N --runs "$RUNS" --export-json "$WORK/theirs.json" \
        "python3 $CONVERT_HF_PY $MODEL --outtype f16 --outfile $WORK/theirs.gguf" >/dev/null
    theirs=$(jq -r '.results[0].median' "$WORK/theirs.json")
    trss=$(/usr/bin/time -f %M python3 "$CONVERT_HF_PY" "$MODEL" --outtype f16 --outfile "$WORK/theirs.gguf" 2>&1 >/dev/null | tail -1)
    printf 'convert_hf_to_gguf: median %.3f s, peak RSS %d MiB\n' "$theirs" $((trss / 1024))
    printf 'ratio: %.2fx faster\n' "$(echo "$theirs / $ours" | bc -l)"
else
    echo "convert_hf_to_gguf.py not run (set CONVERT_HF_PY and install torch, numpy, safetensors, sentencepiece)"
fi
