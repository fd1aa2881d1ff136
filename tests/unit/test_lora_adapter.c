/*
 * test_lora_adapter.c — LoRA adapter GGUF files against their base
 * (gguf/lora_adapter.h): what is accepted, each refusal, the scale.
 */
#include "lora_adapter.h"
#include "testutil.h"

typedef struct spec {
    const char *name;
    int64_t     ne[3];
    uint32_t    n_dims;
} spec;

/* Writes a GGUF of arch with general.type type (NULL: none) and zero-filled
 * f32 tensors. */
static void write_gguf(const char *path, const char *arch, const char *type, const spec *t, int n)
{
    gguf_error err;
    gguf_writer *w = gguf_writer_new();
    ck_assert(gguf_writer_set_str(w, "general.architecture", arch) == 0);
    if (type) {
        ck_assert(gguf_writer_set_str(w, "general.type", type) == 0);
        if (!strcmp(type, "adapter")) {
            ck_assert(gguf_writer_set_str(w, "adapter.type", "lora") == 0);
            ck_assert(gguf_writer_set_f32(w, "adapter.lora.alpha", 16) == 0);
        }
    }
    for (int i = 0; i < n; i++)
        ck_assert_msg(gguf_writer_add_tensor(w, t[i].name, GGUF_DT_F32, t[i].n_dims, t[i].ne, &err) >= 0,
                      "%s", err.msg);
    ck_assert_msg(gguf_writer_begin(w, path, &err) == 0, "%s", err.msg);
    for (int i = 0; i < n; i++) {
        size_t bytes = (size_t)gguf_writer_tensor_nbytes(w, (uint64_t)i);
        void *z = calloc(1, bytes);
        ck_assert(gguf_writer_write_tensor(w, z, bytes, &err) == 0);
        free(z);
    }
    ck_assert_msg(gguf_writer_finish(w, &err) == 0, "%s", err.msg);
    gguf_writer_free(w);
}

static const spec base_t[] = {
    { "blk.0.attn_q.weight", { 64, 32, 1 }, 2 },
    { "blk.0.ffn_up_exps.weight", { 64, 48, 4 }, 3 },
    { "blk.0.attn_norm.weight", { 64, 1, 1 }, 1 },
    { "token_embd.weight", { 64, 100, 1 }, 2 },
};

static gguf_file *base_file(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/lora-base.gguf", test_tmpdir());
    write_gguf(path, "llama", "model", base_t, 4);
    gguf_error err;
    gguf_file *f = gguf_open(path, 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    return f;
}

/* Opens an adapter of the given tensors against the base: 0, or -1 with
 * the message in err. */
static int try_adapter(const char *arch, const char *type, const spec *t, int n, gguf_error *err)
{
    char path[512];
    snprintf(path, sizeof path, "%s/lora-adapter.gguf", test_tmpdir());
    write_gguf(path, arch, type, t, n);
    gguf_file *base = base_file();
    gguf_lora_adapter a;
    int rc = gguf_lora_adapter_open(path, base, &a, err);
    if (rc == 0) {
        ck_assert_uint_eq(a.n_pairs, (uint64_t)n / 2);
        ck_assert(a.alpha == 16.0f);
        const gguf_tensor *ta, *tb;
        ck_assert(gguf_lora_adapter_pair(&a, "blk.0.attn_q.weight", &ta, &tb));
        ck_assert_str_eq(ta->name, "blk.0.attn_q.weight.lora_a");
        ck_assert(!gguf_lora_adapter_pair(&a, "blk.0.attn_norm.weight", &ta, &tb));
        gguf_lora_adapter_close(&a);
    }
    gguf_close(base);
    return rc;
}

START_TEST(test_good)
{
    const spec t[] = {
        { "blk.0.attn_q.weight.lora_a", { 64, 8, 1 }, 2 },
        { "blk.0.attn_q.weight.lora_b", { 8, 32, 1 }, 2 },
        { "blk.0.ffn_up_exps.weight.lora_a", { 64, 8, 4 }, 3 },
        { "blk.0.ffn_up_exps.weight.lora_b", { 8, 48, 4 }, 3 },
    };
    gguf_error err;
    ck_assert_msg(try_adapter("llama", "adapter", t, 4, &err) == 0, "%s", err.msg);
}
END_TEST

static const struct {
    const char *arch, *type;
    spec        t[2];
    const char *want;
} bad[] = {
    { "llama", "model", { { "blk.0.attn_q.weight.lora_a", { 64, 8, 1 }, 2 }, { "blk.0.attn_q.weight.lora_b", { 8, 32, 1 }, 2 } }, "not an adapter" },
    { "qwen3", "adapter", { { "blk.0.attn_q.weight.lora_a", { 64, 8, 1 }, 2 }, { "blk.0.attn_q.weight.lora_b", { 8, 32, 1 }, 2 } }, "an adapter of qwen3 models, the base is llama" },
    { "llama", "adapter", { { "blk.0.attn_q.weight.lora_a", { 64, 8, 1 }, 2 }, { "blk.0.attn_q.weight.lora_b", { 4, 32, 1 }, 2 } }, "rank mismatch" },
    { "llama", "adapter", { { "blk.0.attn_q.weight.lora_a", { 48, 8, 1 }, 2 }, { "blk.0.attn_q.weight.lora_b", { 8, 32, 1 }, 2 } }, "do not fit the base tensor" },
    { "llama", "adapter", { { "blk.1.attn_q.weight.lora_a", { 64, 8, 1 }, 2 }, { "blk.1.attn_q.weight.lora_b", { 8, 32, 1 }, 2 } }, "the base model has no tensor 'blk.1.attn_q.weight'" },
    { "llama", "adapter", { { "blk.0.attn_q.weight.lora_a", { 64, 8, 1 }, 2 }, { "blk.0.attn_k.weight.lora_b", { 8, 32, 1 }, 2 } }, "has no .lora_b" },
    { "llama", "adapter", { { "blk.0.attn_q.weight", { 64, 32, 1 }, 2 }, { "blk.0.attn_q.weight.lora_a", { 64, 8, 1 }, 2 } }, "not a .lora_a or .lora_b tensor" },
    { "llama", "adapter", { { "blk.0.ffn_up_exps.weight.lora_a", { 64, 8, 1 }, 2 }, { "blk.0.ffn_up_exps.weight.lora_b", { 8, 48, 1 }, 2 } }, "dimensions" },
};

/* the token embeddings' pair is flipped: lora_a [rank, vocab], lora_b
 * [rank, embd] (llama.cpp's llm_build_inp_embd) */
START_TEST(test_token_embd)
{
    const spec t[] = {
        { "blk.0.attn_q.weight.lora_a", { 64, 8, 1 }, 2 },
        { "blk.0.attn_q.weight.lora_b", { 8, 32, 1 }, 2 },
        { "token_embd.weight.lora_a", { 8, 100, 1 }, 2 },
        { "token_embd.weight.lora_b", { 8, 64, 1 }, 2 },
    };
    gguf_error err;
    ck_assert_msg(try_adapter("llama", "adapter", t, 4, &err) == 0, "%s", err.msg);
    const spec u[] = { /* as any other pair: refused */
        { "token_embd.weight.lora_a", { 64, 8, 1 }, 2 },
        { "token_embd.weight.lora_b", { 8, 100, 1 }, 2 },
    };
    ck_assert_int_eq(try_adapter("llama", "adapter", u, 2, &err), -1);
    ck_assert_msg(strstr(err.msg, "token_embd.weight"), "%s", err.msg);
}
END_TEST

START_TEST(test_bad)
{
    gguf_error err = { 0 };
    ck_assert_int_eq(try_adapter(bad[_i].arch, bad[_i].type, bad[_i].t, 2, &err), -1);
    ck_assert_msg(strstr(err.msg, bad[_i].want), "'%s' lacks '%s'", err.msg, bad[_i].want);
}
END_TEST

START_TEST(test_scale)
{
    ck_assert(gguf_lora_adapter_scale(16, 1, 8) == 2.0f);
    ck_assert(gguf_lora_adapter_scale(32, 0.5f, 16) == 1.0f);
    ck_assert(gguf_lora_adapter_scale(0, 0.75f, 8) == 0.75f); /* no alpha: the user's scale */
    /* user × alpha first, then / rank, in float */
    ck_assert(gguf_lora_adapter_scale(3, 0.1f, 7) == 0.1f * 3.0f / 7.0f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lora_adapter");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_good);
    tcase_add_test(tc, test_token_embd);
    tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, test_scale);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
