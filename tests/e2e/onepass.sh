#!/usr/bin/env bash
# tests/e2e/onepass.sh — gguf-convert SRC --outtype PRESET [--imatrix F]:
# the same file, byte for byte, as converting to bf16 and running
# gguf-quantize PRESET [--imatrix F] on it (whose outputs quantize.sh holds
# to llama-quantize e21cdc11's, qwen3fp8-rand's among them), for an FP8
# source, BF16 sources of several families, with importance matrices
# (experts too); and what one pass refuses.
source "$(dirname "$0")/lib.sh"
CONVERT=$BIN/gguf-convert QUANT=$BIN/gguf-quantize
M=$FIX/models IM=$FIX/upstream/imatrix

# same NAME SRC PRESET [IMATRIX]: one pass equals the two steps
same() {
    local name=$1 src=$2 p=$3 im=${4:-}
    rm -f "$TMP/op-one.gguf" "$TMP/op-two.gguf"
    if ! "$CONVERT" -q "$src" --outtype bf16 -o "$TMP/op-bf16.gguf" >"$TMP/op.log" 2>&1 ||
       ! "$QUANT" -q ${im:+--imatrix "$im"} "$TMP/op-bf16.gguf" "$TMP/op-two.gguf" "$p" >>"$TMP/op.log" 2>&1; then
        fail "one pass: $name" "two steps failed: $(tail -1 "$TMP/op.log")"; return
    fi
    if ! "$CONVERT" -q "$src" --outtype "$p" ${im:+--imatrix "$im"} -o "$TMP/op-one.gguf" >"$TMP/op.log" 2>&1; then
        fail "one pass: $name" "gguf-convert failed: $(tail -1 "$TMP/op.log")"; return
    fi
    cmp -s "$TMP/op-one.gguf" "$TMP/op-two.gguf" && pass "one pass: $name: the two steps' file byte for byte" ||
        fail "one pass: $name" "$(cmp "$TMP/op-one.gguf" "$TMP/op-two.gguf" 2>&1)"
}

if need_fixture models/qwen3fp8-rand "one pass from FP8" 2; then
    same "qwen3fp8-rand Q4_K_M" "$M/qwen3fp8-rand" Q4_K_M
    same "qwen3fp8-rand Q6_K" "$M/qwen3fp8-rand" Q6_K
    fixture_block_end
fi
if ! mkqpack ct "$TMP/qwen3ct-rand" || ! mkqpack gptq "$TMP/qwen3gptq-rand"; then
    skip_block "one pass from packed sources" "no python3 with NumPy, or no models/qwen3-rand" 2
else
    same "qwen3ct-rand (compressed-tensors) Q4_K_M" "$TMP/qwen3ct-rand" Q4_K_M
    same "qwen3gptq-rand (GPTQ) Q4_K_M" "$TMP/qwen3gptq-rand" Q4_K_M
fi
rm -rf "$TMP/qwen3ct-rand" "$TMP/qwen3gptq-rand"
# packed experts (Kimi K2's layout, qwen3moe), and checkpoints packed whole:
# deepseek2's kv_b_proj split, glm4moe with its NextN layer, Qwen 3.5's
# linear attention (V heads reordered) and split experts; BitNet ternary weights
for pq in "deepseek2kimi kimi deepseek2-rand packed experts" "qwen3moect ct qwen3moe-rand packed experts" \
          "deepseek2gptq gptq deepseek2-rand packed kv_b_proj, split" \
          "glm4moect ct glm4moe-rand packed experts, attention, NextN" \
          "qwen35gptq gptq qwen35-rand packed linear attention, V heads reordered" \
          "qwen35moect ct qwen35moe-rand packed experts, V heads reordered" \
          "llama3bitnet bitnet llama3rope-rand BitNet" \
          "qwen35bitnet bitnet qwen35-rand BitNet, V heads reordered" \
          "deepseek2bitnet bitnet deepseek2-rand BitNet, kv_b_proj split"; do
    read -r pm pk pf what <<<"$pq"
    if ! mkqpack "$pk" "$TMP/$pm-rand" "$pf"; then
        skip "one pass: $pm-rand ($what) Q4_K_M" "no python3 with NumPy, or no models/$pf"
    else
        same "$pm-rand ($what) Q4_K_M" "$TMP/$pm-rand" Q4_K_M
    fi
    rm -rf "$TMP/$pm-rand"
done
if need_fixture models/qwen3-rand "one pass from BF16" 2; then
    same "qwen3-rand Q4_K_M" "$M/qwen3-rand" Q4_K_M
    same "qwen3-rand Q8_0 (the preset, not --outtype q8_0)" "$M/qwen3-rand" 7
    fixture_block_end
fi
if need_fixture models/qwen35moe-rand "one pass from BF16 (trailing axes of 1)" 1; then
    same "qwen35moe-rand Q4_K_M (ffn_gate_inp_shexp [128, 1] written as [128])" "$M/qwen35moe-rand" Q4_K_M
    fixture_block_end
fi
if need_fixture upstream/imatrix "one pass with an importance matrix" 5; then
    same "qwen3-rand IQ4_XS --imatrix" "$M/qwen3-rand" IQ4_XS "$IM/qwen3-rand.imatrix.gguf"
    same "qwen3-rand IQ2_XXS --imatrix" "$M/qwen3-rand" IQ2_XXS "$IM/qwen3-rand.imatrix.gguf"
    same "qwen3moe-rand Q4_K_M --imatrix (expert weights)" "$M/qwen3moe-rand" Q4_K_M "$IM/qwen3moe-rand.imatrix.gguf"
    same "phi3-rand Q2_K --imatrix" "$M/phi3-rand" Q2_K "$IM/phi3-rand.imatrix.gguf"
    same "gptoss-rand MXFP4_MOE (experts kept)" "$M/gptoss-rand" MXFP4_MOE
    fixture_block_end
fi

# refusals: exit 1 and no output, or usage errors
if need_fixture models/qwen3-rand "one pass refusals" 7; then
    fails_cleanly "one pass: IQ2_XXS without an importance matrix" "$TMP/op-bad.gguf" \
        "this quantization requires an importance matrix (--imatrix): tensor 'blk.0.attn_k.weight' would be iq2_xxs" \
        "$CONVERT" -q "$M/qwen3-rand" --outtype IQ2_XXS -o "$TMP/op-bad.gguf"
    fails_cleanly "one pass: an importance matrix that is not one" "$TMP/op-bad.gguf" \
        "^gguf-convert: error: .*: $M/qwen3-rand/config.json: " \
        "$CONVERT" -q "$M/qwen3-rand" --outtype Q4_K_M --imatrix "$M/qwen3-rand/config.json" -o "$TMP/op-bad.gguf"
    if [ -d "$M/gptoss-rand" ]; then
        fails_cleanly "one pass: gpt-oss's MXFP4 experts are not requantized" "$TMP/op-bad.gguf" \
            "tensor 'blk.0.ffn_down_exps.weight' is already mxfp4: one pass does not requantize it" \
            "$CONVERT" -q "$M/gptoss-rand" --outtype Q4_K_M -o "$TMP/op-bad.gguf"
    else skip "one pass: gpt-oss's MXFP4 experts are not requantized" "no gptoss-rand"; fi
    usage_error "$CONVERT" "--imatrix without a preset" "--imatrix needs a gguf-quantize preset as --outtype" \
        "$M/qwen3-rand" --imatrix x.gguf
    usage_error "$CONVERT" "an unknown preset" "unknown --outtype 'Q4_K_X' (f32, f16, bf16, q8_0, auto or a gguf-quantize preset such as Q4_K_M)" "$M/qwen3-rand" --outtype Q4_K_X
    usage_error "$CONVERT" "COPY is no outtype" "unknown --outtype 'COPY'" "$M/qwen3-rand" --outtype COPY
    usage_error "$CONVERT" "a preset with --vocab-only" "a preset --outtype (Q4_K_M) does not apply to --vocab-only" \
        "$M/qwen3-rand" --outtype Q4_K_M --vocab-only
    fixture_block_end
fi
rm -f "$TMP"/op-*.gguf
