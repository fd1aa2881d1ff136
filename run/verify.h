/*
 * verify.h — gguf-run --verify REF.gguf: one command to check a quantized
 * model against its F16/F32 source on a text.
 *
 * The reference runs first: its perplexity over the text's chunks (eval.h,
 * log-probabilities kept in a temporary --kl-divergence-base file) and a
 * greedy continuation of the first chunk's first tokens; then the model runs
 * the same chunks against those log-probabilities (mean KL divergence, top-1
 * agreement, both perplexities) and the same greedy continuation, of which
 * the leading tokens that agree are counted. Thresholds turn the numbers
 * into a pass or a fail.
 *
 * Not for: the arithmetic of perplexity and KL divergence (eval.c).
 */
#ifndef RUN_VERIFY_H
#define RUN_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eval.h"
#include "forward.h"
#include "model.h"

#define RUN_VERIFY_PROMPT 16 /* prompt tokens of the greedy continuation */
#define RUN_VERIFY_GREEDY 32 /* tokens it continues with */

/* Limits; a negative one is not checked. */
typedef struct run_verify_limits {
    double max_kld;       /* mean KL(reference || model) in nats */
    double min_top1;      /* fraction of positions with the same top token */
    double max_ppl_ratio; /* perplexity of the model / of the reference */
} run_verify_limits;

/* Greedy continuation: runs prompt[0..n_prompt) from position 0, then
 * writes the n most likely next tokens (first index on ties), each fed back,
 * to out. n_prompt + n <= s->n_ctx. logits holds n_vocab floats. */
void run_greedy(run_state *s, const run_model *m, const int32_t *prompt, int n_prompt, int n,
                float *logits, int32_t *out);

/* How many leading tokens of a and b (n each) agree. */
int run_leading_agreement(const int32_t *a, const int32_t *b, int n);

/* Whether ref's vocabulary is model's, token for token: --verify compares
 * the probabilities the two models give each id, which means something
 * only when each id is the same token. Compares tokenizer.ggml.model, the
 * token count, each token's text and its type (a byte token <0x41> is the
 * byte A, a normal one the text "<0x41>"); not the scores or merges, which
 * steer tokenizing only (the text is tokenized once, with model's). 0, or
 * -1 with err naming the first difference (model_name names model in it;
 * the caller names ref). */
int run_verify_same_vocab(const gguf_file *model, const char *model_name, const gguf_file *ref,
                          gguf_error *err);

/* Checks res against lim; false with the first limit passed described in
 * why (a sentence of at most why_size bytes). ppl_ratio is res's model/base. */
bool run_verify_within(const run_eval_result *res, const run_verify_limits *lim, char *why,
                       size_t why_size);

#endif
