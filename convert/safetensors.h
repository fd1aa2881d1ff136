/*
 * safetensors.h — .safetensors files, mapped and validated.
 *
 * Layout: u64 little-endian header length N, N bytes of JSON
 * {"NAME": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
 *  "__metadata__": {...}}, then the data, offsets relative to its start.
 * Every tensor's range must lie inside the file and hold exactly
 * product(shape) elements of its dtype. Tensors are listed in header order
 * (the order llama.cpp's converter meets them in).
 */
#ifndef CONVERT_SAFETENSORS_H
#define CONVERT_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggufkit/gguf.h>

#define ST_MAX_DIMS 8

typedef struct st_tensor {
    char          *name;
    char           dtype[8];  /* "F32", "F16", "BF16", ... as written */
    int            n_dims;
    int64_t        shape[ST_MAX_DIMS]; /* outermost first, as written */
    const uint8_t *data;
    uint64_t       nbytes;
    /* data lies inside the file mapping of st_open()/torch_open(), so its
     * pages may be dropped after use (they read back from the file); false
     * for bytes in memory (st_parse over a buffer, a deflated torch entry
     * inflated into the heap), which must never be madvise()d away */
    bool           mapped;
} st_tensor;

typedef struct st_file {
    st_tensor *tensors;
    size_t     n;
    void      *map;
    size_t     map_size;
    void      *owner;                  /* other readers' state (torch.c) */
    void     (*free_owner)(void *owner);
    /* re-checks bytes the owner holds in memory (torch.c: CRCs of inflated
     * entries); NULL when there is nothing to check */
    int      (*verify_owner)(const void *owner, gguf_error *err);
} st_file;

/* Maps and validates a file. 0, or -1 with err (the caller names the file). */
int st_open(const char *path, st_file *f, gguf_error *err);

/* The same over bytes in memory (not copied: they must outlive f). */
int st_parse(const uint8_t *data, size_t size, st_file *f, gguf_error *err);

void st_close(st_file *f);

/* 0 when the bytes f holds in memory are unchanged since they were read
 * (see verify_owner), or -1 with err. */
int st_verify(const st_file *f, gguf_error *err);

/* Drops the pages of [data, data + bytes) of a file mapping from memory
 * (a later read maps them in again from the file): for bytes read and not
 * needed again soon. Never for heap bytes (madvise(MADV_DONTNEED) zeroes
 * live memory). */
void st_drop_pages(const void *data, uint64_t bytes);

/* Marks the tensors whose bytes lie inside [map, map + size) as mapped. */
void st_mark_mapped(st_file *f, const void *map, size_t size);

/* Bytes per element of a dtype name, 0 when unknown. */
int st_dtype_size(const char *dtype);

#endif
