/*
 * test_types.c — the ggml type table and value-type table.
 *
 * Sizes are checked against ggml's block structs and against the row sizes
 * stored in the fixture quantization vectors.
 */
#include <stdint.h>

#include <unistd.h>

#include "testutil.h"
#include <ggufkit/gguf.h>

static const struct { uint32_t id; const char *name; uint32_t blck, size; } expected[] = {
    { 0, "f32", 1, 4 },        { 1, "f16", 1, 2 },         { 2, "q4_0", 32, 18 },
    { 3, "q4_1", 32, 20 },     { 6, "q5_0", 32, 22 },      { 7, "q5_1", 32, 24 },
    { 8, "q8_0", 32, 34 },     { 9, "q8_1", 32, 36 },      { 10, "q2_K", 256, 84 },
    { 11, "q3_K", 256, 110 },  { 12, "q4_K", 256, 144 },   { 13, "q5_K", 256, 176 },
    { 14, "q6_K", 256, 210 },  { 15, "q8_K", 256, 292 },   { 16, "iq2_xxs", 256, 66 },
    { 17, "iq2_xs", 256, 74 }, { 18, "iq3_xxs", 256, 98 }, { 19, "iq1_s", 256, 50 },
    { 20, "iq4_nl", 32, 18 },  { 21, "iq3_s", 256, 110 },  { 22, "iq2_s", 256, 82 },
    { 23, "iq4_xs", 256, 136 },{ 24, "i8", 1, 1 },         { 25, "i16", 1, 2 },
    { 26, "i32", 1, 4 },       { 27, "i64", 1, 8 },        { 28, "f64", 1, 8 },
    { 29, "iq1_m", 256, 56 },  { 30, "bf16", 1, 2 },       { 34, "tq1_0", 256, 54 },
    { 35, "tq2_0", 256, 66 },
};

START_TEST(test_valid_types)
{
    for (size_t i = 0; i < sizeof expected / sizeof *expected; i++) {
        const gguf_dtype_traits *t = gguf_dtype_get(expected[i].id);
        ck_assert_ptr_nonnull(t);
        ck_assert(t->valid);
        ck_assert_str_eq(t->name, expected[i].name);
        ck_assert_uint_eq(t->blck_size, expected[i].blck);
        ck_assert_uint_eq(t->type_size, expected[i].size);
        ck_assert_int_eq(gguf_dtype_from_name(expected[i].name), (int)expected[i].id);
    }
}
END_TEST

START_TEST(test_removed_and_unknown)
{
    const uint32_t removed[] = { 4, 5, 31, 32, 33, 36, 37, 38 };
    for (size_t i = 0; i < sizeof removed / sizeof *removed; i++) {
        const gguf_dtype_traits *t = gguf_dtype_get(removed[i]);
        ck_assert_ptr_nonnull(t);
        ck_assert(!t->valid);
        ck_assert_ptr_nonnull(strstr(t->name, "removed"));
    }
    ck_assert_ptr_null(gguf_dtype_get(GGUF_DT_COUNT));
    ck_assert_ptr_null(gguf_dtype_get(UINT32_MAX));
    ck_assert_str_eq(gguf_dtype_name(1000), "unknown");
    ck_assert_int_eq(gguf_dtype_from_name("q4_2 (removed)"), -1);
    ck_assert_int_eq(gguf_dtype_from_name("nope"), -1);
    /* all 42 ids of ggml e21cdc11 are either valid with a block or marked removed */
    int valid = 0;
    for (uint32_t i = 0; i < GGUF_DT_COUNT; i++)
        valid += gguf_dtype_get(i)->valid;
    ck_assert_int_eq(GGUF_DT_COUNT, 42);
    ck_assert_int_eq(valid, 34);
    /* the newest: block sizes and bytes of ggml-common.h's structs */
    static const struct { uint32_t id; const char *name; uint32_t bs, ts; } fresh[] = {
        { GGUF_DT_MXFP4, "mxfp4", 32, 17 }, { GGUF_DT_NVFP4, "nvfp4", 64, 36 },
        { GGUF_DT_Q1_0, "q1_0", 128, 18 },
    };
    for (size_t i = 0; i < 3; i++) {
        const gguf_dtype_traits *t = gguf_dtype_get(fresh[i].id);
        ck_assert_str_eq(t->name, fresh[i].name);
        ck_assert_uint_eq(t->blck_size, fresh[i].bs);
        ck_assert_uint_eq(t->type_size, fresh[i].ts);
        ck_assert_int_eq(gguf_dtype_from_name(fresh[i].name), (int)fresh[i].id);
    }
}
END_TEST

START_TEST(test_name_case_insensitive)
{
    ck_assert_int_eq(gguf_dtype_from_name("Q4_K"), GGUF_DT_Q4_K);
    ck_assert_int_eq(gguf_dtype_from_name("BF16"), GGUF_DT_BF16);
    ck_assert_int_eq(gguf_dtype_from_name("IQ2_XXS"), GGUF_DT_IQ2_XXS);
}
END_TEST

START_TEST(test_row_size)
{
    uint64_t n;
    ck_assert_int_eq(gguf_row_size(GGUF_DT_Q4_K, 512, &n, NULL), 0);
    ck_assert_uint_eq(n, 288);
    ck_assert_int_eq(gguf_row_size(GGUF_DT_F32, 7, &n, NULL), 0);
    ck_assert_uint_eq(n, 28);
    ck_assert_int_eq(gguf_row_size(GGUF_DT_Q8_0, 33, &n, NULL), -1);  /* not a block multiple */
    ck_assert_int_eq(gguf_row_size(4, 32, &n, NULL), -1);            /* removed */
    ck_assert_int_eq(gguf_row_size(GGUF_DT_F64, INT64_MAX, &n, NULL), -1); /* overflows */
    ck_assert_int_eq(gguf_row_size(GGUF_DT_F32, -1, &n, NULL), -1);
}
END_TEST

START_TEST(test_vtypes)
{
    ck_assert_str_eq(gguf_vtype_name(GGUF_VT_U8), "u8");
    ck_assert_str_eq(gguf_vtype_name(GGUF_VT_STR), "str");
    ck_assert_str_eq(gguf_vtype_name(GGUF_VT_F64), "f64");
    ck_assert_str_eq(gguf_vtype_name(13), "invalid");
    ck_assert_uint_eq(gguf_vtype_size(GGUF_VT_BOOL), 1);
    ck_assert_uint_eq(gguf_vtype_size(GGUF_VT_U64), 8);
    ck_assert_uint_eq(gguf_vtype_size(GGUF_VT_STR), 0);
    ck_assert_uint_eq(gguf_vtype_size(99), 0);
}
END_TEST

/* The qvec fixtures store ggml's row size for 512-element rows. */
START_TEST(test_sizes_match_vectors)
{
    static const char *names[] = { "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K", "q3_K",
                                   "q4_K", "q5_K", "q6_K", "f16", "bf16" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char rel[64], path[1024];
        snprintf(rel, sizeof rel, "vectors/%s.qvec", names[i]);
        ck_assert_ptr_nonnull(fixture_path(path, sizeof path, rel));
        FILE *fp = fopen(path, "rb");
        ck_assert_ptr_nonnull(fp);
        uint32_t h[6];
        ck_assert_uint_eq(fread(h, 4, 6, fp), 6);
        fclose(fp);
        ck_assert_uint_eq(h[0], 0x43455651u);
        ck_assert_int_eq(gguf_dtype_from_name(names[i]), (int)h[2]);
        uint64_t row;
        ck_assert_int_eq(gguf_row_size(h[2], h[4], &row, NULL), 0);
        ck_assert_uint_eq(row, h[5]);
    }
}
END_TEST

/* Tensors of the newest types (mxfp4, and nvfp4 and q1_0, which libgguf
 * has no codec for) are written, opened and sized by the table alone. */
START_TEST(test_uncodec_types_open)
{
    static const uint32_t ids[] = { GGUF_DT_MXFP4, GGUF_DT_NVFP4, GGUF_DT_Q1_0 };
    for (size_t k = 0; k < 3; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/types-%u-%ld.gguf", test_tmpdir(), ids[k], (long)getpid());
        gguf_error err = { 0 };
        gguf_writer *w = gguf_writer_new();
        const int64_t ne[2] = { 256, 3 };
        ck_assert_int_ge(gguf_writer_add_tensor(w, "t", ids[k], 2, ne, &err), 0);
        ck_assert_msg(gguf_writer_begin(w, path, &err) == 0, "%s", err.msg);
        uint64_t n = gguf_writer_tensor_nbytes(w, 0);
        uint8_t buf[1024] = { 0 };
        ck_assert_uint_le(n, sizeof buf);
        ck_assert_int_eq(gguf_writer_write_tensor(w, buf, (size_t)n, &err), 0);
        ck_assert_msg(gguf_writer_finish(w, &err) == 0, "%s", err.msg);
        gguf_writer_free(w);
        gguf_file *f = gguf_open(path, 0, &err);
        ck_assert_msg(f != NULL, "%s", err.msg);
        const gguf_tensor *t = gguf_lookup_tensor(f, "t");
        const gguf_dtype_traits *tr = gguf_dtype_get(ids[k]);
        ck_assert_uint_eq(t->nbytes, 3 * 256 / tr->blck_size * tr->type_size);
        gguf_close(f);
        unlink(path);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("types");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_valid_types);
    tcase_add_test(tc, test_removed_and_unknown);
    tcase_add_test(tc, test_name_case_insensitive);
    tcase_add_test(tc, test_row_size);
    tcase_add_test(tc, test_vtypes);
    tcase_add_test(tc, test_uncodec_types_open);
    int skipped = 0;
    if (fixtures_present())
        tcase_add_test(tc, test_sizes_match_vectors);
    else
        skipped++;
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
