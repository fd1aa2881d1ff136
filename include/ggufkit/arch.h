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
#define GGUF_KEY_SLIDING_WINDOW     "%s.attention.sliding_window"
#define GGUF_KEY_ROPE_SCALING_TYPE  "%s.rope.scaling.type"
#define GGUF_KEY_ROPE_SCALING_FACTOR "%s.rope.scaling.factor"
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

/* ---------------------------------------------------------------------------
 * The architecture registry: every GGUF architecture the tools support,
 * described as data — its names, its hyper-parameter keys and how each is
 * derived, its tensor table (name, role, shape rule, required or optional)
 * and its feature flags. gguf-convert maps checkpoints through it,
 * gguf-quantize takes its model facts from it, gguf-run loads layers by
 * walking its tensor table and picks forward-pass features from its flags,
 * and the model rules below (gguf_model_validate) check files against it.
 * `gguf-inspect --arches` prints it. docs/design.md says how to add a row.
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
    GGUF_ROLE_ATTN_QKV,        /* q, k and v rows in one matrix (GGUF_ARCH_FUSED_QKV) */
    GGUF_ROLE_FFN_GATE_UP,     /* gate rows, then up rows (GGUF_ARCH_FUSED_GATE_UP) */
    GGUF_ROLE_ROPE_FACTORS_LONG, GGUF_ROLE_ROPE_FACTORS_SHORT, /* Phi-3 LongRoPE */
    GGUF_ROLE_ATTN_SINKS,        /* gpt-oss: one learned logit per head */
    GGUF_ROLE_FFN_GATE_INP_BIAS, /* gpt-oss: router bias */
    GGUF_ROLE_FFN_GATE_EXPS_BIAS, GGUF_ROLE_FFN_UP_EXPS_BIAS, GGUF_ROLE_FFN_DOWN_EXPS_BIAS,
    GGUF_ROLE_ATTN_POST_NORM,    /* Gemma: RMSNorm of the attention output before the residual */
    GGUF_ROLE_FFN_POST_NORM,     /* Gemma: RMSNorm of the feed-forward output before the residual */
    GGUF_ROLE_COUNT
};

/* The sizes a tensor's shape is written in (values from gguf_hparams). */
enum gguf_dim {
    GGUF_DIM_1,        /* 1: the second size of a vector */
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
    GGUF_DIM_COUNT
};

/* Whether a tensor must be there. */
enum gguf_need {
    GGUF_NEED_REQUIRED,
    GGUF_NEED_OPTIONAL,
    GGUF_NEED_IF_FLAG,    /* required when the architecture has need_flag, else optional */
    GGUF_NEED_UNLESS_FLAG,/* optional when the architecture has need_flag, else required */
    GGUF_NEED_DENSE,      /* required in a model without experts (expert_count absent or 0) */
    GGUF_NEED_EXPERTS     /* required in a model with experts (expert_count > 0) */
};

/* The converter's reordering of a tensor's rows (LLaMA's rotary halves). */
enum gguf_permute { GGUF_PERMUTE_NONE, GGUF_PERMUTE_Q, GGUF_PERMUTE_K };

/* One tensor of an architecture. */
typedef struct gguf_arch_tensor {
    const char *name;      /* "token_embd.weight", or "blk.%d.attn_q.weight" per block */
    uint8_t     role;      /* enum gguf_role */
    uint8_t     need;      /* enum gguf_need */
    uint32_t    need_flag; /* GGUF_ARCH_* for the _FLAG needs */
    uint8_t     ne0, ne1;  /* enum gguf_dim: the shape [ne0, ne1] */
    const char *hf;        /* Hugging Face checkpoint name ("%d": layer), NULL: none */
    const char *meta;      /* Meta consolidated.NN.pth name, NULL: none */
    uint8_t     permute;   /* enum gguf_permute, with GGUF_ARCH_PERMUTE_QK */
    uint8_t     ne2;       /* enum gguf_dim: a third size (experts); GGUF_DIM_1: none.
                            * hf then has a second "%d", the expert, whose tensors the
                            * converter stacks in expert order */
} gguf_arch_tensor;

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
    GGUF_HP_ATTN_SOFTCAP,      /* attention scores become c·tanh(s/c) (GGUF_ARCH_ATTN_SOFTCAP) */
    GGUF_HP_FINAL_SOFTCAP,     /* the logits become c·tanh(l/c), when present or derived */
    GGUF_HP_COUNT
};

/* How an absent hyper-parameter gets its value (llama.cpp's defaults). */
enum gguf_derive {
    GGUF_DERIVE_NONE,       /* stays absent */
    GGUF_DERIVE_DEFAULT,    /* the row's def */
    GGUF_DERIVE_HEAD_COUNT, /* head_count (head_count_kv: no grouping) */
    GGUF_DERIVE_HEAD_SIZE,  /* embedding_length / head_count */
    GGUF_DERIVE_KEY_LENGTH, /* the key length (rope.dimension_count: whole heads) */
    GGUF_DERIVE_ROPE_BASE   /* rope.freq_base (rope.freq_base_swa: the same base) */
};

/* One {arch}.* key of a GGUF file. */
typedef struct gguf_arch_hparam {
    const char *key;      /* GGUF_KEY_* format: "%s.embedding_length" */
    uint8_t     id;       /* enum gguf_hp */
    bool        is_float; /* f32 (f64 accepted), finite and > 0; else an integer */
    bool        required; /* a model file must have it */
    uint8_t     derive;   /* enum gguf_derive, when absent */
    double      def;      /* with GGUF_DERIVE_DEFAULT */
    int64_t     lo, hi;   /* integer range */
} gguf_arch_hparam;

/* One config.json hyper-parameter the converter writes, in the order it
 * writes them (llama.cpp's base converter). A null value is an absent one.
 * Two ids are made, not read (Phi3MiniModel's rules): GGUF_HP_ROPE_DIM is
 * int(F × hidden_size) / num_attention_heads with F the value of the row's
 * names (1 when absent: partial_rotary_factor), and GGUF_HP_SLIDING_WINDOW
 * is 0 when absent or null and not required. Two are conditional (Gemma 3's
 * rules): GGUF_HP_SLIDING_WINDOW is not written when config.json's
 * sliding_window_pattern is 1, GGUF_HP_FINAL_SOFTCAP not when it is 0
 * (and not required). block_count is written first unless the table has a
 * GGUF_HP_BLOCK_COUNT row (read from llama.cpp's names for it, whatever the
 * row's); the base converter's rope scaling keys follow the
 * GGUF_HP_HEAD_COUNT_KV row (GGUF_ARCH_OWN_ROPE_KEYS: none). */
typedef struct gguf_arch_hf_hparam {
    const char *hf[7];    /* config.json names, the first present wins; NULL after the last */
    uint8_t     id;       /* enum gguf_hp: the key it becomes */
    bool        is_float; /* written as f32; else u32 */
    bool        required; /* the conversion fails without it */
    double      def;      /* written when every name is absent (not required); 0: nothing */
} gguf_arch_hf_hparam;

/* Feature flags (gguf_arch.flags). */
enum {
    GGUF_ARCH_QKV_BIAS         = 1u << 0,  /* attn_q/k/v biases, always present */
    GGUF_ARCH_TIED_OUTPUT      = 1u << 1,  /* output.weight may be absent: token_embd serves */
    GGUF_ARCH_ROPE_WHOLE_HEAD  = 1u << 2,  /* rope.dimension_count must be the head size */
    GGUF_ARCH_EXPERTS          = 1u << 3,  /* its tables describe expert (MoE) tensors */
    GGUF_ARCH_QK_NORM          = 1u << 4,  /* per-head RMSNorm of q and k */
    GGUF_ARCH_FUSED_QKV        = 1u << 5,  /* one attn_qkv tensor */
    GGUF_ARCH_FUSED_GATE_UP    = 1u << 6,  /* one ffn_up holding gate and up */
    GGUF_ARCH_ATTN_SINKS       = 1u << 7,  /* learned attention sinks */
    GGUF_ARCH_ROPE_LLAMA3      = 1u << 8,  /* rope_scaling "llama3" → rope_freqs tensor */
    GGUF_ARCH_ROPE_LINEAR      = 1u << 9,  /* {arch}.rope.scaling.type "linear" */
    GGUF_ARCH_SCALE_Q          = 1u << 10, /* q times 1/sqrt(head_dim) before the scores
                                            * (then rounded to f16), not the scores */
    GGUF_ARCH_SCALE_EMBD       = 1u << 11, /* token embeddings times sqrtf(embedding_length) */
    GGUF_ARCH_ATTN_SOFTCAP     = 1u << 12, /* scores soft-capped by attn_logit_softcapping */
    GGUF_ARCH_ROPE_YARN        = 1u << 13, /* rope_scaling "yarn" → {arch}.rope.scaling.* */
    GGUF_ARCH_SWA_ROPE_PLAIN   = 1u << 14, /* sliding-window layers rotate without the rope
                                            * scaling of the global ones (Gemma 3) */
    /* conversion facts (llama.cpp's converter for the family) */
    GGUF_ARCH_PERMUTE_QK       = 1u << 16, /* q/k rows get the rotary permutation */
    GGUF_ARCH_LLAMA_VOCAB      = 1u << 17, /* LlamaModel's vocabulary rules */
    GGUF_ARCH_WRITES_ROPE_DIM  = 1u << 18, /* writes rope.dimension_count and vocab_size */
    GGUF_ARCH_PHI3_VOCAB       = 1u << 19, /* Phi3MiniModel's vocabulary: added tokens typed by
                                            * "special" alone, tokenizer.json's added_tokens
                                            * too, BPE only for a GPT2Tokenizer */
    GGUF_ARCH_TRIM_EMBD        = 1u << 20, /* token_embd rows past the vocabulary dropped */
    GGUF_ARCH_NO_SPACE_PREFIX  = 1u << 21, /* a tokenizer.model vocabulary gets
                                            * tokenizer.ggml.add_space_prefix false */
    GGUF_ARCH_OWN_ROPE_KEYS    = 1u << 22, /* its converter writes none of the base converter's
                                            * rope.scaling.* keys (phi3: LongRoPE's own) */
    GGUF_ARCH_MXFP4_EXPERTS    = 1u << 23  /* experts come as MXFP4 blocks + scales and stay
                                            * MXFP4; float outtypes get file_type 38 */
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
    GGUF_ROUTING_TOPK_SOFTMAX /* gpt-oss: the top expert_used_count logits (router with
                               * bias), then a softmax over those k alone */
};

/* Where the per-head size comes from. */
enum gguf_head_dim {
    GGUF_HEAD_DIM_KEY_LENGTH /* attention.key_length, else embedding_length / head_count */
};

/* One architecture. */
typedef struct gguf_arch {
    const char                *name;       /* general.architecture */
    const char                *about;      /* one line for listings */
    const char *const         *hf_classes; /* Hugging Face "architectures" it is converted from */
    const char *const         *hf_skip;    /* checkpoint name suffixes the converter drops */
    const gguf_arch_hparam    *hparams;    /* terminated by key == NULL; checking order */
    const gguf_arch_hf_hparam *hf_hparams; /* terminated by hf[0] == NULL; writing order */
    const gguf_arch_tensor *const *tables; /* NULL-terminated list of tensor tables (each
                                             * terminated by name == NULL), in checking
                                             * order: use gguf_arch_n_tensors/_tensor_at */
    uint32_t                   flags;      /* GGUF_ARCH_* */
    uint8_t                    rope;       /* enum gguf_rope_layout */
    uint8_t                    activation; /* enum gguf_activation */
    uint8_t                    head_dim;   /* enum gguf_head_dim */
    float                      norm_offset;/* the converter adds this to every *norm.weight
                                             * (Gemma's x·(1 + w) norms: 1) */
    uint32_t                   q_scale_width_blocks; /* with GGUF_ARCH_SCALE_Q: at this
                                             * block_count q is scaled by 1/√(embedding_length
                                             * / head_count), else by 1/√key_length (llama.cpp's
                                             * rule for the 27B Gemmas); 0: never */
    uint8_t                    routing;    /* enum gguf_routing (with GGUF_ARCH_EXPERTS) */
    const gguf_arch_hf_hparam *hf_hparams_late; /* written after general.file_type (the
                                                  * family's own keys; one written before
                                                  * takes the new value in its place, as
                                                  * in gguf-py's writer), or NULL */
    /* Multimodal checkpoints of the family (Gemma3ForConditionalGeneration,
     * as Gemma3Model.modify_tensors): hf_strip is taken out of every
     * checkpoint name that has it, wherever it occurs ("language_model."),
     * and a name without it that starts with one of hf_skip_prefix (the
     * vision tower, the projector) is dropped; NULL: neither */
    const char                *hf_strip;
    const char *const         *hf_skip_prefix;
} gguf_arch;

/* Every architecture in the registry: *n of them. */
GGUF_API const gguf_arch *gguf_arch_list(size_t *n);

/* By general.architecture ("llama"), or NULL. */
GGUF_API const gguf_arch *gguf_arch_find(const char *name);

/* By Hugging Face class ("LlamaForCausalLM"), or NULL. */
GGUF_API const gguf_arch *gguf_arch_find_hf(const char *hf_class);

/* "LlamaForCausalLM, MistralForCausalLM, ..." (for messages). */
GGUF_API const char *gguf_arch_hf_list(void);

/* The tensor rows of a, in order: n of them, row i (NULL past the end). */
GGUF_API size_t gguf_arch_n_tensors(const gguf_arch *a);
GGUF_API const gguf_arch_tensor *gguf_arch_tensor_at(const gguf_arch *a, size_t i);

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
 * GGUF_NEED_DENSE rows are required, GGUF_NEED_EXPERTS rows optional). */
GGUF_API bool gguf_arch_tensor_required(const gguf_arch *a, const gguf_arch_tensor *t);

/* The same for a model with experts (expert_count > 0) or without. */
GGUF_API bool gguf_arch_tensor_required_for(const gguf_arch *a, const gguf_arch_tensor *t,
                                            bool experts);

/* True for a row named "blk.%d.…" (one tensor per block). */
GGUF_API bool gguf_arch_tensor_per_block(const gguf_arch_tensor *t);

/* The row of a's table with this role, or NULL. */
GGUF_API const gguf_arch_tensor *gguf_arch_tensor_of(const gguf_arch *a, int role);

/* The row a GGUF tensor name belongs to ("blk.7.attn_q.weight"), with the
 * block in *block (-1 for a global); NULL when a has no such tensor. */
GGUF_API const gguf_arch_tensor *gguf_arch_match(const gguf_arch *a, const char *name, int *block);

/* A model's hyper-parameters, read and derived as the registry says. */
typedef struct gguf_hparams {
    const gguf_arch *arch;
    int64_t  v[GGUF_HP_COUNT];   /* integer values (derived ones filled in) */
    double   f[GGUF_HP_COUNT];   /* float values */
    bool     has[GGUF_HP_COUNT]; /* present in the file */
    int64_t  n_head_kv, head_k, head_v, n_rot; /* derived */
    int64_t  n_vocab;            /* the token count, -1 when unknown */
} gguf_hparams;

/* Reads and checks the hyper-parameters of a model of a registered
 * architecture (with the rules of gguf_model_validate: types, ranges,
 * divisibility, rope dimensions). 0, or -1 with the message in err. */
GGUF_API int gguf_hparams_read(const gguf_file *f, gguf_hparams *hp, gguf_error *err);

/* The value of a dimension for these hyper-parameters (-1 when unknown). */
GGUF_API int64_t gguf_hparams_dim(const gguf_hparams *hp, int dim);

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
