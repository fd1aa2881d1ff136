/*
 * eval.c — perplexity and KL-divergence over chunks of a tokenized text.
 *
 * Both modes share one loop: run a chunk, then look at the logits of its
 * second half one row at a time. Not for: reading or tokenizing the text
 * (main.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eval.h"
#include "outfile.h"
#include "progress.h"

/* The --kl-divergence-base file is llama-perplexity's (c392e50), so that a
 * base written by either tool can be read by the other:
 *   "_logits_", uint32 n_ctx, int32 n_vocab, int32 n_chunk,
 *   int32 tokens[n_chunk * n_ctx]   (the text's tokens, BOS not put in),
 *   then per chunk, per scored position (n_ctx - 1 - n_ctx/2 of them) a row
 *   of nv = 2·⌈n_vocab/2⌉ + 4 uint16: float scale, float min_log_prob, and
 *   n_vocab levels (a zero pad when n_vocab is odd), log p_i ≈
 *   min_log_prob + scale · level_i over the 16 nats below the top.
 * The arithmetic below is llama-perplexity's, operation for operation. */
#define KLD_MAGIC "_logits_"
#define KLD_RANGE 16.0f

/* log-softmax facts of one row of logits. */
typedef struct row_stats {
    float  max;  /* largest logit */
    int    top;  /* its index (the first one) */
    float  lse;  /* log sum_i exp(l_i - max) */
} row_stats;

static row_stats row_stats_of(const float *l, int n)
{
    row_stats r = { l[0], 0, 0 };
    for (int i = 1; i < n; i++)
        if (l[i] > r.max) {
            r.max = l[i];
            r.top = i;
        }
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += expf(l[i] - r.max);
    r.lse = (float)log(sum);
    return r;
}

/* -log p(tok) = max + lse - l[tok], in float as llama-perplexity has it */
static double row_nll(const float *l, const row_stats *r, int tok)
{
    const float nll = r->max + r->lse - l[tok];
    return nll;
}

/* A base row as stored: words 0-3 the two floats, then the levels. */
typedef struct base_row {
    float     scale, min_log_prob;
    uint16_t *q;  /* nv - 4 words: n_vocab levels and the pad */
    int       nv; /* words per row */
} base_row;

/* Round to nearest (ties to even) for 0 <= v < 2^22, as llama-perplexity's
 * nearest_int does it. */
static int nearest_int(float v)
{
    const float t = v + 12582912.0f;
    int32_t i;
    memcpy(&i, &t, sizeof i);
    return (i & 0x007fffff) - 0x00400000;
}

static void base_row_encode(base_row *b, const float *l, const row_stats *r, int n)
{
    float min_logit = l[0];
    for (int i = 1; i < n; i++)
        min_logit = l[i] < min_logit ? l[i] : min_logit;
    if (min_logit < r->max - KLD_RANGE)
        min_logit = r->max - KLD_RANGE;
    b->min_log_prob = min_logit - r->max - r->lse;
    b->scale = (r->max - min_logit) / 65535.0f;
    memset(b->q, 0, (size_t)(b->nv - 4) * sizeof *b->q);
    if (b->scale != 0.0f) {
        const float inv = 1.0f / b->scale;
        for (int i = 0; i < n; i++)
            if (l[i] > min_logit)
                b->q[i] = (uint16_t)nearest_int(inv * (l[i] - min_logit));
    }
}

/* KL(base || model) for one row: sum_i p_base,i (log p_base,i - log p_i),
 * over the tokens the base row resolves (log p_base > -16). */
static double row_kld(const base_row *b, const float *l, const row_stats *r, int n, int *base_top)
{
    const float log_norm = r->max + r->lse;
    double sum = 0.0;
    float best = 0;
    for (int i = 0; i < n; i++) {
        const float lb = b->scale * b->q[i] + b->min_log_prob;
        if (i == 0 || lb > best) {
            best = lb;
            *base_top = i;
        }
        if (lb > -KLD_RANGE) {
            const float p = expf(lb);
            sum += p * (lb - l[i] + log_norm);
        }
    }
    return sum;
}

static bool row_write(FILE *f, const base_row *b)
{
    return fwrite(&b->scale, 4, 1, f) == 1 && fwrite(&b->min_log_prob, 4, 1, f) == 1 &&
           fwrite(b->q, 2, (size_t)(b->nv - 4), f) == (size_t)(b->nv - 4);
}

static bool row_read(FILE *f, base_row *b)
{
    return fread(&b->scale, 4, 1, f) == 1 && fread(&b->min_log_prob, 4, 1, f) == 1 &&
           fread(b->q, 2, (size_t)(b->nv - 4), f) == (size_t)(b->nv - 4);
}

/* ---------------------------------------------------------------------------
 * llama-perplexity's statistics
 */

/* One scored position, in llama-perplexity's precision: the products of
 * two floats are taken in float, as it writes them. */
static void kld_stats_add(run_kld_stats *k, float nll, float nll_base, double kld, bool same_top)
{
    k->sum_nll += nll;
    k->sum_nll2 += nll * nll;
    k->sum_nll_base += nll_base;
    k->sum_nll_base2 += nll_base * nll_base;
    k->sum_nll_nll_base += nll * nll_base;
    k->sum_kld += kld;
    k->sum_kld2 += kld * kld;
    k->n_same_top += same_top;
    const float p_base = expf(-nll_base), p = expf(-nll), p_diff = p - p_base;
    const double p_diff2 = p_diff * p_diff;
    k->sum_p_diff += p_diff;
    k->sum_p_diff2 += p_diff2;
    k->sum_p_diff4 += p_diff2 * p_diff2;
    k->kld[k->count] = (float)kld;
    k->p_diff[k->count++] = p_diff;
}

void run_kld_stats_free(run_kld_stats *k)
{
    free(k->kld);
    free(k->p_diff);
    k->kld = k->p_diff = NULL;
}

/* Mean and its uncertainty: sqrt(var / (count - 1)), 0 on 10 values or
 * fewer or a variance that is not positive. */
typedef struct mean_unc {
    double mean, unc;
} mean_unc;

static mean_unc mean_and_uncertainty(double sum, double sum2, long count)
{
    if (count < 1)
        return (mean_unc){ 0, 0 };
    const double f = sum / (double)count;
    double df = sum2 / (double)count - f * f;
    df = df > 0 && count > 10 ? sqrt(df / (double)(count - 1)) : 0.0;
    return (mean_unc){ f, df };
}

static double covariance(double suma, double sumb, double sumab, long count)
{
    if (count < 10)
        return 0.0;
    const double n = (double)count;
    return (sumab / n - (suma / n) * (sumb / n)) / (n - 1);
}

float run_kld_percentile(const float *v, long n, float fraction)
{
    if (fraction <= 0)
        return v[0];
    if (fraction >= 1)
        return v[n - 1];
    float p = fraction * (float)(n - 1);
    const long ip = (long)p;
    p -= (float)ip;
    return (1 - p) * v[ip] + p * v[ip + 1 < n ? ip + 1 : n - 1];
}

static float median(const float *v, long n)
{
    return n % 2 == 0 ? 0.5f * (v[n / 2] + v[n / 2 - 1]) : v[n / 2];
}

/* Ascending; NaN last (a row's KLD is finite when its logits are) */
static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

void run_kld_report(FILE *f, const run_kld_stats *k)
{
    const long n = k->count;
    if (n < 100) {
        fprintf(f, "(%ld scored positions: llama-perplexity gives no statistics on fewer than 100)\n", n);
        return;
    }
    qsort(k->kld, (size_t)n, sizeof *k->kld, cmp_float);
    qsort(k->p_diff, (size_t)n, sizeof *k->p_diff, cmp_float);

    fprintf(f, "====== Perplexity statistics ======\n");
    const mean_unc lp = mean_and_uncertainty(k->sum_nll, k->sum_nll2, n);
    const double ppl = exp(lp.mean), ppl_unc = ppl * lp.unc;
    fprintf(f, "Mean PPL(Q)                   : %10.6lf ± %10.6lf\n", ppl, ppl_unc);
    const mean_unc lb = mean_and_uncertainty(k->sum_nll_base, k->sum_nll_base2, n);
    const double ppl_base = exp(lb.mean), ppl_base_unc = ppl_base * lb.unc;
    fprintf(f, "Mean PPL(base)                : %10.6lf ± %10.6lf\n", ppl_base, ppl_base_unc);
    const double cov = covariance(k->sum_nll, k->sum_nll_base, k->sum_nll_nll_base, n);
    fprintf(f, "Cor(ln(PPL(Q)), ln(PPL(base))): %6.2lf%%\n", 100.0 * cov / (lp.unc * lb.unc));
    const double ratio = lp.mean - lb.mean;
    const double ratio_unc = sqrt(lp.unc * lp.unc + lb.unc * lb.unc - 2.0 * cov);
    fprintf(f, "Mean ln(PPL(Q)/PPL(base))     : %10.6lf ± %10.6lf\n", ratio, ratio_unc);
    fprintf(f, "Mean PPL(Q)/PPL(base)         : %10.6lf ± %10.6lf\n", exp(ratio), exp(ratio) * ratio_unc);
    const double ppl_cov = ppl * ppl_base * cov;
    fprintf(f, "Mean PPL(Q)-PPL(base)         : %10.6lf ± %10.6lf\n", ppl - ppl_base,
            sqrt(ppl_unc * ppl_unc + ppl_base_unc * ppl_base_unc - 2.0 * ppl_cov));
    fprintf(f, "\n");

    fprintf(f, "====== KL divergence statistics ======\n");
    const mean_unc kl = mean_and_uncertainty(k->sum_kld, k->sum_kld2, n);
    fprintf(f, "Mean    KLD: %10.6lf ± %10.6lf\n", kl.mean, kl.unc);
    static const struct { const char *label; float fraction; } kq[] = {
        { "99.9%", 0.999f }, { "99.0%", 0.990f }, { "95.0%", 0.950f }, { "90.0%", 0.900f },
        { NULL, 0.5f },      { "10.0%", 0.100f }, { " 5.0%", 0.050f }, { " 1.0%", 0.010f },
        { " 0.1%", 0.001f },
    };
    fprintf(f, "Maximum KLD: %10.6f\n", (double)k->kld[n - 1]);
    for (size_t i = 0; i < sizeof kq / sizeof *kq; i++) {
        if (!kq[i].label)
            fprintf(f, "Median  KLD: %10.6f\n", (double)median(k->kld, n));
        else
            fprintf(f, "%s   KLD: %10.6f\n", kq[i].label, (double)run_kld_percentile(k->kld, n, kq[i].fraction));
    }
    fprintf(f, "Minimum KLD: %10.6f\n", (double)k->kld[0]);
    fprintf(f, "\n");

    fprintf(f, "====== Token probability statistics ======\n");
    const mean_unc pd = mean_and_uncertainty(k->sum_p_diff, k->sum_p_diff2, n);
    fprintf(f, "Mean    Δp: %6.3lf ± %5.3lf %%\n", 100.0 * pd.mean, 100.0 * pd.unc);
    static const struct { const char *label; float fraction; } pq[] = {
        { "99.9%", 0.999f }, { "99.0%", 0.990f }, { "95.0%", 0.950f }, { "90.0%", 0.900f },
        { "75.0%", 0.750f }, { NULL, 0.5f },      { "25.0%", 0.250f }, { "10.0%", 0.100f },
        { " 5.0%", 0.050f }, { " 1.0%", 0.010f }, { " 0.1%", 0.001f },
    };
    fprintf(f, "Maximum Δp: %6.3lf%%\n", 100.0 * k->p_diff[n - 1]);
    for (size_t i = 0; i < sizeof pq / sizeof *pq; i++) {
        if (!pq[i].label)
            fprintf(f, "Median  Δp: %6.3lf%%\n", 100.0 * median(k->p_diff, n));
        else
            fprintf(f, "%s   Δp: %6.3lf%%\n", pq[i].label, 100.0 * run_kld_percentile(k->p_diff, n, pq[i].fraction));
    }
    fprintf(f, "Minimum Δp: %6.3lf%%\n", 100.0 * k->p_diff[0]);
    const mean_unc mse = mean_and_uncertainty(k->sum_p_diff2, k->sum_p_diff4, n);
    const double rms = sqrt(mse.mean);
    fprintf(f, "RMS Δp    : %6.3lf ± %5.3lf %%\n", 100.0 * rms, 100.0 * (0.5 / rms * mse.unc));
    const double top = (double)k->n_same_top / (double)n;
    fprintf(f, "Same top p: %6.3lf ± %5.3lf %%\n", 100.0 * top, 100.0 * sqrt(top * (1.0 - top) / (double)(n - 1)));
}

/* ---------------------------------------------------------------------------
 * The chunk loop
 */

typedef struct eval_io {
    FILE *out, *in; /* base log-probs to write / to read, or NULL */
    const char *path;
} eval_io;

/* Runs the n_chunk chunks of n_ctx tokens, bos (>= 0) in place of each
 * chunk's first token, and scores the second halves. */
static int eval_chunks(run_state *s, const run_model *m, const int32_t *tokens, int n_chunk,
                       int32_t bos, eval_io *io, run_eval_result *res, run_kld_stats *st,
                       gguf_error *err)
{
    const int n_ctx = s->n_ctx, nv = m->hp.n_vocab, first = n_ctx / 2;
    const int row_words = 2 * ((nv + 1) / 2) + 4;
    float *logits = malloc((size_t)(n_ctx - first) * (size_t)nv * sizeof *logits);
    int32_t *t = malloc((size_t)n_ctx * sizeof *t);
    base_row b = { 0, 0, malloc((size_t)(row_words - 4) * sizeof(uint16_t)), row_words };
    double nll = 0, nll_base = 0, kld = 0;
    long count = 0, same = 0;
    int rc = -1;
    progress bar = { 0 }; /* on a terminal only */
    if (!logits || !t || !b.q) {
        gguf_error_set(err, "out of memory");
        goto done;
    }
    if (st && io->in) {
        const size_t rows = (size_t)n_chunk * (size_t)(n_ctx - 1 - first);
        st->kld = malloc((rows ? rows : 1) * sizeof *st->kld);
        st->p_diff = malloc((rows ? rows : 1) * sizeof *st->p_diff);
        if (!st->kld || !st->p_diff) {
            gguf_error_set(err, "out of memory");
            goto done;
        }
    }
    progress_start(&bar, io->in ? "kl-divergence" : "perplexity", (uint64_t)n_chunk, true);
    for (int c = 0; c < n_chunk; c++) {
        memcpy(t, tokens + (size_t)c * n_ctx, (size_t)n_ctx * sizeof *t);
        if (bos >= 0)
            t[0] = bos;
        run_forward(s, m, t, n_ctx, 0, first, logits);
        progress_add(&bar, 1);
        for (int j = first; j < n_ctx - 1; j++, count++) {
            const float *l = logits + (size_t)(j - first) * nv;
            const row_stats r = row_stats_of(l, nv);
            nll += row_nll(l, &r, t[j + 1]);
            if (!isfinite(nll)) {
                gguf_error_set(err, "non-finite logits in chunk %d (NaN or Inf: the weights or "
                               "activations are not finite)", c + 1);
                goto done;
            }
            if (io->out) {
                base_row_encode(&b, l, &r, nv);
                if (!row_write(io->out, &b)) {
                    gguf_error_set(err, "%s: write error: %s", io->path, strerror(errno));
                    goto done;
                }
            } else if (io->in) {
                if (!row_read(io->in, &b)) {
                    gguf_error_set(err, "%s: truncated at chunk %d", io->path, c + 1);
                    goto done;
                }
                int base_top = 0;
                const double row = row_kld(&b, l, &r, nv, &base_top);
                kld += row;
                same += base_top == r.top;
                const float lb = b.scale * b.q[t[j + 1]] + b.min_log_prob;
                nll_base -= lb;
                if (st)
                    kld_stats_add(st, (float)row_nll(l, &r, t[j + 1]), -lb, row, base_top == r.top);
            }
        }
    }
    progress_end(&bar);
    *res = (run_eval_result){ exp(nll / (double)count), n_chunk, count,
                              exp(nll_base / (double)count), kld / (double)count,
                              (double)same / (double)count };
    rc = 0;
done:
    progress_end(&bar);
    free(logits);
    free(t);
    free(b.q);
    return rc;
}

/* ---------------------------------------------------------------------------
 * Modes
 */

/* The chunks a text of n_tokens gives at the state's context (at most
 * max_chunks when > 0), or -1 with err when it is too short. */
static int count_chunks(const run_state *s, int n_tokens, int max_chunks, gguf_error *err)
{
    const int n_ctx = s->n_ctx;
    if (n_ctx < 4 || n_tokens < 2 * n_ctx)
        return gguf_error_set(err, "the text has %d tokens; perplexity at a context of %d needs "
                              "at least %d (and a context of at least 4)", n_tokens, n_ctx,
                              2 * n_ctx);
    const int n_chunk = n_tokens / n_ctx;
    return max_chunks > 0 && max_chunks < n_chunk ? max_chunks : n_chunk;
}

int run_perplexity_check_text(const run_state *s, int n_tokens, gguf_error *err)
{
    return count_chunks(s, n_tokens, 0, err) < 0 ? -1 : 0;
}

int run_perplexity_to(run_state *s, const run_model *m, const int32_t *tokens, int n_tokens,
                      int32_t bos, int max_chunks, FILE *base, const char *base_name,
                      run_eval_result *res, gguf_error *err)
{
    const int n_ctx = s->n_ctx, n_chunk = count_chunks(s, n_tokens, max_chunks, err);
    if (n_chunk < 0)
        return -1;
    eval_io io = { base, NULL, base_name };
    const size_t n = (size_t)n_chunk * (size_t)n_ctx;
    if (base) {
        const uint32_t ctx32 = (uint32_t)n_ctx;
        const int32_t head[2] = { m->hp.n_vocab, n_chunk };
        if (fwrite(KLD_MAGIC, 8, 1, base) != 1 || fwrite(&ctx32, 4, 1, base) != 1 ||
            fwrite(head, sizeof head, 1, base) != 1 || fwrite(tokens, sizeof *tokens, n, base) != n)
            return gguf_error_set(err, "%s: write error: %s", base_name, strerror(errno));
    }
    if (eval_chunks(s, m, tokens, n_chunk, bos, &io, res, NULL, err))
        return -1;
    if (base && fflush(base))
        return gguf_error_set(err, "%s: write error: %s", base_name, strerror(errno));
    return 0;
}

int run_perplexity(run_state *s, const run_model *m, const int32_t *tokens, int n_tokens,
                   int32_t bos, int max_chunks, const char *base_out, run_eval_result *res,
                   gguf_error *err)
{
    gguf_outfile of = { 0 };
    /* written to a temporary file, renamed into place at the end; the
     * outfile's own messages name base_out inside: put it first too */
    if (base_out && gguf_outfile_open(&of, base_out, err)) {
        gguf_error_prefix(err, "%s: ", base_out);
        return -1;
    }
    int rc = run_perplexity_to(s, m, tokens, n_tokens, bos, max_chunks, base_out ? of.fp : NULL,
                               base_out, res, err);
    if (rc == 0 && base_out && gguf_outfile_commit(&of, err)) {
        gguf_error_prefix(err, "%s: ", base_out);
        rc = -1;
    }
    if (base_out)
        gguf_outfile_discard(&of);
    return rc;
}

/* Reads and checks the header; leaves f at the tokens. */
static int kld_header(FILE *f, const char *path, int32_t head[3], gguf_error *err)
{
    char magic[8];
    if (fread(magic, 8, 1, f) != 1 || memcmp(magic, KLD_MAGIC, 8) ||
        fread(head, sizeof(int32_t), 3, f) != 3)
        return gguf_error_set(err, "%s: not a --kl-divergence-base file (llama-perplexity's "
                              "\"_logits_\" format)", path);
    if (head[0] < 4 || head[0] > (1 << 24) || head[1] < 1 || head[2] < 1 ||
        (int64_t)head[0] * head[2] > (1 << 30))
        return gguf_error_set(err, "%s: implausible header (n_ctx %d, n_vocab %d, %d chunks)",
                              path, head[0], head[1], head[2]);
    /* the size the header promises, before anything is allocated for it */
    const int64_t words = 2 * (((int64_t)head[1] + 1) / 2) + 4;
    const int64_t rows = (int64_t)head[2] * (head[0] - 1 - head[0] / 2);
    const int64_t want = 20 + 4 * (int64_t)head[0] * head[2] + 2 * rows * words;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (int64_t)st.st_size < want)
        return gguf_error_set(err, "%s: truncated: its header (n_ctx %d, n_vocab %d, %d chunks) "
                              "needs %lld bytes, the file has %lld", path, head[0], head[1],
                              head[2], (long long)want, (long long)st.st_size);
    return 0;
}

int run_kld_file_ctx(const char *base_in, gguf_error *err)
{
    FILE *f = fopen(base_in, "rb");
    if (!f)
        return gguf_error_set(err, "%s: %s", base_in, strerror(errno));
    int32_t head[3];
    int rc = kld_header(f, base_in, head, err);
    fclose(f);
    return rc ? -1 : head[0];
}

static int kl_divergence_from(run_state *s, const run_model *m, FILE *base, const char *base_name,
                              int32_t bos, run_eval_result *res, run_kld_stats *st, gguf_error *err)
{
    eval_io io = { NULL, base, base_name };
    int32_t head[3], *chunks = NULL;
    int rc = -1;
    if (fseek(base, 0, SEEK_SET))
        return gguf_error_set(err, "%s: %s", base_name, strerror(errno));
    if (kld_header(base, base_name, head, err))
        goto done;
    if (head[0] != s->n_ctx || head[1] != m->hp.n_vocab) {
        gguf_error_set(err, "%s: written for a context of %d and %d tokens, the model has %d "
                       "tokens", base_name, head[0], head[1], m->hp.n_vocab);
        goto done;
    }
    const size_t n = (size_t)head[0] * (size_t)head[2];
    if (!(chunks = malloc(n * sizeof *chunks))) {
        gguf_error_set(err, "out of memory");
        goto done;
    }
    if (fread(chunks, sizeof *chunks, n, base) != n) {
        gguf_error_set(err, "%s: truncated in the tokens", base_name);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (chunks[i] < 0 || chunks[i] >= m->hp.n_vocab) {
            gguf_error_set(err, "%s: token %d is outside the vocabulary", base_name, chunks[i]);
            goto done;
        }
    rc = eval_chunks(s, m, chunks, head[2], bos, &io, res, st, err);
done:
    free(chunks);
    return rc;
}

int run_kl_divergence_from(run_state *s, const run_model *m, FILE *base, const char *base_name,
                           int32_t bos, run_eval_result *res, gguf_error *err)
{
    return kl_divergence_from(s, m, base, base_name, bos, res, NULL, err);
}

int run_kl_divergence_stats(run_state *s, const run_model *m, const char *base_in, int32_t bos,
                            run_eval_result *res, run_kld_stats *stats, gguf_error *err)
{
    if (stats)
        memset(stats, 0, sizeof *stats);
    FILE *f = fopen(base_in, "rb");
    if (!f)
        return gguf_error_set(err, "%s: %s", base_in, strerror(errno));
    int rc = kl_divergence_from(s, m, f, base_in, bos, res, stats, err);
    fclose(f);
    return rc;
}

int run_kl_divergence(run_state *s, const run_model *m, const char *base_in, int32_t bos,
                      run_eval_result *res, gguf_error *err)
{
    return run_kl_divergence_stats(s, m, base_in, bos, res, NULL, err);
}
