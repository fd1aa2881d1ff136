/*
 * test_memory.c — inspect/memory.c: llama.cpp e21cdc11's cache sizing rules
 * (cells, sliding cells, rows of block types, the cache types it takes),
 * a plan on the stories260K reference (its numbers worked out by hand from
 * its keys), the refusal of an unregistered architecture, and the JSON
 * report's sections.
 */
#define _GNU_SOURCE /* open_memstream */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "testutil.h"

START_TEST(test_cells)
{
    /* the context padded to 256 */
    ck_assert_uint_eq(memory_ctx_cells(1), 256);
    ck_assert_uint_eq(memory_ctx_cells(256), 256);
    ck_assert_uint_eq(memory_ctx_cells(257), 512);
    ck_assert_uint_eq(memory_ctx_cells(4096), 4096);
    ck_assert_uint_eq(memory_ctx_cells(MEMORY_MAX_CTX), (uint64_t)MEMORY_MAX_CTX);
    /* n_ubatch: min(context, 2048, 512) */
    ck_assert_uint_eq(memory_ubatch(1), 1);
    ck_assert_uint_eq(memory_ubatch(300), 300);
    ck_assert_uint_eq(memory_ubatch(512), 512);
    ck_assert_uint_eq(memory_ubatch(4096), 512);
    /* sliding: PAD(min(cells, n_swa + n_ubatch), 256) */
    ck_assert_uint_eq(memory_swa_cells(4096, 16), 768);  /* gemma3-rand, recorded */
    ck_assert_uint_eq(memory_swa_cells(4096, 8), 768);   /* gemma4-rand, recorded */
    ck_assert_uint_eq(memory_swa_cells(300, 16), 512);   /* recorded: 512 */
    ck_assert_uint_eq(memory_swa_cells(100, 8), 256);
    ck_assert_uint_eq(memory_swa_cells(65536, 4000), 4608); /* 4512 padded */
    ck_assert_uint_eq(memory_swa_cells(4096, 4096), 4096); /* never past the main cache */
    ck_assert_uint_eq(memory_swa_cells(65536, 4096), 4608);
}
END_TEST

START_TEST(test_rows_and_types)
{
    ck_assert_uint_eq(memory_row_bytes(GGUF_DT_F16, 64), 128);
    ck_assert_uint_eq(memory_row_bytes(GGUF_DT_F32, 12), 48);
    ck_assert_uint_eq(memory_row_bytes(GGUF_DT_Q8_0, 64), 68);
    ck_assert_uint_eq(memory_row_bytes(GGUF_DT_Q4_0, 32), 18);
    ck_assert_uint_eq(memory_row_bytes(GGUF_DT_Q8_0, 12), 0); /* not whole blocks */
    ck_assert_uint_eq(memory_row_bytes(GGUF_DT_COUNT, 32), 0);
    ck_assert_uint_eq(memory_row_bytes(4, 32), 0); /* a removed id */
    static const int ok[] = { GGUF_DT_F32, GGUF_DT_F16, GGUF_DT_BF16, GGUF_DT_Q8_0, GGUF_DT_Q4_0,
                              GGUF_DT_Q4_1, GGUF_DT_IQ4_NL, GGUF_DT_Q5_0, GGUF_DT_Q5_1 };
    int n_ok = 0;
    for (int t = -1; t <= GGUF_DT_COUNT; t++) {
        bool want = false;
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
            want |= ok[i] == t;
        ck_assert_int_eq(memory_cache_type_ok(t), want);
        n_ok += want;
    }
    ck_assert_int_eq(n_ok, 9);
    ck_assert_str_eq(memory_cache_type_names(),
                     "f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1");
}
END_TEST

/* A GGUF of one key, general.architecture = "nosuch", and no tensors. */
static size_t unknown_arch(unsigned char *b)
{
    size_t o = 0;
#define PUT(v, n) do { uint64_t x_ = (v); for (int i_ = 0; i_ < (n); i_++) b[o++] = (unsigned char)(x_ >> (8 * i_)); } while (0)
#define STR(s) do { PUT(strlen(s), 8); memcpy(b + o, s, strlen(s)); o += strlen(s); } while (0)
    memcpy(b, "GGUF", 4);
    o = 4;
    PUT(3, 4); /* version */
    PUT(0, 8); /* tensors */
    PUT(1, 8); /* keys */
    STR("general.architecture");
    PUT(8, 4); /* a string */
    STR("nosuch");
#undef PUT
#undef STR
    return o;
}

START_TEST(test_unregistered)
{
    unsigned char buf[128];
    gguf_error err = { 0 };
    gguf_file *f = gguf_open_memory(buf, unknown_arch(buf), &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    memory_opts o = { 4096, GGUF_DT_F16, GGUF_DT_F16 };
    memory_plan p;
    ck_assert_int_eq(memory_plan_make(f, &o, &p, &err), -1);
    ck_assert_str_eq(err.msg, "architecture \"nosuch\" is not registered");
    ck_assert_ptr_null(p.layers);
    /* a cache type llama.cpp does not take is refused before the file is read */
    o.type_v = GGUF_DT_Q4_K;
    ck_assert_int_eq(memory_plan_make(f, &o, &p, &err), -1);
    ck_assert_str_eq(err.msg, "cache type q4_K is not one llama.cpp takes (f32, f16, bf16, "
                              "q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1)");
    /* the report: exit status 1 and nothing written */
    char *out = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&out, &len);
    emit *e = emit_open(mf, EMIT_JSON, "x");
    o.type_v = GGUF_DT_F16;
    ck_assert_int_eq(memory_write(e, f, "x.gguf", &o, &err), 1);
    ck_assert_int_eq(emit_close(e), 0);
    fclose(mf);
    ck_assert_uint_eq(len, 0);
    free(out);
    gguf_close(f);
}
END_TEST

/* stories260K: llama, 5 blocks, 8 heads of 8, 4 KV heads (K and V rows of
 * 32), context_length 128, 512 tokens, 48 f32 tensors of 1171200 bytes. */
START_TEST(test_stories)
{
    char path[4096];
    gguf_error err = { 0 };
    gguf_file *f = gguf_open(fixture_path(path, sizeof path, "reference/stories260K-f32.gguf"),
                             0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    memory_opts o = { 0, GGUF_DT_Q8_0, GGUF_DT_F16 };
    memory_plan p;
    ck_assert_int_eq(memory_plan_make(f, &o, &p, &err), 0);
    ck_assert_int_eq(p.n_ctx_asked, 128); /* the model's */
    ck_assert_uint_eq(p.n_ctx, 256);
    ck_assert_uint_eq(p.n_ubatch, 128);
    ck_assert_int_eq(p.n_caches, 1);
    ck_assert_str_eq(p.caches[0].name, "kv");
    ck_assert_uint_eq(p.caches[0].layers, 5);
    ck_assert_uint_eq(p.caches[0].k_bytes, 5 * 256 * 34); /* one q8_0 block a row */
    ck_assert_uint_eq(p.caches[0].v_bytes, 5 * 256 * 64);
    ck_assert_int_eq(p.n_layers, 5);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(p.layers[i].kind, MEMORY_FULL);
        ck_assert_int_eq(p.layers[i].from, -1);
        ck_assert_int_eq(p.layers[i].k_width, 32);
        ck_assert_uint_eq(p.layers[i].bytes, 256 * (34 + 64));
    }
    ck_assert_uint_eq(p.tensors[GGUF_DT_F32], 48);
    ck_assert_uint_eq(p.dense[GGUF_DT_F32], 1171200);
    ck_assert_uint_eq(p.expert_bytes, 0);
    /* the estimate: max(mask + a block's activations, logits) */
    uint64_t blocks = 6 * 128 * 256 + 4 * 128 * (3 * 64 + 2 * 172);
    uint64_t output = 4 * 128 * (512 + 3 * 64);
    ck_assert_uint_eq(p.compute_bytes, blocks > output ? blocks : output);
    memory_plan_free(&p);

    /* -c 4096: the size recorded from llama.cpp (2.50 MiB, f16) */
    o = (memory_opts){ 4096, GGUF_DT_F16, GGUF_DT_F16 };
    ck_assert_int_eq(memory_plan_make(f, &o, &p, &err), 0);
    ck_assert_uint_eq(p.caches[0].k_bytes + p.caches[0].v_bytes, 5u * 4096 * 2 * 64);
    memory_plan_free(&p);

    /* JSON: the four sections */
    char *out = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&out, &len);
    emit *e = emit_open(mf, EMIT_JSON, "x");
    ck_assert_int_eq(memory_write(e, f, "s.gguf", &o, &err), 0);
    ck_assert_int_eq(emit_close(e), 0);
    fclose(mf);
    ck_assert_ptr_nonnull(strstr(out, "\"kv_cache\": 2621440,"));
    ck_assert_ptr_nonnull(strstr(out, "\"weights\": {\n    \"f32\": {\"tensors\": 48, \"dense\": "
                                      "1171200, \"experts\": 0, \"bytes\": 1171200}"));
    ck_assert_ptr_nonnull(strstr(out, "\"kv\": {\"layers\": 5, \"cells\": 4096,"));
    ck_assert_ptr_nonnull(strstr(out, "\"mib\": \"2.50\""));
    ck_assert_ptr_nonnull(strstr(out, "{\"layer\": 4, \"kind\": \"full\", \"k_width\": 32,"));
    free(out);
    gguf_close(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_cells);
    tcase_add_test(tc, test_rows_and_types);
    tcase_add_test(tc, test_unregistered);
    int skipped = 0;
    char path[4096];
    if (fixture_path(path, sizeof path, "reference/stories260K-f32.gguf"))
        tcase_add_test(tc, test_stories);
    else
        skipped++;
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
