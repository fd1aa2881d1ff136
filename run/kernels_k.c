/*
 * kernels_k.c — dot products of the k-quant types q2_K, q3_K, q4_K, q5_K,
 * q6_K with q8_K activations (kernels.h).
 *
 * A super-block holds 256 weights in 16 sub-blocks of 16 (q2_K, q3_K, q6_K)
 * or 8 of 32 (q4_K, q5_K, here seen as 16 halves sharing a scale). With
 * weight levels q, sub-block scales sc_j and mins mn_j (integers), weight
 * super-scales d, dmin, and q8_K activations a with scale d_x and 16-element
 * block sums bsum_j = Σ_{e in j} a_e:
 *
 *   w_e = d · sc_j · q_e − dmin · mn_j
 *   Σ_e w_e · d_x a_e = d·d_x · Σ_j sc_j Σ_{e in j} q_e a_e − dmin·d_x · Σ_j mn_j bsum_j
 *
 * Both sums over j are exact integers; a row's result adds the super-block
 * terms in float. (q3_K and q6_K have signed levels and no mins.)
 * Not for: quantizing (libgguf's codecs).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include "kernels_impl.h"

/* One super-block as integers: signed levels, 16 scales and mins (a
 * 32-element sub-block's scale appears twice), and the float super-scales. */
typedef struct {
    int8_t q[GGUF_QK_K];
    int    sc[16], mn[16];
    float  d, dmin;
} kblock;

/* ---------------------------------------------------------------------------
 * Scales
 */

/* q3_K's 16 six-bit scales, stored biased by 32: the low four bits of
 * scale j are nibble j%8 of bytes 0..7 (low nibbles for j < 8), the top two
 * are bits 2·(j/4) of byte 8 + j%4. */
static void scales_q3_K(const uint8_t s[12], int sc[16])
{
    for (int j = 0; j < 16; j++) {
        const int lo = j < 8 ? s[j] & 0x0f : s[j - 8] >> 4;
        const int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
        sc[j] = (lo | hi << 4) - 32;
    }
}

/* q4_K/q5_K's eight six-bit scales and mins in 12 bytes: for j < 4 the low
 * six bits of bytes j (scale) and j + 4 (min); for j ≥ 4 a nibble of byte
 * j + 4 topped with the two high bits of bytes j − 4 (scale) and j (min). */
static void scales_k4(const uint8_t s[12], int sc[8], int mn[8])
{
    for (int j = 0; j < 8; j++) {
        if (j < 4) {
            sc[j] = s[j] & 63;
            mn[j] = s[j + 4] & 63;
        } else {
            sc[j] = (s[j + 4] & 0x0f) | (s[j - 4] >> 6) << 4;
            mn[j] = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
        }
    }
}

/* ---------------------------------------------------------------------------
 * Unpacking a super-block. Element e = 128h + 32c + l (h, c, l the half,
 * the 32-column group and the column) is where the formats interleave.
 */

static void unpack_q2_K(const gguf_block_q2_K *b, kblock *k)
{
    /* 2-bit level: bits 2c of byte qs[32h + l] */
    for (int e = 0; e < GGUF_QK_K; e++)
        k->q[e] = (int8_t)((b->qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3);
    for (int j = 0; j < 16; j++) {
        k->sc[j] = b->scales[j] & 0x0f;
        k->mn[j] = b->scales[j] >> 4;
    }
    k->d = gguf_f16_to_f32(b->d);
    k->dmin = gguf_f16_to_f32(b->dmin);
}

static void unpack_q3_K(const gguf_block_q3_K *b, kblock *k)
{
    /* 2 low bits as q2_K; a clear bit (4h + c) of hmask[l] subtracts 4 */
    for (int e = 0; e < GGUF_QK_K; e++) {
        const int low = (b->qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3;
        const int high = (b->hmask[e % 32] >> (e / 32)) & 1;
        k->q[e] = (int8_t)(low - (high ? 0 : 4));
    }
    scales_q3_K(b->scales, k->sc);
    memset(k->mn, 0, sizeof k->mn);
    k->d = gguf_f16_to_f32(b->d);
    k->dmin = 0.0f;
}

/* Sub-block j of 32 of q4_K/q5_K covers 16-element halves 2j and 2j + 1. */
static void spread_k4_scales(const uint8_t s[12], kblock *k)
{
    int sc[8], mn[8];
    scales_k4(s, sc, mn);
    for (int j = 0; j < 16; j++) {
        k->sc[j] = sc[j / 2];
        k->mn[j] = mn[j / 2];
    }
}

static void unpack_q4_K(const gguf_block_q4_K *b, kblock *k)
{
    /* bytes qs[32g..32g+31] hold sub-block 2g in their low nibbles and
     * 2g + 1 in their high ones */
    for (int e = 0; e < GGUF_QK_K; e++) {
        const uint8_t byte = b->qs[32 * (e / 64) + e % 32];
        k->q[e] = (int8_t)((e / 32) % 2 ? byte >> 4 : byte & 0x0f);
    }
    spread_k4_scales(b->scales, k);
    k->d = gguf_f16_to_f32(b->d);
    k->dmin = gguf_f16_to_f32(b->dmin);
}

static void unpack_q5_K(const gguf_block_q5_K *b, kblock *k)
{
    /* q4_K's nibbles, the fifth bit of element e in bit e/32 of qh[e%32] */
    for (int e = 0; e < GGUF_QK_K; e++) {
        const uint8_t byte = b->qs[32 * (e / 64) + e % 32];
        const int low = (e / 32) % 2 ? byte >> 4 : byte & 0x0f;
        k->q[e] = (int8_t)(low | ((b->qh[e % 32] >> (e / 32)) & 1) << 4);
    }
    spread_k4_scales(b->scales, k);
    k->d = gguf_f16_to_f32(b->d);
    k->dmin = gguf_f16_to_f32(b->dmin);
}

static void unpack_q6_K(const gguf_block_q6_K *b, kblock *k)
{
    /* e = 128h + 32c + l: low 4 bits from ql[64h + 32(c%2) + l] (low nibble
     * for c < 2), high 2 bits from bits 2c of qh[32h + l]; stored + 32 */
    for (int e = 0; e < GGUF_QK_K; e++) {
        const int h = e / 128, c = e % 128 / 32, l = e % 32;
        const uint8_t lo = b->ql[64 * h + 32 * (c % 2) + l];
        const int low = c < 2 ? lo & 0x0f : lo >> 4;
        const int high = (b->qh[32 * h + l] >> (2 * c)) & 3;
        k->q[e] = (int8_t)((low | high << 4) - 32);
    }
    for (int j = 0; j < 16; j++)
        k->sc[j] = b->scales[j];
    memset(k->mn, 0, sizeof k->mn);
    k->d = gguf_f16_to_f32(b->d);
    k->dmin = 0.0f;
}

/* ---------------------------------------------------------------------------
 * Scalar reference
 */

/* The super-block term d·d_x·Σ sc_j Σ q·a − dmin·d_x·Σ mn_j bsum_j. */
static float kblock_dot(const kblock *k, const gguf_block_q8_K *a)
{
    int isum = 0, msum = 0;
    for (int j = 0; j < 16; j++) {
        int s = 0;
        for (int i = 16 * j; i < 16 * j + 16; i++)
            s += k->q[i] * a->qs[i];
        isum += k->sc[j] * s;
        msum += k->mn[j] * a->bsums[j];
    }
    return a->d * k->d * (float)isum - a->d * k->dmin * (float)msum;
}

/* Super-block i of a row of type (a k-quant GGUF_DT_ id, constant in the
 * named functions, so the switches fold away) unpacked into k. */
static inline __attribute__((always_inline)) void unpack_block(uint32_t type, const void *w,
                                                               int64_t i, kblock *k)
{
    switch (type) {
    case GGUF_DT_Q2_K: unpack_q2_K((const gguf_block_q2_K *)w + i, k); break;
    case GGUF_DT_Q3_K: unpack_q3_K((const gguf_block_q3_K *)w + i, k); break;
    case GGUF_DT_Q4_K: unpack_q4_K((const gguf_block_q4_K *)w + i, k); break;
    case GGUF_DT_Q5_K: unpack_q5_K((const gguf_block_q5_K *)w + i, k); break;
    default: unpack_q6_K((const gguf_block_q6_K *)w + i, k); break;
    }
}

/* One row pair: each super-block unpacked, its term added in float. */
static inline __attribute__((always_inline)) float dot_kquant_ref(uint32_t type, int64_t n,
                                                                   const void *w, const void *x)
{
    const gguf_block_q8_K *bx = x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        kblock k;
        unpack_block(type, w, i, &k);
        sum += kblock_dot(&k, &bx[i]);
    }
    return sum;
}

float dot_q2_K_ref(int64_t n, const void *w, const void *x)
{
    return dot_kquant_ref(GGUF_DT_Q2_K, n, w, x);
}

float dot_q3_K_ref(int64_t n, const void *w, const void *x)
{
    return dot_kquant_ref(GGUF_DT_Q3_K, n, w, x);
}

float dot_q4_K_ref(int64_t n, const void *w, const void *x)
{
    return dot_kquant_ref(GGUF_DT_Q4_K, n, w, x);
}

float dot_q5_K_ref(int64_t n, const void *w, const void *x)
{
    return dot_kquant_ref(GGUF_DT_Q5_K, n, w, x);
}

float dot_q6_K_ref(int64_t n, const void *w, const void *x)
{
    return dot_kquant_ref(GGUF_DT_Q6_K, n, w, x);
}

/* ---------------------------------------------------------------------------
 * AVX2: the 256 levels of a super-block are eight registers of 32 unsigned
 * bytes u (element 32c + l in byte l of register c); formats with signed
 * levels store them as u − off (off = 4 for q3_K, 32 for q6_K), and
 *   Σ sc_j Σ (u − off)·a = Σ sc_j Σ u·a − off · Σ sc_j bsum_j
 * keeps the byte products unsigned × signed, as maddubs wants them (at
 * most 2·63·127 per 16-bit pair, so nothing saturates). The integer sums
 * stay in eight 32-bit lanes; each super-block adds one scaled term per
 * lane (and one for the mins) to eight float accumulators.
 */
#ifdef KERN_X86
#include "kernels_simd.h"

/* Eight lane sums of Σ_j sc_j Σ_{e in j} (u_e − off)·a_e; off = 1 << shift,
 * or none when shift < 0. Register c spans 16-element blocks 2c and 2c + 1:
 * its low 128 bits (eight 16-bit pair sums) take scale 2c, the high 2c + 1. */
ALWAYS __m256i super_isum(madd_add_fn madd_add, const __m256i u[8], const int16_t sc[16], int shift,
                          const gguf_block_q8_K *a)
{
    /* The level offset is taken off each 16-bit pair sum before the scale
     * multiplies it, so every lane holds exactly the terms of its own four
     * elements: (u - off)·a of elements 4L..4L+3 of each register. Which
     * integers meet in which lane decides how the float lanes round later. */
    __m256i acc = _mm256_setzero_si256();
    const __m256i off = _mm256_set1_epi8((char)(shift >= 0 ? 1 << shift : 0));
    /* the scales stay in registers: sc as one vector, each scale twice in
     * a 32-bit element (lo: sc 0-3 | 8-11, hi: sc 4-7 | 12-15), and a
     * register's two scales broadcast to its halves by one permute (a
     * 16-bit load from the unpack's vector store would stall forwarding) */
    const __m256i sv = _mm256_loadu_si256((const __m256i *)sc);
    const __m256i dup[2] = { _mm256_unpacklo_epi16(sv, sv), _mm256_unpackhi_epi16(sv, sv) };
    UNROLL for (int c = 0; c < 8; c++) {
        const __m256i av = _mm256_loadu_si256((const __m256i *)(a->qs + 32 * c));
        __m256i p = _mm256_maddubs_epi16(u[c], av);
        if (shift >= 0) /* at most 2·8·128 either side: no 16-bit overflow */
            p = _mm256_sub_epi16(p, _mm256_maddubs_epi16(off, av));
        const int e = (c % 2) * 2 + (c / 4) * 4; /* element of sc[2c] */
        const __m256i s = _mm256_permutevar8x32_epi32(
            dup[(c / 2) % 2], _mm256_setr_epi32(e, e, e, e, e + 1, e + 1, e + 1, e + 1));
        acc = madd_add(acc, p, s);
    }
    return acc;
}

/* Eight lane sums of Σ_j mn_j bsum_j. */
ALWAYS __m256i super_msum(const int16_t mn[16], const gguf_block_q8_K *a)
{
    return _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a->bsums),
                             _mm256_loadu_si256((const __m256i *)mn));
}

/* Bits [shift, shift + width) of every byte of v, as bytes. */
ALWAYS __m256i bits(__m256i v, int shift, int mask)
{
    /* a 16-bit shift moves the high byte's bits into the low byte's top,
     * which the mask clears */
    return _mm256_and_si256(_mm256_srli_epi16(v, shift), _mm256_set1_epi8((char)mask));
}

/* The unpacking of each format: u[8] as above, scales sc (and mins mn),
 * super-scales d (and dmin), and the shift of the level offset (-1: none). */
ALWAYS void unpack_avx2_q2_K(const gguf_block_q2_K *b, __m256i u[8], int16_t sc[16], int16_t mn[16],
                             __m128i *m8, float *d, float *dmin, int *shift)
{
    (void)m8;
    for (int h = 0; h < 2; h++) {
        const __m256i q = load256(b->qs + 32 * h);
        for (int c = 0; c < 4; c++)
            u[4 * h + c] = bits(q, 2 * c, 3);
    }
    const __m128i s8 = _mm_loadu_si128((const __m128i *)b->scales), lo4 = _mm_set1_epi8(0x0f);
    _mm256_storeu_si256((__m256i *)sc, _mm256_cvtepu8_epi16(_mm_and_si128(s8, lo4)));
    _mm256_storeu_si256((__m256i *)mn,
                        _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s8, 4), lo4)));
    *d = h2f(b->d);
    *dmin = h2f(b->dmin);
    *shift = -1;
}

/* q3_K's scales as scales_q3_K decodes them, four at a time: word i of
 * bytes 0..7 gives low nibbles (scales 4i..4i+3) and high nibbles (8 + 4i..),
 * word 2 (bytes 8..11) the top two bits, pair 2k for scales 4k..4k+3. */
ALWAYS void q3_scales16(const uint8_t s[12], int16_t sc[16])
{
    uint32_t w[3];
    memcpy(w, s, sizeof w);
    const uint32_t lo4 = 0x0f0f0f0f, lo2 = 0x03030303;
    const uint32_t g[4] = {
        (w[0] & lo4) | (w[2] & lo2) << 4,
        (w[1] & lo4) | ((w[2] >> 2) & lo2) << 4,
        ((w[0] >> 4) & lo4) | ((w[2] >> 4) & lo2) << 4,
        ((w[1] >> 4) & lo4) | ((w[2] >> 6) & lo2) << 4,
    };
    const __m128i g8 = _mm_setr_epi32((int)g[0], (int)g[1], (int)g[2], (int)g[3]);
    _mm256_storeu_si256((__m256i *)sc,
                        _mm256_sub_epi16(_mm256_cvtepu8_epi16(g8), _mm256_set1_epi16(32)));
}

ALWAYS void unpack_avx2_q3_K(const gguf_block_q3_K *b, __m256i u[8], int16_t sc[16], int16_t mn[16],
                             __m128i *m8, float *d, float *dmin, int *shift)
{
    (void)m8;
    const __m256i hm = load256(b->hmask);
    for (int h = 0; h < 2; h++) {
        const __m256i q = load256(b->qs + 32 * h);
        for (int c = 0; c < 4; c++) /* level + 4 = low bits | hmask bit 4h+c as 4 */
            u[4 * h + c] = _mm256_or_si256(bits(q, 2 * c, 3),
                                           _mm256_slli_epi16(bits(hm, 4 * h + c, 1), 2));
    }
    q3_scales16(b->scales, sc);
    (void)mn;
    *d = h2f(b->d);
    *dmin = 0.0f;
    *shift = 2;
}

/* q4_K/q5_K scales, each 32-element sub-block's twice, and the eight mins
 * as int16 in m8 (super_msum4 takes them so): scales_k4's layout taken four
 * bytes at a time (word i = bytes 4i..4i+3). */
ALWAYS void k4_scales16(const uint8_t s[12], int16_t sc[16], __m128i *m8)
{
    uint32_t w[3];
    memcpy(w, s, sizeof w);
    const uint32_t lo6 = 0x3f3f3f3f, lo4 = 0x0f0f0f0f, lo2 = 0x03030303;
    const uint32_t sc_lo = w[0] & lo6, mn_lo = w[1] & lo6;
    const uint32_t sc_hi = (w[2] & lo4) | ((w[0] >> 6) & lo2) << 4;
    const uint32_t mn_hi = ((w[2] >> 4) & lo4) | ((w[1] >> 6) & lo2) << 4;
    /* bytes: the eight scales, then the eight mins */
    const __m128i v = _mm_setr_epi32((int)sc_lo, (int)sc_hi, (int)mn_lo, (int)mn_hi);
    _mm256_storeu_si256((__m256i *)sc, _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(v, v)));
    *m8 = _mm_cvtepu8_epi16(_mm_srli_si128(v, 8));
}

ALWAYS void unpack_avx2_q4_K(const gguf_block_q4_K *b, __m256i u[8], int16_t sc[16], int16_t mn[16],
                             __m128i *m8, float *d, float *dmin, int *shift)
{
    for (int g = 0; g < 4; g++) {
        const __m256i q = load256(b->qs + 32 * g);
        u[2 * g] = bits(q, 0, 0x0f);
        u[2 * g + 1] = bits(q, 4, 0x0f);
    }
    k4_scales16(b->scales, sc, m8);
    (void)mn;
    *d = h2f(b->d);
    *dmin = h2f(b->dmin);
    *shift = -1;
}

ALWAYS void unpack_avx2_q5_K(const gguf_block_q5_K *b, __m256i u[8], int16_t sc[16], int16_t mn[16],
                             __m128i *m8, float *d, float *dmin, int *shift)
{
    const __m256i qh = load256(b->qh);
    for (int g = 0; g < 4; g++) {
        const __m256i q = load256(b->qs + 32 * g);
        u[2 * g] = bits(q, 0, 0x0f);
        u[2 * g + 1] = bits(q, 4, 0x0f);
    }
    for (int c = 0; c < 8; c++) /* fifth bit: bit c of qh[l] */
        u[c] = _mm256_or_si256(u[c], _mm256_slli_epi16(bits(qh, c, 1), 4));
    k4_scales16(b->scales, sc, m8);
    (void)mn;
    *d = h2f(b->d);
    *dmin = h2f(b->dmin);
    *shift = -1;
}

ALWAYS void unpack_avx2_q6_K(const gguf_block_q6_K *b, __m256i u[8], int16_t sc[16], int16_t mn[16],
                             __m128i *m8, float *d, float *dmin, int *shift)
{
    (void)m8;
    for (int h = 0; h < 2; h++) {
        const __m256i l0 = load256(b->ql + 64 * h), l1 = load256(b->ql + 64 * h + 32);
        const __m256i qh = load256(b->qh + 32 * h);
        /* level + 32 = low nibble | two bits of qh at 2c, as bits 4-5 */
        u[4 * h + 0] = _mm256_or_si256(bits(l0, 0, 0x0f), _mm256_slli_epi16(bits(qh, 0, 3), 4));
        u[4 * h + 1] = _mm256_or_si256(bits(l1, 0, 0x0f), _mm256_slli_epi16(bits(qh, 2, 3), 4));
        u[4 * h + 2] = _mm256_or_si256(bits(l0, 4, 0x0f), _mm256_slli_epi16(bits(qh, 4, 3), 4));
        u[4 * h + 3] = _mm256_or_si256(bits(l1, 4, 0x0f), _mm256_slli_epi16(bits(qh, 6, 3), 4));
    }
    _mm256_storeu_si256((__m256i *)sc,
                        _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)b->scales)));
    (void)mn;
    *d = h2f(b->d);
    *dmin = 0.0f;
    *shift = 5;
}

/* Σ_k mn32_k (bsum_2k + bsum_2k+1) over the eight 32-element sub-blocks
 * of q4_K/q5_K, as four 32-bit lanes: lane m holds sub-blocks 2m, 2m + 1.
 * m8: the eight mins as int16 (unpack's mins8). */
ALWAYS __m128i super_msum4(__m128i m8, const gguf_block_q8_K *a)
{
    const __m128i b0 = _mm_loadu_si128((const __m128i *)a->bsums);
    const __m128i b1 = _mm_loadu_si128((const __m128i *)(a->bsums + 8));
    const __m128i s32 = _mm_hadd_epi16(b0, b1); /* the 32-element sums */
    return _mm_madd_epi16(m8, s32);
}

/* How a format's min term joins the float sum (each decides rounding):
 *   MIN_NONE   no mins (q3_K, q6_K)
 *   MIN_LANES8 before the scale term, into the same eight lanes (q2_K)
 *   MIN_LANES4 into four lanes of their own, added after the eight (q4_K)
 *   MIN_SCALAR one float per row, -d_x·dmin times the super-block's whole
 *              integer min sum in one fused multiply-add, added last (q5_K) */
enum { MIN_NONE, MIN_LANES8, MIN_LANES4, MIN_SCALAR };

/* The kernels below take the weight type (a k-quant GGUF_DT_ id) as a
 * constant argument: each switch folds away in the named entry points. */

/* How the type's min term joins the float sum. */
ALWAYS int min_kind(uint32_t type)
{
    switch (type) {
    case GGUF_DT_Q2_K: return MIN_LANES8;
    case GGUF_DT_Q4_K: return MIN_LANES4;
    case GGUF_DT_Q5_K: return MIN_SCALAR;
    default: return MIN_NONE;
    }
}

/* Super-block i of weight row w unpacked as above. */
ALWAYS void unpack_avx2(uint32_t type, const void *w, int64_t i, __m256i u[8], int16_t sc[16],
                        int16_t mn[16], __m128i *m8, float *d, float *dmin, int *shift)
{
    switch (type) {
    case GGUF_DT_Q2_K:
        unpack_avx2_q2_K((const gguf_block_q2_K *)w + i, u, sc, mn, m8, d, dmin, shift);
        break;
    case GGUF_DT_Q3_K:
        unpack_avx2_q3_K((const gguf_block_q3_K *)w + i, u, sc, mn, m8, d, dmin, shift);
        break;
    case GGUF_DT_Q4_K:
        unpack_avx2_q4_K((const gguf_block_q4_K *)w + i, u, sc, mn, m8, d, dmin, shift);
        break;
    case GGUF_DT_Q5_K:
        unpack_avx2_q5_K((const gguf_block_q5_K *)w + i, u, sc, mn, m8, d, dmin, shift);
        break;
    default:
        unpack_avx2_q6_K((const gguf_block_q6_K *)w + i, u, sc, mn, m8, d, dmin, shift);
        break;
    }
}

/* nx activation rows against one weight row: each super-block is unpacked
 * once; row k's arithmetic does not depend on nx. madd_add is the
 * instruction set's (madd_add_avx2 or madd_add_vnni, kernels_simd.h). */
ALWAYS void kquant_rows(uint32_t type, madd_add_fn madd_add, int64_t n, const void *w,
                        const void *x, size_t xs, int nx, float *out)
{
    const int mins = min_kind(type);
    __m256 acc[KERN_NX];
    __m128 accm[KERN_NX];
    float summ[KERN_NX];
    for (int k = 0; k < nx; k++) {
        acc[k] = _mm256_setzero_ps();
        accm[k] = _mm_setzero_ps();
        summ[k] = 0.0f;
    }
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        __m256i u[8];
        int16_t sc[16], mn[16];
        __m128i m8 = _mm_setzero_si128();
        float d, dmin;
        int shift;
        unpack_avx2(type, w, i, u, sc, mn, &m8, &d, &dmin, &shift);
        for (int k = 0; k < nx; k++) {
            const gguf_block_q8_K *bx = (const gguf_block_q8_K *)((const uint8_t *)x + k * xs) + i;
            const float md = -bx->d * dmin;
            if (mins == MIN_LANES8)
                acc[k] = add_scaled(acc[k], md, super_msum(mn, bx));
            else if (mins == MIN_LANES4)
                accm[k] = _mm_fmadd_ps(_mm_set1_ps(md), _mm_cvtepi32_ps(super_msum4(m8, bx)),
                                       accm[k]);
            else if (mins == MIN_SCALAR) {
                __m128i m4 = super_msum4(m8, bx);
                m4 = _mm_hadd_epi32(_mm_hadd_epi32(m4, m4), m4);
                summ[k] = fmaf(md, (float)_mm_cvtsi128_si32(m4), summ[k]);
            }
            acc[k] = add_scaled(acc[k], bx->d * d, super_isum(madd_add, u, sc, shift, bx));
        }
    }
    for (int k = 0; k < nx; k++) {
        float r = hsum8(acc[k]);
        if (mins == MIN_LANES4) {
            __m128 m = _mm_add_ps(accm[k], _mm_movehl_ps(accm[k], accm[k]));
            m = _mm_add_ss(m, _mm_movehdup_ps(m));
            r += _mm_cvtss_f32(m);
        } else if (mins == MIN_SCALAR)
            r += summ[k];
        out[k] = r;
    }
}

/* The entry points of each type and instruction set: one pair (dot) and
 * one weight row × KERN_NX activation rows (dotn). */

KERN_AVX2 float dot_q2_K_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    kquant_rows(GGUF_DT_Q2_K, madd_add_avx2, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_q2_K_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    kquant_rows(GGUF_DT_Q2_K, madd_add_avx2, n, w, x, xs, KERN_NX, out);
}

KERN_AVX2 float dot_q3_K_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    kquant_rows(GGUF_DT_Q3_K, madd_add_avx2, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_q3_K_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    kquant_rows(GGUF_DT_Q3_K, madd_add_avx2, n, w, x, xs, KERN_NX, out);
}

KERN_AVX2 float dot_q4_K_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    kquant_rows(GGUF_DT_Q4_K, madd_add_avx2, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_q4_K_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    kquant_rows(GGUF_DT_Q4_K, madd_add_avx2, n, w, x, xs, KERN_NX, out);
}

KERN_AVX2 float dot_q5_K_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    kquant_rows(GGUF_DT_Q5_K, madd_add_avx2, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_q5_K_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    kquant_rows(GGUF_DT_Q5_K, madd_add_avx2, n, w, x, xs, KERN_NX, out);
}

KERN_AVX2 float dot_q6_K_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    kquant_rows(GGUF_DT_Q6_K, madd_add_avx2, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_q6_K_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    kquant_rows(GGUF_DT_Q6_K, madd_add_avx2, n, w, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_q2_K_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    kquant_rows(GGUF_DT_Q2_K, madd_add_vnni, n, w, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_q2_K_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    kquant_rows(GGUF_DT_Q2_K, madd_add_vnni, n, w, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_q3_K_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    kquant_rows(GGUF_DT_Q3_K, madd_add_vnni, n, w, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_q3_K_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    kquant_rows(GGUF_DT_Q3_K, madd_add_vnni, n, w, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_q4_K_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    kquant_rows(GGUF_DT_Q4_K, madd_add_vnni, n, w, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_q4_K_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    kquant_rows(GGUF_DT_Q4_K, madd_add_vnni, n, w, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_q5_K_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    kquant_rows(GGUF_DT_Q5_K, madd_add_vnni, n, w, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_q5_K_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    kquant_rows(GGUF_DT_Q5_K, madd_add_vnni, n, w, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_q6_K_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    kquant_rows(GGUF_DT_Q6_K, madd_add_vnni, n, w, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_q6_K_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    kquant_rows(GGUF_DT_Q6_K, madd_add_vnni, n, w, x, xs, KERN_NX, out);
}

/* ---------------------------------------------------------------------------
 * Packed q4_K (kern_pack): per group of eight rows and super-block, the
 * 1152 bytes the eight blocks take, rearranged so that vector lane r is
 * row r:
 *   0..15     the eight d (f16); 16..31 the eight dmin
 *   32..127   three vectors: lane r of vector w holds bytes 4w..4w+3 of
 *             row r's twelve scale bytes
 *   128..     32 vectors: lane r of vector 4L + g holds the levels of
 *             qs[32g + 4L + t], t = 0..3, of row r — low nibbles lo_t
 *             (sub-block 2g, levels 64g + 4L + t), high nibbles hi_t
 *             (sub-block 2g + 1, levels 64g + 32 + 4L + t) — as the bytes
 *             lo_0 | lo_2 << 4, lo_1 | lo_3 << 4, hi_0 | hi_2 << 4,
 *             hi_1 | hi_3 << 4: the low nibbles of the four bytes are
 *             lo_0, lo_1, hi_0, hi_1 and the high nibbles lo_2, lo_3,
 *             hi_2, hi_3, so that maddubs of either against the
 *             activation levels in that order (the row's extras,
 *             kernels_impl.h) gives an int16 of sub-block 2g and one of
 *             2g + 1 in each 32-bit lane.
 * Lane L of the one-row kernel's integer sum (super_isum) is
 *   Σ_g sc_2g · Σ lo·a + sc_2g+1 · Σ hi·a   over those four-byte pieces,
 * an exact integer in any order: here it is vector L, one lane per row.
 * The two maddubs of a vector add in 16 bits (|sum| ≤ 2·2·15·128 = 7680)
 * before one madd by the pair (sc_2g, sc_2g+1) — a madd per 64 levels
 * rather than per 32. The float chains are the one-row kernel's eight
 * lanes and four min lanes, kept per row and added at the end in hsum8's
 * order.
 */
#define PACK_Q4_K_BYTES (8 * sizeof(gguf_block_q4_K))

/* pshufb control: bytes 2p and 2p + 1 of each 32-bit lane as two int16
 * (a pair of scales or mins). */
ALWAYS __m256i byte_pair(int p)
{
    return lane_bytes(2 * p, -1, 2 * p + 1, -1);
}

void pack_put_q4_K(const void *blk, uint8_t *dst, int r)
{
    const gguf_block_q4_K *b = blk;
    memcpy(dst + 2 * r, &b->d, 2);
    memcpy(dst + 16 + 2 * r, &b->dmin, 2);
    for (int k = 0; k < 3; k++)
        memcpy(dst + 32 + 32 * k + 4 * r, b->scales + 4 * k, 4);
    for (int L = 0; L < 8; L++)
        for (int g = 0; g < 4; g++) {
            const uint8_t *q = b->qs + 32 * g + 4 * L;
            uint8_t *o = dst + 128 + 32 * (4 * L + g) + 4 * r;
            o[0] = (uint8_t)((q[0] & 0x0f) | (q[2] & 0x0f) << 4);
            o[1] = (uint8_t)((q[1] & 0x0f) | (q[3] & 0x0f) << 4);
            o[2] = (uint8_t)((q[0] >> 4) | (q[2] & 0xf0));
            o[3] = (uint8_t)((q[1] >> 4) | (q[3] & 0xf0));
        }
}

ALWAYS void rows8_q4_K(madd_add_fn madd_add, int64_t n, const void *wp, const void *x, size_t xs,
                     int nx, float *out)
{
    const __m256i lo4 = _mm256_set1_epi8(0x0f), lo6 = _mm256_set1_epi8(0x3f);
    const __m256i lo2 = _mm256_set1_epi8(0x03);
    __m256 f[KERN_NX][8], g[KERN_NX][4];
    const uint8_t *ex[KERN_NX];
    UNROLL for (int k = 0; k < nx; k++) {
        ex[k] = kern_act_extra_k((const uint8_t *)x + k * xs, n);
        UNROLL for (int j = 0; j < 8; j++)
            f[k][j] = _mm256_setzero_ps();
        UNROLL for (int j = 0; j < 4; j++)
            g[k][j] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        const uint8_t *blk = (const uint8_t *)wp + (size_t)i * PACK_Q4_K_BYTES;
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)blk));
        const __m256 mw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(blk + 16)));
        /* k4_scales16's decoding, eight rows at once */
        const __m256i w0 = load256(blk + 32), w1 = load256(blk + 64), w2 = load256(blk + 96);
        const __m256i sc_lo = _mm256_and_si256(w0, lo6), mn_lo = _mm256_and_si256(w1, lo6);
        const __m256i sc_hi = _mm256_or_si256(
            _mm256_and_si256(w2, lo4), _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(w0, 6), lo2), 4));
        const __m256i mn_hi = _mm256_or_si256(
            _mm256_and_si256(_mm256_srli_epi32(w2, 4), lo4),
            _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(w1, 6), lo2), 4));
        __m256i sp[4], mn[4]; /* sp[q]: the pair (sc_2q, sc_2q+1) */
        sp[0] = _mm256_shuffle_epi8(sc_lo, byte_pair(0));
        sp[1] = _mm256_shuffle_epi8(sc_lo, byte_pair(1));
        sp[2] = _mm256_shuffle_epi8(sc_hi, byte_pair(0));
        sp[3] = _mm256_shuffle_epi8(sc_hi, byte_pair(1));
        mn[0] = _mm256_shuffle_epi8(mn_lo, byte_pair(0));
        mn[1] = _mm256_shuffle_epi8(mn_lo, byte_pair(1));
        mn[2] = _mm256_shuffle_epi8(mn_hi, byte_pair(0));
        mn[3] = _mm256_shuffle_epi8(mn_hi, byte_pair(1));
        const gguf_block_q8_K *bx[KERN_NX];
        __m256 d[KERN_NX];
        UNROLL for (int k = 0; k < nx; k++) {
            bx[k] = (const gguf_block_q8_K *)((const uint8_t *)x + k * xs) + i;
            d[k] = _mm256_mul_ps(dw, _mm256_set1_ps(bx[k]->d));
            const __m256 md = _mm256_mul_ps(mw, _mm256_set1_ps(-bx[k]->d));
            /* the 32-element sums, as super_msum4 pairs them */
            int16_t s32[8];
            UNROLL for (int j = 0; j < 8; j++)
                s32[j] = (int16_t)(bx[k]->bsums[2 * j] + bx[k]->bsums[2 * j + 1]);
            UNROLL for (int m = 0; m < 4; m++) {
                const __m256i ms = _mm256_madd_epi16(mn[m], bcast4(s32 + 2 * m));
                g[k][m] = _mm256_fmadd_ps(md, _mm256_cvtepi32_ps(ms), g[k][m]);
            }
        }
        UNROLL for (int L = 0; L < 8; L++) {
            __m256i is[KERN_NX];
            UNROLL for (int k = 0; k < nx; k++)
                is[k] = _mm256_setzero_si256();
            UNROLL for (int q = 0; q < 4; q++) {
                const __m256i v = load256(blk + 128 + 32 * (4 * L + q));
                const __m256i x1 = _mm256_and_si256(v, lo4);
                const __m256i x2 = _mm256_and_si256(_mm256_srli_epi16(v, 4), lo4);
                UNROLL for (int k = 0; k < nx; k++) {
                    const uint8_t *a = ex[k] + (size_t)i * KERN_ACT_EXTRA_Q4K + 64 * q + 8 * L;
                    const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(x1, bcast4(a)),
                                                       _mm256_maddubs_epi16(x2, bcast4(a + 4)));
                    is[k] = madd_add(is[k], p, sp[q]);
                    KEEP_REG(is[k]); /* a chain per row (KEEP_REG) */
                }
            }
            UNROLL for (int k = 0; k < nx; k++)
                f[k][L] = _mm256_fmadd_ps(d[k], _mm256_cvtepi32_ps(is[k]), f[k][L]);
        }
    }
    UNROLL for (int k = 0; k < nx; k++) {
        const __m256 m = _mm256_add_ps(_mm256_add_ps(g[k][0], g[k][2]), _mm256_add_ps(g[k][1], g[k][3]));
        _mm256_storeu_ps(out + 8 * k, _mm256_add_ps(hsum8_rows(f[k]), m));
    }
}

KERN_VNNI void q4_Kx8_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out)
{
    kpacked_passes(rows8_q4_K, madd_add_vnni, n, wp, x, xs, nx, out);
}

KERN_AVX2 void q4_Kx8_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out)
{
    kpacked_passes(rows8_q4_K, madd_add_avx2, n, wp, x, xs, nx, out);
}

/* ---------------------------------------------------------------------------
 * Packed q6_K (kern_pack): per group of eight rows and super-block, the
 * 1680 bytes the eight blocks take, lane r = row r:
 *   0..15     the eight d (f16)
 *   16..143   four vectors: lane r of vector v holds scales 4v..4v+3 of row r
 *   144..     for lane group L (0..7) and half h (0, 1), three vectors at
 *             144 + 96·(2L + h) holding, for byte s of lane r, levels
 *             u_j = q + 32 (j = 0..3) of row r:
 *               P0 = u_0 | (u_2 >> 4) << 6,  P1 = u_1 | (u_3 >> 4) << 6,
 *               P2 = (u_2 & 15) | (u_3 & 15) << 4
 *             where u_j at byte s is the level of element
 *             128h + 32g + 4L + t, g = 2·(j / 2) + s / 2, t = 2·(j % 2) + s % 2:
 *             u_0 holds levels t = 0, 1 of groups 0 and 1 of the half,
 *             u_1 their levels t = 2, 3, u_2 and u_3 those of groups 2, 3.
 * Lane L of the one-row kernel's integer sum is Σ over the eight 32-element
 * groups c = 4h + g of sc_(2c + L/4) · Σ q·a over bytes 4L .. 4L + 3. Here
 * it is vector L, one lane per row: maddubs takes the activation levels
 * plus 128 (the row's extras, in the order above, kernels_impl.h) as its
 * unsigned operand against the signed levels q = u − 32 — pair sums
 * within ±2·255·32, and the two of u_0 and u_1 (or u_2 and u_3) add in
 * 16 bits (±32640) before one madd by the scale pair of groups g and
 * g + 1 — and 128·Σ sc·q, a weight-side sum made once for all activation
 * rows, is taken off. The float chains are the one-row kernel's eight
 * lanes, added at the end in hsum8's order.
 */
#define PACK_Q6_K_BYTES (8 * sizeof(gguf_block_q6_K))

void pack_put_q6_K(const void *blk, uint8_t *dst, int r)
{
    const gguf_block_q6_K *b = blk;
    kblock k;
    unpack_q6_K(b, &k); /* levels q of element 128h + 32j + l; u = q + 32 */
    memcpy(dst + 2 * r, &b->d, 2);
    for (int v = 0; v < 4; v++)
        memcpy(dst + 16 + 32 * v + 4 * r, b->scales + 4 * v, 4);
    for (int L = 0; L < 8; L++)
        for (int h = 0; h < 2; h++) {
            uint8_t *p = dst + 144 + 96 * (2 * L + h) + 4 * r;
            for (int s = 0; s < 4; s++) {
                /* kern_q6_K_elem(h, L, j, s) for j = 0..3 */
                const int8_t *q = k.q + 128 * h + 4 * L + 32 * (s / 2) + s % 2;
                const int u0 = q[0] + 32, u1 = q[2] + 32, u2 = q[64] + 32, u3 = q[66] + 32;
                p[s] = (uint8_t)(u0 | (u2 >> 4) << 6);
                p[32 + s] = (uint8_t)(u1 | (u3 >> 4) << 6);
                p[64 + s] = (uint8_t)((u2 & 0x0f) | (u3 & 0x0f) << 4);
            }
        }
}

/* Bytes b and b + 2 of every 32-bit lane of v, sign-extended, as the two
 * int16 of the lane (a pair of signed scales for madd). */
ALWAYS __m256i scale_pair(__m256i v, int b)
{
    return _mm256_srai_epi16(_mm256_shuffle_epi8(v, lane_bytes(-1, b, -1, b + 2)), 8);
}

/* Eight packed rows × nx activation rows. Each level vector is made once
 * for the nx rows; the float chains, nx × 8 of them, wait in memory
 * between super-blocks when nx > 1 and take the one-row kernel's fused
 * multiply-adds in its order: the same bits. */
ALWAYS void rows8_q6_K(madd_add_fn madd_add, int64_t n, const void *wp, const void *x, size_t xs, int nx,
                       float *out)
{
    const __m256i m3f = _mm256_set1_epi8(0x3f), m0f = _mm256_set1_epi8(0x0f);
    const __m256i m30 = _mm256_set1_epi8(0x30), m32 = _mm256_set1_epi8(32), ones = _mm256_set1_epi8(1);
    __m256 f[KERN_NX][8];
    const uint8_t *ux[KERN_NX];
    UNROLL for (int k = 0; k < nx; k++) {
        UNROLL for (int j = 0; j < 8; j++)
            f[k][j] = _mm256_setzero_ps();
        ux[k] = kern_act_extra_k((const uint8_t *)x + k * xs, n);
    }
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        const uint8_t *blk = (const uint8_t *)wp + (size_t)i * PACK_Q6_K_BYTES;
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)blk));
        const uint8_t *ax[KERN_NX];
        __m256 d[KERN_NX];
        UNROLL for (int k = 0; k < nx; k++) {
            const gguf_block_q8_K *bx = (const gguf_block_q8_K *)((const uint8_t *)x + k * xs) + i;
            ax[k] = ux[k] + (size_t)i * KERN_ACT_EXTRA_K;
            d[k] = _mm256_mul_ps(dw, _mm256_set1_ps(bx->d));
        }
        /* sp[4h + 2·pair + half]: the scales of groups 4h + 2·pair and
         * 4h + 2·pair + 1 for lanes L < 4 (half 0) or L ≥ 4 (half 1):
         * scales 8h + 4·pair + half and 2 more, of vector 2h + pair */
        __m256i sp[8];
        UNROLL for (int v = 0; v < 4; v++)
            UNROLL for (int half = 0; half < 2; half++)
                sp[2 * v + half] = scale_pair(load256(blk + 16 + 32 * v), half);
        UNROLL for (int half = 0; half < 2; half++)
        for (int L = 4 * half; L < 4 * half + 4; L++) {
            __m256i is[KERN_NX], ws = _mm256_setzero_si256();
            UNROLL for (int k = 0; k < nx; k++)
                is[k] = _mm256_setzero_si256();
            UNROLL for (int h = 0; h < 2; h++) {
                const uint8_t *q = blk + 144 + 96 * (2 * L + h);
                UNROLL for (int pair = 0; pair < 2; pair++) {
                    /* the level vectors made where they are used: four
                     * live at once with nx integer chains spill */
                    const __m256i ua = pair == 0 ? _mm256_and_si256(load256(q), m3f)
                                                 : _mm256_or_si256(_mm256_and_si256(load256(q + 64), m0f),
                                                                   _mm256_and_si256(_mm256_srli_epi16(load256(q), 2), m30));
                    const __m256i ub = pair == 0 ? _mm256_and_si256(load256(q + 32), m3f)
                                                 : _mm256_or_si256(
                                                       _mm256_and_si256(_mm256_srli_epi16(load256(q + 64), 4), m0f),
                                                       _mm256_and_si256(_mm256_srli_epi16(load256(q + 32), 2), m30));
                    const __m256i qa = _mm256_sub_epi8(ua, m32), qb = _mm256_sub_epi8(ub, m32);
                    const __m256i s = sp[4 * h + 2 * pair + half];
                    ws = madd_add(ws, _mm256_add_epi16(_mm256_maddubs_epi16(ones, qa), _mm256_maddubs_epi16(ones, qb)),
                                  s);
                    UNROLL for (int k = 0; k < nx; k++) {
                        const uint8_t *a = ax[k] + 32 * L + 16 * h + 8 * pair;
                        const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(bcast4(a), qa),
                                                           _mm256_maddubs_epi16(bcast4(a + 4), qb));
                        is[k] = madd_add(is[k], p, s);
                        /* a chain per row: else the compiler makes every
                         * product first and adds them as a tree, spilling */
                        KEEP_REG(is[k]);
                    }
                }
            }
            ws = _mm256_slli_epi32(ws, 7);
            UNROLL for (int k = 0; k < nx; k++)
                f[k][L] = _mm256_fmadd_ps(d[k], _mm256_cvtepi32_ps(_mm256_sub_epi32(is[k], ws)), f[k][L]);
        }
    }
    UNROLL for (int k = 0; k < nx; k++)
        _mm256_storeu_ps(out + 8 * k, hsum8_rows(f[k]));
}

KERN_VNNI void q6_Kx8_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out)
{
    kpacked_passes(rows8_q6_K, madd_add_vnni, n, wp, x, xs, nx, out);
}

KERN_AVX2 void q6_Kx8_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out)
{
    kpacked_passes(rows8_q6_K, madd_add_avx2, n, wp, x, xs, nx, out);
}

/* q8_K activations (libgguf's gguf_q8_K_quantize, which ggml's x86 build also
 * uses) on eight lanes: the first element of largest magnitude sets the
 * scale, each level is round_half_even(iscale · x) by the same magic-number
 * addition, capped at 127; bsums from the stored bytes. */
KERN_AVX2 void quantize_q8_K_avx2(const float *x, void *vy, int64_t n)
{
    gguf_block_q8_K *y = vy;
    const __m256 sign = _mm256_set1_ps(-0.0f), inf = _mm256_set1_ps(INFINITY);
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++) {
        const float *xb = x + (size_t)GGUF_QK_K * ib;
        __m256 m = _mm256_setzero_ps();
        int finite = 0xff;
        for (int j = 0; j < GGUF_QK_K / 8; j++) {
            const __m256 a = _mm256_andnot_ps(sign, _mm256_loadu_ps(xb + 8 * j));
            finite &= _mm256_movemask_ps(_mm256_cmp_ps(a, inf, _CMP_LT_OQ));
            m = _mm256_max_ps(m, a);
        }
        const float amax = hmax8(m);
        /* NaN or ±inf in, or -127 / max overflowing: the scalar code, whose
         * int8 conversion of out-of-range levels differs from packs' */
        if (finite != 0xff || (amax != 0.0f && !(127.0f / amax <= FLT_MAX))) {
            gguf_codec_get(GGUF_DT_Q8_K)->quantize(xb, &y[ib], GGUF_QK_K);
            continue;
        }
        if (amax == 0.0f) {
            memset(&y[ib], 0, sizeof y[ib]);
            continue;
        }
        const __m256 vamax = _mm256_set1_ps(amax);
        float max = 0.0f;
        for (int j = 0; j < GGUF_QK_K / 8; j++) {
            const __m256 v = _mm256_loadu_ps(xb + 8 * j);
            const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, v), vamax, _CMP_EQ_OQ));
            if (hit) {
                max = xb[8 * j + __builtin_ctz((unsigned)hit)];
                break;
            }
        }
        const float iscale = -127.0f / max;
        const __m256 vs = _mm256_set1_ps(iscale);
        const __m256i mant = _mm256_set1_epi32(0x007fffff), half = _mm256_set1_epi32(0x00400000);
        const __m256i top = _mm256_set1_epi32(127);
        for (int c = 0; c < GGUF_QK_K / 32; c++) {
            __m256i q[4];
            for (int j = 0; j < 4; j++) {
                const __m256 t = _mm256_add_ps(_mm256_mul_ps(vs, _mm256_loadu_ps(xb + 32 * c + 8 * j)), magic);
                q[j] = _mm256_min_epi32(
                    _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(t), mant), half), top);
            }
            const __m256i b = pack_levels(q);
            _mm256_storeu_si256((__m256i *)(y[ib].qs + 32 * c), b);
            /* sums of four, then of sixteen: lanes 0-3 and 4-7 */
            __m256i s4 = sums4_i8(b);
            s4 = _mm256_hadd_epi32(s4, s4);
            s4 = _mm256_hadd_epi32(s4, s4);
            y[ib].bsums[2 * c] = (int16_t)_mm256_extract_epi32(s4, 0);
            y[ib].bsums[2 * c + 1] = (int16_t)_mm256_extract_epi32(s4, 4);
        }
        y[ib].d = 1.0f / iscale;
    }
}
#endif
