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
 * The chunk loop
 */

typedef struct eval_io {
    FILE *out, *in; /* base log-probs to write / to read, or NULL */
    const char *path;
} eval_io;

/* Runs the n_chunk chunks of n_ctx tokens, bos (>= 0) in place of each
 * chunk's first token, and scores the second halves. */
static int eval_chunks(run_state *s, const run_model *m, const int32_t *tokens, int n_chunk,
                       int32_t bos, eval_io *io, run_eval_result *res, gguf_error *err)
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
                kld += row_kld(&b, l, &r, nv, &base_top);
                same += base_top == r.top;
                const float lb = b.scale * b.q[t[j + 1]] + b.min_log_prob;
                nll_base -= lb;
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
    if (eval_chunks(s, m, tokens, n_chunk, bos, &io, res, err))
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

int run_kl_divergence_from(run_state *s, const run_model *m, FILE *base, const char *base_name,
                           int32_t bos, run_eval_result *res, gguf_error *err)
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
    rc = eval_chunks(s, m, chunks, head[2], bos, &io, res, err);
done:
    free(chunks);
    return rc;
}

int run_kl_divergence(run_state *s, const run_model *m, const char *base_in, int32_t bos,
                      run_eval_result *res, gguf_error *err)
{
    FILE *f = fopen(base_in, "rb");
    if (!f)
        return gguf_error_set(err, "%s: %s", base_in, strerror(errno));
    int rc = run_kl_divergence_from(s, m, f, base_in, bos, res, err);
    fclose(f);
    return rc;
}
