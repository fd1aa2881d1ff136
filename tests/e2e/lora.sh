#!/usr/bin/env bash
# tests/e2e/lora.sh — LoRA adapters: gguf-convert ADAPTER --base BASE against
# llama.cpp e21cdc11's convert_lora_to_gguf.py.
#
# Every manifest of an adapter conversion (the fixtures' upstream-next/convert/
# *-lora-*.json for the two PEFT adapters there; tests/data/lora/ for the
# MoE adapter tests/tools/mklora makes at test time) must be reproduced:
# tensor names, order, types, shapes, offsets, sizes and sha256, and every
# key with its type and value in the same order. The base may be the
# Hugging Face folder or its GGUF. Bad adapters fail cleanly, naming the
# file and the problem, with no output.
source "$(dirname "$0")/lib.sh"
CONVERT=$BIN/gguf-convert
MKLORA=$BIN/tests/tools/mklora
EDIT=$BIN/gguf-edit
NEXT=upstream-next

if [ ! -x "$CONVERT" ]; then
    skip "gguf-convert" "not built"
    exit 0
fi
if ! command -v jq >/dev/null; then
    skip "LoRA adapters" "jq not installed"
    exit 0
fi

# "index name type shape offset nbytes sha256" lines of a manifest / a GGUF
manifest_tensors() {
    jq -r '.tensors | to_entries[] | "\(.key) \(.value.name) \(.value.type | ascii_downcase) \(.value.shape | map(tostring) | join(",")) \(.value.offset) \(.value.nbytes) \(.value.sha256)"' "$1"
}
gguf_tensors() {
    paste -d' ' \
        <("$INSPECT" --json "$1" | jq -r '.tensors[] | "\(.index) \(.name) \(.type) \(.shape | map(tostring) | join(",")) \(.offset) \(.bytes)"') \
        <("$INSPECT" --hash --json "$1" | jq -r '.tensors[] | .sha256')
}
# every key in order: "key type value" (f32 values to float precision,
# arrays as count and sha256)
manifest_keys() {
    jq -r '.metadata | to_entries[] | "\(.key) \(.value.type) \(if .value.sha256 then "\(.value.count) \(.value.sha256)" else (.value.value | tostring) end)"' "$1" | f32_norm
}
gguf_keys() {
    "$INSPECT" --hash --json "$1" | jq '.arrays | map({(.key): .sha256}) | add // {}' >"$TMP/arrays.json"
    "$INSPECT" --json "$1" | jq -r --slurpfile A "$TMP/arrays.json" '.metadata | to_entries[] | "\(.key) \(.value.type) \(if (.value.type | startswith("arr")) then "\(.value.count) \($A[0][.key])" else (.value.value | tostring) end)"' | f32_norm
}
f32_norm() { awk '$2 == "f32" { $3 = sprintf("%.7g", $3) } { print }'; }

# compare_manifest NAME MANIFEST GGUF: 2 checks (tensors with their
# offsets and sha256; every key in order)
compare_manifest() {
    local name=$1 m=$2 out=$3 d
    manifest_tensors "$m" >"$TMP/want.t"
    gguf_tensors "$out" >"$TMP/got.t"
    d=$(diff "$TMP/want.t" "$TMP/got.t" | head -4 | tr '\n' ' ')
    [ -s "$TMP/want.t" ] || d="no tensors read from the manifest"
    if [ -z "$d" ]; then pass "$name: tensor names, order, types, shapes, offsets and sha256"
    else fail "$name: tensors" "$d"; fi
    manifest_keys "$m" >"$TMP/want.k"
    gguf_keys "$out" >"$TMP/got.k"
    d=$(diff "$TMP/want.k" "$TMP/got.k" | head -4 | tr '\n' ' ')
    [ -s "$TMP/want.k" ] || d="no keys read from the manifest"
    if [ -z "$d" ]; then pass "$name: every key, its type and value, in order"
    else fail "$name: keys" "$d"; fi
}

# lora_manifest MANIFEST ADAPTER BASE [SUFFIX]: converts with the
# manifest's outtype and compares (2 checks).
lora_manifest() {
    local m=$1 adapter=$2 base=$3 name outtype out
    name=$(basename "$m" .json)
    outtype=${name##*-}
    out=$TMP/$name.gguf
    if ! "$CONVERT" -q "$adapter" --base "$base" --outtype "$outtype" -o "$out" >"$TMP/c.log" 2>&1; then
        fail "$name" "gguf-convert failed: $(tail -1 "$TMP/c.log")"
        skip_block "$name" "no output" 1
        return
    fi
    compare_manifest "$name${4:-}" "$m" "$out"
    rm -f "$out"
}

# --- the fixtures' adapters, against the base's folder and its GGUF --------
declare -A BASE=([qwen3]=qwen3-rand [llama]=llama3rope-rand)
for a in qwen3 llama; do
    if need_fixture "$NEXT/adapters/$a-lora" "$a-lora: e21cdc11's conversions" 12; then
        for t in f32 f16 bf16 q8_0; do
            lora_manifest "$FIX/$NEXT/convert/$a-lora-$t.json" "$FIX/$NEXT/adapters/$a-lora" "$FIX/models/${BASE[$a]}"
        done
        # the base given as our conversion of it (a GGUF): the same file
        "$CONVERT" -q "$FIX/models/${BASE[$a]}" --outtype f16 -o "$TMP/$a-base.gguf" >/dev/null 2>&1
        lora_manifest "$FIX/$NEXT/convert/$a-lora-f32.json" "$FIX/$NEXT/adapters/$a-lora" "$TMP/$a-base.gguf" " (--base GGUF)"
        rm -f "$TMP/$a-base.gguf"
        # the base's config.json alone (convert_lora_to_gguf.py needs no more)
        mkdir -p "$TMP/$a-cfg" && cp "$FIX/models/${BASE[$a]}/config.json" "$TMP/$a-cfg/"
        lora_manifest "$FIX/$NEXT/convert/$a-lora-q8_0.json" "$FIX/$NEXT/adapters/$a-lora" "$TMP/$a-cfg" " (--base config.json alone)"
        rm -rf "$TMP/$a-cfg"
        fixture_block_end
    fi
done

# mklora_manifests REF DIR BASE MKLORA-ARGS...: mklora makes DIR for
# models/BASE (or BASE, a path), converted in the four outtypes and compared
# with tests/data/lora/REF-T.json (9 checks).
mklora_manifests() {
    local ref=$1 dir=$2 base=$3 t
    shift 3
    [[ $base == /* ]] || base=$FIX/models/$base
    if [ -x "$MKLORA" ] && "$MKLORA" "$base" "$dir" "$@" >"$TMP/c.log" 2>&1; then
        pass "$ref: mklora makes the adapter"
        for t in f32 f16 bf16 q8_0; do
            lora_manifest "$ROOT/tests/data/lora/$ref-$t.json" "$dir" "$base"
        done
    else
        fail "$ref: mklora" "$(tail -1 "$TMP/c.log")"
        skip_block "$ref" "no adapter" 8
    fi
}

# --- an MoE adapter: attention and every expert's projections ---------------
# made at test time by mklora (deterministic); its references are
# tests/data/lora/qwen3moe-lora-*.json (README there). The folder is named
# "adapter" as where the references were made (general.name "Adapter").
if need_fixture models/qwen3moe-rand "qwen3moe-lora: e21cdc11's conversions" 9; then
    rm -rf "$TMP/moe" && mkdir -p "$TMP/moe"
    mklora_manifests qwen3moe-lora "$TMP/moe/adapter" qwen3moe-rand --experts
    fixture_block_end
fi

bad_case() { # name adapter expected-substring [options...]
    fails_cleanly "bad adapter: $1" "$TMP/bad.gguf" "$3" "$CONVERT" -q "$2" -o "$TMP/bad.gguf" "${@:4}"
}

# --- Qwen 3.5 and gpt-oss adapters -------------------------------------------
# made at test time by mklora (deterministic; --match takes the pairs from the
# base's own 2-D tensors); references tests/data/lora/{qwen35,qwen35moe,
# qwen35moe-experts,gptoss}-lora-*.json (README there). Qwen 3.5: lora_B's
# rows get the value-head reorder of in_proj_qkv/z/a/b; gpt-oss: attention
# and the router.
LIN=linear_attn.in_proj_qkv,linear_attn.in_proj_z,linear_attn.in_proj_a,linear_attn.in_proj_b
ATT=self_attn.q_proj,self_attn.k_proj,self_attn.v_proj,self_attn.o_proj
declare -A XBASE=([qwen35-lora]=qwen35-rand [qwen35moe-lora]=qwen35moe-rand
                  [qwen35moe-experts]=qwen35moe-rand [gptoss-lora]=gptoss-rand)
declare -A XARGS=([qwen35-lora]="--match $LIN,$ATT,mlp.gate_proj,mlp.up_proj,mlp.down_proj"
                  [qwen35moe-lora]="--match $LIN,$ATT,mlp.gate,shared_expert.gate_proj,shared_expert.up_proj,shared_expert.down_proj,mlp.shared_expert_gate"
                  [qwen35moe-experts]="--targets gate_proj,up_proj,down_proj --experts"
                  [gptoss-lora]="--match $ATT,mlp.router")
for a in qwen35-lora qwen35moe-lora qwen35moe-experts gptoss-lora; do
    n=9; [ "$a" = qwen35-lora ] && n=13
    need_fixture "models/${XBASE[$a]}" "$a: e21cdc11's conversions" $n || continue
    X=$TMP/x && rm -rf "$X" && mkdir -p "$X"
    # shellcheck disable=SC2086
    mklora_manifests "$a" "$X/$a" "${XBASE[$a]}" ${XARGS[$a]}
    if [ "$a" = qwen35-lora ]; then
        # the base's config.json alone gives the linear heads
        mkdir -p "$X/cfg" && cp "$FIX/models/qwen35-rand/config.json" "$X/cfg/"
        lora_manifest "$ROOT/tests/data/lora/qwen35-lora-q8_0.json" "$X/$a" "$X/cfg" " (--base config.json alone)"
        # a GGUF base has no linear_* keys of config.json's form: refused
        "$CONVERT" -q "$FIX/models/qwen35-rand" --outtype f16 -o "$X/base.gguf" >/dev/null 2>&1
        bad_case "qwen35 linear-attention pairs on a GGUF base" "$X/$a" \
            "'model.layers.0.linear_attn.in_proj_qkv.weight': its lora_B rows are reordered by value head" --base "$X/base.gguf"
        # out_proj: e21cdc11's converter fails (NotImplementedError)
        "$MKLORA" "$FIX/models/qwen35-rand" "$X/outp" --match linear_attn.out_proj >/dev/null 2>&1
        bad_case "qwen35 linear_attn.out_proj adapter" "$X/outp" \
            "'model.layers.0.linear_attn.out_proj.weight': adapters of qwen35's linear-attention output projection (linear_attn.out_proj, blk.0.ssm_out.weight) are not supported" \
            --base "$FIX/models/qwen35-rand"
    fi
    rm -rf "$X"
    fixture_block_end
done

# --- DeepSeek-V3, GLM-4.5, Mistral 3, Gemma 4, Qwen2, Phi-3, Gemma 2/3, Mixtral
# made at test time by mklora --match (the base's own 2-D tensors);
# references tests/data/lora/{deepseek2,glm4moe,mistral3,gemma4,qwen2,phi3,gemma2,gemma3,mixtral}-lora-*.json
# (README there). DeepSeek: latent attention's q_a/q_b/kv_a_mqa/o, the dense
# block, router, shared and routed experts (the MTP block's pairs dropped as
# the converter drops the block); GLM-4.5: the same feed-forward and the NextN
# block's pairs (eh_proj too); Mistral 3: names under language_model. (e21cdc11
# wrote the base model itself there: its reference is the converter with
# Mistral3ForConditionalGeneration as its text class, Ministral3Model);
# Gemma 4: attention, dense MLP, router and the per-layer input projections.
# Qwen2, Gemma 2, Gemma 3: attention and MLP; Phi-3: the fused qkv_proj and
# gate_up_proj (kept fused: attn_qkv, ffn_up); Mixtral: attention, router and
# every expert's w1/w2/w3 (stacked: ffn_{gate,down,up}_exps).
FFN=gate_proj,up_proj,down_proj
declare -A YARGS=([deepseek2-lora]="--match q_a_proj,q_b_proj,kv_a_proj_with_mqa,o_proj,$FFN,gate"
                  [glm4moe-lora]="--match q_proj,k_proj,v_proj,o_proj,$FFN,gate,eh_proj"
                  [mistral3-lora]="--match q_proj,k_proj,v_proj,o_proj,$FFN"
                  [gemma4-lora]="--match q_proj,k_proj,v_proj,o_proj,$FFN,proj,per_layer_input_gate,per_layer_projection,per_layer_model_projection"
                  [qwen2-lora]="--match q_proj,k_proj,v_proj,o_proj,$FFN"
                  [phi3-lora]="--match qkv_proj,o_proj,gate_up_proj,down_proj"
                  [gemma2-lora]="--match q_proj,k_proj,v_proj,o_proj,$FFN"
                  [gemma3-lora]="--match q_proj,k_proj,v_proj,o_proj,$FFN"
                  [mixtral-lora]="--match q_proj,k_proj,v_proj,o_proj,w1,w2,w3,gate")
for a in deepseek2-lora glm4moe-lora mistral3-lora gemma4-lora qwen2-lora phi3-lora gemma2-lora gemma3-lora mixtral-lora; do
    base=${a%-lora}-rand n=9
    [ "$a" = deepseek2-lora ] && n=10
    need_fixture "models/$base" "$a: e21cdc11's conversions" $n || continue
    X=$TMP/y && rm -rf "$X" && mkdir -p "$X"
    # shellcheck disable=SC2086
    mklora_manifests "$a" "$X/$a" "$base" ${YARGS[$a]}
    if [ "$a" = deepseek2-lora ]; then
        # kv_b_proj: split per head into attn_k_b / attn_v_b; e21cdc11's
        # converter fails (no torch.split on a LoRA pair), its runner applies
        # no adapter to either half
        "$MKLORA" "$FIX/models/$base" "$X/kvb" --match kv_b_proj >/dev/null 2>&1
        bad_case "deepseek2 kv_b_proj adapter" "$X/kvb" \
            "'model.layers.0.self_attn.kv_b_proj.weight': adapters of deepseek2's kv_b_proj are not supported" \
            --base "$FIX/models/$base"
    fi
    rm -rf "$X"
    fixture_block_end
done

# --- Gemma 4 with per-layer inputs and shared-KV blocks (gemma-4-E2B's form):
# a base made here by mkhf (deterministic), its adapter by mklora;
# references tests/data/lora/gemma4e-lora-*.json (README there)
MKHF=$BIN/tests/tools/mkhf
rm -rf "$TMP/g4e" && mkdir -p "$TMP/g4e"
if [ -x "$MKHF" ] && "$MKHF" "$TMP/g4e/gemma4e-rand" --family gemma4e --dim 128 --layers 12 --ffn 256 --heads 4 \
       --kv-heads 1 --head-dim 32 --global-head-dim 64 --ple-dim 32 --kv-shared 6 --vocab 512 >"$TMP/c.log" 2>&1; then
    mklora_manifests gemma4e-lora "$TMP/g4e/gemma4e-lora" "$TMP/g4e/gemma4e-rand" \
        --match q_proj,k_proj,v_proj,o_proj,$FFN,per_layer_input_gate,per_layer_projection,per_layer_model_projection
else
    fail "gemma4e-lora: mkhf" "$(tail -1 "$TMP/c.log")"
    skip_block gemma4e-lora "no base" 9
fi
rm -rf "$TMP/g4e"

# --- the default output name: {name}-{OUTTYPE}-LoRA.gguf in the adapter ---
if need_fixture "$NEXT/adapters/qwen3-lora" "default output name" 1; then
    cp -r "$FIX/$NEXT/adapters/qwen3-lora" "$TMP/qwen3-lora"
    "$CONVERT" -q "$TMP/qwen3-lora" --base "$FIX/models/qwen3-rand" >/dev/null 2>&1
    check "default output: Qwen3-Lora-F32-LoRA.gguf (outtype f32, as convert_lora_to_gguf.py)" \
        test -s "$TMP/qwen3-lora/Qwen3-Lora-F32-LoRA.gguf"
    rm -rf "$TMP/qwen3-lora"
    fixture_block_end
fi

# --- bad input: clear error naming the file, exit 1, no output --------------
# st_write FILE 'NAME:DTYPE:D0,D1' ...: a safetensors file of zeros, or
# with ST_DATA=FILE of the values of that safetensors file's data (from
# its start: finite values for any dtype FILE holds)
st_write() {
    local f=$1 hdr='' off=0 spec name dt shape n esz
    shift
    for spec in "$@"; do
        IFS=: read -r name dt shape <<<"$spec"
        esz=4; [ "$dt" = F32 ] || esz=2
        n=$(( ${shape/,/*} * esz ))
        hdr+="${hdr:+,}\"$name\":{\"dtype\":\"$dt\",\"shape\":[$shape],\"data_offsets\":[$off,$((off + n))]}"
        off=$((off + n))
    done
    hdr="{$hdr}"
    while [ $(( ${#hdr} % 8 )) -ne 0 ]; do hdr+=' '; done
    local len=${#hdr} i le=''
    for i in 0 1 2 3 4 5 6 7; do le+=$(printf '\\x%02x' $(( (len >> (8 * i)) & 255 ))); done
    if [ -n "${ST_DATA:-}" ]; then
        local skip
        skip=$(od -An -t u8 -N 8 "$ST_DATA" | tr -d ' ')
        { printf "$le"; printf '%s' "$hdr"; tail -c +$((skip + 9)) "$ST_DATA" | head -c "$off"; } >"$f"
    else
        { printf "$le"; printf '%s' "$hdr"; head -c "$off" /dev/zero; } >"$f"
    fi
}

if need_fixture "$NEXT/adapters/qwen3-lora" "bad adapters" 17; then
    Q=$FIX/$NEXT/adapters/qwen3-lora B=$FIX/models/qwen3-rand BAD=$TMP/badlora
    P=base_model.model.model.layers.0.self_attn
    rm -rf "$BAD" && mkdir -p "$BAD"
    cp "$Q/adapter_model.safetensors" "$BAD/"
    bad_case "no adapter_config.json" "$BAD" "adapter_config.json: not found" --base "$B"
    bad_config() { # name jq-filter expected
        jq "$2" "$Q/adapter_config.json" >"$BAD/adapter_config.json"
        bad_case "$1" "$BAD" "$3" --base "$B"
    }
    bad_config "DoRA" '.use_dora = true' "adapter_config.json: line [0-9]*: use_dora is set: DoRA adapters"
    bad_config "rsLoRA" '.use_rslora = true' "adapter_config.json: line [0-9]*: use_rslora is set"
    bad_config "bias trained" '.bias = "lora_only"' "adapter_config.json: line [0-9]*: bias is 'lora_only'"
    bad_config "modules_to_save" '.modules_to_save = ["lm_head"]' "adapter_config.json: line [0-9]*: modules_to_save is set"
    bad_config "not LoRA" '.peft_type = "LOHA"' "peft_type is 'LOHA': only LoRA adapters"
    bad_config "no lora_alpha" 'del(.lora_alpha)' "adapter_config.json: no lora_alpha"
    cp "$Q/adapter_config.json" "$BAD/"
    st_write "$BAD/adapter_model.safetensors" "$P.q_proj.lora_A.weight:F32:8,256" "$P.q_proj.lora_B.weight:F32:128,4"
    bad_case "rank mismatch between A and B" "$BAD" "adapter_model.safetensors: 'model.layers.0.self_attn.q_proj.weight': rank mismatch: lora_A has 8 rows, lora_B 4 columns" --base "$B"
    st_write "$BAD/adapter_model.safetensors" "$P.x_proj.lora_A.weight:F32:8,256" "$P.x_proj.lora_B.weight:F32:128,8"
    bad_case "a target module not in the base" "$BAD" "'model.layers.0.self_attn.x_proj.weight' is no tensor of a qwen3 model" --base "$B"
    st_write "$BAD/adapter_model.safetensors" "$P.q_proj.lora_A.weight:F32:8,256"
    bad_case "lora_A without lora_B" "$BAD" "has a lora_A but no lora_B tensor" --base "$B"
    st_write "$BAD/adapter_model.safetensors" "$P.q_proj.lora_A.weight:F32:8,256" "$P.q_proj.lora_B.weight:F32:128,8" "$P.q_proj.lora_magnitude_vector:F32:1,128"
    bad_case "a DoRA magnitude" "$BAD" "not a lora_A or lora_B tensor (a DoRA magnitude" --base "$B"
    if need_fixture models/llama3rope-rand "adapter of another architecture"; then
        bad_case "an adapter for another model than --base" "$Q" "do not fit the base model's 'blk.0.attn_q.weight'" --base "$FIX/models/llama3rope-rand"
    fi
    # output paths: an input file, or the base
    cp "$Q/adapter_model.safetensors" "$BAD/" && cp "$Q/adapter_config.json" "$BAD/"
    cp "$BAD/adapter_model.safetensors" "$TMP/st.before"
    "$CONVERT" -q "$BAD" --base "$B" -o "$BAD/adapter_model.safetensors" >"$TMP/bad.log" 2>&1
    if [ $? -eq 1 ] && cmp -s "$BAD/adapter_model.safetensors" "$TMP/st.before"; then
        pass "bad adapter: output = the adapter's weights refused, input unchanged"
    else fail "bad adapter: output = an input" "$(tail -1 "$TMP/bad.log")"; fi
    # mergekit's norms in an adapter: kept, f32, ahead of the pairs
    mkdir -p "$TMP/norm-lora" && cp "$Q/adapter_config.json" "$TMP/norm-lora/"
    st_write "$TMP/norm-lora/adapter_model.safetensors" "$P.q_proj.lora_A.weight:F32:8,256" "$P.q_proj.lora_B.weight:F32:128,8" \
        "base_model.model.model.layers.0.input_layernorm.weight:F32:256"
    lora_manifest "$ROOT/tests/data/lora/norm-lora-q8_0.json" "$TMP/norm-lora" "$B"
    rm -rf "$TMP/norm-lora"
    usage_error "$CONVERT" "adapter without --base" "is a LoRA adapter: give its base model with --base" "$Q" -o "$TMP/x.gguf"
    # gpt-oss: its attention and router convert (lora_run.sh runs the
    # attention), its experts (fused MXFP4 parameters) do not
    if need_fixture models/gptoss-rand "gpt-oss feed-forward adapter"; then
        "$BIN/tests/tools/mklora" "$FIX/models/gptoss-rand" "$TMP/gl" --targets q_proj,gate_proj >/dev/null
        bad_case "gpt-oss feed-forward adapter" "$TMP/gl" "'model.layers.0.mlp.gate_proj.weight': adapters of gpt-oss's feed-forward experts are not supported" \
            --base "$FIX/models/gptoss-rand"
        rm -rf "$TMP/gl"
    fi
    rm -rf "$BAD" "$TMP/st.before"
    fixture_block_end
fi

# --- an adapter of the token embeddings (lora_embedding_A/B): lora_a
# transposed, as convert_lora_to_gguf.py flips the pair; converted and
# merged (tests/data/lora/embd-lora-*.json, merge-qwen3-f16-embd.json) ----
if need_fixture "$NEXT/adapters/qwen3-lora" "embedding adapter" 7; then
    E=$TMP/embd-lora P0=base_model.model.model
    mkdir -p "$E" && cp "$FIX/$NEXT/adapters/qwen3-lora/adapter_config.json" "$E/"
    ST_DATA=$FIX/$NEXT/adapters/qwen3-lora/adapter_model.safetensors st_write "$E/adapter_model.safetensors" \
        "$P0.layers.0.self_attn.q_proj.lora_A.weight:F32:8,256" "$P0.layers.0.self_attn.q_proj.lora_B.weight:F32:128,8" \
        "$P0.embed_tokens.lora_embedding_A:F32:8,512" "$P0.embed_tokens.lora_embedding_B:F32:256,8"
    for t in f32 q8_0; do
        lora_manifest "$ROOT/tests/data/lora/embd-lora-$t.json" "$E" "$FIX/models/qwen3-rand"
    done
    "$CONVERT" -q "$E" --base "$FIX/models/qwen3-rand" -o "$TMP/embd.gguf" >/dev/null 2>&1
    "$CONVERT" -q "$FIX/models/qwen3-rand" --outtype f16 -o "$TMP/embd-base.gguf" >/dev/null 2>&1
    if "$EDIT" -q "$TMP/embd-base.gguf" --lora "$TMP/embd.gguf" -o "$TMP/embd-m.gguf" >"$TMP/c.log" 2>&1; then
        pass "merge of an embedding adapter runs"
        compare_manifest merge-qwen3-f16-embd "$ROOT/tests/data/lora/merge-qwen3-f16-embd.json" "$TMP/embd-m.gguf"
    else
        fail "merge of an embedding adapter" "$(tail -1 "$TMP/c.log")"
        skip_block merge-qwen3-f16-embd "no output" 2
    fi
    rm -rf "$E" "$TMP"/embd*.gguf
    fixture_block_end
fi

# --- merging: gguf-edit BASE --lora A [--lora-scaled B S] -o OUT ------------
# against llama-export-lora e21cdc11's files (tests/data/lora/merge-*.json,
# README there): bases converted by gguf-convert (byte-identical to
# convert_hf_to_gguf.py), adapters converted from the fixtures' PEFT folders.
QUANTIZE=$BIN/gguf-quantize
ML=$TMP/merge
merge_case() { # manifest base-model base-outtype adapter-spec... (NAME:OUTTYPE[:SCALE[:old]]:
    # a scale goes as --lora-scaled FILE:SCALE, llama.cpp's form, or with :old as FILE SCALE)
    local m=$ROOT/tests/data/lora/$1.json model=$2 bt=$3 name=$1 args=() spec a t sc form
    shift 3
    [ -f "$ML/$model-$bt.gguf" ] || "$CONVERT" -q "$FIX/models/$model" --outtype "$bt" -o "$ML/$model-$bt.gguf" >/dev/null 2>&1
    for spec in "$@"; do
        IFS=: read -r a t sc form <<<"$spec"
        [ -f "$ML/$a-$t.gguf" ] || "$CONVERT" -q "$(adapter_dir "$a")" --base "$FIX/models/$model" --outtype "$t" -o "$ML/$a-$t.gguf" >/dev/null 2>&1
        if [ -z "$sc" ]; then args+=(--lora "$ML/$a-$t.gguf")
        elif [ "$form" = old ]; then args+=(--lora-scaled "$ML/$a-$t.gguf" "$sc")
        else args+=(--lora-scaled "$ML/$a-$t.gguf:$sc"); fi
    done
    if ! "$EDIT" -q "$ML/$model-$bt.gguf" "${args[@]}" -o "$ML/out.gguf" >"$TMP/c.log" 2>&1; then
        fail "$name" "gguf-edit failed: $(tail -1 "$TMP/c.log")"
        skip_block "$name" "no output" 1
        return
    fi
    compare_manifest "$name" "$m" "$ML/out.gguf"
}
adapter_dir() {
    case $1 in qwen3moe-lora) echo "$TMP/moe/adapter" ;; deepseek2-r4) echo "$TMP/moe/$1" ;; *) echo "$FIX/$NEXT/adapters/$1" ;; esac
}
if need_fixture "$NEXT/adapters/qwen3-lora" "LoRA merges: llama-export-lora's files" 28; then
    rm -rf "$ML" && mkdir -p "$ML"
    merge_case merge-qwen3-f32 qwen3-rand f32 qwen3-lora:f32
    merge_case merge-qwen3-f16 qwen3-rand f16 qwen3-lora:f32
    merge_case merge-qwen3-q8_0 qwen3-rand q8_0 qwen3-lora:f32
    merge_case merge-qwen3-f32-lf16 qwen3-rand f32 qwen3-lora:f16:-0.75
    merge_case merge-llama-f32 llama3rope-rand f32 llama-lora:f32
    merge_case merge-llama-f16 llama3rope-rand f16 llama-lora:f32
    merge_case merge-llama-f16-x2 llama3rope-rand f16 llama-lora:f32 llama-lora:f32:0.5:old
    if [ -d "$TMP/moe/adapter" ]; then
        merge_case merge-qwen3moe-f16 qwen3moe-rand f16 qwen3moe-lora:f32
    else
        skip_block merge-qwen3moe-f16 "no MoE adapter" 2
    fi
    # DeepSeek-V3 (rank 4: llama-export-lora's rank-4 products take ggml's
    # plain dot product on every x86 build, where rank 8 or 16 goes through
    # tinyBLAS, whose order depends on the vector width)
    mkdir -p "$TMP/moe"
    if [ -d "$FIX/models/deepseek2-rand" ] && "$MKLORA" "$FIX/models/deepseek2-rand" "$TMP/moe/deepseek2-r4" --rank 4 \
           --match q_a_proj,q_b_proj,kv_a_proj_with_mqa,o_proj,gate_proj,up_proj,down_proj,gate >/dev/null 2>&1; then
        merge_case merge-deepseek2-f32 deepseek2-rand f32 deepseek2-r4:f32
        merge_case merge-deepseek2-f16 deepseek2-rand f16 deepseek2-r4:f32
    else
        skip_block merge-deepseek2 "no models/deepseek2-rand or no mklora" 4
    fi
    # the merged model is a model: it passes --check and quantizes
    "$EDIT" -q "$ML/llama3rope-rand-f16.gguf" --lora "$ML/llama-lora-f32.gguf" -o "$ML/m.gguf" >/dev/null 2>&1
    check "merged llama passes --check" "$INSPECT" --check "$ML/m.gguf"
    if "$QUANTIZE" -q "$ML/m.gguf" "$ML/m-q4.gguf" Q4_K_M >"$TMP/c.log" 2>&1 && "$INSPECT" --check "$ML/m-q4.gguf" >/dev/null 2>&1; then
        pass "merged llama quantizes (Q4_K_M) and passes --check"
    else fail "merged llama quantizes" "$(tail -1 "$TMP/c.log")"; fi
    # bad merges: clear error naming the file, exit 1, no output
    bad_merge() { # name expected args...
        fails_cleanly "bad merge: $1" "$ML/bad.gguf" "$2" "$EDIT" -q "${@:3}" -o "$ML/bad.gguf"
    }
    bad_merge "an adapter of another architecture" "qwen3-lora-f32.gguf: an adapter of qwen3 models, the base is llama" \
        "$ML/llama3rope-rand-f16.gguf" --lora "$ML/qwen3-lora-f32.gguf"
    bad_merge "a model as the adapter" "qwen3-rand-f16.gguf: not an adapter" \
        "$ML/qwen3-rand-f32.gguf" --lora "$ML/qwen3-rand-f16.gguf"
    "$CONVERT" -q "$FIX/$NEXT/adapters/qwen3-lora" --base "$FIX/models/qwen3-rand" --outtype q8_0 -o "$ML/q8.gguf" >/dev/null 2>&1
    bad_merge "a quantized adapter" "q8.gguf: tensor 'blk.0.attn_q.weight.lora_a' is q8_0: quantized adapters are not merged" \
        "$ML/qwen3-rand-f32.gguf" --lora "$ML/q8.gguf"
    if [ -x "$MKLORA" ] && "$MKLORA" "$FIX/models/qwen3-rand" "$ML/qonly" --targets q_proj >/dev/null 2>&1 &&
        "$CONVERT" -q "$ML/qonly" --base "$FIX/models/qwen3-rand" -o "$ML/qonly.gguf" >/dev/null 2>&1; then
        bad_merge "adapters of different tensors at once" "qonly.gguf: its tensors are not those of" \
            "$ML/qwen3-rand-f32.gguf" --lora "$ML/qwen3-lora-f32.gguf" --lora "$ML/qonly.gguf"
    else
        fail "bad merge: adapters of different tensors" "mklora --targets q_proj failed"
    fi
    cp "$ML/qwen3-rand-f32.gguf" "$ML/before.gguf"
    "$EDIT" -q "$ML/qwen3-rand-f32.gguf" --lora "$ML/qwen3-lora-f32.gguf" -o "$ML/qwen3-rand-f32.gguf" >"$TMP/bad.log" 2>&1
    if [ $? -eq 1 ] && cmp -s "$ML/qwen3-rand-f32.gguf" "$ML/before.gguf"; then
        pass "bad merge: output = the base refused, base unchanged"
    else fail "bad merge: output = the base" "$(tail -1 "$TMP/bad.log")"; fi
    usage_error "$EDIT" "--lora without -o" "--lora writes a new file: give -o OUT" "$ML/qwen3-rand-f32.gguf" --lora "$ML/qwen3-lora-f32.gguf"
    rm -rf "$ML"
    fixture_block_end
fi
rm -rf "$TMP/moe"
