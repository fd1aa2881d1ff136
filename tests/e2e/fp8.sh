#!/usr/bin/env bash
# tests/e2e/fp8.sh — gguf-convert on FP8 block-scaled checkpoints: what it
# refuses, on copies of qwen3fp8-rand broken one way each (config.json
# edited with jq, the safetensors header with st_rewrite, scale bytes
# overwritten). Each refusal exits 1, names the file and the tensor or key,
# and leaves no output. (The conversions themselves: convert.sh, against
# tests/data/fp8's manifests.)
source "$(dirname "$0")/lib.sh"
CONVERT=$BIN/gguf-convert
SRC=$FIX/models/qwen3fp8-rand
ST=model.safetensors
KS=model.layers.0.self_attn.k_proj.weight_scale_inv # [1, 2] F32
need_jq() { command -v jq >/dev/null && return 0; skip "$1" "jq not installed"; return 1; }

D=$TMP/fp8
# mk [CONFIG-JQ [HEADER-JQ]]: a fresh copy of the fixture in $D, config.json
# and the safetensors header rewritten
mk() {
    rm -rf "$D" && cp -r "$SRC" "$D" && chmod -R u+w "$D" &&
        jq "${1:-.}" "$SRC/config.json" >"$D/config.json" &&
        { [ -z "${2:-}" ] || st_rewrite "$SRC/$ST" "$D/$ST" "$2"; }
}
# poke TENSOR INDEX HEX-BYTES: st_poke on $D's safetensors (ESIZE bytes an
# element, default 4)
poke() { st_poke "$D/$ST" "$1" "$2" "$3" "${ESIZE:-4}"; }
bad() { # name expected-substring [options...]
    fails_cleanly "fp8: $1" "$TMP/fp8.gguf" "$2" "$CONVERT" -q "$D" -o "$TMP/fp8.gguf" "${@:3}"
}

if need_jq "fp8 refusals" && need_fixture models/qwen3fp8-rand "fp8 refusals" 16; then
    mk '.quantization_config.fmt = "e5m2"'
    bad "another fmt" "config.json: quantization_config fmt 'e5m2' is not supported (only e4m3)"
    mk '.quantization_config.activation_scheme = "static"'
    bad "static activation scheme" "config.json: quantization_config activation_scheme 'static' is not supported"
    mk '.' '.["model.layers.0.self_attn.q_proj.input_scale"] = {"dtype": "F32", "shape": [], "data_offsets": [$dend, ($dend + 4)]}'
    bad "an activation scale tensor" "$ST: tensor 'model.layers.0.self_attn.q_proj.input_scale' is an activation scale"
    mk '.quantization_config.quant_method = "awq"'
    bad "another quant_method" "config.json: quantization_config quant_method 'awq' is not supported"
    mk '.quantization_config.weight_block_size = [0, 128]'
    bad "a block size of 0" "config.json: quantization_config weight_block_size\[0\] is not a size"
    mk 'del(.quantization_config)'
    bad "FP8 without quantization_config" "$ST: tensor 'model.layers.0.mlp.down_proj.weight' is F8_E4M3, but config.json has no quantization_config"
    mk '.' '.["model.layers.0.mlp.up_proj.weight"].dtype = "F8_E5M2"'
    bad "an E5M2 tensor" "$ST: tensor 'model.layers.0.mlp.up_proj.weight' is F8_E5M2: only F8_E4M3 is supported"
    mk '.' "del(.[\"$KS\"])"
    bad "a missing scale" "$ST: tensor 'model.layers.0.self_attn.k_proj.weight' is F8_E4M3 but has no '$KS' beside it"
    mk '.' '.["model.layers.0.self_attn.x_proj.weight_scale_inv"] = .["'"$KS"'"]'
    bad "a scale without its weight" "$ST: tensor 'model.layers.0.self_attn.x_proj.weight_scale_inv' scales 'model.layers.0.self_attn.x_proj.weight', which the checkpoint does not have"
    mk '.' '.["model.layers.0.self_attn.k_norm.weight_scale_inv"] = .["'"$KS"'"]'
    bad "a scale of a BF16 weight" "scales 'model.layers.0.self_attn.k_norm.weight', which is BF16, not F8_E4M3"
    mk '.' ".[\"$KS\"].shape = [2, 1]"
    bad "a scale of the wrong shape" "$ST: tensor '$KS': scale of shape \[2, 1\], but a weight of 64 × 256 in 128 × 128 blocks needs \[1, 2\]"
    mk '.' ".[\"$KS\"].dtype = \"I32\""
    bad "a scale of an integer dtype" "$ST: tensor '$KS' is I32 (F32, F16 or BF16 expected)"
    mk; poke "$KS" 1 '\x00\x00\xc0\x7f'
    bad "a NaN scale" "$ST: tensor '$KS' has a non-finite factor (NaN) for block \[0, 1\] of 'model.layers.0.self_attn.k_proj.weight': nothing written"
    mk; poke "$KS" 0 '\x00\x00\x80\xff'
    bad "an -Inf scale (also for --outtype f32)" "$ST: tensor '$KS' has a non-finite factor (-Inf) for block \[0, 0\]" --outtype f32
    # E4M3's NaN code (S.1111.111) in a weight: the element, in the checkpoint's terms
    mk; ESIZE=1 poke model.layers.1.mlp.down_proj.weight $((3 * 512 + 130)) '\x7f'
    bad "a NaN code in a weight" "$ST: tensor 'model.layers.1.mlp.down_proj.weight' has a non-finite value (NaN) at row 3, column 130 (output tensor blk.1.ffn_down.weight): nothing written"
    # a finite code times a finite scale past f32's range
    mk; poke "$KS" 0 '\xff\xff\x7f\x7f'
    bad "a product past f32" "tensor 'model.layers.0.self_attn.k_proj.weight' has .* at row 0, column 0 (output tensor blk.0.attn_k.weight), which overflows f32" --outtype f32
    rm -rf "$D"
    fixture_block_end
fi
