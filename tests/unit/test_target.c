/*
 * test_target.c — quantize/target.c: the sensitivity table's parser (rows,
 * comments, every refusal with its line) and the allocation (the least
 * summed KLD that fits, worked out by hand below; the stock mix kept when
 * no better; a budget no mix fits; a table of another model).
 */
#include "target.h"
#include "testutil.h"
#include <math.h>
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
    target_item it[2] = { { "a", 256, 1, GGUF_DT_Q4_K, 0, NULL, NULL, 1 },
                          { "b", 256, 1, GGUF_DT_Q6_K, 0, NULL, NULL, 1 } };
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

/* the row of t for name at type, or NULL */
static const target_row *row(const target_table *t, const char *name, uint32_t type)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->rows[i].name, name) && t->rows[i].type == type)
            return &t->rows[i];
    return NULL;
}

START_TEST(test_fill)
{
    target_table t, est;
    gguf_error err = { 0 };
    /* a measured at q4_K (0.02, twice the estimate 0.01): its other types
     * at twice their estimates; b measured at nothing positive: 0; c not
     * measured: no rows */
    ck_assert(parse("a\tq4_K\t144\t0.02\nb\tq4_K\t144\t-0.0001\n", &t, &err) == 0);
    ck_assert(parse("a\tq2_K\t84\t0.05\na\tq4_K\t144\t0.01\na\tq8_0\t272\t0.0001\n"
                    "b\tq4_K\t144\t0.01\nb\tq6_K\t210\t0.002\nc\tq4_K\t144\t0.01\n", &est, &err) == 0);
    ck_assert_msg(target_table_fill(&t, &est, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(t.n, 5);
    ck_assert(row(&t, "a", GGUF_DT_Q4_K)->kld == 0.02); /* measured rows stay */
    ck_assert(fabs(row(&t, "a", GGUF_DT_Q2_K)->kld - 0.1) < 1e-15);
    ck_assert(fabs(row(&t, "a", GGUF_DT_Q8_0)->kld - 0.0002) < 1e-15);
    ck_assert(row(&t, "a", GGUF_DT_Q2_K)->bytes == 84);
    ck_assert(row(&t, "b", GGUF_DT_Q4_K)->kld == -0.0001 && row(&t, "b", GGUF_DT_Q6_K)->kld == 0);
    ck_assert(!row(&t, "c", GGUF_DT_Q4_K));
    /* sorted again: rows of a tensor together, by type */
    for (size_t i = 1; i < t.n; i++) {
        const int c = strcmp(t.rows[i - 1].name, t.rows[i].name);
        ck_assert(c < 0 || (c == 0 && t.rows[i - 1].type < t.rows[i].type));
    }
    target_table_free(&t);
    target_table_free(&est);
}
END_TEST

/* A tensor of f32 rows (rows × 256) for the estimate. */
static gguf_tensor f32_tensor(const char *name, const float *v, int64_t rows)
{
    gguf_tensor t = { 0 };
    t.name = name;
    t.n_dims = 2;
    t.ne[0] = 256;
    t.ne[1] = rows;
    t.ne[2] = t.ne[3] = 1;
    t.type = GGUF_DT_F32;
    t.n_elements = 256 * rows;
    t.nbytes = (uint64_t)t.n_elements * 4;
    t.data = (const uint8_t *)v;
    return t;
}

START_TEST(test_estimate)
{
    enum { ROWS = 8 };
    static float v[ROWS * 256];
    uint32_t s = 12345;
    for (int i = 0; i < ROWS * 256; i++) {
        s = s * 1664525u + 1013904223u;
        v[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * (i % 7 == 0 ? 8.0f : 1.0f);
    }
    gguf_tensor ta = f32_tensor("a", v, ROWS);
    /* importance only on the first 16 columns of every row */
    static float im[256];
    for (int j = 0; j < 16; j++)
        im[j] = 1.0f;
    const uint32_t types[] = { GGUF_DT_Q2_K, GGUF_DT_Q4_K, GGUF_DT_Q8_0, GGUF_DT_Q4_0 };
    target_item it[2] = { { "a", 256, ROWS, GGUF_DT_Q6_K, 0, &ta, NULL, 1 },
                          { "b", 256, ROWS, GGUF_DT_Q4_K, 0, &ta, im, 1 } };
    target_table t;
    gguf_error err = { 0 };
    ck_assert_msg(target_estimate(it, 2, types, 4, &t, &err) == 0, "%s", err.msg);
    /* a: 3 types + its stock q6_K; b: the 3 (q4_K is its stock) */
    ck_assert_uint_eq(t.n, 7);
    const double a2 = row(&t, "a", GGUF_DT_Q2_K)->kld, a4 = row(&t, "a", GGUF_DT_Q4_K)->kld,
                 a6 = row(&t, "a", GGUF_DT_Q6_K)->kld, a8 = row(&t, "a", GGUF_DT_Q8_0)->kld;
    ck_assert_msg(a2 > a4 && a4 > a6 && a6 > a8 && a8 > 0, "%g %g %g %g", a2, a4, a6, a8);
    ck_assert(row(&t, "a", GGUF_DT_Q4_K)->bytes == 144 * ROWS);
    ck_assert(row(&t, "a", GGUF_DT_Q8_0)->bytes == 272 * ROWS);
    /* the relative error, computed here for q8_0 with uniform weights */
    {
        double e = 0, sg = 0;
        uint8_t q[272];
        float back[256];
        for (int r = 0; r < ROWS; r++) {
            ck_assert(gguf_quantize_rows(GGUF_DT_Q8_0, v + r * 256, q, 1, 256, NULL, NULL) == 272);
            ck_assert(gguf_dequantize_row(GGUF_DT_Q8_0, q, back, 256, NULL) == 0);
            for (int j = 0; j < 256; j++) {
                const double d = (double)v[r * 256 + j] - back[j];
                e += d * d;
                sg += (double)v[r * 256 + j] * v[r * 256 + j];
            }
        }
        ck_assert_msg(fabs(a8 - e / sg) <= 1e-12 * (e / sg), "%g vs %g", a8, e / sg);
    }
    /* b weighs only 16 columns: its error is theirs alone, another number */
    const double b4 = row(&t, "b", GGUF_DT_Q4_K)->kld;
    ck_assert(b4 > 0 && b4 != a4);
    /* the 32-wide types only for rows the K-quants do not fit */
    ck_assert(!row(&t, "a", GGUF_DT_Q4_0) && !row(&t, "b", GGUF_DT_Q4_0));
    target_table_free(&t);

    /* rows too narrow for the K-quants: q8_0 and q4_0 (and a stock that fits) */
    gguf_tensor tn = ta;
    tn.ne[0] = 64;
    tn.ne[1] = ROWS * 4;
    target_item nar = { "n", 64, ROWS * 4, GGUF_DT_Q8_0, 0, &tn, NULL, 1 };
    ck_assert(target_estimate(&nar, 1, types, 4, &t, &err) == 0);
    ck_assert_uint_eq(t.n, 2);
    ck_assert(row(&t, "n", GGUF_DT_Q8_0) && row(&t, "n", GGUF_DT_Q4_0));
    target_table_free(&t);

    /* a type that needs importance weights, without them: no row */
    const uint32_t iq[] = { GGUF_DT_IQ2_XXS };
    ck_assert(target_estimate(&it[0], 1, iq, 1, &t, &err) == 0);
    ck_assert_uint_eq(t.n, 1); /* its stock alone */
    target_table_free(&t);
    ck_assert(target_estimate(&it[1], 1, iq, 1, &t, &err) == 0);
    ck_assert_uint_eq(t.n, 2);
    target_table_free(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("target");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parse);
    tcase_add_test(tc, test_allocate);
    tcase_add_test(tc, test_fill);
    tcase_add_test(tc, test_estimate);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
