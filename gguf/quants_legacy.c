/*
 * quants_legacy.c — the 32-element block formats: q4_0, q4_1, q5_0, q5_1, q8_0.
 *
 * Each block stores one f16 scale d (and for the _1 formats an f16 offset
 * m) plus one small integer level q per element:
 *
 *   q4_0, q5_0, q8_0   x ≈ d * (q - bias)    bias 8, 16 (q8_0: q is signed)
 *   q4_1, q5_1         x ≈ d * q + m
 *
 * The quantizers reproduce ggml's bytes exactly (quants.h), so every float
 * operation below happens in ggml's order and precision: single-precision
 * sums accumulated left to right, no fused multiply-add, ggml's rounding
 * (truncation after +0.5, roundf, or round-half-even) at the same places.
 * Where a comment says "as ggml", changing the expression changes bytes.
 *
 * Not for: the k-quants (quants_k.c) or dispatch on type ids (quants.c).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include <ggufkit/quants.h>
#include "cpu.h"
#include "quants_lanes.h"

/* A fused multiply-add rounds once instead of twice and changes bytes.
 * gcc fuses only in GNU mode (-std=gnu11 with an FMA -march), never with
 * the -std=c11 we build with; clang fuses within an expression whenever the
 * target has FMA unless told not to, as here. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* All five formats share the block length, so the level arrays and helpers
 * below work on blocks of QK values. */
#define QK 32
_Static_assert(GGUF_QK4_0 == QK && GGUF_QK4_1 == QK && GGUF_QK5_0 == QK && GGUF_QK5_1 == QK && GGUF_QK8_0 == QK,
               "legacy formats use 32-element blocks");

/* ========================================================================
 * Scalar building blocks
 * ======================================================================== */

/* 1/d, or 0 for a zero scale so an all-zero block quantizes to level 0
 * instead of NaN. (A NaN d is "nonzero", as in ggml.) */
static inline float inverse_or_zero(float d)
{
    return d != 0.0f ? 1.0f / d : 0.0f;
}

/* A level computed in float, truncated toward zero as ggml's (u)int8_t
 * casts do. Finite levels are always small; they are non-finite only when
 * the block is all subnormals and d is so small that 1/d = inf, making x/d
 * ±inf or NaN. Converting those is undefined in C; ggml's x86 build gets
 * cvttss2si's 0x80000000, whose low byte is 0, so 0 is returned explicitly:
 * the same bytes as ggml, on any compiler, without undefined behaviour. */
static inline int float_to_level(float v)
{
    return fabsf(v) < 256.0f ? (int)v : 0;
}



/* ========================================================================
 * Level packing: 4 low bits two per byte, fifth bits in a 32-bit mask
 * ======================================================================== */

/* Byte j holds element j in its low nibble and element j + 16 in its high
 * one (ggml's layout: the two halves of the block interleaved). */
static void pack_nibbles(const uint8_t q[QK], uint8_t qs[QK / 2])
{
    for (int j = 0; j < QK / 2; j++)
        qs[j] = (uint8_t)((q[j] & 0x0F) | (q[j + QK / 2] & 0x0F) << 4);
}

/* Bit j of the little-endian 32-bit qh is bit 4 of element j. */
static void pack_fifth_bits(const uint8_t q[QK], uint8_t qh[4])
{
    uint32_t mask = 0;
    for (int j = 0; j < QK; j++)
        mask |= (uint32_t)(q[j] >> 4 & 1) << j;
    for (int k = 0; k < 4; k++)
        qh[k] = (uint8_t)(mask >> 8 * k);
}

/* Inverse of the two packers; qh is NULL for the 4-bit formats. */
static void unpack_levels(const uint8_t qs[QK / 2], const uint8_t *qh, uint8_t q[QK])
{
    for (int j = 0; j < QK / 2; j++) {
        q[j] = qs[j] & 0x0F;
        q[j + QK / 2] = qs[j] >> 4;
    }
    if (!qh)
        return;
    uint32_t mask = (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 |
                    (uint32_t)qh[3] << 24;
    for (int j = 0; j < QK; j++)
        q[j] |= (uint8_t)((mask >> j & 1) << 4);
}

/* ========================================================================
 * Reference quantizers (ggml's quantize_row_*_ref)
 * ======================================================================== */

/* Scale-only block with levels 0 .. 2*bias-1 (q4_0: bias 8, q5_0: 16).
 * d = max / -bias maps the signed extreme to level 0; each level is
 * trunc(x/d + bias + 0.5), i.e. round half up, clamped at the top because
 * the extreme's mirror image (+|max|) would land on 2*bias. Returns d. */
static float symmetric_levels(const float *x, int bias, uint8_t q[QK])
{
    const float d = signed_absmax(x, QK) / (float)-bias;
    const float id = inverse_or_zero(d);
    const float offset = (float)bias + 0.5f;
    /* x*id lies in [-bias, bias] up to rounding: the sum is ≥ 0 or a hair
     * below, which truncates to 0 as well. */
    for (int j = 0; j < QK; j++) {
        int l = float_to_level(x[j] * id + offset);
        q[j] = (uint8_t)(l < 2 * bias - 1 ? l : 2 * bias - 1);
    }
    return d;
}

/* q4_0 the reference way, n values (whole blocks). */
static void q4_0_blocks(const float *x, gguf_block_q4_0 *b, int64_t n)
{
    uint8_t q[QK];
    for (int64_t i = 0; i < n / QK; i++, x += QK) {
        b[i].d = gguf_f32_to_f16(symmetric_levels(x, 8, q));
        pack_nibbles(q, b[i].qs);
    }
}

/* Scale-and-offset block with levels 0 .. nmax (q4_1: 15, q5_1: 31): the
 * block's [min, max] is split into nmax equal steps, d = (max - min)/nmax,
 * and each level is trunc((x - min)/d + 0.5). Returns d, min in *min_out. */
static float affine_levels(const float *x, int nmax, uint8_t q[QK], float *min_out)
{
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < QK; j++) {
        if (x[j] < min)
            min = x[j];
        if (x[j] > max)
            max = x[j];
    }
    const float d = (max - min) / (float)nmax;
    const float id = inverse_or_zero(d);
    /* (x - min)*id is within [0, nmax] up to rounding, so the clamp at nmax
     * (explicit in ggml's q4_1) never triggers for q5_1, which has none. */
    for (int j = 0; j < QK; j++) {
        int l = float_to_level((x[j] - min) * id + 0.5f);
        q[j] = (uint8_t)(l < nmax ? l : nmax);
    }
    *min_out = min;
    return d;
}


void gguf_q5_0_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_q5_0 *b = y;
    uint8_t q[QK];
    for (int64_t i = 0; i < n / QK; i++, x += QK) {
        b[i].d = gguf_f32_to_f16(symmetric_levels(x, 16, q));
        pack_nibbles(q, b[i].qs);
        pack_fifth_bits(q, b[i].qh);
    }
}

void gguf_q4_1_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_q4_1 *b = y;
    uint8_t q[QK];
    float min;
    for (int64_t i = 0; i < n / QK; i++, x += QK) {
        b[i].d = gguf_f32_to_f16(affine_levels(x, 15, q, &min));
        b[i].m = gguf_f32_to_f16(min);
        pack_nibbles(q, b[i].qs);
    }
}

void gguf_q5_1_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_q5_1 *b = y;
    uint8_t q[QK];
    float min;
    for (int64_t i = 0; i < n / QK; i++, x += QK) {
        b[i].d = gguf_f32_to_f16(affine_levels(x, 31, q, &min));
        b[i].m = gguf_f32_to_f16(min);
        pack_nibbles(q, b[i].qs);
        pack_fifth_bits(q, b[i].qh);
    }
}

/* float_to_level(roundf(v)) without the libm call (baseline x86-64 has no
 * rounding instruction, and roundf is most of q8_0's time): truncate, then
 * step away from zero when the dropped fraction is at least one half. The
 * fraction v - trunc(v) is exact for |v| < 2^23, so ties go away from zero
 * exactly as roundf's. */
static inline int round_level_away(float v)
{
    if (!(fabsf(v) < 256.0f))
        return float_to_level(v);
    int i = (int)v;
    float frac = v - (float)i;
    /* comparisons, not branches: the fraction is random in real data */
    return i + (frac >= 0.5f) - (frac <= -0.5f);
}

/* q8_0: d = amax/127 and q = round(x/d), ties away from zero (roundf, as
 * ggml). The amax loop keeps ggml's MAX(amax, |x|) form rather than
 * signed_absmax's: identical on finite input, but a NaN propagates the
 * same way ggml's does. */
/* One q8_0 block the scalar way (the reference for the lane version). */
static void q8_0_block(const float *x, gguf_block_q8_0 *b)
{
    float amax = 0.0f;
    for (int j = 0; j < QK; j++)
        amax = amax > fabsf(x[j]) ? amax : fabsf(x[j]);
    const float d = amax / 127.0f;
    const float id = inverse_or_zero(d);
    b->d = gguf_f32_to_f16(d);
    for (int j = 0; j < QK; j++)
        b->qs[j] = (int8_t)round_level_away(x[j] * id);
}

#if GGUF_X86
#include <immintrin.h>

/* The largest |x| of a block's 32 values, and whether any is NaN. */
GGUF_TARGET_AVX2_F16C static inline float q8_0_amax(const float *x, __m256 v[4], int *nan)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 m = _mm256_setzero_ps(), un = _mm256_setzero_ps();
    for (int k = 0; k < 4; k++) {
        v[k] = _mm256_loadu_ps(x + 8 * k);
        un = _mm256_or_ps(un, _mm256_cmp_ps(v[k], v[k], _CMP_UNORD_Q));
        m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[k]));
    }
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    *nan = _mm256_movemask_ps(un);
    return _mm_cvtss_f32(h);
}

/* A block's 32 levels round(v * id), ties away from zero (truncate, then
 * step away from zero when the dropped fraction is at least one half:
 * exact, as round_level_away), as int8 in order. */
GGUF_TARGET_AVX2_F16C static inline void q8_0_levels(const __m256 v[4], float id, int8_t *qs)
{
    const __m256 vid = _mm256_set1_ps(id), half = _mm256_set1_ps(0.5f), mhalf = _mm256_set1_ps(-0.5f);
    __m256i t[4];
    for (int k = 0; k < 4; k++) {
        const __m256 s = _mm256_mul_ps(v[k], vid);
        __m256i q = _mm256_cvttps_epi32(s);
        const __m256 frac = _mm256_sub_ps(s, _mm256_cvtepi32_ps(q));
        q = _mm256_sub_epi32(q, _mm256_castps_si256(_mm256_cmp_ps(frac, half, _CMP_GE_OQ)));
        t[k] = _mm256_add_epi32(q, _mm256_castps_si256(_mm256_cmp_ps(frac, mhalf, _CMP_LE_OQ)));
    }
    /* |levels| ≤ 127: the saturating packs change nothing; they interleave
     * per 128-bit lane, which the permutation undoes */
    const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(t[0], t[1]), _mm256_packs_epi32(t[2], t[3]));
    _mm256_storeu_si256((__m256i *)qs,
                        _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

/* q8_0's arithmetic is element-wise except amax, and a maximum does not
 * depend on the order it is taken in. Eight blocks at a time share the
 * division d = amax/127, 1/d and the f16 conversion of d (F16C rounds as
 * gguf_f32_to_f16 for every number but NaN). A block with a NaN or an
 * infinite value, or so tiny that 1/d overflows, takes the scalar path. */
GGUF_TARGET_AVX2_F16C static void q8_0_blocks_avx2(const float *x, gguf_block_q8_0 *b, int64_t nb)
{
    int64_t i = 0;
    for (; i + 8 <= nb; i += 8) {
        _Alignas(32) float amax[8], d[8], id[8];
        int odd = 0;
        for (int k = 0; k < 8; k++) {
            __m256 v[4];
            int nan;
            amax[k] = q8_0_amax(x + (i + k) * QK, v, &nan);
            odd |= nan | !(amax[k] <= 3.402823466e38f);
        }
        const __m256 vd = _mm256_div_ps(_mm256_load_ps(amax), _mm256_set1_ps(127.0f));
        const __m256 nz = _mm256_cmp_ps(vd, _mm256_setzero_ps(), _CMP_NEQ_OQ);
        const __m256 vid = _mm256_and_ps(nz, _mm256_div_ps(_mm256_set1_ps(1.0f), vd));
        _mm256_store_ps(d, vd);
        _mm256_store_ps(id, vid);
        _Alignas(16) uint16_t dh[8];
        _mm_store_si128((__m128i *)dh, _mm256_cvtps_ph(vd, _MM_FROUND_TO_NEAREST_INT));
        for (int k = 0; k < 8; k++) {
            const float *xb = x + (i + k) * QK;
            if (odd || !(id[k] < 1e30f)) {
                q8_0_block(xb, &b[i + k]);
                continue;
            }
            __m256 v[4];
            for (int j = 0; j < 4; j++)
                v[j] = _mm256_loadu_ps(xb + 8 * j);
            b[i + k].d = dh[k];
            q8_0_levels(v, id[k], b[i + k].qs);
        }
    }
    for (; i < nb; i++)
        q8_0_block(x + i * QK, &b[i]);
}

/* f16 → q8_0, a block at a time from the halves: converted by F16C
 * (exact), amax, non-finite test, then q8_0_levels. Every f16 amax gives a
 * finite 1/d (the least, 2^-24, gives about 2.1e9), so no block needs the
 * scalar path; a non-finite value ends the row (false). */
GGUF_TARGET_AVX2_F16C static bool q8_0_f16_avx2(const uint16_t *x, gguf_block_q8_0 *b, int64_t nb,
                                                 float *amax_row)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 top = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++, x += QK) {
        __m256 v[4], m = _mm256_setzero_ps();
        __m256i e = _mm256_setzero_si256();
        const __m256i ex = _mm256_set1_epi16(0x7c00);
        for (int k = 0; k < 2; k++) {
            const __m256i h = _mm256_loadu_si256((const __m256i *)(x + 16 * k));
            /* a half is NaN or infinite when its exponent is all ones */
            e = _mm256_or_si256(e, _mm256_cmpeq_epi16(_mm256_and_si256(h, ex), ex));
            v[2 * k] = _mm256_cvtph_ps(_mm256_castsi256_si128(h));
            v[2 * k + 1] = _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1));
        }
        if (!_mm256_testz_si256(e, e))
            return false;
        for (int k = 0; k < 4; k++)
            m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[k]));
        top = _mm256_max_ps(top, m);
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        const __m128 d = _mm_div_ss(h, _mm_set_ss(127.0f));
        const float df = _mm_cvtss_f32(d);
        b[i].d = (uint16_t)_mm_extract_epi16(_mm_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT), 0);
        q8_0_levels(v, df != 0.0f ? 1.0f / df : 0.0f, b[i].qs);
    }
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(top), _mm256_extractf128_ps(top, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    *amax_row = _mm_cvtss_f32(h);
    return true;
}

/* q4_0, eight blocks at a time as q8_0: the signed extreme of a block is
 * its first value of the largest magnitude (signed_absmax's strict >), found
 * as the first lane equal to the block's amax; d = max/-8 and 1/d shared by
 * a vector division; levels trunc(x/d + 8.5) clamped at 15; nibbles paired
 * j, j+16. Blocks with a NaN or an infinite value, all-zero ones (whose
 * signed zero decides the sign of d) and ones whose 1/d overflows take the
 * scalar path. */
GGUF_TARGET_AVX2_F16C static void q4_0_blocks_avx2(const float *x, gguf_block_q4_0 *b, int64_t nb)
{
    int64_t i = 0;
    for (; i + 8 <= nb; i += 8) {
        _Alignas(32) float smax[8], id[8];
        int odd = 0;
        for (int k = 0; k < 8; k++) {
            __m256 v[4];
            int nan;
            const float amax = q8_0_amax(x + (i + k) * QK, v, &nan);
            odd |= nan | !(amax <= 3.402823466e38f) | (amax == 0.0f);
            const __m256 sign = _mm256_set1_ps(-0.0f), am = _mm256_set1_ps(amax);
            uint32_t hit = 0;
            for (int j = 0; j < 4; j++)
                hit |= (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, v[j]), am,
                                                                  _CMP_EQ_OQ)) << 8 * j;
            smax[k] = hit ? x[(i + k) * QK + (int64_t)__builtin_ctz(hit)] : 0.0f;
        }
        if (odd) {
            for (int k = 0; k < 8; k++)
                q4_0_blocks(x + (i + k) * QK, &b[i + k], QK);
            continue;
        }
        const __m256 vd = _mm256_div_ps(_mm256_load_ps(smax), _mm256_set1_ps(-8.0f));
        _mm256_store_ps(id, _mm256_div_ps(_mm256_set1_ps(1.0f), vd)); /* d ≠ 0 here */
        _Alignas(16) uint16_t dh[8];
        _mm_store_si128((__m128i *)dh, _mm256_cvtps_ph(vd, _MM_FROUND_TO_NEAREST_INT));
        for (int k = 0; k < 8; k++) {
            const float *xb = x + (i + k) * QK;
            if (!(fabsf(id[k]) < 1e30f)) {
                q4_0_blocks(xb, &b[i + k], QK);
                continue;
            }
            const __m256 vid = _mm256_set1_ps(id[k]), off = _mm256_set1_ps(8.5f);
            const __m256i top = _mm256_set1_epi32(15);
            __m256i t[4];
            for (int j = 0; j < 4; j++) {
                const __m256 s = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(xb + 8 * j), vid), off);
                t[j] = _mm256_min_epi32(_mm256_cvttps_epi32(s), top);
            }
            const __m256i p = _mm256_permutevar8x32_epi32(
                _mm256_packus_epi16(_mm256_packs_epi32(t[0], t[1]), _mm256_packs_epi32(t[2], t[3])),
                _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            const __m128i lo = _mm256_castsi256_si128(p), hi = _mm256_extracti128_si256(p, 1);
            b[i + k].d = dh[k];
            _mm_storeu_si128((__m128i *)b[i + k].qs, _mm_or_si128(lo, _mm_slli_epi16(hi, 4)));
        }
    }
    if (i < nb)
        q4_0_blocks(x + i * QK, &b[i], (nb - i) * QK);
}
#endif

void gguf_q4_0_quantize(const float *x, void *y, int64_t n)
{
#if GGUF_X86
    if (gguf_cpu_avx2_f16c() && !gguf_quants_scalar_forced()) {
        q4_0_blocks_avx2(x, y, n / QK);
        return;
    }
#endif
    q4_0_blocks(x, y, n);
}

void gguf_q8_0_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_q8_0 *b = y;
#if GGUF_X86
    if (gguf_cpu_avx2_f16c() && !gguf_quants_scalar_forced()) {
        q8_0_blocks_avx2(x, b, n / QK);
        return;
    }
#endif
    for (int64_t i = 0; i < n / QK; i++, x += QK)
        q8_0_block(x, &b[i]);
}

bool gguf_quantize_q8_0_f16(const gguf_half *src, void *dst, int64_t n, float *amax)
{
    gguf_block_q8_0 *b = dst;
    float top = 0.0f, *a = amax ? amax : &top;
#if GGUF_X86
    if (gguf_cpu_avx2_f16c() && !gguf_quants_scalar_forced())
        return q8_0_f16_avx2(src, b, n / QK, a);
#endif
    *a = 0.0f;
    for (int64_t i = 0; i < n / QK; i++, src += QK) {
        float x[QK];
        for (int j = 0; j < QK; j++) {
            if ((src[j] & 0x7c00) == 0x7c00)
                return false;
            x[j] = gguf_f16_to_f32(src[j]);
            *a = fabsf(x[j]) > *a ? fabsf(x[j]) : *a;
        }
        q8_0_block(x, &b[i]);
    }
    return true;
}

/* ========================================================================
 * Importance-weighted quantizers (ggml's quantize_row_*_impl)
 *
 * Both searches minimise the weighted squared error Σ w_j (x_j - x̂_j)² of
 * one block over a small set of candidate scales. The weight of element j
 * is imatrix_j * sqrt(σ² + x_j²), σ² the row's mean square: the importance
 * matrix says which columns matter, and the sqrt term favours large values
 * without letting tiny ones drop out entirely.
 * ======================================================================== */

/* σ² = Σx²/n over the whole row, summed left to right in float (as ggml). */
static float row_mean_square(const float *x, int64_t n)
{
    float sum = 0.0f;
    for (int64_t j = 0; j < n; j++)
        sum += x[j] * x[j];
    return sum / (float)n;
}

static void block_weights(const float *x, const float *imatrix, float sigma2, float w[QK])
{
    for (int j = 0; j < QK; j++)
        w[j] = imatrix[j] * sqrtf(sigma2 + x[j] * x[j]);
}

/* ggml's q4_1/q5_1 weighted trial grid: (nmax - 0.9 + 0.05k)/(max - min). */
static const affine_steps affine_grid = { -0.9f, 0.05f, 36 };

/* Levels, scales (and for the affine formats offsets ≤ 0) of the weighted
 * search for up to eight consecutive blocks: eight at a time through the
 * lane searches, a shorter tail one block at a time. */
typedef struct block_group {
    int     count;
    uint8_t q[8][QK];
    float   d[8], min[8];
} block_group;

static void weighted_group(const float *x, const float *qw, float sigma2, int count, int nmax,
                           bool affine, block_group *g)
{
    float w[8 * QK];
    for (int b = 0; b < count; b++)
        block_weights(x + b * QK, qw + b * QK, sigma2, w + b * QK);
    g->count = count;
    if (count == 8) {
        if (affine)
            gguf_search_affine_x8(QK, nmax, x, w, g->q[0], g->d, g->min, &affine_grid, false);
        else
            gguf_search_symmetric_x8(QK, nmax, x, w, g->q[0], g->d);
    } else {
        for (int b = 0; b < count; b++)
            g->d[b] = affine ? gguf_search_affine(QK, nmax, x + b * QK, w + b * QK, g->q[b], &g->min[b],
                                             &affine_grid, false)
                             : gguf_search_symmetric(QK, nmax, x + b * QK, w + b * QK, g->q[b]);
    }
    /* the searches return -min; ggml stores -(-min), and negation is exact */
    if (affine)
        for (int b = 0; b < count; b++)
            g->min[b] = -g->min[b];
}

/* Runs body for every block i of a row, with its results in slot k of g. */
#define FOR_WEIGHTED_GROUPS(x, qw, n, nmax, affine, body)                          \
    do {                                                                            \
        const float sigma2_ = row_mean_square(x, n);                                \
        const int64_t nb_ = (n) / QK;                                               \
        block_group g;                                                              \
        for (int64_t i0 = 0; i0 < nb_; i0 += 8) {                                   \
            int cnt_ = nb_ - i0 < 8 ? (int)(nb_ - i0) : 8;                          \
            weighted_group((x) + i0 * QK, (qw) + i0 * QK, sigma2_, cnt_, nmax, affine, &g); \
            for (int k = 0; k < cnt_; k++) {                                        \
                const int64_t i = i0 + k;                                           \
                body                                                                \
            }                                                                       \
        }                                                                           \
    } while (0)

void gguf_q4_0_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    gguf_block_q4_0 *b = y;
    FOR_WEIGHTED_GROUPS(x, qw, n, 8, false, {
        b[i].d = gguf_f32_to_f16(g.d[k]);
        pack_nibbles(g.q[k], b[i].qs);
    });
}

void gguf_q5_0_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    gguf_block_q5_0 *b = y;
    FOR_WEIGHTED_GROUPS(x, qw, n, 16, false, {
        b[i].d = gguf_f32_to_f16(g.d[k]);
        pack_nibbles(g.q[k], b[i].qs);
        pack_fifth_bits(g.q[k], b[i].qh);
    });
}

void gguf_q4_1_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    gguf_block_q4_1 *b = y;
    FOR_WEIGHTED_GROUPS(x, qw, n, 15, true, {
        b[i].d = gguf_f32_to_f16(g.d[k]);
        b[i].m = gguf_f32_to_f16(g.min[k]);
        pack_nibbles(g.q[k], b[i].qs);
    });
}

void gguf_q5_1_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    gguf_block_q5_1 *b = y;
    FOR_WEIGHTED_GROUPS(x, qw, n, 31, true, {
        b[i].d = gguf_f32_to_f16(g.d[k]);
        b[i].m = gguf_f32_to_f16(g.min[k]);
        pack_nibbles(g.q[k], b[i].qs);
        pack_fifth_bits(g.q[k], b[i].qh);
    });
}

/* ========================================================================
 * Dequantizers (ggml's dequantize_row_*)
 * ======================================================================== */

/* x = (q - bias) * d, the integer difference converted first (as ggml). */
static void dequantize_symmetric(const uint8_t q[QK], int bias, float d, float *y)
{
    for (int j = 0; j < QK; j++)
        y[j] = (float)(q[j] - bias) * d;
}

/* x = q * d + m: a product then a sum, never fused. */
static void dequantize_affine(const uint8_t q[QK], float d, float m, float *y)
{
    for (int j = 0; j < QK; j++)
        y[j] = (float)q[j] * d + m;
}

void gguf_q4_0_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_q4_0 *b = x;
    uint8_t q[QK];
    for (int64_t i = 0; i < n / QK; i++, y += QK) {
        unpack_levels(b[i].qs, NULL, q);
        dequantize_symmetric(q, 8, gguf_f16_to_f32(b[i].d), y);
    }
}

void gguf_q5_0_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_q5_0 *b = x;
    uint8_t q[QK];
    for (int64_t i = 0; i < n / QK; i++, y += QK) {
        unpack_levels(b[i].qs, b[i].qh, q);
        dequantize_symmetric(q, 16, gguf_f16_to_f32(b[i].d), y);
    }
}

void gguf_q4_1_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_q4_1 *b = x;
    uint8_t q[QK];
    for (int64_t i = 0; i < n / QK; i++, y += QK) {
        unpack_levels(b[i].qs, NULL, q);
        dequantize_affine(q, gguf_f16_to_f32(b[i].d), gguf_f16_to_f32(b[i].m), y);
    }
}

void gguf_q5_1_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_q5_1 *b = x;
    uint8_t q[QK];
    for (int64_t i = 0; i < n / QK; i++, y += QK) {
        unpack_levels(b[i].qs, b[i].qh, q);
        dequantize_affine(q, gguf_f16_to_f32(b[i].d), gguf_f16_to_f32(b[i].m), y);
    }
}

void gguf_q8_0_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_q8_0 *b = x;
    for (int64_t i = 0; i < n / QK; i++, y += QK) {
        const float d = gguf_f16_to_f32(b[i].d);
        for (int j = 0; j < QK; j++)
            y[j] = (float)b[i].qs[j] * d;
    }
}
