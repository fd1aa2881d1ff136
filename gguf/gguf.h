/*
 * gguf.h — reading GGUF files: open, validate, look up keys and tensors.
 *
 * A GGUF file (v2 or v3, little-endian) is laid out as:
 *
 *   header       "GGUF" magic, u32 version, u64 tensor count, u64 kv count
 *   metadata     kv count × { gguf string key, u32 value type, value }
 *                  a gguf string is u64 length + bytes (no terminator);
 *                  an array is u32 element type, u64 count, elements
 *   tensor infos tensor count × { gguf string name, u32 n_dims,
 *                  u64 ne[n_dims], u32 ggml type, u64 offset }
 *   padding      to general.alignment (u32, default 32)
 *   data         tensor data; each tensor's offset is relative to the start
 *                  of this section and a multiple of the alignment
 *
 * gguf_open() maps the file read-only and validates all of it before
 * returning: every count and length is bounded by the bytes left in the file
 * before anything is allocated, and every size computation is
 * overflow-checked. After a successful open nothing in the file can make a
 * later call read out of bounds. Keys, tensor names and string values are
 * looked up in O(1); numeric arrays and tensor data are returned as pointers
 * into the mapping (no copy; they may be unaligned — use the element
 * accessors or memcpy).
 *
 * Split models (NAME-00001-of-0000N.gguf) open as one model: the metadata is
 * the first shard's, the tensor list is every shard's in order.
 *
 * Not for: writing (writer.h) or decoding tensor data (the codecs).
 */
#ifndef GGUF_GGUF_H
#define GGUF_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "types.h"

#define GGUF_MAGIC             "GGUF"
#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_DIMS          4
#define GGUF_MAX_NAME          64    /* llama.cpp's GGML_MAX_NAME: names are < 64 bytes */
#define GGUF_MAX_KEY           65535 /* longest key we accept */

/* A string inside the mapping: not NUL-terminated. */
typedef struct gguf_str {
    const char *ptr;
    uint64_t    len;
} gguf_str;

/* One metadata key/value pair. All pointers stay valid until gguf_close(). */
typedef struct gguf_kv {
    const char     *key;       /* NUL-terminated copy of the key */
    uint64_t        key_len;
    uint32_t        type;      /* enum gguf_vtype; GGUF_VT_ARR for arrays */
    uint32_t        elem_type; /* element type of an array; == type for scalars */
    uint64_t        n;         /* element count; 1 for scalars */
    const void     *data;      /* value bytes in the mapping (numeric/bool); NULL for strings */
    const gguf_str *strs;      /* the n strings of a str value or str array */
    uint64_t        offset;    /* file offset where this kv record starts */
} gguf_kv;

/* One tensor. ne[] beyond n_dims are 1. */
typedef struct gguf_tensor {
    const char    *name;        /* NUL-terminated copy */
    uint32_t       n_dims;      /* as stored in the file (0..4) */
    int64_t        ne[GGUF_MAX_DIMS];
    uint32_t       type;        /* enum ggml_type_id, always valid */
    uint64_t       offset;      /* relative to its shard's data section */
    uint64_t       nbytes;
    int64_t        n_elements;
    const uint8_t *data;        /* in the mapping; nbytes long */
    uint32_t       shard;       /* 0 unless the model is split */
    uint64_t       info_offset; /* file offset of the tensor info record */
} gguf_tensor;

typedef struct gguf_file gguf_file;

/* Flags for gguf_open. */
enum {
    GGUF_OPEN_NO_SPLIT = 1 /* open just this file, even if it is a shard */
};

/* Opens and validates a GGUF file (and, for a first shard named
 * NAME-00001-of-0000N.gguf with split.* keys, all its shards). Returns NULL
 * with a message naming the problem and its byte offset in err. */
gguf_file *gguf_open(const char *path, unsigned flags, gguf_error *err);

/* Validates a GGUF image already in memory (the fuzzer's entry point). The
 * buffer must outlive the returned file. */
gguf_file *gguf_open_memory(const void *buf, size_t size, gguf_error *err);

/* Unmaps and frees everything; NULL is fine. */
void gguf_close(gguf_file *f);

/* Header facts. */
uint32_t gguf_version(const gguf_file *f);
uint32_t gguf_alignment(const gguf_file *f);
uint64_t gguf_file_size(const gguf_file *f);    /* sum over shards */
uint32_t gguf_n_shards(const gguf_file *f);
const char *gguf_shard_path(const gguf_file *f, uint32_t shard);
/* Start of a shard's data section (clamped to the file size: a file without
 * tensors may end before its padded header would). */
uint64_t gguf_data_offset(const gguf_file *f, uint32_t shard);
/* The whole data section of a shard (from the aligned start to end of file). */
const uint8_t *gguf_data_section(const gguf_file *f, uint32_t shard, uint64_t *size);

/* Metadata: in file order, and by key in O(1) (NULL when absent). */
uint64_t gguf_n_kv(const gguf_file *f);
const gguf_kv *gguf_kv_at(const gguf_file *f, uint64_t i);
const gguf_kv *gguf_find_kv(const gguf_file *f, const char *key);

/* Tensors: in file order (shard by shard), and by name in O(1). */
uint64_t gguf_n_tensors(const gguf_file *f);
const gguf_tensor *gguf_tensor_at(const gguf_file *f, uint64_t i);
const gguf_tensor *gguf_find_tensor(const gguf_file *f, const char *name);

/* Says t's data will not be read again soon: its pages leave the process's
 * resident memory (a later read maps them in again from the file). Lets a
 * tool that streams through a model keep its footprint to a few tensors.
 * Neighbouring bytes sharing a page are dropped too, which is harmless.
 * Only for a tensor of a file opened with gguf_open(): the tensors of a
 * gguf_open_memory() image live in the caller's memory, where dropping pages
 * zeroes them. gguf_release_range() checks this itself; prefer it. */
void gguf_tensor_release(const gguf_tensor *t);

/* Says the bytes [p, p + n) of f will not be read again soon: the pages they
 * lie on leave the process's resident memory (a later read maps them in
 * again from the file). For streaming through a tensor, a data section or a
 * long metadata array in pieces with bounded memory. Only f's own mappings
 * of its files are touched: the part of the range outside them, and every
 * byte of a file opened with gguf_open_memory (the caller's memory), is left
 * alone, so any pointer is safe to pass. Bytes sharing a page with the range
 * are dropped too, which is harmless for a file mapping. */
void gguf_release_range(const gguf_file *f, const void *p, uint64_t n);

/* Scalar getters on one kv: false when the kv is not exactly that type. */
bool gguf_kv_u8(const gguf_kv *kv, uint8_t *out);
bool gguf_kv_i8(const gguf_kv *kv, int8_t *out);
bool gguf_kv_u16(const gguf_kv *kv, uint16_t *out);
bool gguf_kv_i16(const gguf_kv *kv, int16_t *out);
bool gguf_kv_u32(const gguf_kv *kv, uint32_t *out);
bool gguf_kv_i32(const gguf_kv *kv, int32_t *out);
bool gguf_kv_u64(const gguf_kv *kv, uint64_t *out);
bool gguf_kv_i64(const gguf_kv *kv, int64_t *out);
bool gguf_kv_f32(const gguf_kv *kv, float *out);
bool gguf_kv_f64(const gguf_kv *kv, double *out);
bool gguf_kv_bool(const gguf_kv *kv, bool *out);
bool gguf_kv_str(const gguf_kv *kv, gguf_str *out);

/* Any integer scalar type (u8..i64), range-checked into int64. */
bool gguf_kv_int(const gguf_kv *kv, int64_t *out);

/* By-key getters: 0 on success; -1 with "missing key K" or "key K is i32,
 * expected u32" in err. */
int gguf_get_u32(const gguf_file *f, const char *key, uint32_t *out, gguf_error *err);
int gguf_get_i32(const gguf_file *f, const char *key, int32_t *out, gguf_error *err);
int gguf_get_u64(const gguf_file *f, const char *key, uint64_t *out, gguf_error *err);
int gguf_get_f32(const gguf_file *f, const char *key, float *out, gguf_error *err);
int gguf_get_bool(const gguf_file *f, const char *key, bool *out, gguf_error *err);
int gguf_get_str(const gguf_file *f, const char *key, gguf_str *out, gguf_error *err);

/* Arrays: the element bytes of a numeric array of element type elem (NULL
 * when kv is not such an array), count in *n. Elements may be unaligned. */
const void *gguf_kv_array(const gguf_kv *kv, uint32_t elem, uint64_t *n);

/* Element i of a numeric/bool array or scalar, converted to double (for
 * printing). i must be < kv->n. */
double gguf_kv_elem_as_double(const gguf_kv *kv, uint64_t i);

/* Element i of an integer array or scalar as int64 (u64 values above
 * INT64_MAX wrap; callers that care check elem_type). */
int64_t gguf_kv_elem_as_int(const gguf_kv *kv, uint64_t i);

/* True when the string s (len bytes) equals the NUL-terminated c. */
bool gguf_str_eq(gguf_str s, const char *c);

/* Split naming: if path ends in -NNNNN-of-MMMMM.gguf, stores the shard
 * number (1-based) and count and the prefix length, returns true. */
bool gguf_split_parse_name(const char *path, uint32_t *no, uint32_t *count, size_t *prefix_len);

/* Writes "PREFIX-%05u-of-%05u.gguf" into buf. Returns -1 if it does not fit. */
int gguf_split_name(char *buf, size_t size, const char *prefix, uint32_t no, uint32_t count);

#endif
