/*
 * kernels_legacy.c — dot products of the 32-element block types q4_0, q4_1,
 * q5_0, q5_1, q8_0 with q8_0 or q8_1 activations (kernels.h).
 *
 * Per block b of 32 elements, with integer weight levels q and activation
 * levels a:
 *   scale-only types (q4_0, q5_0, q8_0):  term_b = Σ q·a · d_w · d_x
 *   types with a min (q4_1, q5_1):        term_b = Σ q·a · d_w · d_x + m_w · s_x
 * where s_x = d_x · Σa (q8_1's stored block sum), since Σ (d_w q + m_w) d_x a
 * splits that way. Σ q·a is an exact integer; the row's result is Σ_b term_b
 * added in float. Not for: quantizing (libgguf's codecs, kernels.c).
 */
#include <math.h>
#include <string.h>

#include "float16.h"
#include "kernels_impl.h"

/* ---------------------------------------------------------------------------
 * Scalar reference: unpack a weight block to its 32 signed levels, then one
 * integer dot per block.
 */

/* Levels of element j of a 4-bit block: low nibbles are elements 0..15,
 * high nibbles 16..31. */
static void unpack_nibbles(const uint8_t qs[16], int offset, int q[32])
{
    for (int j = 0; j < 16; j++) {
        q[j] = (qs[j] & 0x0f) - offset;
        q[j + 16] = (qs[j] >> 4) - offset;
    }
}

/* As unpack_nibbles, with element j's fifth bit in bit j of qh. */
static void unpack_5bit(const uint8_t qs[16], const uint8_t qh_bytes[4], int offset, int q[32])
{
    uint32_t qh;
    memcpy(&qh, qh_bytes, sizeof qh);
    for (int j = 0; j < 16; j++) {
        q[j] = ((qs[j] & 0x0f) | (int)((qh >> j) & 1) << 4) - offset;
        q[j + 16] = ((qs[j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4) - offset;
    }
}

static int dot32(const int q[32], const int8_t a[32])
{
    int s = 0;
    for (int j = 0; j < 32; j++)
        s += q[j] * a[j];
    return s;
}

float dot_q4_0_ref(int64_t n, const void *w, const void *x)
{
    const block_q4_0 *bw = w;
    const block_q8_0 *bx = x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK4_0; i++) {
        int q[32];
        unpack_nibbles(bw[i].qs, 8, q);
        sum += (float)dot32(q, bx[i].qs) * gguf_f16_to_f32(bw[i].d) * gguf_f16_to_f32(bx[i].d);
    }
    return sum;
}

float dot_q5_0_ref(int64_t n, const void *w, const void *x)
{
    const block_q5_0 *bw = w;
    const block_q8_0 *bx = x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK5_0; i++) {
        int q[32];
        unpack_5bit(bw[i].qs, bw[i].qh, 16, q);
        sum += (float)dot32(q, bx[i].qs) * gguf_f16_to_f32(bw[i].d) * gguf_f16_to_f32(bx[i].d);
    }
    return sum;
}

float dot_q8_0_ref(int64_t n, const void *w, const void *x)
{
    const block_q8_0 *bw = w;
    const block_q8_0 *bx = x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK8_0; i++) {
        int q[32];
        for (int j = 0; j < 32; j++)
            q[j] = bw[i].qs[j];
        sum += (float)dot32(q, bx[i].qs) * gguf_f16_to_f32(bw[i].d) * gguf_f16_to_f32(bx[i].d);
    }
    return sum;
}

float dot_q4_1_ref(int64_t n, const void *w, const void *x)
{
    const block_q4_1 *bw = w;
    const block_q8_1 *bx = x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK4_1; i++) {
        int q[32];
        unpack_nibbles(bw[i].qs, 0, q);
        const float dd = gguf_f16_to_f32(bw[i].d) * gguf_f16_to_f32(bx[i].d);
        sum += dd * (float)dot32(q, bx[i].qs) + gguf_f16_to_f32(bw[i].m) * gguf_f16_to_f32(bx[i].s);
    }
    return sum;
}

float dot_q5_1_ref(int64_t n, const void *w, const void *x)
{
    const block_q5_1 *bw = w;
    const block_q8_1 *bx = x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK5_1; i++) {
        int q[32];
        unpack_5bit(bw[i].qs, bw[i].qh, 0, q);
        const float dd = gguf_f16_to_f32(bw[i].d) * gguf_f16_to_f32(bx[i].d);
        sum += dd * (float)dot32(q, bx[i].qs) + gguf_f16_to_f32(bw[i].m) * gguf_f16_to_f32(bx[i].s);
    }
    return sum;
}

/* ---------------------------------------------------------------------------
 * AVX2: a block's 32 weight levels are one register of bytes. The byte
 * products go through maddubs (unsigned × signed bytes → 16-bit pair sums,
 * at most 2·128·127 < 2^15, so nothing saturates), then madd with ones to
 * eight 32-bit sums, which become floats scaled by d_w·d_x into eight lane
 * accumulators: each lane adds one term per block.
 *
 * Each kernel is written once for nx activation rows: a weight block is
 * unpacked once and met by every row. Row k's arithmetic is the same
 * whatever nx is, so dotn_* gives exactly what dot_* gives row by row.
 */
#ifdef KERN_X86
#include <immintrin.h>

#define ALWAYS KERN_AVX2 static inline __attribute__((always_inline))

/* The 32 nibbles of qs as bytes: elements 0..15 from the low nibbles,
 * 16..31 from the high ones. */
ALWAYS __m256i nibbles_to_bytes(const uint8_t qs[16])
{
    const __m128i v = _mm_loadu_si128((const __m128i *)qs), low4 = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_and_si128(v, low4), hi = _mm_and_si128(_mm_srli_epi16(v, 4), low4);
    return _mm256_set_m128i(hi, lo);
}

/* Byte j = 0x10 where bit j of qh is set, else 0 (a 5-bit type's top bit). */
ALWAYS __m256i fifth_bits(const uint8_t qh_bytes[4])
{
    uint32_t qh;
    memcpy(&qh, qh_bytes, sizeof qh);
    /* byte j takes qh's byte j/8, then keeps bit j%8 */
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)qh), spread);
    v = _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
    return _mm256_and_si256(v, _mm256_set1_epi8(0x10));
}

/* Eight 32-bit partial sums of Σ q·a for unsigned levels q. */
ALWAYS __m256i dot_u8_i8(__m256i q, __m256i a)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(q, a), _mm256_set1_epi16(1));
}

ALWAYS float hsum8(__m256 v)
{
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

/* acc += d · float(s), lane by lane. */
ALWAYS __m256 add_scaled(__m256 acc, float d, __m256i s)
{
    return _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(s), acc);
}

/* f16 → float with F16C (exact for every non-NaN value). */
ALWAYS float h2f(gguf_half h)
{
    return _cvtsh_ss(h);
}

ALWAYS __m256i load32(const int8_t *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

/* The weight levels of block i as bytes, and whether they are signed. */
ALWAYS __m256i levels_q4_0(const block_q4_0 *b)
{
    return _mm256_sub_epi8(nibbles_to_bytes(b->qs), _mm256_set1_epi8(8));
}
ALWAYS __m256i levels_q5_0(const block_q5_0 *b)
{
    const __m256i q = _mm256_or_si256(nibbles_to_bytes(b->qs), fifth_bits(b->qh));
    return _mm256_sub_epi8(q, _mm256_set1_epi8(16));
}
ALWAYS __m256i levels_q8_0(const block_q8_0 *b)
{
    return load32(b->qs);
}
ALWAYS __m256i levels_q4_1(const block_q4_1 *b)
{
    return nibbles_to_bytes(b->qs);
}
ALWAYS __m256i levels_q5_1(const block_q5_1 *b)
{
    return _mm256_or_si256(nibbles_to_bytes(b->qs), fifth_bits(b->qh));
}

/* Scale-only types against q8_0 rows: signed levels q go through maddubs
 * as |q| against a·sign(q) (q is never -128 while a is -128: q8_0 levels
 * stay within ±127). */
#define SCALE_ONLY_ROWS(T)                                                          \
    ALWAYS void rows_##T(int64_t n, const void *w, const void *x, size_t xs, int nx,    \
                         float *out)                                                \
    {                                                                               \
        const block_##T *bw = w;                                                    \
        __m256 acc[KERN_NX];                                                        \
        for (int k = 0; k < nx; k++)                                                \
            acc[k] = _mm256_setzero_ps();                                           \
        for (int64_t i = 0; i < n / 32; i++) {                                      \
            const __m256i q = levels_##T(&bw[i]);                                   \
            const __m256i aq = _mm256_sign_epi8(q, q);                              \
            const float dw = h2f(bw[i].d);                                          \
            for (int k = 0; k < nx; k++) {                                          \
                const block_q8_0 *bx = (const block_q8_0 *)((const uint8_t *)x + k * xs) + i; \
                const __m256i s = dot_u8_i8(aq, _mm256_sign_epi8(load32(bx->qs), q));  \
                acc[k] = add_scaled(acc[k], dw * h2f(bx->d), s);                     \
            }                                                                       \
        }                                                                           \
        for (int k = 0; k < nx; k++)                                                \
            out[k] = hsum8(acc[k]);                                                 \
    }

/* Types with a min against q8_1 rows: unsigned levels, and Σ m_w · s_x
 * added apart. */
#define WITH_MIN_ROWS(T)                                                            \
    ALWAYS void rows_##T(int64_t n, const void *w, const void *x, size_t xs, int nx,    \
                         float *out)                                                \
    {                                                                               \
        const block_##T *bw = w;                                                    \
        __m256 acc[KERN_NX];                                                        \
        float mins[KERN_NX];                                                        \
        for (int k = 0; k < nx; k++) {                                              \
            acc[k] = _mm256_setzero_ps();                                           \
            mins[k] = 0.0f;                                                         \
        }                                                                           \
        for (int64_t i = 0; i < n / 32; i++) {                                      \
            const __m256i q = levels_##T(&bw[i]);                                   \
            const float dw = h2f(bw[i].d), mw = h2f(bw[i].m);                       \
            for (int k = 0; k < nx; k++) {                                          \
                const block_q8_1 *bx = (const block_q8_1 *)((const uint8_t *)x + k * xs) + i; \
                acc[k] = add_scaled(acc[k], dw * h2f(bx->d), dot_u8_i8(q, load32(bx->qs))); \
                mins[k] += mw * h2f(bx->s);                                         \
            }                                                                       \
        }                                                                           \
        for (int k = 0; k < nx; k++)                                                \
            out[k] = hsum8(acc[k]) + mins[k];                                       \
    }

/* One row (dot_*) and KERN_NX rows (dotn_*) from the same code. */
#define ENTRY_POINTS(T)                                                             \
    KERN_AVX2 float dot_##T##_avx2(int64_t n, const void *w, const void *x)         \
    {                                                                               \
        float r;                                                                    \
        rows_##T(n, w, x, 0, 1, &r);                                                \
        return r;                                                                   \
    }                                                                               \
    KERN_AVX2 void dotn_##T##_avx2(int64_t n, const void *w, const void *x, size_t xs, \
                                   float *out)                                      \
    {                                                                               \
        rows_##T(n, w, x, xs, KERN_NX, out);                                        \
    }

/* q4_0 as the reference CPU backend computes it on x86 (it regroups q4_0
 * matrices of 8k rows into 8-row tiles): one float accumulator per output,
 * and each block adds its whole integer sum, times d_w·d_x, in one fused
 * multiply-add. */
ALWAYS int hsum_i32x8(__m256i v)
{
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 1));
    return _mm_cvtsi128_si32(h);
}

ALWAYS void rows_q4_0(int64_t n, const void *w, const void *x, size_t xs, int nx, float *out)
{
    const block_q4_0 *bw = w;
    float acc[KERN_NX];
    for (int k = 0; k < nx; k++)
        acc[k] = 0.0f;
    for (int64_t i = 0; i < n / 32; i++) {
        const __m256i q = levels_q4_0(&bw[i]);
        const __m256i aq = _mm256_sign_epi8(q, q);
        const float dw = h2f(bw[i].d);
        for (int k = 0; k < nx; k++) {
            const block_q8_0 *bx = (const block_q8_0 *)((const uint8_t *)x + k * xs) + i;
            const int isum = hsum_i32x8(dot_u8_i8(aq, _mm256_sign_epi8(load32(bx->qs), q)));
            acc[k] = fmaf((float)isum, dw * h2f(bx->d), acc[k]);
        }
    }
    for (int k = 0; k < nx; k++)
        out[k] = acc[k];
}

SCALE_ONLY_ROWS(q5_0)
SCALE_ONLY_ROWS(q8_0)
WITH_MIN_ROWS(q4_1)
WITH_MIN_ROWS(q5_1)
ENTRY_POINTS(q4_0)
ENTRY_POINTS(q5_0)
ENTRY_POINTS(q8_0)
ENTRY_POINTS(q4_1)
ENTRY_POINTS(q5_1)
#endif
