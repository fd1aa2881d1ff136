/*
 * imatrix.h — importance matrices in llama-imatrix's file format.
 *
 * The file (llama.cpp c392e50, all little-endian):
 *   i32 n_entries
 *   n_entries × { i32 name_len, name bytes, i32 ncall, i32 nval, f32 values[nval] }
 *   optional: i32 chunks (last_call), i32 dataset_len, dataset bytes
 * values are sums of squared activations over ncall calls; the weights used
 * for quantization are values / ncall (as llama-quantize computes them).
 * Shared by gguf-quantize (reads) and gguf-run --imatrix (writes).
 */
#ifndef GGUF_IMATRIX_H
#define GGUF_IMATRIX_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct gguf_imatrix_entry {
    char    *name;    /* tensor name, e.g. "blk.0.attn_q.weight" */
    int32_t  ncall;
    int32_t  nval;
    float   *values;  /* raw sums, nval of them */
    float   *weights; /* values / ncall (values when ncall <= 0) */
} gguf_imatrix_entry;

typedef struct gguf_imatrix {
    int32_t             n;
    gguf_imatrix_entry *entries;
    int32_t             chunks;  /* 0 when the file has no trailer */
    char               *dataset; /* NULL when absent */
} gguf_imatrix;

/* Reads and validates a file (counts bounded by its size, nval >= 1, all
 * values finite, no duplicate names). 0, or -1 with err. */
int gguf_imatrix_load(const char *path, gguf_imatrix *im, gguf_error *err);

/* The same from a buffer (the fuzzer's entry point). */
int gguf_imatrix_parse(const void *data, size_t size, gguf_imatrix *im, gguf_error *err);

/* Weights of a tensor (n = nval), or NULL when the file has none for it. */
const float *gguf_imatrix_find(const gguf_imatrix *im, const char *name, int32_t *n);

/* Writes im (entries, chunks, dataset) atomically. 0, or -1 with err. */
int gguf_imatrix_save(const char *path, const gguf_imatrix *im, gguf_error *err);

void gguf_imatrix_free(gguf_imatrix *im);

#endif
