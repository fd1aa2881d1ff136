/*
 * arches.c — the registry report (see arches.h). One section per
 * architecture: a map of its names and features, a table of its
 * hyper-parameter keys and a table of its tensors, all read from libgguf's
 * registry, so the listing is always what the tools do.
 */
#include "arches.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <ggufkit/arch.h>

#include "arch_recipe.h"

/* "a, b, c" of a NULL-terminated list into buf. */
static const char *join(const char *const *items, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = 0;
    for (; items && *items && o < size; items++)
        o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? ", " : "", *items);
    return buf;
}

/* The feature and converter words (libgguf's one table of them), then the
 * value the converter adds to the norms. */
static const char *features(const gguf_arch *a, char *buf, size_t size)
{
    size_t n, o = 0;
    const gguf_feature_word *words = gguf_feature_words(&n);
    buf[0] = 0;
    for (size_t i = 0; i < n && o < size; i++)
        if (gguf_feature_word_on(&words[i], a))
            o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? " " : "", words[i].word);
    const gguf_recipe *r = gguf_recipe_of(a);
    if (r && r->norm_offset != 0 && o < size) /* Gemma's norms written as w + 1 */
        snprintf(buf + o, size - o, "%sconvert:norm%+g", o ? " " : "", (double)r->norm_offset);
    return buf;
}

static const char *derive_text(const gguf_arch_hparam *h, char *buf, size_t size)
{
    switch (gguf_arch_hparam_derive(h)) {
    case GGUF_DERIVE_DEFAULT:     snprintf(buf, size, "%g", gguf_arch_hparam_default(h)); break;
    case GGUF_DERIVE_HEAD_COUNT:  snprintf(buf, size, "head_count"); break;
    case GGUF_DERIVE_HEAD_SIZE:   snprintf(buf, size, "embedding_length / head_count"); break;
    case GGUF_DERIVE_KEY_LENGTH:  snprintf(buf, size, "key_length"); break;
    case GGUF_DERIVE_ROPE_BASE:   snprintf(buf, size, "rope.freq_base"); break;
    case GGUF_DERIVE_CONTEXT_LENGTH: snprintf(buf, size, "context_length"); break;
    default:                      buf[0] = 0; break;
    }
    return buf;
}

static void summary(emit *e)
{
    static const emit_column cols[] = {
        { "name", NULL, 0 }, { "rope", NULL, 0 }, { "activation", NULL, 0 },
        { "features", NULL, 0 }, { "hf_classes", "HUGGING FACE CLASSES", 0 },
        { "about", NULL, 0 },
    };
    emit_table_begin(e, "architectures", "Architectures", cols, 6, EMIT_KEYED);
    const gguf_arch *a;
    for (size_t i = 0; (a = gguf_arch_at(i)); i++) {
        char classes[256], feats[256];
        const int act = gguf_arch_activation(a);
        const gguf_recipe *r = gguf_recipe_of(a);
        emit_value row[] = {
            ev_str(gguf_arch_name(a)), ev_str(gguf_arch_rope(a) == GGUF_ROPE_NEOX ? "neox" : "norm"),
            ev_str(act == GGUF_ACT_GELU_TANH ? "gelu-tanh"
                   : act == GGUF_ACT_SWIGLU_OAI ? "swiglu-oai" : "silu"),
            ev_str(features(a, feats, sizeof feats)),
            ev_str(join(r ? r->hf_classes : NULL, classes, sizeof classes)), ev_str(gguf_arch_about(a)),
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
    snprintf(key, sizeof key, "%s_keys", gguf_arch_name(a));
    snprintf(title, sizeof title, "%s: keys", gguf_arch_name(a));
    emit_table_begin(e, key, title, cols, 4, 0);
    const gguf_arch_hparam *h;
    for (size_t i = 0; (h = gguf_arch_hparam_at(a, i)); i++) {
        char name[128], der[64];
        snprintf(name, sizeof name, gguf_hp_key(gguf_arch_hparam_id(h)), gguf_arch_name(a));
        int64_t count;
        char type[40];
        switch (gguf_arch_hparam_array(h, &count)) {
        case GGUF_HP_ARRAY:
            snprintf(type, sizeof type, "integer[%" PRId64 "]", count);
            break;
        case GGUF_HP_PER_BLOCK:
            snprintf(type, sizeof type, "integer[block_count]");
            break;
        default:
            snprintf(type, sizeof type, "%s", gguf_arch_hparam_is_float(h) ? "float" : "integer");
        }
        emit_value row[] = { ev_str(name), ev_str(type),
                             ev_bool(gguf_arch_hparam_required(h)),
                             ev_str(derive_text(h, der, sizeof der)) };
        emit_row(e, row);
    }
    emit_table_end(e);
}

static void tensors(emit *e, const gguf_arch *a)
{
    static const emit_column cols[] = {
        { "name", NULL, 0 }, { "role", NULL, 0 }, { "shape", NULL, 0 },
        { "required", NULL, 0 }, { "blocks", NULL, 0 }, { "hf", "HF NAME", 0 },
    };
    char key[64], title[96];
    snprintf(key, sizeof key, "%s_tensors", gguf_arch_name(a));
    snprintf(title, sizeof title, "%s: tensors", gguf_arch_name(a));
    const gguf_recipe *rc = gguf_recipe_of(a);
    emit_table_begin(e, key, title, cols, 6, 0);
    const gguf_arch_tensor *t;
    for (size_t i = 0; (t = gguf_arch_tensor_at(a, i)); i++) {
        char shape[96];
        const int ne0 = gguf_arch_tensor_dim(t, 0), ne1 = gguf_arch_tensor_dim(t, 1),
                  ne2 = gguf_arch_tensor_dim(t, 2), role = gguf_arch_tensor_role(t);
        if (ne2 != GGUF_DIM_1)
            snprintf(shape, sizeof shape, "[%s, %s, %s]", gguf_dim_name(ne0), gguf_dim_name(ne1),
                     gguf_dim_name(ne2));
        else if (ne1 == GGUF_DIM_1)
            snprintf(shape, sizeof shape, "[%s]", gguf_dim_name(ne0));
        else
            snprintf(shape, sizeof shape, "[%s, %s]", gguf_dim_name(ne0), gguf_dim_name(ne1));
        const gguf_recipe_tensor *names = rc ? gguf_recipe_tensor_of(rc, role) : NULL;
        emit_value row[] = { ev_str(gguf_arch_tensor_name(t)), ev_str(gguf_role_name(role)),
                             ev_str(shape), ev_bool(gguf_arch_tensor_required(a, t)),
                             ev_str(gguf_arch_tensor_per_block(t)
                                        ? gguf_layers_name(gguf_arch_tensor_layers(t)) : "global"),
                             ev_str(names ? names->hf : NULL) };
        emit_row(e, row);
    }
    emit_table_end(e);
}

void arches_write(emit *e)
{
    summary(e);
    const gguf_arch *a;
    for (size_t i = 0; (a = gguf_arch_at(i)); i++) {
        keys(e, a);
        tensors(e, a);
    }
}
