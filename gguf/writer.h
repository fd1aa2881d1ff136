/*
 * writer.h — writing GGUF files as a stream.
 *
 * Use: collect metadata (gguf_writer_set_* / gguf_writer_copy_kv) and tensor
 * descriptions (gguf_writer_add_tensor) in the order they should appear, call
 * gguf_writer_begin() to write the header, metadata and tensor infos, then
 * hand over each tensor's bytes in the same order with
 * gguf_writer_write_tensor(), possibly in several pieces per tensor. Padding
 * to general.alignment (default 32) is written after the header and after
 * every tensor, as llama.cpp does. gguf_writer_finish() fsyncs and renames
 * the temporary file(s) over the destination; on any failure, or with
 * gguf_writer_abort(), the temporary files are removed and the destination
 * is untouched.
 *
 * Splits: gguf_writer_set_split() makes begin() distribute tensors over
 * shards named PREFIX-00001-of-0000N.gguf (llama.cpp's gguf-split layout:
 * the first shard carries all metadata, every shard carries split.no,
 * split.count and split.tensors.count).
 *
 * Not for: reading (gguf.h), quantizing (the codecs).
 */
#ifndef GGUF_WRITER_H
#define GGUF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "gguf.h"

typedef struct gguf_writer gguf_writer;

/* A new, empty writer for GGUF version 3. NULL on out of memory. */
gguf_writer *gguf_writer_new(void);

/* Frees the writer; aborts (removes temporary files) if not finished. */
void gguf_writer_free(gguf_writer *w);

/* Sets the version written in the header (2 or 3; default 3). */
void gguf_writer_set_version(gguf_writer *w, uint32_t version);

/* Whether a file without tensors gets its header padded to the alignment
 * (ggml's writer does; gguf-py, and so llama.cpp's vocab files, do not; the
 * default is not to). Files with tensors are always padded. */
void gguf_writer_set_pad_empty(gguf_writer *w, bool pad);

/* Metadata setters. Setting an existing key replaces its value in place
 * (keeping its position); a new key is appended. Return 0, or -1 on an
 * invalid key (empty, too long) or out of memory. */
int gguf_writer_set_u8(gguf_writer *w, const char *key, uint8_t v);
int gguf_writer_set_i8(gguf_writer *w, const char *key, int8_t v);
int gguf_writer_set_u16(gguf_writer *w, const char *key, uint16_t v);
int gguf_writer_set_i16(gguf_writer *w, const char *key, int16_t v);
int gguf_writer_set_u32(gguf_writer *w, const char *key, uint32_t v);
int gguf_writer_set_i32(gguf_writer *w, const char *key, int32_t v);
int gguf_writer_set_u64(gguf_writer *w, const char *key, uint64_t v);
int gguf_writer_set_i64(gguf_writer *w, const char *key, int64_t v);
int gguf_writer_set_f32(gguf_writer *w, const char *key, float v);
int gguf_writer_set_f64(gguf_writer *w, const char *key, double v);
int gguf_writer_set_bool(gguf_writer *w, const char *key, bool v);
int gguf_writer_set_str(gguf_writer *w, const char *key, const char *v);
int gguf_writer_set_strn(gguf_writer *w, const char *key, const char *v, uint64_t len);

/* A numeric or bool array: n elements of type elem (little-endian bytes). */
int gguf_writer_set_array(gguf_writer *w, const char *key, uint32_t elem,
                          const void *data, uint64_t n);

/* A string array; lens may be NULL for NUL-terminated strings. */
int gguf_writer_set_str_array(gguf_writer *w, const char *key,
                              const char *const *strs, const uint64_t *lens, uint64_t n);

/* Copies a kv read from another file, value bytes exactly as stored. */
int gguf_writer_copy_kv(gguf_writer *w, const gguf_kv *kv);

/* Removes a key if present. */
void gguf_writer_remove_kv(gguf_writer *w, const char *key);

/* True when key is set. */
bool gguf_writer_has_kv(const gguf_writer *w, const char *key);

/* A key's value as set so far, for checks before begin() (e.g. the model
 * validation of modelcheck.h). */
typedef struct gguf_writer_value {
    uint32_t       type;      /* enum gguf_vtype; GGUF_VT_ARR for arrays */
    uint32_t       elem_type; /* element type of an array; == type for scalars */
    uint64_t       n;         /* element count; 1 for scalars */
    const uint8_t *bytes;     /* the value as it will be written: numeric and
                               * bool elements back to back (little-endian,
                               * maybe unaligned); strings as GGUF strings
                               * (u64 length, bytes) back to back */
    size_t         size;      /* bytes at `bytes` */
} gguf_writer_value;

/* Looks key up: true with its value in *out (valid until the key is set
 * again or removed, or the writer is freed), false when it is not set. */
bool gguf_writer_find_value(const gguf_writer *w, const char *key, gguf_writer_value *out);

/* A tensor as declared by gguf_writer_add_tensor(). */
typedef struct gguf_writer_tensor {
    const char *name;
    uint32_t    type;               /* enum ggml_type_id */
    uint32_t    n_dims;
    int64_t     ne[GGUF_MAX_DIMS];  /* 1 beyond n_dims */
} gguf_writer_tensor;

/* Tensor i (in declaration order) into *out; false when i >= the count. The
 * name stays valid until the writer is freed. */
bool gguf_writer_tensor_at(const gguf_writer *w, uint64_t i, gguf_writer_tensor *out);

/* Declares the next tensor: name (< 64 bytes, unique), type, n_dims (0..4)
 * dimensions ne[0..n_dims). Returns its index, or -1 with err set. */
int64_t gguf_writer_add_tensor(gguf_writer *w, const char *name, uint32_t type,
                               uint32_t n_dims, const int64_t *ne, gguf_error *err);

/* Number of declared tensors and the bytes of tensor i. */
uint64_t gguf_writer_n_tensors(const gguf_writer *w);
uint64_t gguf_writer_tensor_nbytes(const gguf_writer *w, uint64_t i);

/* Splitting: at most max_tensors tensors per shard (0 = no limit) and at most
 * max_bytes bytes per shard (0 = no limit; a shard always holds at least one
 * tensor). Must be called before begin(). */
void gguf_writer_set_split(gguf_writer *w, uint64_t max_tensors, uint64_t max_bytes);

/* Puts tensor i into shard `shard` (0-based) instead of splitting by size
 * or count; shards must be non-decreasing in tensor order without gaps. */
int gguf_writer_set_tensor_shard(gguf_writer *w, uint64_t i, uint32_t shard);

/* Number of shards begin() decided on (1 when not split). */
uint32_t gguf_writer_n_shards(const gguf_writer *w);

/* Opens the temporary output next to path and writes everything up to the
 * first tensor's data. With splits, path is the first shard's final name or
 * a prefix: "out.gguf" becomes out-00001-of-0000N.gguf. */
int gguf_writer_begin(gguf_writer *w, const char *path, gguf_error *err);

/* Appends bytes of tensor data; tensors must be completed in declaration
 * order, each exactly tensor_nbytes() long. */
int gguf_writer_write_tensor(gguf_writer *w, const void *data, size_t n, gguf_error *err);

/* Checks every tensor was written, pads and fsyncs, but renames nothing:
 * the complete output stays in its temporary files (gguf_writer_temp_path)
 * for the caller to read back and check before gguf_writer_finish() puts it
 * in place or gguf_writer_abort() drops it. */
int gguf_writer_complete(gguf_writer *w, gguf_error *err);

/* Temporary file of shard i while the writer is begun, else NULL. */
const char *gguf_writer_temp_path(const gguf_writer *w, uint32_t i);

/* Completes (as above, if not yet) and renames every shard into place. */
int gguf_writer_finish(gguf_writer *w, gguf_error *err);

/* Drops the output: removes the temporary files. */
void gguf_writer_abort(gguf_writer *w);

/* Final path of shard i (valid after begin()). */
const char *gguf_writer_shard_path(const gguf_writer *w, uint32_t i);

/* Writes a whole file at once from an opened one: same version, same kvs and
 * tensors in the same order. Used for round-trip tests and `--rewrite`. */
int gguf_rewrite(const gguf_file *in, const char *path, gguf_error *err);

#endif
