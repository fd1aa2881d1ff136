/*
 * test_kldstats.c — run/eval.c's llama-perplexity statistics: percentiles
 * (linear between neighbours, in float), the median, the report's lines and
 * their format, and no statistics on fewer than 100 positions. Expected
 * figures were computed apart (NumPy float32, Python doubles).
 */
#define _GNU_SOURCE
#include "eval.h"
#include "testutil.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

START_TEST(test_percentile)
{
    const float v[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    ck_assert(run_kld_percentile(v, 10, 0.0f) == 0.0f);
    ck_assert(run_kld_percentile(v, 10, -1.0f) == 0.0f);
    ck_assert(run_kld_percentile(v, 10, 1.0f) == 9.0f);
    ck_assert(run_kld_percentile(v, 10, 0.5f) == 4.5f);
    /* 0.999f × 9 = 8.991 in float, then 0.991 of the way from 8 to 9 */
    ck_assert(fabsf(run_kld_percentile(v, 10, 0.999f) - 8.991f) < 1e-5f);
    const float one[1] = { 3 };
    ck_assert(run_kld_percentile(one, 1, 0.3f) == 3.0f);
}
END_TEST

/* The report of 200 positions: KLD i/1000 (given in reverse: the report
 * sorts), Δp ±(i/10000), half the tops the same. */
static char *report(long n, run_kld_stats *k)
{
    memset(k, 0, sizeof *k);
    k->kld = malloc((size_t)n * sizeof *k->kld);
    k->p_diff = malloc((size_t)n * sizeof *k->p_diff);
    ck_assert(k->kld && k->p_diff);
    for (long i = 0; i < n; i++) {
        const float kl = (float)(n - 1 - i) * 0.001f, nll = 2.0f + (float)(i % 7) * 0.25f;
        const float nll_base = nll - 0.01f * (float)(i % 3);
        const float pd = (i % 2 ? 1.0f : -1.0f) * (float)i * 0.0001f;
        k->kld[i] = kl;
        k->p_diff[i] = pd;
        k->sum_kld += kl;
        k->sum_kld2 += (double)kl * kl;
        k->sum_nll += nll;
        k->sum_nll2 += nll * nll;
        k->sum_nll_base += nll_base;
        k->sum_nll_base2 += nll_base * nll_base;
        k->sum_nll_nll_base += nll * nll_base;
        k->sum_p_diff += pd;
        k->sum_p_diff2 += (double)(pd * pd);
        k->sum_p_diff4 += (double)(pd * pd) * (double)(pd * pd);
        k->n_same_top += i % 2;
    }
    k->count = n;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    run_kld_report(f, k);
    fclose(f);
    return buf;
}

START_TEST(test_report)
{
    run_kld_stats k;
    char *out = report(200, &k);
    static const char *const lines[] = {
        "====== Perplexity statistics ======\n",
        "====== KL divergence statistics ======\n",
        "Mean    KLD:   0.099500 ±   0.004093\n",
        "Maximum KLD:   0.199000\n",
        "99.9%   KLD:   0.198801\n",
        "99.0%   KLD:   0.197010\n",
        "95.0%   KLD:   0.189050\n",
        "90.0%   KLD:   0.179100\n",
        "Median  KLD:   0.099500\n",
        "10.0%   KLD:   0.019900\n",
        " 5.0%   KLD:   0.009950\n",
        " 1.0%   KLD:   0.001990\n",
        " 0.1%   KLD:   0.000199\n",
        "Minimum KLD:   0.000000\n",
        "====== Token probability statistics ======\n",
        "Maximum Δp:  1.990%\n",
        "Minimum Δp: -1.980%\n",
        "Same top p: 50.000 ± 3.544 %\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        ck_assert_msg(strstr(out, lines[i]) != NULL, "missing line %s in:\n%s", lines[i], out);
    /* sorted in place */
    for (long i = 1; i < k.count; i++)
        ck_assert(k.kld[i - 1] <= k.kld[i] && k.p_diff[i - 1] <= k.p_diff[i]);
    free(out);
    run_kld_stats_free(&k);
    ck_assert_ptr_null(k.kld);
    /* fewer than 100: no statistics, as llama-perplexity */
    out = report(99, &k);
    ck_assert_str_eq(out, "(99 scored positions: llama-perplexity gives no statistics on fewer than 100)\n");
    free(out);
    run_kld_stats_free(&k);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kldstats");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_percentile);
    tcase_add_test(tc, test_report);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
