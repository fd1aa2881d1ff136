/*
 * policy.h — which tensors are quantized and to which type.
 *
 * This is llama.cpp's per-tensor mix (llama_tensor_get_type in
 * llama-quant.cpp, c392e50 and e21cdc11, which adds the i-quant, Q2_K_S
 * and MXFP4_MOE presets) for the presets in preset.h, written as a rule
 * table in policy.c: output/embedding types, attn_v / ffn_down upgrades by
 * layer, GQA and expert-count adjustments, and the fallback used when a
 * row length is not a multiple of the chosen type's block size (the type
 * table's, gguf_dtype_fit).
 */
#ifndef QUANTIZE_POLICY_H
#define QUANTIZE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Model facts the rules look at. */
typedef struct policy_model {
    bool    falcon;        /* general.architecture == "falcon" */
    int     n_layer;       /* {arch}.block_count */
    int     n_head, n_head_kv;
    int     n_expert;      /* {arch}.expert_count, 0 when absent */
    bool    is_70b;        /* llama with 80 layers and GQA (llama.cpp's LLM_TYPE_70B) */
    bool    has_output;    /* the file has output.weight (else it is tied) */
    int     n_attention_wv;/* number of attn_v / attn_qkv / attn_kv_b tensors */
} policy_model;

/* Counters advanced as tensors are visited in llama.cpp's order. */
typedef struct policy_state {
    int  i_attention_wv, i_ffn_down, i_ffn_gate, i_ffn_up;
    bool has_imatrix;
    int  n_fallback;
} policy_state;

/* User choices that override the mix. -1 = not given. */
typedef struct policy_opts {
    int  output_type;          /* --output-tensor-type */
    int  token_embedding_type; /* --token-embedding-type */
    bool pure;                 /* --pure: no mix */
    bool leave_output;         /* --leave-output-tensor */
} policy_opts;

/* Whether llama.cpp takes the tensor for a token embedding (its
 * tensor_name_match_token_embd): token_embd.weight, and Gemma 4's
 * per_layer_token_embd.weight, which gets the same type. */
bool policy_is_token_embd(const char *name);

/* Whether llama.cpp would quantize this tensor at all (2D+ weights that are
 * not norms, gating inputs, positional embeddings, ...). */
bool policy_is_quantizable(const char *name, uint32_t n_dims, const policy_opts *o);

/* The type for one tensor under preset ftype with default type dflt;
 * advances the counters in st. ne0 is the row length. forced >= 0 is a type
 * chosen by a --tensor-type pattern or recipe; it replaces the mix, and the
 * output/embedding options still win over it. `why` (if not NULL) receives
 * a short note when a fallback was needed. */
uint32_t policy_tensor_type(const policy_model *m, policy_state *st, const policy_opts *o,
                            int ftype, uint32_t dflt, const char *name, int64_t ne0,
                            int forced, char *why, size_t why_size);

/* The same for a tensor of ne2 matrices (experts: ne2 > 1, which
 * MXFP4_MOE puts in mxfp4). */
uint32_t policy_tensor_type_3d(const policy_model *m, policy_state *st, const policy_opts *o,
                               int ftype, uint32_t dflt, const char *name, int64_t ne0,
                               int64_t ne2, int forced, char *why, size_t why_size);

#endif
