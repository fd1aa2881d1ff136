/*
 * kernels_float.c — dot products of f32, f16 and bf16 weight rows with
 * activations of the same type (kernels.h).
 *
 * f32 and f16 products add in the order ggml's CPU backend adds them on an
 * AVX-512 machine, which depends on the product's shape:
 *  - one activation row (generation: ggml_vec_dot_f32/_f16): four 16-lane
 *    partial sums fed 64 elements at a time (elements 64s + 16j + l into
 *    sum j, lane l, by fused multiply-adds), then sum0 + sum2 and
 *    sum1 + sum3, those two added, the 16 lanes added pairwise (sum16_reduce, common/sum16.h);
 *    the last n % 64 products added one by one after that (f32: each
 *    product rounded, then added to the float sum, as ggml's leftover
 *    loop is compiled without contraction — Gemma 4's 32-wide per-layer
 *    projection is all leftover; f16: exact products added in double);
 *  - a batch (tinyBLAS, kern_batch_order): one 16-lane sum fed 16 elements
 *    at a time, then sum16_reduce.
 * sum16_reduce adds lanes i and i + 8, then i and i + 4, then (0 + 2) + (1 + 3),
 * as _mm512_reduce_add_ps does. Products of two f16 values are exact in
 * float. bf16 products are added in double (the scalar reference) or in
 * 32 float lanes (AVX2), whatever the shape.
 *
 * The scalar functions define the bits; the AVX2 ones keep each 16-lane
 * sum as two 8-lane registers and give the same bits. Not for: conversion
 * of activations (kernels.c, libgguf's float16.c).
 */
#include <math.h>
#include <string.h>

#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include "kernels.h"
#include "kernels_impl.h"

/* ---------------------------------------------------------------------------
 * Scalar reference
 */

/* Element i of row p (f32 or f16) as a float. */
static float elem_ref(uint32_t type, const void *p, int64_t i)
{
    return type == GGUF_DT_F16 ? gguf_f16_to_f32(((const gguf_half *)p)[i])
                               : ((const float *)p)[i];
}

/* One activation row: ggml_vec_dot_f32 / _f16's order (header). */
static float vec_order_ref(uint32_t type, int64_t n, const void *w, const void *x)
{
    float acc[4][16] = { { 0 } };
    int64_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < 16; l++)
                acc[j][l] = fmaf(elem_ref(type, w, i + 16 * j + l), elem_ref(type, x, i + 16 * j + l),
                                 acc[j][l]);
    for (int l = 0; l < 16; l++) {
        acc[0][l] += acc[2][l];
        acc[1][l] += acc[3][l];
        acc[0][l] += acc[1][l];
    }
    float sum = sum16_reduce(acc[0]);
    if (type == GGUF_DT_F16) {
        double d = sum;
        for (; i < n; i++)
            d += (double)(elem_ref(type, w, i) * elem_ref(type, x, i));
        return (float)d;
    }
    for (; i < n; i++) {
        const float p = elem_ref(type, w, i) * elem_ref(type, x, i);
        sum += p;
    }
    return sum;
}

/* A batch (n a multiple of 16): tinyBLAS's one 16-lane sum. */
static float batch_order_ref(uint32_t type, int64_t n, const void *w, const void *x)
{
    float acc[16] = { 0 };
    for (int64_t i = 0; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; l++)
            acc[l] = fmaf(elem_ref(type, w, i + l), elem_ref(type, x, i + l), acc[l]);
    return sum16_reduce(acc);
}

float dot_f32_ref(int64_t n, const void *w, const void *x)
{
    return vec_order_ref(GGUF_DT_F32, n, w, x);
}

float dot_f16_ref(int64_t n, const void *w, const void *x)
{
    return vec_order_ref(GGUF_DT_F16, n, w, x);
}

float batch_dot_f32_ref(int64_t n, const void *w, const void *x)
{
    return batch_order_ref(GGUF_DT_F32, n, w, x);
}

float batch_dot_f16_ref(int64_t n, const void *w, const void *x)
{
    return batch_order_ref(GGUF_DT_F16, n, w, x);
}

float dot_bf16_ref(int64_t n, const void *w, const void *x)
{
    const uint16_t *a = w, *b = x;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += (double)(gguf_bf16_to_f32(a[i]) * gguf_bf16_to_f32(b[i]));
    return (float)sum;
}

/* ---------------------------------------------------------------------------
 * AVX2 + FMA + F16C
 */
#ifdef KERN_X86
#include "kernels_simd.h"

/* Sum of the eight lanes of the four accumulators (bf16). */
ALWAYS float hsum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3)
{
    __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

/* Eight f16 or bf16 values widened to float. */
ALWAYS __m256 load_f16(const gguf_half *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

ALWAYS __m256 load_bf16(const uint16_t *p)
{
    /* bf16 is the high half of a float's bits */
    __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
}

ALWAYS __m256 load_f32(const float *p)
{
    return _mm256_loadu_ps(p);
}

/* The kernels below take the type (GGUF_DT_F32, _F16 or _BF16) as a
 * constant argument: each switch folds away in the named wrappers. */

/* Elements i..i+7 of row p as floats. */
ALWAYS __m256 load8(uint32_t type, const void *p, int64_t i)
{
    switch (type) {
    case GGUF_DT_F16: return load_f16((const gguf_half *)p + i);
    case GGUF_DT_BF16: return load_bf16((const uint16_t *)p + i);
    default: return load_f32((const float *)p + i);
    }
}

/* Element i of row p as a float. */
ALWAYS float elem(uint32_t type, const void *p, int64_t i)
{
    switch (type) {
    case GGUF_DT_F16: return gguf_f16_to_f32(((const gguf_half *)p)[i]);
    case GGUF_DT_BF16: return gguf_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

/* nx activation rows (xs bytes apart) against one weight row in the
 * one-row order (vec_order_ref); each 16-lane sum j is acc[k][2j] (lanes
 * 0..7) and acc[k][2j + 1] (8..15). */
ALWAYS void vec_rows(uint32_t type, int64_t n, const void *w, const void *x, size_t xs, int nx,
                     float *out)
{
    __m256 acc[KERN_NX_FLOAT][8];
    for (int k = 0; k < nx; k++)
        for (int j = 0; j < 8; j++)
            acc[k][j] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int j = 0; j < 8; j++) {
            const __m256 wv = load8(type, w, i + 8 * j);
            for (int k = 0; k < nx; k++) {
                const void *b = (const uint8_t *)x + k * xs;
                acc[k][j] = _mm256_fmadd_ps(wv, load8(type, b, i + 8 * j), acc[k][j]);
            }
        }
    const int64_t tail = i;
    for (int k = 0; k < nx; k++) {
        const void *b = (const uint8_t *)x + k * xs;
        __m256 *a = acc[k];
        /* sum0 += sum2, sum1 += sum3, sum0 += sum1, by halves */
        a[0] = _mm256_add_ps(a[0], a[4]);
        a[1] = _mm256_add_ps(a[1], a[5]);
        a[2] = _mm256_add_ps(a[2], a[6]);
        a[3] = _mm256_add_ps(a[3], a[7]);
        a[0] = _mm256_add_ps(a[0], a[2]);
        a[1] = _mm256_add_ps(a[1], a[3]);
        float sum = hsum16(a[0], a[1]);
        if (type == GGUF_DT_F16) {
            double d = sum;
            for (i = tail; i < n; i++)
                d += (double)(elem(type, w, i) * elem(type, b, i));
            sum = (float)d;
        } else {
            for (i = tail; i < n; i++) {
                const float p = elem(type, w, i) * elem(type, b, i);
                sum += p;
            }
        }
        out[k] = sum;
    }
}

/* The batch order (batch_order_ref; n a multiple of 16). */
ALWAYS void batch_rows(uint32_t type, int64_t n, const void *w, const void *x, size_t xs, int nx,
                       float *out)
{
    __m256 lo[KERN_NX_FLOAT], hi[KERN_NX_FLOAT];
    for (int k = 0; k < nx; k++)
        lo[k] = hi[k] = _mm256_setzero_ps();
    for (int64_t i = 0; i + 16 <= n; i += 16) {
        const __m256 w0 = load8(type, w, i), w1 = load8(type, w, i + 8);
        for (int k = 0; k < nx; k++) {
            const void *b = (const uint8_t *)x + k * xs;
            lo[k] = _mm256_fmadd_ps(w0, load8(type, b, i), lo[k]);
            hi[k] = _mm256_fmadd_ps(w1, load8(type, b, i + 8), hi[k]);
        }
    }
    for (int k = 0; k < nx; k++)
        out[k] = hsum16(lo[k], hi[k]);
}

/* bf16: 32 float partial sums (four registers of eight lanes), added at
 * the end; row k's arithmetic does not depend on nx. */
ALWAYS void bf16_rows(int64_t n, const void *w, const void *x, size_t xs, int nx, float *out)
{
    const uint32_t type = GGUF_DT_BF16;
    __m256 acc[KERN_NX_FLOAT][4];
    for (int k = 0; k < nx; k++)
        for (int j = 0; j < 4; j++)
            acc[k][j] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int j = 0; j < 4; j++) {
            const __m256 wv = load8(type, w, i + 8 * j);
            for (int k = 0; k < nx; k++) {
                const void *b = (const uint8_t *)x + k * xs;
                acc[k][j] = _mm256_fmadd_ps(wv, load8(type, b, i + 8 * j), acc[k][j]);
            }
        }
    const int64_t i8 = i;
    for (int k = 0; k < nx; k++) {
        const void *b = (const uint8_t *)x + k * xs;
        for (i = i8; i + 8 <= n; i += 8)
            acc[k][0] = _mm256_fmadd_ps(load8(type, w, i), load8(type, b, i), acc[k][0]);
        float sum = hsum4(acc[k][0], acc[k][1], acc[k][2], acc[k][3]);
        for (; i < n; i++)
            sum += elem(type, w, i) * elem(type, b, i);
        out[k] = sum;
    }
}

/* The entry points: one pair (dot), one weight row × KERN_NX_FLOAT
 * activation rows (dotn), in the one-row order, and the same in the batch
 * order (batch_dot, batch_dotn). */
KERN_AVX2 float dot_f32_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    vec_rows(GGUF_DT_F32, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_f32_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    vec_rows(GGUF_DT_F32, n, w, x, xs, KERN_NX_FLOAT, out);
}

KERN_AVX2 float dot_f16_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    vec_rows(GGUF_DT_F16, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_f16_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    vec_rows(GGUF_DT_F16, n, w, x, xs, KERN_NX_FLOAT, out);
}

KERN_AVX2 float batch_dot_f32_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    batch_rows(GGUF_DT_F32, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void batch_dotn_f32_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    batch_rows(GGUF_DT_F32, n, w, x, xs, KERN_NX_FLOAT, out);
}

KERN_AVX2 float batch_dot_f16_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    batch_rows(GGUF_DT_F16, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void batch_dotn_f16_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    batch_rows(GGUF_DT_F16, n, w, x, xs, KERN_NX_FLOAT, out);
}

KERN_AVX2 float dot_bf16_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    bf16_rows(n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_bf16_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    bf16_rows(n, w, x, xs, KERN_NX_FLOAT, out);
}
#endif
