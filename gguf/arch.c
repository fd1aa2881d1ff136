/*
 * arch.c — the architecture registry (see <ggufkit/arch.h>): the model
 * schema of every family.
 *
 * Each architecture is a row of data: names, a hyper-parameter table, a
 * tensor table and its model features. The tools read these rows; none of
 * them keeps its own list of architectures, tensors or keys. The tables
 * are transcribed from llama.cpp: the tensor names and shapes of its loader
 * (llama-model.cpp), the required keys of llm_load_hparams. How llama.cpp's
 * converter makes a family's files is its recipe (arch_recipe.c).
 *
 * Adding an architecture: a hyper-parameter table (usually the shared
 * decoder one), a tensor table (usually the decoder's, patched by role), a
 * row in ARCHS, a recipe (docs/design.md has the checklist).
 */
#include "arch_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#undef HP
#undef INT
#undef FLOAT
#undef REQ
#undef DEF
#undef DERIVE
#undef ZERO_OK
#undef ROPE_SCALING_KEYS

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
    [GGUF_HP_ROPE_SCALE_LINEAR] = GGUF_KEY_ROPE_SCALE_LINEAR,
    [GGUF_HP_ROPE_SCALING_FACTOR] = GGUF_KEY_ROPE_SCALING_FACTOR,
    [GGUF_HP_ROPE_SCALING_ATTN_FACTOR] = GGUF_KEY_ROPE_SCALING_ATTN_FACTOR,
    [GGUF_HP_ROPE_YARN_EXT_FACTOR] = GGUF_KEY_ROPE_YARN_EXT_FACTOR,
    [GGUF_HP_ROPE_YARN_ATTN_FACTOR] = GGUF_KEY_ROPE_YARN_ATTN_FACTOR,
    [GGUF_HP_ROPE_YARN_BETA_FAST] = GGUF_KEY_ROPE_YARN_BETA_FAST,
    [GGUF_HP_ROPE_YARN_BETA_SLOW] = GGUF_KEY_ROPE_YARN_BETA_SLOW,
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
static const gguf_arch ARCHS[] = {
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
};
#undef F
#define N_ARCHS (sizeof ARCHS / sizeof *ARCHS)

size_t gguf_arch_count(void) { return N_ARCHS; }

const gguf_arch *gguf_arch_at(size_t i) { return i < N_ARCHS ? &ARCHS[i] : NULL; }

const gguf_arch *gguf_arch_find(const char *name)
{
    for (size_t i = 0; name && i < N_ARCHS; i++)
        if (!strcmp(ARCHS[i].name, name))
            return &ARCHS[i];
    return NULL;
}

const char *gguf_arch_name(const gguf_arch *a) { return a->name; }
const char *gguf_arch_about(const gguf_arch *a) { return a->about; }
int gguf_arch_rope(const gguf_arch *a) { return a->rope; }
int gguf_arch_activation(const gguf_arch *a) { return a->activation; }
int gguf_arch_routing(const gguf_arch *a) { return a->routing; }

bool gguf_arch_has(const gguf_arch *a, int feature)
{
    return feature >= 0 && feature < GGUF_FEAT_COUNT && (a->features >> feature & 1u);
}

/* ---------------------------------------------------------------------------
 * Hyper-parameter rows
 */

size_t gguf_arch_n_hparams(const gguf_arch *a)
{
    size_t n = 0;
    while (a->hparams[n].id != GGUF_HP_COUNT)
        n++;
    return n;
}

const gguf_arch_hparam *gguf_arch_hparam_at(const gguf_arch *a, size_t i)
{
    return i < gguf_arch_n_hparams(a) ? &a->hparams[i] : NULL;
}

const gguf_arch_hparam *gguf_arch_hparam_of(const gguf_arch *a, int hp)
{
    for (const gguf_arch_hparam *h = a->hparams; h->id != GGUF_HP_COUNT; h++)
        if (h->id == hp)
            return h;
    return NULL;
}

int gguf_arch_hparam_id(const gguf_arch_hparam *h) { return h->id; }
bool gguf_arch_hparam_is_float(const gguf_arch_hparam *h) { return h->is_float; }
bool gguf_arch_hparam_required(const gguf_arch_hparam *h) { return h->required; }
int gguf_arch_hparam_derive(const gguf_arch_hparam *h) { return h->derive; }
double gguf_arch_hparam_default(const gguf_arch_hparam *h) { return h->def; }

void gguf_arch_hparam_range(const gguf_arch_hparam *h, int64_t *lo, int64_t *hi)
{
    *lo = h->lo;
    *hi = h->hi;
}

/* ---------------------------------------------------------------------------
 * Tensor rows
 */

/* Row i of a's tables, their patches applied (arch_impl.h), or NULL. */
const gguf_arch_tensor *gguf_arch_tensor_at(const gguf_arch *a, size_t i)
{
    for (const gguf_tensor_part *p = a->tables; p->rows; p++)
        for (const gguf_arch_tensor *r = p->rows; r->name; r++) {
            const gguf_arch_tensor *row = r;
            for (const gguf_tensor_patch *q = p->patches; q && q->op; q++)
                if (q->at == r->role && q->op == GGUF_PATCH_DROP)
                    row = NULL;
                else if (q->at == r->role && q->op == GGUF_PATCH_SET)
                    row = &q->row;
            if (row && i-- == 0)
                return row;
            for (const gguf_tensor_patch *q = p->patches; q && q->op; q++)
                if (q->at == r->role && q->op == GGUF_PATCH_AFTER && i-- == 0)
                    return &q->row;
        }
    return NULL;
}

size_t gguf_arch_n_tensors(const gguf_arch *a)
{
    size_t n = 0;
    while (gguf_arch_tensor_at(a, n))
        n++;
    return n;
}

const char *gguf_arch_tensor_name(const gguf_arch_tensor *t) { return t->name; }
int gguf_arch_tensor_role(const gguf_arch_tensor *t) { return t->role; }

int gguf_arch_tensor_dim(const gguf_arch_tensor *t, int axis)
{
    return axis >= 0 && axis < 3 ? t->ne[axis] : GGUF_DIM_1;
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
    case GGUF_NEED_IF_FEAT:      return gguf_arch_has(a, t->need_feat);
    case GGUF_NEED_UNLESS_FEAT:  return !gguf_arch_has(a, t->need_feat);
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
    const gguf_arch_tensor *t;
    for (size_t i = 0; (t = gguf_arch_tensor_at(a, i)); i++)
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
    const gguf_arch_tensor *t;
    for (size_t i = 0; (t = gguf_arch_tensor_at(a, i)); i++) {
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

/* ===========================================================================
 * A model's hyper-parameters (read by modelcheck.c's gguf_hparams_read)
 */

void gguf_hparams_free(gguf_hparams *hp) { free(hp); }

const gguf_arch *gguf_hparams_arch(const gguf_hparams *hp) { return hp->arch; }

bool gguf_hparams_has(const gguf_hparams *hp, int id)
{
    return id >= 0 && id < GGUF_HP_COUNT && hp->has[id];
}

/* The value of a row (float or integer as its row says; an id without a
 * row is an integer) when present or derived. */
static bool hp_value(const gguf_hparams *hp, int id, bool *is_float, double *f, int64_t *v)
{
    *f = 0;
    *v = 0;
    if (id < 0 || id >= GGUF_HP_COUNT || !hp->set[id])
        return false;
    const gguf_arch_hparam *h = gguf_arch_hparam_of(hp->arch, id);
    *is_float = h && h->is_float;
    *f = hp->f[id];
    *v = hp->v[id];
    return true;
}

bool gguf_hparams_get(const gguf_hparams *hp, int id, double *value)
{
    bool fl = false;
    double f;
    int64_t v;
    const bool ok = hp_value(hp, id, &fl, &f, &v);
    *value = fl ? f : (double)v;
    return ok;
}

bool gguf_hparams_get_int(const gguf_hparams *hp, int id, int64_t *value)
{
    bool fl = false;
    double f;
    int64_t v;
    const bool ok = hp_value(hp, id, &fl, &f, &v);
    *value = fl ? (int64_t)f : v;
    return ok;
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
