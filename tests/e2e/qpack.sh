#!/usr/bin/env bash
# tests/e2e/qpack.sh — gguf-convert on integer-packed checkpoints
# (compressed-tensors pack-quantized, GPTQ): what it refuses, on copies of
# tests/tools/mkqpack.py's qwen3-rand checkpoints broken one way each
# (config.json edited with jq, the safetensors header with st_rewrite,
# bytes overwritten with st_poke). Each refusal exits 1, names the file and
# the key or tensor, and leaves no output. (The conversions themselves:
# convert.sh against tests/data/qpack's manifests; one pass: onepass.sh.)
source "$(dirname "$0")/lib.sh"
CONVERT=$BIN/gguf-convert
ST=model.safetensors
K=model.layers.0.self_attn.k_proj # [64, 256]: 8 groups of 32
D=$TMP/qp
# mk KIND [CONFIG-JQ [HEADER-JQ]]: a fresh copy of the KIND checkpoint in $D
mk() {
    rm -rf "$D" && cp -r "$TMP/qp-$1" "$D" &&
        jq "${2:-.}" "$TMP/qp-$1/config.json" >"$D/config.json" &&
        { [ -z "${3:-}" ] || st_rewrite "$TMP/qp-$1/$ST" "$D/$ST" "$3"; }
}
bad() { # name expected-substring
    fails_cleanly "qpack: $1" "$TMP/qp.gguf" "$2" "$CONVERT" -q "$D" -o "$TMP/qp.gguf"
}
CG=.quantization_config.config_groups.group_0.weights

if ! command -v jq >/dev/null; then
    skip_block "packed-quantized refusals" "jq not installed" 20
elif ! mkqpack ct "$TMP/qp-ct" || ! mkqpack gptq "$TMP/qp-gptq"; then
    skip_block "packed-quantized refusals" "no python3 with NumPy, or no models/qwen3-rand" 20
else
    # config.json
    mk ct '.quantization_config.format = "int-quantized"'
    bad "compressed-tensors int-quantized" "config.json: quantization_config compressed-tensors format 'int-quantized' is not supported (pack-quantized and float-quantized are)"
    mk ct '.quantization_config.format = "marlin-24"'
    bad "an unknown compressed-tensors format" "config.json: quantization_config compressed-tensors format 'marlin-24' is unknown"
    mk ct "$CG.num_bits = 9"
    bad "num_bits 9" "config.json: quantization_config weights num_bits is not a whole number from 1 to 8"
    mk ct "$CG.strategy = \"channel\""
    bad "strategy channel" "config.json: quantization_config weights strategy 'channel' is not supported with pack-quantized (only group)"
    mk ct '.quantization_config.config_groups.group_1 = .quantization_config.config_groups.group_0'
    bad "two config groups" "config.json: quantization_config has 2 config_groups (only one is supported)"
    mk ct '.quantization_config.format = "float-quantized"'"| $CG.strategy = \"tensor\""
    bad "float-quantized strategy tensor" "config.json: quantization_config weights strategy 'tensor' is not supported with float-quantized (channel or block)"
    mk ct '.quantization_config.format = "float-quantized"'"| $CG.strategy = \"channel\" | $CG.group_size = 32"
    bad "float-quantized with a group_size" "config.json: quantization_config weights group_size is not supported with float-quantized"
    mk ct '.quantization_config.format = "float-quantized"'"| $CG.strategy = \"channel\" | $CG.group_size = null"
    bad "float-quantized over packed weights" "$ST: tensor 'model.layers.0.mlp.down_proj.weight_scale' scales 'model.layers.0.mlp.down_proj.weight', which the checkpoint does not have"
    mk gptq '.quantization_config.bits = 3'
    bad "GPTQ 3 bits" "config.json: quantization_config gptq bits 3 is not supported (2, 4 or 8)"
    mk gptq '.quantization_config.checkpoint_format = "marlin"'
    bad "GPTQ checkpoint_format marlin" "config.json: quantization_config gptq checkpoint_format 'marlin' is not supported"
    mk ct 'del(.quantization_config)'
    bad "packed weights without quantization_config" "$ST: tensor 'model.layers.0.mlp.down_proj.weight_packed' is a packed quantized weight, but config.json has no quantization_config"
    # the tensors
    mk ct '.' "del(.[\"$K.weight_scale\"])"
    bad "a missing weight_scale" "$ST: tensor '$K.weight_packed' has no '$K.weight_scale' beside it"
    mk gptq '.' "del(.[\"$K.g_idx\"])"
    bad "a missing g_idx" "$ST: tensor '$K.qweight' has no '$K.g_idx' beside it"
    mk ct '.' '.["model.layers.0.self_attn.x_proj.weight_zero_point"] = .["'"$K"'.weight_zero_point"]'
    bad "a zero point without its weight" "$ST: tensor 'model.layers.0.self_attn.x_proj.weight_zero_point' belongs to 'model.layers.0.self_attn.x_proj.weight_packed', which the checkpoint does not have"
    mk ct '.' ".[\"$K.weight_scale\"].shape = [128, 4]"
    bad "a scale of the wrong shape" "$ST: $K.weight_packed: weight_scale is not \[64, 8\] (one factor per row and group)"
    mk ct '.' ".[\"$K.weight_packed\"].shape = [32, 64]"
    bad "packed words of the wrong shape" "$ST: $K.weight_packed: weight_packed is not \[64, >= 32 words\]"
    mk gptq '.' ".[\"$K.qweight\"].dtype = \"F32\""
    bad "a qweight not int32" "$ST: tensor '$K.qweight' is F32 (I32 expected)"
    mk gptq; st_poke "$D/$ST" "$K.g_idx" 5 '\x63\x00\x00\x00'
    bad "a g_idx out of range" "$ST: $K.g_idx: g_idx\[5\] = 99 is outside \[0, 8)"
    mk ct; st_poke "$D/$ST" "$K.weight_scale" 3 '\xc0\x7f' 2
    bad "a NaN scale" "$ST: tensor '$K.weight_scale' has a non-finite factor (NaN) at \[0, 3\]"
    mk ct; st_poke "$D/$ST" "$K.weight_shape" 1 '\x00\x02\x00\x00\x00\x00\x00\x00' 8
    bad "a weight_shape that does not match" "$ST: $K.weight_packed: weight_packed is not \[64, >= 64 words\] (weight_shape \[64, 512\], 4 bits)"
fi
rm -rf "$D" "$TMP/qp-ct" "$TMP/qp-gptq"
# not done yet, refused by name: stacked experts, deepseek2's kv_b split
if mkqpack ct "$D" qwen3moe-rand; then
    bad "packed experts" "$ST: tensor 'model.layers.0.mlp.experts.0.down_proj.weight_packed': packed quantized experts are not supported yet"
else skip "qpack: packed experts" "no python3 with NumPy, or no models/qwen3moe-rand"; fi
if mkqpack gptq "$D" deepseek2-rand; then
    bad "a packed deepseek2" "config.json: quantization_config gptq: not supported for deepseek2 checkpoints yet"
else skip "qpack: a packed deepseek2" "no python3 with NumPy, or no models/deepseek2-rand"; fi
rm -rf "$D"
