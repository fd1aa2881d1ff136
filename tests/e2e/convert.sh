#!/usr/bin/env bash
# tests/e2e/convert.sh — gguf-convert against llama.cpp's converter.
#
# For every manifest in reference/convert/ whose input gguf-convert reads
# (Hugging Face folders), converting with the same outtype must give the
# same tensor names in the same order, types, shapes and sha256 of data,
# and the same value for every {arch}.* and tokenizer.ggml.* key and for
# general.architecture, general.file_type, general.quantization_version and
# general.size_label
# (arrays by element type, count and sha256 of their bytes). Every output
# passes --check; bad input fails cleanly with no output file.
source "$(dirname "$0")/lib.sh"
CONVERT=$BIN/gguf-convert
REF=$FIX/reference
need_jq() { command -v jq >/dev/null && return 0; skip "$1" "jq not installed"; return 1; }

# Tensors as "index name type shape sha256" lines.
manifest_tensors() {
    jq -r '.tensors | to_entries[] | "\(.key) \(.value.name) \(.value.type | ascii_downcase) \(.value.shape | map(tostring) | join(",")) \(.value.sha256)"' "$1"
}
gguf_tensors() {
    join -1 2 -2 1 -o 1.1,1.2,1.3,1.4,2.2 \
        <("$INSPECT" --json "$1" | jq -r '.tensors | to_entries[] | "\(.key) \(.value.name) \(.value.type | ascii_downcase) \(.value.shape | map(tostring) | join(","))"' | sort -k2,2) \
        <("$INSPECT" --hash --json "$1" | jq -r '.tensors[] | "\(.name) \(.sha256)"' | sort -k1,1) |
        sort -n
}
# The compared keys (lib.sh's gguf_meta/manifest_meta lines).
KEYS_SEL='.key as $k | ($k | test("^general[.](architecture|file_type|quantization_version|size_label)$")) or (($k | startswith("general.")) | not)'
manifest_keys() { manifest_meta "$1" "$KEYS_SEL"; }
gguf_keys() { gguf_meta "$1" "$KEYS_SEL"; }
convert_manifest() {
    local m=$1 name outtype model input out d keep
    name=$(basename "$m" .json)
    outtype=${name##*-}
    model=${name%-*}
    input=${CONVERT_INPUT:-$FIX/models/$model}
    case $model in
        *-torch) input=$FIX/models/${model%-torch}/torch ;;
        *-meta) input=$FIX/models/${model%-meta}/meta ;;
        *) [ -d "$input/hf" ] && input=$input/hf ;;
    esac
    out=$TMP/$name.gguf
    if ! "$CONVERT" -q "$input" --outtype "$outtype" -o "$out" "${@:2}" >"$TMP/c.log" 2>&1; then
        fail "$name" "gguf-convert failed: $(tail -1 "$TMP/c.log")"; return
    fi
    manifest_tensors "$m" >"$TMP/want.t"
    gguf_tensors "$out" >"$TMP/got.t"
    d=$(diff "$TMP/want.t" "$TMP/got.t" | head -4 | tr '\n' ' ')
    [ -s "$TMP/want.t" ] || d="no tensors read from the manifest"
    if [ -z "$d" ]; then pass "$name: tensor names, order, types, shapes and sha256"
    else fail "$name: tensors" "$d"; fi
    # f32 values to float precision (the manifest prints them as doubles)
    f32_norm() { awk '$2 == "f32" { $3 = sprintf("%.7g", $3) } { print }'; }
    # llama.cpp's legacy converter (the -meta- manifests) writes no special
    # tokens and no quantization version: there only {arch}.*, the token
    # arrays and general.architecture/file_type are compared
    keep='.'
    [[ $name == *-meta-* ]] && keep='^(general\.(architecture|file_type)|tokenizer\.ggml\.(tokens|scores|token_type)|llama\.[^ ]*) '
    manifest_keys "$m" | f32_norm | grep -E "$keep" >"$TMP/want.keys"
    gguf_keys "$out" | f32_norm | grep -E "$keep" >"$TMP/got.keys"
    d=$(diff "$TMP/want.keys" "$TMP/got.keys" | head -4 | tr '\n' ' ')
    [ -s "$TMP/want.keys" ] || d="no keys read from the manifest"
    if [ -z "$d" ]; then pass "$name: {arch}.*, tokenizer.ggml.* and general type keys"
    else fail "$name: metadata" "$d"; fi
    check "$name: output passes --check" "$INSPECT" --check "$out"
    # with KEY_ORDER set, every key in the manifest's order (e21cdc11's
    # converter: c392e50's wrote the quantization version last)
    if [ -n "${KEY_ORDER:-}" ]; then
        d=$(diff <(jq -r '.metadata | keys_unsorted[]' "$m") \
                 <("$INSPECT" --json "$out" | jq -r '.metadata | keys_unsorted[]') | head -4 | tr '\n' ' ')
        if [ -z "$d" ]; then pass "$name: every key in llama.cpp's order"
        else fail "$name: key order" "$d"; fi
    fi
    rm -f "$out"
}

# c392e50 wrote a safetensors file's tensors in header order, e21cdc11 in
# name order (gguf-convert's default): the old references with --tensor-order file
if need_jq "convert manifests" && need_fixture reference/convert "convert manifests" 42; then
    for m in "$REF"/convert/*.json; do
        convert_manifest "$m" --tensor-order file
    done
    fixture_block_end
fi

# e21cdc11's references (upstream/convert/), one set for each architecture
# in --arches that has one (lib.sh's upstream_sets): every outtype of each.
UPSTREAM_SETS=$(upstream_sets)
if need_jq "upstream convert manifests" &&
    need_fixture upstream/convert "upstream convert manifests" $((16 * $(wc -w <<<"$UPSTREAM_SETS"))); then
    for fam in $UPSTREAM_SETS; do
        for m in "$(upstream_root "$fam")"/convert/"$fam"-{f32,f16,bf16,q8_0}.json; do
            if [ -f "$m" ]; then KEY_ORDER=1 convert_manifest "$m"
            else skip_block "$(basename "$m" .json)" "no manifest $m" 4; fi
        done
    done
    fixture_block_end
fi

# Multimodal checkpoints of the 2026 families: Qwen3_5ForConditionalGeneration,
# Qwen3_5MoeForConditionalGeneration (vision tower, MTP layer) and
# Gemma4ForConditionalGeneration (vision and audio towers with 0-d clipping
# tensors, eos_token_id [EOS, 106] at the top level), in two shards with an
# index, as released. tests/tools/mkmm makes each from its family's
# text-only fixture at test time; converting it must give e21cdc11's file
# (tests/data/mm/FAMILY-mm-T.json, made as tests/data/mm/README.md says):
# the towers and the MTP head dropped, the text tensors in shard-by-shard
# name order, the keys in its order (Gemma 4: no eos id from the list).
# qwen35moe-experts: the same checkpoint with its experts saved one tensor
# per expert (as fine-tunes are), stacked again as e21cdc11 stacks them:
# its file is qwen35moe-mm's (checked with convert_hf_to_gguf.py).
# With --mmproj their towers must be e21cdc11's projector files
# (FAMILY-mmproj-T.json) that --check accepts: Qwen's qwen3vl_merger (the
# Conv3D patch embedding as two Conv2D tensors), Gemma 4's vision and audio
# projector (gemma4v + gemma4a: clipped linears' 0-d bounds as [1], the
# patch embedding permuted to a Conv2D, softplus per_dim_scale); --check
# names a Gemma 4 projector whose audio sizes or projector type are wrong,
# and --mmproj an audio tower without audio_config.
MKMM=$BIN/tests/tools/mkmm
# mm_checkpoint KIND BASE NAME DIR [projector-only]: tests/tools/mkmm makes
# checkpoint KIND from models/BASE-rand in DIR; its text model (unless
# projector-only) and, with --mmproj, its projector must be e21cdc11's files
# in every outtype (tests/data/mm/NAME-mm-T.json, NAME-mmproj-T.json), and
# the projector, written to $TMP/KIND-mmproj.gguf for the caller's further
# checks, must pass --check. Returns 1 (one failure counted) when mkmm
# cannot make the checkpoint.
mm_checkpoint() {
    local kind=$1 base=$2 name=$3 dir=$4 projonly=${5:-} t
    rm -rf "${dir:?}"
    if ! { [ -x "$MKMM" ] && "$MKMM" "$kind" "$FIX/models/$base-rand" "$dir" >"$TMP/c.log" 2>&1; }; then
        fail "multimodal $kind: mkmm" "$(tail -1 "$TMP/c.log")"
        return 1
    fi
    pass "multimodal $kind: mkmm makes the checkpoint"
    for t in f32 f16 bf16 q8_0; do
        [ -n "$projonly" ] ||
            CONVERT_INPUT=$dir KEY_ORDER=1 convert_manifest "$ROOT/tests/data/mm/$name-mm-$t.json"
        CONVERT_INPUT=$dir KEY_ORDER=1 convert_manifest "$ROOT/tests/data/mm/$name-mmproj-$t.json" --mmproj
    done
    "$CONVERT" -q "$dir" --mmproj -o "$TMP/$kind-mmproj.gguf" >"$TMP/c.log" 2>&1
    check "$kind --mmproj: --check validates it as a projector" \
        grep -q "^projector: *ok" <("$INSPECT" --check "$TMP/$kind-mmproj.gguf")
}
# projector_fault NAME PROJECTOR EXPECTED EDIT...: PROJECTOR edited by
# gguf-edit (EDIT: its options) must fail --check with EXPECTED (fixed
# text) on its projector line.
projector_fault() {
    local name=$1 src=$2 want=$3 out rc
    shift 3
    "$BIN/gguf-edit" "$src" -o "$TMP/fault.gguf" "$@" >/dev/null 2>&1
    out=$("$INSPECT" --check "$TMP/fault.gguf" 2>&1); rc=$?
    if [ $rc -ne 0 ] && grep "^projector:" <<<"$out" | grep -qF "$want"
    then pass "--check: $name"
    else fail "--check: $name" "exit $rc, $(grep projector <<<"$out")"; fi
    rm -f "$TMP/fault.gguf"
}
for fam in qwen35 qwen35moe qwen35moe-experts gemma4; do
    base=${fam%-experts}
    n=34
    [ "$base" = gemma4 ] && n=39
    if need_jq "multimodal $fam" &&
        need_fixture "models/$base-rand" "multimodal $fam: e21cdc11's conversion" $n; then
        if mm_checkpoint "$fam" "$base" "$base" "$TMP/$fam-mm"; then
            P=$TMP/$fam-mmproj.gguf
            if [ "$base" = gemma4 ]; then
                projector_fault "a gemma4a projector whose tensors are not its audio sizes" "$P" \
                    "tensor 'a.input_projection.weight' has shape [128, 16]; clip.audio.* sizes say [*, 32]" \
                    --set clip.audio.embedding_length:u32=32
                projector_fault "a gemma4 projector without its vision projector type" "$P" \
                    "clip.projector_type (or clip.vision.projector_type) is missing" \
                    --delete clip.vision.projector_type
                rm -rf "${TMP:?}/g4-noaudio"; mkdir -p "$TMP/g4-noaudio"
                ln -s "$TMP/$fam-mm"/* "$TMP/g4-noaudio/"; rm "$TMP/g4-noaudio/config.json"
                jq 'del(.audio_config)' "$TMP/$fam-mm/config.json" >"$TMP/g4-noaudio/config.json"
                fails_cleanly "--mmproj: gemma4's audio tower without audio_config" "$TMP/bad.gguf" \
                    "an audio tower's tensor, but config.json has no audio_config" \
                    "$CONVERT" -q "$TMP/g4-noaudio" -o "$TMP/bad.gguf" --mmproj
                rm -rf "${TMP:?}/g4-noaudio"
                # a shard whose header gives a tensor another shape of the
                # same size: the patch embedding not [n, p·p·3], the
                # depthwise kernel not [c, 1, k]
                g4_shape_case() { # NAME PERL-SUBSTITUTION EXPECTED
                    rm -rf "${TMP:?}/g4-shape"; mkdir -p "$TMP/g4-shape"
                    ln -s "$TMP/$fam-mm"/* "$TMP/g4-shape/"; rm "$TMP/g4-shape/model-00002-of-00002.safetensors"
                    perl -0777 -pe "$2" "$TMP/$fam-mm/model-00002-of-00002.safetensors" \
                        >"$TMP/g4-shape/model-00002-of-00002.safetensors"
                    fails_cleanly "--mmproj: $1" "$TMP/bad.gguf" "$3" \
                        "$CONVERT" -q "$TMP/g4-shape" -o "$TMP/bad.gguf" --mmproj
                    rm -rf "${TMP:?}/g4-shape"
                }
                g4_shape_case "gemma4's patch embedding not patch × patch × 3 wide" \
                    's/(input_proj\.weight":\{"dtype":"BF16","shape":)\[32,48\]/$1\[48,32\]/' \
                    "tensor 'model.vision_tower.patch_embedder.input_proj.weight': not a patch embedding"
                g4_shape_case "gemma4's depthwise kernel not [channels, 1, kernel]" \
                    's/(depthwise_conv1d\.weight":\{"dtype":"BF16","shape":)\[16,1,5\]/$1\[16,5,1\]/' \
                    "tensor 'model.audio_tower.layers.0.lconv1d.depthwise_conv1d.weight': not a depthwise Conv1d weight"
            fi
            rm -f "$P"
        else
            skip_block "multimodal $fam" "no checkpoint" $((n - 1))
        fi
        rm -rf "${TMP:?}/$fam-mm"
        fixture_block_end
    fi
done

# Gemma 4 without an audio tower (audio_config null, as the 26B-A4B and 31B
# releases): --mmproj writes the vision projector alone (no
# clip.has_audio_encoder, no clip.audio.*), e21cdc11's file
# (tests/data/mm/gemma4v-mmproj-T.json), which --check accepts.
if need_jq "multimodal gemma4-vision" &&
    need_fixture models/gemma4-rand "multimodal gemma4-vision: the vision projector alone" 18; then
    if mm_checkpoint gemma4-vision gemma4 gemma4v "$TMP/gemma4v-mm" projector-only; then
        rm -f "$TMP/gemma4-vision-mmproj.gguf"
    else
        skip_block "multimodal gemma4-vision" "no checkpoint" 17
    fi
    rm -rf "${TMP:?}/gemma4v-mm"
    fixture_block_end
fi

# deepseek2 without q_lora_rank and GLM-4.7-Flash's class: tests/tools/mkhf's
# deepseek2lite (DeepseekV2ForCausalLM as DeepSeek-V2-Lite's config:
# q_lora_rank null, one q_proj, no score bias, two shared experts, softmax
# routing; 27 layers, the count llama.cpp reads as a model without q_lora)
# and glm4moelite (Glm4MoeLiteForCausalLM: DeepSeek-V3's tensors, no
# scoring_func, an MTP layer dropped) with deepseek2-rand's tokenizer must
# convert to e21cdc11's files (tests/data/mla/, made as its README says).
MLA_SHAPE=(--dim 128 --heads 4 --head-dim 32 --ffn 256 --experts 8 --experts-used 2 --moe-ffn 32
           --kv-lora 64 --rope-dim 16 --vocab 512 --dtype bf16)
for fam in deepseek2lite:27 glm4moelite:3; do
    layers=${fam#*:} fam=${fam%:*}
    if need_jq "$fam conversion" &&
        need_fixture models/deepseek2-rand/tokenizer.model "$fam: e21cdc11's conversion" 17; then
        rm -rf "${TMP:?}/$fam-rand"
        if "$BIN/tests/tools/mkhf" "$TMP/$fam-rand" --family "$fam" --layers "$layers" --q-lora 64 \
            "${MLA_SHAPE[@]}" --tokenizer "$FIX/models/deepseek2-rand/tokenizer.model" >"$TMP/c.log" 2>&1; then
            pass "$fam: mkhf makes the checkpoint"
            for t in f32 f16 bf16 q8_0; do
                CONVERT_INPUT=$TMP/$fam-rand KEY_ORDER=1 convert_manifest "$ROOT/tests/data/mla/$fam-rand-$t.json"
            done
        else
            fail "$fam: mkhf" "$(tail -1 "$TMP/c.log")"
            skip_block "$fam conversion" "no checkpoint" 16
        fi
        rm -rf "${TMP:?}/$fam-rand"
        fixture_block_end
    fi
done

# --- bad input: clear error, exit 1, no output ------------------------------
bad_case() { # name dir expected-substring [options...]
    fails_cleanly "bad input: $1" "$TMP/bad.gguf" "$3" "$CONVERT" -q "$2" -o "$TMP/bad.gguf" "${@:4}"
}

# Gemma 3's multimodal checkpoint (Gemma3ForConditionalGeneration as
# google/gemma-3-4b-it is released; mkmm gemma3, a two-layer SigLIP tower):
# its text model, and with --mmproj its vision tower and projector, must be
# e21cdc11's files (tests/data/mm/gemma3-mm-T.json, gemma3-mmproj-T.json:
# the clip GGUF of llama.cpp's --mmproj); --check validates a projector's
# clip.vision.* sizes against its tensors; --mmproj refuses what it cannot
# convert, naming the file.
mm_variant() { # NAME JQ-FILTER [SRC]: SRC (default $G3) with config.json through the filter, in $TMP/NAME
    local src=${3:-$G3}
    rm -rf "${TMP:?}/$1"; mkdir -p "$TMP/$1"
    ln -s "$src"/* "$TMP/$1/"; rm "$TMP/$1/config.json"
    jq "$2" "$src/config.json" >"$TMP/$1/config.json"
}
if need_jq "multimodal gemma3" &&
    need_fixture models/gemma3-rand "multimodal gemma3: text model and projector" 43; then
    G3=$TMP/gemma3-mm
    if mm_checkpoint gemma3 gemma3 gemma3 "$G3"; then
        # the default name: MmprojModel's mmproj-{name}-{OUTTYPE}.gguf
        rm -f "$G3"/mmproj-*.gguf
        "$CONVERT" -q "$G3" --mmproj --outtype q8_0 >"$TMP/c.log" 2>&1
        check "gemma3 --mmproj: default output mmproj-Gemma3-mm-Q8_0.gguf" test -s "$G3/mmproj-Gemma3-mm-Q8_0.gguf"
        P=$TMP/gemma3-mmproj.gguf
        projector_fault "a projector whose tensors are not its sizes" "$P" \
            "tensor 'v.patch_embd.weight' has shape [14, 14, 3, 32]; clip.vision.* sizes say [14, 14, 3, 48]" \
            --set clip.vision.embedding_length:u32=48
        projector_fault "a projector without clip.vision.block_count" "$P" "clip.vision.block_count" \
            --delete clip.vision.block_count
        rm -f "$P" "$TMP"/g3-*.gguf
        bad_case "--mmproj: a text-only model" "$FIX/models/gemma3-rand" \
            "gemma3-rand: config.json: no vision_config: Gemma3ForCausalLM has no vision projector" --mmproj
        "$CONVERT" -q "$FIX/models/gemma3-rand" -o "$TMP/g3-text.gguf" >/dev/null 2>&1
        bad_case "--mmproj: a GGUF input" "$TMP/g3-text.gguf" "g3-text.gguf: --mmproj: not a Hugging Face model folder" --mmproj
        rm -f "$TMP/g3-text.gguf"
        mm_variant g3-other '.architectures = ["Idefics3ForConditionalGeneration"]'
        bad_case "--mmproj: a family without projector support" "$TMP/g3-other" \
            "--mmproj: Idefics3ForConditionalGeneration's projector is not supported" --mmproj
        mm_variant g3-patch '.vision_config.patch_size = 0'
        bad_case "--mmproj: vision_config.patch_size 0" "$TMP/g3-patch" \
            "config.json: vision_config.patch_size is not a whole number from 1" --mmproj
        mm_variant g3-width '.vision_config.hidden_size = 48'
        bad_case "--mmproj: a tower not of vision_config's width" "$TMP/g3-width" \
            "tensor 'v.patch_embd.weight' has shape \[14, 14, 3, 32\]; clip.vision.\* sizes say \[14, 14, 3, 48\]" --mmproj
        mm_variant g3-nopre '.'
        rm "$TMP/g3-nopre/preprocessor_config.json"
        bad_case "--mmproj: no preprocessor_config.json" "$TMP/g3-nopre" \
            "preprocessor_config.json: not found" --mmproj
        rm -rf "$TMP"/g3-other "$TMP"/g3-patch "$TMP"/g3-width "$TMP"/g3-nopre
    else
        skip_block "multimodal gemma3" "no checkpoint" 42
    fi
    rm -rf "$G3"
    fixture_block_end
fi

# Mistral Small 3.1 (Mistral3ForConditionalGeneration as
# mistralai/Mistral-Small-3.1-24B-Instruct-2503 is released; mkmm mistral3,
# a three-block Pixtral tower with the patch merger): its text model must be
# e21cdc11's (tests/data/mm/mistral3-mm-T.json: the release's special tokens
# from tokenizer_config.json over the SentencePiece vocabulary), and
# --mmproj must write e21cdc11's pixtral projector
# (tests/data/mm/mistral3-mmproj-T.json: the
# q/k rotary permute, the [IMG_BREAK] row of the text embedding as
# v.token_embd.img_break, spatial_merge_size), which --check accepts; with
# the image tokens in tokenizer.json instead (mkmm mistral3-tokjson) the same
# file; --check names a merger not of spatial_merge_size; --mmproj names a
# checkpoint without [IMG_BREAK], a tower not pixtral, an activation it
# cannot write.
if need_jq "multimodal mistral3" &&
    need_fixture models/mistral3-rand "multimodal mistral3: text model and pixtral projector" 44; then
    M3=$TMP/mistral3-mm
    if mm_checkpoint mistral3 mistral3 mistral3 "$M3"; then
        P=$TMP/mistral3-mmproj.gguf
        projector_fault "a pixtral merger not spatial_merge_size² patches wide" "$P" \
            "tensor 'mm.patch_merger.weight' has shape [128, 32]; clip.vision.* sizes say [288, 32]" \
            --set clip.vision.spatial_merge_size:u32=3
        projector_fault "a pixtral merger without spatial_merge_size (one patch wide)" "$P" \
            "tensor 'mm.patch_merger.weight' has shape [128, 32]; clip.vision.* sizes say [32, 32]" \
            --delete clip.vision.spatial_merge_size
        rm -f "$P"
        rm -rf "${TMP:?}/m3tj"
        if "$MKMM" mistral3-tokjson "$FIX/models/mistral3-rand" "$TMP/m3tj" >"$TMP/c.log" 2>&1; then
            pass "multimodal mistral3-tokjson: mkmm makes the checkpoint"
            CONVERT_INPUT=$TMP/m3tj KEY_ORDER=1 convert_manifest "$ROOT/tests/data/mm/mistral3-mmproj-f16.json" --mmproj
        else
            fail "multimodal mistral3-tokjson: mkmm" "$(tail -1 "$TMP/c.log")"
            skip_block "multimodal mistral3-tokjson" "no checkpoint" 4
        fi
        rm -rf "${TMP:?}/m3tj"
        mm_variant m3-nobreak '.' "$M3"
        rm "$TMP/m3-nobreak/tokenizer_config.json"
        cp "$FIX/models/mistral3-rand/tokenizer_config.json" "$TMP/m3-nobreak/"
        bad_case "--mmproj: mistral3 without an [IMG_BREAK] token" "$TMP/m3-nobreak" \
            "neither tokenizer_config.json (added_tokens_decoder) nor tokenizer.json (added_tokens) has the \[IMG_BREAK\] token" --mmproj
        mm_variant m3-siglip '.vision_config.model_type = "siglip_vision_model"' "$M3"
        bad_case "--mmproj: mistral3 with a tower not pixtral" "$TMP/m3-siglip" \
            'config.json: vision_config.model_type is "siglip_vision_model", not "pixtral"' --mmproj
        mm_variant m3-relu '.vision_config.hidden_act = "relu"' "$M3"
        bad_case "--mmproj: mistral3's tower with hidden_act relu" "$TMP/m3-relu" \
            'config.json: vision_config.hidden_act is relu, not "silu" or "gelu"' --mmproj
        rm -rf "$TMP"/m3-nobreak "$TMP"/m3-siglip "$TMP"/m3-relu
    else
        skip_block "multimodal mistral3" "no checkpoint" 43
    fi
    rm -rf "$M3"
    fixture_block_end
fi
if need_fixture models/mistral3-rand "--mmproj: mistral3-rand's stub tower refused"; then
    bad_case "--mmproj: mistral3-rand (a stub tower, no [IMG_BREAK] token)" "$FIX/models/mistral3-rand" \
        "has the \[IMG_BREAK\] token, whose row of the text embedding the projector needs" --mmproj
fi

# Inputs that are something else users mistake for them: a Git LFS pointer
# (a clone without LFS) as the weights or the tokenizer, an HTML page (a
# failed download) as config.json — named as such, not as a parse error.
LFS_PTR='version https://git-lfs.github.com/spec/v1
oid sha256:4d7c1d3d2e8a0a5c1b1e4f0e6f3b5a1c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4
size 4683073248'
FOREIGN=$TMP/foreign
if "$BIN/tests/tools/mkhf" "$FOREIGN" --dim 64 --layers 1 --ffn 128 --heads 2 --kv-heads 1 --vocab 400 >/dev/null 2>&1; then
    LFS_SAYS="a Git LFS pointer to a file of 4683073248 bytes: the repository was cloned without Git LFS (run 'git lfs pull' in it"
    mv "$FOREIGN/model.safetensors" "$TMP/foreign.st"
    printf '%s\n' "$LFS_PTR" > "$FOREIGN/model.safetensors"
    bad_case "model.safetensors a Git LFS pointer" "$FOREIGN" "model.safetensors: not a safetensors file but $LFS_SAYS"
    mv "$TMP/foreign.st" "$FOREIGN/model.safetensors"
    cp "$FOREIGN/config.json" "$TMP/foreign.cfg"
    printf '<!DOCTYPE html>\n<html><body>401</body></html>\n' > "$FOREIGN/config.json"
    bad_case "config.json an HTML page" "$FOREIGN" "config.json: not JSON but an HTML page: the download returned a web page"
    mv "$TMP/foreign.cfg" "$FOREIGN/config.json"
    tok=$(cd "$FOREIGN" && ls tokenizer.model tokenizer.json 2>/dev/null | head -1)
    printf '%s\n' "$LFS_PTR" > "$FOREIGN/$tok"
    bad_case "$tok a Git LFS pointer" "$FOREIGN" "$tok: not .* but $LFS_SAYS"
else
    skip_block "foreign inputs" "mkhf failed" 3
fi

# Chat templates from every place a folder ships them, as gguf-py e21cdc11
# reads them (each case's keys were compared with convert_hf_to_gguf.py's on
# the same files): chat_template.jinja (newlines as Python reads text),
# named ones beside it, chat_template.json (a list), tokenizer_config.json's
# (a list; null wins over the .jinja; a string wins too), none without a
# tokenizer_config.json. Keys as "KEY=VALUE;" in file order.
CT=$TMP/ct
if need_jq "chat templates" && "$BIN/tests/tools/mkhf" "$CT" --dim 64 --layers 1 --ffn 128 --heads 2 \
        --kv-heads 1 --vocab 400 >/dev/null 2>&1; then
    cp "$CT/tokenizer_config.json" "$TMP/ct-tc.json"
    ct_case() { # name want: converts $CT, compares its tokenizer.chat_template* keys
        local got
        got=$("$CONVERT" -q "$CT" --outtype f32 -o "$TMP/ct.gguf" >"$TMP/ct.log" 2>&1 &&
              "$INSPECT" --json --full "$TMP/ct.gguf" | jq -j '.metadata | to_entries[] |
                  select(.key | startswith("tokenizer.chat_template")) |
                  "\(.key)=\(.value.value | if type == "array" then join(",") else . end);"')
        if [ "$got" = "$2" ]; then pass "chat templates: $1"; else fail "chat templates: $1" "got '$got' $(tail -1 "$TMP/ct.log")"; fi
        rm -f "$TMP/ct.gguf"
    }
    printf '{{ bos }}A\r\nB\rC\n' > "$CT/chat_template.jinja"
    ct_case "chat_template.jinja" $'tokenizer.chat_template={{ bos }}A\nB\nC\n;'
    mkdir "$CT/additional_chat_templates"
    printf 'tools\n' > "$CT/additional_chat_templates/tool_use.jinja"
    printf 'rag\n' > "$CT/additional_chat_templates/rag-v2.jinja"
    printf 'main\n' > "$CT/chat_template.jinja"
    ct_case "additional_chat_templates (by name)" $'tokenizer.chat_template.rag_v2=rag\n;tokenizer.chat_template.tool_use=tools\n;tokenizer.chat_templates=rag_v2,tool_use;tokenizer.chat_template=main\n;'
    rm -r "$CT/additional_chat_templates" "$CT/chat_template.jinja"
    printf '{"chat_template": [{"name": "default", "template": "D"}, {"name": "tool use", "template": "T"}, {"name": "x", "template": null}, {"template": "no name"}]}' > "$CT/chat_template.json"
    ct_case "chat_template.json's list" "tokenizer.chat_template.tool_use=T;tokenizer.chat_templates=tool_use;tokenizer.chat_template=D;"
    rm "$CT/chat_template.json"
    jq -c '.chat_template = [{"name": "rag", "template": "R"}, {"name": "default", "template": "DD"}]' "$TMP/ct-tc.json" > "$CT/tokenizer_config.json"
    ct_case "tokenizer_config.json's list" "tokenizer.chat_template.rag=R;tokenizer.chat_templates=rag;tokenizer.chat_template=DD;"
    printf 'J\n' > "$CT/chat_template.jinja"
    jq -c '.chat_template = null' "$TMP/ct-tc.json" > "$CT/tokenizer_config.json"
    ct_case "tokenizer_config.json's null over the .jinja" ""
    jq -c '.chat_template = "TC"' "$TMP/ct-tc.json" > "$CT/tokenizer_config.json"
    ct_case "tokenizer_config.json's string over the .jinja" "tokenizer.chat_template=TC;"
    jq -c '.chat_template = 5' "$TMP/ct-tc.json" > "$CT/tokenizer_config.json"
    bad_case "chat_template a number" "$CT" "tokenizer_config.json: chat_template is neither a string nor a list of named templates"
    cp "$TMP/ct-tc.json" "$CT/tokenizer_config.json"
    printf '\xff\xfe' > "$CT/chat_template.jinja"
    bad_case "chat_template.jinja not UTF-8" "$CT" "chat_template.jinja: not UTF-8 text"
else
    skip_block "chat templates" "jq or mkhf missing" 8
fi

# Phi-3's own converter rules (llama.cpp's Phi3MiniModel), on copies of
# phi3-rand in a folder whose name makes general.name "Phi3-x"
if need_jq "phi3 converter rules" && need_fixture models/phi3-rand "phi3 converter rules" 2; then
    P3=$TMP/phi3-x
    mkp3() { rm -rf "$P3"; cp -r "$FIX/models/phi3-rand" "$P3"; chmod -R u+w "$P3"; }
    # an added token that is not special is user-defined, however special it looks
    mkp3; jq '.added_tokens_decoder["513"].special = false' "$FIX/models/phi3-rand/tokenizer_config.json" \
        >"$P3/tokenizer_config.json"
    got=$("$CONVERT" -q "$P3" --outtype f16 -o "$TMP/p3.gguf" 2>&1 &&
          "$INSPECT" --vocab --json "$TMP/p3.gguf" | jq -r '.tokens[513] | "\(.type) \(.text)"')
    [ "$got" = "user_defined <|assistant|>" ] && pass "phi3: a non-special added token is user-defined" ||
        fail "phi3: a non-special added token is user-defined" "$got"
    rm -f "$TMP/p3.gguf"
    # llama.cpp refuses a model named phi3 without <|endoftext|>
    mkp3; sed -i 's/<|endoftext|>/<|eot|>/' "$P3/added_tokens.json" "$P3/tokenizer_config.json"
    bad_case "phi3 without <|endoftext|>" "$P3" "Phi-3's, which needs the token <|endoftext|>"
    rm -rf "$P3"
    fixture_block_end
fi
# Phi-3 LongRoPE (Phi3MiniModel.generate_extra_tensors): the long and short
# factors as F32 tensors ahead of every other (in every outtype), and
# rope.scaling.attn_factor = sqrt(1 + ln(8192/2048) / ln 2048) = sqrt(13/11)
# right after general.architecture, where llama.cpp's converter adds it
# while it makes those tensors. gguf-run's greedy ids on these copies are
# checked against llama.cpp's in run.sh.
if need_jq "phi3 LongRoPE" && need_fixture models/phi3-rand "phi3 LongRoPE" 9; then
    P3=$TMP/phi3-lr
    for t in f32 f16 q8_0; do
        got=$(phi3_longrope "$P3" 0.75 && "$CONVERT" -q "$P3" --outtype $t -o "$TMP/lr.gguf" 2>&1 &&
              "$INSPECT" --json "$TMP/lr.gguf" |
              jq -r '[(.metadata | keys_unsorted[0:3] | join(" ")),
                      (.metadata["phi3.rope.scaling.attn_factor"].value - 1.0871146 | fabs < 1e-7),
                      (.tensors[0:2][] | "\(.name) \(.type) \(.shape | join(","))")] | join("; ")')
        want="general.architecture phi3.rope.scaling.attn_factor general.type; true; rope_factors_long.weight f32 12; rope_factors_short.weight f32 12"
        [ "$got" = "$want" ] && pass "phi3 LongRoPE $t: factor tensors first in F32, attn_factor second" ||
            fail "phi3 LongRoPE $t" "got [$got] want [$want]"
    done
    # the factors are the config's numbers rounded to f32, in order (the
    # hashes of struct.pack('<12f', *factors))
    got=$("$INSPECT" --hash "$TMP/lr.gguf" 2>&1 | grep rope_factors | tr -s ' \n' ' ')
    want="fab7c5a44e319f57bd24944bff5e750687d0203ad8863570ee4184e96ad1ded3 rope_factors_long.weight "
    want+="3170b451b3f643279ff4624ce8af9c066ebdb57b1295f388c35fe289e73ae0af rope_factors_short.weight "
    [ "$got" = "$want" ] && pass "phi3 LongRoPE: the factors are config.json's, rounded to f32" ||
        fail "phi3 LongRoPE: factor values" "got [$got]"
    rm -f "$TMP/lr.gguf"
    lr_bad() { # name jq-filter expected
        phi3_longrope "$P3" 0.75 && jq "$2" "$P3/config.json" >"$P3/c" && mv "$P3/c" "$P3/config.json"
        bad_case "phi3 LongRoPE: $1" "$P3" "$3"
    }
    lr_bad "factors for another rotary width" '.partial_rotary_factor = 1' \
        "rope_scaling.long_factor has 12 factors; the rotary part of a head (32) needs 16"
    lr_bad "no short factors" 'del(.rope_scaling.short_factor)' "rope_scaling.short_factor is missing or not a list"
    lr_bad "a factor that is not a number" '.rope_scaling.long_factor[3] = "x"' \
        "rope_scaling.long_factor\[3\] is not a finite number"
    lr_bad "an unknown type" '.rope_scaling.type = "dynamic"' \
        "rope_scaling type \"dynamic\" of a phi3 model is not supported"
    lr_bad "no type" 'del(.rope_scaling.type)' "rope_scaling has no type"
    rm -rf "$P3"
    fixture_block_end
fi
# Mistral3ForConditionalGeneration: Mistral Small's text model (model_type
# "mistral") converts; Ministral 3's ("ministral3": YaRN and attention
# temperature keys upstream writes) is refused by name, not written wrong.
if need_jq "mistral3 text model types" && need_fixture models/mistral3-rand "mistral3 text model types" 1; then
    M3=$TMP/mi3; rm -rf "$M3"; mkdir -p "$M3"
    cp "$FIX/models/mistral3-rand/"* "$M3/"
    jq '.text_config.model_type = "ministral3"' "$FIX/models/mistral3-rand/config.json" >"$M3/config.json"
    bad_case "Ministral 3's text model" "$M3" \
        'Mistral3ForConditionalGeneration with a text model_type "ministral3" is not supported (supported: mistral)' --outtype f32
    rm -rf "$M3"
    fixture_block_end
fi
# rope scaling as e21cdc11's base converter writes it for every family
# (real Gemma 3 4B+ configs carry a linear factor of 8), read from
# rope_scaling or rope_parameters; and gguf-run runs the result.
if need_jq "rope scaling keys" && need_fixture models/gemma3-rand "rope scaling keys" 5; then
    RS=$TMP/rs RUN=$BIN/gguf-run
    rs_case() { # name family jq-filter expected-keys
        rm -rf "$RS"; cp -r "$FIX/models/$2" "$RS"; chmod -R u+w "$RS"
        jq "$3" "$FIX/models/$2/config.json" >"$RS/config.json"
        local got
        got=$("$CONVERT" -q "$RS" --outtype f32 -o "$TMP/rs.gguf" 2>&1 &&
              "$INSPECT" --json "$TMP/rs.gguf" |
              jq -r '[.metadata | to_entries[] | select(.key | test("rope\\.scaling")) | "\(.key | sub("^[^.]+\\."; ""))=\(.value.value)"] | join(" ")') &&
        "$RUN" -m "$TMP/rs.gguf" --prompt-ids 1,5,6 -n 2 --ids >/dev/null 2>"$TMP/rs.err" || got="$got; run: $(tail -1 "$TMP/rs.err")"
        [ "$got" = "$4" ] && pass "rope scaling: $1" || fail "rope scaling: $1" "got [$got] want [$4]"
        rm -f "$TMP/rs.gguf"
    }
    rs_case "gemma3 linear (rope_type)" gemma3-rand '.rope_scaling = {"rope_type": "linear", "factor": 8.0}' \
        "rope.scaling.type=linear rope.scaling.factor=8"
    rs_case "gemma3 linear (rope_parameters)" gemma3-rand '.rope_parameters = {"rope_type": "linear", "factor": 4.0}' \
        "rope.scaling.type=linear rope.scaling.factor=4"
    rs_case "qwen3 yarn" qwen3-rand '.rope_scaling = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}' \
        "rope.scaling.type=yarn rope.scaling.factor=4 rope.scaling.original_context_length=32768"
    rs_case "qwen3 without a factor: nothing" qwen3-rand '.rope_scaling = {"rope_type": "linear"}' ""
    rm -rf "$RS"; cp -r "$FIX/models/qwen3-rand" "$RS"; chmod -R u+w "$RS"
    jq '.rope_scaling = {"rope_type": "linear", "factor": "eight"}' "$FIX/models/qwen3-rand/config.json" >"$RS/config.json"
    bad_case "rope_scaling.factor not a number" "$RS" "rope_scaling.factor is not a positive number"
    rm -rf "$RS"
    fixture_block_end
fi
# Gemma's converter rules (llama.cpp's Gemma2Model / Gemma3Model), on copies
# of gemma2-rand and gemma3-rand with config.json edited
if need_jq "gemma converter rules" && need_fixture models/gemma3-rand "gemma converter rules" 4; then
    G=$TMP/gemma-x
    mkg() { rm -rf "$G"; cp -r "$FIX/models/$1" "$G"; chmod -R u+w "$G"; jq "$2" "$FIX/models/$1/config.json" >"$G/config.json"; }
    # Gemma 3's defaults for what config.json leaves out; no sliding window
    # when every layer is global (pattern 1); a null soft-cap is none
    mkg gemma3-rand 'del(.max_position_embeddings) | .sliding_window_pattern = 1 | .final_logit_softcapping = null'
    got=$("$CONVERT" -q "$G" --outtype f32 -o "$TMP/g.gguf" 2>&1 &&
          "$INSPECT" --json "$TMP/g.gguf" | jq -r '.metadata | "\(.["gemma3.context_length"].value) \(has("gemma3.attention.sliding_window")) \(has("gemma3.final_logit_softcapping"))"')
    [ "$got" = "131072 false false" ] &&
        pass "gemma3: default context length, no sliding window at pattern 1, no null soft-cap" ||
        fail "gemma3: defaults and conditional keys" "$got"
    rm -f "$TMP/g.gguf"
    mkg gemma3-rand '.final_logit_softcapping = 30'
    got=$("$CONVERT" -q "$G" --outtype f32 -o "$TMP/g.gguf" 2>&1 &&
          "$INSPECT" --json "$TMP/g.gguf" | jq -r '.metadata["gemma3.final_logit_softcapping"].value')
    [ "$got" = "30" ] && pass "gemma3: a final soft-cap is written after general.file_type" ||
        fail "gemma3: a final soft-cap is written" "$got"
    rm -f "$TMP/g.gguf"
    mkg gemma2-rand 'del(.attn_logit_softcapping)'
    bad_case "gemma2 without attn_logit_softcapping" "$G" "config.json: required 'attn_logit_softcapping' is missing"
    mkg gemma3-rand 'del(.sliding_window)'
    bad_case "gemma3 without sliding_window" "$G" "config.json: required 'sliding_window' is missing"
    rm -rf "$G"
    fixture_block_end
fi
# Gemma 4's converter rules (llama.cpp's Gemma4Model), on copies of
# gemma4-rand with config.json's text_config or the checkpoint edited
if need_jq "gemma4 converter rules" && need_fixture models/gemma4-rand "gemma4 converter rules" 4; then
    G=$TMP/g4x/gemma4-rand # general.name from the folder: gemma4-rand's
    mkdir -p "$TMP/g4x"
    mkg4() { rm -rf "$G"; cp -r "$FIX/models/gemma4-rand" "$G"; chmod -R u+w "$G"; jq "$1" "$FIX/models/gemma4-rand/config.json" >"$G/config.json"; }
    g4keys() { # the listed gemma4.* keys of a conversion of $G: "TYPE VALUE" each
        "$CONVERT" -q "$G" --outtype f32 -o "$TMP/g4.gguf" 2>&1 &&
        "$INSPECT" --json "$TMP/g4.gguf" | jq -r --arg ks "$1" \
            '.metadata as $m | [$ks | split(" ")[] | "gemma4." + . | $m[.] | "\(.type)=\(.value // .count)"] | join(" ")'
        rm -f "$TMP/g4.gguf"
    }
    # feed_forward_length one width per block (double-wide in the shared
    # ones); the sliding layers' rotary width follows a top-level
    # partial_rotary_factor, the full layers' is their head size
    mkg4 '.text_config.partial_rotary_factor = 0.5'
    got=$(g4keys "feed_forward_length rope.dimension_count_swa rope.dimension_count")
    [ "$got" = "arr[i32]=[128,128,128,256,256,256] u32=16 u32=64" ] &&
        pass "gemma4: feed_forward_length per block; rope.dimension_count_swa from partial_rotary_factor" ||
        fail "gemma4: feed_forward_length and rope.dimension_count_swa" "$got"
    # the vision and audio towers (names without language_model.) are dropped:
    # the same file as the checkpoint without them
    mkg4 '.'
    st_rewrite "$FIX/models/gemma4-rand/model.safetensors" "$G/model.safetensors" \
        '. + {"model.vision_tower.encoder.layers.0.mlp.w": {"dtype": "BF16", "shape": [2, 16], "data_offsets": [$dend, ($dend + 64)]},
              "model.audio_tower.layers.0.w": {"dtype": "BF16", "shape": [2, 16], "data_offsets": [$dend, ($dend + 64)]},
              "model.embed_vision.embedding_projection.weight": {"dtype": "BF16", "shape": [2, 16], "data_offsets": [$dend, ($dend + 64)]}}'
    if "$CONVERT" -q "$G" --outtype f16 -o "$TMP/g4a.gguf" >"$TMP/c.log" 2>&1 &&
       "$CONVERT" -q "$FIX/models/gemma4-rand" --outtype f16 -o "$TMP/g4b.gguf" >>"$TMP/c.log" 2>&1 &&
       cmp -s "$TMP/g4a.gguf" "$TMP/g4b.gguf"; then
        pass "gemma4: vision and audio tensors dropped, the text model's file unchanged"
    else
        fail "gemma4: vision and audio tensors dropped" "$(tail -1 "$TMP/c.log")"
    fi
    rm -f "$TMP/g4a.gguf" "$TMP/g4b.gguf"
    mkg4 '.text_config.rope_parameters.full_attention.rope_type = "default"'
    bad_case "gemma4: full layers' rope not proportional" "$G" 'rope_type is not "proportional"'
    mkg4 '.text_config.layer_types[4] = "chunked_attention"'
    bad_case "gemma4: an unknown layer type" "$G" 'layer_types\[4\] is "chunked_attention"'
    rm -rf "$G"
    fixture_block_end
fi
# Gemma3ForConditionalGeneration (Gemma 3 4B-27B as released): the text
# model's hyperparameters in text_config (read over the top level's), its
# tensors under language_model. (transformers < 4.52) or
# model.language_model. (newer), beside a vision tower and projector that
# are dropped — llama.cpp fails on the newer layout's model.vision_tower.*,
# gguf-convert drops those too. Copies of gemma3-rand so laid out must give
# what gemma3-rand gives: the e21cdc11 manifest, the very file, the same
# greedy ids (each copy sits in a folder of that name, for general.name).
if need_jq "Gemma 3 multimodal" &&
    need_fixture upstream/convert/gemma3-rand-f16.json "Gemma 3 multimodal" 14; then
    SRC=$FIX/models/gemma3-rand M3=$FIX/upstream/convert/gemma3-rand-f16.json RUN=$BIN/gguf-run
    "$CONVERT" -q "$SRC" --outtype f16 -o "$TMP/g3.gguf" >"$TMP/c.log" 2>&1
    greedy() { "$RUN" -m "$1" --prompt-ids 1,5,6 -n 8 --ids 2>/dev/null; }
    want_ids=$(greedy "$TMP/g3.gguf")
    VISION='{"dtype": "F32", "shape": [12], "data_offsets": [$dend, ($dend + 48)]}'
    PROJ='{"dtype": "F32", "shape": [2, 2], "data_offsets": [($dend + 48), ($dend + 64)]}'
    # cg_make DIR SRC NAME-FILTER VISION-PREFIX TEXT-CONFIG [TOP-FIELDS]: DIR
    # a multimodal copy of the folder SRC — text_config TEXT-CONFIG (a jq
    # expression over SRC's config.json), every tensor renamed by
    # NAME-FILTER, a vision tower and a projector tensor under VISION-PREFIX
    cg_make() {
        local top=${6:-"{}"}
        rm -rf "$1"; mkdir -p "$1"; cp "$2"/tokenizer* "$1"/
        jq "{architectures: [\"Gemma3ForConditionalGeneration\"], model_type: \"gemma3\"} + $top +
            {text_config: ($5), vision_config: {model_type: \"siglip_vision_model\", hidden_size: 1152}}" \
            "$2/config.json" >"$1/config.json" &&
        st_rewrite "$2/model.safetensors" "$1/model.safetensors" \
            "with_entries(if .key == \"__metadata__\" then . else .key |= ($3) end) +
             {\"$4vision_tower.vision_model.post_layernorm.weight\": $VISION,
              \"$4multi_modal_projector.mm_input_projection_weight\": $PROJ}"
    }
    AS_TEXT='del(.architectures) | .model_type = "gemma3_text"'
    cg_convert() { # dir config-filter-on-the-copy -> $TMP/cg.gguf
        if [ -n "${2:-}" ]; then jq "$2" "$1/config.json" >"$1/c.json" && mv "$1/c.json" "$1/config.json"; fi
        "$CONVERT" -q "$1" --outtype f16 -o "$TMP/cg.gguf" >"$TMP/c.log" 2>&1
    }
    cg_layout() { # name name-filter vision-prefix
        local d=$TMP/cg/gemma3-rand n="Gemma 3 multimodal, $1" got
        rm -f "$TMP/cg.gguf"
        if ! cg_make "$d" "$SRC" "$2" "$3" "$AS_TEXT" >"$TMP/c.log" 2>&1 || ! cg_convert "$d"; then
            fail "$n" "$(tail -1 "$TMP/c.log")"; return
        fi
        got=$(diff <(manifest_tensors "$M3") <(gguf_tensors "$TMP/cg.gguf")
              diff <(manifest_keys "$M3" | awk '$2 == "f32" { $3 = sprintf("%.7g", $3) } 1') \
                   <(gguf_keys "$TMP/cg.gguf" | awk '$2 == "f32" { $3 = sprintf("%.7g", $3) } 1')
              diff <(jq -r '.metadata | keys_unsorted[]' "$M3") \
                   <("$INSPECT" --json "$TMP/cg.gguf" | jq -r '.metadata | keys_unsorted[]'))
        [ -z "$got" ] && pass "$n: the gemma3-rand-f16 manifest's tensors, keys and key order" ||
            fail "$n: manifest" "$(head -4 <<<"$got" | tr '\n' ' ')"
        check "$n: byte for byte gemma3-rand's file" cmp "$TMP/g3.gguf" "$TMP/cg.gguf"
        got=$(greedy "$TMP/cg.gguf")
        [ -n "$want_ids" ] && [ "$got" = "$want_ids" ] && pass "$n: gguf-run's greedy ids are gemma3-rand's" ||
            fail "$n: greedy ids" "got [$got] want [$want_ids]"
        rm -rf "$TMP/cg" "$TMP/cg.gguf"
    }
    cg_layout "language_model.* beside vision_tower.*" '"language_model." + .' ""
    cg_layout "model.language_model.* beside model.vision_tower.*" \
        'sub("^model[.]"; "model.language_model.")' "model."
    cg_keys() { # name config-filter-on-the-copy metadata-jq want
        local d=$TMP/cg/gemma3-rand got
        got=$(cg_make "$d" "$SRC" '"language_model." + .' "" "$AS_TEXT" 2>&1 && cg_convert "$d" "$2" &&
              "$INSPECT" --json "$TMP/cg.gguf" | jq -r "[.metadata | $3] | map(tostring) | join(\" \")" ||
              tail -1 "$TMP/c.log")
        [ "$got" = "$4" ] && pass "Gemma 3 multimodal: $1" || fail "Gemma 3 multimodal: $1" "got [$got] want [$4]"
        rm -rf "$TMP/cg" "$TMP/cg.gguf"
    }
    # text_config's value wins over the top level's
    cg_keys "text_config over the top level" '.hidden_size = 999' \
        '.["gemma3.embedding_length"].value' "128"
    # SpecialVocab reads config.json's top level first, text_config's only
    # when that has nothing: a list there (Gemma 3's eos [1, 106]) is no id
    cg_keys "special ids: the top level's, not looked past a list" '.eos_token_id = [1, 106] | .bos_token_id = 5' \
        '.["tokenizer.ggml.bos_token_id"].value, .["tokenizer.ggml.eos_token_id"].value' "5 null"
    # get_model_architecture: text_config's class when it names one
    cg_keys "text_config's architectures first" \
        '.architectures = ["Gemma3ForConditionalGenerationX"] | .text_config.architectures = ["Gemma3ForCausalLM"]' \
        '.["general.architecture"].value' "gemma3"
    # gemma-3-4b-it's text_config as released gives only the widths, the
    # depth, rope scaling and the window: Gemma3Model writes its defaults
    # for the rest (context 131072, 8 heads, 4 kv heads, head size 256,
    # eps 1e-6, rope base 1e6) after general.file_type, where a key the base
    # converter did not write lands. A checkpoint of those shapes (mkhf)
    # as such a copy must convert to those keys in that order and run as the
    # same model with every value spelt out as Gemma3ForCausalLM.
    MKHF=$BIN/tests/tools/mkhf D=$TMP/cgd
    rm -rf "$D"; mkdir -p "$D"
    if [ -x "$MKHF" ] && "$MKHF" "$D/full" --family gemma3 --dim 64 --layers 6 --ffn 128 --heads 8 \
            --kv-heads 4 --head-dim 256 --vocab 512 --tokenizer "$SRC/tokenizer.model" >"$TMP/c.log" 2>&1; then
        RS='{factor: 8.0, rope_type: "linear"}'
        jq "del(.rope_local_base_freq) | .max_position_embeddings = 131072 | .rope_scaling = $RS" \
            "$D/full/config.json" >"$D/c.json" && mv "$D/c.json" "$D/full/config.json"
        cg_make "$D/cg" "$D/full" '"language_model." + .' "" \
            "{hidden_size, intermediate_size, model_type: \"gemma3_text\", num_hidden_layers,
              rope_scaling: $RS, sliding_window}" '{bos_token_id, eos_token_id, pad_token_id}' >"$TMP/c.log" 2>&1
        got=$(cg_convert "$D/cg" && "$INSPECT" --json "$TMP/cg.gguf" |
              jq -r '[.metadata | to_entries[] | select(.key | startswith("tokenizer.") | not) |
                      if (.key | startswith("gemma3.")) then "\(.key[7:])=\(.value.value)" else .key end] | join(" ")' ||
              tail -1 "$TMP/c.log")
        want="general.architecture general.type general.name general.size_label block_count=6"
        want+=" embedding_length=64 feed_forward_length=128 rope.scaling.type=linear rope.scaling.factor=8"
        want+=" general.file_type context_length=131072 attention.head_count=8"
        want+=" attention.layer_norm_rms_epsilon=1e-06 attention.key_length=256 attention.value_length=256"
        want+=" rope.freq_base=1000000 attention.sliding_window=512 attention.head_count_kv=4"
        want+=" general.quantization_version"
        [ "$got" = "$want" ] && pass "Gemma 3 multimodal: gemma-3-4b-it's text_config: Gemma3Model's defaults, in its order" ||
            fail "Gemma 3 multimodal: defaults" "got [$got] want [$want]"
        got=$("$CONVERT" -q "$D/full" --outtype f16 -o "$TMP/full.gguf" 2>&1 &&
              diff <(gguf_keys "$TMP/full.gguf") <(gguf_keys "$TMP/cg.gguf") &&
              diff <(gguf_tensors "$TMP/full.gguf") <(gguf_tensors "$TMP/cg.gguf") &&
              want_ids=$(greedy "$TMP/full.gguf") && [ -n "$want_ids" ] &&
              [ "$(greedy "$TMP/cg.gguf")" = "$want_ids" ] && echo same)
        [ "$got" = same ] && pass "Gemma 3 multimodal: with the defaults, the keys, tensors and greedy ids of the spelt-out model" ||
            fail "Gemma 3 multimodal: defaults against the spelt-out model" "$(head -4 <<<"$got" | tr '\n' ' ')"
    else
        fail "Gemma 3 multimodal: mkhf" "$(tail -1 "$TMP/c.log")"
        fail "Gemma 3 multimodal: mkhf" "(the defaults' second check)"
    fi
    rm -rf "$D" "$TMP/cg.gguf" "$TMP/full.gguf" "$TMP/g3.gguf"
    # refusals name config.json: a text_config without the widths, or none
    G=$TMP/cg/gemma3-rand
    cg_make "$G" "$SRC" '"language_model." + .' "" "$AS_TEXT | del(.hidden_size)" >/dev/null 2>&1
    bad_case "Gemma 3 multimodal, text_config without hidden_size" "$G" \
        "config.json: required 'hidden_size' is missing"
    cg_make "$G" "$SRC" '"language_model." + .' "" "$AS_TEXT | del(.intermediate_size)" >/dev/null 2>&1
    bad_case "Gemma 3 multimodal, text_config without intermediate_size" "$G" \
        "config.json: required 'intermediate_size' is missing"
    cg_make "$G" "$SRC" '"language_model." + .' "" '"gemma3"' >/dev/null 2>&1
    bad_case "Gemma 3 multimodal without a text_config object" "$G" "config.json line [0-9]*: 'text_config' is not an object"
    rm -rf "$TMP/cg"
    fixture_block_end
fi
if need_fixture models/wp-llama-5m/hf "bad inputs" 19; then
    SRC=$FIX/models/wp-llama-5m/hf
    mk() { rm -rf "$TMP/m"; mkdir -p "$TMP/m"; cp "$SRC"/config.json "$SRC"/tokenizer.model "$SRC"/tokenizer_config.json "$TMP/m"/; }
    mk; head -c 100000 "$SRC/model.safetensors" >"$TMP/m/model.safetensors"
    bad_case "truncated safetensors" "$TMP/m" "model.safetensors: tensor"
    mk; printf '\xff\xff\xff\x00\x00\x00\x00\x00{}' >"$TMP/m/model.safetensors"
    bad_case "header length past the end" "$TMP/m" "header length"
    mk; cp "$SRC/model.safetensors" "$TMP/m/model-00001-of-00002.safetensors"
    printf '{"weight_map": {"lm_head.weight": "model-00002-of-00002.safetensors", "model.norm.weight": "model-00001-of-00002.safetensors", "extra.weight": "model-00002-of-00002.safetensors"}}' >"$TMP/m/model.safetensors.index.json"
    bad_case "index naming a missing shard" "$TMP/m" "which is missing"
    mk; python_free_header='{"model.norm.weight":{"dtype":"Q4","shape":[2],"data_offsets":[0,2]}}'
    { printf "\\x$(printf %02x ${#python_free_header})\\x00\\x00\\x00\\x00\\x00\\x00\\x00"; printf '%s' "$python_free_header"; printf 'xx'; } >"$TMP/m/model.safetensors"
    bad_case "unknown dtype" "$TMP/m" "unknown dtype 'Q4'"
    mk; cp "$SRC/model.safetensors" "$TMP/m/"; jq 'del(.num_attention_heads)' "$SRC/config.json" >"$TMP/m/config.json"
    bad_case "config without required hparams" "$TMP/m" "num_attention_heads"
    # counts that are not counts were all reported as "missing" (issue 12)
    for v in '0:is 0, out of range (1 to 100000)' '-4:is -4, out of range' \
             '1000000000:is 1000000000, out of range' '"4":is a string \"4\", not a whole number'; do
        mk; cp "$SRC/model.safetensors" "$TMP/m/"
        jq ".num_hidden_layers = ${v%%:*}" "$SRC/config.json" >"$TMP/m/config.json"
        bad_case "layer count ${v%%:*}" "$TMP/m" "'num_hidden_layers' ${v#*:}"
    done
    # models gguf-run would refuse are never written: the shared validator
    # (gguf/modelcheck.h) runs on the model before any byte is written
    for v in '.hidden_size = 0:llama.embedding_length = 0, expected 1..' \
             '.max_position_embeddings = 0:llama.context_length = 0, expected 1..' \
             '.num_hidden_layers = 3:tensor blk.3.attn_norm.weight: block 3 is beyond llama.block_count = 3'; do
        mk; cp "$SRC/model.safetensors" "$TMP/m/"
        jq "${v%%:*}" "$SRC/config.json" >"$TMP/m/config.json"
        bad_case "invalid model (${v%%:*})" "$TMP/m" "the model would be invalid: ${v#*:}"
    done
    # a float of config.json out of its range is named there (not as the GGUF key)
    mk; cp "$SRC/model.safetensors" "$TMP/m/"; jq '.rms_norm_eps = 0' "$SRC/config.json" >"$TMP/m/config.json"
    bad_case "rms_norm_eps 0" "$TMP/m" "config.json line [0-9]*: 'rms_norm_eps' is 0, expected a finite number > 0"
    mk; cp "$SRC/model.safetensors" "$TMP/m/"; jq '.hidden_size = 2.5' "$SRC/config.json" >"$TMP/m/config.json"
    bad_case "fractional hidden_size" "$TMP/m" "'hidden_size' is a fractional number, not a whole number"
    bad_case "a missing input" "$TMP/no-such-dir" "no-such-dir: No such file or directory"
    mk; cp "$SRC/model.safetensors" "$TMP/m/"; jq '.architectures = ["GPT2LMHeadModel"]' "$SRC/config.json" >"$TMP/m/config.json"
    bad_case "unknown architecture lists the supported ones" "$TMP/m" "supported: LlamaForCausalLM"
    mk; cp "$SRC/model.safetensors" "$TMP/m/"; printf '{"architectures": [' >"$TMP/m/config.json"
    bad_case "malformed config.json" "$TMP/m" "config.json: line"
    mk; cp "$SRC/model.safetensors" "$TMP/m/"; head -c 1000 "$SRC/tokenizer.model" >"$TMP/m/tokenizer.model"
    bad_case "truncated tokenizer.model" "$TMP/m" "tokenizer.model: byte"
    bad_case "a JSON file as the checkpoint" "$SRC/config.json" "implausible llama2.c header"
    fixture_block_end
fi

# Experts that do not add up to the config's count: refused, naming them.
if need_fixture models/mixtral-rand "bad expert checkpoints" 2; then
    MX=$FIX/models/mixtral-rand
    mkx() { rm -rf "$TMP/x"; mkdir -p "$TMP/x"; cp "$MX"/* "$TMP/x"/; jq "$1" "$MX/config.json" >"$TMP/x/config.json"; }
    mkx '.num_local_experts = 5'
    bad_case "fewer experts than num_local_experts" "$TMP/x" "block 0 has 12 of its 15 expert tensors"
    mkx '.num_local_experts = 3'
    bad_case "an expert beyond num_local_experts" "$TMP/x" "expert 3 is beyond the 2 blocks and 3 experts"
    fixture_block_end
fi
# gpt-oss: MXFP4 scales whose _blocks tensor is missing (renamed in place)
if need_fixture models/gptoss-rand "bad MXFP4 experts" 1; then
    rm -rf "$TMP/x"; mkdir -p "$TMP/x"; cp "$FIX"/models/gptoss-rand/* "$TMP/x"/; chmod -R u+w "$TMP/x"
    LC_ALL=C sed -i 's/model\.layers\.0\.mlp\.experts\.down_proj_blocks/model.layers.0.mlp.experts.down_proj_blockx/' "$TMP/x/model.safetensors"
    bad_case "MXFP4 scales without their blocks" "$TMP/x" "down_proj_scales': expected U8 .* after its U8"
    fixture_block_end
fi
if need_fixture models/wp-llama-5m/torch "bad torch checkpoints" 4; then
    TSRC=$FIX/models/wp-llama-5m/torch
    rm -rf "$TMP/t"; cp -r "$TSRC" "$TMP/t"; chmod -R u+w "$TMP/t"
    # one byte of the first storage (data/0 starts at byte 4290) flipped
    printf '\x55' | dd of="$TMP/t/pytorch_model.bin" bs=1 seek=6000 conv=notrunc 2>/dev/null
    bad_case "zip with a bad CRC" "$TMP/t" "CRC mismatch"
    # (a pickle global off the whitelist: tests/unit/test_torch.c, which can
    # build an archive with a valid CRC around it)
    head -c 5000000 "$TSRC/pytorch_model.bin" >"$TMP/t/pytorch_model.bin"
    bad_case "truncated torch checkpoint" "$TMP/t" "not a zip archive"

    # The same archive with every entry deflated (torch.save stores them;
    # other zip writers compress). Their bytes live in the heap: the writer's
    # page release once zeroed live heap pages here, renamed a GGUF with 16
    # of 39 tensors wrong into place and then aborted (issue 12).
    rm -rf "$TMP/dfl"; mkdir -p "$TMP/dfl/torch"
    cp "$TSRC"/*.json "$TSRC/tokenizer.model" "$TMP/dfl/torch/"
    if python3 - "$TSRC/pytorch_model.bin" "$TMP/dfl/torch/pytorch_model.bin" <<'PY' 2>/dev/null
import sys, zipfile
src = zipfile.ZipFile(sys.argv[1])
with zipfile.ZipFile(sys.argv[2], "w", compression=zipfile.ZIP_DEFLATED) as dst:
    for e in src.infolist():
        dst.writestr(e.filename, src.read(e.filename), compress_type=zipfile.ZIP_DEFLATED)
PY
    then
        "$CONVERT" -q "$TSRC" --outtype bf16 -o "$TMP/dfl/stored.gguf" >/dev/null 2>&1
        if "$CONVERT" -q "$TMP/dfl/torch" --outtype bf16 -o "$TMP/dfl/deflated.gguf" >"$TMP/dfl/log" 2>&1 &&
           cmp -s "$TMP/dfl/stored.gguf" "$TMP/dfl/deflated.gguf"; then
            pass "deflated torch entries: the same GGUF as the stored archive"
        else
            fail "deflated torch entries: the same GGUF as the stored archive" "$(tail -1 "$TMP/dfl/log")"
        fi
        if [ -f "$REF/convert/wp-llama-5m-torch-bf16.json" ] && command -v jq >/dev/null; then
            manifest_tensors "$REF/convert/wp-llama-5m-torch-bf16.json" >"$TMP/dfl/want.t"
            gguf_tensors "$TMP/dfl/deflated.gguf" >"$TMP/dfl/got.t"
            if [ -s "$TMP/dfl/want.t" ] && cmp -s "$TMP/dfl/want.t" "$TMP/dfl/got.t"; then
                pass "deflated torch entries: llama.cpp's tensors (wp-llama-5m-torch-bf16 manifest)"
            else fail "deflated torch entries: llama.cpp's tensors (wp-llama-5m-torch-bf16 manifest)"; fi
        fi
    else
        skip "deflated torch entries" "python3 with zipfile not available"
    fi
    fixture_block_end
fi

# --- command line and outputs (issue 12) --------------------------------------
usage_case() { usage_error "$CONVERT" "$@"; }
usage_case "no input says what is missing" "missing INPUT" -q
usage_case "unknown option" "unknown option '--bogus'" --bogus x
usage_case "--split-max-tensors -1" "bad value '-1' for --split-max-tensors" x --split-max-tensors -1
usage_case "--split-max-size -1" "bad value '-1' for --split-max-size" x --split-max-size -1
usage_case "--split-max-tensors 1abc" "bad value '1abc'" x --split-max-tensors 1abc
check "--version" bash -c '"$1" --version | grep -q "^gguf-convert (ggufkit) "' _ "$CONVERT"
if need_fixture models/wp-llama-5m/hf "convert outputs" 4; then
    SRC=$FIX/models/wp-llama-5m/hf
    if "$CONVERT" "$SRC" --dry-run >/dev/full 2>"$TMP/full.log"; then
        fail "--dry-run to a full stdout exits 1"
    else
        grep -q "standard output" "$TMP/full.log" && pass "--dry-run to a full stdout exits 1" ||
            fail "--dry-run to a full stdout exits 1" "$(tail -1 "$TMP/full.log")"
    fi
    # gguf-py's naming_convention: {basename|name}-{size}-{finetune}-{version}-{OUTTYPE}
    rm -rf "$TMP/nm"; mkdir -p "$TMP/nm"; cp "$SRC"/* "$TMP/nm/"
    printf '{"general.name": "org/My Model", "general.finetune": "Instruct", "general.version": "v1.0"}' >"$TMP/meta.json"
    if "$CONVERT" -q "$TMP/nm" --metadata "$TMP/meta.json" >"$TMP/nm.log" 2>&1 &&
       [ -f "$TMP/nm/org-My-Model-5.2M-Instruct-v1.0-F16.gguf" ]; then
        pass "default output name follows llama.cpp's naming convention"
    else
        fail "default output name follows llama.cpp's naming convention" "$(tail -1 "$TMP/nm.log"; ls "$TMP/nm" | tr '\n' ' ')"
    fi
    printf '{"general.name": "x", "general.basename": "Base Name"}' >"$TMP/meta.json"
    "$CONVERT" -q "$TMP/nm" --vocab-only --metadata "$TMP/meta.json" >/dev/null 2>&1
    check "default --vocab-only name: basename wins, -vocab" test -f "$TMP/nm/Base-Name-vocab.gguf"
    # a Meta checkpoint without params.json is not "config.json: not found"
    if need_fixture models/wp-llama-5m/meta "Meta folder without params.json"; then
        rm -rf "$TMP/mp"; mkdir -p "$TMP/mp"; cp "$FIX/models/wp-llama-5m/meta/consolidated.00.pth" "$TMP/mp/"
        bad_case "Meta folder without params.json" "$TMP/mp" "params.json: not found"
    fi
    fixture_block_end
fi
if need_fixture models/stories260K "llama2.c --tokenizer errors" 1; then
    bad_case "--tokenizer naming a directory" "$FIX/models/stories260K/checkpoint_v1.bin" \
        "is a directory, not a tokenizer file" --tokenizer "$TMP"
    fixture_block_end
fi

# --- tokenizer.json vocabularies (no tokenizer.model) ------------------------
# Byte-level BPE: the folders of tokenizer files, --vocab-only (no config.json).
# Token types and the pre-tokenizer are llama.cpp's for these tokenizers;
# the runner's tokenizer test (tests/e2e/tokenize.sh) then reproduces
# llama.cpp's ggml-vocab-llama-bpe / -qwen2 vectors with these files.
vocab_keys() { # file -> "model pre n_tokens n_merges has_scores"
    "$INSPECT" --json "$1" | jq -r '.metadata | "\(.["tokenizer.ggml.model"].value) \(.["tokenizer.ggml.pre"].value) \(.["tokenizer.ggml.tokens"].count) \(.["tokenizer.ggml.merges"].count) \(has("tokenizer.ggml.scores"))"'
}
token_type() { "$INSPECT" --vocab "$1" | awk -v id="$2" '$1 == id { print $2 }'; }
for spec in "llama3 gpt2 llama-bpe 128256 280147 false 128000 control 128255 control" \
            "qwen3 gpt2 qwen2 151669 151387 false 151667 user_defined 151659 control"; do
    read -r tok model pre n nm sc id1 t1 id2 t2 <<<"$spec"
    need_fixture "tokenizers/$tok/tokenizer.json" "tokenizer.json ($tok)" && need_jq "tokenizer.json ($tok)" || continue
    out=$TMP/vocab-$tok.gguf
    if ! "$CONVERT" -q "$FIX/tokenizers/$tok" --vocab-only -o "$out" >"$TMP/c.log" 2>&1; then
        fail "tokenizer.json ($tok): --vocab-only" "$(tail -1 "$TMP/c.log")"; continue
    fi
    got="$(vocab_keys "$out") $(token_type "$out" "$id1") $(token_type "$out" "$id2")"
    want="$model $pre $n $nm $sc $t1 $t2"
    if [ "$got" = "$want" ]; then pass "tokenizer.json ($tok): model, pre, tokens, merges, token types"
    else fail "tokenizer.json ($tok)" "got '$got', want '$want'"; fi
done
# SentencePiece-style tokenizer.json (byte fallback): the same pieces and
# token types as the tokenizer.model of the same tokenizer.
if need_fixture tokenizers/mistral-v1/tokenizer.json "tokenizer.json (SentencePiece style)" 1; then
    MV=$FIX/tokenizers/mistral-v1
    rm -rf "$TMP/mj" "$TMP/ms"; mkdir -p "$TMP/mj" "$TMP/ms"
    cp "$MV/tokenizer.json" "$MV/tokenizer_config.json" "$TMP/mj/"
    cp "$MV/tokenizer.model" "$MV/tokenizer_config.json" "$TMP/ms/"
    arrays() { "$INSPECT" --hash "$1" | grep -E 'tokenizer\.ggml\.(tokens|token_type)$'; }
    if "$CONVERT" -q "$TMP/mj" --vocab-only -o "$TMP/mj.gguf" && "$CONVERT" -q "$TMP/ms" --vocab-only -o "$TMP/ms.gguf" &&
        [ "$(arrays "$TMP/mj.gguf")" = "$(arrays "$TMP/ms.gguf")" ] && [ -n "$(arrays "$TMP/mj.gguf")" ]; then
        pass "tokenizer.json (SentencePiece style) gives tokenizer.model's tokens and types"
    else
        fail "tokenizer.json (SentencePiece style) gives tokenizer.model's tokens and types"
    fi
    fixture_block_end
fi
if need_fixture tokenizers/llama3/tokenizer.json "bad tokenizer.json" 6; then
    rm -rf "$TMP/bt"; mkdir -p "$TMP/bt"
    jq -c '.pre_tokenizer = {"type": "Metaspace", "replacement": "_"}' "$FIX/tokenizers/llama3/tokenizer.json" >"$TMP/bt/tokenizer.json"
    bad_case "tokenizer.json with an unknown pre-tokenizer" "$TMP/bt" "pre-tokenizer of type Metaspace is not one" --vocab-only
    head -c 3000000 "$FIX/tokenizers/llama3/tokenizer.json" >"$TMP/bt/tokenizer.json"
    bad_case "truncated tokenizer.json" "$TMP/bt" "tokenizer.json: line" --vocab-only
    rm -f "$TMP/bt/tokenizer.json"
    bad_case "a folder with no tokenizer" "$TMP/bt" "no tokenizer.model or tokenizer.json" --vocab-only
    bad_case "a tokenizer folder without --vocab-only" "$TMP/bt" "config.json: not found"
    # files gguf-run would then refuse are never written (issue 12)
    jq -c '.model.merges |= [(if (.[0] | type) == "string" then "qqzzq zzqqz" else ["qqzzq", "zzqqz"] end)] + .' \
        "$FIX/tokenizers/llama3/tokenizer.json" >"$TMP/bt/tokenizer.json"
    bad_case "tokenizer.json merge naming an unknown piece" "$TMP/bt" 'names "qqzzq", which is not a token' --vocab-only
    jq -c '.model.vocab["qqzzq"] = .model.vocab["!"]' "$FIX/tokenizers/llama3/tokenizer.json" >"$TMP/bt/tokenizer.json"
    bad_case "tokenizer.json with two tokens of one id" "$TMP/bt" "both have id 0" --vocab-only
    fixture_block_end
fi

# Meta checkpoints sharded over several files (split here by mkmeta the way
# Meta shards them) merge to exactly the tensors of the one-file checkpoint,
# which the -meta- manifest holds to llama.cpp's.
MKMETA=$BIN/tests/tools/mkmeta
if need_jq "sharded Meta checkpoints" && need_fixture models/wp-llama-5m/meta "sharded Meta checkpoints" 3; then
    "$CONVERT" -q "$FIX/models/wp-llama-5m/meta" -o "$TMP/meta1.gguf"
    gguf_tensors "$TMP/meta1.gguf" >"$TMP/meta1.t"
    for n in 2 4; do
        rm -rf "$TMP/meta$n"
        if "$MKMETA" "$FIX/models/wp-llama-5m/meta" "$TMP/meta$n" $n &&
            "$CONVERT" -q "$TMP/meta$n" -o "$TMP/meta$n.gguf" &&
            cmp -s "$TMP/meta1.t" <(gguf_tensors "$TMP/meta$n.gguf") && [ -s "$TMP/meta1.t" ]; then
            pass "Meta checkpoint in $n shards merges to the one-file tensors"
        else
            fail "Meta checkpoint in $n shards merges to the one-file tensors"
        fi
        rm -f "$TMP/meta$n.gguf"
    done
    cp "$TMP/meta4/consolidated.01.pth" "$TMP/meta2/consolidated.01.pth"
    bad_case "Meta shards of different splits" "$TMP/meta2" "consolidated.01.pth: tensor 'tok_embeddings.weight' is not a shard"
    rm -rf "$TMP/meta2" "$TMP/meta4" "$TMP/meta1.gguf"
    fixture_block_end
fi

# --metadata: general.* overrides, and the default output named after them
if need_jq "--metadata" && need_fixture models/wp-llama-5m/hf "--metadata" 2; then
    rm -rf "$TMP/md"; mkdir -p "$TMP/md"; ln -s "$FIX"/models/wp-llama-5m/hf/* "$TMP/md/"
    printf '{"general.name": "Wp", "general.author": "me", "general.tags": ["a", "b"], "general.base_models": [{"name": "Base"}]}' >"$TMP/md.json"
    if "$CONVERT" -q "$TMP/md" --metadata "$TMP/md.json" --outtype f32 &&
        [ "$("$INSPECT" --json "$TMP/md/Wp-5.2M-F32.gguf" | jq -r '.metadata | "\(.["general.name"].value) \(.["general.author"].value) \(.["general.tags"].count) \(.["general.base_model.count"].value) \(.["general.base_model.0.name"].value)"')" = "Wp me 2 1 Base" ]; then
        pass "--metadata overrides general.* and names the default output"
    else
        fail "--metadata overrides general.* and names the default output"
    fi
    printf '{"general.tags": "not a list"}' >"$TMP/md.json"
    out=$TMP/md-bad.gguf; rm -f "$out"
    "$CONVERT" -q "$TMP/md" --metadata "$TMP/md.json" -o "$out" >"$TMP/md.log" 2>&1; rc=$?
    if [ $rc -eq 1 ] && [ ! -e "$out" ] && grep -q "md.json: line 1: general.tags must be a list of strings" "$TMP/md.log"; then
        pass "bad input: --metadata with a wrongly typed key"
    else
        fail "bad input: --metadata with a wrongly typed key" "exit $rc, $(tail -1 "$TMP/md.log")"
    fi
    fixture_block_end
fi

# --dry-run prints the plan and writes nothing
if need_fixture models/wp-llama-5m/hf "--dry-run" 1; then
    out=$TMP/dry.gguf
    rm -f "$out"
    if "$CONVERT" --dry-run --outtype q8_0 "$FIX/models/wp-llama-5m/hf" -o "$out" >"$TMP/dry.log" 2>&1 &&
        [ ! -e "$out" ] && grep -Eq 'blk\.0\.attn_q\.weight .*-> q8_0 +\(rotary permute\)' "$TMP/dry.log"; then
        pass "--dry-run prints the plan and writes nothing"
    else
        fail "--dry-run prints the plan and writes nothing" "$(head -3 "$TMP/dry.log" | tr '\n' ' ')"
    fi
    fixture_block_end
fi

# llama2.c checkpoints: tensors and vocabulary as llama.cpp's llama2c converter
if need_fixture reference/stories260K-f32.gguf "llama2.c checkpoints" 11; then
    S=$FIX/models/stories260K
    ref_hashes() { "$INSPECT" --hash "$REF/stories260K-f32.gguf" | sed '$d'; }
    for ck in checkpoint_legacy:tokenizer.bin checkpoint_v1:tokenizer.bin checkpoint_v1:tok512.model; do
        file=${ck%%:*} tok=${ck##*:}
        out=$TMP/$file.gguf
        n="stories260K $file.bin with $tok: tensors and vocabulary as the llama.cpp reference"
        if ! "$CONVERT" -q "$S/$file.bin" --tokenizer "$S/$tok" --outtype f32 -o "$out" >"$TMP/c.log" 2>&1; then
            fail "$n" "$(tail -1 "$TMP/c.log")"; continue
        fi
        d=$(diff <(ref_hashes) <("$INSPECT" --hash "$out" | sed '$d') | head -4 | tr '\n' ' ')
        if [ -z "$d" ]; then pass "$n"; else fail "$n" "$d"; fi
        check "stories260K $file.bin: output passes --check" "$INSPECT" --check "$out"
    done
    out=$TMP/xs.gguf
    if "$CONVERT" -q "$FIX/models/llama2xs/model.bin" --tokenizer "$S/tokenizer.bin" -o "$out" >"$TMP/c.log" 2>&1 &&
        "$INSPECT" --check "$out" >/dev/null 2>&1 &&
        [ "$("$INSPECT" --json "$out" | jq -r '.metadata["llama.feed_forward_length"].value')" = 192 ]; then
        pass "llama2xs (v0, hidden 192) converts and passes --check"
    else
        fail "llama2xs (v0, hidden 192) converts and passes --check" "$(tail -1 "$TMP/c.log")"
    fi
    head -c 500000 "$S/checkpoint_v1.bin" >"$TMP/trunc.bin"
    l2c_bad() { bad_case "$@"; } # name file expected [--tokenizer FILE]
    l2c_bad "truncated llama2.c checkpoint" "$TMP/trunc.bin" "truncated" --tokenizer "$S/tokenizer.bin"
    l2c_bad "llama2.c checkpoint without --tokenizer" "$S/checkpoint_v1.bin" "needs --tokenizer"
    printf 'this is not a model at all, just some text of some length' >"$TMP/junk.bin"
    l2c_bad "implausible llama2.c header" "$TMP/junk.bin" "implausible llama2.c header" --tokenizer "$S/tokenizer.bin"
    head -c 3000 "$S/tokenizer.bin" >"$TMP/tok.bin"
    l2c_bad "truncated tokenizer.bin" "$S/checkpoint_v1.bin" "truncated at token" --tokenizer "$TMP/tok.bin"
    fixture_block_end
fi

# tests/tools/mkhf, the benchmarks' checkpoint maker: every family it has a
# row for (mkhf --families) makes a tiny synthetic checkpoint that converts
# to the row's architecture, passes --check and runs with finite logits (a
# perplexity that is a number). Its phi3 folder's name makes general.name
# hold "phi3", so llama.cpp's Phi-3 vocabulary rule applies. Then every
# architecture in --arches that a Hugging Face class converts to has a row,
# and every row's class is one --arches names for the row's architecture:
# a family added to the registry fails here until mkhf can make it.
MKHF=$BIN/tests/tools/mkhf
if [ ! -x "$MKHF" ] || ! MKHF_ROWS=$("$MKHF" --families) || [ -z "$MKHF_ROWS" ]; then
    skip_block "mkhf families" "no $MKHF --families" 1
else
    for i in $(seq 1 20); do echo "The quick brown fox $i jumps over the lazy dog."; done >"$TMP/fox.txt"
    while read -r fam arch _ <&3; do
        n="mkhf --family $fam: converts to $arch, passes --check, finite perplexity"
        hf=$TMP/hf-$fam out=$TMP/hf-$fam.gguf layers=2
        # llama.cpp loads a deepseek2 without q_lora_rank only at 26 or 27
        # blocks (--check's llama.cpp line)
        [ "$fam" = deepseek2lite ] && layers=26
        rm -rf "$hf"
        if ! "$MKHF" "$hf" --family "$fam" --dim 64 --layers "$layers" --ffn 128 --heads 4 --kv-heads 2 --head-dim 32 \
                --experts 4 --experts-used 2 --moe-ffn 64 --vocab 400 >"$TMP/c.log" 2>&1 ||
            ! "$CONVERT" -q "$hf" --outtype f16 -o "$out" >"$TMP/c.log" 2>&1 ||
            ! "$INSPECT" --check "$out" >"$TMP/c.log" 2>&1; then
            fail "$n" "$(tail -1 "$TMP/c.log")"
            continue
        fi
        got=$("$INSPECT" "$out" | sed -nE 's/^ *general\.architecture +str +"(.*)"$/\1/p')
        "$BIN/gguf-run" -m "$out" --perplexity "$TMP/fox.txt" --ctx-size 16 >"$TMP/c.log" 2>&1
        ppl=$(sed -n 's/^perplexity: \([0-9.]*\) .*/\1/p' "$TMP/c.log")
        if [ "$got" != "$arch" ]; then fail "$n" "general.architecture '$got'"
        elif [[ $ppl =~ ^[0-9]+\.[0-9]+$ ]]; then pass "$n"
        # a family gguf-run refuses by name (a GGUF_WORD_MODEL feature):
        # converted and checked, its perplexity skipped, not failed
        elif grep -q "gguf-run does not implement the feature" "$TMP/c.log"; then
            skip "$n" "$(tail -1 "$TMP/c.log")"
        else fail "$n" "perplexity '$ppl'"; fi
        rm -rf "$hf" "$out"
    done 3<<<"$MKHF_ROWS"
    if need_jq "mkhf has a row for every architecture a Hugging Face class converts to"; then
        d=$(diff <("$INSPECT" --arches --json |
                   jq -r '.architectures | to_entries[] | select(.value.hf_classes != "") | .key' | sort) \
                 <(awk '{ print $2 }' <<<"$MKHF_ROWS" | sort -u) | tr '\n' ' ')
        bad=$(while read -r _ arch cls <&3; do
                  "$INSPECT" --arches --json | jq -e --arg a "$arch" --arg c "$cls" \
                      '.architectures[$a].hf_classes | split(", ") | index($c) != null' >/dev/null ||
                      echo "$cls is not an $arch class"
              done 3<<<"$MKHF_ROWS" | tr '\n' ' ')
        [ -z "$d$bad" ] && pass "mkhf has a row for every architecture a Hugging Face class converts to" ||
            fail "mkhf has a row for every architecture a Hugging Face class converts to" \
                 "architectures without a row (<) or rows of no architecture (>): $d $bad"
    fi
fi

# cfg_bad FIXTURE NAME JQ-FILTER EXPECTED: a copy of models/FIXTURE with its
# config.json passed through the filter is refused with EXPECTED
cfg_bad() {
    local Q=$TMP/cfg-x
    rm -rf "$Q"; cp -r "$FIX/models/$1" "$Q"; chmod -R u+w "$Q"
    jq "$3" "$FIX/models/$1/config.json" >"$Q/config.json"
    bad_case "$2" "$Q" "$4"
}

# patched_check FAMILY FILE NAME PERL-SUBSTITUTION EXPECTED: FILE with the
# substitution applied (a key's value or a tensor's name patched) is
# refused by --check with EXPECTED
patched_check() {
    perl -0777 -pe "$4" "$2" >"$TMP/patched.gguf"
    "$INSPECT" --check "$TMP/patched.gguf" >"$TMP/c.log" 2>&1
    local rc=$?
    if [ $rc -eq 1 ] && grep -qF -- "$5" "$TMP/c.log"; then pass "$1 --check: $3"
    else fail "$1 --check: $3" "exit $rc, $(grep -m1 'model:' "$TMP/c.log")"; fi
}

# GLM-4.5's config: its MoE keys are required (upstream writes a file
# without them that llama.cpp cannot load), the expert groups must divide
# the experts and the used groups fit in them, norm_topk_prob is a bool,
# and the leading dense blocks must be the checkpoint's dense ones
if need_jq "glm4moe converter rules" && need_fixture models/glm4moe-rand "glm4moe converter rules" 9; then
    glm_bad() { cfg_bad glm4moe-rand "glm4moe: $1" "$2" "$3"; }
    glm_bad "no n_routed_experts" 'del(.n_routed_experts)' \
        "an expert, but config.json has no num_local_experts / num_experts / n_routed_experts"
    glm_bad "no moe_intermediate_size" 'del(.moe_intermediate_size)' \
        "config.json: required 'moe_intermediate_size' is missing"
    glm_bad "no n_shared_experts" 'del(.n_shared_experts)' \
        "config.json: required 'n_shared_experts' is missing"
    glm_bad "n_group not dividing the experts" '.n_group = 3' \
        "glm4moe.expert_group_count = 3 does not divide glm4moe.expert_count = 8"
    glm_bad "topk_group above n_group" '.topk_group = 2' \
        "glm4moe.expert_group_used_count = 2, expected 1 to glm4moe.expert_group_count = 1"
    glm_bad "norm_topk_prob not a bool" '.norm_topk_prob = 1' \
        "'norm_topk_prob' is not true or false"
    glm_bad "first_k_dense_replace against the dense block" '.first_k_dense_replace = 0' \
        "missing tensor blk.0.ffn_gate_inp.weight"
    # --check on a conversion made wrong: a block without its score bias (the
    # name patched), an expert count that is not the router's
    G=$TMP/glm4moe.gguf
    if "$CONVERT" -q "$FIX/models/glm4moe-rand" --outtype f16 -o "$G" >"$TMP/c.log" 2>&1; then
        glm_check() { patched_check glm4moe "$G" "$@"; }
        glm_check "a block without exp_probs_b" 's/blk\.2\.exp_probs_b\.bias/blk.2.exp_probs_q.bias/' \
            "missing tensor blk.2.exp_probs_b.bias"
        glm_check "expert_count not the router's" \
            's/(glm4moe\.expert_count\x04\x00\x00\x00)\x08/${1}\x04/' \
            "tensor blk.1.ffn_gate_inp.weight has shape [128, 8], expected [128, 4] (embedding_length, expert_count)"
    else
        fail "glm4moe --check: the conversion" "$(tail -1 "$TMP/c.log")"
        skip "glm4moe --check: expert_count not the router's" "no conversion"
    fi
    rm -rf "$TMP/cfg-x" "$G" "$TMP/patched.gguf"
    fixture_block_end
fi

# DeepSeek-V3's config against its weights: kv_b_proj must split into
# num_key_value_heads × (qk_nope_head_dim + v_head_dim) rows, the MLA keys
# are required, the scoring function is sigmoid or softmax, the expert
# groups divide the experts; --check on conversions made wrong (keys and a
# name patched): the MLA widths against each other and the tensors, the
# expert counts and groups, the score bias of every MoE block
if need_jq "deepseek2 converter rules" && need_fixture models/deepseek2-rand "deepseek2 converter rules" 15; then
    ds_bad() { cfg_bad deepseek2-rand "deepseek2: $1" "$2" "$3"; }
    ds_bad "qk_nope_head_dim against kv_b_proj" '.qk_nope_head_dim = 16' \
        "tensor 'model.layers.0.self_attn.kv_b_proj.weight': expected F32, F16 or BF16 [[]4 × (16 + 32), kv_lora_rank]"
    ds_bad "no v_head_dim" 'del(.v_head_dim)' "config.json: 'v_head_dim' is missing"
    ds_bad "no kv_lora_rank" 'del(.kv_lora_rank)' "config.json: required 'kv_lora_rank' is missing"
    ds_bad "scoring_func neither sigmoid nor softmax" '.scoring_func = "tanh"' \
        "the experts' scoring function (scoring_func) is not \"sigmoid\" or \"softmax\""
    ds_bad "n_group not dividing the experts" '.n_group = 3' \
        "deepseek2.expert_group_count = 3 does not divide deepseek2.expert_count = 8"
    ds_bad "v_head_dim against kv_b_proj" '.v_head_dim = 16' \
        "tensor 'model.layers.0.self_attn.kv_b_proj.weight': expected F32, F16 or BF16 [[]4 × (32 + 16), kv_lora_rank]"
    G=$TMP/deepseek2.gguf
    if "$CONVERT" -q "$FIX/models/deepseek2-rand" --outtype f16 -o "$G" >"$TMP/c.log" 2>&1; then
        ds_check() { patched_check deepseek2 "$G" "$@"; }
        ds_check "key_length not kv_lora_rank + rope" \
            's/(deepseek2\.attention\.key_length\x04\x00\x00\x00)\x50/${1}\x48/' \
            "deepseek2.attention.key_length = 72, expected deepseek2.attention.kv_lora_rank + deepseek2.rope.dimension_count = 80"
        ds_check "value_length not kv_lora_rank" \
            's/(deepseek2\.attention\.value_length\x04\x00\x00\x00)\x40/${1}\x20/' \
            "deepseek2.attention.value_length = 32, expected deepseek2.attention.kv_lora_rank = 64"
        ds_check "head_count_kv not 1" \
            's/(deepseek2\.attention\.head_count_kv\x04\x00\x00\x00)\x01/${1}\x04/' \
            "deepseek2.attention.head_count_kv = 4, expected 1"
        ds_check "key_length_mla no wider than the rope" \
            's/(deepseek2\.attention\.key_length_mla\x04\x00\x00\x00)\x30/${1}\x10/' \
            "deepseek2.attention.key_length_mla = 16, expected more than deepseek2.rope.dimension_count = 16"
        ds_check "value_length_mla against attn_v_b" \
            's/(deepseek2\.attention\.value_length_mla\x04\x00\x00\x00)\x20/${1}\x10/' \
            "tensor blk.0.attn_v_b.weight has shape [64, 32, 4], expected [64, 16, 4]"
        ds_check "q_lora_rank against attn_q_a" \
            's/(deepseek2\.attention\.q_lora_rank\x04\x00\x00\x00)\x40/${1}\x20/' \
            "tensor blk.0.attn_q_a_norm.weight has shape [64], expected [32] (q_lora_rank)"
        ds_check "expert_group_count not dividing the experts" \
            's/(deepseek2\.expert_group_count\x04\x00\x00\x00)\x04/${1}\x03/' \
            "deepseek2.expert_group_count = 3 does not divide deepseek2.expert_count = 8"
        ds_check "expert_count not the router's" \
            's/(deepseek2\.expert_count\x04\x00\x00\x00)\x08/${1}\x04/' \
            "tensor blk.1.ffn_gate_inp.weight has shape [128, 8], expected [128, 4] (embedding_length, expert_count)"
        # (exp_probs_b itself is optional here: DeepSeek-V2's greedy routing
        # has none, and llama.cpp's deepseek2 loader takes it when present)
        ds_check "a misnamed score bias" 's/blk\.2\.exp_probs_b\.bias/blk.2.exp_probs_q.bias/' \
            "tensor blk.2.exp_probs_q.bias is not a deepseek2 tensor"
    else
        fail "deepseek2 --check: the conversion" "$(tail -1 "$TMP/c.log")"
        for i in $(seq 8); do skip "deepseek2 --check: patched file $i" "no conversion"; done
    fi
    rm -rf "$TMP/cfg-x" "$G" "$TMP/patched.gguf"
    fixture_block_end
fi

# Qwen 3.5's config against its weights: layer_types must be what
# full_attention_interval makes them (llama.cpp reads only the interval),
# and the value heads must fit the linear-attention tensors they reorder
if need_jq "qwen35 converter rules" && need_fixture models/qwen35-rand "qwen35 converter rules" 3; then
    q35_bad() { cfg_bad qwen35-rand "qwen35: $1" "$2" "$3"; }
    q35_bad "layer_types against full_attention_interval" '.full_attention_interval = 2' \
        'layer_types\[1\] is "linear_attention", but with full_attention_interval 2 layer 1 is "full_attention"'
    q35_bad "value heads that do not fit in_proj_qkv" '.linear_num_value_heads = 8' \
        "tensor 'model.layers.0.linear_attn.A_log': 4 rows, expected 8 (8 value heads of 1)"
    q35_bad "value heads not a multiple of the key heads" '.linear_num_value_heads = 3' \
        "linear_num_value_heads = 3 is not a multiple of linear_num_key_heads = 2"
    rm -rf "$TMP/cfg-x"
    fixture_block_end
fi

# --- values that are not finite ------------------------------------------------
# A NaN or an Inf in a checkpoint, one the conversion makes (a finite f32
# beyond f16's or bf16's range, a q8_0 block whose f16 scale overflows),
# gpt-oss's MXFP4 scale 0xff (NaN in E8M0) and a NaN token score fail the
# conversion in every reader and every outtype: exit 1, the checkpoint file,
# the tensor there and its element (row and column of the checkpoint's
# tensor, the rotary permutation undone, a shard's own) named, and nothing
# — output or temporary file — left in the output's folder.
NF=$TMP/nf
mkdir -p "$NF"
nf_case() { # name input expected-text [options...] (NF_GREP=-E: the text is a regex)
    rm -rf "$NF/out"; mkdir -p "$NF/out"
    "$CONVERT" -q "$2" -o "$NF/out/x.gguf" "${@:4}" >"$TMP/nf.log" 2>&1
    local rc=$? left
    left=$(ls -A "$NF/out" | tr '\n' ' ')
    if [ $rc -eq 1 ] && [ -z "$left" ] && grep -q "${NF_GREP:--F}" -- "$3" "$TMP/nf.log"; then
        pass "not finite: $1"
    else
        fail "not finite: $1" "exit $rc, left [$left], $(tail -1 "$TMP/nf.log")"
    fi
}
nf_ok() { # name input [options...]: the same kind of value where it fits converts
    rm -rf "$NF/out"; mkdir -p "$NF/out"
    if "$CONVERT" -q "$2" -o "$NF/out/x.gguf" "${@:3}" >"$TMP/nf.log" 2>&1 &&
        "$INSPECT" --check "$NF/out/x.gguf" >/dev/null 2>&1; then
        pass "not finite: $1"
    else
        fail "not finite: $1" "$(tail -1 "$TMP/nf.log")"
    fi
}
if [ ! -x "$MKHF" ]; then
    skip_block "not finite: Hugging Face safetensors and config.json" "no $MKHF" 54
else
    SHAPE=(--dim 64 --layers 2 --ffn 128 --heads 4 --kv-heads 2 --head-dim 32 --experts 4
           --experts-used 2 --moe-ffn 64 --vocab 400)
    nf_mk() { rm -rf "$NF/in"; "$MKHF" "$NF/in" "${SHAPE[@]}" "$@" >/dev/null; }
    # a NaN in q (rows permuted for llama.cpp's rotary layout): named at the
    # checkpoint's row 2 (element 134 = 2 × 64 + 6), from every float dtype
    # into every outtype
    for dt in bf16 f16 f32; do
        nf_mk --family llama --dtype $dt --set 'model.layers.1.self_attn.q_proj.weight[134]=nan'
        for ot in f32 f16 bf16 q8_0 auto; do
            nf_case "$dt NaN in a permuted matrix, --outtype $ot" "$NF/in" \
                "model.safetensors: tensor 'model.layers.1.self_attn.q_proj.weight' has a non-finite value (NaN) at row 2, column 6 (output tensor blk.1.attn_q.weight): nothing written" \
                --outtype $ot
        done
    done
    nf_mk --family llama --dtype f16 --set 'model.layers.0.mlp.down_proj.weight[300]=inf'
    nf_case "f16 +Inf" "$NF/in" "tensor 'model.layers.0.mlp.down_proj.weight' has a non-finite value (+Inf) at row 2, column 44 (output tensor blk.0.ffn_down.weight)" --outtype f16
    nf_mk --family llama --dtype f32 --set 'model.norm.weight[5]=-inf'
    nf_case "f32 -Inf in a vector (kept f32)" "$NF/in" "tensor 'model.norm.weight' has a non-finite value (-Inf) at element 5 (output tensor output_norm.weight)" --outtype q8_0
    # finite values beyond the output type's range: refused there, kept
    # where they fit
    nf_mk --family llama --dtype f32 --set 'model.layers.0.mlp.down_proj.weight[300]=70000'
    nf_case "f32 70000 to f16" "$NF/in" "tensor 'model.layers.0.mlp.down_proj.weight' has 70000 at row 2, column 44 (output tensor blk.0.ffn_down.weight), which overflows f16 (largest finite value 65504) to +Inf; --outtype f32 or bf16 keeps it: nothing written" --outtype f16
    for ot in bf16 q8_0 f32; do nf_ok "f32 70000 converts to $ot" "$NF/in" --outtype $ot; done
    nf_mk --family llama --dtype f32 --set 'model.layers.0.mlp.down_proj.weight[300]=-3.4e38'
    nf_case "f32 -3.4e38 to bf16" "$NF/in" "has -3.39999995e+38 at row 2, column 44 (output tensor blk.0.ffn_down.weight), which overflows bf16 (largest finite value 3.38953139e+38) to -Inf; --outtype f32 keeps it: nothing written" --outtype bf16
    nf_ok "f32 -3.4e38 converts to f32" "$NF/in" --outtype f32
    nf_mk --family llama --dtype bf16 --set 'model.layers.0.mlp.down_proj.weight[300]=1e7'
    nf_case "bf16 1e7 to q8_0" "$NF/in" "has 10027008 at row 2, column 44 (output tensor blk.0.ffn_down.weight), too large for q8_0: its block's scale (10027008 / 127) overflows f16's largest finite value 65504; --outtype f32 or bf16 keeps it: nothing written" --outtype q8_0
    # stacked experts: the expert's own tensor is named
    nf_mk --family mixtral --dtype f16 --set 'model.layers.1.block_sparse_moe.experts.2.w2.weight[130]=nan'
    for ot in f16 q8_0; do
        nf_case "an expert's NaN, --outtype $ot" "$NF/in" "tensor 'model.layers.1.block_sparse_moe.experts.2.w2.weight' has a non-finite value (NaN) at row 1, column 2 (output tensor blk.1.ffn_down_exps.weight)" --outtype $ot
    done
    # gpt-oss: E8M0 scales of 0xff in [expert, row, block] (down: 64 rows
    # of 2 blocks; gate_up: 128 rows, the odd ones up's), in every outtype
    # (the experts stay MXFP4); the gate/up bias columns interleaved
    nf_mk --family gptoss --set 'model.layers.1.mlp.experts.down_proj_scales[267]=255'
    for ot in f32 f16 bf16 q8_0; do
        nf_case "MXFP4 scale 0xff, --outtype $ot" "$NF/in" "model.safetensors: tensor 'model.layers.1.mlp.experts.down_proj_scales' has a non-finite value (NaN: the E8M0 scale 0xff) at expert 2, row 5, block 1 (output tensor blk.1.ffn_down_exps.weight): nothing written" --outtype $ot
    done
    nf_ok "MXFP4 scale 0xff: --vocab-only writes no weights" "$NF/in" --vocab-only
    nf_mk --family gptoss --set 'model.layers.0.mlp.experts.gate_up_proj_scales[782]=255'
    nf_case "MXFP4 gate_up scale 0xff" "$NF/in" "tensor 'model.layers.0.mlp.experts.gate_up_proj_scales' has a non-finite value (NaN: the E8M0 scale 0xff) at expert 3, row 7, block 0 (output tensor blk.0.ffn_up_exps.weight)"
    nf_mk --family gptoss --set 'model.layers.0.mlp.experts.gate_up_proj_bias[131]=nan'
    nf_case "gpt-oss gate_up bias" "$NF/in" "tensor 'model.layers.0.mlp.experts.gate_up_proj_bias' has a non-finite value (NaN) at row 1, column 3 (output tensor blk.0.ffn_up_exps.bias)"
    nf_mk --family gptoss --set 'model.layers.1.self_attn.sinks[2]=-inf'
    nf_case "gpt-oss attention sinks" "$NF/in" "tensor 'model.layers.1.self_attn.sinks' has a non-finite value (-Inf) at element 2 (output tensor blk.1.attn_sinks.weight)"
    # Gemma's norms are written + 1: a NaN stays one
    nf_mk --family gemma2 --dtype f16 --set 'model.layers.0.input_layernorm.weight[3]=nan'
    nf_case "Gemma norm + 1" "$NF/in" "tensor 'model.layers.0.input_layernorm.weight' has a non-finite value (NaN) at element 3 (output tensor blk.0.attn_norm.weight)"

    # config.json: every number read is range-checked, NaN and Infinity
    # (which Python's json writes) included; gpt-oss's swiglu_limit and
    # layer_types, which llama.cpp's converter ignores, must describe the
    # model the GGUF makes
    nf_cfg() { # name family sed-expression expected
        nf_mk --family "$2" && sed -i "$3" "$NF/in/config.json" && nf_case "$1" "$NF/in" "$4"
    }
    nf_cfg "swiglu_limit NaN" gptoss 's/"swiglu_limit": 7.0/"swiglu_limit": NaN/' \
        "config.json line 1: 'swiglu_limit' is NaN, expected a finite number > 0"
    nf_cfg "swiglu_limit 5" gptoss 's/"swiglu_limit": 7.0/"swiglu_limit": 5/' \
        "config.json line 1: 'swiglu_limit' is 5, but a gpt-oss GGUF has no key for it: llama.cpp (and gguf-run) clamp at 7"
    nf_cfg "layer_types shorter than the layers" gptoss 's/"layer_types": \[[^]]*\]/"layer_types": ["sliding_attention"]/' \
        "config.json line 1: 'layer_types' has 1 entry for 2 layers (num_hidden_layers)"
    nf_cfg "layer_types longer than the layers" gptoss 's/"full_attention"\]/"full_attention", "sliding_attention"]/' \
        "config.json line 1: 'layer_types' has 3 entries for 2 layers (num_hidden_layers)"
    nf_cfg "layer_types with an unknown entry" gptoss 's/"full_attention"\]/"chunked_attention"]/' \
        "config.json line 1: layer_types[1] is \"chunked_attention\", not \"sliding_attention\" or \"full_attention\""
    nf_cfg "layer_types against the fixed pattern" gptoss 's/"layer_types": \[[^]]*\]/"layer_types": ["full_attention", "sliding_attention"]/' \
        "config.json line 1: layer_types[0] is \"full_attention\", but in a gpt-oss GGUF layer 0 is local (llama.cpp's fixed pattern: the last layer of every 2 global, the others local)"
    nf_cfg "rope_theta NaN" llama 's/"rope_theta": [0-9.]*/"rope_theta": NaN/' \
        "config.json line 1: 'rope_theta' is NaN, expected a finite number > 0"
    nf_cfg "rope_theta beyond f32" qwen3 's/"rope_theta": [0-9.]*/"rope_theta": 1e39/' \
        "config.json line 1: 'rope_theta' is 1e39, expected a finite number > 0"
    nf_cfg "rms_norm_eps -Infinity" gemma3 's/"rms_norm_eps": [0-9.e-]*/"rms_norm_eps": -Infinity/' \
        "config.json line 1: 'rms_norm_eps' is -Infinity, expected a finite number > 0"
    nf_cfg "attn_logit_softcapping NaN" gemma2 's/"attn_logit_softcapping": 50.0/"attn_logit_softcapping": NaN/' \
        "config.json line 1: 'attn_logit_softcapping' is NaN, expected a finite number > 0"
    nf_cfg "sliding_window NaN" gptoss 's/"sliding_window": 128/"sliding_window": NaN/' \
        "config.json line 1: 'sliding_window' is NaN, not a whole number"
    nf_cfg "num_hidden_layers Infinity" qwen3 's/"num_hidden_layers": 2/"num_hidden_layers": Infinity/' \
        "config.json line 1: 'num_hidden_layers' is Infinity, not a whole number"
    nf_cfg "rope_scaling.factor NaN" gptoss 's/"factor": 32.0/"factor": NaN/' \
        "config.json line 1: rope_scaling.factor is not a positive number"
    nf_cfg "rope_scaling.beta_fast Infinity" gptoss 's/"beta_fast": 32.0/"beta_fast": Infinity/' \
        "config.json line 1: rope_scaling.beta_fast is not a finite number"
    nf_cfg "gemma3 sliding_window_pattern against the fixed one" gemma3 's/"sliding_window_pattern": 6/"sliding_window_pattern": 2/' \
        "config.json line 1: 'sliding_window_pattern' is 2 (layer 1 global), but in a gemma3 GGUF layer 1 is local"
    nf_cfg "a sliding layer in a family without local layers" qwen3 's/}$/, "layer_types": ["full_attention", "sliding_attention"]}/' \
        "config.json line 1: layer_types[1] is \"sliding_attention\", but a qwen3 GGUF has no local layers"
    nf_mk --family qwen3 && sed -i 's/}$/, "layer_types": ["full_attention", "full_attention"]}/' "$NF/in/config.json"
    nf_ok "layer_types that describe the GGUF's layers convert" "$NF/in" --outtype f16
    # sliding_window_pattern is read for every family (a count), a layout
    # only where local layers exist
    nf_cfg "sliding_window_pattern NaN" qwen3 's/}$/, "sliding_window_pattern": NaN}/' \
        "config.json line 1: 'sliding_window_pattern' is NaN, not a whole number"
    nf_mk --family qwen3 && sed -i 's/}$/, "sliding_window_pattern": 6}/' "$NF/in/config.json"
    nf_ok "sliding_window_pattern in a family without local layers converts" "$NF/in" --outtype f16
fi
# torch .bin (BF16 storages, pickle order): storage 2 is
# model.layers.0.self_attn.q_proj.weight [256, 256]; a NaN at row 5,
# column 7, the archive rewritten with its CRCs
if need_fixture models/wp-llama-5m/torch "not finite: torch checkpoints" 2; then
    if command -v python3 >/dev/null && rm -rf "$NF/t" && mkdir -p "$NF/t" &&
        cp "$FIX"/models/wp-llama-5m/torch/*.json "$FIX/models/wp-llama-5m/torch/tokenizer.model" "$NF/t/" &&
        python3 - "$FIX/models/wp-llama-5m/torch/pytorch_model.bin" "$NF/t/pytorch_model.bin" <<'PY' 2>/dev/null
import sys, zipfile
src = zipfile.ZipFile(sys.argv[1])
with zipfile.ZipFile(sys.argv[2], "w", compression=zipfile.ZIP_STORED) as dst:
    for e in src.infolist():
        data = src.read(e.filename)
        if e.filename.endswith("/data/2"):
            at = (5 * 256 + 7) * 2
            data = data[:at] + b"\xc0\x7f" + data[at + 2:]
        dst.writestr(e.filename, data)
PY
    then
        for ot in f16 q8_0; do
            nf_case "torch BF16 NaN, --outtype $ot" "$NF/t" "pytorch_model.bin: tensor 'model.layers.0.self_attn.q_proj.weight' has a non-finite value (NaN) at row 5, column 7 (output tensor blk.0.attn_q.weight): nothing written" --outtype $ot
        done
    else
        skip "not finite: torch checkpoints" "python3 with zipfile not available"
        skip "not finite: torch checkpoints" "python3 with zipfile not available"
    fi
    fixture_block_end
fi
# Meta checkpoints (mkmeta plants the values): a shard's own file, tensor
# name and element — wo split by columns, wq by rows, a vector — and
# params.json's floats
MKMETA=$BIN/tests/tools/mkmeta
if need_fixture models/wp-llama-5m/meta "not finite: Meta checkpoints" 6; then
    MS=$FIX/models/wp-llama-5m/meta
    "$MKMETA" "$MS" "$NF/m2" 2 '1:layers.0.attention.wo.weight[394]=nan' >/dev/null
    nf_case "Meta shard split by columns" "$NF/m2" "consolidated.01.pth: tensor 'layers.0.attention.wo.weight' has a non-finite value (NaN) at row 3, column 10 (output tensor blk.0.attn_output.weight): nothing written"
    rm -rf "$NF/m2"; "$MKMETA" "$MS" "$NF/m2" 2 '1:layers.0.attention.wq.weight[778]=inf' >/dev/null
    nf_case "Meta shard split by rows" "$NF/m2" "consolidated.01.pth: tensor 'layers.0.attention.wq.weight' has a non-finite value (+Inf) at row 3, column 10 (output tensor blk.0.attn_q.weight)" --outtype q8_0
    rm -rf "$NF/m1"; "$MKMETA" "$MS" "$NF/m1" 1 '0:layers.1.attention_norm.weight[4]=-inf' >/dev/null
    nf_case "Meta vector" "$NF/m1" "consolidated.00.pth: tensor 'layers.1.attention_norm.weight' has a non-finite value (-Inf) at element 4 (output tensor blk.1.attn_norm.weight)" --outtype f32
    rm -rf "$NF/m1"; "$MKMETA" "$MS" "$NF/m1" 1 >/dev/null
    sed 's/"norm_eps": [^,}]*/"norm_eps": NaN/' "$MS/params.json" >"$NF/m1/params.json"
    NF_GREP=-E nf_case "params.json norm_eps NaN" "$NF/m1" "params.json line [0-9]+: 'norm_eps' is NaN, expected a finite number > 0"
    sed 's/}/, "rope_theta": Infinity}/' "$MS/params.json" >"$NF/m1/params.json"
    NF_GREP=-E nf_case "params.json rope_theta Infinity" "$NF/m1" "params.json line [0-9]+: 'rope_theta' is Infinity, expected a finite number > 0"
    sed 's/"n_layers": [0-9]*/"n_layers": NaN/' "$MS/params.json" >"$NF/m1/params.json"
    NF_GREP=-E nf_case "params.json n_layers NaN" "$NF/m1" "params.json line [0-9]+: 'n_layers' is NaN, not a whole number"
    rm -rf "$NF/m1" "$NF/m2"
    fixture_block_end
fi
# llama2.c checkpoints, written over by bytes: v1 (256-byte header, norms
# of 5 × 64 then 5 × 64 then 64, the 512 × 64 embedding, then wq) and the
# legacy v0 (28-byte header, the embedding, then the attention norms)
if need_fixture models/stories260K "not finite: llama2.c checkpoints" 3; then
    S=$FIX/models/stories260K
    f32_at() { # file byte-offset hex-bytes
        printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
    }
    cp "$S/checkpoint_v1.bin" "$NF/v1.bin"
    f32_at "$NF/v1.bin" $((256 + 4 * (5 * 64 + 5 * 64 + 64 + 512 * 64 + 2 * 64 + 3))) '\x00\x00\xc0\x7f'
    nf_case "llama2.c v1 NaN" "$NF/v1.bin" "tensor 'blk.0.attn_q.weight' has a non-finite value (NaN) at row 2, column 3: nothing written" --tokenizer "$S/tokenizer.bin"
    cp "$S/checkpoint_legacy.bin" "$NF/v0.bin"
    f32_at "$NF/v0.bin" $((28 + 4 * (512 * 64 + 64 + 5))) '\x00\x00\x80\xff'
    nf_case "llama2.c v0 -Inf" "$NF/v0.bin" "tensor 'blk.1.attn_norm.weight' has a non-finite value (-Inf) at element 5: nothing written" --tokenizer "$S/tokenizer.bin" --outtype f32
    # tokenizer.bin: u32 max length, then per token f32 score, i32
    # length, bytes ("<unk>", "<s>", "</s>" are tokens 0-2)
    cp "$S/tokenizer.bin" "$NF/tok.bin"
    f32_at "$NF/tok.bin" 4 '\x00\x00\xc0\x7f'
    nf_case "tokenizer.bin score NaN" "$S/checkpoint_v1.bin" "tok.bin: token 0 has a non-finite score (NaN)" --tokenizer "$NF/tok.bin"
    rm -f "$NF/v1.bin" "$NF/v0.bin" "$NF/tok.bin"
    fixture_block_end
fi
# FP8 block-scaled checkpoints (quantization_config quant_method fp8):
# qwen3fp8-rand's four outtypes against llama.cpp e21cdc11's converter with
# float8 decoded as a torch that has it does (tests/data/fp8/README.md)
if need_jq "fp8 convert manifests" && need_fixture models/qwen3fp8-rand "fp8 convert manifests" 16; then
    for t in f32 f16 bf16 q8_0; do
        KEY_ORDER=1 convert_manifest "$ROOT/tests/data/fp8/qwen3fp8-rand-$t.json"
    done
    fixture_block_end
fi
# the stacked-experts path: an FP8 copy of qwen3moe-rand (each expert's
# projections with their own scales), made by the fixtures' generator
MKFP8=$FIX/../tools/ref/make_fp8_model.py PY3=/usr/bin/python3
[ -x "$PY3" ] || PY3=python3
if [ ! -f "$MKFP8" ] || ! "$PY3" -c 'import numpy' 2>/dev/null; then
    skip_block "fp8 experts manifests" "no python3 with NumPy, or no $MKFP8" 8
elif need_jq "fp8 experts manifests" && need_fixture models/qwen3moe-rand "fp8 experts manifests" 8; then
    "$PY3" "$MKFP8" "$FIX/models/qwen3moe-rand" "$TMP/qwen3moefp8-rand"
    for t in bf16 q8_0; do
        CONVERT_INPUT=$TMP/qwen3moefp8-rand KEY_ORDER=1 convert_manifest "$ROOT/tests/data/fp8/qwen3moefp8-rand-$t.json"
    done
    rm -rf "$TMP/qwen3moefp8-rand"
    fixture_block_end
fi
# Integer-packed checkpoints (compressed-tensors pack-quantized, GPTQ) and
# compressed-tensors float-quantized (FP8 with channel or block scales),
# int-quantized and naive-quantized (int8 with channel or block scales):
# copies of qwen3-rand made by tests/tools/mkqpack.py, each outtype against
# llama.cpp e21cdc11's converter (tests/data/qpack/README.md)
if ! mkqpack ct "$TMP/qwen3ct-rand"; then
    skip_block "packed-quantized manifests" "no python3 with NumPy, or no models/qwen3-rand" 128
elif need_jq "packed-quantized manifests" && need_fixture models/qwen3-rand "packed-quantized manifests" 128; then
    for k in ct ctsym gptq gptq8 ctfp8 ctfp8b ctint ctnaive; do
        [ "$k" = ct ] || mkqpack "$k" "$TMP/qwen3$k-rand"
        for t in f32 f16 bf16 q8_0; do
            CONVERT_INPUT=$TMP/qwen3$k-rand KEY_ORDER=1 convert_manifest "$ROOT/tests/data/qpack/qwen3$k-rand-$t.json"
        done
        rm -rf "$TMP/qwen3$k-rand"
    done
    fixture_block_end
fi
rm -rf "$TMP/qwen3ct-rand"
# Packed experts: Kimi K2's layout (INT4 routed experts, the rest BF16) on
# deepseek2-rand, packed qwen3moe-rands (every projection, experts too:
# compressed-tensors with zero points, GPTQ desc_act), and deepseek2-rands
# packed whole (kv_b_proj's dequantized values split into attn_k_b / attn_v_b),
# glm4moe-rands packed whole (experts, shared expert, attention, the NextN layer)
# and Qwen 3.5's (linear attention's projections V-head reordered after
# dequantizing; qwen35moe's fused experts split per expert as releases store them);
# BitNet ternary weights (Falcon3-*-1.58bit's layout) on llama3rope-rand, and
# on qwen35-rand, qwen35moe-rand and deepseek2-rand (dequantized where they
# stand, then V heads reordered and kv_b_proj split as the others)
for pq in "deepseek2kimi kimi deepseek2-rand" "qwen3moect ct qwen3moe-rand" "qwen3moegptq gptq qwen3moe-rand" \
          "deepseek2gptq gptq deepseek2-rand" "deepseek2ct ct deepseek2-rand" \
          "glm4moect ct glm4moe-rand" "glm4moegptq gptq glm4moe-rand" \
          "qwen35ct ct qwen35-rand" "qwen35gptq gptq qwen35-rand" \
          "qwen35moect ct qwen35moe-rand" "qwen35moegptq gptq qwen35moe-rand" \
          "llama3bitnet bitnet llama3rope-rand" "qwen35bitnet bitnet qwen35-rand" \
          "qwen35moebitnet bitnet qwen35moe-rand" "deepseek2bitnet bitnet deepseek2-rand"; do
    read -r pm pk pf <<<"$pq"
    if ! mkqpack "$pk" "$TMP/$pm-rand" "$pf"; then
        skip_block "packed experts manifests ($pm)" "no python3 with NumPy, or no models/$pf" 16
    elif need_jq "packed experts manifests ($pm)" && need_fixture "models/$pf" "packed experts manifests ($pm)" 16; then
        for t in f32 f16 bf16 q8_0; do
            CONVERT_INPUT=$TMP/$pm-rand KEY_ORDER=1 convert_manifest "$ROOT/tests/data/qpack/$pm-rand-$t.json"
        done
        fixture_block_end
    fi
    rm -rf "$TMP/$pm-rand"
done
