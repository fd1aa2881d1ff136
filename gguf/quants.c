/*
 * quants.c — float conversions (f16, bf16) and the codec table.
 *
 * The per-format block code is in quants_legacy.c, quants_k.c, quants_iq1.c,
 * quants_iq2.c, quants_iq3.c, quants_iq4.c, quants_tq.c and quants_mxfp4.c; this file only dispatches on the type id
 * and handles the plain float types.
 */
#include <inttypes.h>
#include <string.h>

#include <ggufkit/quants.h>
#include "quants_impl.h"

/* ------------------------------------------------------------------------
 * Plain float "codecs"
 * ------------------------------------------------------------------------ */

static void gguf_f32_quantize(const float *x, void *y, int64_t n) { memcpy(y, x, (size_t)n * 4); }
static void gguf_f32_dequantize(const void *x, float *y, int64_t n) { memcpy(y, x, (size_t)n * 4); }

static void gguf_f16_quantize(const float *x, void *y, int64_t n) { gguf_f32_to_f16_row(x, y, n); }
static void gguf_f16_dequantize(const void *x, float *y, int64_t n) { gguf_f16_to_f32_row(x, y, n); }
static void gguf_bf16_quantize(const float *x, void *y, int64_t n) { gguf_f32_to_bf16_row(x, y, n); }
static void gguf_bf16_dequantize(const void *x, float *y, int64_t n) { gguf_bf16_to_f32_row(x, y, n); }

/* ------------------------------------------------------------------------
 * Table
 * ------------------------------------------------------------------------ */

#define WEIGHTED(t, id) [id] = { id, gguf_##t##_quantize, gguf_##t##_quantize_weighted, gguf_##t##_dequantize }
#define PLAIN(t, id)    [id] = { id, gguf_##t##_quantize, NULL, gguf_##t##_dequantize }
#define WEIGHTS_ONLY(t, id) [id] = { id, NULL, gguf_##t##_quantize_weighted, gguf_##t##_dequantize }

static const gguf_codec codecs[GGUF_DT_COUNT] = {
    PLAIN(f32, GGUF_DT_F32),
    PLAIN(f16, GGUF_DT_F16),
    PLAIN(bf16, GGUF_DT_BF16),
    WEIGHTED(q4_0, GGUF_DT_Q4_0),
    WEIGHTED(q4_1, GGUF_DT_Q4_1),
    WEIGHTED(q5_0, GGUF_DT_Q5_0),
    WEIGHTED(q5_1, GGUF_DT_Q5_1),
    PLAIN(q8_0, GGUF_DT_Q8_0),
    WEIGHTED(q2_K, GGUF_DT_Q2_K),
    WEIGHTED(q3_K, GGUF_DT_Q3_K),
    WEIGHTED(q4_K, GGUF_DT_Q4_K),
    WEIGHTED(q5_K, GGUF_DT_Q5_K),
    WEIGHTED(q6_K, GGUF_DT_Q6_K),
    PLAIN(q8_K, GGUF_DT_Q8_K),
    WEIGHTS_ONLY(iq2_xxs, GGUF_DT_IQ2_XXS),
    WEIGHTS_ONLY(iq2_xs, GGUF_DT_IQ2_XS),
    WEIGHTED(iq2_s, GGUF_DT_IQ2_S),
    WEIGHTED(iq3_xxs, GGUF_DT_IQ3_XXS),
    WEIGHTED(iq3_s, GGUF_DT_IQ3_S),
    WEIGHTS_ONLY(iq1_s, GGUF_DT_IQ1_S),
    WEIGHTED(iq1_m, GGUF_DT_IQ1_M),
    WEIGHTED(iq4_nl, GGUF_DT_IQ4_NL),
    WEIGHTED(iq4_xs, GGUF_DT_IQ4_XS),
    PLAIN(tq1_0, GGUF_DT_TQ1_0),
    PLAIN(tq2_0, GGUF_DT_TQ2_0),
    PLAIN(mxfp4, GGUF_DT_MXFP4),
};

const gguf_codec *gguf_codec_get(uint32_t type)
{
    return type < GGUF_DT_COUNT && codecs[type].dequantize ? &codecs[type] : NULL;
}

/* The codec of type, or NULL with the reason in err. */
static const gguf_codec *codec_for(uint32_t type, gguf_error *err)
{
    const gguf_codec *c = gguf_codec_get(type);
    if (!c)
        gguf_error_setc(err, GGUF_ERR_UNSUPPORTED, "libgguf has no codec for type %s",
                        gguf_dtype_name(type));
    return c;
}

size_t gguf_quantize_rows(uint32_t type, const float *src, void *dst, int64_t nrows,
                          int64_t n_per_row, const float *imatrix, gguf_error *err)
{
    const gguf_codec *c = codec_for(type, err);
    uint64_t row;
    if (!c || gguf_row_size(type, n_per_row, &row, err))
        return 0;
    if (nrows < 0) {
        gguf_error_setc(err, GGUF_ERR_ARG, "negative row count %" PRId64, nrows);
        return 0;
    }
    if (!imatrix && !c->quantize) {
        gguf_error_setc(err, GGUF_ERR_ARG, "type %s needs an importance matrix (ggml has no "
                        "quantizer for it without one)", gguf_dtype_name(type));
        return 0;
    }
    uint8_t *out = dst;
    for (int64_t r = 0; r < nrows; r++) {
        const float *x = src + r * n_per_row;
        if (imatrix && c->quantize_weighted)
            c->quantize_weighted(x, out + r * row, n_per_row, imatrix);
        else
            c->quantize(x, out + r * row, n_per_row);
    }
    return (size_t)(row * (uint64_t)nrows);
}

int gguf_dequantize_row(uint32_t type, const void *src, float *dst, int64_t n, gguf_error *err)
{
    const gguf_codec *c = codec_for(type, err);
    uint64_t row;
    if (!c || gguf_row_size(type, n, &row, err))
        return -1;
    c->dequantize(src, dst, n);
    return 0;
}

const uint8_t *gguf_iq_grid(uint32_t type, uint32_t *n_points, uint32_t *width)
{
    uint32_t n = 0, w = 8;
    const uint8_t *g = NULL;
    if (type == GGUF_DT_IQ1_S || type == GGUF_DT_IQ1_M)
        g = gguf_iq1_grid_bytes(&n);
    else if (type == GGUF_DT_IQ3_XXS || type == GGUF_DT_IQ3_S)
        g = gguf_iq3_grid_bytes(type, &n), w = 4;
    else
        g = gguf_iq2_grid_bytes(type, &n);
    if (g) {
        if (n_points)
            *n_points = n;
        if (width)
            *width = w;
    }
    return g;
}

const int8_t *gguf_nl_levels(uint32_t type)
{
    return type == GGUF_DT_IQ4_NL || type == GGUF_DT_IQ4_XS ? gguf_iq4_levels()
         : type == GGUF_DT_MXFP4                            ? gguf_mxfp4_levels()
                                                            : NULL;
}
