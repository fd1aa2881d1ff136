/*
 * forward.h — the transformer's forward pass over a batch of tokens.
 *
 * One call runs n tokens at consecutive positions through every layer:
 * embedding lookup, then per layer RMSNorm → q/k/v (+ biases) → RoPE →
 * grouped-query attention over an f16 KV cache → output projection →
 * residual, RMSNorm → SwiGLU (GeGLU) feed-forward → residual (Gemma: each
 * sub-layer's output RMS-normalised before its residual); then the output
 * norm and head for the tokens whose logits are wanted. The arithmetic
 * follows what llama.cpp's CPU backend computes by default on an AVX-512
 * machine (see docs/gguf-run.md), so greedy tokens agree exactly and the
 * e21cdc11 references' logits bit for bit.
 *
 * Not for: loading or checking the model (model.h), the matrix kernels
 * (kernels.h), choosing tokens (sampler.h).
 */
#ifndef RUN_FORWARD_H
#define RUN_FORWARD_H

#include <stdint.h>

#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include "model.h"

/* Called by every matrix product with its f32 input rows, before they are
 * converted to the weight's dot type: x is nb rows of w->cols. Serves
 * --imatrix (importance.h); NULL (the default) costs one test per product. */
typedef void (*run_act_hook)(void *user, const run_matrix *w, const float *x, int nb);

/* Buffers for one sequence: activations for up to n_batch tokens at a time,
 * and the KV cache of n_ctx positions. */
typedef struct run_state {
    int n_ctx, n_batch, n_threads;
    float *x;            /* (n_batch, n_embd) residual stream */
    float *xb;           /* (n_batch, n_embd) normed input of a sub-layer */
    float *q;            /* (n_batch, n_embd) queries, then attention output */
    float *k, *v;        /* (n_batch, kv_dim) this batch's keys and values */
    float *xb2;          /* (n_batch, n_embd) sub-layer output */
    float *hb, *hb2;     /* (n_batch, max(n_ff, n_ff_exp)) gate and up projections */
    /* experts: router probabilities (n_batch, n_expert); each token's
     * chosen experts and weights (n_batch, n_expert_used); one expert's
     * tokens gathered (n_batch, n_embd) and its outputs for every token and
     * slot (n_batch, n_expert_used, n_embd) */
    float *moe_probs, *moe_w, *moe_x, *moe_y;
    float *moe_scratch;  /* run_route_biased's (n_expert + 2 expert groups) */
    int   *moe_sel;
    int   *moe_slot;     /* (n_batch · n_expert_used) token · n_used + slot of a gathered row */
    float *fused;        /* (n_batch, the widest fused matrix's rows) its products (phi3),
                          * NULL without fused matrices */
    void  *xq;           /* n_batch activation rows converted for the kernels */
    size_t xq_row;       /* bytes of the largest converted row */
    gguf_half *k_cache;  /* (n_cache_layers, n_ctx, kv_dim) rotated keys, f16 */
    gguf_half *v_cache;  /* (n_cache_layers, n_ctx, kv_dim) values, f16 */
    float *att;          /* (n_threads, n_ctx + head_dim) scores and head output per thread */
    float *rope_cs;      /* (n_rot) cos, sin pairs of one position */
    const float *rope_freqs; /* the model's frequency divisors for this context, or NULL
                              * (run_rope_factors) */
    gguf_half *att16;    /* (n_threads, n_ctx + head_dim) f16 scratch per thread */
    float *f16_table;    /* 65536 entries: binary16 bits → float */
    gguf_half *gelu16;   /* GeGLU models: 65536 entries, gelu of each binary16 as f16
                          * (run_gelu_table); NULL otherwise */
    /* gguf-run --sensitivity: every batch's input to each block (and the
     * last block's output), recorded once (snap_mode 1) and replayed
     * (snap_mode 2: the batch starts at block snap_from with what was
     * recorded, the blocks before it not run); snap_at counts the batches,
     * snap_cap of them fit in snap (each (n_layer_run + 1) × n_batch ×
     * n_embd); batches past it run whole. NULL / 0: off. */
    float *snap;
    int    snap_mode, snap_from, snap_at, snap_cap;
    run_act_hook act_hook; /* NULL, or called with each product's input rows */
    void  *act_user;       /* the hook's first argument */
    /* hybrid models (qwen35): the recurrent state of each Gated DeltaNet
     * layer, cleared by a batch at position 0 — its convolution window
     * (channels, ssm_conv_k - 1) and its delta-rule matrices (ssm_dt_rank,
     * ssm_d_state, ssm_d_state) — and a batch's scratch: the convolution's
     * inputs and outputs (n_batch, channels), the output gate z and the
     * heads' outputs (n_batch, ssm_d_inner), decay and strength (n_batch,
     * ssm_dt_rank); NULL without such layers */
    float *conv_state, *delta_state;
    float *rec_in, *rec_conv, *rec_z, *rec_o, *rec_g, *rec_beta;
    float *qg;           /* gated attention (qwen35): (n_batch, 2 q_dim) q | gate rows per head */
    float *shexp_g, *shexp_u; /* qwen35moe: the shared expert's gate, up (n_batch, n_ff_shexp) */
    /* Gemma 4 (NULL otherwise): the dense feed-forward's output beside the
     * experts' (n_batch, n_embd), an expert's fused gate | up products
     * (n_batch, 2 n_ff_exp); the per-layer inputs (n_batch, n_layer ·
     * n_embd_pl), one token's row of them, a block's gated input
     * (n_batch, n_embd_pl) */
    float *ffn_dense, *moe_gu;
    float *pl, *pl_row, *pl_h;
    /* the cache's row width (the widest block's n_head_kv · head_dim) and
     * its blocks (those with their own K/V: the largest kv_slot + 1) */
    size_t kv_dim;
    int    n_cache_layers;
    /* LoRA (run/lora.h; NULL without): a batch's A products (n_batch,
     * the largest rank) and B products (n_batch, the most rows) */
    float *lora_t, *lora_u;
    /* latent attention (DeepSeek-V2/V3; NULL otherwise): the heads' q
     * (n_batch, n_head · (mla_nope + n_rot)), the q latent (n_batch,
     * q_lora), one head's rows in and out of its k_b or v_b product
     * (n_batch, the wider of mla_nope, kv_lora, mla_v each), the heads'
     * values (n_batch, n_head · mla_v), and the rows the importance hook
     * sees of k_b and v_b (n_batch, n_head · the wider of mla_nope, kv_lora) */
    float *mla_q, *mla_qa, *mla_g, *mla_h, *mla_o, *mla_hook;
} run_state;

/* Allocates the buffers (KV cache of n_ctx positions, batches of up to
 * n_batch tokens) for the pool's thread count (common/pool.c's pool_threads).
 * -1 with a message. */
int run_state_init(run_state *s, const run_model *m, int n_ctx, int n_batch, gguf_error *err);

void run_state_free(run_state *s);

/* Runs tokens[0..n) at positions pos..pos+n-1 (0 <= pos, pos + n <= n_ctx,
 * every id < n_vocab), n_batch at a time, filling the KV cache. The logits of
 * tokens out_from..n-1 are written to logits, one row of n_vocab per token
 * (out_from == n: none). */
void run_forward(run_state *s, const run_model *m, const int32_t *tokens, int n, int pos,
                 int out_from, float *logits);

/* --- the building blocks, exposed for the unit tests ---------------------- */

/* y = x / sqrt(mean(x^2) + eps) * w over n elements (sum of squares in double). */
void run_rmsnorm(float *y, const float *x, const float *w, int n, float eps);

/* False when any of x[0..n) is NaN or Inf (x · 0 is 0 for every finite x). */
bool run_all_finite(const float *x, int n);

/* Rotates the n_rot first dimensions of each of n_heads heads of head_dim in
 * x for position pos: pairs (2i, 2i+1) (RUN_ROPE_NORM) or (i, i + n_rot/2)
 * (RUN_ROPE_NEOX) by the angle scale * pos * base^(-2i/n_rot) / freqs[i]
 * (freqs may be NULL; scale is 1 without linear rope scaling), cos and sin
 * times mscale (LongRoPE's attention factor; 1 without). */
void run_rope(float *x, int n_heads, int head_dim, int n_rot, int pos, float base, float scale,
              const float *freqs, float mscale, enum run_rope_layout layout);

/* p = softmax(scale * x) over n scores, in place. */
void run_softmax(float *x, int n, float scale);

/* SwiGLU: g = silu(g) * u over n elements, silu(x) = x / (1 + e^-x). */
void run_swiglu(float *g, const float *u, int n);

/* The 65536 f16 values of ggml's tanh-form GELU of every binary16 input. */
void run_gelu_table(gguf_half *t);

/* GeGLU: g = gelu(g) * u over n elements, gelu from the table of
 * run_gelu_table for g rounded to f16 (0 at or below -10, g at or above
 * 10), as ggml computes it. */
void run_geglu(float *g, const float *u, int n, const gguf_half *gelu16);

/* GELU in place over n elements, from the table of run_gelu_table as
 * ggml_gelu computes it (0 at or below -10, x at or above 10). */
void run_gelu(float *x, int n, const gguf_half *gelu16);

/* Routing by biased scores (GGUF_ROUTING_SIGMOID_BIAS: GLM-4.5,
 * DeepSeek), as llama.cpp's build_moe_ffn computes it for one token:
 * p = sigmoid(logits) (softmax with softmax set); the choice by s = p + bias
 * (bias may be NULL): with n_group > 1 the experts are n_group consecutive
 * groups, each scored by the sum of its two largest s (largest first), the
 * n_group_used best groups (the first on ties) kept and the others' s set
 * to -inf; then the n_used largest s in descending order (the first on
 * ties) into sel and their unbiased p into w; with norm, w / max(Σw, 2^-14)
 * (Σ in double); then times scale unless it is 0 or 1. p is overwritten
 * with the probabilities; scratch holds n_expert + 2 n_group floats. */
typedef struct run_route_params {
    int   n_expert, n_used, n_group, n_group_used;
    bool  softmax, norm;
    float scale;
} run_route_params;
void run_route_biased(float *p, const float *bias, const run_route_params *rp, float *scratch,
                      int *sel, float *w);

/* Soft-capping: x = cap · tanh(x · (1/cap)) over n values. */
void run_softcap(float *x, int n, float cap);

#endif
