/*
 * estimate.c — gguf-quantize --sensitivity: the costs of the types the
 * table has not measured (see target.h, target_estimate; target_table_fill
 * scales them by each tensor's measurement).
 *
 * Each tensor's cost at a type is the relative error of its output on the
 * calibration activations the importance matrix summarises: for a row w
 * and its quantized form q, with the matrix's per-column mean squared
 * activation a_j, E‖Δy‖² = Σ_j a_j (w_j − q_j)² and E‖y‖² = Σ_j a_j w_j²
 * (columns taken as uncorrelated, as the imatrix-weighted quantizers take
 * them). The cost is ΣΔ / Σ over the tensor's rows: the noise-to-signal
 * ratio its output takes. Tensors the matrix has no entry for (the token
 * embedding is a lookup, not a product) weigh every column alike. Rows are
 * sampled with a fixed stride once a tensor is large (EST_SAMPLE values of
 * each), so the estimate costs about one quantization of the model
 * whatever the number of types tried; each sampled row is quantized
 * exactly as the file would be (same codec, same weights).
 *
 * Not for: the allocation (target.c), writing (main.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/quants.h>
#include "pool.h"
#include "target.h"

/* Values of a tensor read per type: below it every row is. */
#define EST_SAMPLE (1 << 18)

typedef struct est_unit {
    double   err, sig;
    uint64_t bytes;
    uint32_t type;
    int      failed;
    char     msg[200];
} est_unit;

typedef struct est_ctx {
    const target_item *items;
    const uint32_t    *types;
    int                n_types; /* + the item's stock type */
    est_unit          *units;
} est_ctx;

/* The sampled rows of a tensor: every step-th from step/2. */
static uint64_t sample_step(const target_item *it)
{
    const uint64_t total = it->n_rows * (uint64_t)it->ne0;
    if (total <= EST_SAMPLE)
        return 1;
    const uint64_t step = (total + EST_SAMPLE - 1) / EST_SAMPLE;
    return step < it->n_rows ? step : it->n_rows;
}

/* Whether unit k of an item repeats a type tried before it. */
static bool repeated(const est_ctx *c, int k, uint32_t ty)
{
    for (int j = 0; j < k && j < c->n_types; j++)
        if (c->types[j] == ty)
            return true;
    return false;
}

static void est_run(void *ctx_, int64_t unit, int thread)
{
    (void)thread;
    est_ctx *c = ctx_;
    const int per = c->n_types + 1;
    const target_item *it = &c->items[unit / per];
    const int k = (int)(unit % per);
    est_unit *u = &c->units[unit];
    const uint32_t ty = k < c->n_types ? c->types[k] : it->stock;
    u->type = ty;
    uint64_t qrb, srb;
    if (gguf_row_size(ty, it->ne0, &qrb, NULL) || gguf_row_size(it->t->type, it->ne0, &srb, NULL))
        return; /* the type does not fit the rows: no row in the table */
    if (repeated(c, k, ty) || (!gguf_codec_get(ty)->quantize && !it->imatrix))
        return; /* tried already; a type that needs an importance matrix */
    if (k < c->n_types && gguf_dtype_get(ty)->blck_size < 256 && ty != GGUF_DT_Q8_0 &&
        it->ne0 % 256 == 0)
        return; /* the 32-wide types are tried for rows the K-quants do not fit */
    const size_t ne0 = (size_t)it->ne0;
    float *w = malloc(2 * ne0 * sizeof *w);
    uint8_t *q = malloc((size_t)qrb);
    gguf_error err = { 0 };
    if (!w || !q) {
        u->failed = 1;
        snprintf(u->msg, sizeof u->msg, "%s: out of memory", it->name);
        goto done;
    }
    float *back = w + ne0;
    const uint64_t step = sample_step(it);
    const uint64_t per_expert = it->n_experts > 1 ? it->n_rows / (uint64_t)it->n_experts
                                                  : it->n_rows;
    double e = 0, s = 0;
    for (uint64_t r = step / 2; r < it->n_rows; r += step) {
        const float *a = it->imatrix ? it->imatrix + (size_t)(r / per_expert) * ne0 : NULL;
        if (gguf_dequantize_row(it->t->type, it->t->data + r * srb, w, it->ne0, &err) ||
            !gguf_quantize_rows(ty, w, q, 1, it->ne0, a, &err) ||
            gguf_dequantize_row(ty, q, back, it->ne0, &err)) {
            u->failed = 1;
            snprintf(u->msg, sizeof u->msg, "%s at %s: %s", it->name, gguf_dtype_name(ty),
                     err.msg);
            goto done;
        }
        double er = 0, sr = 0;
        for (size_t j = 0; j < ne0; j++) {
            const double aj = a ? a[j] : 1.0, d = (double)w[j] - (double)back[j];
            er += aj * d * d;
            sr += aj * (double)w[j] * (double)w[j];
        }
        e += er;
        s += sr;
    }
    u->err = e;
    u->sig = s;
    u->bytes = qrb * it->n_rows;
done:
    free(w);
    free(q);
}

int target_estimate(const target_item *items, size_t n, const uint32_t *types, int n_types,
                    target_table *t, gguf_error *err)
{
    memset(t, 0, sizeof *t);
    const size_t per = (size_t)n_types + 1, units = n * per;
    est_ctx c = { items, types, n_types, calloc(units + 1, sizeof(est_unit)) };
    if (!c.units)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    pool_for((int64_t)units, est_run, &c);
    int rc = -1;
    size_t rows = 0;
    for (size_t u = 0; u < units; u++) {
        if (c.units[u].failed) {
            gguf_error_set(err, "estimating the cost of %s", c.units[u].msg);
            goto done;
        }
        rows += c.units[u].bytes > 0;
    }
    if (!(t->rows = calloc(rows + 1, sizeof *t->rows))) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (size_t u = 0; u < units; u++) {
        const est_unit *e = &c.units[u];
        if (!e->bytes)
            continue;
        target_row *r = &t->rows[t->n];
        if (!(r->name = strdup(items[u / per].name))) {
            gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
            goto done;
        }
        t->n++;
        r->type = e->type;
        r->bytes = e->bytes;
        /* a NaN or an infinity quantized (refused when written) costs the most */
        const double v = e->sig > 0 ? e->err / e->sig : 0;
        r->kld = isfinite(v) ? v : 1e30;
    }
    rc = target_table_index(t, err);
done:
    if (rc)
        target_table_free(t);
    free(c.units);
    return rc;
}
