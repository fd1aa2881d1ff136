/*
 * arch.c — the architecture registry (see <ggufkit/arch.h>).
 *
 * Each architecture is a row of data: names, hyper-parameter tables, a
 * tensor table and feature flags. The tools read these rows; none of them
 * keeps its own list of architectures, tensors or keys. The tables are
 * transcribed from llama.cpp: the tensor names and shapes of its loader
 * (llama-model.cpp) and gguf-py's tensor_mapping, the required keys of
 * llm_load_hparams, the base converter's key order (convert_hf_to_gguf.py).
 *
 * Adding an architecture: a hyper-parameter table (usually the shared
 * decoder one), a tensor table, a row in ARCHS (docs/design.md has the
 * checklist).
 */
#include <ggufkit/arch.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define MAX_DIM GGUF_MODEL_MAX_DIM

/* ===========================================================================
 * Hyper-parameters
 */

/* The keys every LLaMA-style decoder has, in checking order (llama.cpp's
 * llm_load_hparams for these architectures: the required ones are required
 * there too); each architecture's table starts with them. */
#define DECODER_KEYS \
    { GGUF_KEY_CONTEXT_LENGTH, GGUF_HP_CONTEXT_LENGTH, false, true, GGUF_DERIVE_NONE, 0, 1, INT32_MAX }, \
    { GGUF_KEY_EMBEDDING_LENGTH, GGUF_HP_EMBEDDING_LENGTH, false, true, GGUF_DERIVE_NONE, 0, 1, MAX_DIM }, \
    { GGUF_KEY_BLOCK_COUNT, GGUF_HP_BLOCK_COUNT, false, true, GGUF_DERIVE_NONE, 0, 1, GGUF_MODEL_MAX_BLOCKS }, \
    { GGUF_KEY_FFN_LENGTH, GGUF_HP_FFN_LENGTH, false, true, GGUF_DERIVE_NONE, 0, 1, MAX_DIM }, \
    { GGUF_KEY_HEAD_COUNT, GGUF_HP_HEAD_COUNT, false, true, GGUF_DERIVE_NONE, 0, 1, MAX_DIM }, \
    { GGUF_KEY_HEAD_COUNT_KV, GGUF_HP_HEAD_COUNT_KV, false, false, GGUF_DERIVE_HEAD_COUNT, 0, 1, MAX_DIM }, \
    { GGUF_KEY_KEY_LENGTH, GGUF_HP_KEY_LENGTH, false, false, GGUF_DERIVE_HEAD_SIZE, 0, 1, MAX_DIM }, \
    { GGUF_KEY_VALUE_LENGTH, GGUF_HP_VALUE_LENGTH, false, false, GGUF_DERIVE_HEAD_SIZE, 0, 1, MAX_DIM }, \
    { GGUF_KEY_ROPE_DIM_COUNT, GGUF_HP_ROPE_DIM, false, false, GGUF_DERIVE_KEY_LENGTH, 0, INT64_MIN, INT64_MAX }, \
    { GGUF_KEY_RMS_EPS, GGUF_HP_RMS_EPS, true, true, GGUF_DERIVE_NONE, 0, 0, 0 }, \
    { GGUF_KEY_ROPE_FREQ_BASE, GGUF_HP_ROPE_FREQ_BASE, true, false, GGUF_DERIVE_DEFAULT, 10000.0, 0, 0 }

/* The LLaMA-style decoder (and Mixtral, Qwen3-MoE: their expert keys). */
static const gguf_arch_hparam decoder_hparams[] = {
    DECODER_KEYS,
    /* mixture of experts (Mixtral under llama; Qwen3-MoE) */
    { GGUF_KEY_EXPERT_COUNT, GGUF_HP_EXPERT_COUNT, false, false, GGUF_DERIVE_NONE, 0, 0, 4096 },
    { GGUF_KEY_EXPERT_USED_COUNT, GGUF_HP_EXPERT_USED_COUNT, false, false, GGUF_DERIVE_NONE, 0, 0, 4096 },
    { GGUF_KEY_EXPERT_FFN_LENGTH, GGUF_HP_EXPERT_FFN_LENGTH, false, false, GGUF_DERIVE_NONE, 0, 1, MAX_DIM },
    { NULL, 0, false, false, 0, 0, 0, 0 },
};

/* gpt-oss (llama.cpp's LLM_ARCH_OPENAI_MOE): the decoder's keys; it
 * requires the expert keys and the sliding window. */
static const gguf_arch_hparam gptoss_hparams[] = {
    DECODER_KEYS,
    { GGUF_KEY_EXPERT_COUNT, GGUF_HP_EXPERT_COUNT, false, true, GGUF_DERIVE_NONE, 0, 1, 4096 },
    { GGUF_KEY_EXPERT_USED_COUNT, GGUF_HP_EXPERT_USED_COUNT, false, true, GGUF_DERIVE_NONE, 0, 1, 4096 },
    { GGUF_KEY_EXPERT_FFN_LENGTH, GGUF_HP_EXPERT_FFN_LENGTH, false, true, GGUF_DERIVE_NONE, 0, 1, MAX_DIM },
    { GGUF_KEY_SLIDING_WINDOW, GGUF_HP_SLIDING_WINDOW, false, true, GGUF_DERIVE_NONE, 0, 1, INT32_MAX },
    { GGUF_KEY_SLIDING_WINDOW_PATTERN, GGUF_HP_SWA_PATTERN, false, false, GGUF_DERIVE_DEFAULT, 2, 0, GGUF_MODEL_MAX_BLOCKS },
    { GGUF_KEY_ROPE_FREQ_BASE_SWA, GGUF_HP_ROPE_FREQ_BASE_SWA, true, false, GGUF_DERIVE_ROPE_BASE, 0, 0, 0 },
    { NULL, 0, false, false, 0, 0, 0, 0 },
};

/* Gemma 2 (llama.cpp's LLM_ARCH_GEMMA2): the decoder's dense keys, a
 * sliding window of 4096 on every other layer (from layer 0) unless the
 * file says otherwise, its rope base that of the global layers, and both
 * soft-caps with llama.cpp's defaults. */
static const gguf_arch_hparam gemma2_hparams[] = {
    DECODER_KEYS,
    { GGUF_KEY_SLIDING_WINDOW, GGUF_HP_SLIDING_WINDOW, false, false, GGUF_DERIVE_DEFAULT, 4096, 1, INT32_MAX },
    { GGUF_KEY_SLIDING_WINDOW_PATTERN, GGUF_HP_SWA_PATTERN, false, false, GGUF_DERIVE_DEFAULT, 2, 0, GGUF_MODEL_MAX_BLOCKS },
    { GGUF_KEY_ROPE_FREQ_BASE_SWA, GGUF_HP_ROPE_FREQ_BASE_SWA, true, false, GGUF_DERIVE_ROPE_BASE, 0, 0, 0 },
    { GGUF_KEY_ATTN_SOFTCAP, GGUF_HP_ATTN_SOFTCAP, true, false, GGUF_DERIVE_DEFAULT, 50.0, 0, 0 },
    { GGUF_KEY_FINAL_SOFTCAP, GGUF_HP_FINAL_SOFTCAP, true, false, GGUF_DERIVE_DEFAULT, 30.0, 0, 0 },
    { NULL, 0, false, false, 0, 0, 0, 0 },
};

/* Gemma 3 (LLM_ARCH_GEMMA3): a sliding window only when the file gives one
 * (> 0), on five layers of every six; the local layers' rope base 10000
 * unless given; a final soft-cap only when given. */
static const gguf_arch_hparam gemma3_hparams[] = {
    DECODER_KEYS,
    { GGUF_KEY_SLIDING_WINDOW, GGUF_HP_SLIDING_WINDOW, false, false, GGUF_DERIVE_NONE, 0, 0, INT32_MAX },
    { GGUF_KEY_SLIDING_WINDOW_PATTERN, GGUF_HP_SWA_PATTERN, false, false, GGUF_DERIVE_DEFAULT, 6, 0, GGUF_MODEL_MAX_BLOCKS },
    { GGUF_KEY_ROPE_FREQ_BASE_SWA, GGUF_HP_ROPE_FREQ_BASE_SWA, true, false, GGUF_DERIVE_DEFAULT, 10000.0, 0, 0 },
    { GGUF_KEY_FINAL_SOFTCAP, GGUF_HP_FINAL_SOFTCAP, true, false, GGUF_DERIVE_NONE, 0, 0, 0 },
    { NULL, 0, false, false, 0, 0, 0, 0 },
};

/* config.json → {arch}.* as llama.cpp's base converter writes them, after
 * block_count (which every converter writes first). */
static const gguf_arch_hf_hparam base_hf_hparams[] = {
    { { "max_position_embeddings", "n_ctx" }, GGUF_HP_CONTEXT_LENGTH, false, false, 0 },
    { { "hidden_size", "n_embd" }, GGUF_HP_EMBEDDING_LENGTH, false, true, 0 },
    { { "intermediate_size", "n_inner" }, GGUF_HP_FFN_LENGTH, false, false, 0 },
    { { "num_attention_heads", "n_head" }, GGUF_HP_HEAD_COUNT, false, true, 0 },
    { { "num_key_value_heads" }, GGUF_HP_HEAD_COUNT_KV, false, false, 0 },
    { { "rope_theta" }, GGUF_HP_ROPE_FREQ_BASE, true, false, 0 },
    { { "rms_norm_eps" }, GGUF_HP_RMS_EPS, true, false, 0 },
    { { "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon" }, GGUF_HP_LAYER_NORM_EPS, true, false, 0 },
    { { "num_local_experts", "num_experts" }, GGUF_HP_EXPERT_COUNT, false, false, 0 },
    { { "num_experts_per_tok" }, GGUF_HP_EXPERT_USED_COUNT, false, false, 0 },
    { { "head_dim" }, GGUF_HP_KEY_LENGTH, false, false, 0 },
    { { "head_dim" }, GGUF_HP_VALUE_LENGTH, false, false, 0 },
    { { NULL }, 0, false, false, 0 },
};

/* What Qwen3-MoE's converter adds after general.file_type. */
static const gguf_arch_hf_hparam qwen3moe_late_hparams[] = {
    { { "moe_intermediate_size" }, GGUF_HP_EXPERT_FFN_LENGTH, false, false, 0 },
    { { NULL }, 0, false, false, 0 },
};

/* Phi3MiniModel's own keys, in its order (block_count fifth, after
 * feed_forward_length): all required but the two it makes
 * (<ggufkit/arch.h>): rope.dimension_count from partial_rotary_factor and,
 * after general.file_type, attention.sliding_window, 0 when absent. */
static const gguf_arch_hf_hparam phi3_hf_hparams[] = {
    { { "n_positions", "max_position_embeddings" }, GGUF_HP_CONTEXT_LENGTH, false, true, 0 },
    { { "original_max_position_embeddings" }, GGUF_HP_ROPE_ORIG_CTX, false, true, 0 },
    { { "hidden_size", "n_embd" }, GGUF_HP_EMBEDDING_LENGTH, false, true, 0 },
    { { "intermediate_size" }, GGUF_HP_FFN_LENGTH, false, true, 0 },
    { { "num_hidden_layers" }, GGUF_HP_BLOCK_COUNT, false, true, 0 },
    { { "num_attention_heads", "n_head" }, GGUF_HP_HEAD_COUNT, false, true, 0 },
    { { "num_key_value_heads", "n_head_kv" }, GGUF_HP_HEAD_COUNT_KV, false, true, 0 },
    { { "rms_norm_eps" }, GGUF_HP_RMS_EPS, true, true, 0 },
    { { "partial_rotary_factor" }, GGUF_HP_ROPE_DIM, false, false, 0 },
    { { "rope_theta" }, GGUF_HP_ROPE_FREQ_BASE, true, true, 0 },
    { { NULL }, 0, false, false, 0 },
};
static const gguf_arch_hf_hparam phi3_late_hparams[] = {
    { { "sliding_window" }, GGUF_HP_SLIDING_WINDOW, false, false, 0 },
    { { NULL }, 0, false, false, 0 },
};

/* What GptOssModel's converter adds after general.file_type. */
static const gguf_arch_hf_hparam gptoss_late_hparams[] = {
    { { "sliding_window" }, GGUF_HP_SLIDING_WINDOW, false, true, 0 },
    { { "intermediate_size" }, GGUF_HP_EXPERT_FFN_LENGTH, false, true, 0 },
    { { NULL }, 0, false, false, 0 },
};

/* Gemma2Model's keys, in its order (block_count third; no rope base); all
 * required. */
static const gguf_arch_hf_hparam gemma2_hf_hparams[] = {
    { { "max_position_embeddings" }, GGUF_HP_CONTEXT_LENGTH, false, true, 0 },
    { { "hidden_size" }, GGUF_HP_EMBEDDING_LENGTH, false, true, 0 },
    { { "num_hidden_layers" }, GGUF_HP_BLOCK_COUNT, false, true, 0 },
    { { "intermediate_size" }, GGUF_HP_FFN_LENGTH, false, true, 0 },
    { { "num_attention_heads" }, GGUF_HP_HEAD_COUNT, false, true, 0 },
    { { "num_key_value_heads", "num_attention_heads" }, GGUF_HP_HEAD_COUNT_KV, false, true, 0 },
    { { "rms_norm_eps" }, GGUF_HP_RMS_EPS, true, true, 0 },
    { { "head_dim" }, GGUF_HP_KEY_LENGTH, false, true, 0 },
    { { "head_dim" }, GGUF_HP_VALUE_LENGTH, false, true, 0 },
    { { NULL }, 0, false, false, 0 },
};
static const gguf_arch_hf_hparam gemma2_late_hparams[] = {
    { { "attn_logit_softcapping" }, GGUF_HP_ATTN_SOFTCAP, true, true, 0 },
    { { "final_logit_softcapping" }, GGUF_HP_FINAL_SOFTCAP, true, true, 0 },
    { { "sliding_window" }, GGUF_HP_SLIDING_WINDOW, false, true, 0 },
    { { NULL }, 0, false, false, 0 },
};

/* Gemma3Model: the base converter's keys in its order of names (the first
 * present wins; rope_local_base_freq is the local layers' base), each only
 * when config.json has it — but the widths, without which llama.cpp's
 * converter writes a file no loader takes, are required here. */
static const gguf_arch_hf_hparam gemma3_hf_hparams[] = {
    { { "max_position_embeddings", "n_ctx", "n_positions", "max_length", "max_sequence_length",
        "model_max_length" }, GGUF_HP_CONTEXT_LENGTH, false, false, 0 },
    { { "hidden_size", "n_embd", "dim" }, GGUF_HP_EMBEDDING_LENGTH, false, true, 0 },
    { { "intermediate_size", "n_inner", "hidden_dim" }, GGUF_HP_FFN_LENGTH, false, true, 0 },
    { { "num_attention_heads", "n_head", "n_heads" }, GGUF_HP_HEAD_COUNT, false, false, 0 },
    { { "num_key_value_heads", "n_kv_heads" }, GGUF_HP_HEAD_COUNT_KV, false, false, 0 },
    { { "global_rope_theta", "rope_global_theta", "rope_theta_global", "rope_theta",
        "rotary_emb_base" }, GGUF_HP_ROPE_FREQ_BASE, true, false, 0 },
    { { "local_rope_theta", "rope_local_theta", "rope_theta_local", "swa_rope_theta",
        "rope_local_base_freq" }, GGUF_HP_ROPE_FREQ_BASE_SWA, true, false, 0 },
    { { "rms_norm_eps", "norm_eps" }, GGUF_HP_RMS_EPS, true, false, 0 },
    { { "head_dim" }, GGUF_HP_KEY_LENGTH, false, false, 0 },
    { { "head_dim" }, GGUF_HP_VALUE_LENGTH, false, false, 0 },
    { { NULL }, 0, false, false, 0 },
};
/* Then Gemma3Model.set_gguf_parameters' own writes, in its order, with its
 * defaults (hparams.get(name, default)): a key the base part wrote gets the
 * new value in its place, one it did not is added here, after
 * general.file_type — where a gemma-3-4b-it text_config, which gives no
 * heads, head_dim, eps, rope base or context, puts those keys. */
static const gguf_arch_hf_hparam gemma3_late_hparams[] = {
    { { "max_position_embeddings" }, GGUF_HP_CONTEXT_LENGTH, false, false, 131072 },
    { { "num_attention_heads" }, GGUF_HP_HEAD_COUNT, false, false, 8 },
    { { "rms_norm_eps" }, GGUF_HP_RMS_EPS, true, false, 1e-6 },
    { { "head_dim" }, GGUF_HP_KEY_LENGTH, false, false, 256 },
    { { "head_dim" }, GGUF_HP_VALUE_LENGTH, false, false, 256 },
    { { "global_rope_theta", "rope_global_theta", "rope_theta_global", "rope_theta",
        "rotary_emb_base" }, GGUF_HP_ROPE_FREQ_BASE, true, false, 1000000.0 },
    { { "final_logit_softcapping" }, GGUF_HP_FINAL_SOFTCAP, true, false, 0 },
    { { "sliding_window" }, GGUF_HP_SLIDING_WINDOW, false, true, 0 },
    { { "num_key_value_heads" }, GGUF_HP_HEAD_COUNT_KV, false, false, 4 },
    { { NULL }, 0, false, false, 0 },
};

/* GGUF key formats by hyper-parameter (for every table). */
static const char *const hp_keys[GGUF_HP_COUNT] = {
    [GGUF_HP_CONTEXT_LENGTH] = GGUF_KEY_CONTEXT_LENGTH,
    [GGUF_HP_EMBEDDING_LENGTH] = GGUF_KEY_EMBEDDING_LENGTH,
    [GGUF_HP_BLOCK_COUNT] = GGUF_KEY_BLOCK_COUNT,
    [GGUF_HP_FFN_LENGTH] = GGUF_KEY_FFN_LENGTH,
    [GGUF_HP_HEAD_COUNT] = GGUF_KEY_HEAD_COUNT,
    [GGUF_HP_HEAD_COUNT_KV] = GGUF_KEY_HEAD_COUNT_KV,
    [GGUF_HP_KEY_LENGTH] = GGUF_KEY_KEY_LENGTH,
    [GGUF_HP_VALUE_LENGTH] = GGUF_KEY_VALUE_LENGTH,
    [GGUF_HP_ROPE_DIM] = GGUF_KEY_ROPE_DIM_COUNT,
    [GGUF_HP_RMS_EPS] = GGUF_KEY_RMS_EPS,
    [GGUF_HP_ROPE_FREQ_BASE] = GGUF_KEY_ROPE_FREQ_BASE,
    [GGUF_HP_LAYER_NORM_EPS] = GGUF_KEY_LAYER_NORM_EPS,
    [GGUF_HP_EXPERT_COUNT] = GGUF_KEY_EXPERT_COUNT,
    [GGUF_HP_EXPERT_USED_COUNT] = GGUF_KEY_EXPERT_USED_COUNT,
    [GGUF_HP_VOCAB_SIZE] = GGUF_KEY_VOCAB_SIZE,
    [GGUF_HP_EXPERT_FFN_LENGTH] = GGUF_KEY_EXPERT_FFN_LENGTH,
    [GGUF_HP_ROPE_ORIG_CTX] = GGUF_KEY_ROPE_ORIG_CTX,
    [GGUF_HP_SLIDING_WINDOW] = GGUF_KEY_SLIDING_WINDOW,
    [GGUF_HP_SWA_PATTERN] = GGUF_KEY_SLIDING_WINDOW_PATTERN,
    [GGUF_HP_ROPE_FREQ_BASE_SWA] = GGUF_KEY_ROPE_FREQ_BASE_SWA,
    [GGUF_HP_ATTN_SOFTCAP] = GGUF_KEY_ATTN_SOFTCAP,
    [GGUF_HP_FINAL_SOFTCAP] = GGUF_KEY_FINAL_SOFTCAP,
};

const char *gguf_hp_key(int hp)
{
    return hp >= 0 && hp < GGUF_HP_COUNT ? hp_keys[hp] : NULL;
}

const char *gguf_hp_name(int hp)
{
    const char *k = gguf_hp_key(hp);
    return k ? k + 3 : "unknown"; /* past "%s." */
}

/* ===========================================================================
 * Tensors
 */

#define HF(n) "model.layers.%d." n
#define META(n) "layers.%d." n

/* The LLaMA-style decoder (llama.cpp's tensors and shapes for it), with the
 * Hugging Face and Meta checkpoint names each comes from. */
#define R GGUF_NEED_REQUIRED
#define O GGUF_NEED_OPTIONAL
static const gguf_arch_tensor decoder_tensors[] = {
    { GGUF_T_TOKEN_EMBD, GGUF_ROLE_TOKEN_EMBD, R, 0, GGUF_DIM_EMBD, GGUF_DIM_VOCAB,
      "model.embed_tokens.weight", "tok_embeddings.weight", GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_OUTPUT_NORM, GGUF_ROLE_OUTPUT_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      "model.norm.weight", "norm.weight", GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_OUTPUT, GGUF_ROLE_OUTPUT, GGUF_NEED_UNLESS_FLAG, GGUF_ARCH_TIED_OUTPUT, GGUF_DIM_EMBD,
      GGUF_DIM_VOCAB, "lm_head.weight", "output.weight", GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_NORM, GGUF_ROLE_ATTN_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      HF("input_layernorm.weight"), META("attention_norm.weight"), GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_Q, GGUF_ROLE_ATTN_Q, R, 0, GGUF_DIM_EMBD, GGUF_DIM_Q,
      HF("self_attn.q_proj.weight"), META("attention.wq.weight"), GGUF_PERMUTE_Q, GGUF_DIM_1 },
    { GGUF_T_ATTN_K, GGUF_ROLE_ATTN_K, R, 0, GGUF_DIM_EMBD, GGUF_DIM_K,
      HF("self_attn.k_proj.weight"), META("attention.wk.weight"), GGUF_PERMUTE_K, GGUF_DIM_1 },
    { GGUF_T_ATTN_V, GGUF_ROLE_ATTN_V, R, 0, GGUF_DIM_EMBD, GGUF_DIM_V,
      HF("self_attn.v_proj.weight"), META("attention.wv.weight"), GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_Q_BIAS, GGUF_ROLE_ATTN_Q_BIAS, GGUF_NEED_IF_FLAG, GGUF_ARCH_QKV_BIAS, GGUF_DIM_Q,
      GGUF_DIM_1, HF("self_attn.q_proj.bias"), NULL, GGUF_PERMUTE_Q, GGUF_DIM_1 },
    { GGUF_T_ATTN_K_BIAS, GGUF_ROLE_ATTN_K_BIAS, GGUF_NEED_IF_FLAG, GGUF_ARCH_QKV_BIAS, GGUF_DIM_K,
      GGUF_DIM_1, HF("self_attn.k_proj.bias"), NULL, GGUF_PERMUTE_K, GGUF_DIM_1 },
    { GGUF_T_ATTN_V_BIAS, GGUF_ROLE_ATTN_V_BIAS, GGUF_NEED_IF_FLAG, GGUF_ARCH_QKV_BIAS, GGUF_DIM_V,
      GGUF_DIM_1, HF("self_attn.v_proj.bias"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_OUT, GGUF_ROLE_ATTN_OUT, R, 0, GGUF_DIM_Q, GGUF_DIM_EMBD,
      HF("self_attn.o_proj.weight"), META("attention.wo.weight"), GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_NORM, GGUF_ROLE_FFN_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      HF("post_attention_layernorm.weight"), META("ffn_norm.weight"), GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_GATE, GGUF_ROLE_FFN_GATE, GGUF_NEED_DENSE, 0, GGUF_DIM_EMBD, GGUF_DIM_FF,
      HF("mlp.gate_proj.weight"), META("feed_forward.w1.weight"), GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_UP, GGUF_ROLE_FFN_UP, GGUF_NEED_DENSE, 0, GGUF_DIM_EMBD, GGUF_DIM_FF,
      HF("mlp.up_proj.weight"), META("feed_forward.w3.weight"), GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_DOWN, GGUF_ROLE_FFN_DOWN, GGUF_NEED_DENSE, 0, GGUF_DIM_FF, GGUF_DIM_EMBD,
      HF("mlp.down_proj.weight"), META("feed_forward.w2.weight"), GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, 0 },
};

/* What llama.cpp's llama adds: llama3-style rope factors (the converter
 * computes them) and optional output and feed-forward biases. */
static const gguf_arch_tensor llama_extra_tensors[] = {
    { GGUF_T_ROPE_FREQS, GGUF_ROLE_ROPE_FREQS, O, 0, GGUF_DIM_ROT_HALF, GGUF_DIM_1, NULL, NULL,
      GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_OUT_BIAS, GGUF_ROLE_ATTN_OUT_BIAS, O, 0, GGUF_DIM_EMBD, GGUF_DIM_1, NULL, NULL,
      GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_GATE_BIAS, GGUF_ROLE_FFN_GATE_BIAS, O, 0, GGUF_DIM_FF, GGUF_DIM_1, NULL, NULL,
      GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_UP_BIAS, GGUF_ROLE_FFN_UP_BIAS, O, 0, GGUF_DIM_FF, GGUF_DIM_1, NULL, NULL,
      GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_DOWN_BIAS, GGUF_ROLE_FFN_DOWN_BIAS, O, 0, GGUF_DIM_EMBD, GGUF_DIM_1, NULL, NULL,
      GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, 0 },
};

/* Qwen3's per-head RMSNorm of q and k (one weight vector of key_length,
 * shared by all heads). */
static const gguf_arch_tensor qk_norm_tensors[] = {
    { GGUF_T_ATTN_Q_NORM, GGUF_ROLE_ATTN_Q_NORM, R, 0, GGUF_DIM_HEAD_K, GGUF_DIM_1,
      HF("self_attn.q_norm.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_K_NORM, GGUF_ROLE_ATTN_K_NORM, R, 0, GGUF_DIM_HEAD_K, GGUF_DIM_1,
      HF("self_attn.k_norm.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, 0 },
};

/* Experts: the router (F32 in every output type) and each projection of
 * every expert stacked into one [.., .., expert_count] tensor, the rows in
 * the order the family's converter emits them once a block's last expert
 * arrives. Mixtral (llama.cpp writes it as llama): w1 = gate, w2 = down,
 * w3 = up. */
#define X GGUF_NEED_EXPERTS
#define EXP GGUF_DIM_EXPERTS
static const gguf_arch_tensor mixtral_tensors[] = {
    { GGUF_T_FFN_GATE_EXPS, GGUF_ROLE_FFN_GATE_EXPS, X, 0, GGUF_DIM_EMBD, GGUF_DIM_FF_EXP,
      HF("block_sparse_moe.experts.%d.w1.weight"), NULL, GGUF_PERMUTE_NONE, EXP },
    { GGUF_T_FFN_DOWN_EXPS, GGUF_ROLE_FFN_DOWN_EXPS, X, 0, GGUF_DIM_FF_EXP, GGUF_DIM_EMBD,
      HF("block_sparse_moe.experts.%d.w2.weight"), NULL, GGUF_PERMUTE_NONE, EXP },
    { GGUF_T_FFN_UP_EXPS, GGUF_ROLE_FFN_UP_EXPS, X, 0, GGUF_DIM_EMBD, GGUF_DIM_FF_EXP,
      HF("block_sparse_moe.experts.%d.w3.weight"), NULL, GGUF_PERMUTE_NONE, EXP },
    { GGUF_T_FFN_GATE_INP, GGUF_ROLE_FFN_GATE_INP, X, 0, GGUF_DIM_EMBD, GGUF_DIM_EXPERTS,
      HF("block_sparse_moe.gate.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, 0 },
};

/* Qwen3-MoE (Qwen2MoeModel's converter): down, gate, up. */
static const gguf_arch_tensor qwen3moe_tensors[] = {
    { GGUF_T_FFN_DOWN_EXPS, GGUF_ROLE_FFN_DOWN_EXPS, X, 0, GGUF_DIM_FF_EXP, GGUF_DIM_EMBD,
      HF("mlp.experts.%d.down_proj.weight"), NULL, GGUF_PERMUTE_NONE, EXP },
    { GGUF_T_FFN_GATE_EXPS, GGUF_ROLE_FFN_GATE_EXPS, X, 0, GGUF_DIM_EMBD, GGUF_DIM_FF_EXP,
      HF("mlp.experts.%d.gate_proj.weight"), NULL, GGUF_PERMUTE_NONE, EXP },
    { GGUF_T_FFN_UP_EXPS, GGUF_ROLE_FFN_UP_EXPS, X, 0, GGUF_DIM_EMBD, GGUF_DIM_FF_EXP,
      HF("mlp.experts.%d.up_proj.weight"), NULL, GGUF_PERMUTE_NONE, EXP },
    { GGUF_T_FFN_GATE_INP, GGUF_ROLE_FFN_GATE_INP, X, 0, GGUF_DIM_EMBD, GGUF_DIM_EXPERTS,
      HF("mlp.gate.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, 0 },
};

/* gpt-oss: its own layout. Biases on q/k/v/o, a sink logit per head, the
 * pre-feed-forward norm named post_attention_norm (role ffn_norm), a router
 * with bias, and experts with biases. The checkpoint's experts come stacked
 * and in MXFP4 (*_blocks + *_scales, gate and up rows interleaved in
 * gate_up_proj): the converter repacks them itself (convert/hf.c), so their
 * rows and the gate/up biases name no checkpoint tensor here. */
static const gguf_arch_tensor gptoss_tensors[] = {
    { GGUF_T_TOKEN_EMBD, GGUF_ROLE_TOKEN_EMBD, R, 0, GGUF_DIM_EMBD, GGUF_DIM_VOCAB,
      "model.embed_tokens.weight", NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_OUTPUT_NORM, GGUF_ROLE_OUTPUT_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      "model.norm.weight", NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_OUTPUT, GGUF_ROLE_OUTPUT, R, 0, GGUF_DIM_EMBD, GGUF_DIM_VOCAB,
      "lm_head.weight", NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_NORM, GGUF_ROLE_ATTN_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      HF("input_layernorm.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_POST_NORM, GGUF_ROLE_FFN_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      HF("post_attention_layernorm.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_Q, GGUF_ROLE_ATTN_Q, R, 0, GGUF_DIM_EMBD, GGUF_DIM_Q,
      HF("self_attn.q_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_K, GGUF_ROLE_ATTN_K, R, 0, GGUF_DIM_EMBD, GGUF_DIM_K,
      HF("self_attn.k_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_V, GGUF_ROLE_ATTN_V, R, 0, GGUF_DIM_EMBD, GGUF_DIM_V,
      HF("self_attn.v_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_OUT, GGUF_ROLE_ATTN_OUT, R, 0, GGUF_DIM_Q, GGUF_DIM_EMBD,
      HF("self_attn.o_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_SINKS, GGUF_ROLE_ATTN_SINKS, R, 0, GGUF_DIM_HEADS, GGUF_DIM_1,
      HF("self_attn.sinks"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_GATE_INP, GGUF_ROLE_FFN_GATE_INP, R, 0, GGUF_DIM_EMBD, GGUF_DIM_EXPERTS,
      HF("mlp.router.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_GATE_EXPS, GGUF_ROLE_FFN_GATE_EXPS, R, 0, GGUF_DIM_EMBD, GGUF_DIM_FF_EXP,
      NULL, NULL, GGUF_PERMUTE_NONE, EXP },
    { GGUF_T_FFN_DOWN_EXPS, GGUF_ROLE_FFN_DOWN_EXPS, R, 0, GGUF_DIM_FF_EXP, GGUF_DIM_EMBD,
      NULL, NULL, GGUF_PERMUTE_NONE, EXP },
    { GGUF_T_FFN_UP_EXPS, GGUF_ROLE_FFN_UP_EXPS, R, 0, GGUF_DIM_EMBD, GGUF_DIM_FF_EXP,
      NULL, NULL, GGUF_PERMUTE_NONE, EXP },
    { GGUF_T_ATTN_Q_BIAS, GGUF_ROLE_ATTN_Q_BIAS, R, 0, GGUF_DIM_Q, GGUF_DIM_1,
      HF("self_attn.q_proj.bias"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_K_BIAS, GGUF_ROLE_ATTN_K_BIAS, R, 0, GGUF_DIM_K, GGUF_DIM_1,
      HF("self_attn.k_proj.bias"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_V_BIAS, GGUF_ROLE_ATTN_V_BIAS, R, 0, GGUF_DIM_V, GGUF_DIM_1,
      HF("self_attn.v_proj.bias"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_OUT_BIAS, GGUF_ROLE_ATTN_OUT_BIAS, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      HF("self_attn.o_proj.bias"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_GATE_INP_BIAS, GGUF_ROLE_FFN_GATE_INP_BIAS, R, 0, GGUF_DIM_EXPERTS, GGUF_DIM_1,
      HF("mlp.router.bias"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_GATE_EXPS_BIAS, GGUF_ROLE_FFN_GATE_EXPS_BIAS, R, 0, GGUF_DIM_FF_EXP,
      GGUF_DIM_EXPERTS, NULL, NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_DOWN_EXPS_BIAS, GGUF_ROLE_FFN_DOWN_EXPS_BIAS, R, 0, GGUF_DIM_EMBD,
      GGUF_DIM_EXPERTS, HF("mlp.experts.down_proj_bias"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_UP_EXPS_BIAS, GGUF_ROLE_FFN_UP_EXPS_BIAS, R, 0, GGUF_DIM_FF_EXP,
      GGUF_DIM_EXPERTS, NULL, NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, 0 },
};
#undef X
#undef EXP

/* Phi-3 (llama.cpp's phi3 loader): q, k and v in one attn_qkv, gate and up
 * in one ffn_up of twice the feed-forward width, the attention output
 * embedding_length wide; the LongRoPE factors of the 128k models are
 * globals. */
static const gguf_arch_tensor phi3_tensors[] = {
    { GGUF_T_TOKEN_EMBD, GGUF_ROLE_TOKEN_EMBD, R, 0, GGUF_DIM_EMBD, GGUF_DIM_VOCAB,
      "model.embed_tokens.weight", NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_OUTPUT_NORM, GGUF_ROLE_OUTPUT_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      "model.norm.weight", NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_OUTPUT, GGUF_ROLE_OUTPUT, GGUF_NEED_UNLESS_FLAG, GGUF_ARCH_TIED_OUTPUT, GGUF_DIM_EMBD,
      GGUF_DIM_VOCAB, "lm_head.weight", NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ROPE_FACTORS_LONG, GGUF_ROLE_ROPE_FACTORS_LONG, O, 0, GGUF_DIM_ROT_HALF, GGUF_DIM_1,
      NULL, NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ROPE_FACTORS_SHORT, GGUF_ROLE_ROPE_FACTORS_SHORT, O, 0, GGUF_DIM_ROT_HALF, GGUF_DIM_1,
      NULL, NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_NORM, GGUF_ROLE_ATTN_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      HF("input_layernorm.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_QKV, GGUF_ROLE_ATTN_QKV, R, 0, GGUF_DIM_EMBD, GGUF_DIM_QKV,
      HF("self_attn.qkv_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_OUT, GGUF_ROLE_ATTN_OUT, R, 0, GGUF_DIM_EMBD, GGUF_DIM_EMBD,
      HF("self_attn.o_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_NORM, GGUF_ROLE_FFN_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      HF("post_attention_layernorm.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_UP, GGUF_ROLE_FFN_GATE_UP, R, 0, GGUF_DIM_EMBD, GGUF_DIM_FF2,
      HF("mlp.gate_up_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_DOWN, GGUF_ROLE_FFN_DOWN, R, 0, GGUF_DIM_FF, GGUF_DIM_EMBD,
      HF("mlp.down_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, 0 },
};

/* Gemma 2 and 3 (llama.cpp's gemma2/gemma3 loaders): RMSNorms before and
 * after attention and the feed-forward (pre_feedforward_layernorm is
 * ffn_norm), tied output (Gemma 2 has none: its converter drops lm_head),
 * Gemma 3's per-head q/k norms. */
static const gguf_arch_tensor gemma_tensors[] = {
    { GGUF_T_TOKEN_EMBD, GGUF_ROLE_TOKEN_EMBD, R, 0, GGUF_DIM_EMBD, GGUF_DIM_VOCAB,
      "model.embed_tokens.weight", NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_OUTPUT_NORM, GGUF_ROLE_OUTPUT_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      "model.norm.weight", NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_NORM, GGUF_ROLE_ATTN_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      HF("input_layernorm.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_Q, GGUF_ROLE_ATTN_Q, R, 0, GGUF_DIM_EMBD, GGUF_DIM_Q,
      HF("self_attn.q_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_K, GGUF_ROLE_ATTN_K, R, 0, GGUF_DIM_EMBD, GGUF_DIM_K,
      HF("self_attn.k_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_V, GGUF_ROLE_ATTN_V, R, 0, GGUF_DIM_EMBD, GGUF_DIM_V,
      HF("self_attn.v_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_OUT, GGUF_ROLE_ATTN_OUT, R, 0, GGUF_DIM_Q, GGUF_DIM_EMBD,
      HF("self_attn.o_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_ATTN_POST_NORM, GGUF_ROLE_ATTN_POST_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      HF("post_attention_layernorm.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_NORM, GGUF_ROLE_FFN_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      HF("pre_feedforward_layernorm.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_GATE, GGUF_ROLE_FFN_GATE, R, 0, GGUF_DIM_EMBD, GGUF_DIM_FF,
      HF("mlp.gate_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_UP, GGUF_ROLE_FFN_UP, R, 0, GGUF_DIM_EMBD, GGUF_DIM_FF,
      HF("mlp.up_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_DOWN, GGUF_ROLE_FFN_DOWN, R, 0, GGUF_DIM_FF, GGUF_DIM_EMBD,
      HF("mlp.down_proj.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { GGUF_T_FFN_POST_NORM, GGUF_ROLE_FFN_POST_NORM, R, 0, GGUF_DIM_EMBD, GGUF_DIM_1,
      HF("post_feedforward_layernorm.weight"), NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, 0 },
};
static const gguf_arch_tensor gemma3_tensors[] = {
    { GGUF_T_OUTPUT, GGUF_ROLE_OUTPUT, GGUF_NEED_UNLESS_FLAG, GGUF_ARCH_TIED_OUTPUT, GGUF_DIM_EMBD,
      GGUF_DIM_VOCAB, "lm_head.weight", NULL, GGUF_PERMUTE_NONE, GGUF_DIM_1 },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, 0 },
};

static const gguf_arch_tensor *const llama_tables[] = { decoder_tensors, llama_extra_tensors,
                                                        mixtral_tensors, NULL };
static const gguf_arch_tensor *const qwen2_tables[] = { decoder_tensors, NULL };
static const gguf_arch_tensor *const qwen3_tables[] = { decoder_tensors, qk_norm_tensors, NULL };
static const gguf_arch_tensor *const qwen3moe_tables[] = { decoder_tensors, qk_norm_tensors,
                                                           qwen3moe_tensors, NULL };
static const gguf_arch_tensor *const phi3_tables[] = { phi3_tensors, NULL };
static const gguf_arch_tensor *const gptoss_tables[] = { gptoss_tensors, NULL };
static const gguf_arch_tensor *const gemma2_tables[] = { gemma_tensors, NULL };
static const gguf_arch_tensor *const gemma3_tables[] = { gemma_tensors, gemma3_tensors,
                                                         qk_norm_tensors, NULL };
#undef R
#undef O
#undef HF
#undef META

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

/* ===========================================================================
 * The registry
 */

static const gguf_arch ARCHS[] = {
    { .name = "llama", .about = "LLaMA 1-3, Mistral, Mixtral: RMSNorm, SwiGLU, rotary pairs, GQA",
      .hf_classes = llama_hf, .hf_skip = skip_common, .hparams = decoder_hparams,
      .hf_hparams = base_hf_hparams, .tables = llama_tables,
      .flags = GGUF_ARCH_TIED_OUTPUT | GGUF_ARCH_ROPE_WHOLE_HEAD | GGUF_ARCH_ROPE_LLAMA3 |
               GGUF_ARCH_ROPE_LINEAR | GGUF_ARCH_EXPERTS | GGUF_ARCH_PERMUTE_QK |
               GGUF_ARCH_LLAMA_VOCAB | GGUF_ARCH_WRITES_ROPE_DIM,
      .rope = GGUF_ROPE_NORM, .activation = GGUF_ACT_SILU, .routing = GGUF_ROUTING_SOFTMAX_TOPK },
    /* what some converters call Mistral models (llama.cpp writes "llama") */
    { .name = "mistral", .about = "a LLaMA model under the name some converters give Mistral",
      .hf_classes = no_hf, .hf_skip = skip_common, .hparams = decoder_hparams,
      .hf_hparams = base_hf_hparams, .tables = llama_tables,
      .flags = GGUF_ARCH_TIED_OUTPUT | GGUF_ARCH_ROPE_WHOLE_HEAD | GGUF_ARCH_ROPE_LINEAR,
      .rope = GGUF_ROPE_NORM, .activation = GGUF_ACT_SILU },
    /* Qwen2 checkpoints already have llama.cpp's rotary layout */
    { .name = "qwen2", .about = "Qwen2, Qwen2.5: LLaMA layout with q/k/v biases, NEOX rotary halves",
      .hf_classes = qwen2_hf, .hf_skip = skip_common, .hparams = decoder_hparams,
      .hf_hparams = base_hf_hparams, .tables = qwen2_tables,
      .flags = GGUF_ARCH_TIED_OUTPUT | GGUF_ARCH_QKV_BIAS | GGUF_ARCH_ROPE_LINEAR,
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_SILU },
    /* head_dim is its own hyper-parameter (key_length), not hidden/heads */
    { .name = "qwen3", .about = "Qwen3 dense: Qwen2's layout without biases, per-head q/k RMSNorm",
      .hf_classes = qwen3_hf, .hf_skip = skip_common, .hparams = decoder_hparams,
      .hf_hparams = base_hf_hparams, .tables = qwen3_tables,
      .flags = GGUF_ARCH_TIED_OUTPUT | GGUF_ARCH_QK_NORM | GGUF_ARCH_ROPE_LINEAR,
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_SILU },
    /* Qwen3 with the dense feed-forward replaced by routed experts */
    { .name = "qwen3moe", .about = "Qwen3-MoE: Qwen3 attention, top-k softmax-routed SwiGLU experts",
      .hf_classes = qwen3moe_hf, .hf_skip = skip_common, .hparams = decoder_hparams,
      .hf_hparams = base_hf_hparams, .tables = qwen3moe_tables,
      .flags = GGUF_ARCH_TIED_OUTPUT | GGUF_ARCH_QK_NORM | GGUF_ARCH_ROPE_LINEAR | GGUF_ARCH_EXPERTS,
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_SILU, .routing = GGUF_ROUTING_SOFTMAX_TOPK,
      .hf_hparams_late = qwen3moe_late_hparams },
    /* llama.cpp runs Phi-3 without its sliding window (the converter still
     * writes attention.sliding_window): no sliding_window_pattern row */
    { .name = "phi3", .about = "Phi-3: fused qkv and gate-up, q scaled before the scores, NEOX",
      .hf_classes = phi3_hf, .hf_skip = skip_common, .hparams = decoder_hparams,
      .hf_hparams = phi3_hf_hparams, .tables = phi3_tables,
      .flags = GGUF_ARCH_TIED_OUTPUT | GGUF_ARCH_FUSED_QKV | GGUF_ARCH_FUSED_GATE_UP |
               GGUF_ARCH_SCALE_Q | GGUF_ARCH_PHI3_VOCAB | GGUF_ARCH_OWN_ROPE_KEYS,
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_SILU, .hf_hparams_late = phi3_late_hparams },
    /* OpenAI's open-weight MoE: every other layer (from layer 0) attends
     * within a sliding window (its hparams' pattern row); experts stay MXFP4 */
    { .name = "gpt-oss", .about = "gpt-oss: biased GQA with sinks, alternating SWA, YaRN, MXFP4 experts",
      .hf_classes = gptoss_hf, .hf_skip = skip_common, .hparams = gptoss_hparams,
      .hf_hparams = base_hf_hparams, .tables = gptoss_tables,
      .flags = GGUF_ARCH_EXPERTS | GGUF_ARCH_ATTN_SINKS | GGUF_ARCH_ROPE_YARN |
               GGUF_ARCH_MXFP4_EXPERTS,
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_SWIGLU_OAI,
      .routing = GGUF_ROUTING_TOPK_SOFTMAX, .hf_hparams_late = gptoss_late_hparams },
    /* Gemma: embeddings times sqrt(width), x·(1 + w) norms stored as w + 1,
     * GeGLU, q scaled after rope; Gemma 2 soft-caps scores and logits */
    { .name = "gemma2", .about = "Gemma 2: post-norms, GeGLU, alternating SWA, soft-capped scores and logits",
      .hf_classes = gemma2_hf, .hf_skip = gemma2_skip, .hparams = gemma2_hparams,
      .hf_hparams = gemma2_hf_hparams, .tables = gemma2_tables,
      .flags = GGUF_ARCH_TIED_OUTPUT | GGUF_ARCH_SCALE_Q | GGUF_ARCH_SCALE_EMBD |
               GGUF_ARCH_ATTN_SOFTCAP | GGUF_ARCH_NO_SPACE_PREFIX | GGUF_ARCH_OWN_ROPE_KEYS,
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_GELU_TANH, .norm_offset = 1.0f,
      .q_scale_width_blocks = 46, .hf_hparams_late = gemma2_late_hparams },
    { .name = "gemma3", .about = "Gemma 3 text: Gemma 2 with q/k norms, 5 local : 1 global layers, two rope bases",
      .hf_classes = gemma3_hf, .hf_skip = skip_common, .hparams = gemma3_hparams,
      .hf_hparams = gemma3_hf_hparams, .tables = gemma3_tables,
      .flags = GGUF_ARCH_TIED_OUTPUT | GGUF_ARCH_QK_NORM | GGUF_ARCH_SCALE_Q |
               GGUF_ARCH_SCALE_EMBD | GGUF_ARCH_SWA_ROPE_PLAIN | GGUF_ARCH_TRIM_EMBD |
               GGUF_ARCH_NO_SPACE_PREFIX,
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_GELU_TANH, .norm_offset = 1.0f,
      .q_scale_width_blocks = 62, .hf_hparams_late = gemma3_late_hparams,
      .hf_strip = "language_model.", .hf_skip_prefix = gemma3_vision },
};
#define N_ARCHS (sizeof ARCHS / sizeof *ARCHS)

const gguf_arch *gguf_arch_list(size_t *n)
{
    *n = N_ARCHS;
    return ARCHS;
}

const gguf_arch *gguf_arch_find(const char *name)
{
    for (size_t i = 0; name && i < N_ARCHS; i++)
        if (!strcmp(ARCHS[i].name, name))
            return &ARCHS[i];
    return NULL;
}

const gguf_arch *gguf_arch_find_hf(const char *hf_class)
{
    for (size_t i = 0; hf_class && i < N_ARCHS; i++)
        for (const char *const *n = ARCHS[i].hf_classes; *n; n++)
            if (!strcmp(*n, hf_class))
                return &ARCHS[i];
    return NULL;
}

const char *gguf_arch_hf_list(void)
{
    static char list[512];
    if (!list[0]) {
        size_t len = 0;
        for (size_t i = 0; i < N_ARCHS; i++)
            for (const char *const *n = ARCHS[i].hf_classes; *n && len < sizeof list; n++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", *n);
    }
    return list;
}

size_t gguf_arch_n_tensors(const gguf_arch *a)
{
    size_t n = 0;
    for (const gguf_arch_tensor *const *tab = a->tables; *tab; tab++)
        for (const gguf_arch_tensor *t = *tab; t->name; t++)
            n++;
    return n;
}

const gguf_arch_tensor *gguf_arch_tensor_at(const gguf_arch *a, size_t i)
{
    for (const gguf_arch_tensor *const *tab = a->tables; *tab; tab++)
        for (const gguf_arch_tensor *t = *tab; t->name; t++)
            if (i-- == 0)
                return t;
    return NULL;
}

static const char *const role_names[GGUF_ROLE_COUNT] = {
    [GGUF_ROLE_TOKEN_EMBD] = "token_embd", [GGUF_ROLE_OUTPUT_NORM] = "output_norm",
    [GGUF_ROLE_OUTPUT] = "output", [GGUF_ROLE_ROPE_FREQS] = "rope_freqs",
    [GGUF_ROLE_ATTN_NORM] = "attn_norm", [GGUF_ROLE_ATTN_Q] = "attn_q",
    [GGUF_ROLE_ATTN_K] = "attn_k", [GGUF_ROLE_ATTN_V] = "attn_v",
    [GGUF_ROLE_ATTN_Q_BIAS] = "attn_q_bias", [GGUF_ROLE_ATTN_K_BIAS] = "attn_k_bias",
    [GGUF_ROLE_ATTN_V_BIAS] = "attn_v_bias", [GGUF_ROLE_ATTN_OUT] = "attn_output",
    [GGUF_ROLE_ATTN_OUT_BIAS] = "attn_output_bias", [GGUF_ROLE_FFN_NORM] = "ffn_norm",
    [GGUF_ROLE_FFN_GATE] = "ffn_gate", [GGUF_ROLE_FFN_UP] = "ffn_up",
    [GGUF_ROLE_FFN_DOWN] = "ffn_down", [GGUF_ROLE_FFN_GATE_BIAS] = "ffn_gate_bias",
    [GGUF_ROLE_FFN_UP_BIAS] = "ffn_up_bias", [GGUF_ROLE_FFN_DOWN_BIAS] = "ffn_down_bias",
    [GGUF_ROLE_ATTN_Q_NORM] = "attn_q_norm", [GGUF_ROLE_ATTN_K_NORM] = "attn_k_norm",
    [GGUF_ROLE_FFN_GATE_INP] = "ffn_gate_inp", [GGUF_ROLE_FFN_GATE_EXPS] = "ffn_gate_exps",
    [GGUF_ROLE_FFN_UP_EXPS] = "ffn_up_exps", [GGUF_ROLE_FFN_DOWN_EXPS] = "ffn_down_exps",
    [GGUF_ROLE_ATTN_QKV] = "attn_qkv", [GGUF_ROLE_FFN_GATE_UP] = "ffn_gate_up",
    [GGUF_ROLE_ROPE_FACTORS_LONG] = "rope_factors_long",
    [GGUF_ROLE_ROPE_FACTORS_SHORT] = "rope_factors_short",
    [GGUF_ROLE_ATTN_SINKS] = "attn_sinks", [GGUF_ROLE_FFN_GATE_INP_BIAS] = "ffn_gate_inp_bias",
    [GGUF_ROLE_FFN_GATE_EXPS_BIAS] = "ffn_gate_exps_bias",
    [GGUF_ROLE_FFN_UP_EXPS_BIAS] = "ffn_up_exps_bias",
    [GGUF_ROLE_FFN_DOWN_EXPS_BIAS] = "ffn_down_exps_bias",
    [GGUF_ROLE_ATTN_POST_NORM] = "attn_post_norm", [GGUF_ROLE_FFN_POST_NORM] = "ffn_post_norm",
};

const char *gguf_role_name(int role)
{
    return role >= 0 && role < GGUF_ROLE_COUNT ? role_names[role] : "unknown";
}

static const char *const dim_names[GGUF_DIM_COUNT] = {
    [GGUF_DIM_1] = "1", [GGUF_DIM_EMBD] = "embedding_length", [GGUF_DIM_FF] = "feed_forward_length",
    [GGUF_DIM_VOCAB] = "n_vocab", [GGUF_DIM_Q] = "head_count × head_dim",
    [GGUF_DIM_K] = "head_count_kv × head_dim", [GGUF_DIM_V] = "head_count_kv × value_length",
    [GGUF_DIM_ROT_HALF] = "rope.dimension_count / 2", [GGUF_DIM_HEAD_K] = "key_length",
    [GGUF_DIM_EXPERTS] = "expert_count", [GGUF_DIM_FF_EXP] = "expert_feed_forward_length",
    [GGUF_DIM_QKV] = "embedding_length + 2 × head_count_kv × value_length",
    [GGUF_DIM_FF2] = "2 × feed_forward_length",
    [GGUF_DIM_HEADS] = "head_count",
};

const char *gguf_dim_name(int dim)
{
    return dim >= 0 && dim < GGUF_DIM_COUNT ? dim_names[dim] : "unknown";
}

bool gguf_arch_tensor_required_for(const gguf_arch *a, const gguf_arch_tensor *t, bool experts)
{
    switch (t->need) {
    case GGUF_NEED_REQUIRED:     return true;
    case GGUF_NEED_OPTIONAL:     return false;
    case GGUF_NEED_IF_FLAG:      return (a->flags & t->need_flag) != 0;
    case GGUF_NEED_UNLESS_FLAG:  return (a->flags & t->need_flag) == 0;
    case GGUF_NEED_DENSE:        return !experts;
    case GGUF_NEED_EXPERTS:      return experts;
    }
    return true;
}

bool gguf_arch_tensor_required(const gguf_arch *a, const gguf_arch_tensor *t)
{
    return gguf_arch_tensor_required_for(a, t, false);
}

#define BLOCK_PREFIX "blk.%d."

bool gguf_arch_tensor_per_block(const gguf_arch_tensor *t)
{
    return strncmp(t->name, BLOCK_PREFIX, strlen(BLOCK_PREFIX)) == 0;
}

const gguf_arch_tensor *gguf_arch_tensor_of(const gguf_arch *a, int role)
{
    for (const gguf_arch_tensor *const *tab = a->tables; *tab; tab++)
        for (const gguf_arch_tensor *t = *tab; t->name; t++)
            if (t->role == role)
                return t;
    return NULL;
}

/* "blk.N.REST" with N in canonical decimal (no sign, no leading zero). */
bool gguf_parse_block_name(const char *name, int64_t *block, const char **rest)
{
    if (strncmp(name, "blk.", 4) != 0 || !isdigit((unsigned char)name[4]))
        return false;
    const char *p = name + 4;
    if (p[0] == '0' && isdigit((unsigned char)p[1]))
        return false;
    int64_t v = 0;
    for (int n = 0; isdigit((unsigned char)*p); p++, n++) {
        if (n == 18)
            return false;
        v = v * 10 + (*p - '0');
    }
    if (*p != '.')
        return false;
    *block = v;
    *rest = p + 1;
    return true;
}

const gguf_arch_tensor *gguf_arch_match(const gguf_arch *a, const char *name, int *block)
{
    int64_t b;
    const char *rest;
    const bool blk = gguf_parse_block_name(name, &b, &rest);
    for (const gguf_arch_tensor *const *tab = a->tables; *tab; tab++)
        for (const gguf_arch_tensor *t = *tab; t->name; t++) {
            if (gguf_arch_tensor_per_block(t) != blk)
                continue;
            if (blk ? strcmp(t->name + strlen(BLOCK_PREFIX), rest) != 0 : strcmp(t->name, name) != 0)
                continue;
            if (block)
                *block = blk ? (b > INT32_MAX ? INT32_MAX : (int)b) : -1;
            return t;
        }
    return NULL;
}

int64_t gguf_hparams_dim(const gguf_hparams *hp, int dim)
{
    switch (dim) {
    case GGUF_DIM_1:        return 1;
    case GGUF_DIM_EMBD:     return hp->v[GGUF_HP_EMBEDDING_LENGTH];
    case GGUF_DIM_FF:       return hp->v[GGUF_HP_FFN_LENGTH];
    case GGUF_DIM_VOCAB:    return hp->n_vocab;
    case GGUF_DIM_Q:        return hp->v[GGUF_HP_HEAD_COUNT] * hp->head_k;
    case GGUF_DIM_K:        return hp->n_head_kv * hp->head_k;
    case GGUF_DIM_V:        return hp->n_head_kv * hp->head_v;
    case GGUF_DIM_ROT_HALF: return hp->n_rot / 2;
    case GGUF_DIM_HEAD_K:   return hp->head_k;
    case GGUF_DIM_EXPERTS:  return hp->v[GGUF_HP_EXPERT_COUNT];
    case GGUF_DIM_HEADS:    return hp->v[GGUF_HP_HEAD_COUNT];
    case GGUF_DIM_FF_EXP:
        return hp->has[GGUF_HP_EXPERT_FFN_LENGTH] ? hp->v[GGUF_HP_EXPERT_FFN_LENGTH]
                                                  : hp->v[GGUF_HP_FFN_LENGTH];
    case GGUF_DIM_QKV:      return hp->v[GGUF_HP_EMBEDDING_LENGTH] + 2 * hp->n_head_kv * hp->head_v;
    case GGUF_DIM_FF2:      return 2 * hp->v[GGUF_HP_FFN_LENGTH];
    }
    return -1;
}
