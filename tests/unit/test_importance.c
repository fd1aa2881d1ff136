/*
 * test_importance.c — run/importance.c's --in-file: importance matrices
 * added up as llama-imatrix e21cdc11's load_imatrix adds them (by name;
 * a GGUF entry's sums in f32 and counts rounded, a .dat entry's values
 * times the chunk size; a single count broadcast to experts), the
 * mismatches it refuses, and the files written after (the GGUF with every
 * dataset, the legacy .dat with ncall from the counts and 1s for an expert
 * with no rows). Expected values are worked out by hand below.
 */
#include "importance.h"
#include "testutil.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 512, "%s/test_importance-%d-%s", test_tmpdir(), (int)getpid(), name);
    return p;
}

/* A GGUF imatrix of one entry: nval sums over n_mat matrices. */
static void write_gguf(const char *path, const char *name, const float *sums, int nval,
                       const float *counts, int n_mat, const char *dataset)
{
    gguf_imatrix_entry e = { (char *)name, 0, nval, (float *)sums, NULL, n_mat, (float *)counts };
    gguf_imatrix im = { 1, &e, 1, (char *)dataset, 4 };
    gguf_error err = { 0 };
    ck_assert_msg(gguf_imatrix_save_gguf(path, &im, &err) == 0, "%s", err.msg);
}

/* A legacy .dat of one entry. */
static void write_dat(const char *path, const char *name, const float *values, int nval,
                      int ncall, const char *dataset)
{
    gguf_imatrix_entry e = { (char *)name, ncall, nval, (float *)values, NULL, 1, NULL };
    gguf_imatrix im = { 1, &e, ncall, (char *)dataset, 0 };
    gguf_error err = { 0 };
    ck_assert_msg(gguf_imatrix_save(path, &im, &err) == 0, "%s", err.msg);
}

START_TEST(test_add_gguf_and_dat)
{
    const char *a = tmp_path("a.gguf"), *b = tmp_path("b.dat");
    const float s1[4] = { 1, 2, 3, 0.1f }, c1[1] = { 8 };
    write_gguf(a, "blk.0.attn_q.weight", s1, 4, c1, 1, "one.txt");
    const float v2[4] = { 0.5f, 0.25f, 2, 0.2f };
    write_dat(b, "blk.0.attn_q.weight", v2, 4, 3, "two.txt");
    run_importance im = { 0 };
    gguf_error err = { 0 };
    ck_assert_msg(run_importance_load(&im, a, 16, &err) == 0, "%s", err.msg);
    ck_assert_msg(run_importance_load(&im, b, 16, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(im.n, 1);
    const run_importance_entry *e = &im.e[0];
    ck_assert(e->loaded && e->w == NULL && e->n_mat == 1 && e->ncols == 4);
    /* sums: s1 + v2 × 16 in f32; count: 8 + 3 × 16 */
    for (int j = 0; j < 4; j++)
        ck_assert(e->sum[j] == s1[j] + v2[j] * 16.0f);
    ck_assert_int_eq(e->count, 8 + 48);
    ck_assert_int_eq(im.n_datasets, 2);
    ck_assert_str_eq(im.datasets[0], "one.txt");
    ck_assert_str_eq(im.datasets[1], "two.txt");

    /* the GGUF written: every dataset, then the text's; chunks = 56 / 16 */
    const char *out = tmp_path("out.gguf");
    ck_assert_msg(run_importance_save_loaded(&im, out, "three.txt", true, 16, &err) == 0, "%s",
                  err.msg);
    gguf_file *g = gguf_open(out, 0, &err);
    ck_assert_ptr_nonnull(g);
    const gguf_kv *ds = gguf_lookup_kv(g, "imatrix.datasets");
    ck_assert(ds && ds->n == 3 && ds->strs[2].len == 9 && !memcmp(ds->strs[2].ptr, "three.txt", 9));
    uint32_t chunks = 0;
    ck_assert(gguf_get_u32(g, "imatrix.chunk_count", &chunks, NULL) == 0 && chunks == 3);
    gguf_close(g);

    /* the .dat written: ncall = ceil(56 / 16) = 4, value = sum / 56 × 4 */
    const char *dat = tmp_path("out.dat");
    ck_assert_msg(run_importance_save_loaded(&im, dat, NULL, false, 16, &err) == 0, "%s", err.msg);
    gguf_imatrix back;
    ck_assert_msg(gguf_imatrix_load(dat, &back, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(back.n, 1);
    ck_assert_int_eq(back.entries[0].ncall, 4);
    ck_assert_int_eq(back.chunks, 3);
    ck_assert_str_eq(back.dataset, "two.txt"); /* the last one, with no text */
    for (int j = 0; j < 4; j++)
        ck_assert(back.entries[0].values[j] == (e->sum[j] / 56.0f) * 4.0f);
    gguf_imatrix_free(&back);
    run_importance_free(&im);
    unlink(a), unlink(b), unlink(out), unlink(dat);
}
END_TEST

START_TEST(test_broadcast_and_experts)
{
    /* a .dat entry of 6 values, then a GGUF one of 3 experts × 2: the
     * single count becomes each expert's, as llama-imatrix broadcasts it */
    const char *a = tmp_path("e.dat"), *b = tmp_path("e.gguf");
    const float v[6] = { 1, 1, 1, 1, 1, 1 }, s[6] = { 2, 2, 0, 0, 4, 4 }, c[3] = { 2, 0, 5 };
    write_dat(a, "blk.1.ffn_up_exps.weight", v, 6, 1, NULL);
    write_gguf(b, "blk.1.ffn_up_exps.weight", s, 6, c, 3, "x");
    run_importance im = { 0 };
    gguf_error err = { 0 };
    ck_assert(run_importance_load(&im, a, 4, &err) == 0);
    ck_assert(run_importance_load(&im, b, 4, &err) == 0);
    const run_importance_entry *e = &im.e[0];
    ck_assert_int_eq(e->n_mat, 3);
    ck_assert_int_eq(e->ncols, 2);
    ck_assert(e->counts[0] == 6 && e->counts[1] == 4 && e->counts[2] == 9);
    ck_assert(e->sum[0] == 6.0f && e->sum[2] == 4.0f && e->sum[5] == 8.0f);
    /* the .dat's empty dataset counts, as llama-imatrix keeps it */
    ck_assert_int_eq(im.n_datasets, 2);
    ck_assert_str_eq(im.datasets[0], "");

    /* a GGUF entry of other experts now: refused, naming the entry */
    const char *d = tmp_path("f.gguf");
    const float s4[6] = { 0 }, c2[2] = { 1, 1 };
    write_gguf(d, "blk.1.ffn_up_exps.weight", s4, 6, c2, 2, "y");
    ck_assert_int_eq(run_importance_load(&im, d, 4, &err), -1);
    ck_assert_msg(strstr(err.msg, "blk.1.ffn_up_exps.weight: counts for 2 matrices where an "
                         "earlier file has 3"), "%s", err.msg);
    /* another size: refused */
    const float s3[3] = { 1, 1, 1 }, c1[1] = { 1 };
    write_gguf(d, "blk.1.ffn_up_exps.weight", s3, 3, c1, 1, "y");
    ck_assert_int_eq(run_importance_load(&im, d, 4, &err), -1);
    ck_assert_msg(strstr(err.msg, "3 values where an earlier file has 6"), "%s", err.msg);
    run_importance_free(&im);

    /* an expert with no rows in the .dat: 1s, the others value / count × ncall */
    run_importance one = { 0 };
    ck_assert(run_importance_load(&one, b, 4, &err) == 0);
    const char *dat = tmp_path("e-out.dat");
    ck_assert_msg(run_importance_save_loaded(&one, dat, NULL, false, 4, &err) == 0, "%s", err.msg);
    gguf_imatrix back;
    ck_assert_msg(gguf_imatrix_load(dat, &back, &err) == 0, "%s", err.msg);
    /* ncall = ceil(5 / 4) = 2 */
    const float want[6] = { 2.0f / 2 * 2, 2.0f / 2 * 2, 1 * 2, 1 * 2, 4.0f / 5 * 2, 4.0f / 5 * 2 };
    ck_assert_int_eq(back.entries[0].ncall, 2);
    for (int j = 0; j < 6; j++)
        ck_assert_msg(back.entries[0].values[j] == want[j], "%d: %g", j, back.entries[0].values[j]);
    gguf_imatrix_free(&back);
    run_importance_free(&one);
    unlink(a), unlink(b), unlink(d), unlink(dat);
}
END_TEST

START_TEST(test_refusals)
{
    run_importance im = { 0 };
    gguf_error err = { 0 };
    /* a count no whole number of rows can be */
    const char *a = tmp_path("big.gguf");
    const float s[2] = { 1, 1 }, c[1] = { 1e30f };
    write_gguf(a, "blk.0.attn_k.weight", s, 2, c, 1, "t");
    ck_assert_int_eq(run_importance_load(&im, a, 4, &err), -1);
    ck_assert_msg(strstr(err.msg, "count 1e+30 is too large"), "%s", err.msg);
    run_importance_free(&im);
    /* sums that overflow f32 when added */
    const float h[2] = { 3e38f, 1 }, c1[1] = { 1 };
    write_gguf(a, "blk.0.attn_k.weight", h, 2, c1, 1, "t");
    ck_assert(run_importance_load(&im, a, 4, &err) == 0);
    ck_assert_int_eq(run_importance_load(&im, a, 4, &err), -1);
    ck_assert_msg(strstr(err.msg, "overflow"), "%s", err.msg);
    run_importance_free(&im);
    /* a name longer than an entry holds */
    char name[80];
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    write_dat(a, name, s, 2, 1, NULL);
    ck_assert_int_eq(run_importance_load(&im, a, 4, &err), -1);
    ck_assert_msg(strstr(err.msg, "name longer than 63 bytes"), "%s", err.msg);
    run_importance_free(&im);
    /* nothing with data: nothing written */
    ck_assert_int_eq(run_importance_save_loaded(&im, a, NULL, true, 4, &err), -1);
    unlink(a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("importance");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_add_gguf_and_dat);
    tcase_add_test(tc, test_broadcast_and_experts);
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
