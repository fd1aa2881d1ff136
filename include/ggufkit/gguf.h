/*
 * <ggufkit/gguf.h> — libgguf: read, validate and write GGUF files.
 *
 * The core of the library: the version, the error record, the table of
 * tensor and value types, the reader (gguf_open and the key and tensor
 * lookups), the streaming writer and SHA-256. The block codecs and
 * importance matrices are in <ggufkit/quants.h>, the tokenizer in
 * <ggufkit/vocab.h>, the architecture registry and model rules in
 * <ggufkit/arch.h>. docs/libgguf.md is the guide, with an example program.
 *
 * Every exported name starts with gguf_ (macros GGUF_); the library never
 * prints, exits or aborts on bad input, and every fallible call reports
 * through a caller-owned gguf_error. Compiles as C11 and as C++.
 */
#ifndef GGUFKIT_GGUF_H
#define GGUFKIT_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* GGUF_API marks what the shared library exports (it is built with
 * -fvisibility=hidden: everything else stays inside it). */
#if defined(_WIN32)
#  define GGUF_API
#elif defined(__GNUC__) || defined(__clang__)
#  define GGUF_API __attribute__((visibility("default")))
#else
#  define GGUF_API
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define GGUF_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#  define GGUF_PRINTF(f, a)
#endif

#ifdef __cplusplus
#  define GGUF_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#  define GGUF_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

/* The library's version (also in libgguf.pc). */
#define GGUF_LIB_VERSION_MAJOR 1
#define GGUF_LIB_VERSION_MINOR 4
#define GGUF_LIB_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * the error record every libgguf call fills instead of printing.
 *
 * Library functions never print, exit or abort on bad input: they return a
 * status and write one human-readable sentence into a caller-owned
 * gguf_error. Tools prefix it with "gguf-TOOL: error: FILE: ".
 */
#define GGUF_ERROR_MAX 512

/* What kind of failure an error is (gguf_error.code). */
enum gguf_errcode {
    GGUF_ERR_NONE        = 0, /* no error */
    GGUF_ERR_IO          = 1, /* the system refused: open, read, write, map, rename */
    GGUF_ERR_FORMAT      = 2, /* the input breaks the format or a model rule */
    GGUF_ERR_UNSUPPORTED = 3, /* valid, but something this library does not handle */
    GGUF_ERR_LIMIT       = 4, /* beyond a size or count limit */
    GGUF_ERR_NOMEM       = 5, /* out of memory */
    GGUF_ERR_ARG         = 6  /* the caller passed something invalid */
};

/* One sentence naming the problem (with the byte offset where the file is
 * at fault) and its kind. Initialise with { "" } or zeroes. */
typedef struct gguf_error {
    char msg[GGUF_ERROR_MAX];
    int  code; /* enum gguf_errcode */
} gguf_error;

/* The library's version, "MAJOR.MINOR.PATCH". */
GGUF_API const char *gguf_version(void);

/* Name of an error code: "io", "format", "unsupported", "limit", "nomem",
 * "arg" ("none" for 0, "unknown" otherwise). */
GGUF_API const char *gguf_errcode_name(int code);

/* Formats a message into err (when err is not NULL) with code
 * GGUF_ERR_FORMAT. Always returns -1 so that callers can write
 * `return gguf_error_set(err, ...);`. */
GGUF_API int gguf_error_set(gguf_error *err, const char *fmt, ...) GGUF_PRINTF(2, 3);

/* The same with an explicit code. */
GGUF_API int gguf_error_setc(gguf_error *err, int code, const char *fmt, ...) GGUF_PRINTF(3, 4);

/* A string for a message: at most 40 bytes of s, control bytes, quotes and
 * backslashes as \xNN, NUL-terminated in buf. Returns buf. */
GGUF_API const char *gguf_error_preview(const char *s, size_t len, char buf[48]);

/* Prefixes the message already in err with more context ("shard 2: ..."). */
GGUF_API void gguf_error_prefix(gguf_error *err, const char *fmt, ...) GGUF_PRINTF(2, 3);

/* ---------------------------------------------------------------------------
 * the table of ggml tensor types (ids 0..41, as ggml e21cdc11) and GGUF value types.
 *
 * Every size computation in ggufkit goes through this table. Ids that ggml
 * removed (4, 5, 31..33, 36..38) are present but marked invalid, so a file
 * that uses them is rejected by name rather than as "unknown". Not for:
 * encoding or decoding blocks (see the codecs).
 */
/* ggml tensor type ids as stored in GGUF tensor infos. */
enum gguf_dtype {
    GGUF_DT_F32 = 0, GGUF_DT_F16 = 1, GGUF_DT_Q4_0 = 2, GGUF_DT_Q4_1 = 3,
    GGUF_DT_Q5_0 = 6, GGUF_DT_Q5_1 = 7, GGUF_DT_Q8_0 = 8, GGUF_DT_Q8_1 = 9,
    GGUF_DT_Q2_K = 10, GGUF_DT_Q3_K = 11, GGUF_DT_Q4_K = 12, GGUF_DT_Q5_K = 13,
    GGUF_DT_Q6_K = 14, GGUF_DT_Q8_K = 15, GGUF_DT_IQ2_XXS = 16,
    GGUF_DT_IQ2_XS = 17, GGUF_DT_IQ3_XXS = 18, GGUF_DT_IQ1_S = 19,
    GGUF_DT_IQ4_NL = 20, GGUF_DT_IQ3_S = 21, GGUF_DT_IQ2_S = 22,
    GGUF_DT_IQ4_XS = 23, GGUF_DT_I8 = 24, GGUF_DT_I16 = 25, GGUF_DT_I32 = 26,
    GGUF_DT_I64 = 27, GGUF_DT_F64 = 28, GGUF_DT_IQ1_M = 29, GGUF_DT_BF16 = 30,
    GGUF_DT_TQ1_0 = 34, GGUF_DT_TQ2_0 = 35, GGUF_DT_MXFP4 = 39, GGUF_DT_NVFP4 = 40,
    GGUF_DT_Q1_0 = 41,
    GGUF_DT_COUNT = 42 /* one past the largest id ggml knows (e21cdc11) */
};

typedef struct gguf_dtype_traits {
    const char *name;      /* as llama.cpp prints it: "f32", "q4_K", "iq2_xxs" */
    uint32_t    blck_size; /* elements per block (1 for plain types) */
    uint32_t    type_size; /* bytes per block */
    bool        valid;     /* false for removed ids: name says what it was */
    bool        is_float;  /* f32, f16, bf16, f64: scanned for NaN/Inf */
} gguf_dtype_traits;

/* Traits of type id `type`, or NULL when type >= GGUF_DT_COUNT. Removed ids
 * return traits with valid == false. */
GGUF_API const gguf_dtype_traits *gguf_dtype_get(uint32_t type);

/* Name of a type id ("q4_K"); "unknown" for ids out of range. */
GGUF_API const char *gguf_dtype_name(uint32_t type);

/* Looks a type up by name, case-insensitively ("Q4_K" finds q4_K). Returns
 * the id, or -1 when no valid type has that name. */
GGUF_API int gguf_dtype_from_name(const char *name);

/* The type llama-quantize substitutes for `type` when a row's length is
 * not a whole number of its blocks (llama.cpp e21cdc11's
 * tensor_type_fallback: q4_K → q5_0, iq4_xs → iq4_nl, ...), or -1 when it
 * defines none (it then refuses the tensor). */
GGUF_API int gguf_dtype_fallback(uint32_t type);

/* The type rows of ne0 elements get when `type` is wanted: `type` itself
 * when ne0 is a whole number of its blocks, else its fallback when that
 * fits, else f16 (llama-quantize's "must use F16 due to unusual shape";
 * where llama.cpp has no fallback — q8_0, the converter's only block
 * type — f16 as gguf-py's converter does). */
GGUF_API uint32_t gguf_dtype_fit(uint32_t type, int64_t ne0);

/* llama.cpp's file types (enum llama_ftype, e21cdc11): the values of
 * general.file_type. Numbers llama.cpp removed (4..6, 33..35) are absent. */
enum gguf_file_type {
    GGUF_FT_ALL_F32 = 0, GGUF_FT_F16 = 1, GGUF_FT_Q4_0 = 2, GGUF_FT_Q4_1 = 3,
    GGUF_FT_Q8_0 = 7, GGUF_FT_Q5_0 = 8, GGUF_FT_Q5_1 = 9, GGUF_FT_Q2_K = 10,
    GGUF_FT_Q3_K_S = 11, GGUF_FT_Q3_K_M = 12, GGUF_FT_Q3_K_L = 13, GGUF_FT_Q4_K_S = 14,
    GGUF_FT_Q4_K_M = 15, GGUF_FT_Q5_K_S = 16, GGUF_FT_Q5_K_M = 17, GGUF_FT_Q6_K = 18,
    GGUF_FT_IQ2_XXS = 19, GGUF_FT_IQ2_XS = 20, GGUF_FT_Q2_K_S = 21, GGUF_FT_IQ3_XS = 22,
    GGUF_FT_IQ3_XXS = 23, GGUF_FT_IQ1_S = 24, GGUF_FT_IQ4_NL = 25, GGUF_FT_IQ3_S = 26,
    GGUF_FT_IQ3_M = 27, GGUF_FT_IQ2_S = 28, GGUF_FT_IQ2_M = 29, GGUF_FT_IQ4_XS = 30,
    GGUF_FT_IQ1_M = 31, GGUF_FT_BF16 = 32, GGUF_FT_TQ1_0 = 36, GGUF_FT_TQ2_0 = 37,
    GGUF_FT_MXFP4_MOE = 38, GGUF_FT_NVFP4 = 39, GGUF_FT_Q1_0 = 40,
    GGUF_FT_GUESSED = 1024 /* or-ed in when a loader guessed the type */
};

/* The file type of a file mostly of tensor type `type`: what llama.cpp's
 * loader guesses when general.file_type is absent (q3_K → Q3_K_M, mxfp4 →
 * MXFP4_MOE), and what a converter writes for its outtype (f32 → ALL_F32).
 * -1 when there is none (integer types, f64, q8_1, q8_K). */
GGUF_API int gguf_dtype_file_type(uint32_t type);

/* Bytes of one row of n elements of `type`, into *out. Returns 0, or -1
 * with err (may be NULL) when the type is invalid (GGUF_ERR_UNSUPPORTED), n
 * is not a multiple of the block size (GGUF_ERR_ARG), or the size
 * overflows (GGUF_ERR_LIMIT). */
GGUF_API int gguf_row_size(uint32_t type, int64_t n, uint64_t *out, gguf_error *err);

/* GGUF metadata value types (the 13 of the spec). */
enum gguf_vtype {
    GGUF_VT_U8 = 0, GGUF_VT_I8 = 1, GGUF_VT_U16 = 2, GGUF_VT_I16 = 3,
    GGUF_VT_U32 = 4, GGUF_VT_I32 = 5, GGUF_VT_F32 = 6, GGUF_VT_BOOL = 7,
    GGUF_VT_STR = 8, GGUF_VT_ARR = 9, GGUF_VT_U64 = 10, GGUF_VT_I64 = 11,
    GGUF_VT_F64 = 12,
    GGUF_VT_COUNT = 13
};

/* Short name of a value type: "u8", "i32", "f32", "bool", "str", "arr". */
GGUF_API const char *gguf_vtype_name(uint32_t vtype);

/* Bytes of one element of a fixed-size value type; 0 for str, arr and
 * out-of-range ids. */
GGUF_API uint32_t gguf_vtype_size(uint32_t vtype);

/* ---------------------------------------------------------------------------
 * reading GGUF files: open, validate, look up keys and tensors.
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
    uint32_t       type;        /* enum gguf_dtype, always valid */
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
    GGUF_OPEN_NO_SPLIT   = 1, /* open just this file, even if it is a shard (with
                               * GGUF_OPEN_REPAIR also when its split.* keys are
                               * malformed: the caller drops them) */
    /* Recover from what is wrong but recoverable, instead of failing: a key
     * that occurs twice (the last one stays), a tensor name that occurs
     * twice (the last one stays; the other's data is ignored), and a
     * general.alignment that is not a u32 power of two (the key is removed
     * and the alignment the data is laid out for is found from the tensor
     * offsets; when two alignments fit differently, the open fails). Each
     * repair is stated in gguf_repair_at(). Truncated, overlapping or
     * out-of-file data stays an error. Only the file given is repaired,
     * never the other shards of a split model. */
    GGUF_OPEN_REPAIR     = 2,
    GGUF_OPEN_KEEP_FIRST = 4  /* with GGUF_OPEN_REPAIR: of duplicates keep the first */
};

/* Opens and validates a GGUF file (and, for a first shard named
 * NAME-00001-of-0000N.gguf with split.* keys, all its shards). Returns NULL
 * with a message naming the problem and its byte offset in err. */
GGUF_API gguf_file *gguf_open(const char *path, unsigned flags, gguf_error *err);

/* Validates a GGUF image already in memory (the fuzzer's entry point). The
 * buffer must outlive the returned file. */
GGUF_API gguf_file *gguf_open_memory(const void *buf, size_t size, gguf_error *err);

/* What a file that is not GGUF is, judged from its first bytes (head: n of
 * them, at least 512 when the file has them; size: the whole file's): a
 * sentence naming it and what to do, such as "a Git LFS pointer to a file
 * of 4683073248 bytes: the repository was cloned without Git LFS (run 'git
 * lfs pull' in it, or download the file itself)" — also an HTML page, a
 * JSON or XML document, a safetensors checkpoint, a zip archive, a Python
 * pickle, a GGML/GGJT file, gzip, xz, zstd or tar — written to buf (cap
 * bytes) or a constant string; NULL for GGUF or anything else. gguf_open's
 * error for such a file is "not a GGUF file but " and this sentence. */
GGUF_API const char *gguf_foreign_kind(const void *head, size_t n, uint64_t size, char *buf,
                                       size_t cap);

/* gguf_open_memory with gguf_open flags (only the repair ones apply). */
GGUF_API gguf_file *gguf_open_memory_flags(const void *buf, size_t size, unsigned flags,
                                           gguf_error *err);

/* After GGUF_OPEN_REPAIR: the repairs made, one sentence each (NULL past
 * the end). At most 64 are listed, then one sentence with the count of
 * the rest. */
GGUF_API uint64_t gguf_n_repairs(const gguf_file *f);
GGUF_API const char *gguf_repair_at(const gguf_file *f, uint64_t i);

/* Unmaps and frees everything; NULL is fine. */
GGUF_API void gguf_close(gguf_file *f);

/* Header facts. */
GGUF_API uint32_t gguf_file_version(const gguf_file *f);
GGUF_API uint32_t gguf_alignment(const gguf_file *f);
GGUF_API uint64_t gguf_file_size(const gguf_file *f);    /* sum over shards */
GGUF_API uint32_t gguf_n_shards(const gguf_file *f);
GGUF_API const char *gguf_shard_path(const gguf_file *f, uint32_t shard);
/* The read-only descriptor of the file a shard was opened from (-1 for a
 * memory image or a shard number out of range), open until gguf_close().
 * It names the file that was validated, whatever has been renamed over its
 * path since: read tensor data through it (or the mapping), never by
 * reopening the path. Do not close it; reads through it must use pread-style
 * offsets (its file position is not the library's). */
GGUF_API int gguf_shard_fd(const gguf_file *f, uint32_t shard);
/* Start of a shard's data section (clamped to the file size: a file without
 * tensors may end before its padded header would). */
GGUF_API uint64_t gguf_data_offset(const gguf_file *f, uint32_t shard);
/* The whole data section of a shard (from the aligned start to end of file). */
GGUF_API const uint8_t *gguf_data_section(const gguf_file *f, uint32_t shard, uint64_t *size);

/* Metadata: in file order, and by key in O(1) (NULL when absent). */
GGUF_API uint64_t gguf_n_kv(const gguf_file *f);
GGUF_API const gguf_kv *gguf_kv_at(const gguf_file *f, uint64_t i);
GGUF_API const gguf_kv *gguf_lookup_kv(const gguf_file *f, const char *key);

/* Tensors: in file order (shard by shard), and by name in O(1). */
GGUF_API uint64_t gguf_n_tensors(const gguf_file *f);
GGUF_API const gguf_tensor *gguf_tensor_at(const gguf_file *f, uint64_t i);
GGUF_API const gguf_tensor *gguf_lookup_tensor(const gguf_file *f, const char *name);

/* Says the bytes [p, p + n) of f will not be read again soon: the pages they
 * lie on leave the process's resident memory (a later read maps them in
 * again from the file). For streaming through a tensor, a data section or a
 * long metadata array in pieces with bounded memory. Only f's own mappings
 * of its files are touched: the part of the range outside them, and every
 * byte of a file opened with gguf_open_memory (the caller's memory), is left
 * alone, so any pointer is safe to pass. Bytes sharing a page with the range
 * are dropped too, which is harmless for a file mapping. */
GGUF_API void gguf_release_range(const gguf_file *f, const void *p, uint64_t n);

/* Scalar getters on one kv: false when the kv is not exactly that type. */
GGUF_API bool gguf_kv_u8(const gguf_kv *kv, uint8_t *out);
GGUF_API bool gguf_kv_i8(const gguf_kv *kv, int8_t *out);
GGUF_API bool gguf_kv_u16(const gguf_kv *kv, uint16_t *out);
GGUF_API bool gguf_kv_i16(const gguf_kv *kv, int16_t *out);
GGUF_API bool gguf_kv_u32(const gguf_kv *kv, uint32_t *out);
GGUF_API bool gguf_kv_i32(const gguf_kv *kv, int32_t *out);
GGUF_API bool gguf_kv_u64(const gguf_kv *kv, uint64_t *out);
GGUF_API bool gguf_kv_i64(const gguf_kv *kv, int64_t *out);
GGUF_API bool gguf_kv_f32(const gguf_kv *kv, float *out);
GGUF_API bool gguf_kv_f64(const gguf_kv *kv, double *out);
GGUF_API bool gguf_kv_bool(const gguf_kv *kv, bool *out);
GGUF_API bool gguf_kv_str(const gguf_kv *kv, gguf_str *out);

/* Any integer scalar type (u8..i64), range-checked into int64. */
GGUF_API bool gguf_kv_int(const gguf_kv *kv, int64_t *out);

/* By-key getters: 0 on success; -1 with "missing key K" or "key K is i32,
 * expected u32" in err. */
GGUF_API int gguf_get_u32(const gguf_file *f, const char *key, uint32_t *out, gguf_error *err);

/* The file's general.file_type as llama.cpp's loader takes it: the key's
 * u32 value, else a guess from the most common tensor type
 * (gguf_dtype_file_type of it, ALL_F32 when it has none) with
 * GGUF_FT_GUESSED or-ed in. The tensors are counted in the loader's order
 * (globals by name, then block by block, by name), and of two types with
 * as many tensors the one that got there first wins, as there. Returns 0,
 * or -1 with err (may be NULL) when out of memory. */
GGUF_API int gguf_file_type_of(const gguf_file *f, uint32_t *out, gguf_error *err);

/* llama.cpp's order of a model's tensors by name (llama_model_loader's
 * weights_map, the order llama-quantize writes): names not of a block
 * ("blk.N.…") first, then block by block; by strcmp within each. Returns
 * <0, 0 or >0 as strcmp does. */
GGUF_API int gguf_tensor_name_order(const char *a, const char *b);
GGUF_API int gguf_get_i32(const gguf_file *f, const char *key, int32_t *out, gguf_error *err);
GGUF_API int gguf_get_u64(const gguf_file *f, const char *key, uint64_t *out, gguf_error *err);
GGUF_API int gguf_get_f32(const gguf_file *f, const char *key, float *out, gguf_error *err);
GGUF_API int gguf_get_bool(const gguf_file *f, const char *key, bool *out, gguf_error *err);
GGUF_API int gguf_get_str(const gguf_file *f, const char *key, gguf_str *out, gguf_error *err);

/* Arrays: the element bytes of a numeric array of element type elem (NULL
 * when kv is not such an array), count in *n. Elements may be unaligned. */
GGUF_API const void *gguf_kv_array(const gguf_kv *kv, uint32_t elem, uint64_t *n);

/* Element i of a numeric/bool array or scalar, converted to double (for
 * printing). i must be < kv->n. */
GGUF_API double gguf_kv_elem_as_double(const gguf_kv *kv, uint64_t i);

/* Element i of an integer array or scalar as int64 (u64 values above
 * INT64_MAX wrap; callers that care check elem_type). */
GGUF_API int64_t gguf_kv_elem_as_int(const gguf_kv *kv, uint64_t i);

/* True when the string s (len bytes) equals the NUL-terminated c. */
GGUF_API bool gguf_str_eq(gguf_str s, const char *c);

/* Split naming: if path ends in -NNNNN-of-MMMMM.gguf, stores the shard
 * number (1-based) and count and the prefix length, returns true. */
GGUF_API bool gguf_split_parse_name(const char *path, uint32_t *no, uint32_t *count, size_t *prefix_len);

/* Writes "PREFIX-%05u-of-%05u.gguf" into buf. Returns -1 if it does not fit. */
GGUF_API int gguf_split_name(char *buf, size_t size, const char *prefix, uint32_t no, uint32_t count);

/* ---------------------------------------------------------------------------
 * writing GGUF files as a stream.
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
typedef struct gguf_writer gguf_writer;

/* A new, empty writer for GGUF version 3. NULL on out of memory. */
GGUF_API gguf_writer *gguf_writer_new(void);

/* Frees the writer; aborts (removes temporary files) if not finished. */
GGUF_API void gguf_writer_free(gguf_writer *w);

/* Sets the version written in the header (2 or 3; default 3). */
GGUF_API void gguf_writer_set_version(gguf_writer *w, uint32_t version);

/* Whether a file without tensors gets its header padded to the alignment
 * (ggml's writer does; gguf-py, and so llama.cpp's vocab files, do not; the
 * default is not to). Files with tensors are always padded. */
GGUF_API void gguf_writer_set_pad_empty(gguf_writer *w, bool pad);

/* Metadata setters. Setting an existing key replaces its value in place
 * (keeping its position); a new key is appended. Return 0, or -1 on an
 * invalid key (empty, too long), an invalid element type or out of memory.
 * The first failure of any setter (and of gguf_writer_copy_kv and
 * gguf_writer_set_tensor_shard) is also kept in the writer, with its code:
 * gguf_writer_error() returns it (NULL when every call succeeded), so a
 * caller that sets many keys may check once before gguf_writer_begin(). A
 * failed call changes nothing in the writer. */
GGUF_API const gguf_error *gguf_writer_error(const gguf_writer *w);

GGUF_API int gguf_writer_set_u8(gguf_writer *w, const char *key, uint8_t v);
GGUF_API int gguf_writer_set_i8(gguf_writer *w, const char *key, int8_t v);
GGUF_API int gguf_writer_set_u16(gguf_writer *w, const char *key, uint16_t v);
GGUF_API int gguf_writer_set_i16(gguf_writer *w, const char *key, int16_t v);
GGUF_API int gguf_writer_set_u32(gguf_writer *w, const char *key, uint32_t v);
GGUF_API int gguf_writer_set_i32(gguf_writer *w, const char *key, int32_t v);
GGUF_API int gguf_writer_set_u64(gguf_writer *w, const char *key, uint64_t v);
GGUF_API int gguf_writer_set_i64(gguf_writer *w, const char *key, int64_t v);
GGUF_API int gguf_writer_set_f32(gguf_writer *w, const char *key, float v);
GGUF_API int gguf_writer_set_f64(gguf_writer *w, const char *key, double v);
GGUF_API int gguf_writer_set_bool(gguf_writer *w, const char *key, bool v);
GGUF_API int gguf_writer_set_str(gguf_writer *w, const char *key, const char *v);
GGUF_API int gguf_writer_set_strn(gguf_writer *w, const char *key, const char *v, uint64_t len);

/* A numeric or bool array: n elements of type elem (little-endian bytes). */
GGUF_API int gguf_writer_set_array(gguf_writer *w, const char *key, uint32_t elem,
                          const void *data, uint64_t n);

/* A string array; lens may be NULL for NUL-terminated strings. */
GGUF_API int gguf_writer_set_str_array(gguf_writer *w, const char *key,
                              const char *const *strs, const uint64_t *lens, uint64_t n);

/* Copies a kv read from another file, value bytes exactly as stored. */
GGUF_API int gguf_writer_copy_kv(gguf_writer *w, const gguf_kv *kv);

/* Removes a key if present. */
GGUF_API void gguf_writer_remove_kv(gguf_writer *w, const char *key);

/* True when key is set. */
GGUF_API bool gguf_writer_has_kv(const gguf_writer *w, const char *key);

/* A key's value as set so far, for checks before begin() (e.g. the model
 * validation of <ggufkit/arch.h>). */
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
GGUF_API bool gguf_writer_find_value(const gguf_writer *w, const char *key, gguf_writer_value *out);

/* A tensor as declared by gguf_writer_add_tensor(). */
typedef struct gguf_writer_tensor {
    const char *name;
    uint32_t    type;               /* enum gguf_dtype */
    uint32_t    n_dims;
    int64_t     ne[GGUF_MAX_DIMS];  /* 1 beyond n_dims */
} gguf_writer_tensor;

/* Tensor i (in declaration order) into *out; false when i >= the count. The
 * name stays valid until the writer is freed. */
GGUF_API bool gguf_writer_tensor_at(const gguf_writer *w, uint64_t i, gguf_writer_tensor *out);

/* Declares the next tensor: name (< 64 bytes, unique), type, n_dims (0..4)
 * dimensions ne[0..n_dims). Returns its index, or -1 with err set. */
GGUF_API int64_t gguf_writer_add_tensor(gguf_writer *w, const char *name, uint32_t type,
                               uint32_t n_dims, const int64_t *ne, gguf_error *err);

/* Number of declared tensors and the bytes of tensor i. */
GGUF_API uint64_t gguf_writer_n_tensors(const gguf_writer *w);
GGUF_API uint64_t gguf_writer_tensor_nbytes(const gguf_writer *w, uint64_t i);

/* Splitting: at most max_tensors tensors per shard (0 = no limit) and at most
 * max_bytes bytes per shard (0 = no limit; a shard always holds at least one
 * tensor). Must be called before begin(). */
GGUF_API void gguf_writer_set_split(gguf_writer *w, uint64_t max_tensors, uint64_t max_bytes);

/* With keys true, a single-shard result still carries split.no, split.count
 * and split.tensors.count (llama-gguf-split writes them for one shard too;
 * name the output NAME-00001-of-00001.gguf yourself). Before begin(). */
GGUF_API void gguf_writer_set_split_keys(gguf_writer *w, bool keys);

/* Puts tensor i into shard `shard` (0-based) instead of splitting by size
 * or count; shards must be non-decreasing in tensor order without gaps. */
GGUF_API int gguf_writer_set_tensor_shard(gguf_writer *w, uint64_t i, uint32_t shard);

/* Number of shards begin() decided on (1 when not split). */
GGUF_API uint32_t gguf_writer_n_shards(const gguf_writer *w);

/* Opens the temporary output next to path and writes everything up to the
 * first tensor's data. With splits, path is the first shard's final name or
 * a prefix: "out.gguf" becomes out-00001-of-0000N.gguf. */
GGUF_API int gguf_writer_begin(gguf_writer *w, const char *path, gguf_error *err);

/* Writes the next tensor's bytes as tensor t of file f holds them (the
 * same size), copied in the kernel from f's file where it can
 * (copy_file_range, which may share the filesystem's extents: no pass
 * through user memory), else from f's mapping. For tools that copy tensors
 * unchanged (metadata edits, splits, merges). 0, or -1 with err. */
GGUF_API int gguf_writer_copy_tensor(gguf_writer *w, const gguf_file *f, const gguf_tensor *t,
                                     gguf_error *err);

/* Appends bytes of tensor data; tensors must be completed in declaration
 * order, each exactly tensor_nbytes() long. */
GGUF_API int gguf_writer_write_tensor(gguf_writer *w, const void *data, size_t n, gguf_error *err);

/* Checks every tensor was written, pads and fsyncs, but renames nothing:
 * the complete output stays in its temporary files (gguf_writer_temp_path)
 * for the caller to read back and check before gguf_writer_finish() puts it
 * in place or gguf_writer_abort() drops it. */
GGUF_API int gguf_writer_complete(gguf_writer *w, gguf_error *err);

/* Temporary file of shard i while the writer is begun, else NULL. */
GGUF_API const char *gguf_writer_temp_path(const gguf_writer *w, uint32_t i);

/* Completes (as above, if not yet) and renames every shard into place. */
GGUF_API int gguf_writer_finish(gguf_writer *w, gguf_error *err);

/* Drops the output: removes the temporary files. */
GGUF_API void gguf_writer_abort(gguf_writer *w);

/* Final path of shard i (valid after begin()). */
GGUF_API const char *gguf_writer_shard_path(const gguf_writer *w, uint32_t i);

/* Writes a whole file at once from an opened one: same version, same kvs and
 * tensors in the same order. Used for round-trip tests and `--rewrite`. */
GGUF_API int gguf_rewrite(const gguf_file *in, const char *path, gguf_error *err);

/* ---------------------------------------------------------------------------
 * SHA-256 (FIPS 180-4), used for tensor hashes and manifests.
 *
 * Streaming interface; no dependency on OpenSSL. Not for: anything
 * security-sensitive beyond content identity.
 */
typedef struct gguf_sha256_ctx {
    uint32_t state[8];
    uint64_t nbytes;
    uint8_t  buf[64];
    uint32_t buflen;
} gguf_sha256_ctx;

GGUF_API void gguf_sha256_init(gguf_sha256_ctx *c);
GGUF_API void gguf_sha256_update(gguf_sha256_ctx *c, const void *data, size_t n);
GGUF_API void gguf_sha256_final(gguf_sha256_ctx *c, uint8_t digest[32]);

/* One-shot hash of a buffer, as 64 lowercase hex digits plus NUL. */
GGUF_API void gguf_sha256_hex(const void *data, size_t n, char hex[65]);

/* Formats a digest as lowercase hex. */
GGUF_API void gguf_sha256_to_hex(const uint8_t digest[32], char hex[65]);

#ifdef __cplusplus
}
#endif

#endif
