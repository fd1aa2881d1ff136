/*
 * test_writer.c — the streaming writer: every value type, replacement of
 * keys, tensor padding, byte-identical round trips of the fixtures, and no
 * output left behind on failure.
 */
#include <dirent.h>
#include <math.h>
#include <unistd.h>

#include <ggufkit/gguf.h>
#include "testutil.h"

static char *tmpfile_path(const char *name)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/writer-%d-%s", test_tmpdir(), (int)getpid(), name);
    return buf;
}

/* Number of entries in dir whose name contains `part`. */
static int count_files(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, part) != NULL;
    if (d)
        closedir(d);
    return n;
}

START_TEST(test_all_value_types)
{
    gguf_writer *w = gguf_writer_new();
    gguf_error err = { 0 };
    ck_assert_int_eq(gguf_writer_set_u8(w, "t.u8", 200), 0);
    ck_assert_int_eq(gguf_writer_set_i8(w, "t.i8", -100), 0);
    ck_assert_int_eq(gguf_writer_set_u16(w, "t.u16", 60000), 0);
    ck_assert_int_eq(gguf_writer_set_i16(w, "t.i16", -30000), 0);
    ck_assert_int_eq(gguf_writer_set_u32(w, "t.u32", 4000000000u), 0);
    ck_assert_int_eq(gguf_writer_set_i32(w, "t.i32", -2000000000), 0);
    ck_assert_int_eq(gguf_writer_set_f32(w, "t.f32", 1.5f), 0);
    ck_assert_int_eq(gguf_writer_set_bool(w, "t.bool", true), 0);
    ck_assert_int_eq(gguf_writer_set_str(w, "t.str", "héllo"), 0);
    ck_assert_int_eq(gguf_writer_set_u64(w, "t.u64", UINT64_MAX), 0);
    ck_assert_int_eq(gguf_writer_set_i64(w, "t.i64", INT64_MIN), 0);
    ck_assert_int_eq(gguf_writer_set_f64(w, "t.f64", -0.25), 0);
    const int32_t ints[3] = { 1, -2, 3 };
    ck_assert_int_eq(gguf_writer_set_array(w, "t.arr_i32", GGUF_VT_I32, ints, 3), 0);
    const char *strs[3] = { "a", "", "ccc" };
    ck_assert_int_eq(gguf_writer_set_str_array(w, "t.arr_str", strs, NULL, 3), 0);
    const uint8_t bools[2] = { 0, 1 };
    ck_assert_int_eq(gguf_writer_set_array(w, "t.arr_bool", GGUF_VT_BOOL, bools, 2), 0);
    ck_assert_int_eq(gguf_writer_set_array(w, "t.empty", GGUF_VT_F32, NULL, 0), 0);
    /* replacing keeps the position */
    ck_assert_int_eq(gguf_writer_set_u32(w, "t.u8", 7), 0);
    ck_assert_int_eq(gguf_writer_set_str(w, "", "x"), -1);
    const char *path = tmpfile_path("types.gguf");
    ck_assert_int_eq(gguf_writer_begin(w, path, &err), 0);
    ck_assert_int_eq(gguf_writer_finish(w, &err), 0);
    gguf_writer_free(w);

    gguf_file *f = gguf_open(path, 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_uint_eq(gguf_n_kv(f), 16);
    ck_assert_str_eq(gguf_kv_at(f, 0)->key, "t.u8");
    uint32_t u32;
    ck_assert(gguf_kv_u32(gguf_kv_at(f, 0), &u32) && u32 == 7);
    int8_t i8; uint16_t u16; int16_t i16; int32_t i32; float f32; bool b; gguf_str s;
    uint64_t u64; int64_t i64; double f64;
    ck_assert(gguf_kv_i8(gguf_lookup_kv(f, "t.i8"), &i8) && i8 == -100);
    ck_assert(gguf_kv_u16(gguf_lookup_kv(f, "t.u16"), &u16) && u16 == 60000);
    ck_assert(gguf_kv_i16(gguf_lookup_kv(f, "t.i16"), &i16) && i16 == -30000);
    ck_assert(gguf_kv_u32(gguf_lookup_kv(f, "t.u32"), &u32) && u32 == 4000000000u);
    ck_assert(gguf_kv_i32(gguf_lookup_kv(f, "t.i32"), &i32) && i32 == -2000000000);
    ck_assert(gguf_kv_f32(gguf_lookup_kv(f, "t.f32"), &f32) && f32 == 1.5f);
    ck_assert(gguf_kv_bool(gguf_lookup_kv(f, "t.bool"), &b) && b);
    ck_assert(gguf_kv_str(gguf_lookup_kv(f, "t.str"), &s) && gguf_str_eq(s, "héllo"));
    ck_assert(gguf_kv_u64(gguf_lookup_kv(f, "t.u64"), &u64) && u64 == UINT64_MAX);
    ck_assert(gguf_kv_i64(gguf_lookup_kv(f, "t.i64"), &i64) && i64 == INT64_MIN);
    ck_assert(gguf_kv_f64(gguf_lookup_kv(f, "t.f64"), &f64) && f64 == -0.25);
    const gguf_kv *a = gguf_lookup_kv(f, "t.arr_i32");
    ck_assert_uint_eq(a->n, 3);
    ck_assert_int_eq(gguf_kv_elem_as_int(a, 1), -2);
    a = gguf_lookup_kv(f, "t.arr_str");
    ck_assert(gguf_str_eq(a->strs[0], "a") && gguf_str_eq(a->strs[1], "") &&
              gguf_str_eq(a->strs[2], "ccc"));
    ck_assert_uint_eq(gguf_lookup_kv(f, "t.empty")->n, 0);
    ck_assert(!gguf_kv_u8(gguf_lookup_kv(f, "t.u32"), &(uint8_t){ 0 }));
    gguf_close(f);
    unlink(path);
}
END_TEST

START_TEST(test_tensors_streamed_with_padding)
{
    gguf_writer *w = gguf_writer_new();
    gguf_error err = { 0 };
    gguf_writer_set_u32(w, "general.alignment", 64);
    float a[3] = { 1, 2, 3 };
    int64_t ne_a[1] = { 3 }, ne_b[2] = { 32, 2 };
    uint8_t b[68];
    for (int i = 0; i < 68; i++)
        b[i] = (uint8_t)i;
    ck_assert_int_eq(gguf_writer_add_tensor(w, "a", GGUF_DT_F32, 1, ne_a, &err), 0);
    ck_assert_int_eq(gguf_writer_add_tensor(w, "b", GGUF_DT_Q8_0, 2, ne_b, &err), 1);
    ck_assert_int_eq(gguf_writer_add_tensor(w, "a", GGUF_DT_F32, 1, ne_a, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "duplicate"));
    int64_t ne_bad[1] = { 33 };
    ck_assert_int_eq(gguf_writer_add_tensor(w, "c", GGUF_DT_Q8_0, 1, ne_bad, &err), -1);
    ck_assert_uint_eq(gguf_writer_tensor_nbytes(w, 1), 68);
    const char *path = tmpfile_path("tensors.gguf");
    ck_assert_int_eq(gguf_writer_begin(w, path, &err), 0);
    /* tensor a in two pieces, b together with nothing else */
    ck_assert_int_eq(gguf_writer_write_tensor(w, a, 4, &err), 0);
    ck_assert_int_eq(gguf_writer_write_tensor(w, (uint8_t *)a + 4, 8, &err), 0);
    ck_assert_int_eq(gguf_writer_write_tensor(w, b, 68, &err), 0);
    ck_assert_int_eq(gguf_writer_finish(w, &err), 0);
    gguf_writer_free(w);

    gguf_file *f = gguf_open(path, 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_uint_eq(gguf_alignment(f), 64);
    ck_assert_uint_eq(gguf_data_offset(f, 0) % 64, 0);
    const gguf_tensor *tb = gguf_lookup_tensor(f, "b");
    ck_assert_uint_eq(tb->offset, 64);
    ck_assert_int_eq(memcmp(tb->data, b, 68), 0);
    ck_assert_int_eq(memcmp(gguf_lookup_tensor(f, "a")->data, a, 12), 0);
    /* the last tensor is padded too, as llama.cpp does */
    ck_assert_uint_eq(gguf_file_size(f), gguf_data_offset(f, 0) + 64 + 128);
    gguf_close(f);
    unlink(path);
}
END_TEST

START_TEST(test_failure_leaves_nothing)
{
    gguf_writer *w = gguf_writer_new();
    gguf_error err = { 0 };
    int64_t ne[1] = { 8 };
    gguf_writer_add_tensor(w, "x", GGUF_DT_F32, 1, ne, &err);
    const char *path = tmpfile_path("partial.gguf");
    unlink(path);
    ck_assert_int_eq(gguf_writer_begin(w, path, &err), 0);
    float x[4] = { 0 };
    ck_assert_int_eq(gguf_writer_write_tensor(w, x, sizeof x, &err), 0); /* half */
    ck_assert_int_eq(gguf_writer_finish(w, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "not written completely"));
    gguf_writer_free(w);
    ck_assert_int_eq(access(path, F_OK), -1);
    ck_assert_int_eq(count_files(test_tmpdir(), "partial.gguf.tmp"), 0);

    /* too much data */
    w = gguf_writer_new();
    gguf_writer_add_tensor(w, "x", GGUF_DT_F32, 1, ne, &err);
    ck_assert_int_eq(gguf_writer_begin(w, path, &err), 0);
    float y[9] = { 0 };
    ck_assert_int_eq(gguf_writer_write_tensor(w, y, sizeof y, &err), -1);
    gguf_writer_free(w); /* aborts */
    ck_assert_int_eq(access(path, F_OK), -1);
    ck_assert_int_eq(count_files(test_tmpdir(), "partial.gguf.tmp"), 0);

    /* unwritable destination */
    w = gguf_writer_new();
    ck_assert_int_eq(gguf_writer_begin(w, "/nonexistent-dir/x.gguf", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "temporary file"));
    gguf_writer_free(w);
}
END_TEST

static int files_equal(const char *a, const char *b)
{
    FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
    int eq = x && y;
    while (eq) {
        int c = fgetc(x), d = fgetc(y);
        if (c != d)
            eq = 0;
        if (c == EOF || d == EOF)
            break;
    }
    if (x) fclose(x);
    if (y) fclose(y);
    return eq;
}

START_TEST(test_round_trip_fixtures)
{
    const char *out = tmpfile_path("roundtrip.gguf");
    for (size_t i = 0; i < N_FIXTURE_GGUFS; i++) {
        char path[1024];
        gguf_error err = { 0 };
        ck_assert_ptr_nonnull(fixture_path(path, sizeof path, fixture_ggufs[i]));
        gguf_file *f = gguf_open(path, 0, &err);
        ck_assert_msg(f != NULL, "%s", err.msg);
        ck_assert_msg(gguf_rewrite(f, out, &err) == 0, "%s: %s", fixture_ggufs[i], err.msg);
        gguf_close(f);
        ck_assert_msg(files_equal(path, out), "%s: round trip differs", fixture_ggufs[i]);
    }
    unlink(out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("writer");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_all_value_types);
    tcase_add_test(tc, test_tensors_streamed_with_padding);
    tcase_add_test(tc, test_failure_leaves_nothing);
    int skipped = 0;
    if (fixtures_present())
        tcase_add_test(tc, test_round_trip_fixtures);
    else
        skipped++;
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
