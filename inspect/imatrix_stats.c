/*
 * imatrix_stats.c — llama-imatrix's --show-statistics (see imatrix_stats.h).
 *
 * Every sum is a float sum in llama-imatrix's order (std::accumulate and
 * std::inner_product from 0.0f), every quotient in float: the printed
 * figures are its figures, digit for digit.
 */
#include "imatrix_stats.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* llama-imatrix's chunk when it reads a legacy file with no -c: n_ctx 512 */
#define LEGACY_CHUNK 512

typedef struct tstat {
    const gguf_imatrix_entry *e;
    float   *values; /* llama-imatrix's Stats: the sums, n_mat × row */
    int64_t *counts; /* n_mat */
    int32_t  n_mat, row;
    char     layer[32], tensor[256]; /* process_tensor_name */
    float    total, mean, max, min, dev, active, entropy, zd, cossim;
    int      elements;
} tstat;

/* llama-imatrix's process_tensor_name: the block (the part after "blk",
 * else "-") and the tensor (the part before the first "weight", else the
 * whole name). */
static void split_name(const char *name, char *layer, size_t nl, char *tensor, size_t nt)
{
    snprintf(layer, nl, "-");
    snprintf(tensor, nt, "%s", name);
    const char *parts[64];
    size_t lens[64], n = 0;
    for (const char *p = name; n < 64;) {
        const char *dot = strchr(p, '.');
        parts[n] = p;
        lens[n++] = dot ? (size_t)(dot - p) : strlen(p);
        if (!dot)
            break;
        p = dot + 1;
    }
    for (size_t i = 0; i + 1 < n; i++)
        if (lens[i] == 3 && !memcmp(parts[i], "blk", 3)) {
            snprintf(layer, nl, "%.*s", (int)lens[i + 1], parts[i + 1]);
            break;
        }
    for (size_t i = 1; i < n; i++)
        if (lens[i] == 6 && !memcmp(parts[i], "weight", 6)) {
            snprintf(tensor, nt, "%.*s", (int)lens[i - 1], parts[i - 1]);
            break;
        }
}

/* std::stoi of the block: its leading integer, -1 when there is none (or
 * it does not fit an int: llama-imatrix throws there). */
static int block_of(const char *layer)
{
    char *end;
    errno = 0;
    long v = strtol(layer, &end, 10);
    return end == layer || errno || v < -2147483647L || v > 2147483647L ? -1 : (int)v;
}

/* compute_statistics: false when it computes none (every count zero). */
static bool compute(tstat *t)
{
    const size_t n_all = (size_t)t->n_mat * (size_t)t->row;
    float *act = malloc((n_all ? n_all : 1) * sizeof *act);
    if (!act)
        return false;
    size_t n = 0;
    for (int32_t i = 0; i < t->n_mat; i++) {
        if (t->counts[i] == 0)
            continue;
        for (int32_t j = 0; j < t->row; j++)
            act[n++] = t->values[(size_t)i * (size_t)t->row + (size_t)j] / (float)t->counts[i];
    }
    if (n == 0) {
        free(act);
        return false;
    }
    float total = 0.0f, sq = 0.0f, mx = act[0], mn = act[0];
    for (size_t i = 0; i < n; i++) {
        total = total + act[i];
        sq = sq + act[i] * act[i];
        mx = act[i] > mx ? act[i] : mx;
        mn = act[i] < mn ? act[i] : mn;
    }
    const float mean = total / (float)n;
    const float var = sq / (float)n - mean * mean;
    const float dev = sqrtf(var > 0.0f ? var : 0.0f);
    size_t inactive = 0;
    for (size_t i = 0; i < n; i++)
        inactive += fabsf(act[i]) <= 1e-5f;
    float entropy = 0.0f;
    if (total > 0)
        for (size_t i = 0; i < n; i++) {
            const float p = act[i] / total;
            if (p > 0)
                entropy -= p * log2f(p);
        }
    int z = 0;
    if (dev > 0.0f)
        for (size_t i = 0; i < n; i++)
            z += (act[i] - mean) / dev > 1;
    free(act);
    t->total = total, t->mean = mean, t->max = mx, t->min = mn, t->dev = dev;
    t->elements = (int)n;
    t->active = 1 - (float)inactive / (float)n;
    t->entropy = entropy;
    t->zd = (float)z / (float)t->elements;
    return true;
}

static float dot(const float *a, const float *b, size_t n)
{
    float s = 0.0f;
    for (size_t i = 0; i < n; i++)
        s = s + a[i] * b[i];
    return s;
}

/* compute_cossim: with the same tensor of the block before ("blk.N." →
 * "blk.N-1."), over the raw sums; 0 without one. */
static void cossim(tstat *ts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *name = ts[i].e->name, *b = name;
        ts[i].cossim = 0;
        /* the first "blk." followed by digits and a '.' */
        for (; (b = strstr(b, "blk.")); b++) {
            const char *d = b + 4, *q = d;
            while (*q >= '0' && *q <= '9')
                q++;
            if (q > d && *q == '.')
                break;
        }
        if (!b)
            continue;
        char *end;
        errno = 0;
        long blk = strtol(b + 4, &end, 10);
        if (errno || blk > 2147483647L)
            continue;
        char want[512];
        if (snprintf(want, sizeof want, "%.*s%ld%s", (int)(b + 4 - name), name, blk - 1, end) >=
            (int)sizeof want)
            continue;
        for (size_t k = 0; k < n; k++) {
            if (strcmp(ts[k].e->name, want))
                continue;
            /* over this tensor's length, the previous one's magnitude over
             * its own; a previous one shorter than this (Gemma 4's sliding
             * and full blocks differ in width) llama-imatrix reads past
             * the end of (its figure is garbage): 0 here */
            const size_t len = (size_t)ts[i].n_mat * (size_t)ts[i].row;
            const size_t len_prev = (size_t)ts[k].n_mat * (size_t)ts[k].row;
            if (len > len_prev)
                break;
            const float dp = dot(ts[i].values, ts[k].values, len);
            const float cur = sqrtf(dot(ts[i].values, ts[i].values, len));
            const float prev = sqrtf(dot(ts[k].values, ts[k].values, len_prev));
            ts[i].cossim = dp / (cur * prev);
            break;
        }
    }
}

static int cmp_tstat(const void *pa, const void *pb)
{
    const tstat *a = pa, *b = pb;
    int c = strcmp(a->tensor, b->tensor);
    if (c)
        return c;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    return strcmp(a->e->name, b->e->name);
}

typedef struct wstat {
    int   blk;
    float bias, zd, cossim;
    int   elements;
} wstat;

static int cmp_wstat(const void *pa, const void *pb)
{
    const wstat *a = pa, *b = pb;
    return (a->blk > b->blk) - (a->blk < b->blk);
}

int imatrix_stats_write(FILE *out, const char *path, const gguf_imatrix *im)
{
    tstat *ts = calloc(im->n ? (size_t)im->n : 1, sizeof *ts);
    wstat *ws = calloc(im->n ? (size_t)im->n : 1, sizeof *ws);
    size_t n = 0, n_ws = 0;
    int rc = -1;
    if (!ts || !ws)
        goto done;
    for (int32_t i = 0; i < im->n; i++) {
        const gguf_imatrix_entry *e = &im->entries[i];
        tstat *t = &ts[n];
        t->e = e;
        t->n_mat = e->counts && e->n_mat > 1 ? e->n_mat : 1;
        t->row = e->nval / t->n_mat;
        t->values = malloc((size_t)e->nval * sizeof *t->values);
        t->counts = malloc((size_t)t->n_mat * sizeof *t->counts);
        if (!t->values || !t->counts) {
            free(t->values);
            free(t->counts);
            goto done;
        }
        if (e->counts) { /* the GGUF format: the sums, the counts rounded */
            memcpy(t->values, e->values, (size_t)e->nval * sizeof *t->values);
            for (int32_t k = 0; k < t->n_mat; k++)
                t->counts[k] = (int64_t)lroundf(e->counts[k]);
        } else { /* legacy: scaled to a chunk of 512, as load_imatrix_legacy */
            for (int32_t k = 0; k < e->nval; k++)
                t->values[k] = 0.0f + e->values[k] * LEGACY_CHUNK;
            t->counts[0] = (int64_t)e->ncall * LEGACY_CHUNK;
        }
        split_name(e->name, t->layer, sizeof t->layer, t->tensor, sizeof t->tensor);
        if (compute(t)) {
            n++;
        } else {
            free(t->values);
            free(t->counts);
            memset(t, 0, sizeof *t);
        }
    }
    if (n == 0) {
        fprintf(stderr, "gguf-inspect: error: %s: no matrix has activations: no statistics\n", path);
        rc = 1;
        goto done;
    }
    cossim(ts, n);
    qsort(ts, n, sizeof *ts, cmp_tstat);

    fprintf(out, "\nComputing statistics for %s (%d tensors)\n", path, (int)n);
    fprintf(out, "\n%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", " Layer", "       Tensor",
            "          Σ(Act²)", "  Min", "            Max", "           μ", "   σ", " % Active", "N",
            "   Entropy", "E (norm)", "ZD", "  CosSim");
    fprintf(out, "=============================================================================================================="
                 "===========================================================\n");
    for (size_t i = 0; i < n; i++) {
        const tstat *t = &ts[i];
        const float e_norm = t->elements > 0 ? 100.0f * (t->entropy / log2f((float)t->elements)) : 0.0f;
        fprintf(out, "%5s\t%-20s\t%10.2f\t%8.4f\t%11.4f\t%6.2f\t%6.2f\t%8.2f%%\t%6d\t%10.4f\t%6.2f%%\t%10.2f%%\t%8.4f\n",
                t->layer, t->tensor, (double)t->total, (double)t->min, (double)t->max, (double)t->mean,
                (double)t->dev, (double)(t->active * 100.0f), t->elements, (double)t->entropy,
                (double)e_norm, (double)(100.0f * t->zd), (double)t->cossim);
        const int blk = block_of(t->layer);
        size_t k = 0;
        while (k < n_ws && ws[k].blk != blk)
            k++;
        if (k == n_ws)
            ws[n_ws++] = (wstat){ .blk = blk };
        ws[k].bias += (float)t->elements * t->total;
        ws[k].zd += (float)t->elements * t->zd;
        ws[k].cossim += (float)t->elements * t->cossim;
        ws[k].elements += t->elements;
    }
    qsort(ws, n_ws, sizeof *ws, cmp_wstat);
    int layers = 0;
    for (size_t k = 0; k < n_ws; k++)
        layers += ws[k].blk >= 0;
    fprintf(out, "\nComputing weighted average statistics per layer (%d layers)\n", layers);
    fprintf(out, "\n%s\t%s\t%s\t%s\n", "  Layer", "     μΣ(Act²)", "      μZD", "μCosSim");
    fprintf(out, "================================================\n");
    for (size_t k = 0; k < n_ws; k++) {
        if (ws[k].elements == 0 || ws[k].blk < 0)
            continue;
        const float el = (float)ws[k].elements;
        fprintf(out, "%5d\t%14.2f\t%10.4f%%\t%6.4f\n", ws[k].blk, (double)(ws[k].bias / el),
                (double)(100.0f * (ws[k].zd / el)), (double)(ws[k].cossim / el));
    }
    fprintf(out, "\n");

    /* what llama-imatrix only logs: matrices and experts no row reached */
    int partial = 0, none = 0;
    for (int32_t i = 0; i < im->n; i++) {
        const gguf_imatrix_entry *e = &im->entries[i];
        const int32_t m = e->counts && e->n_mat > 1 ? e->n_mat : 1;
        int32_t zero = 0;
        for (int32_t k = 0; k < m; k++)
            zero += e->counts ? lroundf(e->counts[k]) == 0 : e->ncall == 0;
        if (zero == 0)
            continue;
        if (zero == m) {
            fprintf(out, "no activations: %s\n", e->name);
            none++;
            continue;
        }
        fprintf(out, "partial: %s: %d of %d experts without activations:", e->name, zero, m);
        for (int32_t k = 0; k < m; k++)
            if (lroundf(e->counts[k]) == 0)
                fprintf(out, " %d", k);
        fprintf(out, "\n");
        partial++;
    }
    fprintf(out, "coverage: %d matrices, %d with every expert reached, %d partial, %d without "
                 "activations\n", im->n, im->n - partial - none, partial, none);
    rc = 0;
done:
    for (size_t i = 0; ts && i < n; i++) {
        free(ts[i].values);
        free(ts[i].counts);
    }
    free(ts);
    free(ws);
    if (rc < 0)
        fprintf(stderr, "gguf-inspect: error: out of memory\n");
    return rc < 0 ? 1 : rc;
}
