/*
 * sampler.h — choosing the next token from a row of logits.
 *
 * Greedy (the default, temperature 0): the highest logit, the lowest id on
 * ties, as llama.cpp's greedy sampler. With a temperature: keep the top-k
 * logits, soften them by the temperature, keep the smallest set of tokens
 * whose probability reaches top-p, and draw from it with a seeded generator
 * (same seed, same tokens). Not for: computing logits.
 */
#ifndef RUN_SAMPLER_H
#define RUN_SAMPLER_H

#include <stdint.h>

typedef struct run_sampler {
    float    temp;  /* <= 0: greedy */
    int      top_k; /* <= 0: all tokens */
    float    top_p; /* >= 1: no nucleus cut */
    uint64_t rng;   /* xorshift64* state, never 0 */
    int      n_vocab;
    struct run_candidate { float p; int32_t id; } *cand; /* n_vocab scratch */
} run_sampler;

/* Sets up a sampler for n_vocab logits. Returns -1 on out of memory. */
int run_sampler_init(run_sampler *s, int n_vocab, float temp, int top_k, float top_p,
                     uint64_t seed);

void run_sampler_free(run_sampler *s);

/* The index of the largest of n logits (the first one on ties). */
int32_t run_argmax(const float *logits, int n);

/* The next token for a row of n_vocab logits. */
int32_t run_sample(run_sampler *s, const float *logits);

#endif
