/*
 * test_policy.c — the per-tensor type rules against llama.cpp's behaviour.
 *
 * Expected types are those of llama-quantize's outputs in the fixtures (see
 * the reference quantize manifests) and of llama_tensor_get_type read by hand for
 * the cases the fixtures do not reach (GQA, experts, 70B, fallbacks).
 */
#include "policy.h"
#include "preset.h"
#include "testutil.h"
#include <ggufkit/gguf.h>

/* wp-llama-5m: 4 layers, 8 heads, 4 kv heads, untied output. */
static policy_model wp(void)
{
    policy_model m = { .n_layer = 4, .n_head = 8, .n_head_kv = 4, .has_output = true,
                       .n_attention_wv = 4 };
    return m;
}

static const policy_opts no_opts = { -1, -1, false, false };

/* Types of attn_v and ffn_down for layers 0..n-1, visited in llama.cpp order. */
static void layer_types(const policy_model *m, int ftype, uint32_t dflt, uint32_t *v, uint32_t *d)
{
    policy_state st = { 0 };
    char name[64];
    for (int l = 0; l < m->n_layer; l++) {
        snprintf(name, sizeof name, "blk.%d.attn_v.weight", l);
        v[l] = policy_tensor_type(m, &st, &no_opts, ftype, dflt, name, 256, -1, NULL, 0);
        snprintf(name, sizeof name, "blk.%d.ffn_down.weight", l);
        d[l] = policy_tensor_type(m, &st, &no_opts, ftype, dflt, name, 768, -1, NULL, 0);
    }
}

START_TEST(test_q4_k_m_more_bits_layers)
{
    policy_model m = wp();
    uint32_t v[4], d[4];
    layer_types(&m, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K, v, d);
    /* use_more_bits(i, 4): i = 2 ((2 - 0) % 3 == 2) and i = 3 (>= 7*4/8), as
     * in llama-quantize's wp-llama-5m Q4_K_M */
    ck_assert_uint_eq(v[0], GGUF_DT_Q4_K);
    ck_assert_uint_eq(v[1], GGUF_DT_Q4_K);
    ck_assert_uint_eq(v[2], GGUF_DT_Q6_K);
    ck_assert_uint_eq(v[3], GGUF_DT_Q6_K);
    ck_assert_uint_eq(d[0], GGUF_DT_Q4_K);
    ck_assert_uint_eq(d[2], GGUF_DT_Q6_K);
    ck_assert_uint_eq(d[3], GGUF_DT_Q6_K);
    policy_state st = { 0 };
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K,
                                         "output.weight", 256, -1, NULL, 0), GGUF_DT_Q6_K);
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K,
                                         "token_embd.weight", 256, -1, NULL, 0), GGUF_DT_Q4_K);
}
END_TEST

/* e21cdc11 takes a fused attn_qkv for an attn_v (category_is_attn_v,
 * tested before its own attn_qkv rules): phi3-rand's Q4_K_M has q4_K, q6_K
 * (use_more_bits of the attn_v counter), not c392e50's q5_K for both. */
START_TEST(test_fused_qkv_is_attn_v)
{
    policy_model m = { .n_layer = 2, .n_head = 8, .n_head_kv = 4, .has_output = true,
                       .n_attention_wv = 2 };
    policy_state st = { 0 };
    const uint32_t want[2] = { GGUF_DT_Q4_K, GGUF_DT_Q6_K };
    for (int l = 0; l < 2; l++) {
        char name[64];
        snprintf(name, sizeof name, "blk.%d.attn_qkv.weight", l);
        ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K, name, 256,
                                             -1, NULL, 0), want[l]);
    }
    ck_assert_int_eq(st.i_attention_wv, 2);
    /* and the low-bit presets' attn_v rule: q2_K (GQA 2, no experts) */
    policy_state lo = { 0 };
    ck_assert_uint_eq(policy_tensor_type(&m, &lo, &no_opts, GGUF_FT_IQ2_XS, GGUF_DT_IQ2_XS,
                                         "blk.0.attn_qkv.weight", 256, -1, NULL, 0), GGUF_DT_Q2_K);
}
END_TEST

/* llama.cpp e21cdc11's rules for the iq4 and ternary presets (the
 * upstream/iquant manifests hold the whole files). */
START_TEST(test_iq4_and_ternary)
{
    policy_model m = wp();
    uint32_t v[4], d[4];
    /* IQ4_XS on a GQA-2 model without an imatrix: ffn_down of the first
     * eighth of layers (none of 4: 4 / 8 = 0) stays; with 16 layers the
     * first two go to q5_K */
    layer_types(&m, GGUF_FT_IQ4_XS, GGUF_DT_IQ4_XS, v, d);
    ck_assert_uint_eq(v[0], GGUF_DT_IQ4_XS);
    ck_assert_uint_eq(d[0], GGUF_DT_IQ4_XS);
    policy_model big = wp();
    big.n_layer = 16;
    big.n_head_kv = 2; /* GQA 4: attn_v gets q5_K */
    uint32_t bv[16], bd[16];
    layer_types(&big, GGUF_FT_IQ4_NL, GGUF_DT_IQ4_NL, bv, bd);
    ck_assert_uint_eq(bv[5], GGUF_DT_Q5_K);
    ck_assert_uint_eq(bd[0], GGUF_DT_Q5_K);
    ck_assert_uint_eq(bd[1], GGUF_DT_Q5_K);
    ck_assert_uint_eq(bd[2], GGUF_DT_IQ4_NL);
    /* ternary: the embedding in q4_K, the output in q6_K */
    policy_state st = { 0 };
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_TQ1_0, GGUF_DT_TQ1_0,
                                         "token_embd.weight", 256, -1, NULL, 0), GGUF_DT_Q4_K);
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_TQ2_0, GGUF_DT_TQ2_0,
                                         "output.weight", 256, -1, NULL, 0), GGUF_DT_Q6_K);
    /* rows that fit no super-block (the type table's fallbacks): iq4_xs → iq4_nl, tq → q4_0 */
    ck_assert_uint_eq(gguf_dtype_fit(GGUF_DT_IQ4_XS, 96), GGUF_DT_IQ4_NL);
    ck_assert_uint_eq(gguf_dtype_fit(GGUF_DT_TQ1_0, 96), GGUF_DT_Q4_0);
    ck_assert_uint_eq(gguf_dtype_fit(GGUF_DT_TQ2_0, 100), GGUF_DT_F16);
}
END_TEST

START_TEST(test_q2_k_and_q3_k_mixes)
{
    policy_model m = wp();
    uint32_t v[4], d[4];
    layer_types(&m, GGUF_FT_Q2_K, GGUF_DT_Q2_K, v, d);
    ck_assert_uint_eq(v[0], GGUF_DT_Q3_K); /* GQA 2 < 4 */
    ck_assert_uint_eq(d[0], GGUF_DT_Q3_K);
    m.n_head = 32;                        /* GQA 8 */
    layer_types(&m, GGUF_FT_Q2_K, GGUF_DT_Q2_K, v, d);
    ck_assert_uint_eq(v[1], GGUF_DT_Q4_K);
    m = wp();
    layer_types(&m, GGUF_FT_Q3_K_M, GGUF_DT_Q3_K, v, d);
    ck_assert_uint_eq(v[0], GGUF_DT_Q5_K);
    ck_assert_uint_eq(v[1], GGUF_DT_Q5_K);
    ck_assert_uint_eq(v[2], GGUF_DT_Q4_K);
    ck_assert_uint_eq(d[0], GGUF_DT_Q4_K); /* n/16 = 0; not falcon → q4_K */
    m.n_layer = 32;
    m.n_attention_wv = 32;
    uint32_t v32[32], d32[32];
    layer_types(&m, GGUF_FT_Q3_K_M, GGUF_DT_Q3_K, v32, d32);
    ck_assert_uint_eq(d32[1], GGUF_DT_Q5_K); /* < 32/16 */
    ck_assert_uint_eq(d32[2], GGUF_DT_Q4_K);
    m = wp();
    layer_types(&m, GGUF_FT_Q3_K_L, GGUF_DT_Q3_K, v, d);
    ck_assert_uint_eq(v[2], GGUF_DT_Q5_K);
    ck_assert_uint_eq(d[2], GGUF_DT_Q5_K);
    policy_state st = { 0 };
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q3_K_L, GGUF_DT_Q3_K,
                                         "blk.0.attn_output.weight", 256, -1, NULL, 0), GGUF_DT_Q5_K);
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q3_K_S, GGUF_DT_Q3_K,
                                         "blk.0.attn_output.weight", 256, -1, NULL, 0), GGUF_DT_Q3_K);
}
END_TEST

START_TEST(test_q4_k_s_and_imatrix_q4_0)
{
    policy_model m = wp();
    m.n_layer = 16;
    m.n_attention_wv = 16;
    uint32_t v[16], d[16];
    layer_types(&m, GGUF_FT_Q4_K_S, GGUF_DT_Q4_K, v, d);
    ck_assert_uint_eq(v[3], GGUF_DT_Q5_K);
    ck_assert_uint_eq(v[4], GGUF_DT_Q4_K);
    ck_assert_uint_eq(d[1], GGUF_DT_Q5_K); /* < 16/8 */
    ck_assert_uint_eq(d[2], GGUF_DT_Q4_K);
    /* Q4_0 with an imatrix: first eighth of ffn_down → q4_1 */
    policy_state st = { .has_imatrix = true };
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q4_0, GGUF_DT_Q4_0,
                                         "blk.0.ffn_down.weight", 768, -1, NULL, 0), GGUF_DT_Q4_1);
    policy_state plain = { 0 };
    ck_assert_uint_eq(policy_tensor_type(&m, &plain, &no_opts, GGUF_FT_Q4_0, GGUF_DT_Q4_0,
                                         "blk.0.ffn_down.weight", 768, -1, NULL, 0), GGUF_DT_Q4_0);
    /* output of a legacy preset is still q6_K; q8_0 stays q8_0 */
    ck_assert_uint_eq(policy_tensor_type(&m, &plain, &no_opts, GGUF_FT_Q4_0, GGUF_DT_Q4_0,
                                         "output.weight", 256, -1, NULL, 0), GGUF_DT_Q6_K);
    ck_assert_uint_eq(policy_tensor_type(&m, &plain, &no_opts, GGUF_FT_Q8_0, GGUF_DT_Q8_0,
                                         "output.weight", 256, -1, NULL, 0), GGUF_DT_Q8_0);
}
END_TEST

START_TEST(test_experts_and_70b)
{
    policy_model m = wp();
    m.n_expert = 8;
    policy_state st = { 0 };
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K,
                                         "blk.0.attn_v.weight", 256, -1, NULL, 0), GGUF_DT_Q8_0);
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K,
                                         "blk.0.attn_k.weight", 256, -1, NULL, 0), GGUF_DT_Q8_0);
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K,
                                         "blk.0.attn_output.weight", 256, -1, NULL, 0), GGUF_DT_Q5_K);
    /* experts: the layer comes from the name */
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K,
                                         "blk.3.ffn_down_exps.weight", 256, -1, NULL, 0), GGUF_DT_Q6_K);
    policy_model big = { .n_layer = 80, .n_head = 64, .n_head_kv = 8, .is_70b = true,
                         .has_output = true, .n_attention_wv = 80 };
    policy_state s2 = { 0 };
    ck_assert_uint_eq(policy_tensor_type(&big, &s2, &no_opts, GGUF_FT_Q3_K_S, GGUF_DT_Q3_K,
                                         "blk.0.attn_v.weight", 8192, -1, NULL, 0), GGUF_DT_Q5_K);
}
END_TEST

START_TEST(test_fallbacks)
{
    policy_model m = { .n_layer = 5, .n_head = 8, .n_head_kv = 4, .has_output = false,
                       .n_attention_wv = 5 };
    policy_state st = { 0 };
    char why[128];
    /* rows of 64: k-quants do not fit */
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K,
                                         "blk.0.attn_q.weight", 64, -1, why, sizeof why), GGUF_DT_Q5_0);
    ck_assert_ptr_nonnull(strstr(why, "rows of 64"));
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q6_K, GGUF_DT_Q6_K,
                                         "blk.0.attn_q.weight", 64, -1, why, sizeof why), GGUF_DT_Q8_0);
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q2_K, GGUF_DT_Q2_K,
                                         "blk.0.attn_q.weight", 64, -1, why, sizeof why), GGUF_DT_Q4_0);
    /* tied output (token_embd is the output): rows that do not fit → q8_0,
     * which llama.cpp does not count as a fallback */
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K,
                                         "token_embd.weight", 64, -1, why, sizeof why), GGUF_DT_Q8_0);
    /* rows of 172 fit nothing quantized → f16 (llama.cpp gives up) */
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &no_opts, GGUF_FT_Q4_0, GGUF_DT_Q4_0,
                                         "blk.0.ffn_down.weight", 172, -1, why, sizeof why), GGUF_DT_F16);
    ck_assert_int_eq(st.n_fallback, 4);
}
END_TEST

START_TEST(test_overrides_and_pure)
{
    policy_model m = wp();
    policy_state st = { 0 };
    policy_opts o = { GGUF_DT_Q8_0, GGUF_DT_Q5_K, false, false };
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &o, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K, "output.weight",
                                         256, -1, NULL, 0), GGUF_DT_Q8_0);
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &o, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K,
                                         "token_embd.weight", 256, GGUF_DT_Q2_K, NULL, 0), GGUF_DT_Q5_K);
    ck_assert_uint_eq(policy_tensor_type(&m, &st, &o, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K,
                                         "blk.0.attn_q.weight", 256, GGUF_DT_Q6_K, NULL, 0), GGUF_DT_Q6_K);
    policy_opts pure = { -1, -1, true, false };
    policy_state s2 = { 0 };
    ck_assert_uint_eq(policy_tensor_type(&m, &s2, &pure, GGUF_FT_Q4_K_M, GGUF_DT_Q4_K, "output.weight",
                                         256, -1, NULL, 0), GGUF_DT_Q4_K);
    ck_assert(!policy_is_quantizable("blk.0.attn_norm.weight", 1, &no_opts));
    ck_assert(!policy_is_quantizable("blk.0.ffn_gate_inp.weight", 2, &no_opts));
    ck_assert(!policy_is_quantizable("blk.0.attn_q.bias", 2, &no_opts));
    ck_assert(policy_is_quantizable("output.weight", 2, &no_opts));
    policy_opts leave = { -1, -1, false, true };
    ck_assert(!policy_is_quantizable("output.weight", 2, &leave));
}
END_TEST

/* llama.cpp e21cdc11's rules for the lowest-bit, IQ3 and MXFP4_MOE presets
 * where the wp-llama-5m manifests do not reach (GQA 4+, 8 experts, 3-D
 * expert tensors, the IQ3_XS middle layers). */
START_TEST(test_low_bit_iq3_mxfp4)
{
    policy_model m = wp(); /* GQA 2 */
    policy_state st = { 0 };
#define TYPE(ft, dflt, name, ne0) policy_tensor_type(&m, &st, &no_opts, ft, dflt, name, ne0, -1, NULL, 0)
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ2_S, GGUF_DT_IQ2_XS, "blk.0.attn_v.weight", 256), GGUF_DT_IQ3_S);
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ2_XXS, GGUF_DT_IQ2_XXS, "blk.0.attn_v.weight", 256), GGUF_DT_Q2_K);
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ1_M, GGUF_DT_IQ1_M, "blk.0.attn_output.weight", 256), GGUF_DT_IQ2_XXS);
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ1_S, GGUF_DT_IQ1_S, "token_embd.weight", 256), GGUF_DT_Q2_K);
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ2_M, GGUF_DT_IQ2_S, "token_embd.weight", 256), GGUF_DT_IQ3_S);
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ2_M, GGUF_DT_IQ2_S, "output.weight", 256), GGUF_DT_Q5_K);
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ3_XXS, GGUF_DT_IQ3_XXS, "blk.0.attn_q.weight", 256), GGUF_DT_IQ2_S);
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ3_XXS, GGUF_DT_IQ3_XXS, "blk.1.attn_v.weight", 256), GGUF_DT_IQ3_S); /* no imatrix */
    st.has_imatrix = true;
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ3_XXS, GGUF_DT_IQ3_XXS, "blk.2.attn_v.weight", 256), GGUF_DT_IQ3_XXS);
    /* GQA 4 or 4+ experts: attn_v in q4_K, and for 8 experts attn_k too;
     * llama.cpp's 8-expert q8_0 for attn_v does not reach the low-bit presets */
    m.n_head_kv = 2;
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ2_XXS, GGUF_DT_IQ2_XXS, "blk.0.attn_v.weight", 256), GGUF_DT_Q4_K);
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ3_S, GGUF_DT_IQ3_S, "blk.0.attn_v.weight", 256), GGUF_DT_Q4_K);
    m.n_head_kv = 4;
    m.n_expert = 8;
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ2_XS, GGUF_DT_IQ2_XS, "blk.0.attn_v.weight", 256), GGUF_DT_Q4_K);
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ2_XS, GGUF_DT_IQ2_XS, "blk.0.attn_k.weight", 256), GGUF_DT_Q4_K);
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ2_XS, GGUF_DT_IQ2_XS, "blk.0.attn_output.weight", 256), GGUF_DT_Q5_K);
    ck_assert_uint_eq(TYPE(GGUF_FT_IQ3_M, GGUF_DT_IQ3_S, "blk.0.attn_output.weight", 256), GGUF_DT_Q5_K);
    m.n_expert = 0;
    /* MXFP4_MOE: experts (ne2 > 1) mxfp4, the rest q8_0, output q8_0 */
    ck_assert_uint_eq(policy_tensor_type_3d(&m, &st, &no_opts, GGUF_FT_MXFP4_MOE, GGUF_DT_MXFP4,
                                            "blk.0.ffn_down_exps.weight", 256, 8, -1, NULL, 0), GGUF_DT_MXFP4);
    ck_assert_uint_eq(TYPE(GGUF_FT_MXFP4_MOE, GGUF_DT_MXFP4, "blk.0.attn_q.weight", 256), GGUF_DT_Q8_0);
    ck_assert_uint_eq(TYPE(GGUF_FT_MXFP4_MOE, GGUF_DT_MXFP4, "token_embd.weight", 256), GGUF_DT_Q8_0);
    ck_assert_uint_eq(TYPE(GGUF_FT_MXFP4_MOE, GGUF_DT_MXFP4, "output.weight", 256), GGUF_DT_Q8_0);
    /* IQ3_XS: ffn_gate / ffn_up of the middle layers (n/8 <= l < 7n/8) in iq3_xxs */
    m.n_layer = 16;
    policy_state s2 = { 0 };
    uint32_t g[16];
    char name[64];
    for (int l = 0; l < 16; l++) {
        snprintf(name, sizeof name, "blk.%d.ffn_gate.weight", l);
        g[l] = policy_tensor_type(&m, &s2, &no_opts, GGUF_FT_IQ3_XS, GGUF_DT_IQ3_S, name, 256, -1, NULL, 0);
    }
    ck_assert_uint_eq(g[1], GGUF_DT_IQ3_S);
    ck_assert_uint_eq(g[2], GGUF_DT_IQ3_XXS);
    ck_assert_uint_eq(g[13], GGUF_DT_IQ3_XXS);
    ck_assert_uint_eq(g[14], GGUF_DT_IQ3_S);
    /* i-quant rows that fit no 256-block fall back to iq4_nl */
    ck_assert_uint_eq(gguf_dtype_fit(GGUF_DT_IQ2_XXS, 96), GGUF_DT_IQ4_NL);
    ck_assert_uint_eq(gguf_dtype_fit(GGUF_DT_IQ1_M, 96), GGUF_DT_IQ4_NL);
#undef TYPE
}
END_TEST

START_TEST(test_presets)
{
    ck_assert_int_eq(preset_find("q4_k_m")->ftype, GGUF_FT_Q4_K_M);
    ck_assert_int_eq(preset_find("Q4_K")->ftype, GGUF_FT_Q4_K_M);
    ck_assert_int_eq(preset_find("15")->ftype, GGUF_FT_Q4_K_M);
    ck_assert_str_eq(preset_find("15")->name, "Q4_K_M");
    ck_assert_int_eq(preset_find("7")->default_type, GGUF_DT_Q8_0);
    ck_assert_int_eq(preset_find("IQ2_S")->default_type, GGUF_DT_IQ2_XS); /* llama.cpp's choice */
    ck_assert_int_eq(preset_find("iq3_m")->default_type, GGUF_DT_IQ3_S);
    ck_assert_int_eq(preset_find("38")->default_type, GGUF_DT_MXFP4);
    ck_assert(preset_find("COPY")->copy);
    ck_assert_str_eq(preset_find("0")->name, "F32"); /* not COPY */
    ck_assert_ptr_null(preset_find("Q1_0"));
    ck_assert_ptr_null(preset_find("99"));
    ck_assert_ptr_null(preset_find(""));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_q4_k_m_more_bits_layers);
    tcase_add_test(tc, test_fused_qkv_is_attn_v);
    tcase_add_test(tc, test_q2_k_and_q3_k_mixes);
    tcase_add_test(tc, test_iq4_and_ternary);
    tcase_add_test(tc, test_q4_k_s_and_imatrix_q4_0);
    tcase_add_test(tc, test_experts_and_70b);
    tcase_add_test(tc, test_fallbacks);
    tcase_add_test(tc, test_overrides_and_pure);
    tcase_add_test(tc, test_low_bit_iq3_mxfp4);
    tcase_add_test(tc, test_presets);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
