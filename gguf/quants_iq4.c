/*
 * quants_iq4.c — the 4-bit non-linear formats: iq4_nl and iq4_xs.
 *
 * Both map every element to one of 16 fixed levels v (ggml's kvalues_iq4nl,
 * denser near zero than a uniform grid) times a scale:
 *
 *   iq4_nl   blocks of 32, one f16 scale                 x ≈ d · v[q]
 *   iq4_xs   super-blocks of 256: an f16 d and a 6-bit
 *            signed scale ls per sub-block of 32         x ≈ d · (ls - 32) · v[q]
 *
 * Quantizing (ggml's quantize_row_iq4_nl_impl, as quantize_iq4_nl and
 * quantize_iq4_xs call it, with and without importance weights):
 *   1. per block of 32, the weighted least-squares scale for the levels the
 *      signed extreme's scale gives, then for each of 15 trial inverse
 *      scales (v[0] + k)/max, k = -7..7, the least-squares scale of the
 *      levels it gives, keeping the one that removes the most error;
 *   2. iq4_nl stores that scale; iq4_xs quantizes the eight scales to
 *      integers against d = -max_scale/32;
 *   3. every level is picked again against the stored (iq4_xs: integer)
 *      scale.
 * Without importance weights the weights are x²: ggml_quantize_chunk's path
 * (what llama-quantize writes, and the fixture vectors hold), which for
 * iq4_xs is also quantize_row_iq4_xs_ref. ggml's quantize_row_iq4_nl_ref
 * differs (no trials, the first pass's levels kept); ggml's CPU backend
 * uses it only to copy activations into iq4_nl tensors at run time (a KV
 * cache), and it is not implemented here.
 *
 * The bytes must be ggml's (quants.h): single-precision sums left to right,
 * products in ggml's order, no fused multiply-add, ggml's nearest-level
 * search with its tie rule.
 *
 * Where the CPU has AVX2, steps 1 and 3 run on eight blocks of 32 at once,
 * one per vector lane, each lane doing exactly the scalar operations (see
 * "Eight blocks at a time"); gguf_quants_force_scalar(true) keeps the
 * one-block-at-a-time code, which the tests hold the lanes to.
 *
 * Not for: the other formats (quants_legacy.c, quants_k.c, quants_tq.c,
 * quants_mxfp4.c) or dispatch (quants.c).
 */
#include <math.h>
#include <string.h>

#include "cpu.h"
#include "quants_impl.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* The 16 levels of both formats: ggml-common.h's kvalues_iq4nl. */
static const int8_t IQ4_LEVELS[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
};

const int8_t *gguf_iq4_levels(void) { return IQ4_LEVELS; }

/* Both formats search blocks of 32 and pack them alike. */
#define SUB 32
#define N_TRIALS 7 /* inverse scales (v[0] + k)/max for k = -7..7 */
_Static_assert(GGUF_QK4_NL == SUB, "iq4_nl blocks are 32 elements");

/* Index of the level nearest v (ggml's best_index_int8 over the table):
 * clamped at both ends, bisection, and on an exact tie the upper level.
 * A NaN lands on the top level, as in ggml. */
static int nearest_level(float v)
{
    if (v <= (float)IQ4_LEVELS[0])
        return 0;
    if (v >= (float)IQ4_LEVELS[15])
        return 15;
    int lo = 0, hi = 15;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (v < (float)IQ4_LEVELS[mid])
            hi = mid;
        else
            lo = mid;
    }
    return v - (float)IQ4_LEVELS[hi - 1] < (float)IQ4_LEVELS[hi] - v ? hi - 1 : hi;
}

/* σ² of the search's weights: 2/n · Σx² over the n values of the
 * (super-)block, summed left to right in float (as ggml). */
static float sigma2_of(const float *x, int n)
{
    float sum = 0.0f;
    for (int j = 0; j < n; j++)
        sum += x[j] * x[j];
    return sum * (2.0f / (float)n);
}

/* Weights of one block of 32: imatrix · sqrt(σ² + x²), or x² without one. */
static void block_weights(const float *x, const float *qw, float sigma2, float w[SUB])
{
    for (int j = 0; j < SUB; j++)
        w[j] = qw ? qw[j] * sqrtf(sigma2 + x[j] * x[j]) : x[j] * x[j];
}

/* The weighted sums Σ w·v·x and Σ w·v² of the levels inverse scale id
 * gives, each product formed as (w·v)·x and (w·v)·v (as ggml). */
static void level_sums(const float x[SUB], const float w[SUB], float id, float *sumqx,
                       float *sumq2)
{
    float sx = 0.0f, s2 = 0.0f;
    for (int j = 0; j < SUB; j++) {
        const float q = (float)IQ4_LEVELS[nearest_level(id * x[j])];
        const float wq = w[j] * q;
        sx += wq * x[j];
        s2 += wq * q;
    }
    *sumqx = sx;
    *sumq2 = s2;
}

/* Step 1 for one block: its float scale, 0 for an all-zero block. */
static float block_scale(const float x[SUB], const float w[SUB])
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < SUB; j++) {
        const float ax = fabsf(x[j]);
        if (ax > amax) {
            amax = ax;
            max = x[j];
        }
    }
    if (amax < ALL_ZERO_EPS)
        return 0.0f;
    /* first the scale that puts the extreme on v[0]: d rounded, then 1/d */
    float d = -max / (float)IQ4_LEVELS[0];
    float sumqx, sumq2;
    level_sums(x, w, 1.0f / d, &sumqx, &sumq2);
    d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
    /* error removed by scale d is d·Σwvx; a trial wins when its own
     * (Σwvx)²/Σwv² is larger, compared without dividing (as ggml) */
    float best = d * sumqx;
    for (int k = -N_TRIALS; k <= N_TRIALS; k++) {
        level_sums(x, w, (float)(k + IQ4_LEVELS[0]) / max, &sumqx, &sumq2);
        if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

/* Step 3 for one block: the level of every value against scale d (an
 * inverse of 0 for a zero scale, making every level v[8] = 1's index). */
static void block_levels(const float x[SUB], float d, uint8_t L[SUB])
{
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < SUB; j++)
        L[j] = (uint8_t)nearest_level(id * x[j]);
}

/* Byte j of a block's 16 holds element j in its low nibble and j + 16 in
 * its high one (q4_0's layout). */
static void pack_block(const uint8_t L[SUB], uint8_t qs[SUB / 2])
{
    for (int j = 0; j < SUB / 2; j++)
        qs[j] = (uint8_t)(L[j] | L[j + SUB / 2] << 4);
}

/* ========================================================================
 * Eight blocks at a time (AVX2)
 *
 * The search above on eight blocks of 32, one block per vector lane, as
 * quants_lanes.h does for the k-quants: every lane performs exactly the
 * scalar float operations on its block, in the same order (IEEE add,
 * multiply, divide are correctly rounded lane by lane; no fused
 * multiply-add, no reassociation), and the data-dependent branches become
 * per-lane selects, so each lane's result is bit for bit the scalar one.
 * The time went into nearest_level's bisection, whose branches the data
 * decide at random; here it is branch-free.
 *
 * Branch-free nearest level. Within [v[i-1], v[i]) nearest_level answers i
 * exactly when v - v[i-1] < v[i] - v fails; both sides are monotone in v, so
 * that happens from a threshold T[i] on, and T[i] is the midpoint
 * (v[i-1] + v[i])/2 (near it both differences are exact). So the level's
 * index is the number of thresholds ≤ v (a NaN counting all of them, as
 * the bisection sends it to the top level), found here by a bisection over
 * T whose comparisons are selects, the last step choosing between the pair
 * of levels it has narrowed to. (nearest8 and nearest_level were compared
 * on all 2^32 floats when this was written; tests/unit/test_quants.c holds
 * the lanes to the scalar path on rows with exact ties.)
 * ======================================================================== */

#if GGUF_X86
#include <immintrin.h>

#define LANES 8
#define LANE_FN static inline __attribute__((always_inline)) GGUF_TARGET_AVX2

/* T[i], from which on level i is the nearest: (v[i-1] + v[i]) / 2 (T[0]
 * unused). The bisection compares T[8] first, then T[4] or T[12], then
 * T[2k + 2] for k = 0, 2, 4, 6 (k the index so far halved), then T[2k + 1],
 * choosing between v[2k] and v[2k + 1]. */
static const float T[16] = { 0.0f,   -115.5f, -93.5f, -74.0f, -57.0f, -42.0f, -28.5f, -16.0f,
                             -4.5f,  7.0f,    19.0f,  31.5f,  45.5f,  61.0f,  79.0f,  101.0f };
#define V(i) ((float)IQ4_LEVELS[i])

/* !(v < t): also true for a NaN v, which so reaches the top level. */
#define GE_OR_NAN(v, t) _mm256_cmp_ps((v), (t), _CMP_NLT_UQ)

/* The level nearest each lane of v (as a float) and its index. */
LANE_FN __m256 nearest8(__m256 v, __m256i *idx)
{
    const __m256 t_c = _mm256_setr_ps(T[2], 0.0f, T[6], 0.0f, T[10], 0.0f, T[14], 0.0f);
    const __m256 t_d = _mm256_setr_ps(T[1], T[3], T[5], T[7], T[9], T[11], T[13], T[15]);
    const __m256 v_even = _mm256_setr_ps(V(0), V(2), V(4), V(6), V(8), V(10), V(12), V(14));
    const __m256 v_odd = _mm256_setr_ps(V(1), V(3), V(5), V(7), V(9), V(11), V(13), V(15));
    const __m256 m_a = GE_OR_NAN(v, _mm256_set1_ps(T[8]));
    const __m256 t_b = _mm256_blendv_ps(_mm256_set1_ps(T[4]), _mm256_set1_ps(T[12]), m_a);
    const __m256 m_b = GE_OR_NAN(v, t_b);
    __m256i k = _mm256_or_si256(_mm256_and_si256(_mm256_castps_si256(m_a), _mm256_set1_epi32(4)),
                                _mm256_and_si256(_mm256_castps_si256(m_b), _mm256_set1_epi32(2)));
    const __m256 m_c = GE_OR_NAN(v, _mm256_permutevar8x32_ps(t_c, k));
    k = _mm256_or_si256(k, _mm256_and_si256(_mm256_castps_si256(m_c), _mm256_set1_epi32(1)));
    const __m256 m_d = GE_OR_NAN(v, _mm256_permutevar8x32_ps(t_d, k));
    if (idx) /* 2k, plus 1 where m_d */
        *idx = _mm256_sub_epi32(_mm256_add_epi32(k, k), _mm256_castps_si256(m_d));
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(v_even, k),
                            _mm256_permutevar8x32_ps(v_odd, k), m_d);
}
#undef GE_OR_NAN
#undef V

/* out[8c + i] lane b = src[b * SUB + 8c + i]: eight blocks of 32, one per lane. */
LANE_FN void load_lanes(const float *src, __m256 out[SUB])
{
    for (int c = 0; c < SUB / 8; c++) {
        __m256 r[8], t[8];
        for (int b = 0; b < 8; b++)
            r[b] = _mm256_loadu_ps(src + b * SUB + 8 * c);
        for (int b = 0; b < 8; b += 2) {
            t[b] = _mm256_unpacklo_ps(r[b], r[b + 1]);
            t[b + 1] = _mm256_unpackhi_ps(r[b], r[b + 1]);
        }
        for (int b = 0; b < 8; b += 4) {
            r[b] = _mm256_shuffle_ps(t[b], t[b + 2], 0x44);
            r[b + 1] = _mm256_shuffle_ps(t[b], t[b + 2], 0xEE);
            r[b + 2] = _mm256_shuffle_ps(t[b + 1], t[b + 3], 0x44);
            r[b + 3] = _mm256_shuffle_ps(t[b + 1], t[b + 3], 0xEE);
        }
        /* r[0..3]: elements 0,1,2,3 (+4 in the high half) of blocks 0-3;
         * r[4..7] the same for blocks 4-7 */
        for (int i = 0; i < 4; i++) {
            out[8 * c + i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
            out[8 * c + i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
        }
    }
}

/* level_sums on every lane. */
LANE_FN void level_sums8(const __m256 x[SUB], const __m256 w[SUB], __m256 id, __m256 *sumqx,
                         __m256 *sumq2)
{
    __m256 sx = _mm256_setzero_ps(), s2 = _mm256_setzero_ps();
    for (int j = 0; j < SUB; j++) {
        const __m256 q = nearest8(_mm256_mul_ps(id, x[j]), NULL);
        const __m256 wq = _mm256_mul_ps(w[j], q);
        sx = _mm256_add_ps(sx, _mm256_mul_ps(wq, x[j]));
        s2 = _mm256_add_ps(s2, _mm256_mul_ps(wq, q));
    }
    *sumqx = sx;
    *sumq2 = s2;
}

/* block_scale on every lane. */
LANE_FN __m256 block_scale8(const __m256 x[SUB], const __m256 w[SUB])
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 amax = _mm256_setzero_ps(), max = _mm256_setzero_ps();
    for (int j = 0; j < SUB; j++) {
        const __m256 ax = _mm256_andnot_ps(sign, x[j]);
        const __m256 bigger = _mm256_cmp_ps(ax, amax, _CMP_GT_OQ);
        amax = _mm256_blendv_ps(amax, ax, bigger);
        max = _mm256_blendv_ps(max, x[j], bigger);
    }
    const __m256 zero = _mm256_cmp_ps(amax, _mm256_set1_ps(ALL_ZERO_EPS), _CMP_LT_OQ);
    __m256 d = _mm256_div_ps(_mm256_xor_ps(max, sign), _mm256_set1_ps((float)IQ4_LEVELS[0]));
    __m256 sumqx, sumq2;
    level_sums8(x, w, _mm256_div_ps(_mm256_set1_ps(1.0f), d), &sumqx, &sumq2);
    d = _mm256_and_ps(_mm256_cmp_ps(sumq2, _mm256_setzero_ps(), _CMP_GT_OQ),
                      _mm256_div_ps(sumqx, sumq2));
    __m256 best = _mm256_mul_ps(d, sumqx);
    for (int k = -N_TRIALS; k <= N_TRIALS; k++) {
        const __m256 id = _mm256_div_ps(_mm256_set1_ps((float)(k + IQ4_LEVELS[0])), max);
        level_sums8(x, w, id, &sumqx, &sumq2);
        const __m256 take =
            _mm256_and_ps(_mm256_cmp_ps(sumq2, _mm256_setzero_ps(), _CMP_GT_OQ),
                          _mm256_cmp_ps(_mm256_mul_ps(sumqx, sumqx), _mm256_mul_ps(best, sumq2),
                                        _CMP_GT_OQ));
        const __m256 dt = _mm256_div_ps(sumqx, sumq2);
        d = _mm256_blendv_ps(d, dt, take);
        best = _mm256_blendv_ps(best, _mm256_mul_ps(dt, sumqx), take);
    }
    return _mm256_andnot_ps(zero, d);
}

/* block_levels and pack_block on every lane: scale d[b] for block b. */
LANE_FN void block_levels8(const __m256 x[SUB], __m256 d, uint8_t *qs, int qs_stride)
{
    const __m256 nonzero = _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_NEQ_UQ);
    const __m256 id = _mm256_and_ps(nonzero, _mm256_div_ps(_mm256_set1_ps(1.0f), d));
    int32_t packed[SUB / 2][LANES];
    for (int j = 0; j < SUB / 2; j++) {
        __m256i lo, hi;
        nearest8(_mm256_mul_ps(id, x[j]), &lo);
        nearest8(_mm256_mul_ps(id, x[j + SUB / 2]), &hi);
        _mm256_storeu_si256((__m256i *)packed[j], _mm256_or_si256(lo, _mm256_slli_epi32(hi, 4)));
    }
    for (int b = 0; b < LANES; b++)
        for (int j = 0; j < SUB / 2; j++)
            qs[b * qs_stride + j] = (uint8_t)packed[j][b];
}

/* Eight blocks x[0..255]: their scales, with block_weights' weights from
 * importance weights qw[0..255] (NULL: x²) and σ² = *sigma2 or, sigma2
 * NULL, each block's own sigma2_of. */
GGUF_TARGET_AVX2 static void block_scales_x8(const float *x, const float *qw, const float *sigma2,
                                             float d[LANES])
{
    __m256 xv[SUB], wv[SUB];
    load_lanes(x, xv);
    if (qw) {
        load_lanes(qw, wv);
        __m256 s2;
        if (sigma2) {
            s2 = _mm256_set1_ps(*sigma2);
        } else {
            s2 = _mm256_setzero_ps();
            for (int j = 0; j < SUB; j++)
                s2 = _mm256_add_ps(s2, _mm256_mul_ps(xv[j], xv[j]));
            s2 = _mm256_mul_ps(s2, _mm256_set1_ps(2.0f / (float)SUB));
        }
        for (int j = 0; j < SUB; j++)
            wv[j] = _mm256_mul_ps(wv[j],
                                  _mm256_sqrt_ps(_mm256_add_ps(s2, _mm256_mul_ps(xv[j], xv[j]))));
    } else {
        for (int j = 0; j < SUB; j++)
            wv[j] = _mm256_mul_ps(xv[j], xv[j]);
    }
    _mm256_storeu_ps(d, block_scale8(xv, wv));
}

/* Eight blocks x[0..255]: levels against scales d[0..7], packed into
 * qs + b * qs_stride. */
GGUF_TARGET_AVX2 static void block_levels_x8(const float *x, const float d[LANES], uint8_t *qs,
                                             int qs_stride)
{
    __m256 xv[SUB];
    load_lanes(x, xv);
    block_levels8(xv, _mm256_loadu_ps(d), qs, qs_stride);
}

static bool use_lanes(void)
{
    return !gguf_quants_scalar_forced() && gguf_cpu_avx2();
}
#else
#define LANES 8
static bool use_lanes(void) { return false; }
static void block_scales_x8(const float *x, const float *qw, const float *sigma2, float d[LANES])
{
    (void)x, (void)qw, (void)sigma2, (void)d;
}
static void block_levels_x8(const float *x, const float d[LANES], uint8_t *qs, int qs_stride)
{
    (void)x, (void)d, (void)qs, (void)qs_stride;
}
#endif


/* ========================================================================
 * iq4_nl
 * ======================================================================== */

static void iq4_nl_block(const float *x, const float *qw, gguf_block_iq4_nl *b)
{
    float w[SUB];
    uint8_t L[SUB];
    block_weights(x, qw, qw ? sigma2_of(x, SUB) : 0.0f, w);
    const float d = block_scale(x, w);
    b->d = gguf_f32_to_f16(d);
    block_levels(x, d, L);
    pack_block(L, b->qs);
}

/* Blocks i .. i+count-1 (count ≤ 8) eight lanes at a time; a short group
 * runs padded with all-zero blocks, whose results are dropped. */
static void iq4_nl_group(const float *x, const float *qw, gguf_block_iq4_nl *b, int count)
{
    float xs[LANES * SUB], qws[LANES * SUB], d[LANES];
    uint8_t qs[LANES][SUB / 2];
    if (count < LANES) {
        memset(xs, 0, sizeof xs);
        memcpy(xs, x, sizeof(float) * SUB * (size_t)count);
        x = xs;
        if (qw) {
            memset(qws, 0, sizeof qws);
            memcpy(qws, qw, sizeof(float) * SUB * (size_t)count);
            qw = qws;
        }
    }
    block_scales_x8(x, qw, NULL, d);
    block_levels_x8(x, d, qs[0], SUB / 2);
    for (int ib = 0; ib < count; ib++) {
        b[ib].d = gguf_f32_to_f16(d[ib]);
        memcpy(b[ib].qs, qs[ib], sizeof b[ib].qs);
    }
}

static void iq4_nl_row(const float *x, gguf_block_iq4_nl *b, int64_t n, const float *qw)
{
    const int64_t nb = n / SUB;
    if (use_lanes()) {
        for (int64_t i = 0; i < nb; i += LANES)
            iq4_nl_group(x + i * SUB, qw ? qw + i * SUB : NULL, &b[i],
                         nb - i < LANES ? (int)(nb - i) : LANES);
        return;
    }
    for (int64_t i = 0; i < nb; i++)
        iq4_nl_block(x + i * SUB, qw ? qw + i * SUB : NULL, &b[i]);
}

void gguf_iq4_nl_quantize(const float *x, void *y, int64_t n)
{
    iq4_nl_row(x, y, n, NULL);
}

/* The weights of block i are qw[32i .. 32i+31] (ggml), σ² the block's own. */
void gguf_iq4_nl_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    iq4_nl_row(x, y, n, qw);
}

void gguf_iq4_nl_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_iq4_nl *b = x;
    for (int64_t i = 0; i < n / SUB; i++, y += SUB) {
        const float d = gguf_f16_to_f32(b[i].d);
        for (int j = 0; j < SUB / 2; j++) {
            y[j] = d * (float)IQ4_LEVELS[b[i].qs[j] & 0x0F];
            y[j + SUB / 2] = d * (float)IQ4_LEVELS[b[i].qs[j] >> 4];
        }
    }
}

/* ========================================================================
 * iq4_xs
 * ======================================================================== */

#define N_SUB (GGUF_QK_K / SUB)

_Static_assert(N_SUB == LANES, "an iq4_xs super-block fills the lanes");

/* One super-block; lanes: the eight sub-blocks eight lanes at a time. */
static void iq4_xs_block(const float *x, const float *qw, gguf_block_iq4_xs *b, bool lanes)
{
    const float sigma2 = qw ? sigma2_of(x, GGUF_QK_K) : 0.0f;
    float w[SUB], scales[N_SUB];
    if (lanes) {
        block_scales_x8(x, qw, &sigma2, scales);
    } else {
        for (int ib = 0; ib < N_SUB; ib++) {
            block_weights(x + ib * SUB, qw ? qw + ib * SUB : NULL, sigma2, w);
            scales[ib] = block_scale(x + ib * SUB, w);
        }
    }
    /* the scale of largest magnitude, with its sign (the first on ties) */
    float max_scale = 0.0f, amax_scale = 0.0f;
    for (int ib = 0; ib < N_SUB; ib++) {
        if (fabsf(scales[ib]) > amax_scale) {
            amax_scale = fabsf(scales[ib]);
            max_scale = scales[ib];
        }
    }
    /* the extreme scale lands on -32, the integer side with one more step */
    const float d = -max_scale / 32.0f;
    b->d = gguf_f32_to_f16(d);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    float dl[N_SUB];
    b->scales_h = 0;
    memset(b->scales_l, 0, sizeof b->scales_l);
    for (int ib = 0; ib < N_SUB; ib++) {
        int l = round_half_even(id * scales[ib]);
        l = l < -32 ? -32 : l > 31 ? 31 : l;
        /* levels against the float d times the integer scale, as ggml
         * (not the f16-rounded d the dequantizer will use) */
        dl[ib] = d * (float)l;
        l += 32;
        b->scales_l[ib / 2] |= (uint8_t)((l & 0x0F) << 4 * (ib % 2));
        b->scales_h |= (uint16_t)((l >> 4) << 2 * ib);
    }
    if (lanes) {
        block_levels_x8(x, dl, b->qs, SUB / 2);
    } else {
        uint8_t L[SUB];
        for (int ib = 0; ib < N_SUB; ib++) {
            block_levels(x + ib * SUB, dl[ib], L);
            pack_block(L, b->qs + ib * (SUB / 2));
        }
    }
}

void gguf_iq4_xs_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_iq4_xs *b = y;
    const bool lanes = use_lanes();
    for (int64_t i = 0; i < n / GGUF_QK_K; i++)
        iq4_xs_block(x + i * GGUF_QK_K, NULL, &b[i], lanes);
}

/* σ² over each super-block of 256 (not the row, unlike the k-quants). */
void gguf_iq4_xs_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    gguf_block_iq4_xs *b = y;
    const bool lanes = use_lanes();
    for (int64_t i = 0; i < n / GGUF_QK_K; i++)
        iq4_xs_block(x + i * GGUF_QK_K, qw + i * GGUF_QK_K, &b[i], lanes);
}

void gguf_iq4_xs_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_iq4_xs *b = x;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        const float d = gguf_f16_to_f32(b[i].d);
        for (int ib = 0; ib < N_SUB; ib++, y += SUB) {
            const int ls = (b[i].scales_l[ib / 2] >> 4 * (ib % 2) & 0x0F) |
                           (b[i].scales_h >> 2 * ib & 3) << 4;
            const float dl = d * (float)(ls - 32);
            const uint8_t *qs = b[i].qs + ib * (SUB / 2);
            for (int j = 0; j < SUB / 2; j++) {
                y[j] = dl * (float)IQ4_LEVELS[qs[j] & 0x0F];
                y[j + SUB / 2] = dl * (float)IQ4_LEVELS[qs[j] >> 4];
            }
        }
    }
}
