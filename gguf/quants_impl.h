/*
 * quants_impl.h — the per-format functions behind gguf_codec (quants.h).
 *
 * Internal to libgguf: quants.c builds the codec table from these.
 * quants_legacy.c holds the 32-element formats, quants_k.c the k-quants,
 * quants_iq1.c iq1_s and iq1_m, quants_iq2.c iq2_xxs, iq2_xs and iq2_s,
 * quants_iq3.c iq3_xxs and iq3_s,
 * quants_iq4.c iq4_nl and iq4_xs, quants_tq.c the ternary formats and
 * quants_mxfp4.c mxfp4.
 * Every `*_quantize` is ggml's quantizer for the format without weights
 * (ggml_quantize_chunk's imatrix-less path), every
 * `*_quantize_weighted` the importance-matrix path for one row (n elements,
 * weights qw[n]), every `*_dequantize` ggml's dequantizer.
 */
#ifndef GGUF_QUANTS_IMPL_H
#define GGUF_QUANTS_IMPL_H

#include <math.h>
#include <string.h>

#include <ggufkit/quants.h>

/* ggml treats a block whose largest magnitude is below this as all zero in
 * its scale searches (GROUP_MAX_EPS). */
#define ALL_ZERO_EPS 1e-15f

/* Round to nearest, ties to even, for |v| < 2^22: adding 1.5 * 2^23 pushes
 * the fraction out of the mantissa, whose low 23 bits then hold
 * round(v) + 2^22. Same result as ggml's nearest_int (which its searches
 * depend on — roundf would round ties away from zero). */
static inline int round_half_even(float v)
{
    float biased = v + 12582912.0f;
    int32_t bits;
    memcpy(&bits, &biased, sizeof bits);
    return (bits & 0x007fffff) - 0x00400000;
}


/* The element of largest magnitude with its sign (the first one on ties),
 * 0 for an all-zero block. Scale-only formats divide by it so that this
 * extreme lands exactly on the most negative level, which has one more
 * step than the positive side (-8..7 for 4 bits). */
static inline float signed_absmax(const float *x, int n)
{
    float amax = 0.0f, max = 0.0f;
    for (int i = 0; i < n; i++) {
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            max = x[i];
        }
    }
    return max;
}

/* ggml's make_qx_quants (rmse_type 1): scale-only levels for n values with
 * weights w (NULL: x²). Tries the inverse scales -(nmax + k/10)/max for
 * k = 0, -9..9 (max the signed extreme) and keeps the one that removes the
 * most weighted squared error. L gets the levels offset by nmax
 * (0 .. 2*nmax-1); an all-zero block gives level 0 and scale 0. Returns the
 * scale s: x ≈ s * (L - nmax). */
float gguf_search_symmetric(int n, int nmax, const float *x, const float *w, uint8_t *L);

/* ggml's make_qp_quants: levels 0..nmax for non-negative values (k-quant
 * sub-block scales and mins, iq2_xxs magnitudes) with weights w — a grid
 * search over nine inverse scales around nmax/max, then five passes moving
 * single levels while that improves the weighted fit. Levels are narrowed
 * to bytes as ggml's uint8_t array does (only a negative input can make
 * that wrap). An all-zero input gives level 0 and scale 0 (ggml: a maximum
 * below 1e-15; every caller has checked that already). Returns the scale. */
float gguf_search_positive(int n, int nmax, const float *x, uint8_t *L, const float *w);

/* The trial grid of gguf_search_affine: inverse scales (nmax + rmin + rdelta*k)
 * / (max - min) for k = 0..nstep. */
typedef struct affine_steps {
    float rmin, rdelta;
    int   nstep;
} affine_steps;

/* ggml's make_qkx2_quants / make_qkx3_quants (one function: they differ
 * only in make_qkx3's x² default for missing weights): levels 0..nmax with
 * scale s and offset m ≤ 0 for n ≤ GGUF_QK_K values, x ≈ s * L + m. For each
 * trial inverse scale it solves the weighted least-squares fit for (s, m)
 * exactly and keeps the fit of least error (absolute when use_mad, squared
 * otherwise). Returns s, and -m in *neg_min. */
float gguf_search_affine(int n, int nmax, const float *x, const float *w, uint8_t *L,
                    float *neg_min, const affine_steps *steps, bool use_mad);

/* The two searches on eight consecutive blocks of n ≤ 32 values (x, w and
 * L hold 8n each; w may be NULL for gguf_search_symmetric_x8): exactly the
 * results of eight calls, computed eight lanes at a time where the CPU has
 * AVX2 (quants_lanes.h). */
void gguf_search_affine_x8(int n, int nmax, const float *x, const float *w, uint8_t *L,
                      float *scales, float *neg_mins, const affine_steps *steps, bool use_mad);
void gguf_search_symmetric_x8(int n, int nmax, const float *x, const float *w, uint8_t *L,
                         float *scales);

/* True while gguf_quants_force_scalar(true) is in effect. */
bool gguf_quants_scalar_forced(void);

#define CODEC_FNS(t)                                                          \
    void gguf_##t##_quantize(const float *x, void *y, int64_t n);                    \
    void gguf_##t##_quantize_weighted(const float *x, void *y, int64_t n, const float *qw); \
    void gguf_##t##_dequantize(const void *x, float *y, int64_t n);

CODEC_FNS(q4_0)
CODEC_FNS(q4_1)
CODEC_FNS(q5_0)
CODEC_FNS(q5_1)
CODEC_FNS(q2_K)
CODEC_FNS(q3_K)
CODEC_FNS(q4_K)
CODEC_FNS(q5_K)
CODEC_FNS(q6_K)
CODEC_FNS(iq4_nl)
CODEC_FNS(iq4_xs)

/* No weighted path in ggml for these. */
void gguf_q8_0_quantize(const float *x, void *y, int64_t n);
void gguf_q8_0_dequantize(const void *x, float *y, int64_t n);
void gguf_q8_K_quantize(const float *x, void *y, int64_t n);
void gguf_q8_K_dequantize(const void *x, float *y, int64_t n);
CODEC_FNS(iq2_s)
CODEC_FNS(iq3_xxs)
CODEC_FNS(iq3_s)
CODEC_FNS(iq1_m)
/* The tables behind gguf_nl_levels and gguf_iq_grid (quants.h). */
const int8_t *gguf_iq4_levels(void);
const int8_t *gguf_mxfp4_levels(void);
const uint8_t *gguf_iq1_grid_bytes(uint32_t *n);
const uint8_t *gguf_iq2_grid_bytes(uint32_t type, uint32_t *n);
const uint8_t *gguf_iq3_grid_bytes(uint32_t type, uint32_t *n);

/* iq1_s: importance weights required */
void gguf_iq1_s_quantize_weighted(const float *x, void *y, int64_t n, const float *qw);
void gguf_iq1_s_dequantize(const void *x, float *y, int64_t n);
/* iq2_xxs and iq2_xs: importance weights required (ggml has no path without) */
void gguf_iq2_xxs_quantize_weighted(const float *x, void *y, int64_t n, const float *qw);
void gguf_iq2_xxs_dequantize(const void *x, float *y, int64_t n);
void gguf_iq2_xs_quantize_weighted(const float *x, void *y, int64_t n, const float *qw);
void gguf_iq2_xs_dequantize(const void *x, float *y, int64_t n);

void gguf_tq1_0_quantize(const float *x, void *y, int64_t n);
void gguf_tq1_0_dequantize(const void *x, float *y, int64_t n);
void gguf_tq2_0_quantize(const float *x, void *y, int64_t n);
void gguf_tq2_0_dequantize(const void *x, float *y, int64_t n);
void gguf_mxfp4_quantize(const float *x, void *y, int64_t n);
void gguf_mxfp4_dequantize(const void *x, float *y, int64_t n);

#undef CODEC_FNS

#endif
