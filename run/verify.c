/*
 * verify.c — the pieces of gguf-run --verify that eval.c does not have: the
 * greedy continuation both models make and the thresholds. main.c runs the
 * two models in turn (see verify.h).
 */
#include <stdio.h>

#include "verify.h"

static int32_t argmax(const float *l, int n)
{
    int32_t best = 0;
    for (int i = 1; i < n; i++)
        if (l[i] > l[best])
            best = i;
    return best;
}

void run_greedy(run_state *s, const run_model *m, const int32_t *prompt, int n_prompt, int n,
                float *logits, int32_t *out)
{
    run_forward(s, m, prompt, n_prompt, 0, n_prompt - 1, logits);
    for (int i = 0; i < n; i++) {
        out[i] = argmax(logits, m->hp.n_vocab);
        if (i + 1 < n)
            run_forward(s, m, &out[i], 1, n_prompt + i, 0, logits);
    }
}

int run_leading_agreement(const int32_t *a, const int32_t *b, int n)
{
    int k = 0;
    while (k < n && a[k] == b[k])
        k++;
    return k;
}

bool run_verify_within(const run_eval_result *res, const run_verify_limits *lim, char *why,
                       size_t why_size)
{
    const double ratio = res->ppl / res->ppl_base;
    if (lim->max_kld >= 0 && !(res->mean_kld <= lim->max_kld)) {
        snprintf(why, why_size, "mean KLD %.6f is above --max-kld %g", res->mean_kld,
                 lim->max_kld);
        return false;
    }
    if (lim->min_top1 >= 0 && !(res->same_top >= lim->min_top1)) {
        snprintf(why, why_size, "top-1 agreement %.4f is below --min-top1 %g", res->same_top,
                 lim->min_top1);
        return false;
    }
    if (lim->max_ppl_ratio >= 0 && !(ratio <= lim->max_ppl_ratio)) {
        snprintf(why, why_size, "perplexity ratio %.6f is above --max-ppl-ratio %g", ratio,
                 lim->max_ppl_ratio);
        return false;
    }
    return true;
}
