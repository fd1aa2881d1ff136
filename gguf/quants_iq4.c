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
 * Not for: the other formats (quants_legacy.c, quants_k.c, quants_tq.c,
 * quants_mxfp4.c) or dispatch (quants.c).
 */
#include <math.h>
#include <string.h>

#include "quants_impl.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* The 16 levels of both formats: ggml-common.h's kvalues_iq4nl. */
static const int8_t IQ4_LEVELS[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
};

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

void gguf_iq4_nl_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_iq4_nl *b = y;
    for (int64_t i = 0; i < n / SUB; i++)
        iq4_nl_block(x + i * SUB, NULL, &b[i]);
}

/* The weights of block i are qw[32i .. 32i+31] (ggml), σ² the block's own. */
void gguf_iq4_nl_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    gguf_block_iq4_nl *b = y;
    for (int64_t i = 0; i < n / SUB; i++)
        iq4_nl_block(x + i * SUB, qw + i * SUB, &b[i]);
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

static void iq4_xs_block(const float *x, const float *qw, gguf_block_iq4_xs *b)
{
    const float sigma2 = qw ? sigma2_of(x, GGUF_QK_K) : 0.0f;
    float w[SUB], scales[N_SUB];
    /* the scale of largest magnitude, with its sign (the first on ties) */
    float max_scale = 0.0f, amax_scale = 0.0f;
    for (int ib = 0; ib < N_SUB; ib++) {
        block_weights(x + ib * SUB, qw ? qw + ib * SUB : NULL, sigma2, w);
        scales[ib] = block_scale(x + ib * SUB, w);
        if (fabsf(scales[ib]) > amax_scale) {
            amax_scale = fabsf(scales[ib]);
            max_scale = scales[ib];
        }
    }
    /* the extreme scale lands on -32, the integer side with one more step */
    const float d = -max_scale / 32.0f;
    b->d = gguf_f32_to_f16(d);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t L[SUB];
    b->scales_h = 0;
    memset(b->scales_l, 0, sizeof b->scales_l);
    for (int ib = 0; ib < N_SUB; ib++) {
        int l = round_half_even(id * scales[ib]);
        l = l < -32 ? -32 : l > 31 ? 31 : l;
        /* levels against the float d times the integer scale, as ggml
         * (not the f16-rounded d the dequantizer will use) */
        block_levels(x + ib * SUB, d * (float)l, L);
        pack_block(L, b->qs + ib * (SUB / 2));
        l += 32;
        b->scales_l[ib / 2] |= (uint8_t)((l & 0x0F) << 4 * (ib % 2));
        b->scales_h |= (uint16_t)((l >> 4) << 2 * ib);
    }
}

void gguf_iq4_xs_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_iq4_xs *b = y;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++)
        iq4_xs_block(x + i * GGUF_QK_K, NULL, &b[i]);
}

/* σ² over each super-block of 256 (not the row, unlike the k-quants). */
void gguf_iq4_xs_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    gguf_block_iq4_xs *b = y;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++)
        iq4_xs_block(x + i * GGUF_QK_K, qw + i * GGUF_QK_K, &b[i]);
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
