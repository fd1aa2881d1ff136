/*
 * sensitivity.c — gguf-run --sensitivity (see sensitivity.h).
 *
 * Not for: the KL divergence (eval.c), the codecs (libgguf).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/arch.h>
#include "eval.h"
#include "kernels.h"
#include "pool.h"
#include "progress.h"
#include "sensitivity.h"

/* Rows of a tensor converted on the pool, 64 at a time: dequantized to
 * f32 (q NULL) or quantized (q set). */
#define ROWS_PER_UNIT 64

typedef struct rows_job {
    const uint8_t *src;     /* dequantize: the tensor's rows (src_type) */
    uint32_t       src_type;
    uint64_t       src_rb;
    float         *v;       /* f32 rows (rows × cols) */
    uint8_t       *q;       /* quantize: rows of type, q_rb bytes each */
    uint32_t       type;
    uint64_t       q_rb;
    const float   *w;       /* importance weights (cols per stacked matrix) or NULL */
    int64_t        rows, cols, per; /* per: rows of one stacked matrix */
    atomic_int     failed;  /* set by any thread whose row failed */
} rows_job;

static void rows_unit(void *ctx, int64_t u, int thread)
{
    (void)thread;
    rows_job *j = ctx;
    const int64_t r0 = u * ROWS_PER_UNIT;
    for (int64_t r = r0; r < r0 + ROWS_PER_UNIT && r < j->rows; r++) {
        float *row = j->v + (size_t)r * (size_t)j->cols;
        if (!j->q) {
            if (gguf_dequantize_row(j->src_type, j->src + (size_t)r * j->src_rb, row, j->cols, NULL))
                atomic_store(&j->failed, 1);
        } else {
            const float *w = j->w ? j->w + (size_t)(r / j->per) * (size_t)j->cols : NULL;
            if (!gguf_quantize_rows(j->type, row, j->q + (size_t)r * j->q_rb, 1, j->cols, w, NULL))
                atomic_store(&j->failed, 1);
        }
    }
}

/* Runs j on the pool; whether every row went through. */
static bool rows_run(rows_job *j)
{
    atomic_init(&j->failed, 0);
    pool_for((j->rows + ROWS_PER_UNIT - 1) / ROWS_PER_UNIT, rows_unit, j);
    return !atomic_load(&j->failed);
}

/* The tensor's values as f32 (rows × cols), whatever its type. */
static float *tensor_f32(const gguf_tensor *t, int64_t rows, int64_t cols, gguf_error *err)
{
    float *v = malloc((size_t)rows * (size_t)cols * sizeof *v);
    uint64_t rb;
    if (!v) {
        gguf_error_set(err, "out of memory");
        return NULL;
    }
    if (gguf_row_size(t->type, cols, &rb, err)) {
        free(v);
        return NULL;
    }
    rows_job j = { .src = t->data, .src_type = t->type, .src_rb = rb, .v = v, .rows = rows,
                   .cols = cols, .per = rows };
    if (!rows_run(&j)) {
        free(v);
        gguf_error_set(err, "%s: cannot read its %s rows", t->name, gguf_dtype_name(t->type));
        return NULL;
    }
    return v;
}

/* t quantized to type (n_stack matrices of rows / n_stack rows, each with
 * its own importance weights when im has them), or NULL (err set). */
static void *quantized(const gguf_tensor *t, const float *v, int64_t rows, int64_t cols,
                       int n_stack, uint32_t type, const gguf_imatrix *im, size_t *bytes,
                       gguf_error *err)
{
    uint64_t rb;
    if (gguf_row_size(type, cols, &rb, err))
        return NULL;
    uint8_t *q = malloc((size_t)rows * rb);
    if (!q) {
        gguf_error_set(err, "out of memory");
        return NULL;
    }
    int32_t nw = 0;
    const float *w = im ? gguf_imatrix_find(im, t->name, &nw) : NULL;
    if (w && nw != cols * n_stack) {
        free(q);
        gguf_error_set(err, "the importance matrix has %d values for %s, whose rows have %lld",
                       nw, t->name, (long long)cols);
        return NULL;
    }
    rows_job j = { .v = (float *)v, .q = q, .type = type, .q_rb = rb, .w = w, .rows = rows,
                   .cols = cols, .per = rows / n_stack };
    if (!rows_run(&j)) {
        free(q);
        gguf_error_set(err, "%s: cannot be quantized to %s", t->name, gguf_dtype_name(type));
        return NULL;
    }
    *bytes = (size_t)rows * rb;
    return q;
}

/* The recorded inputs of the blocks kept for a measurement at most. */
#define SNAP_MAX ((size_t)1 << 30)

static void snap_off(run_state *s)
{
    free(s->snap);
    s->snap = NULL;
    s->snap_mode = s->snap_cap = s->snap_at = 0;
}

/* The first block whose output quantizing t can change: its own (blk.N.),
 * or an earlier one whose keys and values a block from N on reads (shared
 * KV); after the last for the output matrix (not tied); 0 for the rest
 * (the embeddings, per-layer tables). */
static int first_block(const run_model *m, const gguf_tensor *t, bool embd)
{
    const int n = m->hp.n_layer_run;
    int b = 0;
    if (!embd && t->data == (const uint8_t *)m->output.data)
        b = n;
    else if (!embd && sscanf(t->name, "blk.%d.", &b) != 1)
        b = 0;
    if (b < 0 || b > n)
        return 0;
    int first = b;
    for (int il = b; il < n; il++)
        if (m->layers[il].kv_layer < first)
            first = m->layers[il].kv_layer;
    return first < 0 ? 0 : first;
}

/* The model's matrix for tensor t (its embedding too), or NULL. */
static run_matrix *matrix_of(run_model *m, const gguf_tensor *t, int *n_stack)
{
    *n_stack = 1;
    return t->data == (const uint8_t *)m->tok_embd.data ? &m->tok_embd
                                                         : run_model_matrix_of(m, t, n_stack);
}

size_t run_sensitivity_act_row(run_model *m, const gguf_file *f, const uint32_t *types,
                               int n_types)
{
    size_t r = 0;
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        int n_stack;
        const run_matrix *w = matrix_of(m, gguf_tensor_at(f, i), &n_stack);
        for (int k = 0; w && k < n_types; k++) {
            const size_t a = kern_act_row_size(types[k], w->cols);
            r = a > r ? a : r;
        }
    }
    return r;
}

int run_sensitivity(run_state *s, run_model *m, const gguf_file *f, const int32_t *tokens,
                    int n_tokens, int32_t bos, int max_chunks, const uint32_t *types, int n_types,
                    bool first_fit, const gguf_imatrix *im, FILE *out, gguf_error *err)
{
    FILE *base = tmpfile();
    if (!base)
        return gguf_error_set(err, "cannot create a temporary file for the base log-probabilities");
    /* the base run records every block's input, so that a measurement
     * starts at the first block its tensor changes (the same numbers) */
    int64_t chunks = s->n_ctx > 0 ? n_tokens / s->n_ctx : 0;
    if (max_chunks > 0 && chunks > max_chunks)
        chunks = max_chunks;
    const int64_t batches = chunks * ((s->n_ctx + s->n_batch - 1) / s->n_batch);
    const size_t per = (size_t)(m->hp.n_layer_run + 1) * (size_t)s->n_batch *
                       (size_t)m->hp.n_embd * sizeof(float);
    int64_t cap = per ? (int64_t)(SNAP_MAX / per) : 0;
    cap = cap < batches ? cap : batches;
    s->snap = cap > 0 ? malloc((size_t)cap * per) : NULL;
    s->snap_cap = s->snap ? (int)cap : 0;
    s->snap_mode = s->snap ? 1 : 0;
    s->snap_at = 0;
    run_eval_result res;
    int rc = run_perplexity_to(s, m, tokens, n_tokens, bos, max_chunks, base, "the base", &res, err);
    if (rc) {
        fclose(base);
        snap_off(s);
        return -1;
    }
    fprintf(out, "# gguf-run --sensitivity: mean KL divergence from the model's own output when "
                 "one tensor alone is quantized\n# %d chunks of %d tokens; perplexity %.6f\n"
                 "# tensor\ttype\tbytes\tmean_kld\n", res.n_chunk, s->n_ctx, res.ppl);
    /* the work: every matrix times every type that fits it */
    uint64_t n_work = 0;
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        int n_stack;
        if (matrix_of(m, t, &n_stack))
            n_work += first_fit ? 1 : (uint64_t)n_types;
    }
    progress bar;
    progress_start(&bar, "sensitivity", n_work, true);
    for (uint64_t i = 0; rc == 0 && i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        int n_stack;
        run_matrix *w = matrix_of(m, t, &n_stack);
        const bool embd = w == &m->tok_embd;
        if (!w)
            continue;
        const run_matrix saved = *w, saved_out = m->output;
        float *v = tensor_f32(t, w->rows, w->cols, err);
        if (!v) {
            rc = -1;
            break;
        }
        bool measured = false;
        for (int k = 0; rc == 0 && k < n_types && !(first_fit && measured); k++) {
            const gguf_dtype_traits *tr = gguf_dtype_get(types[k]);
            if (!first_fit)
                progress_add(&bar, 1);
            if (w->cols % tr->blck_size)
                continue; /* gguf-quantize would fall back to another type */
            measured = true;
            size_t bytes = 0;
            void *q = quantized(t, v, w->rows, w->cols, n_stack, types[k], im, &bytes, err);
            if (!q) {
                rc = -1;
                break;
            }
            w->data = q;
            w->type = types[k];
            w->row_bytes = bytes / (size_t)w->rows;
            w->packed = NULL;
            if (embd && m->tied)
                m->output = *w;
            rewind(base);
            /* (from block 0: the embedding may be what changed, run it all) */
            s->snap_from = first_block(m, t, embd);
            s->snap_mode = s->snap && s->snap_from > 0 ? 2 : 0;
            s->snap_at = 0;
            rc = run_kl_divergence_from(s, m, base, "the base", bos, &res, err);
            *w = saved;
            m->output = saved_out;
            free(q);
            if (rc == 0)
                fprintf(out, "%s\t%s\t%zu\t%.9g\n", t->name, tr->name, bytes, res.mean_kld);
        }
        if (first_fit)
            progress_add(&bar, 1);
        free(v);
    }
    progress_end(&bar);
    fclose(base);
    snap_off(s);
    if (rc == 0 && (fflush(out) || ferror(out)))
        rc = gguf_error_set(err, "write error");
    return rc;
}
