/*
 * target.c — gguf-quantize --sensitivity (see target.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/quants.h>
#include "readfile.h"
#include "target.h"

void target_table_free(target_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->rows[i].name);
    free(t->rows);
    memset(t, 0, sizeof *t);
}

/* One field of a line: up to the tab (or the end); *p moves past it. */
static size_t field(const char **p, const char *end, const char **start)
{
    *start = *p;
    const char *q = *p;
    while (q < end && *q != '\t')
        q++;
    const size_t n = (size_t)(q - *p);
    *p = q < end ? q + 1 : q;
    return n;
}

static int parse_row(const char *s, const char *end, target_row *r, long line, gguf_error *err)
{
    const char *f[4];
    size_t n[4];
    for (int k = 0; k < 4; k++) {
        if (k > 0 && s >= end)
            return gguf_error_set(err, "line %ld: %d fields, expected 4 (tensor, type, bytes, "
                                  "mean_kld, tab-separated)", line, k);
        n[k] = field(&s, end, &f[k]);
    }
    if (s < end)
        return gguf_error_set(err, "line %ld: more than 4 fields", line);
    char buf[64];
    if (n[0] == 0 || n[0] >= GGUF_MAX_NAME || memchr(f[0], 0, n[0]))
        return gguf_error_set(err, "line %ld: a tensor name of %zu bytes", line, n[0]);
    int ty = -1;
    if (n[1] > 0 && n[1] < sizeof buf) {
        memcpy(buf, f[1], n[1]);
        buf[n[1]] = '\0';
        ty = gguf_dtype_from_name(buf);
    }
    if (ty < 0 || !gguf_codec_get((uint32_t)ty))
        return gguf_error_set(err, "line %ld: '%.*s' is not a type gguf-quantize writes", line,
                              (int)(n[1] < 32 ? n[1] : 32), f[1]);
    for (int k = 2; k < 4; k++)
        if (n[k] == 0 || n[k] >= sizeof buf)
            return gguf_error_set(err, "line %ld: field %d is %s", line, k + 1,
                                  n[k] ? "too long" : "empty");
    memcpy(buf, f[2], n[2]);
    buf[n[2]] = '\0';
    char *e;
    errno = 0;
    unsigned long long b = buf[0] >= '0' && buf[0] <= '9' ? strtoull(buf, &e, 10) : 0;
    if (b == 0 || errno || *e || b > (1ull << 50))
        return gguf_error_set(err, "line %ld: bytes '%s' is not a size from 1 to 2^50", line, buf);
    memcpy(buf, f[3], n[3]);
    buf[n[3]] = '\0';
    errno = 0;
    const double kld = strtod(buf, &e);
    if (errno || *e || !isfinite(kld) || kld < -1.0 || kld > 1e6)
        return gguf_error_set(err, "line %ld: mean_kld '%s' is not a number from -1 to 1e6",
                              line, buf);
    if (!(r->name = malloc(n[0] + 1)))
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    memcpy(r->name, f[0], n[0]);
    r->name[n[0]] = '\0';
    r->type = (uint32_t)ty;
    r->bytes = b;
    r->kld = kld;
    return 0;
}

static int cmp_row(const void *a, const void *b)
{
    const target_row *x = a, *y = b;
    const int c = strcmp(x->name, y->name);
    return c ? c : (x->type > y->type) - (x->type < y->type);
}

int target_table_parse(const char *data, size_t len, target_table *t, gguf_error *err)
{
    memset(t, 0, sizeof *t);
    if (len > TARGET_TABLE_MAX)
        return gguf_error_set(err, "%zu bytes: larger than a table can be (%u)", len,
                              TARGET_TABLE_MAX);
    size_t cap = 1;
    for (size_t i = 0; i < len; i++)
        cap += data[i] == '\n';
    if (!(t->rows = calloc(cap, sizeof *t->rows)))
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    const char *p = data, *end = data + len;
    long line = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        line++;
        const char *le = e > p && e[-1] == '\r' ? e - 1 : e;
        if (le > p && *p != '#' && parse_row(p, le, &t->rows[t->n++], line, err)) {
            target_table_free(t);
            return -1;
        }
        p = nl ? nl + 1 : end;
    }
    if (t->n == 0) {
        target_table_free(t);
        return gguf_error_set(err, "no rows: not a table of gguf-run --sensitivity");
    }
    if (target_table_index(t, err)) {
        target_table_free(t);
        return -1;
    }
    return 0;
}

int target_table_index(target_table *t, gguf_error *err)
{
    if (t->n)
        qsort(t->rows, t->n, sizeof *t->rows, cmp_row);
    for (size_t i = 1; i < t->n; i++)
        if (!cmp_row(&t->rows[i - 1], &t->rows[i]))
            return gguf_error_set(err, "%s at %s twice", t->rows[i].name,
                                  gguf_dtype_name(t->rows[i].type));
    return 0;
}

int target_table_load(const char *path, target_table *t, gguf_error *err)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    memset(t, 0, sizeof *t);
    if (gguf_read_file(path, TARGET_TABLE_MAX, &buf, &len, err))
        return -1;
    const int rc = target_table_parse((const char *)buf, len, t, err);
    free(buf);
    return rc;
}

/* The rows of one tensor: [*lo, *hi) of the sorted table. */
static void rows_of(const target_table *t, const char *name, size_t *lo, size_t *hi);

int target_table_fill(target_table *t, const target_table *est, gguf_error *err)
{
    target_row *rows = realloc(t->rows, (t->n + est->n + 1) * sizeof *rows);
    if (!rows)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    t->rows = rows;
    const size_t n_measured = t->n;
    for (size_t a = 0, b; a < est->n; a = b) {
        for (b = a; b < est->n && !strcmp(est->rows[b].name, est->rows[a].name); b++)
            ;
        size_t lo, hi;
        rows_of(&(target_table){ t->rows, n_measured }, est->rows[a].name, &lo, &hi);
        if (lo == hi)
            continue; /* not measured: the tensor keeps its stock type */
        /* the measured costs over the estimated ones, on the types both have */
        double m = 0, e = 0;
        for (size_t r = lo; r < hi; r++)
            for (size_t k = a; k < b; k++)
                if (est->rows[k].type == t->rows[r].type) {
                    m += t->rows[r].kld;
                    e += est->rows[k].kld;
                }
        const double gain = m > 0 && e > 0 ? m / e : 0;
        for (size_t k = a; k < b; k++) {
            bool have = false;
            for (size_t r = lo; r < hi && !have; r++)
                have = t->rows[r].type == est->rows[k].type;
            if (have)
                continue;
            target_row *nr = &t->rows[t->n];
            if (!(nr->name = strdup(est->rows[k].name)))
                return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
            t->n++;
            nr->type = est->rows[k].type;
            nr->bytes = est->rows[k].bytes;
            nr->kld = gain * est->rows[k].kld;
        }
    }
    return target_table_index(t, err);
}

static void rows_of(const target_table *t, const char *name, size_t *lo, size_t *hi)
{
    size_t a = 0, b = t->n;
    while (a < b) {
        const size_t m = a + (b - a) / 2;
        if (strcmp(t->rows[m].name, name) < 0)
            a = m + 1;
        else
            b = m;
    }
    *lo = a;
    while (b < t->n && !strcmp(t->rows[b].name, name))
        b++;
    *hi = b < a ? a : b;
}

static uint64_t bytes_at(const target_item *it, uint32_t type)
{
    uint64_t rb;
    return gguf_row_size(type, it->ne0, &rb, NULL) ? 0 : rb * it->n_rows;
}

typedef struct choice {
    size_t lo, hi, at; /* the item's rows in the table; the one chosen (hi: its stock type) */
} choice;

static uint64_t cur_bytes(const target_item *it, const target_table *t, const choice *c)
{
    return c->at < c->hi ? t->rows[c->at].bytes : bytes_at(it, it->stock);
}

/* Every item's argmin of kld + λ · bytes; the total bytes. */
static uint64_t choose(const target_item *items, size_t n, const target_table *t, choice *c,
                       double lambda)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        double best = INFINITY;
        for (size_t r = c[i].lo; r < c[i].hi; r++) {
            const double v = t->rows[r].kld + lambda * (double)t->rows[r].bytes;
            if (v < best || (v == best && t->rows[r].bytes < t->rows[c[i].at].bytes)) {
                best = v;
                c[i].at = r;
            }
        }
        total += cur_bytes(&items[i], t, &c[i]);
    }
    return total;
}

int target_allocate(target_item *items, size_t n, const target_table *t, uint64_t budget,
                    target_result *res, gguf_error *err)
{
    memset(res, 0, sizeof *res);
    choice *c = calloc(n ? n : 1, sizeof *c);
    if (!c)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    int rc = -1;
    double stock_kld = 0;
    uint64_t least = 0;
    for (size_t i = 0; i < n; i++) {
        const target_item *it = &items[i];
        rows_of(t, it->name, &c[i].lo, &c[i].hi);
        c[i].at = c[i].hi;
        bool stock_row = false;
        uint64_t small = c[i].lo < c[i].hi ? UINT64_MAX : bytes_at(it, it->stock);
        for (size_t r = c[i].lo; r < c[i].hi; r++) {
            const uint64_t want = bytes_at(it, t->rows[r].type);
            if (want != t->rows[r].bytes) {
                gguf_error_set(err, "%s at %s: %llu bytes in the table, the tensor takes %llu "
                               "(a table of another model?)", it->name,
                               gguf_dtype_name(t->rows[r].type),
                               (unsigned long long)t->rows[r].bytes, (unsigned long long)want);
                goto done;
            }
            if (t->rows[r].type == it->stock) {
                stock_row = true;
                stock_kld += t->rows[r].kld;
            }
            small = want < small ? want : small;
        }
        if (c[i].lo < c[i].hi && !stock_row)
            stock_kld = -INFINITY; /* not comparable */
        least += small;
        res->stock_bytes += bytes_at(it, it->stock);
    }
    res->stock_kld = isfinite(stock_kld) ? stock_kld : -1;
    if (least > budget) {
        gguf_error_set(err, "the smallest mix the table allows takes %llu bytes, more than the "
                       "%llu the target leaves", (unsigned long long)least,
                       (unsigned long long)budget);
        goto done;
    }
    /* the smallest λ whose mix fits */
    double lo = 0, hi = 1e-12;
    while (choose(items, n, t, c, hi) > budget && hi < 1e30)
        hi *= 4;
    for (int k = 0; k < 100; k++) {
        const double mid = 0.5 * (lo + hi);
        if (choose(items, n, t, c, mid) > budget)
            lo = mid;
        else
            hi = mid;
    }
    uint64_t total = choose(items, n, t, c, hi);
    /* the bytes left: the upgrades of most KLD saved per byte */
    for (;;) {
        double best = 0;
        size_t bi = 0, br = 0;
        for (size_t i = 0; i < n; i++) {
            const double k0 = c[i].at < c[i].hi ? t->rows[c[i].at].kld : INFINITY;
            const uint64_t b0 = cur_bytes(&items[i], t, &c[i]);
            for (size_t r = c[i].lo; r < c[i].hi; r++) {
                const uint64_t b = t->rows[r].bytes;
                if (b <= b0 || total - b0 + b > budget || !(t->rows[r].kld < k0))
                    continue;
                const double gain = (k0 - t->rows[r].kld) / (double)(b - b0);
                if (gain > best) {
                    best = gain;
                    bi = i;
                    br = r;
                }
            }
        }
        if (best <= 0)
            break;
        total = total - cur_bytes(&items[bi], t, &c[bi]) + t->rows[br].bytes;
        c[bi].at = br;
    }
    double kld = 0;
    for (size_t i = 0; i < n; i++)
        kld += c[i].at < c[i].hi ? t->rows[c[i].at].kld : 0;
    /* never worse than the stock mix by the same measure */
    res->kept_stock = res->stock_kld >= 0 && res->stock_bytes <= budget && res->stock_kld <= kld;
    for (size_t i = 0; i < n; i++) {
        items[i].chosen = res->kept_stock || c[i].at == c[i].hi ? items[i].stock
                                                                 : t->rows[c[i].at].type;
        res->n_changed += items[i].chosen != items[i].stock;
    }
    res->bytes = res->kept_stock ? res->stock_bytes : total;
    res->kld = res->kept_stock ? res->stock_kld : kld;
    rc = 0;
done:
    free(c);
    return rc;
}
