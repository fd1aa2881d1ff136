/*
 * test_repair.c — GGUF_OPEN_REPAIR: what the reader recovers from (a key
 * or tensor name that occurs twice, a general.alignment that is not a u32
 * power of two), what it says about each repair, and what stays an error
 * (truncated, overlapping or misplaced data).
 *
 * Not for: the strict reader's verdicts (test_validate.c) or gguf-edit
 * --repair writing the result (tests/e2e/edit.sh).
 */
#include <ggufkit/gguf.h>
#include "testutil.h"
#include "badgguf.h"

/* Opens an image with flags; the buffer stays alive in *b. */
static gguf_file *open_img(const bg_buf *b, unsigned flags, gguf_error *err)
{
    memset(err, 0, sizeof *err);
    return gguf_open_memory_flags(b->p, b->len, flags, err);
}

static bool any_repair_has(const gguf_file *f, const char *needle)
{
    for (uint64_t i = 0; i < gguf_n_repairs(f); i++)
        if (strstr(gguf_repair_at(f, i), needle))
            return true;
    return false;
}

START_TEST(test_valid_needs_nothing)
{
    bg_buf b = { 0 };
    bg_valid_image(&b);
    gguf_error err;
    gguf_file *f = open_img(&b, GGUF_OPEN_REPAIR, &err);
    ck_assert_msg(f, "%s", err.msg);
    ck_assert_uint_eq(gguf_n_repairs(f), 0);
    ck_assert_ptr_null(gguf_repair_at(f, 0));
    ck_assert_uint_eq(gguf_n_kv(f), BG_VALID_N_KV);
    ck_assert_uint_eq(gguf_n_tensors(f), BG_VALID_N_TENSORS);
    gguf_close(f);
    bg_free(&b);
}
END_TEST

/* general.name written twice: "first" then "second"; the kv after it must
 * still be found by name. */
static void dup_name_image(bg_buf *b, bg_layout *L)
{
    bg_model m;
    bg_valid_model(&m);
    m.kv[BG_KV_NAME].str = "first";
    bg_add_str(&m, "general.name", "second");
    *L = bg_write(&m, b);
}

START_TEST(test_duplicate_key_keep_last)
{
    bg_buf b = { 0 };
    bg_layout L;
    dup_name_image(&b, &L);
    gguf_error err;
    ck_assert_ptr_null(open_img(&b, 0, &err)); /* strict: refused */
    ck_assert_ptr_nonnull(strstr(err.msg, "duplicate key 'general.name'"));

    gguf_file *f = open_img(&b, GGUF_OPEN_REPAIR, &err);
    ck_assert_msg(f, "%s", err.msg);
    ck_assert_uint_eq(gguf_n_kv(f), BG_VALID_N_KV); /* one of the 16 dropped */
    gguf_str s;
    ck_assert_int_eq(gguf_get_str(f, "general.name", &s, NULL), 0);
    ck_assert(gguf_str_eq(s, "second"));
    ck_assert_uint_eq(gguf_lookup_kv(f, "general.name")->offset, L.kv_at[BG_VALID_N_KV]);
    /* every other key is still found, in file order */
    ck_assert_str_eq(gguf_kv_at(f, 0)->key, "general.architecture");
    ck_assert_str_eq(gguf_kv_at(f, 1)->key, "general.alignment");
    ck_assert_str_eq(gguf_kv_at(f, BG_VALID_N_KV - 1)->key, "general.name");
    for (uint64_t i = 0; i < gguf_n_kv(f); i++)
        ck_assert_ptr_eq(gguf_lookup_kv(f, gguf_kv_at(f, i)->key), gguf_kv_at(f, i));
    uint64_t n;
    ck_assert_ptr_nonnull(gguf_lookup_kv(f, "tokenizer.ggml.tokens"));
    ck_assert_ptr_nonnull(gguf_kv_array(gguf_lookup_kv(f, "tokenizer.ggml.scores"), GGUF_VT_F32, &n));
    ck_assert_uint_eq(n, 4);
    ck_assert_uint_eq(gguf_n_repairs(f), 1);
    char want[200];
    snprintf(want, sizeof want, "duplicate key 'general.name': kept the last (offset %zu, str "
             "\"second\"), dropped the one at offset %zu (str \"first\")",
             L.kv_at[BG_VALID_N_KV], L.kv_at[BG_KV_NAME]);
    ck_assert_str_eq(gguf_repair_at(f, 0), want);
    gguf_close(f);
    bg_free(&b);
}
END_TEST

START_TEST(test_duplicate_key_keep_first)
{
    bg_buf b = { 0 };
    bg_layout L;
    dup_name_image(&b, &L);
    gguf_error err;
    gguf_file *f = open_img(&b, GGUF_OPEN_REPAIR | GGUF_OPEN_KEEP_FIRST, &err);
    ck_assert_msg(f, "%s", err.msg);
    ck_assert_uint_eq(gguf_n_kv(f), BG_VALID_N_KV);
    gguf_str s;
    ck_assert_int_eq(gguf_get_str(f, "general.name", &s, NULL), 0);
    ck_assert(gguf_str_eq(s, "first"));
    ck_assert_str_eq(gguf_kv_at(f, BG_KV_NAME)->key, "general.name");
    ck_assert(any_repair_has(f, "kept the first"));
    ck_assert(any_repair_has(f, "(str \"second\")"));
    gguf_close(f);
    bg_free(&b);
}
END_TEST

/* Three copies of one key of different types: two repairs, one stays. */
START_TEST(test_duplicate_key_three)
{
    bg_model m;
    bg_valid_model(&m);
    bg_add_scalar(&m, "test.u8", BG_U32, 7);
    bg_add_scalar(&m, "test.u8", BG_F32, bg_f32_bits(1.5f));
    bg_buf b = { 0 };
    bg_write(&m, &b);
    for (int keep_first = 0; keep_first < 2; keep_first++) {
        gguf_error err;
        gguf_file *f = open_img(&b, GGUF_OPEN_REPAIR | (keep_first ? GGUF_OPEN_KEEP_FIRST : 0u), &err);
        ck_assert_msg(f, "%s", err.msg);
        ck_assert_uint_eq(gguf_n_kv(f), BG_VALID_N_KV);
        ck_assert_uint_eq(gguf_n_repairs(f), 2);
        const gguf_kv *kv = gguf_lookup_kv(f, "test.u8");
        ck_assert_uint_eq(kv->type, keep_first ? GGUF_VT_U8 : GGUF_VT_F32);
        ck_assert(any_repair_has(f, keep_first ? "kept the first (offset" : "f32 1.5), dropped"));
        ck_assert(any_repair_has(f, "(u32 7)"));
        gguf_close(f);
    }
    bg_free(&b);
}
END_TEST

/* 100 extra copies of a key: 64 sentences and one with the rest's count. */
START_TEST(test_many_duplicates_bounded)
{
    bg_model m;
    bg_valid_model(&m);
    for (int i = 0; i < 100 && m.n_kv < BG_MAX_KV; i++)
        bg_add_scalar(&m, "test.again", BG_U32, (uint64_t)i);
    const uint64_t copies = m.n_kv - BG_VALID_N_KV;
    ck_assert_uint_ge(copies, 66);
    bg_buf b = { 0 };
    bg_write(&m, &b);
    gguf_error err;
    gguf_file *f = open_img(&b, GGUF_OPEN_REPAIR, &err);
    ck_assert_msg(f, "%s", err.msg);
    ck_assert_uint_eq(gguf_n_kv(f), BG_VALID_N_KV + 1);
    uint32_t v;
    ck_assert_int_eq(gguf_get_u32(f, "test.again", &v, NULL), 0);
    ck_assert_uint_eq(v, copies - 1);
    ck_assert_uint_eq(gguf_n_repairs(f), 65);
    char want[96];
    snprintf(want, sizeof want, "%" PRIu64 " more repairs of these kinds, not listed", copies - 1 - 64);
    ck_assert_str_eq(gguf_repair_at(f, 64), want);
    gguf_close(f);
    bg_free(&b);
}
END_TEST

START_TEST(test_duplicate_tensor)
{
    bg_model m;
    bg_valid_model(&m);
    m.t[BG_T_FFN].name = m.t[BG_T_EMBD].name;
    m.t[BG_T_FFN].name_len = m.t[BG_T_EMBD].name_len;
    bg_buf b = { 0 };
    bg_layout L = bg_write(&m, &b);
    for (int keep_first = 0; keep_first < 2; keep_first++) {
        gguf_error err;
        gguf_file *f = open_img(&b, GGUF_OPEN_REPAIR | (keep_first ? GGUF_OPEN_KEEP_FIRST : 0u), &err);
        ck_assert_msg(f, "%s", err.msg);
        ck_assert_uint_eq(gguf_n_tensors(f), 1);
        const gguf_tensor *t = gguf_lookup_tensor(f, "token_embd.weight");
        ck_assert_ptr_eq(t, gguf_tensor_at(f, 0));
        ck_assert_uint_eq(t->type, keep_first ? GGUF_DT_F32 : GGUF_DT_Q8_0);
        ck_assert_ptr_eq(t->data, b.p + L.data_at + (keep_first ? 0 : 64));
        char want[240];
        snprintf(want, sizeof want, "duplicate tensor name 'token_embd.weight': kept the %s (info "
                 "at offset %zu: %s), dropped the one at offset %zu (%s)",
                 keep_first ? "first" : "last", L.t_at[keep_first ? 0 : 1],
                 keep_first ? "f32 [8, 2], data at offset 0" : "q8_0 [32, 2], data at offset 64",
                 L.t_at[keep_first ? 1 : 0],
                 keep_first ? "q8_0 [32, 2], data at offset 64" : "f32 [8, 2], data at offset 0");
        ck_assert_str_eq(gguf_repair_at(f, 0), want);
        gguf_close(f);
    }
    bg_free(&b);
}
END_TEST

/* A bad general.alignment of each kind, data laid out for 32: the key
 * goes and the alignment is 32. */
START_TEST(test_alignment_bad_value)
{
    static const uint64_t a32[] = { 32 };
    static const struct { uint32_t type; uint64_t bits; const char *says; } cases[] = {
        { BG_U32, 0, "(u32 0)" },    { BG_U32, 3, "(u32 3)" },   { BG_U32, 48, "(u32 48)" },
        { BG_I32, 32, "(i32 32)" },  { BG_U64, 32, "(u64 32)" }, { BG_STR, 0, "(str \"32\")" },
        { BG_ARR, 0, "(arr[u32] of 1)" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        bg_model m;
        bg_valid_model(&m);
        bg_kv *kv = &m.kv[BG_KV_ALIGN];
        kv->type = cases[c].type;
        kv->bits = cases[c].bits;
        kv->str = "32";
        kv->elem_type = cases[c].type == BG_ARR ? BG_U32 : cases[c].type;
        kv->n = 1;
        kv->elems = a32;
        bg_buf b = { 0 };
        bg_layout L = bg_write(&m, &b);
        gguf_error err;
        ck_assert_ptr_null(open_img(&b, 0, &err));
        gguf_file *f = open_img(&b, GGUF_OPEN_REPAIR, &err);
        ck_assert_msg(f, "case %zu: %s", c, err.msg);
        ck_assert_uint_eq(gguf_alignment(f), 32);
        ck_assert_ptr_null(gguf_lookup_kv(f, "general.alignment"));
        ck_assert_uint_eq(gguf_n_kv(f), BG_VALID_N_KV - 1);
        ck_assert_uint_eq(gguf_data_offset(f, 0), L.data_at);
        ck_assert_ptr_eq(gguf_tensor_at(f, 1)->data, b.p + L.data_at + 64);
        ck_assert_uint_eq(gguf_n_repairs(f), 1);
        ck_assert_msg(strstr(gguf_repair_at(f, 0), cases[c].says), "%s", gguf_repair_at(f, 0));
        ck_assert_msg(strstr(gguf_repair_at(f, 0), "laid out for alignment 32"), "%s",
                      gguf_repair_at(f, 0));
        gguf_close(f);
        bg_free(&b);
    }
}
END_TEST

/* Data laid out for 64 under a bad key: 64 is found, with and without the
 * old value as a hint. */
START_TEST(test_alignment_inferred_64)
{
    for (int hint = 0; hint < 2; hint++) {
        bg_model m;
        bg_valid_model(&m);
        m.alignment = 64;
        m.kv[BG_KV_ALIGN].type = hint ? BG_I32 : BG_STR;
        m.kv[BG_KV_ALIGN].elem_type = m.kv[BG_KV_ALIGN].type;
        m.kv[BG_KV_ALIGN].bits = 64;
        m.kv[BG_KV_ALIGN].str = "sixty-four";
        bg_buf b = { 0 };
        bg_layout L = bg_write(&m, &b);
        gguf_error err;
        gguf_file *f = open_img(&b, GGUF_OPEN_REPAIR, &err);
        ck_assert_msg(f, "%s", err.msg);
        ck_assert_uint_eq(gguf_alignment(f), 64);
        ck_assert_uint_eq(gguf_data_offset(f, 0), L.data_at);
        ck_assert(any_repair_has(f, "laid out for alignment 64"));
        gguf_close(f);
        bg_free(&b);
    }
}
END_TEST

/* What repair never guesses around: bytes after the data that fit no
 * alignment, unaligned offsets under a good key, truncation, overlap. */
START_TEST(test_not_repaired)
{
    gguf_error err;
    {   /* bad key and 100 stray bytes at the end: no alignment fits */
        bg_model m;
        bg_valid_model(&m);
        m.kv[BG_KV_ALIGN].type = BG_I32;
        m.kv[BG_KV_ALIGN].elem_type = BG_I32;
        bg_buf b = { 0 };
        bg_write(&m, &b);
        bg_fill(&b, 0, 100);
        ck_assert_ptr_null(open_img(&b, GGUF_OPEN_REPAIR, &err));
        ck_assert_msg(strstr(err.msg, "general.alignment at offset") &&
                      strstr(err.msg, "no alignment fits the tensor data"), "%s", err.msg);
        bg_free(&b);
    }
    {   /* good key, unaligned offset */
        bg_buf b = { 0 };
        bg_layout L = bg_valid_image(&b);
        bg_set_u64(&b, L.t_offset_at[BG_T_FFN], 68);
        ck_assert_ptr_null(open_img(&b, GGUF_OPEN_REPAIR, &err));
        ck_assert_ptr_nonnull(strstr(err.msg, "is not a multiple of the alignment 32"));
        bg_free(&b);
    }
    {   /* overlap: both tensors at offset 0 */
        bg_buf b = { 0 };
        bg_layout L = bg_valid_image(&b);
        bg_set_u64(&b, L.t_offset_at[BG_T_FFN], 0);
        ck_assert_ptr_null(open_img(&b, GGUF_OPEN_REPAIR, &err));
        ck_assert_ptr_nonnull(strstr(err.msg, "overlaps"));
        bg_free(&b);
    }
    {   /* a duplicate key in a truncated file: still truncated */
        bg_buf b = { 0 };
        bg_layout L;
        dup_name_image(&b, &L);
        for (size_t n = 0; n < b.len; n += (n < L.infos_end ? 1 : 7)) {
            gguf_file *f = gguf_open_memory_flags(b.p, n, GGUF_OPEN_REPAIR, &err);
            ck_assert_msg(!f || n >= L.data_end, "truncated at %zu opened", n);
            gguf_close(f);
        }
        bg_free(&b);
    }
}
END_TEST

static Suite *repair_suite(void)
{
    Suite *s = suite_create("repair");
    TCase *tc = tcase_create("repair");
    tcase_add_test(tc, test_valid_needs_nothing);
    tcase_add_test(tc, test_duplicate_key_keep_last);
    tcase_add_test(tc, test_duplicate_key_keep_first);
    tcase_add_test(tc, test_duplicate_key_three);
    tcase_add_test(tc, test_many_duplicates_bounded);
    tcase_add_test(tc, test_duplicate_tensor);
    tcase_add_test(tc, test_alignment_bad_value);
    tcase_add_test(tc, test_alignment_inferred_64);
    tcase_add_test(tc, test_not_repaired);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(repair_suite(), 0);
}
