/*
 * model.c — finds and checks a transformer's hyperparameters and tensors.
 *
 * Everything the forward pass will index is checked here once: every count
 * is positive and bounded, every division is exact, every tensor has the
 * shape and a type the kernels multiply. Not for: computing anything.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernels.h"
#include "model.h"
#include "pool.h"
#include <ggufkit/arch.h>
#include <ggufkit/quants.h>

#include "arch_recipe.h"

#define MAX_DIM (1 << 24) /* any single dimension; keeps int products in range */

/* ---------------------------------------------------------------------------
 * Architectures: every one in libgguf's registry runs; how each differs is
 * its row there (rope layout, which tensors are required).
 */

/* A row asking for a model feature the forward pass does not implement
 * (kind GGUF_WORD_MODEL in libgguf's table of feature words) is refused by
 * name rather than run wrongly; converter facts do not matter here. */
static int check_features(const gguf_arch *a, gguf_error *err)
{
    size_t n;
    const gguf_feature_word *w = gguf_feature_words(&n);
    for (size_t i = 0; i < n; i++)
        if (w[i].kind == GGUF_WORD_MODEL && gguf_feature_word_on(&w[i], a))
            return gguf_error_setc(err, GGUF_ERR_UNSUPPORTED, "gguf-run does not implement the "
                                   "feature %s of %s models", w[i].word, gguf_arch_name(a));
    /* gpt-oss's SwiGLU-OAI and top-k-then-softmax routing come together */
    const int act = gguf_arch_activation(a), routing = gguf_arch_routing(a);
    const bool oai = act == GGUF_ACT_SWIGLU_OAI && routing == GGUF_ROUTING_TOPK_SOFTMAX;
    const bool act_ok = act == GGUF_ACT_SILU || act == GGUF_ACT_GELU_TANH || oai;
    const bool routing_ok = routing == GGUF_ROUTING_NONE || routing == GGUF_ROUTING_SOFTMAX_TOPK ||
                            routing == GGUF_ROUTING_SIGMOID_BIAS || oai;
    if (!act_ok || !routing_ok)
        return gguf_error_setc(err, GGUF_ERR_UNSUPPORTED, "gguf-run does not implement the "
                               "activation or expert routing of %s models", gguf_arch_name(a));
    return 0;
}

/* "llama, mistral and qwen2" for the unsupported-architecture message. */
static const char *arch_names(void)
{
    static char list[256];
    size_t n = list[0] ? 0 : gguf_arch_count(), len = 0; /* once: the first name ends the test */
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                i == 0 ? "" : i + 1 == n ? " and " : ", ",
                                gguf_arch_name(gguf_arch_at(i)));
    return list;
}

/* ---------------------------------------------------------------------------
 * Hyperparameters
 */

/* An integer key {arch}.SUFFIX in [lo, hi]; def when absent and not required
 * (only {arch}.vocab_size, which is not a hyper-parameter of the registry). */
static int key_int(const gguf_file *f, const char *fmt, const char *arch, bool required,
                   int64_t def, int64_t lo, int64_t hi, int *out, gguf_error *err)
{
    char key[128];
    snprintf(key, sizeof key, fmt, arch);
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    int64_t v = def;
    if (!kv) {
        if (required)
            return gguf_error_set(err, "missing key %s", key);
    } else if (!gguf_kv_int(kv, &v)) {
        return gguf_error_set(err, "key %s is %s, expected an integer", key,
                              gguf_vtype_name(kv->type));
    }
    if (v < lo || v > hi)
        return gguf_error_set(err, "key %s is %lld, expected %lld..%lld", key, (long long)v,
                              (long long)lo, (long long)hi);
    *out = (int)v;
    return 0;
}

/* A hyper-parameter of the registry's view: an integer, or a float. */
static int hp_int(const gguf_hparams *g, int id)
{
    int64_t v;
    gguf_hparams_get_int(g, id, &v);
    return (int)v;
}

static float hp_float(const gguf_hparams *g, int id)
{
    double v;
    gguf_hparams_get(g, id, &v);
    return (float)v;
}

/* Linear rope scaling (angles divided by the factor), YaRN or none (phi3's
 * LongRoPE: its factor tensors and the attention factor). The type is a
 * string, the one rope key the registry does not read. */
static int load_rope_scaling(run_hparams *hp, const gguf_file *f, const gguf_hparams *g,
                             const char *arch, gguf_error *err)
{
    char key[128];
    snprintf(key, sizeof key, GGUF_KEY_ROPE_SCALING_TYPE, arch);
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    gguf_str type = { "none", 4 };
    if (kv && !gguf_kv_str(kv, &type))
        return gguf_error_set(err, "key %s is %s, expected a string", key, gguf_vtype_name(kv->type));
    hp->rope_yarn = gguf_str_eq(type, "yarn");
    if (!gguf_str_eq(type, "none") && !gguf_str_eq(type, "linear") && !hp->rope_yarn)
        return gguf_error_set(err, "rope scaling \"%.*s\" is not supported (only linear and yarn)",
                              (int)(type.len > 32 ? 32 : type.len), type.ptr);
    /* rope.scaling.factor, else rope.scale_linear, else none */
    double factor = 0;
    if (!gguf_hparams_get(g, GGUF_HP_ROPE_SCALING_FACTOR, &factor))
        gguf_hparams_get(g, GGUF_HP_ROPE_SCALE_LINEAR, &factor);
    hp->rope_scale = (float)factor == 0 || gguf_str_eq(type, "none") ? 1.0f : 1.0f / (float)factor;
    hp->rope_attn_factor = hp_float(g, GGUF_HP_ROPE_SCALING_ATTN_FACTOR);
    hp->n_ctx_orig = hp_int(g, GGUF_HP_ROPE_ORIG_CTX);
    if (hp->rope_attn_factor == 0) {
        snprintf(key, sizeof key, GGUF_KEY_ROPE_SCALING_ATTN_FACTOR, arch);
        return gguf_error_set(err, "key %s is 0: it would zero every query and key", key);
    }
    return 0;
}

/* YaRN as llama.cpp's context sets it up (llama_context: ext_factor 1 when
 * not given; attn_factor = mscale(factor) / (1 + 0.1 ln factor), which ggml's
 * rope multiplies by 1 + 0.1 ln(1 / freq_scale) again) and ggml's
 * correction dims for n_rot. */
static float yarn_get_mscale(float factor, float mscale)
{
    return factor <= 1.0f ? 1.0f : 0.1f * mscale * logf(factor) + 1.0f;
}

static void load_yarn(run_hparams *hp, const gguf_hparams *g)
{
    const float beta_fast = hp_float(g, GGUF_HP_ROPE_YARN_BETA_FAST),
                beta_slow = hp_float(g, GGUF_HP_ROPE_YARN_BETA_SLOW);
    hp->yarn_ext_factor = hp_float(g, GGUF_HP_ROPE_YARN_EXT_FACTOR);
    float attn = 1.0f;
    if (hp->yarn_ext_factor != 0) {
        const float factor = 1.0f / hp->rope_scale;
        /* DeepSeek: rope.scaling.yarn_log_multiplier is 0.1 × mscale_all_dim
         * (the converter's legacy factor, divided out again by llama.cpp's
         * loader); the ratio of the two magnitude scales, mscale 1 unless
         * mscale_all_dim is not (llama_context's special case) */
        const float all = hp->mla ? hp_float(g, GGUF_HP_ROPE_YARN_LOG_MUL) / 0.1f : 0.0f;
        if (all != 0.0f)
            attn = yarn_get_mscale(factor, all != 1.0f ? all : 1.0f) /
                   yarn_get_mscale(factor, all);
        else
            attn = yarn_get_mscale(factor, 1.0f);
        attn *= 1.0f / (1.0f + 0.1f * logf(factor));
    }
    attn *= hp->rope_attn_factor;
    hp->yarn_attn = attn;
    if (hp->yarn_ext_factor != 0)
        attn *= 1.0f + 0.1f * logf(1.0f / hp->rope_scale);
    hp->yarn_mscale = attn;
    const float two_pi = 2 * (float)M_PI;
    const float lo = (float)hp->n_rot * logf((float)hp->n_ctx_orig / (beta_fast * two_pi)) /
                     (2 * logf(hp->rope_base));
    const float hi = (float)hp->n_rot * logf((float)hp->n_ctx_orig / (beta_slow * two_pi)) /
                     (2 * logf(hp->rope_base));
    hp->yarn_corr[0] = fmaxf(0.0f, floorf(lo));
    hp->yarn_corr[1] = fminf((float)(hp->n_rot - 1), ceilf(hi));
}

/* Qwen 3.5: the gated delta net's sizes and the interval of the attention
 * blocks, M-RoPE's sections, the shared expert's width. The registry's
 * rules hold inner_size to state_size × time_step_rank (values as wide as
 * keys, as the delta rule needs) and time_step_rank to a multiple of
 * group_count; here the state must stay addressable. */
static int load_hybrid(run_hparams *hp, const gguf_hparams *g, const gguf_arch *a,
                       gguf_error *err)
{
    /* the shared expert's width: its up matrix's rows (qwen35moe's own
     * key; glm4moe's expert_shared_count experts of the experts' width) */
    const gguf_arch_tensor *shexp = gguf_arch_tensor_of(a, GGUF_ROLE_FFN_UP_SHEXP);
    if (gguf_arch_has(a, GGUF_FEAT_SHARED_EXPERT) && shexp)
        hp->n_ff_shexp = (int)gguf_hparams_dim(g, gguf_arch_tensor_dim(shexp, 1));
    if (gguf_arch_has(a, GGUF_FEAT_MROPE)) {
        int64_t sec[4] = { 0 };
        gguf_hparams_array(g, GGUF_HP_ROPE_DIM_SECTIONS, sec, 4);
        for (int i = 0; i < 4; i++)
            hp->rope_sections[i] = (int)sec[i];
        hp->rope_imrope = true;
        /* ggml_rope_multi's own asserts */
        if (sec[0] + sec[1] + sec[2] <= 0)
            return gguf_error_set(err, "rope.dimension_sections %lld, %lld, %lld, %lld: M-RoPE "
                                  "needs one of the first three", (long long)sec[0],
                                  (long long)sec[1], (long long)sec[2], (long long)sec[3]);
        if (sec[0] + sec[1] + sec[2] + sec[3] > hp->head_dim)
            return gguf_error_set(err, "rope.dimension_sections add up to %lld, more than the "
                                  "head size %d", (long long)(sec[0] + sec[1] + sec[2] + sec[3]),
                                  hp->head_dim);
    }
    if (!gguf_arch_has(a, GGUF_FEAT_DELTA_NET))
        return 0;
    hp->ssm_conv_k = hp_int(g, GGUF_HP_SSM_CONV_KERNEL);
    hp->ssm_d_state = hp_int(g, GGUF_HP_SSM_STATE_SIZE);
    hp->ssm_n_group = hp_int(g, GGUF_HP_SSM_GROUP_COUNT);
    hp->ssm_dt_rank = hp_int(g, GGUF_HP_SSM_TIME_STEP_RANK);
    hp->ssm_d_inner = hp_int(g, GGUF_HP_SSM_INNER_SIZE);
    hp->full_attn_interval = hp_int(g, GGUF_HP_FULL_ATTN_INTERVAL);
    if ((int64_t)hp->ssm_d_state * hp->ssm_d_state * hp->ssm_dt_rank > MAX_DIM ||
        (int64_t)hp->ssm_conv_k * (2 * (int64_t)hp->ssm_n_group * hp->ssm_d_state +
                                   hp->ssm_d_inner) > MAX_DIM)
        return gguf_error_set(err, "the gated delta net's state (ssm.state_size %d, "
                              "ssm.time_step_rank %d, ssm.conv_kernel %d) is too large",
                              hp->ssm_d_state, hp->ssm_dt_rank, hp->ssm_conv_k);
    return 0;
}

/* Sigmoid routing with a score bias (GLM-4.5; DeepSeek's too) and the
 * blocks that run: the gating function (0, absent: sigmoid, as llama.cpp
 * sets it for these families; 3, a softmax of the chosen logits, is not
 * theirs), the expert groups (llama.cpp takes the best two scores of each
 * group, so a group needs two experts), expert_weights_norm (a bool key
 * the registry does not read; llama.cpp's default false) and the scale;
 * the last nextn_predict_layers blocks are not run. */
static int load_routing(run_hparams *hp, const gguf_file *f, const gguf_hparams *g,
                        const gguf_arch *a, const char *arch, gguf_error *err)
{
    char key[128];
    hp->n_layer_run = hp->n_layer;
    if (gguf_arch_has(a, GGUF_FEAT_NEXTN))
        hp->n_layer_run = hp->n_layer - hp_int(g, GGUF_HP_NEXTN_PREDICT_LAYERS);
    if (hp->n_layer_run < 1)
        return gguf_error_set(err, "%s.nextn_predict_layers leaves no block to run", arch);
    if (gguf_arch_routing(a) != GGUF_ROUTING_SIGMOID_BIAS)
        return 0;
    hp->gating = hp_int(g, GGUF_HP_EXPERT_GATING_FUNC);
    if (hp->gating != 0 && hp->gating != 1 && hp->gating != 2) {
        snprintf(key, sizeof key, GGUF_KEY_EXPERT_GATING_FUNC, arch);
        return gguf_error_set(err, "key %s is %d: gguf-run routes %s experts by sigmoid (2) or "
                              "softmax (1)", key, hp->gating, arch);
    }
    hp->n_group = gguf_hparams_has(g, GGUF_HP_EXPERT_GROUP_COUNT)
                  ? hp_int(g, GGUF_HP_EXPERT_GROUP_COUNT) : 1;
    hp->n_group_used = gguf_hparams_has(g, GGUF_HP_EXPERT_GROUP_USED_COUNT)
                       ? hp_int(g, GGUF_HP_EXPERT_GROUP_USED_COUNT) : hp->n_group;
    snprintf(key, sizeof key, GGUF_KEY_EXPERT_GROUP_COUNT, arch);
    if (hp->n_group < 1 || hp->n_expert % hp->n_group)
        return gguf_error_set(err, "key %s is %d, which does not divide the %d experts", key,
                              hp->n_group, hp->n_expert);
    if (hp->n_group > 1 && hp->n_expert / hp->n_group < 2)
        return gguf_error_set(err, "key %s is %d: groups of %d expert, llama.cpp scores a group "
                              "by its best two", key, hp->n_group, hp->n_expert / hp->n_group);
    if (hp->n_group_used < 1 || hp->n_group_used > hp->n_group) {
        snprintf(key, sizeof key, GGUF_KEY_EXPERT_GROUP_USED_COUNT, arch);
        return gguf_error_set(err, "key %s is %d, expected 1..%d", key, hp->n_group_used,
                              hp->n_group);
    }
    hp->weights_scale = hp_float(g, GGUF_HP_EXPERT_WEIGHTS_SCALE);
    if (!isfinite(hp->weights_scale)) {
        snprintf(key, sizeof key, GGUF_KEY_EXPERT_WEIGHTS_SCALE, arch);
        return gguf_error_set(err, "key %s is not finite", key);
    }
    snprintf(key, sizeof key, GGUF_KEY_EXPERT_WEIGHTS_NORM, arch);
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    if (kv && (kv->type != GGUF_VT_BOOL || !kv->data))
        return gguf_error_set(err, "key %s is %s, expected a bool", key, gguf_vtype_name(kv->type));
    hp->weights_norm = kv && *(const uint8_t *)kv->data;
    return 0;
}

/* Multi-head latent attention (DeepSeek-V2/V3), as llama.cpp's deepseek2
 * loader and graph take it: the ranks, a head's unrotated key (the
 * registry holds key_length_mla past the rope, key_length to kv_lora_rank
 * + rope and value_length to kv_lora_rank) and value widths, and the
 * scores' scale: mscale² / √key_length_mla, mscale = attn_factor · (1 +
 * 0.1 ln(1/freq_scale)) · (1 + 0.1 · yarn_log_multiplier/0.1 ·
 * ln(1/freq_scale)) in float as the graph computes it. */
static int load_mla(run_hparams *hp, const gguf_hparams *g, gguf_error *err)
{
    if (!hp->mla)
        return 0;
    hp->q_lora = hp_int(g, GGUF_HP_Q_LORA_RANK);
    hp->kv_lora = hp_int(g, GGUF_HP_KV_LORA_RANK);
    const int k_mla = hp_int(g, GGUF_HP_KEY_LENGTH_MLA);
    hp->mla_nope = k_mla - hp->n_rot;
    hp->mla_v = hp_int(g, GGUF_HP_VALUE_LENGTH_MLA);
    if (hp->mla_nope < 1 || hp->kv_lora + hp->n_rot != hp->head_dim ||
        (int64_t)hp->n_head * (k_mla > hp->head_dim ? k_mla : hp->head_dim) > MAX_DIM ||
        (int64_t)hp->n_head * hp->mla_v > MAX_DIM)
        return gguf_error_set(err, "the latent attention's widths (kv_lora_rank %d, key_length "
                              "%d, key_length_mla %d, value_length_mla %d, %d heads) do not fit",
                              hp->kv_lora, hp->head_dim, k_mla, hp->mla_v, hp->n_head);
    const float fs = hp->rope_scale, log_mul = hp_float(g, GGUF_HP_ROPE_YARN_LOG_MUL) / 0.1f;
    const float org = hp->yarn_attn * (1.0f + 0.1f * logf(1.0f / fs));
    const float mscale = org * (1.0f + 0.1f * log_mul * logf(1.0f / fs));
    hp->mla_kq_scale = 1.0f * mscale * mscale / sqrtf((float)k_mla);
    return 0;
}

/* Every block's q path of a latent-attention model: through the q
 * latent (attn_q_a, its norm, attn_q_b) when q_lora_rank is set, else
 * one attn_q — what llama.cpp's loader asks for, the other refused. */
static int check_mla_layers(const run_model *m, gguf_error *err)
{
    const run_hparams *hp = &m->hp;
    for (int i = 0; hp->mla && i < hp->n_layer; i++) {
        const run_layer *l = &m->layers[i];
        const bool lora = l->wq_a.data && l->wq_b.data && l->q_a_norm;
        const bool any_lora = l->wq_a.data || l->wq_b.data || l->q_a_norm;
        char name[GGUF_MAX_NAME + 16];
        if (hp->q_lora > 0 && (!lora || l->wq.data)) {
            snprintf(name, sizeof name, !lora ? (!l->wq_a.data ? GGUF_T_ATTN_Q_A
                                                 : !l->q_a_norm ? GGUF_T_ATTN_Q_A_NORM
                                                 : GGUF_T_ATTN_Q_B) : GGUF_T_ATTN_Q, i);
            return gguf_error_set(err, !lora ? "missing tensor %s (%s.attention.q_lora_rank "
                                  "is %d)" : "tensor %s: q goes through the q latent "
                                  "(%s.attention.q_lora_rank is %d)", name, m->arch, hp->q_lora);
        }
        if (hp->q_lora == 0 && (!l->wq.data || any_lora)) {
            snprintf(name, sizeof name, !l->wq.data ? GGUF_T_ATTN_Q
                     : l->wq_a.data ? GGUF_T_ATTN_Q_A : l->wq_b.data ? GGUF_T_ATTN_Q_B
                     : GGUF_T_ATTN_Q_A_NORM, i);
            return gguf_error_set(err, !l->wq.data ? "missing tensor %s (%s.attention.q_lora_rank "
                                  "is 0: one q projection)" : "tensor %s: %s.attention.q_lora_rank "
                                  "is 0, q has no latent", name, m->arch);
        }
    }
    return 0;
}

/* The hyper-parameters, once: the registry's view of them
 * (gguf_hparams_read: the rules of gguf_model_validate, llama.cpp's
 * defaults and derived values, kept in m->hparams for the tensor shapes),
 * and what gguf-run needs beyond validity: values as wide as keys (the
 * cache holds both at head_dim), widths whose products fit an int, an even
 * rope dimension count, a rope scaling it implements; then what the row
 * adds: the sliding window and its period, the local layers' rope, the
 * soft-caps, q's and the embeddings' scales. */
static int load_hparams(run_model *m, const gguf_file *f, const gguf_arch *a, gguf_error *err)
{
    if (gguf_hparams_read(f, &m->hparams, err))
        return -1;
    const gguf_hparams *g = m->hparams;
    run_hparams *hp = &m->hp;
    char key[128];
    hp->n_embd = hp_int(g, GGUF_HP_EMBEDDING_LENGTH);
    hp->n_layer = hp_int(g, GGUF_HP_BLOCK_COUNT);
    hp->n_head = hp_int(g, GGUF_HP_HEAD_COUNT);
    hp->n_head_kv = hp_int(g, GGUF_HP_HEAD_COUNT_KV);
    hp->n_ff = hp_int(g, GGUF_HP_FFN_LENGTH);
    hp->n_expert = hp_int(g, GGUF_HP_EXPERT_COUNT);
    hp->n_expert_used = hp_int(g, GGUF_HP_EXPERT_USED_COUNT);
    hp->n_ff_exp = (int)gguf_hparams_dim(g, GGUF_DIM_FF_EXP);
    hp->n_ctx_train = hp_int(g, GGUF_HP_CONTEXT_LENGTH);
    hp->rms_eps = hp_float(g, GGUF_HP_RMS_EPS);
    hp->rope_base = hp_float(g, GGUF_HP_ROPE_FREQ_BASE);
    hp->head_dim = hp_int(g, GGUF_HP_KEY_LENGTH);
    hp->n_rot = hp_int(g, GGUF_HP_ROPE_DIM);
    /* the router picks expert_used_count of expert_count experts */
    snprintf(key, sizeof key, GGUF_KEY_EXPERT_USED_COUNT, m->arch);
    if (hp->n_expert > 0 && !gguf_hparams_has(g, GGUF_HP_EXPERT_USED_COUNT))
        return gguf_error_set(err, "missing key %s", key);
    if (hp->n_expert_used < 0 || hp->n_expert_used > hp->n_expert)
        return gguf_error_set(err, "key %s is %d, expected 0..%d", key, hp->n_expert_used,
                              hp->n_expert);
    const int v_len = hp_int(g, GGUF_HP_VALUE_LENGTH);
    hp->mla = gguf_arch_has(a, GGUF_FEAT_MLA); /* values: the latent, the keys' first part */
    if (v_len != hp->head_dim && !hp->mla) {
        snprintf(key, sizeof key, GGUF_KEY_VALUE_LENGTH, m->arch);
        return gguf_error_set(err, "%s is %d: gguf-run needs values as wide as keys (%d)", key,
                              v_len, hp->head_dim);
    }
    if ((int64_t)hp->n_head * hp->head_dim > MAX_DIM)
        return gguf_error_set(err, "head count %d times key length %d is too large", hp->n_head,
                              hp->head_dim);
    hp->q_dim = hp->n_head * hp->head_dim;
    if (hp->n_rot % 2 || hp->n_rot > hp->head_dim)
        return gguf_error_set(err, "rope dimension count %d is %s the head size %d", hp->n_rot,
                              hp->n_rot % 2 ? "odd; it must be even and at most" : "larger than",
                              hp->head_dim);
    if (load_rope_scaling(hp, f, g, m->arch, err))
        return -1;
    if (hp->rope_yarn)
        load_yarn(hp, g);
    else
        hp->yarn_attn = hp->rope_attn_factor;
    /* an architecture without a pattern row has no local layers (phi3's
     * attention.sliding_window is written but not used) */
    hp->n_swa = gguf_arch_hparam_of(a, GGUF_HP_SWA_PATTERN) ? hp_int(g, GGUF_HP_SLIDING_WINDOW) : 0;
    hp->swa_period = hp_int(g, GGUF_HP_SWA_PATTERN);
    const float base_swa = hp_float(g, GGUF_HP_ROPE_FREQ_BASE_SWA);
    hp->rope_base_swa = base_swa > 0 ? base_swa : hp->rope_base;
    hp->rope_scale_swa = gguf_arch_has(a, GGUF_FEAT_SWA_ROPE_PLAIN) ? 1.0f : hp->rope_scale;
    if (gguf_arch_has(a, GGUF_FEAT_ATTN_SOFTCAP))
        hp->attn_softcap = hp_float(g, GGUF_HP_ATTN_SOFTCAP);
    hp->final_softcap = hp_float(g, GGUF_HP_FINAL_SOFTCAP);
    /* llama.cpp's f_attention_scale: 1/sqrt(head size), or for the 27B
     * Gemmas 1/sqrt(n_embd / n_head) (their query_pre_attn_scalar) */
    if (gguf_arch_has(a, GGUF_FEAT_SCALE_Q)) {
        const uint32_t wb = gguf_recipe_of(a)->q_scale_width_blocks;
        const bool width = wb && hp->n_layer == (int)wb;
        hp->q_scale = 1.0f / sqrtf((float)(width ? hp->n_embd / hp->n_head : hp->head_dim));
    }
    if (gguf_arch_has(a, GGUF_FEAT_SCALE_EMBD))
        hp->embd_scale = sqrtf((float)hp->n_embd);
    return load_hybrid(hp, g, a, err);
}

const float *run_rope_factors(const run_model *m, int n_ctx)
{
    if (m->rope_freqs)
        return m->rope_freqs;
    const int64_t padded = ((int64_t)n_ctx + 255) / 256 * 256;
    return padded > m->hp.n_ctx_orig ? m->rope_long : m->rope_short;
}

bool run_layer_is_swa(const run_model *m, int il)
{
    const run_hparams *hp = &m->hp;
    if (m->swa_layers)
        return hp->n_swa > 0 && m->swa_layers[il];
    return hp->n_swa > 0 && (hp->swa_period == 0 || il % hp->swa_period < hp->swa_period - 1);
}

/* ---------------------------------------------------------------------------
 * Tensors
 */

/* The tensor called printf(fmt, layer); NULL with a message when absent and
 * required. */
static const gguf_tensor *tensor_find(const gguf_file *f, const char *fmt, int layer,
                                      bool required, gguf_error *err)
{
    char name[GGUF_MAX_NAME + 16];
    snprintf(name, sizeof name, fmt, layer);
    const gguf_tensor *t = gguf_lookup_tensor(f, name);
    if (!t && required)
        gguf_error_set(err, "missing tensor %s", name);
    return t;
}

/* Checks that t is ne0 × ne1 (ne1 == 0: a vector of ne0). */
static int tensor_shape(const gguf_tensor *t, int64_t ne0, int64_t ne1, gguf_error *err)
{
    int64_t want1 = ne1 ? ne1 : 1;
    if (t->ne[0] == ne0 && t->ne[1] == want1 && t->ne[2] == 1 && t->ne[3] == 1)
        return 0;
    if (ne1)
        return gguf_error_set(err, "tensor %s is [%lld, %lld, %lld, %lld], expected [%lld, %lld]",
                              t->name, (long long)t->ne[0], (long long)t->ne[1],
                              (long long)t->ne[2], (long long)t->ne[3], (long long)ne0,
                              (long long)ne1);
    return gguf_error_set(err, "tensor %s is [%lld, %lld, %lld, %lld], expected [%lld]", t->name,
                          (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2],
                          (long long)t->ne[3], (long long)ne0);
}

/* A weight matrix W (rows, cols) stored as ggml's [cols, rows]; with
 * n_stack > 1, n_stack such matrices stored as [cols, rows, n_stack]
 * (experts), loaded as one of n_stack · rows rows. */
static int load_matrix_stack(run_matrix *w, const gguf_file *f, const char *fmt, int layer,
                             int64_t rows, int64_t cols, int64_t n_stack, gguf_error *err)
{
    const gguf_tensor *t = tensor_find(f, fmt, layer, true, err);
    if (!t)
        return -1;
    if (n_stack > 1) {
        if (t->ne[0] != cols || t->ne[1] != rows || t->ne[2] != n_stack || t->ne[3] != 1)
            return gguf_error_set(err, "tensor %s is [%lld, %lld, %lld, %lld], expected [%lld, "
                                  "%lld, %lld]", t->name, (long long)t->ne[0],
                                  (long long)t->ne[1], (long long)t->ne[2], (long long)t->ne[3],
                                  (long long)cols, (long long)rows, (long long)n_stack);
        rows *= n_stack;
    } else if (tensor_shape(t, cols, rows, err)) {
        return -1;
    }
    if (!kern_supported(t->type))
        return gguf_error_set(err, "tensor %s has type %s, which gguf-run cannot multiply", t->name,
                              gguf_dtype_name(t->type));
    uint64_t rb;
    if (gguf_row_size(t->type, cols, &rb, NULL))
        return gguf_error_set(err, "tensor %s: rows of %lld elements do not fit %s blocks", t->name,
                              (long long)cols, gguf_dtype_name(t->type));
    if ((uintptr_t)t->data % 4)
        return gguf_error_set(err, "tensor %s: data is not 4-byte aligned", t->name);
    *w = (run_matrix){ t->data, t->type, rows, cols, (size_t)rb, NULL, NULL, 0, NULL };
    return 0;
}

static int load_matrix(run_matrix *w, const gguf_file *f, const char *fmt, int layer,
                       int64_t rows, int64_t cols, gguf_error *err)
{
    return load_matrix_stack(w, f, fmt, layer, rows, cols, 1, err);
}

run_matrix run_expert(const run_matrix *w, int n, int e)
{
    const int64_t rows = w->rows / n;
    /* a packed group of eight rows takes the bytes of the eight rows */
    const size_t at = (size_t)e * (size_t)rows * w->row_bytes;
    return (run_matrix){ (const uint8_t *)w->data + at, w->type, rows, w->cols, w->row_bytes,
                         w->packed ? (uint8_t *)w->packed + at : NULL, w, e, NULL };
}

bool run_layer_is_recurrent(const run_model *m, int il)
{
    const int n = m->hp.full_attn_interval;
    return n > 0 && (il + 1) % n != 0;
}

/* rows (1 for a vector: rows == 0) vectors of n elements of any decodable
 * type, converted to an owned f32 array in *out. Absent and optional: *out
 * stays NULL. */
static int load_vectors(float **out, const gguf_file *f, const char *fmt, int layer, int64_t n,
                        int64_t rows, bool required, gguf_error *err)
{
    *out = NULL;
    const gguf_tensor *t = tensor_find(f, fmt, layer, required, err);
    if (!t)
        return required ? -1 : 0;
    if (tensor_shape(t, n, rows, err))
        return -1;
    n *= rows ? rows : 1;
    float *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return gguf_error_set(err, "out of memory");
    if (t->type == GGUF_DT_F32) {
        memcpy(v, t->data, (size_t)n * sizeof *v);
    } else if (gguf_dequantize_row(t->type, t->data, v, n, NULL)) {
        free(v);
        return gguf_error_set(err, "tensor %s has type %s, which gguf-run cannot decode", t->name,
                              gguf_dtype_name(t->type));
    }
    *out = v;
    return 0;
}

static int load_vector(float **out, const gguf_file *f, const char *fmt, int layer, int64_t n,
                       bool required, gguf_error *err)
{
    return load_vectors(out, f, fmt, layer, n, 0, required, err);
}

/* Where each per-block tensor role goes in a run_layer: a matrix or an
 * owned f32 vector. */
typedef struct layer_slot {
    uint8_t role;
    bool    matrix;
    size_t  off;
} layer_slot;

static const layer_slot SLOTS[] = {
    { GGUF_ROLE_ATTN_NORM, false, offsetof(run_layer, attn_norm) },
    { GGUF_ROLE_FFN_GATE_SHEXP, true, offsetof(run_layer, gate_shexp) },
    { GGUF_ROLE_FFN_UP_SHEXP, true, offsetof(run_layer, up_shexp) },
    { GGUF_ROLE_FFN_DOWN_SHEXP, true, offsetof(run_layer, down_shexp) },
    { GGUF_ROLE_FFN_GATE_INP_SHEXP, true, offsetof(run_layer, gate_inp_shexp) },
    { GGUF_ROLE_ATTN_GATE, true, offsetof(run_layer, wz) },
    { GGUF_ROLE_SSM_ALPHA, true, offsetof(run_layer, ssm_alpha) },
    { GGUF_ROLE_SSM_BETA, true, offsetof(run_layer, ssm_beta) },
    { GGUF_ROLE_SSM_OUT, true, offsetof(run_layer, ssm_out) },
    { GGUF_ROLE_SSM_CONV1D, false, offsetof(run_layer, ssm_conv) },
    { GGUF_ROLE_SSM_A, false, offsetof(run_layer, ssm_a) },
    { GGUF_ROLE_SSM_DT_BIAS, false, offsetof(run_layer, ssm_dt) },
    { GGUF_ROLE_SSM_NORM, false, offsetof(run_layer, ssm_norm) },
    { GGUF_ROLE_ATTN_POST_NORM, false, offsetof(run_layer, attn_post_norm) },
    { GGUF_ROLE_FFN_POST_NORM, false, offsetof(run_layer, ffn_post_norm) },
    { GGUF_ROLE_ATTN_Q, true, offsetof(run_layer, wq) },
    { GGUF_ROLE_ATTN_K, true, offsetof(run_layer, wk) },
    { GGUF_ROLE_ATTN_V, true, offsetof(run_layer, wv) },
    { GGUF_ROLE_ATTN_Q_BIAS, false, offsetof(run_layer, bq) },
    { GGUF_ROLE_ATTN_K_BIAS, false, offsetof(run_layer, bk) },
    { GGUF_ROLE_ATTN_V_BIAS, false, offsetof(run_layer, bv) },
    { GGUF_ROLE_ATTN_Q_NORM, false, offsetof(run_layer, q_norm) },
    { GGUF_ROLE_ATTN_K_NORM, false, offsetof(run_layer, k_norm) },
    { GGUF_ROLE_ATTN_OUT, true, offsetof(run_layer, wo) },
    { GGUF_ROLE_FFN_NORM, false, offsetof(run_layer, ffn_norm) },
    { GGUF_ROLE_FFN_GATE, true, offsetof(run_layer, w_gate) },
    { GGUF_ROLE_FFN_UP, true, offsetof(run_layer, w_up) },
    { GGUF_ROLE_FFN_DOWN, true, offsetof(run_layer, w_down) },
    { GGUF_ROLE_FFN_GATE_INP, true, offsetof(run_layer, gate_inp) },
    { GGUF_ROLE_FFN_GATE_EXPS, true, offsetof(run_layer, gate_exps) },
    { GGUF_ROLE_FFN_UP_EXPS, true, offsetof(run_layer, up_exps) },
    { GGUF_ROLE_FFN_DOWN_EXPS, true, offsetof(run_layer, down_exps) },
    /* gemma4: experts beside the dense feed-forward, per-layer inputs */
    { GGUF_ROLE_FFN_GATE_UP_EXPS, true, offsetof(run_layer, gate_up_exps) },
    { GGUF_ROLE_FFN_GATE_INP_SCALE, false, offsetof(run_layer, gate_inp_scale) },
    { GGUF_ROLE_FFN_DOWN_EXPS_SCALE, false, offsetof(run_layer, down_exps_scale) },
    { GGUF_ROLE_FFN_PRE_NORM_2, false, offsetof(run_layer, ffn_pre_norm_2) },
    { GGUF_ROLE_FFN_POST_NORM_1, false, offsetof(run_layer, ffn_post_norm_1) },
    { GGUF_ROLE_FFN_POST_NORM_2, false, offsetof(run_layer, ffn_post_norm_2) },
    { GGUF_ROLE_PER_LAYER_INP_GATE, true, offsetof(run_layer, pl_gate) },
    { GGUF_ROLE_PER_LAYER_PROJ, true, offsetof(run_layer, pl_proj) },
    { GGUF_ROLE_PER_LAYER_POST_NORM, false, offsetof(run_layer, pl_post_norm) },
    { GGUF_ROLE_LAYER_OUT_SCALE, false, offsetof(run_layer, out_scale) },
    { GGUF_ROLE_ATTN_QKV, true, offsetof(run_layer, wqkv) },
    { GGUF_ROLE_FFN_GATE_UP, true, offsetof(run_layer, w_gate_up) },
    { GGUF_ROLE_ATTN_OUT_BIAS, false, offsetof(run_layer, bo) },
    { GGUF_ROLE_ATTN_SINKS, false, offsetof(run_layer, sinks) },
    { GGUF_ROLE_FFN_GATE_INP_BIAS, false, offsetof(run_layer, gate_inp_b) },
    { GGUF_ROLE_FFN_GATE_EXPS_BIAS, false, offsetof(run_layer, gate_exps_b) },
    { GGUF_ROLE_FFN_UP_EXPS_BIAS, false, offsetof(run_layer, up_exps_b) },
    { GGUF_ROLE_FFN_DOWN_EXPS_BIAS, false, offsetof(run_layer, down_exps_b) },
    /* glm4moe: the routing's score bias, the next-token-prediction block */
    { GGUF_ROLE_EXP_PROBS_B, false, offsetof(run_layer, exp_probs_b) },
    { GGUF_ROLE_NEXTN_EH_PROJ, true, offsetof(run_layer, nextn_eh_proj) },
    { GGUF_ROLE_NEXTN_ENORM, false, offsetof(run_layer, nextn_enorm) },
    { GGUF_ROLE_NEXTN_HNORM, false, offsetof(run_layer, nextn_hnorm) },
    { GGUF_ROLE_NEXTN_SHARED_HEAD_NORM, false, offsetof(run_layer, nextn_shared_head_norm) },
    /* deepseek2: multi-head latent attention */
    { GGUF_ROLE_ATTN_Q_A, true, offsetof(run_layer, wq_a) },
    { GGUF_ROLE_ATTN_Q_A_NORM, false, offsetof(run_layer, q_a_norm) },
    { GGUF_ROLE_ATTN_Q_B, true, offsetof(run_layer, wq_b) },
    { GGUF_ROLE_ATTN_KV_A_MQA, true, offsetof(run_layer, wkv_a_mqa) },
    { GGUF_ROLE_ATTN_KV_A_NORM, false, offsetof(run_layer, kv_a_norm) },
    { GGUF_ROLE_ATTN_K_B, true, offsetof(run_layer, wk_b) },
    { GGUF_ROLE_ATTN_V_B, true, offsetof(run_layer, wv_b) },
};

static const layer_slot *slot_of(int role)
{
    for (size_t i = 0; i < sizeof SLOTS / sizeof *SLOTS; i++)
        if (SLOTS[i].role == role)
            return &SLOTS[i];
    return NULL;
}

run_matrix *run_layer_matrix(run_layer *l, int role)
{
    const layer_slot *sl = slot_of(role);
    return sl && sl->matrix ? (run_matrix *)((char *)l + sl->off) : NULL;
}

/* Block i: every per-block row of the architecture's tensor table, into its
 * slot. A tensor the table allows but the forward pass has no slot for is
 * refused when present: running without it would be silently wrong. */
static int load_layer(run_layer *l, const gguf_file *f, const gguf_arch *a, int i,
                      const run_hparams *hp, const gguf_hparams *g, gguf_error *err)
{
    const gguf_arch_tensor *t;
    for (size_t r = 0; (t = gguf_arch_tensor_at(a, r)); r++) {
        /* gemma4: a block sharing another's K/V may still hold attn_k (and
         * its norm); llama.cpp loads them and attends over the shared cache */
        if (gguf_arch_tensor_layers(t) == GGUF_LAYERS_OWN_KV &&
            !gguf_hparams_layer_in(g, GGUF_LAYERS_OWN_KV, i))
            continue;

        if (!gguf_arch_tensor_per_block(t))
            continue;
        /* a row of another kind of block (attention, recurrent): refused
         * when present, as it would go unused */
        if (!gguf_hparams_layer_in(g, gguf_arch_tensor_layers(t), i)) {
            const gguf_tensor *x = tensor_find(f, gguf_arch_tensor_name(t), i, false, err);
            if (x)
                return gguf_error_set(err, "tensor %s: block %d is not a%s %s block", x->name, i,
                                      gguf_arch_tensor_layers(t) == GGUF_LAYERS_ATTENTION ? "n" : "",
                                      gguf_layers_name(gguf_arch_tensor_layers(t)));
            continue;
        }
        const int role = gguf_arch_tensor_role(t), ne0 = gguf_arch_tensor_dim(t, 0),
                  ne1 = gguf_arch_tensor_dim(t, 1), ne2 = gguf_arch_tensor_dim(t, 2);
        const char *name = gguf_arch_tensor_name(t);
        const layer_slot *sl = slot_of(role);
        const bool required = gguf_arch_tensor_required_for(a, t, hp->n_expert > 0);
        if (!sl) {
            const gguf_tensor *x = tensor_find(f, name, i, false, err);
            if (x)
                return gguf_error_set(err, "tensor %s: gguf-run does not apply %s tensors",
                                      x->name, gguf_role_name(role));
            if (required)
                return gguf_error_set(err, "gguf-run does not run %s models (no %s)",
                                      gguf_arch_name(a), gguf_role_name(role));
            continue;
        }
        void *dst = (char *)l + sl->off;
        if (!required && !tensor_find(f, name, i, false, err))
            continue;
        /* the block's own sizes (gemma4's sliding blocks, per-block widths) */
        int rc = sl->matrix
            ? load_matrix_stack(dst, f, name, i, gguf_hparams_layer_dim(g, ne1, i),
                                gguf_hparams_layer_dim(g, ne0, i), gguf_hparams_layer_dim(g, ne2, i),
                                err)
            : load_vectors(dst, f, name, i, gguf_hparams_layer_dim(g, ne0, i),
                           ne1 == GGUF_DIM_1 ? 0 : gguf_hparams_layer_dim(g, ne1, i), required, err);
        if (rc)
            return -1;
    }
    return 0;
}

/* The vocabulary size: token_embd's rows, which must equal the number of
 * tokens in tokenizer.ggml.tokens (and {arch}.vocab_size when present). */
static int load_vocab_size(run_model *m, const gguf_file *f, gguf_error *err)
{
    const gguf_tensor *t = tensor_find(f, GGUF_T_TOKEN_EMBD, 0, true, err);
    if (!t)
        return -1;
    if (t->ne[1] < 1 || t->ne[1] > INT32_MAX)
        return gguf_error_set(err, "tensor %s has %lld rows", t->name, (long long)t->ne[1]);
    if (tensor_shape(t, m->hp.n_embd, t->ne[1], err))
        return -1;
    m->hp.n_vocab = (int)t->ne[1];
    const gguf_kv *tok = gguf_lookup_kv(f, GGUF_KEY_TOK_TOKENS);
    if (!tok || tok->elem_type != GGUF_VT_STR || tok->type != GGUF_VT_ARR)
        return gguf_error_set(err, "missing key %s (a string array)", GGUF_KEY_TOK_TOKENS);
    if (tok->n != (uint64_t)m->hp.n_vocab)
        return gguf_error_set(err, "%s has %llu tokens but %s has %d rows", GGUF_KEY_TOK_TOKENS,
                              (unsigned long long)tok->n, t->name, m->hp.n_vocab);
    int vs = m->hp.n_vocab;
    if (key_int(f, GGUF_KEY_VOCAB_SIZE, m->arch, false, m->hp.n_vocab, 1, INT32_MAX, &vs, err))
        return -1;
    if (vs != m->hp.n_vocab)
        return gguf_error_set(err, "%s.vocab_size is %d but %s has %d rows", m->arch, vs, t->name,
                              m->hp.n_vocab);
    if (!gguf_codec_get(t->type))
        return gguf_error_set(err, "tensor %s has type %s, which gguf-run cannot decode", t->name,
                              gguf_dtype_name(t->type));
    uint64_t rb;
    if (gguf_row_size(t->type, m->hp.n_embd, &rb, NULL))
        return gguf_error_set(err, "tensor %s: rows of %d elements do not fit %s blocks", t->name,
                              m->hp.n_embd, gguf_dtype_name(t->type));
    m->tok_embd = (run_matrix){ t->data, t->type, m->hp.n_vocab, m->hp.n_embd, (size_t)rb, NULL, NULL, 0, NULL };
    return 0;
}

/* A global tensor the architecture's table allows but the forward pass
 * does not apply is refused when present. */
static int check_globals(const gguf_file *f, const gguf_arch *a, const run_hparams *hp,
                         gguf_error *err)
{
    const gguf_arch_tensor *t;
    for (size_t r = 0; (t = gguf_arch_tensor_at(a, r)); r++) {
        const int role = gguf_arch_tensor_role(t);
        const bool per_layer_input = role == GGUF_ROLE_PER_LAYER_TOKEN_EMBD ||
                                     role == GGUF_ROLE_PER_LAYER_MODEL_PROJ ||
                                     role == GGUF_ROLE_PER_LAYER_PROJ_NORM;
        if (per_layer_input && hp->n_embd_pl > 0) /* load_per_layer_inputs */
            continue;
        if (gguf_arch_tensor_per_block(t) || role == GGUF_ROLE_TOKEN_EMBD ||
            role == GGUF_ROLE_OUTPUT_NORM || role == GGUF_ROLE_OUTPUT ||
            role == GGUF_ROLE_ROPE_FREQS || role == GGUF_ROLE_ROPE_FACTORS_LONG ||
            role == GGUF_ROLE_ROPE_FACTORS_SHORT)
            continue;
        if (gguf_lookup_tensor(f, gguf_arch_tensor_name(t)))
            return gguf_error_set(err, "tensor %s: gguf-run does not apply %s tensors",
                                  gguf_arch_tensor_name(t), gguf_role_name(role));
    }
    return 0;
}

/* Gemma 4's hyper-parameters beyond the decoder's (after load_hparams):
 * unweighted value norms, rope_freqs for the full blocks alone, unscaled
 * scores, the per-layer input width, the blocks with their own K/V, and
 * which blocks slide (a per-block sliding_window_pattern). */
static int load_block_kinds(run_model *m, const gguf_arch *a, gguf_error *err)
{
    run_hparams *hp = &m->hp;
    const gguf_hparams *g = m->hparams;
    hp->v_norm = gguf_arch_has(a, GGUF_FEAT_V_FROM_K);
    hp->swa_rope_plain_freqs = gguf_arch_has(a, GGUF_FEAT_ROPE_FREQS_FULL);
    if (gguf_arch_has(a, GGUF_FEAT_ATTN_SCALE_1)) /* q · 1 is q: the scores stay unscaled */
        hp->q_scale = 1.0f;
    if (gguf_arch_has(a, GGUF_FEAT_PER_LAYER_INPUTS))
        hp->n_embd_pl = hp_int(g, GGUF_HP_EMBD_PER_LAYER);
    hp->n_layer_kv = hp->n_layer;
    if (gguf_arch_has(a, GGUF_FEAT_SHARED_KV))
        hp->n_layer_kv = hp->n_layer - hp_int(g, GGUF_HP_SHARED_KV_LAYERS);
    if ((int64_t)hp->n_layer * hp->n_embd_pl > MAX_DIM)
        return gguf_error_set(err, "%d blocks of per-layer inputs %d wide are too many",
                              hp->n_layer, hp->n_embd_pl);
    const gguf_arch_hparam *pat = gguf_arch_hparam_of(a, GGUF_HP_SWA_PATTERN);
    if (pat && gguf_arch_hparam_array(pat, NULL) == GGUF_HP_PER_BLOCK) {
        if (!(m->swa_layers = calloc((size_t)hp->n_layer, sizeof *m->swa_layers)))
            return gguf_error_set(err, "out of memory");
        for (int i = 0; i < hp->n_layer; i++)
            m->swa_layers[i] = gguf_hparams_layer_in(g, GGUF_LAYERS_SLIDING, i);
    }
    return 0;
}

/* Every block's geometry: the model's, or where the registry gives a block
 * its own (gemma4's sliding blocks: head size and rotated dims; a
 * per-block feed-forward width) that; and the block whose K/V it attends
 * over: its own, or in the last shared_kv_layers blocks, as llama.cpp's
 * reuse rule picks it, the last block with its own K/V (full) or the one
 * before it (sliding), which must be of the same kind and size. */
static int layer_geometry(run_model *m, gguf_error *err)
{
    const run_hparams *hp = &m->hp;
    const gguf_hparams *g = m->hparams;
    int slots = 0;
    for (int i = 0; i < hp->n_layer; i++) {
        run_layer *l = &m->layers[i];
        /* a block not run (next-token prediction) keeps no K/V */
        l->kv_slot = run_layer_is_recurrent(m, i) || i >= hp->n_layer_run ? -1 : slots++;
        l->head_dim = hp->head_dim;
        l->q_dim = hp->q_dim;
        l->n_rot = hp->n_rot;
        l->n_ff = hp->n_ff;
        l->kv_layer = i;
        const int64_t hd = gguf_hparams_layer_dim(g, GGUF_DIM_HEAD_K, i),
                      rot = 2 * gguf_hparams_layer_dim(g, GGUF_DIM_ROT_HALF, i),
                      ff = gguf_hparams_layer_dim(g, GGUF_DIM_FF, i);
        if (hd != gguf_hparams_dim(g, GGUF_DIM_HEAD_K)) {
            if (hd < 1 || hd * hp->n_head > MAX_DIM)
                return gguf_error_set(err, "block %d: head size %lld is out of range", i,
                                      (long long)hd);
            l->head_dim = (int)hd;
            l->q_dim = hp->n_head * l->head_dim;
        }
        if (rot != 2 * gguf_hparams_dim(g, GGUF_DIM_ROT_HALF))
            l->n_rot = (int)rot;
        if (ff != gguf_hparams_dim(g, GGUF_DIM_FF) && ff >= 1 && ff <= MAX_DIM)
            l->n_ff = (int)ff;
        if (l->n_rot < 0 || l->n_rot > l->head_dim)
            return gguf_error_set(err, "block %d: rope dimension count %d is larger than its "
                                  "head size %d", i, l->n_rot, l->head_dim);
        /* latent attention: the values are the cached latent (kv_lora_rank) */
        const int64_t v_want = hp->mla ? hp->kv_lora : (int64_t)hp->n_head_kv * l->head_dim;
        if (gguf_hparams_layer_dim(g, GGUF_DIM_K, i) != (int64_t)hp->n_head_kv * l->head_dim ||
            gguf_hparams_layer_dim(g, GGUF_DIM_V, i) != v_want)
            return gguf_error_set(err, "block %d: gguf-run needs %d K/V heads as wide as the "
                                  "queries' (%d) in every block", i, hp->n_head_kv, l->head_dim);
        if (i < hp->n_layer_kv) {
            if (gguf_arch_has(m->row, GGUF_FEAT_SHARED_KV) && !l->wk.data)
                return gguf_error_set(err, "block %d has its own K/V but no attn_k", i);
            continue;
        }
        const bool swa = run_layer_is_swa(m, i);
        const int src = hp->n_layer_kv - (swa ? 2 : 1);
        if (src < 0 || run_layer_is_swa(m, src) != swa || m->layers[src].head_dim != l->head_dim)
            return gguf_error_set(err, "block %d shares the K/V of block %d, which is not a%s "
                                  "block of head size %d", i, src, swa ? " sliding" : " full",
                                  l->head_dim);
        l->kv_layer = src;
        l->kv_slot = m->layers[src].kv_slot;
        slots--; /* none of its own */
    }
    return 0;
}

/* Gemma 4's per-layer inputs: with a width, the token rows, the
 * projection and its norm, and in every block the gate, the projection
 * and its norm; without one, none of them. */
static int load_per_layer_inputs(run_model *m, const gguf_file *f, gguf_error *err)
{
    const run_hparams *hp = &m->hp;
    const int npl = hp->n_embd_pl, w = hp->n_layer * npl;
    for (int i = 0; i < hp->n_layer; i++) {
        const run_layer *l = &m->layers[i];
        const bool has[3] = { l->pl_gate.data != NULL, l->pl_proj.data != NULL,
                              l->pl_post_norm != NULL };
        const char *names[3] = { GGUF_T_PER_LAYER_INP_GATE, GGUF_T_PER_LAYER_PROJ,
                                 GGUF_T_PER_LAYER_POST_NORM };
        for (int k = 0; k < 3; k++) {
            char name[GGUF_MAX_NAME + 16];
            snprintf(name, sizeof name, names[k], i);
            if (npl > 0 && !has[k])
                return gguf_error_set(err, "missing tensor %s (per-layer inputs %d wide)", name,
                                      npl);
            if (npl == 0 && has[k])
                return gguf_error_set(err, "tensor %s: the model has no per-layer inputs "
                                      "(%s.embedding_length_per_layer_input is 0)", name, m->arch);
        }
    }
    if (npl == 0)
        return 0;
    const gguf_tensor *t = tensor_find(f, GGUF_T_PER_LAYER_TOKEN_EMBD, 0, true, err);
    if (!t || tensor_shape(t, w, hp->n_vocab, err))
        return -1;
    uint64_t rb;
    if (!gguf_codec_get(t->type) || gguf_row_size(t->type, w, &rb, NULL))
        return gguf_error_set(err, "tensor %s has type %s, which gguf-run cannot decode in rows "
                              "of %d", t->name, gguf_dtype_name(t->type), w);
    m->pl_tok_embd = (run_matrix){ t->data, t->type, hp->n_vocab, w, (size_t)rb, NULL, NULL, 0, NULL };
    return load_matrix(&m->pl_model_proj, f, GGUF_T_PER_LAYER_MODEL_PROJ, 0, w, hp->n_embd, err) ||
           load_vector(&m->pl_proj_norm, f, GGUF_T_PER_LAYER_PROJ_NORM, 0, npl, true, err) ? -1 : 0;
}

static int load_all(run_model *m, const gguf_file *f, gguf_error *err)
{
    gguf_str a;
    if (gguf_get_str(f, GGUF_KEY_ARCHITECTURE, &a, err))
        return -1;
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(a.len < sizeof name ? a.len : 0), a.ptr);
    const gguf_arch *ai = memchr(a.ptr, 0, a.len) ? NULL : gguf_arch_find(name);
    if (!ai)
        return gguf_error_set(err, "unsupported architecture \"%.*s\" (gguf-run runs %s)",
                              (int)(a.len > 64 ? 64 : a.len), a.ptr, arch_names());
    snprintf(m->arch, sizeof m->arch, "%s", gguf_arch_name(ai));
    m->row = ai;
    if (check_features(ai, err))
        return -1;
    m->hp.rope_layout = gguf_arch_rope(ai) == GGUF_ROPE_NEOX ? RUN_ROPE_NEOX : RUN_ROPE_NORM;
    if (load_hparams(m, f, ai, err) || load_routing(&m->hp, f, m->hparams, ai, m->arch, err) ||
        load_mla(&m->hp, m->hparams, err) ||
        load_vocab_size(m, f, err) || load_block_kinds(m, ai, err) ||
        check_globals(f, ai, &m->hp, err))
        return -1;
    /* deepseek2 without expert_gating_func (or 0): llama.cpp e21cdc11
     * softmax, but sigmoid for GLM-4.7-Flash, which it knows by 47 or 48
     * blocks and a 154880-token vocabulary (Glm4MoeLiteModel writes no
     * gating key) */
    if (!strcmp(m->arch, "deepseek2") &&
        (!gguf_hparams_has(m->hparams, GGUF_HP_EXPERT_GATING_FUNC) || m->hp.gating == 0))
        m->hp.gating = (m->hp.n_layer == 47 || m->hp.n_layer == 48) && m->hp.n_vocab == 154880 ? 2 : 1;
    const run_hparams *hp = &m->hp;
    /* llama.cpp takes a fused attn_qkv's first embedding_length rows as q */
    if (gguf_arch_has(ai, GGUF_FEAT_FUSED_QKV) && hp->q_dim != hp->n_embd)
        return gguf_error_set(err, "head count %d times key length %d is not the embedding "
                              "length %d, as %s's fused q, k, v need", hp->n_head, hp->head_dim,
                              hp->n_embd, gguf_arch_name(ai));
    if (load_vector(&m->output_norm, f, GGUF_T_OUTPUT_NORM, 0, hp->n_embd, true, err))
        return -1;
    m->tied = !gguf_lookup_tensor(f, GGUF_T_OUTPUT);
    if (!m->tied && !gguf_arch_tensor_of(ai, GGUF_ROLE_OUTPUT))
        return gguf_error_set(err, "tensor %s: %s models take their output from %s", GGUF_T_OUTPUT,
                              gguf_arch_name(ai), GGUF_T_TOKEN_EMBD);
    if (m->tied) {
        if (!kern_supported(m->tok_embd.type))
            return gguf_error_set(err, "tensor %s (the tied output) has type %s, which gguf-run "
                                  "cannot multiply", GGUF_T_TOKEN_EMBD,
                                  gguf_dtype_name(m->tok_embd.type));
        m->output = m->tok_embd;
    } else if (load_matrix(&m->output, f, GGUF_T_OUTPUT, 0, hp->n_vocab, hp->n_embd, err)) {
        return -1;
    }
    const struct { float **v; const char *name; } factors[] = {
        { &m->rope_freqs, GGUF_T_ROPE_FREQS },
        { &m->rope_long, GGUF_T_ROPE_FACTORS_LONG },
        { &m->rope_short, GGUF_T_ROPE_FACTORS_SHORT },
    };
    for (size_t k = 0; k < sizeof factors / sizeof *factors; k++) {
        float **v = factors[k].v;
        if (load_vector(v, f, factors[k].name, 0, hp->n_rot / 2, false, err))
            return -1;
        for (int i = 0; *v && i < hp->n_rot / 2; i++)
            if (!isfinite((*v)[i]) || (*v)[i] <= 0)
                return gguf_error_set(err, "tensor %s: factor %d is %g, expected a positive "
                                      "number", factors[k].name, i, (*v)[i]);
    }
    m->layers = calloc((size_t)hp->n_layer, sizeof *m->layers);
    if (!m->layers)
        return gguf_error_set(err, "out of memory");
    for (int i = 0; i < hp->n_layer; i++)
        if (load_layer(&m->layers[i], f, ai, i, hp, m->hparams, err))
            return -1;
    return layer_geometry(m, err) || load_per_layer_inputs(m, f, err) ||
           check_mla_layers(m, err) ? -1 : 0;
}

/* Packs a matrix (kern_pack_usable) for the eight-row kernels into out.
 * The copy replaces the mapped rows for products, so their pages are given
 * back (they are read again from the file if the embedding needs a row):
 * resident memory stays about the file's size. */
static void pack_matrix(run_matrix *w, uint8_t *out)
{
    const size_t bytes = (size_t)w->rows * w->row_bytes;
    w->packed = out;
    kern_pack(w->type, w->data, w->row_bytes, w->rows, w->cols, w->packed);
    const long page = sysconf(_SC_PAGESIZE);
    if (page > 0) {
        const uintptr_t lo = ((uintptr_t)w->data + (uintptr_t)page - 1) / (uintptr_t)page *
                             (uintptr_t)page;
        const uintptr_t hi = ((uintptr_t)w->data + bytes) / (uintptr_t)page * (uintptr_t)page;
        if (hi > lo)
            (void)madvise((void *)lo, hi - lo, MADV_DONTNEED); /* advice only */
    }
}

/* A 3-D stack of experts: packed when each expert's matrix could be, so
 * that run_expert slices the packed copy as it slices the rows. */
static bool stacked_role(int role)
{
    return role == GGUF_ROLE_FFN_GATE_EXPS || role == GGUF_ROLE_FFN_UP_EXPS ||
           role == GGUF_ROLE_FFN_DOWN_EXPS || role == GGUF_ROLE_FFN_GATE_UP_EXPS;
}

/* The latent attention's per-head stacks (k_b, v_b), sliced by head. */
static bool head_stacked_role(int role)
{
    return role == GGUF_ROLE_ATTN_K_B || role == GGUF_ROLE_ATTN_V_B;
}

/* How many matrices a slot's tensor stacks: experts, heads or one. */
static int64_t slot_stack(const run_model *m, int role)
{
    return stacked_role(role) ? m->hp.n_expert : head_stacked_role(role) ? m->hp.n_head : 1;
}

run_matrix *run_model_matrix_of(run_model *m, const gguf_tensor *t, int *n_stack)
{
    *n_stack = 1;
    if (!t->data || t->data == (const uint8_t *)m->tok_embd.data)
        return NULL; /* the embedding is a lookup; a tied output is the same tensor */
    if (t->data == (const uint8_t *)m->output.data)
        return &m->output;
    for (int i = 0; i < m->hp.n_layer; i++)
        for (size_t k = 0; k < sizeof SLOTS / sizeof *SLOTS; k++) {
            run_matrix *w = SLOTS[k].matrix ? run_layer_matrix(&m->layers[i], SLOTS[k].role) : NULL;
            if (w && w->data == t->data) {
                /* k_b and v_b: per-head products outside matmul, no pairs */
                if (head_stacked_role(SLOTS[k].role))
                    return NULL;
                *n_stack = stacked_role(SLOTS[k].role) ? m->hp.n_expert : 1;
                return w;
            }
        }
    return NULL;
}

/* The bytes w's packed copy takes in the arena (64-byte aligned), or 0
 * when it is not packed; a stack of n_stack experts goes by one expert's
 * rows. */
static size_t packed_bytes(const run_matrix *w, int64_t n_stack)
{
    if (!w->data || n_stack < 1 || w->rows % n_stack ||
        !kern_pack_usable(w->type, w->rows / n_stack, w->cols))
        return 0;
    return ((size_t)w->rows * w->row_bytes + 63) / 64 * 64;
}

/* Packing every matrix, one matrix per unit. */
typedef struct {
    run_matrix *const *ws;
    const size_t      *at;
    void              *arena;
} pack_job;

static void pack_unit(void *ctx, int64_t k, int thread)
{
    (void)thread;
    const pack_job *j = ctx;
    if (j->at[k + 1] > j->at[k])
        pack_matrix(j->ws[k], (uint8_t *)j->arena + j->at[k]);
}

/* Every packable matrix (kern_pack_usable) goes into one allocation, in
 * 2 MiB pages where the kernel gives them (transparent huge pages on
 * madvise): the kernels stream the matrices, one TLB entry per 2 MiB, and
 * one arena wastes at most one page's tail where a page per matrix would
 * waste one each. */
static int pack_all(run_model *m, gguf_error *err)
{
    const size_t n_slots = sizeof SLOTS / sizeof *SLOTS, most = 1 + n_slots * (size_t)m->hp.n_layer;
    run_matrix **ws = malloc(most * sizeof *ws);
    int64_t *n_stack = malloc(most * sizeof *n_stack);
    size_t *at = malloc((most + 1) * sizeof *at);
    int rc = 0;
    if (!ws || !n_stack || !at) {
        rc = gguf_error_set(err, "out of memory");
        goto done;
    }
    size_t n = 0;
    n_stack[n] = 1;
    ws[n++] = &m->output;
    for (int i = 0; i < m->hp.n_layer; i++)
        for (size_t k = 0; k < n_slots; k++)
            if (SLOTS[k].matrix) {
                n_stack[n] = slot_stack(m, SLOTS[k].role);
                ws[n++] = run_layer_matrix(&m->layers[i], SLOTS[k].role);
            }
    /* each matrix's place in the arena (at[k + 1] - at[k] bytes; none when
     * it is not packed), then the packing on every thread (most of it is
     * the kernel zeroing the arena's fresh pages) */
    at[0] = 0;
    for (size_t k = 0; k < n; k++)
        at[k + 1] = at[k] + packed_bytes(ws[k], n_stack[k]);
    const size_t total = at[n];
    if (total) {
        const size_t huge = (size_t)2 << 20, align = total >= huge ? huge : 64;
        const size_t alloc = (total + align - 1) / align * align;
        if (!(m->packed_arena = aligned_alloc(align, alloc))) {
            rc = gguf_error_set(err, "out of memory (%zu bytes to pack the matrices)", total);
            goto done;
        }
#ifdef MADV_HUGEPAGE
        if (align == huge)
            (void)madvise(m->packed_arena, alloc, MADV_HUGEPAGE); /* advice only */
#endif
        pack_job j = { ws, at, m->packed_arena };
        pool_for((int64_t)n, pack_unit, &j);
    }
done:
    free(at);
    free(n_stack);
    free(ws);
    return rc;
}

static bool repack = true;

void run_model_set_repack(bool on)
{
    repack = on;
}

int run_model_load(run_model *m, const gguf_file *f, gguf_error *err)
{
    memset(m, 0, sizeof *m);
    if (load_all(m, f, err) || (repack && pack_all(m, err))) {
        run_model_free(m);
        return -1;
    }
    return 0;
}

void run_model_free(run_model *m)
{
    free(m->packed_arena);
    for (int i = 0; m->layers && i < m->hp.n_layer; i++) {
        run_layer *l = &m->layers[i];
        for (size_t k = 0; k < sizeof SLOTS / sizeof *SLOTS; k++)
            if (!SLOTS[k].matrix)
                free(*(float **)((char *)l + SLOTS[k].off));
    }
    free(m->layers);
    gguf_hparams_free(m->hparams);
    free(m->output_norm);
    free(m->rope_freqs);
    free(m->rope_long);
    free(m->rope_short);
    free(m->pl_proj_norm);
    free(m->swa_layers);
    memset(m, 0, sizeof *m);
}
