/*
 * test_lora.c — PEFT adapter pieces of the converter: adapter_config.json
 * (what is taken, what is refused), PEFT tensor names to base names and
 * kinds, the name a folder gives (id_to_title), and lora_open's refusals
 * over a folder made here; Qwen 3.5's value-head reorder on a pair's
 * lora_b (hf_lora_linear_attn).
 */
#include "hf.h"
#include "lora.h"
#include "testutil.h"

#include <sys/stat.h>

START_TEST(test_config_ok)
{
    json_value *doc = json_of_text("{\"peft_type\": \"LORA\", \"r\": 8, \"lora_alpha\": 16, \"bias\": \"none\","
                            " \"use_dora\": false, \"use_rslora\": false, \"modules_to_save\": null,"
                            " \"alpha_pattern\": {}, \"alora_invocation_tokens\": [5, 4294967295]}");
    gguf_error err;
    lora_config c;
    ck_assert_msg(lora_config_read(doc, &c, &err) == 0, "%s", err.msg);
    ck_assert(c.alpha == 16.0f);
    ck_assert_uint_eq(c.n_alora, 2);
    ck_assert_uint_eq(c.alora_tokens[0], 5);
    ck_assert_uint_eq(c.alora_tokens[1], 4294967295u);
    lora_config_free(&c);
    json_free(doc);
    doc = json_of_text("{\"lora_alpha\": 0.5}"); /* the rest absent: as PEFT's defaults */
    ck_assert_msg(lora_config_read(doc, &c, &err) == 0, "%s", err.msg);
    ck_assert(c.alpha == 0.5f && c.n_alora == 0 && c.alora_tokens == NULL);
    lora_config_free(&c);
    json_free(doc);
}
END_TEST

static const struct {
    const char *doc, *want;
} bad[] = {
    { "[1]", "not a JSON object" },
    { "{\"r\": 8}", "no lora_alpha" },
    { "{\"lora_alpha\": \"16\"}", "lora_alpha is not a finite number" },
    { "{\"lora_alpha\": 1e39}", "lora_alpha is not a finite number" },
    { "{\"lora_alpha\": NaN}", "lora_alpha is not a finite number" },
    { "{\"lora_alpha\": 16, \"peft_type\": \"IA3\"}", "peft_type is 'IA3'" },
    { "{\"lora_alpha\": 16, \"peft_type\": 3}", "peft_type is not a string" },
    { "{\"lora_alpha\": 16, \"use_dora\": true}", "DoRA adapters" },
    { "{\"lora_alpha\": 16, \"use_rslora\": true}", "use_rslora is set" },
    { "{\"lora_alpha\": 16, \"alpha_pattern\": {\"q_proj\": 8}}", "alpha_pattern is set" },
    { "{\"lora_alpha\": 16, \"bias\": \"all\"}", "bias is 'all'" },
    { "{\"lora_alpha\": 16, \"modules_to_save\": [\"lm_head\"]}", "modules_to_save is set" },
    { "{\"lora_alpha\": 16, \"alora_invocation_tokens\": 3}", "is not an array" },
    { "{\"lora_alpha\": 16, \"alora_invocation_tokens\": [1, -1]}", "alora_invocation_tokens[1] is not a token id" },
    { "{\"lora_alpha\": 16, \"alora_invocation_tokens\": [4294967296]}", "alora_invocation_tokens[0]" },
    { "{\"lora_alpha\": 16, \"invocation_string\": \"<x>\"}", "invocation_string without" },
};

START_TEST(test_config_bad)
{
    json_value *doc = json_of_text(bad[_i].doc);
    gguf_error err = { 0 };
    lora_config c;
    ck_assert_int_eq(lora_config_read(doc, &c, &err), -1);
    ck_assert_msg(strstr(err.msg, bad[_i].want), "'%s' lacks '%s'", err.msg, bad[_i].want);
    ck_assert(c.alora_tokens == NULL);
    json_free(doc);
}
END_TEST

START_TEST(test_base_name)
{
    static const struct {
        const char *peft, *base;
        enum lora_kind kind;
    } cases[] = {
        { "base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight", "model.layers.3.self_attn.q_proj.weight", LORA_A },
        { "base_model.model.model.layers.3.mlp.experts.7.up_proj.lora_B.weight", "model.layers.3.mlp.experts.7.up_proj.weight", LORA_B },
        { "base_model.model.model.embed_tokens.lora_embedding_A", "model.embed_tokens.weight", LORA_A },
        { "base_model.model.model.embed_tokens.lora_embedding_B", "model.embed_tokens.weight", LORA_B },
        { "base_model.model.model.layers.0.self_attn.q_proj.base_layer.weight", "model.layers.0.self_attn.q_proj.base_layer.weight", LORA_SKIP },
        { "base_model.model.model.layers.0.input_layernorm.weight", "model.layers.0.input_layernorm.weight", LORA_NORM },
        { "base_model.model.model.norm.weight", "model.norm.weight", LORA_NORM },
        { "base_model.model.lm_head.weight", "lm_head.weight", LORA_OTHER },
        { "base_model.model.model.layers.0.self_attn.q_proj.lora_magnitude_vector", "model.layers.0.self_attn.q_proj.lora_magnitude_vector", LORA_OTHER },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[256];
        enum lora_kind k;
        ck_assert_int_eq(lora_base_name(cases[i].peft, out, sizeof out, &k), 0);
        ck_assert_str_eq(out, cases[i].base);
        ck_assert_int_eq(k, cases[i].kind);
    }
    char small[8];
    enum lora_kind k;
    ck_assert_int_eq(lora_base_name("base_model.model.x.lora_A.weight", small, sizeof small, &k), -1);
}
END_TEST

START_TEST(test_title)
{
    static const char *const cases[][2] = {
        { "/a/qwen3-lora", "Qwen3 Lora" }, { "adapter/", "Adapter" }, { "x/my-Lora-v2.1", "My Lora v2.1" },
        { "llama-3b-it", "Llama 3b It" }, { "phi3b_x", "Phi3B_X" }, { "ABC-def", "ABC Def" },
        { "--a--b-", "A B" }, { "v2x", "V2X" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *t = lora_title(cases[i][0]);
        ck_assert_str_eq(t, cases[i][1]);
        free(t);
    }
}
END_TEST

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    ck_assert(fp != NULL);
    fputs(text, fp);
    fclose(fp);
}

START_TEST(test_open_refusals)
{
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/lora-open", test_tmpdir());
    mkdir(dir, 0755);
    ck_assert(lora_detect(dir) == false);
    src_model m;
    gguf_error err = { 0 };
    snprintf(path, sizeof path, "%s/adapter_model.safetensors", dir);
    write_file(path, "not safetensors");
    ck_assert(lora_detect(dir));
    ck_assert_int_eq(lora_open(dir, "/nonexistent", &m, &err), -1);
    ck_assert_msg(strstr(err.msg, "adapter_config.json: not found"), "%s", err.msg);
    src_model_free(&m);
    snprintf(path, sizeof path, "%s/adapter_config.json", dir);
    write_file(path, "{\"lora_alpha\": 8,}");
    ck_assert_int_eq(lora_open(dir, "/nonexistent", &m, &err), -1);
    ck_assert_msg(strstr(err.msg, "adapter_config.json: line 1"), "%s", err.msg);
    src_model_free(&m);
    write_file(path, "{\"lora_alpha\": 8}");
    ck_assert_int_eq(lora_open(dir, "/nonexistent", &m, &err), -1);
    ck_assert_msg(strstr(err.msg, "adapter_model.safetensors: "), "%s", err.msg);
    src_model_free(&m);
}
END_TEST

/* lora_b {rank 8, out}: in_proj_qkv's v rows after 2 × 2 × 32 q and k
 * rows, in_proj_z's and in_proj_a's rows, as the base tensor's; the output
 * projection and roles outside the linear attention untouched; no reorder
 * when key and value heads are as many. */
START_TEST(test_linear_attn_lora)
{
    json_value *cfg = json_of_text("{\"linear_num_key_heads\": 2, \"linear_num_value_heads\": 4,"
                                   " \"linear_key_head_dim\": 32, \"linear_value_head_dim\": 32}");
    gguf_error err = { 0 };
    static const struct { int role; int64_t out; int32_t first, dim; } c[] = {
        { GGUF_ROLE_ATTN_QKV, 256, 128, 32 }, { GGUF_ROLE_ATTN_GATE, 128, 0, 32 },
        { GGUF_ROLE_SSM_ALPHA, 4, 0, 1 },     { GGUF_ROLE_SSM_BETA, 4, 0, 1 },
        { GGUF_ROLE_SSM_OUT, 128, 0, 0 },     { GGUF_ROLE_ATTN_Q, 256, 0, 0 },
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        src_tensor t = { .n_dims = 2, .ne = { 8, c[i].out, 1, 1 } };
        ck_assert_msg(hf_lora_linear_attn(cfg, &t, c[i].role, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(t.vh_first, c[i].first);
        ck_assert_int_eq(t.vh_dim, c[i].dim);
        ck_assert_int_eq(t.vh_k, c[i].dim ? 2 : 0);
        ck_assert_int_eq(t.vh_per_k, c[i].dim ? 2 : 0);
        ck_assert(!t.vh_cols);
    }
    src_tensor odd = { .n_dims = 2, .ne = { 8, 200, 1, 1 } };
    ck_assert_int_eq(hf_lora_linear_attn(cfg, &odd, GGUF_ROLE_ATTN_QKV, &err), -1);
    ck_assert_msg(strstr(err.msg, "200 rows, expected 256"), "%s", err.msg);
    json_free(cfg);
    cfg = json_of_text("{\"linear_num_key_heads\": 4, \"linear_num_value_heads\": 4,"
                       " \"linear_key_head_dim\": 32, \"linear_value_head_dim\": 32}");
    src_tensor t = { .n_dims = 2, .ne = { 8, 384, 1, 1 } };
    ck_assert_int_eq(hf_lora_linear_attn(cfg, &t, GGUF_ROLE_ATTN_QKV, &err), 0);
    ck_assert_int_eq(t.vh_k, 0);
    json_free(cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lora");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_config_ok);
    tcase_add_loop_test(tc, test_config_bad, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, test_base_name);
    tcase_add_test(tc, test_title);
    tcase_add_test(tc, test_open_refusals);
    tcase_add_test(tc, test_linear_attn_lora);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
