/*
 * reader.c — opening and validating GGUF files (see gguf.h for the layout).
 *
 * The parser walks the mapped bytes with a cursor that refuses to move past
 * the end; every count is checked against the bytes left before anything is
 * allocated for it, so a hostile header can neither make us allocate more
 * than a small multiple of the file size nor read outside the mapping. All
 * allocations of one file hang off struct gguf_file and are released by
 * gguf_close(), which is also the single failure path of gguf_open().
 *
 * Not for: writing (writer.c), split naming helpers live at the end.
 */
#include <ggufkit/gguf.h>
#include <ggufkit/arch.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * Structures
 * ------------------------------------------------------------------------ */

typedef struct shard {
    char          *path;
    const uint8_t *map;       /* whole file, read-only */
    uint64_t       size;
    bool           owned_map; /* false for gguf_open_memory */
    uint64_t       data_offset;
    /* The descriptor the mapping came from, plus one (0: none, as for a
     * memory image; zeroed shards hold none). Kept open until gguf_close:
     * copies of tensor data read the file this reader validated, even after
     * another process renames a new file over the path. */
    int            fd_plus1;
} shard;

/* Open-addressing table of indices into kvs[] or tensors[], keyed by name. */
typedef struct name_index {
    uint32_t *slots; /* index + 1; 0 = empty */
    uint64_t  mask;
} name_index;

struct gguf_file {
    uint32_t     version;
    uint32_t     alignment;
    uint32_t     n_shards;
    shard       *shards;

    uint64_t     n_kv;
    gguf_kv     *kvs;
    name_index   kv_index;

    uint64_t     n_tensors;
    gguf_tensor *tensors;
    name_index   tensor_index;

    /* Every string value of every kv (scalars and arrays). */
    gguf_str    *strs;
    uint64_t     n_strs, cap_strs;

    /* GGUF_OPEN_REPAIR: what was repaired, one sentence each. */
    unsigned     flags;
    char       **repairs;
    uint64_t     n_repairs, n_unlisted;
};

/* At most this many repair sentences are kept; the rest are counted. */
#define MAX_REPAIR_NOTES 64

/* ------------------------------------------------------------------------
 * Cursor over the mapped bytes
 * ------------------------------------------------------------------------ */

typedef struct cursor {
    const uint8_t *base;
    uint64_t       size;
    uint64_t       pos;
    gguf_error    *err;
} cursor;

static uint64_t left(const cursor *c) { return c->size - c->pos; }

/* Fails unless n more bytes are available. */
static int need(cursor *c, uint64_t n, const char *what)
{
    if (n > left(c))
        return gguf_error_set(c->err,
            "offset %" PRIu64 ": %s runs past the end of the file (%" PRIu64
            " bytes needed, %" PRIu64 " left)", c->pos, what, n, left(c));
    return 0;
}

static int rd_u32(cursor *c, uint32_t *v, const char *what)
{
    if (need(c, 4, what))
        return -1;
    memcpy(v, c->base + c->pos, 4);
    c->pos += 4;
    return 0;
}

static int rd_u64(cursor *c, uint64_t *v, const char *what)
{
    if (need(c, 8, what))
        return -1;
    memcpy(v, c->base + c->pos, 8);
    c->pos += 8;
    return 0;
}

/* A gguf string: u64 length + bytes, validated to lie inside the file. */
static int rd_str(cursor *c, gguf_str *s, const char *what)
{
    uint64_t at = c->pos, len;
    if (rd_u64(c, &len, what))
        return -1;
    if (len > left(c))
        return gguf_error_set(c->err,
            "offset %" PRIu64 ": %s length %" PRIu64 " runs past the end of the file (%"
            PRIu64 " bytes left)", at, what, len, left(c));
    s->ptr = (const char *)c->base + c->pos;
    s->len = len;
    c->pos += len;
    return 0;
}

static char *dup_str(gguf_str s)
{
    char *p = malloc(s.len + 1);
    if (p) {
        memcpy(p, s.ptr, s.len);
        p[s.len] = '\0';
    }
    return p;
}

static void push_note(gguf_file *f, const char *buf)
{
    char **more = realloc(f->repairs, (f->n_repairs + 1) * sizeof *more);
    if (!more)
        return; /* the repair still happens; only its sentence is lost */
    f->repairs = more;
    if ((more[f->n_repairs] = strdup(buf)))
        f->n_repairs++;
}

static void note_repair(gguf_file *f, const char *fmt, ...) GGUF_PRINTF(2, 3);
static void note_repair(gguf_file *f, const char *fmt, ...)
{
    if (f->n_repairs >= MAX_REPAIR_NOTES) {
        f->n_unlisted++;
        return;
    }
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    push_note(f, buf);
}

/* The last sentence: how many were not listed. */
static void finish_notes(gguf_file *f)
{
    char buf[96];
    if (!f->n_unlisted)
        return;
    snprintf(buf, sizeof buf, "%" PRIu64 " more repairs of these kinds, not listed", f->n_unlisted);
    push_note(f, buf);
}

/* ------------------------------------------------------------------------
 * Name index
 * ------------------------------------------------------------------------ */

static uint64_t hash_name(const char *s, uint64_t n)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (uint64_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
    return h;
}

static int index_init(name_index *ix, uint64_t n)
{
    uint64_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    ix->slots = calloc(cap, sizeof *ix->slots);
    ix->mask = cap - 1;
    return ix->slots ? 0 : -1;
}

/* Slot of name: its entry, or the empty slot where it would go. `name_of`
 * returns the name of entry i. */
typedef const char *(*name_fn)(const gguf_file *f, uint32_t i);

static uint32_t *index_slot(const gguf_file *f, const name_index *ix, name_fn name_of,
                            const char *name, uint64_t len)
{
    uint64_t h = hash_name(name, len) & ix->mask;
    for (;;) {
        uint32_t *slot = &ix->slots[h];
        if (*slot == 0)
            return slot;
        const char *other = name_of(f, *slot - 1);
        if (strlen(other) == len && memcmp(other, name, len) == 0)
            return slot;
        h = (h + 1) & ix->mask;
    }
}

static const char *kv_name(const gguf_file *f, uint32_t i) { return f->kvs[i].key; }
static const char *tensor_name(const gguf_file *f, uint32_t i) { return f->tensors[i].name; }

/* ------------------------------------------------------------------------
 * Metadata
 * ------------------------------------------------------------------------ */

static int push_strs(gguf_file *f, uint64_t n)
{
    if (f->n_strs + n <= f->cap_strs)
        return 0;
    uint64_t cap = f->cap_strs ? f->cap_strs : 64;
    while (cap < f->n_strs + n)
        cap *= 2;
    gguf_str *p = realloc(f->strs, cap * sizeof *p);
    if (!p)
        return -1;
    f->strs = p;
    f->cap_strs = cap;
    return 0;
}

/* Reads n values of fixed-size type t (bounds, bools). */
static int read_fixed(cursor *c, const char *key, uint32_t t, uint64_t n, const void **data)
{
    uint64_t esz = gguf_vtype_size(t), at = c->pos;
    if (n > left(c) / esz)
        return gguf_error_set(c->err,
            "offset %" PRIu64 ": value of key '%s' (%" PRIu64 " × %s) runs past the end of the file",
            at, key, n, gguf_vtype_name(t));
    *data = c->base + c->pos;
    if (t == GGUF_VT_BOOL) {
        for (uint64_t i = 0; i < n; i++) {
            uint8_t b = c->base[c->pos + i];
            if (b > 1)
                return gguf_error_set(c->err,
                    "offset %" PRIu64 ": key '%s' has bool value %u (must be 0 or 1)",
                    c->pos + i, key, b);
        }
    }
    c->pos += n * esz;
    return 0;
}

/* Reads n strings into the file's string pool. The first index is stored in
 * *first (pool may move, so indices, not pointers, until parsing ends). */
static int read_strings(gguf_file *f, cursor *c, const char *key, uint64_t n, uint64_t *first)
{
    if (n > left(c) / 8)
        return gguf_error_set(c->err,
            "offset %" PRIu64 ": array of %" PRIu64 " strings for key '%s' cannot fit in the %"
            PRIu64 " bytes left", c->pos, n, key, left(c));
    if (push_strs(f, n))
        return gguf_error_setc(c->err, GGUF_ERR_NOMEM, "out of memory reading key '%s'", key);
    *first = f->n_strs;
    for (uint64_t i = 0; i < n; i++)
        if (rd_str(c, &f->strs[f->n_strs++], "string value"))
            return -1;
    return 0;
}

/* Reads one kv into kv. A key seen before is an error, except with
 * GGUF_OPEN_REPAIR: then *dup is set to the earlier kv's index + 1, the
 * index is left alone, and the caller decides which one stays. */
static int read_kv(gguf_file *f, cursor *c, gguf_kv *kv, uint64_t *str_first, uint32_t *dup)
{
    uint64_t at = c->pos;
    gguf_str key;
    kv->offset = at;
    if (rd_str(c, &key, "key"))
        return -1;
    if (key.len == 0)
        return gguf_error_set(c->err, "offset %" PRIu64 ": empty key", at);
    if (key.len > GGUF_MAX_KEY)
        return gguf_error_set(c->err, "offset %" PRIu64 ": key of %" PRIu64
                              " bytes is longer than %d", at, key.len, GGUF_MAX_KEY);
    if (memchr(key.ptr, '\0', key.len))
        return gguf_error_set(c->err, "offset %" PRIu64 ": key contains a NUL byte", at);
    if (!(kv->key = dup_str(key)))
        return gguf_error_setc(c->err, GGUF_ERR_NOMEM, "out of memory");
    kv->key_len = key.len;

    uint32_t *slot = index_slot(f, &f->kv_index, kv_name, kv->key, key.len);
    *dup = *slot;
    if (*slot && !(f->flags & GGUF_OPEN_REPAIR))
        return gguf_error_set(c->err, "offset %" PRIu64 ": duplicate key '%s'", at, kv->key);

    uint64_t tpos = c->pos;
    if (rd_u32(c, &kv->type, "value type"))
        return -1;
    if (kv->type >= GGUF_VT_COUNT)
        return gguf_error_set(c->err, "offset %" PRIu64 ": key '%s' has invalid value type %" PRIu32
                              " (valid: 0-12)", tpos, kv->key, kv->type);
    kv->elem_type = kv->type;
    kv->n = 1;
    if (kv->type == GGUF_VT_ARR) {
        tpos = c->pos;
        if (rd_u32(c, &kv->elem_type, "array element type") || rd_u64(c, &kv->n, "array count"))
            return -1;
        if (kv->elem_type == GGUF_VT_ARR)
            return gguf_error_setc(c->err, GGUF_ERR_UNSUPPORTED, "offset %" PRIu64 ": key '%s' is a nested array "
                                  "(arrays of arrays are not supported)", tpos, kv->key);
        if (kv->elem_type >= GGUF_VT_COUNT)
            return gguf_error_set(c->err, "offset %" PRIu64 ": key '%s' has invalid array element "
                                  "type %" PRIu32 " (valid: 0-12)", tpos, kv->key, kv->elem_type);
    }
    if (!*dup)
        *slot = (uint32_t)(kv - f->kvs) + 1;

    if (kv->elem_type == GGUF_VT_STR)
        return read_strings(f, c, kv->key, kv->n, str_first);
    *str_first = UINT64_MAX;
    return read_fixed(c, kv->key, kv->elem_type, kv->n, &kv->data);
}

/* A short description of a kv's value for repair sentences: "u32 7",
 * "str \"llama\"", "arr[i32] of 4". */
static void describe_kv(const gguf_kv *kv, char *buf, size_t n)
{
    char pv[48];
    if (kv->type == GGUF_VT_ARR)
        snprintf(buf, n, "arr[%s] of %" PRIu64, gguf_vtype_name(kv->elem_type), kv->n);
    else if (kv->type == GGUF_VT_STR)
        snprintf(buf, n, "str \"%s%s\"", gguf_error_preview(kv->strs[0].ptr, kv->strs[0].len, pv),
                 kv->strs[0].len > 40 ? "..." : "");
    else if (kv->type == GGUF_VT_F32 || kv->type == GGUF_VT_F64)
        snprintf(buf, n, "%s %g", gguf_vtype_name(kv->type), gguf_kv_elem_as_double(kv, 0));
    else if (kv->type == GGUF_VT_U64)
        snprintf(buf, n, "u64 %.0f", gguf_kv_elem_as_double(kv, 0));
    else
        snprintf(buf, n, "%s %" PRId64, gguf_vtype_name(kv->type), gguf_kv_elem_as_int(kv, 0));
}

/* ------------------------------------------------------------------------
 * Repair: duplicates (GGUF_OPEN_REPAIR)
 *
 * Entries stay where they were read while the file is parsed; a duplicate
 * marks the one that goes (dead) and which entry it lost to (other), and
 * the name index points at the one that stays. Afterwards the dead ones are
 * removed and the index rebuilt.
 * ------------------------------------------------------------------------ */

typedef struct dups {
    bool     *dead;
    uint32_t *other; /* index + 1 of the entry a dead one lost to */
    bool      any;
} dups;

static int dups_init(dups *d, uint64_t n, bool repair)
{
    memset(d, 0, sizeof *d);
    if (!repair)
        return 0;
    d->dead = calloc(n ? n : 1, sizeof *d->dead);
    d->other = calloc(n ? n : 1, sizeof *d->other);
    return d->dead && d->other ? 0 : -1;
}

static void dups_free(dups *d)
{
    free(d->dead);
    free(d->other);
}

/* Entry i repeats entry earlier: one of them goes. True when the index
 * must now point at i (keeping the last). */
static bool dups_mark(dups *d, uint64_t i, uint32_t earlier, unsigned flags)
{
    d->any = true;
    if (flags & GGUF_OPEN_KEEP_FIRST) {
        d->dead[i] = true, d->other[i] = earlier + 1;
        return false;
    }
    d->dead[earlier] = true, d->other[earlier] = (uint32_t)i + 1;
    return true;
}

/* The entry that stayed in place of dead entry i. */
static uint64_t dups_kept(const dups *d, uint64_t i)
{
    uint64_t k = d->other[i] - 1;
    while (d->dead[k])
        k = d->other[k] - 1;
    return k;
}

/* Removes the dead entries of an array of n elements of size esz whose
 * names (freed here) *name_at points to; returns the new count. */
static uint64_t dups_compact(const dups *d, void *base, size_t esz, uint64_t n, size_t name_at)
{
    uint64_t k = 0;
    for (uint64_t i = 0; i < n; i++) {
        char *e = (char *)base + i * esz;
        if (d->dead[i]) {
            char *name;
            memcpy(&name, e + name_at, sizeof name);
            free(name);
        } else if (k++ != i) {
            memcpy((char *)base + (k - 1) * esz, e, esz);
        }
    }
    return k;
}

/* Rebuilds a name index over n entries. */
static int rebuild_index(gguf_file *f, name_index *ix, name_fn name_of, uint64_t n)
{
    free(ix->slots);
    if (index_init(ix, n))
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        const char *nm = name_of(f, (uint32_t)i);
        *index_slot(f, ix, name_of, nm, strlen(nm)) = (uint32_t)i + 1;
    }
    return 0;
}

static int drop_kvs(gguf_file *f, const dups *d)
{
    f->n_kv = dups_compact(d, f->kvs, sizeof *f->kvs, f->n_kv, offsetof(gguf_kv, key));
    return rebuild_index(f, &f->kv_index, kv_name, f->n_kv);
}

static int read_metadata(gguf_file *f, cursor *c)
{
    /* Smallest kv: 8-byte key length + 1 key byte + 4-byte type + 1 byte. */
    if (f->n_kv > left(c) / 14)
        return gguf_error_set(c->err, "offset 16: kv count %" PRIu64 " cannot fit in the %"
                              PRIu64 " bytes of the file", f->n_kv, c->size);
    if (f->n_kv >= UINT32_MAX)
        return gguf_error_setc(c->err, GGUF_ERR_LIMIT, "offset 16: kv count %" PRIu64 " is too large", f->n_kv);
    const uint64_t n = f->n_kv ? f->n_kv : 1;
    f->kvs = calloc(n, sizeof *f->kvs);
    uint64_t *first = calloc(n, sizeof *first);
    dups d = { 0 };
    int rc = -1;
    if (!f->kvs || !first || index_init(&f->kv_index, f->n_kv) ||
        dups_init(&d, n, f->flags & GGUF_OPEN_REPAIR)) {
        gguf_error_setc(c->err, GGUF_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (uint64_t i = 0; i < f->n_kv; i++) {
        uint32_t dup = 0;
        if (read_kv(f, c, &f->kvs[i], &first[i], &dup))
            goto done;
        if (dup && dups_mark(&d, i, dup - 1, f->flags))
            *index_slot(f, &f->kv_index, kv_name, f->kvs[i].key, f->kvs[i].key_len) = (uint32_t)i + 1;
    }
    /* The pool is complete: turn indices into pointers. */
    for (uint64_t i = 0; i < f->n_kv; i++)
        if (first[i] != UINT64_MAX)
            f->kvs[i].strs = f->strs ? f->strs + first[i] : NULL; /* NULL: empty array */
    if (d.any) {
        for (uint64_t i = 0; i < f->n_kv; i++) {
            if (!d.dead[i])
                continue;
            const uint64_t k = dups_kept(&d, i);
            char a[96], b[96];
            describe_kv(&f->kvs[k], a, sizeof a);
            describe_kv(&f->kvs[i], b, sizeof b);
            note_repair(f, "duplicate key '%s': kept the %s (offset %" PRIu64 ", %s), dropped "
                        "the one at offset %" PRIu64 " (%s)", f->kvs[i].key,
                        f->flags & GGUF_OPEN_KEEP_FIRST ? "first" : "last", f->kvs[k].offset, a,
                        f->kvs[i].offset, b);
        }
        if (drop_kvs(f, &d)) {
            gguf_error_setc(c->err, GGUF_ERR_NOMEM, "out of memory");
            goto done;
        }
    }
    rc = 0;
done:
    free(first);
    dups_free(&d);
    return rc;
}

/* general.alignment. With GGUF_OPEN_REPAIR a bad one (not a u32 power of
 * two) is removed and f->alignment left 0: infer_alignment() then finds
 * the alignment the data actually has. *hint: its value when it is an
 * integer of another type (0 otherwise). */
static int read_alignment(gguf_file *f, gguf_error *err, char *bad, size_t badn, int64_t *hint)
{
    f->alignment = GGUF_DEFAULT_ALIGNMENT;
    *hint = 0;
    const gguf_kv *kv = gguf_lookup_kv(f, GGUF_KEY_ALIGNMENT);
    if (!kv)
        return 0;
    const bool is_u32 = gguf_kv_u32(kv, &f->alignment);
    const bool pow2 = f->alignment && !(f->alignment & (f->alignment - 1));
    if (is_u32 && pow2)
        return 0;
    if (f->flags & GGUF_OPEN_REPAIR) {
        char desc[96];
        describe_kv(kv, desc, sizeof desc);
        snprintf(bad, badn, "general.alignment at offset %" PRIu64 " (%s) is not a u32 power of two",
                 kv->offset, desc);
        if (!gguf_kv_int(kv, hint))
            *hint = 0;
        dups d = { 0 };
        if (dups_init(&d, f->n_kv, true)) {
            dups_free(&d);
            return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        }
        d.dead[kv - f->kvs] = true;
        int rc = drop_kvs(f, &d);
        dups_free(&d);
        f->alignment = 0;
        return rc ? gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory") : 0;
    }
    if (!is_u32)
        return gguf_error_set(err, "offset %" PRIu64 ": general.alignment is %s%s%s, must be u32",
                              kv->offset, gguf_vtype_name(kv->type),
                              kv->type == GGUF_VT_ARR ? " of " : "",
                              kv->type == GGUF_VT_ARR ? gguf_vtype_name(kv->elem_type) : "");
    return gguf_error_set(err, "offset %" PRIu64 ": general.alignment %" PRIu32
                          " is not a power of two", kv->offset, f->alignment);
}

/* ------------------------------------------------------------------------
 * Tensor infos
 * ------------------------------------------------------------------------ */

/* Reads one tensor info; duplicates as in read_kv. */
static int read_tensor_info(gguf_file *f, cursor *c, gguf_tensor *t, uint32_t *dup)
{
    uint64_t at = c->pos;
    gguf_str name;
    t->info_offset = at;
    if (rd_str(c, &name, "tensor name"))
        return -1;
    if (name.len >= GGUF_MAX_NAME)
        return gguf_error_setc(c->err, GGUF_ERR_LIMIT, "offset %" PRIu64 ": tensor name of %" PRIu64
                              " bytes is too long (limit %d)", at, name.len, GGUF_MAX_NAME - 1);
    if (memchr(name.ptr, '\0', name.len))
        return gguf_error_set(c->err, "offset %" PRIu64 ": tensor name contains a NUL byte", at);
    if (!(t->name = dup_str(name)))
        return gguf_error_setc(c->err, GGUF_ERR_NOMEM, "out of memory");
    uint32_t *slot = index_slot(f, &f->tensor_index, tensor_name, t->name, name.len);
    *dup = *slot;
    if (*slot && !(f->flags & GGUF_OPEN_REPAIR))
        return gguf_error_set(c->err, "offset %" PRIu64 ": duplicate tensor name '%s'", at, t->name);
    if (!*slot)
        *slot = (uint32_t)(t - f->tensors) + 1;

    uint64_t dpos = c->pos;
    if (rd_u32(c, &t->n_dims, "tensor n_dims"))
        return -1;
    if (t->n_dims > GGUF_MAX_DIMS)
        return gguf_error_set(c->err, "offset %" PRIu64 ": tensor '%s' has %" PRIu32
                              " dimensions (at most %d)", dpos, t->name, t->n_dims, GGUF_MAX_DIMS);
    int64_t nel = 1;
    for (uint32_t j = 0; j < GGUF_MAX_DIMS; j++) {
        uint64_t ne = 1;
        dpos = c->pos;
        if (j < t->n_dims && rd_u64(c, &ne, "tensor dimension"))
            return -1;
        if (ne > INT64_MAX)
            return gguf_error_set(c->err, "offset %" PRIu64 ": tensor '%s' dimension %" PRIu32
                                  " is %" PRIu64 " (must be < 2^63)", dpos, t->name, j, ne);
        t->ne[j] = (int64_t)ne;
        if (ne && nel > INT64_MAX / (int64_t)ne)
            return gguf_error_set(c->err, "offset %" PRIu64 ": tensor '%s' element count "
                                  "overflows int64", at, t->name);
        nel *= (int64_t)ne;
    }
    t->n_elements = nel;

    uint64_t tpos = c->pos;
    if (rd_u32(c, &t->type, "tensor type"))
        return -1;
    const gguf_dtype_traits *tt = gguf_dtype_get(t->type);
    if (!tt)
        return gguf_error_setc(c->err, GGUF_ERR_UNSUPPORTED, "offset %" PRIu64 ": tensor '%s' has unknown type id %" PRIu32,
                              tpos, t->name, t->type);
    if (!tt->valid)
        return gguf_error_set(c->err, "offset %" PRIu64 ": tensor '%s' has removed type id %" PRIu32
                              " (%s)", tpos, t->name, t->type, tt->name);
    if (t->ne[0] % tt->blck_size)
        return gguf_error_set(c->err, "offset %" PRIu64 ": tensor '%s' of type %s has %" PRId64
                              " elements per row, not a multiple of the block size %" PRIu32,
                              tpos, t->name, tt->name, t->ne[0], tt->blck_size);
    uint64_t row;
    if (gguf_row_size(t->type, t->ne[0], &row, NULL))
        return gguf_error_set(c->err, "offset %" PRIu64 ": tensor '%s' row size overflows", at, t->name);
    uint64_t rows = t->ne[0] ? (uint64_t)(nel / t->ne[0]) : 0;
    if (rows && row > UINT64_MAX / rows)
        return gguf_error_set(c->err, "offset %" PRIu64 ": tensor '%s' byte size overflows", at, t->name);
    t->nbytes = row * rows;

    uint64_t opos = c->pos;
    if (rd_u64(c, &t->offset, "tensor offset"))
        return -1;
    if (f->alignment && t->offset % f->alignment) /* 0: being repaired, inferred later */
        return gguf_error_set(c->err, "offset %" PRIu64 ": tensor '%s' data offset %" PRIu64
                              " is not a multiple of the alignment %" PRIu32,
                              opos, t->name, t->offset, f->alignment);
    return 0;
}

static int cmp_by_offset(const void *a, const void *b)
{
    const gguf_tensor *x = *(const gguf_tensor *const *)a, *y = *(const gguf_tensor *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Data placement: inside the file, no two tensors sharing a byte. */
static int check_placement(gguf_tensor *ts, uint64_t n, const shard *sh, gguf_error *err)
{
    bool any_data = false;
    for (uint64_t i = 0; i < n; i++)
        any_data |= ts[i].nbytes > 0;
    if (!any_data && sh->data_offset > sh->size) {
        for (uint64_t i = 0; i < n; i++) /* only empty tensors: an unpadded header is fine */
            ts[i].data = sh->map;
        return 0;
    }
    if (n == 0)
        return 0;
    if (sh->data_offset > sh->size)
        return gguf_error_set(err, "offset %" PRIu64 ": tensor data section starts past the end "
                              "of the file (%" PRIu64 " bytes)", sh->data_offset, sh->size);
    uint64_t room = sh->size - sh->data_offset;
    for (uint64_t i = 0; i < n; i++) {
        gguf_tensor *t = &ts[i];
        if (t->offset > room || t->nbytes > room - t->offset)
            return gguf_error_set(err, "offset %" PRIu64 ": tensor '%s' data (%" PRIu64
                                  " bytes at data offset %" PRIu64 ") runs past the end of the file",
                                  t->info_offset, t->name, t->nbytes, t->offset);
        t->data = sh->map + sh->data_offset + t->offset;
    }
    gguf_tensor **order = malloc(n * sizeof *order);
    if (!order)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    for (uint64_t i = 0; i < n; i++)
        order[i] = &ts[i];
    qsort(order, n, sizeof *order, cmp_by_offset);
    int rc = 0;
    const gguf_tensor *prev = NULL;
    for (uint64_t i = 0; i < n && rc == 0; i++) {
        const gguf_tensor *t = order[i];
        if (t->nbytes == 0)
            continue;
        if (prev && prev->offset + prev->nbytes > t->offset)
            rc = gguf_error_set(err, "offset %" PRIu64 ": tensor '%s' data overlaps tensor '%s'",
                                t->info_offset, t->name, prev->name);
        prev = t;
    }
    free(order);
    return rc;
}

/* ------------------------------------------------------------------------
 * Header and whole-file parse
 * ------------------------------------------------------------------------ */

static uint32_t bswap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

static bool starts_nocase(const uint8_t *b, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    if (n < k)
        return false;
    for (size_t i = 0; i < k; i++)
        if (tolower(b[i]) != tolower((unsigned char)lit[i]))
            return false;
    return true;
}

/* The formats users hand a GGUF tool by mistake: a Git LFS pointer (a clone
 * without LFS), an HTML page (a failed download), a checkpoint the
 * converter reads, an archive, the GGML formats before GGUF. Only the first
 * 512 bytes are looked at. */
const char *gguf_foreign_kind(const void *head, size_t n_head, uint64_t size, char *buf, size_t cap)
{
    const uint8_t *b = head;
    const size_t n = n_head < 512 ? n_head : 512;
    if (!b || (n >= 4 && !memcmp(b, GGUF_MAGIC, 4)))
        return NULL;
    if (starts_nocase(b, n, "version https://git-lfs.github.com/spec/")) {
        const uint8_t *sz = NULL;
        for (size_t i = 0; i + 6 <= n && !sz; i++)
            if ((i == 0 || b[i - 1] == '\n') && !memcmp(b + i, "size ", 5))
                sz = b + i + 5;
        unsigned long long bytes = 0;
        int digits = 0;
        while (sz && sz < b + n && *sz >= '0' && *sz <= '9' && digits < 19)
            bytes = bytes * 10 + (unsigned long long)(*sz++ - '0'), digits++;
        if (digits)
            snprintf(buf, cap, "a Git LFS pointer to a file of %llu bytes: the repository was "
                     "cloned without Git LFS (run 'git lfs pull' in it, or download the file "
                     "itself)", bytes);
        else
            snprintf(buf, cap, "a Git LFS pointer: the repository was cloned without Git LFS "
                     "(run 'git lfs pull' in it, or download the file itself)");
        return buf;
    }
    size_t i = 0;
    if (n >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF)
        i = 3;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
        i++;
    if (starts_nocase(b + i, n - i, "<!doctype html") || starts_nocase(b + i, n - i, "<html") ||
        starts_nocase(b + i, n - i, "<head") || starts_nocase(b + i, n - i, "<body"))
        return "an HTML page: the download returned a web page (an error, a login or a "
               "license page) instead of the model; download it again";
    if (starts_nocase(b + i, n - i, "<?xml"))
        return "an XML document (a download's error response?), not a model";
    if (i < n && (b[i] == '{' || b[i] == '['))
        return "a JSON document (a config.json or tokenizer.json?), not a model";
    if (n >= 10 && size >= 10 && b[8] == '{') {
        uint64_t len = 0;
        for (int k = 7; k >= 0; k--)
            len = len << 8 | b[k];
        if (len >= 2 && len <= size - 8)
            return "a safetensors checkpoint: convert its model folder with gguf-convert";
    }
    if (n >= 4 && !memcmp(b, "PK\x03\x04", 4))
        return "a zip archive (a PyTorch checkpoint such as pytorch_model.bin?): convert its "
               "model folder with gguf-convert";
    if (n >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5)
        return "a Python pickle (a legacy PyTorch checkpoint?): convert its model folder with "
               "gguf-convert";
    if (n >= 4 && (!memcmp(b, "lmgg", 4) || !memcmp(b, "fmgg", 4) || !memcmp(b, "tjgg", 4) ||
                   !memcmp(b, "algg", 4)))
        return "a GGML/GGMF/GGJT file, llama.cpp's format before GGUF (2023): convert it with "
               "llama.cpp's convert_llama_ggml_to_gguf.py";
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return "a gzip-compressed file: decompress it first";
    if (n >= 6 && !memcmp(b, "\xfd" "7zXZ\x00", 6))
        return "an xz-compressed file: decompress it first";
    if (n >= 4 && !memcmp(b, "\x28\xb5\x2f\xfd", 4))
        return "a zstd-compressed file: decompress it first";
    if (n > 262 && !memcmp(b + 257, "ustar", 5))
        return "a tar archive: extract it first";
    return NULL;
}

static int read_header(gguf_file *f, cursor *c, uint64_t *n_tensors, uint64_t *n_kv)
{
    if (c->size < 4)
        return gguf_error_set(c->err, "offset 0: file is %" PRIu64 " bytes, too small to be GGUF",
                              c->size);
    if (memcmp(c->base, GGUF_MAGIC, 4) != 0) {
        const uint8_t *m = c->base;
        char buf[256];
        const char *kind = gguf_foreign_kind(m, (size_t)(c->size < 512 ? c->size : 512), c->size,
                                             buf, sizeof buf);
        if (kind)
            return gguf_error_set(c->err, "not a GGUF file but %s", kind);
        return gguf_error_set(c->err, "offset 0: bad magic %02x %02x %02x %02x "
                              "(expected \"GGUF\"): not a GGUF file", m[0], m[1], m[2], m[3]);
    }
    c->pos = 4;
    if (rd_u32(c, &f->version, "version"))
        return -1;
    if (f->version == 1)
        return gguf_error_setc(c->err, GGUF_ERR_UNSUPPORTED, "offset 4: GGUF version 1 is not supported "
                              "(only versions 2 and 3)");
    if ((f->version & 0xffff) == 0 && bswap32(f->version) >= 1 && bswap32(f->version) <= 3)
        return gguf_error_setc(c->err, GGUF_ERR_UNSUPPORTED, "offset 4: big-endian GGUF (version %" PRIu32
                              ") is not supported", bswap32(f->version));
    if (f->version != 2 && f->version != 3)
        return gguf_error_setc(c->err, GGUF_ERR_UNSUPPORTED, "offset 4: unsupported GGUF version %" PRIu32
                              " (only versions 2 and 3)", f->version);
    if (rd_u64(c, n_tensors, "tensor count") || rd_u64(c, n_kv, "kv count"))
        return -1;
    /* Smallest tensor info: 8 (name length) + 4 (n_dims) + 4 (type) + 8 (offset). */
    if (*n_tensors > left(c) / 24 || *n_tensors >= UINT32_MAX)
        return gguf_error_set(c->err, "offset 8: tensor count %" PRIu64 " cannot fit in the %"
                              PRIu64 " bytes of the file", *n_tensors, c->size);
    return 0;
}

/* "q8_0 [32, 2], data at offset 64" */
static void describe_tensor(const gguf_tensor *t, char *buf, size_t n)
{
    int o = snprintf(buf, n, "%s [", gguf_dtype_name(t->type));
    for (uint32_t j = 0; j < t->n_dims && o > 0 && (size_t)o < n; j++)
        o += snprintf(buf + o, n - (size_t)o, "%s%" PRId64, j ? ", " : "", t->ne[j]);
    if (o > 0 && (size_t)o < n)
        snprintf(buf + o, n - (size_t)o, "], data at offset %" PRIu64, t->offset);
}

/* GGUF_OPEN_REPAIR, a bad general.alignment: the power of two A for which
 * the tensor data lies where the infos say — every offset a multiple of A,
 * the data section at the header end rounded up to A, every tensor inside
 * the file and none overlapping, and fewer than A bytes after the last
 * one. That last rule leaves one data section: for A < B both fitting,
 * the sections differ by a nonzero multiple of A or not at all, and a
 * section A or more bytes early leaves A or more bytes at the end. Among the
 * A that fit, the old value (hint) is taken, else 32, else the largest. A
 * file with more than A bytes after its data fits none and is refused. */
static int infer_alignment(gguf_file *f, shard *sh, uint64_t infos_end, int64_t hint,
                           const char *bad, gguf_error *err)
{
    uint64_t max_end = 0;
    for (uint64_t i = 0; i < f->n_tensors; i++)
        if (f->tensors[i].nbytes && f->tensors[i].offset + f->tensors[i].nbytes > max_end)
            max_end = f->tensors[i].offset + f->tensors[i].nbytes; /* placement checks overflow */
    uint32_t pick = 0;
    uint64_t pick_off = 0;
    for (int k = 0; k <= 24; k++) { /* 1 B … 16 MiB */
        const uint32_t a = 1u << k;
        const uint64_t doff = infos_end + (a - infos_end % a) % a;
        bool fits = true;
        for (uint64_t i = 0; i < f->n_tensors && fits; i++)
            fits = f->tensors[i].offset % a == 0;
        if (!fits)
            continue;
        if (max_end > 0) {
            if (doff > sh->size || max_end > sh->size - doff || sh->size - doff - max_end >= a)
                continue;
            gguf_error scratch = { 0 };
            sh->data_offset = doff;
            if (check_placement(f->tensors, f->n_tensors, sh, &scratch))
                continue;
        }
        if (!pick || (int64_t)a == hint || (a == GGUF_DEFAULT_ALIGNMENT && (int64_t)pick != hint) ||
            ((int64_t)pick != hint && pick != GGUF_DEFAULT_ALIGNMENT))
            pick = a, pick_off = doff;
    }
    if (!pick)
        return gguf_error_set(err, "%s, and no alignment fits the tensor data", bad);
    f->alignment = pick;
    sh->data_offset = pick_off;
    note_repair(f, "%s: removed it (the output uses the default, 32); the tensor data is "
                "laid out for alignment %" PRIu32 ", data section at offset %" PRIu64,
                bad, pick, pick_off);
    return check_placement(f->tensors, f->n_tensors, sh, err);
}

/* Parses one shard image into f (kvs only when f has none yet, i.e. the
 * first shard; later shards' kvs go into `side`). Tensors are appended. */
static int parse_image(gguf_file *f, uint32_t si, gguf_error *err)
{
    shard *sh = &f->shards[si];
    cursor c = { sh->map, sh->size, 0, err };
    uint64_t n_tensors;
    char bad[256] = "";
    int64_t hint = 0;
    if (read_header(f, &c, &n_tensors, &f->n_kv))
        return -1;
    if (read_metadata(f, &c) || read_alignment(f, err, bad, sizeof bad, &hint))
        return -1;
    f->n_tensors = n_tensors;
    const uint64_t n = n_tensors ? n_tensors : 1;
    f->tensors = calloc(n, sizeof *f->tensors);
    if (!f->tensors || index_init(&f->tensor_index, n_tensors))
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    dups d = { 0 };
    int rc = -1;
    if (dups_init(&d, n, f->flags & GGUF_OPEN_REPAIR)) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (uint64_t i = 0; i < n_tensors; i++) {
        uint32_t dup = 0;
        if (read_tensor_info(f, &c, &f->tensors[i], &dup))
            goto done;
        f->tensors[i].shard = si;
        if (dup && dups_mark(&d, i, dup - 1, f->flags)) {
            const char *nm = f->tensors[i].name;
            *index_slot(f, &f->tensor_index, tensor_name, nm, strlen(nm)) = (uint32_t)i + 1;
        }
    }
    if (d.any) {
        for (uint64_t i = 0; i < n_tensors; i++) {
            if (!d.dead[i])
                continue;
            const uint64_t k = dups_kept(&d, i);
            char a[160], b[160];
            describe_tensor(&f->tensors[k], a, sizeof a);
            describe_tensor(&f->tensors[i], b, sizeof b);
            note_repair(f, "duplicate tensor name '%s': kept the %s (info at offset %" PRIu64
                        ": %s), dropped the one at offset %" PRIu64 " (%s)", f->tensors[i].name,
                        f->flags & GGUF_OPEN_KEEP_FIRST ? "first" : "last", f->tensors[k].info_offset,
                        a, f->tensors[i].info_offset, b);
        }
        f->n_tensors = dups_compact(&d, f->tensors, sizeof *f->tensors, n_tensors,
                                    offsetof(gguf_tensor, name));
        if (rebuild_index(f, &f->tensor_index, tensor_name, f->n_tensors)) {
            gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
            goto done;
        }
    }
    if (f->alignment == 0) {
        rc = infer_alignment(f, sh, c.pos, hint, bad, err);
        goto done;
    }
    uint64_t pad = (f->alignment - c.pos % f->alignment) % f->alignment;
    sh->data_offset = c.pos + pad;
    rc = check_placement(f->tensors, f->n_tensors, sh, err);
done:
    dups_free(&d);
    return rc;
}

static gguf_file *new_file(uint32_t n_shards)
{
    gguf_file *f = calloc(1, sizeof *f);
    if (f && !(f->shards = calloc(n_shards, sizeof *f->shards))) {
        free(f);
        return NULL;
    }
    if (f)
        f->n_shards = n_shards;
    return f;
}

static int map_file(shard *sh, const char *path, gguf_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return gguf_error_setc(err, GGUF_ERR_IO, "cannot open: %s", strerror(errno));
    struct stat st;
    int rc = -1;
    if (fstat(fd, &st) != 0) {
        gguf_error_setc(err, GGUF_ERR_IO, "cannot stat: %s", strerror(errno));
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        gguf_error_setc(err, GGUF_ERR_IO, "not a regular file");
        goto done;
    }
    sh->size = (uint64_t)st.st_size;
    sh->owned_map = true;
    if (sh->size == 0) {
        sh->map = (const uint8_t *)"";
        sh->owned_map = false;
    } else {
        void *m = mmap(NULL, sh->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            gguf_error_setc(err, GGUF_ERR_IO, "cannot map: %s", strerror(errno));
            goto done;
        }
        sh->map = m;
    }
    if (!(sh->path = strdup(path))) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        goto done;
    }
    sh->fd_plus1 = fd + 1;
    fd = -1;
    rc = 0;
done:
    if (fd >= 0)
        close(fd);
    return rc;
}

/* ------------------------------------------------------------------------
 * Splits
 * ------------------------------------------------------------------------ */

bool gguf_split_parse_name(const char *path, uint32_t *no, uint32_t *count, size_t *prefix_len)
{
    /* "-NNNNN-of-MMMMM.gguf" is 20 characters. */
    size_t n = strlen(path);
    if (n < 20)
        return false;
    const char *s = path + n - 20;
    unsigned a, b;
    char tail[8];
    if (s[0] != '-' || s[6] != '-' || strncmp(s + 7, "of-", 3) != 0)
        return false;
    for (int i = 1; i < 6; i++)
        if (s[i] < '0' || s[i] > '9' || s[i + 9] < '0' || s[i + 9] > '9')
            return false;
    if (sscanf(s, "-%5u-of-%5u%7s", &a, &b, tail) != 3 || strcmp(tail, ".gguf") != 0)
        return false;
    if (a < 1 || b < 1 || a > b)
        return false;
    *no = a;
    *count = b;
    *prefix_len = n - 20;
    return true;
}

int gguf_split_name(char *buf, size_t size, const char *prefix, uint32_t no, uint32_t count)
{
    int n = snprintf(buf, size, "%s-%05" PRIu32 "-of-%05" PRIu32 ".gguf", prefix, no, count);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* Reads split.no / split.count / split.tensors.count of a parsed shard. */
static int split_keys(const gguf_file *f, uint16_t *no, uint16_t *count, int32_t *n_tensors)
{
    const gguf_kv *a = gguf_lookup_kv(f, GGUF_KEY_SPLIT_NO), *b = gguf_lookup_kv(f, GGUF_KEY_SPLIT_COUNT),
                  *c = gguf_lookup_kv(f, GGUF_KEY_SPLIT_TENSORS);
    if (!a && !b && !c)
        return 0;
    if (!gguf_kv_u16(a, no) || !gguf_kv_u16(b, count) || !gguf_kv_i32(c, n_tensors))
        return -1;
    return 1;
}

/* Opens shards 2..N of the split whose first shard is already in f, and
 * appends their tensors. */
static int open_other_shards(gguf_file *f, const char *first, uint16_t count, int32_t total,
                             gguf_error *err)
{
    uint32_t no, cnt;
    size_t plen;
    if (!gguf_split_parse_name(first, &no, &cnt, &plen) || no != 1 || cnt != count)
        return gguf_error_set(err, "split.count is %u but the file name is not "
                              "NAME-00001-of-%05u.gguf", count, count);
    shard *more = realloc(f->shards, count * sizeof *more);
    if (!more)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    f->shards = more;
    memset(f->shards + 1, 0, (count - 1) * sizeof *more);
    char *prefix = strndup(first, plen);
    char *path = malloc(plen + 32);
    int rc = -1;
    if (!prefix || !path) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (uint32_t s = 1; s < count; s++) {
        gguf_split_name(path, plen + 32, prefix, s + 1, count);
        f->n_shards = s + 1;
        gguf_file *sub = new_file(1);
        if (!sub) {
            gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
            goto done;
        }
        if (map_file(&sub->shards[0], path, err) || parse_image(sub, 0, err)) {
            gguf_error_prefix(err, "%s: ", path);
            gguf_close(sub);
            goto done;
        }
        uint16_t sno = 0, scount = 0;
        int32_t st = 0;
        if (split_keys(sub, &sno, &scount, &st) != 1 || sno != s || scount != count || st != total) {
            gguf_error_set(err, "%s: split.no/split.count/split.tensors.count missing or "
                           "inconsistent (expected %u, %u, %d)", path, s, count, total);
            gguf_close(sub);
            goto done;
        }
        /* Move the shard and its tensors over to f. */
        f->shards[s] = sub->shards[0];
        sub->shards[0] = (shard){ 0 };
        gguf_tensor *ts = realloc(f->tensors, (f->n_tensors + sub->n_tensors + 1) * sizeof *ts);
        if (!ts) {
            gguf_close(sub);
            gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
            goto done;
        }
        f->tensors = ts;
        for (uint64_t i = 0; i < sub->n_tensors; i++) {
            ts[f->n_tensors + i] = sub->tensors[i];
            ts[f->n_tensors + i].shard = s;
            sub->tensors[i].name = NULL;
        }
        f->n_tensors += sub->n_tensors;
        gguf_close(sub);
    }
    /* Rebuild the tensor index over all shards, checking for duplicates. */
    free(f->tensor_index.slots);
    if (index_init(&f->tensor_index, f->n_tensors)) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        const char *nm = f->tensors[i].name;
        uint32_t *slot = index_slot(f, &f->tensor_index, tensor_name, nm, strlen(nm));
        if (*slot) {
            gguf_error_set(err, "shard %" PRIu32 ": duplicate tensor name '%s' across shards",
                           f->tensors[i].shard + 1, nm);
            goto done;
        }
        *slot = (uint32_t)i + 1;
    }
    if ((int64_t)f->n_tensors != total) {
        gguf_error_set(err, "split.tensors.count is %d but the shards hold %" PRIu64 " tensors",
                       total, f->n_tensors);
        goto done;
    }
    rc = 0;
done:
    free(prefix);
    free(path);
    return rc;
}

/* ------------------------------------------------------------------------
 * Public: open / close
 * ------------------------------------------------------------------------ */

gguf_file *gguf_open(const char *path, unsigned flags, gguf_error *err)
{
    gguf_file *f = new_file(1);
    if (!f) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        return NULL;
    }
    f->flags = flags;
    if (map_file(&f->shards[0], path, err) || parse_image(f, 0, err))
        goto fail;
    finish_notes(f);
    uint16_t no = 0, count = 0;
    int32_t total = 0;
    int sk = split_keys(f, &no, &count, &total);
    /* REPAIR | NO_SPLIT: malformed split.* keys are the caller's to drop
     * (gguf-edit --repair of a whole file with stray split keys) */
    const unsigned lone_repair = GGUF_OPEN_REPAIR | GGUF_OPEN_NO_SPLIT;
    if (sk < 0 && (flags & lone_repair) != lone_repair) {
        gguf_error_set(err, "split.* keys present but not u16 split.no, u16 split.count and "
                       "i32 split.tensors.count");
        goto fail;
    }
    if (sk == 1 && !(flags & GGUF_OPEN_NO_SPLIT)) {
        if (no != 0) {
            gguf_error_set(err, "this is shard %u of a split model; open the first shard "
                           "(or pass the no-split option)", no + 1);
            goto fail;
        }
        if (count == 0 || total < 0) {
            gguf_error_set(err, "split.count is 0 or split.tensors.count negative");
            goto fail;
        }
        if (count > 1 && open_other_shards(f, path, count, total, err))
            goto fail;
        if (count == 1 && (int64_t)f->n_tensors != total) {
            gguf_error_set(err, "split.tensors.count is %d but the file holds %" PRIu64 " tensors",
                           total, f->n_tensors);
            goto fail;
        }
    }
    return f;
fail:
    gguf_close(f);
    return NULL;
}

gguf_file *gguf_open_memory(const void *buf, size_t size, gguf_error *err)
{
    return gguf_open_memory_flags(buf, size, 0, err);
}

gguf_file *gguf_open_memory_flags(const void *buf, size_t size, unsigned flags, gguf_error *err)
{
    gguf_file *f = new_file(1);
    if (!f) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        return NULL;
    }
    f->flags = flags & (GGUF_OPEN_REPAIR | GGUF_OPEN_KEEP_FIRST);
    f->shards[0].map = buf;
    f->shards[0].size = size;
    if (!(f->shards[0].path = strdup("<memory>")) || parse_image(f, 0, err)) {
        if (!f->shards[0].path)
            gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        gguf_close(f);
        return NULL;
    }
    finish_notes(f);
    return f;
}

void gguf_close(gguf_file *f)
{
    if (!f)
        return;
    for (uint32_t s = 0; s < f->n_shards; s++) {
        shard *sh = &f->shards[s];
        if (sh->owned_map && sh->map)
            munmap((void *)sh->map, sh->size);
        if (sh->fd_plus1 > 0)
            close(sh->fd_plus1 - 1);
        free(sh->path);
    }
    free(f->shards);
    if (f->kvs)
        for (uint64_t i = 0; i < f->n_kv; i++)
            free((char *)f->kvs[i].key);
    if (f->tensors)
        for (uint64_t i = 0; i < f->n_tensors; i++)
            free((char *)f->tensors[i].name);
    free(f->kvs);
    free(f->tensors);
    free(f->strs);
    free(f->kv_index.slots);
    free(f->tensor_index.slots);
    for (uint64_t i = 0; i < f->n_repairs; i++)
        free(f->repairs[i]);
    free(f->repairs);
    free(f);
}

/* ------------------------------------------------------------------------
 * Public: queries
 * ------------------------------------------------------------------------ */

uint32_t gguf_file_version(const gguf_file *f) { return f->version; }
uint32_t gguf_alignment(const gguf_file *f) { return f->alignment; }
uint64_t gguf_n_repairs(const gguf_file *f) { return f->n_repairs; }
const char *gguf_repair_at(const gguf_file *f, uint64_t i) { return i < f->n_repairs ? f->repairs[i] : NULL; }
uint32_t gguf_n_shards(const gguf_file *f) { return f->n_shards; }
uint64_t gguf_n_kv(const gguf_file *f) { return f->n_kv; }
uint64_t gguf_n_tensors(const gguf_file *f) { return f->n_tensors; }

uint64_t gguf_file_size(const gguf_file *f)
{
    uint64_t n = 0;
    for (uint32_t s = 0; s < f->n_shards; s++)
        n += f->shards[s].size;
    return n;
}

const char *gguf_shard_path(const gguf_file *f, uint32_t s)
{
    return s < f->n_shards ? f->shards[s].path : NULL;
}

int gguf_shard_fd(const gguf_file *f, uint32_t s)
{
    return s < f->n_shards ? f->shards[s].fd_plus1 - 1 : -1;
}

uint64_t gguf_data_offset(const gguf_file *f, uint32_t s)
{
    if (s >= f->n_shards)
        return 0;
    /* a tensor-less file may end before the padded header end */
    const shard *sh = &f->shards[s];
    return sh->data_offset < sh->size ? sh->data_offset : sh->size;
}

const uint8_t *gguf_data_section(const gguf_file *f, uint32_t s, uint64_t *size)
{
    if (s >= f->n_shards)
        return NULL;
    const shard *sh = &f->shards[s];
    uint64_t off = sh->data_offset < sh->size ? sh->data_offset : sh->size;
    *size = sh->size - off;
    return sh->map + off;
}

const gguf_kv *gguf_kv_at(const gguf_file *f, uint64_t i)
{
    return i < f->n_kv ? &f->kvs[i] : NULL;
}

const gguf_kv *gguf_lookup_kv(const gguf_file *f, const char *key)
{
    if (!f->kv_index.slots)
        return NULL;
    uint32_t *slot = index_slot(f, &f->kv_index, kv_name, key, strlen(key));
    return *slot ? &f->kvs[*slot - 1] : NULL;
}

const gguf_tensor *gguf_tensor_at(const gguf_file *f, uint64_t i)
{
    return i < f->n_tensors ? &f->tensors[i] : NULL;
}

const gguf_tensor *gguf_lookup_tensor(const gguf_file *f, const char *name)
{
    if (!f->tensor_index.slots)
        return NULL;
    uint32_t *slot = index_slot(f, &f->tensor_index, tensor_name, name, strlen(name));
    return *slot ? &f->tensors[*slot - 1] : NULL;
}

/* ------------------------------------------------------------------------
 * Public: typed access
 * ------------------------------------------------------------------------ */

#define SCALAR_GETTER(fn, ctype, vt)                                  \
    bool fn(const gguf_kv *kv, ctype *out)                            \
    {                                                                 \
        if (!kv || kv->type != (vt))                                  \
            return false;                                             \
        memcpy(out, kv->data, sizeof *out);                           \
        return true;                                                  \
    }
SCALAR_GETTER(gguf_kv_u8, uint8_t, GGUF_VT_U8)
SCALAR_GETTER(gguf_kv_i8, int8_t, GGUF_VT_I8)
SCALAR_GETTER(gguf_kv_u16, uint16_t, GGUF_VT_U16)
SCALAR_GETTER(gguf_kv_i16, int16_t, GGUF_VT_I16)
SCALAR_GETTER(gguf_kv_u32, uint32_t, GGUF_VT_U32)
SCALAR_GETTER(gguf_kv_i32, int32_t, GGUF_VT_I32)
SCALAR_GETTER(gguf_kv_u64, uint64_t, GGUF_VT_U64)
SCALAR_GETTER(gguf_kv_i64, int64_t, GGUF_VT_I64)
SCALAR_GETTER(gguf_kv_f32, float, GGUF_VT_F32)
SCALAR_GETTER(gguf_kv_f64, double, GGUF_VT_F64)

bool gguf_kv_bool(const gguf_kv *kv, bool *out)
{
    if (!kv || kv->type != GGUF_VT_BOOL)
        return false;
    *out = *(const uint8_t *)kv->data != 0;
    return true;
}

bool gguf_kv_str(const gguf_kv *kv, gguf_str *out)
{
    if (!kv || kv->type != GGUF_VT_STR)
        return false;
    *out = kv->strs[0];
    return true;
}

static bool is_int_type(uint32_t t)
{
    return t <= GGUF_VT_I32 || t == GGUF_VT_U64 || t == GGUF_VT_I64;
}

int64_t gguf_kv_elem_as_int(const gguf_kv *kv, uint64_t i)
{
    const uint8_t *p = (const uint8_t *)kv->data + i * gguf_vtype_size(kv->elem_type);
    union { uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32;
            uint64_t u64; int64_t i64; } v;
    memcpy(&v, p, gguf_vtype_size(kv->elem_type));
    switch (kv->elem_type) {
    case GGUF_VT_U8: case GGUF_VT_BOOL: return v.u8;
    case GGUF_VT_I8: return v.i8;
    case GGUF_VT_U16: return v.u16;
    case GGUF_VT_I16: return v.i16;
    case GGUF_VT_U32: return v.u32;
    case GGUF_VT_I32: return v.i32;
    case GGUF_VT_U64: return (int64_t)v.u64;
    case GGUF_VT_I64: return v.i64;
    default: return 0;
    }
}

bool gguf_kv_int(const gguf_kv *kv, int64_t *out)
{
    if (!kv || kv->type == GGUF_VT_ARR || !is_int_type(kv->type))
        return false;
    if (kv->type == GGUF_VT_U64) {
        uint64_t v;
        memcpy(&v, kv->data, 8);
        if (v > INT64_MAX)
            return false;
    }
    *out = gguf_kv_elem_as_int(kv, 0);
    return true;
}

double gguf_kv_elem_as_double(const gguf_kv *kv, uint64_t i)
{
    const uint8_t *p = (const uint8_t *)kv->data + i * gguf_vtype_size(kv->elem_type);
    if (kv->elem_type == GGUF_VT_F32) {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    if (kv->elem_type == GGUF_VT_F64) {
        double v;
        memcpy(&v, p, 8);
        return v;
    }
    if (kv->elem_type == GGUF_VT_U64) {
        uint64_t v;
        memcpy(&v, p, 8);
        return (double)v;
    }
    return (double)gguf_kv_elem_as_int(kv, i);
}

const void *gguf_kv_array(const gguf_kv *kv, uint32_t elem, uint64_t *n)
{
    if (!kv || kv->type != GGUF_VT_ARR || kv->elem_type != elem || elem == GGUF_VT_STR)
        return NULL;
    *n = kv->n;
    return kv->data;
}

bool gguf_str_eq(gguf_str s, const char *c)
{
    size_t n = strlen(c);
    return s.len == n && memcmp(s.ptr, c, n) == 0;
}

/* By-key getters share one shape: find, type-check, describe the mismatch. */
static const gguf_kv *want(const gguf_file *f, const char *key, uint32_t type, gguf_error *err)
{
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    if (!kv) {
        gguf_error_set(err, "missing key %s", key);
        return NULL;
    }
    if (kv->type != type) {
        gguf_error_set(err, "key %s is %s, expected %s", key,
                       kv->type == GGUF_VT_ARR ? "an array" : gguf_vtype_name(kv->type),
                       gguf_vtype_name(type));
        return NULL;
    }
    return kv;
}

#define KEY_GETTER(fn, ctype, vt, kvfn)                                              \
    int fn(const gguf_file *f, const char *key, ctype *out, gguf_error *err)         \
    {                                                                                \
        const gguf_kv *kv = want(f, key, vt, err);                                   \
        return kv && kvfn(kv, out) ? 0 : -1;                                         \
    }
KEY_GETTER(gguf_get_u32, uint32_t, GGUF_VT_U32, gguf_kv_u32)
KEY_GETTER(gguf_get_i32, int32_t, GGUF_VT_I32, gguf_kv_i32)
KEY_GETTER(gguf_get_u64, uint64_t, GGUF_VT_U64, gguf_kv_u64)
KEY_GETTER(gguf_get_f32, float, GGUF_VT_F32, gguf_kv_f32)
KEY_GETTER(gguf_get_bool, bool, GGUF_VT_BOOL, gguf_kv_bool)
KEY_GETTER(gguf_get_str, gguf_str, GGUF_VT_STR, gguf_kv_str)

void gguf_release_range(const gguf_file *f, const void *p, uint64_t n)
{
    long page = sysconf(_SC_PAGESIZE);
    if (!f || !p || n == 0 || page <= 0)
        return;
    uintptr_t a = (uintptr_t)p, pg = (uintptr_t)page;
    for (uint32_t s = 0; s < f->n_shards; s++) {
        const shard *sh = &f->shards[s];
        uintptr_t lo = (uintptr_t)sh->map, hi = lo + (uintptr_t)sh->size;
        /* only our own mmap of a file: a gguf_open_memory image is the
         * caller's memory, where MADV_DONTNEED would zero live data */
        if (!sh->owned_map || !sh->map || a < lo || a >= hi)
            continue;
        uintptr_t end = n > hi - a ? hi : a + (uintptr_t)n;
        /* whole pages: lo is page-aligned and the mapping runs to the end
         * of its last page, so the rounded range stays inside it */
        uintptr_t start = a & ~(pg - 1), stop = (end + pg - 1) & ~(pg - 1);
        /* read-only and private: dropped pages read back the file */
        (void)madvise((void *)start, stop - start, MADV_DONTNEED);
        return;
    }
}
