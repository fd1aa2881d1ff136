/*
 * diff.c — `gguf-inspect diff A B` (see diff.h).
 *
 * Sections: the two paths; metadata changes (added, removed, changed keys,
 * with both types and values and, for arrays of the same element type, the
 * first index where they differ); tensor changes (added, removed, type
 * and/or shape changed, or same type and shape with different data); counts
 * and a one-word result.
 */
#include "diff.h"

#include <stdlib.h>
#include <string.h>

#include "kv_value.h"
#include "report.h"
#include "stream.h"

typedef struct diff_counts {
    uint64_t keys_added, keys_removed, keys_changed;
    uint64_t tensors_added, tensors_removed, tensors_changed, tensors_data, tensors_same;
} diff_counts;

/* ------------------------------------------------------------------------
 * Metadata
 * ------------------------------------------------------------------------ */

static const emit_column kv_cols[] = {
    { "change", NULL, 0 },
    { "key", NULL, 0 },
    { "type_a", "TYPE A", 0 },
    { "value_a", "A", EMIT_COL_QUOTE },
    { "type_b", "TYPE B", 0 },
    { "value_b", "B", EMIT_COL_QUOTE },
    { "first_diff", "AT", EMIT_COL_RIGHT },
};

/* Index of the first element where two arrays of one element type differ;
 * false when that does not apply (scalars, different element types). */
static bool first_diff(const gguf_kv *a, const gguf_kv *b, uint64_t *at)
{
    if (!a || !b || a->type != GGUF_VT_ARR || b->type != GGUF_VT_ARR ||
        a->elem_type != b->elem_type)
        return false;
    uint64_t n = a->n < b->n ? a->n : b->n, i = 0;
    uint32_t size = gguf_vtype_size(a->elem_type);
    for (; i < n; i++) {
        if (a->elem_type == GGUF_VT_STR) {
            gguf_str x = a->strs[i], y = b->strs[i];
            if (x.len != y.len || memcmp(x.ptr, y.ptr, (size_t)x.len) != 0)
                break;
        } else if (memcmp((const uint8_t *)a->data + i * size,
                          (const uint8_t *)b->data + i * size, size) != 0) {
            break;
        }
    }
    *at = i;
    return true;
}

/* One metadata row; a or b is NULL for removed or added keys. Changed arrays
 * are shown from the first element that differs, unless --full. */
static int kv_row(emit *e, const char *change, const gguf_kv *a, const gguf_kv *b, bool full)
{
    uint64_t max = full ? UINT64_MAX : KV_HEAD_ITEMS, at = 0;
    bool has_at = first_diff(a, b, &at);
    uint64_t from = full ? 0 : at;
    emit_value va = ev_absent(), vb = ev_absent(), *ia = NULL, *ib = NULL;
    char ta[24], tb[24];
    int rc = -1;
    if ((a && kv_value(a, from, max, &va, &ia)) || (b && kv_value(b, from, max, &vb, &ib)))
        goto done;
    const gguf_kv *any = a ? a : b;
    emit_value row[] = {
        ev_str(change), ev_strn(any->key, (size_t)any->key_len),
        a ? ev_str(kv_type_label(a, ta)) : ev_absent(), va,
        b ? ev_str(kv_type_label(b, tb)) : ev_absent(), vb,
        has_at ? ev_uint(at) : ev_absent(),
    };
    emit_row(e, row);
    rc = 0;
done:
    free(ia);
    free(ib);
    return rc;
}

/* The GGUF version is not a key but is part of what a file says. */
static void version_row(emit *e, const gguf_file *a, const gguf_file *b, diff_counts *n)
{
    if (gguf_file_version(a) == gguf_file_version(b))
        return;
    emit_value row[] = {
        ev_str("changed"), ev_str("(GGUF version)"),
        ev_str("u32"), ev_uint(gguf_file_version(a)), ev_str("u32"), ev_uint(gguf_file_version(b)),
        ev_absent(),
    };
    emit_row(e, row);
    n->keys_changed++;
}

static int diff_metadata(emit *e, const gguf_file *a, const gguf_file *b, bool full,
                         diff_counts *n)
{
    emit_table_begin(e, "metadata", "metadata changes", kv_cols, 7, 0);
    version_row(e, a, b, n);
    for (uint64_t i = 0; i < gguf_n_kv(a); i++) {
        const gguf_kv *ka = gguf_kv_at(a, i), *kb = gguf_lookup_kv(b, ka->key);
        if (kb && kv_equal(ka, kb))
            continue;
        if (kv_row(e, kb ? "changed" : "removed", ka, kb, full))
            return -1;
        if (kb)
            n->keys_changed++;
        else
            n->keys_removed++;
    }
    for (uint64_t i = 0; i < gguf_n_kv(b); i++) {
        const gguf_kv *kb = gguf_kv_at(b, i);
        if (gguf_lookup_kv(a, kb->key))
            continue;
        if (kv_row(e, "added", NULL, kb, full))
            return -1;
        n->keys_added++;
    }
    emit_table_end(e);
    return 0;
}

/* ------------------------------------------------------------------------
 * Tensors
 * ------------------------------------------------------------------------ */

static const emit_column tensor_cols[] = {
    { "change", NULL, 0 },
    { "name", NULL, 0 },
    { "type_a", "TYPE A", 0 },
    { "shape_a", "SHAPE A", 0 },
    { "type_b", "TYPE B", 0 },
    { "shape_b", "SHAPE B", 0 },
};

static bool same_shape(const gguf_tensor *x, const gguf_tensor *y)
{
    if (x->n_dims != y->n_dims)
        return false;
    for (uint32_t d = 0; d < x->n_dims && d < GGUF_MAX_DIMS; d++)
        if (x->ne[d] != y->ne[d])
            return false;
    return true;
}

/* Whether x (of file a) and y (of b) hold the same bytes: read side by side
 * in released pieces (stream.h), so memory stays bounded however large the
 * tensors; stops at the first piece that differs. */
static bool same_data(const gguf_file *a, const gguf_tensor *x, const gguf_file *b,
                      const gguf_tensor *y)
{
    if (x->nbytes != y->nbytes)
        return false;
    stream sa, sb;
    const uint8_t *pa, *pb;
    size_t len;
    bool same = true;
    stream_begin(&sa, a, x->data, x->nbytes);
    stream_begin(&sb, b, y->data, y->nbytes);
    while (same && (len = stream_next(&sa, &pa)) > 0) {
        stream_next(&sb, &pb); /* same size: same pieces */
        same = memcmp(pa, pb, len) == 0;
    }
    stream_end(&sa);
    stream_end(&sb);
    return same;
}

/* What changed between two tensors of the same name, or NULL for nothing. */
static const char *tensor_change(const gguf_file *a, const gguf_tensor *x, const gguf_file *b,
                                 const gguf_tensor *y, diff_counts *n)
{
    bool type = x->type != y->type, shape = !same_shape(x, y);
    if (type || shape) {
        n->tensors_changed++;
        return type && shape ? "type+shape" : type ? "type" : "shape";
    }
    if (same_data(a, x, b, y)) {
        n->tensors_same++;
        return NULL;
    }
    n->tensors_data++;
    return "data";
}

static void tensor_row(emit *e, const char *change, const gguf_tensor *x, const gguf_tensor *y)
{
    emit_value sx[GGUF_MAX_DIMS], sy[GGUF_MAX_DIMS];
    const gguf_tensor *any = x ? x : y;
    emit_value row[] = {
        ev_str(change), ev_str(any->name),
        x ? ev_str(gguf_dtype_name(x->type)) : ev_absent(),
        x ? report_tensor_shape(x, sx) : ev_absent(),
        y ? ev_str(gguf_dtype_name(y->type)) : ev_absent(),
        y ? report_tensor_shape(y, sy) : ev_absent(),
    };
    emit_row(e, row);
}

static void diff_tensors(emit *e, const gguf_file *a, const gguf_file *b, diff_counts *n)
{
    emit_table_begin(e, "tensors", "tensor changes", tensor_cols, 6, 0);
    for (uint64_t i = 0; i < gguf_n_tensors(a); i++) {
        const gguf_tensor *x = gguf_tensor_at(a, i), *y = gguf_lookup_tensor(b, x->name);
        const char *change = y ? tensor_change(a, x, b, y, n) : "removed";
        if (!y)
            n->tensors_removed++;
        if (change)
            tensor_row(e, change, x, y);
    }
    for (uint64_t i = 0; i < gguf_n_tensors(b); i++) {
        const gguf_tensor *y = gguf_tensor_at(b, i);
        if (gguf_lookup_tensor(a, y->name))
            continue;
        tensor_row(e, "added", NULL, y);
        n->tensors_added++;
    }
    emit_table_end(e);
}

/* ------------------------------------------------------------------------
 * Whole diff
 * ------------------------------------------------------------------------ */

static bool counts_zero(const diff_counts *n)
{
    return !(n->keys_added || n->keys_removed || n->keys_changed || n->tensors_added ||
             n->tensors_removed || n->tensors_changed || n->tensors_data);
}

static void totals(emit *e, const diff_counts *n, const diff_opts *o)
{
    emit_map_begin(e, NULL, NULL, 0);
    if (o->metadata) {
        emit_field(e, "keys_added", "keys added", ev_uint(n->keys_added));
        emit_field(e, "keys_removed", "keys removed", ev_uint(n->keys_removed));
        emit_field(e, "keys_changed", "keys changed", ev_uint(n->keys_changed));
    }
    if (o->tensors) {
        emit_field(e, "tensors_added", "tensors added", ev_uint(n->tensors_added));
        emit_field(e, "tensors_removed", "tensors removed", ev_uint(n->tensors_removed));
        emit_field(e, "tensors_changed", "tensors changed (type/shape)",
                   ev_uint(n->tensors_changed));
        emit_field(e, "tensors_data_differ", "tensors with different data",
                   ev_uint(n->tensors_data));
        emit_field(e, "tensors_identical", "tensors identical", ev_uint(n->tensors_same));
    }
    emit_field(e, "result", NULL, ev_str(counts_zero(n) ? "identical" : "different"));
    emit_map_end(e);
}

int diff_write(emit *e, const gguf_file *a, const char *path_a,
               const gguf_file *b, const char *path_b, const diff_opts *o)
{
    diff_counts n;
    memset(&n, 0, sizeof n);
    emit_map_begin(e, NULL, NULL, 0);
    emit_field(e, "a", NULL, ev_str(path_a));
    emit_field(e, "b", NULL, ev_str(path_b));
    emit_map_end(e);
    if (o->metadata && diff_metadata(e, a, b, o->full, &n))
        return -1;
    if (o->tensors)
        diff_tensors(e, a, b, &n);
    totals(e, &n, o);
    return counts_zero(&n) ? 0 : 1;
}
