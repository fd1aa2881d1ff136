/*
 * report.c — gguf-inspect's default report (see report.h).
 *
 * Four sections, in this order: summary (header facts, architecture, name,
 * parameter count, bits per weight), tensor-type histogram, metadata (every
 * key, arrays abbreviated unless --full), tensors (index, name, type, shape,
 * elements, bytes, offset). Every number comes from the header.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kv_value.h"
#include <ggufkit/arch.h>

emit_value report_tensor_shape(const gguf_tensor *t, emit_value items[GGUF_MAX_DIMS])
{
    uint32_t n = t->n_dims <= GGUF_MAX_DIMS ? t->n_dims : GGUF_MAX_DIMS;
    for (uint32_t d = 0; d < n; d++)
        items[d] = ev_int(t->ne[d]);
    return ev_list(items, n, n);
}

/* A string-valued key, or null when it is missing or not a string. */
static emit_value str_key(const gguf_file *f, const char *key)
{
    gguf_str s;
    if (!gguf_kv_str(gguf_lookup_kv(f, key), &s))
        return ev_null();
    return ev_strn(s.ptr, (size_t)s.len);
}

/* ------------------------------------------------------------------------
 * Summary and histogram
 * ------------------------------------------------------------------------ */

typedef struct type_stats {
    uint64_t tensors, elements, bytes;
} type_stats;

static void summary(emit *e, const gguf_file *f, const char *path, const type_stats *all)
{
    emit_map_begin(e, "summary", NULL, 0);
    emit_field(e, "file", NULL, ev_str(path));
    emit_field(e, "version", "GGUF version", ev_uint(gguf_file_version(f)));
    emit_field(e, "alignment", NULL, ev_uint(gguf_alignment(f)));
    emit_field(e, "n_shards", "shards", ev_uint(gguf_n_shards(f)));
    emit_field(e, "n_kv", "metadata keys", ev_uint(gguf_n_kv(f)));
    emit_field(e, "n_tensors", "tensors", ev_uint(gguf_n_tensors(f)));
    emit_field(e, "file_size", "file size", ev_unit(ev_uint(gguf_file_size(f)), EU_BYTES));
    emit_field(e, "data_offset", "data offset", ev_uint(gguf_data_offset(f, 0)));
    emit_field(e, "architecture", NULL, str_key(f, GGUF_KEY_ARCHITECTURE));
    emit_field(e, "name", NULL, str_key(f, GGUF_KEY_NAME));
    emit_field(e, "n_params", "parameters", ev_unit(ev_uint(all->elements), EU_COUNT));
    emit_field(e, "tensor_bytes", "tensor data", ev_unit(ev_uint(all->bytes), EU_BYTES));
    /* bits per weight over all tensors, rounded so it reads the same in every
     * format; norms and other f32 vectors count, as in llama.cpp's BPW. */
    emit_value bpw = ev_null();
    if (all->elements > 0)
        bpw = ev_f64(round(8.0 * (double)all->bytes / (double)all->elements * 1e4) / 1e4);
    emit_field(e, "bits_per_weight", "bits per weight", bpw);
    /* the chat templates a runner can pick: "default" (tokenizer.chat_template)
     * and the named ones (tokenizer.chat_templates); only when there are any */
    const gguf_kv *names = gguf_lookup_kv(f, "tokenizer.chat_templates");
    bool deflt = gguf_lookup_kv(f, GGUF_KEY_CHAT_TEMPLATE) != NULL;
    uint64_t n_named = names && names->type == GGUF_VT_ARR && names->elem_type == GGUF_VT_STR
                           ? names->n : 0;
    if (deflt || n_named) {
        size_t cap = 16;
        for (uint64_t i = 0; i < n_named; i++)
            cap += (size_t)names->strs[i].len + 2;
        char *list = malloc(cap);
        if (list) {
            size_t o = 0;
            if (deflt)
                o += (size_t)snprintf(list, cap, "default");
            for (uint64_t i = 0; i < n_named; i++)
                o += (size_t)snprintf(list + o, cap - o, "%s%.*s", o ? ", " : "",
                                      (int)names->strs[i].len, names->strs[i].ptr);
            emit_field(e, "chat_templates", "chat templates", ev_strn(list, o));
            free(list);
        }
    }
    emit_map_end(e);
}

static void histogram(emit *e, const type_stats *by_type)
{
    static const emit_column cols[] = {
        { "type", NULL, 0 },
        { "tensors", NULL, EMIT_COL_RIGHT },
        { "elements", NULL, EMIT_COL_RIGHT },
        { "bytes", NULL, EMIT_COL_RIGHT },
    };
    emit_table_begin(e, "tensor_types", "tensor types", cols, 4, EMIT_KEYED);
    for (uint32_t t = 0; t < GGUF_DT_COUNT; t++) {
        if (!by_type[t].tensors)
            continue;
        emit_value row[] = {
            ev_str(gguf_dtype_name(t)), ev_uint(by_type[t].tensors),
            ev_uint(by_type[t].elements), ev_uint(by_type[t].bytes),
        };
        emit_row(e, row);
    }
    emit_table_end(e);
}

/* ------------------------------------------------------------------------
 * Metadata and tensors
 * ------------------------------------------------------------------------ */

static int metadata(emit *e, const gguf_file *f, bool full)
{
    static const emit_column cols[] = {
        { "key", NULL, 0 },
        { "type", NULL, 0 },
        { "count", "N", EMIT_COL_RIGHT },
        { "value", NULL, EMIT_COL_QUOTE },
    };
    char title[64];
    snprintf(title, sizeof title, "metadata (%llu keys)", (unsigned long long)gguf_n_kv(f));
    emit_table_begin(e, "metadata", title, cols, 4, EMIT_KEYED);
    for (uint64_t i = 0; i < gguf_n_kv(f); i++) {
        const gguf_kv *kv = gguf_kv_at(f, i);
        char tbuf[24];
        emit_value value, *items;
        if (kv_value(kv, 0, full ? UINT64_MAX : KV_HEAD_ITEMS, &value, &items))
            return -1;
        emit_value row[] = {
            ev_strn(kv->key, (size_t)kv->key_len), ev_str(kv_type_label(kv, tbuf)),
            kv->type == GGUF_VT_ARR ? ev_uint(kv->n) : ev_absent(), value,
        };
        emit_row(e, row);
        free(items);
    }
    emit_table_end(e);
    return 0;
}

static void tensors(emit *e, const gguf_file *f)
{
    static const emit_column cols[] = {
        { "index", "#", EMIT_COL_RIGHT },
        { "name", NULL, 0 },
        { "type", NULL, 0 },
        { "shape", NULL, 0 },
        { "elements", NULL, EMIT_COL_RIGHT },
        { "bytes", NULL, EMIT_COL_RIGHT },
        { "offset", NULL, EMIT_COL_RIGHT },
        { "shard", NULL, EMIT_COL_RIGHT },
    };
    bool split = gguf_n_shards(f) > 1;
    char title[64];
    snprintf(title, sizeof title, "tensors (%llu)", (unsigned long long)gguf_n_tensors(f));
    emit_table_begin(e, "tensors", title, cols, split ? 8 : 7, 0);
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        emit_value dims[GGUF_MAX_DIMS];
        emit_value row[] = {
            ev_uint(i), ev_str(t->name), ev_str(gguf_dtype_name(t->type)),
            report_tensor_shape(t, dims), ev_int(t->n_elements), ev_uint(t->nbytes),
            ev_uint(t->offset), ev_uint(t->shard + 1u),
        };
        emit_row(e, row);
    }
    emit_table_end(e);
}

int report_write(emit *e, const gguf_file *f, const char *path, const report_opts *o)
{
    type_stats by_type[GGUF_DT_COUNT] = { { 0, 0, 0 } }, all = { 0, 0, 0 };
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        type_stats *s = &by_type[t->type];
        s->tensors++, s->elements += (uint64_t)t->n_elements, s->bytes += t->nbytes;
        all.tensors++, all.elements += (uint64_t)t->n_elements, all.bytes += t->nbytes;
    }
    summary(e, f, path, &all);
    histogram(e, by_type);
    if (o->metadata && metadata(e, f, o->full))
        return -1;
    if (o->tensors)
        tensors(e, f);
    return 0;
}
