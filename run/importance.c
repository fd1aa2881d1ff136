/*
 * importance.c — collecting an importance matrix over a text (see
 * importance.h for what is summed and what the file holds).
 *
 * Not for: reading or writing the file's bytes (libgguf's imatrix.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/arch.h>
#include <ggufkit/quants.h>
#include "importance.h"
#include "progress.h"

/* A new entry of n_mat rows of ncols (for w, or NULL for one only a
 * file has); im->e has room for it. */
static int new_entry(run_importance *im, const run_matrix *w, const char *name, int ncols,
                     int n_mat)
{
    run_importance_entry *e = &im->e[im->n];
    *e = (run_importance_entry){ .w = w, .ncols = ncols, .n_mat = n_mat };
    snprintf(e->name, sizeof e->name, "%s", name);
    if (!(e->sum = calloc((size_t)n_mat * (size_t)ncols, sizeof *e->sum)) ||
        (n_mat > 1 && !(e->counts = calloc((size_t)n_mat, sizeof *e->counts)))) {
        free(e->sum);
        return -1;
    }
    im->n++;
    return 0;
}

static int add_entry(run_importance *im, const run_matrix *w, const char *name, int n_mat)
{
    return new_entry(im, w, name, (int)w->cols, n_mat);
}

int run_importance_init(run_importance *im, const run_model *m, bool with_output,
                        gguf_error *err)
{
    /* every per-block matrix of the architecture's tensor table, block by
     * block in table order (llama-imatrix's order: q, k, v, output, gate,
     * up, down) */
    const size_t n_rows = gguf_arch_n_tensors(m->row);
    memset(im, 0, sizeof *im);
    size_t n_lora = 0; /* LoRA pairs on the blocks' matrices: two entries each */
    for (int il = 0; il < m->hp.n_layer; il++)
        for (int role = 0; role < GGUF_ROLE_COUNT; role++) {
            const run_matrix *w = run_layer_matrix(&m->layers[il], role);
            for (const run_lora *l = w ? w->lora : NULL; l; l = l->next)
                n_lora += 2;
        }
    im->cap = (int)((size_t)m->hp.n_layer * n_rows + n_lora + 1);
    im->e = calloc((size_t)im->cap, sizeof *im->e);
    if (!im->e)
        return gguf_error_set(err, "out of memory");
    for (int il = 0; il < m->hp.n_layer; il++) {
        run_layer *l = &m->layers[il];
        for (size_t r = 0; r < n_rows; r++) {
            const gguf_arch_tensor *t = gguf_arch_tensor_at(m->row, r);
            const run_matrix *w = gguf_arch_tensor_per_block(t)
                                  ? run_layer_matrix(l, gguf_arch_tensor_role(t)) : NULL;
            if (!w || !w->data) /* not a matrix, or one this model does not have */
                continue;
            char name[64];
            snprintf(name, sizeof name, gguf_arch_tensor_name(t), il);
            /* a stack of experts: one row and count per expert; of heads
             * (latent attention's k_b, v_b, a 3-D mul_mat): one row of every
             * head's inputs side by side and one count, as llama-imatrix */
            const int dim2 = gguf_arch_tensor_dim(t, 2);
            const bool heads = dim2 == GGUF_DIM_HEADS;
            const int n_mat = dim2 != GGUF_DIM_1 && !heads ? m->hp.n_expert : 1;
            if (new_entry(im, w, name, (int)w->cols * (heads ? m->hp.n_head : 1), n_mat))
                goto oom;
            /* an adapter's A and B: NAME.lora_a, NAME.lora_b (llama-imatrix
             * collects every blk.* product; two adapters on one matrix
             * would give two entries of one name, which it adds up) */
            for (const run_lora *lp = w->lora; lp; lp = lp->next) {
                char ln[80];
                if (lp->next) {
                    run_importance_free(im);
                    return gguf_error_set(err, "--imatrix with two LoRA adapters on %s: their "
                                          "entries would share one name", name);
                }
                snprintf(ln, sizeof ln, "%s.lora_a", name);
                if (add_entry(im, &lp->a, ln, n_mat))
                    goto oom;
                snprintf(ln, sizeof ln, "%s.lora_b", name);
                if (add_entry(im, &lp->b, ln, n_mat))
                    goto oom;
            }
        }
    }
    // a tied head is token_embd.weight, which llama-imatrix never collects
    if (with_output && !m->tied && add_entry(im, &m->output, GGUF_T_OUTPUT, 1))
        goto oom;
    return 0;
oom:
    run_importance_free(im);
    return gguf_error_set(err, "out of memory");
}

void run_importance_free(run_importance *im)
{
    for (int i = 0; i < im->n; i++) {
        free(im->e[i].sum);
        free(im->e[i].counts);
    }
    free(im->e);
    for (int i = 0; i < im->n_datasets; i++)
        free(im->datasets[i]);
    free(im->datasets);
    memset(im, 0, sizeof *im);
}

void run_importance_add(run_importance_entry *e, const float *x, int nb)
{
    // row by row in f32, the order llama-imatrix adds in
    for (int r = 0; r < nb; r++) {
        const float *row = x + (size_t)r * e->ncols;
        for (int j = 0; j < e->ncols; j++)
            e->sum[j] += row[j] * row[j];
    }
    e->count += nb;
    e->ncall++;
}

void run_importance_hook(void *user, const run_matrix *w, const float *x, int nb)
{
    run_importance *im = user;
    if (w->stack) { /* an expert's rows: every product counts */
        for (int i = 0; i < im->n; i++)
            if (im->e[i].w == w->stack) {
                run_importance_entry *e = &im->e[i];
                float *sum = e->sum + (size_t)w->expert * (size_t)e->ncols;
                for (int r = 0; r < nb; r++) {
                    const float *row = x + (size_t)r * e->ncols;
                    for (int j = 0; j < e->ncols; j++)
                        sum[j] += row[j] * row[j];
                }
                e->counts[w->expert] += nb;
                e->count += nb;
                return;
            }
        return;
    }
    if (nb < RUN_IMPORTANCE_MIN_BATCH)
        return;
    for (int i = 0; i < im->n; i++)
        if (im->e[i].w == w) {
            run_importance_add(&im->e[i], x, nb);
            return;
        }
}

float run_importance_value(const run_importance_entry *e, int j)
{
    return (e->sum[j] / (float)e->count) * (float)e->ncall;
}

/* The entries of a file about to be written (values and counts each). */
static void free_entries(gguf_imatrix *out)
{
    for (int i = 0; i < out->n; i++) {
        free(out->entries[i].values);
        free(out->entries[i].counts);
    }
    free(out->entries);
}

int run_importance_save(const run_importance *im, const char *path, const char *dataset,
                        bool gguf, int n_ctx, gguf_error *err)
{
    gguf_imatrix out = { 0, calloc((size_t)im->n + 1, sizeof(gguf_imatrix_entry)), 0,
                         (char *)dataset, (uint32_t)n_ctx };
    int rc = -1;
    int64_t max_count = 0;
    if (!out.entries)
        return gguf_error_set(err, "out of memory");
    for (int i = 0; i < im->n; i++) {
        const run_importance_entry *e = &im->e[i];
        if (e->count == 0)
            continue; // never fed a batch of 16 rows: no data, as llama-imatrix skips it
        if (e->n_mat > 1 && !gguf) {
            gguf_error_set(err, "%s: the legacy .dat format of an expert matrix is not "
                           "written (use the GGUF format)", e->name);
            goto done;
        }
        gguf_imatrix_entry *o = &out.entries[out.n];
        const size_t nval = (size_t)e->n_mat * (size_t)e->ncols;
        o->name = (char *)e->name;
        o->ncall = e->ncall;
        o->nval = (int32_t)nval;
        o->n_mat = e->n_mat;
        o->values = malloc(nval * sizeof *o->values);
        o->counts = malloc((size_t)e->n_mat * sizeof *o->counts);
        if (!o->values || !o->counts) {
            free(o->values);
            free(o->counts);
            gguf_error_set(err, "out of memory");
            goto done;
        }
        out.n++;
        for (size_t j = 0; j < nval; j++)
            o->values[j] = gguf ? e->sum[j] : run_importance_value(e, (int)j);
        if (e->counts) {
            for (int k = 0; k < e->n_mat; k++) {
                o->counts[k] = (float)e->counts[k];
                max_count = e->counts[k] > max_count ? e->counts[k] : max_count;
            }
        } else {
            o->counts[0] = (float)e->count;
            max_count = e->count > max_count ? e->count : max_count;
        }
        out.chunks = e->ncall > out.chunks ? e->ncall : out.chunks;
    }
    if (out.n == 0) {
        gguf_error_set(err, "no matrix was fed a batch of %d or more tokens",
                       RUN_IMPORTANCE_MIN_BATCH);
        goto done;
    }
    if (gguf) {
        out.chunks = (int32_t)(max_count / n_ctx); /* e21cdc11's m_last_chunk */
        rc = gguf_imatrix_save_gguf(path, &out, err);
    } else {
        for (int i = 0; i < out.n; i++) { /* the legacy entries have no counts */
            free(out.entries[i].counts);
            out.entries[i].counts = NULL;
        }
        rc = gguf_imatrix_save(path, &out, err);
    }
done:
    free_entries(&out);
    return rc;
}

int run_importance_collect(run_importance *im, run_state *s, const run_model *m,
                           const int32_t *tokens, int n_tokens, int32_t bos, int max_chunks,
                           bool all_logits, int *n_chunk, gguf_error *err)
{
    const int n_ctx = s->n_ctx;
    if (n_tokens < 2 * n_ctx)
        return gguf_error_set(err, "the text has %d tokens; a context of %d needs at least %d",
                              n_tokens, n_ctx, 2 * n_ctx);
    int nc = n_tokens / n_ctx;
    if (max_chunks > 0 && max_chunks < nc)
        nc = max_chunks;
    int32_t *chunk = malloc((size_t)n_ctx * sizeof *chunk);
    // with output.weight collected, every row goes through the head, as llama-imatrix's all logits
    float *logits = all_logits ? malloc((size_t)n_ctx * (size_t)m->hp.n_vocab * sizeof *logits)
                               : NULL;
    if (!chunk || (all_logits && !logits)) {
        free(chunk);
        free(logits);
        return gguf_error_set(err, "out of memory");
    }
    s->act_hook = run_importance_hook;
    s->act_user = im;
    progress bar; /* on a terminal only */
    progress_start(&bar, "imatrix", (uint64_t)nc, true);
    for (int c = 0; c < nc; c++) {
        memcpy(chunk, tokens + (size_t)c * n_ctx, (size_t)n_ctx * sizeof *chunk);
        if (bos >= 0)
            chunk[0] = bos;
        run_forward(s, m, chunk, n_ctx, 0, all_logits ? 0 : n_ctx, logits);
        progress_add(&bar, 1);
    }
    progress_end(&bar);
    s->act_hook = NULL;
    s->act_user = NULL;
    *n_chunk = nc;
    free(chunk);
    free(logits);
    return 0;
}

/* ---------------------------------------------------------------------------
 * --in-file: importance matrices read and added up
 */

static run_importance_entry *find_entry(run_importance *im, const char *name)
{
    for (int i = 0; i < im->n; i++)
        if (!strcmp(im->e[i].name, name))
            return &im->e[i];
    return NULL;
}

static int add_dataset(run_importance *im, const char *d, size_t len)
{
    char **v = realloc(im->datasets, (size_t)(im->n_datasets + 1) * sizeof *v);
    if (!v)
        return -1;
    im->datasets = v;
    if (!(v[im->n_datasets] = malloc(len + 1)))
        return -1;
    memcpy(v[im->n_datasets], d, len);
    v[im->n_datasets++][len] = '\0';
    return 0;
}

/* The datasets a file names: a GGUF file's imatrix.datasets (all of them;
 * gguf_imatrix_load keeps the first), a .dat's trailer. */
static int file_datasets(run_importance *im, const char *path, const gguf_imatrix *f,
                         bool gguf, gguf_error *err)
{
    if (!gguf)
        return f->dataset && add_dataset(im, f->dataset, strlen(f->dataset))
               ? gguf_error_set(err, "out of memory") : 0;
    gguf_file *g = gguf_open(path, 0, err);
    if (!g)
        return -1;
    const gguf_kv *kv = gguf_lookup_kv(g, "imatrix.datasets");
    int rc = 0;
    for (uint64_t i = 0; rc == 0 && kv && i < kv->n; i++) {
        if (memchr(kv->strs[i].ptr, 0, kv->strs[i].len))
            rc = gguf_error_set(err, "imatrix.datasets[%llu] contains a NUL byte",
                                (unsigned long long)i);
        else if (add_dataset(im, kv->strs[i].ptr, kv->strs[i].len))
            rc = gguf_error_set(err, "out of memory");
    }
    gguf_close(g);
    return rc;
}

/* Makes a one-matrix entry of nval values (no model matrix) n_mat matrices
 * of its count, as llama-imatrix broadcasts an older file's single count. */
static int broadcast(run_importance_entry *e, int n_mat)
{
    int64_t *c = malloc((size_t)n_mat * sizeof *c);
    if (!c)
        return -1;
    for (int k = 0; k < n_mat; k++)
        c[k] = e->count;
    e->counts = c;
    e->ncols /= n_mat;
    e->n_mat = n_mat;
    return 0;
}

/* The largest count a file may hold: whole numbers stay exact in a double
 * to 2^53 (llama-imatrix keeps them in int64 through lround). */
#define MAX_FILE_COUNT 9007199254740992.0

static int load_entry(run_importance *im, const gguf_imatrix_entry *fe, uint32_t chunk_size,
                      gguf_error *err)
{
    const bool gguf = fe->counts != NULL;
    const int n_mat = gguf && fe->n_mat > 1 ? fe->n_mat : 1;
    if (strlen(fe->name) >= sizeof im->e->name)
        return gguf_error_set(err, "entry %s: name longer than %zu bytes", fe->name,
                              sizeof im->e->name - 1);
    run_importance_entry *e = find_entry(im, fe->name);
    if (!e) {
        if (im->n == im->cap) {
            int cap = im->cap ? 2 * im->cap : 64;
            run_importance_entry *v = realloc(im->e, (size_t)cap * sizeof *v);
            if (!v)
                return gguf_error_set(err, "out of memory");
            im->e = v;
            im->cap = cap;
        }
        if (new_entry(im, NULL, fe->name, fe->nval / n_mat, n_mat))
            return gguf_error_set(err, "out of memory");
        e = &im->e[im->n - 1];
    }
    const int64_t nval = (int64_t)e->n_mat * e->ncols;
    if (nval != fe->nval)
        return gguf_error_set(err, "entry %s: %d values where %s %lld", fe->name, fe->nval,
                              e->w ? "the model's matrix has" : "an earlier file has",
                              (long long)nval);
    if (gguf && n_mat != e->n_mat) {
        if (e->n_mat != 1 || e->w) /* the model's matrix or an earlier file's experts */
            return gguf_error_set(err, "entry %s: counts for %d matrices where %s %d", fe->name,
                                  n_mat, e->w ? "the model has" : "an earlier file has",
                                  e->n_mat);
        if (broadcast(e, n_mat))
            return gguf_error_set(err, "out of memory");
    }
    for (int k = 0; gguf && k < n_mat; k++)
        if (fe->counts[k] > MAX_FILE_COUNT)
            return gguf_error_set(err, "entry %s: count %g is too large", fe->name,
                                  (double)fe->counts[k]);
    for (int64_t j = 0; j < nval; j++) {
        e->sum[j] += gguf ? fe->values[j] : fe->values[j] * (float)chunk_size;
        if (!isfinite(e->sum[j]))
            return gguf_error_set(err, "entry %s: its sums added to the earlier ones "
                                  "overflow f32", fe->name);
    }
    const int64_t legacy = (int64_t)fe->ncall * chunk_size;
    for (int k = 0; k < e->n_mat; k++) {
        const int64_t c = gguf ? (int64_t)llround(fe->counts[k]) : legacy;
        if (e->counts)
            e->counts[k] += c;
        else
            e->ncall++; /* (not used for a loaded entry) */
        e->count += c;
    }
    e->loaded = true;
    return 0;
}

int run_importance_merge(run_importance *im, const gguf_imatrix *f, uint32_t chunk_size,
                         gguf_error *err)
{
    for (int32_t i = 0; i < f->n; i++)
        if (load_entry(im, &f->entries[i], chunk_size, err))
            return -1;
    im->loaded = true;
    return 0;
}

int run_importance_load(run_importance *im, const char *path, uint32_t chunk_size,
                        gguf_error *err)
{
    gguf_imatrix f;
    if (gguf_imatrix_load(path, &f, err))
        return -1;
    const bool gguf = f.n > 0 && f.entries[0].counts != NULL;
    int rc = run_importance_merge(im, &f, chunk_size, err);
    if (rc == 0)
        rc = file_datasets(im, path, &f, gguf, err);
    gguf_imatrix_free(&f);
    return rc;
}

/* An entry's largest count (each matrix's; a one-matrix entry's rows). */
static int64_t max_count(const run_importance_entry *e)
{
    int64_t m = e->counts ? 0 : e->count;
    for (int k = 0; e->counts && k < e->n_mat; k++)
        m = e->counts[k] > m ? e->counts[k] : m;
    return m;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp((*(const run_importance_entry *const *)a)->name,
                  (*(const run_importance_entry *const *)b)->name);
}

/* e as gguf_imatrix_save_gguf writes it (sums, counts as f32) or as
 * e21cdc11's legacy writer (ncall from the counts, values per chunk; a
 * matrix with no rows stores 1s). */
static int fill_entry(gguf_imatrix_entry *o, const run_importance_entry *e, bool gguf,
                      uint32_t chunk_size)
{
    const int64_t nval = (int64_t)e->n_mat * e->ncols, mx = max_count(e);
    const int32_t ncall = (int32_t)((mx + chunk_size - 1) / chunk_size);
    *o = (gguf_imatrix_entry){ .name = (char *)e->name, .ncall = ncall, .nval = (int32_t)nval,
                               .n_mat = e->n_mat };
    if (!(o->values = malloc((size_t)nval * sizeof *o->values)) ||
        !(o->counts = malloc((size_t)e->n_mat * sizeof *o->counts)))
        return -1;
    for (int k = 0; k < e->n_mat; k++)
        o->counts[k] = (float)(e->counts ? e->counts[k] : e->count);
    for (int64_t j = 0; j < nval; j++) {
        float v = e->sum[j], c = o->counts[j / e->ncols];
        if (!gguf && c == 0.0f)
            v = 1.0f, c = 1.0f; /* partial data: 1s, as llama-imatrix */
        o->values[j] = gguf ? v : (v / c) * (float)ncall;
    }
    if (!gguf) { /* the .dat has no counts */
        free(o->counts);
        o->counts = NULL;
    }
    return 0;
}

int run_importance_save_loaded(const run_importance *im, const char *path, const char *text,
                               bool gguf, uint32_t chunk_size, gguf_error *err)
{
    const run_importance_entry **order = malloc((size_t)(im->n + 1) * sizeof *order);
    gguf_imatrix out = { .chunk_size = chunk_size };
    const char **ds = malloc((size_t)(im->n_datasets + 1) * sizeof *ds);
    int rc = -1, n = 0, n_ds = 0;
    int64_t mx = 0;
    if (!order || !ds || !(out.entries = calloc((size_t)im->n + 1, sizeof *out.entries))) {
        gguf_error_set(err, "out of memory");
        goto done;
    }
    /* the GGUF file keeps every entry that has one (llama-imatrix writes
     * those with partial data too); the .dat drops one with no rows */
    for (int i = 0; i < im->n; i++) {
        const run_importance_entry *e = &im->e[i];
        const int64_t m = max_count(e);
        if (!e->loaded && e->count == 0)
            continue; /* a model matrix no batch reached: not in llama-imatrix's table */
        mx = m > mx ? m : mx;
        if (gguf || m > 0)
            order[n++] = e;
    }
    qsort(order, (size_t)n, sizeof *order, cmp_name);
    for (int i = 0; i < n; i++, out.n++)
        if (fill_entry(&out.entries[i], order[i], gguf, chunk_size)) {
            gguf_error_set(err, "out of memory");
            goto done;
        }
    if (out.n == 0) {
        gguf_error_set(err, "no matrix has data: nothing to write");
        goto done;
    }
    out.chunks = (int32_t)(mx / chunk_size > INT32_MAX ? INT32_MAX : mx / chunk_size);
    for (int i = 0; i < im->n_datasets; i++)
        ds[n_ds++] = im->datasets[i];
    if (text)
        ds[n_ds++] = text;
    if (gguf) {
        rc = gguf_imatrix_save_gguf_datasets(path, &out, ds, (size_t)n_ds, err);
    } else {
        out.dataset = n_ds ? (char *)ds[n_ds - 1] : NULL;
        rc = gguf_imatrix_save(path, &out, err);
    }
done:
    free_entries(&out);
    free(order);
    free(ds);
    return rc;
}
