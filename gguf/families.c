/*
 * families.c — every architecture family as data: its model schema (the
 * registry rows of <ggufkit/arch.h>: hyper-parameter table, tensor table,
 * features) and its conversion recipe (arch_recipe.h: Hugging Face
 * classes, config.json keys, checkpoint names, converter facts). Adding a
 * family made of existing features is this file alone (docs/design.md has
 * the checklist); arch.c and arch_recipe.c only read these rows.
 *
 * The tables are transcribed from llama.cpp: the tensor names and shapes
 * of its loader (llama-model.cpp), the required keys of llm_load_hparams,
 * and e21cdc11's convert_hf_to_gguf.py and gguf-py's tensor_mapping (each
 * class's config.json keys in its order, the checkpoint name of each
 * tensor, the buffers it drops, what it does to names and values).
 */
#include "arch_impl.h"

#include <stddef.h>

#define MAX_DIM GGUF_MODEL_MAX_DIM

/* ===========================================================================
 * Hyper-parameters
 */

#define HP(i, ...) { .id = GGUF_HP_##i, __VA_ARGS__ }
#define INT(l, h) .lo = (l), .hi = (h)
#define FLOAT .is_float = true
#define REQ .required = true
#define DEF(v) .derive = GGUF_DERIVE_DEFAULT, .def = (v)
#define DERIVE(d) .derive = GGUF_DERIVE_##d
#define ZERO_OK .zero_ok = true
#define HP_END { .id = GGUF_HP_COUNT }

/* The keys every LLaMA-style decoder has, in checking order (llama.cpp's
 * llm_load_hparams for these architectures: the required ones are required
 * there too); each architecture's table starts with them. */
#define DECODER_KEYS \
    HP(CONTEXT_LENGTH, REQ, INT(1, INT32_MAX)), \
    HP(EMBEDDING_LENGTH, REQ, INT(1, MAX_DIM)), \
    HP(BLOCK_COUNT, REQ, INT(1, GGUF_MODEL_MAX_BLOCKS)), \
    HP(FFN_LENGTH, REQ, INT(1, MAX_DIM)), \
    HP(HEAD_COUNT, REQ, INT(1, MAX_DIM)), \
    HP(HEAD_COUNT_KV, DERIVE(HEAD_COUNT), INT(1, MAX_DIM)), \
    HP(KEY_LENGTH, DERIVE(HEAD_SIZE), INT(1, MAX_DIM)), \
    HP(VALUE_LENGTH, DERIVE(HEAD_SIZE), INT(1, MAX_DIM)), \
    HP(ROPE_DIM, DERIVE(KEY_LENGTH), INT(INT64_MIN, INT64_MAX)), \
    HP(RMS_EPS, FLOAT, REQ), \
    HP(ROPE_FREQ_BASE, FLOAT, DEF(10000.0))

/* Rope scaling, which llama.cpp's loader reads for every architecture:
 * linear (the factor under either key; 0: none), YaRN's parameters with
 * llama.cpp's defaults, LongRoPE's attention factor; the original context
 * is the context length unless given. Each table ends with them. */
#define ROPE_SCALING_KEYS \
    HP(ROPE_SCALE_LINEAR, FLOAT, ZERO_OK), \
    HP(ROPE_SCALING_FACTOR, FLOAT, ZERO_OK), \
    HP(ROPE_SCALING_ATTN_FACTOR, FLOAT, ZERO_OK, DEF(1.0)), \
    HP(ROPE_ORIG_CTX, DERIVE(CONTEXT_LENGTH), INT(1, INT32_MAX)), \
    HP(ROPE_YARN_EXT_FACTOR, FLOAT, ZERO_OK, DEF(1.0)), \
    HP(ROPE_YARN_ATTN_FACTOR, FLOAT, ZERO_OK), \
    HP(ROPE_YARN_BETA_FAST, FLOAT, ZERO_OK, DEF(32.0)), \
    HP(ROPE_YARN_BETA_SLOW, FLOAT, ZERO_OK, DEF(1.0))

/* The LLaMA-style decoder (and Mixtral, Qwen3-MoE: their expert keys). */
static const gguf_arch_hparam decoder_hparams[] = {
    DECODER_KEYS,
    /* mixture of experts (Mixtral under llama; Qwen3-MoE) */
    HP(EXPERT_COUNT, INT(0, 4096)),
    HP(EXPERT_USED_COUNT, INT(0, 4096)),
    HP(EXPERT_FFN_LENGTH, INT(1, MAX_DIM)),
    ROPE_SCALING_KEYS,
    HP_END,
};

/* gpt-oss (llama.cpp's LLM_ARCH_OPENAI_MOE): the decoder's keys; it
 * requires the expert keys and the sliding window. */
static const gguf_arch_hparam gptoss_hparams[] = {
    DECODER_KEYS,
    HP(EXPERT_COUNT, REQ, INT(1, 4096)),
    HP(EXPERT_USED_COUNT, REQ, INT(1, 4096)),
    HP(EXPERT_FFN_LENGTH, REQ, INT(1, MAX_DIM)),
    HP(SLIDING_WINDOW, REQ, INT(1, INT32_MAX)),
    HP(SWA_PATTERN, DEF(2), INT(0, GGUF_MODEL_MAX_BLOCKS)),
    HP(ROPE_FREQ_BASE_SWA, FLOAT, DERIVE(ROPE_BASE)),
    ROPE_SCALING_KEYS,
    HP_END,
};

/* Gemma 2 (llama.cpp's LLM_ARCH_GEMMA2): the decoder's dense keys, a
 * sliding window of 4096 on every other layer (from layer 0) unless the
 * file says otherwise, its rope base that of the global layers, and both
 * soft-caps with llama.cpp's defaults. */
static const gguf_arch_hparam gemma2_hparams[] = {
    DECODER_KEYS,
    HP(SLIDING_WINDOW, DEF(4096), INT(1, INT32_MAX)),
    HP(SWA_PATTERN, DEF(2), INT(0, GGUF_MODEL_MAX_BLOCKS)),
    HP(ROPE_FREQ_BASE_SWA, FLOAT, DERIVE(ROPE_BASE)),
    HP(ATTN_SOFTCAP, FLOAT, DEF(50.0)),
    HP(FINAL_SOFTCAP, FLOAT, DEF(30.0)),
    ROPE_SCALING_KEYS,
    HP_END,
};

/* Gemma 3 (LLM_ARCH_GEMMA3): a sliding window only when the file gives one
 * (> 0), on five layers of every six; the local layers' rope base 10000
 * unless given; a final soft-cap only when given. */
static const gguf_arch_hparam gemma3_hparams[] = {
    DECODER_KEYS,
    HP(SLIDING_WINDOW, INT(0, INT32_MAX)),
    HP(SWA_PATTERN, DEF(6), INT(0, GGUF_MODEL_MAX_BLOCKS)),
    HP(ROPE_FREQ_BASE_SWA, FLOAT, DEF(10000.0)),
    HP(FINAL_SOFTCAP, FLOAT),
    ROPE_SCALING_KEYS,
    HP_END,
};

/* Qwen 3.5 (llama.cpp's LLM_ARCH_QWEN35, _QWEN35MOE): the decoder's keys
 * (the MoE without feed_forward_length: its experts' and shared expert's
 * widths instead), the gated delta net's sizes, the interval of the
 * full-attention blocks (llama.cpp's default 4) and the M-RoPE sections
 * (four, or one value for all, as llama.cpp reads them). */
#define ARRAY(n) .array = GGUF_HP_ARRAY, .count = (n)
#define QWEN35_KEYS \
    HP(SSM_CONV_KERNEL, REQ, INT(1, MAX_DIM)), \
    HP(SSM_INNER_SIZE, REQ, INT(1, MAX_DIM)), \
    HP(SSM_STATE_SIZE, REQ, INT(1, MAX_DIM)), \
    HP(SSM_TIME_STEP_RANK, REQ, INT(1, MAX_DIM)), \
    HP(SSM_GROUP_COUNT, REQ, INT(1, MAX_DIM)), \
    HP(FULL_ATTN_INTERVAL, DEF(4), INT(1, GGUF_MODEL_MAX_BLOCKS)), \
    HP(ROPE_DIM_SECTIONS, REQ, ARRAY(4), INT(0, MAX_DIM))
#define QWEN35_ATTN_KEYS \
    HP(HEAD_COUNT, REQ, INT(1, MAX_DIM)), \
    HP(HEAD_COUNT_KV, DERIVE(HEAD_COUNT), INT(1, MAX_DIM)), \
    HP(KEY_LENGTH, DERIVE(HEAD_SIZE), INT(1, MAX_DIM)), \
    HP(VALUE_LENGTH, DERIVE(HEAD_SIZE), INT(1, MAX_DIM)), \
    HP(ROPE_DIM, DERIVE(KEY_LENGTH), INT(INT64_MIN, INT64_MAX)), \
    HP(RMS_EPS, FLOAT, REQ), \
    HP(ROPE_FREQ_BASE, FLOAT, DEF(10000.0))
static const gguf_arch_hparam qwen35_hparams[] = {
    DECODER_KEYS,
    QWEN35_KEYS,
    ROPE_SCALING_KEYS,
    HP_END,
};
static const gguf_arch_hparam qwen35moe_hparams[] = {
    HP(CONTEXT_LENGTH, REQ, INT(1, INT32_MAX)),
    HP(EMBEDDING_LENGTH, REQ, INT(1, MAX_DIM)),
    HP(BLOCK_COUNT, REQ, INT(1, GGUF_MODEL_MAX_BLOCKS)),
    QWEN35_ATTN_KEYS,
    HP(EXPERT_COUNT, REQ, INT(1, 4096)),
    HP(EXPERT_USED_COUNT, REQ, INT(1, 4096)),
    HP(EXPERT_FFN_LENGTH, REQ, INT(1, MAX_DIM)),
    HP(EXPERT_SHARED_FFN_LENGTH, REQ, INT(1, MAX_DIM)),
    QWEN35_KEYS,
    ROPE_SCALING_KEYS,
    HP_END,
};
#undef ARRAY
#undef QWEN35_KEYS
#undef QWEN35_ATTN_KEYS
/* Gemma 4 (LLM_ARCH_GEMMA4): the decoder's keys (key_length and
 * rope.dimension_count those of the full layers; feed_forward_length and
 * head_count_kv one value or one per block, as llama.cpp's get_key_or_arr
 * reads them), sliding_window_pattern one bool per block (required), the
 * sliding layers' head size, the sliding window and the per-layer input
 * width required, the local layers' rope base that of the global ones
 * unless given, a final soft-cap only when given, experts beside the dense
 * feed-forward, the KV-shared blocks (0 unless given). */
#define PER_BLOCK .array = GGUF_HP_PER_BLOCK
static const gguf_arch_hparam gemma4_hparams[] = {
    HP(CONTEXT_LENGTH, REQ, INT(1, INT32_MAX)),
    HP(EMBEDDING_LENGTH, REQ, INT(1, MAX_DIM)),
    HP(BLOCK_COUNT, REQ, INT(1, GGUF_MODEL_MAX_BLOCKS)),
    HP(FFN_LENGTH, REQ, PER_BLOCK, INT(1, MAX_DIM)),
    HP(HEAD_COUNT, REQ, INT(1, MAX_DIM)),
    HP(HEAD_COUNT_KV, DERIVE(HEAD_COUNT), PER_BLOCK, INT(1, MAX_DIM)),
    HP(KEY_LENGTH, DERIVE(HEAD_SIZE), INT(1, MAX_DIM)),
    HP(VALUE_LENGTH, DERIVE(HEAD_SIZE), INT(1, MAX_DIM)),
    HP(ROPE_DIM, DERIVE(KEY_LENGTH), INT(INT64_MIN, INT64_MAX)),
    HP(RMS_EPS, FLOAT, REQ),
    HP(ROPE_FREQ_BASE, FLOAT, DEF(10000.0)),
    HP(EXPERT_COUNT, INT(0, 4096)),
    HP(EXPERT_USED_COUNT, INT(0, 4096)),
    HP(EXPERT_FFN_LENGTH, INT(1, MAX_DIM)),
    HP(SLIDING_WINDOW, REQ, INT(1, INT32_MAX)),
    HP(SWA_PATTERN, REQ, PER_BLOCK, INT(0, 1)),
    HP(ROPE_FREQ_BASE_SWA, FLOAT, DERIVE(ROPE_BASE)),
    HP(FINAL_SOFTCAP, FLOAT),
    HP(SHARED_KV_LAYERS, DEF(0), INT(0, GGUF_MODEL_MAX_BLOCKS)),
    HP(EMBD_PER_LAYER, REQ, INT(0, MAX_DIM)),
    HP(KEY_LENGTH_SWA, REQ, INT(1, MAX_DIM)),
    HP(VALUE_LENGTH_SWA, REQ, INT(1, MAX_DIM)),
    HP(ROPE_DIM_SWA, INT(INT64_MIN, INT64_MAX)),
    ROPE_SCALING_KEYS,
    HP_END,
};
#undef PER_BLOCK
/* The shared experts, leading dense blocks and grouped routing of GLM-4.5
 * and DeepSeek-V2/V3: the gating function's default is gating */
#define GROUPED_EXPERT_KEYS(gating) \
    HP(EXPERT_FFN_LENGTH, REQ, INT(1, MAX_DIM)), \
    HP(EXPERT_SHARED_COUNT, REQ, INT(0, 4096)), \
    HP(LEADING_DENSE_BLOCK_COUNT, DEF(0), INT(0, GGUF_MODEL_MAX_BLOCKS)), \
    HP(EXPERT_GATING_FUNC, DEF(gating), INT(0, 3)), \
    HP(EXPERT_WEIGHTS_SCALE, FLOAT, ZERO_OK), \
    HP(EXPERT_GROUP_COUNT, DEF(1), INT(1, 4096)), \
    HP(EXPERT_GROUP_USED_COUNT, DEF(1), INT(1, 4096))
/* GLM-4.5 (LLM_ARCH_GLM4_MOE): the decoder's keys, its experts (count,
 * used, width and the shared experts required, as llama.cpp's loader
 * has them), the leading dense blocks, sigmoid gating (llama.cpp's
 * default when absent), the routed output scale (0 when absent, as
 * llama.cpp), the expert groups, the next-token-prediction blocks. */
static const gguf_arch_hparam glm4moe_hparams[] = {
    DECODER_KEYS,
    HP(EXPERT_COUNT, REQ, INT(1, 4096)),
    HP(EXPERT_USED_COUNT, REQ, INT(1, 4096)),
    GROUPED_EXPERT_KEYS(2),
    HP(NEXTN_PREDICT_LAYERS, DEF(0), INT(0, GGUF_MODEL_MAX_BLOCKS)),
    ROPE_SCALING_KEYS,
    HP_END,
};
/* DeepSeek-V2/V3 (LLM_ARCH_DEEPSEEK2): the decoder's keys (head_count_kv
 * 1, key_length and value_length the latent's), the experts as GLM-4.5's
 * (softmax gating when absent, as llama.cpp does for V2 files), the MLA
 * ranks and per-head widths, YaRN's log multiplier. */
static const gguf_arch_hparam deepseek2_hparams[] = {
    DECODER_KEYS,
    HP(EXPERT_COUNT, INT(0, 4096)),
    HP(EXPERT_USED_COUNT, INT(0, 4096)),
    GROUPED_EXPERT_KEYS(1),
    HP(Q_LORA_RANK, DEF(0), INT(0, MAX_DIM)),
    HP(KV_LORA_RANK, REQ, INT(1, MAX_DIM)),
    HP(KEY_LENGTH_MLA, REQ, INT(1, MAX_DIM)),
    HP(VALUE_LENGTH_MLA, REQ, INT(1, MAX_DIM)),
    HP(ROPE_YARN_LOG_MUL, FLOAT, ZERO_OK),
    ROPE_SCALING_KEYS,
    HP_END,
};
#undef GROUPED_EXPERT_KEYS

#undef HP
#undef INT
#undef FLOAT
#undef REQ
#undef DEF
#undef DERIVE
#undef ZERO_OK
#undef ROPE_SCALING_KEYS

/* ===========================================================================
 * Tensors
 */

/* A row: its name, its role, then what differs from a required [1]. */
#define ROW(t, r, ...) { .name = GGUF_T_##t, .role = GGUF_ROLE_##r, __VA_ARGS__ }
#define NE(...) .ne = { __VA_ARGS__ }
#define OPT .need = GGUF_NEED_OPTIONAL
#define IF_FEAT(f) .need = GGUF_NEED_IF_FEAT, .need_feat = GGUF_FEAT_##f
#define UNLESS_FEAT(f) .need = GGUF_NEED_UNLESS_FEAT, .need_feat = GGUF_FEAT_##f
#define DENSE .need = GGUF_NEED_DENSE
#define EXPERTS .need = GGUF_NEED_EXPERTS
#define END { .name = NULL }
/* Patches of a base table, by the base row's role. */
#define DROP(r) { .op = GGUF_PATCH_DROP, .at = GGUF_ROLE_##r }
#define SET(r, x) { .op = GGUF_PATCH_SET, .at = GGUF_ROLE_##r, .row = x }
#define AFTER(r, x) { .op = GGUF_PATCH_AFTER, .at = GGUF_ROLE_##r, .row = x }
#define PATCH_END { .op = GGUF_PATCH_END }

#define EMBD GGUF_DIM_EMBD
#define VOCAB GGUF_DIM_VOCAB
#define FF GGUF_DIM_FF
#define FF_EXP GGUF_DIM_FF_EXP
#define N_EXP GGUF_DIM_EXPERTS

/* The LLaMA-style decoder (llama.cpp's tensors and shapes for it). */
static const gguf_arch_tensor decoder_tensors[] = {
    ROW(TOKEN_EMBD, TOKEN_EMBD, NE(EMBD, VOCAB)),
    ROW(OUTPUT_NORM, OUTPUT_NORM, NE(EMBD)),
    ROW(OUTPUT, OUTPUT, UNLESS_FEAT(TIED_OUTPUT), NE(EMBD, VOCAB)),
    ROW(ATTN_NORM, ATTN_NORM, NE(EMBD)),
    ROW(ATTN_Q, ATTN_Q, NE(EMBD, GGUF_DIM_Q)),
    ROW(ATTN_K, ATTN_K, NE(EMBD, GGUF_DIM_K)),
    ROW(ATTN_V, ATTN_V, NE(EMBD, GGUF_DIM_V)),
    ROW(ATTN_Q_BIAS, ATTN_Q_BIAS, IF_FEAT(QKV_BIAS), NE(GGUF_DIM_Q)),
    ROW(ATTN_K_BIAS, ATTN_K_BIAS, IF_FEAT(QKV_BIAS), NE(GGUF_DIM_K)),
    ROW(ATTN_V_BIAS, ATTN_V_BIAS, IF_FEAT(QKV_BIAS), NE(GGUF_DIM_V)),
    ROW(ATTN_OUT, ATTN_OUT, NE(GGUF_DIM_Q, EMBD)),
    ROW(FFN_NORM, FFN_NORM, NE(EMBD)),
    ROW(FFN_GATE, FFN_GATE, DENSE, NE(EMBD, FF)),
    ROW(FFN_UP, FFN_UP, DENSE, NE(EMBD, FF)),
    ROW(FFN_DOWN, FFN_DOWN, DENSE, NE(FF, EMBD)),
    END,
};

/* What llama.cpp's llama adds: llama3-style rope factors (the converter
 * computes them) and optional output and feed-forward biases. */
static const gguf_arch_tensor llama_extra_tensors[] = {
    ROW(ROPE_FREQS, ROPE_FREQS, OPT, NE(GGUF_DIM_ROT_HALF)),
    ROW(ATTN_OUT_BIAS, ATTN_OUT_BIAS, OPT, NE(EMBD)),
    ROW(FFN_GATE_BIAS, FFN_GATE_BIAS, OPT, NE(FF)),
    ROW(FFN_UP_BIAS, FFN_UP_BIAS, OPT, NE(FF)),
    ROW(FFN_DOWN_BIAS, FFN_DOWN_BIAS, OPT, NE(EMBD)),
    END,
};

/* Qwen3's per-head RMSNorm of q and k (one weight vector of key_length,
 * shared by all heads). */
static const gguf_arch_tensor qk_norm_tensors[] = {
    ROW(ATTN_Q_NORM, ATTN_Q_NORM, NE(GGUF_DIM_HEAD_K)),
    ROW(ATTN_K_NORM, ATTN_K_NORM, NE(GGUF_DIM_HEAD_K)),
    END,
};

/* Experts: the router (F32 in every output type) and each projection of
 * every expert stacked into one [.., .., expert_count] tensor, the rows in
 * the order the family's converter emits them once a block's last expert
 * arrives. Mixtral (llama.cpp writes it as llama): w1 = gate, w2 = down,
 * w3 = up. */
#define GATE_EXPS ROW(FFN_GATE_EXPS, FFN_GATE_EXPS, EXPERTS, NE(EMBD, FF_EXP, N_EXP))
#define DOWN_EXPS ROW(FFN_DOWN_EXPS, FFN_DOWN_EXPS, EXPERTS, NE(FF_EXP, EMBD, N_EXP))
#define UP_EXPS ROW(FFN_UP_EXPS, FFN_UP_EXPS, EXPERTS, NE(EMBD, FF_EXP, N_EXP))
#define GATE_INP ROW(FFN_GATE_INP, FFN_GATE_INP, EXPERTS, NE(EMBD, N_EXP))
static const gguf_arch_tensor mixtral_tensors[] = { GATE_EXPS, DOWN_EXPS, UP_EXPS, GATE_INP, END };

/* Qwen3-MoE (Qwen2MoeModel's converter): down, gate, up. */
static const gguf_arch_tensor qwen3moe_tensors[] = { DOWN_EXPS, GATE_EXPS, UP_EXPS, GATE_INP, END };
#undef GATE_EXPS
#undef DOWN_EXPS
#undef UP_EXPS
#undef GATE_INP

/* gpt-oss: its own layout. Biases on q/k/v/o, a sink logit per head, the
 * pre-feed-forward norm named post_attention_norm (role ffn_norm), a router
 * with bias, and experts with biases (the converter repacks the
 * checkpoint's MXFP4 experts itself). */
static const gguf_arch_tensor gptoss_tensors[] = {
    ROW(TOKEN_EMBD, TOKEN_EMBD, NE(EMBD, VOCAB)),
    ROW(OUTPUT_NORM, OUTPUT_NORM, NE(EMBD)),
    ROW(OUTPUT, OUTPUT, NE(EMBD, VOCAB)),
    ROW(ATTN_NORM, ATTN_NORM, NE(EMBD)),
    ROW(ATTN_POST_NORM, FFN_NORM, NE(EMBD)),
    ROW(ATTN_Q, ATTN_Q, NE(EMBD, GGUF_DIM_Q)),
    ROW(ATTN_K, ATTN_K, NE(EMBD, GGUF_DIM_K)),
    ROW(ATTN_V, ATTN_V, NE(EMBD, GGUF_DIM_V)),
    ROW(ATTN_OUT, ATTN_OUT, NE(GGUF_DIM_Q, EMBD)),
    ROW(ATTN_SINKS, ATTN_SINKS, NE(GGUF_DIM_HEADS)),
    ROW(FFN_GATE_INP, FFN_GATE_INP, NE(EMBD, N_EXP)),
    ROW(FFN_GATE_EXPS, FFN_GATE_EXPS, NE(EMBD, FF_EXP, N_EXP)),
    ROW(FFN_DOWN_EXPS, FFN_DOWN_EXPS, NE(FF_EXP, EMBD, N_EXP)),
    ROW(FFN_UP_EXPS, FFN_UP_EXPS, NE(EMBD, FF_EXP, N_EXP)),
    ROW(ATTN_Q_BIAS, ATTN_Q_BIAS, NE(GGUF_DIM_Q)),
    ROW(ATTN_K_BIAS, ATTN_K_BIAS, NE(GGUF_DIM_K)),
    ROW(ATTN_V_BIAS, ATTN_V_BIAS, NE(GGUF_DIM_V)),
    ROW(ATTN_OUT_BIAS, ATTN_OUT_BIAS, NE(EMBD)),
    ROW(FFN_GATE_INP_BIAS, FFN_GATE_INP_BIAS, NE(N_EXP)),
    ROW(FFN_GATE_EXPS_BIAS, FFN_GATE_EXPS_BIAS, NE(FF_EXP, N_EXP)),
    ROW(FFN_DOWN_EXPS_BIAS, FFN_DOWN_EXPS_BIAS, NE(EMBD, N_EXP)),
    ROW(FFN_UP_EXPS_BIAS, FFN_UP_EXPS_BIAS, NE(FF_EXP, N_EXP)),
    END,
};

/* Phi-3 (llama.cpp's phi3 loader): the decoder with q, k and v in one
 * attn_qkv, gate and up in one ffn_up of twice the feed-forward width, the
 * attention output embedding_length wide, and the LongRoPE factors of the
 * 128k models as globals. */
static const gguf_tensor_patch phi3_patches[] = {
    AFTER(OUTPUT, ROW(ROPE_FACTORS_LONG, ROPE_FACTORS_LONG, OPT, NE(GGUF_DIM_ROT_HALF))),
    AFTER(OUTPUT, ROW(ROPE_FACTORS_SHORT, ROPE_FACTORS_SHORT, OPT, NE(GGUF_DIM_ROT_HALF))),
    AFTER(ATTN_NORM, ROW(ATTN_QKV, ATTN_QKV, NE(EMBD, GGUF_DIM_QKV))),
    DROP(ATTN_Q), DROP(ATTN_K), DROP(ATTN_V),
    DROP(ATTN_Q_BIAS), DROP(ATTN_K_BIAS), DROP(ATTN_V_BIAS),
    SET(ATTN_OUT, ROW(ATTN_OUT, ATTN_OUT, NE(EMBD, EMBD))),
    DROP(FFN_GATE),
    SET(FFN_UP, ROW(FFN_UP, FFN_GATE_UP, NE(EMBD, GGUF_DIM_FF2))),
    SET(FFN_DOWN, ROW(FFN_DOWN, FFN_DOWN, NE(FF, EMBD))),
    PATCH_END,
};

/* Gemma 2 and 3 (llama.cpp's gemma2/gemma3 loaders): the decoder without
 * biases, with RMSNorms after attention and the feed-forward too
 * (pre_feedforward_layernorm is ffn_norm), a dense feed-forward always,
 * and no output (Gemma 2's converter drops lm_head; Gemma 3 adds it back,
 * tied, after its other globals, and per-head q/k norms). */
static const gguf_tensor_patch gemma_patches[] = {
    DROP(OUTPUT), DROP(ATTN_Q_BIAS), DROP(ATTN_K_BIAS), DROP(ATTN_V_BIAS),
    AFTER(ATTN_OUT, ROW(ATTN_POST_NORM, ATTN_POST_NORM, NE(EMBD))),
    SET(FFN_GATE, ROW(FFN_GATE, FFN_GATE, NE(EMBD, FF))),
    SET(FFN_UP, ROW(FFN_UP, FFN_UP, NE(EMBD, FF))),
    SET(FFN_DOWN, ROW(FFN_DOWN, FFN_DOWN, NE(FF, EMBD))),
    AFTER(FFN_DOWN, ROW(FFN_POST_NORM, FFN_POST_NORM, NE(EMBD))),
    PATCH_END,
};
static const gguf_arch_tensor gemma3_tensors[] = {
    ROW(OUTPUT, OUTPUT, UNLESS_FEAT(TIED_OUTPUT), NE(EMBD, VOCAB)),
    END,
};

/* Qwen 3.5 (llama.cpp's qwen35/qwen35moe loaders), in the order its
 * converter writes a block: the attention norm; in the recurrent blocks
 * the gated delta net (ssm_a with no .weight; attn_qkv its q, k and v
 * projection, attn_gate its output gate z); the feed-forward (dense, or
 * routed experts and a shared expert); the pre-feed-forward norm named
 * post_attention_norm (role ffn_norm); in the full-attention blocks the
 * gated attention (attn_q: per head the queries, then the gate). */
#define REC .layers = GGUF_LAYERS_RECURRENT
#define ATT .layers = GGUF_LAYERS_ATTENTION
static const gguf_arch_tensor qwen35_head_tensors[] = {
    ROW(TOKEN_EMBD, TOKEN_EMBD, NE(EMBD, VOCAB)),
    ROW(OUTPUT_NORM, OUTPUT_NORM, NE(EMBD)),
    ROW(OUTPUT, OUTPUT, UNLESS_FEAT(TIED_OUTPUT), NE(EMBD, VOCAB)),
    ROW(ATTN_NORM, ATTN_NORM, NE(EMBD)),
    ROW(SSM_A, SSM_A, REC, NE(GGUF_DIM_SSM_HEADS)),
    ROW(SSM_CONV1D, SSM_CONV1D, REC, NE(GGUF_DIM_SSM_CONV, GGUF_DIM_SSM_CHANNELS)),
    ROW(SSM_DT_BIAS, SSM_DT_BIAS, REC, NE(GGUF_DIM_SSM_HEADS)),
    ROW(SSM_ALPHA, SSM_ALPHA, REC, NE(EMBD, GGUF_DIM_SSM_HEADS)),
    ROW(SSM_BETA, SSM_BETA, REC, NE(EMBD, GGUF_DIM_SSM_HEADS)),
    ROW(ATTN_QKV, ATTN_QKV, REC, NE(EMBD, GGUF_DIM_SSM_CHANNELS)),
    ROW(ATTN_GATE, ATTN_GATE, REC, NE(EMBD, GGUF_DIM_SSM_VALUE)),
    ROW(SSM_NORM, SSM_NORM, REC, NE(GGUF_DIM_SSM_STATE)),
    ROW(SSM_OUT, SSM_OUT, REC, NE(GGUF_DIM_SSM_VALUE, EMBD)),
    END,
};
static const gguf_arch_tensor qwen35_dense_tensors[] = {
    ROW(FFN_DOWN, FFN_DOWN, DENSE, NE(FF, EMBD)),
    ROW(FFN_GATE, FFN_GATE, DENSE, NE(EMBD, FF)),
    ROW(FFN_UP, FFN_UP, DENSE, NE(EMBD, FF)),
    END,
};
#define FF_SHEXP GGUF_DIM_FF_SHEXP
static const gguf_arch_tensor qwen35moe_tensors[] = {
    ROW(FFN_DOWN_EXPS, FFN_DOWN_EXPS, EXPERTS, NE(FF_EXP, EMBD, N_EXP)),
    ROW(FFN_GATE_EXPS, FFN_GATE_EXPS, EXPERTS, NE(EMBD, FF_EXP, N_EXP)),
    ROW(FFN_UP_EXPS, FFN_UP_EXPS, EXPERTS, NE(EMBD, FF_EXP, N_EXP)),
    ROW(FFN_GATE_INP, FFN_GATE_INP, EXPERTS, NE(EMBD, N_EXP)),
    ROW(FFN_DOWN_SHEXP, FFN_DOWN_SHEXP, EXPERTS, NE(FF_SHEXP, EMBD)),
    ROW(FFN_GATE_SHEXP, FFN_GATE_SHEXP, EXPERTS, NE(EMBD, FF_SHEXP)),
    ROW(FFN_UP_SHEXP, FFN_UP_SHEXP, EXPERTS, NE(EMBD, FF_SHEXP)),
    ROW(FFN_GATE_INP_SHEXP, FFN_GATE_INP_SHEXP, EXPERTS, NE(EMBD)),
    END,
};
#undef FF_SHEXP
static const gguf_arch_tensor qwen35_tail_tensors[] = {
    ROW(ATTN_POST_NORM, FFN_NORM, NE(EMBD)),
    ROW(ATTN_K_NORM, ATTN_K_NORM, ATT, NE(GGUF_DIM_HEAD_K)),
    ROW(ATTN_K, ATTN_K, ATT, NE(EMBD, GGUF_DIM_K)),
    ROW(ATTN_OUT, ATTN_OUT, ATT, NE(GGUF_DIM_Q, EMBD)),
    ROW(ATTN_Q_NORM, ATTN_Q_NORM, ATT, NE(GGUF_DIM_HEAD_K)),
    ROW(ATTN_Q, ATTN_Q, ATT, NE(EMBD, GGUF_DIM_Q_GATED)),
    ROW(ATTN_V, ATTN_V, ATT, NE(EMBD, GGUF_DIM_V)),
    END,
};
#undef REC
#undef ATT
/* Gemma 4 (llama.cpp's gemma4 loader, in its order): q/k norms and the
 * post-norms in every layer; k (and its norm) only in the layers with their
 * own KV, v optional everywhere (K serves as V); the dense feed-forward
 * always, experts beside it (their router scaled, each expert's output
 * scaled, gate and up fused) with their own norms; the per-layer inputs
 * (required when they have a width) and the layer output scale.
 * rope_freqs, the proportional rope of the full layers, is one global,
 * required when some block is full. */
#define EXP_PL GGUF_DIM_EMBD_PER_LAYER
#define PL .need = GGUF_NEED_PER_LAYER_INPUTS
#define OWN_KV .layers = GGUF_LAYERS_OWN_KV, .need = GGUF_NEED_IN_LAYERS
static const gguf_arch_tensor gemma4_tensors[] = {
    ROW(OUTPUT, OUTPUT, OPT, NE(EMBD, VOCAB)),
    ROW(TOKEN_EMBD, TOKEN_EMBD, NE(EMBD, VOCAB)),
    ROW(PER_LAYER_TOKEN_EMBD, PER_LAYER_TOKEN_EMBD, PL, NE(GGUF_DIM_EMBD_PER_LAYER_ALL, VOCAB)),
    ROW(PER_LAYER_MODEL_PROJ, PER_LAYER_MODEL_PROJ, PL, NE(EMBD, GGUF_DIM_EMBD_PER_LAYER_ALL)),
    ROW(PER_LAYER_PROJ_NORM, PER_LAYER_PROJ_NORM, PL, NE(EXP_PL)),
    ROW(OUTPUT_NORM, OUTPUT_NORM, NE(EMBD)),
    ROW(ROPE_FREQS, ROPE_FREQS, .layers = GGUF_LAYERS_FULL, .need = GGUF_NEED_IN_LAYERS,
        NE(GGUF_DIM_ROT_HALF)),
    ROW(ATTN_NORM, ATTN_NORM, NE(EMBD)),
    ROW(ATTN_Q, ATTN_Q, NE(EMBD, GGUF_DIM_Q)),
    ROW(ATTN_K, ATTN_K, OWN_KV, NE(EMBD, GGUF_DIM_K)),
    ROW(ATTN_V, ATTN_V, OPT, NE(EMBD, GGUF_DIM_V)),
    ROW(ATTN_OUT, ATTN_OUT, NE(GGUF_DIM_Q, EMBD)),
    ROW(ATTN_Q_NORM, ATTN_Q_NORM, NE(GGUF_DIM_HEAD_K)),
    ROW(ATTN_K_NORM, ATTN_K_NORM, OWN_KV, NE(GGUF_DIM_HEAD_K)),
    ROW(ATTN_POST_NORM, ATTN_POST_NORM, NE(EMBD)),
    ROW(LAYER_OUT_SCALE, LAYER_OUT_SCALE, OPT, NE(GGUF_DIM_1)),
    ROW(FFN_NORM, FFN_NORM, NE(EMBD)),
    ROW(FFN_GATE, FFN_GATE, NE(EMBD, FF)),
    ROW(FFN_UP, FFN_UP, NE(EMBD, FF)),
    ROW(FFN_DOWN, FFN_DOWN, NE(FF, EMBD)),
    ROW(FFN_POST_NORM, FFN_POST_NORM, NE(EMBD)),
    ROW(FFN_GATE_INP, FFN_GATE_INP, EXPERTS, NE(EMBD, N_EXP)),
    ROW(FFN_GATE_INP_SCALE, FFN_GATE_INP_SCALE, EXPERTS, NE(EMBD)),
    ROW(FFN_PRE_NORM_2, FFN_PRE_NORM_2, EXPERTS, NE(EMBD)),
    ROW(FFN_POST_NORM_1, FFN_POST_NORM_1, EXPERTS, NE(EMBD)),
    ROW(FFN_POST_NORM_2, FFN_POST_NORM_2, EXPERTS, NE(EMBD)),
    ROW(FFN_GATE_UP_EXPS, FFN_GATE_UP_EXPS, EXPERTS, NE(EMBD, GGUF_DIM_FF_EXP2, N_EXP)),
    ROW(FFN_DOWN_EXPS, FFN_DOWN_EXPS, EXPERTS, NE(FF_EXP, EMBD, N_EXP)),
    ROW(FFN_DOWN_EXPS_SCALE, FFN_DOWN_EXPS_SCALE, OPT, NE(N_EXP)),
    ROW(PER_LAYER_INP_GATE, PER_LAYER_INP_GATE, PL, NE(EMBD, EXP_PL)),
    ROW(PER_LAYER_PROJ, PER_LAYER_PROJ, PL, NE(EXP_PL, EMBD)),
    ROW(PER_LAYER_POST_NORM, PER_LAYER_POST_NORM, PL, NE(EMBD)),
    END,
};
#undef EXP_PL
#undef PL
#undef OWN_KV

/* GLM-4.5 (llama.cpp's glm4moe loader, in its order): biased q/k/v and
 * per-head q/k norms (optional there: GLM-4.5-Air has no norms), the
 * pre-feed-forward norm named post_attention_norm (role ffn_norm); the
 * first leading_dense_block_count blocks a dense feed-forward, the others
 * the router, its score bias, the routed experts (down, gate, up: the
 * order Glm4MoeModel stacks them in) and the shared experts
 * (one matrix of expert_shared_count experts' width); the last
 * nextn_predict_layers blocks add the next-token-prediction tensors
 * (llama.cpp loads them and does not run them). */
#define LEAD .layers = GGUF_LAYERS_LEADING_DENSE
#define MOE .layers = GGUF_LAYERS_MOE
#define NEXTN .layers = GGUF_LAYERS_NEXTN
static const gguf_arch_tensor glm4moe_tensors[] = {
    ROW(TOKEN_EMBD, TOKEN_EMBD, NE(EMBD, VOCAB)),
    ROW(OUTPUT_NORM, OUTPUT_NORM, NE(EMBD)),
    ROW(OUTPUT, OUTPUT, OPT, NE(EMBD, VOCAB)),
    ROW(ATTN_NORM, ATTN_NORM, NE(EMBD)),
    ROW(ATTN_Q, ATTN_Q, NE(EMBD, GGUF_DIM_Q)),
    ROW(ATTN_K, ATTN_K, NE(EMBD, GGUF_DIM_K)),
    ROW(ATTN_V, ATTN_V, NE(EMBD, GGUF_DIM_V)),
    ROW(ATTN_Q_BIAS, ATTN_Q_BIAS, OPT, NE(GGUF_DIM_Q)),
    ROW(ATTN_K_BIAS, ATTN_K_BIAS, OPT, NE(GGUF_DIM_K)),
    ROW(ATTN_V_BIAS, ATTN_V_BIAS, OPT, NE(GGUF_DIM_V)),
    ROW(ATTN_OUT, ATTN_OUT, NE(GGUF_DIM_Q, EMBD)),
    ROW(ATTN_Q_NORM, ATTN_Q_NORM, OPT, NE(GGUF_DIM_HEAD_K)),
    ROW(ATTN_K_NORM, ATTN_K_NORM, OPT, NE(GGUF_DIM_HEAD_K)),
    ROW(ATTN_POST_NORM, FFN_NORM, NE(EMBD)),
    END,
};
/* GLM-4.5's and DeepSeek-V2/V3's feed-forward: the router, its score bias,
 * the routed experts (down, gate, up: the order Glm4MoeModel and
 * DeepseekV2Model stack them in) and the shared experts (one matrix of
 * expert_shared_count experts' width) in the MoE blocks, a dense
 * feed-forward in the leading ones */
static const gguf_arch_tensor grouped_moe_tensors[] = {
    ROW(FFN_GATE_INP, FFN_GATE_INP, MOE, NE(EMBD, N_EXP)),
    ROW(EXP_PROBS_B, EXP_PROBS_B, MOE, NE(N_EXP)),
    ROW(FFN_DOWN_EXPS, FFN_DOWN_EXPS, MOE, NE(FF_EXP, EMBD, N_EXP)),
    ROW(FFN_GATE_EXPS, FFN_GATE_EXPS, MOE, NE(EMBD, FF_EXP, N_EXP)),
    ROW(FFN_UP_EXPS, FFN_UP_EXPS, MOE, NE(EMBD, FF_EXP, N_EXP)),
    ROW(FFN_GATE_SHEXP, FFN_GATE_SHEXP, MOE, NE(EMBD, GGUF_DIM_FF_EXP_SHARED)),
    ROW(FFN_DOWN_SHEXP, FFN_DOWN_SHEXP, MOE, NE(GGUF_DIM_FF_EXP_SHARED, EMBD)),
    ROW(FFN_UP_SHEXP, FFN_UP_SHEXP, MOE, NE(EMBD, GGUF_DIM_FF_EXP_SHARED)),
    ROW(FFN_GATE, FFN_GATE, LEAD, NE(EMBD, FF)),
    ROW(FFN_DOWN, FFN_DOWN, LEAD, NE(FF, EMBD)),
    ROW(FFN_UP, FFN_UP, LEAD, NE(EMBD, FF)),
    END,
};
static const gguf_arch_tensor glm4moe_nextn_tensors[] = {
    ROW(NEXTN_EH_PROJ, NEXTN_EH_PROJ, NEXTN, NE(GGUF_DIM_EMBD2, EMBD)),
    ROW(NEXTN_ENORM, NEXTN_ENORM, NEXTN, NE(EMBD)),
    ROW(NEXTN_HNORM, NEXTN_HNORM, NEXTN, NE(EMBD)),
    ROW(NEXTN_SHARED_HEAD_NORM, NEXTN_SHARED_HEAD_NORM, NEXTN, OPT, NE(EMBD)),
    END,
};
/* DeepSeek-V2/V3 (llama.cpp's deepseek2 loader): q through q_a (rank
 * q_lora_rank), its norm and q_b — or one attn_q in the "lite" models
 * without q_lora_rank (both optional here); the KV latent and the shared
 * rope key from attn_kv_a_mqa (key_length = kv_lora_rank + rope wide), the
 * latent's norm (value_length = kv_lora_rank), the per-head k_b
 * (transposed) and v_b; then GLM-4.5's feed-forward (exp_probs_b
 * required, as there), without the NextN blocks (the converter drops
 * them). */
static const gguf_arch_tensor deepseek2_tensors[] = {
    ROW(TOKEN_EMBD, TOKEN_EMBD, NE(EMBD, VOCAB)),
    ROW(OUTPUT_NORM, OUTPUT_NORM, NE(EMBD)),
    ROW(OUTPUT, OUTPUT, OPT, NE(EMBD, VOCAB)),
    ROW(ATTN_NORM, ATTN_NORM, NE(EMBD)),
    ROW(ATTN_Q_A_NORM, ATTN_Q_A_NORM, OPT, NE(GGUF_DIM_Q_LORA)),
    ROW(ATTN_KV_A_NORM, ATTN_KV_A_NORM, NE(GGUF_DIM_V)),
    ROW(ATTN_Q_A, ATTN_Q_A, OPT, NE(EMBD, GGUF_DIM_Q_LORA)),
    ROW(ATTN_Q_B, ATTN_Q_B, OPT, NE(GGUF_DIM_Q_LORA, GGUF_DIM_Q_MLA)),
    ROW(ATTN_Q, ATTN_Q, OPT, NE(EMBD, GGUF_DIM_Q_MLA)),
    ROW(ATTN_KV_A_MQA, ATTN_KV_A_MQA, NE(EMBD, GGUF_DIM_K)),
    ROW(ATTN_K_B, ATTN_K_B, NE(GGUF_DIM_NOPE_MLA, GGUF_DIM_V, GGUF_DIM_HEADS)),
    ROW(ATTN_V_B, ATTN_V_B, NE(GGUF_DIM_V, GGUF_DIM_V_MLA, GGUF_DIM_HEADS)),
    ROW(ATTN_OUT, ATTN_OUT, NE(GGUF_DIM_O_MLA, EMBD)),
    ROW(FFN_NORM, FFN_NORM, NE(EMBD)),
    END,
};
#undef LEAD
#undef MOE
#undef NEXTN

#define PART(rows) { rows, NULL }
#define PARTS_END { NULL, NULL }
static const gguf_tensor_part llama_tables[] = { PART(decoder_tensors), PART(llama_extra_tensors),
                                                 PART(mixtral_tensors), PARTS_END };
static const gguf_tensor_part qwen2_tables[] = { PART(decoder_tensors), PARTS_END };
static const gguf_tensor_part qwen3_tables[] = { PART(decoder_tensors), PART(qk_norm_tensors),
                                                 PARTS_END };
static const gguf_tensor_part qwen3moe_tables[] = { PART(decoder_tensors), PART(qk_norm_tensors),
                                                    PART(qwen3moe_tensors), PARTS_END };
static const gguf_tensor_part phi3_tables[] = { { decoder_tensors, phi3_patches }, PARTS_END };
static const gguf_tensor_part gptoss_tables[] = { PART(gptoss_tensors), PARTS_END };
static const gguf_tensor_part gemma2_tables[] = { { decoder_tensors, gemma_patches }, PARTS_END };
static const gguf_tensor_part gemma3_tables[] = { { decoder_tensors, gemma_patches },
                                                  PART(gemma3_tensors), PART(qk_norm_tensors),
                                                  PARTS_END };
static const gguf_tensor_part qwen35_tables[] = { PART(qwen35_head_tensors),
                                                  PART(qwen35_dense_tensors),
                                                  PART(qwen35_tail_tensors), PARTS_END };
static const gguf_tensor_part qwen35moe_tables[] = { PART(qwen35_head_tensors),
                                                     PART(qwen35moe_tensors),
                                                     PART(qwen35_tail_tensors), PARTS_END };
static const gguf_tensor_part gemma4_tables[] = { PART(gemma4_tensors), PARTS_END };
static const gguf_tensor_part glm4moe_tables[] = { PART(glm4moe_tensors),
                                                   PART(grouped_moe_tensors),
                                                   PART(glm4moe_nextn_tensors), PARTS_END };
/* DeepSeek-V2's routing (topk_method greedy, DeepSeek-V2-Lite's) has no
 * score bias: llama.cpp's deepseek2 loader takes exp_probs_b when present */
static const gguf_tensor_patch deepseek2_moe_patches[] = {
    SET(EXP_PROBS_B, ROW(EXP_PROBS_B, EXP_PROBS_B, .layers = GGUF_LAYERS_MOE, OPT, NE(N_EXP))),
    PATCH_END,
};
static const gguf_tensor_part deepseek2_tables[] = { PART(deepseek2_tensors),
                                                     { grouped_moe_tensors, deepseek2_moe_patches },
                                                     PARTS_END };
#undef ROW
#undef NE
#undef OPT
#undef IF_FEAT
#undef UNLESS_FEAT
#undef DENSE
#undef EXPERTS
#undef END
#undef DROP
#undef SET
#undef AFTER
#undef PATCH_END
#undef EMBD
#undef VOCAB
#undef FF
#undef FF_EXP
#undef N_EXP
#undef PART
#undef PARTS_END

/* ===========================================================================
 * The registry
 */

#define F(x) (1u << GGUF_FEAT_##x)
const gguf_arch gguf_archs[] = {
    { .name = "llama", .about = "LLaMA 1-3, Mistral, Mixtral: RMSNorm, SwiGLU, rotary pairs, GQA",
      .hparams = decoder_hparams, .tables = llama_tables,
      .features = F(TIED_OUTPUT) | F(ROPE_WHOLE_HEAD) | F(ROPE_LLAMA3) | F(ROPE_LINEAR) | F(EXPERTS),
      .rope = GGUF_ROPE_NORM, .activation = GGUF_ACT_SILU, .routing = GGUF_ROUTING_SOFTMAX_TOPK },
    /* what some converters call Mistral models (llama.cpp writes "llama") */
    { .name = "mistral", .about = "a LLaMA model under the name some converters give Mistral",
      .hparams = decoder_hparams, .tables = llama_tables,
      .features = F(TIED_OUTPUT) | F(ROPE_WHOLE_HEAD) | F(ROPE_LINEAR),
      .rope = GGUF_ROPE_NORM, .activation = GGUF_ACT_SILU },
    /* Qwen2 checkpoints already have llama.cpp's rotary layout */
    { .name = "qwen2", .about = "Qwen2, Qwen2.5: LLaMA layout with q/k/v biases, NEOX rotary halves",
      .hparams = decoder_hparams, .tables = qwen2_tables,
      .features = F(TIED_OUTPUT) | F(QKV_BIAS) | F(ROPE_LINEAR),
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_SILU },
    /* head_dim is its own hyper-parameter (key_length), not hidden/heads */
    { .name = "qwen3", .about = "Qwen3 dense: Qwen2's layout without biases, per-head q/k RMSNorm",
      .hparams = decoder_hparams, .tables = qwen3_tables,
      .features = F(TIED_OUTPUT) | F(QK_NORM) | F(ROPE_LINEAR),
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_SILU },
    /* Qwen3 with the dense feed-forward replaced by routed experts */
    { .name = "qwen3moe", .about = "Qwen3-MoE: Qwen3 attention, top-k softmax-routed SwiGLU experts",
      .hparams = decoder_hparams, .tables = qwen3moe_tables,
      .features = F(TIED_OUTPUT) | F(QK_NORM) | F(ROPE_LINEAR) | F(EXPERTS),
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_SILU, .routing = GGUF_ROUTING_SOFTMAX_TOPK },
    /* llama.cpp runs Phi-3 without its sliding window (the converter still
     * writes attention.sliding_window): no sliding_window_pattern row */
    { .name = "phi3", .about = "Phi-3: fused qkv and gate-up, q scaled before the scores, NEOX",
      .hparams = decoder_hparams, .tables = phi3_tables,
      .features = F(TIED_OUTPUT) | F(FUSED_QKV) | F(FUSED_GATE_UP) | F(SCALE_Q),
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_SILU },
    /* OpenAI's open-weight MoE: every other layer (from layer 0) attends
     * within a sliding window (its hparams' pattern row) */
    { .name = "gpt-oss", .about = "gpt-oss: biased GQA with sinks, alternating SWA, YaRN, MXFP4 experts",
      .hparams = gptoss_hparams, .tables = gptoss_tables,
      .features = F(EXPERTS) | F(ATTN_SINKS) | F(ROPE_YARN),
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_SWIGLU_OAI,
      .routing = GGUF_ROUTING_TOPK_SOFTMAX },
    /* Gemma: embeddings times sqrt(width), x·(1 + w) norms, GeGLU, q
     * scaled after rope; Gemma 2 soft-caps scores and logits */
    { .name = "gemma2", .about = "Gemma 2: post-norms, GeGLU, alternating SWA, soft-capped scores and logits",
      .hparams = gemma2_hparams, .tables = gemma2_tables,
      .features = F(TIED_OUTPUT) | F(SCALE_Q) | F(SCALE_EMBD) | F(ATTN_SOFTCAP),
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_GELU_TANH },
    { .name = "gemma3", .about = "Gemma 3 text: Gemma 2 with q/k norms, 5 local : 1 global layers, two rope bases",
      .hparams = gemma3_hparams, .tables = gemma3_tables,
      .features = F(TIED_OUTPUT) | F(QK_NORM) | F(SCALE_Q) | F(SCALE_EMBD) | F(SWA_ROPE_PLAIN),
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_GELU_TANH },
    /* Mistral Small 3.1/3.2, Ministral 3: the text model of
     * Mistral3ForConditionalGeneration, LLaMA's layout and graph (head_dim
     * its own, not hidden/heads) under its own name */
    { .name = "mistral3", .about = "Mistral Small 3.x text: LLaMA's layout and graph, head_dim of its own",
      .hparams = decoder_hparams, .tables = llama_tables,
      .features = F(TIED_OUTPUT) | F(ROPE_WHOLE_HEAD) | F(ROPE_LINEAR),
      .rope = GGUF_ROPE_NORM, .activation = GGUF_ACT_SILU },
    /* Qwen 3.5: three gated delta net blocks to one of gated attention
     * (full_attention_interval), M-RoPE sections over a partial rotary
     * dimension (text positions: the same in every section) */
    { .name = "qwen35", .about = "Qwen 3.5 dense: gated delta net blocks between gated-attention ones, M-RoPE",
      .hparams = qwen35_hparams, .tables = qwen35_tables,
      .features = F(TIED_OUTPUT) | F(QK_NORM) | F(DELTA_NET) | F(ATTN_GATE) | F(MROPE),
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_SILU },
    { .name = "qwen35moe", .about = "Qwen 3.5 MoE: Qwen 3.5 with routed experts and a gated shared expert",
      .hparams = qwen35moe_hparams, .tables = qwen35moe_tables,
      .features = F(TIED_OUTPUT) | F(QK_NORM) | F(EXPERTS) | F(DELTA_NET) | F(ATTN_GATE) |
                  F(MROPE) | F(SHARED_EXPERT),
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_SILU, .routing = GGUF_ROUTING_SOFTMAX_TOPK },
    /* Gemma 4: sliding and full layers of their own head sizes (a pattern
     * per layer), KV shared by the last layers, per-layer inputs, experts
     * beside the dense feed-forward, unscaled attention, x·w norms */
    { .name = "gemma4", .about = "Gemma 4 text: per-layer SWA/full heads, shared KV, per-layer inputs, dense + experts",
      .hparams = gemma4_hparams, .tables = gemma4_tables,
      .features = F(TIED_OUTPUT) | F(QK_NORM) | F(SCALE_EMBD) | F(EXPERTS) |
                  F(PER_LAYER_INPUTS) | F(SHARED_KV) | F(V_FROM_K) | F(DENSE_AND_EXPERTS) |
                  F(LAYER_OUT_SCALE) | F(ROPE_FREQS_FULL) | F(ATTN_SCALE_1),
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_GELU_TANH,
      .routing = GGUF_ROUTING_SOFTMAX_TOPK },
    /* GLM-4.5/4.6/4.7: leading dense blocks, then sigmoid-routed experts
     * (a score bias, groups) with shared experts; partial NEOX rope; a
     * next-token-prediction block after the model's own */
    { .name = "glm4moe", .about = "GLM-4.5 MoE: biased GQA, q/k norms, partial rope, sigmoid routing, shared experts, NextN",
      .hparams = glm4moe_hparams, .tables = glm4moe_tables,
      .features = F(QKV_BIAS) | F(QK_NORM) | F(EXPERTS) | F(SHARED_EXPERT) | F(ROPE_LINEAR) |
                  F(SIGMOID_ROUTING) | F(NEXTN),
      .rope = GGUF_ROPE_NEOX, .activation = GGUF_ACT_SILU,
      .routing = GGUF_ROUTING_SIGMOID_BIAS },
    /* DeepSeek-V2/V3, Kimi K2: multi-head latent attention; leading dense
     * blocks, then sigmoid-routed experts in groups with a shared one */
    { .name = "deepseek2", .about = "DeepSeek-V2/V3 MoE: multi-head latent attention (MLA), YaRN, grouped sigmoid routing, shared experts",
      .hparams = deepseek2_hparams, .tables = deepseek2_tables,
      .features = F(EXPERTS) | F(SHARED_EXPERT) | F(ROPE_LINEAR) | F(ROPE_YARN) |
                  F(SIGMOID_ROUTING) | F(MLA),
      .rope = GGUF_ROPE_NORM, .activation = GGUF_ACT_SILU,
      .routing = GGUF_ROUTING_SIGMOID_BIAS },
};
#undef F
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
/* (the rows up to the experts, and the head size rows, also start and end
 * Glm4MoeModel's table: the expert groups come between) */
#define BASE_HF_TO_EXPERTS \
    HPR(N("max_position_embeddings", "n_ctx"), CONTEXT_LENGTH), \
    HPR(N("hidden_size", "n_embd"), EMBEDDING_LENGTH, REQ), \
    HPR(N("intermediate_size", "n_inner"), FFN_LENGTH), \
    HPR(N("num_attention_heads", "n_head"), HEAD_COUNT, REQ), \
    HPR(N("num_key_value_heads"), HEAD_COUNT_KV), \
    HPR(N("rope_theta"), ROPE_FREQ_BASE, FLOAT), \
    HPR(N("rms_norm_eps"), RMS_EPS, FLOAT), \
    HPR(N("layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"), LAYER_NORM_EPS, FLOAT), \
    HPR(N("num_local_experts", "num_experts"), EXPERT_COUNT), \
    HPR(N("num_experts_per_tok"), EXPERT_USED_COUNT)
#define BASE_HF_HEAD_DIM \
    HPR(N("head_dim"), KEY_LENGTH), \
    HPR(N("head_dim"), VALUE_LENGTH)
static const gguf_recipe_hf_hparam base_hf_hparams[] = {
    BASE_HF_TO_EXPERTS,
    BASE_HF_HEAD_DIM,
    HPR_END,
};

/* What Qwen3-MoE's converter adds after general.file_type. */
static const gguf_recipe_hf_hparam qwen3moe_late_hparams[] = {
    HPR(N("moe_intermediate_size"), EXPERT_FFN_LENGTH),
    HPR_END,
};

/* Qwen3_5TextModel: the base keys (the rope base from rope_parameters,
 * where transformers 5 puts it; the M-RoPE sections come with the rope
 * scaling keys), then Qwen2MoeModel's and Qwen3NextModel's after
 * general.file_type. */
static const gguf_recipe_hf_hparam qwen35_hf_hparams[] = {
    HPR(N("max_position_embeddings", "n_ctx"), CONTEXT_LENGTH),
    HPR(N("hidden_size", "n_embd"), EMBEDDING_LENGTH, REQ),
    HPR(N("intermediate_size", "n_inner"), FFN_LENGTH),
    HPR(N("num_attention_heads", "n_head"), HEAD_COUNT, REQ),
    HPR(N("num_key_value_heads"), HEAD_COUNT_KV),
    HPR(N("rope_theta"), ROPE_FREQ_BASE, FLOAT, .make = GGUF_MAKE_ROPE_THETA),
    HPR(N("rms_norm_eps"), RMS_EPS, FLOAT),
    HPR(N("layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"), LAYER_NORM_EPS, FLOAT),
    HPR(N("num_local_experts", "num_experts"), EXPERT_COUNT),
    HPR(N("num_experts_per_tok"), EXPERT_USED_COUNT),
    HPR(N("head_dim"), KEY_LENGTH),
    HPR(N("head_dim"), VALUE_LENGTH),
    HPR_END,
};
#define QWEN35_LATE \
    HPR(N("linear_conv_kernel_dim"), SSM_CONV_KERNEL, REQ), \
    HPR(N("linear_key_head_dim"), SSM_STATE_SIZE, REQ), \
    HPR(N("linear_num_key_heads"), SSM_GROUP_COUNT, REQ), \
    HPR(N("linear_num_value_heads"), SSM_TIME_STEP_RANK, REQ), \
    HPR(N("linear_value_head_dim", "linear_num_value_heads"), SSM_INNER_SIZE, REQ, \
        .make = GGUF_MAKE_PRODUCT), \
    HPR(N("full_attention_interval"), FULL_ATTN_INTERVAL, DEF(4)), \
    HPR(N("partial_rotary_factor"), ROPE_DIM, DEF(0.25), .make = GGUF_MAKE_ROTARY_HEAD), \
    HPR_END
static const gguf_recipe_hf_hparam qwen35_late_hparams[] = {
    HPR(N("moe_intermediate_size"), EXPERT_FFN_LENGTH),
    HPR(N("shared_expert_intermediate_size"), EXPERT_SHARED_FFN_LENGTH),
    QWEN35_LATE,
};
#undef QWEN35_LATE

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
/* Gemma4Model: the base converter's keys in its order of names, the rope
 * bases from rope_parameters' full_attention and sliding_attention (e21cdc11
 * mirrors the older names into them), the experts' top_k_experts. */
#define FULL_THETA "rope_parameters.full_attention.rope_theta", "rope_parameters.rope_theta", \
    "global_rope_theta", "rope_global_theta", "rope_theta_global", "rope_theta", "rotary_emb_base"
static const gguf_recipe_hf_hparam gemma4_hf_hparams[] = {
    HPR(N("max_position_embeddings", "n_ctx", "n_positions", "max_length", "max_sequence_length",
          "model_max_length"), CONTEXT_LENGTH),
    HPR(N("hidden_size", "n_embd", "dim"), EMBEDDING_LENGTH, REQ),
    HPR(N("intermediate_size", "n_inner", "hidden_dim"), FFN_LENGTH, REQ),
    HPR(N("num_attention_heads", "n_head", "n_heads"), HEAD_COUNT),
    HPR(N("num_key_value_heads", "n_kv_heads"), HEAD_COUNT_KV),
    HPR(N(FULL_THETA), ROPE_FREQ_BASE, FLOAT),
    HPR(N("rope_parameters.sliding_attention.rope_theta", "local_rope_theta", "rope_local_theta",
          "rope_theta_local", "swa_rope_theta", "rope_local_base_freq"), ROPE_FREQ_BASE_SWA, FLOAT),
    HPR(N("rms_norm_eps", "norm_eps"), RMS_EPS, FLOAT),
    HPR(N("layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"), LAYER_NORM_EPS, FLOAT),
    HPR(N("num_local_experts", "num_experts"), EXPERT_COUNT),
    HPR(N("num_experts_per_tok", "num_experts_per_token", "top_k_experts"), EXPERT_USED_COUNT),
    HPR(N("head_dim"), KEY_LENGTH),
    HPR(N("head_dim"), VALUE_LENGTH),
    HPR_END,
};
/* Then Gemma3Model.set_gguf_parameters' writes (as gemma3_late_hparams,
 * the rope base from rope_parameters), then Gemma4Model's: key_length and
 * value_length become the full layers' head size in their first place,
 * feed_forward_length an array of one width per layer when the KV-shared
 * layers' MLP is double-wide, head_count_kv one when the full layers have
 * their own count. */
static const gguf_recipe_hf_hparam gemma4_late_hparams[] = {
    HPR(N("max_position_embeddings"), CONTEXT_LENGTH, DEF(131072)),
    HPR(N("num_attention_heads"), HEAD_COUNT, DEF(8)),
    HPR(N("rms_norm_eps"), RMS_EPS, FLOAT, DEF(1e-6)),
    HPR(N("head_dim"), KEY_LENGTH, DEF(256)),
    HPR(N("head_dim"), VALUE_LENGTH, DEF(256)),
    HPR(N(FULL_THETA), ROPE_FREQ_BASE, FLOAT, DEF(1000000.0)),
    HPR(N("final_logit_softcapping"), FINAL_SOFTCAP, FLOAT, .when = GGUF_WHEN_NONZERO),
    HPR(N("sliding_window"), SLIDING_WINDOW, REQ, .when = GGUF_WHEN_NOT_PATTERN_1),
    HPR(N("num_key_value_heads"), HEAD_COUNT_KV, DEF(4)),
    HPR(N("num_kv_shared_layers"), SHARED_KV_LAYERS, REQ),
    HPR(N("hidden_size_per_layer_input"), EMBD_PER_LAYER, .make = GGUF_MAKE_ZERO_ABSENT),
    HPR(N("layer_types"), SWA_PATTERN, REQ, .make = GGUF_MAKE_SWA_LAYERS),
    HPR(N("global_head_dim"), KEY_LENGTH, REQ),
    HPR(N("global_head_dim"), VALUE_LENGTH, REQ),
    HPR(N("head_dim"), KEY_LENGTH_SWA, REQ),
    HPR(N("head_dim"), VALUE_LENGTH_SWA, REQ),
    HPR(N("expert_intermediate_size", "moe_intermediate_size"), EXPERT_FFN_LENGTH),
    HPR(N("intermediate_size"), FFN_LENGTH, .make = GGUF_MAKE_FF_DOUBLE_WIDE),
    HPR(N("num_global_key_value_heads"), HEAD_COUNT_KV, .make = GGUF_MAKE_KV_HEADS_SWA_FULL),
    HPR(N("global_head_dim"), ROPE_DIM, REQ),
    HPR(N("partial_rotary_factor"), ROPE_DIM_SWA, DEF(1.0), .make = GGUF_MAKE_ROTARY_HEAD),
    HPR_END,
};
#undef FULL_THETA

/* Glm4MoeModel: the base converter's keys (n_group and topk_group after
 * the used count, when given), then its own after general.file_type: the
 * rope dimension (head_dim × partial_rotary_factor, 0.5 when absent), the
 * routed experts' count and width, the shared experts (the three required
 * here: upstream's converter writes a file without them that llama.cpp
 * does not load), the leading dense
 * blocks, sigmoid gating always, the routed scale, the weights' norm, the
 * next-token-prediction layers. */
static const gguf_recipe_hf_hparam glm4moe_hf_hparams[] = {
    BASE_HF_TO_EXPERTS,
    HPR(N("n_group"), EXPERT_GROUP_COUNT),
    HPR(N("topk_group"), EXPERT_GROUP_USED_COUNT),
    BASE_HF_HEAD_DIM,
    HPR_END,
};
#undef BASE_HF_TO_EXPERTS
#undef BASE_HF_HEAD_DIM
static const gguf_recipe_hf_hparam glm4moe_late_hparams[] = {
    HPR(N("partial_rotary_factor"), ROPE_DIM, DEF(0.5), .make = GGUF_MAKE_ROTARY_HEAD),
    HPR(N("n_routed_experts"), EXPERT_COUNT, REQ),
    HPR(N("moe_intermediate_size"), EXPERT_FFN_LENGTH, REQ),
    HPR(N("n_shared_experts"), EXPERT_SHARED_COUNT, REQ),
    HPR(N("first_k_dense_replace"), LEADING_DENSE_BLOCK_COUNT),
    HPR(N("expert_gating_func"), EXPERT_GATING_FUNC, DEF(2), .make = GGUF_MAKE_CONST),
    HPR(N("routed_scaling_factor"), EXPERT_WEIGHTS_SCALE, FLOAT),
    HPR(N("norm_topk_prob"), EXPERT_WEIGHTS_NORM, .make = GGUF_MAKE_BOOL),
    HPR(N("num_nextn_predict_layers"), NEXTN_PREDICT_LAYERS),
    HPR_END,
};

/* DeepseekV2Model: the base converter's keys with num_key_value_heads
 * written 1 (MLA as MQA), rms_norm_eps 1e-6 when absent, the expert
 * groups and the gating function (scoring_func); then its own after
 * general.file_type: the leading dense blocks, the vocabulary size, the
 * MLA ranks, the latent's key and value lengths (over the base
 * converter's head_dim ones), a head's, the experts, the rope width
 * (qk_rope_head_dim), YaRN's legacy log multiplier. */
static const gguf_recipe_hf_hparam deepseek2_hf_hparams[] = {
    HPR(N("max_position_embeddings", "n_ctx"), CONTEXT_LENGTH),
    HPR(N("hidden_size", "n_embd"), EMBEDDING_LENGTH, REQ),
    HPR(N("intermediate_size", "n_inner"), FFN_LENGTH),
    HPR(N("num_attention_heads", "n_head"), HEAD_COUNT, REQ),
    HPR(N("num_key_value_heads"), HEAD_COUNT_KV, DEF(1), .make = GGUF_MAKE_CONST),
    HPR(N("rope_theta"), ROPE_FREQ_BASE, FLOAT),
    HPR(N("rms_norm_eps"), RMS_EPS, FLOAT, DEF(1e-6)),
    HPR(N("layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"), LAYER_NORM_EPS, FLOAT),
    HPR(N("num_local_experts", "num_experts"), EXPERT_COUNT),
    HPR(N("num_experts_per_tok"), EXPERT_USED_COUNT),
    HPR(N("n_group"), EXPERT_GROUP_COUNT),
    HPR(N("topk_group"), EXPERT_GROUP_USED_COUNT),
    HPR(N("score_function", "scoring_func", "score_func", "moe_router_activation",
          "moe_router_activation_func"), EXPERT_GATING_FUNC, .make = GGUF_MAKE_GATING_FUNC),
    HPR(N("head_dim"), KEY_LENGTH),
    HPR(N("head_dim"), VALUE_LENGTH),
    HPR_END,
};
static const gguf_recipe_hf_hparam deepseek2_late_hparams[] = {
    HPR(N("first_k_dense_replace"), LEADING_DENSE_BLOCK_COUNT, .make = GGUF_MAKE_ZERO_ABSENT),
    HPR(N("vocab_size"), VOCAB_SIZE, REQ),
    HPR(N("q_lora_rank"), Q_LORA_RANK),
    HPR(N("kv_lora_rank"), KV_LORA_RANK, REQ),
    HPR(N("kv_lora_rank", "qk_rope_head_dim"), KEY_LENGTH, .make = GGUF_MAKE_SUM),
    HPR(N("kv_lora_rank"), VALUE_LENGTH, REQ),
    HPR(N("qk_nope_head_dim", "qk_rope_head_dim"), KEY_LENGTH_MLA, .make = GGUF_MAKE_SUM),
    HPR(N("v_head_dim"), VALUE_LENGTH_MLA, REQ),
    HPR(N("moe_intermediate_size", "intermediate_size"), EXPERT_FFN_LENGTH, REQ),
    HPR(N("n_routed_experts"), EXPERT_COUNT),
    HPR(N("n_shared_experts"), EXPERT_SHARED_COUNT, .make = GGUF_MAKE_ZERO_ABSENT),
    HPR(N("routed_scaling_factor"), EXPERT_WEIGHTS_SCALE, FLOAT),
    HPR(N("norm_topk_prob"), EXPERT_WEIGHTS_NORM, .make = GGUF_MAKE_BOOL,
        .when = GGUF_WHEN_NONZERO),
    HPR(N("qk_rope_head_dim"), ROPE_DIM, REQ),
    HPR(N("mscale_all_dim"), ROPE_YARN_LOG_MUL, FLOAT, .make = GGUF_MAKE_YARN_LOG_MUL),
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
    T(ATTN_OUT, .hf = HF("self_attn.o_proj.weight"), .meta = META("attention.wo.weight")),
    T(FFN_NORM, .hf = HF("post_attention_layernorm.weight"), .meta = META("ffn_norm.weight")),
    T(FFN_GATE, .hf = HF("mlp.gate_proj.weight"), .meta = META("feed_forward.w1.weight")),
    T(FFN_UP, .hf = HF("mlp.up_proj.weight"), .meta = META("feed_forward.w3.weight")),
    T(FFN_DOWN, .hf = HF("mlp.down_proj.weight"), .meta = META("feed_forward.w2.weight")),
    NAMES_END,
};
/* Its k and v, and the q/k/v biases (DeepSeek's MLA has none of them). */
static const gguf_recipe_tensor decoder_kv_names[] = {
    T(ATTN_K, .hf = HF("self_attn.k_proj.weight"), .meta = META("attention.wk.weight"),
      .permute = GGUF_PERMUTE_K),
    T(ATTN_V, .hf = HF("self_attn.v_proj.weight"), .meta = META("attention.wv.weight")),
    T(ATTN_Q_BIAS, .hf = HF("self_attn.q_proj.bias"), .permute = GGUF_PERMUTE_Q),
    T(ATTN_K_BIAS, .hf = HF("self_attn.k_proj.bias"), .permute = GGUF_PERMUTE_K),
    T(ATTN_V_BIAS, .hf = HF("self_attn.v_proj.bias")),
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

/* Qwen 3.5: the gated delta net's (linear_attn.*), the gated attention's
 * and the experts' names. The experts come stacked (mlp.experts.gate_up_proj:
 * gate rows then up rows, mlp.experts.down_proj): the converter splits
 * them itself (convert/hf.c), so their rows name no checkpoint tensor. */
#define QWEN35_NAMES \
    HF_GLOBALS, \
    T(ATTN_NORM, .hf = HF("input_layernorm.weight")), \
    T(SSM_A, .hf = HF("linear_attn.A_log")), \
    T(SSM_CONV1D, .hf = HF("linear_attn.conv1d.weight")), \
    T(SSM_DT_BIAS, .hf = HF("linear_attn.dt_bias")), \
    T(SSM_ALPHA, .hf = HF("linear_attn.in_proj_a.weight")), \
    T(SSM_BETA, .hf = HF("linear_attn.in_proj_b.weight")), \
    T(ATTN_QKV, .hf = HF("linear_attn.in_proj_qkv.weight")), \
    T(ATTN_GATE, .hf = HF("linear_attn.in_proj_z.weight")), \
    T(SSM_NORM, .hf = HF("linear_attn.norm.weight")), \
    T(SSM_OUT, .hf = HF("linear_attn.out_proj.weight")), \
    T(FFN_NORM, .hf = HF("post_attention_layernorm.weight")), \
    T(ATTN_Q, .hf = HF("self_attn.q_proj.weight")), \
    T(ATTN_K, .hf = HF("self_attn.k_proj.weight")), \
    T(ATTN_V, .hf = HF("self_attn.v_proj.weight")), \
    T(ATTN_OUT, .hf = HF("self_attn.o_proj.weight")), \
    T(ATTN_Q_NORM, .hf = HF("self_attn.q_norm.weight")), \
    T(ATTN_K_NORM, .hf = HF("self_attn.k_norm.weight"))
static const gguf_recipe_tensor qwen35_names[] = {
    QWEN35_NAMES,
    T(FFN_GATE, .hf = HF("mlp.gate_proj.weight")),
    T(FFN_UP, .hf = HF("mlp.up_proj.weight")),
    T(FFN_DOWN, .hf = HF("mlp.down_proj.weight")),
    NAMES_END,
};
static const gguf_recipe_tensor qwen35moe_names[] = {
    QWEN35_NAMES,
    /* experts one by one (fine-tunes saved so): stacked as Qwen2MoeModel does */
    T(FFN_DOWN_EXPS, .hf = HF("mlp.experts.%d.down_proj.weight")),
    T(FFN_GATE_EXPS, .hf = HF("mlp.experts.%d.gate_proj.weight")),
    T(FFN_UP_EXPS, .hf = HF("mlp.experts.%d.up_proj.weight")),
    T(FFN_GATE_INP, .hf = HF("mlp.gate.weight")),
    T(FFN_GATE_SHEXP, .hf = HF("mlp.shared_expert.gate_proj.weight")),
    T(FFN_UP_SHEXP, .hf = HF("mlp.shared_expert.up_proj.weight")),
    T(FFN_DOWN_SHEXP, .hf = HF("mlp.shared_expert.down_proj.weight")),
    T(FFN_GATE_INP_SHEXP, .hf = HF("mlp.shared_expert_gate.weight")),
    NAMES_END,
};
#undef QWEN35_NAMES
/* Gemma 4 (the names with "language_model." taken out): stacked experts
 * with gate and up fused, the router's parts, the per-layer inputs, the
 * layer scalar (Gemma4Model adds ".weight" to it). */
static const gguf_recipe_tensor gemma4_names[] = {
    T(TOKEN_EMBD, .hf = "model.embed_tokens.weight"),
    T(PER_LAYER_TOKEN_EMBD, .hf = "model.embed_tokens_per_layer.weight"),
    T(PER_LAYER_MODEL_PROJ, .hf = "model.per_layer_model_projection.weight"),
    T(PER_LAYER_PROJ_NORM, .hf = "model.per_layer_projection_norm.weight"),
    T(OUTPUT_NORM, .hf = "model.norm.weight"),
    T(ATTN_NORM, .hf = HF("input_layernorm.weight")),
    T(ATTN_Q, .hf = HF("self_attn.q_proj.weight")),
    T(ATTN_K, .hf = HF("self_attn.k_proj.weight")),
    T(ATTN_V, .hf = HF("self_attn.v_proj.weight")),
    T(ATTN_OUT, .hf = HF("self_attn.o_proj.weight")),
    T(ATTN_Q_NORM, .hf = HF("self_attn.q_norm.weight")),
    T(ATTN_K_NORM, .hf = HF("self_attn.k_norm.weight")),
    T(ATTN_POST_NORM, .hf = HF("post_attention_layernorm.weight")),
    T(LAYER_OUT_SCALE, .hf = HF("layer_scalar")),
    T(FFN_NORM, .hf = HF("pre_feedforward_layernorm.weight")),
    T(FFN_GATE, .hf = HF("mlp.gate_proj.weight")),
    T(FFN_UP, .hf = HF("mlp.up_proj.weight")),
    T(FFN_DOWN, .hf = HF("mlp.down_proj.weight")),
    T(FFN_POST_NORM, .hf = HF("post_feedforward_layernorm.weight")),
    T(FFN_GATE_INP, .hf = HF("router.proj.weight")),
    T(FFN_GATE_INP_SCALE, .hf = HF("router.scale")),
    T(FFN_PRE_NORM_2, .hf = HF("pre_feedforward_layernorm_2.weight")),
    T(FFN_POST_NORM_1, .hf = HF("post_feedforward_layernorm_1.weight")),
    T(FFN_POST_NORM_2, .hf = HF("post_feedforward_layernorm_2.weight")),
    T(FFN_GATE_UP_EXPS, .hf = HF("experts.gate_up_proj")),
    T(FFN_DOWN_EXPS, .hf = HF("experts.down_proj")),
    T(FFN_DOWN_EXPS_SCALE, .hf = HF("router.per_expert_scale")),
    T(PER_LAYER_INP_GATE, .hf = HF("per_layer_input_gate.weight")),
    T(PER_LAYER_PROJ, .hf = HF("per_layer_projection.weight")),
    T(PER_LAYER_POST_NORM, .hf = HF("post_per_layer_input_norm.weight")),
    NAMES_END,
};
/* GLM-4.5 (and DeepSeek-V2/V3's feed-forward): the decoder's names with q/k norms, experts one by one
 * (stacked down, gate, up as Glm4MoeModel does), the router's score bias,
 * the shared experts, and the next-token-prediction layer's own. */
static const gguf_recipe_tensor glm4moe_names[] = {
    T(FFN_DOWN_EXPS, .hf = HF("mlp.experts.%d.down_proj.weight")),
    T(FFN_GATE_EXPS, .hf = HF("mlp.experts.%d.gate_proj.weight")),
    T(FFN_UP_EXPS, .hf = HF("mlp.experts.%d.up_proj.weight")),
    T(FFN_GATE_INP, .hf = HF("mlp.gate.weight")),
    T(EXP_PROBS_B, .hf = HF("mlp.gate.e_score_correction_bias")),
    T(FFN_GATE_SHEXP, .hf = HF("mlp.shared_experts.gate_proj.weight")),
    T(FFN_UP_SHEXP, .hf = HF("mlp.shared_experts.up_proj.weight")),
    T(FFN_DOWN_SHEXP, .hf = HF("mlp.shared_experts.down_proj.weight")),
    NAMES_END,
};
static const gguf_recipe_tensor nextn_names[] = {
    T(NEXTN_EH_PROJ, .hf = HF("eh_proj.weight")),
    T(NEXTN_ENORM, .hf = HF("enorm.weight")),
    T(NEXTN_HNORM, .hf = HF("hnorm.weight")),
    T(NEXTN_SHARED_HEAD_NORM, .hf = HF("shared_head.norm.weight")),
    NAMES_END,
};
/* DeepSeek-V2/V3: the decoder's names without k and v (q_proj only in the
 * "lite" models, not permuted: DeepseekV2Model has no PERMUTE_QK), and
 * MLA's (kv_b_proj: hf.c splits it, GGUF_FACT_KV_B_SPLIT) */
static const gguf_recipe_tensor mla_names[] = {
    T(ATTN_Q_A, .hf = HF("self_attn.q_a_proj.weight")),
    T(ATTN_Q_A_NORM, .hf = HF("self_attn.q_a_layernorm.weight")),
    T(ATTN_Q_B, .hf = HF("self_attn.q_b_proj.weight")),
    T(ATTN_KV_A_MQA, .hf = HF("self_attn.kv_a_proj_with_mqa.weight")),
    T(ATTN_KV_A_NORM, .hf = HF("self_attn.kv_a_layernorm.weight")),
    NAMES_END,
};
#undef T
#undef NAMES_END
#undef HF_GLOBALS
#undef HF
#undef META

static const gguf_recipe_tensor *const llama_names[] = { decoder_names, decoder_kv_names,
                                                         mixtral_names, NULL };
static const gguf_recipe_tensor *const qwen2_names[] = { decoder_names, decoder_kv_names, NULL };
static const gguf_recipe_tensor *const qwen3_names[] = { decoder_names, decoder_kv_names,
                                                         qk_norm_names, NULL };
static const gguf_recipe_tensor *const qwen3moe_all[] = { decoder_names, decoder_kv_names,
                                                          qk_norm_names,
                                                          qwen3moe_names, NULL };
static const gguf_recipe_tensor *const phi3_all[] = { phi3_names, NULL };
static const gguf_recipe_tensor *const gptoss_all[] = { gptoss_names, NULL };
static const gguf_recipe_tensor *const gemma2_all[] = { gemma_names, NULL };
static const gguf_recipe_tensor *const qwen35_all[] = { qwen35_names, NULL };
static const gguf_recipe_tensor *const qwen35moe_all[] = { qwen35moe_names, NULL };
static const gguf_recipe_tensor *const gemma3_all[] = { gemma_names, gemma3_names, qk_norm_names,
                                                        NULL };
static const gguf_recipe_tensor *const gemma4_all[] = { gemma4_names, NULL };
static const gguf_recipe_tensor *const glm4moe_all[] = { decoder_names, decoder_kv_names,
                                                         qk_norm_names,
                                                         glm4moe_names, nextn_names, NULL };
static const gguf_recipe_tensor *const deepseek2_all[] = { decoder_names, mla_names,
                                                           glm4moe_names, NULL };

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
static const char *const mistral3_hf[] = { "Mistral3ForConditionalGeneration", NULL };
/* Mistral3Model keeps the text model's names ("language_model." out) */
static const char *const mistral3_vision[] = { "vision_tower.", "multi_modal_projector.", NULL };
static const char *const mistral3_types[] = { "mistral", NULL };
static const char *const qwen35_hf[] = { "Qwen3_5ForCausalLM", "Qwen3_5ForConditionalGeneration",
                                         NULL };
static const char *const qwen35moe_hf[] = { "Qwen3_5MoeForCausalLM",
                                            "Qwen3_5MoeForConditionalGeneration", NULL };
/* Qwen3NextModel drops the multi-token prediction head, Qwen2MoeModel the
 * vision tower's names (after "language_model." is out) */
static const char *const qwen35_skip[] = {
    "mtp", "mlp", "vision_model", "model.vision_tower", "model.multi_modal_projector",
    "model.visual", NULL,
};
/* Gemma3Model.modify_tensors drops these after taking "language_model."
 * out; the last two, a newer transformers' layout, llama.cpp does not know
 * (it fails on them): gguf-convert drops them too. */
static const char *const gemma3_vision[] = {
    "multi_modal_projector.", "vision_tower.", "multimodal_projector.", "vision_model.",
    "model.vision_tower.", "model.multi_modal_projector.", NULL,
};
static const char *const gemma4_hf[] = { "Gemma4ForConditionalGeneration", NULL };
static const char *const glm4moe_hf[] = { "Glm4MoeForCausalLM", NULL };
/* Glm4MoeLiteModel (GLM-4.7-Flash) is DeepseekV2Model with GLM's
 * tokenizer: the same keys and tensors */
static const char *const deepseek2_hf[] = { "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM",
                                            "Glm4MoeLiteForCausalLM", NULL };
/* Gemma4Model keeps only the names with "language_model." in them: every
 * other name (vision and audio towers, their embedders) starts with "" */
static const char *const gemma4_others[] = { "", NULL };
/* Gemma2Model drops lm_head (llama.cpp ties the output to token_embd) */
static const char *const gemma2_skip[] = {
    ".attention.masked_bias", ".attention.bias", ".rotary_emb.inv_freq", "lm_head.weight", NULL,
};

/* In registry order (gguf_archs), one per architecture. */
#define F(x) (1u << GGUF_FACT_##x)
const gguf_recipe gguf_recipes[] = {
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
    { .arch = "mistral3", .hf_classes = mistral3_hf, .hf_skip = skip_common,
      .hf_hparams = base_hf_hparams, .tensors = llama_names,
      .facts = F(PERMUTE_QK) | F(LLAMA_VOCAB) | F(WRITES_ROPE_DIM),
      .hf_strip = "language_model.", .hf_skip_prefix = mistral3_vision,
      .hf_model_types = mistral3_types },
    /* Qwen3_5TextModel, Qwen3_5MoeTextModel: the same converter (Qwen2MoeModel's
     * expert keys only when config.json has them) */
    { .arch = "qwen35", .hf_classes = qwen35_hf, .hf_skip = skip_common,
      .hf_hparams = qwen35_hf_hparams, .hf_hparams_late = qwen35_late_hparams,
      .tensors = qwen35_all, .norm_offset = 1.0f,
      .hf_strip = "language_model.", .hf_skip_prefix = qwen35_skip },
    { .arch = "qwen35moe", .hf_classes = qwen35moe_hf, .hf_skip = skip_common,
      .hf_hparams = qwen35_hf_hparams, .hf_hparams_late = qwen35_late_hparams,
      .tensors = qwen35moe_all, .norm_offset = 1.0f,
      .hf_strip = "language_model.", .hf_skip_prefix = qwen35_skip },
    { .arch = "gemma4", .hf_classes = gemma4_hf, .hf_skip = skip_common,
      .hf_hparams = gemma4_hf_hparams, .hf_hparams_late = gemma4_late_hparams,
      .tensors = gemma4_all, .facts = F(TRIM_EMBD) | F(NO_SPACE_PREFIX) | F(ROPE_PROPORTIONAL),
      .hf_strip = "language_model.", .hf_skip_prefix = gemma4_others },
    { .arch = "glm4moe", .hf_classes = glm4moe_hf, .hf_skip = skip_common,
      .hf_hparams = glm4moe_hf_hparams, .hf_hparams_late = glm4moe_late_hparams,
      .tensors = glm4moe_all, .facts = F(NEXTN_BLOCKS) },
    { .arch = "deepseek2", .hf_classes = deepseek2_hf, .hf_skip = skip_common,
      .hf_hparams = deepseek2_hf_hparams, .hf_hparams_late = deepseek2_late_hparams,
      .tensors = deepseek2_all, .facts = F(KV_B_SPLIT) },
};
#undef F
const size_t gguf_n_archs = sizeof gguf_archs / sizeof *gguf_archs;
const size_t gguf_n_recipes = sizeof gguf_recipes / sizeof *gguf_recipes;
