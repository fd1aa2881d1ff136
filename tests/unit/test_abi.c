/*
 * test_abi.c — libgguf's ABI held to its version (docs/libgguf.md,
 * "Versions and ABI"): the layout of every public struct (its size, and
 * each field's offset and size) and the value of every public enum
 * constant, as recorded for the current major version. A change fails
 * here unless the major version changes with it and the new layout is
 * recorded (`build/tests/test_abi --print` prints the tables to paste);
 * additions are not changes (a new constant, a new struct: record them
 * when convenient). The *_COUNT constants may only grow.
 *
 * The layouts are recorded for LP64 (x86-64, aarch64); elsewhere only the
 * enum values are checked. tests/e2e/install.sh holds the exported
 * symbols of libgguf.so to tests/data/libgguf.symbols the same way.
 */
#include <stddef.h>

#include <ggufkit/arch.h>
#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include <ggufkit/vocab.h>

#include "testutil.h"

typedef struct abi_enum {
    const char *name;
    long long   value;
} abi_enum;

typedef struct abi_field {
    const char *type, *field;
    size_t      size, offset, field_size;
} abi_field;

/* Every public enum constant and struct field (include/ggufkit/\*.h). */
#define ABI_ENUMS(E) \
    E(GGUF_ERR_NONE) \
    E(GGUF_ERR_IO) \
    E(GGUF_ERR_FORMAT) \
    E(GGUF_ERR_UNSUPPORTED) \
    E(GGUF_ERR_LIMIT) \
    E(GGUF_ERR_NOMEM) \
    E(GGUF_ERR_ARG) \
    E(GGUF_DT_F32) \
    E(GGUF_DT_F16) \
    E(GGUF_DT_Q4_0) \
    E(GGUF_DT_Q4_1) \
    E(GGUF_DT_Q5_0) \
    E(GGUF_DT_Q5_1) \
    E(GGUF_DT_Q8_0) \
    E(GGUF_DT_Q8_1) \
    E(GGUF_DT_Q2_K) \
    E(GGUF_DT_Q3_K) \
    E(GGUF_DT_Q4_K) \
    E(GGUF_DT_Q5_K) \
    E(GGUF_DT_Q6_K) \
    E(GGUF_DT_Q8_K) \
    E(GGUF_DT_IQ2_XXS) \
    E(GGUF_DT_IQ2_XS) \
    E(GGUF_DT_IQ3_XXS) \
    E(GGUF_DT_IQ1_S) \
    E(GGUF_DT_IQ4_NL) \
    E(GGUF_DT_IQ3_S) \
    E(GGUF_DT_IQ2_S) \
    E(GGUF_DT_IQ4_XS) \
    E(GGUF_DT_I8) \
    E(GGUF_DT_I16) \
    E(GGUF_DT_I32) \
    E(GGUF_DT_I64) \
    E(GGUF_DT_F64) \
    E(GGUF_DT_IQ1_M) \
    E(GGUF_DT_BF16) \
    E(GGUF_DT_TQ1_0) \
    E(GGUF_DT_TQ2_0) \
    E(GGUF_DT_MXFP4) \
    E(GGUF_DT_NVFP4) \
    E(GGUF_DT_Q1_0) \
    E(GGUF_DT_COUNT) \
    E(GGUF_VT_U8) \
    E(GGUF_VT_I8) \
    E(GGUF_VT_U16) \
    E(GGUF_VT_I16) \
    E(GGUF_VT_U32) \
    E(GGUF_VT_I32) \
    E(GGUF_VT_F32) \
    E(GGUF_VT_BOOL) \
    E(GGUF_VT_STR) \
    E(GGUF_VT_ARR) \
    E(GGUF_VT_U64) \
    E(GGUF_VT_I64) \
    E(GGUF_VT_F64) \
    E(GGUF_VT_COUNT) \
    E(GGUF_OPEN_NO_SPLIT) \
    E(GGUF_OPEN_REPAIR) \
    E(GGUF_OPEN_KEEP_FIRST) \
    E(GGUF_VOCAB_SPM) \
    E(GGUF_VOCAB_BPE) \
    E(GGUF_TOKEN_UNDEFINED) \
    E(GGUF_TOKEN_NORMAL) \
    E(GGUF_TOKEN_UNKNOWN) \
    E(GGUF_TOKEN_CONTROL) \
    E(GGUF_TOKEN_USER_DEFINED) \
    E(GGUF_TOKEN_UNUSED) \
    E(GGUF_TOKEN_BYTE) \
    E(GGUF_ROLE_TOKEN_EMBD) \
    E(GGUF_ROLE_OUTPUT_NORM) \
    E(GGUF_ROLE_OUTPUT) \
    E(GGUF_ROLE_ROPE_FREQS) \
    E(GGUF_ROLE_ATTN_NORM) \
    E(GGUF_ROLE_ATTN_Q) \
    E(GGUF_ROLE_ATTN_K) \
    E(GGUF_ROLE_ATTN_V) \
    E(GGUF_ROLE_ATTN_Q_BIAS) \
    E(GGUF_ROLE_ATTN_K_BIAS) \
    E(GGUF_ROLE_ATTN_V_BIAS) \
    E(GGUF_ROLE_ATTN_OUT) \
    E(GGUF_ROLE_ATTN_OUT_BIAS) \
    E(GGUF_ROLE_FFN_NORM) \
    E(GGUF_ROLE_FFN_GATE) \
    E(GGUF_ROLE_FFN_UP) \
    E(GGUF_ROLE_FFN_DOWN) \
    E(GGUF_ROLE_FFN_GATE_BIAS) \
    E(GGUF_ROLE_FFN_UP_BIAS) \
    E(GGUF_ROLE_FFN_DOWN_BIAS) \
    E(GGUF_ROLE_ATTN_Q_NORM) \
    E(GGUF_ROLE_ATTN_K_NORM) \
    E(GGUF_ROLE_FFN_GATE_INP) \
    E(GGUF_ROLE_FFN_GATE_EXPS) \
    E(GGUF_ROLE_FFN_UP_EXPS) \
    E(GGUF_ROLE_FFN_DOWN_EXPS) \
    E(GGUF_ROLE_ATTN_QKV) \
    E(GGUF_ROLE_FFN_GATE_UP) \
    E(GGUF_ROLE_ROPE_FACTORS_LONG) \
    E(GGUF_ROLE_ROPE_FACTORS_SHORT) \
    E(GGUF_ROLE_ATTN_SINKS) \
    E(GGUF_ROLE_FFN_GATE_INP_BIAS) \
    E(GGUF_ROLE_FFN_GATE_EXPS_BIAS) \
    E(GGUF_ROLE_FFN_UP_EXPS_BIAS) \
    E(GGUF_ROLE_FFN_DOWN_EXPS_BIAS) \
    E(GGUF_ROLE_ATTN_POST_NORM) \
    E(GGUF_ROLE_FFN_POST_NORM) \
    E(GGUF_ROLE_SSM_A) \
    E(GGUF_ROLE_SSM_CONV1D) \
    E(GGUF_ROLE_SSM_DT_BIAS) \
    E(GGUF_ROLE_SSM_ALPHA) \
    E(GGUF_ROLE_SSM_BETA) \
    E(GGUF_ROLE_SSM_NORM) \
    E(GGUF_ROLE_SSM_OUT) \
    E(GGUF_ROLE_ATTN_GATE) \
    E(GGUF_ROLE_FFN_GATE_SHEXP) \
    E(GGUF_ROLE_FFN_UP_SHEXP) \
    E(GGUF_ROLE_FFN_DOWN_SHEXP) \
    E(GGUF_ROLE_FFN_GATE_INP_SHEXP) \
    E(GGUF_ROLE_PER_LAYER_TOKEN_EMBD) \
    E(GGUF_ROLE_PER_LAYER_MODEL_PROJ) \
    E(GGUF_ROLE_PER_LAYER_PROJ_NORM) \
    E(GGUF_ROLE_PER_LAYER_INP_GATE) \
    E(GGUF_ROLE_PER_LAYER_PROJ) \
    E(GGUF_ROLE_PER_LAYER_POST_NORM) \
    E(GGUF_ROLE_LAYER_OUT_SCALE) \
    E(GGUF_ROLE_FFN_GATE_UP_EXPS) \
    E(GGUF_ROLE_FFN_GATE_INP_SCALE) \
    E(GGUF_ROLE_FFN_DOWN_EXPS_SCALE) \
    E(GGUF_ROLE_FFN_PRE_NORM_2) \
    E(GGUF_ROLE_FFN_POST_NORM_1) \
    E(GGUF_ROLE_FFN_POST_NORM_2) \
    E(GGUF_ROLE_EXP_PROBS_B) \
    E(GGUF_ROLE_NEXTN_EH_PROJ) \
    E(GGUF_ROLE_NEXTN_ENORM) \
    E(GGUF_ROLE_NEXTN_HNORM) \
    E(GGUF_ROLE_NEXTN_SHARED_HEAD_NORM) \
    E(GGUF_ROLE_ATTN_Q_A) \
    E(GGUF_ROLE_ATTN_Q_A_NORM) \
    E(GGUF_ROLE_ATTN_Q_B) \
    E(GGUF_ROLE_ATTN_KV_A_MQA) \
    E(GGUF_ROLE_ATTN_KV_A_NORM) \
    E(GGUF_ROLE_ATTN_K_B) \
    E(GGUF_ROLE_ATTN_V_B) \
    E(GGUF_ROLE_COUNT) \
    E(GGUF_DIM_1) \
    E(GGUF_DIM_EMBD) \
    E(GGUF_DIM_FF) \
    E(GGUF_DIM_VOCAB) \
    E(GGUF_DIM_Q) \
    E(GGUF_DIM_K) \
    E(GGUF_DIM_V) \
    E(GGUF_DIM_ROT_HALF) \
    E(GGUF_DIM_HEAD_K) \
    E(GGUF_DIM_EXPERTS) \
    E(GGUF_DIM_FF_EXP) \
    E(GGUF_DIM_QKV) \
    E(GGUF_DIM_FF2) \
    E(GGUF_DIM_HEADS) \
    E(GGUF_DIM_Q_GATED) \
    E(GGUF_DIM_SSM_CONV) \
    E(GGUF_DIM_SSM_STATE) \
    E(GGUF_DIM_SSM_HEADS) \
    E(GGUF_DIM_SSM_VALUE) \
    E(GGUF_DIM_SSM_CHANNELS) \
    E(GGUF_DIM_FF_SHEXP) \
    E(GGUF_DIM_EMBD_PER_LAYER) \
    E(GGUF_DIM_EMBD_PER_LAYER_ALL) \
    E(GGUF_DIM_FF_EXP2) \
    E(GGUF_DIM_FF_EXP_SHARED) \
    E(GGUF_DIM_EMBD2) \
    E(GGUF_DIM_Q_LORA) \
    E(GGUF_DIM_Q_MLA) \
    E(GGUF_DIM_NOPE_MLA) \
    E(GGUF_DIM_V_MLA) \
    E(GGUF_DIM_O_MLA) \
    E(GGUF_DIM_COUNT) \
    E(GGUF_HP_CONTEXT_LENGTH) \
    E(GGUF_HP_EMBEDDING_LENGTH) \
    E(GGUF_HP_BLOCK_COUNT) \
    E(GGUF_HP_FFN_LENGTH) \
    E(GGUF_HP_HEAD_COUNT) \
    E(GGUF_HP_HEAD_COUNT_KV) \
    E(GGUF_HP_KEY_LENGTH) \
    E(GGUF_HP_VALUE_LENGTH) \
    E(GGUF_HP_ROPE_DIM) \
    E(GGUF_HP_RMS_EPS) \
    E(GGUF_HP_ROPE_FREQ_BASE) \
    E(GGUF_HP_LAYER_NORM_EPS) \
    E(GGUF_HP_EXPERT_COUNT) \
    E(GGUF_HP_EXPERT_USED_COUNT) \
    E(GGUF_HP_VOCAB_SIZE) \
    E(GGUF_HP_EXPERT_FFN_LENGTH) \
    E(GGUF_HP_ROPE_ORIG_CTX) \
    E(GGUF_HP_SLIDING_WINDOW) \
    E(GGUF_HP_SWA_PATTERN) \
    E(GGUF_HP_ROPE_FREQ_BASE_SWA) \
    E(GGUF_HP_ATTN_SOFTCAP) \
    E(GGUF_HP_FINAL_SOFTCAP) \
    E(GGUF_HP_ROPE_SCALE_LINEAR) \
    E(GGUF_HP_ROPE_SCALING_FACTOR) \
    E(GGUF_HP_ROPE_SCALING_ATTN_FACTOR) \
    E(GGUF_HP_ROPE_YARN_EXT_FACTOR) \
    E(GGUF_HP_ROPE_YARN_ATTN_FACTOR) \
    E(GGUF_HP_ROPE_YARN_BETA_FAST) \
    E(GGUF_HP_ROPE_YARN_BETA_SLOW) \
    E(GGUF_HP_SSM_CONV_KERNEL) \
    E(GGUF_HP_SSM_STATE_SIZE) \
    E(GGUF_HP_SSM_GROUP_COUNT) \
    E(GGUF_HP_SSM_TIME_STEP_RANK) \
    E(GGUF_HP_SSM_INNER_SIZE) \
    E(GGUF_HP_FULL_ATTN_INTERVAL) \
    E(GGUF_HP_ROPE_DIM_SECTIONS) \
    E(GGUF_HP_EXPERT_SHARED_FFN_LENGTH) \
    E(GGUF_HP_SHARED_KV_LAYERS) \
    E(GGUF_HP_EMBD_PER_LAYER) \
    E(GGUF_HP_KEY_LENGTH_SWA) \
    E(GGUF_HP_VALUE_LENGTH_SWA) \
    E(GGUF_HP_ROPE_DIM_SWA) \
    E(GGUF_HP_EXPERT_SHARED_COUNT) \
    E(GGUF_HP_LEADING_DENSE_BLOCK_COUNT) \
    E(GGUF_HP_EXPERT_GATING_FUNC) \
    E(GGUF_HP_EXPERT_WEIGHTS_SCALE) \
    E(GGUF_HP_EXPERT_GROUP_COUNT) \
    E(GGUF_HP_EXPERT_GROUP_USED_COUNT) \
    E(GGUF_HP_NEXTN_PREDICT_LAYERS) \
    E(GGUF_HP_EXPERT_WEIGHTS_NORM) \
    E(GGUF_HP_Q_LORA_RANK) \
    E(GGUF_HP_KV_LORA_RANK) \
    E(GGUF_HP_KEY_LENGTH_MLA) \
    E(GGUF_HP_VALUE_LENGTH_MLA) \
    E(GGUF_HP_ROPE_YARN_LOG_MUL) \
    E(GGUF_HP_COUNT) \
    E(GGUF_DERIVE_NONE) \
    E(GGUF_DERIVE_DEFAULT) \
    E(GGUF_DERIVE_HEAD_COUNT) \
    E(GGUF_DERIVE_HEAD_SIZE) \
    E(GGUF_DERIVE_KEY_LENGTH) \
    E(GGUF_DERIVE_ROPE_BASE) \
    E(GGUF_DERIVE_CONTEXT_LENGTH) \
    E(GGUF_FEAT_QKV_BIAS) \
    E(GGUF_FEAT_TIED_OUTPUT) \
    E(GGUF_FEAT_ROPE_WHOLE_HEAD) \
    E(GGUF_FEAT_EXPERTS) \
    E(GGUF_FEAT_QK_NORM) \
    E(GGUF_FEAT_FUSED_QKV) \
    E(GGUF_FEAT_FUSED_GATE_UP) \
    E(GGUF_FEAT_ATTN_SINKS) \
    E(GGUF_FEAT_ROPE_LLAMA3) \
    E(GGUF_FEAT_ROPE_LINEAR) \
    E(GGUF_FEAT_SCALE_Q) \
    E(GGUF_FEAT_SCALE_EMBD) \
    E(GGUF_FEAT_ATTN_SOFTCAP) \
    E(GGUF_FEAT_ROPE_YARN) \
    E(GGUF_FEAT_SWA_ROPE_PLAIN) \
    E(GGUF_FEAT_DELTA_NET) \
    E(GGUF_FEAT_ATTN_GATE) \
    E(GGUF_FEAT_MROPE) \
    E(GGUF_FEAT_SHARED_EXPERT) \
    E(GGUF_FEAT_PER_LAYER_INPUTS) \
    E(GGUF_FEAT_SHARED_KV) \
    E(GGUF_FEAT_V_FROM_K) \
    E(GGUF_FEAT_DENSE_AND_EXPERTS) \
    E(GGUF_FEAT_LAYER_OUT_SCALE) \
    E(GGUF_FEAT_ROPE_FREQS_FULL) \
    E(GGUF_FEAT_ATTN_SCALE_1) \
    E(GGUF_FEAT_SIGMOID_ROUTING) \
    E(GGUF_FEAT_NEXTN) \
    E(GGUF_FEAT_MLA) \
    E(GGUF_FEAT_COUNT) \
    E(GGUF_ACT_SILU) \
    E(GGUF_ACT_GELU_TANH) \
    E(GGUF_ACT_SWIGLU_OAI) \
    E(GGUF_ROPE_NORM) \
    E(GGUF_ROPE_NEOX) \
    E(GGUF_ROUTING_NONE) \
    E(GGUF_ROUTING_SOFTMAX_TOPK) \
    E(GGUF_ROUTING_TOPK_SOFTMAX) \
    E(GGUF_ROUTING_SIGMOID_BIAS) \
    E(GGUF_LAYERS_ALL) \
    E(GGUF_LAYERS_ATTENTION) \
    E(GGUF_LAYERS_RECURRENT) \
    E(GGUF_LAYERS_SLIDING) \
    E(GGUF_LAYERS_FULL) \
    E(GGUF_LAYERS_OWN_KV) \
    E(GGUF_LAYERS_SHARED_KV) \
    E(GGUF_LAYERS_LEADING_DENSE) \
    E(GGUF_LAYERS_MOE) \
    E(GGUF_LAYERS_NEXTN) \
    E(GGUF_LAYERS_COUNT) \
    E(GGUF_HP_SCALAR) \
    E(GGUF_HP_ARRAY) \
    E(GGUF_HP_PER_BLOCK) \
    E(GGUF_FT_ALL_F32) \
    E(GGUF_FT_F16) \
    E(GGUF_FT_Q4_0) \
    E(GGUF_FT_Q4_1) \
    E(GGUF_FT_Q8_0) \
    E(GGUF_FT_Q5_0) \
    E(GGUF_FT_Q5_1) \
    E(GGUF_FT_Q2_K) \
    E(GGUF_FT_Q3_K_S) \
    E(GGUF_FT_Q3_K_M) \
    E(GGUF_FT_Q3_K_L) \
    E(GGUF_FT_Q4_K_S) \
    E(GGUF_FT_Q4_K_M) \
    E(GGUF_FT_Q5_K_S) \
    E(GGUF_FT_Q5_K_M) \
    E(GGUF_FT_Q6_K) \
    E(GGUF_FT_IQ2_XXS) \
    E(GGUF_FT_IQ2_XS) \
    E(GGUF_FT_Q2_K_S) \
    E(GGUF_FT_IQ3_XS) \
    E(GGUF_FT_IQ3_XXS) \
    E(GGUF_FT_IQ1_S) \
    E(GGUF_FT_IQ4_NL) \
    E(GGUF_FT_IQ3_S) \
    E(GGUF_FT_IQ3_M) \
    E(GGUF_FT_IQ2_S) \
    E(GGUF_FT_IQ2_M) \
    E(GGUF_FT_IQ4_XS) \
    E(GGUF_FT_IQ1_M) \
    E(GGUF_FT_BF16) \
    E(GGUF_FT_TQ1_0) \
    E(GGUF_FT_TQ2_0) \
    E(GGUF_FT_MXFP4_MOE) \
    E(GGUF_FT_NVFP4) \
    E(GGUF_FT_Q1_0) \
    E(GGUF_FT_GUESSED) \
    E(GGUF_SCALE_F16) \
    E(GGUF_SCALE_BF16) \
    E(GGUF_SCALE_F32) \
    E(GGUF_SCALE_F64) \
    E(GGUF_SCALE_E8M0) \
    E(GGUF_SCALE_IQ1_M) \
    /* end */

#define ABI_FIELDS(F) \
    F(gguf_error, msg) \
    F(gguf_error, code) \
    F(gguf_dtype_traits, name) \
    F(gguf_dtype_traits, blck_size) \
    F(gguf_dtype_traits, type_size) \
    F(gguf_dtype_traits, valid) \
    F(gguf_dtype_traits, is_float) \
    F(gguf_str, ptr) \
    F(gguf_str, len) \
    F(gguf_kv, key) \
    F(gguf_kv, key_len) \
    F(gguf_kv, type) \
    F(gguf_kv, elem_type) \
    F(gguf_kv, n) \
    F(gguf_kv, data) \
    F(gguf_kv, strs) \
    F(gguf_kv, offset) \
    F(gguf_tensor, name) \
    F(gguf_tensor, n_dims) \
    F(gguf_tensor, ne) \
    F(gguf_tensor, type) \
    F(gguf_tensor, offset) \
    F(gguf_tensor, nbytes) \
    F(gguf_tensor, n_elements) \
    F(gguf_tensor, data) \
    F(gguf_tensor, shard) \
    F(gguf_tensor, info_offset) \
    F(gguf_writer_value, type) \
    F(gguf_writer_value, elem_type) \
    F(gguf_writer_value, n) \
    F(gguf_writer_value, bytes) \
    F(gguf_writer_value, size) \
    F(gguf_writer_tensor, name) \
    F(gguf_writer_tensor, type) \
    F(gguf_writer_tensor, n_dims) \
    F(gguf_writer_tensor, ne) \
    F(gguf_sha256_ctx, state) \
    F(gguf_sha256_ctx, nbytes) \
    F(gguf_sha256_ctx, buf) \
    F(gguf_sha256_ctx, buflen) \
    F(gguf_block_q4_0, d) \
    F(gguf_block_q4_0, qs) \
    F(gguf_block_q4_1, d) \
    F(gguf_block_q4_1, m) \
    F(gguf_block_q4_1, qs) \
    F(gguf_block_q5_0, d) \
    F(gguf_block_q5_0, qh) \
    F(gguf_block_q5_0, qs) \
    F(gguf_block_q5_1, d) \
    F(gguf_block_q5_1, m) \
    F(gguf_block_q5_1, qh) \
    F(gguf_block_q5_1, qs) \
    F(gguf_block_q8_0, d) \
    F(gguf_block_q8_0, qs) \
    F(gguf_block_q2_K, scales) \
    F(gguf_block_q2_K, qs) \
    F(gguf_block_q2_K, d) \
    F(gguf_block_q2_K, dmin) \
    F(gguf_block_q3_K, hmask) \
    F(gguf_block_q3_K, qs) \
    F(gguf_block_q3_K, scales) \
    F(gguf_block_q3_K, d) \
    F(gguf_block_q4_K, d) \
    F(gguf_block_q4_K, dmin) \
    F(gguf_block_q4_K, scales) \
    F(gguf_block_q4_K, qs) \
    F(gguf_block_q5_K, d) \
    F(gguf_block_q5_K, dmin) \
    F(gguf_block_q5_K, scales) \
    F(gguf_block_q5_K, qh) \
    F(gguf_block_q5_K, qs) \
    F(gguf_block_q6_K, ql) \
    F(gguf_block_q6_K, qh) \
    F(gguf_block_q6_K, scales) \
    F(gguf_block_q6_K, d) \
    F(gguf_block_q8_K, d) \
    F(gguf_block_q8_K, qs) \
    F(gguf_block_q8_K, bsums) \
    F(gguf_block_iq4_nl, d) \
    F(gguf_block_iq4_nl, qs) \
    F(gguf_block_iq4_xs, d) \
    F(gguf_block_iq4_xs, scales_h) \
    F(gguf_block_iq4_xs, scales_l) \
    F(gguf_block_iq4_xs, qs) \
    F(gguf_block_tq1_0, qs) \
    F(gguf_block_tq1_0, qh) \
    F(gguf_block_tq1_0, d) \
    F(gguf_block_tq2_0, qs) \
    F(gguf_block_tq2_0, d) \
    F(gguf_block_mxfp4, e) \
    F(gguf_block_mxfp4, qs) \
    F(gguf_block_q8_1, d) \
    F(gguf_block_q8_1, s) \
    F(gguf_block_q8_1, qs) \
    F(gguf_block_q1_0, d) \
    F(gguf_block_q1_0, qs) \
    F(gguf_block_iq2_xxs, d) \
    F(gguf_block_iq2_xxs, qs) \
    F(gguf_block_iq2_xs, d) \
    F(gguf_block_iq2_xs, qs) \
    F(gguf_block_iq2_xs, scales) \
    F(gguf_block_iq2_s, d) \
    F(gguf_block_iq2_s, qs) \
    F(gguf_block_iq2_s, qh) \
    F(gguf_block_iq2_s, scales) \
    F(gguf_block_iq3_xxs, d) \
    F(gguf_block_iq3_xxs, qs) \
    F(gguf_block_iq3_s, d) \
    F(gguf_block_iq3_s, qs) \
    F(gguf_block_iq3_s, qh) \
    F(gguf_block_iq3_s, signs) \
    F(gguf_block_iq3_s, scales) \
    F(gguf_block_iq1_s, d) \
    F(gguf_block_iq1_s, qs) \
    F(gguf_block_iq1_s, qh) \
    F(gguf_block_iq1_m, qs) \
    F(gguf_block_iq1_m, qh) \
    F(gguf_block_iq1_m, scales) \
    F(gguf_block_nvfp4, d) \
    F(gguf_block_nvfp4, qs) \
    F(gguf_scale_field, kind) \
    F(gguf_scale_field, offset) \
    F(gguf_codec, type) \
    F(gguf_codec, quantize) \
    F(gguf_codec, quantize_weighted) \
    F(gguf_codec, dequantize) \
    F(gguf_imatrix_entry, name) \
    F(gguf_imatrix_entry, ncall) \
    F(gguf_imatrix_entry, nval) \
    F(gguf_imatrix_entry, values) \
    F(gguf_imatrix_entry, weights) \
    F(gguf_imatrix_entry, n_mat) \
    F(gguf_imatrix_entry, counts) \
    F(gguf_imatrix, n) \
    F(gguf_imatrix, entries) \
    F(gguf_imatrix, chunks) \
    F(gguf_imatrix, dataset) \
    F(gguf_imatrix, chunk_size) \
    /* end */

#define E(x) { #x, (long long)(x) },
#define F(t, f) { #t, #f, sizeof(t), offsetof(t, f), sizeof(((t *)0)->f) },
static const abi_enum now_enums[] = { ABI_ENUMS(E) };
static const abi_field now_fields[] = { ABI_FIELDS(F) };
#undef E
#undef F
#define N_NOW_ENUMS (sizeof now_enums / sizeof *now_enums)
#define N_NOW_FIELDS (sizeof now_fields / sizeof *now_fields)

/* ---------------------------------------------------------------------------
 * The recorded ABI, by major version (printed by --print)
 */
#include "abi_record.h"

typedef struct abi_record {
    int              major;
    const abi_enum  *enums;
    size_t           n_enums;
    const abi_field *fields;
    size_t           n_fields;
} abi_record;

#define RECORD(m) { m, enums_##m, sizeof enums_##m / sizeof *enums_##m, fields_##m, \
                    sizeof fields_##m / sizeof *fields_##m }
static const abi_record RECORDS[] = { RECORD(1) };

static const abi_record *record_of(int major)
{
    for (size_t i = 0; i < sizeof RECORDS / sizeof *RECORDS; i++)
        if (RECORDS[i].major == major)
            return &RECORDS[i];
    return NULL;
}

static bool is_count(const char *name)
{
    const size_t n = strlen(name);
    return n > 6 && !strcmp(name + n - 6, "_COUNT");
}

/* The first difference between a record and the current ABI, as a
 * sentence in msg; false when there is none. Layouts are compared only on
 * LP64, where they were recorded. */
static bool differs(const abi_record *r, char *msg, size_t size)
{
    for (size_t i = 0; i < r->n_enums; i++) {
        const abi_enum *want = &r->enums[i], *got = NULL;
        for (size_t j = 0; j < N_NOW_ENUMS && !got; j++)
            if (!strcmp(now_enums[j].name, want->name))
                got = &now_enums[j];
        if (!got)
            return snprintf(msg, size, "%s was removed", want->name), true;
        if (is_count(want->name) ? got->value < want->value : got->value != want->value)
            return snprintf(msg, size, "%s changed from %lld to %lld", want->name, want->value,
                            got->value), true;
    }
    if (sizeof(void *) != 8 || sizeof(long) != 8)
        return false;
    for (size_t i = 0; i < r->n_fields; i++) {
        const abi_field *want = &r->fields[i], *got = NULL;
        for (size_t j = 0; j < N_NOW_FIELDS && !got; j++)
            if (!strcmp(now_fields[j].type, want->type) && !strcmp(now_fields[j].field, want->field))
                got = &now_fields[j];
        if (!got)
            return snprintf(msg, size, "%s.%s was removed", want->type, want->field), true;
        if (got->size != want->size)
            return snprintf(msg, size, "sizeof(%s) changed from %zu to %zu", want->type,
                            want->size, got->size), true;
        if (got->offset != want->offset || got->field_size != want->field_size)
            return snprintf(msg, size, "%s.%s moved from offset %zu (size %zu) to %zu (size %zu)",
                            want->type, want->field, want->offset, want->field_size, got->offset,
                            got->field_size), true;
    }
    return false;
}

START_TEST(test_abi_as_recorded)
{
    const abi_record *r = record_of(GGUF_LIB_VERSION_MAJOR);
    ck_assert_msg(r != NULL, "no ABI recorded for major version %d: record it "
                  "(build/tests/test_abi --print > tests/unit/abi_record.h)", GGUF_LIB_VERSION_MAJOR);
    char msg[256];
    ck_assert_msg(!differs(r, msg, sizeof msg), "%s without a major version bump (docs/libgguf.md, "
                  "\"Versions and ABI\")", msg);
    ck_assert_uint_eq(r->n_enums, N_NOW_ENUMS);
    ck_assert_uint_eq(r->n_fields, N_NOW_FIELDS);
}
END_TEST

/* The check can fail: a value, an offset, a size or a removal that differs
 * from the record is found, a *_COUNT that grew is not. */
START_TEST(test_a_change_is_caught)
{
    static abi_enum e[N_NOW_ENUMS];
    static abi_field f[N_NOW_FIELDS];
    const abi_record *r = record_of(GGUF_LIB_VERSION_MAJOR);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_null(record_of(GGUF_LIB_VERSION_MAJOR + 1));
    char msg[256];
    for (int k = 0; k < 5; k++) {
        memcpy(e, now_enums, sizeof e);
        memcpy(f, now_fields, sizeof f);
        abi_record t = { 0, e, N_NOW_ENUMS, f, N_NOW_FIELDS };
        size_t hp_count = 0;
        for (size_t i = 0; i < N_NOW_ENUMS; i++)
            if (!strcmp(e[i].name, "GGUF_HP_COUNT"))
                hp_count = i;
        switch (k) {
        case 0: e[1].value++; break;              /* a value changed */
        case 1: e[2].name = "GGUF_GONE"; break;   /* a constant removed */
        case 2: f[3].offset += 8; break;          /* a field moved */
        case 3: f[4].size += 1; break;            /* a struct grew */
        case 4: e[hp_count].value--; break;       /* a count grew: fine */
        }
        const bool lp64 = sizeof(void *) == 8 && sizeof(long) == 8;
        const bool want = k < 2 || (k < 4 && lp64);
        ck_assert_msg(differs(&t, msg, sizeof msg) == want, "case %d: %s", k, msg);
    }
}
END_TEST

/* Prints the current tables in abi_record.h's form. */
static void print_record(int major)
{
    printf("/* abi_record.h — the ABI of libgguf.so.%d (printed by test_abi --print). */\n",
           major);
    printf("static const abi_enum enums_%d[] = {\n", major);
    for (size_t i = 0; i < N_NOW_ENUMS; i++)
        printf("    { \"%s\", %lld },\n", now_enums[i].name, now_enums[i].value);
    printf("};\nstatic const abi_field fields_%d[] = {\n", major);
    for (size_t i = 0; i < N_NOW_FIELDS; i++)
        printf("    { \"%s\", \"%s\", %zu, %zu, %zu },\n", now_fields[i].type, now_fields[i].field,
               now_fields[i].size, now_fields[i].offset, now_fields[i].field_size);
    printf("};\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--print")) {
        print_record(GGUF_LIB_VERSION_MAJOR);
        return 0;
    }
    Suite *s = suite_create("abi");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_abi_as_recorded);
    tcase_add_test(tc, test_a_change_is_caught);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
