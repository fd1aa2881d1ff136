/*
 * test_reader.c — gguf_open on real files: counts, lookups, typed getters,
 * zero-copy arrays and tensor data, against what llama.cpp reports.
 * (Rejection of malformed files is test_validate.c.)
 */
#include <dirent.h>
#include <math.h>

#include <ggufkit/gguf.h>
#include <unistd.h>
#include "testutil.h"

static gguf_file *open_fixture(const char *rel)
{
    char path[1024];
    gguf_error err = { 0 };
    ck_assert_ptr_nonnull(fixture_path(path, sizeof path, rel));
    gguf_file *f = gguf_open(path, 0, &err);
    ck_assert_msg(f != NULL, "%s: %s", rel, err.msg);
    return f;
}

START_TEST(test_stories260k)
{
    gguf_file *f = open_fixture("reference/stories260K-f32.gguf");
    ck_assert_uint_eq(gguf_file_version(f), 3);
    ck_assert_uint_eq(gguf_n_tensors(f), 48);
    ck_assert_uint_eq(gguf_n_kv(f), 19);
    ck_assert_uint_eq(gguf_alignment(f), 32);
    const gguf_kv *tok = gguf_lookup_kv(f, "tokenizer.ggml.tokens");
    ck_assert_ptr_nonnull(tok);
    ck_assert_uint_eq(tok->type, GGUF_VT_ARR);
    ck_assert_uint_eq(tok->elem_type, GGUF_VT_STR);
    ck_assert_uint_eq(tok->n, 512);
    ck_assert(gguf_str_eq(tok->strs[1], "<s>"));
    gguf_str arch;
    gguf_error err;
    ck_assert_int_eq(gguf_get_str(f, "general.architecture", &arch, &err), 0);
    ck_assert(gguf_str_eq(arch, "llama"));
    uint32_t n_embd;
    ck_assert_int_eq(gguf_get_u32(f, "llama.embedding_length", &n_embd, &err), 0);
    ck_assert_uint_eq(n_embd, 64);
    /* tensor lookup and data placement */
    const gguf_tensor *t = gguf_lookup_tensor(f, "token_embd.weight");
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->type, GGUF_DT_F32);
    ck_assert_int_eq(t->ne[0], 64);
    ck_assert_int_eq(t->ne[1], 512);
    ck_assert_uint_eq(t->nbytes, 64 * 512 * 4);
    uint64_t dsize;
    const uint8_t *data = gguf_data_section(f, 0, &dsize);
    ck_assert_ptr_eq(t->data, data + t->offset);
    ck_assert_ptr_null(gguf_lookup_tensor(f, "token_embd"));
    ck_assert_ptr_null(gguf_lookup_kv(f, "no.such.key"));
    gguf_close(f);
}
END_TEST

START_TEST(test_tiny_random)
{
    gguf_file *f = open_fixture("models/llama-2-tiny-random/llama-2-tiny-random.gguf");
    gguf_error err;
    uint32_t n_embd;
    ck_assert_int_eq(gguf_get_u32(f, "llama.embedding_length", &n_embd, &err), 0);
    ck_assert_uint_eq(n_embd, 8);
    const gguf_kv *tok = gguf_lookup_kv(f, "tokenizer.ggml.tokens");
    ck_assert_uint_eq(tok->n, 32000);
    /* every token is found by position; scores are a zero-copy f32 array */
    uint64_t n;
    const void *scores = gguf_kv_array(gguf_lookup_kv(f, "tokenizer.ggml.scores"), GGUF_VT_F32, &n);
    ck_assert_ptr_nonnull(scores);
    ck_assert_uint_eq(n, 32000);
    ck_assert(isfinite(gguf_kv_elem_as_double(gguf_lookup_kv(f, "tokenizer.ggml.scores"), 31999)));
    ck_assert_ptr_null(gguf_kv_array(gguf_lookup_kv(f, "tokenizer.ggml.scores"), GGUF_VT_I32, &n));
    gguf_close(f);
}
END_TEST

START_TEST(test_typed_getters_reject_mismatch)
{
    gguf_file *f = open_fixture("reference/wp-llama-5m-f16.gguf");
    gguf_error err = { 0 };
    int32_t i32;
    float f32;
    uint32_t u32;
    ck_assert_int_eq(gguf_get_i32(f, "llama.block_count", &i32, &err), -1);
    ck_assert_str_eq(err.msg, "key llama.block_count is u32, expected i32");
    ck_assert_int_eq(gguf_get_f32(f, "general.name", &f32, &err), -1);
    ck_assert_int_eq(gguf_get_u32(f, "tokenizer.ggml.tokens", &u32, &err), -1);
    ck_assert_str_eq(err.msg, "key tokenizer.ggml.tokens is an array, expected u32");
    ck_assert_int_eq(gguf_get_u32(f, "missing.key", &u32, &err), -1);
    ck_assert_str_eq(err.msg, "missing key missing.key");
    ck_assert_int_eq(gguf_get_u32(f, "llama.block_count", &u32, &err), 0);
    ck_assert_uint_eq(u32, 4);
    int64_t any;
    ck_assert(gguf_kv_int(gguf_lookup_kv(f, "llama.block_count"), &any));
    ck_assert_int_eq(any, 4);
    ck_assert(!gguf_kv_int(gguf_lookup_kv(f, "general.name"), &any));
    bool b;
    ck_assert_int_eq(gguf_get_bool(f, "tokenizer.ggml.add_bos_token", &b, &err), 0);
    ck_assert(b);
    ck_assert_int_eq(gguf_get_f32(f, "llama.rope.freq_base", &f32, &err), 0);
    ck_assert(f32 == 10000.0f);
    gguf_close(f);
}
END_TEST

/* Large vocabularies: every token key is found through the hash index. */
START_TEST(test_vocab_lookup_all_keys)
{
    gguf_file *f = open_fixture("vocab/ggml-vocab-falcon.gguf");
    for (uint64_t i = 0; i < gguf_n_kv(f); i++) {
        const gguf_kv *kv = gguf_kv_at(f, i);
        ck_assert_ptr_eq(gguf_lookup_kv(f, kv->key), kv);
    }
    ck_assert_uint_eq(gguf_n_tensors(f), 0);
    gguf_close(f);
}
END_TEST

START_TEST(test_all_fixture_ggufs_open)
{
    for (size_t i = 0; i < N_FIXTURE_GGUFS; i++) {
        gguf_file *f = open_fixture(fixture_ggufs[i]);
        for (uint64_t j = 0; j < gguf_n_tensors(f); j++) {
            const gguf_tensor *t = gguf_tensor_at(f, j);
            ck_assert_ptr_eq(gguf_lookup_tensor(f, t->name), t);
        }
        gguf_close(f);
    }
}
END_TEST

START_TEST(test_open_errors)
{
    gguf_error err = { 0 };
    ck_assert_ptr_null(gguf_open("/nonexistent/file.gguf", 0, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot open"));
    ck_assert_ptr_null(gguf_open("/", 0, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "not a regular file"));
}
END_TEST

/* Inputs the fuzzer once broke the reader with: each must be handled (opened
 * or rejected) without a sanitizer report, and all its values touched. */
START_TEST(test_fuzz_regressions)
{
    static const char *dir = "tests/data/small/fuzz";
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *fp = fopen(path, "rb");
        ck_assert_ptr_nonnull(fp);
        static uint8_t buf[1 << 20];
        size_t len = fread(buf, 1, sizeof buf, fp);
        fclose(fp);
        gguf_error err;
        gguf_file *f = gguf_open_memory(buf, len, &err);
        for (uint64_t i = 0; f && i < gguf_n_kv(f); i++) {
            const gguf_kv *kv = gguf_kv_at(f, i);
            for (uint64_t j = 0; kv->elem_type == GGUF_VT_STR && j < kv->n; j++)
                ck_assert_ptr_nonnull(kv->strs[j].ptr);
        }
        gguf_close(f);
        n++;
    }
    closedir(d);
    ck_assert_int_gt(n, 0);
}
END_TEST

/* An empty string array must not leave a NULL pool pointer offset. */
START_TEST(test_empty_string_array)
{
    uint8_t buf[256];
    size_t n = 0;
#define PUT(p, k) (memcpy(buf + n, (p), (k)), n += (k))
    uint32_t v = 3, t_arr = GGUF_VT_ARR, t_str = GGUF_VT_STR;
    uint64_t nt = 0, nkv = 1, klen = 5, cnt = 0;
    PUT("GGUF", 4); PUT(&v, 4); PUT(&nt, 8); PUT(&nkv, 8);
    PUT(&klen, 8); PUT("a.key", 5); PUT(&t_arr, 4); PUT(&t_str, 4); PUT(&cnt, 8);
#undef PUT
    gguf_error err;
    gguf_file *f = gguf_open_memory(buf, n, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_uint_eq(gguf_lookup_kv(f, "a.key")->n, 0);
    gguf_close(f);
}
END_TEST

/* Writes one f32 tensor "t" of n values v0, v0 + step, ... to path;
 * returns the values (the caller frees them). */
static float *write_ramp(const char *path, int n, float v0, float step)
{
    float *x = malloc((size_t)n * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (int i = 0; i < n; i++)
        x[i] = (float)i * step + v0;
    gguf_error err;
    gguf_writer *w = gguf_writer_new();
    int64_t ne[1] = { n };
    ck_assert_int_eq(gguf_writer_set_str(w, "general.architecture", "llama"), 0);
    ck_assert_int_ge(gguf_writer_add_tensor(w, "t", GGUF_DT_F32, 1, ne, &err), 0);
    ck_assert_msg(gguf_writer_begin(w, path, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(gguf_writer_write_tensor(w, x, (size_t)n * sizeof *x, &err), 0);
    ck_assert_msg(gguf_writer_finish(w, &err) == 0, "%s", err.msg);
    gguf_writer_free(w);
    return x;
}

/* gguf_release_range drops pages of our own file mapping only: after it a
 * mapped tensor reads back the same bytes, and a gguf_open_memory image
 * (the caller's heap, where MADV_DONTNEED would zero live memory: issue 12's
 * corrupt-output bug class) is left untouched. */
START_TEST(test_release_range)
{
    enum { N = 3 * 4096 + 100 };
    char path[] = "/tmp/ggufkit-release-XXXXXX";
    close(mkstemp(path));
    float *x = write_ramp(path, N, 1.0f, 0.5f);
    gguf_error err;

    gguf_file *f = gguf_open(path, 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    const gguf_tensor *t = gguf_lookup_tensor(f, "t");
    gguf_release_range(f, t->data, t->nbytes);
    ck_assert_int_eq(memcmp(t->data, x, N * sizeof *x), 0);
    gguf_close(f);

    FILE *fp = fopen(path, "rb");
    ck_assert_ptr_nonnull(fp);
    fseek(fp, 0, SEEK_END);
    size_t size = (size_t)ftell(fp);
    rewind(fp);
    uint8_t *img = NULL;
    ck_assert_int_eq(posix_memalign((void **)&img, 4096, size + 8192), 0);
    ck_assert_uint_eq(fread(img, 1, size, fp), size);
    fclose(fp);
    memset(img + size, 0x5a, 8192); /* live heap bytes past the image */
    f = gguf_open_memory(img, size, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    t = gguf_lookup_tensor(f, "t");
    gguf_release_range(f, t->data, t->nbytes);
    ck_assert_int_eq(memcmp(t->data, x, N * sizeof *x), 0);
    for (size_t i = size; i < size + 8192; i++)
        ck_assert_int_eq(img[i], 0x5a);
    gguf_close(f);
    free(img);
    free(x);
    unlink(path);
}
END_TEST

/* Copies of tensor data come from the file the reader opened, even after
 * another file has been renamed over its path (a concurrent in-place edit
 * did that, and the copy, which reopened the path, took the new file's
 * bytes at the old offsets: NaN blocks in an edited model). */
START_TEST(test_copy_after_rename_over)
{
    enum { N = 70000 };
    char a[] = "/tmp/ggufkit-renamed-XXXXXX", b[] = "/tmp/ggufkit-renamer-XXXXXX",
         c[] = "/tmp/ggufkit-copy-XXXXXX";
    close(mkstemp(a));
    close(mkstemp(b));
    close(mkstemp(c));
    free(write_ramp(a, N, 1.0f, 1.0f));
    free(write_ramp(b, N, -5e6f, 1.0f));
    gguf_error err;
    gguf_file *f = gguf_open(a, 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_int_ge(gguf_shard_fd(f, 0), 0);
    ck_assert_int_eq(gguf_shard_fd(f, 1), -1);
    ck_assert_int_eq(rename(b, a), 0); /* a new file under the input's name */

    const gguf_tensor *t = gguf_lookup_tensor(f, "t");
    gguf_writer *w = gguf_writer_new();
    ck_assert_int_eq(gguf_writer_copy_kv(w, gguf_kv_at(f, 0)), 0);
    ck_assert_int_ge(gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, &err), 0);
    ck_assert_msg(gguf_writer_begin(w, c, &err) == 0, "%s", err.msg);
    ck_assert_msg(gguf_writer_copy_tensor(w, f, t, &err) == 0, "%s", err.msg);
    ck_assert_msg(gguf_writer_finish(w, &err) == 0, "%s", err.msg);
    gguf_writer_free(w);
    gguf_close(f);

    gguf_file *g = gguf_open(c, 0, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    const float *y = (const float *)gguf_lookup_tensor(g, "t")->data;
    for (int i = 0; i < N; i++)
        ck_assert_float_eq(y[i], 1.0f + (float)i);
    gguf_close(g);

    /* a memory image has no descriptor: copies come from the mapping */
    gguf_file *m = gguf_open_memory("", 0, &err);
    if (m)
        ck_assert_int_eq(gguf_shard_fd(m, 0), -1);
    gguf_close(m);
    unlink(a);
    unlink(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reader");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_open_errors);
    tcase_add_test(tc, test_fuzz_regressions);
    tcase_add_test(tc, test_empty_string_array);
    tcase_add_test(tc, test_release_range);
    tcase_add_test(tc, test_copy_after_rename_over);
    int skipped = 0;
    if (fixtures_present()) {
        tcase_add_test(tc, test_stories260k);
        tcase_add_test(tc, test_tiny_random);
        tcase_add_test(tc, test_typed_getters_reject_mismatch);
        tcase_add_test(tc, test_vocab_lookup_all_keys);
        tcase_add_test(tc, test_all_fixture_ggufs_open);
    } else {
        skipped += 5;
    }
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
