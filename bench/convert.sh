#!/usr/bin/env bash
# bench/convert.sh — gguf-convert's wall time and peak memory on a generated
# Hugging Face model of about 1.9 GB (BF16 safetensors: 2048 wide, 16
# layers, ffn 5632, vocabulary 32000), to F16 (OUTTYPE=q8_0 ... to change);
# beside it the physical floor — copying a file of the output's size and
# syncing it on the same disk — and llama.cpp's convert_hf_to_gguf.py on the
# same folder when it can run (CONVERT_HF_PY pointing at the script, and a
# python3 — PYTHON, default python3 — with torch, numpy, safetensors and
# sentencepiece), with the ratios. SHAPE=470m makes the 470 MiB folder of a
# 250M LLaMA (1024 wide, 16 layers, ffn 2816, GQA 16/4) instead.
#
#   bench/convert.sh            (BUILD=build by default; TOKENIZER=... to
#                                pick the tokenizer.model copied in; RUNS=5)
#
# A benchmark, not a test: it never runs under `make test`.
. "$(dirname "$0")/lib.sh"
FIX=${GGUFKIT_FIXTURES:-$ROOT/../shared/fixtures}
TOKENIZER=${TOKENIZER:-$FIX/models/wp-llama-5m/hf/tokenizer.model}
RUNS=${RUNS:-5}
OUTTYPE=${OUTTYPE:-f16}
for b in "$BIN/gguf-convert" "$BIN/tests/tools/mkhf"; do
    [ -x "$b" ] || { echo "build first: make all build/tests/tools/mkhf (no $b)" >&2; exit 1; }
done
[ -f "$TOKENIZER" ] || { echo "no tokenizer.model at $TOKENIZER (set TOKENIZER)" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/convert-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MODEL=$WORK/model
case ${SHAPE:-1.9g} in
    1.9g) dim=2048 shape="--dim 2048 --layers 16 --ffn 5632 --heads 16 --kv-heads 16" ;;
    470m) dim=1024 shape="--dim 1024 --layers 16 --ffn 2816 --heads 16 --kv-heads 4" ;;
    *) echo "SHAPE is 1.9g or 470m" >&2; exit 1 ;;
esac
# shellcheck disable=SC2086 # the shape is words
"$BIN/tests/tools/mkhf" "$MODEL" --tokenizer "$TOKENIZER" $shape --vocab 32000 --dtype bf16
size=$(stat -c %s "$MODEL/model.safetensors")
largest=$((32000 * dim * 4)) # the embedding as f32, the converter's largest buffer
echo "input: $((size / 1048576)) MiB BF16 safetensors; largest tensor as f32: $((largest / 1048576)) MiB"

# Each repetition, in turn: ours (output removed and the disk synced
# first), the physical floor — `cp` of a file of the output's size and
# `sync` — and convert_hf_to_gguf.py when it can run; medians of RUNS.
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
"$BIN/gguf-convert" -q "$MODEL" --outtype "$OUTTYPE" -o "$WORK/ours.gguf"
out=$(stat -c %s "$WORK/ours.gguf")
head -c "$out" /dev/urandom >"$WORK/floor.src"
py=
PYTHON=${PYTHON:-python3}
if [ -n "${CONVERT_HF_PY:-}" ] && "$PYTHON" -c 'import torch, numpy, safetensors, sentencepiece' 2>/dev/null; then
    py=1
fi
o=() f=() t=()
for _ in $(seq "$RUNS"); do
    rm -f "$WORK/ours.gguf" "$WORK/floor.dst"; sync
    o+=("$(secs "$BIN/gguf-convert" -q "$MODEL" --outtype "$OUTTYPE" -o "$WORK/ours.gguf")")
    rm -f "$WORK/floor.dst"; sync
    f+=("$(secs sh -c "cp '$WORK/floor.src' '$WORK/floor.dst' && sync")")
    if [ -n "$py" ]; then
        rm -f "$WORK/theirs.gguf"; sync
        # synced as the floor is (gguf-convert makes its output durable
        # before it exits; the script only writes to the page cache)
        t+=("$(secs sh -c "'$PYTHON' '$CONVERT_HF_PY' '$MODEL' --outtype '$OUTTYPE' --outfile '$WORK/theirs.gguf' && sync")")
    fi
done
ours=$(printf '%s\n' "${o[@]}" | median) floor=$(printf '%s\n' "${f[@]}" | median)
rss=$(/usr/bin/time -f %M "$BIN/gguf-convert" -q "$MODEL" --outtype "$OUTTYPE" -o "$WORK/ours.gguf" 2>&1 >/dev/null | tail -1)
printf 'gguf-convert --outtype %s: median %.3f s, peak RSS %d MiB; output %d MiB\n' "$OUTTYPE" "$ours" \
    $((rss / 1024)) $((out / 1048576))
printf 'floor (cp of %d MiB + sync): median %.3f s; ours / floor = %.2f (goal <= 1.3)\n' $((out / 1048576)) \
    "$floor" "$(echo "$ours / $floor" | bc -l)"
if [ -n "$py" ]; then
    theirs=$(printf '%s\n' "${t[@]}" | median)
    printf 'convert_hf_to_gguf + sync: median %.3f s; ratio %.2fx faster (goal >= 10)\n' "$theirs" "$(echo "$theirs / $ours" | bc -l)"
else
    echo "convert_hf_to_gguf.py not run (set CONVERT_HF_PY and install torch, numpy, safetensors, sentencepiece)"
fi
echo "  runs: ours ${o[*]} | floor ${f[*]} | theirs ${t[*]:-}" >&2
