/*
 * quants_search.c — the scale searches shared by the legacy and k-quant
 * formats: given a small block of floats (and per-element weights), find
 * integer levels and a scale (and an offset) that reproduce it well.
 *
 * These are ggml's make_qx_quants (rmse_type 1) and make_qkx2/qkx3_quants.
 * Their results are stored in files, so every float operation happens in
 * ggml's order and precision — single-precision sums accumulated left to
 * right, products grouped as ggml groups them, no fused multiply-add. A
 * comment "as ggml" marks an expression whose rewriting changes bytes.
 */
#include <math.h>

#include "quants_lanes.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

static inline int clamp(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The weight of element i: w[i], or x[i]² when there are no weights. */
static inline float weight_of(const float *x, const float *w, int i)
{
    return w ? w[i] : x[i] * x[i];
}

/* Levels l_i = clamp(round(iscale * x_i), -nmax, nmax-1) for one trial
 * inverse scale, rated by two sums: for fixed levels the error-minimising
 * scale is s = Σwxl / Σwl², which removes (Σwxl)²/Σwl² from the squared
 * error, so a larger (Σwxl)²/Σwl² is a better trial. When L is not NULL the
 * levels are stored there offset by nmax. */
static void symmetric_trial(int n, int nmax, const float *x, const float *w, float iscale,
                            uint8_t *L, float *sumlx, float *suml2)
{
    float slx = 0.0f, sl2 = 0.0f;
    for (int i = 0; i < n; i++) {
        int l = clamp(round_half_even(iscale * x[i]), -nmax, nmax - 1);
        if (L)
            L[i] = (uint8_t)(l + nmax);
        float wi = weight_of(x, w, i);
        slx += wi * x[i] * (float)l; /* (w*x)*l, as ggml */
        sl2 += wi * (float)l * (float)l;
    }
    *sumlx = slx;
    *suml2 = sl2;
}

float gguf_search_symmetric(int n, int nmax, const float *x, const float *w, uint8_t *L)
{
    const float max = signed_absmax(x, n);
    if (fabsf(max) < ALL_ZERO_EPS) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    /* Trial 0 maps the signed extreme exactly onto -nmax; the others stretch
     * or shrink the grid by a tenth of a step at a time. */
    float sumlx, suml2;
    symmetric_trial(n, nmax, x, w, (float)-nmax / max, L, &sumlx, &suml2);
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int k = -9; k <= 9; k++) {
        if (k == 0)
            continue;
        const float iscale = -((float)nmax + 0.1f * (float)k) / max;
        symmetric_trial(n, nmax, x, w, iscale, NULL, &sumlx, &suml2);
        /* best = s·Σwxl = (Σwxl)²/Σwl², compared without dividing. */
        if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
            symmetric_trial(n, nmax, x, w, iscale, L, &sumlx, &suml2);
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/* Levels clamp(round(iscale*(x - min)), 0, nmax). */
static void affine_trial(int n, int nmax, const float *x, float iscale, float min, uint8_t *L)
{
    for (int i = 0; i < n; i++)
        L[i] = (uint8_t)clamp(round_half_even(iscale * (x[i] - min)), 0, nmax);
}

/* Σ w·|s·l + m - x| (use_mad) or Σ w·(s·l + m - x)². */
static float affine_error(int n, const float *x, const float *w, const uint8_t *L, float s,
                          float m, bool use_mad)
{
    float err = 0.0f;
    for (int i = 0; i < n; i++) {
        float diff = s * (float)L[i] + m - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        err += weight_of(x, w, i) * diff;
    }
    return err;
}

float gguf_search_affine(int n, int nmax, const float *x, const float *w, uint8_t *L,
                    float *neg_min, const affine_steps *steps, bool use_mad)
{
    float min = x[0], max = x[0];
    float sum_w = weight_of(x, w, 0);
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < min)
            min = x[i];
        if (x[i] > max)
            max = x[i];
        float wi = weight_of(x, w, i);
        sum_w += wi;
        sum_x += wi * x[i];
    }
    /* Keep 0 representable: the offset is never positive. */
    if (min > 0.0f)
        min = 0.0f;
    if (max <= min) {
        memset(L, 0, (size_t)n);
        *neg_min = -min;
        return 0.0f;
    }
    float iscale = (float)nmax / (max - min);
    float scale = 1.0f / iscale;
    affine_trial(n, nmax, x, iscale, min, L);
    float best = affine_error(n, x, w, L, scale, min, use_mad);

    uint8_t Laux[GGUF_QK_K];
    for (int k = 0; k <= steps->nstep; k++) {
        iscale = (steps->rmin + steps->rdelta * (float)k + (float)nmax) / (max - min);
        affine_trial(n, nmax, x, iscale, min, Laux);
        float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
        for (int i = 0; i < n; i++) {
            float wi = weight_of(x, w, i);
            float l = (float)Laux[i];
            sum_l += wi * l;
            sum_l2 += wi * l * l; /* (w*l)*l, as ggml */
            sum_xl += wi * l * x[i];
        }
        /* Normal equations of Σ w (s l + m - x)² over (s, m). */
        float det = sum_w * sum_l2 - sum_l * sum_l;
        if (!(det > 0.0f))
            continue;
        float s = (sum_w * sum_xl - sum_x * sum_l) / det;
        float m = (sum_l2 * sum_x - sum_l * sum_xl) / det;
        if (m > 0.0f) {
            m = 0.0f;
            s = sum_xl / sum_l2;
        }
        float err = affine_error(n, x, w, Laux, s, m, use_mad);
        if (err < best) {
            memcpy(L, Laux, (size_t)n);
            best = err;
            scale = s;
            min = m;
        }
    }
    *neg_min = -min;
    return scale;
}

/* ========================================================================
 * Eight blocks at a time
 * ======================================================================== */

static bool force_scalar;

void gguf_quants_force_scalar(bool on) { force_scalar = on; }

bool gguf_quants_scalar_forced(void) { return force_scalar; }

#if GGUF_X86
#define HAVE_LANES 1
#define LANES_TARGET GGUF_TARGET_AVX2

/* The lane code needs AVX2 to pay: on plain SSE2 its eight-float vectors
 * are split in two and it is slower than the scalar loop. */
static bool use_lanes(void)
{
    return !force_scalar && gguf_cpu_avx2();
}

LANES_TARGET static void affine_lanes(int n, int nmax, const float *x, const float *w, uint8_t *L,
                                      float *scales, float *neg_mins, const affine_steps *steps,
                                      bool use_mad)
{
    vf xv[32] = { 0 }, wv[32] = { 0 }, sc, nm; /* n ≥ 1 are set: the rest never read */
    vi Lv[32];
    lanes_load(xv, x, n, n);
    lanes_load(wv, w, n, n);
    search_affine_v(n, nmax, xv, wv, Lv, &sc, &nm, steps, use_mad);
    lanes_store_levels(L, Lv, n, n);
    for (int b = 0; b < LANES; b++) {
        scales[b] = sc[b];
        neg_mins[b] = nm[b];
    }
}

LANES_TARGET static void symmetric_lanes(int n, int nmax, const float *x, const float *w,
                                         uint8_t *L, float *scales)
{
    vf xv[32] = { 0 }, wv[32] = { 0 }, sc;
    vi Lv[32];
    lanes_load(xv, x, n, n);
    if (w)
        lanes_load(wv, w, n, n);
    search_symmetric_v(n, nmax, xv, w ? wv : NULL, Lv, &sc);
    lanes_store_levels(L, Lv, n, n);
    for (int b = 0; b < LANES; b++)
        scales[b] = sc[b];
}
#else
#define HAVE_LANES 0
static bool use_lanes(void) { return false; }
#endif

void gguf_search_affine_x8(int n, int nmax, const float *x, const float *w, uint8_t *L,
                      float *scales, float *neg_mins, const affine_steps *steps, bool use_mad)
{
#if HAVE_LANES
    if (n <= 32 && use_lanes()) {
        affine_lanes(n, nmax, x, w, L, scales, neg_mins, steps, use_mad);
        return;
    }
#endif
    for (int b = 0; b < 8; b++)
        scales[b] = gguf_search_affine(n, nmax, x + n * b, w + n * b, L + n * b, &neg_mins[b], steps,
                                  use_mad);
}

void gguf_search_symmetric_x8(int n, int nmax, const float *x, const float *w, uint8_t *L,
                         float *scales)
{
#if HAVE_LANES
    if (n <= 32 && use_lanes()) {
        symmetric_lanes(n, nmax, x, w, L, scales);
        return;
    }
#endif
    for (int b = 0; b < 8; b++)
        scales[b] = gguf_search_symmetric(n, nmax, x + n * b, w ? w + n * b : NULL, L + n * b);
}
