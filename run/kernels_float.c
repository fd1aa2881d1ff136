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

#include "float16.h"
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
#include <immintrin.h>

/* Sum of the eight lanes of the four accumulators. */
KERN_AVX2 static float hsum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3)
{
    __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

/* Eight f16 or bf16 values widened to float. */
KERN_AVX2 static __m256 load_f16(const gguf_half *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

KERN_AVX2 static __m256 load_bf16(const uint16_t *p)
{
    /* bf16 is the high half of a float's bits */
    __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
}

KERN_AVX2 float dot_f32_avx2(int64_t n, const void *w, const void *x)
{
    const float *a = w, *b = x;
    __m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                      _mm256_setzero_ps() };
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++)
            acc[k] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8 * k), _mm256_loadu_ps(b + i + 8 * k),
                                     acc[k]);
    for (; i + 8 <= n; i += 8)
        acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc[0]);
    float sum = hsum4(acc[0], acc[1], acc[2], acc[3]);
    for (; i < n; i++)
        sum += a[i] * b[i];
    return sum;
}

KERN_AVX2 float dot_f16_avx2(int64_t n, const void *w, const void *x)
{
    const gguf_half *a = w, *b = x;
    __m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                      _mm256_setzero_ps() };
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++)
            acc[k] = _mm256_fmadd_ps(load_f16(a + i + 8 * k), load_f16(b + i + 8 * k), acc[k]);
    for (; i + 8 <= n; i += 8)
        acc[0] = _mm256_fmadd_ps(load_f16(a + i), load_f16(b + i), acc[0]);
    float sum = hsum4(acc[0], acc[1], acc[2], acc[3]);
    for (; i < n; i++)
        sum += gguf_f16_to_f32(a[i]) * gguf_f16_to_f32(b[i]);
    return sum;
}

KERN_AVX2 float dot_bf16_avx2(int64_t n, const void *w, const void *x)
{
    const uint16_t *a = w, *b = x;
    __m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                      _mm256_setzero_ps() };
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++)
            acc[k] = _mm256_fmadd_ps(load_bf16(a + i + 8 * k), load_bf16(b + i + 8 * k), acc[k]);
    for (; i + 8 <= n; i += 8)
        acc[0] = _mm256_fmadd_ps(load_bf16(a + i), load_bf16(b + i), acc[0]);
    float sum = hsum4(acc[0], acc[1], acc[2], acc[3]);
    for (; i < n; i++)
        sum += gguf_bf16_to_f32(a[i]) * gguf_bf16_to_f32(b[i]);
    return sum;
}
#endif
