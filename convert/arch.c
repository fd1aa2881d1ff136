/*
 * arch.c — the model-family tables (see arch.h).
 *
 * Transcribed from what llama.cpp's converter (c392e50) writes for these
 * Hugging Face classes: the tensor names of gguf-py's tensor_mapping for
 * the LLaMA-style layout, LlamaModel's q/k permutation, and the base
 * converter's hyperparameter keys.
 */
#include "arch.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "names.h"

/* The LLaMA-style decoder layout shared by the families below; the q/k
 * permutation applies only to families with permute_qk. */
#define LAYER(n) "model.layers.%d." n
static const name_rule decoder_names[] = {
    { "model.embed_tokens.weight", GGUF_T_TOKEN_EMBD, PERMUTE_NONE },
    { "model.norm.weight", GGUF_T_OUTPUT_NORM, PERMUTE_NONE },
    { "lm_head.weight", GGUF_T_OUTPUT, PERMUTE_NONE },
    { LAYER("input_layernorm.weight"), GGUF_T_ATTN_NORM, PERMUTE_NONE },
    { LAYER("self_attn.q_proj.weight"), GGUF_T_ATTN_Q, PERMUTE_Q },
    { LAYER("self_attn.k_proj.weight"), GGUF_T_ATTN_K, PERMUTE_K },
    { LAYER("self_attn.v_proj.weight"), GGUF_T_ATTN_V, PERMUTE_NONE },
    { LAYER("self_attn.q_proj.bias"), GGUF_T_ATTN_Q_BIAS, PERMUTE_Q },
    { LAYER("self_attn.k_proj.bias"), GGUF_T_ATTN_K_BIAS, PERMUTE_K },
    { LAYER("self_attn.v_proj.bias"), GGUF_T_ATTN_V_BIAS, PERMUTE_NONE },
    { LAYER("self_attn.o_proj.weight"), GGUF_T_ATTN_OUT, PERMUTE_NONE },
    { LAYER("post_attention_layernorm.weight"), GGUF_T_FFN_NORM, PERMUTE_NONE },
    { LAYER("mlp.gate_proj.weight"), GGUF_T_FFN_GATE, PERMUTE_NONE },
    { LAYER("mlp.up_proj.weight"), GGUF_T_FFN_UP, PERMUTE_NONE },
    { LAYER("mlp.down_proj.weight"), GGUF_T_FFN_DOWN, PERMUTE_NONE },
    { NULL, NULL, 0 },
};

#undef LAYER

/* Meta's original layout (consolidated.NN.pth): the same tensors under
 * Meta's names, q/k already in llama.cpp's rotary order. */
#define MLAYER(n) "layers.%d." n
const name_rule arch_meta_names[] = {
    { "tok_embeddings.weight", GGUF_T_TOKEN_EMBD, PERMUTE_NONE },
    { "norm.weight", GGUF_T_OUTPUT_NORM, PERMUTE_NONE },
    { "output.weight", GGUF_T_OUTPUT, PERMUTE_NONE },
    { MLAYER("attention_norm.weight"), GGUF_T_ATTN_NORM, PERMUTE_NONE },
    { MLAYER("attention.wq.weight"), GGUF_T_ATTN_Q, PERMUTE_NONE },
    { MLAYER("attention.wk.weight"), GGUF_T_ATTN_K, PERMUTE_NONE },
    { MLAYER("attention.wv.weight"), GGUF_T_ATTN_V, PERMUTE_NONE },
    { MLAYER("attention.wo.weight"), GGUF_T_ATTN_OUT, PERMUTE_NONE },
    { MLAYER("ffn_norm.weight"), GGUF_T_FFN_NORM, PERMUTE_NONE },
    { MLAYER("feed_forward.w1.weight"), GGUF_T_FFN_GATE, PERMUTE_NONE },
    { MLAYER("feed_forward.w2.weight"), GGUF_T_FFN_DOWN, PERMUTE_NONE },
    { MLAYER("feed_forward.w3.weight"), GGUF_T_FFN_UP, PERMUTE_NONE },
    { NULL, NULL, 0 },
};
#undef MLAYER

/* Buffers the converter drops (llama.cpp's prepare_tensors). */
static const char *const skip_common[] = {
    ".attention.masked_bias", ".attention.bias", ".rotary_emb.inv_freq", NULL,
};

static const char *const llama_hf[] = { "LlamaForCausalLM", "LLaMAForCausalLM",
                                        "MistralForCausalLM", NULL };
static const char *const qwen2_hf[] = { "Qwen2ForCausalLM", NULL };

static const arch_family families[] = {
    { "llama", llama_hf, decoder_names, skip_common, true, true, true, true },
    /* Qwen2 checkpoints already have llama.cpp's rotary layout */
    { "qwen2", qwen2_hf, decoder_names, skip_common, false, false, false, false },
};
#define N_FAMILIES (sizeof families / sizeof *families)

const hparam_rule arch_base_hparams[] = {
    { { "max_position_embeddings", "n_ctx" }, GGUF_KEY_CONTEXT_LENGTH, HP_U32, false },
    { { "hidden_size", "n_embd" }, GGUF_KEY_EMBEDDING_LENGTH, HP_U32, true },
    { { "intermediate_size", "n_inner" }, GGUF_KEY_FFN_LENGTH, HP_U32, false },
    { { "num_attention_heads", "n_head" }, GGUF_KEY_HEAD_COUNT, HP_U32, true },
    { { "num_key_value_heads" }, GGUF_KEY_HEAD_COUNT_KV, HP_U32, false },
    { { "rope_theta" }, GGUF_KEY_ROPE_FREQ_BASE, HP_F32, false },
    { { "rms_norm_eps" }, GGUF_KEY_RMS_EPS, HP_F32, false },
    { { "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon" }, "%s.attention.layer_norm_epsilon", HP_F32, false },
    { { "num_local_experts" }, GGUF_KEY_EXPERT_COUNT, HP_U32, false },
    { { "num_experts_per_tok" }, "%s.expert_used_count", HP_U32, false },
    { { "head_dim" }, "%s.attention.key_length", HP_U32, false },
    { { "head_dim" }, "%s.attention.value_length", HP_U32, false },
    { { NULL }, NULL, 0, false },
};

const arch_family *arch_find(const char *hf_name)
{
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (const char *const *n = families[f].hf_names; *n; n++)
            if (!strcmp(*n, hf_name))
                return &families[f];
    return NULL;
}

const char *arch_supported_list(void)
{
    static char list[512];
    if (!list[0]) {
        size_t len = 0;
        for (size_t f = 0; f < N_FAMILIES; f++)
            for (const char *const *n = families[f].hf_names; *n; n++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", *n);
    }
    return list;
}

/* Matches name against a pattern with at most one "%d"; *block gets the
 * number (-1 without "%d"). */
static bool match_pattern(const char *pattern, const char *name, int *block)
{
    const char *d = strstr(pattern, "%d");
    if (!d) {
        *block = -1;
        return !strcmp(pattern, name);
    }
    size_t pre = (size_t)(d - pattern);
    if (strncmp(pattern, name, pre) != 0 || !isdigit((unsigned char)name[pre]))
        return false;
    const char *p = name + pre;
    long v = 0;
    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (*p++ - '0');
        if (v > 1000000)
            return false;
    }
    *block = (int)v;
    return !strcmp(d + 2, p);
}

/* The rule that maps name (NULL if none), with the formatted GGUF name. */
static const name_rule *find_rule(const name_rule *rules, const char *name, char *out,
                                  size_t out_size, int *block)
{
    for (const name_rule *r = rules; r->from; r++) {
        if (!match_pattern(r->from, name, block))
            continue;
        if (*block >= 0)
            snprintf(out, out_size, r->to, *block);
        else
            snprintf(out, out_size, "%s", r->to);
        return r;
    }
    return NULL;
}

int arch_map_rules(const name_rule *rules, const char *name, char *out, size_t out_size,
                   int *block)
{
    return find_rule(rules, name, out, out_size, block) ? 1 : -1;
}

int arch_map_name(const arch_family *a, const char *name, char *out, size_t out_size,
                  enum permute_kind *permute, int *block)
{
    size_t len = strlen(name);
    for (const char *const *s = a->skip_suffixes; *s; s++) {
        size_t sl = strlen(*s);
        if (len >= sl && !strcmp(name + len - sl, *s))
            return 0;
    }
    const name_rule *r = find_rule(a->names, name, out, out_size, block);
    if (!r)
        return -1;
    *permute = a->permute_qk ? (enum permute_kind)r->permute : PERMUTE_NONE;
    return 1;
}
