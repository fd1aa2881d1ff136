/*
 * kernels_float.c — dot products of f32, f16 and bf16 weight rows with
 * activations of the same type (kernels.h).
 *
 * The reference adds the float products in double, as ggml's generic
 * ggml_vec_dot_f32/f16/bf16 do; the AVX2 kernels keep 32 float partial sums
 * (four registers of eight lanes, fused multiply-add) and add them at the
 * end. Products of two f16 or two bf16 values are exact in float, so the
 * two paths differ only by the rounding of the sums. Not for: conversion of
 * activations (kernels.c, libgguf's float16.c).
 */
#include <string.h>

#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include "kernels_impl.h"

/* ---------------------------------------------------------------------------
 * Scalar reference
 */

float dot_f32_ref(int64_t n, const void *w, const void *x)
{
    const float *a = w, *b = x;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += (double)(a[i] * b[i]);
    return (float)sum;
}

float dot_f16_ref(int64_t n, const void *w, const void *x)
{
    const gguf_half *a = w, *b = x;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += (double)(gguf_f16_to_f32(a[i]) * gguf_f16_to_f32(b[i]));
    return (float)sum;
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

/* Sum of the eight lanes of the four accumulators. */
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

/* nx activation rows (xs bytes apart) against one weight row, all of type
 * type (weights loaded once per group of 32): per row four accumulators,
 * then its tail; row k's arithmetic does not depend on nx. */
ALWAYS void float_rows(uint32_t type, int64_t n, const void *w, const void *x, size_t xs, int nx,
                       float *out)
{
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
 * activation rows (dotn). */
KERN_AVX2 float dot_f32_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    float_rows(GGUF_DT_F32, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_f32_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    float_rows(GGUF_DT_F32, n, w, x, xs, KERN_NX_FLOAT, out);
}

KERN_AVX2 float dot_f16_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    float_rows(GGUF_DT_F16, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_f16_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    float_rows(GGUF_DT_F16, n, w, x, xs, KERN_NX_FLOAT, out);
}

KERN_AVX2 float dot_bf16_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    float_rows(GGUF_DT_BF16, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_bf16_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    float_rows(GGUF_DT_BF16, n, w, x, xs, KERN_NX_FLOAT, out);
}
#endif
