/*
 * quants_k.c — the k-quant formats: q2_K, q3_K, q4_K, q5_K, q6_K, and q8_K.
 *
 * A k-quant super-block holds GGUF_QK_K = 256 values as 8 or 16 sub-blocks, each
 * with its own small integer scale (and for q2/q4/q5 a min), which in turn
 * are quantized against one f16 super-scale d (and dmin):
 *
 *   q2_K   16 × 16, 2-bit levels, 4-bit scale and min   x ≈ d·sc·q - dmin·m
 *   q3_K   16 × 16, 3-bit levels, 6-bit signed scale    x ≈ d·(sc-32)·(q-4)
 *   q4_K    8 × 32, 4-bit levels, 6-bit scale and min   x ≈ d·sc·q - dmin·m
 *   q5_K    8 × 32, 5-bit levels, 6-bit scale and min
 *   q6_K   16 × 16, 6-bit levels, 8-bit signed scale    x ≈ d·sc·(q-32)
 *   q8_K   256 8-bit levels, f32 scale, 16 block sums (activations only)
 *
 * Every quantizer runs in three steps: search each sub-block's levels and
 * scale in float; quantize the scales against the super-scale; requantize
 * every value against its sub-block's now-integer scale. The bytes must be
 * ggml's (quants.h), so each float operation happens in ggml's order and
 * precision, and integer narrowing wraps exactly where ggml's does.
 *
 * Not for: the 32-element formats (quants_legacy.c) or dispatch (quants.c).
 */
#include <math.h>

#include "quants_impl.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

static inline int clamp(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* ========================================================================
 * Searches only the k-quants use (the shared ones: quants_search.c)
 * ======================================================================== */

/* ggml's make_q3_quants with do_rmse: scale-only levels -nmax..nmax-1,
 * weights x², then up to five passes that move single levels to where the
 * other levels' fit puts them, keeping a move when it improves the fit.
 * L gets the levels offset by nmax. Returns the scale. */
static float search_q3(int n, int nmax, const float *x, uint8_t *L)
{
    const float max = signed_absmax(x, n);
    if (fabsf(max) < ALL_ZERO_EPS) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    const float iscale = (float)-nmax / max;
    int l[GGUF_QK_K];
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; i++) {
        l[i] = clamp(round_half_even(iscale * x[i]), -nmax, nmax - 1);
        float w = x[i] * x[i];
        sumlx += w * x[i] * (float)l[i];
        suml2 += w * (float)l[i] * (float)l[i];
    }
    for (int pass = 0; pass < 5; pass++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            float w = x[i] * x[i];
            /* The fit without element i, and where it would put i. */
            float slx = sumlx - w * x[i] * (float)l[i];
            if (!(slx > 0.0f))
                continue;
            float sl2 = suml2 - w * (float)l[i] * (float)l[i];
            int nl = clamp(round_half_even(x[i] * sl2 / slx), -nmax, nmax - 1);
            if (nl == l[i])
                continue;
            slx += w * x[i] * (float)nl;
            sl2 += w * (float)nl * (float)nl;
            /* (Σwxl)²/Σwl² grows, compared without dividing. */
            if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
                l[i] = nl;
                sumlx = slx;
                suml2 = sl2;
                changed++;
            }
        }
        if (!changed)
            break;
    }
    for (int i = 0; i < n; i++)
        L[i] = (uint8_t)(l[i] + nmax);
    /* no weight on any level (an imatrix whose sums are 0 here): 0, as
     * ggml — the division would be 0/0, a NaN scale in the block */
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* gguf_search_positive: see quants_impl.h. */
float gguf_search_positive(int n, int nmax, const float *x, uint8_t *L, const float *w)
{
    float max = 0.0f;
    for (int i = 0; i < n; i++)
        max = max > x[i] ? max : x[i];
    if (max == 0.0f) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    float iscale = (float)nmax / max;
    for (int i = 0; i < n; i++)
        L[i] = (uint8_t)round_half_even(iscale * x[i]);
    float scale = 1.0f / iscale;
    float best = 0.0f;
    for (int i = 0; i < n; i++) {
        float diff = x[i] - scale * (float)L[i];
        best += w[i] * diff * diff;
    }
    for (int k = -4; k <= 4; k++) {
        if (k == 0)
            continue;
        float iscale_k = (0.1f * (float)k + (float)nmax) / max;
        float scale_k = 1.0f / iscale_k;
        float err = 0.0f;
        for (int i = 0; i < n; i++) {
            int l = round_half_even(iscale_k * x[i]);
            l = l < nmax ? l : nmax;
            float diff = x[i] - scale_k * (float)l;
            err += w[i] * diff * diff;
        }
        if (err < best) {
            best = err;
            iscale = iscale_k;
        }
    }
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; i++) {
        int l = round_half_even(iscale * x[i]);
        l = l < nmax ? l : nmax;
        L[i] = (uint8_t)l;
        sumlx += w[i] * x[i] * (float)l;
        suml2 += w[i] * (float)l * (float)l;
    }
    for (int pass = 0; pass < 5; pass++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            /* The stored (byte) level, as ggml reads it back. */
            float li = (float)L[i];
            float slx = sumlx - w[i] * x[i] * li;
            float sl2 = suml2 - w[i] * li * li;
            if (!(slx > 0.0f && sl2 > 0.0f))
                continue;
            int nl = round_half_even(x[i] * sl2 / slx);
            nl = nl < nmax ? nl : nmax;
            if (nl == L[i])
                continue;
            slx += w[i] * x[i] * (float)nl;
            sl2 += w[i] * (float)nl * (float)nl;
            if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                L[i] = (uint8_t)nl;
                sumlx = slx;
                suml2 = sl2;
                changed++;
            }
        }
        if (!changed)
            break;
    }
    /* no weight on any level (an imatrix whose sums are 0 here): 0, as
     * ggml — the division would be 0/0, a NaN scale in the block */
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* The importance weights of one super-block's sub-block of n values:
 * imatrix_i * sqrt(σ² + x_i²), and their sum. */
static float importance(const float *x, const float *qw, float sigma2, int n, float *w)
{
    float sum = 0.0f;
    for (int i = 0; i < n; i++)
        w[i] = qw[i] * sqrtf(sigma2 + x[i] * x[i]);
    for (int i = 0; i < n; i++)
        sum += w[i];
    return sum;
}

/* Σx² over one super-block, left to right (as ggml). */
static float sum_squares(const float *x)
{
    float s = 0.0f;
    for (int i = 0; i < GGUF_QK_K; i++)
        s += x[i] * x[i];
    return s;
}

/* ========================================================================
 * Level packing shared by several formats
 * ======================================================================== */

/* 2-bit levels: byte l of each 32-byte group g holds the levels of elements
 * 128g + l, +32, +64, +96 in bits 0-1, 2-3, 4-5, 6-7 (q2_K qs, q3_K qs). */
static void pack_2bit(const uint8_t *L, uint8_t *qs)
{
    for (int g = 0; g < GGUF_QK_K; g += 128)
        for (int l = 0; l < 32; l++)
            qs[g / 4 + l] = (uint8_t)(L[g + l] | L[g + l + 32] << 2 | L[g + l + 64] << 4 |
                                      L[g + l + 96] << 6);
}

/* q4_K/q5_K's twelve scale bytes: sub-blocks 0-3 keep their 6-bit scale
 * and min in bytes j and j+4; 4-7 put their low nibbles in byte j+4 and
 * their top two bits in the spare top bits of bytes j-4 and j. Bits above
 * the sixth (possible only for q4_K's weighted path) spill as in ggml. */
static void pack_scale_min(uint8_t s[GGUF_K_SCALE_SIZE], const uint8_t ls[8], const uint8_t lm[8])
{
    for (int j = 0; j < 8; j++) {
        if (j < 4) {
            s[j] = ls[j];
            s[j + 4] = lm[j];
        } else {
            s[j + 4] = (uint8_t)((ls[j] & 0xF) | (lm[j] & 0xF) << 4);
            s[j - 4] |= (uint8_t)((ls[j] >> 4) << 6);
            s[j] |= (uint8_t)((lm[j] >> 4) << 6);
        }
    }
}

static void unpack_scale_min(const uint8_t s[GGUF_K_SCALE_SIZE], int j, uint8_t *sc, uint8_t *m)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (uint8_t)((s[j + 4] & 0xF) | (s[j - 4] >> 6) << 4);
        *m = (uint8_t)((s[j + 4] >> 4) | (s[j] >> 6) << 4);
    }
}

/* ========================================================================
 * q2_K
 * ======================================================================== */

/* Requantizes every sub-block of 16 against its integer scale and min
 * (the sub-blocks whose scale is 0 keep their search levels) and packs. */
static void q2_K_finish(const float *x, gguf_block_q2_K *b, uint8_t L[GGUF_QK_K])
{
    const float d = gguf_f16_to_f32(b->d), dmin = gguf_f16_to_f32(b->dmin);
    for (int j = 0; j < GGUF_QK_K / 16; j++) {
        const float dj = d * (float)(b->scales[j] & 0xF);
        if (dj == 0.0f)
            continue;
        const float mj = dmin * (float)(b->scales[j] >> 4);
        for (int i = 0; i < 16; i++)
            L[16 * j + i] = (uint8_t)clamp(round_half_even((x[16 * j + i] + mj) / dj), 0, 3);
    }
    pack_2bit(L, b->qs);
}

void gguf_q2_K_quantize(const float *x, void *y, int64_t n)
{
    static const affine_steps grid = { -0.5f, 0.1f, 15 };
    gguf_block_q2_K *b = y;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++, x += GGUF_QK_K) {
        uint8_t L[GGUF_QK_K];
        float w[GGUF_QK_K], scales[16], mins[16], max_scale = 0.0f, max_min = 0.0f;
        for (int i = 0; i < GGUF_QK_K; i++)
            w[i] = fabsf(x[i]);
        for (int h = 0; h < 2; h++)
            gguf_search_affine_x8(16, 3, x + 128 * h, w + 128 * h, L + 128 * h, scales + 8 * h,
                             mins + 8 * h, &grid, true);
        for (int j = 0; j < 16; j++) {
            if (scales[j] > max_scale)
                max_scale = scales[j];
            if (mins[j] > max_min)
                max_min = mins[j];
        }
        /* Scales and mins are ≥ 0, so 4 unsigned bits each on a grid of
         * max/15. */
        if (max_scale > 0.0f) {
            const float iscale = 15.0f / max_scale;
            for (int j = 0; j < 16; j++)
                b[ib].scales[j] = (uint8_t)round_half_even(iscale * scales[j]);
            b[ib].d = gguf_f32_to_f16(max_scale / 15.0f);
        } else {
            memset(b[ib].scales, 0, sizeof b[ib].scales);
            b[ib].d = gguf_f32_to_f16(0.0f);
        }
        if (max_min > 0.0f) {
            const float iscale = 15.0f / max_min;
            for (int j = 0; j < 16; j++)
                b[ib].scales[j] |= (uint8_t)(round_half_even(iscale * mins[j]) << 4);
            b[ib].dmin = gguf_f32_to_f16(max_min / 15.0f);
        } else {
            b[ib].dmin = gguf_f32_to_f16(0.0f);
        }
        q2_K_finish(x, &b[ib], L);
    }
}

void gguf_q2_K_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    static const affine_steps grid = { -0.9f, 0.05f, 36 };
    gguf_block_q2_K *b = y;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++, x += GGUF_QK_K, qw += GGUF_QK_K) {
        uint8_t L[GGUF_QK_K], Ls[16], Lm[16];
        float w[GGUF_QK_K], sw[16], scales[16], mins[16];
        const float sigma2 = sum_squares(x) / (float)GGUF_QK_K;
        for (int j = 0; j < 16; j++)
            sw[j] = importance(x + 16 * j, qw + 16 * j, sigma2, 16, w + 16 * j);
        for (int h = 0; h < 2; h++)
            gguf_search_affine_x8(16, 3, x + 128 * h, w + 128 * h, L + 128 * h, scales + 8 * h,
                             mins + 8 * h, &grid, false);
        b[ib].d = gguf_f32_to_f16(gguf_search_positive(16, 15, scales, Ls, sw));
        b[ib].dmin = gguf_f32_to_f16(gguf_search_positive(16, 15, mins, Lm, sw));
        for (int j = 0; j < 16; j++)
            b[ib].scales[j] = (uint8_t)(Ls[j] | Lm[j] << 4);
        q2_K_finish(x, &b[ib], L);
    }
}

void gguf_q2_K_dequantize(const void *vx, float *y, int64_t n)
{
    const gguf_block_q2_K *b = vx;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++) {
        const float d = gguf_f16_to_f32(b[ib].d), dmin = gguf_f16_to_f32(b[ib].dmin);
        /* Element 128g + 32s + 16h + i: byte 32g + 16h + i, bits 2s. */
        for (int e = 0; e < GGUF_QK_K; e++) {
            const int g = e / 128, s = e / 32 % 4, h = e / 16 % 2, i = e % 16;
            const uint8_t sc = b[ib].scales[e / 16];
            const int q = b[ib].qs[32 * g + 16 * h + i] >> (2 * s) & 3;
            const float dl = d * (float)(sc & 0xF), ml = dmin * (float)(sc >> 4);
            *y++ = dl * (float)q - ml;
        }
    }
}

/* ========================================================================
 * q3_K
 * ======================================================================== */

/* Stores sub-block j's 6-bit scale level (0..63, i.e. scale + 32): low
 * nibble in byte j (j < 8) or the high nibble of byte j-8, top two bits in
 * byte 8 + j%4 at bit 2*(j/4). The scale bytes must start zeroed. */
static void q3_K_put_scale(uint8_t s[12], int j, int l)
{
    if (j < 8)
        s[j] = (uint8_t)(l & 0xF);
    else
        s[j - 8] |= (uint8_t)((l & 0xF) << 4);
    s[8 + j % 4] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
}

static int q3_K_get_scale(const uint8_t s[12], int j)
{
    int lo = j < 8 ? s[j] & 0xF : s[j - 8] >> 4;
    return (lo | (s[8 + j % 4] >> (2 * (j / 4)) & 3) << 4) - 32;
}

/* Requantizes against the stored scales, then splits each level 0..7 into
 * two low bits (qs) and a high bit (hmask: bit k of byte m is element
 * 32k + m). */
static void q3_K_finish(const float *x, gguf_block_q3_K *b, uint8_t L[GGUF_QK_K])
{
    const float d = gguf_f16_to_f32(b->d);
    for (int j = 0; j < GGUF_QK_K / 16; j++) {
        const float dj = d * (float)q3_K_get_scale(b->scales, j);
        if (dj == 0.0f)
            continue;
        for (int i = 0; i < 16; i++)
            L[16 * j + i] = (uint8_t)(clamp(round_half_even(x[16 * j + i] / dj), -4, 3) + 4);
    }
    memset(b->hmask, 0, sizeof b->hmask);
    for (int e = 0; e < GGUF_QK_K; e++) {
        if (L[e] > 3) {
            b->hmask[e % 32] |= (uint8_t)(1 << (e / 32));
            L[e] -= 4;
        }
    }
    pack_2bit(L, b->qs);
}

void gguf_q3_K_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_q3_K *b = y;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++, x += GGUF_QK_K) {
        uint8_t L[GGUF_QK_K];
        float scales[16], max_scale = 0.0f, amax = 0.0f;
        for (int j = 0; j < 16; j++) {
            scales[j] = search_q3(16, 4, x + 16 * j, L + 16 * j);
            if (fabsf(scales[j]) > amax) {
                amax = fabsf(scales[j]);
                max_scale = scales[j];
            }
        }
        memset(b[ib].scales, 0, sizeof b[ib].scales);
        if (max_scale != 0.0f) {
            /* The signed extreme maps to -32, as in gguf_search_symmetric. */
            const float iscale = -32.0f / max_scale;
            for (int j = 0; j < 16; j++) {
                /* ggml narrows to int8_t before clamping. */
                int l = (int8_t)round_half_even(iscale * scales[j]);
                q3_K_put_scale(b[ib].scales, j, clamp(l, -32, 31) + 32);
            }
            b[ib].d = gguf_f32_to_f16(1.0f / iscale);
        } else {
            b[ib].d = gguf_f32_to_f16(0.0f);
        }
        q3_K_finish(x, &b[ib], L);
    }
}

void gguf_q3_K_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    gguf_block_q3_K *b = y;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++, x += GGUF_QK_K, qw += GGUF_QK_K) {
        uint8_t L[GGUF_QK_K], Ls[16];
        float w[GGUF_QK_K], sw[16], scales[16];
        const float sigma2 = 2.0f * sum_squares(x) / (float)GGUF_QK_K;
        for (int j = 0; j < 16; j++)
            sw[j] = importance(x + 16 * j, qw + 16 * j, sigma2, 16, w + 16 * j);
        for (int h = 0; h < 2; h++)
            gguf_search_symmetric_x8(16, 4, x + 128 * h, w + 128 * h, L + 128 * h, scales + 8 * h);
        memset(b[ib].scales, 0, sizeof b[ib].scales);
        const float d = gguf_search_symmetric(16, 32, scales, sw, Ls);
        for (int j = 0; j < 16; j++)
            q3_K_put_scale(b[ib].scales, j, Ls[j]);
        b[ib].d = gguf_f32_to_f16(d);
        q3_K_finish(x, &b[ib], L);
    }
}

void gguf_q3_K_dequantize(const void *vx, float *y, int64_t n)
{
    const gguf_block_q3_K *b = vx;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++) {
        const float d = gguf_f16_to_f32(b[ib].d);
        for (int e = 0; e < GGUF_QK_K; e++) {
            const int g = e / 128, s = e / 32 % 4, h = e / 16 % 2, i = e % 16;
            const int lo = b[ib].qs[32 * g + 16 * h + i] >> (2 * s) & 3;
            const int hi = b[ib].hmask[16 * h + i] >> (4 * g + s) & 1;
            const float dl = d * (float)q3_K_get_scale(b[ib].scales, e / 16);
            *y++ = dl * (float)(lo - (hi ? 0 : 4));
        }
    }
}

/* ========================================================================
 * q4_K and q5_K: 8 sub-blocks of 32 with 6-bit scales and mins
 * ======================================================================== */

/* The per-super-block part the two formats share: d, dmin, the packed
 * scales, and the levels 0..nmax of all 256 values. */
typedef struct kx_block {
    gguf_half d, dmin;
    uint8_t   scales[GGUF_K_SCALE_SIZE];
    uint8_t   L[GGUF_QK_K];
} kx_block;

/* Requantizes each sub-block against its stored scale and min. */
static void kx_requantize(const float *x, int nmax, kx_block *k)
{
    const float d = gguf_f16_to_f32(k->d), dmin = gguf_f16_to_f32(k->dmin);
    for (int j = 0; j < GGUF_QK_K / 32; j++) {
        uint8_t sc, m;
        unpack_scale_min(k->scales, j, &sc, &m);
        const float dj = d * (float)sc;
        if (dj == 0.0f)
            continue;
        const float mj = dmin * (float)m;
        for (int i = 0; i < 32; i++)
            k->L[32 * j + i] =
                (uint8_t)clamp(round_half_even((x[32 * j + i] + mj) / dj), 0, nmax);
    }
}

/* ggml's reference path: weights av + |x| per sub-block (av the
 * sub-block's RMS), scales and mins on a grid of max/63. */
static void kx_reference(const float *x, int nmax, const affine_steps *grid, kx_block *k)
{
    float w[GGUF_QK_K], scales[8], mins[8], max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 8; j++) {
        const float *xj = x + 32 * j;
        float sum_x2 = 0.0f;
        for (int i = 0; i < 32; i++)
            sum_x2 += xj[i] * xj[i];
        const float av = sqrtf(sum_x2 / 32.0f);
        for (int i = 0; i < 32; i++)
            w[32 * j + i] = av + fabsf(xj[i]);
    }
    gguf_search_affine_x8(32, nmax, x, w, k->L, scales, mins, grid, false);
    for (int j = 0; j < 8; j++) {
        if (scales[j] > max_scale)
            max_scale = scales[j];
        if (mins[j] > max_min)
            max_min = mins[j];
    }
    const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
    uint8_t ls[8], lm[8];
    for (int j = 0; j < 8; j++) {
        /* Narrowed to a byte first, then capped (as ggml). */
        uint8_t s = (uint8_t)round_half_even(inv_scale * scales[j]);
        uint8_t m = (uint8_t)round_half_even(inv_min * mins[j]);
        ls[j] = s < 63 ? s : 63;
        lm[j] = m < 63 ? m : 63;
    }
    pack_scale_min(k->scales, ls, lm);
    k->d = gguf_f32_to_f16(max_scale / 63.0f);
    k->dmin = gguf_f32_to_f16(max_min / 63.0f);
    kx_requantize(x, nmax, k);
}

/* ggml's importance-weighted path; cap63 is q5_K's extra MIN(63, ·) on the
 * scale levels, which q4_K's code lacks. */
static void kx_weighted(const float *x, const float *qw, int nmax, bool cap63, kx_block *k)
{
    static const affine_steps grid = { -0.9f, 0.05f, 36 };
    float w[GGUF_QK_K], sw[8], scales[8], mins[8];
    const float sigma2 = 2.0f * sum_squares(x) / (float)GGUF_QK_K;
    for (int j = 0; j < 8; j++)
        sw[j] = importance(x + 32 * j, qw + 32 * j, sigma2, 32, w + 32 * j);
    gguf_search_affine_x8(32, nmax, x, w, k->L, scales, mins, &grid, false);
    uint8_t ls[8], lm[8];
    const float d = gguf_search_positive(8, 63, scales, ls, sw);
    const float dmin = gguf_search_positive(8, 63, mins, lm, sw);
    if (cap63)
        for (int j = 0; j < 8; j++) {
            ls[j] = ls[j] < 63 ? ls[j] : 63;
            lm[j] = lm[j] < 63 ? lm[j] : 63;
        }
    pack_scale_min(k->scales, ls, lm);
    k->d = gguf_f32_to_f16(d);
    k->dmin = gguf_f32_to_f16(dmin);
    kx_requantize(x, nmax, k);
}

static const affine_steps q4_K_grid = { -1.0f, 0.1f, 20 };
static const affine_steps q5_K_grid = { -0.5f, 0.1f, 15 };

/* q4_K levels: byte l of 32-byte group g holds elements 64g + l (low
 * nibble) and 64g + 32 + l (high nibble). */
static void q4_K_store(const kx_block *k, gguf_block_q4_K *b)
{
    b->d = k->d;
    b->dmin = k->dmin;
    memcpy(b->scales, k->scales, GGUF_K_SCALE_SIZE);
    for (int g = 0; g < 4; g++)
        for (int l = 0; l < 32; l++)
            b->qs[32 * g + l] = (uint8_t)(k->L[64 * g + l] | k->L[64 * g + 32 + l] << 4);
}

/* q5_K: the low four bits as q4_K, the fifth bit of element 64g + l in bit
 * 2g of qh[l] and of element 64g + 32 + l in bit 2g + 1. */
static void q5_K_store(const kx_block *k, gguf_block_q5_K *b)
{
    b->d = k->d;
    b->dmin = k->dmin;
    memcpy(b->scales, k->scales, GGUF_K_SCALE_SIZE);
    memset(b->qh, 0, sizeof b->qh);
    for (int g = 0; g < 4; g++)
        for (int l = 0; l < 32; l++) {
            const uint8_t a = k->L[64 * g + l], c = k->L[64 * g + 32 + l];
            b->qh[l] |= (uint8_t)((a >> 4) << (2 * g) | (c >> 4) << (2 * g + 1));
            b->qs[32 * g + l] = (uint8_t)((a & 0xF) | (c & 0xF) << 4);
        }
}

void gguf_q4_K_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_q4_K *b = y;
    kx_block k;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++, x += GGUF_QK_K) {
        kx_reference(x, 15, &q4_K_grid, &k);
        q4_K_store(&k, &b[ib]);
    }
}

void gguf_q4_K_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    gguf_block_q4_K *b = y;
    kx_block k;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++, x += GGUF_QK_K, qw += GGUF_QK_K) {
        kx_weighted(x, qw, 15, false, &k);
        q4_K_store(&k, &b[ib]);
    }
}

void gguf_q5_K_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_q5_K *b = y;
    kx_block k;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++, x += GGUF_QK_K) {
        kx_reference(x, 31, &q5_K_grid, &k);
        q5_K_store(&k, &b[ib]);
    }
}

void gguf_q5_K_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    gguf_block_q5_K *b = y;
    kx_block k;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++, x += GGUF_QK_K, qw += GGUF_QK_K) {
        kx_weighted(x, qw, 31, true, &k);
        q5_K_store(&k, &b[ib]);
    }
}

/* Element 64g + 32h + i is level bits of byte 32g + i's nibble h (plus for
 * q5_K bit 2g + h of qh[i]) under sub-block 2g + h's scale and min. */
static void kx_dequantize(const uint8_t *qs, const uint8_t *qh, gguf_half hd, gguf_half hdmin,
                          const uint8_t scales[GGUF_K_SCALE_SIZE], float *y)
{
    const float d = gguf_f16_to_f32(hd), dmin = gguf_f16_to_f32(hdmin);
    for (int j = 0; j < 8; j++) {
        uint8_t sc, m;
        unpack_scale_min(scales, j, &sc, &m);
        const float dj = d * (float)sc, mj = dmin * (float)m;
        const int g = j / 2, h = j % 2;
        for (int i = 0; i < 32; i++) {
            int q = h ? qs[32 * g + i] >> 4 : qs[32 * g + i] & 0xF;
            if (qh && (qh[i] >> (2 * g + h) & 1))
                q += 16;
            *y++ = dj * (float)q - mj;
        }
    }
}

void gguf_q4_K_dequantize(const void *vx, float *y, int64_t n)
{
    const gguf_block_q4_K *b = vx;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++, y += GGUF_QK_K)
        kx_dequantize(b[ib].qs, NULL, b[ib].d, b[ib].dmin, b[ib].scales, y);
}

void gguf_q5_K_dequantize(const void *vx, float *y, int64_t n)
{
    const gguf_block_q5_K *b = vx;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++, y += GGUF_QK_K)
        kx_dequantize(b[ib].qs, b[ib].qh, b[ib].d, b[ib].dmin, b[ib].scales, y);
}

/* ========================================================================
 * q6_K
 * ======================================================================== */

/* Sub-block scales (signed, the extreme on -128) against d, then the
 * levels against them, packed: element 128g + 32s + l has its low nibble
 * in ql[64g + l + 32(s%2)] (s < 2 low nibble, else high) and its top two
 * bits in qh[32g + l] at bit 2s. qw NULL: ggml's reference weights x². */
static void q6_K_block(const float *x, const float *qw, gguf_block_q6_K *b)
{
    uint8_t L[GGUF_QK_K];
    float scales[16], max_scale = 0.0f, max_abs = 0.0f;
    for (int h = 0; h < 2; h++)
        gguf_search_symmetric_x8(16, 32, x + 128 * h, qw ? qw + 128 * h : NULL, L + 128 * h,
                            scales + 8 * h);
    for (int j = 0; j < 16; j++) {
        if (fabsf(scales[j]) > max_abs) {
            max_abs = fabsf(scales[j]);
            max_scale = scales[j];
        }
    }
    if (max_abs < ALL_ZERO_EPS) {
        memset(b, 0, sizeof *b);
        return;
    }
    const float iscale = -128.0f / max_scale;
    b->d = gguf_f32_to_f16(1.0f / iscale);
    for (int j = 0; j < 16; j++) {
        int l = round_half_even(iscale * scales[j]);
        b->scales[j] = (int8_t)(l < 127 ? l : 127); /* wraps below -128, as ggml */
    }
    const float d = gguf_f16_to_f32(b->d);
    for (int j = 0; j < 16; j++) {
        const float dj = d * (float)b->scales[j];
        if (dj == 0.0f)
            continue;
        for (int i = 0; i < 16; i++)
            L[16 * j + i] = (uint8_t)(clamp(round_half_even(x[16 * j + i] / dj), -32, 31) + 32);
    }
    for (int g = 0; g < 2; g++)
        for (int l = 0; l < 32; l++) {
            const uint8_t *Lg = L + 128 * g + l;
            b->ql[64 * g + l] = (uint8_t)((Lg[0] & 0xF) | (Lg[64] & 0xF) << 4);
            b->ql[64 * g + 32 + l] = (uint8_t)((Lg[32] & 0xF) | (Lg[96] & 0xF) << 4);
            b->qh[32 * g + l] =
                (uint8_t)(Lg[0] >> 4 | (Lg[32] >> 4) << 2 | (Lg[64] >> 4) << 4 | (Lg[96] >> 4) << 6);
        }
}

void gguf_q6_K_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_q6_K *b = y;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++, x += GGUF_QK_K)
        q6_K_block(x, NULL, &b[ib]);
}

void gguf_q6_K_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    gguf_block_q6_K *b = y;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++, x += GGUF_QK_K, qw += GGUF_QK_K)
        q6_K_block(x, qw, &b[ib]);
}

void gguf_q6_K_dequantize(const void *vx, float *y, int64_t n)
{
    const gguf_block_q6_K *b = vx;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++) {
        const float d = gguf_f16_to_f32(b[ib].d);
        for (int e = 0; e < GGUF_QK_K; e++) {
            const int g = e / 128, s = e / 32 % 4, l = e % 32;
            const uint8_t lo = b[ib].ql[64 * g + 32 * (s % 2) + l];
            const int q = ((s < 2 ? lo & 0xF : lo >> 4) | (b[ib].qh[32 * g + l] >> (2 * s) & 3) << 4) - 32;
            /* (d * scale) * q, as ggml */
            *y++ = d * (float)b[ib].scales[e / 16] * (float)q;
        }
    }
}

/* ========================================================================
 * q8_K (activations: f32 scale, no f16 rounding)
 * ======================================================================== */

void gguf_q8_K_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_q8_K *b = y;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++, x += GGUF_QK_K) {
        float max = 0.0f, amax = 0.0f;
        for (int i = 0; i < GGUF_QK_K; i++)
            if (fabsf(x[i]) > amax) {
                amax = fabsf(x[i]);
                max = x[i];
            }
        if (amax == 0.0f) {
            b[ib].d = 0.0f;
            memset(b[ib].qs, 0, sizeof b[ib].qs);
            /* ggml leaves bsums untouched here; ours are zero, not stale. */
            memset(b[ib].bsums, 0, sizeof b[ib].bsums);
            continue;
        }
        /* -127 (not -128) keeps every level symmetric for the dot kernels. */
        const float iscale = -127.0f / max;
        for (int i = 0; i < GGUF_QK_K; i++) {
            int v = round_half_even(iscale * x[i]);
            b[ib].qs[i] = (int8_t)(v < 127 ? v : 127);
        }
        for (int j = 0; j < GGUF_QK_K / 16; j++) {
            int sum = 0;
            for (int i = 0; i < 16; i++)
                sum += b[ib].qs[16 * j + i];
            b[ib].bsums[j] = (int16_t)sum;
        }
        b[ib].d = 1.0f / iscale;
    }
}

void gguf_q8_K_dequantize(const void *vx, float *y, int64_t n)
{
    const gguf_block_q8_K *b = vx;
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++)
        for (int i = 0; i < GGUF_QK_K; i++)
            *y++ = b[ib].d * (float)b[ib].qs[i];
}
