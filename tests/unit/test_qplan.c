/*
 * test_qplan.c — the quantization plan shared by gguf-quantize and
 * gguf-convert's one pass (common/qplan.c): model facts from names, a
 * tensor's type (ggml_n_dims' trailing 1s, COPY, what is not
 * quantizable, a --tensor-type rule first), the importance-matrix
 * refusals and lookups (size checked, token_embd's ignored, per expert),
 * and the keys a quantized file gets.
 */
#include <string.h>

#include "qplan.h"
#include "testutil.h"

static const char *const NAMES[] = { "token_embd.weight", "blk.0.attn_q.weight",
                                     "blk.0.attn_v.weight", "blk.1.attn_v.weight",
                                     "blk.0.ffn_down.weight", "output.weight" };

static const char *name_at(const void *ctx, uint64_t i) { return ((const char *const *)ctx)[i]; }

START_TEST(test_facts_names)
{
    policy_model m = { .n_layer = 80, .n_head = 64, .n_head_kv = 8 };
    qplan_facts_names(&m, "llama", name_at, NAMES, 6);
    ck_assert_int_eq(m.n_attention_wv, 2);
    ck_assert(m.has_output && m.is_70b && !m.falcon);
    policy_model t = { .n_layer = 2, .n_head = 4, .n_head_kv = 4 };
    qplan_facts_names(&t, "qwen3", name_at, NAMES, 5); /* no output: tied */
    ck_assert(!t.has_output && !t.is_70b);
    /* an unregistered architecture: by name, MLA's attn_kv_b too */
    ck_assert(qplan_is_attention_wv(NULL, "blk.3.attn_kv_b.weight"));
    ck_assert(qplan_is_attention_wv(gguf_arch_find("phi3"), "blk.0.attn_qkv.weight"));
    ck_assert(!qplan_is_attention_wv(gguf_arch_find("llama"), "blk.0.attn_k.weight"));
}
END_TEST

START_TEST(test_tensor_type)
{
    const policy_model m = { .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_attention_wv = 2 };
    const policy_opts pol = { -1, -1, false, false };
    const preset *q4 = preset_find("Q4_K_M"), *copy = preset_find("COPY");
    policy_state st = { 0 };
    recipe rec;
    recipe_init(&rec);
    gguf_error err;
    char why[128];
    uint32_t t;
    const int64_t w[4] = { 256, 512, 1, 1 }, col[4] = { 256, 1, 1, 1 };
    ck_assert_ptr_nonnull(q4);
    ck_assert_int_eq(qplan_tensor_type(&m, &st, &pol, &rec, q4, "blk.0.ffn_up.weight", 2, w,
                                       GGUF_DT_BF16, &t, why, sizeof why, &err), 0);
    ck_assert_uint_eq(t, GGUF_DT_Q4_K);
    /* [256, 1] counts as 1-D (ggml_n_dims): not quantizable, kept */
    ck_assert_int_eq(qplan_tensor_type(&m, &st, &pol, &rec, q4, "blk.0.ffn_gate_inp_shexp.weight",
                                       2, col, GGUF_DT_BF16, &t, why, sizeof why, &err), 0);
    ck_assert_uint_eq(t, GGUF_DT_BF16);
    ck_assert_int_eq(qplan_tensor_type(&m, &st, &pol, &rec, q4, "blk.0.attn_norm.weight", 1, col,
                                       GGUF_DT_F32, &t, why, sizeof why, &err), 0);
    ck_assert_uint_eq(t, GGUF_DT_F32);
    ck_assert_int_eq(qplan_tensor_type(&m, &st, &pol, &rec, copy, "blk.0.ffn_up.weight", 2, w,
                                       GGUF_DT_BF16, &t, why, sizeof why, &err), 0);
    ck_assert_uint_eq(t, GGUF_DT_BF16);
    /* a --tensor-type rule wins */
    ck_assert_int_eq(recipe_add_rule_arg(&rec, "ffn_up=q8_0", &err), 0);
    ck_assert_int_eq(qplan_tensor_type(&m, &st, &pol, &rec, q4, "blk.1.ffn_up.weight", 2, w,
                                       GGUF_DT_BF16, &t, why, sizeof why, &err), 0);
    ck_assert_uint_eq(t, GGUF_DT_Q8_0);
    recipe_free(&rec);
}
END_TEST

START_TEST(test_imatrix_rules)
{
    gguf_error err;
    bool needs = false;
    const float *w;
    /* required without a matrix, but for token_embd and output; --dry-run notes it */
    ck_assert_int_eq(qplan_require_imatrix(false, "blk.0.attn_q.weight", GGUF_DT_IQ2_XXS,
                                           GGUF_FT_IQ2_XXS, false, &needs, &err), -1);
    ck_assert_str_eq(err.msg, "this quantization requires an importance matrix (--imatrix): "
                     "tensor 'blk.0.attn_q.weight' would be iq2_xxs");
    ck_assert_int_eq(qplan_require_imatrix(false, "output.weight", GGUF_DT_IQ2_XXS,
                                           GGUF_FT_IQ2_XXS, false, &needs, &err), 0);
    ck_assert_int_eq(qplan_require_imatrix(false, "blk.0.attn_q.weight", GGUF_DT_Q2_K,
                                           GGUF_FT_Q2_K_S, true, &needs, &err), 0);
    ck_assert(needs);
    ck_assert_int_eq(qplan_require_imatrix(false, "blk.0.attn_q.weight", GGUF_DT_Q2_K,
                                           GGUF_FT_Q2_K, false, &needs, &err), 0);
    /* lookups: one entry of 8 values (2 experts of 4) */
    float vals[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    gguf_imatrix_entry e[2] = { { .name = "blk.0.ffn_up_exps.weight", .nval = 8, .weights = vals },
                                { .name = "token_embd.weight", .nval = 3, .weights = vals } };
    gguf_imatrix im = { .n = 2, .entries = e };
    const int64_t exps[4] = { 4, 16, 2, 1 }, other[4] = { 5, 16, 2, 1 }, embd[4] = { 4, 16, 1, 1 };
    needs = false;
    ck_assert_int_eq(qplan_imatrix(&im, true, "blk.0.ffn_up_exps.weight", exps, GGUF_DT_Q4_K,
                                   false, &w, &needs, &err), 0);
    ck_assert_ptr_eq(w, vals);
    ck_assert_int_eq(qplan_imatrix(&im, false, "blk.0.ffn_up_exps.weight", exps, GGUF_DT_Q4_K,
                                   false, &w, &needs, &err), 0); /* --exclude-weights */
    ck_assert_ptr_null(w);
    ck_assert_int_eq(qplan_imatrix(&im, true, "blk.0.ffn_up_exps.weight", other, GGUF_DT_Q4_K,
                                   false, &w, &needs, &err), -1);
    ck_assert_str_eq(err.msg, "imatrix has 8 values for tensor 'blk.0.ffn_up_exps.weight', which needs 10");
    ck_assert_int_eq(qplan_imatrix(&im, true, "token_embd.weight", embd, GGUF_DT_Q4_K, false, &w,
                                   &needs, &err), 0); /* token_embd's wrong size: ignored */
    ck_assert_ptr_null(w);
    /* a codec that quantizes only with weights, and none for this tensor */
    ck_assert_int_eq(qplan_imatrix(&im, true, "blk.0.attn_q.weight", embd, GGUF_DT_IQ2_XXS, false,
                                   &w, &needs, &err), -1);
    ck_assert_int_eq(qplan_imatrix(&im, true, "blk.0.attn_q.weight", embd, GGUF_DT_IQ2_XXS, true,
                                   &w, &needs, &err), 0);
    ck_assert(needs);
}
END_TEST

static uint32_t u32_of(const gguf_writer *w, const char *key)
{
    gguf_writer_value v;
    uint32_t x;
    ck_assert_msg(gguf_writer_find_value(w, key, &v), "%s missing", key);
    ck_assert_uint_eq(v.type, GGUF_VT_U32);
    memcpy(&x, v.bytes, 4);
    return x;
}

START_TEST(test_keys)
{
    gguf_writer *w = gguf_writer_new();
    ck_assert_int_eq(gguf_writer_set_u32(w, GGUF_KEY_FILE_TYPE, 32), 0);
    ck_assert_int_eq(gguf_writer_set_u32(w, GGUF_KEY_QUANT_VERSION, 2), 0);
    ck_assert_int_eq(qplan_set_type_keys(w, 15), 0);
    ck_assert_uint_eq(u32_of(w, GGUF_KEY_FILE_TYPE), 15);
    ck_assert_uint_eq(u32_of(w, GGUF_KEY_QUANT_VERSION), 2);
    gguf_imatrix im = { .chunks = 0, .dataset = NULL };
    ck_assert_int_eq(qplan_set_imatrix_keys(w, "x.imatrix", &im, 7), 0);
    ck_assert_uint_eq(u32_of(w, "quantize.imatrix.entries_count"), 7);
    ck_assert(!gguf_writer_has_kv(w, "quantize.imatrix.chunks_count"));
    ck_assert(!gguf_writer_has_kv(w, "quantize.imatrix.dataset"));
    im.chunks = 12;
    im.dataset = "wiki.txt";
    ck_assert_int_eq(qplan_set_imatrix_keys(w, "y.imatrix", &im, 7), 0);
    ck_assert_uint_eq(u32_of(w, "quantize.imatrix.chunks_count"), 12);
    ck_assert(gguf_writer_has_kv(w, "quantize.imatrix.dataset"));
    gguf_writer_free(w);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("qplan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_facts_names);
    tcase_add_test(tc, test_tensor_type);
    tcase_add_test(tc, test_imatrix_rules);
    tcase_add_test(tc, test_keys);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
