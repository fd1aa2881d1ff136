/*
 * check.h — `gguf-inspect --check`: is this file sound?
 *
 * Structure: whatever gguf_open() rejected (it validates the whole layout).
 * Data: every f32, f16, bf16 and f64 tensor is scanned for NaN and Inf,
 * decoding the bit patterns directly (exponent all ones: NaN when the
 * mantissa is non-zero, Inf otherwise). Quantized tensors are not decoded.
 * Not for: metadata semantics (a model that loads may still be wrong).
 */
#ifndef INSPECT_CHECK_H
#define INSPECT_CHECK_H

#include "emit.h"
#include <ggufkit/gguf.h>

/* Writes the check report for path. f is the opened file, or NULL when
 * gguf_open() failed with open_error. Returns the number of problems found
 * (0: the file is sound), or -1 on out of memory. */
int check_write(emit *e, const char *path, const gguf_file *f, const char *open_error);

#endif
