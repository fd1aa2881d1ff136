/*
 * eval.h — perplexity and KL-divergence over a text, llama-perplexity's way.
 *
 * The text's tokens are cut into chunks of n_ctx (the state's context);
 * each chunk starts with BOS (replacing its first token) when the
 * vocabulary adds one, runs as one batch from an empty cache, and the model's
 * prediction of every token in the chunk's second half is scored:
 * perplexity = exp(mean -log p(token)). With a base file, the same chunks
 * are compared with a reference model's log-probabilities: mean KL
 * divergence KL(base || model), how often both pick the same top token, and
 * both perplexities.
 *
 * The base file is llama-perplexity's (--kl-divergence-base), so either
 * tool reads the other's: "_logits_", u32 n_ctx, i32 n_vocab, i32 n_chunk,
 * the text's tokens (n_chunk × n_ctx i32, BOS not put in), then per scored
 * position a row of 2·⌈n_vocab/2⌉ + 4 u16 words: f32 scale, f32 lowest
 * log-prob, n_vocab u16 levels over the 16 nats below the top (level 0 also
 * for anything further down), a zero pad for an odd n_vocab.
 *
 * Not for: generation (main.c), the model's arithmetic (forward.c).
 */
#ifndef RUN_EVAL_H
#define RUN_EVAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <ggufkit/gguf.h>
#include "forward.h"
#include "model.h"

typedef struct run_eval_result {
    double ppl;        /* this model's perplexity */
    int    n_chunk;    /* chunks of n_ctx tokens evaluated */
    long   n_scored;   /* predictions scored */
    double ppl_base;   /* KL mode: the base model's perplexity */
    double mean_kld;   /* KL mode: mean KL(base || model) in nats */
    double same_top;   /* KL mode: fraction of positions with the same top token */
} run_eval_result;

/* llama-perplexity's KL-divergence statistics, gathered as it does: sums
 * over the scored positions (-log p of the text's token for the model, nll,
 * and for the base, nll_base; KL(base || model) per position; Δp = p - p_base
 * of the text's token) and every position's KLD and Δp, sorted ascending at
 * the end, for its percentiles. */
typedef struct run_kld_stats {
    double sum_nll, sum_nll2, sum_nll_base, sum_nll_base2, sum_nll_nll_base;
    double sum_kld, sum_kld2, sum_p_diff, sum_p_diff2, sum_p_diff4;
    long   count, n_same_top;
    float *kld, *p_diff; /* count values each (malloc'd; run_kld_stats_free) */
} run_kld_stats;

void run_kld_stats_free(run_kld_stats *k);

/* Prints llama-perplexity's closing report from k: "====== Perplexity
 * statistics ======" (PPL(Q), PPL(base), their correlation, ratio and
 * difference with uncertainties), "====== KL divergence statistics ======"
 * (mean ± uncertainty, maximum, 99.9/99/95/90 %, median, 10/5/1/0.1 %,
 * minimum) and "====== Token probability statistics ======" (Δp's mean,
 * percentiles, RMS, same top p), line for line in its format. Like
 * llama-perplexity it gives no statistics on fewer than 100 positions (one
 * line saying so instead). */
void run_kld_report(FILE *f, const run_kld_stats *k);

/* A percentile of n sorted values, llama-perplexity's way (linear between
 * the two nearest, in float); fraction <= 0: the first, >= 1: the last. */
float run_kld_percentile(const float *v, long n, float fraction);

/* Perplexity of tokens (bos >= 0: put BOS first in every chunk) over at
 * most max_chunks chunks (0: all). With base_out, also writes the
 * log-probabilities for a later KL comparison (a temporary file renamed
 * into place when complete); messages about base_out begin with its name. */
int run_perplexity(run_state *s, const run_model *m, const int32_t *tokens, int n_tokens,
                   int32_t bos, int max_chunks, const char *base_out, run_eval_result *res,
                   gguf_error *err);

/* run_perplexity's checks of the text's length alone (the chunks need at
 * least two contexts of tokens): 0, or -1 with err (which names no file). */
int run_perplexity_check_text(const run_state *s, int n_tokens, gguf_error *err);

/* run_perplexity writing the log-probabilities to an open stream (NULL:
 * none), flushed at the end; base_name names it in messages. */
int run_perplexity_to(run_state *s, const run_model *m, const int32_t *tokens, int n_tokens,
                      int32_t bos, int max_chunks, FILE *base, const char *base_name,
                      run_eval_result *res, gguf_error *err);

/* Runs the chunks stored in base_in (bos >= 0: put BOS first in every
 * chunk) through m and compares with the stored log-probabilities. The
 * state's context must be the file's n_ctx. base_in is llama-perplexity's
 * --kl-divergence-base format: either tool reads the other's. Messages
 * about the file begin with its name; others (non-finite logits) are the
 * model's. */
int run_kl_divergence(run_state *s, const run_model *m, const char *base_in, int32_t bos,
                      run_eval_result *res, gguf_error *err);

/* run_kl_divergence reading an open stream from its start (a file
 * run_perplexity_to wrote); base_name names it in messages. */
int run_kl_divergence_from(run_state *s, const run_model *m, FILE *base, const char *base_name,
                           int32_t bos, run_eval_result *res, gguf_error *err);

/* run_kl_divergence gathering llama-perplexity's statistics into *stats
 * (zeroed first; free with run_kld_stats_free, also after an error). */
int run_kl_divergence_stats(run_state *s, const run_model *m, const char *base_in, int32_t bos,
                            run_eval_result *res, run_kld_stats *stats, gguf_error *err);

/* The n_ctx a base file was written with (to size the state), or -1. */
int run_kld_file_ctx(const char *base_in, gguf_error *err);

#endif
