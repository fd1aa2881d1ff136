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

/* The GGUF twin of the reference file (llama-imatrix e21cdc11's format):
 * the same entries, chunks and dataset, and weights within a float
 * rounding of the .dat's (sums / count instead of values / ncall). */
START_TEST(test_gguf_reference_file)
{
    char path[1024], dat[1024];
    gguf_error err = { 0 };
    gguf_imatrix g, d;
    ck_assert_ptr_nonnull(fixture_path(path, sizeof path, "upstream/imatrix/wp-llama-5m.imatrix.gguf"));
    ck_assert_ptr_nonnull(fixture_path(dat, sizeof dat, "reference/wp-llama-5m.imatrix"));
    ck_assert_msg(gguf_imatrix_load(path, &g, &err) == 0, "%s", err.msg);
    ck_assert_msg(gguf_imatrix_load(dat, &d, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(g.n, 28);
    ck_assert_int_eq(g.chunks, 449);
    ck_assert_str_eq(g.dataset, "calib.txt");
    int exact = 0, total = 0;
    double worst = 0;
    for (int32_t i = 0; i < d.n; i++) {
        int32_t ng, nd;
        const float *wd = gguf_imatrix_find(&d, d.entries[i].name, &nd);
        const float *wg = gguf_imatrix_find(&g, d.entries[i].name, &ng);
        ck_assert_msg(wg != NULL, "%s missing from the GGUF twin", d.entries[i].name);
        ck_assert_int_eq(ng, nd);
        for (int32_t j = 0; j < nd; j++, total++) {
            exact += wg[j] == wd[j];
            double rel = fabs((double)wg[j] - wd[j]) / fmax(fabs((double)wd[j]), 1e-30);
            worst = rel > worst ? rel : worst;
        }
    }
    ck_assert_msg(exact == total, "%d of %d weights differ (worst relative difference %g)",
                  total - exact, total, worst);
    /* the .dat converted to GGUF as llama-imatrix --in-file does (chunk
     * size 512): the upstream twin, byte for byte */
    char out[1024];
    snprintf(out, sizeof out, "%s/imatrix-%d.gguf", test_tmpdir(), (int)getpid());
    d.chunk_size = 512;
    ck_assert_msg(gguf_imatrix_save_gguf(out, &d, &err) == 0, "%s", err.msg);
    FILE *a = fopen(path, "rb"), *b = fopen(out, "rb");
    long at = 0;
    int ca, cb;
    do {
        ca = fgetc(a);
        cb = fgetc(b);
        at++;
    } while (ca == cb && ca != EOF);
    fclose(a);
    fclose(b);
    unlink(out);
    ck_assert_msg(ca == EOF && cb == EOF, "the converted file differs from the twin at byte %ld", at - 1);
    /* and the GGUF one written back as it is gives the same bytes too */
    ck_assert_msg(gguf_imatrix_save_gguf(out, &g, &err) == 0, "%s", err.msg);
    gguf_imatrix g2;
    ck_assert_msg(gguf_imatrix_load(out, &g2, &err) == 0, "%s", err.msg);
    unlink(out);
    ck_assert_int_eq(g2.n, g.n);
    for (int32_t i = 0; i < g.n; i++) {
        int32_t n2;
        const float *w2 = gguf_imatrix_find(&g2, g.entries[i].name, &n2);
        ck_assert(w2 && n2 == g.entries[i].nval &&
                  !memcmp(w2, g.entries[i].weights, (size_t)n2 * 4));
    }
    gguf_imatrix_free(&g2);
    gguf_imatrix_free(&g);
    gguf_imatrix_free(&d);
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

/* GGUF imatrix files made with the writer: the weights llama-quantize
 * derives (per-matrix counts; no count: 1), and every malformation refused
 * with its reason. */
typedef struct gspec {
    bool  no_counts, no_keys, i32_chunks, bad_shape;
    float count1, value0;
} gspec;

static int parse_built(const gspec *g, gguf_imatrix *im, gguf_error *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/imatrix-%d.gguf", test_tmpdir(), (int)getpid());
    gguf_writer *w = gguf_writer_new();
    gguf_error werr = { 0 };
    gguf_writer_set_str(w, "general.type", "imatrix");
    if (!g->no_keys) {
        const char *ds[] = { "calib.txt" };
        gguf_writer_set_str_array(w, "imatrix.datasets", ds, NULL, 1);
        if (g->i32_chunks)
            gguf_writer_set_i32(w, "imatrix.chunk_count", 3);
        else
            gguf_writer_set_u32(w, "imatrix.chunk_count", 3);
        gguf_writer_set_u32(w, "imatrix.chunk_size", 512);
    }
    /* "e": 2 matrices (experts) of 4 columns */
    const int64_t ne_s[2] = { 4, 2 }, ne_c[2] = { g->bad_shape ? 2 : 1, g->bad_shape ? 1 : 2 };
    gguf_writer_add_tensor(w, "e.in_sum2", GGUF_DT_F32, 2, ne_s, &werr);
    if (!g->no_counts)
        gguf_writer_add_tensor(w, "e.counts", GGUF_DT_F32, 2, ne_c, &werr);
    ck_assert_msg(gguf_writer_begin(w, path, &werr) == 0, "%s", werr.msg);
    const float sums[8] = { g->value0, 4, 6, 8, 1, 1, 1, 1 }, counts[2] = { 2, g->count1 };
    ck_assert_int_eq(gguf_writer_write_tensor(w, sums, sizeof sums, &werr), 0);
    if (!g->no_counts)
        ck_assert_int_eq(gguf_writer_write_tensor(w, counts, sizeof counts, &werr), 0);
    ck_assert_msg(gguf_writer_finish(w, &werr) == 0, "%s", werr.msg);
    gguf_writer_free(w);
    int rc = gguf_imatrix_load(path, im, err);
    unlink(path);
    return rc;
}

START_TEST(test_gguf_parse_and_reject)
{
    gguf_imatrix im;
    gguf_error err = { 0 };
    gspec g = { .count1 = 0, .value0 = 2 };
    ck_assert_msg(parse_built(&g, &im, &err) == 0, "%s", err.msg);
    int32_t n;
    const float *w = gguf_imatrix_find(&im, "e", &n);
    ck_assert_int_eq(n, 8);
    /* matrix 0: sums / 2; matrix 1 never counted: 1 */
    ck_assert(w[0] == 1.0f && w[1] == 2.0f && w[3] == 4.0f && w[4] == 1.0f && w[7] == 1.0f);
    ck_assert_int_eq(im.chunks, 3);
    ck_assert_str_eq(im.dataset, "calib.txt");
    gguf_imatrix_free(&im);

    static const struct { gspec g; const char *msg; } bad[] = {
        { { .no_counts = true, .value0 = 2 }, "mismatched sums and counts for e: no .counts tensor" },
        { { .no_keys = true, .value0 = 2 }, "missing imatrix metadata" },
        { { .i32_chunks = true, .value0 = 2 }, "missing imatrix metadata" },
        { { .bad_shape = true, .value0 = 2 }, "tensor e.counts: expected f32 [1, 2] for e.in_sum2" },
        { { .count1 = -1, .value0 = 2 }, "tensor e.counts: count 1 is -1" },
        { { .value0 = NAN }, "tensor e.in_sum2: value 0 is not finite" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(parse_built(&bad[i].g, &im, &err), -1);
        ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "case %zu: \"%s\"", i, err.msg);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("imatrix");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parse_and_reject);
    tcase_add_test(tc, test_gguf_parse_and_reject);
    int skipped = 0;
    if (fixtures_present()) {
        tcase_add_test(tc, test_reference_file);
        tcase_add_test(tc, test_gguf_reference_file);
    } else {
        skipped += 2;
    }
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
