/*
 * test_registry.c — libgguf's architecture registry: lookups (invariants
 * over every row and recipe, not copies of them), the consistency of every
 * row (unique names and checkpoint names, valid roles, dims and keys),
 * requiredness by feature, tensor-name matching, tables patched by role,
 * and hyper-parameters read and derived from a file as the rows say.
 */
#include <ggufkit/arch.h>
#include <ggufkit/gguf.h>

#include "arch_recipe.h"

#include <unistd.h>

#include "testutil.h"

/* Lookups hold for every row: each architecture is found by its name, each
 * Hugging Face class of its recipe resolves to it, names and classes are
 * unique, and the message list names every class once. */
START_TEST(test_lookup)
{
    const size_t n = gguf_arch_count();
    ck_assert_uint_gt(n, 0);
    ck_assert_ptr_null(gguf_arch_at(n));
    size_t n_classes = 0, list_len = 0;
    for (size_t i = 0; i < n; i++) {
        const gguf_arch *a = gguf_arch_at(i);
        ck_assert_ptr_eq(gguf_arch_find(gguf_arch_name(a)), a);
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(gguf_arch_name(gguf_arch_at(j)), gguf_arch_name(a));
        const gguf_recipe *r = gguf_recipe_of(a);
        ck_assert_msg(r != NULL, "%s has no recipe", gguf_arch_name(a));
        ck_assert_str_eq(r->arch, gguf_arch_name(a));
        for (const char *const *c = r->hf_classes; *c; c++) {
            ck_assert_msg(gguf_recipe_find_hf(*c) == a, "%s: %s", gguf_arch_name(a), *c);
            ck_assert_ptr_null(gguf_arch_find(*c));
            /* once in the message list, as a whole item */
            const char *list = gguf_recipe_hf_list(), *at = list;
            int seen = 0;
            for (const size_t cl = strlen(*c); (at = strstr(at, *c)); at += cl)
                seen += (at == list || at[-1] == ' ') && (at[cl] == ',' || at[cl] == 0);
            ck_assert_msg(seen == 1, "%s listed %d times", *c, seen);
            n_classes++;
            list_len += strlen(*c) + 2;
        }
    }
    ck_assert_uint_eq(strlen(gguf_recipe_hf_list()) + 2, list_len);
    ck_assert_uint_gt(n_classes, 0);
    ck_assert_ptr_null(gguf_arch_find("gpt2"));
    ck_assert_ptr_null(gguf_arch_find(NULL));
    ck_assert_ptr_null(gguf_recipe_find_hf("GPT2LMHeadModel"));
    ck_assert_ptr_null(gguf_recipe_find_hf(NULL));
    /* every id of every enum has a name, and one past the last has none */
    for (int i = 0; i < GGUF_ROLE_COUNT; i++)
        ck_assert_str_ne(gguf_role_name(i), "unknown");
    for (int i = 0; i < GGUF_DIM_COUNT; i++)
        ck_assert_str_ne(gguf_dim_name(i), "unknown");
    for (int i = 0; i < GGUF_HP_COUNT; i++) {
        ck_assert_ptr_nonnull(gguf_hp_key(i));
        ck_assert(!strncmp(gguf_hp_key(i), "%s.", 3));
        ck_assert_str_eq(gguf_hp_name(i), gguf_hp_key(i) + 3);
    }
    for (int i = 0; i < GGUF_FEAT_COUNT; i++)
        ck_assert_str_ne(gguf_feature_name(i), "unknown");
    ck_assert_str_eq(gguf_role_name(GGUF_ROLE_COUNT), "unknown");
    ck_assert_str_eq(gguf_dim_name(GGUF_DIM_COUNT), "unknown");
    ck_assert_ptr_null(gguf_hp_key(GGUF_HP_COUNT));
    ck_assert_str_eq(gguf_hp_name(GGUF_HP_COUNT), "unknown");
    ck_assert_str_eq(gguf_feature_name(GGUF_FEAT_COUNT), "unknown");
    ck_assert(!gguf_arch_has(gguf_arch_at(0), GGUF_FEAT_COUNT));
    ck_assert(!gguf_arch_has(gguf_arch_at(0), -1));
    /* the word table: each feature and fact once, with a word of its kind */
    size_t nw;
    const gguf_feature_word *w = gguf_feature_words(&nw);
    ck_assert_uint_eq(nw, GGUF_FEAT_COUNT + GGUF_FACT_COUNT);
    for (size_t i = 0; i < nw; i++) {
        const bool conv = w[i].kind == GGUF_WORD_CONVERT;
        ck_assert_uint_lt(w[i].id, conv ? GGUF_FACT_COUNT : GGUF_FEAT_COUNT);
        ck_assert_msg(conv == !strncmp(w[i].word, "convert:", 8), "%s", w[i].word);
        for (size_t j = 0; j < i; j++) {
            ck_assert_str_ne(w[i].word, w[j].word);
            ck_assert(!(w[i].id == w[j].id && conv == (w[j].kind == GGUF_WORD_CONVERT)));
        }
        if (!conv)
            ck_assert_str_eq(gguf_feature_name(w[i].id), w[i].word);
    }
}
END_TEST

/* Every row of every architecture is well-formed. */
START_TEST(test_rows_consistent)
{
    const gguf_arch *arch;
    for (size_t a = 0; (arch = gguf_arch_at(a)); a++) {
        const char *an = gguf_arch_name(arch);
        const gguf_recipe *rc = gguf_recipe_of(arch);
        size_t nt = gguf_arch_n_tensors(arch);
        ck_assert_msg(nt > 0, "%s has no tensors", an);
        ck_assert_ptr_null(gguf_arch_tensor_at(arch, nt));
        for (size_t i = 0; i < nt; i++) {
            const gguf_arch_tensor *t = gguf_arch_tensor_at(arch, i);
            const char *tn = gguf_arch_tensor_name(t);
            const int role = gguf_arch_tensor_role(t);
            ck_assert_msg(role < GGUF_ROLE_COUNT, "%s %s role", an, tn);
            for (int ax = 0; ax < 3; ax++)
                ck_assert_msg(gguf_arch_tensor_dim(t, ax) < GGUF_DIM_COUNT, "%s dims", tn);
            ck_assert_int_eq(gguf_arch_tensor_dim(t, 3), GGUF_DIM_1);
            ck_assert_msg(strlen(tn) < GGUF_MAX_NAME - 8, "%s too long", tn);
            /* the name has at most one %d, and a per-block row starts with it */
            const char *d = strstr(tn, "%d");
            ck_assert(!d || !strstr(d + 2, "%"));
            ck_assert(gguf_arch_tensor_per_block(t) == (d != NULL));
            ck_assert_ptr_eq(gguf_arch_tensor_of(arch, role), t);
            int blk = 0;
            char name[GGUF_MAX_NAME];
            snprintf(name, sizeof name, tn, 7);
            ck_assert_ptr_eq(gguf_arch_match(arch, name, &blk), t);
            ck_assert_int_eq(blk, d ? 7 : -1);
            const gguf_recipe_tensor *nm = gguf_recipe_tensor_of(rc, role);
            for (size_t j = 0; j < i; j++) {
                const gguf_arch_tensor *u = gguf_arch_tensor_at(arch, j);
                const gguf_recipe_tensor *un = gguf_recipe_tensor_of(rc, gguf_arch_tensor_role(u));
                ck_assert_msg(strcmp(tn, gguf_arch_tensor_name(u)) != 0, "%s: %s twice", an, tn);
                ck_assert_msg(!nm || !un || !nm->hf || !un->hf || strcmp(nm->hf, un->hf) != 0,
                              "%s: hf %s twice", an, nm->hf);
                ck_assert_msg(!nm || !un || !nm->meta || !un->meta ||
                              strcmp(nm->meta, un->meta) != 0, "%s: meta %s twice", an, nm->meta);
                ck_assert_msg(role != gguf_arch_tensor_role(u), "%s: role %s twice", an,
                              gguf_role_name(role));
            }
            /* an expert row's checkpoint name has the layer's "%d" and,
             * unless the checkpoint stacks the experts (Gemma 4), the
             * expert's: no third */
            if (nm && nm->hf && gguf_arch_tensor_dim(t, 2) != GGUF_DIM_1) {
                const char *l = strstr(nm->hf, "%d"), *e = l ? strstr(l + 2, "%d") : NULL;
                ck_assert_msg(l && (!e || !strstr(e + 2, "%d")), "%s: %s", an, nm->hf);
                ck_assert_msg(e || !strcmp(an, "gemma4"), "%s: %s has no expert %%d", an, nm->hf);
            }
        }
        /* every checkpoint name of the recipe belongs to a row */
        for (const gguf_recipe_tensor *const *l = rc->tensors; *l; l++)
            for (const gguf_recipe_tensor *n = *l; n->role != GGUF_ROLE_COUNT; n++) {
                ck_assert_msg(gguf_arch_tensor_of(arch, n->role) != NULL, "%s: %s has no row", an,
                              gguf_role_name(n->role));
                ck_assert(n->hf || n->meta);
            }
        bool rope_base = false, window = false;
        ck_assert_ptr_null(gguf_arch_hparam_at(arch, gguf_arch_n_hparams(arch)));
        const gguf_arch_hparam *h;
        for (size_t i = 0; (h = gguf_arch_hparam_at(arch, i)); i++) {
            const int id = gguf_arch_hparam_id(h);
            ck_assert_msg(id < GGUF_HP_COUNT, "%s key %d", an, id);
            ck_assert_ptr_eq(gguf_arch_hparam_of(arch, id), h);
            ck_assert(!gguf_arch_hparam_required(h) || gguf_arch_hparam_derive(h) == GGUF_DERIVE_NONE);
            int64_t lo, hi;
            gguf_arch_hparam_range(h, &lo, &hi);
            ck_assert(gguf_arch_hparam_is_float(h) || lo <= hi);
            /* rope.freq_base's value is there before a row derives from it */
            ck_assert_msg(gguf_arch_hparam_derive(h) != GGUF_DERIVE_ROPE_BASE || rope_base, "%s %s",
                          an, gguf_hp_key(id));
            rope_base |= id == GGUF_HP_ROPE_FREQ_BASE;
            window |= id == GGUF_HP_SLIDING_WINDOW;
            /* a sliding-window pattern needs the window */
            ck_assert_msg(id != GGUF_HP_SWA_PATTERN || window, "%s: pattern before window", an);
        }
        /* every row's list of names ends in NULL (the reader walks it to
         * there: a full array once ran past its end) */
        const size_t n_names = sizeof rc->hf_hparams->hf / sizeof *rc->hf_hparams->hf;
        for (int late = 0; late < 2; late++)
            for (const gguf_recipe_hf_hparam *r = late ? rc->hf_hparams_late : rc->hf_hparams;
                 r && r->hf[0]; r++) {
                ck_assert_ptr_nonnull(gguf_hp_key(r->id));
                ck_assert(!r->required || r->def == 0);
                ck_assert_msg(!r->hf[n_names - 1], "%s: %s", an, r->hf[0]);
                ck_assert(r->make != GGUF_MAKE_BLOCK_COUNT || r->id == GGUF_HP_BLOCK_COUNT);
            }
        ck_assert_ptr_nonnull(gguf_arch_about(arch));
        ck_assert_ptr_nonnull(rc->hf_classes);
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
    ck_assert_int_eq(gguf_arch_tensor_role(t), GGUF_ROLE_ATTN_K);
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
    ck_assert_int_eq(gguf_arch_tensor_role(t), GGUF_ROLE_ATTN_QKV);
    ck_assert_int_eq(gguf_arch_tensor_dim(t, 1), GGUF_DIM_QKV);
    ck_assert_int_eq(gguf_arch_tensor_role(gguf_arch_match(phi3, "blk.0.ffn_up.weight", &b)),
                     GGUF_ROLE_FFN_GATE_UP);
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

/* w written to path and opened again (path removed): the file, or NULL. */
static gguf_file *written(gguf_writer *w, const char *path, gguf_error *err)
{
    ck_assert_ptr_null(gguf_writer_error(w));
    ck_assert_int_eq(gguf_writer_begin(w, path, err), 0);
    ck_assert_int_eq(gguf_writer_finish(w, err), 0);
    gguf_writer_free(w);
    gguf_file *f = gguf_open(path, 0, err);
    unlink(path);
    return f;
}

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
    return written(w, path, err);
}

/* One hyper-parameter's integer value (0 without one). */
static int64_t hp_int(const gguf_hparams *hp, int id)
{
    int64_t v;
    gguf_hparams_get_int(hp, id, &v);
    return v;
}

static double hp_float(const gguf_hparams *hp, int id)
{
    double v;
    gguf_hparams_get(hp, id, &v);
    return v;
}

START_TEST(test_hparams_read)
{
    gguf_error err = { 0 };
    gguf_hparams *hp;
    gguf_file *f = hparams_file("llama", false, false, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    ck_assert_ptr_eq(gguf_hparams_arch(hp), gguf_arch_find("llama"));
    ck_assert_int_eq(hp_int(hp, GGUF_HP_BLOCK_COUNT), 2);
    ck_assert(!gguf_hparams_has(hp, GGUF_HP_HEAD_COUNT_KV));
    ck_assert(gguf_hparams_has(hp, GGUF_HP_HEAD_COUNT));
    ck_assert_int_eq(hp_int(hp, GGUF_HP_HEAD_COUNT_KV), 8); /* derived: head_count */
    ck_assert_int_eq(hp_int(hp, GGUF_HP_KEY_LENGTH), 8);    /* derived: 64 / 8 */
    ck_assert_int_eq(hp_int(hp, GGUF_HP_ROPE_DIM), 8);      /* derived: the key length */
    ck_assert(hp_float(hp, GGUF_HP_ROPE_FREQ_BASE) == 10000.0); /* the row's default */
    ck_assert(hp_float(hp, GGUF_HP_RMS_EPS) == (double)1e-5f);
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_VOCAB), 300); /* vocab_size, no token list */
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_K), 64);
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_ROT_HALF), 4);
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_COUNT), -1);
    /* no value: absent and not derived, or not a hyper-parameter */
    double d = 7;
    int64_t v = 7;
    ck_assert(!gguf_hparams_get(hp, GGUF_HP_EXPERT_COUNT, &d) && d == 0);
    ck_assert(!gguf_hparams_get_int(hp, GGUF_HP_COUNT, &v) && v == 0);
    ck_assert(!gguf_hparams_has(hp, -1));
    gguf_hparams_free(hp);
    gguf_close(f);

    /* qwen2 allows a partial rotary dimension, llama rotates whole heads */
    f = hparams_file("qwen2", true, true, &err);
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(hp_int(hp, GGUF_HP_HEAD_COUNT_KV), 2);
    ck_assert_int_eq(hp_int(hp, GGUF_HP_ROPE_DIM), 6);
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_K), 16);
    gguf_hparams_free(hp);
    gguf_close(f);
    /* phi3: the fused widths */
    f = hparams_file("phi3", true, true, &err);
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_QKV), 64 + 2 * 16);
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_FF2), 2 * 96);
    gguf_hparams_free(hp);
    gguf_close(f);
    f = hparams_file("llama", true, true, &err);
    ck_assert_int_eq(gguf_hparams_read(f, &hp, &err), -1);
    ck_assert_ptr_null(hp);
    ck_assert_str_eq(err.msg, "llama.rope.dimension_count = 6, expected 8 (the head size: llama "
                              "rotates whole heads)");
    ck_assert_int_eq(err.code, GGUF_ERR_FORMAT);
    gguf_close(f);
    /* gemma2 without its optional keys: llama.cpp's defaults */
    f = hparams_file("gemma2", true, false, &err);
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    ck_assert(hp_float(hp, GGUF_HP_ATTN_SOFTCAP) == 50.0 && hp_float(hp, GGUF_HP_FINAL_SOFTCAP) == 30.0);
    ck_assert_int_eq(hp_int(hp, GGUF_HP_SLIDING_WINDOW), 4096);
    ck_assert_int_eq(hp_int(hp, GGUF_HP_SWA_PATTERN), 2);
    ck_assert(hp_float(hp, GGUF_HP_ROPE_FREQ_BASE_SWA) == 10000.0); /* the global base */
    gguf_hparams_free(hp);
    gguf_close(f);
    /* gemma3: no window unless given, five local layers of six, base 10000 */
    f = hparams_file("gemma3", true, false, &err);
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    ck_assert(!gguf_hparams_has(hp, GGUF_HP_SLIDING_WINDOW));
    ck_assert(!gguf_hparams_get_int(hp, GGUF_HP_SLIDING_WINDOW, &v) && v == 0);
    ck_assert_int_eq(hp_int(hp, GGUF_HP_SWA_PATTERN), 6);
    ck_assert(hp_float(hp, GGUF_HP_FINAL_SOFTCAP) == 0.0);
    ck_assert(hp_float(hp, GGUF_HP_ROPE_FREQ_BASE_SWA) == 10000.0);
    gguf_hparams_free(hp);
    gguf_close(f);
    f = hparams_file("gpt2", true, true, &err);
    ck_assert_int_eq(gguf_hparams_read(f, &hp, &err), -1);
    ck_assert_str_eq(err.msg, "architecture \"gpt2\" is not registered");
    ck_assert_int_eq(err.code, GGUF_ERR_UNSUPPORTED);
    gguf_close(f);
}
END_TEST

/* A family's table is a base table patched by role: the patched rows come
 * in the base's order, with what is added after its row, and the rows a
 * patch drops are gone. */
/* Per-block rows by kind of block, and array hyper-parameters: a row of a
 * kind only in a family whose keys say which blocks are which; a global is
 * of every block; the words distinct; an array row's count given. */
START_TEST(test_layer_rows)
{
    ck_assert_str_eq(gguf_layers_name(GGUF_LAYERS_ALL), "every");
    ck_assert_str_eq(gguf_layers_name(GGUF_LAYERS_ATTENTION), "attention");
    ck_assert_str_eq(gguf_layers_name(GGUF_LAYERS_RECURRENT), "recurrent");
    ck_assert_str_eq(gguf_layers_name(GGUF_LAYERS_SLIDING), "sliding");
    ck_assert_str_eq(gguf_layers_name(GGUF_LAYERS_FULL), "full");
    ck_assert_str_eq(gguf_layers_name(GGUF_LAYERS_OWN_KV), "own-kv");
    ck_assert_str_eq(gguf_layers_name(GGUF_LAYERS_SHARED_KV), "shared-kv");
    ck_assert_str_eq(gguf_layers_name(GGUF_LAYERS_COUNT), "unknown");
    ck_assert_str_eq(gguf_layers_name(-1), "unknown");
    const gguf_arch *a;
    for (size_t i = 0; (a = gguf_arch_at(i)); i++) {
        const bool kinds = gguf_arch_hparam_of(a, GGUF_HP_FULL_ATTN_INTERVAL) != NULL;
        int n_kind[GGUF_LAYERS_COUNT] = { 0 };
        const gguf_arch_tensor *t;
        for (size_t j = 0; (t = gguf_arch_tensor_at(a, j)); j++) {
            const int l = gguf_arch_tensor_layers(t);
            ck_assert_msg(l >= 0 && l < GGUF_LAYERS_COUNT, "%s %s", gguf_arch_name(a),
                          gguf_arch_tensor_name(t));
            /* a global of a kind: required when some block is of it
             * (Gemma 4's rope_freqs, full blocks) */
            ck_assert(gguf_arch_tensor_per_block(t) || l == GGUF_LAYERS_ALL ||
                      gguf_arch_tensor_role(t) == GGUF_ROLE_ROPE_FREQS);
            /* the key that says which blocks are which: full_attention_interval,
             * sliding_window_pattern, shared_kv_layers */
            const bool says = l == GGUF_LAYERS_SLIDING || l == GGUF_LAYERS_FULL
                                  ? gguf_arch_hparam_of(a, GGUF_HP_SWA_PATTERN) != NULL
                            : l == GGUF_LAYERS_OWN_KV || l == GGUF_LAYERS_SHARED_KV
                                  ? gguf_arch_hparam_of(a, GGUF_HP_SHARED_KV_LAYERS) != NULL
                            : l == GGUF_LAYERS_LEADING_DENSE || l == GGUF_LAYERS_MOE
                                  ? gguf_arch_hparam_of(a, GGUF_HP_LEADING_DENSE_BLOCK_COUNT) != NULL
                            : l == GGUF_LAYERS_NEXTN
                                  ? gguf_arch_hparam_of(a, GGUF_HP_NEXTN_PREDICT_LAYERS) != NULL
                                  : kinds;
            ck_assert_msg(says || l == GGUF_LAYERS_ALL, "%s: %s is of %s blocks but no key says "
                          "which blocks are which", gguf_arch_name(a), gguf_arch_tensor_name(t),
                          gguf_layers_name(l));
            n_kind[l]++;
        }
        /* a family with kinds of blocks has rows of each */
        ck_assert(!kinds || (n_kind[GGUF_LAYERS_ATTENTION] && n_kind[GGUF_LAYERS_RECURRENT]));
        const gguf_arch_hparam *h;
        for (size_t j = 0; (h = gguf_arch_hparam_at(a, j)); j++) {
            int64_t count = -1;
            const int kind = gguf_arch_hparam_array(h, &count);
            ck_assert(kind >= GGUF_HP_SCALAR && kind <= GGUF_HP_PER_BLOCK);
            ck_assert(kind == GGUF_HP_ARRAY ? count > 0 : count == 0);
            ck_assert(kind == GGUF_HP_SCALAR || !gguf_arch_hparam_is_float(h));
            ck_assert_int_eq(gguf_arch_hparam_array(h, NULL), kind);
        }
    }
    const gguf_arch *q = gguf_arch_find("qwen35");
    ck_assert_ptr_nonnull(q);
    ck_assert_int_eq(gguf_arch_tensor_layers(gguf_arch_tensor_of(q, GGUF_ROLE_SSM_A)),
                     GGUF_LAYERS_RECURRENT);
    ck_assert_int_eq(gguf_arch_tensor_layers(gguf_arch_tensor_of(q, GGUF_ROLE_ATTN_Q)),
                     GGUF_LAYERS_ATTENTION);
    ck_assert_int_eq(gguf_arch_tensor_layers(gguf_arch_tensor_of(q, GGUF_ROLE_ATTN_NORM)),
                     GGUF_LAYERS_ALL);
    int64_t count;
    ck_assert_int_eq(gguf_arch_hparam_array(gguf_arch_hparam_of(q, GGUF_HP_ROPE_DIM_SECTIONS), &count),
                     GGUF_HP_ARRAY);
    ck_assert_int_eq(count, 4);
    ck_assert_str_eq(gguf_hp_name(GGUF_HP_FULL_ATTN_INTERVAL), "full_attention_interval");
    ck_assert_str_eq(gguf_role_name(GGUF_ROLE_FFN_GATE_INP_SHEXP), "ffn_gate_inp_shexp");
}
END_TEST

/* A Gemma 4 file as gemma4-rand's (6 blocks; full heads 64 wide, sliding
 * ones 32; the last `shared` blocks share KV; feed_forward_length 128 and,
 * with double, 256 in the shared blocks), with the sliding pattern swa,
 * value_length_swa vswa and rope.dimension_count_swa rot. */
static gguf_file *gemma4_file(int shared, const char *swa, int64_t vswa, int64_t rot,
                              bool doubled, gguf_error *err)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/ggufkit-registry-g4-%d.gguf", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    gguf_writer *w = gguf_writer_new();
    gguf_writer_set_str(w, GGUF_KEY_ARCHITECTURE, "gemma4");
    gguf_writer_set_u32(w, "gemma4.context_length", 2048);
    gguf_writer_set_u32(w, "gemma4.embedding_length", 128);
    gguf_writer_set_u32(w, "gemma4.block_count", 6);
    int32_t ff[6];
    uint8_t pat[6];
    for (int i = 0; i < 6; i++) {
        ff[i] = doubled && i >= 6 - shared ? 256 : 128;
        pat[i] = swa[i] == 's';
    }
    gguf_writer_set_array(w, "gemma4.feed_forward_length", GGUF_VT_I32, ff, 6);
    gguf_writer_set_u32(w, "gemma4.attention.head_count", 4);
    gguf_writer_set_u32(w, "gemma4.attention.head_count_kv", 1);
    gguf_writer_set_f32(w, "gemma4.attention.layer_norm_rms_epsilon", 1e-6f);
    gguf_writer_set_u32(w, "gemma4.attention.key_length", 64);
    gguf_writer_set_u32(w, "gemma4.attention.value_length", 64);
    gguf_writer_set_u32(w, "gemma4.attention.sliding_window", 8);
    gguf_writer_set_u32(w, "gemma4.attention.shared_kv_layers", (uint32_t)shared);
    gguf_writer_set_u32(w, "gemma4.embedding_length_per_layer_input", 32);
    gguf_writer_set_array(w, "gemma4.attention.sliding_window_pattern", GGUF_VT_BOOL, pat, 6);
    gguf_writer_set_u32(w, "gemma4.attention.key_length_swa", 32);
    gguf_writer_set_u32(w, "gemma4.attention.value_length_swa", (uint32_t)vswa);
    gguf_writer_set_u32(w, "gemma4.rope.dimension_count", 64);
    gguf_writer_set_u32(w, "gemma4.rope.dimension_count_swa", (uint32_t)rot);
    gguf_writer_set_u32(w, "gemma4.vocab_size", 512);
    return written(w, path, err);
}

/* A glm4moe file of keys alone: 5 blocks, `lead` leading dense ones,
 * `nextn` next-token-prediction ones, 8 experts of 32 in `groups` groups
 * (2 used), 2 shared experts. */
static gguf_file *glm4moe_file(int lead, int nextn, int groups, gguf_error *err)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/ggufkit-registry-glm-%d.gguf",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    gguf_writer *w = gguf_writer_new();
    gguf_writer_set_str(w, GGUF_KEY_ARCHITECTURE, "glm4moe");
    gguf_writer_set_u32(w, "glm4moe.context_length", 2048);
    gguf_writer_set_u32(w, "glm4moe.embedding_length", 128);
    gguf_writer_set_u32(w, "glm4moe.block_count", 5);
    gguf_writer_set_u32(w, "glm4moe.feed_forward_length", 256);
    gguf_writer_set_u32(w, "glm4moe.attention.head_count", 4);
    gguf_writer_set_f32(w, "glm4moe.attention.layer_norm_rms_epsilon", 1e-5f);
    gguf_writer_set_u32(w, "glm4moe.expert_count", 8);
    gguf_writer_set_u32(w, "glm4moe.expert_used_count", 2);
    gguf_writer_set_u32(w, "glm4moe.expert_feed_forward_length", 32);
    gguf_writer_set_u32(w, "glm4moe.expert_shared_count", 2);
    gguf_writer_set_u32(w, "glm4moe.leading_dense_block_count", (uint32_t)lead);
    gguf_writer_set_u32(w, "glm4moe.nextn_predict_layers", (uint32_t)nextn);
    gguf_writer_set_u32(w, "glm4moe.expert_group_count", (uint32_t)groups);
    gguf_writer_set_u32(w, "glm4moe.expert_group_used_count", 1);
    gguf_writer_set_u32(w, "glm4moe.rope.dimension_count", 16);
    return written(w, path, err);
}

/* GLM-4.5's kinds of blocks (leading dense or MoE by
 * leading_dense_block_count, next-token prediction by nextn_predict_layers),
 * its shared experts' width (expert width × shared count) and eh_proj's
 * 2 × embedding_length; its key rules failing: too many NextN blocks or
 * leading dense ones, groups that do not divide the experts, too few
 * experts in the used groups. */
START_TEST(test_glm4moe_layers)
{
    gguf_error err = { 0 };
    gguf_hparams *hp;
    gguf_file *f = glm4moe_file(2, 1, 4, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    for (int il = 0; il < 5; il++) {
        ck_assert_int_eq(gguf_hparams_layer_in(hp, GGUF_LAYERS_LEADING_DENSE, il), il < 2);
        ck_assert_int_eq(gguf_hparams_layer_in(hp, GGUF_LAYERS_MOE, il), il >= 2);
        ck_assert_int_eq(gguf_hparams_layer_in(hp, GGUF_LAYERS_NEXTN, il), il == 4);
    }
    ck_assert(!gguf_hparams_layer_in(hp, GGUF_LAYERS_NEXTN, 5));
    ck_assert(!gguf_hparams_layer_in(hp, GGUF_LAYERS_MOE, -1));
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_FF_EXP_SHARED), 64);
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_EMBD2), 256);
    ck_assert_int_eq(hp_int(hp, GGUF_HP_EXPERT_GATING_FUNC), 2); /* llama.cpp's default */
    ck_assert_str_eq(gguf_layers_name(GGUF_LAYERS_LEADING_DENSE), "leading-dense");
    ck_assert_str_eq(gguf_layers_name(GGUF_LAYERS_MOE), "moe");
    ck_assert_str_eq(gguf_layers_name(GGUF_LAYERS_NEXTN), "nextn");
    gguf_hparams_free(hp);
    gguf_close(f);
    static const struct { int lead, nextn, groups; const char *msg; } bad[] = {
        { 1, 5, 1, "glm4moe.nextn_predict_layers = 5, expected 0 to glm4moe.block_count - 1 = 4" },
        { 6, 1, 1, "glm4moe.leading_dense_block_count = 6, expected 0 to glm4moe.block_count = 5" },
        { 1, 1, 3, "glm4moe.expert_group_count = 3 does not divide glm4moe.expert_count = 8" },
        { 1, 1, 8, "glm4moe.expert_used_count = 2, but 1 used group of 1 expert holds 1" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gguf_error e2 = { 0 };
        f = glm4moe_file(bad[i].lead, bad[i].nextn, bad[i].groups, &e2);
        ck_assert_msg(f != NULL, "%s", e2.msg);
        ck_assert_int_eq(gguf_hparams_read(f, &hp, &e2), -1);
        ck_assert_msg(strstr(e2.msg, bad[i].msg) != NULL, "%zu: %s", i, e2.msg);
        gguf_close(f);
    }
}
END_TEST

/* Gemma 4's kinds of blocks (sliding or full by the per-block pattern, own
 * or shared KV by shared_kv_layers) and per-block widths (head sizes of
 * the sliding blocks, feed_forward_length per block); and each rule on the
 * shared blocks, the head sizes and the sliding rotary width failing. */
START_TEST(test_gemma4_layers)
{
    gguf_error err = { 0 };
    gguf_hparams *hp;
    gguf_file *f = gemma4_file(3, "ssfssf", 32, 32, true, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    static const struct { int64_t q, k, hk, ff, rot; bool swa, own; } want[6] = {
        { 128, 32, 32, 128, 16, true, true }, { 128, 32, 32, 128, 16, true, true },
        { 256, 64, 64, 128, 32, false, true }, { 128, 32, 32, 256, 16, true, false },
        { 128, 32, 32, 256, 16, true, false }, { 256, 64, 64, 256, 32, false, false },
    };
    for (int il = 0; il < 6; il++) {
        ck_assert_int_eq(gguf_hparams_layer_in(hp, GGUF_LAYERS_SLIDING, il), want[il].swa);
        ck_assert_int_eq(gguf_hparams_layer_in(hp, GGUF_LAYERS_FULL, il), !want[il].swa);
        ck_assert_int_eq(gguf_hparams_layer_in(hp, GGUF_LAYERS_OWN_KV, il), want[il].own);
        ck_assert_int_eq(gguf_hparams_layer_in(hp, GGUF_LAYERS_SHARED_KV, il), !want[il].own);
        ck_assert_int_eq(gguf_hparams_layer_dim(hp, GGUF_DIM_Q, il), want[il].q);
        ck_assert_int_eq(gguf_hparams_layer_dim(hp, GGUF_DIM_K, il), want[il].k);
        ck_assert_int_eq(gguf_hparams_layer_dim(hp, GGUF_DIM_V, il), want[il].k);
        ck_assert_int_eq(gguf_hparams_layer_dim(hp, GGUF_DIM_HEAD_K, il), want[il].hk);
        ck_assert_int_eq(gguf_hparams_layer_dim(hp, GGUF_DIM_FF, il), want[il].ff);
        ck_assert_int_eq(gguf_hparams_layer_dim(hp, GGUF_DIM_ROT_HALF, il), want[il].rot);
    }
    ck_assert(!gguf_hparams_layer_in(hp, GGUF_LAYERS_SLIDING, 6));
    ck_assert(!gguf_hparams_layer_in(hp, GGUF_LAYERS_SHARED_KV, -1));
    /* the model's own values: the full blocks' */
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_Q), 256);
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_EMBD_PER_LAYER_ALL), 6 * 32);
    ck_assert_int_eq(hp_int(hp, GGUF_HP_SHARED_KV_LAYERS), 3);
    gguf_hparams_free(hp);
    gguf_close(f);
    /* gemma3's integer pattern gives its kinds too: five sliding of six */
    f = hparams_file("gemma3", true, false, &err);
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    ck_assert(gguf_hparams_layer_in(hp, GGUF_LAYERS_SLIDING, 0) &&
              gguf_hparams_layer_in(hp, GGUF_LAYERS_SLIDING, 1));
    ck_assert_int_eq(gguf_hparams_layer_dim(hp, GGUF_DIM_K, 0), gguf_hparams_dim(hp, GGUF_DIM_K));
    gguf_hparams_free(hp);
    gguf_close(f);

    static const struct { int shared; const char *swa; int64_t vswa, rot; const char *msg; } bad[] = {
        { 6, "ssfssf", 32, 32, "gemma4.attention.shared_kv_layers = 6, expected 0 to "
          "gemma4.block_count - 1 = 5 (the first block has its own KV)" },
        { 2, "ssfssf", 32, 32, "gemma4.attention.shared_kv_layers = 2: block 4 (sliding) would "
          "reuse the KV of block 2, which is full (llama.cpp: a shared sliding block takes the KV "
          "of the block two before the first shared one, a full block that of the block right "
          "before it)" },
        { 3, "sfsssf", 32, 32, "gemma4.attention.shared_kv_layers = 3: block 3 (sliding) would "
          "reuse the KV of block 1, which is full (llama.cpp: a shared sliding block takes the KV "
          "of the block two before the first shared one, a full block that of the block right "
          "before it)" },
        { 5, "sfsssf", 32, 32, "gemma4.attention.shared_kv_layers = 5: block 1 (full) would "
          "reuse the KV of block 0, which is sliding (llama.cpp: a shared sliding block takes "
          "the KV of the block two before the first shared one, a full block that of the block "
          "right before it)" },
        { 5, "fsssss", 32, 32, "gemma4.attention.shared_kv_layers = 5: block 1 (sliding) would "
          "reuse the KV of block -1, which does not exist" },
        { 3, "ssfssf", 16, 32, "gemma4.attention.value_length_swa = 16, expected "
          "gemma4.attention.key_length_swa = 32 (gemma4: K serves as V, heads of one size)" },
        { 3, "ssfssf", 32, 48, "gemma4.rope.dimension_count_swa = 48, expected an even number "
          "from 2 to 32 (gemma4.attention.key_length_swa)" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        f = gemma4_file(bad[i].shared, bad[i].swa, bad[i].vswa, bad[i].rot, false, &err);
        ck_assert_msg(f != NULL, "%s", err.msg);
        ck_assert_int_eq(gguf_hparams_read(f, &hp, &err), -1);
        ck_assert_str_eq(err.msg, bad[i].msg);
        gguf_close(f);
    }
}
END_TEST

START_TEST(test_patched_tables)
{
    static const struct { const char *arch; const char *roles; } want[] = {
        { "phi3", "token_embd output_norm output rope_factors_long rope_factors_short attn_norm "
                  "attn_qkv attn_output ffn_norm ffn_gate_up ffn_down" },
        { "gemma2", "token_embd output_norm attn_norm attn_q attn_k attn_v attn_output "
                    "attn_post_norm ffn_norm ffn_gate ffn_up ffn_down ffn_post_norm" },
        { "gemma3", "token_embd output_norm attn_norm attn_q attn_k attn_v attn_output "
                    "attn_post_norm ffn_norm ffn_gate ffn_up ffn_down ffn_post_norm output "
                    "attn_q_norm attn_k_norm" },
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const gguf_arch *a = gguf_arch_find(want[i].arch);
        char got[512] = "";
        const gguf_arch_tensor *t;
        for (size_t r = 0; (t = gguf_arch_tensor_at(a, r)); r++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", r ? " " : "",
                     gguf_role_name(gguf_arch_tensor_role(t)));
        ck_assert_str_eq(got, want[i].roles);
    }
    /* replaced rows: phi3's attention output is embedding_length wide, its
     * ffn_up is gate and up; gemma's feed-forward is required with experts */
    const gguf_arch *phi3 = gguf_arch_find("phi3"), *g2 = gguf_arch_find("gemma2");
    ck_assert_int_eq(gguf_arch_tensor_dim(gguf_arch_tensor_of(phi3, GGUF_ROLE_ATTN_OUT), 0),
                     GGUF_DIM_EMBD);
    ck_assert_str_eq(gguf_arch_tensor_name(gguf_arch_tensor_of(phi3, GGUF_ROLE_FFN_GATE_UP)),
                     GGUF_T_FFN_UP);
    ck_assert(gguf_arch_tensor_required_for(g2, gguf_arch_tensor_of(g2, GGUF_ROLE_FFN_DOWN), true));
    const gguf_arch *llama = gguf_arch_find("llama");
    ck_assert(!gguf_arch_tensor_required_for(llama, gguf_arch_tensor_of(llama, GGUF_ROLE_FFN_DOWN),
                                             true));
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
    tcase_add_test(tc, test_patched_tables);
    tcase_add_test(tc, test_layer_rows);
    tcase_add_test(tc, test_gemma4_layers);
    tcase_add_test(tc, test_glm4moe_layers);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
