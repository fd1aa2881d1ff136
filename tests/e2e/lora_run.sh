#!/usr/bin/env bash
# tests/e2e/lora_run.sh — gguf-run --lora / --lora-scaled against llama.cpp e21cdc11.
#
# Three PEFT adapters (the fixtures' qwen3-lora and llama-lora, and one on
# qwen3moe-rand's experts made here by mklora) are converted by
# `gguf-convert ADAPTER_DIR --base BASE_DIR --outtype T`, their base models
# by gguf-convert --outtype f32. With the F32 adapter at scale 1 the greedy
# ids of three prompts equal llama.cpp's (upstream-next/greedy/*-lora.pN.json,
# tests/data/lora-run/qwen3moe-lora.pN.json), also with the prompt run
# token by token; the first 4 steps' logits with the f32, f16 and q8_0
# adapters are llama.cpp's bit for bit (tests/data/lora-run/logits.json),
# and so are those of mklora's adapters on qwen2, gemma2, gemma3, mixtral
# and gpt-oss; greedy ids of Qwen 3.5 (qwen35, qwen35moe), gpt-oss, Mistral 3,
# Gemma 4, GLM-4.5 and DeepSeek-V3 adapters (tests/data/lora-run/greedy-more.json);
# DeepSeek's pairs on the q path and kv_a_mqa are checked and, as in llama.cpp,
# unused.
# Every mode takes the adapters (perplexity, KL divergence, --verify,
# --imatrix), scale 0 gives the model's own numbers, and bad adapters or
# scales are refused with exit 1 naming the file.
source "$(dirname "$0")/lib.sh"
RUN=$BIN/gguf-run
CONVERT=$BIN/gguf-convert
MKLORA=$BIN/tests/tools/mklora
MKMODEL=$BIN/tests/tools/mkmodel
DATA=$ROOT/tests/data/lora-run
NEXT=$FIX/upstream-next
TEXT=$FIX/corpora/botchan.txt
W=$TMP/lora-run
mkdir -p "$W"

# --- the command line, on a synthetic model (no adapter needed) -------------------

GOOD=$W/good.gguf
if [ -x "$MKMODEL" ] && "$MKMODEL" "$GOOD" --dim 64 --layers 2 --ffn 128 --heads 4 --kv-heads 2 \
       --vocab 300 --type f32 >/dev/null 2>&1; then
    refused "--lora: a missing adapter is refused naming it" "$W/no-such.gguf: " \
        "$RUN" -m "$GOOD" --lora "$W/no-such.gguf" --prompt-ids 1 -n 1
    refused "--lora: a model given as an adapter is refused naming it" \
        "$GOOD: not a LoRA adapter: general.type is absent" \
        "$RUN" -m "$GOOD" --lora "$GOOD" --prompt-ids 1 -n 1
    for sc in abc 1e9 nan inf -20000 ""; do
        refused "--lora-scaled: scale '$sc' is refused naming the file" \
            "$GOOD: --lora-scaled: the scale '$sc' is not a number in [-10000, 10000]" \
            "$RUN" -m "$GOOD" --lora-scaled "$GOOD" "$sc" --prompt-ids 1 -n 1
    done
    usage_error "$RUN" "--lora-scaled without its scale" \
        "--lora-scaled needs FILE:SCALE[,FILE:SCALE...] or FILE SCALE" \
        -m "$GOOD" --prompt-ids 1 --lora-scaled "$GOOD"
    usage_error "$RUN" "--lora: an empty name in a list" "--lora: an empty file name in '$GOOD,'" \
        -m "$GOOD" --prompt-ids 1 --lora "$GOOD,"
    # llama.cpp e21cdc11's list form: each item a file and its scale
    refused "--lora-scaled FILE:S,FILE:S: each scale is checked (the second, naming its file)" \
        "$GOOD: --lora-scaled: the scale '20000' is not a number in [-10000, 10000]" \
        "$RUN" -m "$GOOD" --lora-scaled "$W/a.gguf:0.5,$GOOD:20000" --prompt-ids 1 -n 1
else
    skip_block "--lora command line" "no mkmodel model" 11
fi

# --- adapters converted by gguf-convert, against llama.cpp ---------------------------

# FAMILY ADAPTER_SOURCE BASE GREEDY_DIR: the fixtures' two, mklora's MoE one
FAMILIES="qwen3:$NEXT/adapters/qwen3-lora:qwen3-rand:$NEXT/greedy
llama:$NEXT/adapters/llama-lora:llama3rope-rand:$NEXT/greedy
qwen3moe:mklora:qwen3moe-rand:$DATA"
N_FAMILY=7 N_MODES=9 N_MORE=6
N=$((3 * N_FAMILY + N_MODES + N_MORE + 25))

if ! "$CONVERT" --help 2>/dev/null | grep -q -- '--base'; then
    # the adapter conversion (issue 30) is not in this gguf-convert yet
    skip_block "LoRA adapters against llama.cpp" "gguf-convert has no --base: it cannot convert adapters" $N
elif need_fixture upstream-next/adapters "LoRA adapters against llama.cpp" $N; then
    for row in $FAMILIES; do
        IFS=: read -r fam src base refs <<<"$row"
        m=$W/$base-f32.gguf a=$W/$fam-lora
        ok=1
        if [ "$src" = mklora ]; then # rank 8, alpha 16, on q/k/v/o and every expert's gate/up/down
            src=$W/$fam-lora-peft
            "$MKLORA" "$FIX/models/$base" "$src" --experts >"$W/err" 2>&1 || ok=0
        fi
        [ $ok = 1 ] && "$CONVERT" -q "$FIX/models/$base" --outtype f32 -o "$m" >"$W/err" 2>&1 || ok=0
        for t in f32 f16 q8_0; do
            [ $ok = 1 ] && "$CONVERT" -q "$src" --base "$FIX/models/$base" --outtype $t -o "$a-$t.gguf" \
                >"$W/err" 2>&1 || ok=0
        done
        if [ $ok = 0 ]; then
            why=$(tail -1 "$W/err")
            for i in $(seq $N_FAMILY); do fail "LoRA $fam" "conversion failed: $why"; done
            continue
        fi
        for p in 0 1 2; do
            j=$refs/$fam-lora.p$p.json
            want=$(jq -r '.greedy_ids | map(tostring) | join(" ")' "$j")
            got=$("$RUN" -m "$m" --lora "$a-f32.gguf" --prompt-ids "$(jq -r '.prompt_ids | join(",")' "$j")" \
                  -n 32 --ids -t 2 2>"$W/err")
            if [ "$got" = "$want" ]; then pass "LoRA $fam p$p: 32 greedy tokens as llama.cpp e21cdc11"
            else fail "LoRA $fam p$p" "got [$got] want [$want] $(tail -1 "$W/err")"; fi
        done
        # the prompt token by token (-b 1): the same continuation
        j=$refs/$fam-lora.p0.json
        got=$("$RUN" -m "$m" --lora "$a-f32.gguf" --prompt-ids "$(jq -r '.prompt_ids | join(",")' "$j")" \
              -n 32 --ids -b 1 2>"$W/err")
        if [ "$got" = "$(jq -r '.greedy_ids | map(tostring) | join(" ")' "$j")" ]; then
            pass "LoRA $fam p0, prompt token by token: the same 32 tokens"
        else fail "LoRA $fam p0 token by token" "got [$got] $(tail -1 "$W/err")"; fi
        for t in f32 f16 q8_0; do
            e=$(jq -c --arg a "$fam-lora" --arg t $t '.entries[] | select(.adapter == $a and .outtype == $t)' \
                "$DATA/logits.json")
            "$RUN" -m "$m" --lora "$a-$t.gguf" --prompt-ids "$(jq -r '.prompt_ids | join(",")' <<<"$e")" \
                -n 4 --ids --dump-logits "$W/logits.f32" 4 >/dev/null 2>"$W/err"
            got=$(sha256sum <"$W/logits.f32" | cut -c1-64)
            if [ "$got" = "$(jq -r .sha256 <<<"$e")" ]; then
                pass "LoRA $fam $t: 4 steps' logits bit for bit as llama.cpp e21cdc11"
            else fail "LoRA $fam $t logits" "sha256 $got $(tail -1 "$W/err")"; fi
        done
    done

    # five more families with mklora's adapters: the 4 steps' logits
    while read -r e; do
        base=$(jq -r .base <<<"$e") m=$W/$(jq -r .base <<<"$e")-f32.gguf a=$W/$base-mk
        read -r -a targets <<<"$(jq -r '.adapter | sub("^mklora [^ ]+ ?"; "")' <<<"$e")"
        if "$MKLORA" "$FIX/models/$base" "$a" "${targets[@]}" >"$W/err" 2>&1 &&
           "$CONVERT" -q "$FIX/models/$base" --outtype f32 -o "$m" >"$W/err" 2>&1 &&
           "$CONVERT" -q "$a" --base "$FIX/models/$base" --outtype f32 -o "$a.gguf" >"$W/err" 2>&1 &&
           "$RUN" -m "$m" --lora "$a.gguf" --prompt-ids "$(jq -r '.prompt_ids | join(",")' <<<"$e")" \
               -n 4 --ids --dump-logits "$W/logits.f32" 4 >/dev/null 2>"$W/err" &&
           [ "$(sha256sum <"$W/logits.f32" | cut -c1-64)" = "$(jq -r .sha256 <<<"$e")" ]; then
            pass "LoRA $base (mklora${targets[*]:+ ${targets[*]}}): 4 steps' logits bit for bit as llama.cpp e21cdc11"
        else fail "LoRA $base logits" "$(tail -1 "$W/err")"; fi
    done < <(jq -c '.entries[] | select(.adapter | startswith("mklora "))' "$DATA/logits.json")

    # Qwen 3.5 (linear attention, attention, shared expert, router, per-expert
    # pairs), gpt-oss (attention, router), Mistral 3 (language_model.), Gemma 4
    # (per-layer inputs, router, dense MLP), GLM-4.5 (shared and routed experts)
    # and DeepSeek-V3 (latent attention's q_a/q_b/kv_a_mqa/o, experts): mklora's
    # adapters, 32 greedy tokens of three prompts as llama.cpp e21cdc11
    # (tests/data/lora-run/greedy-more.json)
    while read -r e; do
        base=$(jq -r .base <<<"$e") a=$W/$(jq -r .adapter <<<"$e")
        m=$W/$base-f32.gguf
        read -r -a args <<<"$(jq -r .mklora <<<"$e")"
        want=$(jq -r '.greedy_ids | map(tostring) | join(" ")' <<<"$e")
        if { [ -f "$a.gguf" ] || { "$MKLORA" "$FIX/models/$base" "$a" "${args[@]}" >"$W/err" 2>&1 &&
               "$CONVERT" -q "$a" --base "$FIX/models/$base" --outtype f32 -o "$a.gguf" >"$W/err" 2>&1; }; } &&
           { [ -f "$m" ] || "$CONVERT" -q "$FIX/models/$base" --outtype f32 -o "$m" >"$W/err" 2>&1; } &&
           got=$("$RUN" -m "$m" --lora "$a.gguf" --prompt-ids "$(jq -r '.prompt_ids | join(",")' <<<"$e")" \
                 -n 32 --ids -t 2 2>"$W/err") && [ "$got" = "$want" ]; then
            pass "LoRA $(jq -r .adapter <<<"$e") on $base, \"$(jq -r .prompt <<<"$e")\": 32 greedy tokens as llama.cpp e21cdc11"
        else fail "LoRA $(jq -r .adapter <<<"$e") greedy" "got [${got:-}] want [$want] $(tail -1 "$W/err")"; fi
    done < <(jq -c '.entries[]' "$DATA/greedy-more.json")

    # DeepSeek-V3: pairs on q_a, q_b and kv_a_mqa only are checked and unused
    # (llama.cpp multiplies them by plain mul_mat): the model's own ids
    m=$W/deepseek2-rand-f32.gguf a=$W/deepseek2-q
    if [ -f "$m" ] && "$MKLORA" "$FIX/models/deepseek2-rand" "$a" --match q_a_proj,q_b_proj,kv_a_proj_with_mqa >"$W/err" 2>&1 &&
       "$CONVERT" -q "$a" --base "$FIX/models/deepseek2-rand" --outtype f32 -o "$a.gguf" >"$W/err" 2>&1 &&
       got=$("$RUN" -m "$m" --lora "$a.gguf" --prompt-ids 1,291,334,341 -n 16 --ids 2>"$W/err") &&
       [ -n "$got" ] && [ "$got" = "$("$RUN" -m "$m" --prompt-ids 1,291,334,341 -n 16 --ids 2>/dev/null)" ]; then
        pass "LoRA deepseek2: pairs on attn_q_a, attn_q_b, attn_kv_a_mqa checked and unused, as llama.cpp e21cdc11"
    else fail "LoRA deepseek2 q-path pairs" "got [${got:-}] $(tail -1 "$W/err")"; fi

    # the modes, on qwen3 with its adapter
    m=$W/qwen3-rand-f32.gguf a=$W/qwen3-lora-f32.gguf
    ppl() { "$RUN" -m "$m" "$@" --perplexity "$TEXT" -c 128 --chunks 3 -t 2 2>/dev/null; }
    plain=$(ppl) zero=$(ppl --lora-scaled "$a" 0) with=$(ppl --lora "$a" --kl-divergence-base "$W/lora.kld")
    [ -n "$plain" ] && [ "$zero" = "$plain" ] && pass "perplexity: an adapter at scale 0 gives the model's own" ||
        fail "perplexity at scale 0" "[$zero] vs [$plain]"
    [[ $with == "perplexity: "* ]] && [ "$with" != "$plain" ] && pass "perplexity with the adapter: $with" ||
        fail "perplexity with the adapter" "[$with] vs [$plain]"
    # (the base file keeps log-probabilities in 16-bit levels: the same model
    # against it is within their rounding of 0, not exactly 0)
    kld() { "$RUN" -m "$m" "$@" --kl-divergence --kl-divergence-base "$W/lora.kld" -t 2 2>/dev/null; }
    out=$(kld --lora "$a")
    [[ $out == "kl-divergence: mean "*", same top 100.000%"* ]] &&
        awk -v k="${out#kl-divergence: mean }" 'BEGIN { exit !(k + 0 < 1e-4) }' &&
        pass "KL divergence: the model with its adapter against its own base file: ${out%%, ppl*}" ||
        fail "KL divergence with the adapter" "$out"
    out=$(kld)
    awk -v k="${out#kl-divergence: mean }" 'BEGIN { exit !(k + 0 > 0.1) }' &&
        pass "KL divergence: the model without its adapter differs: ${out%%, ppl*}" ||
        fail "KL divergence without the adapter" "$out"
    out=$("$RUN" -m "$m" --lora "$a" --verify "$m" -f "$TEXT" -c 128 --chunks 2 -t 2 2>&1)
    [[ $out == *"verify: mean KLD "* ]] && [[ $out != *"mean KLD 0.000000"* ]] &&
        pass "--verify: the adapter applies to MODEL, not REF" || fail "--verify with an adapter" "$out"
    # llama-imatrix collects NAME.lora_a and NAME.lora_b beside each matrix
    if "$RUN" -m "$m" --lora "$a" --imatrix "$W/lora.imatrix.gguf" -f "$TEXT" -c 128 --chunks 2 -t 2 \
           >"$W/out" 2>"$W/err" &&
       [ "$("$INSPECT" --json "$W/lora.imatrix.gguf" | jq '[.tensors[].name | select(test("lora_[ab][.]"))] | length')" = 56 ]; then
        pass "--imatrix with an adapter: its 14 pairs' lora_a and lora_b entries too"
    else fail "--imatrix with an adapter" "$(cat "$W/out") $(tail -1 "$W/err")"; fi
    # two adapters: added to each product in llama.cpp's order, bit for bit
    e=$(jq -c '.entries[] | select(.outtype == "f32+q8_0")' "$DATA/logits.json")
    "$RUN" -m "$m" --lora-scaled "$a" 0.7 --lora-scaled "$W/qwen3-lora-q8_0.gguf" 0.4 \
        --prompt-ids "$(jq -r '.prompt_ids | join(",")' <<<"$e")" -n 4 --ids \
        --dump-logits "$W/logits.f32" 4 >/dev/null 2>"$W/err"
    [ "$(sha256sum <"$W/logits.f32" | cut -c1-64)" = "$(jq -r .sha256 <<<"$e")" ] &&
        pass "two adapters (f32 at 0.7, q8_0 at 0.4): 4 steps' logits bit for bit as llama.cpp e21cdc11" ||
        fail "two adapters" "$(tail -1 "$W/err")"
    "$RUN" -m "$m" --lora-scaled "$a:0.7,\"$W/qwen3-lora-q8_0.gguf\":0.4" \
        --prompt-ids "$(jq -r '.prompt_ids | join(",")' <<<"$e")" -n 4 --ids \
        --dump-logits "$W/logits.f32" 4 >/dev/null 2>"$W/err"
    [ "$(sha256sum <"$W/logits.f32" | cut -c1-64)" = "$(jq -r .sha256 <<<"$e")" ] &&
        pass "the same two as one list (--lora-scaled FILE:S,\"FILE\":S, llama.cpp's form): the same logits" ||
        fail "two adapters as one --lora-scaled list" "$(tail -1 "$W/err")"
    refused "--lora: an adapter of another architecture is refused naming it" \
        "$W/llama-lora-f32.gguf: an adapter for \"llama\", the model is qwen3" \
        "$RUN" -m "$m" --lora "$W/llama-lora-f32.gguf" --prompt-ids 1 -n 1
    refused "--imatrix over an adapter is refused before any work" "$a: " \
        "$RUN" -m "$m" --lora "$a" --imatrix "$a" -f "$TEXT" -c 128
    fixture_block_end
fi

exit 0
