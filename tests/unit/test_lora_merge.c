/*
 * test_lora_merge.c — gguf-edit's LoRA merge: the two orders in which
 * ggml's CPU backend adds a product of Aᵀ and B (tinyBLAS's one 16-lane
 * sum; ggml_vec_dot_f32's four 16-lane sums of 64, then the rest one
 * rounded product at a time), told apart by values whose sum depends on
 * the order, and when each applies.
 */
#include "lora_merge.h"
#include "testutil.h"

static const float ones[128] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

START_TEST(test_orders)
{
    /* 1e8 + 1 is 1e8 in float: the order decides whether the ones survive */
    float v[128] = { 0 };
    v[0] = 1e8f, v[1] = 1, v[8] = -1e8f, v[9] = 1;
    /* batch: lanes 0 and 8 cancel (i + 8 first), lanes 1 and 9 give 2 */
    ck_assert(lora_merge_dot(v, ones, 16, true) == 2.0f);
    /* vec, rank 16 < 64: one by one, 1e8 swallows the first 1 */
    ck_assert(lora_merge_dot(v, ones, 16, false) == 1.0f);
    /* vec, rank 64: sum 0 with sum 2 and sum 1 with sum 3, per lane */
    float w[128] = { 0 };
    w[0] = 1e8f, w[16] = 1, w[32] = -1e8f, w[48] = 1;
    ck_assert(lora_merge_dot(w, ones, 64, false) == 2.0f);
    /* and the rest after 64 one at a time after the lanes */
    w[64] = 0.5f, w[65] = 0.25f;
    ck_assert(lora_merge_dot(w, ones, 66, false) == 2.75f);
    /* batch order fuses each product into its lane (one rounding);
     * the vec order's rest rounds the product first:
     * (1 + 2^-12)² = 1 + 2^-11 + 2^-24 */
    float x[32] = { 0 }, y[32] = { 0 };
    const float e = 1.0f + 1.0f / 4096;
    x[0] = 1, y[0] = -1, x[16] = e, y[16] = e;
    ck_assert(lora_merge_dot(x, y, 32, true) == 1.0f / 2048 + 1.0f / 16777216);
    ck_assert(lora_merge_dot(x, y, 32, false) == 1.0f / 2048);
}
END_TEST

START_TEST(test_batch_order)
{
    ck_assert(lora_merge_batch_order(256, 128, 16));
    ck_assert(lora_merge_batch_order(4, 2, 32));
    ck_assert(!lora_merge_batch_order(256, 128, 8));  /* rank not of 16 */
    ck_assert(!lora_merge_batch_order(250, 128, 16)); /* in not of 4 */
    ck_assert(!lora_merge_batch_order(256, 1, 16));   /* one output row */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lora_merge");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_orders);
    tcase_add_test(tc, test_batch_order);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
