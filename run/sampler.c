/*
 * sampler.c — greedy choice and temperature / top-k / top-p sampling.
 * Not for: anything that needs the model.
 */
#include <math.h>
#include <stdlib.h>

#include "sampler.h"

int run_sampler_init(run_sampler *s, int n_vocab, float temp, int top_k, float top_p,
                     uint64_t seed)
{
    s->temp = temp;
    s->top_k = top_k;
    s->top_p = top_p;
    s->rng = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (!s->rng)
        s->rng = 1;
    s->n_vocab = n_vocab;
    s->cand = temp > 0 ? malloc((size_t)n_vocab * sizeof *s->cand) : NULL;
    return temp > 0 && !s->cand ? -1 : 0;
}

void run_sampler_free(run_sampler *s)
{
    free(s->cand);
    s->cand = NULL;
}

int32_t run_argmax(const float *logits, int n)
{
    int32_t best = 0;
    for (int i = 1; i < n; i++)
        if (logits[i] > logits[best])
            best = i;
    return best;
}

/* A uniform float in [0, 1) (xorshift64*, top 24 bits). */
static float rng_uniform(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return (float)((*state * 0x2545F4914F6CDD1Dull) >> 40) / 16777216.0f;
}

/* Descending by logit, then ascending by id (a stable, total order). */
static int by_logit_desc(const void *a, const void *b)
{
    const struct run_candidate *x = a, *y = b;
    if (x->p != y->p)
        return x->p > y->p ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

int32_t run_sample(run_sampler *s, const float *logits)
{
    if (s->temp <= 0)
        return run_argmax(logits, s->n_vocab);
    struct run_candidate *c = s->cand;
    int n = s->n_vocab;
    for (int i = 0; i < n; i++)
        c[i] = (struct run_candidate){ logits[i], i };
    qsort(c, (size_t)n, sizeof *c, by_logit_desc);
    if (s->top_k > 0 && s->top_k < n)
        n = s->top_k;
    // p_i = exp((l_i - l_max) / T) / sum_j exp((l_j - l_max) / T)
    const float max = c[0].p;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        c[i].p = expf((c[i].p - max) / s->temp);
        sum += c[i].p;
    }
    // nucleus: the smallest prefix whose probability reaches top_p
    double kept = 0;
    int m = n;
    for (int i = 0; i < n; i++) {
        kept += c[i].p / sum;
        if (s->top_p < 1 && kept >= s->top_p) {
            m = i + 1;
            break;
        }
    }
    double mass = 0;
    for (int i = 0; i < m; i++)
        mass += c[i].p;
    double r = rng_uniform(&s->rng) * mass;
    for (int i = 0; i < m; i++) {
        r -= c[i].p;
        if (r < 0)
            return c[i].id;
    }
    return c[m - 1].id;
}
