/*
 * quants_lanes.h — the scale searches of quants_search.c run on eight
 * blocks at once, one block per vector lane.
 *
 * Internal to libgguf. A search's arithmetic on one block is a fixed
 * sequence of single-precision operations; running eight blocks' sequences
 * side by side in the lanes of a vector performs, in every lane, exactly
 * the operations the scalar code performs on that block, in the same order
 * (IEEE add, multiply, divide are correctly rounded lane by lane; no fused
 * multiply-add, no reassociation). Data-dependent branches become per-lane
 * selects. So each lane's result is bit for bit the scalar result — the
 * unit tests hold both to ggml's vectors — only up to eight times sooner.
 *
 * Layout: element i of the eight blocks is one vector x[i] (lane b = block
 * b); lanes_load/lanes_store transpose to and from that layout.
 *
 * Everything here is static inline and always inlined, so the caller's
 * instruction set decides the code (quants_search.c builds its callers for
 * AVX2, where eight floats are one register).
 */
#ifndef GGUF_QUANTS_LANES_H
#define GGUF_QUANTS_LANES_H

#include "quants_impl.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* Every function taking or returning a vector is always inlined, so the
 * calling convention for vectors (which differs with and without AVX) never
 * comes into play. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#include "cpu.h"

#define LANES 8
typedef float   vf __attribute__((vector_size(4 * LANES)));
typedef int32_t vi __attribute__((vector_size(4 * LANES)));

/* The helpers are only ever inlined into AVX2 functions (quants_search.c,
 * quants_legacy.c), and are compiled for AVX2 themselves so that clang does
 * not see eight-float vectors crossing a non-AVX calling convention. */
#define LANE_FN static inline __attribute__((always_inline)) GGUF_TARGET_AVX2


LANE_FN vf splat(float v) { return (vf){ v, v, v, v, v, v, v, v }; }
LANE_FN vi splat_i(int v) { return (vi){ v, v, v, v, v, v, v, v }; }

/* mask ? a : b, lane by lane (mask lanes are all ones or all zeros). */
LANE_FN vf sel(vi mask, vf a, vf b) { return (vf)((mask & (vi)a) | (~mask & (vi)b)); }
LANE_FN vi sel_i(vi mask, vi a, vi b) { return (mask & a) | (~mask & b); }

LANE_FN vf vabs(vf v) { return (vf)((vi)v & 0x7fffffff); }
LANE_FN vf to_f(vi v) { return __builtin_convertvector(v, vf); }

LANE_FN vi clamp_v(vi v, int lo, int hi)
{
    v = sel_i(v < lo, splat_i(lo), v);
    return sel_i(v > hi, splat_i(hi), v);
}

/* round_half_even of quants_impl.h, lane by lane. */
LANE_FN vi round_v(vf v)
{
    vi bits = (vi)(v + 12582912.0f);
    return (bits & 0x007fffff) - 0x00400000;
}

LANE_FN int any_lane(vi mask)
{
    int r = 0;
    for (int b = 0; b < LANES; b++)
        r |= mask[b];
    return r;
}

/* x[i][b] = src[b * stride + i] for i < n. */
LANE_FN void lanes_load(vf *x, const float *src, int n, int stride)
{
    for (int i = 0; i < n; i++)
        for (int b = 0; b < LANES; b++)
            x[i][b] = src[b * stride + i];
}

/* dst[b * stride + i] = L[i][b] as bytes. */
LANE_FN void lanes_store_levels(uint8_t *dst, const vi *L, int n, int stride)
{
    for (int i = 0; i < n; i++)
        for (int b = 0; b < LANES; b++)
            dst[b * stride + i] = (uint8_t)L[i][b];
}

/* ========================================================================
 * gguf_search_symmetric (ggml's make_qx_quants, rmse_type 1) on eight blocks
 * ======================================================================== */

LANE_FN void symmetric_trial_v(int n, int nmax, const vf *x, const vf *w, vf iscale, vi *l,
                               vf *sumlx, vf *suml2)
{
    vf slx = splat(0.0f), sl2 = splat(0.0f);
    for (int i = 0; i < n; i++) {
        l[i] = clamp_v(round_v(iscale * x[i]), -nmax, nmax - 1);
        vf lf = to_f(l[i]);
        vf wi = w ? w[i] : x[i] * x[i];
        slx += wi * x[i] * lf;
        sl2 += wi * lf * lf;
    }
    *sumlx = slx;
    *suml2 = sl2;
}

/* Levels offset by nmax into L[i] (lanes), scales into *scale. w NULL:
 * weights x². */
LANE_FN void search_symmetric_v(int n, int nmax, const vf *x, const vf *w, vi *L, vf *scale_out)
{
    vf max = splat(0.0f), amax = splat(0.0f);
    for (int i = 0; i < n; i++) {
        vi bigger = vabs(x[i]) > amax;
        amax = sel(bigger, vabs(x[i]), amax);
        max = sel(bigger, x[i], max);
    }
    const vi zero = amax < ALL_ZERO_EPS;
    vi l[GGUF_QK_K / 8];
    vf sumlx, suml2;
    symmetric_trial_v(n, nmax, x, w, (float)-nmax / max, L, &sumlx, &suml2);
    vf scale = sel(suml2 != 0.0f, sumlx / suml2, splat(0.0f));
    vf best = scale * sumlx;
    for (int k = -9; k <= 9; k++) {
        if (k == 0)
            continue;
        const vf iscale = -((float)nmax + 0.1f * (float)k) / max;
        symmetric_trial_v(n, nmax, x, w, iscale, l, &sumlx, &suml2);
        vi take = (suml2 > 0.0f) & (sumlx * sumlx > best * suml2);
        if (!any_lane(take))
            continue;
        for (int i = 0; i < n; i++)
            L[i] = sel_i(take, l[i], L[i]);
        vf s = sumlx / suml2;
        scale = sel(take, s, scale);
        best = sel(take, s * sumlx, best);
    }
    for (int i = 0; i < n; i++)
        L[i] = sel_i(zero, splat_i(0), L[i] + nmax);
    *scale_out = sel(zero, splat(0.0f), scale);
}

/* ========================================================================
 * gguf_search_affine (ggml's make_qkx2/qkx3_quants) on eight blocks
 * ======================================================================== */

LANE_FN void affine_trial_v(int n, int nmax, const vf *x, vf iscale, vf min, vi *L)
{
    for (int i = 0; i < n; i++)
        L[i] = clamp_v(round_v(iscale * (x[i] - min)), 0, nmax);
}

LANE_FN vf affine_error_v(int n, const vf *x, const vf *w, const vi *L, vf s, vf m, bool use_mad)
{
    vf err = splat(0.0f);
    for (int i = 0; i < n; i++) {
        vf diff = s * to_f(L[i]) + m - x[i];
        diff = use_mad ? vabs(diff) : diff * diff;
        err += w[i] * diff;
    }
    return err;
}

/* Levels into L[i] (lanes), scales into *scale_out, -min into *neg_min. */
LANE_FN void search_affine_v(int n, int nmax, const vf *x, const vf *w, vi *L, vf *scale_out,
                             vf *neg_min, const affine_steps *steps, bool use_mad)
{
    vf min = x[0], max = x[0];
    vf sum_w = w[0];
    vf sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        min = sel(x[i] < min, x[i], min);
        max = sel(x[i] > max, x[i], max);
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    min = sel(min > 0.0f, splat(0.0f), min);
    const vi flat = max <= min;
    vf iscale = (float)nmax / (max - min);
    vf scale = 1.0f / iscale;
    affine_trial_v(n, nmax, x, iscale, min, L);
    vf best = affine_error_v(n, x, w, L, scale, min, use_mad);

    vi Laux[32];
    for (int k = 0; k <= steps->nstep; k++) {
        /* max - min again: an accepted fit moves min (as in ggml) */
        iscale = (steps->rmin + steps->rdelta * (float)k + (float)nmax) / (max - min);
        affine_trial_v(n, nmax, x, iscale, min, Laux);
        vf sum_l = splat(0.0f), sum_l2 = splat(0.0f), sum_xl = splat(0.0f);
        for (int i = 0; i < n; i++) {
            vf l = to_f(Laux[i]);
            sum_l += w[i] * l;
            sum_l2 += w[i] * l * l;
            sum_xl += w[i] * l * x[i];
        }
        vf det = sum_w * sum_l2 - sum_l * sum_l;
        vf s = (sum_w * sum_xl - sum_x * sum_l) / det;
        vf m = (sum_l2 * sum_x - sum_l * sum_xl) / det;
        vi mpos = m > 0.0f;
        m = sel(mpos, splat(0.0f), m);
        s = sel(mpos, sum_xl / sum_l2, s);
        vf err = affine_error_v(n, x, w, Laux, s, m, use_mad);
        vi take = (det > 0.0f) & (err < best) & ~flat;
        if (!any_lane(take))
            continue;
        for (int i = 0; i < n; i++)
            L[i] = sel_i(take, Laux[i], L[i]);
        best = sel(take, err, best);
        scale = sel(take, s, scale);
        min = sel(take, m, min);
    }
    for (int i = 0; i < n; i++)
        L[i] = sel_i(flat, splat_i(0), L[i]);
    *scale_out = sel(flat, splat(0.0f), scale);
    *neg_min = -min;
}

#endif
