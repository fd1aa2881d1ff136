/*
 * test_imatrix.c — llama-imatrix files: the reference file loads with the
 * values llama-quantize derives, saving gives back the same bytes, and
 * malformed files are rejected.
 */
#include <math.h>
#include <unistd.h>

#include <ggufkit/quants.h>
#include "testutil.h"

START_TEST(test_reference_file)
{
    char path[1024];
    gguf_error err = { 0 };
    gguf_imatrix im;
    ck_assert_ptr_nonnull(fixture_path(path, sizeof path, "reference/wp-llama-5m.imatrix"));
    ck_assert_msg(gguf_imatrix_load(path, &im, &err) == 0, "%s", err.msg);
    /* llama-quantize reported 28 entries computed on 449 chunks of calib.txt */
    ck_assert_int_eq(im.n, 28);
    ck_assert_int_eq(im.chunks, 449);
    ck_assert_str_eq(im.dataset, "calib.txt");
    int32_t n;
    const float *w = gguf_imatrix_find(&im, "blk.3.ffn_down.weight", &n);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(n, 768);
    const gguf_imatrix_entry *e = NULL;
    for (int32_t i = 0; i < im.n; i++)
        if (!strcmp(im.entries[i].name, "blk.3.ffn_down.weight"))
            e = &im.entries[i];
    ck_assert_int_gt(e->ncall, 0);
    ck_assert(w[5] == e->values[5] / (float)e->ncall);
    ck_assert_ptr_null(gguf_imatrix_find(&im, "token_embd.weight", &n));

    /* save → identical bytes */
    char out[1024];
    snprintf(out, sizeof out, "%s/imatrix-%d.dat", test_tmpdir(), (int)getpid());
    ck_assert_int_eq(gguf_imatrix_save(out, &im, &err), 0);
    FILE *a = fopen(path, "rb"), *b = fopen(out, "rb");
    int same = 1, ca, cb;
    do {
        ca = fgetc(a);
        cb = fgetc(b);
        same &= ca == cb;
    } while (ca != EOF && cb != EOF);
    fclose(a);
    fclose(b);
    unlink(out);
    ck_assert(same);
    gguf_imatrix_free(&im);
}
END_TEST

/* A small well-formed image: one entry "w" with 2 values, ncall 2. */
static size_t build(uint8_t *buf, int32_t n_entries, int32_t nval, float v0, int trailer)
{
    size_t n = 0;
#define PUT(p, k) (memcpy(buf + n, (p), (k)), n += (k))
    int32_t len = 1, ncall = 2;
    float vals[2] = { v0, 4.0f };
    PUT(&n_entries, 4); PUT(&len, 4); PUT("w", 1); PUT(&ncall, 4); PUT(&nval, 4);
    PUT(vals, 8);
    if (trailer) {
        int32_t chunks = 7, dl = 3;
        PUT(&chunks, 4); PUT(&dl, 4); PUT("abc", 3);
    }
#undef PUT
    return n;
}

START_TEST(test_parse_and_reject)
{
    uint8_t buf[128];
    gguf_imatrix im;
    gguf_error err;
    size_t n = build(buf, 1, 2, 2.0f, 1);
    ck_assert_int_eq(gguf_imatrix_parse(buf, n, &im, &err), 0);
    int32_t k;
    const float *w = gguf_imatrix_find(&im, "w", &k);
    ck_assert(k == 2 && w[0] == 1.0f && w[1] == 2.0f);
    ck_assert_int_eq(im.chunks, 7);
    gguf_imatrix_free(&im);
    /* every truncation is rejected (the trailer-less prefix is valid) */
    for (size_t cut = 0; cut < n; cut++) {
        int rc = gguf_imatrix_parse(buf, cut, &im, &err);
        if (cut == build(buf, 1, 2, 2.0f, 0)) {
            ck_assert_int_eq(rc, 0);
            gguf_imatrix_free(&im);
        } else {
            ck_assert_int_eq(rc, -1);
        }
        build(buf, 1, 2, 2.0f, 1);
    }
    n = build(buf, 0, 2, 2.0f, 0);
    ck_assert_int_eq(gguf_imatrix_parse(buf, n, &im, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "no entries"));
    n = build(buf, 1000000, 2, 2.0f, 0);
    ck_assert_int_eq(gguf_imatrix_parse(buf, n, &im, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot fit"));
    n = build(buf, 1, 0x40000000, 2.0f, 0);
    ck_assert_int_eq(gguf_imatrix_parse(buf, n, &im, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "do not fit"));
    n = build(buf, 1, 2, NAN, 0);
    ck_assert_int_eq(gguf_imatrix_parse(buf, n, &im, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "not finite"));
    ck_assert_int_eq(gguf_imatrix_load("/nonexistent.imatrix", &im, &err), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("imatrix");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parse_and_reject);
    int skipped = 0;
    if (fixtures_present())
        tcase_add_test(tc, test_reference_file);
    else
        skipped++;
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
