/*
 * recurrent.c — the Gated DeltaNet operations (recurrent.h), scalar.
 *
 * Each loop repeats the reference's order of rounded operations (see the
 * header). The delta rule (4·S² per value head and token, most of a
 * prompt's time at S = 128 when it was scalar only) has a vector path in
 * forward_simd.c that repeats this order lane for lane; the rest is small
 * beside the matrix products.
 */
#include <math.h>
#include <string.h>

#include "forward_simd.h"
#include "recurrent.h"

float rec_dot(const float *x, const float *y, int n)
{
    const int np = n & ~63;
    float s = 0.0f;
    if (np) {
        float acc[4][16] = { { 0 } };
        for (int i = 0; i < np; i += 64)
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 16; l++)
                    acc[j][l] = fmaf(x[i + 16 * j + l], y[i + 16 * j + l], acc[j][l]);
        float c[16], c4[4];
        for (int l = 0; l < 16; l++)
            c[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l]);
        for (int l = 0; l < 8; l++)
            c[l] = c[l] + c[l + 8];
        for (int l = 0; l < 4; l++)
            c4[l] = c[l] + c[l + 4];
        s = (c4[0] + c4[2]) + (c4[1] + c4[3]);
    }
    return rec_sum_tail(s, x + np, y + np, n - np);
}

void rec_conv(float *y, const float *x, float *state, const float *w, int C, int K, int nb,
              float *win)
{
    for (int c = 0; c < C; c++) {
        float *st = state + (size_t)c * (size_t)(K - 1);
        const float *wc = w + (size_t)c * (size_t)K;
        for (int b = 0; b < nb; b++) {
            memcpy(win, st, (size_t)(K - 1) * sizeof *win);
            win[K - 1] = x[(size_t)b * C + c];
            y[(size_t)b * C + c] = rec_sum_tail(0.0f, win, wc, K);
            memmove(st, win + 1, (size_t)(K - 1) * sizeof *win);
        }
    }
}

void rec_silu_row(float *x, int n)
{
    int i = 0;
    for (; i + 15 < n; i += 16)
        for (int l = 0; l < 16; l++)
            x[i + l] = x[i + l] / (1.0f + run_exp_poly(0.0f - x[i + l]));
    for (; i < n; i++)
        x[i] = x[i] / (1.0f + expf(-x[i]));
}

void rec_sigmoid(float *x, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = 1.f / (1.f + expf(-x[i]));
}

float rec_softplus(float x)
{
    return x > 20.0f ? x : logf(1.0f + expf(x));
}

void rec_l2_norm(float *x, int n, float eps)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += (double)(x[i] * x[i]);
    const float scale = 1.0f / fmaxf(sqrtf((float)sum), eps);
    for (int i = 0; i < n; i++)
        x[i] *= scale;
}

void rec_delta_step(float *M, float *out, const float *q, const float *k, const float *v, float g,
                    float beta, int S, float *d)
{
    const float decay = expf(g);
    const size_t ss = (size_t)S * (size_t)S;
    for (size_t i = 0; i < ss; i++)
        M[i] *= decay;
    for (int j = 0; j < S; j++)
        d[j] = (v[j] - rec_dot(M + (size_t)j * S, k, S)) * beta;
    for (int j = 0; j < S; j++) {
        float *row = M + (size_t)j * S;
        for (int i = 0; i < S; i++)
            row[i] = fmaf(k[i], d[j], row[i]);
    }
    const float scale = 1.0f / sqrtf((float)S);
    for (int j = 0; j < S; j++)
        out[j] = rec_dot(M + (size_t)j * S, q, S) * scale;
}
