/*
 * test_target.c — quantize/target.c: the sensitivity table's parser (rows,
 * comments, every refusal with its line) and the allocation (the least
 * summed KLD that fits, worked out by hand below; the stock mix kept when
 * no better; a budget no mix fits; a table of another model).
 */
#include "target.h"
#include "testutil.h"
#include <string.h>

#include <ggufkit/quants.h>

static int parse(const char *s, target_table *t, gguf_error *err)
{
    return target_table_parse(s, strlen(s), t, err);
}

START_TEST(test_parse)
{
    target_table t;
    gguf_error err = { 0 };
    const char *ok = "# a comment\r\n"
                     "b.weight\tq8_0\t1088\t0.5\n"
                     "\n"
                     "a.weight\tq4_K\t144\t1e-3\r\n"
                     "a.weight\tq2_K\t84\t-2e-6";
    ck_assert_msg(parse(ok, &t, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(t.n, 3);
    /* sorted by name, then type id (q2_K 10 before q4_K 12) */
    ck_assert_str_eq(t.rows[0].name, "a.weight");
    ck_assert_int_eq(t.rows[0].type, GGUF_DT_Q2_K);
    ck_assert(t.rows[0].kld == -2e-6 && t.rows[1].bytes == 144 && t.rows[2].kld == 0.5);
    target_table_free(&t);

    const struct { const char *text, *msg; } bad[] = {
        { "a\tq4_K\t144\n", "line 1: 3 fields, expected 4" },
        { "a\tq4_K\t144\t1\t2\n", "line 1: more than 4 fields" },
        { "# x\na\tq9_K\t144\t1\n", "line 2: 'q9_K' is not a type gguf-quantize writes" },
        { "a\tq4_K\t0\t1\n", "line 1: bytes '0' is not a size" },
        { "a\tq4_K\t-5\t1\n", "line 1: bytes '-5' is not a size" },
        { "a\tq4_K\t12x\t1\n", "line 1: bytes '12x' is not a size" },
        { "a\tq4_K\t144\tnan\n", "line 1: mean_kld 'nan' is not a number" },
        { "a\tq4_K\t144\tinf\n", "line 1: mean_kld 'inf' is not a number" },
        { "a\tq4_K\t144\t\n", "line 1: 3 fields, expected 4" },
        { "\tq4_K\t144\t1\n", "line 1: a tensor name of 0 bytes" },
        { "a\tq4_K\t144\t1\na\tq4_K\t144\t2\n", "a at q4_K twice" },
        { "# only a comment\n", "no rows" },
        { "", "no rows" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_msg(parse(bad[i].text, &t, &err) == -1, "case %zu accepted", i);
        ck_assert_msg(strstr(err.msg, bad[i].msg), "case %zu: %s", i, err.msg);
    }
}
END_TEST

/* Two tensors of one 256-wide row each: q4_K 144 bytes, q6_K 210, q8_0 272. */
static void table3(target_table *t, double a4, double a6, double a8, double b4, double b6,
                   double b8)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "a\tq4_K\t144\t%g\na\tq6_K\t210\t%g\na\tq8_0\t272\t%g\n"
             "b\tq4_K\t144\t%g\nb\tq6_K\t210\t%g\nb\tq8_0\t272\t%g\n", a4, a6, a8, b4, b6, b8);
    gguf_error err = { 0 };
    ck_assert_msg(parse(buf, t, &err) == 0, "%s", err.msg);
}

START_TEST(test_allocate)
{
    target_table t;
    gguf_error err = { 0 };
    target_result r;
    /* a is fragile (q4_K costs 10), b is not (1): with 354 bytes (q4_K +
     * q6_K) a gets q6_K; with 416 (q4_K + q8_0) a gets q8_0 */
    table3(&t, 10, 2, 1, 1, 0.5, 0.4);
    target_item it[2] = { { "a", 256, 1, GGUF_DT_Q4_K, 0 }, { "b", 256, 1, GGUF_DT_Q6_K, 0 } };
    ck_assert_msg(target_allocate(it, 2, &t, 354, &r, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(it[0].chosen, GGUF_DT_Q6_K);
    ck_assert_int_eq(it[1].chosen, GGUF_DT_Q4_K);
    ck_assert(r.bytes == 354 && r.kld == 3 && r.stock_kld == 10.5 && r.n_changed == 2 && !r.kept_stock);
    ck_assert_msg(target_allocate(it, 2, &t, 416, &r, &err) == 0, "%s", err.msg);
    ck_assert(it[0].chosen == GGUF_DT_Q8_0 && it[1].chosen == GGUF_DT_Q4_K && r.kld == 2);
    /* everything fits: the least of each */
    ck_assert(target_allocate(it, 2, &t, 10000, &r, &err) == 0);
    ck_assert(it[0].chosen == GGUF_DT_Q8_0 && it[1].chosen == GGUF_DT_Q8_0 && r.bytes == 544);
    /* no mix fits */
    ck_assert_int_eq(target_allocate(it, 2, &t, 287, &r, &err), -1);
    ck_assert_msg(strstr(err.msg, "the smallest mix the table allows takes 288 bytes"), "%s", err.msg);
    target_table_free(&t);

    /* the stock mix is already the best for its bytes: kept */
    table3(&t, 1, 0.9, 0.8, 5, 0.1, 0.05);
    ck_assert(target_allocate(it, 2, &t, 354, &r, &err) == 0);
    ck_assert(r.kept_stock && it[0].chosen == GGUF_DT_Q4_K && it[1].chosen == GGUF_DT_Q6_K);
    ck_assert(r.kld == r.stock_kld && r.n_changed == 0);
    target_table_free(&t);

    /* bytes of another model's tensor */
    ck_assert(parse("a\tq4_K\t288\t1\n", &t, &err) == 0);
    ck_assert_int_eq(target_allocate(it, 1, &t, 1000, &r, &err), -1);
    ck_assert_msg(strstr(err.msg, "a at q4_K: 288 bytes in the table, the tensor takes 144"), "%s",
                  err.msg);
    target_table_free(&t);

    /* a tensor the table lacks keeps its type and its bytes count */
    ck_assert(parse("b\tq4_K\t144\t1\nb\tq8_0\t272\t0\n", &t, &err) == 0);
    ck_assert(target_allocate(it, 2, &t, 144 + 272, &r, &err) == 0);
    ck_assert(it[0].chosen == GGUF_DT_Q4_K && it[1].chosen == GGUF_DT_Q8_0);
    ck_assert(r.stock_kld == -1); /* b's stock q6_K has no row: not comparable */
    target_table_free(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("target");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parse);
    tcase_add_test(tc, test_allocate);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
