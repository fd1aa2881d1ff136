/*
 * arch_recipe.c — how llama.cpp's converter makes each family's files
 * (see arch_recipe.h), and the feature words.
 *
 * Transcribed from e21cdc11's convert_hf_to_gguf.py and gguf-py's
 * tensor_mapping: each class's config.json keys in its order, the
 * checkpoint name of each tensor, the buffers it drops, what it does to
 * names and values.
 */
#include "arch_recipe.h"

#include <stdio.h>
#include <string.h>

/* ===========================================================================
 * The feature words, in the order `gguf-inspect --arches` prints them
 */

#define RUN(f, w) { GGUF_WORD_RUN, GGUF_FEAT_##f, w }
#define CONVERT(f, w) { GGUF_WORD_CONVERT, GGUF_FACT_##f, w }
static const gguf_feature_word WORDS[] = {
    RUN(QKV_BIAS, "qkv-bias"), RUN(TIED_OUTPUT, "tied-output"),
    RUN(ROPE_WHOLE_HEAD, "rope-whole-head"), RUN(EXPERTS, "experts"),
    RUN(QK_NORM, "qk-norm"), RUN(FUSED_QKV, "fused-qkv"),
    RUN(FUSED_GATE_UP, "fused-gate-up"), RUN(ATTN_SINKS, "attn-sinks"),
    RUN(ROPE_LLAMA3, "rope-llama3"), RUN(ROPE_LINEAR, "rope-linear"),
    RUN(SCALE_Q, "scale-q"),
    CONVERT(PERMUTE_QK, "convert:permute-qk"),
    CONVERT(LLAMA_VOCAB, "convert:llama-vocab"),
    CONVERT(WRITES_ROPE_DIM, "convert:rope-dim-key"),
    CONVERT(PHI3_VOCAB, "convert:phi3-vocab"),
    RUN(ROPE_YARN, "rope-yarn"),
    CONVERT(MXFP4_EXPERTS, "convert:mxfp4-experts"),
    RUN(SCALE_EMBD, "scale-embd"), RUN(ATTN_SOFTCAP, "attn-softcap"),
    RUN(SWA_ROPE_PLAIN, "swa-rope-plain"),
    CONVERT(TRIM_EMBD, "convert:trim-embd"),
    CONVERT(NO_SPACE_PREFIX, "convert:no-space-prefix"),
    CONVERT(OWN_ROPE_KEYS, "convert:own-rope-keys"),
};
#undef RUN
#undef CONVERT
#define N_WORDS (sizeof WORDS / sizeof *WORDS)

const gguf_feature_word *gguf_feature_words(size_t *n)
{
    *n = N_WORDS;
    return WORDS;
}

bool gguf_feature_word_on(const gguf_feature_word *w, const gguf_arch *a)
{
    return w->kind == GGUF_WORD_CONVERT ? gguf_recipe_has(gguf_recipe_of(a), w->id)
                                        : gguf_arch_has(a, w->id);
}

const char *gguf_feature_name(int feature)
{
    for (size_t i = 0; i < N_WORDS; i++)
        if (WORDS[i].kind != GGUF_WORD_CONVERT && WORDS[i].id == feature)
            return WORDS[i].word;
    return "unknown";
}

/* ===========================================================================
 * config.json → {arch}.*
 */

#define HPR(names, i, ...) { .hf = { names }, .id = GGUF_HP_##i, __VA_ARGS__ }
#define N(...) __VA_ARGS__
#define FLOAT .is_float = true
#define REQ .required = true
#define DEF(v) .def = (v)
#define HPR_END { .hf = { NULL } }

/* config.json → {arch}.* as llama.cpp's base converter writes them, after
 * block_count (which every converter writes first). */
static const gguf_recipe_hf_hparam base_hf_hparams[] = {
    HPR(N("max_position_embeddings", "n_ctx"), CONTEXT_LENGTH),
    HPR(N("hidden_size", "n_embd"), EMBEDDING_LENGTH, REQ),
    HPR(N("intermediate_size", "n_inner"), FFN_LENGTH),
    HPR(N("num_attention_heads", "n_head"), HEAD_COUNT, REQ),
    HPR(N("num_key_value_heads"), HEAD_COUNT_KV),
    HPR(N("rope_theta"), ROPE_FREQ_BASE, FLOAT),
    HPR(N("rms_norm_eps"), RMS_EPS, FLOAT),
    HPR(N("layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"), LAYER_NORM_EPS, FLOAT),
    HPR(N("num_local_experts", "num_experts"), EXPERT_COUNT),
    HPR(N("num_experts_per_tok"), EXPERT_USED_COUNT),
    HPR(N("head_dim"), KEY_LENGTH),
    HPR(N("head_dim"), VALUE_LENGTH),
    HPR_END,
};

/* What Qwen3-MoE's converter adds after general.file_type. */
static const gguf_recipe_hf_hparam qwen3moe_late_hparams[] = {
    HPR(N("moe_intermediate_size"), EXPERT_FFN_LENGTH),
    HPR_END,
};

/* Phi3MiniModel's own keys, in its order (block_count fifth, after
 * feed_forward_length): all required but the two it makes:
 * rope.dimension_count from partial_rotary_factor and, after
 * general.file_type, attention.sliding_window, 0 when absent. */
static const gguf_recipe_hf_hparam phi3_hf_hparams[] = {
    HPR(N("n_positions", "max_position_embeddings"), CONTEXT_LENGTH, REQ),
    HPR(N("original_max_position_embeddings"), ROPE_ORIG_CTX, REQ),
    HPR(N("hidden_size", "n_embd"), EMBEDDING_LENGTH, REQ),
    HPR(N("intermediate_size"), FFN_LENGTH, REQ),
    HPR(N("num_hidden_layers"), BLOCK_COUNT, REQ, .make = GGUF_MAKE_BLOCK_COUNT),
    HPR(N("num_attention_heads", "n_head"), HEAD_COUNT, REQ),
    HPR(N("num_key_value_heads", "n_head_kv"), HEAD_COUNT_KV, REQ),
    HPR(N("rms_norm_eps"), RMS_EPS, FLOAT, REQ),
    HPR(N("partial_rotary_factor"), ROPE_DIM, .make = GGUF_MAKE_ROTARY),
    HPR(N("rope_theta"), ROPE_FREQ_BASE, FLOAT, REQ),
    HPR_END,
};
static const gguf_recipe_hf_hparam phi3_late_hparams[] = {
    HPR(N("sliding_window"), SLIDING_WINDOW, .make = GGUF_MAKE_ZERO_ABSENT,
        .when = GGUF_WHEN_NOT_PATTERN_1),
    HPR_END,
};

/* What GptOssModel's converter adds after general.file_type. */
static const gguf_recipe_hf_hparam gptoss_late_hparams[] = {
    HPR(N("sliding_window"), SLIDING_WINDOW, REQ, .when = GGUF_WHEN_NOT_PATTERN_1),
    HPR(N("intermediate_size"), EXPERT_FFN_LENGTH, REQ),
    HPR_END,
};

/* Gemma2Model's keys, in its order (block_count third; no rope base); all
 * required. */
static const gguf_recipe_hf_hparam gemma2_hf_hparams[] = {
    HPR(N("max_position_embeddings"), CONTEXT_LENGTH, REQ),
    HPR(N("hidden_size"), EMBEDDING_LENGTH, REQ),
    HPR(N("num_hidden_layers"), BLOCK_COUNT, REQ, .make = GGUF_MAKE_BLOCK_COUNT),
    HPR(N("intermediate_size"), FFN_LENGTH, REQ),
    HPR(N("num_attention_heads"), HEAD_COUNT, REQ),
    HPR(N("num_key_value_heads", "num_attention_heads"), HEAD_COUNT_KV, REQ),
    HPR(N("rms_norm_eps"), RMS_EPS, FLOAT, REQ),
    HPR(N("head_dim"), KEY_LENGTH, REQ),
    HPR(N("head_dim"), VALUE_LENGTH, REQ),
    HPR_END,
};
static const gguf_recipe_hf_hparam gemma2_late_hparams[] = {
    HPR(N("attn_logit_softcapping"), ATTN_SOFTCAP, FLOAT, REQ),
    HPR(N("final_logit_softcapping"), FINAL_SOFTCAP, FLOAT, REQ),
    HPR(N("sliding_window"), SLIDING_WINDOW, REQ, .when = GGUF_WHEN_NOT_PATTERN_1),
    HPR_END,
};

/* Gemma3Model: the base converter's keys in its order of names (the first
 * present wins; rope_local_base_freq is the local layers' base), each only
 * when config.json has it — but the widths, without which llama.cpp's
 * converter writes a file no loader takes, are required here. */
static const gguf_recipe_hf_hparam gemma3_hf_hparams[] = {
    HPR(N("max_position_embeddings", "n_ctx", "n_positions", "max_length", "max_sequence_length",
          "model_max_length"), CONTEXT_LENGTH),
    HPR(N("hidden_size", "n_embd", "dim"), EMBEDDING_LENGTH, REQ),
    HPR(N("intermediate_size", "n_inner", "hidden_dim"), FFN_LENGTH, REQ),
    HPR(N("num_attention_heads", "n_head", "n_heads"), HEAD_COUNT),
    HPR(N("num_key_value_heads", "n_kv_heads"), HEAD_COUNT_KV),
    HPR(N("global_rope_theta", "rope_global_theta", "rope_theta_global", "rope_theta",
          "rotary_emb_base"), ROPE_FREQ_BASE, FLOAT),
    HPR(N("local_rope_theta", "rope_local_theta", "rope_theta_local", "swa_rope_theta",
          "rope_local_base_freq"), ROPE_FREQ_BASE_SWA, FLOAT),
    HPR(N("rms_norm_eps", "norm_eps"), RMS_EPS, FLOAT),
    HPR(N("head_dim"), KEY_LENGTH),
    HPR(N("head_dim"), VALUE_LENGTH),
    HPR_END,
};
/* Then Gemma3Model.set_gguf_parameters' own writes, in its order, with its
 * defaults (hparams.get(name, default)): a key the base part wrote gets the
 * new value in its place, one it did not is added here, after
 * general.file_type — where a gemma-3-4b-it text_config, which gives no
 * heads, head_dim, eps, rope base or context, puts those keys. It writes
 * no final soft-cap of 0, and no sliding window for a model without local
 * layers (sliding_window_pattern 1). */
static const gguf_recipe_hf_hparam gemma3_late_hparams[] = {
    HPR(N("max_position_embeddings"), CONTEXT_LENGTH, DEF(131072)),
    HPR(N("num_attention_heads"), HEAD_COUNT, DEF(8)),
    HPR(N("rms_norm_eps"), RMS_EPS, FLOAT, DEF(1e-6)),
    HPR(N("head_dim"), KEY_LENGTH, DEF(256)),
    HPR(N("head_dim"), VALUE_LENGTH, DEF(256)),
    HPR(N("global_rope_theta", "rope_global_theta", "rope_theta_global", "rope_theta",
          "rotary_emb_base"), ROPE_FREQ_BASE, FLOAT, DEF(1000000.0)),
    HPR(N("final_logit_softcapping"), FINAL_SOFTCAP, FLOAT, .when = GGUF_WHEN_NONZERO),
    HPR(N("sliding_window"), SLIDING_WINDOW, REQ, .when = GGUF_WHEN_NOT_PATTERN_1),
    HPR(N("num_key_value_heads"), HEAD_COUNT_KV, DEF(4)),
    HPR_END,
};
#undef HPR
#undef N
#undef FLOAT
#undef REQ
#undef DEF
#undef HPR_END

/* ===========================================================================
 * Checkpoint tensor names
 */

#define HF(n) "model.layers.%d." n
#define META(n) "layers.%d." n
#define T(r, ...) { .role = GGUF_ROLE_##r, __VA_ARGS__ }
#define NAMES_END { .role = GGUF_ROLE_COUNT }

/* The LLaMA-style decoder's Hugging Face and Meta names. */
static const gguf_recipe_tensor decoder_names[] = {
    T(TOKEN_EMBD, .hf = "model.embed_tokens.weight", .meta = "tok_embeddings.weight"),
    T(OUTPUT_NORM, .hf = "model.norm.weight", .meta = "norm.weight"),
    T(OUTPUT, .hf = "lm_head.weight", .meta = "output.weight"),
    T(ATTN_NORM, .hf = HF("input_layernorm.weight"), .meta = META("attention_norm.weight")),
    T(ATTN_Q, .hf = HF("self_attn.q_proj.weight"), .meta = META("attention.wq.weight"),
      .permute = GGUF_PERMUTE_Q),
    T(ATTN_K, .hf = HF("self_attn.k_proj.weight"), .meta = META("attention.wk.weight"),
      .permute = GGUF_PERMUTE_K),
    T(ATTN_V, .hf = HF("self_attn.v_proj.weight"), .meta = META("attention.wv.weight")),
    T(ATTN_Q_BIAS, .hf = HF("self_attn.q_proj.bias"), .permute = GGUF_PERMUTE_Q),
    T(ATTN_K_BIAS, .hf = HF("self_attn.k_proj.bias"), .permute = GGUF_PERMUTE_K),
    T(ATTN_V_BIAS, .hf = HF("self_attn.v_proj.bias")),
    T(ATTN_OUT, .hf = HF("self_attn.o_proj.weight"), .meta = META("attention.wo.weight")),
    T(FFN_NORM, .hf = HF("post_attention_layernorm.weight"), .meta = META("ffn_norm.weight")),
    T(FFN_GATE, .hf = HF("mlp.gate_proj.weight"), .meta = META("feed_forward.w1.weight")),
    T(FFN_UP, .hf = HF("mlp.up_proj.weight"), .meta = META("feed_forward.w3.weight")),
    T(FFN_DOWN, .hf = HF("mlp.down_proj.weight"), .meta = META("feed_forward.w2.weight")),
    NAMES_END,
};

static const gguf_recipe_tensor qk_norm_names[] = {
    T(ATTN_Q_NORM, .hf = HF("self_attn.q_norm.weight")),
    T(ATTN_K_NORM, .hf = HF("self_attn.k_norm.weight")),
    NAMES_END,
};

/* Mixtral: w1 = gate, w2 = down, w3 = up. */
static const gguf_recipe_tensor mixtral_names[] = {
    T(FFN_GATE_EXPS, .hf = HF("block_sparse_moe.experts.%d.w1.weight")),
    T(FFN_DOWN_EXPS, .hf = HF("block_sparse_moe.experts.%d.w2.weight")),
    T(FFN_UP_EXPS, .hf = HF("block_sparse_moe.experts.%d.w3.weight")),
    T(FFN_GATE_INP, .hf = HF("block_sparse_moe.gate.weight")),
    NAMES_END,
};

static const gguf_recipe_tensor qwen3moe_names[] = {
    T(FFN_DOWN_EXPS, .hf = HF("mlp.experts.%d.down_proj.weight")),
    T(FFN_GATE_EXPS, .hf = HF("mlp.experts.%d.gate_proj.weight")),
    T(FFN_UP_EXPS, .hf = HF("mlp.experts.%d.up_proj.weight")),
    T(FFN_GATE_INP, .hf = HF("mlp.gate.weight")),
    NAMES_END,
};

/* The globals of the families with Hugging Face names only. */
#define HF_GLOBALS \
    T(TOKEN_EMBD, .hf = "model.embed_tokens.weight"), \
    T(OUTPUT_NORM, .hf = "model.norm.weight"), \
    T(OUTPUT, .hf = "lm_head.weight")

static const gguf_recipe_tensor phi3_names[] = {
    HF_GLOBALS,
    T(ATTN_NORM, .hf = HF("input_layernorm.weight")),
    T(ATTN_QKV, .hf = HF("self_attn.qkv_proj.weight")),
    T(ATTN_OUT, .hf = HF("self_attn.o_proj.weight")),
    T(FFN_NORM, .hf = HF("post_attention_layernorm.weight")),
    T(FFN_GATE_UP, .hf = HF("mlp.gate_up_proj.weight")),
    T(FFN_DOWN, .hf = HF("mlp.down_proj.weight")),
    NAMES_END,
};

/* gpt-oss: the checkpoint's experts come stacked and in MXFP4 (*_blocks +
 * *_scales, gate and up rows interleaved in gate_up_proj): the converter
 * repacks them itself (convert/hf.c), so their rows and the gate/up biases
 * name no checkpoint tensor here. */
static const gguf_recipe_tensor gptoss_names[] = {
    HF_GLOBALS,
    T(ATTN_NORM, .hf = HF("input_layernorm.weight")),
    T(FFN_NORM, .hf = HF("post_attention_layernorm.weight")),
    T(ATTN_Q, .hf = HF("self_attn.q_proj.weight")),
    T(ATTN_K, .hf = HF("self_attn.k_proj.weight")),
    T(ATTN_V, .hf = HF("self_attn.v_proj.weight")),
    T(ATTN_OUT, .hf = HF("self_attn.o_proj.weight")),
    T(ATTN_SINKS, .hf = HF("self_attn.sinks")),
    T(FFN_GATE_INP, .hf = HF("mlp.router.weight")),
    T(ATTN_Q_BIAS, .hf = HF("self_attn.q_proj.bias")),
    T(ATTN_K_BIAS, .hf = HF("self_attn.k_proj.bias")),
    T(ATTN_V_BIAS, .hf = HF("self_attn.v_proj.bias")),
    T(ATTN_OUT_BIAS, .hf = HF("self_attn.o_proj.bias")),
    T(FFN_GATE_INP_BIAS, .hf = HF("mlp.router.bias")),
    T(FFN_DOWN_EXPS_BIAS, .hf = HF("mlp.experts.down_proj_bias")),
    NAMES_END,
};

/* Gemma: no output (Gemma 2's converter drops lm_head; Gemma 3 maps it) */
static const gguf_recipe_tensor gemma_names[] = {
    T(TOKEN_EMBD, .hf = "model.embed_tokens.weight"),
    T(OUTPUT_NORM, .hf = "model.norm.weight"),
    T(ATTN_NORM, .hf = HF("input_layernorm.weight")),
    T(ATTN_Q, .hf = HF("self_attn.q_proj.weight")),
    T(ATTN_K, .hf = HF("self_attn.k_proj.weight")),
    T(ATTN_V, .hf = HF("self_attn.v_proj.weight")),
    T(ATTN_OUT, .hf = HF("self_attn.o_proj.weight")),
    T(ATTN_POST_NORM, .hf = HF("post_attention_layernorm.weight")),
    T(FFN_NORM, .hf = HF("pre_feedforward_layernorm.weight")),
    T(FFN_GATE, .hf = HF("mlp.gate_proj.weight")),
    T(FFN_UP, .hf = HF("mlp.up_proj.weight")),
    T(FFN_DOWN, .hf = HF("mlp.down_proj.weight")),
    T(FFN_POST_NORM, .hf = HF("post_feedforward_layernorm.weight")),
    NAMES_END,
};
static const gguf_recipe_tensor gemma3_names[] = { T(OUTPUT, .hf = "lm_head.weight"), NAMES_END };
#undef T
#undef NAMES_END
#undef HF_GLOBALS
#undef HF
#undef META

static const gguf_recipe_tensor *const llama_names[] = { decoder_names, mixtral_names, NULL };
static const gguf_recipe_tensor *const qwen2_names[] = { decoder_names, NULL };
static const gguf_recipe_tensor *const qwen3_names[] = { decoder_names, qk_norm_names, NULL };
static const gguf_recipe_tensor *const qwen3moe_all[] = { decoder_names, qk_norm_names,
                                                          qwen3moe_names, NULL };
static const gguf_recipe_tensor *const phi3_all[] = { phi3_names, NULL };
static const gguf_recipe_tensor *const gptoss_all[] = { gptoss_names, NULL };
static const gguf_recipe_tensor *const gemma2_all[] = { gemma_names, NULL };
static const gguf_recipe_tensor *const gemma3_all[] = { gemma_names, gemma3_names, qk_norm_names,
                                                        NULL };

/* ===========================================================================
 * The recipes
 */

/* Buffers the converter drops (llama.cpp's prepare_tensors). */
static const char *const skip_common[] = {
    ".attention.masked_bias", ".attention.bias", ".rotary_emb.inv_freq", NULL,
};

static const char *const llama_hf[] = { "LlamaForCausalLM", "LLaMAForCausalLM",
                                        "MistralForCausalLM", "MixtralForCausalLM", NULL };
static const char *const no_hf[] = { NULL };
static const char *const qwen2_hf[] = { "Qwen2ForCausalLM", NULL };
static const char *const qwen3_hf[] = { "Qwen3ForCausalLM", NULL };
static const char *const qwen3moe_hf[] = { "Qwen3MoeForCausalLM", NULL };
static const char *const phi3_hf[] = { "Phi3ForCausalLM", NULL };
static const char *const gptoss_hf[] = { "GptOssForCausalLM", NULL };
static const char *const gemma2_hf[] = { "Gemma2ForCausalLM", NULL };
static const char *const gemma3_hf[] = { "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration",
                                         NULL };
/* Gemma3Model.modify_tensors drops these after taking "language_model."
 * out; the last two, a newer transformers' layout, llama.cpp does not know
 * (it fails on them): gguf-convert drops them too. */
static const char *const gemma3_vision[] = {
    "multi_modal_projector.", "vision_tower.", "multimodal_projector.", "vision_model.",
    "model.vision_tower.", "model.multi_modal_projector.", NULL,
};
/* Gemma2Model drops lm_head (llama.cpp ties the output to token_embd) */
static const char *const gemma2_skip[] = {
    ".attention.masked_bias", ".attention.bias", ".rotary_emb.inv_freq", "lm_head.weight", NULL,
};

/* In registry order (gguf_arch_at), one per architecture. */
#define F(x) (1u << GGUF_FACT_##x)
static const gguf_recipe RECIPES[] = {
    { .arch = "llama", .hf_classes = llama_hf, .hf_skip = skip_common,
      .hf_hparams = base_hf_hparams, .tensors = llama_names,
      .facts = F(PERMUTE_QK) | F(LLAMA_VOCAB) | F(WRITES_ROPE_DIM) },
    { .arch = "mistral", .hf_classes = no_hf, .hf_skip = skip_common,
      .hf_hparams = base_hf_hparams, .tensors = llama_names },
    { .arch = "qwen2", .hf_classes = qwen2_hf, .hf_skip = skip_common,
      .hf_hparams = base_hf_hparams, .tensors = qwen2_names },
    { .arch = "qwen3", .hf_classes = qwen3_hf, .hf_skip = skip_common,
      .hf_hparams = base_hf_hparams, .tensors = qwen3_names },
    { .arch = "qwen3moe", .hf_classes = qwen3moe_hf, .hf_skip = skip_common,
      .hf_hparams = base_hf_hparams, .hf_hparams_late = qwen3moe_late_hparams,
      .tensors = qwen3moe_all },
    { .arch = "phi3", .hf_classes = phi3_hf, .hf_skip = skip_common,
      .hf_hparams = phi3_hf_hparams, .hf_hparams_late = phi3_late_hparams, .tensors = phi3_all,
      .facts = F(PHI3_VOCAB) | F(OWN_ROPE_KEYS) },
    { .arch = "gpt-oss", .hf_classes = gptoss_hf, .hf_skip = skip_common,
      .hf_hparams = base_hf_hparams, .hf_hparams_late = gptoss_late_hparams,
      .tensors = gptoss_all, .facts = F(MXFP4_EXPERTS) },
    { .arch = "gemma2", .hf_classes = gemma2_hf, .hf_skip = gemma2_skip,
      .hf_hparams = gemma2_hf_hparams, .hf_hparams_late = gemma2_late_hparams,
      .tensors = gemma2_all, .facts = F(NO_SPACE_PREFIX) | F(OWN_ROPE_KEYS),
      .norm_offset = 1.0f, .q_scale_width_blocks = 46 },
    { .arch = "gemma3", .hf_classes = gemma3_hf, .hf_skip = skip_common,
      .hf_hparams = gemma3_hf_hparams, .hf_hparams_late = gemma3_late_hparams,
      .tensors = gemma3_all, .facts = F(TRIM_EMBD) | F(NO_SPACE_PREFIX),
      .norm_offset = 1.0f, .q_scale_width_blocks = 62,
      .hf_strip = "language_model.", .hf_skip_prefix = gemma3_vision },
};
#undef F
#define N_RECIPES (sizeof RECIPES / sizeof *RECIPES)

const gguf_recipe *gguf_recipe_of(const gguf_arch *a)
{
    for (size_t i = 0; a && i < N_RECIPES; i++)
        if (!strcmp(RECIPES[i].arch, gguf_arch_name(a)))
            return &RECIPES[i];
    return NULL;
}

const gguf_arch *gguf_recipe_find_hf(const char *hf_class)
{
    for (size_t i = 0; hf_class && i < N_RECIPES; i++)
        for (const char *const *n = RECIPES[i].hf_classes; *n; n++)
            if (!strcmp(*n, hf_class))
                return gguf_arch_find(RECIPES[i].arch);
    return NULL;
}

const char *gguf_recipe_hf_list(void)
{
    static char list[512];
    if (!list[0]) {
        size_t len = 0;
        for (size_t i = 0; i < N_RECIPES; i++)
            for (const char *const *n = RECIPES[i].hf_classes; *n && len < sizeof list; n++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", *n);
    }
    return list;
}

bool gguf_recipe_has(const gguf_recipe *r, int fact)
{
    return r && fact >= 0 && fact < GGUF_FACT_COUNT && (r->facts >> fact & 1u);
}

const gguf_recipe_tensor *gguf_recipe_tensor_of(const gguf_recipe *r, int role)
{
    for (const gguf_recipe_tensor *const *l = r->tensors; *l; l++)
        for (const gguf_recipe_tensor *t = *l; t->role != GGUF_ROLE_COUNT; t++)
            if (t->role == role)
                return t;
    return NULL;
}
