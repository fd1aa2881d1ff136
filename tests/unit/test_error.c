/*
 * test_error.c — the error record of the public API: gguf_version(), the
 * code names, and the code (enum gguf_errcode) each kind of failure
 * reports: the reader (missing file, directory, bad magic, unsupported
 * version, counts past the limit), the writer (setters keep their first
 * failure in gguf_writer_error(), begin twice, begin into a directory), the
 * tokenizer and the type table.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include <ggufkit/vocab.h>
#include "badgguf.h"
#include "testutil.h"

#ifndef GGUFKIT_VERSION
#error "the build defines GGUFKIT_VERSION (the Makefile's VERSION)"
#endif

static char *tmp_path(const char *name)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/error-%d-%s", test_tmpdir(), (int)getpid(), name);
    return buf;
}

/* Opens an image built by badgguf.h from memory; returns the code and
 * leaves the message in err. The image must not open. */
static int open_code(bg_buf *b, gguf_error *err)
{
    ck_assert(!b->oom);
    memset(err, 0, sizeof *err);
    gguf_file *f = gguf_open_memory(b->p, b->len, err);
    ck_assert_msg(f == NULL, "the image opened");
    gguf_close(f);
    ck_assert_msg(err->msg[0] != 0, "no message");
    return err->code;
}

/* Writes n bytes to path. */
static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(p, 1, n, fp), n);
    ck_assert_int_eq(fclose(fp), 0);
}

START_TEST(test_version)
{
    ck_assert_str_eq(gguf_version(), GGUFKIT_VERSION);
    /* the header's numbers say the same as the library */
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", GGUF_LIB_VERSION_MAJOR, GGUF_LIB_VERSION_MINOR,
             GGUF_LIB_VERSION_PATCH);
    ck_assert_str_eq(gguf_version(), v);
}
END_TEST

START_TEST(test_errcode_names)
{
    ck_assert_int_eq(GGUF_ERR_NONE, 0);
    ck_assert_str_eq(gguf_errcode_name(GGUF_ERR_NONE), "none");
    ck_assert_str_eq(gguf_errcode_name(GGUF_ERR_IO), "io");
    ck_assert_str_eq(gguf_errcode_name(GGUF_ERR_FORMAT), "format");
    ck_assert_str_eq(gguf_errcode_name(GGUF_ERR_UNSUPPORTED), "unsupported");
    ck_assert_str_eq(gguf_errcode_name(GGUF_ERR_LIMIT), "limit");
    ck_assert_str_eq(gguf_errcode_name(GGUF_ERR_NOMEM), "nomem");
    ck_assert_str_eq(gguf_errcode_name(GGUF_ERR_ARG), "arg");
    ck_assert_str_eq(gguf_errcode_name(GGUF_ERR_ARG + 1), "unknown");
    ck_assert_str_eq(gguf_errcode_name(-1), "unknown");
    ck_assert_str_eq(gguf_errcode_name(1 << 30), "unknown");
}
END_TEST

START_TEST(test_error_set)
{
    gguf_error err = { "", GGUF_ERR_IO };
    ck_assert_int_eq(gguf_error_set(&err, "offset %d: %s", 12, "broken"), -1);
    ck_assert_str_eq(err.msg, "offset 12: broken");
    ck_assert_int_eq(err.code, GGUF_ERR_FORMAT);
    ck_assert_int_eq(gguf_error_setc(&err, GGUF_ERR_LIMIT, "too %s", "big"), -1);
    ck_assert_str_eq(err.msg, "too big");
    ck_assert_int_eq(err.code, GGUF_ERR_LIMIT);
    /* a NULL record is allowed: only the status comes back */
    ck_assert_int_eq(gguf_error_set(NULL, "ignored"), -1);
    ck_assert_int_eq(gguf_error_setc(NULL, GGUF_ERR_IO, "ignored"), -1);
    /* prefixing keeps the code */
    gguf_error_prefix(&err, "shard %d: ", 2);
    ck_assert_str_eq(err.msg, "shard 2: too big");
    ck_assert_int_eq(err.code, GGUF_ERR_LIMIT);
    /* a message longer than the record is cut, NUL-terminated */
    char longer[2 * GGUF_ERROR_MAX];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    gguf_error_set(&err, "%s", longer);
    ck_assert_uint_eq(strlen(err.msg), GGUF_ERROR_MAX - 1);
}
END_TEST

START_TEST(test_open_io)
{
    gguf_error err = { 0 };
    const char *missing = tmp_path("no-such-file.gguf");
    unlink(missing);
    ck_assert_ptr_null(gguf_open(missing, 0, &err));
    ck_assert_int_eq(err.code, GGUF_ERR_IO);
    ck_assert_msg(strncmp(err.msg, "cannot open: ", 13) == 0, "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, strerror(ENOENT)));

    memset(&err, 0, sizeof err);
    ck_assert_ptr_null(gguf_open(test_tmpdir(), 0, &err));
    ck_assert_int_eq(err.code, GGUF_ERR_IO);
    ck_assert_str_eq(err.msg, "not a regular file");
}
END_TEST

/* Files that are not GGUF, named by what they are (and what to do) */
START_TEST(test_not_gguf_kinds)
{
    static const char lfs[] = "version https://git-lfs.github.com/spec/v1\n"
                              "oid sha256:4d7c1d3d2e8a0a5c1b1e4f0e6f3b5a1c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4\n"
                              "size 4683073248\n";
    static const uint8_t st[] = { 14, 0, 0, 0, 0, 0, 0, 0, '{', '"', 'a', '"', ':', '{', '}', '}',
                                  ' ', ' ', ' ', ' ', ' ', ' ' };
    static uint8_t tar[600] = "model.gguf";
    memcpy(tar + 257, "ustar", 5);
    static const struct {
        const void *p;
        size_t      n;
        const char *want;
    } cases[] = {
        { lfs, sizeof lfs - 1, "not a GGUF file but a Git LFS pointer to a file of 4683073248 bytes: "
                               "the repository was cloned without Git LFS (run 'git lfs pull' in it, "
                               "or download the file itself)" },
        { "\n  <!DOCTYPE html><html><body>404</body></html>", 48,
          "not a GGUF file but an HTML page: the download returned a web page (an error, a login "
          "or a license page) instead of the model; download it again" },
        { "{\"error\": \"not found\"}", 22,
          "not a GGUF file but a JSON document (a config.json or tokenizer.json?), not a model" },
        { st, sizeof st, "not a GGUF file but a safetensors checkpoint: convert its model folder "
                         "with gguf-convert" },
        { "PK\x03\x04\x14\x00", 6, "not a GGUF file but a zip archive (a PyTorch checkpoint such "
                                   "as pytorch_model.bin?): convert its model folder with gguf-convert" },
        { "\x80\x02\x8a\x0a", 4, "not a GGUF file but a Python pickle (a legacy PyTorch checkpoint?): "
                               "convert its model folder with gguf-convert" },
        { "tjgg\x03\x00\x00\x00", 8, "not a GGUF file but a GGML/GGMF/GGJT file, llama.cpp's format "
                                   "before GGUF (2023): convert it with llama.cpp's "
                                   "convert_llama_ggml_to_gguf.py" },
        { "\x1f\x8b\x08\x00", 4, "not a GGUF file but a gzip-compressed file: decompress it first" },
        { tar, sizeof tar, "not a GGUF file but a tar archive: extract it first" },
        /* 8 bytes of length then '{' but a length past the end: not safetensors */
        { "\xff\x00\x00\x00\x00\x00\x00\x00{}", 10,
          "offset 0: bad magic ff 00 00 00 (expected \"GGUF\"): not a GGUF file" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gguf_error err = { 0 };
        gguf_file *f = gguf_open_memory(cases[i].p, cases[i].n, &err);
        ck_assert_ptr_null(f);
        ck_assert_int_eq(err.code, GGUF_ERR_FORMAT);
        ck_assert_str_eq(err.msg, cases[i].want);
    }
}
END_TEST

START_TEST(test_open_format)
{
    gguf_error err;
    char ex[BG_EXPECT_MAX];
    bg_buf b = { 0 };
    /* bad magic, from memory and from a file */
    bg_build_magic(0, &b, ex, sizeof ex);
    ck_assert_int_eq(open_code(&b, &err), GGUF_ERR_FORMAT);
    ck_assert_str_eq(err.msg, "offset 0: bad magic 47 47 4d 4c (expected \"GGUF\"): not a GGUF file");
    const char *path = tmp_path("ggml-magic.gguf");
    write_bytes(path, b.p, b.len);
    memset(&err, 0, sizeof err);
    ck_assert_ptr_null(gguf_open(path, 0, &err));
    ck_assert_int_eq(err.code, GGUF_ERR_FORMAT);
    ck_assert_str_eq(err.msg, "offset 0: bad magic 47 47 4d 4c (expected \"GGUF\"): not a GGUF file");
    unlink(path);
    bg_free(&b);
    /* too short to be GGUF */
    bg_build_short_header(2, &b, ex, sizeof ex);
    ck_assert_int_eq(open_code(&b, &err), GGUF_ERR_FORMAT);
    ck_assert_str_eq(err.msg, "offset 0: file is 2 bytes, too small to be GGUF");
    bg_free(&b);
    /* a kv count the file is too short to hold is a broken file, not a limit */
    bg_build_kv_count(1000000, &b, ex, sizeof ex);
    ck_assert_int_eq(open_code(&b, &err), GGUF_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(err.msg, "offset 16: kv count 1000000 cannot fit"));
    bg_free(&b);
    /* the valid image opens: the builder is not the reason for the failures */
    bg_valid_image(&b);
    gguf_file *f = gguf_open_memory(b.p, b.len, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    gguf_close(f);
    bg_free(&b);
}
END_TEST

START_TEST(test_open_unsupported)
{
    gguf_error err;
    char ex[BG_EXPECT_MAX];
    bg_buf b = { 0 };
    bg_build_version(4, &b, ex, sizeof ex);
    ck_assert_int_eq(open_code(&b, &err), GGUF_ERR_UNSUPPORTED);
    ck_assert_str_eq(err.msg, "offset 4: unsupported GGUF version 4 (only versions 2 and 3)");
    bg_free(&b);
    bg_build_v1(0, &b, ex, sizeof ex);
    ck_assert_int_eq(open_code(&b, &err), GGUF_ERR_UNSUPPORTED);
    ck_assert_str_eq(err.msg, "offset 4: GGUF version 1 is not supported (only versions 2 and 3)");
    bg_free(&b);
    bg_build_big_endian(3, &b, ex, sizeof ex);
    ck_assert_int_eq(open_code(&b, &err), GGUF_ERR_UNSUPPORTED);
    ck_assert_str_eq(err.msg, "offset 4: big-endian GGUF (version 3) is not supported");
    bg_free(&b);
}
END_TEST

/* A kv count of UINT32_MAX passes the "fits in the file" bound only in an
 * image of at least 24 + 14 * UINT32_MAX bytes (~60 GB): reserved address
 * space, never touched beyond the header page. */
START_TEST(test_open_limit)
{
    const uint64_t n_kv = UINT32_MAX;
    const size_t size = 24 + 14 * (size_t)n_kv;
    uint8_t *img = mmap(NULL, size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ck_assert_msg(img != MAP_FAILED, "cannot reserve %zu bytes of address space: %s", size,
                  strerror(errno));
    bg_buf b = { 0 };
    bg_bytes(&b, "GGUF", 4);
    bg_u32(&b, 3);
    bg_u64(&b, 0);
    bg_u64(&b, n_kv);
    ck_assert(!b.oom && b.len == 24);
    memcpy(img, b.p, 24);
    bg_free(&b);
    gguf_error err = { 0 };
    ck_assert_ptr_null(gguf_open_memory(img, size, &err));
    ck_assert_int_eq(err.code, GGUF_ERR_LIMIT);
    ck_assert_str_eq(err.msg, "offset 16: kv count 4294967295 is too large");
    munmap(img, size);
}
END_TEST

/* The setters' first failure is kept, with its code and the key named. */
START_TEST(test_writer_first_failure_kept)
{
    gguf_writer *w = gguf_writer_new();
    ck_assert_ptr_nonnull(w);
    ck_assert_ptr_null(gguf_writer_error(w));
    ck_assert_int_eq(gguf_writer_set_u32(w, "a.ok", 1), 0);
    ck_assert_ptr_null(gguf_writer_error(w));

    ck_assert_int_eq(gguf_writer_set_u32(w, "", 2), -1);
    const gguf_error *e = gguf_writer_error(w);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->code, GGUF_ERR_ARG);
    ck_assert_str_eq(e->msg, "key '': empty key");

    /* later failures, and later successes, leave the first in place */
    ck_assert_int_eq(gguf_writer_set_array(w, "b.arr", GGUF_VT_STR, "x", 1), -1);
    ck_assert_int_eq(gguf_writer_set_u8(w, "c.ok", 3), 0);
    ck_assert_int_eq(gguf_writer_set_str(w, NULL, "v"), -1);
    e = gguf_writer_error(w);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->code, GGUF_ERR_ARG);
    ck_assert_str_eq(e->msg, "key '': empty key");
    /* a failed call changes nothing */
    ck_assert(!gguf_writer_has_kv(w, "b.arr"));
    ck_assert(!gguf_writer_has_kv(w, ""));
    ck_assert(gguf_writer_has_kv(w, "a.ok") && gguf_writer_has_kv(w, "c.ok"));
    gguf_writer_free(w);
}
END_TEST

/* Each kind of setter failure, as the first one of a fresh writer. */
START_TEST(test_writer_setter_codes)
{
    gguf_writer *w = gguf_writer_new();
    ck_assert_int_eq(gguf_writer_set_array(w, "t.arr", GGUF_VT_ARR, "x", 1), -1);
    ck_assert_int_eq(gguf_writer_error(w)->code, GGUF_ERR_ARG);
    ck_assert_str_eq(gguf_writer_error(w)->msg,
                     "key 't.arr': array element type must be a fixed-size value type");
    gguf_writer_free(w);

    w = gguf_writer_new();
    ck_assert_int_eq(gguf_writer_set_bool(w, NULL, true), -1);
    ck_assert_int_eq(gguf_writer_error(w)->code, GGUF_ERR_ARG);
    ck_assert_str_eq(gguf_writer_error(w)->msg, "key '(null)': no key given");
    gguf_writer_free(w);

    /* the key is named by its first 40 bytes */
    w = gguf_writer_new();
    char *key = malloc(GGUF_MAX_KEY + 2);
    ck_assert_ptr_nonnull(key);
    memset(key, 'k', GGUF_MAX_KEY + 1);
    key[GGUF_MAX_KEY + 1] = 0;
    ck_assert_int_eq(gguf_writer_set_i64(w, key, 1), -1);
    ck_assert_int_eq(gguf_writer_error(w)->code, GGUF_ERR_ARG);
    char want[128];
    snprintf(want, sizeof want, "key '%.40s': longer than 65535 bytes", key);
    ck_assert_str_eq(gguf_writer_error(w)->msg, want);
    key[GGUF_MAX_KEY] = 0; /* the longest key allowed */
    ck_assert_int_eq(gguf_writer_set_i64(w, key, 1), 0);
    free(key);
    gguf_writer_free(w);

    /* an array whose byte size overflows size_t: a limit, nothing allocated */
    w = gguf_writer_new();
    ck_assert_int_eq(gguf_writer_set_array(w, "t.big", GGUF_VT_U64, "", UINT64_MAX), -1);
    ck_assert_int_eq(gguf_writer_error(w)->code, GGUF_ERR_LIMIT);
    ck_assert_str_eq(gguf_writer_error(w)->msg, "key 't.big': array too large");
    gguf_writer_free(w);

    w = gguf_writer_new();
    ck_assert_int_eq(gguf_writer_set_tensor_shard(w, 5, 0), -1);
    ck_assert_int_eq(gguf_writer_error(w)->code, GGUF_ERR_ARG);
    ck_assert_str_eq(gguf_writer_error(w)->msg, "tensor 5: no such tensor");
    gguf_writer_free(w);
}
END_TEST

START_TEST(test_writer_add_tensor_codes)
{
    gguf_writer *w = gguf_writer_new();
    gguf_error err = { 0 };
    const int64_t ne[5] = { 32, 2, 1, 1, 1 };
    ck_assert_int_eq(gguf_writer_add_tensor(w, "a", GGUF_DT_F32, 2, ne, &err), 0);
    ck_assert_int_eq(gguf_writer_add_tensor(w, "a", GGUF_DT_F32, 2, ne, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_ARG);
    ck_assert_str_eq(err.msg, "duplicate tensor name 'a'");
    ck_assert_int_eq(gguf_writer_add_tensor(w, "b", GGUF_DT_F32, 5, ne, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_ARG);
    ck_assert_int_eq(gguf_writer_add_tensor(w, "c", GGUF_DT_Q4_K, 2, ne, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_ARG); /* 32 is not a block of 256 */
    char name[GGUF_MAX_NAME + 1];
    memset(name, 'n', GGUF_MAX_NAME);
    name[GGUF_MAX_NAME] = 0;
    ck_assert_int_eq(gguf_writer_add_tensor(w, name, GGUF_DT_F32, 2, ne, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_LIMIT);
    /* add_tensor reports through err only: the setters' record stays empty */
    ck_assert_ptr_null(gguf_writer_error(w));
    ck_assert_uint_eq(gguf_writer_n_tensors(w), 1);
    gguf_writer_free(w);
}
END_TEST

START_TEST(test_writer_begin_codes)
{
    gguf_error err = { 0 };
    /* begin twice */
    gguf_writer *w = gguf_writer_new();
    ck_assert_int_eq(gguf_writer_set_str(w, "general.architecture", "llama"), 0);
    const char *path = tmp_path("twice.gguf");
    ck_assert_int_eq(gguf_writer_begin(w, path, &err), 0);
    ck_assert_int_eq(gguf_writer_begin(w, path, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_ARG);
    ck_assert_str_eq(err.msg, "writer already started");
    /* the first begin is still good */
    ck_assert_int_eq(gguf_writer_finish(w, &err), 0);
    gguf_writer_free(w);
    gguf_file *f = gguf_open(path, 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_uint_eq(gguf_n_kv(f), 1);
    gguf_close(f);
    unlink(path);

    /* a directory as the destination */
    w = gguf_writer_new();
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(gguf_writer_begin(w, test_tmpdir(), &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_IO);
    char want[1200];
    snprintf(want, sizeof want, "%s is a directory, not a regular file: refusing to write over it",
             test_tmpdir());
    ck_assert_str_eq(err.msg, want);
    gguf_writer_free(w);

    /* a directory that does not exist */
    w = gguf_writer_new();
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(gguf_writer_begin(w, tmp_path("no-such-dir/out.gguf"), &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot create a temporary file next to"));
    gguf_writer_free(w);

    /* data before begin; finish with a tensor unwritten */
    w = gguf_writer_new();
    ck_assert_int_eq(gguf_writer_write_tensor(w, "x", 1, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_ARG);
    const int64_t ne[1] = { 4 };
    ck_assert_int_eq(gguf_writer_add_tensor(w, "t", GGUF_DT_F32, 1, ne, &err), 0);
    path = tmp_path("short.gguf");
    ck_assert_int_eq(gguf_writer_begin(w, path, &err), 0);
    ck_assert_int_eq(gguf_writer_finish(w, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_ARG);
    ck_assert_str_eq(err.msg, "tensor 't' was not written completely");
    gguf_writer_free(w);
    ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

/* A file with keys but no tokenizer.ggml.*: a format error naming the key;
 * a tokenizer model libgguf does not implement: unsupported. */
START_TEST(test_vocab_codes)
{
    bg_model m;
    memset(&m, 0, sizeof m);
    memcpy(m.magic, "GGUF", 4);
    m.version = 3;
    m.alignment = 32;
    bg_add_str(&m, "general.architecture", "llama");
    bg_buf b = { 0 };
    bg_write(&m, &b);
    ck_assert(!b.oom);
    gguf_error err = { 0 };
    gguf_file *f = gguf_open_memory(b.p, b.len, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_ptr_null(gguf_vocab_load(f, &err));
    ck_assert_int_eq(err.code, GGUF_ERR_FORMAT);
    ck_assert_str_eq(err.msg, "no vocabulary: missing key tokenizer.ggml.model");
    gguf_close(f);
    bg_free(&b);

    bg_add_str(&m, "tokenizer.ggml.model", "bert");
    bg_write(&m, &b);
    f = gguf_open_memory(b.p, b.len, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    memset(&err, 0, sizeof err);
    ck_assert_ptr_null(gguf_vocab_load(f, &err));
    ck_assert_int_eq(err.code, GGUF_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.msg, "tokenizer model \"bert\" (WordPiece) is not supported"));
    gguf_close(f);
    bg_free(&b);
}
END_TEST

/* Getters, the type table and the codecs report with codes too. */
START_TEST(test_other_codes)
{
    gguf_error err = { 0 };
    bg_buf b = { 0 };
    bg_valid_image(&b);
    gguf_file *f = gguf_open_memory(b.p, b.len, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    uint32_t u32;
    ck_assert_int_eq(gguf_get_u32(f, "no.such.key", &u32, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_FORMAT);
    ck_assert_str_eq(err.msg, "missing key no.such.key");
    ck_assert_int_eq(gguf_get_u32(f, "general.name", &u32, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_FORMAT);
    ck_assert_str_eq(err.msg, "key general.name is str, expected u32");
    gguf_close(f);
    bg_free(&b);

    uint64_t row;
    ck_assert_int_eq(gguf_row_size(4 /* q4_2, removed */, 32, &row, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_UNSUPPORTED);
    ck_assert_int_eq(gguf_row_size(GGUF_DT_Q8_0, 33, &row, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_ARG);
    ck_assert_int_eq(gguf_row_size(GGUF_DT_F64, INT64_MAX, &row, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_LIMIT);
    ck_assert_int_eq(gguf_row_size(GGUF_DT_Q8_0, 64, &row, &err), 0);
    ck_assert_uint_eq(row, 68);

    float x[256] = { 0 }, y[256];
    uint8_t q[1024];
    ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_NVFP4, x, q, 1, 256, NULL, &err), 0);
    ck_assert_int_eq(err.code, GGUF_ERR_UNSUPPORTED);
    ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_IQ2_XXS, x, q, 1, 256, NULL, &err), 0);
    ck_assert_int_eq(err.code, GGUF_ERR_ARG); /* needs an imatrix */
    ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_Q8_0, x, q, 1, 31, NULL, &err), 0);
    ck_assert_int_eq(err.code, GGUF_ERR_ARG);
    ck_assert_int_eq(gguf_dequantize_row(GGUF_DT_NVFP4, q, y, 256, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_UNSUPPORTED);

    gguf_imatrix im;
    ck_assert_int_eq(gguf_imatrix_load(tmp_path("no-such.imatrix"), &im, &err), -1);
    ck_assert_int_eq(err.code, GGUF_ERR_IO);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("error");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_version);
    tcase_add_test(tc, test_errcode_names);
    tcase_add_test(tc, test_error_set);
    tcase_add_test(tc, test_open_io);
    tcase_add_test(tc, test_open_format);
    tcase_add_test(tc, test_not_gguf_kinds);
    tcase_add_test(tc, test_open_unsupported);
    tcase_add_test(tc, test_open_limit);
    tcase_add_test(tc, test_writer_first_failure_kept);
    tcase_add_test(tc, test_writer_setter_codes);
    tcase_add_test(tc, test_writer_add_tensor_codes);
    tcase_add_test(tc, test_writer_begin_codes);
    tcase_add_test(tc, test_vocab_codes);
    tcase_add_test(tc, test_other_codes);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
