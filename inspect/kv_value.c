/*
 * kv_value.c — GGUF metadata values as emitter values (see kv_value.h).
 */
#include "kv_value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kv_type_label(const gguf_kv *kv, char buf[24])
{
    if (kv->type != GGUF_VT_ARR)
        return gguf_vtype_name(kv->type);
    snprintf(buf, 24, "arr[%s]", gguf_vtype_name(kv->elem_type));
    return buf;
}

emit_value kv_elem_value(const gguf_kv *kv, uint64_t i)
{
    const uint8_t *p = kv->data;
    switch (kv->elem_type) {
    case GGUF_VT_STR:
        return ev_strn(kv->strs[i].ptr, (size_t)kv->strs[i].len);
    case GGUF_VT_BOOL:
        return ev_bool(p[i] != 0);
    case GGUF_VT_F32: {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return ev_f32(f);
    }
    case GGUF_VT_F64:
        return ev_f64(gguf_kv_elem_as_double(kv, i));
    case GGUF_VT_U64: {
        uint64_t u;
        memcpy(&u, p + 8 * i, 8);
        return ev_uint(u);
    }
    case GGUF_VT_U8: case GGUF_VT_U16: case GGUF_VT_U32:
        return ev_uint((uint64_t)gguf_kv_elem_as_int(kv, i));
    default:
        return ev_int(gguf_kv_elem_as_int(kv, i));
    }
}

int kv_value(const gguf_kv *kv, uint64_t first, uint64_t max_items, emit_value *v,
             emit_value **items)
{
    *items = NULL;
    if (kv->type != GGUF_VT_ARR) {
        *v = kv_elem_value(kv, 0);
        return 0;
    }
    first = first < kv->n ? first : kv->n;
    uint64_t n = kv->n - first < max_items ? kv->n - first : max_items;
    if (n > 0) {
        if (n > SIZE_MAX / sizeof **items || !(*items = malloc((size_t)n * sizeof **items)))
            return -1;
        for (uint64_t i = 0; i < n; i++)
            (*items)[i] = kv_elem_value(kv, first + i);
    }
    *v = ev_list(*items, (size_t)n, kv->n);
    v->as.list.first = first;
    return 0;
}

bool kv_equal(const gguf_kv *a, const gguf_kv *b)
{
    if (a->type != b->type || a->elem_type != b->elem_type || a->n != b->n)
        return false;
    if (a->n == 0)
        return true;
    if (a->elem_type != GGUF_VT_STR)
        return memcmp(a->data, b->data, (size_t)a->n * gguf_vtype_size(a->elem_type)) == 0;
    for (uint64_t i = 0; i < a->n; i++)
        if (a->strs[i].len != b->strs[i].len ||
            memcmp(a->strs[i].ptr, b->strs[i].ptr, (size_t)a->strs[i].len) != 0)
            return false;
    return true;
}
