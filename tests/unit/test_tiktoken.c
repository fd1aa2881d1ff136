/*
 * test_tiktoken.c — Kimi K2's tiktoken.model reader (convert/tiktoken.c):
 * parsing (blank lines, padding, bad base64, bad ranks, duplicates), the
 * merges QwenModel.bpe rebuilds (below each token's own rank, two parts
 * only), Kimi's specials (added_tokens_decoder names, reserved names,
 * [PAD] past them), GPT-2's byte alphabet in the token texts.
 */
#include <ggufkit/arch.h>
#include "tiktoken.h"
#include "testutil.h"

/* a=0 b=1 c=2 " "=3 ab=4 abc=5 "  "(two spaces)=6 bc=7 "abcab"=8: "abc" is
 * ab+c (ab ranks below bc); "abcab" is abc+ab; bc (rank 7) is no merge of
 * "abc" (rank 5) since it ranks above it */
static const char model[] =
    "YQ== 0\nYg== 1\nYw== 2\nIA== 3\n\nYWI= 4\nYWJj 5\r\nICA= 6\nYmM= 7\nYWJjYWI= 8\n";

START_TEST(test_parse_and_vocab)
{
    tiktoken_ranks t;
    gguf_error err = { 0 };
    ck_assert_int_eq(tiktoken_parse(&t, "m", model, sizeof model - 1, &err), 0);
    ck_assert_uint_eq(t.n, 9);
    ck_assert_uint_eq(t.len[5], 3);
    json_value *cfg = json_of_text("{\"added_tokens_decoder\": {\"9\": {\"content\": \"[BOS]\"}, "
                                   "\"11\": {\"content\": \"<|im_end|>\"}}}");
    vocab v;
    ck_assert_msg(vocab_from_tiktoken_ranks(&v, &t, cfg, 270, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(v.pre, "kimi-k2");
    ck_assert(v.bpe);
    ck_assert_str_eq(v.tokens[3], "\xc4\xa0"); /* " " as U+0120 */
    ck_assert_str_eq(v.tokens[6], "\xc4\xa0\xc4\xa0");
    ck_assert_str_eq(v.tokens[9], "[BOS]");
    ck_assert_str_eq(v.tokens[10], "<|reserved_token_10|>");
    ck_assert_str_eq(v.tokens[11], "<|im_end|>");
    ck_assert_str_eq(v.tokens[266], "<|reserved_token_266|>");
    ck_assert_str_eq(v.tokens[267], "[PAD267]");
    ck_assert_int_eq(v.types[0], GGUF_TOKEN_NORMAL);
    ck_assert_int_eq(v.types[9], GGUF_TOKEN_CONTROL);
    ck_assert_int_eq(v.types[266], GGUF_TOKEN_CONTROL);
    ck_assert_int_eq(v.types[267], GGUF_TOKEN_UNUSED);
    ck_assert_int_eq(v.n_merges, 5);
    ck_assert_str_eq(v.merges[0], "a b");
    ck_assert_str_eq(v.merges[1], "ab c");
    ck_assert_str_eq(v.merges[2], "\xc4\xa0 \xc4\xa0");
    ck_assert_str_eq(v.merges[3], "b c");
    ck_assert_str_eq(v.merges[4], "abc ab");
    vocab_free(&v);
    /* a vocabulary smaller than the ranks keeps the first ids */
    ck_assert_int_eq(vocab_from_tiktoken_ranks(&v, &t, NULL, 4, &err), 0);
    ck_assert_int_eq(v.n, 4);
    vocab_free(&v);
    ck_assert_int_ne(vocab_from_tiktoken_ranks(&v, &t, NULL, -1, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "vocab_size"));
    json_free(cfg);
    tiktoken_free(&t);
}
END_TEST

static const struct {
    const char *text, *msg;
} bad[] = {
    { "YQ==\n", "m line 1: not a base64 token and a rank" },
    { "YQ== 0 1\n", "m line 1: not a base64 token and a rank" },
    { "YQ= 0\n", "m line 1: the token 'YQ=' is not base64" },
    { "Y=Q= 0\n", "m line 1: the token 'Y=Q=' is not base64" },
    { "YQ== 0\nYQ!= 1\n", "m line 2: the token 'YQ!=' is not base64" },
    { "YQ== -1\n", "m line 1: the rank '-1' is not a number below" },
    { "YQ== 99999999999999999999\n", "is not a number below" },
    { "\n\n", "m: no tokens" },
};

START_TEST(test_bad)
{
    tiktoken_ranks t;
    gguf_error err = { 0 };
    ck_assert_int_ne(tiktoken_parse(&t, "m", bad[_i].text, strlen(bad[_i].text), &err), 0);
    ck_assert_msg(strstr(err.msg, bad[_i].msg) != NULL, "%s", err.msg);
}
END_TEST

/* a NUL byte is no field separator (it ends no field: the token is not
 * base64), and a token longer than 1024 bytes is refused before the merges'
 * rebuild, whose time is cubic in its length */
START_TEST(test_nul_and_long)
{
    tiktoken_ranks t;
    gguf_error err = { 0 };
    static const char nul[] = "YQ==\0 0\n";
    ck_assert_int_ne(tiktoken_parse(&t, "m", nul, sizeof nul - 1, &err), 0);
    ck_assert_msg(strstr(err.msg, "m line 1: the token") != NULL, "%s", err.msg);
    /* 1026 bytes of 'a' in base64: 342 groups of "YWFh" */
    char line[342 * 4 + 8];
    for (int i = 0; i < 342; i++)
        memcpy(line + 4 * i, "YWFh", 4);
    memcpy(line + 342 * 4, " 0\n", 4);
    err = (gguf_error){ 0 };
    ck_assert_int_ne(tiktoken_parse(&t, "m", line, 342 * 4 + 3, &err), 0);
    ck_assert_msg(strstr(err.msg, "m line 1: a token of 1026 bytes (at most 1024)") != NULL, "%s", err.msg);
    /* 1024 bytes: taken */
    memcpy(line + 341 * 4, "YQ==", 4);
    err = (gguf_error){ 0 };
    ck_assert_int_eq(tiktoken_parse(&t, "m", line, 342 * 4 + 3, &err), 0);
    ck_assert_uint_eq(t.len[0], 1024);
    tiktoken_free(&t);
}
END_TEST

START_TEST(test_duplicates)
{
    tiktoken_ranks t;
    gguf_error err = { 0 };
    vocab v;
    static const char dup_token[] = "YQ== 0\nYQ== 1\n", dup_rank[] = "YQ== 0\nYg== 0\n";
    ck_assert_int_eq(tiktoken_parse(&t, "m", dup_token, sizeof dup_token - 1, &err), 0);
    ck_assert_int_ne(vocab_from_tiktoken_ranks(&v, &t, NULL, 10, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "appears twice"));
    tiktoken_free(&t);
    ck_assert_int_eq(tiktoken_parse(&t, "m", dup_rank, sizeof dup_rank - 1, &err), 0);
    ck_assert_int_ne(vocab_from_tiktoken_ranks(&v, &t, NULL, 10, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "rank 0 is given twice"));
    tiktoken_free(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tiktoken");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parse_and_vocab);
    tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, test_nul_and_long);
    tcase_add_test(tc, test_duplicates);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
