/*
 * lora_merge.c — LoRA adapters merged into a base model (lora_merge.h).
 */
#include "lora_merge.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/arch.h>
#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>

#include "lora_adapter.h"
#include "outpath.h"
#include "sum16.h"

#define TOOL "gguf-edit"

bool lora_merge_batch_order(int64_t in, int64_t out, int64_t rank)
{
    return out >= 2 && rank % 16 == 0 && in % 4 == 0;
}

float lora_merge_dot(const float *at, const float *b, int64_t rank, bool batch)
{
    if (batch) { /* tinyBLAS: one 16-lane sum of fused multiply-adds */
        float acc[16] = { 0 };
        for (int64_t i = 0; i + 16 <= rank; i += 16)
            for (int l = 0; l < 16; l++)
                acc[l] = fmaf(at[i + l], b[i + l], acc[l]);
        return sum16_reduce(acc);
    }
    /* ggml_vec_dot_f32: four 16-lane sums fed 64 at a time, reduced (0 + 2,
     * 1 + 3, then the two), the rest added one rounded product at a time */
    float acc[4][16] = { { 0 } };
    int64_t i = 0;
    for (; i + 64 <= rank; i += 64)
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < 16; l++)
                acc[j][l] = fmaf(at[i + 16 * j + l], b[i + 16 * j + l], acc[j][l]);
    for (int l = 0; l < 16; l++) {
        acc[0][l] += acc[2][l];
        acc[1][l] += acc[3][l];
        acc[0][l] += acc[1][l];
    }
    float sum = sum16_reduce(acc[0]);
    for (; i < rank; i++) {
        const float p = at[i] * b[i];
        sum += p;
    }
    return sum;
}

/* A tensor's elements as f32 into out. */
static int to_f32(const gguf_tensor *t, float *out, gguf_error *err)
{
    if (t->type == GGUF_DT_F32) {
        memcpy(out, t->data, (size_t)t->n_elements * sizeof *out);
        return 0;
    }
    return gguf_dequantize_row(t->type, t->data, out, t->n_elements, err);
}

/* ggml_n_dims: the dimensions up to the last one above 1 (at least 1). */
static uint32_t n_dims_of(const int64_t *ne)
{
    uint32_t n = GGUF_MAX_DIMS;
    while (n > 1 && ne[n - 1] == 1)
        n--;
    return n;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const gguf_tensor *const *)a)->name, (*(const gguf_tensor *const *)b)->name);
}

typedef struct merge {
    const gguf_file         *base;
    gguf_lora_adapter       *ad;
    const lora_merge_input  *in;
    int                      n;
    float                   *cur, *a, *at, *b; /* one tensor's worth each */
} merge;

/* base tensor t + every adapter's pair, as f32 in m->cur. */
static int merge_tensor(merge *m, const gguf_tensor *t, gguf_error *err)
{
    if (to_f32(t, m->cur, err))
        return -1;
    const int64_t in = t->ne[0], out = t->ne[1], ex = t->ne[2];
    for (int k = 0; k < m->n; k++) {
        const gguf_tensor *ta, *tb;
        gguf_lora_adapter_pair(&m->ad[k], t->name, &ta, &tb);
        const int64_t r = tb->ne[0];
        if (to_f32(ta, m->a, err) || to_f32(tb, m->b, err))
            return -1;
        const float scale = gguf_lora_adapter_scale(m->ad[k].alpha, m->in[k].scale, r);
        const bool batch = lora_merge_batch_order(in, out, r);
        /* the token embeddings' pair is flipped: B·A with B's rows (embd)
         * first, A's (vocab) second, no transposition (export-lora) */
        const bool flipped = !strncmp(t->name, "token_embd", 10);
        for (int64_t e = 0; e < ex; e++) {
            const float *a = m->a + e * r * in, *b = m->b + e * out * r, *rows = m->at;
            if (flipped) {
                rows = m->b;
                b = m->a;
            } else {
                for (int64_t i = 0; i < in; i++) /* Aᵀ: row i holds column i of A */
                    for (int64_t q = 0; q < r; q++)
                        m->at[i * r + q] = a[q * in + i];
            }
            float *c = m->cur + e * out * in;
            for (int64_t j = 0; j < out; j++)
                for (int64_t i = 0; i < in; i++) {
                    const float d = lora_merge_dot(rows + i * r, b + j * r, r, batch) * scale;
                    c[j * in + i] = d + c[j * in + i];
                }
        }
    }
    return 0;
}

int lora_merge_run(const char *base_path, const lora_merge_input *in, int n, const char *out,
                   bool quiet)
{
    gguf_error err = { 0 };
    int status = 1;
    gguf_lora_adapter *ad = calloc((size_t)n, sizeof *ad);
    const gguf_tensor **order = NULL;
    gguf_writer *w = NULL;
    merge m = { 0 };
    gguf_file *base = gguf_open(base_path, 0, &err);
    if (!base || !ad) {
        fprintf(stderr, TOOL ": error: %s: %s\n", base_path, ad ? err.msg : "out of memory");
        goto done;
    }
    gguf_str s;
    const gguf_kv *kv = gguf_lookup_kv(base, "general.type");
    if (kv && gguf_kv_str(kv, &s) && gguf_str_eq(s, "adapter")) {
        fprintf(stderr, TOOL ": error: %s: an adapter, not a model to merge adapters into\n",
                base_path);
        goto done;
    }
    if (gguf_n_shards(base) > 1) {
        fprintf(stderr, TOOL ": error: %s: a split model (%u shards): merge the shards first "
                "(gguf-edit merge)\n", base_path, gguf_n_shards(base));
        goto done;
    }
    if (gguf_alignment(base) != 32) {
        fprintf(stderr, TOOL ": error: %s: general.alignment %u: llama-export-lora writes "
                "32-byte aligned data only\n", base_path, gguf_alignment(base));
        goto done;
    }
    for (int k = 0; k < n; k++) {
        if (gguf_lora_adapter_open(in[k].path, base, &ad[k], &err)) {
            fprintf(stderr, TOOL ": error: %s: %s\n", in[k].path, err.msg);
            goto done;
        }
        for (uint64_t i = 0; i < gguf_n_tensors(ad[k].f); i++) {
            const gguf_tensor *t = gguf_tensor_at(ad[k].f, i);
            if (t->type != GGUF_DT_F32 && t->type != GGUF_DT_F16 && t->type != GGUF_DT_BF16) {
                fprintf(stderr, TOOL ": error: %s: tensor '%s' is %s: quantized adapters are "
                        "not merged (as llama-export-lora; convert the adapter with --outtype "
                        "f32, f16 or bf16)\n", in[k].path, t->name, gguf_dtype_name(t->type));
                goto done;
            }
        }
        /* export-lora: every adapter holds the same tensors */
        if (k > 0 && (gguf_n_tensors(ad[k].f) != gguf_n_tensors(ad[0].f))) {
            fprintf(stderr, TOOL ": error: %s: its tensors are not those of %s: adapters of "
                    "different tensors are merged one at a time (as llama-export-lora)\n",
                    in[k].path, in[0].path);
            goto done;
        }
        for (uint64_t i = 0; k > 0 && i < gguf_n_tensors(ad[k].f); i++)
            if (!gguf_lookup_tensor(ad[0].f, gguf_tensor_at(ad[k].f, i)->name)) {
                fprintf(stderr, TOOL ": error: %s: tensor '%s' is not in %s: adapters of "
                        "different tensors are merged one at a time (as llama-export-lora)\n",
                        in[k].path, gguf_tensor_at(ad[k].f, i)->name, in[0].path);
                goto done;
            }
    }
    /* the output: never a device, the base or an adapter */
    {
        const char **inputs = malloc(((size_t)n + 1) * sizeof *inputs);
        if (!inputs) {
            fprintf(stderr, TOOL ": error: out of memory\n");
            goto done;
        }
        inputs[0] = base_path;
        for (int k = 0; k < n; k++)
            inputs[k + 1] = in[k].path;
        int rc = outpath_check(out, inputs, (size_t)n + 1, &err);
        free(inputs);
        if (rc) {
            fprintf(stderr, TOOL ": error: %s: %s\n", out, err.msg);
            goto done;
        }
    }
    const uint64_t nt = gguf_n_tensors(base);
    if (!(w = gguf_writer_new()) || !(order = malloc((nt ? nt : 1) * sizeof *order))) {
        fprintf(stderr, TOOL ": error: out of memory\n");
        goto done;
    }
    /* keys: the base's, general.file_type last as MOSTLY_F16 */
    int bad = 0;
    for (uint64_t i = 0; i < gguf_n_kv(base); i++)
        if (strcmp(gguf_kv_at(base, i)->key, GGUF_KEY_FILE_TYPE))
            bad |= gguf_writer_copy_kv(w, gguf_kv_at(base, i));
    bad |= gguf_writer_set_u32(w, GGUF_KEY_FILE_TYPE, GGUF_FT_F16);
    if (bad) {
        fprintf(stderr, TOOL ": error: out of memory\n");
        goto done;
    }
    gguf_writer_set_version(w, gguf_file_version(base));
    size_t most = 1, most_a = 1, most_b = 1, most_at = 1;
    for (uint64_t i = 0; i < nt; i++)
        order[i] = gguf_tensor_at(base, i);
    qsort(order, nt, sizeof *order, by_name);
    uint64_t n_merged = 0;
    for (uint64_t i = 0; i < nt; i++) {
        const gguf_tensor *t = order[i], *ta, *tb;
        const bool merged = n > 0 && gguf_lora_adapter_pair(&ad[0], t->name, &ta, &tb);
        const uint32_t type = !merged ? t->type : t->type == GGUF_DT_F32 ? GGUF_DT_F32 : GGUF_DT_F16;
        if (gguf_writer_add_tensor(w, t->name, type, n_dims_of(t->ne), t->ne, &err) < 0) {
            fprintf(stderr, TOOL ": error: %s: %s\n", base_path, err.msg);
            goto done;
        }
        if (!merged)
            continue;
        n_merged++;
        most = (size_t)t->n_elements > most ? (size_t)t->n_elements : most;
        for (int k = 0; k < n; k++) {
            gguf_lora_adapter_pair(&ad[k], t->name, &ta, &tb);
            most_a = (size_t)ta->n_elements > most_a ? (size_t)ta->n_elements : most_a;
            most_b = (size_t)tb->n_elements > most_b ? (size_t)tb->n_elements : most_b;
            most_at = (size_t)(ta->ne[0] * ta->ne[1]) > most_at ? (size_t)(ta->ne[0] * ta->ne[1]) : most_at;
        }
    }
    m = (merge){ .base = base, .ad = ad, .in = in, .n = n };
    if (!(m.cur = malloc(most * sizeof *m.cur)) || !(m.a = malloc(most_a * sizeof *m.a)) ||
        !(m.b = malloc(most_b * sizeof *m.b)) || !(m.at = malloc(most_at * sizeof *m.at))) {
        fprintf(stderr, TOOL ": error: out of memory (%zu bytes for one tensor)\n", most * 4);
        goto done;
    }
    if (gguf_writer_begin(w, out, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", out, err.msg);
        goto done;
    }
    for (uint64_t i = 0; i < nt; i++) {
        const gguf_tensor *t = order[i], *ta, *tb;
        if (!(n > 0 && gguf_lora_adapter_pair(&ad[0], t->name, &ta, &tb))) {
            if (gguf_writer_copy_tensor(w, base, t, &err)) {
                fprintf(stderr, TOOL ": error: %s: %s\n", out, err.msg);
                goto abort;
            }
            continue;
        }
        if (merge_tensor(&m, t, &err)) {
            fprintf(stderr, TOOL ": error: %s: tensor '%s': %s\n", base_path, t->name, err.msg);
            goto abort;
        }
        size_t bytes = (size_t)t->n_elements * sizeof(float);
        if (t->type != GGUF_DT_F32) { /* f16 in place, over the f32 */
            gguf_half *h = (gguf_half *)m.cur;
            for (int64_t e = 0; e < t->n_elements; e++)
                h[e] = gguf_f32_to_f16(m.cur[e]);
            bytes = (size_t)t->n_elements * sizeof *h;
        }
        if (gguf_writer_write_tensor(w, m.cur, bytes, &err)) {
            fprintf(stderr, TOOL ": error: %s: %s\n", out, err.msg);
            goto abort;
        }
    }
    if (gguf_writer_finish(w, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", out, err.msg);
        goto abort;
    }
    if (!quiet)
        printf("%s: %" PRIu64 " tensors merged with %d adapter%s, %" PRIu64 " copied\n", out,
               n_merged, n, n == 1 ? "" : "s", nt - n_merged);
    status = 0;
    goto done;
abort:
    gguf_writer_abort(w);
done:
    free(m.cur);
    free(m.a);
    free(m.b);
    free(m.at);
    free(order);
    gguf_writer_free(w);
    for (int k = 0; ad && k < n; k++)
        gguf_lora_adapter_close(&ad[k]);
    free(ad);
    gguf_close(base);
    return status;
}
