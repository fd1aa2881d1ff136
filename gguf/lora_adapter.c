/*
 * lora_adapter.c — LoRA adapter GGUF files (see lora_adapter.h).
 */
#include "lora_adapter.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <ggufkit/arch.h>

static bool str_key(const gguf_file *f, const char *key, gguf_str *s)
{
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    return kv && gguf_kv_str(kv, s);
}

static bool ends_with(const char *s, const char *suffix, size_t *stem)
{
    size_t a = strlen(s), b = strlen(suffix);
    *stem = a >= b ? a - b : 0;
    return a >= b && !strcmp(s + a - b, suffix);
}

/* One pair against its base tensor. */
static int check_pair(const gguf_file *base, const char *name, const gguf_tensor *ta,
                      const gguf_tensor *tb, gguf_error *err)
{
    const gguf_tensor *t = gguf_lookup_tensor(base, name);
    if (!t)
        return gguf_error_set(err, "'%s.lora_a': the base model has no tensor '%s'", name, name);
    const uint32_t nd = t->n_dims < 2 ? 2 : t->n_dims;
    if (nd > 3 || ta->n_dims != nd || tb->n_dims != nd)
        return gguf_error_set(err, "'%s.lora_a' and '.lora_b' have %u and %u dimensions, the "
                              "base tensor %u", name, ta->n_dims, tb->n_dims, t->n_dims);
    const bool flipped = !strcmp(name, GGUF_T_TOKEN_EMBD);
    if ((flipped ? ta->ne[0] : ta->ne[1]) != tb->ne[0] || tb->ne[0] < 1)
        return gguf_error_set(err, "'%s': rank mismatch: lora_a has rank %" PRId64 ", lora_b %"
                              PRId64, name, flipped ? ta->ne[0] : ta->ne[1], tb->ne[0]);
    /* the token embeddings' pair is flipped (llm_build_inp_embd): lora_a
     * [rank, vocab], lora_b [rank, embd] */
    if (flipped ? ta->ne[0] != tb->ne[0] || tb->ne[1] != t->ne[0] || ta->ne[1] != t->ne[1] || nd != 2
             : ta->ne[0] != t->ne[0] || tb->ne[1] != t->ne[1] || ta->ne[2] != t->ne[2] ||
               tb->ne[2] != t->ne[2])
        return gguf_error_set(err, "'%s': lora_a [%" PRId64 ", %" PRId64 ", %" PRId64 "] and "
                              "lora_b [%" PRId64 ", %" PRId64 ", %" PRId64 "] do not fit the base "
                              "tensor [%" PRId64 ", %" PRId64 ", %" PRId64 "]", name, ta->ne[0],
                              ta->ne[1], ta->ne[2], tb->ne[0], tb->ne[1], tb->ne[2], t->ne[0],
                              t->ne[1], t->ne[2]);
    return 0;
}

int gguf_lora_adapter_open(const char *path, const gguf_file *base, gguf_lora_adapter *a,
                           gguf_error *err)
{
    memset(a, 0, sizeof *a);
    gguf_file *f = gguf_open(path, 0, err);
    return f ? gguf_lora_adapter_from(f, base, a, err) : -1;
}

int gguf_lora_adapter_from(gguf_file *f, const gguf_file *base, gguf_lora_adapter *a,
                           gguf_error *err)
{
    memset(a, 0, sizeof *a);
    a->f = f;
    gguf_str s, arch;
    if (!str_key(a->f, "general.type", &s) || !gguf_str_eq(s, "adapter")) {
        gguf_error_set(err, "not an adapter (general.type is not 'adapter')");
        goto fail;
    }
    if (!str_key(a->f, "adapter.type", &s) || !gguf_str_eq(s, "lora")) {
        gguf_error_set(err, "not a LoRA adapter (adapter.type is not 'lora')");
        goto fail;
    }
    if (!str_key(a->f, GGUF_KEY_ARCHITECTURE, &s) || !str_key(base, GGUF_KEY_ARCHITECTURE, &arch) ||
        s.len != arch.len || memcmp(s.ptr, arch.ptr, s.len)) {
        gguf_error_set(err, "an adapter of %.*s models, the base is %.*s", (int)s.len,
                       s.ptr ? s.ptr : "", (int)arch.len, arch.ptr ? arch.ptr : "");
        goto fail;
    }
    const gguf_kv *kv = gguf_lookup_kv(a->f, "adapter.lora.alpha");
    if (kv && !gguf_kv_f32(kv, &a->alpha)) {
        gguf_error_set(err, "adapter.lora.alpha is not an f32");
        goto fail;
    }
    if (a->alpha != a->alpha || a->alpha - a->alpha != 0) {
        gguf_error_set(err, "adapter.lora.alpha is not finite");
        goto fail;
    }
    for (uint64_t i = 0; i < gguf_n_tensors(a->f); i++) {
        const gguf_tensor *t = gguf_tensor_at(a->f, i), *ta, *tb;
        size_t stem;
        const bool is_a = ends_with(t->name, ".lora_a", &stem);
        if (!is_a && !ends_with(t->name, ".lora_b", &stem)) {
            gguf_error_set(err, "tensor '%s' is not a .lora_a or .lora_b tensor", t->name);
            goto fail;
        }
        char name[GGUF_MAX_NAME + 1];
        snprintf(name, sizeof name, "%.*s", (int)stem, t->name);
        if (!gguf_lora_adapter_pair(a, name, &ta, &tb)) {
            gguf_error_set(err, "tensor '%s' has no %s", t->name, is_a ? ".lora_b" : ".lora_a");
            goto fail;
        }
        if (!is_a)
            continue;
        if (check_pair(base, name, ta, tb, err))
            goto fail;
        a->n_pairs++;
    }
    return 0;
fail:
    gguf_lora_adapter_close(a);
    return -1;
}

void gguf_lora_adapter_close(gguf_lora_adapter *a)
{
    gguf_close(a->f);
    memset(a, 0, sizeof *a);
}

bool gguf_lora_adapter_pair(const gguf_lora_adapter *a, const char *name,
                            const gguf_tensor **lora_a, const gguf_tensor **lora_b)
{
    char n[GGUF_MAX_NAME + 16];
    snprintf(n, sizeof n, "%s.lora_a", name);
    *lora_a = gguf_lookup_tensor(a->f, n);
    snprintf(n, sizeof n, "%s.lora_b", name);
    *lora_b = gguf_lookup_tensor(a->f, n);
    return *lora_a && *lora_b;
}

float gguf_lora_adapter_scale(float alpha, float user_scale, int64_t rank)
{
    return alpha != 0.0f ? user_scale * alpha / (float)rank : user_scale;
}
