#!/usr/bin/env bash
# tests/e2e/qpack.sh — gguf-convert on integer-packed checkpoints
# (compressed-tensors pack-quantized, GPTQ, BitNet): what it refuses, on copies of
# tests/tools/mkqpack.py's qwen3-rand (llama3rope-rand) checkpoints broken one way each
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
    mk ct '.quantization_config.format = "marlin-24"'
    bad "an unknown compressed-tensors format" "config.json: quantization_config compressed-tensors format 'marlin-24' is unknown (pack-quantized, float-quantized, int-quantized and naive-quantized are supported)"
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
# compressed-tensors int-quantized (int8 codes × channel or block scales)
if ! command -v jq >/dev/null; then
    skip_block "int-quantized refusals" "jq not installed" 7
elif ! mkqpack ctint "$TMP/qp-ctint"; then
    skip_block "int-quantized refusals" "no python3 with NumPy, or no models/qwen3-rand" 7
else
    W=model.layers.0.mlp.down_proj
    mk ctint 'del(.quantization_config)'
    bad "int8 weights without quantization_config" "$ST: tensor '$W.weight' is I8 with a '$W.weight_scale', but config.json has no quantization_config with quant_method compressed-tensors (int-quantized or naive-quantized)"
    mk ctint '.quantization_config.format = "float-quantized"'
    bad "int8 weights as float-quantized" "$ST: tensor '$W.weight' is I8 with a '$W.weight_scale', but config.json has no quantization_config"
    mk ctint "$CG.strategy = \"group\""
    bad "int-quantized strategy group" "config.json: quantization_config weights strategy 'group' is not supported with int-quantized (channel or block)"
    mk ctint '.' ".[\"$K.weight_zero_point\"] = .[\"$K.weight_scale\"]"
    bad "int-quantized zero points" "$ST: tensor '$K.weight_zero_point': zero points (asymmetric int-quantized) are not supported"
    mk ctint '.' ".[\"$K.weight\"].dtype = \"U8\""
    bad "int-quantized weights not I8" "$ST: tensor '$K.weight_scale' scales '$K.weight', which is U8, not I8 or F8_E4M3"
    mk ctint '.' "del(.[\"$K.weight_scale\"])"
    bad "an int8 weight without its scale" "$ST: tensor '$K.weight' is I8 but has no '$K.weight_scale' beside it"
    mk ctint '.' ".[\"$K.weight_scale\"].shape = [32, 2]"
    bad "an int8 scale of the wrong shape" "$ST: tensor '$K.weight_scale': scale of shape \[32, 2\]: without weight_block_size only one factor or one per row (64) is supported"
fi
rm -rf "$D" "$TMP/qp-ctint"
# packed experts (Kimi K2's layout, tests/tools/mkqpack.py kimi on deepseek2-rand),
# each expert's parts checked as it is taken, the block's experts alike
E=model.layers.1.mlp.experts.3.gate_proj # [32, 128]: 16 words, 4 groups of 32
E0=model.layers.1.mlp.experts.0.gate_proj
if ! command -v jq >/dev/null; then
    skip_block "packed experts refusals" "jq not installed" 9
elif ! mkqpack kimi "$TMP/qp-kimi" deepseek2-rand; then
    skip_block "packed experts refusals" "no python3 with NumPy, or no models/deepseek2-rand" 9
else
    mk kimi '.' "del(.[\"$E.weight_shape\"])"
    bad "an expert without its weight_shape" "$ST: tensor '$E.weight_packed' has no '$E.weight_shape' beside it"
    mk kimi; st_poke "$D/$ST" "$E.weight_shape" 0 '\x10\x00\x00\x00\x00\x00\x00\x00' 8
    bad "an expert's weight_shape of other rows" "$ST: $E.weight_packed: weight_packed is not \[16, >= 16 words\] (weight_shape \[16, 128\], 4 bits)"
    mk kimi; st_poke "$D/$ST" "$E.weight_shape" 1 '\x40\x00\x00\x00\x00\x00\x00\x00' 8
    bad "an expert's weight_shape of other columns" "$ST: $E.weight_packed: weight_scale is not \[32, 2\] (one factor per row and group)"
    mk kimi '.' ".[\"$E.weight_scale\"].shape = [64, 2]"
    bad "an expert's scale of the wrong shape" "$ST: $E.weight_packed: weight_scale is not \[32, 4\] (one factor per row and group)"
    mk kimi '.' ".[\"$E.weight_scale\"].shape = [32, 2]"
    bad "an expert's scale of too few bytes" "$ST: tensor '$E.weight_scale': 256 data bytes for 64 elements of BF16"
    mk kimi '.' ".[\"$E.weight_packed\"].data_offsets[1] -= 4"
    bad "a truncated expert weight_packed" "$ST: tensor '$E.weight_packed': 2044 data bytes for 512 elements of I32"
    mk kimi; head -c -100000 "$TMP/qp-kimi/$ST" >"$D/$ST"
    bad "a truncated shard of packed experts" "$ST: tensor '.*': data \[[0-9]*, [0-9]*) runs past the end of the file"
    # one expert unpacked (its packed parts' bytes read as BF16)
    unpack() { echo ".[\"$1.weight\"] = (.[\"$1.weight_packed\"] | .dtype = \"BF16\" | .shape = [32, 32]) | del(.[\"$1.weight_packed\"], .[\"$1.weight_scale\"], .[\"$1.weight_shape\"])"; }
    mk kimi '.' "$(unpack "$E")"
    bad "an unpacked expert among packed ones" "$ST: tensor '$E.weight': not packed, but expert 0's is ('$E0.weight_packed'): the experts of a block are packed alike or not at all"
    mk kimi '.' "$(unpack "$E0")"
    bad "packed experts after an unpacked expert 0" "$ST: tensor 'model.layers.1.mlp.experts.1.gate_proj.weight_packed': packed, but expert 0's is not ('$E0.weight')"
fi
rm -rf "$TMP/qp-kimi"
# a packed kv_b_proj (deepseek2-rand packed whole: GPTQ, compressed-tensors),
# its dequantized values split into attn_k_b / attn_v_b: its checks name it
V=model.layers.0.self_attn.kv_b_proj # [256, 64]: 2 groups of 32
if ! command -v jq >/dev/null; then
    skip_block "packed kv_b_proj refusals" "jq not installed" 6
elif ! mkqpack gptq "$TMP/qp-dsgptq" deepseek2-rand || ! mkqpack ct "$TMP/qp-dsct" deepseek2-rand; then
    skip_block "packed kv_b_proj refusals" "no python3 with NumPy, or no models/deepseek2-rand" 6
else
    mk dsgptq '.qk_nope_head_dim = 16'
    bad "a packed kv_b_proj against qk_nope_head_dim" "$ST: tensor '$V.qweight': expected \[4 × (16 + 32), kv_lora_rank\] (num_key_value_heads × (qk_nope_head_dim + v_head_dim))"
    mk dsct '.v_head_dim = 16'
    bad "a packed kv_b_proj against v_head_dim" "$ST: tensor '$V.weight_packed': expected \[4 × (32 + 16), kv_lora_rank\]"
    mk dsgptq; st_poke "$D/$ST" "$V.g_idx" 7 '\x02\x00\x00\x00'
    bad "a packed kv_b_proj's g_idx out of range" "$ST: $V.g_idx: g_idx\[7\] = 2 is outside \[0, 2)"
    mk dsgptq '.' ".[\"$V.qweight\"].shape = [16, 128]"
    bad "a packed kv_b_proj's qweight of the wrong shape" "$ST: $V.qweight: "
    mk dsgptq '.' ".[\"$V.scales\"].shape = [4, 128]"
    bad "a packed kv_b_proj's scales of the wrong shape" "$ST: $V.qweight: scales is not"
    mk dsct; st_poke "$D/$ST" "$V.weight_shape" 0 '\x80\x00\x00\x00\x00\x00\x00\x00' 8
    bad "a packed kv_b_proj's weight_shape of other rows" "$ST: $V.weight_packed: weight_packed is not \[128, >= 8 words\] (weight_shape \[128, 64\], 4 bits)"
fi
rm -rf "$D" "$TMP/qp-dsgptq" "$TMP/qp-dsct"
# packed Qwen 3.5 (qwen35-rand: linear attention's projections packed too,
# their value heads reordered after dequantizing): a packed in_proj_z of
# other rows than the value heads, a g_idx out of range in in_proj_qkv
Z=model.layers.0.linear_attn.in_proj_z # [128, 128]: 4 value heads of 32
if ! command -v jq >/dev/null; then
    skip_block "packed Qwen 3.5 refusals" "jq not installed" 2
elif ! mkqpack ct "$TMP/qp-q35ct" qwen35-rand || ! mkqpack gptq "$TMP/qp-q35gptq" qwen35-rand; then
    skip_block "packed Qwen 3.5 refusals" "no python3 with NumPy, or no models/qwen35-rand" 2
else
    # 64 rows: the packed words, scales and zero points cut to them
    sz() { echo ".[\"$Z.$1\"].shape = $2 | .[\"$Z.$1\"].data_offsets[1] = .[\"$Z.$1\"].data_offsets[0] + $3"; }
    mk q35ct '.' "$(sz weight_packed '[64, 16]' 4096) | $(sz weight_scale '[64, 4]' 512) | $(sz weight_zero_point '[8, 4]' 128)"
    st_poke "$D/$ST" "$Z.weight_shape" 0 '\x40\x00\x00\x00\x00\x00\x00\x00' 8
    bad "a packed in_proj_z of other rows than the value heads" "$ST: tensor '$Z.weight_packed': 64 rows, expected 128 (4 value heads of 32)"
    Q=model.layers.0.linear_attn.in_proj_qkv
    mk q35gptq; st_poke "$D/$ST" "$Q.g_idx" 9 '\xff\xff\xff\xff'
    bad "a packed in_proj_qkv's g_idx out of range" "$ST: $Q.g_idx: g_idx\[9\] = -1 is outside \[0, 4)"
fi
rm -rf "$D" "$TMP/qp-q35ct" "$TMP/qp-q35gptq"
# BitNet ternary weights (quant_method bitnet, mkqpack.py bitnet on
# llama3rope-rand: X.weight U8 [rows / 4, cols], X.weight_scale one factor)
B=model.layers.0.self_attn.k_proj # U8 [16, 256]: 64 rows
B1=model.layers.1.mlp.down_proj   # its weight_scale F32 [1]
if ! command -v jq >/dev/null; then
    skip_block "BitNet refusals" "jq not installed" 9
elif ! mkqpack bitnet "$TMP/qp-bitnet" llama3rope-rand; then
    skip_block "BitNet refusals" "no python3 with NumPy, or no models/llama3rope-rand" 9
else
    mk bitnet 'del(.quantization_config)'
    bad "BitNet weights without quantization_config" "$ST: tensor 'model.layers.0.mlp.down_proj.weight' is U8 with a 'model.layers.0.mlp.down_proj.weight_scale' (a BitNet weight), but config.json has no quantization_config with quant_method bitnet"
    mk bitnet '.quantization_config.quant_method = "bitnet2"'
    bad "an unknown quant_method" "config.json: quantization_config quant_method 'bitnet2' is not supported (fp8, compressed-tensors, gptq or bitnet)"
    mk bitnet '.' ".[\"$B1.weight_scale\"] |= (.dtype = \"BF16\" | .shape = [2])"
    bad "a BitNet scale of two factors" "$ST: $B1.weight: weight_scale of shape \[2\] (BitNet weights take one factor)"
    mk bitnet '.' ".[\"$B.weight\"].shape = [8, 512]"
    bad "packed rows × 4 not the config's rows" "the model would be invalid: tensor blk.0.attn_k.weight has shape \[512, 32\], expected \[256, 64\] .* (from $ST: tensor '$B.weight', BitNet-packed \[8, 512\]: 32 rows of four values a byte)"
    mk bitnet '.' ".[\"$B.weight\"].shape = [4096]"
    bad "a BitNet weight of one dimension" "$ST: $B.weight: a BitNet weight is not two positive dimensions"
    mk bitnet '.' ".[\"$B.weight\"].dtype = \"I32\" | .[\"$B.weight\"].shape = [4, 256]"
    bad "a BitNet weight not U8" "$ST: tensor '$B.weight' is I32 (U8 or I8 expected: a BitNet weight)"
    mk bitnet '.' "del(.[\"$B.weight_scale\"])"
    bad "a BitNet weight without its scale" "$ST: tensor '$B.weight' is U8 but has no '$B.weight_scale' beside it"
    mk bitnet '.' '.["model.layers.0.self_attn.x_proj.weight_scale"] = .["'"$B"'.weight_scale"]'
    bad "a BitNet scale without its weight" "$ST: tensor 'model.layers.0.self_attn.x_proj.weight_scale' belongs to 'model.layers.0.self_attn.x_proj.weight', which the checkpoint does not have"
    mk bitnet; st_poke "$D/$ST" "$B.weight_scale" 0 '\x00\x00' 2
    bad "a BitNet scale of 0" "$ST: tensor '$B.weight_scale' is 0 (the weight is divided by it: a finite factor other than 0 expected)"
fi
rm -rf "$D" "$TMP/qp-bitnet"
