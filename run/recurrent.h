/*
 * recurrent.h — the operations of a Gated DeltaNet layer (qwen35, qwen35moe)
 * that carry state from token to token: the causal depthwise convolution
 * with its window of past inputs, the gated delta rule with its S_v × S_v
 * matrix per value head, and the element-wise functions around them.
 *
 * Every function is scalar and computes what llama.cpp e21cdc11's CPU
 * backend (ggml-cpu ops.cpp, vec.cpp, built -march=native -O3 gnu++17 on an
 * AVX-512 machine) computes, operation for operation: ggml_ssm_conv,
 * ggml_gated_delta_net (the fused operation llama.cpp picks on the CPU for
 * one token and for a whole prompt alike, a recurrence token by token — so
 * a prompt gives the same bits in one batch or token by token),
 * ggml_l2_norm, ggml_silu, ggml_sigmoid, ggml_softplus. Where the compiler
 * contracted a multiply-add (the convolution's and the delta rule's sums and
 * updates) fmaf does the same.
 *
 * Not for: the matrix products around them (forward.c, kernels.h) or the
 * attention layers (forward.c).
 */
#ifndef RUN_RECURRENT_H
#define RUN_RECURRENT_H

#include <math.h>

/* The part of a sum the reference's compiled loop leaves after its vector
 * accumulators: 16 products at a time while 16 remain, then 8 when 8
 * remain, each product rounded and added to s in order; the last < 8 as
 * fused multiply-adds (ggml_vec_dot_f32's leftovers, ggml_ssm_conv's
 * row sum). Inline, so that the AVX2 delta rule (forward_simd.c) repeats
 * it built for FMA (fmaf one instruction, not a libm call). */
static inline __attribute__((always_inline)) float rec_sum_tail(float s, const float *x,
                                                                const float *y, int n)
{
    /* each product rounded on its own: a statement of its own, which no
     * compiler contracts into a fused multiply-add */
    int i = 0;
    for (; n - i >= 16; i += 16)
        for (int l = 0; l < 16; l++) {
            const float p = x[i + l] * y[i + l];
            s += p;
        }
    if (n - i >= 8) {
        for (int l = 0; l < 8; l++) {
            const float p = x[i + l] * y[i + l];
            s += p;
        }
        i += 8;
    }
    for (; i < n; i++)
        s = fmaf(x[i], y[i], s);
    return s;
}

/* ggml_vec_dot_f32 of n floats as the reference's build computes it: 64 at a
 * time in four 16-lane fused multiply-add accumulators, folded
 * (a0 + a2) + (a1 + a3), halves added down to one float; then the rest,
 * 16 or 8 products at a time rounded and added in order, the last < 8 as
 * fused multiply-adds. */
float rec_dot(const float *x, const float *y, int n);

/* The causal depthwise convolution of nb tokens over C channels with a
 * kernel of K taps (w: C rows of K; ggml_ssm_conv), x (nb, C) the inputs,
 * y (nb, C) the outputs, state (C, K - 1) each channel's K - 1 previous
 * inputs, oldest first (zeros at the start of a sequence), updated to the
 * last K - 1; win is scratch of K. y may not alias x. */
void rec_conv(float *y, const float *x, float *state, const float *w, int C, int K, int nb,
              float *win);

/* ggml_silu over one row of n: x / (1 + e^-x), 16 at a time with the vector
 * exponential (run_exp_poly), the rest with libm's expf. */
void rec_silu_row(float *x, int n);

/* 1 / (1 + expf(-x)) over n values (ggml_sigmoid). */
void rec_sigmoid(float *x, int n);

/* x > 20 ? x : logf(1 + expf(x)) (ggml_softplus). */
float rec_softplus(float x);

/* ggml_l2_norm of one row: x · 1 / max(sqrt(Σx² in double, as float), eps). */
void rec_l2_norm(float *x, int n, float eps);

/* One token of the gated delta rule for one value head (ggml_gated_delta_net):
 * the head's state M (S × S, M[j·S + i] = S[i][j]) decays by expf(g), then
 * d[j] = (v[j] - M[j]·k) · beta, M[j] += k · d[j], out[j] = (M[j]·q) · 1/sqrt(S).
 * q and k are l2-normalised already; d is scratch of S. */
void rec_delta_step(float *M, float *out, const float *q, const float *k, const float *v, float g,
                    float beta, int S, float *d);

#endif
