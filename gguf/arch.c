/*
 * arch.c — the architecture registry (see <ggufkit/arch.h>): the model
 * schema of every family, read from its rows.
 *
 * Each architecture is a row of data (families.c): names, a
 * hyper-parameter table, a tensor table (a base table patched by role) and
 * its model features. The tools read these rows through the functions
 * here; none of them keeps its own list of architectures, tensors or keys.
 * Adding an architecture is families.c (docs/design.md has the checklist).
 */
#include "arch_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARCHS gguf_archs
#define N_ARCHS gguf_n_archs

/* GGUF key formats by hyper-parameter (for every table). */
static const char *const hp_keys[GGUF_HP_COUNT] = {
    [GGUF_HP_CONTEXT_LENGTH] = GGUF_KEY_CONTEXT_LENGTH,
    [GGUF_HP_EMBEDDING_LENGTH] = GGUF_KEY_EMBEDDING_LENGTH,
    [GGUF_HP_BLOCK_COUNT] = GGUF_KEY_BLOCK_COUNT,
    [GGUF_HP_FFN_LENGTH] = GGUF_KEY_FFN_LENGTH,
    [GGUF_HP_HEAD_COUNT] = GGUF_KEY_HEAD_COUNT,
    [GGUF_HP_HEAD_COUNT_KV] = GGUF_KEY_HEAD_COUNT_KV,
    [GGUF_HP_KEY_LENGTH] = GGUF_KEY_KEY_LENGTH,
    [GGUF_HP_VALUE_LENGTH] = GGUF_KEY_VALUE_LENGTH,
    [GGUF_HP_ROPE_DIM] = GGUF_KEY_ROPE_DIM_COUNT,
    [GGUF_HP_RMS_EPS] = GGUF_KEY_RMS_EPS,
    [GGUF_HP_ROPE_FREQ_BASE] = GGUF_KEY_ROPE_FREQ_BASE,
    [GGUF_HP_LAYER_NORM_EPS] = GGUF_KEY_LAYER_NORM_EPS,
    [GGUF_HP_EXPERT_COUNT] = GGUF_KEY_EXPERT_COUNT,
    [GGUF_HP_EXPERT_USED_COUNT] = GGUF_KEY_EXPERT_USED_COUNT,
    [GGUF_HP_VOCAB_SIZE] = GGUF_KEY_VOCAB_SIZE,
    [GGUF_HP_EXPERT_FFN_LENGTH] = GGUF_KEY_EXPERT_FFN_LENGTH,
    [GGUF_HP_ROPE_ORIG_CTX] = GGUF_KEY_ROPE_ORIG_CTX,
    [GGUF_HP_SLIDING_WINDOW] = GGUF_KEY_SLIDING_WINDOW,
    [GGUF_HP_SWA_PATTERN] = GGUF_KEY_SLIDING_WINDOW_PATTERN,
    [GGUF_HP_ROPE_FREQ_BASE_SWA] = GGUF_KEY_ROPE_FREQ_BASE_SWA,
    [GGUF_HP_ATTN_SOFTCAP] = GGUF_KEY_ATTN_SOFTCAP,
    [GGUF_HP_FINAL_SOFTCAP] = GGUF_KEY_FINAL_SOFTCAP,
    [GGUF_HP_ROPE_SCALE_LINEAR] = GGUF_KEY_ROPE_SCALE_LINEAR,
    [GGUF_HP_ROPE_SCALING_FACTOR] = GGUF_KEY_ROPE_SCALING_FACTOR,
    [GGUF_HP_ROPE_SCALING_ATTN_FACTOR] = GGUF_KEY_ROPE_SCALING_ATTN_FACTOR,
    [GGUF_HP_ROPE_YARN_EXT_FACTOR] = GGUF_KEY_ROPE_YARN_EXT_FACTOR,
    [GGUF_HP_ROPE_YARN_ATTN_FACTOR] = GGUF_KEY_ROPE_YARN_ATTN_FACTOR,
    [GGUF_HP_ROPE_YARN_BETA_FAST] = GGUF_KEY_ROPE_YARN_BETA_FAST,
    [GGUF_HP_ROPE_YARN_BETA_SLOW] = GGUF_KEY_ROPE_YARN_BETA_SLOW,
    [GGUF_HP_SSM_CONV_KERNEL] = GGUF_KEY_SSM_CONV_KERNEL,
    [GGUF_HP_SSM_STATE_SIZE] = GGUF_KEY_SSM_STATE_SIZE,
    [GGUF_HP_SSM_GROUP_COUNT] = GGUF_KEY_SSM_GROUP_COUNT,
    [GGUF_HP_SSM_TIME_STEP_RANK] = GGUF_KEY_SSM_TIME_STEP_RANK,
    [GGUF_HP_SSM_INNER_SIZE] = GGUF_KEY_SSM_INNER_SIZE,
    [GGUF_HP_FULL_ATTN_INTERVAL] = GGUF_KEY_FULL_ATTN_INTERVAL,
    [GGUF_HP_ROPE_DIM_SECTIONS] = GGUF_KEY_ROPE_DIM_SECTIONS,
    [GGUF_HP_EXPERT_SHARED_FFN_LENGTH] = GGUF_KEY_EXPERT_SHARED_FFN_LENGTH,
    [GGUF_HP_SHARED_KV_LAYERS] = GGUF_KEY_SHARED_KV_LAYERS,
    [GGUF_HP_EMBD_PER_LAYER] = GGUF_KEY_EMBD_PER_LAYER,
    [GGUF_HP_KEY_LENGTH_SWA] = GGUF_KEY_KEY_LENGTH_SWA,
    [GGUF_HP_VALUE_LENGTH_SWA] = GGUF_KEY_VALUE_LENGTH_SWA,
    [GGUF_HP_ROPE_DIM_SWA] = GGUF_KEY_ROPE_DIM_COUNT_SWA,
    [GGUF_HP_EXPERT_SHARED_COUNT] = GGUF_KEY_EXPERT_SHARED_COUNT,
    [GGUF_HP_LEADING_DENSE_BLOCK_COUNT] = GGUF_KEY_LEADING_DENSE_BLOCK_COUNT,
    [GGUF_HP_EXPERT_GATING_FUNC] = GGUF_KEY_EXPERT_GATING_FUNC,
    [GGUF_HP_EXPERT_WEIGHTS_SCALE] = GGUF_KEY_EXPERT_WEIGHTS_SCALE,
    [GGUF_HP_EXPERT_GROUP_COUNT] = GGUF_KEY_EXPERT_GROUP_COUNT,
    [GGUF_HP_EXPERT_GROUP_USED_COUNT] = GGUF_KEY_EXPERT_GROUP_USED_COUNT,
    [GGUF_HP_NEXTN_PREDICT_LAYERS] = GGUF_KEY_NEXTN_PREDICT_LAYERS,
    [GGUF_HP_EXPERT_WEIGHTS_NORM] = GGUF_KEY_EXPERT_WEIGHTS_NORM,
    [GGUF_HP_Q_LORA_RANK] = GGUF_KEY_Q_LORA_RANK,
    [GGUF_HP_KV_LORA_RANK] = GGUF_KEY_KV_LORA_RANK,
    [GGUF_HP_KEY_LENGTH_MLA] = GGUF_KEY_KEY_LENGTH_MLA,
    [GGUF_HP_VALUE_LENGTH_MLA] = GGUF_KEY_VALUE_LENGTH_MLA,
    [GGUF_HP_ROPE_YARN_LOG_MUL] = GGUF_KEY_ROPE_YARN_LOG_MUL,
};

const char *gguf_hp_key(int hp)
{
    return hp >= 0 && hp < GGUF_HP_COUNT ? hp_keys[hp] : NULL;
}

const char *gguf_hp_name(int hp)
{
    const char *k = gguf_hp_key(hp);
    return k ? k + 3 : "unknown"; /* past "%s." */
}


size_t gguf_arch_count(void) { return N_ARCHS; }

const gguf_arch *gguf_arch_at(size_t i) { return i < N_ARCHS ? &ARCHS[i] : NULL; }

const gguf_arch *gguf_arch_find(const char *name)
{
    for (size_t i = 0; name && i < N_ARCHS; i++)
        if (!strcmp(ARCHS[i].name, name))
            return &ARCHS[i];
    return NULL;
}

const char *gguf_arch_name(const gguf_arch *a) { return a->name; }
const char *gguf_arch_about(const gguf_arch *a) { return a->about; }
int gguf_arch_rope(const gguf_arch *a) { return a->rope; }
int gguf_arch_activation(const gguf_arch *a) { return a->activation; }
int gguf_arch_routing(const gguf_arch *a) { return a->routing; }

bool gguf_arch_has(const gguf_arch *a, int feature)
{
    return feature >= 0 && feature < GGUF_FEAT_COUNT && (a->features >> feature & 1u);
}

/* ---------------------------------------------------------------------------
 * Hyper-parameter rows
 */

size_t gguf_arch_n_hparams(const gguf_arch *a)
{
    size_t n = 0;
    while (a->hparams[n].id != GGUF_HP_COUNT)
        n++;
    return n;
}

const gguf_arch_hparam *gguf_arch_hparam_at(const gguf_arch *a, size_t i)
{
    return i < gguf_arch_n_hparams(a) ? &a->hparams[i] : NULL;
}

const gguf_arch_hparam *gguf_arch_hparam_of(const gguf_arch *a, int hp)
{
    for (const gguf_arch_hparam *h = a->hparams; h->id != GGUF_HP_COUNT; h++)
        if (h->id == hp)
            return h;
    return NULL;
}

int gguf_arch_hparam_id(const gguf_arch_hparam *h) { return h->id; }
bool gguf_arch_hparam_is_float(const gguf_arch_hparam *h) { return h->is_float; }
bool gguf_arch_hparam_required(const gguf_arch_hparam *h) { return h->required; }
int gguf_arch_hparam_derive(const gguf_arch_hparam *h) { return h->derive; }
double gguf_arch_hparam_default(const gguf_arch_hparam *h) { return h->def; }

void gguf_arch_hparam_range(const gguf_arch_hparam *h, int64_t *lo, int64_t *hi)
{
    *lo = h->lo;
    *hi = h->hi;
}

int gguf_arch_hparam_array(const gguf_arch_hparam *h, int64_t *count)
{
    if (count)
        *count = h->array == GGUF_HP_ARRAY ? h->count : 0;
    return h->array;
}

/* ---------------------------------------------------------------------------
 * Tensor rows
 */

/* Row i of a's tables, their patches applied (arch_impl.h), or NULL. */
const gguf_arch_tensor *gguf_arch_tensor_at(const gguf_arch *a, size_t i)
{
    for (const gguf_tensor_part *p = a->tables; p->rows; p++)
        for (const gguf_arch_tensor *r = p->rows; r->name; r++) {
            const gguf_arch_tensor *row = r;
            for (const gguf_tensor_patch *q = p->patches; q && q->op; q++)
                if (q->at == r->role && q->op == GGUF_PATCH_DROP)
                    row = NULL;
                else if (q->at == r->role && q->op == GGUF_PATCH_SET)
                    row = &q->row;
            if (row && i-- == 0)
                return row;
            for (const gguf_tensor_patch *q = p->patches; q && q->op; q++)
                if (q->at == r->role && q->op == GGUF_PATCH_AFTER && i-- == 0)
                    return &q->row;
        }
    return NULL;
}

size_t gguf_arch_n_tensors(const gguf_arch *a)
{
    size_t n = 0;
    while (gguf_arch_tensor_at(a, n))
        n++;
    return n;
}

const char *gguf_arch_tensor_name(const gguf_arch_tensor *t) { return t->name; }
int gguf_arch_tensor_role(const gguf_arch_tensor *t) { return t->role; }

int gguf_arch_tensor_dim(const gguf_arch_tensor *t, int axis)
{
    return axis >= 0 && axis < 3 ? t->ne[axis] : GGUF_DIM_1;
}

int gguf_arch_tensor_layers(const gguf_arch_tensor *t) { return t->layers; }

const char *gguf_layers_name(int layers)
{
    switch (layers) {
    case GGUF_LAYERS_ALL:       return "every";
    case GGUF_LAYERS_ATTENTION: return "attention";
    case GGUF_LAYERS_RECURRENT: return "recurrent";
    case GGUF_LAYERS_SLIDING:   return "sliding";
    case GGUF_LAYERS_FULL:      return "full";
    case GGUF_LAYERS_OWN_KV:    return "own-kv";
    case GGUF_LAYERS_SHARED_KV: return "shared-kv";
    case GGUF_LAYERS_LEADING_DENSE: return "leading-dense";
    case GGUF_LAYERS_MOE:       return "moe";
    case GGUF_LAYERS_NEXTN:     return "nextn";
    }
    return "unknown";
}

static const char *const role_names[GGUF_ROLE_COUNT] = {
    [GGUF_ROLE_TOKEN_EMBD] = "token_embd", [GGUF_ROLE_OUTPUT_NORM] = "output_norm",
    [GGUF_ROLE_OUTPUT] = "output", [GGUF_ROLE_ROPE_FREQS] = "rope_freqs",
    [GGUF_ROLE_ATTN_NORM] = "attn_norm", [GGUF_ROLE_ATTN_Q] = "attn_q",
    [GGUF_ROLE_ATTN_K] = "attn_k", [GGUF_ROLE_ATTN_V] = "attn_v",
    [GGUF_ROLE_ATTN_Q_BIAS] = "attn_q_bias", [GGUF_ROLE_ATTN_K_BIAS] = "attn_k_bias",
    [GGUF_ROLE_ATTN_V_BIAS] = "attn_v_bias", [GGUF_ROLE_ATTN_OUT] = "attn_output",
    [GGUF_ROLE_ATTN_OUT_BIAS] = "attn_output_bias", [GGUF_ROLE_FFN_NORM] = "ffn_norm",
    [GGUF_ROLE_FFN_GATE] = "ffn_gate", [GGUF_ROLE_FFN_UP] = "ffn_up",
    [GGUF_ROLE_FFN_DOWN] = "ffn_down", [GGUF_ROLE_FFN_GATE_BIAS] = "ffn_gate_bias",
    [GGUF_ROLE_FFN_UP_BIAS] = "ffn_up_bias", [GGUF_ROLE_FFN_DOWN_BIAS] = "ffn_down_bias",
    [GGUF_ROLE_ATTN_Q_NORM] = "attn_q_norm", [GGUF_ROLE_ATTN_K_NORM] = "attn_k_norm",
    [GGUF_ROLE_FFN_GATE_INP] = "ffn_gate_inp", [GGUF_ROLE_FFN_GATE_EXPS] = "ffn_gate_exps",
    [GGUF_ROLE_FFN_UP_EXPS] = "ffn_up_exps", [GGUF_ROLE_FFN_DOWN_EXPS] = "ffn_down_exps",
    [GGUF_ROLE_ATTN_QKV] = "attn_qkv", [GGUF_ROLE_FFN_GATE_UP] = "ffn_gate_up",
    [GGUF_ROLE_ROPE_FACTORS_LONG] = "rope_factors_long",
    [GGUF_ROLE_ROPE_FACTORS_SHORT] = "rope_factors_short",
    [GGUF_ROLE_ATTN_SINKS] = "attn_sinks", [GGUF_ROLE_FFN_GATE_INP_BIAS] = "ffn_gate_inp_bias",
    [GGUF_ROLE_FFN_GATE_EXPS_BIAS] = "ffn_gate_exps_bias",
    [GGUF_ROLE_FFN_UP_EXPS_BIAS] = "ffn_up_exps_bias",
    [GGUF_ROLE_FFN_DOWN_EXPS_BIAS] = "ffn_down_exps_bias",
    [GGUF_ROLE_ATTN_POST_NORM] = "attn_post_norm", [GGUF_ROLE_FFN_POST_NORM] = "ffn_post_norm",
    [GGUF_ROLE_SSM_A] = "ssm_a", [GGUF_ROLE_SSM_CONV1D] = "ssm_conv1d",
    [GGUF_ROLE_SSM_DT_BIAS] = "ssm_dt_bias", [GGUF_ROLE_SSM_ALPHA] = "ssm_alpha",
    [GGUF_ROLE_SSM_BETA] = "ssm_beta", [GGUF_ROLE_SSM_NORM] = "ssm_norm",
    [GGUF_ROLE_SSM_OUT] = "ssm_out", [GGUF_ROLE_ATTN_GATE] = "attn_gate",
    [GGUF_ROLE_FFN_GATE_SHEXP] = "ffn_gate_shexp", [GGUF_ROLE_FFN_UP_SHEXP] = "ffn_up_shexp",
    [GGUF_ROLE_FFN_DOWN_SHEXP] = "ffn_down_shexp",
    [GGUF_ROLE_FFN_GATE_INP_SHEXP] = "ffn_gate_inp_shexp",
    [GGUF_ROLE_PER_LAYER_TOKEN_EMBD] = "per_layer_token_embd",
    [GGUF_ROLE_PER_LAYER_MODEL_PROJ] = "per_layer_model_proj",
    [GGUF_ROLE_PER_LAYER_PROJ_NORM] = "per_layer_proj_norm",
    [GGUF_ROLE_PER_LAYER_INP_GATE] = "per_layer_inp_gate",
    [GGUF_ROLE_PER_LAYER_PROJ] = "per_layer_proj",
    [GGUF_ROLE_PER_LAYER_POST_NORM] = "per_layer_post_norm",
    [GGUF_ROLE_LAYER_OUT_SCALE] = "layer_out_scale",
    [GGUF_ROLE_FFN_GATE_UP_EXPS] = "ffn_gate_up_exps",
    [GGUF_ROLE_FFN_GATE_INP_SCALE] = "ffn_gate_inp_scale",
    [GGUF_ROLE_FFN_DOWN_EXPS_SCALE] = "ffn_down_exps_scale",
    [GGUF_ROLE_FFN_PRE_NORM_2] = "ffn_pre_norm_2",
    [GGUF_ROLE_FFN_POST_NORM_1] = "ffn_post_norm_1",
    [GGUF_ROLE_FFN_POST_NORM_2] = "ffn_post_norm_2",
    [GGUF_ROLE_EXP_PROBS_B] = "exp_probs_b",
    [GGUF_ROLE_NEXTN_EH_PROJ] = "nextn_eh_proj",
    [GGUF_ROLE_NEXTN_ENORM] = "nextn_enorm",
    [GGUF_ROLE_NEXTN_HNORM] = "nextn_hnorm",
    [GGUF_ROLE_NEXTN_SHARED_HEAD_NORM] = "nextn_shared_head_norm",
    [GGUF_ROLE_ATTN_Q_A] = "attn_q_a",
    [GGUF_ROLE_ATTN_Q_A_NORM] = "attn_q_a_norm",
    [GGUF_ROLE_ATTN_Q_B] = "attn_q_b",
    [GGUF_ROLE_ATTN_KV_A_MQA] = "attn_kv_a_mqa",
    [GGUF_ROLE_ATTN_KV_A_NORM] = "attn_kv_a_norm",
    [GGUF_ROLE_ATTN_K_B] = "attn_k_b",
    [GGUF_ROLE_ATTN_V_B] = "attn_v_b",
};

const char *gguf_role_name(int role)
{
    return role >= 0 && role < GGUF_ROLE_COUNT ? role_names[role] : "unknown";
}

static const char *const dim_names[GGUF_DIM_COUNT] = {
    [GGUF_DIM_1] = "1", [GGUF_DIM_EMBD] = "embedding_length", [GGUF_DIM_FF] = "feed_forward_length",
    [GGUF_DIM_VOCAB] = "n_vocab", [GGUF_DIM_Q] = "head_count × head_dim",
    [GGUF_DIM_K] = "head_count_kv × head_dim", [GGUF_DIM_V] = "head_count_kv × value_length",
    [GGUF_DIM_ROT_HALF] = "rope.dimension_count / 2", [GGUF_DIM_HEAD_K] = "key_length",
    [GGUF_DIM_EXPERTS] = "expert_count", [GGUF_DIM_FF_EXP] = "expert_feed_forward_length",
    [GGUF_DIM_QKV] = "embedding_length + 2 × head_count_kv × value_length",
    [GGUF_DIM_FF2] = "2 × feed_forward_length",
    [GGUF_DIM_HEADS] = "head_count",
    [GGUF_DIM_Q_GATED] = "2 × head_count × head_dim",
    [GGUF_DIM_SSM_CONV] = "ssm.conv_kernel", [GGUF_DIM_SSM_STATE] = "ssm.state_size",
    [GGUF_DIM_SSM_HEADS] = "ssm.time_step_rank",
    [GGUF_DIM_SSM_VALUE] = "ssm.state_size × ssm.time_step_rank",
    [GGUF_DIM_SSM_CHANNELS] = "(2 × ssm.group_count + ssm.time_step_rank) × ssm.state_size",
    [GGUF_DIM_FF_SHEXP] = "expert_shared_feed_forward_length",
    [GGUF_DIM_EMBD_PER_LAYER] = "embedding_length_per_layer_input",
    [GGUF_DIM_EMBD_PER_LAYER_ALL] = "embedding_length_per_layer_input × block_count",
    [GGUF_DIM_FF_EXP2] = "2 × expert_feed_forward_length",
    [GGUF_DIM_FF_EXP_SHARED] = "expert_feed_forward_length × expert_shared_count",
    [GGUF_DIM_EMBD2] = "2 × embedding_length",
    [GGUF_DIM_Q_LORA] = "q_lora_rank",
    [GGUF_DIM_Q_MLA] = "head_count × key_length_mla",
    [GGUF_DIM_NOPE_MLA] = "key_length_mla − rope.dimension_count",
    [GGUF_DIM_V_MLA] = "value_length_mla",
    [GGUF_DIM_O_MLA] = "head_count × value_length_mla",
};

const char *gguf_dim_name(int dim)
{
    return dim >= 0 && dim < GGUF_DIM_COUNT ? dim_names[dim] : "unknown";
}

bool gguf_arch_tensor_required_for(const gguf_arch *a, const gguf_arch_tensor *t, bool experts)
{
    switch (t->need) {
    case GGUF_NEED_REQUIRED:     return true;
    case GGUF_NEED_OPTIONAL:     return false;
    case GGUF_NEED_IF_FEAT:      return gguf_arch_has(a, t->need_feat);
    case GGUF_NEED_UNLESS_FEAT:  return !gguf_arch_has(a, t->need_feat);
    case GGUF_NEED_DENSE:        return !experts;
    case GGUF_NEED_EXPERTS:      return experts;
    case GGUF_NEED_IN_LAYERS:    return true; /* in the blocks of its kind */
    case GGUF_NEED_PER_LAYER_INPUTS: return false; /* the model rules: when the width > 0 */
    }
    return true;
}

bool gguf_arch_tensor_required(const gguf_arch *a, const gguf_arch_tensor *t)
{
    return gguf_arch_tensor_required_for(a, t, false);
}

#define BLOCK_PREFIX "blk.%d."

bool gguf_arch_tensor_per_block(const gguf_arch_tensor *t)
{
    return strncmp(t->name, BLOCK_PREFIX, strlen(BLOCK_PREFIX)) == 0;
}

const gguf_arch_tensor *gguf_arch_tensor_of(const gguf_arch *a, int role)
{
    const gguf_arch_tensor *t;
    for (size_t i = 0; (t = gguf_arch_tensor_at(a, i)); i++)
        if (t->role == role)
            return t;
    return NULL;
}

/* "blk.N.REST" with N in canonical decimal (no sign, no leading zero). */
bool gguf_parse_block_name(const char *name, int64_t *block, const char **rest)
{
    if (strncmp(name, "blk.", 4) != 0 || !isdigit((unsigned char)name[4]))
        return false;
    const char *p = name + 4;
    if (p[0] == '0' && isdigit((unsigned char)p[1]))
        return false;
    int64_t v = 0;
    for (int n = 0; isdigit((unsigned char)*p); p++, n++) {
        if (n == 18)
            return false;
        v = v * 10 + (*p - '0');
    }
    if (*p != '.')
        return false;
    *block = v;
    *rest = p + 1;
    return true;
}

const gguf_arch_tensor *gguf_arch_match(const gguf_arch *a, const char *name, int *block)
{
    int64_t b;
    const char *rest;
    const bool blk = gguf_parse_block_name(name, &b, &rest);
    const gguf_arch_tensor *t;
    for (size_t i = 0; (t = gguf_arch_tensor_at(a, i)); i++) {
        if (gguf_arch_tensor_per_block(t) != blk)
            continue;
        if (blk ? strcmp(t->name + strlen(BLOCK_PREFIX), rest) != 0 : strcmp(t->name, name) != 0)
            continue;
        if (block)
            *block = blk ? (b > INT32_MAX ? INT32_MAX : (int)b) : -1;
        return t;
    }
    return NULL;
}

/* ===========================================================================
 * A model's hyper-parameters (read by modelcheck.c's gguf_hparams_read)
 */

void gguf_hparams_release(gguf_hparams *hp)
{
    for (int i = 0; i < GGUF_HP_COUNT; i++) {
        free(hp->arr[i]);
        hp->arr[i] = NULL;
        hp->n_arr[i] = 0;
    }
}

void gguf_hparams_free(gguf_hparams *hp)
{
    if (hp)
        gguf_hparams_release(hp);
    free(hp);
}

const gguf_arch *gguf_hparams_arch(const gguf_hparams *hp) { return hp->arch; }

bool gguf_hparams_has(const gguf_hparams *hp, int id)
{
    return id >= 0 && id < GGUF_HP_COUNT && hp->has[id];
}

/* The value of a row (float or integer as its row says; an id without a
 * row is an integer) when present or derived. */
static bool hp_value(const gguf_hparams *hp, int id, bool *is_float, double *f, int64_t *v)
{
    *f = 0;
    *v = 0;
    if (id < 0 || id >= GGUF_HP_COUNT || !hp->set[id])
        return false;
    const gguf_arch_hparam *h = gguf_arch_hparam_of(hp->arch, id);
    *is_float = h && h->is_float;
    *f = hp->f[id];
    *v = hp->v[id];
    return true;
}

bool gguf_hparams_get(const gguf_hparams *hp, int id, double *value)
{
    bool fl = false;
    double f;
    int64_t v;
    const bool ok = hp_value(hp, id, &fl, &f, &v);
    *value = fl ? f : (double)v;
    return ok;
}

bool gguf_hparams_get_int(const gguf_hparams *hp, int id, int64_t *value)
{
    bool fl = false;
    double f;
    int64_t v;
    const bool ok = hp_value(hp, id, &fl, &f, &v);
    *value = fl ? (int64_t)f : v;
    return ok;
}

int64_t gguf_hparams_dim(const gguf_hparams *hp, int dim)
{
    switch (dim) {
    case GGUF_DIM_1:        return 1;
    case GGUF_DIM_EMBD:     return hp->v[GGUF_HP_EMBEDDING_LENGTH];
    case GGUF_DIM_FF:       return hp->v[GGUF_HP_FFN_LENGTH];
    case GGUF_DIM_VOCAB:    return hp->n_vocab;
    case GGUF_DIM_Q:        return hp->v[GGUF_HP_HEAD_COUNT] * hp->head_k;
    case GGUF_DIM_K:        return hp->n_head_kv * hp->head_k;
    case GGUF_DIM_V:        return hp->n_head_kv * hp->head_v;
    case GGUF_DIM_ROT_HALF: return hp->n_rot / 2;
    case GGUF_DIM_HEAD_K:   return hp->head_k;
    case GGUF_DIM_EXPERTS:  return hp->v[GGUF_HP_EXPERT_COUNT];
    case GGUF_DIM_HEADS:    return hp->v[GGUF_HP_HEAD_COUNT];
    case GGUF_DIM_FF_EXP:
        return hp->has[GGUF_HP_EXPERT_FFN_LENGTH] ? hp->v[GGUF_HP_EXPERT_FFN_LENGTH]
                                                  : hp->v[GGUF_HP_FFN_LENGTH];
    case GGUF_DIM_QKV:      return hp->v[GGUF_HP_EMBEDDING_LENGTH] + 2 * hp->n_head_kv * hp->head_v;
    case GGUF_DIM_FF2:      return 2 * hp->v[GGUF_HP_FFN_LENGTH];
    case GGUF_DIM_Q_GATED:  return 2 * hp->v[GGUF_HP_HEAD_COUNT] * hp->head_k;
    case GGUF_DIM_SSM_CONV: return hp->v[GGUF_HP_SSM_CONV_KERNEL];
    case GGUF_DIM_SSM_STATE:return hp->v[GGUF_HP_SSM_STATE_SIZE];
    case GGUF_DIM_SSM_HEADS:return hp->v[GGUF_HP_SSM_TIME_STEP_RANK];
    case GGUF_DIM_SSM_VALUE:
        return hp->v[GGUF_HP_SSM_STATE_SIZE] * hp->v[GGUF_HP_SSM_TIME_STEP_RANK];
    case GGUF_DIM_SSM_CHANNELS:
        return (2 * hp->v[GGUF_HP_SSM_GROUP_COUNT] + hp->v[GGUF_HP_SSM_TIME_STEP_RANK]) *
               hp->v[GGUF_HP_SSM_STATE_SIZE];
    case GGUF_DIM_FF_SHEXP:
        return hp->has[GGUF_HP_EXPERT_SHARED_FFN_LENGTH] ? hp->v[GGUF_HP_EXPERT_SHARED_FFN_LENGTH]
                                                         : hp->v[GGUF_HP_FFN_LENGTH];
    case GGUF_DIM_EMBD_PER_LAYER: return hp->v[GGUF_HP_EMBD_PER_LAYER];
    case GGUF_DIM_EMBD_PER_LAYER_ALL:
        return hp->v[GGUF_HP_EMBD_PER_LAYER] * hp->v[GGUF_HP_BLOCK_COUNT];
    case GGUF_DIM_FF_EXP2:  return 2 * gguf_hparams_dim(hp, GGUF_DIM_FF_EXP);
    case GGUF_DIM_FF_EXP_SHARED:
        return gguf_hparams_dim(hp, GGUF_DIM_FF_EXP) * hp->v[GGUF_HP_EXPERT_SHARED_COUNT];
    case GGUF_DIM_EMBD2:    return 2 * hp->v[GGUF_HP_EMBEDDING_LENGTH];
    case GGUF_DIM_Q_LORA:   return hp->v[GGUF_HP_Q_LORA_RANK];
    case GGUF_DIM_Q_MLA:    return hp->v[GGUF_HP_HEAD_COUNT] * hp->v[GGUF_HP_KEY_LENGTH_MLA];
    case GGUF_DIM_NOPE_MLA: return hp->v[GGUF_HP_KEY_LENGTH_MLA] - hp->n_rot;
    case GGUF_DIM_V_MLA:    return hp->v[GGUF_HP_VALUE_LENGTH_MLA];
    case GGUF_DIM_O_MLA:    return hp->v[GGUF_HP_HEAD_COUNT] * hp->v[GGUF_HP_VALUE_LENGTH_MLA];
    }
    return -1;
}

static bool per_block(const gguf_hparams *hp, int id, int64_t il, int64_t *value);

/* Whether block il attends within the sliding window: element il of a
 * per-block sliding_window_pattern; with an integer one P (llama.cpp's
 * set_swa_pattern), unless il % P == P - 1 (every block when P is 0);
 * never without the row. */
static bool layer_sliding(const gguf_hparams *hp, int64_t il)
{
    const gguf_arch_hparam *h = gguf_arch_hparam_of(hp->arch, GGUF_HP_SWA_PATTERN);
    if (!h || !hp->set[GGUF_HP_SWA_PATTERN])
        return false;
    if (h->array == GGUF_HP_PER_BLOCK)
        return hp->arr[GGUF_HP_SWA_PATTERN] && il < hp->n_arr[GGUF_HP_SWA_PATTERN] &&
               hp->arr[GGUF_HP_SWA_PATTERN][il] != 0;
    const int64_t p = hp->v[GGUF_HP_SWA_PATTERN];
    return p == 0 || il % p < p - 1;
}

/* The head sizes and KV heads of block il when they differ from the
 * model's (a sliding block with attention.key_length_swa, a per-block
 * head_count_kv): the dimension dim of them in *v, true; else false. */
static bool layer_heads(const gguf_hparams *hp, int dim, int64_t il, int64_t *v)
{
    const bool swa = hp->has[GGUF_HP_KEY_LENGTH_SWA] && layer_sliding(hp, il);
    int64_t kv = hp->n_head_kv;
    const bool kv_arr = per_block(hp, GGUF_HP_HEAD_COUNT_KV, il, &kv);
    if (!swa && !kv_arr)
        return false;
    const int64_t hk = swa ? hp->v[GGUF_HP_KEY_LENGTH_SWA] : hp->head_k;
    const int64_t hv = swa && hp->has[GGUF_HP_VALUE_LENGTH_SWA] ? hp->v[GGUF_HP_VALUE_LENGTH_SWA]
                                                               : hp->head_v;
    switch (dim) {
    case GGUF_DIM_Q:      *v = hp->v[GGUF_HP_HEAD_COUNT] * hk; return true;
    case GGUF_DIM_K:      *v = kv * hk; return true;
    case GGUF_DIM_V:      *v = kv * hv; return true;
    case GGUF_DIM_HEAD_K: *v = hk; return true;
    case GGUF_DIM_ROT_HALF:
        if (!swa)
            return false;
        *v = (hp->set[GGUF_HP_ROPE_DIM_SWA] ? hp->v[GGUF_HP_ROPE_DIM_SWA] : hp->n_rot) / 2;
        return true;
    }
    return false;
}

bool gguf_hparams_layer_in(const gguf_hparams *hp, int layers, int64_t il)
{
    if (il < 0 || il >= hp->v[GGUF_HP_BLOCK_COUNT])
        return false;
    const int64_t n = hp->set[GGUF_HP_FULL_ATTN_INTERVAL] ? hp->v[GGUF_HP_FULL_ATTN_INTERVAL] : 0;
    const bool attention = n <= 0 || (il + 1) % n == 0;
    switch (layers) {
    case GGUF_LAYERS_ALL:       return true;
    case GGUF_LAYERS_ATTENTION: return attention;
    case GGUF_LAYERS_RECURRENT: return !attention;
    case GGUF_LAYERS_SLIDING:   return layer_sliding(hp, il);
    case GGUF_LAYERS_FULL:      return !layer_sliding(hp, il);
    case GGUF_LAYERS_OWN_KV: /* a next-token-prediction block keeps none (llama.cpp) */
        return il < hp->v[GGUF_HP_BLOCK_COUNT] - hp->v[GGUF_HP_SHARED_KV_LAYERS] &&
               il < hp->v[GGUF_HP_BLOCK_COUNT] - hp->v[GGUF_HP_NEXTN_PREDICT_LAYERS];
    case GGUF_LAYERS_SHARED_KV:
        return il >= hp->v[GGUF_HP_BLOCK_COUNT] - hp->v[GGUF_HP_SHARED_KV_LAYERS];
    case GGUF_LAYERS_LEADING_DENSE:
        return il < hp->v[GGUF_HP_LEADING_DENSE_BLOCK_COUNT];
    case GGUF_LAYERS_MOE:
        return il >= hp->v[GGUF_HP_LEADING_DENSE_BLOCK_COUNT];
    case GGUF_LAYERS_NEXTN:
        return il >= hp->v[GGUF_HP_BLOCK_COUNT] - hp->v[GGUF_HP_NEXTN_PREDICT_LAYERS];
    }
    return false;
}

/* Element il of a per-block array row, when id has one. */
static bool per_block(const gguf_hparams *hp, int id, int64_t il, int64_t *value)
{
    if (id < 0 || id >= GGUF_HP_COUNT || !hp->arr[id] || il < 0 || il >= hp->n_arr[id])
        return false;
    const gguf_arch_hparam *h = gguf_arch_hparam_of(hp->arch, id);
    if (!h || h->array != GGUF_HP_PER_BLOCK)
        return false;
    *value = hp->arr[id][il];
    return true;
}

int64_t gguf_hparams_layer_dim(const gguf_hparams *hp, int dim, int64_t il)
{
    if (il < 0 || il >= hp->v[GGUF_HP_BLOCK_COUNT])
        return -1;
    int64_t ff;
    if (layer_heads(hp, dim, il, &ff))
        return ff;
    if (per_block(hp, GGUF_HP_FFN_LENGTH, il, &ff)) {
        if (dim == GGUF_DIM_FF)
            return ff;
        if (dim == GGUF_DIM_FF2)
            return 2 * ff;
        if (dim == GGUF_DIM_FF_EXP && !hp->has[GGUF_HP_EXPERT_FFN_LENGTH])
            return ff;
        if (dim == GGUF_DIM_FF_SHEXP && !hp->has[GGUF_HP_EXPERT_SHARED_FFN_LENGTH])
            return ff;
    }
    return gguf_hparams_dim(hp, dim);
}

int64_t gguf_hparams_array(const gguf_hparams *hp, int id, int64_t *values, int64_t cap)
{
    if (id < 0 || id >= GGUF_HP_COUNT || !hp->arr[id])
        return 0;
    for (int64_t i = 0; values && i < cap && i < hp->n_arr[id]; i++)
        values[i] = hp->arr[id][i];
    return hp->n_arr[id];
}

bool gguf_hparams_get_layer(const gguf_hparams *hp, int id, int64_t il, int64_t *value)
{
    *value = 0;
    if (il < 0 || il >= hp->v[GGUF_HP_BLOCK_COUNT])
        return false;
    if (per_block(hp, id, il, value))
        return true;
    return gguf_hparams_get_int(hp, id, value);
}
