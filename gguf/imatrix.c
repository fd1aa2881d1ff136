/*
 * imatrix.c — reading and writing llama-imatrix files, in both formats
 * (see <ggufkit/quants.h>): the legacy .dat (c392e50) and the GGUF one
 * (e21cdc11: general.type "imatrix", NAME.in_sum2 and NAME.counts f32
 * tensors, imatrix.datasets / .chunk_count / .chunk_size), told apart by
 * content (the GGUF magic).
 *
 * The file is small (one float per input column of each matrix), so it is
 * read whole and parsed with bounds checks against its size.
 */
#include <ggufkit/quants.h>
#include "readfile.h"

#include <errno.h>
#include <inttypes.h>
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

/* ---------------------------------------------------------------------------
 * The GGUF format (llama-imatrix e21cdc11)
 */

#define SUMS_SUFFIX   ".in_sum2"
#define COUNTS_SUFFIX ".counts"

/* name ends in suffix: the length of the part before it, else 0. */
static size_t stem_len(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && !strcmp(name + n - k, suffix) ? n - k : 0;
}

/* The f32 tensor named stem + suffix, or NULL. */
static const gguf_tensor *partner(const gguf_file *f, const char *stem, size_t len,
                                  const char *suffix)
{
    char name[GGUF_MAX_NAME + 16];
    if (len + strlen(suffix) >= sizeof name)
        return NULL;
    memcpy(name, stem, len);
    strcpy(name + len, suffix);
    return gguf_lookup_tensor(f, name);
}

/* One entry from its in_sum2 [n_per_row, n_mat] and counts [1, n_mat]
 * tensors: the raw sums, and as weights each matrix's sums over its count
 * (1 for a matrix with no count: an expert calibration never reached), as
 * llama-quantize computes them. */
static int gguf_entry(const gguf_tensor *sums, const gguf_tensor *counts, size_t stem,
                      gguf_imatrix_entry *e, gguf_error *err)
{
    const int64_t ne0 = sums->ne[0], ne1 = sums->ne[1];
    if (sums->type != GGUF_DT_F32 || sums->ne[2] != 1 || sums->ne[3] != 1)
        return gguf_error_set(err, "tensor %s: expected a 2-D f32 tensor", sums->name);
    if (counts->type != GGUF_DT_F32 || counts->n_elements != ne1 || counts->ne[0] != 1)
        return gguf_error_set(err, "tensor %s: expected f32 [1, %" PRId64 "] for %s", counts->name,
                              ne1, sums->name);
    if (sums->n_elements > INT32_MAX)
        return gguf_error_setc(err, GGUF_ERR_LIMIT, "tensor %s: %" PRId64 " values, more than an "
                               "entry can hold", sums->name, sums->n_elements);
    e->nval = (int32_t)sums->n_elements;
    if (!(e->name = malloc(stem + 1)))
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    memcpy(e->name, sums->name, stem);
    e->name[stem] = '\0';
    e->values = malloc((size_t)e->nval * 4);
    e->weights = malloc((size_t)e->nval * 4);
    if (!e->values || !e->weights)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    memcpy(e->values, sums->data, (size_t)e->nval * 4);
    e->n_mat = (int32_t)ne1;
    if (!(e->counts = malloc((size_t)ne1 * 4)))
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    memcpy(e->counts, counts->data, (size_t)ne1 * 4);
    float max_count = 0;
    for (int64_t j = 0; j < ne1; j++) {
        const float count = e->counts[j];
        if (!isfinite(count) || count < 0)
            return gguf_error_set(err, "tensor %s: count %" PRId64 " is %g, expected a finite "
                                  "number >= 0", counts->name, j, count);
        for (int64_t i = 0; i < ne0; i++) {
            const float v = e->values[j * ne0 + i];
            if (!isfinite(v))
                return gguf_error_set(err, "tensor %s: value %" PRId64 " is not finite",
                                      sums->name, j * ne0 + i);
            e->weights[j * ne0 + i] = count > 0.0f ? v / count : 1.0f;
        }
        max_count = count > max_count ? count : max_count;
    }
    /* the legacy ncall field: the tokens seen, for reports */
    e->ncall = max_count < (float)INT32_MAX ? (int32_t)max_count : INT32_MAX;
    return 0;
}

static int parse_gguf_keys(const gguf_file *f, gguf_imatrix *im, gguf_error *err)
{
    const gguf_kv *ds = gguf_lookup_kv(f, "imatrix.datasets");
    uint32_t chunks, chunk_size;
    if (!ds || gguf_get_u32(f, "imatrix.chunk_count", &chunks, NULL) ||
        gguf_get_u32(f, "imatrix.chunk_size", &chunk_size, NULL))
        return gguf_error_set(err, "missing imatrix metadata (imatrix.datasets, u32 "
                              "imatrix.chunk_count and imatrix.chunk_size)");
    if (ds->type != GGUF_VT_ARR || ds->elem_type != GGUF_VT_STR)
        return gguf_error_set(err, "imatrix.datasets is not an array of strings");
    im->chunks = chunks > INT32_MAX ? INT32_MAX : (int32_t)chunks;
    im->chunk_size = chunk_size;
    if (ds->n > 0) {
        const gguf_str d = ds->strs[0];
        if (memchr(d.ptr, 0, d.len))
            return gguf_error_set(err, "imatrix.datasets[0] contains a NUL byte");
        if (!(im->dataset = malloc(d.len + 1)))
            return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        memcpy(im->dataset, d.ptr, d.len);
        im->dataset[d.len] = '\0';
    }
    return 0;
}

static int parse_gguf(const void *data, size_t size, gguf_imatrix *im, gguf_error *err)
{
    gguf_file *f = gguf_open_memory(data, size, err);
    if (!f)
        return -1;
    int rc = -1;
    uint64_t n = 0;
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++)
        n += stem_len(gguf_tensor_at(f, i)->name, SUMS_SUFFIX) > 0;
    if (n == 0 || n > INT32_MAX) {
        gguf_error_set(err, "no imatrix data: no NAME" SUMS_SUFFIX " tensors");
        goto done;
    }
    if (parse_gguf_keys(f, im, err))
        goto done;
    if (!(im->entries = calloc((size_t)n, sizeof *im->entries))) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* every in_sum2 with its counts; a counts tensor without sums is an
     * error too (llama-quantize: "mismatched sums and counts") */
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        size_t stem = stem_len(t->name, SUMS_SUFFIX);
        const gguf_tensor *other;
        if (stem) {
            if (!(other = partner(f, t->name, stem, COUNTS_SUFFIX))) {
                gguf_error_set(err, "mismatched sums and counts for %.*s: no %s tensor", (int)stem,
                               t->name, COUNTS_SUFFIX);
                goto done;
            }
            if (gguf_entry(t, other, stem, &im->entries[im->n++], err))
                goto done;
        } else if ((stem = stem_len(t->name, COUNTS_SUFFIX)) &&
                   !partner(f, t->name, stem, SUMS_SUFFIX)) {
            gguf_error_set(err, "mismatched sums and counts for %.*s: no %s tensor", (int)stem,
                           t->name, SUMS_SUFFIX);
            goto done;
        }
    }
    rc = 0;
done:
    gguf_close(f);
    return rc;
}

int gguf_imatrix_parse(const void *data, size_t size, gguf_imatrix *im, gguf_error *err)
{
    memset(im, 0, sizeof *im);
    if (size >= 4 && !memcmp(data, GGUF_MAGIC, 4)) {
        if (parse_gguf(data, size, im, err)) {
            gguf_imatrix_free(im);
            return -1;
        }
        return 0;
    }
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

/* Entries sorted by name (llama-imatrix's deterministic order). */
static int cmp_entry(const void *a, const void *b)
{
    return strcmp((*(const gguf_imatrix_entry *const *)a)->name,
                  (*(const gguf_imatrix_entry *const *)b)->name);
}

/* One entry's sums and counts as written: as they are, or a .dat entry
 * converted as llama-imatrix --in-file does (values and ncall times the
 * chunk size: exact in float for the power-of-two sizes it uses, so the
 * weights stay bit for bit those of the .dat). */
static int entry_arrays(const gguf_imatrix *im, const gguf_imatrix_entry *e, float *sums,
                        float *counts, int32_t n_mat)
{
    if (e->counts) {
        memcpy(sums, e->values, (size_t)e->nval * 4);
        memcpy(counts, e->counts, (size_t)n_mat * 4);
        return 0;
    }
    for (int32_t j = 0; j < e->nval; j++)
        sums[j] = e->values[j] * (float)im->chunk_size;
    counts[0] = (float)((int64_t)e->ncall * im->chunk_size);
    return 0;
}

static int add_entry_tensors(gguf_writer *w, const gguf_imatrix_entry *e, int32_t n_mat,
                             gguf_error *err)
{
    char name[GGUF_MAX_NAME + 16];
    const int64_t ne_s[2] = { e->nval / n_mat, n_mat }, ne_c[2] = { 1, n_mat };
    const uint32_t dims = n_mat > 1 ? 2 : 1; /* ggml_n_dims drops trailing 1s */
    if (strlen(e->name) + strlen(SUMS_SUFFIX) >= GGUF_MAX_NAME)
        return gguf_error_setc(err, GGUF_ERR_LIMIT, "entry %s: name too long for a tensor", e->name);
    snprintf(name, sizeof name, "%s" SUMS_SUFFIX, e->name);
    if (gguf_writer_add_tensor(w, name, GGUF_DT_F32, dims, ne_s, err) < 0)
        return -1;
    snprintf(name, sizeof name, "%s" COUNTS_SUFFIX, e->name);
    return gguf_writer_add_tensor(w, name, GGUF_DT_F32, dims, ne_c, err) < 0 ? -1 : 0;
}

int gguf_imatrix_save_gguf(const char *path, const gguf_imatrix *im, gguf_error *err)
{
    const char *ds[1] = { im->dataset };
    return gguf_imatrix_save_gguf_datasets(path, im, ds, im->dataset ? 1 : 0, err);
}

int gguf_imatrix_save_gguf_datasets(const char *path, const gguf_imatrix *im,
                                    const char *const *datasets, size_t n_datasets,
                                    gguf_error *err)
{
    if (im->chunk_size == 0)
        return gguf_error_setc(err, GGUF_ERR_ARG, "an imatrix in the GGUF format needs its chunk size");
    const gguf_imatrix_entry **order = malloc((size_t)(im->n > 0 ? im->n : 1) * sizeof *order);
    gguf_writer *w = gguf_writer_new();
    float *sums = NULL, *counts = NULL;
    int rc = -1;
    if (!order || !w) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int32_t i = 0; i < im->n; i++)
        order[i] = &im->entries[i];
    qsort(order, (size_t)im->n, sizeof *order, cmp_entry);
    gguf_writer_set_str(w, "general.type", "imatrix");
    gguf_writer_set_str_array(w, "imatrix.datasets", datasets, NULL, n_datasets);
    gguf_writer_set_u32(w, "imatrix.chunk_count", im->chunks > 0 ? (uint32_t)im->chunks : 0);
    gguf_writer_set_u32(w, "imatrix.chunk_size", im->chunk_size);
    if (gguf_writer_error(w)) {
        *err = *gguf_writer_error(w);
        goto done;
    }
    int32_t max_val = 1;
    for (int32_t i = 0; i < im->n; i++) {
        const gguf_imatrix_entry *e = order[i];
        const int32_t n_mat = e->counts && e->n_mat > 1 ? e->n_mat : 1;
        if (e->nval < 1 || e->nval % n_mat) {
            gguf_error_setc(err, GGUF_ERR_ARG, "entry %s: %d values are not %d rows", e->name,
                            e->nval, n_mat);
            goto done;
        }
        if (add_entry_tensors(w, e, n_mat, err))
            goto done;
        max_val = e->nval > max_val ? e->nval : max_val;
    }
    sums = malloc((size_t)max_val * 4);
    counts = malloc((size_t)max_val * 4);
    if (!sums || !counts) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (gguf_writer_begin(w, path, err))
        goto done;
    for (int32_t i = 0; i < im->n; i++) {
        const gguf_imatrix_entry *e = order[i];
        const int32_t n_mat = e->counts && e->n_mat > 1 ? e->n_mat : 1;
        entry_arrays(im, e, sums, counts, n_mat);
        if (gguf_writer_write_tensor(w, sums, (size_t)e->nval * 4, err) ||
            gguf_writer_write_tensor(w, counts, (size_t)n_mat * 4, err))
            goto done;
    }
    rc = gguf_writer_finish(w, err);
done:
    if (rc && w)
        gguf_writer_abort(w);
    gguf_writer_free(w);
    free(order);
    free(sums);
    free(counts);
    return rc;
}

void gguf_imatrix_free(gguf_imatrix *im)
{
    for (int32_t i = 0; im->entries && i < im->n; i++) {
        free(im->entries[i].name);
        free(im->entries[i].values);
        free(im->entries[i].weights);
        free(im->entries[i].counts);
    }
    free(im->entries);
    free(im->dataset);
    memset(im, 0, sizeof *im);
}
