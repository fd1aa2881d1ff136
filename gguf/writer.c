/*
 * writer.c — streaming GGUF writer (see writer.h for the call sequence).
 *
 * Metadata is kept serialized (key string, value type, value bytes exactly as
 * they go to disk), so copying a kv from a reader is a byte copy and the
 * header is written in one piece. Tensor data is never held: callers hand it
 * over tensor by tensor and it goes straight to the temporary file.
 */
#include <ggufkit/gguf.h>

#include <inttypes.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <ggufkit/arch.h>
#include "outfile.h"

/* ------------------------------------------------------------------------
 * A growable byte buffer for serialized metadata and headers
 * ------------------------------------------------------------------------ */

typedef struct bbuf {
    uint8_t *p;
    size_t   n, cap;
    bool     oom;
} bbuf;

static void bb_put(bbuf *b, const void *data, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void bb_u32(bbuf *b, uint32_t v) { bb_put(b, &v, 4); }
static void bb_u64(bbuf *b, uint64_t v) { bb_put(b, &v, 8); }
static void bb_str(bbuf *b, const char *s, uint64_t n)
{
    bb_u64(b, n);
    bb_put(b, s, n);
}
static void bb_pad(bbuf *b, uint64_t align)
{
    static const uint8_t zeros[64];
    while (b->n % align) {
        size_t k = align - b->n % align;
        bb_put(b, zeros, k < sizeof zeros ? k : sizeof zeros);
    }
}

/* ------------------------------------------------------------------------
 * Writer state
 * ------------------------------------------------------------------------ */

typedef struct wkv {
    char    *key;
    uint8_t *bytes; /* key + type + value, as on disk */
    size_t   nbytes;
    uint32_t type;  /* value type, for alignment lookup */
} wkv;

typedef struct wtensor {
    char    *name;
    uint32_t type, n_dims;
    int64_t  ne[GGUF_MAX_DIMS];
    uint64_t nbytes;
    uint64_t offset; /* within its shard's data section */
    uint32_t shard;
} wtensor;

struct gguf_writer {
    uint32_t version;
    wkv     *kvs;
    size_t   n_kv, cap_kv;
    uint32_t *kv_slots; /* open addressing over kvs: index + 1, 0 empty */
    size_t   kv_mask;   /* slots - 1 (a power of two, at least twice n_kv) */
    wtensor *ts;
    uint64_t n_t, cap_t;

    uint64_t split_max_tensors, split_max_bytes;
    bool     explicit_shards; /* shards given per tensor (keep-split) */
    bool     split_keys;      /* split.* keys even for one shard */
    uint32_t n_shards;
    char   **paths;
    gguf_outfile *outs;

    bool     begun, failed, completed;
    bool     pad_empty; /* pad the header even when there are no tensors */
    uint32_t alignment;
    uint64_t cur;      /* tensor being written */
    uint64_t cur_done; /* bytes of it written */
    gguf_error setter_err; /* the first failed setter (msg empty: none) */
};

gguf_writer *gguf_writer_new(void)
{
    gguf_writer *w = calloc(1, sizeof *w);
    if (w)
        w->version = 3;
    return w;
}

void gguf_writer_set_version(gguf_writer *w, uint32_t version) { w->version = version; }

void gguf_writer_set_pad_empty(gguf_writer *w, bool pad) { w->pad_empty = pad; }

static void free_outputs(gguf_writer *w)
{
    for (uint32_t s = 0; s < w->n_shards; s++) {
        if (w->outs)
            gguf_outfile_discard(&w->outs[s]);
        if (w->paths)
            free(w->paths[s]);
    }
    free(w->outs);
    free(w->paths);
    w->outs = NULL;
    w->paths = NULL;
}

void gguf_writer_abort(gguf_writer *w)
{
    free_outputs(w);
    w->begun = false;
}

void gguf_writer_free(gguf_writer *w)
{
    if (!w)
        return;
    gguf_writer_abort(w);
    for (size_t i = 0; i < w->n_kv; i++) {
        free(w->kvs[i].key);
        free(w->kvs[i].bytes);
    }
    for (uint64_t i = 0; i < w->n_t; i++)
        free(w->ts[i].name);
    free(w->kvs);
    free(w->kv_slots);
    free(w->ts);
    free(w);
}

/* ------------------------------------------------------------------------
 * Metadata
 * ------------------------------------------------------------------------ */

/* Keys are found through a hash table, so that setting n keys is O(n),
 * not O(n^2) (gguf-edit --from-json sets hundreds of thousands). */
static uint64_t key_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

/* The slot for key: its kv's, or the empty one where it would go. */
static uint32_t *kv_slot(const gguf_writer *w, const char *key)
{
    for (size_t i = key_hash(key) & w->kv_mask;; i = (i + 1) & w->kv_mask) {
        uint32_t *slot = &w->kv_slots[i];
        if (!*slot || strcmp(w->kvs[*slot - 1].key, key) == 0)
            return slot;
    }
}

/* Rebuilds the table for at least n keys. 0, or -1 (out of memory: the
 * old table stays). */
static int kv_reindex(gguf_writer *w, size_t n)
{
    size_t cap = 64;
    while (cap < 2 * n)
        cap *= 2;
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    free(w->kv_slots);
    w->kv_slots = slots;
    w->kv_mask = cap - 1;
    for (size_t i = 0; i < w->n_kv; i++)
        *kv_slot(w, w->kvs[i].key) = (uint32_t)i + 1;
    return 0;
}

static wkv *find_wkv(const gguf_writer *w, const char *key)
{
    if (!w->kv_slots)
        return NULL;
    uint32_t *slot = kv_slot(w, key);
    return *slot ? &w->kvs[*slot - 1] : NULL;
}

bool gguf_writer_has_kv(const gguf_writer *w, const char *key) { return find_wkv(w, key) != NULL; }

void gguf_writer_remove_kv(gguf_writer *w, const char *key)
{
    wkv *kv = find_wkv(w, key);
    if (!kv)
        return;
    free(kv->key);
    free(kv->bytes);
    size_t i = (size_t)(kv - w->kvs);
    memmove(kv, kv + 1, (w->n_kv - i - 1) * sizeof *kv);
    w->n_kv--;
    /* the indices after it moved: same size, so only the table's memory can fail */
    if (kv_reindex(w, w->n_kv)) {
        memset(w->kv_slots, 0, (w->kv_mask + 1) * sizeof *w->kv_slots);
        for (size_t k = 0; k < w->n_kv; k++)
            *kv_slot(w, w->kvs[k].key) = (uint32_t)k + 1;
    }
}

/* Records the first failure of a setter (gguf_writer_error reports it). */
static int setter_fail(gguf_writer *w, int code, const char *key, const char *what)
{
    char pb[48];
    if (!w->setter_err.msg[0])
        gguf_error_setc(&w->setter_err, code, "key '%s': %s",
                        gguf_error_preview(key, strlen(key), pb), what);
    return -1;
}

const gguf_error *gguf_writer_error(const gguf_writer *w)
{
    return w->setter_err.msg[0] ? &w->setter_err : NULL;
}

/* Stores a serialized kv (b holds key+type+value), replacing any old value. */
static int put_kv(gguf_writer *w, const char *key, uint32_t type, bbuf *b)
{
    if (b->oom)
        goto fail;
    wkv *kv = find_wkv(w, key);
    if (kv) {
        free(kv->bytes);
    } else {
        if (w->n_kv >= UINT32_MAX - 1 ||
            (2 * (w->n_kv + 1) > w->kv_mask + 1 && kv_reindex(w, w->n_kv + 1)))
            goto fail;
        if (w->n_kv == w->cap_kv) {
            size_t cap = w->cap_kv ? 2 * w->cap_kv : 32;
            wkv *p = realloc(w->kvs, cap * sizeof *p);
            if (!p)
                goto fail;
            w->kvs = p;
            w->cap_kv = cap;
        }
        kv = &w->kvs[w->n_kv];
        if (!(kv->key = strdup(key)))
            goto fail;
        *kv_slot(w, key) = (uint32_t)w->n_kv + 1;
        w->n_kv++;
    }
    kv->bytes = b->p;
    kv->nbytes = b->n;
    kv->type = type;
    return 0;
fail:
    free(b->p);
    return setter_fail(w, GGUF_ERR_NOMEM, key, "out of memory");
}

static bool key_ok(gguf_writer *w, const char *key)
{
    if (!key)
        return setter_fail(w, GGUF_ERR_ARG, "(null)", "no key given") == 0;
    size_t n = strlen(key);
    if (n > 0 && n <= GGUF_MAX_KEY)
        return true;
    setter_fail(w, GGUF_ERR_ARG, key, n ? "longer than 65535 bytes" : "empty key");
    return false;
}

static int set_scalar(gguf_writer *w, const char *key, uint32_t type, const void *v)
{
    if (!key_ok(w, key))
        return -1;
    bbuf b = { 0 };
    bb_str(&b, key, strlen(key));
    bb_u32(&b, type);
    bb_put(&b, v, gguf_vtype_size(type));
    return put_kv(w, key, type, &b);
}

#define SETTER(fn, ctype, vt) \
    int fn(gguf_writer *w, const char *key, ctype v) { return set_scalar(w, key, vt, &v); }
SETTER(gguf_writer_set_u8, uint8_t, GGUF_VT_U8)
SETTER(gguf_writer_set_i8, int8_t, GGUF_VT_I8)
SETTER(gguf_writer_set_u16, uint16_t, GGUF_VT_U16)
SETTER(gguf_writer_set_i16, int16_t, GGUF_VT_I16)
SETTER(gguf_writer_set_u32, uint32_t, GGUF_VT_U32)
SETTER(gguf_writer_set_i32, int32_t, GGUF_VT_I32)
SETTER(gguf_writer_set_u64, uint64_t, GGUF_VT_U64)
SETTER(gguf_writer_set_i64, int64_t, GGUF_VT_I64)
SETTER(gguf_writer_set_f32, float, GGUF_VT_F32)
SETTER(gguf_writer_set_f64, double, GGUF_VT_F64)

int gguf_writer_set_bool(gguf_writer *w, const char *key, bool v)
{
    uint8_t b = v ? 1 : 0;
    return set_scalar(w, key, GGUF_VT_BOOL, &b);
}

int gguf_writer_set_strn(gguf_writer *w, const char *key, const char *v, uint64_t len)
{
    if (!key_ok(w, key))
        return -1;
    bbuf b = { 0 };
    bb_str(&b, key, strlen(key));
    bb_u32(&b, GGUF_VT_STR);
    bb_str(&b, v, len);
    return put_kv(w, key, GGUF_VT_STR, &b);
}

int gguf_writer_set_str(gguf_writer *w, const char *key, const char *v)
{
    return gguf_writer_set_strn(w, key, v, strlen(v));
}

int gguf_writer_set_array(gguf_writer *w, const char *key, uint32_t elem, const void *data, uint64_t n)
{
    uint32_t esz = gguf_vtype_size(elem);
    if (!key_ok(w, key))
        return -1;
    if (esz == 0)
        return setter_fail(w, GGUF_ERR_ARG, key, "array element type must be a fixed-size value type");
    if (n > SIZE_MAX / esz)
        return setter_fail(w, GGUF_ERR_LIMIT, key, "array too large");
    bbuf b = { 0 };
    bb_str(&b, key, strlen(key));
    bb_u32(&b, GGUF_VT_ARR);
    bb_u32(&b, elem);
    bb_u64(&b, n);
    bb_put(&b, data, (size_t)n * esz);
    return put_kv(w, key, GGUF_VT_ARR, &b);
}

int gguf_writer_set_str_array(gguf_writer *w, const char *key, const char *const *strs,
                              const uint64_t *lens, uint64_t n)
{
    if (!key_ok(w, key))
        return -1;
    bbuf b = { 0 };
    bb_str(&b, key, strlen(key));
    bb_u32(&b, GGUF_VT_ARR);
    bb_u32(&b, GGUF_VT_STR);
    bb_u64(&b, n);
    for (uint64_t i = 0; i < n; i++)
        bb_str(&b, strs[i], lens ? lens[i] : strlen(strs[i]));
    return put_kv(w, key, GGUF_VT_ARR, &b);
}

int gguf_writer_copy_kv(gguf_writer *w, const gguf_kv *kv)
{
    if (!key_ok(w, kv->key))
        return -1;
    bbuf b = { 0 };
    bb_str(&b, kv->key, kv->key_len);
    bb_u32(&b, kv->type);
    if (kv->type == GGUF_VT_ARR) {
        bb_u32(&b, kv->elem_type);
        bb_u64(&b, kv->n);
    }
    if (kv->elem_type == GGUF_VT_STR) {
        for (uint64_t i = 0; i < kv->n; i++)
            bb_str(&b, kv->strs[i].ptr, kv->strs[i].len);
    } else {
        bb_put(&b, kv->data, (size_t)(kv->n * gguf_vtype_size(kv->elem_type)));
    }
    return put_kv(w, kv->key, kv->type, &b);
}

bool gguf_writer_find_value(const gguf_writer *w, const char *key, gguf_writer_value *out)
{
    const wkv *kv = find_wkv(w, key);
    if (!kv)
        return false;
    /* kv->bytes: u64 key length, key, u32 type, [u32 elem type, u64 n], value */
    uint64_t klen;
    memcpy(&klen, kv->bytes, 8);
    size_t at = 8 + (size_t)klen + 4;
    *out = (gguf_writer_value){ .type = kv->type, .elem_type = kv->type, .n = 1 };
    if (kv->type == GGUF_VT_ARR) {
        memcpy(&out->elem_type, kv->bytes + at, 4);
        memcpy(&out->n, kv->bytes + at + 4, 8);
        at += 12;
    }
    out->bytes = kv->bytes + at;
    out->size = kv->nbytes - at;
    return true;
}

/* ------------------------------------------------------------------------
 * Tensors
 * ------------------------------------------------------------------------ */

int64_t gguf_writer_add_tensor(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                               const int64_t *ne, gguf_error *err)
{
    size_t len = strlen(name);
    if (len >= GGUF_MAX_NAME)
        return gguf_error_setc(err, GGUF_ERR_LIMIT, "tensor name '%s' is too long (limit %d bytes)", name,
                              GGUF_MAX_NAME - 1);
    if (n_dims > GGUF_MAX_DIMS)
        return gguf_error_setc(err, GGUF_ERR_ARG, "tensor '%s' has %" PRIu32 " dimensions", name, n_dims);
    for (uint64_t i = 0; i < w->n_t; i++)
        if (strcmp(w->ts[i].name, name) == 0)
            return gguf_error_setc(err, GGUF_ERR_ARG, "duplicate tensor name '%s'", name);
    wtensor t = { .type = type, .n_dims = n_dims, .ne = { 1, 1, 1, 1 } };
    int64_t rows = 1;
    for (uint32_t j = 0; j < n_dims; j++) {
        if (ne[j] < 0)
            return gguf_error_setc(err, GGUF_ERR_ARG, "tensor '%s' has a negative dimension", name);
        t.ne[j] = ne[j];
        if (j > 0) {
            if (ne[j] && rows > INT64_MAX / ne[j])
                return gguf_error_setc(err, GGUF_ERR_LIMIT, "tensor '%s' is too large", name);
            rows *= ne[j];
        }
    }
    uint64_t row;
    if (gguf_row_size(type, t.ne[0], &row, NULL))
        return gguf_error_setc(err, GGUF_ERR_ARG, "tensor '%s': type %s cannot hold rows of %" PRId64 " elements",
                              name, gguf_dtype_name(type), t.ne[0]);
    if (rows && row > UINT64_MAX / (uint64_t)rows)
        return gguf_error_setc(err, GGUF_ERR_LIMIT, "tensor '%s' is too large", name);
    t.nbytes = row * (uint64_t)rows;
    if (w->n_t == w->cap_t) {
        uint64_t cap = w->cap_t ? 2 * w->cap_t : 64;
        wtensor *p = realloc(w->ts, cap * sizeof *p);
        if (!p)
            return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        w->ts = p;
        w->cap_t = cap;
    }
    if (!(t.name = strdup(name)))
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    w->ts[w->n_t] = t;
    return (int64_t)w->n_t++;
}

uint64_t gguf_writer_n_tensors(const gguf_writer *w) { return w->n_t; }

uint64_t gguf_writer_tensor_nbytes(const gguf_writer *w, uint64_t i)
{
    return i < w->n_t ? w->ts[i].nbytes : 0;
}

bool gguf_writer_tensor_at(const gguf_writer *w, uint64_t i, gguf_writer_tensor *out)
{
    if (i >= w->n_t)
        return false;
    const wtensor *t = &w->ts[i];
    *out = (gguf_writer_tensor){ t->name, t->type, t->n_dims,
                                 { t->ne[0], t->ne[1], t->ne[2], t->ne[3] } };
    return true;
}

void gguf_writer_set_split_keys(gguf_writer *w, bool keys)
{
    w->split_keys = keys;
}

void gguf_writer_set_split(gguf_writer *w, uint64_t max_tensors, uint64_t max_bytes)
{
    w->split_max_tensors = max_tensors;
    w->split_max_bytes = max_bytes;
}

uint32_t gguf_writer_n_shards(const gguf_writer *w) { return w->n_shards; }

const char *gguf_writer_shard_path(const gguf_writer *w, uint32_t i)
{
    return w->paths && i < w->n_shards ? w->paths[i] : NULL;
}

/* ------------------------------------------------------------------------
 * Output
 * ------------------------------------------------------------------------ */

static uint64_t pad_to(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

static int read_alignment(gguf_writer *w, gguf_error *err)
{
    w->alignment = GGUF_DEFAULT_ALIGNMENT;
    const wkv *kv = find_wkv(w, GGUF_KEY_ALIGNMENT);
    if (!kv)
        return 0;
    if (kv->type != GGUF_VT_U32)
        return gguf_error_setc(err, GGUF_ERR_ARG, "general.alignment must be u32");
    memcpy(&w->alignment, kv->bytes + kv->nbytes - 4, 4);
    if (w->alignment == 0 || (w->alignment & (w->alignment - 1)))
        return gguf_error_setc(err, GGUF_ERR_ARG, "general.alignment %" PRIu32 " is not a power of two", w->alignment);
    return 0;
}

/* Assigns tensors to shards (unless given explicitly) and offsets within
 * each shard's data section. */
static int plan_shards(gguf_writer *w, gguf_error *err)
{
    uint32_t shard = 0;
    uint64_t in_shard = 0, bytes = 0;
    for (uint64_t i = 0; i < w->n_t; i++) {
        wtensor *t = &w->ts[i];
        uint64_t sz = pad_to(t->nbytes, w->alignment);
        bool next;
        if (w->explicit_shards) {
            if (t->shard != shard && t->shard != shard + 1)
                return gguf_error_setc(err, GGUF_ERR_ARG, "tensor '%s': shard %u out of order", t->name, t->shard);
            next = t->shard != shard;
        } else {
            next = in_shard > 0 &&
                   ((w->split_max_tensors && in_shard >= w->split_max_tensors) ||
                    (w->split_max_bytes && bytes + sz > w->split_max_bytes));
        }
        if (next) {
            shard++;
            in_shard = 0;
            bytes = 0;
        }
        t->shard = shard;
        t->offset = bytes;
        bytes += sz;
        in_shard++;
    }
    w->n_shards = shard + 1;
    return 0;
}

int gguf_writer_set_tensor_shard(gguf_writer *w, uint64_t i, uint32_t shard)
{
    if (i >= w->n_t || w->begun) {
        if (!w->setter_err.msg[0])
            gguf_error_setc(&w->setter_err, GGUF_ERR_ARG, "tensor %" PRIu64 ": %s", i,
                            w->begun ? "shard set after begin" : "no such tensor");
        return -1;
    }
    w->ts[i].shard = shard;
    w->explicit_shards = true;
    return 0;
}

/* Serializes the header of shard s (everything before its tensor data). */
static int shard_header(const gguf_writer *w, uint32_t s, bbuf *b)
{
    bool split = w->n_shards > 1 || w->split_keys;
    uint64_t n_t = 0, first = UINT64_MAX;
    for (uint64_t i = 0; i < w->n_t; i++)
        if (w->ts[i].shard == s) {
            n_t++;
            if (first == UINT64_MAX)
                first = i;
        }
    uint64_t n_kv = (s == 0 ? w->n_kv : 0) + (split ? 3 : 0);
    bb_put(b, GGUF_MAGIC, 4);
    bb_u32(b, w->version);
    bb_u64(b, n_t);
    bb_u64(b, n_kv);
    /* the split keys after the model's keys, in llama-gguf-split's order
     * (it sets split.count last, once it knows it) */
    if (s == 0)
        for (size_t i = 0; i < w->n_kv; i++)
            bb_put(b, w->kvs[i].bytes, w->kvs[i].nbytes);
    if (split) {
        uint16_t no = (uint16_t)s, count = (uint16_t)w->n_shards;
        int32_t total = (int32_t)w->n_t;
        bb_str(b, GGUF_KEY_SPLIT_NO, strlen(GGUF_KEY_SPLIT_NO));
        bb_u32(b, GGUF_VT_U16);
        bb_put(b, &no, 2);
        bb_str(b, GGUF_KEY_SPLIT_TENSORS, strlen(GGUF_KEY_SPLIT_TENSORS));
        bb_u32(b, GGUF_VT_I32);
        bb_put(b, &total, 4);
        bb_str(b, GGUF_KEY_SPLIT_COUNT, strlen(GGUF_KEY_SPLIT_COUNT));
        bb_u32(b, GGUF_VT_U16);
        bb_put(b, &count, 2);
    }
    for (uint64_t i = first; n_t && i < w->n_t && w->ts[i].shard == s; i++) {
        const wtensor *t = &w->ts[i];
        bb_str(b, t->name, strlen(t->name));
        bb_u32(b, t->n_dims);
        for (uint32_t j = 0; j < t->n_dims; j++)
            bb_u64(b, (uint64_t)t->ne[j]);
        bb_u32(b, t->type);
        bb_u64(b, t->offset);
    }
    /* gguf-py (which writes llama.cpp's vocab files) leaves a tensor-less
     * header unpadded; ggml's own writer pads it, and so does
     * llama-gguf-split a metadata-only first shard. */
    if (n_t > 0 || w->pad_empty || split)
        bb_pad(b, w->alignment);
    return b->oom ? -1 : 0;
}

static int open_shard(gguf_writer *w, uint32_t s, gguf_error *err)
{
    bbuf b = { 0 };
    int rc = -1;
    if (gguf_outfile_open(&w->outs[s], w->paths[s], err))
        return -1;
    if (shard_header(w, s, &b)) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        goto done;
    }
    rc = gguf_outfile_write(&w->outs[s], b.p, b.n, err);
done:
    free(b.p);
    return rc;
}

static int make_paths(gguf_writer *w, const char *path, gguf_error *err)
{
    w->paths = calloc(w->n_shards, sizeof *w->paths);
    w->outs = calloc(w->n_shards, sizeof *w->outs);
    if (!w->paths || !w->outs)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    if (w->n_shards == 1) {
        w->paths[0] = strdup(path);
        return w->paths[0] ? 0 : gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    }
    /* "out.gguf" or "out-00001-of-00003.gguf" → prefix "out". */
    size_t plen = strlen(path);
    uint32_t no, count;
    if (!gguf_split_parse_name(path, &no, &count, &plen) && plen > 5 &&
        strcmp(path + plen - 5, ".gguf") == 0)
        plen -= 5;
    char *prefix = strndup(path, plen);
    if (!prefix)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    for (uint32_t s = 0; s < w->n_shards; s++) {
        size_t n = plen + 32;
        if (!(w->paths[s] = malloc(n))) {
            free(prefix);
            return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        }
        gguf_split_name(w->paths[s], n, prefix, s + 1, w->n_shards);
    }
    free(prefix);
    return 0;
}

int gguf_writer_begin(gguf_writer *w, const char *path, gguf_error *err)
{
    if (w->begun)
        return gguf_error_setc(err, GGUF_ERR_ARG, "writer already started");
    if (read_alignment(w, err))
        return -1;
    if (plan_shards(w, err))
        return -1;
    if (w->n_shards > UINT16_MAX || w->n_t > INT32_MAX)
        return gguf_error_setc(err, GGUF_ERR_LIMIT, "too many shards or tensors for a split");
    if (make_paths(w, path, err) || open_shard(w, 0, err)) {
        free_outputs(w);
        return -1;
    }
    /* a first shard without tensors (gguf-split --no-tensor-first-split):
     * the first tensor's shard is opened now, not at a tensor boundary */
    for (uint32_t s = 1; w->n_t > 0 && s <= w->ts[0].shard; s++)
        if (gguf_outfile_sync(&w->outs[s - 1], err) || open_shard(w, s, err)) {
            free_outputs(w);
            return -1;
        }
    w->begun = true;
    w->failed = false;
    w->completed = false;
    w->cur = 0;
    w->cur_done = 0;
    return 0;
}

/* Pads after tensor cur and moves to the next, opening its shard if new. */
static int next_tensor(gguf_writer *w, gguf_error *err)
{
    static const uint8_t zeros[256];
    const wtensor *t = &w->ts[w->cur];
    gguf_outfile *o = &w->outs[t->shard];
    uint64_t pad = pad_to(t->nbytes, w->alignment) - t->nbytes;
    while (pad) {
        size_t k = pad < sizeof zeros ? (size_t)pad : sizeof zeros;
        if (gguf_outfile_write(o, zeros, k, err))
            return -1;
        pad -= k;
    }
    w->cur++;
    w->cur_done = 0;
    if (w->cur < w->n_t && w->ts[w->cur].shard != t->shard) {
        if (gguf_outfile_sync(o, err))
            return -1;
        return open_shard(w, w->ts[w->cur].shard, err);
    }
    return 0;
}

int gguf_writer_write_tensor(gguf_writer *w, const void *data, size_t n, gguf_error *err)
{
    const uint8_t *p = data;
    if (!w->begun || w->failed)
        return gguf_error_setc(err, GGUF_ERR_ARG, "writer not started or already failed");
    while (n > 0 || (w->cur < w->n_t && w->ts[w->cur].nbytes == 0)) {
        if (w->cur >= w->n_t) {
            w->failed = true;
            return gguf_error_setc(err, GGUF_ERR_ARG, "more tensor data than declared");
        }
        const wtensor *t = &w->ts[w->cur];
        uint64_t want = t->nbytes - w->cur_done;
        size_t k = n < want ? n : (size_t)want;
        if (gguf_outfile_write(&w->outs[t->shard], p, k, err))
            goto fail;
        p += k;
        n -= k;
        w->cur_done += k;
        if (w->cur_done == t->nbytes && next_tensor(w, err))
            goto fail;
    }
    return 0;
fail:
    w->failed = true;
    return -1;
}

int gguf_writer_copy_tensor(gguf_writer *w, const gguf_file *f, const gguf_tensor *t,
                            gguf_error *err)
{
    /* zero-byte tensors before this one complete without data */
    if (gguf_writer_write_tensor(w, NULL, 0, err))
        return -1;
    if (w->cur >= w->n_t || w->cur_done != 0 || w->ts[w->cur].nbytes != t->nbytes) {
        w->failed = true;
        return gguf_error_setc(err, GGUF_ERR_ARG, "tensor '%s': not the next tensor to write, or "
                               "of another size", t->name);
    }
    /* From the descriptor the reader holds, never by reopening the path:
     * another process may have renamed a new file over it since (a
     * concurrent in-place edit), whose bytes at these offsets are not this
     * tensor's. */
    const int fd = gguf_shard_fd(f, t->shard);
    if (fd < 0) /* a memory image: from the mapping */
        return gguf_writer_write_tensor(w, t->data, (size_t)t->nbytes, err);
    const uint64_t off = gguf_data_offset(f, t->shard) + t->offset;
    int rc = gguf_outfile_copy_fd(&w->outs[w->ts[w->cur].shard], fd, off, t->nbytes, err);
    if (rc == 0) {
        w->cur_done = t->nbytes;
        rc = next_tensor(w, err);
    }
    if (rc)
        w->failed = true;
    return rc;
}

int gguf_writer_complete(gguf_writer *w, gguf_error *err)
{
    if (!w->begun || w->failed)
        return gguf_error_setc(err, GGUF_ERR_ARG, "writer not started or already failed");
    if (w->completed)
        return 0;
    /* Zero-byte tensors at the end complete without data. */
    if (gguf_writer_write_tensor(w, NULL, 0, err))
        goto fail;
    if (w->cur != w->n_t) {
        gguf_error_setc(err, GGUF_ERR_ARG, "tensor '%s' was not written completely", w->ts[w->cur].name);
        goto fail;
    }
    for (uint32_t s = 0; s < w->n_shards; s++)
        if (gguf_outfile_sync(&w->outs[s], err))
            goto fail;
    w->completed = true;
    return 0;
fail:
    gguf_writer_abort(w);
    return -1;
}

const char *gguf_writer_temp_path(const gguf_writer *w, uint32_t i)
{
    return w->begun && i < w->n_shards ? w->outs[i].tmp_path : NULL;
}

int gguf_writer_finish(gguf_writer *w, gguf_error *err)
{
    if (gguf_writer_complete(w, err))
        return -1;
    for (uint32_t s = 0; s < w->n_shards; s++)
        if (gguf_outfile_commit(&w->outs[s], err))
            goto fail;
    w->begun = false;
    return 0;
fail:
    gguf_writer_abort(w);
    return -1;
}

int gguf_rewrite(const gguf_file *in, const char *path, gguf_error *err)
{
    gguf_writer *w = gguf_writer_new();
    if (!w)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    int rc = -1;
    gguf_writer_set_version(w, gguf_file_version(in));
    uint64_t data_size;
    gguf_data_section(in, 0, &data_size);
    gguf_writer_set_pad_empty(w, gguf_n_tensors(in) == 0 && data_size > 0);
    for (uint64_t i = 0; i < gguf_n_kv(in); i++) {
        const gguf_kv *kv = gguf_kv_at(in, i);
        if (gguf_n_shards(in) > 1 && strncmp(kv->key, "split.", 6) == 0)
            continue;
        if (gguf_writer_copy_kv(w, kv)) {
            gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
            goto done;
        }
    }
    for (uint64_t i = 0; i < gguf_n_tensors(in); i++) {
        const gguf_tensor *t = gguf_tensor_at(in, i);
        if (gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, err) < 0)
            goto done;
    }
    if (gguf_writer_begin(w, path, err))
        goto done;
    for (uint64_t i = 0; i < gguf_n_tensors(in); i++) {
        const gguf_tensor *t = gguf_tensor_at(in, i);
        if (gguf_writer_write_tensor(w, t->data, t->nbytes, err))
            goto done;
    }
    rc = gguf_writer_finish(w, err);
done:
    gguf_writer_free(w);
    return rc;
}
