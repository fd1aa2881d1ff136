/*
 * arch_recipe.c — how llama.cpp's converter makes each family's files
 * (see arch_recipe.h), and the feature words.
 *
 * The recipes themselves are rows of families.c, next to each family's
 * schema; this file finds them and holds the feature words.
 */
#include "arch_recipe.h"

#include <stdio.h>
#include <string.h>

#include "arch_impl.h"

#define RECIPES gguf_recipes
#define N_RECIPES gguf_n_recipes

/* ===========================================================================
 * The feature words, in the order `gguf-inspect --arches` prints them
 */

#define RUN(f, w) { GGUF_WORD_RUN, GGUF_FEAT_##f, w }
#define CONVERT(f, w) { GGUF_WORD_CONVERT, GGUF_FACT_##f, w }
#define MODEL(f, w) { GGUF_WORD_MODEL, GGUF_FEAT_##f, w }
static const gguf_feature_word WORDS[] = {
    RUN(QKV_BIAS, "qkv-bias"), RUN(TIED_OUTPUT, "tied-output"),
    RUN(ROPE_WHOLE_HEAD, "rope-whole-head"), RUN(EXPERTS, "experts"),
    RUN(QK_NORM, "qk-norm"), RUN(FUSED_QKV, "fused-qkv"),
    RUN(FUSED_GATE_UP, "fused-gate-up"), RUN(ATTN_SINKS, "attn-sinks"),
    RUN(ROPE_LLAMA3, "rope-llama3"), RUN(ROPE_LINEAR, "rope-linear"),
    RUN(SCALE_Q, "scale-q"),
    CONVERT(PERMUTE_QK, "convert:permute-qk"),
    CONVERT(LLAMA_VOCAB, "convert:llama-vocab"),
    CONVERT(WRITES_ROPE_DIM, "convert:rope-dim-key"),
    CONVERT(PHI3_VOCAB, "convert:phi3-vocab"),
    RUN(ROPE_YARN, "rope-yarn"),
    CONVERT(MXFP4_EXPERTS, "convert:mxfp4-experts"),
    RUN(SCALE_EMBD, "scale-embd"), RUN(ATTN_SOFTCAP, "attn-softcap"),
    RUN(SWA_ROPE_PLAIN, "swa-rope-plain"),
    CONVERT(TRIM_EMBD, "convert:trim-embd"),
    CONVERT(NO_SPACE_PREFIX, "convert:no-space-prefix"),
    CONVERT(OWN_ROPE_KEYS, "convert:own-rope-keys"),
    RUN(DELTA_NET, "delta-net"), RUN(ATTN_GATE, "attn-gate"), RUN(MROPE, "mrope"),
    RUN(SHARED_EXPERT, "shared-expert"),
    RUN(PER_LAYER_INPUTS, "per-layer-inputs"), RUN(SHARED_KV, "shared-kv"),
    RUN(V_FROM_K, "v-from-k"), RUN(DENSE_AND_EXPERTS, "dense-and-experts"),
    RUN(LAYER_OUT_SCALE, "layer-out-scale"), RUN(ROPE_FREQS_FULL, "rope-freqs-full"),
    RUN(ATTN_SCALE_1, "attn-scale-1"),
    CONVERT(ROPE_PROPORTIONAL, "convert:rope-proportional"),
    RUN(SIGMOID_ROUTING, "sigmoid-routing"), RUN(NEXTN, "nextn"),
    CONVERT(NEXTN_BLOCKS, "convert:nextn-blocks"),
    RUN(MLA, "mla"), CONVERT(KV_B_SPLIT, "convert:kv-b-split"),
};
#undef RUN
#undef CONVERT
#undef MODEL
#define N_WORDS (sizeof WORDS / sizeof *WORDS)

const gguf_feature_word *gguf_feature_words(size_t *n)
{
    *n = N_WORDS;
    return WORDS;
}

bool gguf_feature_word_on(const gguf_feature_word *w, const gguf_arch *a)
{
    return w->kind == GGUF_WORD_CONVERT ? gguf_recipe_has(gguf_recipe_of(a), w->id)
                                        : gguf_arch_has(a, w->id);
}

const char *gguf_feature_name(int feature)
{
    for (size_t i = 0; i < N_WORDS; i++)
        if (WORDS[i].kind != GGUF_WORD_CONVERT && WORDS[i].id == feature)
            return WORDS[i].word;
    return "unknown";
}


const gguf_recipe *gguf_recipe_of(const gguf_arch *a)
{
    for (size_t i = 0; a && i < N_RECIPES; i++)
        if (!strcmp(RECIPES[i].arch, gguf_arch_name(a)))
            return &RECIPES[i];
    return NULL;
}

const gguf_arch *gguf_recipe_find_hf(const char *hf_class)
{
    for (size_t i = 0; hf_class && i < N_RECIPES; i++)
        for (const char *const *n = RECIPES[i].hf_classes; *n; n++)
            if (!strcmp(*n, hf_class))
                return gguf_arch_find(RECIPES[i].arch);
    return NULL;
}

const char *gguf_recipe_hf_list(void)
{
    static char list[512];
    if (!list[0]) {
        size_t len = 0;
        for (size_t i = 0; i < N_RECIPES; i++)
            for (const char *const *n = RECIPES[i].hf_classes; *n && len < sizeof list; n++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", *n);
    }
    return list;
}

bool gguf_recipe_has(const gguf_recipe *r, int fact)
{
    return r && fact >= 0 && fact < GGUF_FACT_COUNT && (r->facts >> fact & 1u);
}

const gguf_recipe_tensor *gguf_recipe_tensor_of(const gguf_recipe *r, int role)
{
    for (const gguf_recipe_tensor *const *l = r->tensors; *l; l++)
        for (const gguf_recipe_tensor *t = *l; t->role != GGUF_ROLE_COUNT; t++)
            if (t->role == role)
                return t;
    return NULL;
}
