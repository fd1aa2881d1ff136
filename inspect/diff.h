/*
 * diff.h — `gguf-inspect diff A B`: what differs between two GGUF files.
 *
 * Compares content, not layout: metadata keys by name (type and value bytes),
 * tensors by name (type, shape, and for tensors of the same type and shape
 * whether their data bytes are identical). Key and tensor order, data offsets
 * and alignment padding are not compared. Not for: numeric closeness of
 * different types (that needs the codecs; gguf-run measures model quality).
 */
#ifndef INSPECT_DIFF_H
#define INSPECT_DIFF_H

#include <stdbool.h>

#include "emit.h"
#include <ggufkit/gguf.h>

typedef struct diff_opts {
    bool full;     /* whole arrays in changed values */
    bool metadata; /* compare metadata */
    bool tensors;  /* compare tensors */
} diff_opts;

/* Writes the differences between a and b. Returns 0 when they are the same,
 * 1 when they differ, -1 on out of memory. */
int diff_write(emit *e, const gguf_file *a, const char *path_a,
               const gguf_file *b, const char *path_b, const diff_opts *o);

#endif
