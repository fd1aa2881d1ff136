/*
 * test_types.c — the ggml type table and value-type table.
 *
 * Sizes are checked against ggml's block structs and against the row sizes
 * stored in the fixture quantization vectors; the rest of each type's row
 * (fallback, file type, float fields) against its invariants and against
 * what llama.cpp e21cdc11 says (include/llama.h, src/llama-quant.cpp,
 * src/llama-model-loader.cpp), recorded here.
 */
#include <math.h>
#include <stdint.h>

#include <unistd.h>

#include "testutil.h"
#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>

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

/* Writes a file of these tensors (2-D, 256 wide, in this order) and
 * general.file_type when ft >= 0; returns it opened. */
static gguf_file *typed_file(const char *const *names, const uint32_t *types, size_t n, int64_t ft)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/filetype-%ld.gguf", test_tmpdir(), (long)getpid());
    gguf_error err = { 0 };
    gguf_writer *w = gguf_writer_new();
    if (ft >= 0)
        ck_assert_int_eq(gguf_writer_set_u32(w, "general.file_type", (uint32_t)ft), 0);
    const int64_t ne[2] = { 256, 2 };
    for (size_t i = 0; i < n; i++)
        ck_assert_int_ge(gguf_writer_add_tensor(w, names[i], types[i], 2, ne, &err), 0);
    ck_assert_msg(gguf_writer_begin(w, path, &err) == 0, "%s", err.msg);
    static uint8_t zeros[4096];
    for (size_t i = 0; i < n; i++) {
        const uint64_t nb = gguf_writer_tensor_nbytes(w, i);
        ck_assert_uint_le(nb, sizeof zeros);
        ck_assert_int_eq(gguf_writer_write_tensor(w, zeros, (size_t)nb, &err), 0);
    }
    ck_assert_msg(gguf_writer_finish(w, &err) == 0, "%s", err.msg);
    gguf_writer_free(w);
    gguf_file *f = gguf_open(path, 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    unlink(path);
    return f;
}

/* gguf_file_type_of: the key when there is one; else llama_model_loader's
 * guess. In this file, as gguf-convert and mkmodel order it, 8 q8_0 and 8
 * f16 matrices tie: counted in file order q8_0 gets to 8 first, in the
 * loader's order (globals by name, then blocks) f16 does, and llama-quantize
 * e21cdc11's COPY of it writes 1025 (measured with tests/ref/filetype_tie.c; gguf-quantize wrote 1031). */
START_TEST(test_file_type_guess)
{
    static const char *const names[] = {
        "token_embd.weight",
        "blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight",
        "blk.0.attn_output.weight", "blk.0.ffn_gate.weight", "blk.0.ffn_down.weight",
        "blk.0.ffn_up.weight",
        "blk.1.attn_q.weight", "blk.1.attn_k.weight", "blk.1.attn_v.weight",
        "blk.1.attn_output.weight", "blk.1.ffn_gate.weight", "blk.1.ffn_down.weight",
        "blk.1.ffn_up.weight", "output.weight",
    };
    const uint32_t Q = GGUF_DT_Q8_0, H = GGUF_DT_F16;
    const uint32_t types[] = { Q, Q, Q, Q, Q, Q, H, Q, H, H, H, H, H, H, Q, H };
    const size_t n = sizeof names / sizeof *names;
    uint32_t ft = 0;
    gguf_file *f = typed_file(names, types, n, -1);
    ck_assert_int_eq(gguf_file_type_of(f, &ft, NULL), 0);
    ck_assert_uint_eq(ft, GGUF_FT_F16 | GGUF_FT_GUESSED);
    gguf_close(f);
    /* a key is taken as it is, whatever the tensors */
    f = typed_file(names, types, n, GGUF_FT_Q4_K_M);
    ck_assert_int_eq(gguf_file_type_of(f, &ft, NULL), 0);
    ck_assert_uint_eq(ft, GGUF_FT_Q4_K_M);
    gguf_close(f);
    /* no tensors: f32; nvfp4 and q1_0: the loader's 39 and 40 */
    f = typed_file(names, types, 0, -1);
    ck_assert_int_eq(gguf_file_type_of(f, &ft, NULL), 0);
    ck_assert_uint_eq(ft, GGUF_FT_ALL_F32 | GGUF_FT_GUESSED);
    gguf_close(f);
    const uint32_t nv[] = { GGUF_DT_NVFP4, GGUF_DT_NVFP4, GGUF_DT_F16 };
    f = typed_file(names, nv, 3, -1);
    ck_assert_int_eq(gguf_file_type_of(f, &ft, NULL), 0);
    ck_assert_uint_eq(ft, 1063);
    gguf_close(f);
    const uint32_t q1[] = { GGUF_DT_Q1_0, GGUF_DT_F32, GGUF_DT_Q1_0 };
    f = typed_file(names, q1, 3, -1);
    ck_assert_int_eq(gguf_file_type_of(f, &ft, NULL), 0);
    ck_assert_uint_eq(ft, 1064);
    gguf_close(f);
}
END_TEST

/* Every id below GGUF_DT_COUNT has a whole row: a name, and for a valid
 * type a block, its float fields stated, a fallback and a file type that
 * are -1 or in range. An id added to the enum (GGUF_DT_COUNT raised)
 * without a row in gguf/types.c fails here: its name is NULL. */
START_TEST(test_every_id_has_a_row)
{
    ck_assert_int_eq(GGUF_DT_COUNT, 42); /* ggml e21cdc11's GGML_TYPE_COUNT */
    for (uint32_t id = 0; id < GGUF_DT_COUNT; id++) {
        const gguf_dtype_traits *t = gguf_dtype_get(id);
        ck_assert_ptr_nonnull(t);
        ck_assert_msg(t->name && t->name[0], "type id %u has no row in gguf/types.c", id);
        gguf_scale_field f[GGUF_MAX_SCALE_FIELDS];
        if (!t->valid) {
            ck_assert_ptr_nonnull(strstr(t->name, "(removed)"));
            ck_assert_int_eq(gguf_dtype_scales(id, f), -1);
            ck_assert_int_eq(gguf_dtype_fallback(id), -1);
            ck_assert_int_eq(gguf_dtype_file_type(id), -1);
            continue;
        }
        ck_assert_msg(t->blck_size >= 1 && t->type_size >= 1, "%s: no block", t->name);
        const int n = gguf_dtype_scales(id, f);
        ck_assert_msg(n >= 0 && n <= GGUF_MAX_SCALE_FIELDS, "%s: %d float fields", t->name, n);
        for (int k = 0; k < n; k++) {
            ck_assert_msg(f[k].kind >= GGUF_SCALE_F16 && f[k].kind <= GGUF_SCALE_IQ1_M,
                          "%s: field %d of kind %u", t->name, k, f[k].kind);
            ck_assert_msg(f[k].offset < t->type_size, "%s: field %d outside the block",
                          t->name, k);
        }
        ck_assert_int_ge(gguf_dtype_fallback(id), -1);
        ck_assert_int_lt(gguf_dtype_fallback(id), GGUF_DT_COUNT);
        ck_assert_int_ge(gguf_dtype_file_type(id), -1);
    }
    ck_assert(gguf_dtype_get(GGUF_DT_COUNT - 1)->valid); /* the last id has its row */
    gguf_scale_field f[GGUF_MAX_SCALE_FIELDS];
    ck_assert_int_eq(gguf_dtype_scales(GGUF_DT_COUNT, f), -1);
    ck_assert_int_eq(gguf_dtype_fallback(GGUF_DT_COUNT), -1);
    ck_assert_int_eq(gguf_dtype_file_type(UINT32_MAX), -1);
}
END_TEST

/* Every block type's bytes and block size are those of its struct in
 * quants.h, and every block type has a struct there. */
START_TEST(test_block_structs)
{
    static const struct { uint32_t id; size_t size; uint32_t qk; } structs[] = {
        { GGUF_DT_Q4_0, sizeof(gguf_block_q4_0), GGUF_QK4_0 },
        { GGUF_DT_Q4_1, sizeof(gguf_block_q4_1), GGUF_QK4_1 },
        { GGUF_DT_Q5_0, sizeof(gguf_block_q5_0), GGUF_QK5_0 },
        { GGUF_DT_Q5_1, sizeof(gguf_block_q5_1), GGUF_QK5_1 },
        { GGUF_DT_Q8_0, sizeof(gguf_block_q8_0), GGUF_QK8_0 },
        { GGUF_DT_Q8_1, sizeof(gguf_block_q8_1), GGUF_QK8_1 },
        { GGUF_DT_Q2_K, sizeof(gguf_block_q2_K), GGUF_QK_K },
        { GGUF_DT_Q3_K, sizeof(gguf_block_q3_K), GGUF_QK_K },
        { GGUF_DT_Q4_K, sizeof(gguf_block_q4_K), GGUF_QK_K },
        { GGUF_DT_Q5_K, sizeof(gguf_block_q5_K), GGUF_QK_K },
        { GGUF_DT_Q6_K, sizeof(gguf_block_q6_K), GGUF_QK_K },
        { GGUF_DT_Q8_K, sizeof(gguf_block_q8_K), GGUF_QK_K },
        { GGUF_DT_IQ2_XXS, sizeof(gguf_block_iq2_xxs), GGUF_QK_K },
        { GGUF_DT_IQ2_XS, sizeof(gguf_block_iq2_xs), GGUF_QK_K },
        { GGUF_DT_IQ3_XXS, sizeof(gguf_block_iq3_xxs), GGUF_QK_K },
        { GGUF_DT_IQ1_S, sizeof(gguf_block_iq1_s), GGUF_QK_K },
        { GGUF_DT_IQ4_NL, sizeof(gguf_block_iq4_nl), GGUF_QK4_NL },
        { GGUF_DT_IQ3_S, sizeof(gguf_block_iq3_s), GGUF_QK_K },
        { GGUF_DT_IQ2_S, sizeof(gguf_block_iq2_s), GGUF_QK_K },
        { GGUF_DT_IQ4_XS, sizeof(gguf_block_iq4_xs), GGUF_QK_K },
        { GGUF_DT_IQ1_M, sizeof(gguf_block_iq1_m), GGUF_QK_K },
        { GGUF_DT_TQ1_0, sizeof(gguf_block_tq1_0), GGUF_QK_K },
        { GGUF_DT_TQ2_0, sizeof(gguf_block_tq2_0), GGUF_QK_K },
        { GGUF_DT_MXFP4, sizeof(gguf_block_mxfp4), GGUF_QK_MXFP4 },
        { GGUF_DT_NVFP4, sizeof(gguf_block_nvfp4), GGUF_QK_NVFP4 },
        { GGUF_DT_Q1_0, sizeof(gguf_block_q1_0), GGUF_QK1_0 },
    };
    bool seen[GGUF_DT_COUNT] = { false };
    for (size_t i = 0; i < sizeof structs / sizeof *structs; i++) {
        const gguf_dtype_traits *t = gguf_dtype_get(structs[i].id);
        ck_assert_uint_eq(t->type_size, structs[i].size);
        ck_assert_uint_eq(t->blck_size, structs[i].qk);
        seen[structs[i].id] = true;
    }
    for (uint32_t id = 0; id < GGUF_DT_COUNT; id++) {
        const gguf_dtype_traits *t = gguf_dtype_get(id);
        if (t->valid && t->blck_size > 1)
            ck_assert_msg(seen[id], "%s has no block struct in quants.h", t->name);
        /* a codec writes whole blocks of the table's size */
        const gguf_codec *c = gguf_codec_get(id);
        if (c) {
            float x[2 * 256], w[2 * 256];
            uint8_t y[2 * 292];
            for (int i = 0; i < 2 * 256; i++)
                x[i] = sinf(0.37f * (float)i), w[i] = 1;
            const int64_t n = 2 * (int64_t)t->blck_size;
            ck_assert_uint_eq(gguf_quantize_rows(id, x, y, 1, n, w, NULL),
                              2 * (size_t)t->type_size);
        }
    }
}
END_TEST

/* The block types whose blocks hold no float that can be NaN or Inf; every
 * other block type names its scales, so gguf-inspect --check scans them. */
static bool no_float_fields(uint32_t id)
{
    return id == GGUF_DT_NVFP4; /* UE4M3 scales: ggml decodes 0x7f as 0 */
}

START_TEST(test_float_fields)
{
    for (uint32_t id = 0; id < GGUF_DT_COUNT; id++) {
        const gguf_dtype_traits *t = gguf_dtype_get(id);
        gguf_scale_field f[GGUF_MAX_SCALE_FIELDS];
        const int n = gguf_dtype_scales(id, f);
        if (!t->valid)
            continue;
        if (t->blck_size == 1) {
            /* plain types: a float type's one field is the element itself */
            ck_assert_int_eq(n, t->is_float ? 1 : 0);
            if (n)
                ck_assert_uint_eq(f[0].offset, 0);
            continue;
        }
        ck_assert(!t->is_float);
        ck_assert_msg(n > 0 || no_float_fields(id), "%s: no float fields stated", t->name);
        ck_assert_msg(n == 0 || !no_float_fields(id), "%s: stated twice", t->name);
    }
    /* the element kinds of the plain float types */
    gguf_scale_field f[GGUF_MAX_SCALE_FIELDS];
    ck_assert_int_eq(gguf_dtype_scales(GGUF_DT_F32, f), 1);
    ck_assert_uint_eq(f[0].kind, GGUF_SCALE_F32);
    ck_assert_int_eq(gguf_dtype_scales(GGUF_DT_F16, f), 1);
    ck_assert_uint_eq(f[0].kind, GGUF_SCALE_F16);
    ck_assert_int_eq(gguf_dtype_scales(GGUF_DT_BF16, f), 1);
    ck_assert_uint_eq(f[0].kind, GGUF_SCALE_BF16);
    ck_assert_int_eq(gguf_dtype_scales(GGUF_DT_F64, f), 1);
    ck_assert_uint_eq(f[0].kind, GGUF_SCALE_F64);
    ck_assert_int_eq(gguf_dtype_scales(GGUF_DT_I32, f), 0);
}
END_TEST

/* Each stated field of a block type with a codec is a scale indeed: a NaN
 * written there makes the block decode to NaNs (and the clean block has
 * none). E8M0 has no NaN that ggml decodes as one (255 is 2^127). */
START_TEST(test_float_fields_are_scales)
{
    int checked = 0;
    for (uint32_t id = 0; id < GGUF_DT_COUNT; id++) {
        const gguf_dtype_traits *t = gguf_dtype_get(id);
        const gguf_codec *c = gguf_codec_get(id);
        gguf_scale_field f[GGUF_MAX_SCALE_FIELDS];
        const int n = gguf_dtype_scales(id, f);
        if (!c || t->blck_size == 1)
            continue;
        float x[256], w[256], y[256];
        uint8_t blk[292];
        for (int i = 0; i < 256; i++)
            x[i] = 0.5f + sinf(0.61f * (float)i), w[i] = 1;
        const int64_t bs = t->blck_size;
        ck_assert_uint_eq(gguf_quantize_rows(id, x, blk, 1, bs, w, NULL), t->type_size);
        ck_assert_int_eq(gguf_dequantize_row(id, blk, y, bs, NULL), 0);
        for (int64_t i = 0; i < bs; i++)
            ck_assert(isfinite(y[i]));
        for (int k = 0; k < n; k++) {
            uint8_t bad[292];
            memcpy(bad, blk, t->type_size);
            uint8_t *p = bad + f[k].offset;
            switch (f[k].kind) {
            case GGUF_SCALE_F16: p[0] = 0x00, p[1] = 0x7e; break;
            case GGUF_SCALE_BF16: p[0] = 0xc0, p[1] = 0x7f; break;
            case GGUF_SCALE_F32: p[0] = 0, p[1] = 0, p[2] = 0xc0, p[3] = 0x7f; break;
            case GGUF_SCALE_IQ1_M: /* 0x7e00 in the top nibbles of four u16 */
                p[1] &= 0x0f, p[3] &= 0x0f, p[5] = (uint8_t)((p[5] & 0x0f) | 0xe0),
                p[7] = (uint8_t)((p[7] & 0x0f) | 0x70);
                break;
            default: continue;
            }
            ck_assert_int_eq(gguf_dequantize_row(id, bad, y, bs, NULL), 0);
            int nans = 0;
            for (int64_t i = 0; i < bs; i++)
                nans += isnan(y[i]);
            ck_assert_msg(nans > 0, "%s: a NaN at byte %u decodes to no NaN", t->name,
                          f[k].offset);
            checked++;
        }
    }
    ck_assert_int_eq(checked, 27); /* 22 types, five of them with two fields */
}
END_TEST

/* llama.cpp e21cdc11's tensor_type_fallback, and what the table makes of
 * it: the fallback is quantizable without weights, and its blocks divide
 * the type's, so it serves every row the type fits and more. */
START_TEST(test_fallbacks)
{
    static const struct { uint32_t from, to; } llama[] = {
        { GGUF_DT_IQ1_S, GGUF_DT_IQ4_NL },   { GGUF_DT_IQ1_M, GGUF_DT_IQ4_NL },
        { GGUF_DT_IQ2_XXS, GGUF_DT_IQ4_NL }, { GGUF_DT_IQ2_XS, GGUF_DT_IQ4_NL },
        { GGUF_DT_IQ2_S, GGUF_DT_IQ4_NL },   { GGUF_DT_IQ3_XXS, GGUF_DT_IQ4_NL },
        { GGUF_DT_IQ3_S, GGUF_DT_IQ4_NL },   { GGUF_DT_IQ4_XS, GGUF_DT_IQ4_NL },
        { GGUF_DT_Q2_K, GGUF_DT_Q4_0 },      { GGUF_DT_Q3_K, GGUF_DT_Q4_0 },
        { GGUF_DT_TQ1_0, GGUF_DT_Q4_0 },     { GGUF_DT_TQ2_0, GGUF_DT_Q4_0 },
        { GGUF_DT_Q4_K, GGUF_DT_Q5_0 },      { GGUF_DT_Q5_K, GGUF_DT_Q5_1 },
        { GGUF_DT_Q6_K, GGUF_DT_Q8_0 },
    };
    int want[GGUF_DT_COUNT];
    for (uint32_t id = 0; id < GGUF_DT_COUNT; id++)
        want[id] = -1;
    for (size_t i = 0; i < sizeof llama / sizeof *llama; i++)
        want[llama[i].from] = (int)llama[i].to;
    for (uint32_t id = 0; id < GGUF_DT_COUNT; id++) {
        const gguf_dtype_traits *t = gguf_dtype_get(id);
        const int fb = gguf_dtype_fallback(id);
        ck_assert_msg(fb == want[id], "%s falls back to %d, llama.cpp to %d", t->name, fb,
                      want[id]);
        if (!t->valid)
            continue;
        const uint32_t bs = t->blck_size;
        /* rows of whole blocks keep the type */
        ck_assert_uint_eq(gguf_dtype_fit(id, 4 * (int64_t)bs), id);
        if (fb < 0) {
            if (bs > 1)
                ck_assert_uint_eq(gguf_dtype_fit(id, (int64_t)bs + 1), GGUF_DT_F16);
            continue;
        }
        const gguf_dtype_traits *ft = gguf_dtype_get((uint32_t)fb);
        ck_assert(ft->valid);
        ck_assert_msg(gguf_codec_get((uint32_t)fb) && gguf_codec_get((uint32_t)fb)->quantize,
                      "%s's fallback %s cannot be quantized", t->name, ft->name);
        ck_assert_msg(ft->blck_size < bs && bs % ft->blck_size == 0,
                      "%s's fallback %s: blocks of %u", t->name, ft->name, ft->blck_size);
        /* a row of one fallback block more than whole type blocks, and one
         * that fits neither (f16) */
        ck_assert_uint_eq(gguf_dtype_fit(id, (int64_t)bs + ft->blck_size), (uint32_t)fb);
        ck_assert_uint_eq(gguf_dtype_fit(id, (int64_t)bs + ft->blck_size + 1), GGUF_DT_F16);
    }
}
END_TEST

/* The file-type numbers: llama.cpp e21cdc11's enum llama_ftype, and the
 * type → file type map of its model loader (llama_model_loader, when
 * general.file_type is absent), which gguf-quantize's COPY and
 * gguf-convert use. */
START_TEST(test_file_types)
{
    static const struct { int ours, llama; } numbers[] = {
        { GGUF_FT_ALL_F32, 0 },  { GGUF_FT_F16, 1 },      { GGUF_FT_Q4_0, 2 },
        { GGUF_FT_Q4_1, 3 },     { GGUF_FT_Q8_0, 7 },     { GGUF_FT_Q5_0, 8 },
        { GGUF_FT_Q5_1, 9 },     { GGUF_FT_Q2_K, 10 },    { GGUF_FT_Q3_K_S, 11 },
        { GGUF_FT_Q3_K_M, 12 },  { GGUF_FT_Q3_K_L, 13 },  { GGUF_FT_Q4_K_S, 14 },
        { GGUF_FT_Q4_K_M, 15 },  { GGUF_FT_Q5_K_S, 16 },  { GGUF_FT_Q5_K_M, 17 },
        { GGUF_FT_Q6_K, 18 },    { GGUF_FT_IQ2_XXS, 19 }, { GGUF_FT_IQ2_XS, 20 },
        { GGUF_FT_Q2_K_S, 21 },  { GGUF_FT_IQ3_XS, 22 },  { GGUF_FT_IQ3_XXS, 23 },
        { GGUF_FT_IQ1_S, 24 },   { GGUF_FT_IQ4_NL, 25 },  { GGUF_FT_IQ3_S, 26 },
        { GGUF_FT_IQ3_M, 27 },   { GGUF_FT_IQ2_S, 28 },   { GGUF_FT_IQ2_M, 29 },
        { GGUF_FT_IQ4_XS, 30 },  { GGUF_FT_IQ1_M, 31 },   { GGUF_FT_BF16, 32 },
        { GGUF_FT_TQ1_0, 36 },   { GGUF_FT_TQ2_0, 37 },   { GGUF_FT_MXFP4_MOE, 38 },
        { GGUF_FT_NVFP4, 39 },   { GGUF_FT_Q1_0, 40 },    { GGUF_FT_GUESSED, 1024 },
    };
    for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++) {
        ck_assert_int_eq(numbers[i].ours, numbers[i].llama);
        for (size_t j = 0; j < i; j++)
            ck_assert_int_ne(numbers[i].ours, numbers[j].ours);
    }
    /* llama_model_loader's guess, type by type (nvfp4 and q1_0 were -1
     * here before: a COPY of a file mostly of them wrote 1024, not
     * llama-quantize's 1063 and 1064) */
    static const struct { uint32_t type; int ft; } loader[] = {
        { GGUF_DT_F32, 0 },      { GGUF_DT_F16, 1 },      { GGUF_DT_BF16, 32 },
        { GGUF_DT_Q4_0, 2 },     { GGUF_DT_Q4_1, 3 },     { GGUF_DT_Q5_0, 8 },
        { GGUF_DT_Q5_1, 9 },     { GGUF_DT_Q8_0, 7 },     { GGUF_DT_Q2_K, 10 },
        { GGUF_DT_Q3_K, 12 },    { GGUF_DT_Q4_K, 15 },    { GGUF_DT_Q5_K, 17 },
        { GGUF_DT_Q6_K, 18 },    { GGUF_DT_TQ1_0, 36 },   { GGUF_DT_TQ2_0, 37 },
        { GGUF_DT_IQ2_XXS, 19 }, { GGUF_DT_IQ2_XS, 20 },  { GGUF_DT_IQ2_S, 28 },
        { GGUF_DT_IQ3_XXS, 23 }, { GGUF_DT_IQ1_S, 24 },   { GGUF_DT_IQ1_M, 31 },
        { GGUF_DT_IQ4_NL, 25 },  { GGUF_DT_IQ4_XS, 30 },  { GGUF_DT_IQ3_S, 26 },
        { GGUF_DT_MXFP4, 38 },   { GGUF_DT_NVFP4, 39 },   { GGUF_DT_Q1_0, 40 },
    };
    int want[GGUF_DT_COUNT];
    for (uint32_t id = 0; id < GGUF_DT_COUNT; id++)
        want[id] = -1;
    for (size_t i = 0; i < sizeof loader / sizeof *loader; i++)
        want[loader[i].type] = loader[i].ft;
    bool used[64] = { false };
    for (uint32_t id = 0; id < GGUF_DT_COUNT; id++) {
        const int ft = gguf_dtype_file_type(id);
        ck_assert_msg(ft == want[id], "%s: file type %d, llama.cpp's loader %d",
                      gguf_dtype_name(id), ft, want[id]);
        if (ft >= 0) {
            ck_assert_msg(!used[ft], "file type %d for two types", ft);
            used[ft] = true;
        }
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
    tcase_add_test(tc, test_every_id_has_a_row);
    tcase_add_test(tc, test_block_structs);
    tcase_add_test(tc, test_float_fields);
    tcase_add_test(tc, test_float_fields_are_scales);
    tcase_add_test(tc, test_fallbacks);
    tcase_add_test(tc, test_file_types);
    tcase_add_test(tc, test_file_type_guess);
    int skipped = 0;
    if (fixtures_present())
        tcase_add_test(tc, test_sizes_match_vectors);
    else
        skipped++;
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
