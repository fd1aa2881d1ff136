/*
 * safetensors.c — see safetensors.h.
 */
#include "safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"

/* A header larger than this is not a real checkpoint's (safetensors itself
 * caps it at 100 MB). */
#define ST_MAX_HEADER (100u << 20)

int st_dtype_size(const char *dtype)
{
    static const struct { const char *name; int size; } t[] = {
        { "F64", 8 }, { "F32", 4 }, { "F16", 2 }, { "BF16", 2 }, { "I64", 8 }, { "I32", 4 },
        { "I16", 2 }, { "I8", 1 },  { "U8", 1 },  { "BOOL", 1 }, { "F8_E4M3", 1 }, { "F8_E5M2", 1 },
        { "U16", 2 }, { "U32", 4 }, { "U64", 8 },
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strcmp(dtype, t[i].name))
            return t[i].size;
    return 0;
}

static int parse_tensor(const char *name, const json_value *v, const uint8_t *data,
                        uint64_t data_size, st_tensor *t, gguf_error *err)
{
    const json_value *dt = json_get(v, "dtype"), *shape = json_get(v, "shape"),
                     *off = json_get(v, "data_offsets");
    if (v->type != JSON_OBJECT || !json_str(dt) || !shape || shape->type != JSON_ARRAY || !off ||
        off->type != JSON_ARRAY || off->n != 2)
        return gguf_error_set(err, "header line %zu: tensor '%s' needs dtype, shape and "
                              "data_offsets [begin, end]", v->line, name);
    int esize = st_dtype_size(dt->str);
    if (!esize || strlen(dt->str) >= sizeof t->dtype)
        return gguf_error_set(err, "header line %zu: tensor '%s' has unknown dtype '%.16s'",
                              v->line, name, dt->str);
    if (shape->n > ST_MAX_DIMS)
        return gguf_error_set(err, "header line %zu: tensor '%s' has %zu dimensions (at most %d)",
                              v->line, name, shape->n, ST_MAX_DIMS);
    uint64_t count = 1;
    for (size_t d = 0; d < shape->n; d++) {
        int64_t x;
        if (!json_int(shape->items[d], &x) || x < 0)
            return gguf_error_set(err, "header line %zu: tensor '%s' has a bad shape", v->line, name);
        if (x > 0 && count > UINT64_MAX / (uint64_t)x)
            return gguf_error_set(err, "header line %zu: tensor '%s' is too large", v->line, name);
        count *= (uint64_t)x;
        t->shape[d] = x;
    }
    int64_t b, e;
    if (!json_int(off->items[0], &b) || !json_int(off->items[1], &e) || b < 0 || e < b)
        return gguf_error_set(err, "header line %zu: tensor '%s' has bad data_offsets", v->line, name);
    if ((uint64_t)e > data_size)
        return gguf_error_set(err, "tensor '%s': data [%" PRId64 ", %" PRId64 ") runs past the end "
                              "of the file (%" PRIu64 " data bytes)", name, b, e, data_size);
    if (count > UINT64_MAX / (uint64_t)esize || (uint64_t)(e - b) != count * (uint64_t)esize)
        return gguf_error_set(err, "tensor '%s': %" PRId64 " data bytes for %" PRIu64 " elements "
                              "of %s", name, e - b, count, dt->str);
    if (!(t->name = strdup(name)))
        return gguf_error_set(err, "out of memory");
    strcpy(t->dtype, dt->str);
    t->n_dims = (int)shape->n;
    t->data = data + b;
    t->nbytes = (uint64_t)(e - b);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int st_parse(const uint8_t *data, size_t size, st_file *f, gguf_error *err)
{
    memset(f, 0, sizeof *f);
    if (size < 8)
        return gguf_error_set(err, "%zu bytes: too short for a safetensors header", size);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | data[i];
    if (hlen > size - 8 || hlen > ST_MAX_HEADER)
        return gguf_error_set(err, "header length %" PRIu64 " runs past the end of the file "
                              "(%zu bytes)", hlen, size);
    json_value *h = json_parse((const char *)data + 8, (size_t)hlen, err);
    if (!h) {
        gguf_error_prefix(err, "header: ");
        return -1;
    }
    if (h->type != JSON_OBJECT) {
        json_free(h);
        return gguf_error_set(err, "header is not a JSON object");
    }
    if (!(f->tensors = calloc(h->n ? h->n : 1, sizeof *f->tensors))) {
        json_free(h);
        return gguf_error_set(err, "out of memory");
    }
    const uint8_t *base = data + 8 + hlen;
    uint64_t data_size = size - 8 - hlen;
    for (size_t i = 0; i < h->n; i++) {
        if (!strcmp(h->keys[i], "__metadata__"))
            continue;
        if (parse_tensor(h->keys[i], h->items[i], base, data_size, &f->tensors[f->n], err))
            goto fail;
        f->n++;
    }
    json_free(h);
    h = NULL;
    /* a name twice: sort a copy of the names and compare neighbours */
    if (f->n > 1) {
        const char **names = malloc(f->n * sizeof *names);
        if (!names) {
            gguf_error_set(err, "out of memory");
            goto fail;
        }
        for (size_t i = 0; i < f->n; i++)
            names[i] = f->tensors[i].name;
        qsort(names, f->n, sizeof *names, cmp_names);
        for (size_t i = 1; i < f->n; i++)
            if (!strcmp(names[i - 1], names[i])) {
                gguf_error_set(err, "header: tensor '%s' appears twice", names[i]);
                free(names);
                goto fail;
            }
        free(names);
    }
    return 0;
fail:
    json_free(h);
    st_close(f);
    return -1;
}

int st_open(const char *path, st_file *f, gguf_error *err)
{
    memset(f, 0, sizeof *f);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return gguf_error_set(err, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return gguf_error_set(err, "not a regular file");
    }
    size_t size = (size_t)st.st_size;
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (size && map == MAP_FAILED)
        return gguf_error_set(err, "cannot map: %s", strerror(errno));
    if (st_parse(map, size, f, err)) {
        /* a Git LFS pointer, a web page ...: say so rather than how the
         * header is broken */
        char kb[256];
        const char *kind = gguf_foreign_kind(map, size, size, kb, sizeof kb);
        if (kind && strncmp(kind, "a safetensors", 13))
            gguf_error_set(err, "not a safetensors file but %s", kind);
        if (map)
            munmap(map, size);
        return -1;
    }
    f->map = map;
    f->map_size = size;
    st_mark_mapped(f, map, size);
    return 0;
}

int st_verify(const st_file *f, gguf_error *err)
{
    return f->verify_owner ? f->verify_owner(f->owner, err) : 0;
}

void st_mark_mapped(st_file *f, const void *map, size_t size)
{
    const uint8_t *lo = map, *hi = lo + size;
    for (size_t i = 0; i < f->n; i++) {
        const st_tensor *t = &f->tensors[i];
        f->tensors[i].mapped = map && t->data >= lo && t->data <= hi &&
                               t->nbytes <= (uint64_t)(hi - t->data);
    }
}

void st_close(st_file *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->tensors[i].name);
    free(f->tensors);
    if (f->free_owner)
        f->free_owner(f->owner);
    if (f->map)
        munmap(f->map, f->map_size);
    memset(f, 0, sizeof *f);
}

void st_drop_pages(const void *data, uint64_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        return;
    uintptr_t start = (uintptr_t)data & ~(uintptr_t)(page - 1);
    uintptr_t end = ((uintptr_t)data + bytes + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
    madvise((void *)start, end - start, MADV_DONTNEED);
}
