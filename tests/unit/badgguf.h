/*
 * badgguf.h — builds GGUF images byte by byte: one small valid v3 file and a
 * catalogue of malformed variants, at least one per validation rule of
 * gguf_open() (docs/validation.md lists them).
 *
 * The format knowledge here (value type ids, block sizes, field order) is
 * written out again from the spec on purpose: the generator must not trust
 * the library it is used to test. Header-only, so tests/unit/test_validate.c
 * and tests/tools/mkbad.c (fuzz seeds) share one catalogue; it needs only
 * libc, not Check and not libgguf.
 *
 * How a variant is made: bg_valid_model() describes the valid file as data
 * (kvs, tensors); a case either edits that description before bg_write()
 * serializes it, or patches bytes of the written image at the offsets that
 * bg_write() recorded in a bg_layout. Each case also states what the reader
 * must say: a pattern (see below) of the error message, or "" when the image
 * must open.
 *
 * Not for: writing real models (gguf/writer.h).
 */
#ifndef BADGGUF_H
#define BADGGUF_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Byte buffer
 * ------------------------------------------------------------------------ */

typedef struct bg_buf {
    uint8_t *p;
    size_t   len, cap;
    bool     oom; /* an append failed: the image is incomplete */
    bool     be;  /* integers are written big-endian */
} bg_buf;

static inline bool bg_grow(bg_buf *b, size_t n)
{
    if (b->oom)
        return false;
    if (n <= b->cap - b->len)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

static inline void bg_bytes(bg_buf *b, const void *src, size_t n)
{
    if (n && bg_grow(b, n)) {
        memcpy(b->p + b->len, src, n);
        b->len += n;
    }
}

static inline void bg_fill(bg_buf *b, uint8_t v, size_t n)
{
    if (n && bg_grow(b, n)) {
        memset(b->p + b->len, v, n);
        b->len += n;
    }
}

/* An unsigned integer of `width` bytes in the buffer's byte order. */
static inline void bg_uint(bg_buf *b, uint64_t v, unsigned width)
{
    uint8_t tmp[8];
    for (unsigned i = 0; i < width; i++)
        tmp[b->be ? width - 1 - i : i] = (uint8_t)(v >> (8 * i));
    bg_bytes(b, tmp, width);
}

static inline void bg_u8(bg_buf *b, uint8_t v) { bg_bytes(b, &v, 1); }
static inline void bg_u16(bg_buf *b, uint16_t v) { bg_uint(b, v, 2); }
static inline void bg_u32(bg_buf *b, uint32_t v) { bg_uint(b, v, 4); }
static inline void bg_u64(bg_buf *b, uint64_t v) { bg_uint(b, v, 8); }

/* Zeros up to the next multiple of align. */
static inline void bg_pad(bg_buf *b, uint64_t align)
{
    if (align > 1 && b->len % align)
        bg_fill(b, 0, (size_t)(align - b->len % align));
}

/* Overwrites `width` bytes at `at` (ignored when outside the image). */
static inline void bg_patch(bg_buf *b, size_t at, uint64_t v, unsigned width)
{
    if (b->oom || at > b->len || width > b->len - at)
        return;
    for (unsigned i = 0; i < width; i++)
        b->p[at + (b->be ? width - 1 - i : i)] = (uint8_t)(v >> (8 * i));
}

static inline void bg_set_u8(bg_buf *b, size_t at, uint8_t v) { bg_patch(b, at, v, 1); }
static inline void bg_set_u32(bg_buf *b, size_t at, uint32_t v) { bg_patch(b, at, v, 4); }
static inline void bg_set_u64(bg_buf *b, size_t at, uint64_t v) { bg_patch(b, at, v, 8); }

static inline void bg_free(bg_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------------------
 * The format, as the spec numbers it
 * ------------------------------------------------------------------------ */

enum {
    BG_U8 = 0, BG_I8 = 1, BG_U16 = 2, BG_I16 = 3, BG_U32 = 4, BG_I32 = 5,
    BG_F32 = 6, BG_BOOL = 7, BG_STR = 8, BG_ARR = 9, BG_U64 = 10, BG_I64 = 11,
    BG_F64 = 12
};
enum { BG_TYPE_F32 = 0, BG_TYPE_Q8_0 = 8 }; /* q8_0: 32 elements in 34 bytes */

/* Bytes of one value of a fixed-size type. Invalid type ids get 4 bytes of
 * filler so that a file with a bad type id still has something after it. */
static inline unsigned bg_vtype_width(uint32_t t)
{
    switch (t) {
    case BG_U8: case BG_I8: case BG_BOOL: return 1;
    case BG_U16: case BG_I16: return 2;
    case BG_U64: case BG_I64: case BG_F64: return 8;
    default: return 4;
    }
}

static inline uint64_t bg_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline uint64_t bg_f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* ------------------------------------------------------------------------
 * A GGUF file as data
 * ------------------------------------------------------------------------ */

#define BG_MAX_KV      128
#define BG_MAX_TENSORS 4
#define BG_MAX_DIMS    8 /* ne[] kept per tensor; more dims are written as 1 */

typedef struct bg_kv {
    const char        *key;
    uint64_t           key_len;   /* bytes of key written (it may hold NULs) */
    uint32_t           type;      /* value type as written */
    uint64_t           bits;      /* scalar: value, written with the type's width */
    const char        *str;       /* str scalar */
    uint32_t           elem_type; /* array: element type as written */
    uint64_t           n;         /* array: element count (written and declared) */
    const char *const *strs;      /* array of str */
    const uint64_t    *elems;     /* other arrays: each with the element width; an
                                   * array of arrays holds n copies of u8 [1, 2] */
} bg_kv;

typedef struct bg_tensor {
    const char *name;
    uint64_t    name_len;
    uint32_t    n_dims;
    uint64_t    ne[BG_MAX_DIMS];
    uint32_t    type;
    uint64_t    offset; /* relative to the data section */
    uint64_t    nbytes; /* data bytes written at offset */
} bg_tensor;

typedef struct bg_model {
    char      magic[4];
    uint32_t  version;
    bool      big_endian; /* every integer big-endian; the magic stays "GGUF" */
    bool      v1;         /* GGUF v1: counts, lengths and dims are u32 */
    uint32_t  alignment;  /* padding used by bg_write (general.alignment is a kv) */
    size_t    n_kv, n_tensors;
    bg_kv     kv[BG_MAX_KV];
    bg_tensor t[BG_MAX_TENSORS];
} bg_model;

/* Where bg_write put each field: the handles that patch-made variants use. */
typedef struct bg_layout {
    size_t version_at, n_tensors_at, n_kv_at;
    size_t kv_at[BG_MAX_KV];       /* record start: key length */
    size_t kv_type_at[BG_MAX_KV];  /* u32 value type */
    size_t kv_val_at[BG_MAX_KV];   /* value; for an array its u32 element type */
    size_t kv_count_at[BG_MAX_KV]; /* array: u64 element count */
    size_t kv_elems_at[BG_MAX_KV]; /* array: first element */
    size_t t_at[BG_MAX_TENSORS];   /* info start: name length */
    size_t t_ndims_at[BG_MAX_TENSORS];
    size_t t_ne_at[BG_MAX_TENSORS]; /* ne[0]; ne[j] is 8*j bytes further */
    size_t t_type_at[BG_MAX_TENSORS];
    size_t t_offset_at[BG_MAX_TENSORS];
    size_t infos_end; /* first byte after the tensor infos */
    size_t data_at;   /* start of the (aligned) data section */
    size_t data_end;  /* first byte after the last tensor's data */
    size_t size;      /* whole image, padded to the alignment like ggml does */
} bg_layout;

/* Indices of the valid model's kvs and tensors. */
enum {
    BG_KV_ARCH, BG_KV_NAME, BG_KV_ALIGN, BG_KV_CTX, BG_KV_ROPE, BG_KV_U8,
    BG_KV_I16, BG_KV_U64, BG_KV_I64, BG_KV_F64, BG_KV_BOS, BG_KV_TOKENS,
    BG_KV_SCORES, BG_KV_TTYPE, BG_KV_FLAGS,
    BG_VALID_N_KV
};
enum { BG_T_EMBD, BG_T_FFN, BG_VALID_N_TENSORS };

static inline bg_kv *bg_add_kv(bg_model *m, const char *key, uint32_t type)
{
    bg_kv *kv = &m->kv[m->n_kv++];
    memset(kv, 0, sizeof *kv);
    kv->key = key;
    kv->key_len = strlen(key);
    kv->type = type;
    kv->elem_type = type;
    return kv;
}

static inline void bg_add_scalar(bg_model *m, const char *key, uint32_t type, uint64_t bits)
{
    bg_add_kv(m, key, type)->bits = bits;
}

static inline void bg_add_str(bg_model *m, const char *key, const char *s)
{
    bg_add_kv(m, key, BG_STR)->str = s;
}

static inline void bg_add_arr(bg_model *m, const char *key, uint32_t elem, uint64_t n,
                              const uint64_t *elems, const char *const *strs)
{
    bg_kv *kv = bg_add_kv(m, key, BG_ARR);
    kv->elem_type = elem;
    kv->n = n;
    kv->elems = elems;
    kv->strs = strs;
}

/* Bytes of a tensor of the two types the valid file uses. */
static inline uint64_t bg_nbytes(uint32_t type, const uint64_t *ne, uint32_t n_dims)
{
    uint64_t n = 1;
    for (uint32_t j = 0; j < n_dims; j++)
        n *= ne[j];
    return type == BG_TYPE_Q8_0 ? n / 32 * 34 : n * 4;
}

static inline void bg_set_tensor(bg_tensor *t, const char *name, uint32_t type,
                                 uint64_t ne0, uint64_t ne1, uint64_t offset)
{
    memset(t, 0, sizeof *t);
    t->name = name;
    t->name_len = strlen(name);
    t->n_dims = 2;
    t->ne[0] = ne0;
    t->ne[1] = ne1;
    t->type = type;
    t->offset = offset;
    t->nbytes = bg_nbytes(type, t->ne, 2);
}

/*
 * The valid file: GGUF v3, general.alignment = 32, fifteen kvs covering
 * str, u8, i16, u32, i32 (array), u64, i64, f32, f64, bool, and arrays of
 * str, f32, i32 and bool; two tensors:
 *   token_embd.weight      f32  [8, 2]   64 bytes at data offset 0
 *   blk.0.ffn_down.weight  q8_0 [32, 2]  68 bytes at data offset 64
 */
static inline void bg_valid_model(bg_model *m)
{
    static const char *const tokens[] = { "<unk>", "<s>", "</s>", "hello" };
    static const uint64_t scores[] = { 0, 0, 0, 0xBFC00000 /* -1.5f */ };
    static const uint64_t ttypes[] = { 2, 3, 3, 1 };
    static const uint64_t flags[] = { 1, 0, 1 };

    memset(m, 0, sizeof *m);
    memcpy(m->magic, "GGUF", 4);
    m->version = 3;
    m->alignment = 32;
    bg_add_str(m, "general.architecture", "llama");
    bg_add_str(m, "general.name", "badgguf minimal");
    bg_add_scalar(m, "general.alignment", BG_U32, 32);
    bg_add_scalar(m, "llama.context_length", BG_U32, 128);
    bg_add_scalar(m, "llama.rope.freq_base", BG_F32, bg_f32_bits(10000.0f));
    bg_add_scalar(m, "test.u8", BG_U8, 200);
    bg_add_scalar(m, "test.i16", BG_I16, (uint64_t)(int64_t)-300);
    bg_add_scalar(m, "test.u64", BG_U64, 0x123456789abcdef0ULL);
    bg_add_scalar(m, "test.i64", BG_I64, (uint64_t)(int64_t)-5000000000LL);
    bg_add_scalar(m, "test.f64", BG_F64, bg_f64_bits(0.5));
    bg_add_scalar(m, "tokenizer.ggml.add_bos_token", BG_BOOL, 1);
    bg_add_arr(m, "tokenizer.ggml.tokens", BG_STR, 4, NULL, tokens);
    bg_add_arr(m, "tokenizer.ggml.scores", BG_F32, 4, scores, NULL);
    bg_add_arr(m, "tokenizer.ggml.token_type", BG_I32, 4, ttypes, NULL);
    bg_add_arr(m, "test.flags", BG_BOOL, 3, flags, NULL);

    m->n_tensors = BG_VALID_N_TENSORS;
    bg_set_tensor(&m->t[BG_T_EMBD], "token_embd.weight", BG_TYPE_F32, 8, 2, 0);
    bg_set_tensor(&m->t[BG_T_FFN], "blk.0.ffn_down.weight", BG_TYPE_Q8_0, 32, 2, 64);
}

/* ------------------------------------------------------------------------
 * Serializer
 * ------------------------------------------------------------------------ */

/* Counts, lengths and dims: u64, or u32 in GGUF v1. */
static inline void bg_len(bg_buf *b, const bg_model *m, uint64_t v)
{
    bg_uint(b, v, m->v1 ? 4 : 8);
}

static inline void bg_str(bg_buf *b, const bg_model *m, const char *s, uint64_t len)
{
    bg_len(b, m, len);
    bg_bytes(b, s, (size_t)len);
}

static inline void bg_write_value(bg_buf *b, const bg_model *m, const bg_kv *kv,
                                  bg_layout *L, size_t i)
{
    L->kv_val_at[i] = b->len;
    if (kv->type == BG_STR) {
        bg_str(b, m, kv->str, strlen(kv->str));
        return;
    }
    if (kv->type != BG_ARR) {
        bg_uint(b, kv->bits, bg_vtype_width(kv->type));
        return;
    }
    bg_u32(b, kv->elem_type);
    L->kv_count_at[i] = b->len;
    bg_len(b, m, kv->n);
    L->kv_elems_at[i] = b->len;
    for (uint64_t j = 0; j < kv->n; j++) {
        if (kv->elem_type == BG_STR) {
            bg_str(b, m, kv->strs[j], strlen(kv->strs[j]));
        } else if (kv->elem_type == BG_ARR) {
            bg_u32(b, BG_U8);
            bg_len(b, m, 2);
            bg_u8(b, 1);
            bg_u8(b, 2);
        } else {
            bg_uint(b, kv->elems[j], bg_vtype_width(kv->elem_type));
        }
    }
}

/* Deterministic tensor contents: f32 ramps, q8_0 blocks with scale 1.0. */
static inline void bg_write_data(bg_buf *b, const bg_tensor *t)
{
    if (t->type == BG_TYPE_F32) {
        for (uint64_t k = 0; k < t->nbytes / 4; k++)
            bg_u32(b, (uint32_t)bg_f32_bits((float)k * 0.25f - 1.0f));
    } else if (t->type == BG_TYPE_Q8_0) {
        for (uint64_t k = 0; k < t->nbytes / 34; k++) {
            bg_u16(b, 0x3C00); /* f16 1.0 */
            for (int j = 0; j < 32; j++)
                bg_u8(b, (uint8_t)(j - 16));
        }
    } else {
        for (uint64_t k = 0; k < t->nbytes; k++)
            bg_u8(b, (uint8_t)(k * 31 + 7));
    }
}

/* Appends the image of m to b (which should be empty) and returns where
 * every field went. Tensor data is written in info order at its offset;
 * data that cannot be placed that way (offset behind the data already
 * written, or absurdly far) is skipped — variants lie about offsets by
 * patching instead. */
static inline bg_layout bg_write(const bg_model *m, bg_buf *b)
{
    bg_layout L;
    memset(&L, 0, sizeof L);
    b->be = m->big_endian;
    bg_bytes(b, m->magic, 4);
    L.version_at = b->len;
    bg_u32(b, m->version);
    L.n_tensors_at = b->len;
    bg_len(b, m, m->n_tensors);
    L.n_kv_at = b->len;
    bg_len(b, m, m->n_kv);

    for (size_t i = 0; i < m->n_kv; i++) {
        const bg_kv *kv = &m->kv[i];
        L.kv_at[i] = b->len;
        bg_str(b, m, kv->key, kv->key_len);
        L.kv_type_at[i] = b->len;
        bg_u32(b, kv->type);
        bg_write_value(b, m, kv, &L, i);
    }

    for (size_t i = 0; i < m->n_tensors; i++) {
        const bg_tensor *t = &m->t[i];
        L.t_at[i] = b->len;
        bg_str(b, m, t->name, t->name_len);
        L.t_ndims_at[i] = b->len;
        bg_u32(b, t->n_dims);
        L.t_ne_at[i] = b->len;
        for (uint32_t j = 0; j < t->n_dims; j++)
            bg_len(b, m, j < BG_MAX_DIMS ? t->ne[j] : 1);
        L.t_type_at[i] = b->len;
        bg_u32(b, t->type);
        L.t_offset_at[i] = b->len;
        bg_u64(b, t->offset);
    }
    L.infos_end = b->len;

    bg_pad(b, m->alignment);
    L.data_at = L.data_end = b->len;
    for (size_t i = 0; i < m->n_tensors; i++) {
        const bg_tensor *t = &m->t[i];
        if (t->nbytes == 0 || t->offset > (1u << 20) || L.data_at + t->offset < b->len)
            continue;
        bg_fill(b, 0, L.data_at + (size_t)t->offset - b->len);
        bg_write_data(b, t);
        if (b->len > L.data_end)
            L.data_end = b->len;
    }
    bg_pad(b, m->alignment);
    L.size = b->len;
    return L;
}

/* The valid image, in one call. */
static inline bg_layout bg_valid_image(bg_buf *b)
{
    bg_model m;
    bg_valid_model(&m);
    return bg_write(&m, b);
}

/* ------------------------------------------------------------------------
 * The catalogue
 *
 * A case builds one image into `out` and writes into `ex` what gguf_open
 * must answer: "" when the image is valid, else a pattern of the error
 * message in which '*' stands for any run of characters (the message may
 * have more text before and after). Offsets in the patterns are those of
 * the field at fault, as the reader reports them.
 * ------------------------------------------------------------------------ */

typedef bool (*bg_build_fn)(uint64_t arg, bg_buf *out, char *ex, size_t exn);

typedef struct bg_case {
    const char *name; /* unique; mkbad writes NAME.gguf */
    const char *rule; /* the rule it exercises: test_RULE in test_validate.c */
    bg_build_fn build;
    uint64_t    arg;
} bg_case;

#define BG_EXPECT_MAX 256

static inline void bg_expect(char *ex, size_t exn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void bg_expect(char *ex, size_t exn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ex, exn, fmt, ap);
    va_end(ap);
}

static inline bool bg_done(bg_buf *out) { return !out->oom; }

#define BG_U64MAX UINT64_MAX
#define BG_2E63   0x8000000000000000ULL

/* --- accepted images ---------------------------------------------------- */

static inline bool bg_build_valid(uint64_t version, bg_buf *out, char *ex, size_t exn)
{
    bg_model m;
    bg_valid_model(&m);
    m.version = (uint32_t)version;
    bg_write(&m, out);
    bg_expect(ex, exn, "%s", "");
    return bg_done(out);
}

/* general.alignment 64: the data section and both offsets are 64-aligned. */
static inline bool bg_build_align64(uint64_t arg, bg_buf *out, char *ex, size_t exn)
{
    (void)arg;
    bg_model m;
    bg_valid_model(&m);
    m.alignment = 64;
    m.kv[BG_KV_ALIGN].bits = 64;
    bg_write(&m, out);
    bg_expect(ex, exn, "%s", "");
    return bg_done(out);
}

static inline bool bg_build_no_tensors(uint64_t arg, bg_buf *out, char *ex, size_t exn)
{
    (void)arg;
    bg_model m;
    bg_valid_model(&m);
    m.n_tensors = 0;
    bg_write(&m, out);
    bg_expect(ex, exn, "%s", "");
    return bg_done(out);
}

/* --- header ------------------------------------------------------------- */

static inline bool bg_build_magic(uint64_t which, bg_buf *out, char *ex, size_t exn)
{
    static const char magics[][4] = { { 'G', 'G', 'M', 'L' }, { 'F', 'U', 'G', 'G' },
                                      { 0, 0, 0, 0 }, { 'g', 'g', 'u', 'f' } };
    bg_valid_image(out);
    for (int i = 0; i < 4; i++)
        bg_set_u8(out, (size_t)i, (uint8_t)magics[which % 4][i]);
    bg_expect(ex, exn, "offset 0: bad magic*not a GGUF file");
    return bg_done(out);
}

static inline bool bg_build_version(uint64_t v, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    bg_set_u32(out, L.version_at, (uint32_t)v);
    bg_expect(ex, exn, "offset 4: unsupported GGUF version %" PRIu64 " (only versions 2 and 3)", v);
    return bg_done(out);
}

/* A genuine v1 file: u32 counts, string lengths and dims. */
static inline bool bg_build_v1(uint64_t arg, bg_buf *out, char *ex, size_t exn)
{
    (void)arg;
    bg_model m;
    bg_valid_model(&m);
    m.version = 1;
    m.v1 = true;
    bg_write(&m, out);
    bg_expect(ex, exn, "offset 4: GGUF version 1 is not supported");
    return bg_done(out);
}

/* A genuine big-endian file (what gguf-py writes with --bigendian): the
 * magic reads "GGUF", every integer after it is big-endian. */
static inline bool bg_build_big_endian(uint64_t version, bg_buf *out, char *ex, size_t exn)
{
    bg_model m;
    bg_valid_model(&m);
    m.version = (uint32_t)version;
    m.big_endian = true;
    bg_write(&m, out);
    bg_expect(ex, exn, "offset 4: big-endian GGUF (version %" PRIu64 ") is not supported", version);
    return bg_done(out);
}

/* The first `len` bytes of the valid file, len < 24 (the fixed header). */
static inline bool bg_build_short_header(uint64_t len, bg_buf *out, char *ex, size_t exn)
{
    bg_valid_image(out);
    out->len = (size_t)len;
    if (len < 4)
        bg_expect(ex, exn, "offset 0: file is %" PRIu64 " bytes, too small to be GGUF", len);
    else if (len < 8)
        bg_expect(ex, exn, "offset 4: version runs past the end of the file");
    else if (len < 16)
        bg_expect(ex, exn, "offset 8: tensor count runs past the end of the file");
    else
        bg_expect(ex, exn, "offset 16: kv count runs past the end of the file");
    return bg_done(out);
}

/* Tensor count n; 0 stands for the smallest count that cannot fit: one
 * more than (size - 24) / 24, 24 bytes being the smallest tensor info. */
static inline bool bg_build_tensor_count(uint64_t n, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    if (n == 0)
        n = (L.size - 24) / 24 + 1;
    bg_set_u64(out, L.n_tensors_at, n);
    bg_expect(ex, exn, "offset 8: tensor count %" PRIu64 " cannot fit in the %zu bytes of the file",
              n, L.size);
    return bg_done(out);
}

/* kv count n; 0 stands for one more than (size - 24) / 14, 14 bytes being
 * the smallest kv (8-byte length, 1-byte key, type, 1-byte value). */
static inline bool bg_build_kv_count(uint64_t n, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    if (n == 0)
        n = (L.size - 24) / 14 + 1;
    bg_set_u64(out, L.n_kv_at, n);
    bg_expect(ex, exn, "offset 16: kv count %" PRIu64 " cannot fit in the %zu bytes of the file",
              n, L.size);
    return bg_done(out);
}

/* Counts that fit the up-front bound but are off by one: the parser walks
 * into the next section and must fail there, wherever that is. */
static inline bool bg_build_count_plus_one(uint64_t which, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    if (which == 0)
        bg_set_u64(out, L.n_tensors_at, BG_VALID_N_TENSORS + 1);
    else
        bg_set_u64(out, L.n_kv_at, BG_VALID_N_KV + 1);
    bg_expect(ex, exn, "offset ");
    return bg_done(out);
}

/* --- strings ------------------------------------------------------------ */

/* Offset of the length of string j of the valid tokens array. */
static inline size_t bg_token_at(const bg_layout *L, unsigned j)
{
    static const size_t lens[] = { 5, 3, 4, 5 }; /* "<unk>" "<s>" "</s>" "hello" */
    size_t at = L->kv_elems_at[BG_KV_TOKENS];
    for (unsigned k = 0; k < j; k++)
        at += 8 + lens[k];
    return at;
}

/* which: 0 key, 1 string value, 2 tensor name, 3 string inside an array.
 * len: the length written there; 0 stands for the file size. */
static inline bool bg_string_len(unsigned which, uint64_t len, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    if (len == 0)
        len = L.size;
    static const char *const what[] = { "key", "string value", "tensor name", "string value" };
    size_t at = which == 0 ? L.kv_at[BG_KV_NAME]
              : which == 1 ? L.kv_val_at[BG_KV_NAME]
              : which == 2 ? L.t_at[BG_T_FFN]
              : bg_token_at(&L, 2);
    bg_set_u64(out, at, len);
    bg_expect(ex, exn, "offset %zu: %s length %" PRIu64 " runs past the end of the file",
              at, what[which], len);
    return bg_done(out);
}

/* The string `which` (as in bg_string_len) claims the file size as length. */
static inline bool bg_build_string_past_eof(uint64_t which, bg_buf *out, char *ex, size_t exn)
{
    return bg_string_len((unsigned)which, 0, out, ex, exn);
}

/* The string `which` claims 2^64 - 1 bytes. */
static inline bool bg_build_string_len_max(uint64_t which, bg_buf *out, char *ex, size_t exn)
{
    return bg_string_len((unsigned)which, BG_U64MAX, out, ex, exn);
}

/* --- arrays ------------------------------------------------------------- */

/* The count of tokenizer.ggml.tokens (array of str) set to n. */
static inline bool bg_build_str_array_count(uint64_t n, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    bg_set_u64(out, L.kv_count_at[BG_KV_TOKENS], n);
    bg_expect(ex, exn, "offset %zu: array of %" PRIu64
              " strings for key 'tokenizer.ggml.tokens' cannot fit", L.kv_elems_at[BG_KV_TOKENS], n);
    return bg_done(out);
}

/* The count of tokenizer.ggml.scores (array of f32) set to n; 0 stands for
 * the smallest count whose elements run past the end of the file. */
static inline bool bg_build_f32_array_count(uint64_t n, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    if (n == 0)
        n = (L.size - L.kv_elems_at[BG_KV_SCORES]) / 4 + 1;
    bg_set_u64(out, L.kv_count_at[BG_KV_SCORES], n);
    bg_expect(ex, exn, "offset %zu: value of key 'tokenizer.ggml.scores' (%" PRIu64
              "*f32) runs past the end of the file", L.kv_elems_at[BG_KV_SCORES], n);
    return bg_done(out);
}

/* The count of tokenizer.ggml.token_type (array of i32) set to n. */
static inline bool bg_build_i32_array_count(uint64_t n, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    bg_set_u64(out, L.kv_count_at[BG_KV_TTYPE], n);
    bg_expect(ex, exn, "offset %zu: value of key 'tokenizer.ggml.token_type' (%" PRIu64
              "*i32) runs past the end of the file", L.kv_elems_at[BG_KV_TTYPE], n);
    return bg_done(out);
}

/* A string array whose count passes the 8-bytes-per-string bound but is
 * still larger than what follows: the strings run out part-way. */
static inline bool bg_build_str_array_count_fits(uint64_t arg, bg_buf *out, char *ex, size_t exn)
{
    (void)arg;
    bg_layout L = bg_valid_image(out);
    size_t at = L.kv_elems_at[BG_KV_TOKENS];
    bg_set_u64(out, L.kv_count_at[BG_KV_TOKENS], (L.size - at) / 8);
    bg_expect(ex, exn, "offset ");
    return bg_done(out);
}

static inline bool bg_build_nested_array(uint64_t arg, bg_buf *out, char *ex, size_t exn)
{
    (void)arg;
    bg_model m;
    bg_valid_model(&m);
    size_t i = m.n_kv;
    bg_add_arr(&m, "test.nested", BG_ARR, 1, NULL, NULL);
    bg_layout L = bg_write(&m, out);
    bg_expect(ex, exn, "offset %zu: key 'test.nested' is a nested array", L.kv_val_at[i]);
    return bg_done(out);
}

/* --- value types and values -------------------------------------------- */

static inline bool bg_build_value_type(uint64_t t, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    bg_set_u32(out, L.kv_type_at[BG_KV_CTX], (uint32_t)t);
    bg_expect(ex, exn, "offset %zu: key 'llama.context_length' has invalid value type %" PRIu64,
              L.kv_type_at[BG_KV_CTX], t);
    return bg_done(out);
}

static inline bool bg_build_elem_type(uint64_t t, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    bg_set_u32(out, L.kv_val_at[BG_KV_SCORES], (uint32_t)t);
    bg_expect(ex, exn, "offset %zu: key 'tokenizer.ggml.scores' has invalid array element type %"
              PRIu64, L.kv_val_at[BG_KV_SCORES], t);
    return bg_done(out);
}

/* arg: byte value; bit 8 set = inside the bool array (element 1). */
static inline bool bg_build_bool(uint64_t arg, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    uint8_t v = (uint8_t)arg;
    bool in_array = arg & 0x100;
    size_t at = in_array ? L.kv_elems_at[BG_KV_FLAGS] + 1 : L.kv_val_at[BG_KV_BOS];
    bg_set_u8(out, at, v);
    bg_expect(ex, exn, "offset %zu: key '%s' has bool value %u (must be 0 or 1)", at,
              in_array ? "test.flags" : "tokenizer.ggml.add_bos_token", v);
    return bg_done(out);
}

/* --- keys --------------------------------------------------------------- */

/* which 0: the second kv repeats the first key; 1: the last kv does. */
static inline bool bg_build_duplicate_key(uint64_t which, bg_buf *out, char *ex, size_t exn)
{
    bg_model m;
    bg_valid_model(&m);
    size_t i = which == 0 ? BG_KV_NAME : m.n_kv - 1;
    m.kv[i].key = m.kv[BG_KV_ARCH].key;
    m.kv[i].key_len = m.kv[BG_KV_ARCH].key_len;
    bg_layout L = bg_write(&m, out);
    bg_expect(ex, exn, "offset %zu: duplicate key 'general.architecture'", L.kv_at[i]);
    return bg_done(out);
}

static inline bool bg_build_empty_key(uint64_t arg, bg_buf *out, char *ex, size_t exn)
{
    (void)arg;
    bg_model m;
    bg_valid_model(&m);
    m.kv[BG_KV_NAME].key_len = 0;
    bg_layout L = bg_write(&m, out);
    bg_expect(ex, exn, "offset %zu: empty key", L.kv_at[BG_KV_NAME]);
    return bg_done(out);
}

/* An extra u8 kv whose key is `len` bytes ("test.kkkk..."); > 65535 is
 * rejected, 65535 accepted. */
static inline bool bg_build_key_len(uint64_t len, bg_buf *out, char *ex, size_t exn)
{
    char *key = malloc((size_t)len + 1);
    if (!key) {
        out->oom = true;
        return false;
    }
    memset(key, 'k', (size_t)len);
    memcpy(key, "test.", len < 5 ? (size_t)len : 5);
    key[len] = '\0';
    bg_model m;
    bg_valid_model(&m);
    size_t i = m.n_kv;
    bg_add_scalar(&m, key, BG_U8, 1);
    bg_layout L = bg_write(&m, out);
    free(key);
    if (len > 65535)
        bg_expect(ex, exn, "offset %zu: key of %" PRIu64 " bytes is longer than 65535", L.kv_at[i], len);
    else
        bg_expect(ex, exn, "%s", "");
    return bg_done(out);
}

/* which 0: a key with a NUL byte; 1: a tensor name with one. */
static inline bool bg_build_nul_in_name(uint64_t which, bg_buf *out, char *ex, size_t exn)
{
    bg_model m;
    bg_valid_model(&m);
    if (which == 0) {
        m.kv[BG_KV_NAME].key = "general\0name";
        m.kv[BG_KV_NAME].key_len = 12;
    } else {
        m.t[BG_T_EMBD].name = "token_embd\0weight";
        m.t[BG_T_EMBD].name_len = 17;
    }
    bg_layout L = bg_write(&m, out);
    if (which == 0)
        bg_expect(ex, exn, "offset %zu: key contains a NUL byte", L.kv_at[BG_KV_NAME]);
    else
        bg_expect(ex, exn, "offset %zu: tensor name contains a NUL byte", L.t_at[BG_T_EMBD]);
    return bg_done(out);
}

/* --- general.alignment -------------------------------------------------- */

/* general.alignment stored with value type t (u64, i32, str, array of u32). */
static inline bool bg_build_alignment_type(uint64_t t, bg_buf *out, char *ex, size_t exn)
{
    static const uint64_t a32[] = { 32 };
    bg_model m;
    bg_valid_model(&m);
    bg_kv *kv = &m.kv[BG_KV_ALIGN];
    kv->type = (uint32_t)t;
    kv->str = "32";
    kv->elem_type = BG_U32;
    kv->n = 1;
    kv->elems = a32;
    bg_layout L = bg_write(&m, out);
    const char *tn = t == BG_U64 ? "u64" : t == BG_I32 ? "i32" : t == BG_STR ? "str" : "arr of u32";
    bg_expect(ex, exn, "offset %zu: general.alignment is %s, must be u32", L.kv_at[BG_KV_ALIGN], tn);
    return bg_done(out);
}

static inline bool bg_build_alignment_value(uint64_t a, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    bg_set_u32(out, L.kv_val_at[BG_KV_ALIGN], (uint32_t)a);
    bg_expect(ex, exn, "offset %zu: general.alignment %" PRIu64 " is not a power of two",
              L.kv_at[BG_KV_ALIGN], a);
    return bg_done(out);
}

/* --- tensor infos ------------------------------------------------------- */

static inline bool bg_build_duplicate_tensor(uint64_t arg, bg_buf *out, char *ex, size_t exn)
{
    (void)arg;
    bg_model m;
    bg_valid_model(&m);
    m.t[BG_T_FFN].name = m.t[BG_T_EMBD].name;
    m.t[BG_T_FFN].name_len = m.t[BG_T_EMBD].name_len;
    bg_layout L = bg_write(&m, out);
    bg_expect(ex, exn, "offset %zu: duplicate tensor name 'token_embd.weight'", L.t_at[BG_T_FFN]);
    return bg_done(out);
}

/* Tensor 0 named with `len` bytes ("blk.xxx..."): 64 is rejected, 63 not. */
static inline bool bg_build_tensor_name_len(uint64_t len, bg_buf *out, char *ex, size_t exn)
{
    char name[128];
    if (len >= sizeof name)
        len = sizeof name - 1;
    memset(name, 'x', (size_t)len);
    memcpy(name, "blk.", len < 4 ? (size_t)len : 4);
    name[len] = '\0';
    bg_model m;
    bg_valid_model(&m);
    m.t[BG_T_EMBD].name = name;
    m.t[BG_T_EMBD].name_len = len;
    bg_layout L = bg_write(&m, out);
    if (len >= 64)
        bg_expect(ex, exn, "offset %zu: tensor name of %" PRIu64 " bytes is too long (limit 63)",
                  L.t_at[BG_T_EMBD], len);
    else
        bg_expect(ex, exn, "%s", "");
    return bg_done(out);
}

/* Tensor 0 with n_dims = n, all n dims written (ne beyond the first two are
 * 1), as the ggml n_dims overflow needed; n_dims of 2^32 - 1 is patched in
 * instead, since the dims cannot all be written. */
static inline bool bg_build_n_dims(uint64_t n, bg_buf *out, char *ex, size_t exn)
{
    bg_model m;
    bg_valid_model(&m);
    bg_tensor *t = &m.t[BG_T_EMBD];
    if (n <= 4096) {
        for (uint32_t j = 2; j < BG_MAX_DIMS; j++)
            t->ne[j] = 1;
        t->n_dims = (uint32_t)n;
    }
    bg_layout L = bg_write(&m, out);
    if (n > 4096)
        bg_set_u32(out, L.t_ndims_at[BG_T_EMBD], (uint32_t)n);
    bg_expect(ex, exn, "offset %zu: tensor 'token_embd.weight' has %" PRIu64 " dimensions (at most 4)",
              L.t_ndims_at[BG_T_EMBD], n);
    return bg_done(out);
}

/* Tensor 0's ne[1] = v >= 2^63. */
static inline bool bg_build_dim_range(uint64_t v, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    size_t at = L.t_ne_at[BG_T_EMBD] + 8;
    bg_set_u64(out, at, v);
    bg_expect(ex, exn, "offset %zu: tensor 'token_embd.weight' dimension 1 is %" PRIu64
              " (must be < 2^63)", at, v);
    return bg_done(out);
}

/* Tensor 0 (f32) with dims whose product overflows int64:
 * 0: [2^32, 2^32]   1: [2^16, 2^16, 2^16, 2^16]   2: [2^62, 2] */
static inline bool bg_build_nel_overflow(uint64_t which, bg_buf *out, char *ex, size_t exn)
{
    bg_model m;
    bg_valid_model(&m);
    bg_tensor *t = &m.t[BG_T_EMBD];
    if (which == 0) {
        t->ne[0] = t->ne[1] = 1ULL << 32;
    } else if (which == 1) {
        t->n_dims = 4;
        t->ne[0] = t->ne[1] = t->ne[2] = t->ne[3] = 1ULL << 16;
    } else {
        t->ne[0] = 1ULL << 62;
        t->ne[1] = 2;
    }
    bg_layout L = bg_write(&m, out);
    bg_expect(ex, exn, "offset %zu: tensor 'token_embd.weight' element count overflows int64",
              L.t_at[BG_T_EMBD]);
    return bg_done(out);
}

/* Element count fits int64 but the byte size does not fit uint64:
 * 0: f32 [2^62]: one row of 2^64 bytes   1: f32 [2^61, 2]: 2 rows of 2^63 */
static inline bool bg_build_nbytes_overflow(uint64_t which, bg_buf *out, char *ex, size_t exn)
{
    bg_model m;
    bg_valid_model(&m);
    bg_tensor *t = &m.t[BG_T_EMBD];
    if (which == 0) {
        t->n_dims = 1;
        t->ne[0] = 1ULL << 62;
    } else {
        t->ne[0] = 1ULL << 61;
        t->ne[1] = 2;
    }
    bg_layout L = bg_write(&m, out);
    bg_expect(ex, exn, "offset %zu: tensor 'token_embd.weight' %s size overflows",
              L.t_at[BG_T_EMBD], which == 0 ? "row" : "byte");
    return bg_done(out);
}

/* Tensor 0's type id = t: unknown (>= 39) or removed (4, 5, 31..33, 36..38). */
static inline bool bg_build_type_id(uint64_t t, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    size_t at = L.t_type_at[BG_T_EMBD];
    bg_set_u32(out, at, (uint32_t)t);
    bg_expect(ex, exn, "offset %zu: tensor 'token_embd.weight' has %s type id %" PRIu64, at,
              t >= 39 ? "unknown" : "removed", t);
    return bg_done(out);
}

/* The q8_0 tensor with ne[0] = n, not a multiple of its 32-element block. */
static inline bool bg_build_block_size(uint64_t n, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    bg_set_u64(out, L.t_ne_at[BG_T_FFN], n);
    bg_expect(ex, exn, "offset %zu: tensor 'blk.0.ffn_down.weight' of type q8_0 has %" PRIu64
              " elements per row, not a multiple of the block size 32", L.t_type_at[BG_T_FFN], n);
    return bg_done(out);
}

/* --- tensor data placement ---------------------------------------------- */

/* The q8_0 tensor's data offset = off, not a multiple of 32. */
static inline bool bg_build_offset_unaligned(uint64_t off, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    bg_set_u64(out, L.t_offset_at[BG_T_FFN], off);
    bg_expect(ex, exn, "offset %zu: tensor 'blk.0.ffn_down.weight' data offset %" PRIu64
              " is not a multiple of the alignment 32", L.t_offset_at[BG_T_FFN], off);
    return bg_done(out);
}

/* With general.alignment 64, an offset of 96 is 32- but not 64-aligned. */
static inline bool bg_build_offset_unaligned64(uint64_t arg, bg_buf *out, char *ex, size_t exn)
{
    (void)arg;
    bg_model m;
    bg_valid_model(&m);
    m.alignment = 64;
    m.kv[BG_KV_ALIGN].bits = 64;
    bg_layout L = bg_write(&m, out);
    bg_set_u64(out, L.t_offset_at[BG_T_FFN], 96);
    bg_expect(ex, exn, "offset %zu: tensor 'blk.0.ffn_down.weight' data offset 96 is not a "
              "multiple of the alignment 64", L.t_offset_at[BG_T_FFN]);
    return bg_done(out);
}

/* which 0: q8_0 at 32 inside f32's [0, 64); 1: both at 0;
 * 2: f32 moved to 64 inside q8_0 moved to [0, 68). */
static inline bool bg_build_overlap(uint64_t which, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    if (which == 0) {
        bg_set_u64(out, L.t_offset_at[BG_T_FFN], 32);
        bg_expect(ex, exn, "offset %zu: tensor 'blk.0.ffn_down.weight' data overlaps tensor "
                  "'token_embd.weight'", L.t_at[BG_T_FFN]);
    } else if (which == 1) {
        bg_set_u64(out, L.t_offset_at[BG_T_FFN], 0);
        bg_expect(ex, exn, "data overlaps tensor '");
    } else {
        bg_set_u64(out, L.t_offset_at[BG_T_EMBD], 64);
        bg_set_u64(out, L.t_offset_at[BG_T_FFN], 0);
        bg_expect(ex, exn, "offset %zu: tensor 'token_embd.weight' data overlaps tensor "
                  "'blk.0.ffn_down.weight'", L.t_at[BG_T_EMBD]);
    }
    return bg_done(out);
}

/* The q8_0 tensor's data offset = off (aligned), its data past the end. */
static inline bool bg_build_data_offset(uint64_t off, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    bg_set_u64(out, L.t_offset_at[BG_T_FFN], off);
    bg_expect(ex, exn, "offset %zu: tensor 'blk.0.ffn_down.weight' data (68 bytes at data offset %"
              PRIu64 ") runs past the end of the file", L.t_at[BG_T_FFN], off);
    return bg_done(out);
}

/* The valid file cut short: 0 one byte before the last tensor's data ends;
 * 1 right after the tensor infos, before the alignment padding. */
static inline bool bg_build_truncated(uint64_t which, bg_buf *out, char *ex, size_t exn)
{
    bg_layout L = bg_valid_image(out);
    if (which == 0) {
        out->len = L.data_end - 1;
        bg_expect(ex, exn, "offset %zu: tensor 'blk.0.ffn_down.weight' data (68 bytes at data "
                  "offset 64) runs past the end of the file", L.t_at[BG_T_FFN]);
    } else {
        out->len = L.infos_end;
        if (L.infos_end < L.data_at)
            bg_expect(ex, exn, "offset %zu: tensor data section starts past the end of the file",
                      L.data_at);
        else
            bg_expect(ex, exn, "runs past the end of the file");
    }
    return bg_done(out);
}

/* --- CVE-2024-* shapes (TALOS-2024-1912..1916 against ggml's gguf.c) ---- */

/* TALOS-2024-1912: an array's element buffer was malloc(n * elem_size),
 * which wraps. 0: str array, n = 2^60 + 1 (x16 bytes per gguf_str wraps to
 * 16); 1: f32 array, n = 2^62 + 1 (x4 wraps to 4). Elements follow. */
static inline bool bg_build_cve_2024_21825(uint64_t which, bg_buf *out, char *ex, size_t exn)
{
    if (which == 0)
        return bg_build_str_array_count((1ULL << 60) + 1, out, ex, exn);
    return bg_build_f32_array_count((1ULL << 62) + 1, out, ex, exn);
}

/* TALOS-2024-1913: gguf_fread_str did calloc(n + 1, 1), which for
 * n = 2^64 - 1 is calloc(0, 1), then read n bytes into it. which: key,
 * string value, tensor name, string in an array. */
static inline bool bg_build_cve_2024_23496(uint64_t which, bg_buf *out, char *ex, size_t exn)
{
    return bg_string_len((unsigned)which, BG_U64MAX, out, ex, exn);
}

/* TALOS-2024-1914: n_dims was not checked before reading n_dims dims into
 * ne[4]. n dims, all written. */
static inline bool bg_build_cve_2024_21802(uint64_t n, bg_buf *out, char *ex, size_t exn)
{
    return bg_build_n_dims(n, out, ex, exn);
}

/* TALOS-2024-1915: the tensor infos were malloc(n_tensors * 88), which wraps:
 * 209622091746699451 * 88 = 2^64 + 72 (0x1D1D1D1D1D1D1D1D is the value of a
 * public PoC; it wraps too). The rest of the file is intact. */
static inline bool bg_build_cve_2024_21836(uint64_t n, bg_buf *out, char *ex, size_t exn)
{
    return bg_build_tensor_count(n, out, ex, exn);
}

/* TALOS-2024-1916: the kvs were malloc(n_kv * 48), which wraps:
 * 0x0555555555555556 * 48 = 2^64 + 32, 0x0AAAAAAAAAAAAAAB * 48 = 2^65 + 16.
 * The rest of the file is intact. */
static inline bool bg_build_cve_2024_23605(uint64_t n, bg_buf *out, char *ex, size_t exn)
{
    return bg_build_kv_count(n, out, ex, exn);
}

/* ------------------------------------------------------------------------
 * The list
 * ------------------------------------------------------------------------ */

static inline const bg_case *bg_cases(size_t *count)
{
    static const bg_case cases[] = {
        /* accepted */
        { "valid", "valid", bg_build_valid, 3 },
        { "valid_v2", "valid", bg_build_valid, 2 },
        { "valid_align_64", "valid", bg_build_align64, 0 },
        { "valid_no_tensors", "valid", bg_build_no_tensors, 0 },
        { "valid_tensor_name_63", "tensor_name_length", bg_build_tensor_name_len, 63 },
        { "valid_key_65535", "key_length", bg_build_key_len, 65535 },
        /* header */
        { "magic_ggml", "bad_magic", bg_build_magic, 0 },
        { "magic_swapped", "bad_magic", bg_build_magic, 1 },
        { "magic_zero", "bad_magic", bg_build_magic, 2 },
        { "magic_lowercase", "bad_magic", bg_build_magic, 3 },
        { "version_0", "version_unsupported", bg_build_version, 0 },
        { "version_4", "version_unsupported", bg_build_version, 4 },
        { "version_ffffffff", "version_unsupported", bg_build_version, 0xFFFFFFFF },
        { "version_1", "version_1", bg_build_v1, 0 },
        { "big_endian_v3", "big_endian", bg_build_big_endian, 3 },
        { "big_endian_v2", "big_endian", bg_build_big_endian, 2 },
        { "short_0", "short_header", bg_build_short_header, 0 },
        { "short_3", "short_header", bg_build_short_header, 3 },
        { "short_4", "short_header", bg_build_short_header, 4 },
        { "short_7", "short_header", bg_build_short_header, 7 },
        { "short_8", "short_header", bg_build_short_header, 8 },
        { "short_15", "short_header", bg_build_short_header, 15 },
        { "short_16", "short_header", bg_build_short_header, 16 },
        { "short_23", "short_header", bg_build_short_header, 23 },
        { "tensor_count_2e63", "tensor_count", bg_build_tensor_count, BG_2E63 },
        { "tensor_count_max", "tensor_count", bg_build_tensor_count, BG_U64MAX },
        { "tensor_count_too_large", "tensor_count", bg_build_tensor_count, 0 },
        { "tensor_count_plus_one", "tensor_count", bg_build_count_plus_one, 0 },
        { "kv_count_2e63", "kv_count", bg_build_kv_count, BG_2E63 },
        { "kv_count_max", "kv_count", bg_build_kv_count, BG_U64MAX },
        { "kv_count_too_large", "kv_count", bg_build_kv_count, 0 },
        { "kv_count_plus_one", "kv_count", bg_build_count_plus_one, 1 },
        /* strings */
        { "key_past_eof", "string_past_eof", bg_build_string_past_eof, 0 },
        { "str_value_past_eof", "string_past_eof", bg_build_string_past_eof, 1 },
        { "tensor_name_past_eof", "string_past_eof", bg_build_string_past_eof, 2 },
        { "array_str_past_eof", "string_past_eof", bg_build_string_past_eof, 3 },
        { "key_len_max", "string_length_overflow", bg_build_string_len_max, 0 },
        { "str_value_len_max", "string_length_overflow", bg_build_string_len_max, 1 },
        { "tensor_name_len_max", "string_length_overflow", bg_build_string_len_max, 2 },
        { "array_str_len_max", "string_length_overflow", bg_build_string_len_max, 3 },
        /* arrays */
        { "array_str_count_1e6", "array_past_eof", bg_build_str_array_count, 1000000 },
        { "array_str_count_fits", "array_past_eof", bg_build_str_array_count_fits, 0 },
        { "array_f32_count_1e6", "array_past_eof", bg_build_f32_array_count, 1000000 },
        { "array_f32_count_just_past", "array_past_eof", bg_build_f32_array_count, 0 },
        { "array_str_count_max", "array_size_overflow", bg_build_str_array_count, BG_U64MAX },
        { "array_f32_count_wrap", "array_size_overflow", bg_build_f32_array_count, (1ULL << 62) + 1 },
        { "array_f32_count_max", "array_size_overflow", bg_build_f32_array_count, BG_U64MAX },
        { "array_i32_count_wrap0", "array_size_overflow", bg_build_i32_array_count, 1ULL << 62 },
        { "array_nested", "nested_array", bg_build_nested_array, 0 },
        /* value types and values */
        { "value_type_13", "value_type", bg_build_value_type, 13 },
        { "value_type_ffffffff", "value_type", bg_build_value_type, 0xFFFFFFFF },
        { "elem_type_13", "array_elem_type", bg_build_elem_type, 13 },
        { "elem_type_ffffffff", "array_elem_type", bg_build_elem_type, 0xFFFFFFFF },
        { "bool_2", "bool_value", bg_build_bool, 2 },
        { "bool_ff", "bool_value", bg_build_bool, 0xFF },
        { "bool_array_2", "bool_value", bg_build_bool, 0x100 | 2 },
        { "bool_array_ff", "bool_value", bg_build_bool, 0x100 | 0xFF },
        /* keys */
        { "duplicate_key_adjacent", "duplicate_key", bg_build_duplicate_key, 0 },
        { "duplicate_key_last", "duplicate_key", bg_build_duplicate_key, 1 },
        { "empty_key", "empty_key", bg_build_empty_key, 0 },
        { "key_65536", "key_length", bg_build_key_len, 65536 },
        { "key_nul", "nul_in_name", bg_build_nul_in_name, 0 },
        { "tensor_name_nul", "nul_in_name", bg_build_nul_in_name, 1 },
        /* general.alignment */
        { "alignment_u64", "alignment_type", bg_build_alignment_type, BG_U64 },
        { "alignment_i32", "alignment_type", bg_build_alignment_type, BG_I32 },
        { "alignment_str", "alignment_type", bg_build_alignment_type, BG_STR },
        { "alignment_array", "alignment_type", bg_build_alignment_type, BG_ARR },
        { "alignment_0", "alignment_pow2", bg_build_alignment_value, 0 },
        { "alignment_3", "alignment_pow2", bg_build_alignment_value, 3 },
        { "alignment_48", "alignment_pow2", bg_build_alignment_value, 48 },
        /* tensor infos */
        { "duplicate_tensor", "duplicate_tensor", bg_build_duplicate_tensor, 0 },
        { "tensor_name_64", "tensor_name_length", bg_build_tensor_name_len, 64 },
        { "tensor_name_100", "tensor_name_length", bg_build_tensor_name_len, 100 },
        { "n_dims_5", "n_dims", bg_build_n_dims, 5 },
        { "n_dims_ffffffff", "n_dims", bg_build_n_dims, 0xFFFFFFFF },
        { "dim_2e63", "dim_range", bg_build_dim_range, BG_2E63 },
        { "dim_max", "dim_range", bg_build_dim_range, BG_U64MAX },
        { "nel_2e32_x_2e32", "element_count_overflow", bg_build_nel_overflow, 0 },
        { "nel_2e16_x4", "element_count_overflow", bg_build_nel_overflow, 1 },
        { "nel_2e62_x2", "element_count_overflow", bg_build_nel_overflow, 2 },
        { "nbytes_row_overflow", "byte_size_overflow", bg_build_nbytes_overflow, 0 },
        { "nbytes_overflow", "byte_size_overflow", bg_build_nbytes_overflow, 1 },
        { "type_42", "unknown_type", bg_build_type_id, 42 },
        { "type_1000", "unknown_type", bg_build_type_id, 1000 },
        { "type_ffffffff", "unknown_type", bg_build_type_id, 0xFFFFFFFF },
        { "type_4_q4_2", "removed_type", bg_build_type_id, 4 },
        { "type_5_q4_3", "removed_type", bg_build_type_id, 5 },
        { "type_31_q4_0_4_4", "removed_type", bg_build_type_id, 31 },
        { "type_36_iq4_nl_4_4", "removed_type", bg_build_type_id, 36 },
        { "q8_0_ne0_33", "block_size", bg_build_block_size, 33 },
        { "q8_0_ne0_16", "block_size", bg_build_block_size, 16 },
        /* data placement */
        { "offset_unaligned_68", "offset_unaligned", bg_build_offset_unaligned, 68 },
        { "offset_unaligned_1", "offset_unaligned", bg_build_offset_unaligned, 1 },
        { "offset_unaligned_align64", "offset_unaligned", bg_build_offset_unaligned64, 0 },
        { "overlap_inside", "overlap", bg_build_overlap, 0 },
        { "overlap_same_offset", "overlap", bg_build_overlap, 1 },
        { "overlap_swapped", "overlap", bg_build_overlap, 2 },
        { "data_past_eof_96", "data_past_eof", bg_build_data_offset, 96 },
        { "data_past_eof_1m", "data_past_eof", bg_build_data_offset, 1u << 20 },
        { "truncated_data", "data_past_eof", bg_build_truncated, 0 },
        { "truncated_before_data", "data_past_eof", bg_build_truncated, 1 },
        { "offset_size_wrap", "offset_size_overflow", bg_build_data_offset, 0xFFFFFFFFFFFFFFE0ULL },
        { "offset_2e63", "offset_size_overflow", bg_build_data_offset, BG_2E63 },
        /* CVE reproductions */
        { "cve_2024_21825_str_array", "cve_2024_21825", bg_build_cve_2024_21825, 0 },
        { "cve_2024_21825_f32_array", "cve_2024_21825", bg_build_cve_2024_21825, 1 },
        { "cve_2024_23496_key", "cve_2024_23496", bg_build_cve_2024_23496, 0 },
        { "cve_2024_23496_str_value", "cve_2024_23496", bg_build_cve_2024_23496, 1 },
        { "cve_2024_23496_tensor_name", "cve_2024_23496", bg_build_cve_2024_23496, 2 },
        { "cve_2024_23496_array_str", "cve_2024_23496", bg_build_cve_2024_23496, 3 },
        { "cve_2024_21802_n_dims_5", "cve_2024_21802", bg_build_cve_2024_21802, 5 },
        { "cve_2024_21802_n_dims_255", "cve_2024_21802", bg_build_cve_2024_21802, 255 },
        { "cve_2024_21802_n_dims_4096", "cve_2024_21802", bg_build_cve_2024_21802, 4096 },
        { "cve_2024_21836_wrap_72", "cve_2024_21836", bg_build_cve_2024_21836, 209622091746699451ULL },
        { "cve_2024_21836_1d1d", "cve_2024_21836", bg_build_cve_2024_21836, 0x1D1D1D1D1D1D1D1DULL },
        { "cve_2024_23605_wrap_32", "cve_2024_23605", bg_build_cve_2024_23605, 0x0555555555555556ULL },
        { "cve_2024_23605_wrap_16", "cve_2024_23605", bg_build_cve_2024_23605, 0x0AAAAAAAAAAAAAABULL },
    };
    *count = sizeof cases / sizeof cases[0];
    return cases;
}

#endif
