/*
 * report.h — gguf-inspect's default report: summary, tensor-type histogram,
 * metadata and tensor table.
 *
 * Reads only what gguf_open() already parsed (header, metadata, tensor
 * infos): no tensor data is touched, so it costs the same for a 100 MB and a
 * 100 GB file. Not for: anything that reads tensor data (check.c, hash.c).
 */
#ifndef INSPECT_REPORT_H
#define INSPECT_REPORT_H

#include <stdbool.h>

#include "emit.h"
#include <ggufkit/gguf.h>

typedef struct report_opts {
    bool full;     /* whole arrays instead of their first KV_HEAD_ITEMS elements */
    bool metadata; /* the metadata table */
    bool tensors;  /* the tensor table */
} report_opts;

/* Writes the report of f (opened from path). Returns 0, or -1 on out of
 * memory. */
int report_write(emit *e, const gguf_file *f, const char *path, const report_opts *o);

/* The tensor's shape ne[0..n_dims) as a list value; items must hold
 * GGUF_MAX_DIMS values. */
emit_value report_tensor_shape(const gguf_tensor *t, emit_value items[GGUF_MAX_DIMS]);

#endif
