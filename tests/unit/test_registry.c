/*
 * test_registry.c — libgguf's architecture registry: lookups, the
 * consistency of every row (unique names and checkpoint names, valid
 * roles, dims and keys), requiredness by flag, tensor-name matching, and
 * hyper-parameters read and derived from a file as the rows say.
 */
#include <ggufkit/arch.h>
#include <ggufkit/gguf.h>

#include <unistd.h>

#include "testutil.h"

START_TEST(test_lookup)
{
    size_t n;
    const gguf_arch *all = gguf_arch_list(&n);
    ck_assert_uint_eq(n, 9);
    ck_assert_ptr_eq(gguf_arch_find("llama"), &all[0]);
    ck_assert_ptr_nonnull(gguf_arch_find("mistral"));
    ck_assert_ptr_nonnull(gguf_arch_find("qwen2"));
    ck_assert_ptr_null(gguf_arch_find("gpt2"));
    ck_assert_ptr_null(gguf_arch_find(NULL));
    ck_assert_ptr_eq(gguf_arch_find_hf("MistralForCausalLM"), gguf_arch_find("llama"));
    ck_assert_ptr_eq(gguf_arch_find_hf("Qwen2ForCausalLM"), gguf_arch_find("qwen2"));
    ck_assert_ptr_eq(gguf_arch_find_hf("Qwen3ForCausalLM"), gguf_arch_find("qwen3"));
    ck_assert_ptr_eq(gguf_arch_find_hf("Phi3ForCausalLM"), gguf_arch_find("phi3"));
    ck_assert_ptr_null(gguf_arch_find_hf("GPT2LMHeadModel"));
    ck_assert_str_eq(gguf_arch_hf_list(),
                     "LlamaForCausalLM, LLaMAForCausalLM, MistralForCausalLM, MixtralForCausalLM, "
                     "Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, Phi3ForCausalLM, GptOssForCausalLM, "
                     "Gemma2ForCausalLM, Gemma3ForCausalLM, Gemma3ForConditionalGeneration");
    ck_assert_ptr_eq(gguf_arch_find_hf("Gemma3ForConditionalGeneration"), gguf_arch_find("gemma3"));
    ck_assert_ptr_eq(gguf_arch_find_hf("GptOssForCausalLM"), gguf_arch_find("gpt-oss"));
    ck_assert_ptr_eq(gguf_arch_find_hf("Gemma2ForCausalLM"), gguf_arch_find("gemma2"));
    ck_assert_ptr_eq(gguf_arch_find_hf("Gemma3ForCausalLM"), gguf_arch_find("gemma3"));
    ck_assert_str_eq(gguf_role_name(GGUF_ROLE_FFN_POST_NORM), "ffn_post_norm");
    ck_assert_str_eq(gguf_hp_key(GGUF_HP_SWA_PATTERN), "%s.attention.sliding_window_pattern");
    ck_assert_str_eq(gguf_hp_key(GGUF_HP_FINAL_SOFTCAP), "%s.final_logit_softcapping");
    ck_assert_str_eq(gguf_role_name(GGUF_ROLE_ATTN_SINKS), "attn_sinks");
    ck_assert_str_eq(gguf_dim_name(GGUF_DIM_HEADS), "head_count");
    ck_assert_str_eq(gguf_hp_key(GGUF_HP_SLIDING_WINDOW), "%s.attention.sliding_window");
    ck_assert_str_eq(gguf_role_name(GGUF_ROLE_ATTN_Q), "attn_q");
    ck_assert_str_eq(gguf_role_name(GGUF_ROLE_COUNT), "unknown");
    ck_assert_str_eq(gguf_hp_name(GGUF_HP_HEAD_COUNT_KV), "attention.head_count_kv");
    ck_assert_str_eq(gguf_hp_key(GGUF_HP_ROPE_DIM), "%s.rope.dimension_count");
    ck_assert_ptr_null(gguf_hp_key(GGUF_HP_COUNT));
    ck_assert_str_eq(gguf_dim_name(GGUF_DIM_FF), "feed_forward_length");
    ck_assert_str_eq(gguf_dim_name(GGUF_DIM_HEAD_K), "key_length");
    ck_assert_str_eq(gguf_dim_name(GGUF_DIM_FF2), "2 × feed_forward_length");
    ck_assert_str_eq(gguf_role_name(GGUF_ROLE_FFN_GATE_UP), "ffn_gate_up");
    ck_assert_str_eq(gguf_hp_key(GGUF_HP_SLIDING_WINDOW), "%s.attention.sliding_window");
    ck_assert_str_eq(gguf_dim_name(GGUF_DIM_COUNT), "unknown");
}
END_TEST

/* Every row of every architecture is well-formed. */
START_TEST(test_rows_consistent)
{
    size_t n;
    const gguf_arch *all = gguf_arch_list(&n);
    for (size_t a = 0; a < n; a++) {
        const gguf_arch *arch = &all[a];
        size_t nt = gguf_arch_n_tensors(arch);
        ck_assert_msg(nt > 0, "%s has no tensors", arch->name);
        ck_assert_ptr_null(gguf_arch_tensor_at(arch, nt));
        for (size_t i = 0; i < nt; i++) {
            const gguf_arch_tensor *t = gguf_arch_tensor_at(arch, i);
            ck_assert_msg(t->role < GGUF_ROLE_COUNT, "%s %s role", arch->name, t->name);
            ck_assert_msg(t->ne0 < GGUF_DIM_COUNT && t->ne1 < GGUF_DIM_COUNT &&
                          t->ne2 < GGUF_DIM_COUNT, "%s dims",
                          t->name);
            ck_assert_msg(strlen(t->name) < GGUF_MAX_NAME - 8, "%s too long", t->name);
            /* the name has at most one %d, and a per-block row starts with it */
            const char *d = strstr(t->name, "%d");
            ck_assert(!d || !strstr(d + 2, "%"));
            ck_assert(gguf_arch_tensor_per_block(t) == (d != NULL));
            ck_assert_ptr_eq(gguf_arch_tensor_of(arch, t->role), t);
            for (size_t j = 0; j < i; j++) {
                const gguf_arch_tensor *u = gguf_arch_tensor_at(arch, j);
                ck_assert_msg(strcmp(t->name, u->name) != 0, "%s: %s twice", arch->name, t->name);
                ck_assert_msg(!t->hf || !u->hf || strcmp(t->hf, u->hf) != 0, "%s: hf %s twice",
                              arch->name, t->hf);
                ck_assert_msg(!t->meta || !u->meta || strcmp(t->meta, u->meta) != 0,
                              "%s: meta %s twice", arch->name, t->meta);
                ck_assert_msg(t->role != u->role, "%s: role %s twice", arch->name,
                              gguf_role_name(t->role));
            }
        }
        bool rope_base = false, window = false;
        for (const gguf_arch_hparam *h = arch->hparams; h->key; h++) {
            ck_assert_msg(h->id < GGUF_HP_COUNT, "%s key %s", arch->name, h->key);
            ck_assert_str_eq(h->key, gguf_hp_key(h->id));
            ck_assert(!h->required || h->derive == GGUF_DERIVE_NONE);
            /* rope.freq_base's value is there before a row derives from it */
            ck_assert_msg(h->derive != GGUF_DERIVE_ROPE_BASE || rope_base, "%s %s", arch->name, h->key);
            rope_base |= h->id == GGUF_HP_ROPE_FREQ_BASE;
            window |= h->id == GGUF_HP_SLIDING_WINDOW;
            /* a sliding-window pattern needs the window */
            ck_assert_msg(h->id != GGUF_HP_SWA_PATTERN || window, "%s: pattern before window",
                          arch->name);
        }
        /* every row's list of names ends in NULL (the reader walks it to
         * there: a full array once ran past its end) */
        const size_t n_names = sizeof arch->hf_hparams->hf / sizeof *arch->hf_hparams->hf;
        for (int late = 0; late < 2; late++)
            for (const gguf_arch_hf_hparam *h = late ? arch->hf_hparams_late : arch->hf_hparams;
                 h && h->hf[0]; h++) {
                ck_assert_ptr_nonnull(gguf_hp_key(h->id));
                ck_assert(!h->required || h->def == 0);
                ck_assert_msg(!h->hf[n_names - 1], "%s: %s", arch->name, h->hf[0]);
            }
        ck_assert_ptr_nonnull(arch->about);
        ck_assert_ptr_nonnull(arch->hf_classes);
    }
}
END_TEST

START_TEST(test_required_and_match)
{
    const gguf_arch *llama = gguf_arch_find("llama"), *qwen = gguf_arch_find("qwen2");
    const gguf_arch_tensor *bq = gguf_arch_tensor_of(llama, GGUF_ROLE_ATTN_Q_BIAS);
    const gguf_arch_tensor *out = gguf_arch_tensor_of(llama, GGUF_ROLE_OUTPUT);
    ck_assert(!gguf_arch_tensor_required(llama, bq));
    ck_assert(gguf_arch_tensor_required(qwen, gguf_arch_tensor_of(qwen, GGUF_ROLE_ATTN_Q_BIAS)));
    ck_assert(!gguf_arch_tensor_required(llama, out)); /* tied output allowed */
    ck_assert(gguf_arch_tensor_required(llama, gguf_arch_tensor_of(llama, GGUF_ROLE_FFN_DOWN)));
    /* experts replace the dense feed-forward */
    const gguf_arch_tensor *exps = gguf_arch_tensor_of(llama, GGUF_ROLE_FFN_DOWN_EXPS);
    ck_assert(!gguf_arch_tensor_required(llama, exps));
    ck_assert(gguf_arch_tensor_required_for(llama, exps, true));
    ck_assert(!gguf_arch_tensor_required_for(llama, gguf_arch_tensor_of(llama, GGUF_ROLE_FFN_DOWN),
                                             true));
    ck_assert_ptr_null(gguf_arch_tensor_of(qwen, GGUF_ROLE_ROPE_FREQS)); /* llama only */
    int b = 0;
    const gguf_arch_tensor *t = gguf_arch_match(llama, "blk.17.attn_k.weight", &b);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->role, GGUF_ROLE_ATTN_K);
    ck_assert_int_eq(b, 17);
    t = gguf_arch_match(llama, "output.weight", &b);
    ck_assert_ptr_eq(t, out);
    ck_assert_int_eq(b, -1);
    ck_assert_ptr_null(gguf_arch_match(llama, "blk.01.attn_k.weight", &b)); /* not canonical */
    ck_assert_ptr_null(gguf_arch_match(llama, "blk.1.attn_qkv.weight", &b));
    ck_assert_ptr_null(gguf_arch_match(qwen, "blk.0.ffn_up.bias", &b));
    ck_assert_ptr_nonnull(gguf_arch_match(llama, "blk.0.ffn_up.bias", &b));
    /* phi3: fused q/k/v and gate/up (its ffn_up is both), no separate ones */
    const gguf_arch *phi3 = gguf_arch_find("phi3");
    t = gguf_arch_match(phi3, "blk.1.attn_qkv.weight", &b);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->role, GGUF_ROLE_ATTN_QKV);
    ck_assert_int_eq(t->ne1, GGUF_DIM_QKV);
    ck_assert_int_eq(gguf_arch_match(phi3, "blk.0.ffn_up.weight", &b)->role, GGUF_ROLE_FFN_GATE_UP);
    ck_assert_ptr_null(gguf_arch_match(phi3, "blk.0.attn_q.weight", &b));
    ck_assert_ptr_null(gguf_arch_match(phi3, "blk.0.ffn_gate.weight", &b));
    t = gguf_arch_tensor_of(phi3, GGUF_ROLE_ROPE_FACTORS_LONG);
    ck_assert(!gguf_arch_tensor_required(phi3, t));
    ck_assert(!gguf_arch_tensor_required(phi3, gguf_arch_tensor_of(phi3, GGUF_ROLE_OUTPUT)));
    int64_t blk;
    const char *rest;
    ck_assert(gguf_parse_block_name("blk.12.x", &blk, &rest));
    ck_assert_int_eq(blk, 12);
    ck_assert_str_eq(rest, "x");
    ck_assert(!gguf_parse_block_name("blk.x.y", &blk, &rest));
    ck_assert(!gguf_parse_block_name("blk.1", &blk, &rest));
}
END_TEST

/* A file of a registered architecture: keys read, absent ones derived. */
static gguf_file *hparams_file(const char *arch, bool with_kv, bool with_rope_dim, gguf_error *err)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/ggufkit-registry-%d.gguf", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    gguf_writer *w = gguf_writer_new();
    char key[128];
    gguf_writer_set_str(w, GGUF_KEY_ARCHITECTURE, arch);
#define U32(fmt, v) (snprintf(key, sizeof key, fmt, arch), gguf_writer_set_u32(w, key, v))
    U32(GGUF_KEY_CONTEXT_LENGTH, 2048);
    U32(GGUF_KEY_EMBEDDING_LENGTH, 64);
    U32(GGUF_KEY_BLOCK_COUNT, 2);
    U32(GGUF_KEY_FFN_LENGTH, 96);
    U32(GGUF_KEY_HEAD_COUNT, 8);
    if (with_kv)
        U32(GGUF_KEY_HEAD_COUNT_KV, 2);
    if (with_rope_dim)
        U32(GGUF_KEY_ROPE_DIM_COUNT, 6);
    U32(GGUF_KEY_VOCAB_SIZE, 300);
#undef U32
    snprintf(key, sizeof key, GGUF_KEY_RMS_EPS, arch);
    gguf_writer_set_f32(w, key, 1e-5f);
    ck_assert_ptr_null(gguf_writer_error(w));
    ck_assert_int_eq(gguf_writer_begin(w, path, err), 0);
    ck_assert_int_eq(gguf_writer_finish(w, err), 0);
    gguf_writer_free(w);
    gguf_file *f = gguf_open(path, 0, err);
    unlink(path);
    return f;
}

START_TEST(test_hparams_read)
{
    gguf_error err = { 0 };
    gguf_hparams hp;
    gguf_file *f = hparams_file("llama", false, false, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    ck_assert_ptr_eq(hp.arch, gguf_arch_find("llama"));
    ck_assert_int_eq(hp.v[GGUF_HP_BLOCK_COUNT], 2);
    ck_assert(!hp.has[GGUF_HP_HEAD_COUNT_KV]);
    ck_assert_int_eq(hp.n_head_kv, 8);  /* derived: head_count */
    ck_assert_int_eq(hp.head_k, 8);     /* derived: 64 / 8 */
    ck_assert_int_eq(hp.n_rot, 8);      /* derived: the key length */
    ck_assert(hp.f[GGUF_HP_ROPE_FREQ_BASE] == 10000.0); /* the row's default */
    ck_assert_int_eq(hp.n_vocab, 300);  /* vocab_size, no token list */
    ck_assert_int_eq(gguf_hparams_dim(&hp, GGUF_DIM_K), 64);
    ck_assert_int_eq(gguf_hparams_dim(&hp, GGUF_DIM_ROT_HALF), 4);
    gguf_close(f);

    /* qwen2 allows a partial rotary dimension, llama rotates whole heads */
    f = hparams_file("qwen2", true, true, &err);
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(hp.n_head_kv, 2);
    ck_assert_int_eq(hp.n_rot, 6);
    ck_assert_int_eq(gguf_hparams_dim(&hp, GGUF_DIM_K), 16);
    gguf_close(f);
    /* phi3: the fused widths */
    f = hparams_file("phi3", true, true, &err);
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(gguf_hparams_dim(&hp, GGUF_DIM_QKV), 64 + 2 * 16);
    ck_assert_int_eq(gguf_hparams_dim(&hp, GGUF_DIM_FF2), 2 * 96);
    gguf_close(f);
    f = hparams_file("llama", true, true, &err);
    ck_assert_int_eq(gguf_hparams_read(f, &hp, &err), -1);
    ck_assert_str_eq(err.msg, "llama.rope.dimension_count = 6, expected 8 (the head size: llama "
                              "rotates whole heads)");
    ck_assert_int_eq(err.code, GGUF_ERR_FORMAT);
    gguf_close(f);
    /* gemma2 without its optional keys: llama.cpp's defaults */
    f = hparams_file("gemma2", true, false, &err);
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    ck_assert(hp.f[GGUF_HP_ATTN_SOFTCAP] == 50.0 && hp.f[GGUF_HP_FINAL_SOFTCAP] == 30.0);
    ck_assert_int_eq(hp.v[GGUF_HP_SLIDING_WINDOW], 4096);
    ck_assert_int_eq(hp.v[GGUF_HP_SWA_PATTERN], 2);
    ck_assert(hp.f[GGUF_HP_ROPE_FREQ_BASE_SWA] == 10000.0); /* the global base */
    gguf_close(f);
    /* gemma3: no window unless given, five local layers of six, base 10000 */
    f = hparams_file("gemma3", true, false, &err);
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    ck_assert(!hp.has[GGUF_HP_SLIDING_WINDOW] && hp.v[GGUF_HP_SLIDING_WINDOW] == 0);
    ck_assert_int_eq(hp.v[GGUF_HP_SWA_PATTERN], 6);
    ck_assert(hp.f[GGUF_HP_FINAL_SOFTCAP] == 0.0);
    ck_assert(hp.f[GGUF_HP_ROPE_FREQ_BASE_SWA] == 10000.0);
    gguf_close(f);
    f = hparams_file("gpt2", true, true, &err);
    ck_assert_int_eq(gguf_hparams_read(f, &hp, &err), -1);
    ck_assert_str_eq(err.msg, "architecture \"gpt2\" is not registered");
    ck_assert_int_eq(err.code, GGUF_ERR_UNSUPPORTED);
    gguf_close(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_lookup);
    tcase_add_test(tc, test_rows_consistent);
    tcase_add_test(tc, test_required_and_match);
    tcase_add_test(tc, test_hparams_read);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
