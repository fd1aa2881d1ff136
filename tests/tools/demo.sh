#!/usr/bin/env bash
# tests/tools/demo.sh — what `make demo` runs: the whole ggufkit path on one
# model, ending in a table that says what each quantization preset costs.
#
#   checkpoint ─gguf-convert→ F32 and F16 GGUF ─gguf-quantize→ every preset
#              ─gguf-run→ perplexity, KL divergence and same-top-token rate
#                         of each file against the F32 model
#
# The model is ../shared/fixtures' wp-llama-5m (a real 5M-parameter LLaMA
# trained on War and Peace, scored on the held-out text) when present, else
# a synthetic LLaMA with its own tokenizer made by tests/tools/mkhf (random
# weights, scored on this repository's docs: the numbers then only show that
# everything runs). Outputs stay in $BUILD/demo (DEMO_WORK elsewhere);
# DEMO_PRESETS lists other presets and DEMO_TEXT the bytes of text scored
# (tests/e2e/demo.sh runs two presets on 12 kB).
set -euo pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) BIN=$BUILD ;; *) BIN=$ROOT/$BUILD ;; esac
FIX=${GGUFKIT_FIXTURES:-$ROOT/../shared/fixtures}
WORK=${DEMO_WORK:-$BIN/demo}
read -r -a PRESETS <<<"${DEMO_PRESETS:-Q2_K Q3_K_S Q3_K_M Q3_K_L Q4_0 Q4_1 Q4_K_S Q4_K_M Q5_0 Q5_1 Q5_K_S Q5_K_M Q6_K Q8_0}"
CTX=256
TEXT_BYTES=${DEMO_TEXT:-60000}
rm -rf "$WORK"
mkdir -p "$WORK"

if [ -d "$FIX/models/wp-llama-5m/hf" ] && [ -f "$FIX/corpora/war-and-peace-heldout.txt" ]; then
    SRC=$FIX/models/wp-llama-5m/hf
    head -c "$TEXT_BYTES" "$FIX/corpora/war-and-peace-heldout.txt" >"$WORK/text.txt"
    echo "model: wp-llama-5m (../shared/fixtures), scored on $((TEXT_BYTES / 1000)) kB of held-out War and Peace"
else
    SRC=$WORK/synthetic
    "$BIN/tests/tools/mkhf" "$SRC" --dim 256 --layers 4 --ffn 768 --heads 8 --kv-heads 4 \
        --vocab 2048 --dtype f32
    # (not cat | head: under pipefail, cat's SIGPIPE once the docs pass
    # the text's length would end the script)
    cat "$ROOT"/README.md "$ROOT"/docs/*.md >"$WORK/docs.txt"
    head -c "$TEXT_BYTES" "$WORK/docs.txt" >"$WORK/text.txt"
    echo "model: synthetic LLaMA (random weights, generated tokenizer), scored on the docs"
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

bpw() { # file -> bits per weight of its tensor data
    "$BIN/gguf-inspect" --no-tensors "$1" | sed -nE 's/^bits per weight: +([0-9.]+)/\1/p'
}
size_mib() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.2f", b / 1048576 }'; }

printf '\n%-8s %9s %7s %11s %10s %9s\n' TYPE "SIZE MiB" BPW PPL "KLD" "SAME TOP"
printf '%-8s %9s %7s %11s %10s %9s\n' F32 "$(size_mib "$WORK/model-F32.gguf")" "$(bpw "$WORK/model-F32.gguf")" "$ppl32" - -
for t in F16 "${PRESETS[@]}"; do
    f=$WORK/model-$t.gguf
    [ "$t" = F16 ] ||
        step "$WORK/$t.quantize.log" "gguf-quantize to $t" "$BIN/gguf-quantize" "$WORK/model-F16.gguf" "$f" "$t"
    step "$WORK/$t.log" "gguf-run --kl-divergence on $t" "$BIN/gguf-run" -m "$f" --kl-divergence \
        --kl-divergence-base "$WORK/base.kld"
    line=$(grep '^kl-divergence:' "$WORK/$t.log")
    kld=$(sed -nE 's/.*mean (-?[0-9.]+).*/\1/p' <<<"$line") # F16 can be -0.000000, as in llama-perplexity
    top=$(sed -nE 's/.*same top ([0-9.]+%).*/\1/p' <<<"$line")
    ppl=$(sed -nE 's/.*, ppl ([0-9.]+),.*/\1/p' <<<"$line")
    printf '%-8s %9s %7s %11s %10s %9s\n' "$t" "$(size_mib "$f")" "$(bpw "$f")" "$ppl" "$kld" "$top"
done
echo
echo "files and logs: $WORK"
