/*
 * float16.c — f16 and bf16 conversions (see float16.h).
 */
#include <ggufkit/quants.h>
#include "cpu.h"

#include <stdbool.h>
#include <string.h>

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ------------------------------------------------------------------------
 * binary16
 * ------------------------------------------------------------------------ */

static inline float f16_to_f32(gguf_half h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f) /* Inf / NaN: keep the payload */
        return bits_f32(sign | 0x7f800000 | man << 13);
    if (exp == 0) {
        /* zero or subnormal: man × 2^-24, exact in float */
        float v = (float)man * bits_f32(0x33800000); /* 2^-24 */
        return sign ? -v : v;
    }
    return bits_f32(sign | (exp + 112) << 23 | man << 13);
}

static inline gguf_half f32_to_f16(float f)
{
    uint32_t u = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t a = u & 0x7fffffff;
    if (a > 0x7f800000) /* NaN → the canonical quiet NaN, as ggml */
        return sign | 0x7e00;
    if (a >= 0x477ff000) /* rounds to ≥ 65520: overflow to Inf */
        return sign | 0x7c00;
    if (a < 0x38800000) {
        /* below the smallest normal half (2^-14): subnormal or zero.
         * Value in units of 2^-24, rounded to nearest even. */
        if (a < 0x33000000) /* < 2^-25: rounds to zero */
            return sign;
        uint32_t e = a >> 23, m = (a & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - e;                 /* 14..24 */
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        return sign | (uint16_t)q;
    }
    /* normal: rebias exponent, round mantissa from 23 to 10 bits (RNE); a
     * carry out of the mantissa correctly bumps the exponent. */
    uint32_t r = a - 0x38000000;                  /* exponent 127 → 15 */
    uint32_t q = r >> 13, rem = r & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (q & 1)))
        q++;
    return sign | (uint16_t)q;
}

/* ------------------------------------------------------------------------
 * bfloat16
 * ------------------------------------------------------------------------ */

static inline float bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

static inline uint16_t f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffff) > 0x7f800000) /* NaN: truncate, force quiet */
        return (uint16_t)((u >> 16) | 64);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}


/* ------------------------------------------------------------------------
 * Exported scalars and rows (the rows let the compiler inline the loop)
 * ------------------------------------------------------------------------ */

float gguf_f16_to_f32(gguf_half h) { return f16_to_f32(h); }
gguf_half gguf_f32_to_f16(float f) { return f32_to_f16(f); }
float gguf_bf16_to_f32(uint16_t h) { return bf16_to_f32(h); }
uint16_t gguf_f32_to_bf16(float f) { return f32_to_bf16(f); }

#if GGUF_X86
#include <immintrin.h>

/* Eight at a time with the F16C instruction, which is exact for every
 * number. It quiets a signalling NaN where f16_to_f32 keeps the payload as
 * is, so a group of eight holding any NaN takes the scalar path. */
GGUF_TARGET_AVX2_F16C static int64_t f16_to_f32_f16c(const gguf_half *x, float *y,
                                                                    int64_t n)
{
    const __m128i magnitude = _mm_set1_epi16(0x7fff), inf = _mm_set1_epi16(0x7c00);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(x + i));
        /* |h| > inf as signed 16-bit: only NaNs */
        if (_mm_movemask_epi8(_mm_cmpgt_epi16(_mm_and_si128(h, magnitude), inf)))
            for (int k = 0; k < 8; k++)
                y[i + k] = f16_to_f32(x[i + k]);
        else
            _mm256_storeu_ps(y + i, _mm256_cvtph_ps(h));
    }
    return i;
}

/* f32 → f16 eight at a time: F16C's conversion with round-to-nearest-even
 * gives f32_to_f16's bits for every number, subnormals and overflow to Inf
 * included; a group holding a NaN (canonical 0x7e00 here, payload-keeping
 * there) takes the scalar path. */
GGUF_TARGET_AVX2_F16C static int64_t f32_to_f16_f16c(const float *x, gguf_half *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
            for (int k = 0; k < 8; k++)
                y[i + k] = f32_to_f16(x[i + k]);
        else
            _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    return i;
}

/* bf16 → f32 sixteen at a time: the bits moved up 16, as bf16_to_f32. */
GGUF_TARGET_AVX2_F16C static int64_t bf16_to_f32_avx2(const uint16_t *x, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i h = _mm256_loadu_si256((const __m256i *)(x + i));
        const __m256i lo = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(h)), 16);
        const __m256i hi = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(h, 1)), 16);
        _mm256_storeu_si256((__m256i *)(y + i), lo);
        _mm256_storeu_si256((__m256i *)(y + i + 8), hi);
    }
    return i;
}

/* f32 → bf16 sixteen at a time: f32_to_bf16's rounding (add 0x7fff plus
 * the lowest kept bit, keep the top 16) in integer lanes; a group holding a
 * NaN takes the scalar path. */
GGUF_TARGET_AVX2_F16C static int64_t f32_to_bf16_avx2(const float *x, uint16_t *y, int64_t n)
{
    const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
        if (_mm256_movemask_ps(_mm256_or_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q),
                                            _mm256_cmp_ps(b, b, _CMP_UNORD_Q)))) {
            for (int k = 0; k < 16; k++)
                y[i + k] = f32_to_bf16(x[i + k]);
            continue;
        }
        __m256i ua = _mm256_castps_si256(a), ub = _mm256_castps_si256(b);
        ua = _mm256_srli_epi32(_mm256_add_epi32(ua, _mm256_add_epi32(bias, _mm256_and_si256(
                                                                 _mm256_srli_epi32(ua, 16), one))), 16);
        ub = _mm256_srli_epi32(_mm256_add_epi32(ub, _mm256_add_epi32(bias, _mm256_and_si256(
                                                                 _mm256_srli_epi32(ub, 16), one))), 16);
        /* packus works per 128-bit lane: put the halves back in order */
        const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(ua, ub), 0xd8);
        _mm256_storeu_si256((__m256i *)(y + i), p);
    }
    return i;
}

#else
static int64_t f16_to_f32_f16c(const gguf_half *x, float *y, int64_t n) { (void)x, (void)y, (void)n; return 0; }
static int64_t f32_to_f16_f16c(const float *x, gguf_half *y, int64_t n) { (void)x, (void)y, (void)n; return 0; }
static int64_t bf16_to_f32_avx2(const uint16_t *x, float *y, int64_t n) { (void)x, (void)y, (void)n; return 0; }
static int64_t f32_to_bf16_avx2(const float *x, uint16_t *y, int64_t n) { (void)x, (void)y, (void)n; return 0; }
#endif

void gguf_f16_to_f32_row(const gguf_half *x, float *y, int64_t n)
{
    int64_t i = gguf_cpu_avx2_f16c() ? f16_to_f32_f16c(x, y, n) : 0;
    for (; i < n; i++)
        y[i] = f16_to_f32(x[i]);
}

void gguf_f32_to_f16_row(const float *x, gguf_half *y, int64_t n)
{
    int64_t i = gguf_cpu_avx2_f16c() ? f32_to_f16_f16c(x, y, n) : 0;
    for (; i < n; i++)
        y[i] = f32_to_f16(x[i]);
}

void gguf_bf16_to_f32_row(const uint16_t *x, float *y, int64_t n)
{
    int64_t i = gguf_cpu_avx2_f16c() ? bf16_to_f32_avx2(x, y, n) : 0;
    for (; i < n; i++)
        y[i] = bf16_to_f32(x[i]);
}

void gguf_f32_to_bf16_row(const float *x, uint16_t *y, int64_t n)
{
    int64_t i = gguf_cpu_avx2_f16c() ? f32_to_bf16_avx2(x, y, n) : 0;
    for (; i < n; i++)
        y[i] = f32_to_bf16(x[i]);
}
