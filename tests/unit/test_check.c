/*
 * test_check.c — inspect/check.c's llama.cpp line: e21cdc11's deepseek2
 * loader takes 26 or 27 blocks, or 48 with a 128256-token vocabulary, for
 * "lite" (no q_lora_rank read): a file without the key at another count
 * is refused, and a lite file with a q_lora_rank above 0 too; the key at
 * 0, or any q_lora_rank at a non-lite count, loads. check_llama_loader
 * reads the counts from a file (vocab_size, else the token list) and looks
 * at deepseek2 files only.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testutil.h"

START_TEST(test_lite_rule)
{
    char msg[512];
    /* lite counts without the key: loads */
    ck_assert_int_eq(check_deepseek2_lite("deepseek2", 27, 102400, -1, msg, sizeof msg), 0);
    ck_assert_int_eq(check_deepseek2_lite("deepseek2", 26, 128256, -1, msg, sizeof msg), 0);
    ck_assert_int_eq(check_deepseek2_lite("deepseek2", 48, 128256, -1, msg, sizeof msg), 0);
    ck_assert_int_eq(check_deepseek2_lite("deepseek2", 27, 102400, 0, msg, sizeof msg), 0);
    /* not lite: the key is required, at any value */
    ck_assert_int_eq(check_deepseek2_lite("deepseek2", 60, 102400, 1536, msg, sizeof msg), 0);
    ck_assert_int_eq(check_deepseek2_lite("deepseek2", 3, 512, 0, msg, sizeof msg), 0);
    ck_assert_int_eq(check_deepseek2_lite("deepseek2", 47, 154880, 768, msg, sizeof msg), 0);
    ck_assert_int_eq(check_deepseek2_lite("deepseek2", 48, 154880, 768, msg, sizeof msg), 0);
    ck_assert_int_eq(check_deepseek2_lite("deepseek2", 48, 128000, -1, msg, sizeof msg), 1);
    ck_assert_str_eq(msg, "deepseek2.attention.q_lora_rank is missing: llama.cpp e21cdc11 loads a deepseek2 "
                          "without it only at 26 or 27 blocks (or 48 with 128256 tokens), not at 48 blocks "
                          "(128000 tokens): it refuses this file");
    ck_assert_int_eq(check_deepseek2_lite("deepseek2", 28, 102400, -1, msg, sizeof msg), 1);
    /* lite with a q_lora_rank: the key ignored, attn_q wanted */
    ck_assert_int_eq(check_deepseek2_lite("deepseek2", 26, 512, 32, msg, sizeof msg), 1);
    ck_assert_str_eq(msg, "deepseek2.attention.q_lora_rank = 32 at 26 blocks (512 tokens): llama.cpp "
                          "e21cdc11 takes such a deepseek2 for a lite one, ignores the key and wants attn_q "
                          "in place of attn_q_a / attn_q_b: it refuses this file");
}
END_TEST

/* A GGUF of the keys general.architecture = arch and, when >= 0,
 * deepseek2.block_count (u32), deepseek2.vocab_size (u32),
 * deepseek2.attention.q_lora_rank (u32), and a tokenizer.ggml.tokens of
 * n_tok strings (n_tok < 0: general.type "adapter" instead). No tensors. */
static size_t mkfile(unsigned char *b, const char *arch, int64_t blocks, int64_t vocab, int64_t q_lora,
                     int n_tok)
{
    size_t o = 0;
#define PUT(v, n) do { uint64_t x_ = (v); for (int i_ = 0; i_ < (n); i_++) b[o++] = (unsigned char)(x_ >> (8 * i_)); } while (0)
#define STR(s) do { PUT(strlen(s), 8); memcpy(b + o, s, strlen(s)); o += strlen(s); } while (0)
    const int n = 1 + (blocks >= 0) + (vocab >= 0) + (q_lora >= 0) + (n_tok != 0);
    memcpy(b, "GGUF", 4);
    o = 4;
    PUT(3, 4);
    PUT(0, 8);
    PUT(n, 8);
    STR("general.architecture");
    PUT(8, 4);
    STR(arch);
    const char *keys[3] = { "deepseek2.block_count", "deepseek2.vocab_size", "deepseek2.attention.q_lora_rank" };
    const int64_t vals[3] = { blocks, vocab, q_lora };
    for (int k = 0; k < 3; k++) {
        if (vals[k] < 0)
            continue;
        STR(keys[k]);
        PUT(4, 4); /* u32 */
        PUT(vals[k], 4);
    }
    if (n_tok < 0) {
        STR("general.type");
        PUT(8, 4);
        STR("adapter");
    }
    if (n_tok > 0) {
        STR("tokenizer.ggml.tokens");
        PUT(9, 4);
        PUT(8, 4);
        PUT(n_tok, 8);
        for (int i = 0; i < n_tok; i++)
            STR("t");
    }
#undef PUT
#undef STR
    return o;
}

static int loader_of(const char *arch, int64_t blocks, int64_t vocab, int64_t q_lora, int n_tok, char *msg)
{
    static unsigned char buf[4096];
    gguf_error err = { 0 };
    gguf_file *f = gguf_open_memory(buf, mkfile(buf, arch, blocks, vocab, q_lora, n_tok), &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    msg[0] = 0;
    const int r = check_llama_loader(f, msg, 512);
    gguf_close(f);
    return r;
}

START_TEST(test_from_file)
{
    char msg[512];
    ck_assert_int_eq(loader_of("deepseek2", 3, 512, -1, 0, msg), 1);
    ck_assert_ptr_nonnull(strstr(msg, "not at 3 blocks (512 tokens)"));
    ck_assert_int_eq(loader_of("deepseek2", 3, 512, 0, 0, msg), 0);
    ck_assert_int_eq(loader_of("deepseek2", 27, 512, -1, 0, msg), 0);
    ck_assert_int_eq(loader_of("deepseek2", 27, -1, 16, 5, msg), 1);
    ck_assert_ptr_nonnull(strstr(msg, "= 16 at 27 blocks (5 tokens)"));
    /* the token list counts when there is no vocab_size */
    ck_assert_int_eq(loader_of("deepseek2", 48, -1, -1, 7, msg), 1);
    ck_assert_ptr_nonnull(strstr(msg, "not at 48 blocks (7 tokens)"));
    /* other architectures, and files not of a model: nothing to say */
    ck_assert_int_eq(loader_of("llama", 3, 512, -1, 0, msg), 0);
    ck_assert_int_eq(loader_of("deepseek2x", 3, 512, -1, 0, msg), 0);
    ck_assert_int_eq(loader_of("deepseek2", 3, 512, -1, -1, msg), 0); /* general.type adapter */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("check");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_lite_rule);
    tcase_add_test(tc, test_from_file);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
