#!/bin/sh
# Records what llama.cpp e21cdc11 allocates for the fixture models: the
# KV cache, recurrent-state and compute-buffer lines of its load log, as
# tests/data/memory/llama-e21.tsv (see README.md).
#
#   GGUFKIT_FIXTURES=.../fixtures LLAMA=.../llama-e21/build/bin \
#     sh tests/data/memory/record.sh build/gguf-convert WORKDIR > tests/data/memory/llama-e21.tsv
set -eu
CONVERT=$1
WORK=$2
FIX=${GGUFKIT_FIXTURES:?}
LLAMA=${LLAMA:?}
mkdir -p "$WORK"
models="llama3rope qwen3 qwen3moe mixtral phi3 gptoss gemma2 gemma3 gemma4 qwen35 qwen35moe mistral3 glm4moe deepseek2"
for m in $models; do
    "$CONVERT" "$FIX/models/$m-rand" --outtype f16 -o "$WORK/$m-rand-f16.gguf" >/dev/null
done
ln -sf "$FIX/reference/stories260K-f32.gguf" "$WORK/stories260K-f32.gguf"
ln -sf "$FIX/reference/wp-llama-5m-Q8_0.gguf" "$WORK/wp-llama-5m-Q8_0.gguf"
printf 'model\tctx\tctk\tctv\tcache\tcells\tlayers\tsize_mib\tk_mib\tv_mib\n'
for m in $models stories260K wp-llama-5m; do
    case $m in
    stories260K) f=stories260K-f32.gguf ;;
    wp-llama-5m) f=wp-llama-5m-Q8_0.gguf ;;
    *) f=$m-rand-f16.gguf ;;
    esac
    for run in "300 f16 f16" "4096 f16 f16" "65536 f16 f16" "4096 q8_0 q8_0" \
               "65536 q8_0 q8_0" "4096 f32 q4_0"; do
        set -- $run
        "$LLAMA/llama-completion" -m "$WORK/$f" -c "$1" -n 1 -p hi -no-cnv --no-warmup -t 1 \
            --cache-type-k "$2" --cache-type-v "$3" 2>&1 |
        awk -v m="$f" -v c="$1" -v tk="$2" -v tv="$3" '
            /creating +SWA KV cache/ { kind = "kv-swa" }
            /creating non-SWA KV cache/ { kind = "kv" }
            /^llama_kv_cache: size =/ {
                gsub(/[(),]/, " ")
                # fields: 4 size MiB, 6 cells, 8 layers, 15 K (or R) MiB, 20 V (or S) MiB
                printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m, c, tk, tv,
                       kind == "" ? "kv" : kind, $6, $8, $4, $15, $20
                kind = ""
            }
            /^llama_memory_recurrent: size =/ {
                gsub(/[(),]/, " ")
                printf "%s\t%s\t%s\t%s\trecurrent\t%s\t%s\t%s\t%s\t%s\n", m, c, tk, tv,
                       $6, $8, $4, $15, $20
            }
            /CPU compute buffer size/ {
                printf "%s\t%s\t%s\t%s\tcompute\t-\t-\t%s\t-\t-\n", m, c, tk, tv, $(NF-1)
            }'
    done
done
