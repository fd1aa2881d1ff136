#!/usr/bin/env bash
# tests/data/mm/make_refs.sh — remakes the manifests of this folder: llama.cpp
# e21cdc11's conversion of the multimodal checkpoints tests/tools/mkmm makes
# from the fixtures' text-only ones (see README.md). Not run by the tests.
#
#   tests/data/mm/make_refs.sh BUILD FIXTURES LLAMA_CPP_DIR REF_TOOLS WORK
#
# BUILD: a build folder holding tests/tools/mkmm; FIXTURES: the fixtures
# folder (models/{qwen35,qwen35moe,gemma4,gemma3,mistral3}-rand); LLAMA_CPP_DIR: llama.cpp
# at e21cdc11a0461d8b0cbd28cc356d993bf6be7282 (convert_hf_to_gguf.py,
# gguf-py); REF_TOOLS: the fixtures' reference tools (convert_upstream.py,
# gguf_manifest.py, pyshim/); WORK: a scratch folder outside the repository
# (the checkpoints and GGUF files go there).
set -eu
[ $# -eq 5 ] || { sed -n 2,13p "$0"; exit 2; }
BUILD=$1 FIX=$2 N=$3 R=$4 WORK=$5
OUT=$(cd "$(dirname "$0")" && pwd)
# the mkmm family and fixture of a projector's checkpoint, as the manifests say them
mkmm_args() { if [ "$1" = gemma4v ]; then echo "gemma4-vision models/gemma4-rand"; else echo "$1 models/$1-rand"; fi; }
mkdir -p "$WORK/shim"
# gguf-py's writer imports tqdm for its progress bar only: a no-op stand-in
# when it is not installed (the files do not depend on it)
/usr/bin/python3 -c 'import tqdm' 2>/dev/null ||
    printf 'class tqdm:\n    def __init__(self, *a, **k): pass\n    def update(self, n=1): pass\n    def close(self): pass\n' \
        >"$WORK/shim/tqdm.py"
for fam in qwen35 qwen35moe gemma4 gemma3 mistral3; do
    rm -rf "${WORK:?}/$fam-mm"
    "$BUILD/tests/tools/mkmm" "$fam" "$FIX/models/$fam-rand" "$WORK/$fam-mm"
    for t in f32 f16 bf16 q8_0; do
        PYTHONPATH="$WORK/shim:$R/pyshim:$N/gguf-py:$N" /usr/bin/python3 "$R/convert_upstream.py" \
            "$N/convert_hf_to_gguf.py" "$WORK/$fam-mm" --outtype "$t" --outfile "$WORK/$fam-mm-$t.gguf" \
            >"$WORK/$fam-mm-$t.log" 2>&1
        /usr/bin/python3 "$R/gguf_manifest.py" "$WORK/$fam-mm-$t.gguf" \
            "llama.cpp e21cdc11 convert_hf_to_gguf.py --outtype $t" \
            "llama.cpp e21cdc11a0461d8b0cbd28cc356d993bf6be7282: tools/convert_upstream.py (upstream convert_hf_to_gguf.py; set_vocab tries tokenizer.model first, as upstream Qwen3Model does) $fam-mm (mkmm $fam models/$fam-rand $fam-mm) --outtype $t --outfile $fam-mm-$t.gguf" \
            >"$OUT/$fam-mm-$t.json"
    done
done
# Gemma 4 without an audio tower (mkmm gemma4-vision; the folder is named
# gemma4v-mm: gguf-py would take "vision" in gemma4-vision-mm for a
# general.finetune)
rm -rf "${WORK:?}/gemma4v-mm"
"$BUILD/tests/tools/mkmm" gemma4-vision "$FIX/models/gemma4-rand" "$WORK/gemma4v-mm"
# the projector files (convert_hf_to_gguf.py --mmproj) of the families
# gguf-convert --mmproj converts
for fam in gemma3 qwen35 qwen35moe gemma4 gemma4v mistral3; do
    for t in f32 f16 bf16 q8_0; do
        PYTHONPATH="$WORK/shim:$R/pyshim:$N/gguf-py:$N" /usr/bin/python3 "$R/convert_upstream.py" \
            "$N/convert_hf_to_gguf.py" "$WORK/$fam-mm" --mmproj --outtype "$t" \
            --outfile "$WORK/$fam-mmproj-$t.gguf" >"$WORK/$fam-mmproj-$t.log" 2>&1
        /usr/bin/python3 "$R/gguf_manifest.py" "$WORK/$fam-mmproj-$t.gguf" \
            "llama.cpp e21cdc11 convert_hf_to_gguf.py --mmproj --outtype $t" \
            "llama.cpp e21cdc11a0461d8b0cbd28cc356d993bf6be7282: tools/convert_upstream.py (upstream convert_hf_to_gguf.py; set_vocab tries tokenizer.model first, as upstream Qwen3Model does) $fam-mm (mkmm $(mkmm_args "$fam") $fam-mm) --mmproj --outtype $t --outfile $fam-mmproj-$t.gguf" \
            >"$OUT/$fam-mmproj-$t.json"
    done
done
