/*
 * test_split.c — writing split models (by tensor count and by size) and
 * opening them as one model; inconsistent shards are rejected.
 */
#include <unistd.h>

#include <ggufkit/gguf.h>
#include "testutil.h"

static char prefix[1024];

/* Writes 5 f32 tensors of 64 floats (256 bytes) with the given split. */
static gguf_writer *write_model(uint64_t max_tensors, uint64_t max_bytes, const char *name)
{
    gguf_writer *w = gguf_writer_new();
    gguf_error err = { 0 };
    gguf_writer_set_str(w, "general.architecture", "llama");
    gguf_writer_set_u32(w, "llama.block_count", 5);
    int64_t ne[1] = { 64 };
    for (int i = 0; i < 5; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "blk.%d.w", i);
        ck_assert_int_ge(gguf_writer_add_tensor(w, nm, GGUF_DT_F32, 1, ne, &err), 0);
    }
    gguf_writer_set_split(w, max_tensors, max_bytes);
    snprintf(prefix, sizeof prefix, "%s/split-%d-%s.gguf", test_tmpdir(), (int)getpid(), name);
    ck_assert_msg(gguf_writer_begin(w, prefix, &err) == 0, "%s", err.msg);
    float v[64];
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < 64; j++)
            v[j] = (float)(i * 100 + j);
        ck_assert_int_eq(gguf_writer_write_tensor(w, v, sizeof v, &err), 0);
    }
    ck_assert_msg(gguf_writer_finish(w, &err) == 0, "%s", err.msg);
    return w;
}

static void remove_shards(gguf_writer *w)
{
    for (uint32_t s = 0; s < gguf_writer_n_shards(w); s++)
        unlink(gguf_writer_shard_path(w, s));
    gguf_writer_free(w);
}

START_TEST(test_split_by_tensors)
{
    gguf_writer *w = write_model(2, 0, "bycount");
    ck_assert_uint_eq(gguf_writer_n_shards(w), 3);
    const char *first = gguf_writer_shard_path(w, 0);
    ck_assert_ptr_nonnull(strstr(first, "-00001-of-00003.gguf"));
    gguf_error err = { 0 };
    gguf_file *f = gguf_open(first, 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_uint_eq(gguf_n_shards(f), 3);
    ck_assert_uint_eq(gguf_n_tensors(f), 5);
    ck_assert_ptr_nonnull(gguf_lookup_kv(f, "llama.block_count"));
    for (int i = 0; i < 5; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "blk.%d.w", i);
        const gguf_tensor *t = gguf_lookup_tensor(f, nm);
        ck_assert_ptr_nonnull(t);
        ck_assert_uint_eq(t->shard, (uint32_t)i / 2);
        float x;
        memcpy(&x, t->data + 4 * 7, 4);
        ck_assert(x == (float)(i * 100 + 7));
    }
    gguf_close(f);
    /* one shard alone */
    f = gguf_open(first, GGUF_OPEN_NO_SPLIT, &err);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(gguf_n_tensors(f), 2);
    uint16_t count;
    ck_assert(gguf_kv_u16(gguf_lookup_kv(f, "split.count"), &count) && count == 3);
    gguf_close(f);
    /* a later shard is not a model */
    ck_assert_ptr_null(gguf_open(gguf_writer_shard_path(w, 1), 0, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "shard 2 of a split"));
    /* a missing shard is named */
    unlink(gguf_writer_shard_path(w, 2));
    ck_assert_ptr_null(gguf_open(first, 0, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "-00003-of-00003.gguf"));
    remove_shards(w);
}
END_TEST

/* A first shard holding only the metadata (gguf-split
 * --no-tensor-first-split): the writer used to write the first tensor into
 * a shard it had not opened yet (a crash). */
START_TEST(test_split_metadata_only_first)
{
    gguf_writer *w = gguf_writer_new();
    gguf_error err = { 0 };
    gguf_writer_set_str(w, "general.architecture", "llama");
    int64_t ne[1] = { 64 };
    for (int i = 0; i < 3; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "t%d", i);
        ck_assert_int_ge(gguf_writer_add_tensor(w, nm, GGUF_DT_F32, 1, ne, &err), 0);
        ck_assert_int_eq(gguf_writer_set_tensor_shard(w, (uint64_t)i, i < 2 ? 1 : 2), 0);
    }
    snprintf(prefix, sizeof prefix, "%s/split-%d-meta.gguf", test_tmpdir(), (int)getpid());
    ck_assert_msg(gguf_writer_begin(w, prefix, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(gguf_writer_n_shards(w), 3);
    float v[64] = { 0 };
    for (int i = 0; i < 3; i++) {
        v[0] = (float)i;
        ck_assert_int_eq(gguf_writer_write_tensor(w, v, sizeof v, &err), 0);
    }
    ck_assert_msg(gguf_writer_finish(w, &err) == 0, "%s", err.msg);
    gguf_file *f = gguf_open(gguf_writer_shard_path(w, 0), GGUF_OPEN_NO_SPLIT, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_uint_eq(gguf_n_tensors(f), 0);
    gguf_close(f);
    f = gguf_open(gguf_writer_shard_path(w, 0), 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_uint_eq(gguf_n_tensors(f), 3);
    float x;
    memcpy(&x, gguf_lookup_tensor(f, "t2")->data, 4);
    ck_assert(x == 2.0f);
    ck_assert_uint_eq(gguf_lookup_tensor(f, "t2")->shard, 2);
    gguf_close(f);
    remove_shards(w);
}
END_TEST

START_TEST(test_split_by_size)
{
    /* 256-byte tensors, at most 600 bytes a shard → 2 tensors a shard */
    gguf_writer *w = write_model(0, 600, "bysize");
    ck_assert_uint_eq(gguf_writer_n_shards(w), 3);
    gguf_error err = { 0 };
    gguf_file *f = gguf_open(gguf_writer_shard_path(w, 0), 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_uint_eq(gguf_n_tensors(f), 5);
    gguf_close(f);
    remove_shards(w);
    /* a limit smaller than one tensor still puts one tensor in each shard */
    w = write_model(0, 10, "tiny");
    ck_assert_uint_eq(gguf_writer_n_shards(w), 5);
    remove_shards(w);
    /* no limit hit: a single plain file without split keys */
    w = write_model(10, 0, "one");
    ck_assert_uint_eq(gguf_writer_n_shards(w), 1);
    f = gguf_open(gguf_writer_shard_path(w, 0), 0, &err);
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_null(gguf_lookup_kv(f, "split.count"));
    gguf_close(f);
    remove_shards(w);
}
END_TEST

START_TEST(test_split_inconsistent)
{
    gguf_writer *w = write_model(2, 0, "bad");
    gguf_error err = { 0 };
    /* replace shard 2 with a shard of another split (different count) */
    gguf_writer *other = write_model(3, 0, "other");
    ck_assert_int_eq(rename(gguf_writer_shard_path(other, 1), gguf_writer_shard_path(w, 1)), 0);
    ck_assert_ptr_null(gguf_open(gguf_writer_shard_path(w, 0), 0, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "inconsistent"));
    remove_shards(other);
    remove_shards(w);
}
END_TEST

START_TEST(test_split_names)
{
    uint32_t no, count;
    size_t plen;
    ck_assert(gguf_split_parse_name("/a/model-00002-of-00010.gguf", &no, &count, &plen));
    ck_assert_uint_eq(no, 2);
    ck_assert_uint_eq(count, 10);
    ck_assert_uint_eq(plen, strlen("/a/model"));
    ck_assert(!gguf_split_parse_name("model-00011-of-00010.gguf", &no, &count, &plen));
    ck_assert(!gguf_split_parse_name("model-0001-of-00010.gguf", &no, &count, &plen));
    ck_assert(!gguf_split_parse_name("model.gguf", &no, &count, &plen));
    ck_assert(!gguf_split_parse_name("model-00001-of-00002.bin", &no, &count, &plen));
    char buf[64];
    ck_assert_int_eq(gguf_split_name(buf, sizeof buf, "m", 3, 12), 0);
    ck_assert_str_eq(buf, "m-00003-of-00012.gguf");
    ck_assert_int_eq(gguf_split_name(buf, 8, "m", 3, 12), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("split");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_split_by_tensors);
    tcase_add_test(tc, test_split_by_size);
    tcase_add_test(tc, test_split_metadata_only_first);
    tcase_add_test(tc, test_split_inconsistent);
    tcase_add_test(tc, test_split_names);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
