/*
 * hash.c — `gguf-inspect --hash` (see hash.h).
 *
 * Layout: a table "tensors" (sha256, name); a table "arrays" (sha256, key)
 * with the hash of each metadata array's element bytes exactly as stored
 * (strings as u64 length + bytes: the fixtures' manifests hash them so);
 * then the data section's hash: one field "data_sha256" for a single file,
 * or a table of one row per shard for a split model (each shard has its
 * own data section). Tensor data is read once, in one pass over each data
 * section that feeds both kinds of hash, with bounded memory (stream.h).
 */
#include "hash.h"

#include <stdio.h>
#include <stdlib.h>

#include <ggufkit/gguf.h>
#include "stream.h"

/* ------------------------------------------------------------------------
 * Tensor and data-section hashes: one pass over each shard's data section
 * ------------------------------------------------------------------------ */

typedef struct digest32 {
    uint8_t b[32];
} digest32;

typedef struct data_hashes {
    digest32 *tensor;  /* by tensor index */
    digest32 *section; /* by shard */
} data_hashes;

static int cmp_offset(const void *a, const void *b)
{
    const gguf_tensor *x = *(const gguf_tensor *const *)a, *y = *(const gguf_tensor *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Reads shard s's data section once, in released pieces (stream.h), feeding
 * each piece to the section's hash and to the hashes of the tensors it
 * overlaps: every byte is read once, and memory stays one piece however
 * large the tensors are. order[0..n) are the shard's tensors by offset;
 * ctx[] is by tensor index (order's pointers minus base). */
static void hash_section(const gguf_file *f, uint32_t s, const gguf_tensor *const *order,
                         uint64_t n, const gguf_tensor *base, gguf_sha256_ctx *ctx, digest32 *out)
{
    uint64_t size = 0;
    const uint8_t *sec = gguf_data_section(f, s, &size), *p;
    gguf_sha256_ctx all;
    stream st;
    size_t len;
    uint64_t k = 0; /* first tensor not yet wholly hashed */
    gguf_sha256_init(&all);
    stream_begin(&st, f, sec, size);
    while ((len = stream_next(&st, &p)) > 0) {
        uint64_t c0 = st.pos, c1 = c0 + len;
        gguf_sha256_update(&all, p, len);
        for (uint64_t j = k; j < n && order[j]->offset < c1; j++) {
            const gguf_tensor *t = order[j];
            uint64_t lo = t->offset > c0 ? t->offset : c0;
            uint64_t hi = t->offset + t->nbytes < c1 ? t->offset + t->nbytes : c1;
            if (hi > lo)
                gguf_sha256_update(&ctx[t - base], p + (lo - c0), (size_t)(hi - lo));
        }
        while (k < n && order[k]->offset + order[k]->nbytes <= c1)
            k++;
    }
    gguf_sha256_final(&all, out->b);
}

/* Every tensor's and every shard's hash, or -1 on out of memory. */
static int hash_data(const gguf_file *f, data_hashes *h)
{
    uint64_t nt = gguf_n_tensors(f);
    uint32_t ns = gguf_n_shards(f);
    gguf_sha256_ctx *ctx = calloc(nt ? nt : 1, sizeof *ctx);
    const gguf_tensor **order = calloc(nt ? nt : 1, sizeof *order);
    h->tensor = calloc(nt ? nt : 1, sizeof *h->tensor);
    h->section = calloc(ns, sizeof *h->section);
    int rc = -1;
    if (!ctx || !order || !h->tensor || !h->section)
        goto done;
    const gguf_tensor *base = gguf_tensor_at(f, 0);
    for (uint64_t i = 0; i < nt; i++)
        gguf_sha256_init(&ctx[i]);
    /* tensors come shard by shard (gguf.h): each shard's are one run */
    uint64_t i = 0;
    for (uint32_t s = 0; s < ns; s++) {
        uint64_t first = i;
        while (i < nt && gguf_tensor_at(f, i)->shard == s)
            order[i - first] = gguf_tensor_at(f, i), i++;
        qsort(order, (size_t)(i - first), sizeof *order, cmp_offset);
        hash_section(f, s, order, i - first, base, ctx, &h->section[s]);
    }
    for (uint64_t j = 0; j < nt; j++)
        gguf_sha256_final(&ctx[j], h->tensor[j].b);
    rc = 0;
done:
    free(ctx);
    free(order);
    return rc;
}

static void tensors(emit *e, const gguf_file *f, const data_hashes *h)
{
    static const emit_column cols[] = {
        { "sha256", NULL, 0 },
        { "name", NULL, 0 },
    };
    emit_table_begin(e, "tensors", NULL, cols, 2, EMIT_BARE);
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        char hex[65];
        gguf_sha256_to_hex(h->tensor[i].b, hex);
        emit_value row[] = { ev_strn(hex, 64), ev_str(gguf_tensor_at(f, i)->name) };
        emit_row(e, row);
    }
    emit_table_end(e);
}

static void arrays(emit *e, const gguf_file *f)
{
    static const emit_column cols[] = {
        { "sha256", NULL, 0 },
        { "key", NULL, 0 },
    };
    emit_table_begin(e, "arrays", NULL, cols, 2, EMIT_BARE);
    for (uint64_t i = 0; i < gguf_n_kv(f); i++) {
        const gguf_kv *kv = gguf_kv_at(f, i);
        if (kv->type != GGUF_VT_ARR)
            continue;
        gguf_sha256_ctx c;
        uint8_t digest[32];
        char hex[65];
        gguf_sha256_init(&c);
        if (kv->elem_type == GGUF_VT_STR) {
            for (uint64_t j = 0; j < kv->n; j++) {
                uint8_t len[8];
                for (int b = 0; b < 8; b++)
                    len[b] = (uint8_t)(kv->strs[j].len >> (8 * b));
                gguf_sha256_update(&c, len, 8);
                gguf_sha256_update(&c, kv->strs[j].ptr, (size_t)kv->strs[j].len);
                if ((j + 1) % STREAM_ELEMS == 0)
                    stream_release_elems(f, kv, j + 1 - STREAM_ELEMS, j + 1);
            }
        } else if (kv->n > 0 && gguf_vtype_size(kv->elem_type) > 0) {
            /* nested arrays have no fixed element size: hashed as empty */
            stream st;
            const uint8_t *p;
            size_t len;
            stream_begin(&st, f, kv->data, kv->n * gguf_vtype_size(kv->elem_type));
            while ((len = stream_next(&st, &p)) > 0)
                gguf_sha256_update(&c, p, len);
        }
        gguf_sha256_final(&c, digest);
        gguf_sha256_to_hex(digest, hex);
        emit_value row[] = { ev_strn(hex, 64), ev_str(kv->key) };
        emit_row(e, row);
    }
    emit_table_end(e);
}

static void data_sections(emit *e, const gguf_file *f, const data_hashes *h)
{
    uint32_t n = gguf_n_shards(f);
    char hex[65], label[64];
    if (n == 1) {
        gguf_sha256_to_hex(h->section[0].b, hex);
        emit_map_begin(e, NULL, NULL, EMIT_BARE);
        emit_field(e, "data_sha256", "(data section)", ev_strn(hex, 64));
        emit_map_end(e);
        return;
    }
    static const emit_column cols[] = {
        { "sha256", NULL, 0 },
        { "section", NULL, 0 },
        { "path", NULL, 0 },
    };
    emit_table_begin(e, "data_sha256", NULL, cols, 3, EMIT_BARE);
    for (uint32_t s = 0; s < n; s++) {
        gguf_sha256_to_hex(h->section[s].b, hex);
        snprintf(label, sizeof label, "(data section, shard %u of %u)", s + 1, n);
        emit_value row[] = { ev_strn(hex, 64), ev_str(label), ev_str(gguf_shard_path(f, s)) };
        emit_row(e, row);
    }
    emit_table_end(e);
}

int hash_write(emit *e, const gguf_file *f)
{
    data_hashes h = { NULL, NULL };
    int rc = hash_data(f, &h);
    if (rc == 0) {
        tensors(e, f, &h);
        arrays(e, f);
        data_sections(e, f, &h);
    }
    free(h.tensor);
    free(h.section);
    return rc;
}
