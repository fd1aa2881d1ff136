/*
 * policy.c — llama.cpp's per-tensor type rules as data.
 *
 * A tensor belongs to the first class whose name fragment it contains, in
 * llama.cpp's order (attn_qkv before attn_v before ... ffn_down). Within a
 * class the first rule whose preset set, architecture and condition all
 * match sets the type; no match keeps the preset's default type.
 * Conditions refer to the layer index (counted per class as tensors are
 * visited), the number of such layers, grouped-query attention and experts.
 */
#include "policy.h"

#include <stdio.h>
#include <string.h>

#include "preset.h"
#include <ggufkit/gguf.h>

enum tclass { TC_ATTN_V, TC_ATTN_K, TC_ATTN_Q, TC_FFN_DOWN, TC_ATTN_OUTPUT,
              TC_FFN_GATE, TC_FFN_UP, TC_NONE };

/* In e21cdc11's order. The fused attn_qkv (Phi-3) and MLA's attn_kv_b are
 * attn_v to it (category_is_attn_v): its own attn_qkv rules (c392e50's
 * q5_K for Q4_K_M, ...) come after that test and are never reached. */
static const struct { const char *fragment; enum tclass cls; } class_fragments[] = {
    { "attn_qkv.weight", TC_ATTN_V },   { "attn_kv_b.weight", TC_ATTN_V },
    { "attn_v.weight", TC_ATTN_V },     { "attn_k.weight", TC_ATTN_K },
    { "attn_q.weight", TC_ATTN_Q },     { "attn_output.weight", TC_ATTN_OUTPUT },
    { "ffn_up", TC_FFN_UP },            { "ffn_gate", TC_FFN_GATE },
    { "ffn_down", TC_FFN_DOWN },
};

enum arch_cond { ANY_ARCH, FALCON, NOT_FALCON };

enum when {
    ALWAYS,
    GQA_GE4,            /* n_head / n_head_kv >= 4 */
    WV_LT2, WV_LT4,     /* attn_v index < 2, < 4 */
    WV_MORE_BITS,       /* use_more_bits(attn_v index, attn_v count) */
    LAYER_LT_N16,       /* layer < n_layer / 16 */
    LAYER_LT_N8,        /* layer < n_layer / 8 */
    LAYER_MORE_BITS,    /* use_more_bits(layer, n_layer) */
    IMATRIX_LAYER_LT_N8,/* an imatrix is used and layer < n_layer / 8 */
    NO_IMATRIX_LAYER_LT_N8, /* no imatrix and layer < n_layer / 8 */
    NO_IMATRIX,         /* no imatrix */
    LAYER_MIDDLE,       /* n_layer / 8 <= layer < 7 n_layer / 8 */
    EXPERTS8_LAYER_MORE_BITS, /* n_expert == 8 and use_more_bits(layer, n_layer) */
    GQA_GE4_OR_EXPERTS4,/* n_head / n_head_kv >= 4 or n_expert >= 4 */
    COUNTER_LT_N8,      /* the class counter (not the layer in the name) < n_layer / 8 */
    EXPERTS8,           /* n_expert == 8 */
    NOT_EXPERTS8,
    IS_70B_Q3K_Q4K      /* 70B model and the type so far is q3_K or q4_K */
};

#define F(x) (1ull << GGUF_FT_##x)

typedef struct rule {
    enum tclass    cls;
    uint64_t       ftypes; /* presets it applies to; 0 = all */
    enum arch_cond arch;
    enum when      when;
    uint32_t       type;
} rule;

/* Class rules: first match per class wins. */
static const rule rules[] = {
    { TC_ATTN_V, F(Q2_K), ANY_ARCH, GQA_GE4, GGUF_DT_Q4_K },
    { TC_ATTN_V, F(Q2_K), ANY_ARCH, ALWAYS, GGUF_DT_Q3_K },
    { TC_ATTN_V, F(Q2_K_S), ANY_ARCH, GQA_GE4, GGUF_DT_Q4_K },
    { TC_ATTN_V, F(IQ3_XXS), ANY_ARCH, GQA_GE4, GGUF_DT_Q4_K },
    { TC_ATTN_V, F(IQ3_XXS), ANY_ARCH, NO_IMATRIX, GGUF_DT_IQ3_S },
    { TC_ATTN_V, F(IQ3_XXS), ANY_ARCH, ALWAYS, GGUF_DT_IQ3_XXS },
    { TC_ATTN_V, F(IQ3_XS) | F(IQ3_S), ANY_ARCH, GQA_GE4, GGUF_DT_Q4_K },
    { TC_ATTN_V, F(IQ3_M), ANY_ARCH, ALWAYS, GGUF_DT_Q4_K },
    { TC_ATTN_V, F(Q3_K_M), ANY_ARCH, WV_LT2, GGUF_DT_Q5_K },
    { TC_ATTN_V, F(Q3_K_M), ANY_ARCH, ALWAYS, GGUF_DT_Q4_K },
    { TC_ATTN_V, F(Q3_K_L), ANY_ARCH, ALWAYS, GGUF_DT_Q5_K },
    { TC_ATTN_V, F(Q4_K_M) | F(Q5_K_M), ANY_ARCH, WV_MORE_BITS, GGUF_DT_Q6_K },
    { TC_ATTN_V, F(Q4_K_S), ANY_ARCH, WV_LT4, GGUF_DT_Q5_K },
    { TC_ATTN_V, F(IQ4_NL) | F(IQ4_XS), ANY_ARCH, GQA_GE4, GGUF_DT_Q5_K },

    { TC_ATTN_K, 0, ANY_ARCH, EXPERTS8, GGUF_DT_Q8_0 },
    { TC_ATTN_K, F(IQ3_XS), ANY_ARCH, ALWAYS, GGUF_DT_IQ3_XXS },
    { TC_ATTN_K, F(IQ3_XXS), ANY_ARCH, ALWAYS, GGUF_DT_IQ2_S },

    { TC_ATTN_Q, F(IQ3_XS), ANY_ARCH, ALWAYS, GGUF_DT_IQ3_XXS },
    { TC_ATTN_Q, F(IQ3_XXS), ANY_ARCH, ALWAYS, GGUF_DT_IQ2_S },

    { TC_FFN_DOWN, F(Q2_K), ANY_ARCH, ALWAYS, GGUF_DT_Q3_K },
    { TC_FFN_DOWN, F(Q2_K_S), ANY_ARCH, LAYER_LT_N8, GGUF_DT_Q4_K },
    { TC_FFN_DOWN, F(IQ3_XXS), ANY_ARCH, NO_IMATRIX_LAYER_LT_N8, GGUF_DT_Q4_K },
    { TC_FFN_DOWN, F(IQ3_XXS), ANY_ARCH, NO_IMATRIX, GGUF_DT_Q3_K },
    { TC_FFN_DOWN, F(Q3_K_M), ANY_ARCH, LAYER_LT_N16, GGUF_DT_Q5_K },
    { TC_FFN_DOWN, F(Q3_K_M), NOT_FALCON, ALWAYS, GGUF_DT_Q4_K },
    { TC_FFN_DOWN, F(Q3_K_M), ANY_ARCH, LAYER_MORE_BITS, GGUF_DT_Q4_K },
    { TC_FFN_DOWN, F(Q3_K_M), ANY_ARCH, ALWAYS, GGUF_DT_Q3_K },
    { TC_FFN_DOWN, F(IQ3_M), ANY_ARCH, LAYER_LT_N8, GGUF_DT_Q4_K },
    { TC_FFN_DOWN, F(IQ3_M), ANY_ARCH, EXPERTS8_LAYER_MORE_BITS, GGUF_DT_Q4_K },
    { TC_FFN_DOWN, F(Q3_K_L), FALCON, ALWAYS, GGUF_DT_Q4_K },
    { TC_FFN_DOWN, F(Q3_K_L), ANY_ARCH, ALWAYS, GGUF_DT_Q5_K },
    { TC_FFN_DOWN, F(Q4_K_M), FALCON, LAYER_LT_N16, GGUF_DT_Q6_K },
    { TC_FFN_DOWN, F(Q4_K_M), FALCON, LAYER_MORE_BITS, GGUF_DT_Q5_K },
    { TC_FFN_DOWN, F(Q4_K_M), FALCON, ALWAYS, GGUF_DT_Q4_K },
    { TC_FFN_DOWN, F(Q4_K_M), ANY_ARCH, LAYER_MORE_BITS, GGUF_DT_Q6_K },
    { TC_FFN_DOWN, F(IQ4_NL) | F(IQ4_XS), ANY_ARCH, NO_IMATRIX_LAYER_LT_N8, GGUF_DT_Q5_K },
    { TC_FFN_DOWN, F(Q5_K_M), ANY_ARCH, LAYER_MORE_BITS, GGUF_DT_Q6_K },
    { TC_FFN_DOWN, F(Q4_K_S), NOT_FALCON, LAYER_LT_N8, GGUF_DT_Q5_K },
    { TC_FFN_DOWN, F(Q4_0), ANY_ARCH, IMATRIX_LAYER_LT_N8, GGUF_DT_Q4_1 },
    { TC_FFN_DOWN, F(Q5_0), ANY_ARCH, IMATRIX_LAYER_LT_N8, GGUF_DT_Q5_1 },

    { TC_ATTN_OUTPUT, F(Q2_K) | F(IQ3_XS) | F(IQ3_XXS) | F(Q3_K_S) | F(Q3_K_M) | F(IQ4_NL) |
      F(Q4_K_S) | F(Q4_K_M) | F(IQ3_S) | F(IQ3_M) | F(IQ4_XS), NOT_FALCON, EXPERTS8, GGUF_DT_Q5_K },
    { TC_ATTN_OUTPUT, F(Q2_K), NOT_FALCON, NOT_EXPERTS8, GGUF_DT_Q3_K },
    { TC_ATTN_OUTPUT, F(IQ3_XXS), NOT_FALCON, NOT_EXPERTS8, GGUF_DT_IQ3_S },
    { TC_ATTN_OUTPUT, F(IQ3_M), NOT_FALCON, NOT_EXPERTS8, GGUF_DT_Q4_K },
    { TC_ATTN_OUTPUT, F(Q3_K_M), NOT_FALCON, NOT_EXPERTS8, GGUF_DT_Q4_K },
    { TC_ATTN_OUTPUT, F(Q3_K_L), NOT_FALCON, NOT_EXPERTS8, GGUF_DT_Q5_K },
    { TC_ATTN_OUTPUT, F(Q3_K_L), FALCON, ALWAYS, GGUF_DT_Q4_K },

    { TC_FFN_GATE, F(IQ3_XS), ANY_ARCH, LAYER_MIDDLE, GGUF_DT_IQ3_XXS },
    { TC_FFN_UP, F(IQ3_XS), ANY_ARCH, LAYER_MIDDLE, GGUF_DT_IQ3_XXS },
};

/* The lowest-bit presets replace the class rules above with their own
 * (llama.cpp tests them first, and its attn_v adjustments for 70B and
 * eight experts do not reach them). */
#define LOW_BIT (F(IQ2_XXS) | F(IQ2_XS) | F(IQ1_S) | F(IQ2_S) | F(IQ2_M) | F(IQ1_M))
#define LOW_IQ2SM (F(IQ2_S) | F(IQ2_M))
#define LOW_IQ1 (F(IQ1_S) | F(IQ1_M))

static const rule low_bit_rules[] = {
    { TC_ATTN_V, LOW_BIT, ANY_ARCH, GQA_GE4_OR_EXPERTS4, GGUF_DT_Q4_K },
    { TC_ATTN_V, LOW_IQ2SM, ANY_ARCH, ALWAYS, GGUF_DT_IQ3_S },
    { TC_ATTN_V, LOW_BIT, ANY_ARCH, ALWAYS, GGUF_DT_Q2_K },
    { TC_ATTN_K, LOW_BIT, ANY_ARCH, EXPERTS8, GGUF_DT_Q4_K },
    { TC_FFN_DOWN, LOW_IQ2SM, ANY_ARCH, COUNTER_LT_N8, GGUF_DT_IQ3_S },
    { TC_FFN_DOWN, LOW_BIT, ANY_ARCH, COUNTER_LT_N8, GGUF_DT_Q2_K },
    { TC_ATTN_OUTPUT, LOW_BIT, ANY_ARCH, EXPERTS8, GGUF_DT_Q5_K },
    { TC_ATTN_OUTPUT, LOW_IQ1, ANY_ARCH, ALWAYS, GGUF_DT_IQ2_XXS },
    { TC_ATTN_OUTPUT, LOW_IQ2SM, ANY_ARCH, ALWAYS, GGUF_DT_IQ3_S },
};

/* Adjustments applied to attn_v after its class rule, in order. */
static const rule attn_v_post[] = {
    { TC_ATTN_V, 0, ANY_ARCH, IS_70B_Q3K_Q4K, GGUF_DT_Q5_K },
    { TC_ATTN_V, 0, ANY_ARCH, EXPERTS8, GGUF_DT_Q8_0 },
};

/* llama.cpp's use_more_bits: the first and last eighth, and every third
 * layer in between, get more bits. */
static bool more_bits(int i, int n)
{
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

typedef struct ctx {
    const policy_model *m;
    const policy_state *st;
    int                 layer, n_layer;
    int                 counter; /* the class counter before this tensor */
    uint32_t            cur;
} ctx;

static bool holds(enum when w, const ctx *c)
{
    const policy_model *m = c->m;
    switch (w) {
    case ALWAYS: return true;
    case GQA_GE4: return m->n_head_kv > 0 && m->n_head / m->n_head_kv >= 4;
    case WV_LT2: return c->st->i_attention_wv < 2;
    case WV_LT4: return c->st->i_attention_wv < 4;
    case WV_MORE_BITS: return more_bits(c->st->i_attention_wv, m->n_attention_wv);
    case LAYER_LT_N16: return c->layer < c->n_layer / 16;
    case LAYER_LT_N8: return c->layer < c->n_layer / 8;
    case LAYER_MORE_BITS: return more_bits(c->layer, c->n_layer);
    case IMATRIX_LAYER_LT_N8: return c->st->has_imatrix && c->layer < c->n_layer / 8;
    case NO_IMATRIX_LAYER_LT_N8: return !c->st->has_imatrix && c->layer < c->n_layer / 8;
    case NO_IMATRIX: return !c->st->has_imatrix;
    case LAYER_MIDDLE: return c->layer >= c->n_layer / 8 && c->layer < 7 * c->n_layer / 8;
    case EXPERTS8_LAYER_MORE_BITS: return m->n_expert == 8 && more_bits(c->layer, c->n_layer);
    case GQA_GE4_OR_EXPERTS4:
        return (m->n_head_kv > 0 && m->n_head / m->n_head_kv >= 4) || m->n_expert >= 4;
    case COUNTER_LT_N8: return c->counter < c->n_layer / 8;
    case EXPERTS8: return m->n_expert == 8;
    case NOT_EXPERTS8: return m->n_expert != 8;
    case IS_70B_Q3K_Q4K: return m->is_70b && (c->cur == GGUF_DT_Q3_K || c->cur == GGUF_DT_Q4_K);
    }
    return false;
}

static bool rule_applies(const rule *r, int ftype, const ctx *c)
{
    if (r->ftypes && !(r->ftypes & (1ull << ftype)))
        return false;
    if ((r->arch == FALCON && !c->m->falcon) || (r->arch == NOT_FALCON && c->m->falcon))
        return false;
    return holds(r->when, c);
}

static enum tclass classify(const char *name)
{
    for (size_t k = 0; k < sizeof class_fragments / sizeof *class_fragments; k++)
        if (strstr(name, class_fragments[k].fragment))
            return class_fragments[k].cls;
    return TC_NONE;
}

/* Layer of a per-layer tensor: the class counter, or (with experts, whose
 * tensors are not consecutive) the number in the name. */
static int layer_of(const policy_model *m, const char *name, int counter)
{
    int l;
    if (m->n_expert > 1 && sscanf(name, "blk.%d.", &l) == 1)
        return l;
    return counter;
}

bool policy_is_token_embd(const char *name)
{
    return !strcmp(name, "token_embd.weight") || !strcmp(name, "per_layer_token_embd.weight");
}

bool policy_is_quantizable(const char *name, uint32_t n_dims, const policy_opts *o)
{
    static const char *const never[] = {
        "_norm.weight", "ffn_gate_inp.weight", "ssm_conv1d.weight", "time_mix_first.weight",
        "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_decay_w1.weight",
        "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight", "attn_rel_b.weight",
        "per_layer_model_proj", /* e21cdc11: small enough to keep (Gemma 4) */
    };
    size_t n = strlen(name);
    if (n < 6 || strcmp(name + n - 6, "weight") != 0 || n_dims < 2)
        return false;
    for (size_t i = 0; i < sizeof never / sizeof *never; i++)
        if (strstr(name, never[i]))
            return false;
    if (strcmp(name, "position_embd.weight") == 0 || strcmp(name, "token_types.weight") == 0)
        return false;
    return !(o->leave_output && strcmp(name, "output.weight") == 0);
}

/* The mix: class rules (and the output/embedding special cases). */
static bool in_set(uint64_t set, int ftype) { return (set >> ftype) & 1; }

static uint32_t mixed_type(const policy_model *m, policy_state *st, const policy_opts *o,
                           int ftype, uint32_t t, const char *name, int64_t ne0, int64_t ne2)
{
    uint64_t row;
    bool is_output = strcmp(name, "output.weight") == 0 ||
                     (!m->has_output && policy_is_token_embd(name));
    if (is_output) {
        if (o->output_type >= 0)
            return (uint32_t)o->output_type;
        if (ftype == GGUF_FT_MXFP4_MOE || m->falcon || gguf_row_size(t, ne0, &row, NULL) != 0)
            return GGUF_DT_Q8_0;
        if (in_set(LOW_BIT | F(IQ3_XXS), ftype))
            return GGUF_DT_Q5_K;
        return t == GGUF_DT_Q8_0 ? t : GGUF_DT_Q6_K;
    }
    /* MXFP4_MOE: experts (3-D tensors) in mxfp4, everything else q8_0 */
    if (ftype == GGUF_FT_MXFP4_MOE)
        return ne2 > 1 ? GGUF_DT_MXFP4 : GGUF_DT_Q8_0;
    if (policy_is_token_embd(name)) {
        if (o->token_embedding_type >= 0)
            return (uint32_t)o->token_embedding_type;
        if (in_set(F(IQ2_XXS) | F(IQ2_XS) | LOW_IQ1, ftype))
            return GGUF_DT_Q2_K;
        if (in_set(LOW_IQ2SM | F(IQ3_XXS), ftype))
            return GGUF_DT_IQ3_S;
        /* the ternary presets keep the embedding in q4_K */
        return ftype == GGUF_FT_TQ1_0 || ftype == GGUF_FT_TQ2_0 ? GGUF_DT_Q4_K : t;
    }

    enum tclass cls = classify(name);
    const bool low = in_set(LOW_BIT, ftype);
    /* the low-bit rules count attn_v and ffn_down only */
    int *counter = cls == TC_ATTN_V ? &st->i_attention_wv : cls == TC_FFN_DOWN ? &st->i_ffn_down
                 : low ? NULL : cls == TC_FFN_GATE ? &st->i_ffn_gate : cls == TC_FFN_UP ? &st->i_ffn_up
                 : NULL;
    ctx c = { m, st, counter ? layer_of(m, name, *counter) : 0, m->n_layer,
              counter ? *counter : 0, t };
    const rule *table = low ? low_bit_rules : rules;
    const size_t n = low ? sizeof low_bit_rules / sizeof *low_bit_rules : sizeof rules / sizeof *rules;
    for (size_t i = 0; i < n; i++)
        if (table[i].cls == cls && rule_applies(&table[i], ftype, &c)) {
            c.cur = table[i].type;
            break;
        }
    if (cls == TC_ATTN_V && !low)
        for (size_t i = 0; i < sizeof attn_v_post / sizeof *attn_v_post; i++)
            if (rule_applies(&attn_v_post[i], ftype, &c))
                c.cur = attn_v_post[i].type;
    if (counter)
        ++*counter;
    return c.cur;
}

/* t, or its fallback (counted and explained in why) when rows of ne0 do not
 * fit its blocks: llama.cpp e21cdc11's tensor_type_fallback, from the type
 * table (gguf_dtype_fit; q2_K and q3_K fall back to q4_0 there, c392e50
 * used iq4_nl), and f16 where that does not fit either or llama.cpp has
 * none (it gives up: "Unsupported tensor size"). */
static uint32_t fit_rows(uint32_t t, int64_t ne0, policy_state *st, char *why, size_t why_size)
{
    const uint32_t fb = gguf_dtype_fit(t, ne0);
    if (fb == t)
        return t;
    if (why)
        snprintf(why, why_size, "rows of %lld do not fit %s blocks of %u: %s", (long long)ne0,
                 gguf_dtype_name(t), gguf_dtype_get(t)->blck_size, gguf_dtype_name(fb));
    st->n_fallback++;
    return fb;
}

uint32_t policy_tensor_type(const policy_model *m, policy_state *st, const policy_opts *o,
                            int ftype, uint32_t dflt, const char *name, int64_t ne0,
                            int forced, char *why, size_t why_size)
{
    return policy_tensor_type_3d(m, st, o, ftype, dflt, name, ne0, 1, forced, why, why_size);
}

uint32_t policy_tensor_type_3d(const policy_model *m, policy_state *st, const policy_opts *o,
                               int ftype, uint32_t dflt, const char *name, int64_t ne0,
                               int64_t ne2, int forced, char *why, size_t why_size)
{
    uint32_t t = dflt;
    const gguf_dtype_traits *tt = gguf_dtype_get(dflt);
    bool quantized = tt && tt->blck_size > 1;
    if (why && why_size)
        why[0] = '\0';
    if (!o->pure && quantized) {
        t = fit_rows(mixed_type(m, st, o, ftype, dflt, name, ne0, ne2), ne0, st, why, why_size);
    }
    if (forced >= 0)
        t = (uint32_t)forced;
    if (o->token_embedding_type >= 0 && policy_is_token_embd(name))
        t = (uint32_t)o->token_embedding_type;
    if (o->output_type >= 0 && strcmp(name, "output.weight") == 0)
        t = (uint32_t)o->output_type;
    /* --pure or an explicit type can still meet rows that do not fit. */
    return fit_rows(t, ne0, st, why, why_size);
}
