/*
 * test_readfile.c — gguf_read_file: small files whole, with a NUL after;
 * larger ones and endless streams refused after limit + 1 bytes.
 */
#include <unistd.h>

#include "readfile.h"
#include "testutil.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(test_small_file)
{
    char path[] = "/tmp/ggufkit-rf-XXXXXX";
    close(mkstemp(path));
    write_file(path, "hello");
    uint8_t *buf;
    size_t len;
    gguf_error err;
    ck_assert_int_eq(gguf_read_file(path, 5, &buf, &len, &err), 0);
    ck_assert_uint_eq(len, 5);
    ck_assert_str_eq((char *)buf, "hello");
    free(buf);
    /* one byte over the limit */
    ck_assert_int_eq(gguf_read_file(path, 4, &buf, &len, &err), -1);
    ck_assert_ptr_null(buf);
    ck_assert_msg(strstr(err.msg, "larger than"), "%s", err.msg);
    write_file(path, "");
    ck_assert_int_eq(gguf_read_file(path, 4, &buf, &len, &err), 0);
    ck_assert_uint_eq(len, 0);
    ck_assert_int_eq(buf[0], 0);
    free(buf);
    unlink(path);
}
END_TEST

START_TEST(test_bad_paths)
{
    uint8_t *buf;
    size_t len;
    gguf_error err;
    ck_assert_int_eq(gguf_read_file("/tmp", 1 << 20, &buf, &len, &err), -1);
    ck_assert_str_eq(err.msg, "is a directory");
    ck_assert_int_eq(gguf_read_file("/no/such/file", 1 << 20, &buf, &len, &err), -1);
    ck_assert_str_eq(err.msg, "cannot open: No such file or directory");
    /* an endless stream stops at the limit, not at the end of memory */
    ck_assert_int_eq(gguf_read_file("/dev/zero", 1 << 20, &buf, &len, &err), -1);
    ck_assert_str_eq(err.msg, "larger than 1 MiB (the limit for this kind of file)");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("readfile");
    TCase *tc = tcase_create("readfile");
    tcase_add_test(tc, test_small_file);
    tcase_add_test(tc, test_bad_paths);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
