#!/usr/bin/env bash
# bench/run.sh — gguf-run's speed beside llama.cpp's llama-bench on the same
# files: prompt processing of 512 tokens (pp512) and generation of 128
# (tg128), same thread count, for Q4_0, Q8_0, Q4_K_M and Q6_K of a generated
# LLaMA of about 970 MiB at F16 (dim 2048, 8 layers, ffn 5632, vocab 32000;
# made by tests/tools/mkhf, converted and quantized with our tools).
# FAMILIES (default llama; all: every family mkhf --families lists) adds a
# row set per family, each a generated model of realistic width (shape):
# llama250m (a 250M LLaMA: dim 1024, 16 layers, ffn 2816, GQA 16/4),
# llama1b (0.9B: dim 2048, 16 layers, ffn 5632, GQA 16/8), qwen2
# (Qwen2.5-1.5B's widths: q/k/v biases, GQA 12/2, tied), qwen3 (heads of
# 128, q/k norms), mixtral (8
# experts of ffn 2816, top 2, dim 1024), qwen3moe (32 experts of 768,
# top 4, dim 1024), phi3 (the llama row's sizes with fused qkv and
# gate-up), gemma2 (dim 1536, heads of 256, post-norms, soft-caps, tied),
# gemma3 (Gemma 2's layout with q/k norms, 12 layers: 10 local, 2 global),
# gptoss (32 MXFP4 experts of 768, top 4, dim 1024, attention biases
# and sinks), qwen35 (Qwen 3.5's blocks at dim 1024: 6 Gated DeltaNet of
# 16 key/value heads of 128, 2 gated attention of 8 heads of 256, ffn
# 3584, tied), qwen35moe (the same blocks with 32 value heads, 32 experts
# of 256 top 8 and a shared expert of 256), gemma4 (gemma-4-26B-A4B's
# layout at dim 1024: 10 sliding blocks of 128-wide heads, 2 full of 256
# with K as V, a dense GeGLU of 2048 beside 32 experts of 256 top 8) and
# gemma4e (gemma-4-E2B's: per-layer inputs of 256, the last 6 of 12
# blocks sharing KV, their GeGLU twice 4096 wide), mistral3 (the llama
# row's sizes with heads of 128, Mistral Small 3's layout), glm4moe
# (GLM-4.5's blocks at dim 1024: block 0 dense of 2816, then 32 experts of
# 768 top 4 with a shared expert, partial rope; its NextN block is loaded,
# not run) and deepseek2 (DeepSeek-V3's latent attention at dim 1024: 16
# heads of 128 + 64 rotated, q rank 512, kv rank 256; GLM-4.5's
# feed-forward sizes). Experts that come MXFP4 from the checkpoint (gpt-oss's) stay
# MXFP4 in every TYPE (--tensor-type; requantizing them to the preset's
# types would need --allow-requantize): such rows differ in the other
# tensors only. The MiB/tok column is what one generated token reads
# of the weights: every matrix but token_embd (one row of it), the expert
# matrices only for the experts a token is routed to (used / count). The
# bound column is the generation speed the memory allows: the machine's
# read bandwidth (tests/tools/membw, THREADS threads) over MiB/tok; the
# share of it our tg128 reaches follows in brackets.
#
#   bench/run.sh                      (BUILD=build, THREADS=2 by default)
#   LLAMA_BENCH=/path/to/llama-bench bench/run.sh
#   FAMILIES="qwen3moe mixtral" TYPES=Q4_K_M bench/run.sh
#   FAMILIES=all TYPES=Q4_0 REPS=1 bench/run.sh       (every family, quickly)
#
# llama-bench runs when LLAMA_BENCH points at it (built from llama.cpp
# c392e50 or e21cdc11 outside this repository); the ratios are ours / theirs in tokens
# per second (above 1: we are faster). IK_BENCH adds ik_llama.cpp's
# llama-bench (github ikawrakow/ik_llama.cpp 8337e4c, built outside the
# repository with -DGGML_IQK_FA_ALL_QUANTS=OFF, target llama-bench): its
# columns and ratios follow; its CSV output quotes fields holding commas,
# so it is read with Python's csv module. COMPETE=1 runs a busy loop beside
# every measurement (a user's machine is never idle). A benchmark, never
# part of make test.
. "$(dirname "$0")/lib.sh"
THREADS=${THREADS:-2}
REPS=${REPS:-5}
TYPES=${TYPES:-"Q4_0 Q8_0 Q4_K_M Q6_K IQ4_XS"}
for b in gguf-convert gguf-quantize gguf-run tests/tools/mkhf tests/tools/membw; do
    [ -x "$BIN/$b" ] || { echo "build first: make all build/tests/tools/mkhf build/tests/tools/membw (no $BIN/$b)" >&2; exit 1; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/run-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAMILIES=${FAMILIES:-llama}
[ "$FAMILIES" != all ] || FAMILIES=$("$BIN/tests/tools/mkhf" --families | awk '{ print $1 }')
# shape FAMILY: mkhf's arguments for that family's benchmark model
shape() {
    case $1 in
        llama) echo --dim 2048 --layers 8 --ffn 5632 --heads 16 --kv-heads 8 ;;
        llama250m) echo --dim 1024 --layers 16 --ffn 2816 --heads 16 --kv-heads 4 ;;
        llama1b) echo --dim 2048 --layers 16 --ffn 5632 --heads 16 --kv-heads 8 ;;
        qwen2) echo --family qwen2 --dim 1536 --layers 8 --ffn 8960 --heads 12 --kv-heads 2 ;;
        qwen3) echo --family qwen3 --dim 2048 --layers 8 --ffn 6144 --heads 16 --kv-heads 8 --head-dim 128 ;;
        mixtral) echo --family mixtral --dim 1024 --layers 8 --ffn 2816 --heads 16 --kv-heads 8 \
                      --experts 8 --experts-used 2 ;;
        qwen3moe) echo --family qwen3moe --dim 1024 --layers 8 --ffn 3072 --heads 16 --kv-heads 4 \
                       --head-dim 128 --experts 32 --experts-used 4 --moe-ffn 768 ;;
        phi3) echo --family phi3 --dim 2048 --layers 8 --ffn 5632 --heads 16 --kv-heads 8 ;;
        gemma2) echo --family gemma2 --dim 1536 --layers 8 --ffn 6144 --heads 8 --kv-heads 4 --head-dim 256 ;;
        gemma3) echo --family gemma3 --dim 1536 --layers 12 --ffn 6144 --heads 4 --kv-heads 1 --head-dim 256 ;;
        gptoss) echo --family gptoss --dim 1024 --layers 8 --heads 16 --kv-heads 2 --head-dim 64 \
                     --experts 32 --experts-used 4 --moe-ffn 768 ;;
        qwen35) echo --family qwen35 --dim 1024 --layers 8 --ffn 3584 --heads 8 --kv-heads 2 --head-dim 256 \
                     --lin-k-heads 16 --lin-v-heads 16 --lin-head-dim 128 ;;
        qwen35moe) echo --family qwen35moe --dim 1024 --layers 8 --heads 8 --kv-heads 2 --head-dim 256 \
                        --lin-k-heads 16 --lin-v-heads 32 --lin-head-dim 128 \
                        --experts 32 --experts-used 8 --moe-ffn 256 --shexp-ffn 256 ;;
        gemma4) echo --family gemma4 --dim 1024 --layers 12 --ffn 2048 --heads 8 --kv-heads 4 --head-dim 128 \
                     --global-head-dim 256 --experts 32 --experts-used 8 --moe-ffn 256 ;;
        gemma4e) echo --family gemma4e --dim 1024 --layers 12 --ffn 4096 --heads 8 --kv-heads 1 --head-dim 128 \
                      --global-head-dim 256 --ple-dim 256 --kv-shared 6 ;;
        mistral3) echo --family mistral3 --dim 2048 --layers 8 --ffn 5632 --heads 16 --kv-heads 8 --head-dim 128 ;;
        glm4moe) echo --family glm4moe --dim 1024 --layers 8 --ffn 2816 --heads 16 --kv-heads 4 --head-dim 128 \
                      --experts 32 --experts-used 4 --moe-ffn 768 ;;
        deepseek2) echo --family deepseek2 --dim 1024 --layers 8 --ffn 2816 --heads 16 --kv-heads 16 \
                        --head-dim 128 --q-lora 512 --kv-lora 256 --rope-dim 64 \
                        --experts 32 --experts-used 4 --moe-ffn 768 ;;
        *) echo "no benchmark shape for family $1: add one to bench/run.sh's shape" \
                "(mkhf's families: $("$BIN/tests/tools/mkhf" --families | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $1 }'))" >&2
           return 1 ;;
    esac
}
# quant_args F16: gguf-quantize's options for that conversion: experts it
# holds as MXFP4 stay MXFP4 (see above)
quant_args() {
    if "$BIN/gguf-inspect" --json "$1" | jq -e '[.tensors[] | select(.type | ascii_downcase == "mxfp4")] | length > 0' >/dev/null; then
        echo --tensor-type _exps=mxfp4
    fi
}
# MiB of weights one generated token reads (see above)
read_mib() {
    "$BIN/gguf-inspect" --json "$1" | jq -r '
        (.metadata | to_entries | map(select(.key | endswith(".expert_count"))) | .[0].value.value // 0) as $n
      | (.metadata | to_entries | map(select(.key | endswith(".expert_used_count"))) | .[0].value.value // 0) as $u
      | [.tensors[] | select(.name != "token_embd.weight")
         | if (.name | test("_exps\\.")) then .bytes * $u / $n else .bytes end] | add / 1048576 | . * 10 | floor / 10'
}

# the machine's read bandwidth with THREADS threads, GB/s
BW=$("$BIN/tests/tools/membw" "$THREADS")
echo "memory read bandwidth: $BW GB/s ($THREADS threads)"

# 512 prompt ids (BOS then ordinary pieces), as one comma list
ids=$(awk 'BEGIN { printf "1"; for (i = 1; i < 512; i++) printf ",%d", 300 + (i * 7919) % 1500 }')


# ours: a run prints "timing: prompt N tokens X tok/s, generation M tokens Y tok/s".
# As llama-bench does, pp512 is the 512-token prompt as one batch and tg128
# is 128 tokens generated from an empty context (here after BOS alone).
ours_pp() {
    "$BIN/gguf-run" -m "$1" --prompt-ids "$ids" -n 1 --ids -t "$THREADS" 2>&1 >/dev/null |
        sed -nE 's/^timing: prompt [0-9]+ tokens ([0-9.]+) tok\/s.*/\1/p'
}
ours_tg() {
    "$BIN/gguf-run" -m "$1" --prompt-ids 1 -n 128 --ids -t "$THREADS" 2>&1 >/dev/null |
        sed -nE 's/^timing: .*generation [0-9]+ tokens ([0-9.]+) tok\/s.*/\1/p'
}
theirs() { # file -> "pp tg", one repetition (after llama-bench's own warm-up)
    "$LLAMA_BENCH" -m "$1" -p 512 -n 128 -t "$THREADS" -r 1 -o json 2>/dev/null |
        jq -r '(map(select(.n_prompt > 0))[0].avg_ts | tostring) + " " + (map(select(.n_gen > 0))[0].avg_ts | tostring)'
}
have_llama() { [ -n "${LLAMA_BENCH:-}" ] && [ -x "$LLAMA_BENCH" ]; }
have_ik() { [ -n "${IK_BENCH:-}" ] && [ -x "$IK_BENCH" ]; }
ik() { # file -> "pp tg", one repetition, from ik_llama.cpp's llama-bench CSV
    "$IK_BENCH" -m "$1" -p 512 -n 128 -t "$THREADS" -r 1 -o csv 2>/dev/null | python3 -c '
import csv, sys
pp = tg = None
for row in csv.DictReader(sys.stdin):
    if int(row["n_prompt"]) > 0: pp = row["avg_ts"]
    if int(row["n_gen"]) > 0: tg = row["avg_ts"]
print(pp, tg)'
}
if [ "${COMPETE:-0}" = 1 ]; then
    ( while :; do :; done ) &
    busy=$!
    trap 'kill $busy 2>/dev/null; rm -rf "$WORK"' EXIT
    echo "a busy loop runs beside every measurement (COMPETE=1)"
fi

# The machine's speed drifts by more than the differences measured (a
# shared VM), so the two programs take turns: each repetition runs ours,
# then llama-bench, then ours again, and the medians are compared.
for fam in $FAMILIES; do
args=$(shape "$fam") || exit 1
# shellcheck disable=SC2086 # the arguments are words
"$BIN/tests/tools/mkhf" "$WORK/hf" $args --vocab 32000 --dtype f16
"$BIN/gguf-convert" -q "$WORK/hf" --outtype f16 -o "$WORK/F16.gguf"
rm -rf "$WORK/hf"
echo
echo "$fam model ($args): $(($(stat -c %s "$WORK/F16.gguf") / 1048576)) MiB at F16; threads $THREADS; median of $REPS runs"
printf '%-8s %9s %8s %14s %9s %14s %9s %9s %13s' TYPE "SIZE MiB" "MiB/tok" "pp512 ours" theirs "tg128 ours" theirs \
    "ratio pp/tg" "bound (ours)"
if have_ik; then printf ' %9s %9s %11s' "ik pp512" "ik tg128" "ratio ik"; fi
echo
for t in $TYPES; do
    f=$WORK/$t.gguf
    # shellcheck disable=SC2046 # the options are words
    "$BIN/gguf-quantize" $(quant_args "$WORK/F16.gguf") "$WORK/F16.gguf" "$f" "$t" >/dev/null 2>&1
    opps=() otgs=() tpps=() ttgs=() ipps=() itgs=()
    for _ in $(seq "$REPS"); do
        opps+=("$(ours_pp "$f")")
        if have_llama; then
            read -r a b <<<"$(theirs "$f")"
            tpps+=("$a") ttgs+=("$b")
        fi
        otgs+=("$(ours_tg "$f")")
        if have_ik; then
            read -r a b <<<"$(ik "$f")"
            ipps+=("$a") itgs+=("$b")
        fi
    done
    opp=$(printf '%s\n' "${opps[@]}" | median) otg=$(printf '%s\n' "${otgs[@]}" | median)
    if have_llama; then
        tpp=$(printf '%s\n' "${tpps[@]}" | median) ttg=$(printf '%s\n' "${ttgs[@]}" | median)
        ratio=$(awk -v a="$opp" -v b="$tpp" -v c="$otg" -v d="$ttg" 'BEGIN { printf "%.2f/%.2f", a / b, c / d }')
        tpp=$(printf '%.1f' "$tpp") ttg=$(printf '%.1f' "$ttg")
    else
        tpp=- ttg=- ratio=-
    fi
    mib=$(read_mib "$f")
    bound=$(awk -v bw="$BW" -v m="$mib" -v o="$otg" 'BEGIN { b = bw * 1e9 / (m * 1048576); printf "%.1f (%d%%)", b, 100 * o / b }')
    printf '%-8s %9d %8s %14.1f %9s %14.1f %9s %9s %13s' "$t" $(($(stat -c %s "$f") / 1048576)) "$mib" \
        "$opp" "$tpp" "$otg" "$ttg" "$ratio" "$bound"
    if have_ik; then
        ipp=$(printf '%s\n' "${ipps[@]}" | median) itg=$(printf '%s\n' "${itgs[@]}" | median)
        printf ' %9.1f %9.1f %11s' "$ipp" "$itg" \
            "$(awk -v a="$opp" -v b="$ipp" -v c="$otg" -v d="$itg" 'BEGIN { printf "%.2f/%.2f", a / b, c / d }')"
    fi
    echo
    echo "  runs: pp ours ${opps[*]} | theirs ${tpps[*]:-} | ik ${ipps[*]:-}; tg ours ${otgs[*]} | theirs ${ttgs[*]:-} | ik ${itgs[*]:-}" >&2
    rm -f "$f"
done
rm -f "$WORK/F16.gguf"
done
[ -n "${LLAMA_BENCH:-}" ] || echo "(llama-bench not run: set LLAMA_BENCH to its path)"
