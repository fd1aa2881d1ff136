/*
 * test_arch.c — the converter's use of the registry and its output rules: name
 * mapping with block numbers, q/k permutation only for families that need
 * it, dropped buffers, Meta names, llama.cpp's size labels and outtypes.
 */
#include "arch.h"
#include "testutil.h"
#include "write.h"

START_TEST(test_families)
{
    const gguf_arch *llama = arch_find("LlamaForCausalLM"), *qwen = arch_find("Qwen2ForCausalLM");
    ck_assert_ptr_nonnull(llama);
    ck_assert_ptr_eq(arch_find("MistralForCausalLM"), llama);
    ck_assert_ptr_nonnull(qwen);
    ck_assert_ptr_null(arch_find("GPT2LMHeadModel"));
    ck_assert_str_eq(gguf_arch_name(llama), "llama");
    ck_assert_str_eq(gguf_arch_name(qwen), "qwen2");
    ck_assert_ptr_nonnull(strstr(arch_supported_list(), "Qwen2ForCausalLM"));
}
END_TEST

START_TEST(test_names)
{
    const gguf_arch *llama = arch_find("LlamaForCausalLM"), *qwen = arch_find("Qwen2ForCausalLM");
    char out[128];
    uint8_t p;
    int b, e;
    const gguf_arch_tensor *row;
    ck_assert_int_eq(arch_map_name(llama, "model.layers.17.self_attn.q_proj.weight", out, sizeof out, &p, &b, &e, &row), 1);
    ck_assert_str_eq(out, "blk.17.attn_q.weight");
    ck_assert_int_eq(p, GGUF_PERMUTE_Q);
    ck_assert_int_eq(b, 17);
    ck_assert_int_eq(arch_map_name(llama, "model.layers.0.self_attn.k_proj.bias", out, sizeof out, &p, &b, &e, &row), 1);
    ck_assert_str_eq(out, "blk.0.attn_k.bias");
    ck_assert_int_eq(p, GGUF_PERMUTE_K);
    ck_assert_int_eq(arch_map_name(qwen, "model.layers.3.self_attn.k_proj.weight", out, sizeof out, &p, &b, &e, &row), 1);
    ck_assert_int_eq(p, GGUF_PERMUTE_NONE); /* Qwen2 keeps its layout */
    ck_assert_int_eq(arch_map_name(llama, "model.embed_tokens.weight", out, sizeof out, &p, &b, &e, &row), 1);
    ck_assert_str_eq(out, "token_embd.weight");
    ck_assert_int_eq(b, -1);
    ck_assert_int_eq(arch_map_name(llama, "model.layers.2.mlp.down_proj.weight", out, sizeof out, &p, &b, &e, &row), 1);
    ck_assert_str_eq(out, "blk.2.ffn_down.weight");
    ck_assert_int_eq(arch_map_name(llama, "model.layers.0.self_attn.rotary_emb.inv_freq", out, sizeof out, &p, &b, &e, &row), 0);
    ck_assert_int_eq(arch_map_name(llama, "model.layers.x.self_attn.q_proj.weight", out, sizeof out, &p, &b, &e, &row), -1);
    ck_assert_int_eq(arch_map_name(llama, "model.layers.1.self_attn.q_proj.weightx", out, sizeof out, &p, &b, &e, &row), -1);
    ck_assert_int_eq(arch_map_name(llama, "vision.tower.weight", out, sizeof out, &p, &b, &e, &row), -1);
    ck_assert_int_eq(e, -1);
    /* one expert's projection: the stacked tensor's name, block and expert */
    ck_assert_int_eq(arch_map_name(llama, "model.layers.3.block_sparse_moe.experts.12.w2.weight",
                                   out, sizeof out, &p, &b, &e, &row), 1);
    ck_assert_str_eq(out, "blk.3.ffn_down_exps.weight");
    ck_assert_int_eq(b, 3);
    ck_assert_int_eq(e, 12);
    ck_assert_int_eq(gguf_arch_tensor_dim(row, 2), GGUF_DIM_EXPERTS);
    ck_assert_int_eq(p, GGUF_PERMUTE_NONE);
    const gguf_arch *moe = arch_find("Qwen3MoeForCausalLM");
    ck_assert_int_eq(arch_map_name(moe, "model.layers.0.mlp.gate.weight", out, sizeof out, &p, &b,
                                   &e, &row), 1);
    ck_assert_str_eq(out, "blk.0.ffn_gate_inp.weight");
    ck_assert_int_eq(e, -1);
    ck_assert_int_eq(arch_map_name(moe, "model.layers.0.mlp.experts.x.up_proj.weight", out,
                                   sizeof out, &p, &b, &e, &row), -1);
    /* gpt-oss: sinks, router bias, post-attention norm; its MXFP4 experts
     * (repacked by hf.c) map through no row */
    const gguf_arch *oss = arch_find("GptOssForCausalLM");
    ck_assert_ptr_nonnull(oss);
    ck_assert_str_eq(gguf_arch_name(oss), "gpt-oss");
    ck_assert_int_eq(arch_map_name(oss, "model.layers.1.self_attn.sinks", out, sizeof out, &p, &b,
                                   &e, &row), 1);
    ck_assert_str_eq(out, "blk.1.attn_sinks.weight");
    ck_assert_int_eq(gguf_arch_tensor_dim(row, 0), GGUF_DIM_HEADS);
    ck_assert_int_eq(arch_map_name(oss, "model.layers.0.mlp.router.bias", out, sizeof out, &p, &b,
                                   &e, &row), 1);
    ck_assert_str_eq(out, "blk.0.ffn_gate_inp.bias");
    ck_assert_int_eq(arch_map_name(oss, "model.layers.0.post_attention_layernorm.weight", out,
                                   sizeof out, &p, &b, &e, &row), 1);
    ck_assert_str_eq(out, "blk.0.post_attention_norm.weight");
    ck_assert_int_eq(arch_map_name(oss, "model.layers.0.mlp.experts.down_proj_bias", out,
                                   sizeof out, &p, &b, &e, &row), 1);
    ck_assert_str_eq(out, "blk.0.ffn_down_exps.bias");
    ck_assert_int_eq(arch_map_name(oss, "model.layers.0.mlp.experts.down_proj_blocks", out,
                                   sizeof out, &p, &b, &e, &row), -1);
    /* Gemma: pre/post feed-forward and post-attention norms; Gemma 2 drops
     * lm_head (tied), Gemma 3 maps it; norms are written + 1 */
    const gguf_arch *g2 = arch_find("Gemma2ForCausalLM"), *g3 = arch_find("Gemma3ForCausalLM");
    ck_assert_ptr_nonnull(g2);
    ck_assert_ptr_nonnull(g3);
    ck_assert_int_eq(arch_map_name(g2, "model.layers.2.pre_feedforward_layernorm.weight", out,
                                   sizeof out, &p, &b, &e, &row), 1);
    ck_assert_str_eq(out, "blk.2.ffn_norm.weight");
    ck_assert_int_eq(arch_map_name(g2, "model.layers.2.post_feedforward_layernorm.weight", out,
                                   sizeof out, &p, &b, &e, &row), 1);
    ck_assert_str_eq(out, "blk.2.post_ffw_norm.weight");
    ck_assert_int_eq(arch_map_name(g2, "model.layers.0.post_attention_layernorm.weight", out,
                                   sizeof out, &p, &b, &e, &row), 1);
    ck_assert_str_eq(out, "blk.0.post_attention_norm.weight");
    ck_assert_int_eq(gguf_arch_tensor_role(row), GGUF_ROLE_ATTN_POST_NORM);
    ck_assert_int_eq(arch_map_name(g2, "lm_head.weight", out, sizeof out, &p, &b, &e, &row), 0);
    ck_assert_int_eq(arch_map_name(g3, "lm_head.weight", out, sizeof out, &p, &b, &e, &row), 1);
    ck_assert_str_eq(out, "output.weight");
    ck_assert_int_eq(arch_map_name(g3, "model.layers.5.self_attn.k_norm.weight", out, sizeof out,
                                   &p, &b, &e, &row), 1);
    ck_assert_str_eq(out, "blk.5.attn_k_norm.weight");
    ck_assert_int_eq(p, GGUF_PERMUTE_NONE);
    ck_assert(gguf_recipe_of(g2)->norm_offset == 1.0f && gguf_recipe_of(g3)->norm_offset == 1.0f &&
              gguf_recipe_of(llama)->norm_offset == 0.0f);
    /* Gemma3ForConditionalGeneration (Gemma3Model.modify_tensors):
     * "language_model." taken out wherever it stands (both transformers
     * layouts), the vision tower and projector dropped — also the newer
     * layout's model.vision_tower., which llama.cpp fails on — and the
     * same drop not applied to a name that had "language_model." */
    ck_assert_ptr_eq(arch_find("Gemma3ForConditionalGeneration"), g3);
    static const char *const text_names[] = {
        "language_model.model.layers.3.mlp.down_proj.weight",
        "model.language_model.layers.3.mlp.down_proj.weight",
    };
    for (size_t i = 0; i < 2; i++) {
        ck_assert_int_eq(arch_map_name(g3, text_names[i], out, sizeof out, &p, &b, &e, &row), 1);
        ck_assert_str_eq(out, "blk.3.ffn_down.weight");
        ck_assert_int_eq(b, 3);
    }
    ck_assert_int_eq(arch_map_name(g3, "language_model.lm_head.weight", out, sizeof out, &p, &b,
                                   &e, &row), 1);
    ck_assert_str_eq(out, "output.weight");
    static const char *const vision_names[] = {
        "vision_tower.vision_model.encoder.layers.0.mlp.fc1.weight",
        "multi_modal_projector.mm_input_projection_weight",
        "multimodal_projector.x.weight", "vision_model.x.weight",
        "model.vision_tower.vision_model.post_layernorm.weight",
        "model.multi_modal_projector.mm_soft_emb_norm.weight",
    };
    for (size_t i = 0; i < sizeof vision_names / sizeof *vision_names; i++)
        ck_assert_int_eq(arch_map_name(g3, vision_names[i], out, sizeof out, &p, &b, &e, &row), 0);
    ck_assert_int_eq(arch_map_name(g3, "language_model.vision_tower.x.weight", out, sizeof out,
                                   &p, &b, &e, &row), -1);
    /* other families neither strip nor skip */
    ck_assert_int_eq(arch_map_name(g2, "vision_tower.x.weight", out, sizeof out, &p, &b, &e, &row),
                     -1);
    ck_assert_int_eq(arch_map_meta(llama, "layers.4.feed_forward.w2.weight", out, sizeof out, &b), 1);
    ck_assert_str_eq(out, "blk.4.ffn_down.weight");
    ck_assert_int_eq(arch_map_meta(llama, "tok_embeddings.weight", out, sizeof out, &b), 1);
    ck_assert_str_eq(out, "token_embd.weight");
}
END_TEST

/* Qwen 3.5: both classes of each family, the linear attention's names
 * (A_log and dt_bias without .weight), the multimodal prefix taken out,
 * the MTP head and the vision tower dropped, the fused experts not mapped
 * here (hf.c splits them). */
START_TEST(test_qwen35_names)
{
    const gguf_arch *q = arch_find("Qwen3_5ForCausalLM"), *moe = arch_find("Qwen3_5MoeForCausalLM");
    ck_assert_ptr_nonnull(q);
    ck_assert_ptr_nonnull(moe);
    ck_assert_ptr_eq(arch_find("Qwen3_5ForConditionalGeneration"), q);
    ck_assert_ptr_eq(arch_find("Qwen3_5MoeForConditionalGeneration"), moe);
    ck_assert_str_eq(gguf_arch_name(q), "qwen35");
    ck_assert_str_eq(gguf_arch_name(moe), "qwen35moe");
    static const struct { const char *hf, *gguf; } names[] = {
        { "model.layers.2.linear_attn.A_log", "blk.2.ssm_a" },
        { "model.layers.2.linear_attn.dt_bias", "blk.2.ssm_dt.bias" },
        { "model.layers.0.linear_attn.conv1d.weight", "blk.0.ssm_conv1d.weight" },
        { "model.layers.0.linear_attn.in_proj_qkv.weight", "blk.0.attn_qkv.weight" },
        { "model.layers.0.linear_attn.in_proj_z.weight", "blk.0.attn_gate.weight" },
        { "model.layers.0.linear_attn.in_proj_a.weight", "blk.0.ssm_alpha.weight" },
        { "model.layers.0.linear_attn.in_proj_b.weight", "blk.0.ssm_beta.weight" },
        { "model.layers.0.linear_attn.norm.weight", "blk.0.ssm_norm.weight" },
        { "model.layers.0.linear_attn.out_proj.weight", "blk.0.ssm_out.weight" },
        { "model.layers.3.post_attention_layernorm.weight", "blk.3.post_attention_norm.weight" },
        { "model.language_model.layers.3.self_attn.q_proj.weight", "blk.3.attn_q.weight" },
        { "model.language_model.embed_tokens.weight", "token_embd.weight" },
    };
    char out[128];
    uint8_t p;
    int b, e;
    const gguf_arch_tensor *row;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        ck_assert_int_eq(arch_map_name(q, names[i].hf, out, sizeof out, &p, &b, &e, &row), 1);
        ck_assert_str_eq(out, names[i].gguf);
        ck_assert_int_eq(p, GGUF_PERMUTE_NONE);
    }
    ck_assert_int_eq(arch_map_name(moe, "model.layers.1.mlp.shared_expert_gate.weight", out,
                                   sizeof out, &p, &b, &e, &row), 1);
    ck_assert_str_eq(out, "blk.1.ffn_gate_inp_shexp.weight");
    ck_assert_int_eq(arch_map_name(q, "mtp.fc.weight", out, sizeof out, &p, &b, &e, &row), 0);
    ck_assert_int_eq(arch_map_name(q, "model.visual.blocks.0.attn.qkv.weight", out, sizeof out, &p,
                                   &b, &e, &row), 0);
    ck_assert_int_eq(arch_map_name(moe, "model.layers.1.mlp.experts.gate_up_proj", out, sizeof out,
                                   &p, &b, &e, &row), -1);
}
END_TEST

START_TEST(test_size_labels)
{
    static const struct { uint64_t n; const char *want; } cases[] = {
        { 5245184, "5.2M" }, { 292800, "293K" }, { 6738415616ull, "6.7B" },
        { 70553706496ull, "71B" }, { 1100048384, "1.1B" }, { 1500000000000ull, "1.5T" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[32];
        convert_count_notation(cases[i].n, out, sizeof out);
        ck_assert_str_eq(out, cases[i].want);
    }
    /* the expert form: 4 experts of 3×2×4 (gate and down, 24 each) and a
     * 1-D bias of the experts [5, 4] (its count in ne[1]); shared 100 + 7 */
    src_tensor t[5] = {
        { .name = "token_embd.weight", .n_dims = 2, .ne = { 10, 10, 1, 1 } },
        { .name = "blk.0.ffn_gate_exps.weight", .n_dims = 3, .ne = { 3, 2, 4, 1 } },
        { .name = "blk.0.ffn_down_exps.weight", .n_dims = 3, .ne = { 2, 3, 4, 1 } },
        { .name = "blk.0.ffn_up_exps.bias", .n_dims = 3, .ne = { 5, 4, 1, 1 } },
        { .name = "blk.0.ffn_gate_inp_shexp.weight", .n_dims = 1, .ne = { 7, 1, 1, 1 } },
    };
    src_model m = { .tensors = t, .n_tensors = 5 };
    char label[32];
    convert_size_label(&m, label, sizeof label);
    ck_assert_str_eq(label, "4x0.12K"); /* 107 + 6 + 6 + 5 = 124 */
    m.n_tensors = 1;
    convert_size_label(&m, label, sizeof label);
    ck_assert_str_eq(label, "0.10K");
    ck_assert_uint_eq(convert_file_type(OUT_F32), 0);
    ck_assert_uint_eq(convert_file_type(OUT_F16), 1);
    ck_assert_uint_eq(convert_file_type(OUT_Q8_0), 7);
    ck_assert_uint_eq(convert_file_type(OUT_BF16), 32);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("arch");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_families);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_size_labels);
    tcase_add_test(tc, test_qwen35_names);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
