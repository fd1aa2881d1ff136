/*
 * importance.c — collecting an importance matrix over a text (see
 * importance.h for what is summed and what the file holds).
 *
 * Not for: reading or writing the file's bytes (libgguf's imatrix.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/arch.h>
#include <ggufkit/quants.h>
#include "importance.h"
#include "progress.h"

static int add_entry(run_importance *im, const run_matrix *w, const char *name, int n_mat)
{
    run_importance_entry *e = &im->e[im->n];
    *e = (run_importance_entry){ .w = w, .ncols = (int)w->cols, .n_mat = n_mat };
    snprintf(e->name, sizeof e->name, "%s", name);
    if (!(e->sum = calloc((size_t)n_mat * (size_t)w->cols, sizeof *e->sum)) ||
        (n_mat > 1 && !(e->counts = calloc((size_t)n_mat, sizeof *e->counts)))) {
        free(e->sum);
        return -1;
    }
    im->n++;
    return 0;
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
    im->e = calloc((size_t)m->hp.n_layer * n_rows + n_lora + 1, sizeof *im->e);
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
            const int n_mat = gguf_arch_tensor_dim(t, 2) != GGUF_DIM_1 ? m->hp.n_expert : 1;
            if (add_entry(im, w, name, n_mat))
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
    for (int i = 0; i < out.n; i++) {
        free(out.entries[i].values);
        free(out.entries[i].counts);
    }
    free(out.entries);
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
