/*
 * forward_simd.h — AVX2 (+FMA, F16C) versions of the forward pass's own
 * inner loops (attention scores, softmax, weighted values, SiLU, RoPE, f16
 * rounding) as a table, and the switch between them and forward.c's scalar
 * code.
 *
 * Every vector function produces bit for bit what its scalar counterpart
 * in forward.c produces: each output is the same sequence of IEEE
 * operations (fma, add, mul, div, each rounded once) on the same values,
 * only laid out in lanes instead of loops. The scalar code stays the
 * reference and the fallback on CPUs without AVX2; the unit tests hold the
 * two to each other. Not for: the matrix products (kernels.h).
 */
#ifndef RUN_FORWARD_SIMD_H
#define RUN_FORWARD_SIMD_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "forward.h"

/* Tests and benchmarks: run the scalar paths even where the CPU has AVX2
 * (on) or the vector ones where it can (off, the default). Not
 * thread-safe: set before running the model. */
void run_force_scalar(bool on);


/* --- the vector paths ---------------------------------------------------- */

/* The vector versions of forward.c's loops for one instruction set, each
 * as its namesake there (run_rope's rotation, run_swiglu, attn_softmax,
 * run_attn_scores, run_attn_values, to_f16, run_attn_scores1,
 * run_attn_values1); a NULL entry means the scalar loop. forward.c picks
 * one table once (fwd_simd_select) and calls through it. */
typedef struct fwd_simd_ops {
    const char *name;
    void (*rope_apply)(float *x, int n_heads, int head_dim, int n_rot, const float *cs,
                       enum run_rope_layout layout);
    /* g = silu(g) * u over the first n - n % 8 elements; returns how many
     * it did (the caller does the rest with the scalar code). */
    int (*swiglu)(float *g, const float *u, int n);
    /* x = silu(x) over the first n - n % 16 elements as rec_silu_row
     * (recurrent.h) computes them; returns how many it did (rec_silu_row
     * does the rest, past them). */
    int (*silu)(float *x, int n);
    /* run_geglu (forward.h), or run_gelu where u is NULL, over whole groups
     * of eight up to the first with a NaN; returns how many it did (the
     * caller does the rest with the scalar code). */
    int (*geglu)(float *g, const float *u, int n, const gguf_half *gelu16);
    /* sink NaN: none */
    void (*attn_softmax)(float *x, int n, float scale, float sink);
    /* run_attn_scores / run_attn_values of nh <= FWD_MAX_GROUP heads;
     * values: head_dim a multiple of 8, nh · head_dim at most
     * FWD_MAX_HEAD_DIM (it keeps 16 rows of head_dim floats per head on
     * the stack). */
    void (*attn_scores)(float *att, size_t att_stride, const gguf_half *q16, size_t q_stride,
                        int nh, const gguf_half *kc, int n_kv, int head_dim, size_t kv_dim);
    void (*attn_values)(float *out, size_t out_stride, const gguf_half *p16, size_t p_stride,
                        int nh, const gguf_half *vc, int n_kv, int head_dim, size_t kv_dim);
    /* y = f16(x) over n values, as gguf_f32_to_f16_row. */
    void (*to_f16)(const float *x, gguf_half *y, int64_t n);
    /* One-token versions, head_dim a multiple of 8. scores1 does the first
     * n_kv - n_kv % 8 positions and returns how many (the caller does the
     * rest). */
    int (*attn_scores1)(float *att, const gguf_half *q16, const gguf_half *kc, int n_kv,
                        int head_dim, size_t kv_dim);
    void (*attn_values1)(float *out, const gguf_half *p16, const gguf_half *vc, int n_kv,
                         int head_dim, size_t kv_dim);
    /* One token of one value head's Gated DeltaNet delta rule, as
     * rec_delta_step (recurrent.h) computes it, any S. */
    void (*delta_step)(float *M, float *out, const float *q, const float *k, const float *v,
                       float g, float beta, int S, float *d);
    /* The causal convolution as rec_conv (recurrent.h) computes it, for
     * kernels of fewer than 8 taps; returns 0, or -1 (nothing done) for a
     * longer kernel, which the scalar code then runs. */
    int (*conv)(float *y, const float *x, float *state, const float *w, int C, int K, int nb);
} fwd_simd_ops;
#define FWD_MAX_HEAD_DIM 512
/* The most heads of a GQA group one attention call takes. */
#define FWD_MAX_GROUP 4

/* The table of the best instruction set this CPU has (asked once, in
 * kernels.c), or the scalar one (every entry NULL) when scalar is set or
 * the CPU has none. */
const fwd_simd_ops *fwd_simd_select(bool scalar);

/* --- forward.c's attention steps, exposed for the unit tests ------------- */

/* Batch attention scores att[t] = k_t · q for t < n_kv: f16 keys kv_dim
 * apart from kc, the query q16 already rounded to f16, head_dim a multiple
 * of 16; products fused-added in 16 float lanes, then the lanes added
 * pairwise. f16 is the 65536-entry table of binary16 bits → float. */
void run_attn_scores(float *att, const float *f16, const gguf_half *q16, const gguf_half *kc,
                     int n_kv, int head_dim, size_t kv_dim);

/* run_attn_scores for nh (1..FWD_MAX_GROUP) query heads against the same
 * keys: head g's query at q16 + g · q_stride, its scores at att + g ·
 * att_stride, each bit for bit what run_attn_scores gives it alone. */
void run_attn_scores_group(float *att, size_t att_stride, const float *f16, const gguf_half *q16,
                           size_t q_stride, int nh, const gguf_half *kc, int n_kv, int head_dim,
                           size_t kv_dim);

/* The attention softmax of x[0..n) scaled by scale, in place, with the
 * reference backend's rounding (forward.c, attn_softmax); sink, unless NaN,
 * is gpt-oss's sink logit: it joins the max and the sum, not the output. */
void run_attn_softmax(float *x, int n, float scale, float sink);

/* Batch weighted values out[i] = Σ_t p_t v_t[i] for i < head_dim: f16
 * probabilities p16, f16 value rows kv_dim apart from vc; position t
 * feeds float lane t % 16, the lanes added pairwise at the end. */
void run_attn_values(float *out, const float *f16, const gguf_half *p16, const gguf_half *vc,
                     int n_kv, int head_dim, size_t kv_dim);

/* run_attn_values for nh heads over the same values (probabilities at p16 +
 * g · p_stride, outputs at out + g · out_stride), each bit for bit what
 * run_attn_values gives it alone. */
void run_attn_values_group(float *out, size_t out_stride, const float *f16, const gguf_half *p16,
                           size_t p_stride, int nh, const gguf_half *vc, int n_kv, int head_dim,
                           size_t kv_dim);

/* One token's scores and weighted values (generation), any head_dim: the
 * order of ggml_vec_dot_f16 on an AVX-512 machine, four 16-lane sums fed 64
 * elements at a time (scores: over the head's dims, the last head_dim % 64
 * products then added in double; values: over the positions, every one in
 * a lane since llama.cpp's cache view is whole 256s), folded as
 * (sum0 + sum2) + (sum1 + sum3), then the lanes added pairwise. */
void run_attn_scores1(float *att, const float *f16, const gguf_half *q16, const gguf_half *kc,
                      int n_kv, int head_dim, size_t kv_dim);
void run_attn_values1(float *out, const float *f16, const gguf_half *p16, const gguf_half *vc,
                      int n_kv, int head_dim, size_t kv_dim);

/* forward.c's scalar e^x (exp_poly), for the lanes the vector one leaves. */
float run_exp_poly(float x);

/* Rotates each head of x by the angles in cs: (a, b) → (a cos - b sin,
 * a sin + b cos), pairs (2i, 2i+1) or (i, i + n_rot/2) by layout. The one
 * body of both RoPE paths: forward.c's scalar one and forward_simd.c's,
 * which inlines it built for FMA (fmaf one instruction, not a libm call). */
static inline __attribute__((always_inline)) void run_rope_rotate(
    float *x, int n_heads, int head_dim, int n_rot, const float *cs, enum run_rope_layout layout)
{
    const int half = n_rot / 2;
    for (int h = 0; h < n_heads; h++) {
        float *v = x + (size_t)h * head_dim;
        for (int i = 0; i < half; i++) {
            const int i0 = layout == RUN_ROPE_NEOX ? i : 2 * i;
            const int i1 = layout == RUN_ROPE_NEOX ? i + half : 2 * i + 1;
            const float a = v[i0], b = v[i1], c = cs[2 * i], s = cs[2 * i + 1];
            v[i0] = fmaf(a, c, -(b * s));
            v[i1] = fmaf(a, s, b * c);
        }
    }
}

#endif
