/*
 * eval.c — perplexity and KL-divergence over chunks of a tokenized text.
 *
 * Both modes share one loop: run a chunk, then look at the logits of its
 * second half one row at a time. Not for: reading or tokenizing the text
 * (main.c).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"

#define KLD_MAGIC "GGUFRKLD"
#define KLD_RANGE 16.0f /* nats below the top log-prob that the levels cover */

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

/* -log p(tok) = max + lse - l[tok] */
static double row_nll(const float *l, const row_stats *r, int tok)
{
    return (double)r->max + (double)r->lse - (double)l[tok];
}

/* A base row: log p_i ≈ lo + step * q_i over the KLD_RANGE nats below the top. */
typedef struct base_row {
    float     step, lo;
    uint16_t *q; /* n_vocab */
} base_row;

static void base_row_encode(base_row *b, const float *l, const row_stats *r, int n)
{
    float lo_logit = r->max;
    for (int i = 0; i < n; i++)
        lo_logit = l[i] < lo_logit ? l[i] : lo_logit;
    if (lo_logit < r->max - KLD_RANGE)
        lo_logit = r->max - KLD_RANGE;
    b->lo = lo_logit - r->max - r->lse;
    b->step = (r->max - lo_logit) / 65535.0f;
    for (int i = 0; i < n; i++)
        b->q[i] = b->step > 0 && l[i] > lo_logit
                      ? (uint16_t)lrintf((l[i] - lo_logit) / b->step) : 0;
}

/* KL(base || model) for one row: sum_i p_base,i (log p_base,i - log p_i),
 * over the tokens the base row resolves (log p_base > -KLD_RANGE). */
static double row_kld(const base_row *b, const float *l, const row_stats *r, int n, int *base_top)
{
    double sum = 0.0;
    float best = 0;
    for (int i = 0; i < n; i++) {
        const float lb = b->step * b->q[i] + b->lo;
        if (i == 0 || lb > best) {
            best = lb;
            *base_top = i;
        }
        if (lb > -KLD_RANGE)
            sum += expf(lb) * (lb - (l[i] - r->max - r->lse));
    }
    return sum;
}

/* ---------------------------------------------------------------------------
 * The chunk loop
 */

typedef struct eval_io {
    FILE *out, *in; /* base log-probs to write / to read, or NULL */
    const char *path;
} eval_io;

static int eval_chunks(run_state *s, const run_model *m, const int32_t *chunks, int n_chunk,
                       eval_io *io, run_eval_result *res, gguf_error *err)
{
    const int n_ctx = s->n_ctx, nv = m->hp.n_vocab, first = n_ctx / 2;
    float *logits = malloc((size_t)(n_ctx - first) * (size_t)nv * sizeof *logits);
    base_row b = { 0, 0, malloc((size_t)nv * sizeof(uint16_t)) };
    double nll = 0, nll_base = 0, kld = 0;
    long count = 0, same = 0;
    int rc = -1;
    if (!logits || !b.q) {
        gguf_error_set(err, "out of memory");
        goto done;
    }
    for (int c = 0; c < n_chunk; c++) {
        const int32_t *t = chunks + (size_t)c * n_ctx;
        run_forward(s, m, t, n_ctx, 0, first, logits);
        for (int j = first; j < n_ctx - 1; j++, count++) {
            const float *l = logits + (size_t)(j - first) * nv;
            const row_stats r = row_stats_of(l, nv);
            nll += row_nll(l, &r, t[j + 1]);
            if (io->out) {
                base_row_encode(&b, l, &r, nv);
                if (fwrite(&b.step, 4, 1, io->out) != 1 || fwrite(&b.lo, 4, 1, io->out) != 1 ||
                    fwrite(b.q, 2, (size_t)nv, io->out) != (size_t)nv) {
                    gguf_error_set(err, "%s: write error", io->path);
                    goto done;
                }
            } else if (io->in) {
                if (fread(&b.step, 4, 1, io->in) != 1 || fread(&b.lo, 4, 1, io->in) != 1 ||
                    fread(b.q, 2, (size_t)nv, io->in) != (size_t)nv) {
                    gguf_error_set(err, "%s: truncated at chunk %d", io->path, c + 1);
                    goto done;
                }
                int base_top = 0;
                kld += row_kld(&b, l, &r, nv, &base_top);
                same += base_top == r.top;
                nll_base -= (double)(b.step * b.q[t[j + 1]] + b.lo);
            }
        }
    }
    *res = (run_eval_result){ exp(nll / (double)count), n_chunk, count,
                              exp(nll_base / (double)count), kld / (double)count,
                              (double)same / (double)count };
    rc = 0;
done:
    free(logits);
    free(b.q);
    return rc;
}

/* ---------------------------------------------------------------------------
 * Modes
 */

int run_perplexity(run_state *s, const run_model *m, const int32_t *tokens, int n_tokens,
                   int32_t bos, int max_chunks, const char *base_out, run_eval_result *res,
                   gguf_error *err)
{
    const int n_ctx = s->n_ctx;
    if (n_ctx < 4 || n_tokens < 2 * n_ctx)
        return gguf_error_set(err, "the text has %d tokens; perplexity at a context of %d needs "
                              "at least %d (and a context of at least 4)", n_tokens, n_ctx,
                              2 * n_ctx);
    int n_chunk = n_tokens / n_ctx;
    if (max_chunks > 0 && max_chunks < n_chunk)
        n_chunk = max_chunks;
    int32_t *chunks = malloc((size_t)n_chunk * (size_t)n_ctx * sizeof *chunks);
    if (!chunks)
        return gguf_error_set(err, "out of memory");
    memcpy(chunks, tokens, (size_t)n_chunk * (size_t)n_ctx * sizeof *chunks);
    for (int c = 0; bos >= 0 && c < n_chunk; c++)
        chunks[(size_t)c * n_ctx] = bos;
    eval_io io = { NULL, NULL, base_out };
    int rc = -1;
    if (base_out) {
        const int32_t head[3] = { n_ctx, m->hp.n_vocab, n_chunk };
        if (!(io.out = fopen(base_out, "wb"))) {
            gguf_error_set(err, "%s: %s", base_out, strerror(errno));
            goto done;
        }
        if (fwrite(KLD_MAGIC, 8, 1, io.out) != 1 || fwrite(head, sizeof head, 1, io.out) != 1 ||
            fwrite(chunks, sizeof *chunks, (size_t)n_chunk * n_ctx, io.out) !=
                (size_t)n_chunk * n_ctx) {
            gguf_error_set(err, "%s: write error", base_out);
            goto done;
        }
    }
    rc = eval_chunks(s, m, chunks, n_chunk, &io, res, err);
done:
    if (io.out && fclose(io.out) && rc == 0)
        rc = gguf_error_set(err, "%s: %s", base_out, strerror(errno));
    free(chunks);
    return rc;
}

/* Reads and checks the header; leaves f at the tokens. */
static int kld_header(FILE *f, const char *path, int32_t head[3], gguf_error *err)
{
    char magic[8];
    if (fread(magic, 8, 1, f) != 1 || memcmp(magic, KLD_MAGIC, 8) ||
        fread(head, sizeof(int32_t), 3, f) != 3)
        return gguf_error_set(err, "%s: not a gguf-run --kl-divergence-base file", path);
    if (head[0] < 4 || head[0] > (1 << 24) || head[1] < 1 || head[2] < 1 ||
        (int64_t)head[0] * head[2] > (1 << 30))
        return gguf_error_set(err, "%s: implausible header (n_ctx %d, n_vocab %d, %d chunks)",
                              path, head[0], head[1], head[2]);
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

int run_kl_divergence(run_state *s, const run_model *m, const char *base_in, run_eval_result *res,
                      gguf_error *err)
{
    eval_io io = { NULL, fopen(base_in, "rb"), base_in };
    if (!io.in)
        return gguf_error_set(err, "%s: %s", base_in, strerror(errno));
    int32_t head[3], *chunks = NULL;
    int rc = -1;
    if (kld_header(io.in, base_in, head, err))
        goto done;
    if (head[0] != s->n_ctx || head[1] != m->hp.n_vocab) {
        gguf_error_set(err, "%s: written for a context of %d and %d tokens, the model has %d "
                       "tokens", base_in, head[0], head[1], m->hp.n_vocab);
        goto done;
    }
    const size_t n = (size_t)head[0] * (size_t)head[2];
    if (!(chunks = malloc(n * sizeof *chunks))) {
        gguf_error_set(err, "out of memory");
        goto done;
    }
    if (fread(chunks, sizeof *chunks, n, io.in) != n) {
        gguf_error_set(err, "%s: truncated in the tokens", base_in);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (chunks[i] < 0 || chunks[i] >= m->hp.n_vocab) {
            gguf_error_set(err, "%s: token %d is outside the vocabulary", base_in, chunks[i]);
            goto done;
        }
    rc = eval_chunks(s, m, chunks, head[2], &io, res, err);
done:
    free(chunks);
    fclose(io.in);
    return rc;
}
