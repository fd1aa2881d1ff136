/*
 * test_safetensors.c — the safetensors reader on the fixture checkpoints and
 * on malformed files built here.
 */
#include "safetensors.h"
#include "testutil.h"

/* A file in memory: u64 header length, header, data bytes. */
static size_t build(uint8_t *buf, const char *header, size_t data_len)
{
    uint64_t n = strlen(header);
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)(n >> (8 * i));
    memcpy(buf + 8, header, n);
    memset(buf + 8 + n, 0x3c, data_len);
    return 8 + n + data_len;
}

START_TEST(test_valid)
{
    uint8_t buf[512];
    size_t n = build(buf, "{\"__metadata__\": {\"format\": \"pt\"}, \"b\": {\"dtype\": \"F16\", "
                          "\"shape\": [2, 3], \"data_offsets\": [0, 12]}, \"a\": {\"dtype\": "
                          "\"F32\", \"shape\": [], \"data_offsets\": [12, 16]}}", 16);
    st_file f;
    gguf_error err;
    ck_assert_msg(st_parse(buf, n, &f, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(f.n, 2);
    ck_assert_str_eq(f.tensors[0].name, "b"); /* header order, not sorted */
    ck_assert_str_eq(f.tensors[0].dtype, "F16");
    ck_assert_int_eq(f.tensors[0].n_dims, 2);
    ck_assert_int_eq(f.tensors[0].shape[0], 2);
    ck_assert_int_eq(f.tensors[0].shape[1], 3);
    ck_assert_uint_eq(f.tensors[0].nbytes, 12);
    ck_assert_int_eq(f.tensors[1].n_dims, 0);
    ck_assert_ptr_eq(f.tensors[1].data, f.tensors[0].data + 12);
    st_close(&f);
}
END_TEST

static const struct {
    const char *header;
    size_t data;
    const char *want;
} bad[] = {
    { "[]", 0, "not a JSON object" },
    { "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}", 4, "runs past the end" },
    { "{\"a\": {\"dtype\": \"F32\", \"shape\": [3], \"data_offsets\": [0, 8]}}", 8, "8 data bytes for 3 elements" },
    { "{\"a\": {\"dtype\": \"Q4\", \"shape\": [2], \"data_offsets\": [0, 2]}}", 2, "unknown dtype 'Q4'" },
    { "{\"a\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 0]}}", 0, "bad shape" },
    { "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 0]}}", 4, "bad data_offsets" },
    { "{\"a\": {\"dtype\": \"F32\", \"shape\": [1]}}", 4, "needs dtype, shape and data_offsets" },
    { "{\"a\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296, 4294967296], \"data_offsets\": [0, 0]}}", 0, "too large" },
    { "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}, \"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 4, "appears twice" },
    { "{\"a\": ", 0, "header: line " },
};

START_TEST(test_bad)
{
    uint8_t buf[1024];
    size_t n = build(buf, bad[_i].header, bad[_i].data);
    st_file f;
    gguf_error err;
    ck_assert_int_eq(st_parse(buf, n, &f, &err), -1);
    ck_assert_msg(strstr(err.msg, bad[_i].want) != NULL, "case %d: got '%s'", _i, err.msg);
}
END_TEST

START_TEST(test_bad_lengths)
{
    uint8_t buf[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, '{', '}' };
    st_file f;
    gguf_error err;
    ck_assert_int_eq(st_parse(buf, 4, &f, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "too short"));
    ck_assert_int_eq(st_parse(buf, 10, &f, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "header length"));
    ck_assert_int_eq(st_open("/nonexistent.safetensors", &f, &err), -1);
}
END_TEST

START_TEST(test_fixtures)
{
    char path[1024];
    st_file f;
    gguf_error err;
    ck_assert_ptr_nonnull(fixture_path(path, sizeof path, "models/wp-llama-5m/hf/model.safetensors"));
    ck_assert_msg(st_open(path, &f, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(f.n, 39);
    ck_assert_str_eq(f.tensors[0].name, "model.embed_tokens.weight");
    ck_assert_str_eq(f.tensors[0].dtype, "F32");
    ck_assert_int_eq(f.tensors[0].shape[0], 4096);
    ck_assert_int_eq(f.tensors[0].shape[1], 256);
    st_close(&f);
    ck_assert_ptr_nonnull(fixture_path(path, sizeof path, "models/qwen2-rand/model.safetensors"));
    ck_assert_msg(st_open(path, &f, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(f.tensors[0].dtype, "BF16");
    st_close(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("safetensors");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_valid);
    tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, test_bad_lengths);
    int skipped = 0;
    if (fixtures_present())
        tcase_add_test(tc, test_fixtures);
    else
        skipped++;
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
