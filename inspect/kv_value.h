/*
 * kv_value.h — GGUF metadata values as emitter values, for the metadata
 * table and for diff.
 *
 * Values point into the open file's mapping (strings) or into an items array
 * that the caller frees; nothing is copied. Not for: deciding what a report
 * shows (report.c, diff.c).
 */
#ifndef INSPECT_KV_VALUE_H
#define INSPECT_KV_VALUE_H

#include "emit.h"
#include <ggufkit/gguf.h>

/* How many elements of an array a report shows unless --full is given. */
#define KV_HEAD_ITEMS 8

/* The value type as reports show it: "u32", "str", "arr[str]". */
const char *kv_type_label(const gguf_kv *kv, char buf[24]);

/* Element i (< kv->n) of a scalar (i = 0) or array. */
emit_value kv_elem_value(const gguf_kv *kv, uint64_t i);

/* The whole value: a scalar, or a list of at most max_items elements of an
 * array from element `first` on (with the array's length as the list's
 * total). *items receives the array the list points to, for the caller to
 * free (NULL for scalars). Returns 0, or -1 on out of memory. */
int kv_value(const gguf_kv *kv, uint64_t first, uint64_t max_items, emit_value *v,
             emit_value **items);

/* True when two kvs hold the same type and the same value bytes. */
bool kv_equal(const gguf_kv *a, const gguf_kv *b);

#endif
