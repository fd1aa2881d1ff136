/*
 * test_spm.c — tokenizer.model reading: the pieces of the fixture models
 * equal the vocabularies llama.cpp wrote for them (text, score, type), and
 * malformed protobufs fail with the byte offset.
 */
#include <ggufkit/gguf.h>
#include "spm.h"
#include "testutil.h"

/* Compares an spm model with a GGUF's tokenizer.ggml.* arrays. llama.cpp
 * writes SentencePiece types as token types, except that user-defined
 * pieces become normal ones. */
static void compare(const char *model_rel, const char *gguf_rel)
{
    char mp[1024], gp[1024];
    gguf_error err;
    spm_model m;
    ck_assert_ptr_nonnull(fixture_path(mp, sizeof mp, model_rel));
    ck_assert_ptr_nonnull(fixture_path(gp, sizeof gp, gguf_rel));
    ck_assert_msg(spm_load(mp, &m, &err) == 0, "%s: %s", model_rel, err.msg);
    gguf_file *f = gguf_open(gp, 0, &err);
    ck_assert_ptr_nonnull(f);
    const gguf_kv *tok = gguf_lookup_kv(f, "tokenizer.ggml.tokens");
    const gguf_kv *sc = gguf_lookup_kv(f, "tokenizer.ggml.scores");
    const gguf_kv *ty = gguf_lookup_kv(f, "tokenizer.ggml.token_type");
    ck_assert_uint_eq(tok->n, m.n);
    for (size_t i = 0; i < m.n; i++) {
        const spm_piece *p = &m.pieces[i];
        ck_assert_msg(tok->strs[i].len == p->len && !memcmp(tok->strs[i].ptr, p->text, p->len),
                      "%s: piece %zu text differs", model_rel, i);
        ck_assert_msg((float)gguf_kv_elem_as_double(sc, i) == p->score, "%s: piece %zu score", model_rel, i);
        int want = p->type == SPM_USER_DEFINED ? SPM_NORMAL : p->type;
        ck_assert_msg(gguf_kv_elem_as_int(ty, i) == want, "%s: piece %zu type %d vs %lld", model_rel,
                      i, p->type, (long long)gguf_kv_elem_as_int(ty, i));
    }
    gguf_close(f);
    spm_free(&m);
}

START_TEST(test_wp_llama)
{
    compare("models/wp-llama-5m/hf/tokenizer.model", "reference/wp-llama-5m-f16.gguf");
}
END_TEST

START_TEST(test_llama2)
{
    compare("tokenizers/llama2/tokenizer.model", "models/llama-2-tiny-random/llama-2-tiny-random.gguf");
}
END_TEST

START_TEST(test_trainer_spec)
{
    char path[1024];
    gguf_error err;
    spm_model m;
    ck_assert_ptr_nonnull(fixture_path(path, sizeof path, "models/wp-llama-5m/hf/tokenizer.model"));
    ck_assert_int_eq(spm_load(path, &m, &err), 0);
    ck_assert_int_eq(m.model_type, 2); /* BPE */
    ck_assert_int_eq(m.unk_id, 0);
    ck_assert_int_eq(m.bos_id, 1);
    ck_assert_int_eq(m.eos_id, 2);
    ck_assert(m.byte_fallback);
    ck_assert_str_eq(m.pieces[3].text, "<0x00>");
    ck_assert_int_eq(m.pieces[3].type, SPM_BYTE);
    spm_free(&m);
}
END_TEST

static const struct {
    const char *bytes;
    size_t len;
    const char *want;
} bad[] = {
    { "", 0, "no pieces" },
    { "\x0a\x05\x0a\x01", 4, "length 5 runs past the end" },
    { "\x0a\x80", 2, "truncated varint" },
    { "\x0b", 1, "unsupported wire type 3" },
    { "\x0a\x04\x0a\x01\x61\x15", 6, "truncated 32-bit field" },
    { "\x0a\x06\x0a\x01\x61\x18\x09\x00", 8, "unknown piece type 9" },
    { "\x12\x02\x18\xff", 4, "truncated varint" },
    { "\x09\x01\x02", 3, "truncated 64-bit field" },
    { "\x00", 1, "bad field key" },
    { "\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 12, "varint longer" },
    /* scores that are not finite (a GGUF vocabulary holds none) */
    { "\x0a\x09\x0a\x02\x61\x62\x15\x00\x00\xc0\x7f", 11,
      "byte 7: piece 0 has a non-finite score (NaN)" },
    { "\x0a\x04\x0a\x02\x61\x62\x0a\x09\x0a\x02\x63\x64\x15\x00\x00\x80\xff", 17,
      "byte 13: piece 1 has a non-finite score (-Inf)" },
};

START_TEST(test_bad)
{
    spm_model m;
    gguf_error err;
    ck_assert_int_eq(spm_parse((const uint8_t *)bad[_i].bytes, bad[_i].len, &m, &err), -1);
    ck_assert_msg(strstr(err.msg, bad[_i].want) != NULL, "case %d: got '%s'", _i, err.msg);
}
END_TEST

START_TEST(test_minimal)
{
    /* one piece "ab", score 0.5, control; an unknown fixed64 field skipped */
    static const uint8_t b[] = { 0x0a, 0x09, 0x0a, 0x02, 'a', 'b', 0x15, 0x00, 0x00, 0x00, 0x3f,
                                 0x09, 1, 2, 3, 4, 5, 6, 7, 8 };
    spm_model m;
    gguf_error err;
    ck_assert_msg(spm_parse(b, sizeof b, &m, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(m.n, 1);
    ck_assert_str_eq(m.pieces[0].text, "ab");
    ck_assert(m.pieces[0].score == 0.5f);
    ck_assert_int_eq(m.pieces[0].type, SPM_NORMAL);
    spm_free(&m);
    static const uint8_t c[] = { 0x0a, 0x06, 0x0a, 0x02, 'x', 'y', 0x18, 0x03,
                                 0x09, 1, 2, 3, 4, 5, 6, 7, 8 };
    ck_assert_msg(spm_parse(c, sizeof c, &m, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.pieces[0].type, SPM_CONTROL);
    spm_free(&m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("spm");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, test_minimal);
    int skipped = 0;
    if (fixtures_present()) {
        tcase_add_test(tc, test_wp_llama);
        tcase_add_test(tc, test_llama2);
        tcase_add_test(tc, test_trainer_spec);
    } else {
        skipped += 3;
    }
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
