/*
 * arches.c — the registry report (see arches.h). One section per
 * architecture: a map of its names and features, a table of its
 * hyper-parameter keys and a table of its tensors, all read from libgguf's
 * registry, so the listing is always what the tools do.
 */
#include "arches.h"

#include <stdio.h>
#include <string.h>

#include <ggufkit/arch.h>

/* "a, b, c" of a NULL-terminated list into buf. */
static const char *join(const char *const *items, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = 0;
    for (; items && *items && o < size; items++)
        o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? ", " : "", *items);
    return buf;
}

/* The feature flags as words. */
static const char *features(const gguf_arch *a, char *buf, size_t size)
{
    static const struct { uint32_t flag; const char *word; } words[] = {
        { GGUF_ARCH_QKV_BIAS, "qkv-bias" }, { GGUF_ARCH_TIED_OUTPUT, "tied-output" },
        { GGUF_ARCH_ROPE_WHOLE_HEAD, "rope-whole-head" }, { GGUF_ARCH_EXPERTS, "experts" },
        { GGUF_ARCH_QK_NORM, "qk-norm" }, { GGUF_ARCH_FUSED_QKV, "fused-qkv" },
        { GGUF_ARCH_FUSED_GATE_UP, "fused-gate-up" }, { GGUF_ARCH_ATTN_SINKS, "attn-sinks" },
        { GGUF_ARCH_ROPE_LLAMA3, "rope-llama3" }, { GGUF_ARCH_ROPE_LINEAR, "rope-linear" },
        { GGUF_ARCH_SCALE_Q, "scale-q" },
        { GGUF_ARCH_PERMUTE_QK, "convert:permute-qk" },
        { GGUF_ARCH_LLAMA_VOCAB, "convert:llama-vocab" },
        { GGUF_ARCH_WRITES_ROPE_DIM, "convert:rope-dim-key" },
        { GGUF_ARCH_PHI3_VOCAB, "convert:phi3-vocab" },
        { GGUF_ARCH_ROPE_YARN, "rope-yarn" },
        { GGUF_ARCH_MXFP4_EXPERTS, "convert:mxfp4-experts" },
        { GGUF_ARCH_SCALE_EMBD, "scale-embd" }, { GGUF_ARCH_ATTN_SOFTCAP, "attn-softcap" },
        { GGUF_ARCH_SWA_ROPE_PLAIN, "swa-rope-plain" },
        { GGUF_ARCH_TRIM_EMBD, "convert:trim-embd" },
        { GGUF_ARCH_NO_SPACE_PREFIX, "convert:no-space-prefix" },
        { GGUF_ARCH_OWN_ROPE_KEYS, "convert:own-rope-keys" },
    };
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof words / sizeof *words && o < size; i++)
        if (a->flags & words[i].flag)
            o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? " " : "", words[i].word);
    if (a->norm_offset != 0 && o < size) /* Gemma's norms written as w + 1 */
        snprintf(buf + o, size - o, "%sconvert:norm%+g", o ? " " : "", (double)a->norm_offset);
    return buf;
}

static const char *derive_text(const gguf_arch_hparam *h, char *buf, size_t size)
{
    switch (h->derive) {
    case GGUF_DERIVE_DEFAULT:     snprintf(buf, size, "%g", h->def); break;
    case GGUF_DERIVE_HEAD_COUNT:  snprintf(buf, size, "head_count"); break;
    case GGUF_DERIVE_HEAD_SIZE:   snprintf(buf, size, "embedding_length / head_count"); break;
    case GGUF_DERIVE_KEY_LENGTH:  snprintf(buf, size, "key_length"); break;
    case GGUF_DERIVE_ROPE_BASE:   snprintf(buf, size, "rope.freq_base"); break;
    default:                      buf[0] = 0; break;
    }
    return buf;
}

static void summary(emit *e, const gguf_arch *all, size_t n)
{
    static const emit_column cols[] = {
        { "name", NULL, 0 }, { "rope", NULL, 0 }, { "activation", NULL, 0 },
        { "features", NULL, 0 }, { "hf_classes", "HUGGING FACE CLASSES", 0 },
        { "about", NULL, 0 },
    };
    emit_table_begin(e, "architectures", "Architectures", cols, 6, EMIT_KEYED);
    for (size_t i = 0; i < n; i++) {
        const gguf_arch *a = &all[i];
        char classes[256], feats[256];
        emit_value row[] = {
            ev_str(a->name), ev_str(a->rope == GGUF_ROPE_NEOX ? "neox" : "norm"),
            ev_str(a->activation == GGUF_ACT_GELU_TANH ? "gelu-tanh"
                   : a->activation == GGUF_ACT_SWIGLU_OAI ? "swiglu-oai" : "silu"),
            ev_str(features(a, feats, sizeof feats)),
            ev_str(join(a->hf_classes, classes, sizeof classes)), ev_str(a->about),
        };
        emit_row(e, row);
    }
    emit_table_end(e);
}

static void keys(emit *e, const gguf_arch *a)
{
    static const emit_column cols[] = {
        { "key", NULL, 0 }, { "type", NULL, 0 }, { "required", NULL, 0 },
        { "when_absent", "WHEN ABSENT", 0 },
    };
    char key[64], title[96];
    snprintf(key, sizeof key, "%s_keys", a->name);
    snprintf(title, sizeof title, "%s: keys", a->name);
    emit_table_begin(e, key, title, cols, 4, 0);
    for (const gguf_arch_hparam *h = a->hparams; h->key; h++) {
        char name[128], der[64];
        snprintf(name, sizeof name, h->key, a->name);
        emit_value row[] = { ev_str(name), ev_str(h->is_float ? "float" : "integer"),
                             ev_bool(h->required), ev_str(derive_text(h, der, sizeof der)) };
        emit_row(e, row);
    }
    emit_table_end(e);
}

static void tensors(emit *e, const gguf_arch *a)
{
    static const emit_column cols[] = {
        { "name", NULL, 0 }, { "role", NULL, 0 }, { "shape", NULL, 0 },
        { "required", NULL, 0 }, { "hf", "HF NAME", 0 },
    };
    char key[64], title[96];
    snprintf(key, sizeof key, "%s_tensors", a->name);
    snprintf(title, sizeof title, "%s: tensors", a->name);
    emit_table_begin(e, key, title, cols, 5, 0);
    const gguf_arch_tensor *t;
    for (size_t i = 0; (t = gguf_arch_tensor_at(a, i)); i++) {
        char shape[96];
        if (t->ne2 != GGUF_DIM_1)
            snprintf(shape, sizeof shape, "[%s, %s, %s]", gguf_dim_name(t->ne0),
                     gguf_dim_name(t->ne1), gguf_dim_name(t->ne2));
        else if (t->ne1 == GGUF_DIM_1)
            snprintf(shape, sizeof shape, "[%s]", gguf_dim_name(t->ne0));
        else
            snprintf(shape, sizeof shape, "[%s, %s]", gguf_dim_name(t->ne0), gguf_dim_name(t->ne1));
        emit_value row[] = { ev_str(t->name), ev_str(gguf_role_name(t->role)), ev_str(shape),
                             ev_bool(gguf_arch_tensor_required(a, t)), ev_str(t->hf) };
        emit_row(e, row);
    }
    emit_table_end(e);
}

void arches_write(emit *e)
{
    size_t n;
    const gguf_arch *all = gguf_arch_list(&n);
    summary(e, all, n);
    for (size_t i = 0; i < n; i++) {
        keys(e, &all[i]);
        tensors(e, &all[i]);
    }
}
