#!/usr/bin/env bash
# tests/fuzz/campaign.sh — runs every libFuzzer harness for SECONDS each
# (default 600) with a memory limit, so that an input making a parser take
# more than 512 MB counts as a failure, and prints one line per harness:
#   NAME execs=N crashes=N ooms=N timeouts=N
#
#   make fuzz && tests/fuzz/campaign.sh [SECONDS] [JOBS] [HARNESS...]
#
# Corpora live in ${FUZZ_CORPUS:-/tmp/ggufkit-fuzz}/NAME (never in the
# repository), seeded once from a few small files the build makes and, when
# present, ../shared/fixtures. JOBS harnesses run at once (default 1).
# Exit status 1 when any harness found a crash, an OOM or a timeout; the
# inputs are in the corpus directory as crash-*, oom-*, timeout-*.
#
# ASan's quarantine of freed memory is capped at 64 MB (its default, 256 MB,
# fills over millions of runs of a fast harness and, with the shadow and the
# corpus, took fuzz_reader to 509 MB with 26 MB live: an "OOM" that no input
# caused, its input using 32 MB alone), so the 512 MB limit measures inputs.
set -u
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64}
cd "$(dirname "$0")/../.."
secs=${1:-600}
jobs=${2:-1}
shift $(( $# > 2 ? 2 : $# ))
root=${FUZZ_CORPUS:-/tmp/ggufkit-fuzz}
fix=${GGUFKIT_FIXTURES:-../shared/fixtures}
names=("$@")
[ ${#names[@]} -gt 0 ] || names=($(ls build-fuzz | sed -n 's/^\(fuzz_[a-z_0-9]*\)$/\1/p'))

seed() { # NAME: a few small inputs of the harness's format
    local d=$root/$1
    mkdir -p "$d"
    [ -z "$(ls -A "$d")" ] || return 0
    case $1 in
    fuzz_reader|fuzz_modelcheck|fuzz_memory)
        [ -x build/tests/tools/mkbad ] && build/tests/tools/mkbad "$d" >/dev/null 2>&1
        [ -x build/tests/tools/mkmodel ] && build/tests/tools/mkmodel "$d/tiny.gguf" --dim 32 \
            --layers 1 --ffn 64 --heads 2 --kv-heads 1 --vocab 300 >/dev/null 2>&1 ;;
    fuzz_imatrix) cp "$fix/reference/wp-llama-5m.imatrix" "$fix/upstream/imatrix/wp-llama-5m.imatrix.gguf" "$d/" 2>/dev/null ;;
    fuzz_json) cp "$fix"/models/*/hf/config.json "$d/" 2>/dev/null
               cp "$fix"/models/wp-llama-5m/hf/tokenizer_config.json "$d/t.json" 2>/dev/null ;;
    fuzz_spm) cp "$fix/models/wp-llama-5m/hf/tokenizer.model" "$d/" 2>/dev/null ;;
    fuzz_tokenizer) # byte 0: a GGUF vocabulary; 247/246: text for the gemma4/qwen35 built-ins
        local fam
        for fam in qwen35 gemma4; do
            [ -x build/tests/tools/mktokjson ] && [ -x build/gguf-convert ] && mkdir -p "$d.tmp" &&
                build/tests/tools/mktokjson $fam "$d.tmp" --model-folder &&
                build/gguf-convert -q "$d.tmp" --vocab-only -o "$d.tmp.gguf" >/dev/null 2>&1 &&
                { printf '\000'; cat "$d.tmp.gguf"; } >"$d/$fam-vocab.gguf"
            rm -rf "$d.tmp" "$d.tmp.gguf"
        done
        printf '\367 the\n\n\n<|tool_call>\xe4\xb8\xad x' >"$d/gemma4.txt"
        printf '\366 e\xcc\x81t\xc3\xa9 don'"'"'t 123' >"$d/qwen35.txt" ;;
    fuzz_tokjson) mkdir -p "$d.tmp"
        local fam
        for fam in qwen35 gemma4; do
            [ -x build/tests/tools/mktokjson ] && build/tests/tools/mktokjson $fam "$d.tmp" && cp "$d.tmp/tokenizer.json" "$d/$fam.json"
        done
        rm -rf "$d.tmp" ;;
    fuzz_hashmanifest) cp tests/data/hash/*.txt "$d/" 2>/dev/null ;;
    fuzz_fp8) # config.json, NUL, a safetensors file: a BitNet weight U8 [2, 4] and its BF16 scale
        local h='{"a.weight":{"dtype":"U8","shape":[2,4],"data_offsets":[0,8]},"a.weight_scale":{"dtype":"BF16","shape":[1],"data_offsets":[8,10]}}'
        { printf '{"quantization_config":{"quant_method":"bitnet"}}\000'
          printf "\\x$(printf %02x ${#h})\\000\\000\\000\\000\\000\\000\\000%s" "$h"
          printf '\xe4\x1b\x00\xff\x55\xaa\x01\x80\x40\x40'; } >"$d/bitnet" ;;
    fuzz_qpack) # h[13] odd: BitNet, 2 × 8 bytes, scale 2.0f
        { printf '\000\000\002\010\000\000\001\002\000\000\000\100\000\001\000\000'
          printf '\xe4\x1b\x00\xff\x55\xaa\x01\x80\xe4\x1b\x00\xff\x55\xaa\x01\x80'; } >"$d/bitnet" ;;
    fuzz_lora_config) cp "$fix"/upstream-next/adapters/*/adapter_config.json "$d/" 2>/dev/null ;;
    fuzz_recipe) printf 'preset: Q4_K_M\noutput_tensor_type: q8_0\ntensors:\n  - match: "attn_v"\n    type: q8_0\n' >"$d/r.yaml" ;;
    *) ;;
    esac
}

bad=0
run_one() {
    local n=$1 d=$root/$1 log=$root/$1.log
    seed "$n"
    (cd "$d" && nice -n 10 "$OLDPWD/build-fuzz/$n" -rss_limit_mb=512 -max_total_time="$secs" \
        -timeout=10 -print_final_stats=1 -max_len=65536 . >"$log" 2>&1)
    local execs crashes ooms timeouts
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    crashes=$(ls "$d" | grep -c '^crash-')
    ooms=$(ls "$d" | grep -c '^oom-')
    timeouts=$(ls "$d" | grep -c '^timeout-')
    echo "$n execs=${execs:-0} crashes=$crashes ooms=$ooms timeouts=$timeouts"
    [ $((crashes + ooms + timeouts)) -eq 0 ]
}
running=0
for n in "${names[@]}"; do
    run_one "$n" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n || bad=1; running=$((running - 1)); fi
done
while [ "$running" -gt 0 ]; do wait -n || bad=1; running=$((running - 1)); done
exit $bad
