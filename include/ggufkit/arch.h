/*
 * <ggufkit/arch.h> — the names of GGUF keys and tensors, the registry of
 * model architectures, and the rules a model must follow.
 */
#ifndef GGUFKIT_ARCH_H
#define GGUFKIT_ARCH_H

#include "gguf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * Names: the GGUF metadata keys and the tensor-name scheme (llama.cpp's).
 * Keys with an architecture part have "%s" for the architecture name; tensor
 * names of a block have "%d" for the block index; format with snprintf.
 */
/* general.* */
#define GGUF_KEY_ARCHITECTURE       "general.architecture"
#define GGUF_KEY_NAME               "general.name"
#define GGUF_KEY_ALIGNMENT          "general.alignment"
#define GGUF_KEY_FILE_TYPE          "general.file_type"
#define GGUF_KEY_QUANT_VERSION      "general.quantization_version"
#define GGUF_KEY_SIZE_LABEL         "general.size_label"

/* split.* (llama.cpp gguf-split) */
#define GGUF_KEY_SPLIT_NO           "split.no"
#define GGUF_KEY_SPLIT_COUNT        "split.count"
#define GGUF_KEY_SPLIT_TENSORS      "split.tensors.count"

/* {arch}.* — format with the architecture name */
#define GGUF_KEY_CONTEXT_LENGTH     "%s.context_length"
#define GGUF_KEY_EMBEDDING_LENGTH   "%s.embedding_length"
#define GGUF_KEY_BLOCK_COUNT        "%s.block_count"
#define GGUF_KEY_FFN_LENGTH         "%s.feed_forward_length"
#define GGUF_KEY_HEAD_COUNT         "%s.attention.head_count"
#define GGUF_KEY_HEAD_COUNT_KV      "%s.attention.head_count_kv"
#define GGUF_KEY_RMS_EPS            "%s.attention.layer_norm_rms_epsilon"
#define GGUF_KEY_ROPE_FREQ_BASE     "%s.rope.freq_base"
#define GGUF_KEY_ROPE_DIM_COUNT     "%s.rope.dimension_count"
#define GGUF_KEY_VOCAB_SIZE         "%s.vocab_size"
#define GGUF_KEY_EXPERT_COUNT       "%s.expert_count"

/* tokenizer.ggml.* */
#define GGUF_KEY_TOK_MODEL          "tokenizer.ggml.model"
#define GGUF_KEY_TOK_PRE            "tokenizer.ggml.pre"
#define GGUF_KEY_TOK_TOKENS         "tokenizer.ggml.tokens"
#define GGUF_KEY_TOK_SCORES         "tokenizer.ggml.scores"
#define GGUF_KEY_TOK_TYPES          "tokenizer.ggml.token_type"
#define GGUF_KEY_TOK_MERGES         "tokenizer.ggml.merges"
#define GGUF_KEY_TOK_BOS            "tokenizer.ggml.bos_token_id"
#define GGUF_KEY_TOK_EOS            "tokenizer.ggml.eos_token_id"
#define GGUF_KEY_TOK_UNK            "tokenizer.ggml.unknown_token_id"
#define GGUF_KEY_TOK_PAD            "tokenizer.ggml.padding_token_id"
#define GGUF_KEY_TOK_ADD_BOS        "tokenizer.ggml.add_bos_token"
#define GGUF_KEY_TOK_ADD_EOS        "tokenizer.ggml.add_eos_token"
#define GGUF_KEY_CHAT_TEMPLATE      "tokenizer.chat_template"

/* Token types of tokenizer.ggml.token_type (llama.cpp's llama_token_type). */
enum gguf_token_type {
    GGUF_TOKEN_UNDEFINED = 0, GGUF_TOKEN_NORMAL = 1, GGUF_TOKEN_UNKNOWN = 2,
    GGUF_TOKEN_CONTROL = 3, GGUF_TOKEN_USER_DEFINED = 4, GGUF_TOKEN_UNUSED = 5,
    GGUF_TOKEN_BYTE = 6
};

/* Tensor names: global and per block ("%d" = block index). */
#define GGUF_T_TOKEN_EMBD           "token_embd.weight"
#define GGUF_T_OUTPUT_NORM          "output_norm.weight"
#define GGUF_T_OUTPUT               "output.weight"
#define GGUF_T_ROPE_FREQS           "rope_freqs.weight"
#define GGUF_T_ATTN_NORM            "blk.%d.attn_norm.weight"
#define GGUF_T_ATTN_Q               "blk.%d.attn_q.weight"
#define GGUF_T_ATTN_K               "blk.%d.attn_k.weight"
#define GGUF_T_ATTN_V               "blk.%d.attn_v.weight"
#define GGUF_T_ATTN_Q_BIAS          "blk.%d.attn_q.bias"
#define GGUF_T_ATTN_K_BIAS          "blk.%d.attn_k.bias"
#define GGUF_T_ATTN_V_BIAS          "blk.%d.attn_v.bias"
#define GGUF_T_ATTN_OUT             "blk.%d.attn_output.weight"
#define GGUF_T_FFN_NORM             "blk.%d.ffn_norm.weight"
#define GGUF_T_FFN_GATE             "blk.%d.ffn_gate.weight"
#define GGUF_T_FFN_UP               "blk.%d.ffn_up.weight"
#define GGUF_T_FFN_DOWN             "blk.%d.ffn_down.weight"
#define GGUF_KEY_KEY_LENGTH         "%s.attention.key_length"
#define GGUF_KEY_VALUE_LENGTH       "%s.attention.value_length"
#define GGUF_KEY_LAYER_NORM_EPS     "%s.attention.layer_norm_epsilon"
#define GGUF_KEY_EXPERT_USED_COUNT  "%s.expert_used_count"
#define GGUF_KEY_GENERAL_TYPE       "general.type"
#define GGUF_T_ATTN_OUT_BIAS        "blk.%d.attn_output.bias"
#define GGUF_T_FFN_GATE_BIAS        "blk.%d.ffn_gate.bias"
#define GGUF_T_FFN_UP_BIAS          "blk.%d.ffn_up.bias"
#define GGUF_T_FFN_DOWN_BIAS        "blk.%d.ffn_down.bias"
#define GGUF_T_ATTN_Q_NORM          "blk.%d.attn_q_norm.weight"
#define GGUF_T_ATTN_K_NORM          "blk.%d.attn_k_norm.weight"
#define GGUF_T_FFN_GATE_INP         "blk.%d.ffn_gate_inp.weight"
#define GGUF_T_FFN_GATE_EXPS        "blk.%d.ffn_gate_exps.weight"
#define GGUF_T_FFN_UP_EXPS          "blk.%d.ffn_up_exps.weight"
#define GGUF_T_FFN_DOWN_EXPS        "blk.%d.ffn_down_exps.weight"
#define GGUF_KEY_EXPERT_FFN_LENGTH  "%s.expert_feed_forward_length"
#define GGUF_T_ATTN_QKV             "blk.%d.attn_qkv.weight"
#define GGUF_T_ROPE_FACTORS_LONG    "rope_factors_long.weight"
#define GGUF_T_ROPE_FACTORS_SHORT   "rope_factors_short.weight"
#define GGUF_KEY_ROPE_ORIG_CTX      "%s.rope.scaling.original_context_length"
#define GGUF_KEY_SLIDING_WINDOW     "%s.attention.sliding_window"
/* gpt-oss: attention sinks, router and expert biases, sliding window, YaRN */
#define GGUF_T_ATTN_SINKS           "blk.%d.attn_sinks.weight"
#define GGUF_T_ATTN_POST_NORM       "blk.%d.post_attention_norm.weight"
#define GGUF_T_FFN_GATE_INP_BIAS    "blk.%d.ffn_gate_inp.bias"
#define GGUF_T_FFN_GATE_EXPS_BIAS   "blk.%d.ffn_gate_exps.bias"
#define GGUF_T_FFN_UP_EXPS_BIAS     "blk.%d.ffn_up_exps.bias"
#define GGUF_T_FFN_DOWN_EXPS_BIAS   "blk.%d.ffn_down_exps.bias"
#define GGUF_KEY_ROPE_SCALING_TYPE  "%s.rope.scaling.type"
#define GGUF_KEY_ROPE_SCALING_FACTOR "%s.rope.scaling.factor"
#define GGUF_KEY_ROPE_SCALE_LINEAR  "%s.rope.scale_linear"
#define GGUF_KEY_ROPE_SCALING_ORIG_CTX "%s.rope.scaling.original_context_length"
/* Phi-3 LongRoPE: cos and sin times this (the factor tensors are above) */
#define GGUF_KEY_ROPE_SCALING_ATTN_FACTOR "%s.rope.scaling.attn_factor"
#define GGUF_KEY_ROPE_YARN_EXT_FACTOR "%s.rope.scaling.yarn_ext_factor"
#define GGUF_KEY_ROPE_YARN_ATTN_FACTOR "%s.rope.scaling.yarn_attn_factor"
#define GGUF_KEY_ROPE_YARN_BETA_FAST "%s.rope.scaling.yarn_beta_fast"
#define GGUF_KEY_ROPE_YARN_BETA_SLOW "%s.rope.scaling.yarn_beta_slow"
/* Gemma 2 and 3: post-norms, soft-capping, the sliding-window pattern and
 * the local layers' rope base */
#define GGUF_T_FFN_POST_NORM        "blk.%d.post_ffw_norm.weight"
#define GGUF_KEY_ATTN_SOFTCAP       "%s.attn_logit_softcapping"
#define GGUF_KEY_FINAL_SOFTCAP      "%s.final_logit_softcapping"
#define GGUF_KEY_ROPE_FREQ_BASE_SWA "%s.rope.freq_base_swa"
#define GGUF_KEY_SLIDING_WINDOW_PATTERN "%s.attention.sliding_window_pattern"
/* Qwen 3.5: gated delta net (recurrent) blocks between full-attention ones,
 * M-RoPE sections, a shared expert */
#define GGUF_KEY_SSM_CONV_KERNEL    "%s.ssm.conv_kernel"
#define GGUF_KEY_SSM_STATE_SIZE     "%s.ssm.state_size"
#define GGUF_KEY_SSM_GROUP_COUNT    "%s.ssm.group_count"
#define GGUF_KEY_SSM_TIME_STEP_RANK "%s.ssm.time_step_rank"
#define GGUF_KEY_SSM_INNER_SIZE     "%s.ssm.inner_size"
#define GGUF_KEY_FULL_ATTN_INTERVAL "%s.full_attention_interval"
#define GGUF_KEY_ROPE_DIM_SECTIONS  "%s.rope.dimension_sections"
#define GGUF_KEY_EXPERT_SHARED_FFN_LENGTH "%s.expert_shared_feed_forward_length"
#define GGUF_T_SSM_A                "blk.%d.ssm_a"
#define GGUF_T_SSM_CONV1D           "blk.%d.ssm_conv1d.weight"
#define GGUF_T_SSM_DT_BIAS          "blk.%d.ssm_dt.bias"
#define GGUF_T_SSM_ALPHA            "blk.%d.ssm_alpha.weight"
#define GGUF_T_SSM_BETA             "blk.%d.ssm_beta.weight"
#define GGUF_T_SSM_NORM             "blk.%d.ssm_norm.weight"
#define GGUF_T_SSM_OUT              "blk.%d.ssm_out.weight"
#define GGUF_T_ATTN_GATE            "blk.%d.attn_gate.weight"
#define GGUF_T_FFN_GATE_SHEXP       "blk.%d.ffn_gate_shexp.weight"
#define GGUF_T_FFN_UP_SHEXP         "blk.%d.ffn_up_shexp.weight"
#define GGUF_T_FFN_DOWN_SHEXP       "blk.%d.ffn_down_shexp.weight"
#define GGUF_T_FFN_GATE_INP_SHEXP   "blk.%d.ffn_gate_inp_shexp.weight"
/* Gemma 4: per-layer inputs, KV-shared layers, the sliding layers' own head
 * size and rope width, experts beside the dense feed-forward */
#define GGUF_T_PER_LAYER_TOKEN_EMBD "per_layer_token_embd.weight"
#define GGUF_T_PER_LAYER_MODEL_PROJ "per_layer_model_proj.weight"
#define GGUF_T_PER_LAYER_PROJ_NORM  "per_layer_proj_norm.weight"
#define GGUF_T_PER_LAYER_INP_GATE   "blk.%d.inp_gate.weight"
#define GGUF_T_PER_LAYER_PROJ       "blk.%d.proj.weight"
#define GGUF_T_PER_LAYER_POST_NORM  "blk.%d.post_norm.weight"
#define GGUF_T_LAYER_OUT_SCALE      "blk.%d.layer_output_scale.weight"
#define GGUF_T_FFN_GATE_UP_EXPS     "blk.%d.ffn_gate_up_exps.weight"
#define GGUF_T_FFN_GATE_INP_SCALE   "blk.%d.ffn_gate_inp.scale"
#define GGUF_T_FFN_DOWN_EXPS_SCALE  "blk.%d.ffn_down_exps.scale"
#define GGUF_T_FFN_PRE_NORM_2       "blk.%d.pre_ffw_norm_2.weight"
#define GGUF_T_FFN_POST_NORM_1      "blk.%d.post_ffw_norm_1.weight"
#define GGUF_T_FFN_POST_NORM_2      "blk.%d.post_ffw_norm_2.weight"
#define GGUF_KEY_SHARED_KV_LAYERS   "%s.attention.shared_kv_layers"
#define GGUF_KEY_EMBD_PER_LAYER     "%s.embedding_length_per_layer_input"
#define GGUF_KEY_KEY_LENGTH_SWA     "%s.attention.key_length_swa"
#define GGUF_KEY_VALUE_LENGTH_SWA   "%s.attention.value_length_swa"
#define GGUF_KEY_ROPE_DIM_COUNT_SWA "%s.rope.dimension_count_swa"
/* GLM-4.5 (glm4moe): sigmoid-routed experts with a score bias, expert
 * groups, a shared expert, leading dense blocks, next-token-prediction
 * blocks after the model's own */
#define GGUF_KEY_EXPERT_SHARED_COUNT "%s.expert_shared_count"
#define GGUF_KEY_LEADING_DENSE_BLOCK_COUNT "%s.leading_dense_block_count"
#define GGUF_KEY_EXPERT_GATING_FUNC "%s.expert_gating_func"
#define GGUF_KEY_EXPERT_WEIGHTS_SCALE "%s.expert_weights_scale"
#define GGUF_KEY_EXPERT_WEIGHTS_NORM "%s.expert_weights_norm"
#define GGUF_KEY_EXPERT_GROUP_COUNT "%s.expert_group_count"
#define GGUF_KEY_EXPERT_GROUP_USED_COUNT "%s.expert_group_used_count"
#define GGUF_KEY_NEXTN_PREDICT_LAYERS "%s.nextn_predict_layers"
#define GGUF_T_EXP_PROBS_B          "blk.%d.exp_probs_b.bias"
#define GGUF_T_NEXTN_EH_PROJ        "blk.%d.nextn.eh_proj.weight"
#define GGUF_T_NEXTN_ENORM          "blk.%d.nextn.enorm.weight"
#define GGUF_T_NEXTN_HNORM          "blk.%d.nextn.hnorm.weight"
#define GGUF_T_NEXTN_SHARED_HEAD_NORM "blk.%d.nextn.shared_head_norm.weight"
/* DeepSeek-V2/V3 (deepseek2): multi-head latent attention (MLA) — q and
 * the KV through low-rank projections, the KV cache one latent of
 * kv_lora_rank + the rope width per token */
#define GGUF_KEY_Q_LORA_RANK        "%s.attention.q_lora_rank"
#define GGUF_KEY_KV_LORA_RANK       "%s.attention.kv_lora_rank"
#define GGUF_KEY_KEY_LENGTH_MLA     "%s.attention.key_length_mla"
#define GGUF_KEY_VALUE_LENGTH_MLA   "%s.attention.value_length_mla"
#define GGUF_KEY_ROPE_YARN_LOG_MUL  "%s.rope.scaling.yarn_log_multiplier"
#define GGUF_T_ATTN_Q_A             "blk.%d.attn_q_a.weight"
#define GGUF_T_ATTN_Q_A_NORM        "blk.%d.attn_q_a_norm.weight"
#define GGUF_T_ATTN_Q_B             "blk.%d.attn_q_b.weight"
#define GGUF_T_ATTN_KV_A_MQA        "blk.%d.attn_kv_a_mqa.weight"
#define GGUF_T_ATTN_KV_A_NORM       "blk.%d.attn_kv_a_norm.weight"
#define GGUF_T_ATTN_K_B             "blk.%d.attn_k_b.weight"
#define GGUF_T_ATTN_V_B             "blk.%d.attn_v_b.weight"

/* ---------------------------------------------------------------------------
 * The architecture registry: every GGUF architecture the tools support,
 * described as data — its names, its hyper-parameter keys and how each is
 * derived, its tensor table (name, role, shape rule, required or optional)
 * and its model features. gguf-quantize takes its model facts from it,
 * gguf-run loads layers by walking its tensor table and picks forward-pass
 * features from it, gguf-convert maps checkpoints onto it, and the model
 * rules below (gguf_model_validate) check files against it.
 * `gguf-inspect --arches` prints it. docs/design.md says how to add a row.
 *
 * Every registry type is opaque and reached through functions, so that
 * rows, roles, dimensions, features and hyper-parameters can be added in a
 * minor version without changing any layout a program compiled in
 * (docs/libgguf.md, "Versions and ABI"). The enums' values are stable; the
 * *_COUNT values grow with them and are for range checks only.
 */

/* What a tensor is for. */
enum gguf_role {
    GGUF_ROLE_TOKEN_EMBD, GGUF_ROLE_OUTPUT_NORM, GGUF_ROLE_OUTPUT, GGUF_ROLE_ROPE_FREQS,
    GGUF_ROLE_ATTN_NORM, GGUF_ROLE_ATTN_Q, GGUF_ROLE_ATTN_K, GGUF_ROLE_ATTN_V,
    GGUF_ROLE_ATTN_Q_BIAS, GGUF_ROLE_ATTN_K_BIAS, GGUF_ROLE_ATTN_V_BIAS,
    GGUF_ROLE_ATTN_OUT, GGUF_ROLE_ATTN_OUT_BIAS, GGUF_ROLE_FFN_NORM,
    GGUF_ROLE_FFN_GATE, GGUF_ROLE_FFN_UP, GGUF_ROLE_FFN_DOWN,
    GGUF_ROLE_FFN_GATE_BIAS, GGUF_ROLE_FFN_UP_BIAS, GGUF_ROLE_FFN_DOWN_BIAS,
    GGUF_ROLE_ATTN_Q_NORM, GGUF_ROLE_ATTN_K_NORM,
    GGUF_ROLE_FFN_GATE_INP, GGUF_ROLE_FFN_GATE_EXPS, GGUF_ROLE_FFN_UP_EXPS, GGUF_ROLE_FFN_DOWN_EXPS,
    GGUF_ROLE_ATTN_QKV,        /* q, k and v rows in one matrix (GGUF_FEAT_FUSED_QKV) */
    GGUF_ROLE_FFN_GATE_UP,     /* gate rows, then up rows (GGUF_FEAT_FUSED_GATE_UP) */
    GGUF_ROLE_ROPE_FACTORS_LONG, GGUF_ROLE_ROPE_FACTORS_SHORT, /* Phi-3 LongRoPE */
    GGUF_ROLE_ATTN_SINKS,        /* gpt-oss: one learned logit per head */
    GGUF_ROLE_FFN_GATE_INP_BIAS, /* gpt-oss: router bias */
    GGUF_ROLE_FFN_GATE_EXPS_BIAS, GGUF_ROLE_FFN_UP_EXPS_BIAS, GGUF_ROLE_FFN_DOWN_EXPS_BIAS,
    GGUF_ROLE_ATTN_POST_NORM,    /* Gemma: RMSNorm of the attention output before the residual */
    GGUF_ROLE_FFN_POST_NORM,     /* Gemma: RMSNorm of the feed-forward output before the residual */
    /* Qwen 3.5's gated delta net (recurrent blocks): */
    GGUF_ROLE_SSM_A,             /* −exp(A_log): one decay rate per value head */
    GGUF_ROLE_SSM_CONV1D,        /* the causal convolution over q, k and v channels */
    GGUF_ROLE_SSM_DT_BIAS,       /* the time-step bias per value head */
    GGUF_ROLE_SSM_ALPHA,         /* the decay gate's projection (per value head) */
    GGUF_ROLE_SSM_BETA,          /* the update strength's projection (per value head) */
    GGUF_ROLE_SSM_NORM,          /* the gated RMSNorm of each head's output */
    GGUF_ROLE_SSM_OUT,           /* the output projection */
    GGUF_ROLE_ATTN_GATE,         /* the output gate's projection (z) */
    GGUF_ROLE_FFN_GATE_SHEXP, GGUF_ROLE_FFN_UP_SHEXP, GGUF_ROLE_FFN_DOWN_SHEXP, /* shared expert */
    GGUF_ROLE_FFN_GATE_INP_SHEXP,/* the shared expert's sigmoid gate (one output) */
    /* Gemma 4 */
    GGUF_ROLE_PER_LAYER_TOKEN_EMBD, /* each token's inputs of every layer, in one row */
    GGUF_ROLE_PER_LAYER_MODEL_PROJ, /* the embedding's projection onto the per-layer inputs */
    GGUF_ROLE_PER_LAYER_PROJ_NORM,  /* RMSNorm of that projection, per layer */
    GGUF_ROLE_PER_LAYER_INP_GATE, GGUF_ROLE_PER_LAYER_PROJ, GGUF_ROLE_PER_LAYER_POST_NORM,
    GGUF_ROLE_LAYER_OUT_SCALE,      /* the layer's output times this scalar */
    GGUF_ROLE_FFN_GATE_UP_EXPS,     /* every expert's gate rows, then up rows, stacked */
    GGUF_ROLE_FFN_GATE_INP_SCALE,   /* the router's input times this vector */
    GGUF_ROLE_FFN_DOWN_EXPS_SCALE,  /* each expert's output times its scalar */
    GGUF_ROLE_FFN_PRE_NORM_2, GGUF_ROLE_FFN_POST_NORM_1, GGUF_ROLE_FFN_POST_NORM_2,
    /* GLM-4.5 */
    GGUF_ROLE_EXP_PROBS_B,          /* the bias added to the expert scores for the choice */
    GGUF_ROLE_NEXTN_EH_PROJ,        /* next-token prediction: [embedding; hidden] projection */
    GGUF_ROLE_NEXTN_ENORM, GGUF_ROLE_NEXTN_HNORM, /* its norms of the embedding, the hidden */
    GGUF_ROLE_NEXTN_SHARED_HEAD_NORM,/* its norm before the shared output head */
    /* DeepSeek-V2/V3's MLA */
    GGUF_ROLE_ATTN_Q_A, GGUF_ROLE_ATTN_Q_A_NORM, /* q's down-projection to q_lora_rank, its norm */
    GGUF_ROLE_ATTN_Q_B,             /* q's up-projection: every head's nope and rope parts */
    GGUF_ROLE_ATTN_KV_A_MQA,        /* the KV latent (kv_lora_rank) and the shared rope key */
    GGUF_ROLE_ATTN_KV_A_NORM,       /* the latent's norm */
    GGUF_ROLE_ATTN_K_B,             /* per head: latent → nope key, stored transposed */
    GGUF_ROLE_ATTN_V_B,             /* per head: latent → value */
    GGUF_ROLE_COUNT
};

/* The sizes a tensor's shape is written in (gguf_hparams_dim gives their
 * values). */
enum gguf_dim {
    GGUF_DIM_1,        /* 1: the size of an absent axis */
    GGUF_DIM_EMBD,     /* embedding_length */
    GGUF_DIM_FF,       /* feed_forward_length */
    GGUF_DIM_VOCAB,    /* the vocabulary size */
    GGUF_DIM_Q,        /* head_count × key length */
    GGUF_DIM_K,        /* head_count_kv × key length */
    GGUF_DIM_V,        /* head_count_kv × value length */
    GGUF_DIM_ROT_HALF, /* rope.dimension_count / 2 */
    GGUF_DIM_HEAD_K,   /* the key length (one head's q/k width) */
    GGUF_DIM_EXPERTS,  /* expert_count */
    GGUF_DIM_FF_EXP,   /* expert_feed_forward_length, else feed_forward_length */
    GGUF_DIM_QKV,      /* embedding_length + 2 × head_count_kv × value length (llama.cpp's
                        * fused attn_qkv: q is embedding_length wide there) */
    GGUF_DIM_FF2,      /* 2 × feed_forward_length (fused gate and up) */
    GGUF_DIM_HEADS,    /* head_count (attention sinks) */
    GGUF_DIM_Q_GATED,  /* 2 × head_count × key length (q with its output gate, Qwen 3.5) */
    GGUF_DIM_SSM_CONV, /* ssm.conv_kernel */
    GGUF_DIM_SSM_STATE,/* ssm.state_size: one recurrent head's key (and value) width */
    GGUF_DIM_SSM_HEADS,/* ssm.time_step_rank: the recurrent value heads */
    GGUF_DIM_SSM_VALUE,/* ssm.state_size × ssm.time_step_rank: the value width */
    GGUF_DIM_SSM_CHANNELS, /* 2 × ssm.group_count × ssm.state_size + the value width: the
                        * convolution's q, k and v channels */
    GGUF_DIM_FF_SHEXP, /* expert_shared_feed_forward_length, else feed_forward_length */
    GGUF_DIM_EMBD_PER_LAYER,     /* embedding_length_per_layer_input */
    GGUF_DIM_EMBD_PER_LAYER_ALL, /* embedding_length_per_layer_input × block_count */
    GGUF_DIM_FF_EXP2,            /* 2 × expert_feed_forward_length (fused gate and up) */
    GGUF_DIM_FF_EXP_SHARED,      /* expert_feed_forward_length × expert_shared_count (GLM-4.5's
                                  * shared experts, in one) */
    GGUF_DIM_EMBD2,              /* 2 × embedding_length (the next-token layer's eh_proj) */
    /* DeepSeek-V2/V3's MLA */
    GGUF_DIM_Q_LORA,             /* attention.q_lora_rank */
    GGUF_DIM_Q_MLA,              /* head_count × key_length_mla */
    GGUF_DIM_NOPE_MLA,           /* key_length_mla − rope.dimension_count (a head's
                                  * unrotated key) */
    GGUF_DIM_V_MLA,              /* value_length_mla */
    GGUF_DIM_O_MLA,              /* head_count × value_length_mla */
    GGUF_DIM_COUNT
};

/* The hyper-parameters the registry knows. */
enum gguf_hp {
    GGUF_HP_CONTEXT_LENGTH, GGUF_HP_EMBEDDING_LENGTH, GGUF_HP_BLOCK_COUNT, GGUF_HP_FFN_LENGTH,
    GGUF_HP_HEAD_COUNT, GGUF_HP_HEAD_COUNT_KV, GGUF_HP_KEY_LENGTH, GGUF_HP_VALUE_LENGTH,
    GGUF_HP_ROPE_DIM, GGUF_HP_RMS_EPS, GGUF_HP_ROPE_FREQ_BASE, GGUF_HP_LAYER_NORM_EPS,
    GGUF_HP_EXPERT_COUNT, GGUF_HP_EXPERT_USED_COUNT, GGUF_HP_VOCAB_SIZE,
    GGUF_HP_EXPERT_FFN_LENGTH,
    GGUF_HP_ROPE_ORIG_CTX, GGUF_HP_SLIDING_WINDOW,
    GGUF_HP_SWA_PATTERN,       /* layer il attends within the window unless il % P == P - 1
                                * (every layer when P is 0); an architecture without this
                                * row has no sliding window */
    GGUF_HP_ROPE_FREQ_BASE_SWA,/* the rope base of the sliding-window layers */
    GGUF_HP_ATTN_SOFTCAP,      /* attention scores become c·tanh(s/c) (GGUF_FEAT_ATTN_SOFTCAP) */
    GGUF_HP_FINAL_SOFTCAP,     /* the logits become c·tanh(l/c), when present or derived */
    /* rope scaling, every architecture (llama.cpp's loader reads them for all;
     * the type, a string, is gguf-run's to check) */
    GGUF_HP_ROPE_SCALE_LINEAR,        /* the older key of the linear factor */
    GGUF_HP_ROPE_SCALING_FACTOR,      /* angles divided by it (linear, YaRN); 0: none */
    GGUF_HP_ROPE_SCALING_ATTN_FACTOR, /* cos and sin times this (Phi-3 LongRoPE) */
    GGUF_HP_ROPE_YARN_EXT_FACTOR, GGUF_HP_ROPE_YARN_ATTN_FACTOR,
    GGUF_HP_ROPE_YARN_BETA_FAST, GGUF_HP_ROPE_YARN_BETA_SLOW,
    /* Qwen 3.5 */
    GGUF_HP_SSM_CONV_KERNEL, GGUF_HP_SSM_STATE_SIZE, GGUF_HP_SSM_GROUP_COUNT,
    GGUF_HP_SSM_TIME_STEP_RANK, GGUF_HP_SSM_INNER_SIZE,
    GGUF_HP_FULL_ATTN_INTERVAL,/* block il is full attention when (il + 1) % N == 0, the
                                * others recurrent (enum gguf_layers) */
    GGUF_HP_ROPE_DIM_SECTIONS, /* an array: M-RoPE's rotary pairs per position axis */
    GGUF_HP_EXPERT_SHARED_FFN_LENGTH,
    /* Gemma 4 */
    GGUF_HP_SHARED_KV_LAYERS,  /* the last this many layers reuse an earlier layer's KV */
    GGUF_HP_EMBD_PER_LAYER,    /* the width of each layer's per-layer input (0: none) */
    GGUF_HP_KEY_LENGTH_SWA, GGUF_HP_VALUE_LENGTH_SWA, /* the head size of sliding layers */
    GGUF_HP_ROPE_DIM_SWA,      /* the rotated width of sliding layers' heads */
    /* GLM-4.5 */
    GGUF_HP_EXPERT_SHARED_COUNT,   /* shared experts beside the routed ones */
    GGUF_HP_LEADING_DENSE_BLOCK_COUNT, /* the first this many blocks: a dense feed-forward */
    GGUF_HP_EXPERT_GATING_FUNC,    /* 1 softmax, 2 sigmoid, 3 softmax of the top k */
    GGUF_HP_EXPERT_WEIGHTS_SCALE,  /* the routed experts' output times this */
    GGUF_HP_EXPERT_GROUP_COUNT, GGUF_HP_EXPERT_GROUP_USED_COUNT, /* grouped routing */
    GGUF_HP_NEXTN_PREDICT_LAYERS,  /* the last this many blocks: next-token prediction */
    GGUF_HP_EXPERT_WEIGHTS_NORM,   /* bool: the chosen experts' weights renormalised */
    /* DeepSeek-V2/V3 (key_length, value_length: the latent's; head_count_kv 1) */
    GGUF_HP_Q_LORA_RANK, GGUF_HP_KV_LORA_RANK,
    GGUF_HP_KEY_LENGTH_MLA, GGUF_HP_VALUE_LENGTH_MLA, /* a head's q/k and v width */
    GGUF_HP_ROPE_YARN_LOG_MUL,     /* YaRN's mscale_all_dim × 0.1 (llama.cpp's legacy factor) */
    GGUF_HP_COUNT
};

/* How an absent hyper-parameter gets its value (llama.cpp's defaults). */
enum gguf_derive {
    GGUF_DERIVE_NONE,       /* stays absent */
    GGUF_DERIVE_DEFAULT,    /* the row's default */
    GGUF_DERIVE_HEAD_COUNT, /* head_count (head_count_kv: no grouping) */
    GGUF_DERIVE_HEAD_SIZE,  /* embedding_length / head_count */
    GGUF_DERIVE_KEY_LENGTH, /* the key length (rope.dimension_count: whole heads) */
    GGUF_DERIVE_ROPE_BASE,  /* rope.freq_base (rope.freq_base_swa: the same base) */
    GGUF_DERIVE_CONTEXT_LENGTH /* context_length (rope.scaling.original_context_length) */
};

/* What a model of an architecture is made of, beyond its tensor table
 * (gguf_arch_has; gguf_feature_name gives the word `--arches` prints). */
enum gguf_feature {
    GGUF_FEAT_QKV_BIAS,        /* attn_q/k/v biases, always present */
    GGUF_FEAT_TIED_OUTPUT,     /* output.weight may be absent: token_embd serves */
    GGUF_FEAT_ROPE_WHOLE_HEAD, /* rope.dimension_count must be the head size */
    GGUF_FEAT_EXPERTS,         /* its tables describe expert (MoE) tensors */
    GGUF_FEAT_QK_NORM,         /* per-head RMSNorm of q and k */
    GGUF_FEAT_FUSED_QKV,       /* one attn_qkv tensor */
    GGUF_FEAT_FUSED_GATE_UP,   /* one ffn_up holding gate and up */
    GGUF_FEAT_ATTN_SINKS,      /* learned attention sinks */
    GGUF_FEAT_ROPE_LLAMA3,     /* llama3 rope scaling: the rope_freqs tensor */
    GGUF_FEAT_ROPE_LINEAR,     /* {arch}.rope.scaling.type "linear" */
    GGUF_FEAT_SCALE_Q,         /* q times 1/sqrt(head_dim) before the scores (then rounded
                                * to f16), not the scores */
    GGUF_FEAT_SCALE_EMBD,      /* token embeddings times sqrtf(embedding_length) */
    GGUF_FEAT_ATTN_SOFTCAP,    /* scores soft-capped by attn_logit_softcapping */
    GGUF_FEAT_ROPE_YARN,       /* {arch}.rope.scaling.type "yarn" */
    GGUF_FEAT_SWA_ROPE_PLAIN,  /* sliding-window layers rotate without the rope scaling of
                                * the global ones (Gemma 3) */
    GGUF_FEAT_DELTA_NET,       /* recurrent blocks: a gated delta net (Qwen 3.5) */
    GGUF_FEAT_ATTN_GATE,       /* attn_q holds, per head, the queries then a sigmoid gate of
                                * the attention output */
    GGUF_FEAT_MROPE,           /* rope.dimension_sections: M-RoPE (interleaved sections) */
    GGUF_FEAT_SHARED_EXPERT,   /* a shared expert beside the routed ones, its output times
                                * sigmoid(ffn_gate_inp_shexp · x) */
    /* Gemma 4 */
    GGUF_FEAT_PER_LAYER_INPUTS,/* per-layer token embeddings, gated into each layer's output */
    GGUF_FEAT_SHARED_KV,       /* the last shared_kv_layers layers reuse the KV of the last
                                * layer of their kind (sliding or full) before them */
    GGUF_FEAT_V_FROM_K,        /* a layer without attn_v uses K as V; V gets a weightless
                                * RMSNorm */
    GGUF_FEAT_DENSE_AND_EXPERTS,/* experts (router input scaled, per-expert output scale)
                                * beside the dense feed-forward, each with its own norms */
    GGUF_FEAT_LAYER_OUT_SCALE, /* each layer's output times layer_output_scale */
    GGUF_FEAT_ROPE_FREQS_FULL, /* rope_freqs divides the full layers' frequencies only
                                * (proportional rope) */
    GGUF_FEAT_ATTN_SCALE_1,    /* scores unscaled (no 1/sqrt(head_dim)) */
    /* GLM-4.5 */
    GGUF_FEAT_SIGMOID_ROUTING, /* expert scores by sigmoid, chosen with exp_probs_b added,
                                * in expert groups; weights normalised and scaled */
    GGUF_FEAT_NEXTN,           /* next-token-prediction blocks after the model's (loaded,
                                * not run for generation) */
    /* DeepSeek-V2/V3 */
    GGUF_FEAT_MLA,             /* multi-head latent attention: low-rank q and KV, a KV cache
                                * of one latent per token */
    GGUF_FEAT_COUNT
};

/* Activation of the feed-forward gate. */
enum gguf_activation {
    GGUF_ACT_SILU,
    GGUF_ACT_GELU_TANH, /* GeGLU: gelu(g) · u, gelu by ggml's table of f16 inputs */
    GGUF_ACT_SWIGLU_OAI /* gpt-oss: x·σ(1.702x) of the clamped gate times (up + 1), limit 7 */
};

/* RoPE layouts (ggml's rope modes). */
enum gguf_rope_layout {
    GGUF_ROPE_NORM = 0, /* rotate (x[2i], x[2i+1]) */
    GGUF_ROPE_NEOX = 2  /* rotate (x[i], x[i + n_rot/2]) */
};

/* How a mixture-of-experts layer picks its experts. */
enum gguf_routing {
    GGUF_ROUTING_NONE,
    GGUF_ROUTING_SOFTMAX_TOPK, /* softmax over the experts, the top expert_used_count,
                                * their probabilities renormalised to sum 1 */
    GGUF_ROUTING_TOPK_SOFTMAX,/* gpt-oss: the top expert_used_count logits (router with
                               * bias), then a softmax over those k alone */
    GGUF_ROUTING_SIGMOID_BIAS /* GLM-4.5: sigmoid scores; the top expert_used_count of
                               * score + exp_probs_b within the best groups; their scores
                               * normalised (expert_weights_norm), times expert_weights_scale */
};

/* Which blocks of a model a per-block tensor row is in
 * (gguf_arch_tensor_layers, gguf_hparams_layer_in). */
enum gguf_layers {
    GGUF_LAYERS_ALL = 0,   /* every block */
    GGUF_LAYERS_ATTENTION, /* the attention blocks: with a full_attention_interval row, block
                            * il when (il + 1) % full_attention_interval == 0; else every one */
    GGUF_LAYERS_RECURRENT, /* the other blocks of such a model (a gated delta net) */
    /* Gemma 4 */
    GGUF_LAYERS_SLIDING,   /* the blocks that attend within the sliding window (a per-block
                            * sliding_window_pattern, or the period of an integer one) */
    GGUF_LAYERS_FULL,      /* the other blocks: global attention */
    GGUF_LAYERS_OWN_KV,    /* the blocks before the last shared_kv_layers and before the
                            * next-token-prediction ones: their own KV */
    GGUF_LAYERS_SHARED_KV, /* the last shared_kv_layers blocks: the KV of an earlier one */
    /* GLM-4.5 */
    GGUF_LAYERS_LEADING_DENSE, /* the first leading_dense_block_count blocks: dense feed-forward */
    GGUF_LAYERS_MOE,       /* the other blocks: routed and shared experts */
    GGUF_LAYERS_NEXTN,     /* the last nextn_predict_layers blocks: next-token prediction */
    GGUF_LAYERS_COUNT
};

/* What a hyper-parameter's key holds (gguf_arch_hparam_array). */
enum gguf_hp_array {
    GGUF_HP_SCALAR,    /* one number */
    GGUF_HP_ARRAY,     /* an array of a fixed count of integers (or one integer for all,
                        * as llama.cpp's loader takes it) */
    GGUF_HP_PER_BLOCK  /* an array of block_count integers or bools, one per block (or one
                        * value for all) */
};

/* One architecture, one of its tensor rows, one of its hyper-parameter
 * rows, and a model's hyper-parameters: opaque. */
typedef struct gguf_arch gguf_arch;
typedef struct gguf_arch_tensor gguf_arch_tensor;
typedef struct gguf_arch_hparam gguf_arch_hparam;
typedef struct gguf_hparams gguf_hparams;

/* The architectures in registry order: gguf_arch_count() of them, number i
 * by gguf_arch_at (NULL past the end). */
GGUF_API size_t gguf_arch_count(void);
GGUF_API const gguf_arch *gguf_arch_at(size_t i);

/* By general.architecture ("llama"), or NULL. */
GGUF_API const gguf_arch *gguf_arch_find(const char *name);

/* Its general.architecture ("llama") and a one-line description. */
GGUF_API const char *gguf_arch_name(const gguf_arch *a);
GGUF_API const char *gguf_arch_about(const gguf_arch *a);

/* Whether a has a feature (enum gguf_feature; false for an unknown one). */
GGUF_API bool gguf_arch_has(const gguf_arch *a, int feature);

/* The word of a feature ("qkv-bias"), "unknown" for an unknown one. */
GGUF_API const char *gguf_feature_name(int feature);

/* Its rope layout (enum gguf_rope_layout), feed-forward activation (enum
 * gguf_activation) and expert routing (enum gguf_routing). */
GGUF_API int gguf_arch_rope(const gguf_arch *a);
GGUF_API int gguf_arch_activation(const gguf_arch *a);
GGUF_API int gguf_arch_routing(const gguf_arch *a);

/* The hyper-parameter rows of a, in checking order: n of them, row i (NULL
 * past the end); the row of a hyper-parameter (enum gguf_hp), or NULL when
 * a has none. */
GGUF_API size_t gguf_arch_n_hparams(const gguf_arch *a);
GGUF_API const gguf_arch_hparam *gguf_arch_hparam_at(const gguf_arch *a, size_t i);
GGUF_API const gguf_arch_hparam *gguf_arch_hparam_of(const gguf_arch *a, int hp);

/* A hyper-parameter row: its id (enum gguf_hp; gguf_hp_key gives the key),
 * whether it is a float (f32, f64 accepted; finite, and > 0 or for some
 * >= 0) or an integer, whether a model
 * must have it, how it is derived when absent (enum gguf_derive) and the
 * default of GGUF_DERIVE_DEFAULT, and an integer's range [*lo, *hi]. */
GGUF_API int gguf_arch_hparam_id(const gguf_arch_hparam *h);
GGUF_API bool gguf_arch_hparam_is_float(const gguf_arch_hparam *h);
GGUF_API bool gguf_arch_hparam_required(const gguf_arch_hparam *h);
GGUF_API int gguf_arch_hparam_derive(const gguf_arch_hparam *h);
GGUF_API double gguf_arch_hparam_default(const gguf_arch_hparam *h);
GGUF_API void gguf_arch_hparam_range(const gguf_arch_hparam *h, int64_t *lo, int64_t *hi);

/* Whether the row is a number or an array (enum gguf_hp_array), with the
 * count of a GGUF_HP_ARRAY in *count (0 otherwise; count may be NULL). An
 * array's integers are each in the row's range. */
GGUF_API int gguf_arch_hparam_array(const gguf_arch_hparam *h, int64_t *count);

/* The tensor rows of a, in order: n of them, row i (NULL past the end). */
GGUF_API size_t gguf_arch_n_tensors(const gguf_arch *a);
GGUF_API const gguf_arch_tensor *gguf_arch_tensor_at(const gguf_arch *a, size_t i);

/* A tensor row: its name ("token_embd.weight", or "blk.%d.attn_q.weight"
 * per block), its role (enum gguf_role) and the size of its shape's axis
 * 0, 1 or 2 (enum gguf_dim; GGUF_DIM_1 for an absent axis). */
GGUF_API const char *gguf_arch_tensor_name(const gguf_arch_tensor *t);
GGUF_API int gguf_arch_tensor_role(const gguf_arch_tensor *t);
GGUF_API int gguf_arch_tensor_dim(const gguf_arch_tensor *t, int axis);

/* The blocks a per-block row is in (enum gguf_layers; GGUF_LAYERS_ALL for
 * a global one), and the word of a kind ("recurrent"; "unknown"). */
GGUF_API int gguf_arch_tensor_layers(const gguf_arch_tensor *t);
GGUF_API const char *gguf_layers_name(int layers);

/* Names: of a role ("attn_q"), of a dimension ("embedding_length"), of a
 * hyper-parameter (its key without "%s.": "attention.head_count"). */
GGUF_API const char *gguf_role_name(int role);
GGUF_API const char *gguf_dim_name(int dim);
GGUF_API const char *gguf_hp_name(int hp);

/* The GGUF key format of a hyper-parameter ("%s.attention.head_count"), or
 * NULL for an unknown id. */
GGUF_API const char *gguf_hp_key(int hp);

/* "blk.N.REST" with N in canonical decimal: true with N and REST. */
GGUF_API bool gguf_parse_block_name(const char *name, int64_t *block, const char **rest);

/* Whether tensor row t must be present in a model of a (without experts:
 * the dense feed-forward's rows are required, the experts' optional). */
GGUF_API bool gguf_arch_tensor_required(const gguf_arch *a, const gguf_arch_tensor *t);

/* The same for a model with experts (expert_count > 0) or without. A row
 * of a kind of block (gguf_arch_tensor_layers) is required in the blocks
 * of its kind only (gguf_hparams_layer_in); Gemma 4's per-layer input rows
 * say false here: they are required when embedding_length_per_layer_input
 * > 0, its rope_freqs when some block is full (the model rules apply both). */
GGUF_API bool gguf_arch_tensor_required_for(const gguf_arch *a, const gguf_arch_tensor *t,
                                            bool experts);

/* True for a row named "blk.%d.…" (one tensor per block). */
GGUF_API bool gguf_arch_tensor_per_block(const gguf_arch_tensor *t);

/* The row of a's table with this role, or NULL. */
GGUF_API const gguf_arch_tensor *gguf_arch_tensor_of(const gguf_arch *a, int role);

/* The row a GGUF tensor name belongs to ("blk.7.attn_q.weight"), with the
 * block in *block (-1 for a global); NULL when a has no such tensor. */
GGUF_API const gguf_arch_tensor *gguf_arch_match(const gguf_arch *a, const char *name, int *block);

/* Reads and checks the hyper-parameters of a model of a registered
 * architecture (with the rules of gguf_model_validate: types, ranges,
 * divisibility, rope dimensions) into a new *hp, freed with
 * gguf_hparams_free. 0, or -1 with the message in err (*hp NULL). */
GGUF_API int gguf_hparams_read(const gguf_file *f, gguf_hparams **hp, gguf_error *err);
GGUF_API void gguf_hparams_free(gguf_hparams *hp);

/* The architecture the hyper-parameters are of. */
GGUF_API const gguf_arch *gguf_hparams_arch(const gguf_hparams *hp);

/* Whether the file has the key of a hyper-parameter (enum gguf_hp). */
GGUF_API bool gguf_hparams_has(const gguf_hparams *hp, int id);

/* A hyper-parameter's value, from the file or derived as its row says:
 * true with it in *value, false (and *value 0) when it has none. An
 * integer converts exactly (every range the rows allow fits a double's
 * 53 bits); gguf_hparams_get_int gives it as an integer (a float's value
 * truncated). */
GGUF_API bool gguf_hparams_get(const gguf_hparams *hp, int id, double *value);
GGUF_API bool gguf_hparams_get_int(const gguf_hparams *hp, int id, int64_t *value);

/* The value of a dimension (enum gguf_dim) for these hyper-parameters (-1
 * when unknown). */
GGUF_API int64_t gguf_hparams_dim(const gguf_hparams *hp, int dim);

/* Whether block il is of kind layers (enum gguf_layers): false for a block
 * outside 0..block_count-1 or an unknown kind. */
GGUF_API bool gguf_hparams_layer_in(const gguf_hparams *hp, int layers, int64_t il);

/* The value of a dimension in block il: where a per-block array gives it
 * (a GGUF_HP_PER_BLOCK feed-forward length or head_count_kv) its element
 * il, in a sliding block of a model with attention.key_length_swa the
 * sliding head size (q, k, v widths, the key length, rope.dimension_count_swa
 * / 2), else gguf_hparams_dim's (-1 when unknown or il is not a block). */
GGUF_API int64_t gguf_hparams_layer_dim(const gguf_hparams *hp, int dim, int64_t il);

/* The integers of an array hyper-parameter (a GGUF_HP_ARRAY or
 * GGUF_HP_PER_BLOCK row; a single value in the file counts as that many
 * copies): their count, the first min(count, cap) copied to values (may be
 * NULL with cap 0); 0 when the file has none. gguf_hparams_get(_int) give
 * such a row's largest element. */
GGUF_API int64_t gguf_hparams_array(const gguf_hparams *hp, int id, int64_t *values, int64_t cap);

/* A hyper-parameter's value in block il: element il of a per-block array,
 * else as gguf_hparams_get_int. False (and *value 0) when it has none or il
 * is not a block. */
GGUF_API bool gguf_hparams_get_layer(const gguf_hparams *hp, int id, int64_t il, int64_t *value);

/* ---------------------------------------------------------------------------
 * one semantic validation of a model: hyper-parameters
 * against each other and against the tensor shapes, the vocabulary against
 * itself and against token_embd.
 *
 * gguf_open() proves a file is well-formed GGUF; this proves it describes a
 * model the tools can use, so that no tool writes a file another refuses:
 * gguf-convert runs it on its writer before it writes, gguf-quantize before
 * it reads, gguf-run at load and `gguf-inspect --check` as its model check.
 * Only the header is read (keys, tensor names and shapes), never tensor data.
 *
 * What is checked depends on the file:
 *  - every file: general.architecture and general.type are strings; the
 *    vocabulary when there is one (tokenizer.ggml.*: texts unique, parallel
 *    arrays as long as the token list, token types 0..6, special-token ids
 *    inside the vocabulary, BPE merges naming tokens, SPM byte tokens of the
 *    form <0xNN>, {arch}.vocab_size equal to the token count, and with a
 *    general.name llama.cpp takes for Phi-3's the four tokens it looks up
 *    by text: <unk>, <s>, </s>, <|endoftext|>); token_embd's
 *    rows equal to the token count; no tensor blk.N.* with N >= block_count;
 *  - a model (general.type absent or "model", with tensors) of an
 *    architecture in the table (llama, mistral, qwen2): its hyper-parameters
 *    (present, in range, consistent), and its tensors (each one known, each
 *    required one present in every block, each with the shape the
 *    hyper-parameters give).
 * Other architectures, vocab-only files (general.type "vocab" or no
 * tensors) and other file types (imatrix, adapter) get the checks of every
 * file and nothing else. docs/validation.md lists each rule with its message.
 *
 * Not for: the container (gguf.h validates it), tensor data (NaN/Inf scans
 * are the tools'), or what a tool supports beyond validity (gguf-run's
 * kernels and tensor types).
 */
/* The most blocks a model may have (llama.cpp's LLAMA_MAX_LAYERS). */
#define GGUF_MODEL_MAX_BLOCKS 512
/* The largest width, head count, head size or feed-forward length. */
#define GGUF_MODEL_MAX_DIM (1 << 24)

/* Validates an opened file (split models: the metadata of the first shard,
 * the tensors of all). Returns 0, or -1 with one message naming the key or
 * tensor and the rule it breaks (the first problem found) in err. */
GGUF_API int gguf_model_validate(const gguf_file *f, gguf_error *err);

/* Called by gguf_model_check once per problem, in the order found. */
typedef void gguf_model_problem_fn(void *ctx, const gguf_error *problem);

/* The same rules, reporting every problem through fn instead of stopping
 * at the first: every unexpected tensor name, block beyond block_count,
 * missing tensor and wrong shape. A problem with the identity keys, the
 * hyper-parameters or the vocabulary still ends the check (the rules after
 * it depend on them), after being reported. Returns the number of problems
 * (0: the model is valid), or -1 with err (may be NULL) when out of memory. */
GGUF_API int gguf_model_check(const gguf_file *f, gguf_model_problem_fn *fn, void *ctx,
                              gguf_error *err);

/* The same rules over a model not yet written: the keys set and tensors
 * declared on w so far (call it after the last gguf_writer_add_tensor and
 * before gguf_writer_begin). Returns 0, or -1 with the message in err. */
GGUF_API int gguf_model_validate_writer(const gguf_writer *w, gguf_error *err);

#ifdef __cplusplus
}
#endif

#endif
