/*
 * imatrix.c — reading and writing llama-imatrix files (format in imatrix.h).
 *
 * The file is small (one float per input column of each matrix), so it is
 * read whole and parsed with bounds checks against its size.
 */
#include <ggufkit/quants.h>
#include "readfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"

typedef struct rd {
    const uint8_t *p;
    size_t         size, pos;
} rd;

static int rd_i32(rd *r, int32_t *v)
{
    if (r->size - r->pos < 4)
        return -1;
    memcpy(v, r->p + r->pos, 4);
    r->pos += 4;
    return 0;
}

/* The largest importance matrix read: a dense 70B model's is ~30 MB, a big
 * mixture of experts' a few hundred MB. */
#define IMATRIX_MAX_FILE ((size_t)4 << 30)

static int slurp(const char *path, uint8_t **buf, size_t *size, gguf_error *err)
{
    return gguf_read_file(path, IMATRIX_MAX_FILE, buf, size, err);
}

static int parse_entry(rd *r, gguf_imatrix_entry *e, int32_t i, gguf_error *err)
{
    size_t at = r->pos;
    int32_t len;
    if (rd_i32(r, &len) || len < 1 || (size_t)len > r->size - r->pos)
        return gguf_error_set(err, "offset %zu: entry %d: bad name length", at, i);
    if (!(e->name = malloc((size_t)len + 1)))
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    memcpy(e->name, r->p + r->pos, (size_t)len);
    e->name[len] = '\0';
    r->pos += (size_t)len;
    if (strlen(e->name) != (size_t)len)
        return gguf_error_set(err, "offset %zu: entry %d: name contains a NUL byte", at, i);
    at = r->pos;
    if (rd_i32(r, &e->ncall) || rd_i32(r, &e->nval))
        return gguf_error_set(err, "offset %zu: entry %d (%s): truncated", at, i, e->name);
    if (e->nval < 1 || (size_t)e->nval > (r->size - r->pos) / 4)
        return gguf_error_set(err, "offset %zu: entry %d (%s): %d values do not fit in the file",
                              at, i, e->name, e->nval);
    e->values = malloc((size_t)e->nval * 4);
    e->weights = malloc((size_t)e->nval * 4);
    if (!e->values || !e->weights)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    memcpy(e->values, r->p + r->pos, (size_t)e->nval * 4);
    r->pos += (size_t)e->nval * 4;
    for (int32_t j = 0; j < e->nval; j++) {
        if (!isfinite(e->values[j]))
            return gguf_error_set(err, "entry %d (%s): value %d is not finite", i, e->name, j);
        e->weights[j] = e->ncall > 0 ? e->values[j] / (float)e->ncall : e->values[j];
    }
    return 0;
}

int gguf_imatrix_parse(const void *data, size_t size, gguf_imatrix *im, gguf_error *err)
{
    memset(im, 0, sizeof *im);
    rd r = { data, size, 0 };
    int32_t n;
    if (rd_i32(&r, &n) || n < 1)
        return gguf_error_set(err, "not an imatrix file: no entries");
    /* smallest entry: name length, 1 name byte, ncall, nval, 1 value */
    if ((size_t)n > size / 17)
        return gguf_error_set(err, "entry count %d cannot fit in %zu bytes", n, size);
    if (!(im->entries = calloc((size_t)n, sizeof *im->entries)))
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    im->n = n;
    for (int32_t i = 0; i < n; i++) {
        if (parse_entry(&r, &im->entries[i], i, err))
            goto fail;
        for (int32_t j = 0; j < i; j++)
            if (strcmp(im->entries[j].name, im->entries[i].name) == 0) {
                gguf_error_set(err, "duplicate entry '%s'", im->entries[i].name);
                goto fail;
            }
    }
    if (r.pos < size) {
        int32_t len;
        if (rd_i32(&r, &im->chunks) || rd_i32(&r, &len) || len < 0 ||
            (size_t)len != size - r.pos) {
            gguf_error_set(err, "offset %zu: malformed dataset trailer", r.pos);
            goto fail;
        }
        if (!(im->dataset = malloc((size_t)len + 1))) {
            gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
            goto fail;
        }
        memcpy(im->dataset, r.p + r.pos, (size_t)len);
        im->dataset[len] = '\0';
    }
    return 0;
fail:
    gguf_imatrix_free(im);
    return -1;
}

int gguf_imatrix_load(const char *path, gguf_imatrix *im, gguf_error *err)
{
    uint8_t *buf = NULL;
    size_t size = 0;
    memset(im, 0, sizeof *im);
    if (slurp(path, &buf, &size, err))
        return -1;
    int rc = gguf_imatrix_parse(buf, size, im, err);
    free(buf);
    return rc;
}

const float *gguf_imatrix_find(const gguf_imatrix *im, const char *name, int32_t *n)
{
    for (int32_t i = 0; i < im->n; i++)
        if (strcmp(im->entries[i].name, name) == 0) {
            *n = im->entries[i].nval;
            return im->entries[i].weights;
        }
    return NULL;
}

int gguf_imatrix_save(const char *path, const gguf_imatrix *im, gguf_error *err)
{
    gguf_outfile o;
    if (gguf_outfile_open(&o, path, err))
        return -1;
    int rc = gguf_outfile_write(&o, &im->n, 4, err);
    for (int32_t i = 0; rc == 0 && i < im->n; i++) {
        const gguf_imatrix_entry *e = &im->entries[i];
        int32_t len = (int32_t)strlen(e->name);
        rc = gguf_outfile_write(&o, &len, 4, err) || gguf_outfile_write(&o, e->name, (size_t)len, err) ||
             gguf_outfile_write(&o, &e->ncall, 4, err) || gguf_outfile_write(&o, &e->nval, 4, err) ||
             gguf_outfile_write(&o, e->values, (size_t)e->nval * 4, err) ? -1 : 0;
    }
    if (rc == 0) {
        int32_t len = im->dataset ? (int32_t)strlen(im->dataset) : 0;
        rc = gguf_outfile_write(&o, &im->chunks, 4, err) || gguf_outfile_write(&o, &len, 4, err) ||
             gguf_outfile_write(&o, im->dataset ? im->dataset : "", (size_t)len, err) ? -1 : 0;
    }
    if (rc == 0)
        return gguf_outfile_commit(&o, err);
    gguf_outfile_discard(&o);
    return -1;
}

void gguf_imatrix_free(gguf_imatrix *im)
{
    for (int32_t i = 0; im->entries && i < im->n; i++) {
        free(im->entries[i].name);
        free(im->entries[i].values);
        free(im->entries[i].weights);
    }
    free(im->entries);
    free(im->dataset);
    memset(im, 0, sizeof *im);
}
