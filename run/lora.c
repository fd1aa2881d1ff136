/*
 * lora.c — LoRA adapters: checked against the model, their pairs hung on
 * its matrices (lora.h).
 *
 * What llama.cpp e21cdc11's llama_adapter_lora_init checks is checked here
 * with the same outcome (general.type "adapter", the model's architecture,
 * adapter.type "lora", tensor names NAME.lora_a / NAME.lora_b in pairs,
 * *_norm.weight skipped, NAME a tensor of the model, A's columns and B's
 * rows those of NAME, A's rows B's columns), plus what keeps the products
 * safe where llama.cpp would assert: an expert stack's third dimension,
 * types the kernels multiply, a finite scale. A token_embd pair is
 * transposed (A (n_vocab, rank) looked up by token, B (n_embd, rank)); on a
 * model whose output is the embedding (tied) llama.cpp's output product
 * would take that pair and abort, so it is refused here. A pair for a
 * tensor the model holds but multiplies by no build_lora_mm product (Gemma
 * 4's per_layer_model_proj, a vector) is checked and, as there, unused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "lora.h"

static bool ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !memcmp(s + n - k, suffix, k);
}

/* The string value of key in f into buf (empty when absent); -1 when it is
 * not a string or does not fit. */
static int kv_string(const gguf_file *f, const char *key, char *buf, size_t size, gguf_error *err)
{
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    gguf_str s;
    buf[0] = 0;
    if (!kv)
        return 0;
    if (!gguf_kv_str(kv, &s))
        return gguf_error_set(err, "%s is not a string", key);
    if (s.len >= size || memchr(s.ptr, 0, s.len))
        return gguf_error_set(err, "%s is not a name (%llu bytes)", key, (unsigned long long)s.len);
    memcpy(buf, s.ptr, s.len);
    buf[s.len] = 0;
    return 0;
}

/* The adapter's keys: what it is, for which architecture, its alpha. */
static int check_keys(const gguf_file *f, const run_model *m, float *alpha, gguf_error *err)
{
    char v[64];
    if (kv_string(f, "general.type", v, sizeof v, err))
        return -1;
    if (strcmp(v, "adapter"))
        return gguf_error_set(err, "not a LoRA adapter: general.type is %s%s%s (an adapter has "
                              "\"adapter\")", *v ? "\"" : "", *v ? v : "absent", *v ? "\"" : "");
    if (kv_string(f, "adapter.type", v, sizeof v, err))
        return -1;
    if (strcmp(v, "lora"))
        return gguf_error_set(err, "adapter.type is %s%s%s, not \"lora\"", *v ? "\"" : "",
                              *v ? v : "absent", *v ? "\"" : "");
    if (kv_string(f, "general.architecture", v, sizeof v, err))
        return -1;
    if (strcmp(v, m->arch))
        return gguf_error_set(err, "an adapter for %s%s%s, the model is %s", *v ? "\"" : "",
                              *v ? v : "no architecture", *v ? "\"" : "", m->arch);
    if (gguf_lookup_kv(f, "adapter.alora.invocation_tokens"))
        return gguf_error_set(err, "an activated LoRA (adapter.alora.invocation_tokens): "
                              "gguf-run applies plain LoRA adapters only");
    const gguf_kv *a = gguf_lookup_kv(f, "adapter.lora.alpha");
    *alpha = 0.0f;
    if (a && !gguf_kv_f32(a, alpha))
        return gguf_error_set(err, "adapter.lora.alpha is not an f32");
    if (!isfinite(*alpha))
        return gguf_error_set(err, "adapter.lora.alpha is not finite");
    return 0;
}

/* A (rows, cols) matrix of tensor t's data: rows · cols elements, checked
 * for what the kernels need. */
static int as_matrix(run_matrix *w, const gguf_tensor *t, int64_t rows, int64_t cols,
                     gguf_error *err)
{
    uint64_t rb;
    if (!kern_supported(t->type))
        return gguf_error_set(err, "tensor %s has type %s, which gguf-run cannot multiply",
                              t->name, gguf_dtype_name(t->type));
    if (gguf_row_size(t->type, cols, &rb, NULL))
        return gguf_error_set(err, "tensor %s: rows of %lld elements do not fit %s blocks",
                              t->name, (long long)cols, gguf_dtype_name(t->type));
    if ((uintptr_t)t->data % 4)
        return gguf_error_set(err, "tensor %s: data is not 4-byte aligned", t->name);
    *w = (run_matrix){ .data = t->data, .type = t->type, .rows = rows, .cols = cols,
                       .row_bytes = (size_t)rb };
    return 0;
}

static int bad_shape(const gguf_tensor *a, const gguf_tensor *b, const gguf_tensor *base,
                     gguf_error *err)
{
    return gguf_error_set(err, "tensors %s [%lld, %lld, %lld, %lld] and %s [%lld, %lld, %lld, "
                          "%lld] do not fit %s [%lld, %lld, %lld, %lld] (an adapter for another "
                          "model?)", a->name, (long long)a->ne[0], (long long)a->ne[1],
                          (long long)a->ne[2], (long long)a->ne[3], b->name, (long long)b->ne[0],
                          (long long)b->ne[1], (long long)b->ne[2], (long long)b->ne[3],
                          base->name, (long long)base->ne[0], (long long)base->ne[1],
                          (long long)base->ne[2], (long long)base->ne[3]);
}

/* One pair A, B for the model's tensor base into *p, and the matrix it
 * goes on (*on; NULL: none — the embedding's when *embd). */
static int check_pair(run_lora *p, run_matrix **on, bool *embd, run_model *m,
                      const gguf_tensor *a, const gguf_tensor *b, const gguf_tensor *base,
                      float user_scale, float alpha, gguf_error *err)
{
    const bool embd_shape = ends_with(base->name, "token_embd.weight");
    const int64_t rank = b->ne[0];
    int n_stack = 1;
    *on = NULL;
    *embd = false;
    if (a->ne[3] != 1 || b->ne[3] != 1 || rank < 1 || a->ne[2] != base->ne[2] ||
        b->ne[2] != base->ne[2])
        return bad_shape(a, b, base, err);
    if (embd_shape) { // transposed: A (rank, n_vocab), B (rank, n_embd) in ggml's order
        if (base->ne[0] != b->ne[1] || base->ne[1] != a->ne[1] || a->ne[0] != rank ||
            base->ne[2] != 1)
            return bad_shape(a, b, base, err);
        if (as_matrix(&p->a, a, a->ne[1], rank, err) || as_matrix(&p->b, b, b->ne[1], rank, err))
            return -1;
        *embd = !strcmp(base->name, "token_embd.weight");
        if (*embd && m->tied)
            return gguf_error_set(err, "tensor %s: the model's output is its token embedding "
                                  "(tied), which cannot take a transposed embedding pair "
                                  "(llama.cpp e21cdc11 aborts on it)", a->name);
    } else {
        if (base->ne[0] != a->ne[0] || base->ne[1] != b->ne[1] || a->ne[1] != rank)
            return bad_shape(a, b, base, err);
        if (as_matrix(&p->a, a, a->ne[1] * a->ne[2], a->ne[0], err) ||
            as_matrix(&p->b, b, b->ne[1] * b->ne[2], rank, err))
            return -1;
        *on = run_model_matrix_of(m, base, &n_stack);
        if (*on && n_stack != base->ne[2])
            return bad_shape(a, b, base, err);
    }
    p->rank = (int)rank;
    p->n_stack = n_stack;
    p->scale = alpha != 0.0f ? user_scale * alpha / (float)rank : user_scale;
    if (!isfinite(p->scale))
        return gguf_error_set(err, "scale %g × alpha %g / rank %lld is not finite",
                              (double)user_scale, (double)alpha, (long long)rank);
    return 0;
}

/* Checks adapter f against m and, with out, fills out[0..) with its pairs
 * and on[], embd[] with where each goes; returns the number of pairs, -1
 * with a message. */
static long scan(const gguf_file *f, run_model *m, const gguf_file *mf, float user_scale,
                 run_lora *out, run_matrix **on, bool *embd, gguf_error *err)
{
    float alpha;
    if (check_keys(f, m, &alpha, err))
        return -1;
    long n = 0;
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        const bool is_a = ends_with(t->name, ".lora_a");
        if (!is_a && !ends_with(t->name, ".lora_b")) {
            if (ends_with(t->name, "_norm.weight"))
                continue; // as llama.cpp: norm vectors are not applied
            return gguf_error_set(err, "tensor %s is neither NAME.lora_a nor NAME.lora_b",
                                  t->name);
        }
        char base[GGUF_MAX_NAME + 16], other[GGUF_MAX_NAME + 16];
        const size_t k = strlen(t->name) - strlen(".lora_a");
        if (k >= sizeof base - 8)
            return gguf_error_set(err, "tensor name %s is too long", t->name);
        memcpy(base, t->name, k);
        base[k] = 0;
        snprintf(other, sizeof other, "%s.lora_%c", base, is_a ? 'b' : 'a');
        const gguf_tensor *o = gguf_lookup_tensor(f, other);
        if (!o)
            return gguf_error_set(err, "tensor %s has no %s beside it", t->name, other);
        if (!is_a)
            continue; // the pair is taken from its lora_a
        const gguf_tensor *bt = gguf_lookup_tensor(mf, base);
        if (!bt)
            return gguf_error_set(err, "tensor %s: the model has no %s (an adapter for another "
                                  "model?)", t->name, base);
        run_lora p;
        memset(&p, 0, sizeof p);
        run_matrix *w;
        bool e;
        if (check_pair(&p, &w, &e, m, t, o, bt, user_scale, alpha, err))
            return -1;
        if (out) {
            out[n] = p;
            on[n] = w;
            embd[n] = e;
        }
        n++;
    }
    return n;
}

/* B (rows, rank) of f32 transposed into an owned (rank, rows) array. */
static float *transpose(const run_matrix *b)
{
    float *t = malloc((size_t)b->rows * (size_t)b->cols * sizeof *t);
    if (!t)
        return NULL;
    for (int64_t r = 0; r < b->rows; r++) {
        const float *row = (const float *)((const uint8_t *)b->data + (size_t)r * b->row_bytes);
        for (int64_t k = 0; k < b->cols; k++)
            t[(size_t)k * (size_t)b->rows + (size_t)r] = row[k];
    }
    return t;
}

static void note_sizes(run_model *m, const run_lora *p, bool embd)
{
    const int64_t rows = p->b.rows / p->n_stack;
    size_t act = kern_act_row_size(p->b.type, p->b.cols);
    if (!embd) {
        const size_t a = kern_act_row_size(p->a.type, p->a.cols);
        act = a > act ? a : act;
    }
    m->lora_rank = p->rank > m->lora_rank ? p->rank : m->lora_rank;
    m->lora_rows = rows > m->lora_rows ? rows : m->lora_rows;
    m->extra_act_row = act > m->extra_act_row ? act : m->extra_act_row;
}

int run_lora_attach(run_lora_set *set, run_model *m, const gguf_file *mf, const char *const *paths,
                    const float *scales, int n, gguf_error *err)
{
    memset(set, 0, sizeof *set);
    if (n <= 0)
        return 0;
    gguf_file **files = calloc((size_t)n, sizeof *files);
    if (!files)
        return gguf_error_set(err, "out of memory");
    for (int i = 0; i < n; i++)
        if (!(files[i] = gguf_open(paths[i], GGUF_OPEN_NO_SPLIT, err))) {
            gguf_error_prefix(err, "%s: ", paths[i]);
            while (i--)
                gguf_close(files[i]);
            free(files);
            return -1;
        }
    return run_lora_attach_files(set, m, mf, files, paths, scales, n, err);
}

int run_lora_attach_files(run_lora_set *set, run_model *m, const gguf_file *mf, gguf_file **files,
                          const char *const *names, const float *scales, int n, gguf_error *err)
{
    memset(set, 0, sizeof *set);
    if (n <= 0) {
        free(files);
        return 0;
    }
    set->files = files;
    set->n_files = n;
    long total = 0, *count = calloc((size_t)n, sizeof *count);
    if (!count) {
        run_lora_free(set, NULL);
        return gguf_error_set(err, "out of memory");
    }
    // every adapter checked before the model is touched
    for (int i = 0; i < n; i++) {
        if ((count[i] = scan(files[i], m, mf, scales[i], NULL, NULL, NULL, err)) < 0) {
            gguf_error_prefix(err, "%s: ", names[i]);
            free(count);
            run_lora_free(set, NULL);
            return -1;
        }
        total += scales[i] != 0.0f ? count[i] : 0;
    }
    run_matrix **on = calloc((size_t)total + 1, sizeof *on);
    bool *embd = calloc((size_t)total + 1, sizeof *embd);
    set->pairs = calloc((size_t)total + 1, sizeof *set->pairs);
    if (!on || !embd || !set->pairs) {
        free(count);
        free(on);
        free(embd);
        run_lora_free(set, NULL);
        return gguf_error_set(err, "out of memory");
    }
    // each matrix's list gains the later adapters' pairs at its head
    for (int i = 0; i < n; i++) {
        if (scales[i] == 0.0f) // llama.cpp leaves an adapter of scale 0 out
            continue;
        const long k = scan(set->files[i], m, mf, scales[i], set->pairs + set->n_pairs, on + set->n_pairs,
                            embd + set->n_pairs, err);
        for (long j = 0; j < k; j++, set->n_pairs++) {
            run_lora *q = set->pairs + set->n_pairs;
            run_matrix *w = on[set->n_pairs];
            if (embd[set->n_pairs]) {
                q->next = m->lora_embd;
                m->lora_embd = q;
            } else if (w) {
                q->next = w->lora;
                w->lora = q;
            } else {
                continue;
            }
            note_sizes(m, q, embd[set->n_pairs]);
            if (q->b.type == GGUF_DT_F32 && q->n_stack == 1 && q->rank < 64 &&
                !(q->bt = transpose(&q->b))) {
                free(count);
                free(on);
                free(embd);
                run_lora_free(set, m);
                return gguf_error_set(err, "out of memory");
            }
        }
    }
    free(count);
    free(on);
    free(embd);
    return 0;
}

/* Every matrix of the model loses its pairs (they are all the set's). */
static void detach(run_model *m)
{
    for (int i = 0; i < m->hp.n_layer; i++)
        for (int role = 0; role < GGUF_ROLE_COUNT; role++) {
            run_matrix *w = run_layer_matrix(&m->layers[i], role);
            if (w)
                w->lora = NULL;
        }
    m->output.lora = NULL;
    m->lora_embd = NULL;
    m->lora_rank = 0;
    m->lora_rows = 0;
    m->extra_act_row = 0;
}

void run_lora_free(run_lora_set *set, run_model *m)
{
    if (m && m->layers)
        detach(m);
    for (size_t i = 0; set->pairs && i < set->n_pairs; i++)
        free(set->pairs[i].bt);
    for (int i = 0; i < set->n_files; i++)
        gguf_close(set->files[i]);
    free(set->files);
    free(set->pairs);
    memset(set, 0, sizeof *set);
}
