/*
 * test_forward.c — gguf-run's model checks, forward-pass blocks and sampler.
 *
 * The blocks (RMSNorm, RoPE in both layouts, softmax, SwiGLU) are held to
 * their formulas computed directly in double; the model loader to one
 * message per kind of malformed model (written here with gguf/writer.h);
 * the forward pass to itself: a prompt run as one batch, in pieces or token
 * by token gives the same logits. The --imatrix collector is held to its
 * sums computed by hand and to llama-imatrix's rules (batches of 16 rows or
 * more, one entry per layer matrix, values sum / count * ncall). The
 * vector (AVX2) paths of attention, softmax (with and without gpt-oss's
 * sink), SiLU and RoPE are held to the scalar ones bit for bit, block by
 * block and over whole forward passes, routed-expert models (Mixtral,
 * Qwen3-MoE, a small gpt-oss) included.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "testutil.h"

#include "eval.h"
#include <ggufkit/quants.h>
#include "forward.h"
#include "forward_simd.h"
#include <ggufkit/gguf.h>
#include "importance.h"
#include "kernels.h"
#include "lora.h"
#include "model.h"
#include "recurrent.h"
#include <ggufkit/arch.h>
#include "sampler.h"
#include "verify.h"

/* ---------------------------------------------------------------------------
 * A small synthetic model, with knobs to break it
 */

typedef struct spec {
    const char *arch;
    int dim, layers, ff, heads, kv_heads, vocab, ctx, rot;
    int head_dim;         /* > 0: written as attention.key_length/value_length */
    bool qk_norm;         /* qwen3's attn_q_norm / attn_k_norm tensors */
    bool fused;           /* phi3's attn_qkv and ffn_up of gate and up, not q/k/v, gate, up */
    const char *extra;    /* a global vector of rot / 2 to add (phi3's LongRoPE factors) */
    int n_tokens;         /* tokens in tokenizer.ggml.tokens */
    uint32_t wtype;       /* type of the weight matrices */
    bool bias, tied, rope_freqs, no_ctx_key;
    float eps, rope_freq0;
    float rope_base;      /* rope.freq_base; 0: 10000 */
    const char *drop;     /* a tensor to leave out */
    const char *kv_arch;  /* architecture prefix of the keys (default arch) */
    const char *rope_scaling; /* {arch}.rope.scaling.type, with factor 4 */
    bool post_norms;      /* gemma's post_attention_norm and post_ffw_norm */
    int swa;              /* > 0: written as attention.sliding_window */
    int experts, experts_used, ff_exp; /* > 0: routed experts instead of the dense FFN */
    bool oss;             /* gpt-oss's layout: q/k/v/o biases, sinks, post_attention_norm
                           * as the FFN norm, router and expert biases */
    int interval;         /* > 0 (qwen35, qwen35moe): full_attention_interval; the other
                           * blocks Gated DeltaNet ones (2 key heads, 4 value heads of
                           * ssm_state, kernel 4); gated q; M-RoPE sections; with experts a
                           * shared expert of ff */
    int ssm_state;        /* the delta net's head width */
    int ssm_inner;        /* > 0: ssm.inner_size written (default 4 · ssm_state) */
    const char *blk_extra;/* a per-block vector tensor of 4 to add in block 1 */
    int sections3;        /* > 0: rope.dimension_sections [0, 0, 0, this] */
    /* deepseek2 (write_mla_model): a KV latent of mla_kv_lora, q through a
     * latent of mla_q_lora (0: one attn_q), heads of mla_nope + rot for q/k
     * and mla_v for values; the first dense_lead blocks dense, the others
     * experts in groups (group_used of groups kept) with a shared one;
     * mla_key, when set, written as mla_key_val after the others */
    int mla_kv_lora, mla_q_lora, mla_nope, mla_v, dense_lead, groups, group_used;
    const char *mla_key;
    int mla_key_val;
} spec;

static spec base_spec(void)
{
    return (spec){ .arch = "llama", .dim = 32, .layers = 2, .ff = 64, .heads = 4, .kv_heads = 2,
                   .vocab = 40, .ctx = 64, .rot = 8, .n_tokens = 40, .wtype = GGUF_DT_F32,
                   .eps = 1e-5f, .rope_freq0 = 1.0f };
}

static spec phi3_spec(void)
{
    spec s = base_spec();
    s.arch = "phi3";
    s.fused = true;
    return s;
}

/* Gemma 2 or 3: tied, post-norms, heads of 16 (4 × 16 ≠ 32), a sliding
 * window of 3; Gemma 3 with q/k norms. */
static spec gemma_spec(const char *arch)
{
    spec s = base_spec();
    s.arch = arch;
    s.tied = true;
    s.post_norms = true;
    s.head_dim = 16;
    s.rot = 16;
    s.qk_norm = !strcmp(arch, "gemma3");
    s.swa = 3;
    return s;
}

static uint32_t lcg = 12345;
static float rnd(void)
{
    lcg = lcg * 1664525u + 1013904223u;
    return ((float)(lcg >> 8) / 16777216.0f - 0.5f) * 0.5f;
}

/* Mixtral-style experts (llama's keys): 4 experts of n_ff 24, 2 used. */
static spec moe_spec(const char *arch)
{
    spec s = base_spec();
    s.arch = arch;
    s.experts = 4;
    s.experts_used = 2;
    s.ff_exp = 24;
    if (!strcmp(arch, "qwen3moe")) { /* tied, q/k norms, NEOX */
        s.qk_norm = true;
        s.tied = true;
    }
    return s;
}

/* gpt-oss in small: heads of 16, every other layer within a window of 3,
 * YaRN, biases and sinks everywhere, 4 experts of n_ff 40 (n_ff % 16 = 8),
 * 2 used. */
static spec oss_spec(void)
{
    spec s = base_spec();
    s.arch = "gpt-oss";
    s.oss = true;
    s.head_dim = 16;
    s.rot = 16;
    s.swa = 3;
    s.rope_scaling = "yarn";
    s.experts = 4;
    s.experts_used = 2;
    s.ff_exp = 40;
    return s;
}

/* Qwen 3.5 in small: blocks 0, 2 Gated DeltaNet (2 key heads, 4 value
 * heads of 16: channels 2·2·16 + 64 = 128; qwen35moe's of 32, whose ssm_out
 * rows are the widest activation rows), 1, 3 gated attention (heads of 16,
 * rope 8 in M-RoPE sections 2, 1, 1); qwen35moe: 4 experts of 24, 2 used,
 * and a shared expert of 64. */
static spec hybrid_spec(const char *arch)
{
    spec s = base_spec();
    s.arch = arch;
    s.layers = 4;
    s.interval = 2;
    s.ssm_state = !strcmp(arch, "qwen35") ? 16 : 32; /* 32: ssm_out wider than any other */
    s.head_dim = 16;
    s.qk_norm = true;
    s.tied = !strcmp(arch, "qwen35");
    s.eps = 1e-6f;
    if (!s.tied) {
        s.experts = 4;
        s.experts_used = 2;
        s.ff_exp = 24;
    }
    return s;
}

/* Adds tensor name (printf with layer) of ne0 × ne1 × ne2 (ne1 0: a
 * vector, ne2 0: a matrix). */
static void add3(gguf_writer *w, const spec *s, const char *fmt, int layer, uint32_t type,
                 int64_t ne0, int64_t ne1, int64_t ne2)
{
    char name[80];
    snprintf(name, sizeof name, fmt, layer);
    if (s->drop && !strcmp(name, s->drop))
        return;
    int64_t ne[3] = { ne0, ne1, ne2 };
    gguf_error err;
    ck_assert_msg(gguf_writer_add_tensor(w, name, type, ne2 ? 3 : ne1 ? 2 : 1, ne, &err) >= 0,
                  "%s", err.msg);
}

static void add(gguf_writer *w, const spec *s, const char *fmt, int layer, uint32_t type,
                int64_t ne0, int64_t ne1)
{
    add3(w, s, fmt, layer, type, ne0, ne1, 0);
}

static void set_u32(gguf_writer *w, const spec *s, const char *fmt, int v)
{
    char key[96];
    snprintf(key, sizeof key, fmt, s->kv_arch ? s->kv_arch : s->arch);
    gguf_writer_set_u32(w, key, (uint32_t)v);
}

static const char *write_mla_model(const spec *s);

/* s->n_tokens tokens t0, t1, ... of a llama vocabulary (bos 1, eos 2). */
static void write_vocab(gguf_writer *w, const spec *s)
{
    const char *toks[256];
    char buf[256][8];
    for (int i = 0; i < s->n_tokens && i < 256; i++) {
        snprintf(buf[i], sizeof buf[i], "t%d", i);
        toks[i] = buf[i];
    }
    gguf_writer_set_str(w, GGUF_KEY_TOK_MODEL, "llama");
    gguf_writer_set_str_array(w, GGUF_KEY_TOK_TOKENS, toks, NULL, (uint64_t)s->n_tokens);
    gguf_writer_set_u32(w, GGUF_KEY_TOK_BOS, 1);
    gguf_writer_set_u32(w, GGUF_KEY_TOK_EOS, 2);
}

/* Writes w's tensors with random values (the rope frequency factors
 * rope_freq0, then 1 + 4i) to path and returns it. */
static const char *write_tensors(gguf_writer *w, const spec *s, const char *path)
{
    gguf_error err;
    ck_assert_msg(gguf_writer_begin(w, path, &err) == 0, "%s", err.msg);
    for (uint64_t i = 0; i < gguf_writer_n_tensors(w); i++) {
        uint64_t n = gguf_writer_tensor_nbytes(w, i);
        uint8_t *bytes = malloc(n);
        ck_assert_ptr_nonnull(bytes);
        if (s->wtype == GGUF_DT_F32 || n % 4 == 0) {
            for (uint64_t j = 0; j + 4 <= n; j += 4) {
                float v = s->rope_freqs && i == 1 ? (j ? 1.0f + (float)j : s->rope_freq0) : rnd();
                memcpy(bytes + j, &v, 4);
            }
        }
        for (uint64_t j = n / 4 * 4; j < n; j++)
            bytes[j] = 0;
        ck_assert_msg(gguf_writer_write_tensor(w, bytes, n, &err) == 0, "%s", err.msg);
        free(bytes);
    }
    ck_assert_msg(gguf_writer_finish(w, &err) == 0, "%s", err.msg);
    gguf_writer_free(w);
    return path;
}

/* Writes the model described by s to a temporary file; returns its path. */
static const char *write_model(const spec *s)
{
    if (s->mla_kv_lora)
        return write_mla_model(s);
    static char path[512];
    snprintf(path, sizeof path, "%s/test_forward_%d.gguf", test_tmpdir(), (int)getpid());
    gguf_writer *w = gguf_writer_new();
    ck_assert_ptr_nonnull(w);
    char key[96];
    const char *ka = s->kv_arch ? s->kv_arch : s->arch;
    gguf_writer_set_str(w, GGUF_KEY_ARCHITECTURE, s->arch);
    if (!s->no_ctx_key)
        set_u32(w, s, GGUF_KEY_CONTEXT_LENGTH, s->ctx);
    set_u32(w, s, GGUF_KEY_EMBEDDING_LENGTH, s->dim);
    set_u32(w, s, GGUF_KEY_BLOCK_COUNT, s->layers);
    set_u32(w, s, GGUF_KEY_FFN_LENGTH, s->ff);
    set_u32(w, s, GGUF_KEY_HEAD_COUNT, s->heads);
    set_u32(w, s, GGUF_KEY_HEAD_COUNT_KV, s->kv_heads);
    set_u32(w, s, GGUF_KEY_ROPE_DIM_COUNT, s->rot);
    if (s->head_dim) {
        set_u32(w, s, GGUF_KEY_KEY_LENGTH, s->head_dim);
        set_u32(w, s, GGUF_KEY_VALUE_LENGTH, s->head_dim);
    }
    snprintf(key, sizeof key, GGUF_KEY_RMS_EPS, ka);
    gguf_writer_set_f32(w, key, s->eps);
    snprintf(key, sizeof key, GGUF_KEY_ROPE_FREQ_BASE, ka);
    gguf_writer_set_f32(w, key, s->rope_base > 0 ? s->rope_base : 10000.0f);
    if (s->swa)
        set_u32(w, s, GGUF_KEY_SLIDING_WINDOW, s->swa);
    if (s->experts) {
        set_u32(w, s, GGUF_KEY_EXPERT_COUNT, s->experts);
        set_u32(w, s, GGUF_KEY_EXPERT_USED_COUNT, s->experts_used);
        set_u32(w, s, GGUF_KEY_EXPERT_FFN_LENGTH, s->ff_exp);
    }
    if (s->interval) {
        const int S = s->ssm_state;
        set_u32(w, s, GGUF_KEY_SSM_CONV_KERNEL, 4);
        set_u32(w, s, GGUF_KEY_SSM_STATE_SIZE, S);
        set_u32(w, s, GGUF_KEY_SSM_GROUP_COUNT, 2);
        set_u32(w, s, GGUF_KEY_SSM_TIME_STEP_RANK, 4);
        set_u32(w, s, GGUF_KEY_SSM_INNER_SIZE, s->ssm_inner ? s->ssm_inner : 4 * S);
        set_u32(w, s, GGUF_KEY_FULL_ATTN_INTERVAL, s->interval);
        int32_t sec[4] = { 2, 1, 1, 0 };
        if (s->sections3)
            sec[0] = sec[1] = sec[2] = 0, sec[3] = s->sections3;
        snprintf(key, sizeof key, GGUF_KEY_ROPE_DIM_SECTIONS, ka);
        gguf_writer_set_array(w, key, GGUF_VT_I32, sec, 4);
        if (s->experts)
            set_u32(w, s, GGUF_KEY_EXPERT_SHARED_FFN_LENGTH, s->ff);
    }
    if (s->rope_scaling) {
        snprintf(key, sizeof key, "%s.rope.scaling.type", ka);
        gguf_writer_set_str(w, key, s->rope_scaling);
        snprintf(key, sizeof key, "%s.rope.scaling.factor", ka);
        gguf_writer_set_f32(w, key, 4.0f);
    }
    write_vocab(w, s);

    const int d = s->dim, hd = s->head_dim ? s->head_dim : s->heads ? s->dim / s->heads : 1;
    const int kv = hd * s->kv_heads, qd = hd * s->heads;
    add(w, s, GGUF_T_TOKEN_EMBD, 0, s->wtype, d, s->vocab);
    if (s->rope_freqs)
        add(w, s, GGUF_T_ROPE_FREQS, 0, GGUF_DT_F32, s->rot / 2, 0);
    for (int l = 0; l < s->layers; l++) {
        add(w, s, GGUF_T_ATTN_NORM, l, GGUF_DT_F32, d, 0);
        const bool recurrent = s->interval && (l + 1) % s->interval != 0;
        if (s->interval) {
            const int S = s->ssm_state, C = 2 * 2 * S + 4 * S;
            if (recurrent) {
                add(w, s, GGUF_T_SSM_A, l, GGUF_DT_F32, 4, 0);
                add(w, s, GGUF_T_SSM_CONV1D, l, GGUF_DT_F32, 4, C);
                add(w, s, GGUF_T_SSM_DT_BIAS, l, GGUF_DT_F32, 4, 0);
                add(w, s, GGUF_T_SSM_ALPHA, l, s->wtype, d, 4);
                add(w, s, GGUF_T_SSM_BETA, l, s->wtype, d, 4);
                add(w, s, GGUF_T_ATTN_QKV, l, s->wtype, d, C);
                add(w, s, GGUF_T_ATTN_GATE, l, s->wtype, d, 4 * S);
                add(w, s, GGUF_T_SSM_NORM, l, GGUF_DT_F32, S, 0);
                add(w, s, GGUF_T_SSM_OUT, l, s->wtype, 4 * S, d);
            } else {
                add(w, s, GGUF_T_ATTN_Q, l, s->wtype, d, 2 * qd);
                add(w, s, GGUF_T_ATTN_K, l, s->wtype, d, kv);
                add(w, s, GGUF_T_ATTN_V, l, s->wtype, d, kv);
                add(w, s, GGUF_T_ATTN_Q_NORM, l, GGUF_DT_F32, hd, 0);
                add(w, s, GGUF_T_ATTN_K_NORM, l, GGUF_DT_F32, hd, 0);
                add(w, s, GGUF_T_ATTN_OUT, l, s->wtype, qd, d);
            }
            add(w, s, GGUF_T_ATTN_POST_NORM, l, GGUF_DT_F32, d, 0);
            if (s->blk_extra && l == 1)
                add(w, s, s->blk_extra, l, GGUF_DT_F32, 4, 0);
            if (s->experts) {
                const int ne = s->experts, fe = s->ff_exp;
                add(w, s, GGUF_T_FFN_GATE_INP, l, GGUF_DT_F32, d, ne);
                add3(w, s, GGUF_T_FFN_GATE_EXPS, l, s->wtype, d, fe, ne);
                add3(w, s, GGUF_T_FFN_UP_EXPS, l, s->wtype, d, fe, ne);
                add3(w, s, GGUF_T_FFN_DOWN_EXPS, l, s->wtype, fe, d, ne);
                add(w, s, GGUF_T_FFN_GATE_SHEXP, l, s->wtype, d, s->ff);
                add(w, s, GGUF_T_FFN_UP_SHEXP, l, s->wtype, d, s->ff);
                add(w, s, GGUF_T_FFN_DOWN_SHEXP, l, s->wtype, s->ff, d);
                add(w, s, GGUF_T_FFN_GATE_INP_SHEXP, l, GGUF_DT_F32, d, 1);
            } else {
                add(w, s, GGUF_T_FFN_GATE, l, s->wtype, d, s->ff);
                add(w, s, GGUF_T_FFN_UP, l, s->wtype, d, s->ff);
                add(w, s, GGUF_T_FFN_DOWN, l, s->wtype, s->ff, d);
            }
            continue;
        }
        if (s->fused) {
            add(w, s, GGUF_T_ATTN_QKV, l, s->wtype, d, qd + 2 * kv);
        } else {
            add(w, s, GGUF_T_ATTN_Q, l, s->wtype, d, qd);
            add(w, s, GGUF_T_ATTN_K, l, s->wtype, d, kv);
            add(w, s, GGUF_T_ATTN_V, l, s->wtype, d, kv);
        }
        if (s->bias || s->oss) {
            add(w, s, GGUF_T_ATTN_Q_BIAS, l, GGUF_DT_F32, qd, 0);
            add(w, s, GGUF_T_ATTN_K_BIAS, l, GGUF_DT_F32, kv, 0);
            add(w, s, GGUF_T_ATTN_V_BIAS, l, GGUF_DT_F32, kv, 0);
        }
        if (s->oss) {
            add(w, s, GGUF_T_ATTN_OUT_BIAS, l, GGUF_DT_F32, d, 0);
            add(w, s, GGUF_T_ATTN_SINKS, l, GGUF_DT_F32, s->heads, 0);
        }
        if (s->qk_norm) {
            add(w, s, GGUF_T_ATTN_Q_NORM, l, GGUF_DT_F32, hd, 0);
            add(w, s, GGUF_T_ATTN_K_NORM, l, GGUF_DT_F32, hd, 0);
        }
        add(w, s, GGUF_T_ATTN_OUT, l, s->wtype, qd, d);
        if (s->post_norms) {
            add(w, s, GGUF_T_ATTN_POST_NORM, l, GGUF_DT_F32, d, 0);
            add(w, s, GGUF_T_FFN_POST_NORM, l, GGUF_DT_F32, d, 0);
        }
        add(w, s, s->oss ? GGUF_T_ATTN_POST_NORM : GGUF_T_FFN_NORM, l, GGUF_DT_F32, d, 0);
        if (s->experts) {
            const int ne = s->experts, fe = s->ff_exp;
            add(w, s, GGUF_T_FFN_GATE_INP, l, GGUF_DT_F32, d, ne);
            add3(w, s, GGUF_T_FFN_GATE_EXPS, l, s->wtype, d, fe, ne);
            add3(w, s, GGUF_T_FFN_UP_EXPS, l, s->wtype, d, fe, ne);
            add3(w, s, GGUF_T_FFN_DOWN_EXPS, l, s->wtype, fe, d, ne);
            if (s->oss) {
                add(w, s, GGUF_T_FFN_GATE_INP_BIAS, l, GGUF_DT_F32, ne, 0);
                add(w, s, GGUF_T_FFN_GATE_EXPS_BIAS, l, GGUF_DT_F32, fe, ne);
                add(w, s, GGUF_T_FFN_UP_EXPS_BIAS, l, GGUF_DT_F32, fe, ne);
                add(w, s, GGUF_T_FFN_DOWN_EXPS_BIAS, l, GGUF_DT_F32, d, ne);
            }
            continue;
        }
        if (s->fused) {
            add(w, s, GGUF_T_FFN_UP, l, s->wtype, d, 2 * s->ff);
        } else {
            add(w, s, GGUF_T_FFN_GATE, l, s->wtype, d, s->ff);
            add(w, s, GGUF_T_FFN_UP, l, s->wtype, d, s->ff);
        }
        add(w, s, GGUF_T_FFN_DOWN, l, s->wtype, s->ff, d);
    }
    add(w, s, GGUF_T_OUTPUT_NORM, 0, GGUF_DT_F32, d, 0);
    if (!s->tied)
        add(w, s, GGUF_T_OUTPUT, 0, s->wtype, d, s->vocab);
    if (s->extra)
        add(w, s, s->extra, 0, GGUF_DT_F32, s->rot / 2, 0);
    return write_tensors(w, s, path);
}

/* DeepSeek-V3 in small: dim 32, 2 heads, a KV latent of 16 (a key row
 * of 16 + rope 8 cached), q/k heads of nope 8 + rope 8, values of 8; q
 * through a latent of 12 (mla_q_lora 0: attn_q); block 0 dense (ff 64),
 * block 1 sigmoid-routed: 4 experts of 16 in 2 groups (1 kept), 2 used,
 * normalised, times 2.5, one shared expert; YaRN (factor 4, log
 * multiplier 0.1 × 1) with rope_scaling "yarn". */
static spec mla_spec(void)
{
    spec s = base_spec();
    s.arch = "deepseek2";
    s.heads = 2;
    s.kv_heads = 1;
    s.rot = 8;
    s.mla_kv_lora = 16;
    s.mla_q_lora = 12;
    s.mla_nope = 8;
    s.mla_v = 8;
    s.dense_lead = 1;
    s.experts = 4;
    s.experts_used = 2;
    s.ff_exp = 16;
    s.groups = 2;
    s.group_used = 1;
    s.eps = 1e-6f;
    return s;
}

static const char *write_mla_model(const spec *s)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/test_forward_%d.gguf", test_tmpdir(), (int)getpid());
    gguf_writer *w = gguf_writer_new();
    ck_assert_ptr_nonnull(w);
    char key[96];
    const int d = s->dim, H = s->heads, kl = s->mla_kv_lora, rot = s->rot, nope = s->mla_nope,
              vh = s->mla_v, ql = s->mla_q_lora, ne = s->experts, fe = s->ff_exp;
    gguf_writer_set_str(w, GGUF_KEY_ARCHITECTURE, s->arch);
    set_u32(w, s, GGUF_KEY_CONTEXT_LENGTH, s->ctx);
    set_u32(w, s, GGUF_KEY_EMBEDDING_LENGTH, d);
    set_u32(w, s, GGUF_KEY_BLOCK_COUNT, s->layers);
    set_u32(w, s, GGUF_KEY_FFN_LENGTH, s->ff);
    set_u32(w, s, GGUF_KEY_HEAD_COUNT, H);
    set_u32(w, s, GGUF_KEY_HEAD_COUNT_KV, 1);
    snprintf(key, sizeof key, GGUF_KEY_RMS_EPS, s->arch);
    gguf_writer_set_f32(w, key, s->eps);
    snprintf(key, sizeof key, GGUF_KEY_ROPE_FREQ_BASE, s->arch);
    gguf_writer_set_f32(w, key, 10000.0f);
    set_u32(w, s, GGUF_KEY_EXPERT_COUNT, ne);
    set_u32(w, s, GGUF_KEY_EXPERT_USED_COUNT, s->experts_used);
    set_u32(w, s, GGUF_KEY_EXPERT_GROUP_COUNT, s->groups);
    set_u32(w, s, GGUF_KEY_EXPERT_GROUP_USED_COUNT, s->group_used);
    set_u32(w, s, GGUF_KEY_EXPERT_GATING_FUNC, 2);
    set_u32(w, s, GGUF_KEY_LEADING_DENSE_BLOCK_COUNT, s->dense_lead);
    set_u32(w, s, GGUF_KEY_Q_LORA_RANK, ql);
    set_u32(w, s, GGUF_KEY_KV_LORA_RANK, kl);
    set_u32(w, s, GGUF_KEY_KEY_LENGTH, kl + rot);
    set_u32(w, s, GGUF_KEY_VALUE_LENGTH, kl);
    set_u32(w, s, GGUF_KEY_KEY_LENGTH_MLA, nope + rot);
    set_u32(w, s, GGUF_KEY_VALUE_LENGTH_MLA, vh);
    set_u32(w, s, GGUF_KEY_EXPERT_FFN_LENGTH, fe);
    set_u32(w, s, GGUF_KEY_EXPERT_SHARED_COUNT, 1);
    snprintf(key, sizeof key, GGUF_KEY_EXPERT_WEIGHTS_SCALE, s->arch);
    gguf_writer_set_f32(w, key, 2.5f);
    snprintf(key, sizeof key, GGUF_KEY_EXPERT_WEIGHTS_NORM, s->arch);
    gguf_writer_set_bool(w, key, true);
    set_u32(w, s, GGUF_KEY_ROPE_DIM_COUNT, rot);
    if (s->rope_scaling) {
        snprintf(key, sizeof key, "%s.rope.scaling.type", s->arch);
        gguf_writer_set_str(w, key, s->rope_scaling);
        snprintf(key, sizeof key, "%s.rope.scaling.factor", s->arch);
        gguf_writer_set_f32(w, key, 4.0f);
        set_u32(w, s, GGUF_KEY_ROPE_ORIG_CTX, 16);
        snprintf(key, sizeof key, GGUF_KEY_ROPE_YARN_LOG_MUL, s->arch);
        gguf_writer_set_f32(w, key, 0.1f);
    }
    if (s->mla_key)
        set_u32(w, s, s->mla_key, s->mla_key_val);
    write_vocab(w, s);
    add(w, s, GGUF_T_TOKEN_EMBD, 0, s->wtype, d, s->vocab);
    for (int l = 0; l < s->layers; l++) {
        add(w, s, GGUF_T_ATTN_NORM, l, GGUF_DT_F32, d, 0);
        if (ql) {
            add(w, s, GGUF_T_ATTN_Q_A, l, s->wtype, d, ql);
            add(w, s, GGUF_T_ATTN_Q_A_NORM, l, GGUF_DT_F32, ql, 0);
            add(w, s, GGUF_T_ATTN_Q_B, l, s->wtype, ql, H * (nope + rot));
        } else {
            add(w, s, GGUF_T_ATTN_Q, l, s->wtype, d, H * (nope + rot));
        }
        if (s->blk_extra)
            add(w, s, s->blk_extra, l, s->wtype, d, H * (nope + rot));
        add(w, s, GGUF_T_ATTN_KV_A_MQA, l, s->wtype, d, kl + rot);
        add(w, s, GGUF_T_ATTN_KV_A_NORM, l, GGUF_DT_F32, kl, 0);
        add3(w, s, GGUF_T_ATTN_K_B, l, s->wtype, nope, kl, H);
        add3(w, s, GGUF_T_ATTN_V_B, l, s->wtype, kl, vh, H);
        add(w, s, GGUF_T_ATTN_OUT, l, s->wtype, H * vh, d);
        add(w, s, GGUF_T_FFN_NORM, l, GGUF_DT_F32, d, 0);
        if (l < s->dense_lead) {
            add(w, s, GGUF_T_FFN_GATE, l, s->wtype, d, s->ff);
            add(w, s, GGUF_T_FFN_UP, l, s->wtype, d, s->ff);
            add(w, s, GGUF_T_FFN_DOWN, l, s->wtype, s->ff, d);
            continue;
        }
        add(w, s, GGUF_T_FFN_GATE_INP, l, GGUF_DT_F32, d, ne);
        add(w, s, GGUF_T_EXP_PROBS_B, l, GGUF_DT_F32, ne, 0);
        add3(w, s, GGUF_T_FFN_GATE_EXPS, l, s->wtype, d, fe, ne);
        add3(w, s, GGUF_T_FFN_UP_EXPS, l, s->wtype, d, fe, ne);
        add3(w, s, GGUF_T_FFN_DOWN_EXPS, l, s->wtype, fe, d, ne);
        add(w, s, GGUF_T_FFN_GATE_SHEXP, l, s->wtype, d, fe);
        add(w, s, GGUF_T_FFN_UP_SHEXP, l, s->wtype, d, fe);
        add(w, s, GGUF_T_FFN_DOWN_SHEXP, l, s->wtype, fe, d);
    }
    add(w, s, GGUF_T_OUTPUT_NORM, 0, GGUF_DT_F32, d, 0);
    add(w, s, GGUF_T_OUTPUT, 0, s->wtype, d, s->vocab);
    return write_tensors(w, s, path);
}

/* Loads s; returns 0 or -1 with the message in err. */
static int load(const spec *s, run_model *m, gguf_file **f, gguf_error *err)
{
    *f = gguf_open(write_model(s), 0, err);
    ck_assert_msg(*f != NULL, "%s", err->msg);
    int rc = run_model_load(m, *f, err);
    if (rc) {
        gguf_close(*f);
        *f = NULL;
    }
    return rc;
}

/* ---------------------------------------------------------------------------
 * Blocks
 */

START_TEST(test_rmsnorm)
{
    float x[37], w[37], y[37];
    for (int i = 0; i < 37; i++) {
        x[i] = rnd() * 10;
        w[i] = 1 + rnd();
    }
    run_rmsnorm(y, x, w, 37, 1e-5f);
    double ss = 0;
    for (int i = 0; i < 37; i++)
        ss += (double)x[i] * x[i];
    double scale = 1 / sqrt(ss / 37 + 1e-5);
    for (int i = 0; i < 37; i++)
        ck_assert_double_eq_tol(y[i], x[i] * scale * w[i], 1e-5 * fabs(x[i] * scale * w[i]) + 1e-7);
}
END_TEST

/* The rotation of one head, computed directly. */
static void rope_direct(double *y, const float *x, int hd, int n_rot, int pos, double base,
                        double scale, const float *ff, double mscale, bool neox)
{
    for (int i = 0; i < hd; i++)
        y[i] = x[i];
    for (int i = 0; i < n_rot / 2; i++) {
        double t = scale * pos * pow(base, -2.0 * i / n_rot) / (ff ? ff[i] : 1.0);
        int a = neox ? i : 2 * i, b = neox ? i + n_rot / 2 : 2 * i + 1;
        y[a] = mscale * (x[a] * cos(t) - x[b] * sin(t));
        y[b] = mscale * (x[a] * sin(t) + x[b] * cos(t));
    }
}

static void check_rope_m(enum run_rope_layout layout, int n_rot, const float *ff, float scale,
                         float mscale)
{
    enum { HEADS = 3, HD = 16 };
    for (int pos = 0; pos < 40; pos += 13) {
        float x[HEADS * HD], x0[HEADS * HD];
        for (int i = 0; i < HEADS * HD; i++)
            x0[i] = x[i] = rnd();
        run_rope(x, HEADS, HD, n_rot, pos, 10000.0f, scale, ff, mscale, layout);
        for (int h = 0; h < HEADS; h++) {
            double y[HD];
            rope_direct(y, x0 + h * HD, HD, n_rot, pos, 10000.0, scale, ff, mscale,
                        layout == RUN_ROPE_NEOX);
            for (int i = 0; i < HD; i++)
                ck_assert_msg(fabs(x[h * HD + i] - y[i]) < 2e-5, "pos %d head %d dim %d: %g vs %g",
                              pos, h, i, x[h * HD + i], y[i]);
        }
    }
}

static void check_rope(enum run_rope_layout layout, int n_rot, const float *ff, float scale)
{
    check_rope_m(layout, n_rot, ff, scale, 1.0f);
}

START_TEST(test_rope_norm)
{
    check_rope(RUN_ROPE_NORM, 16, NULL, 1);
    check_rope(RUN_ROPE_NORM, 8, NULL, 1); /* partial: dims 8..15 pass through */
    check_rope(RUN_ROPE_NORM, 16, NULL, 0.25f); /* linear scaling, factor 4 */
}
END_TEST

START_TEST(test_rope_neox)
{
    check_rope(RUN_ROPE_NEOX, 16, NULL, 1);
    check_rope(RUN_ROPE_NEOX, 6, NULL, 1);
}
END_TEST

START_TEST(test_rope_freq_factors)
{
    const float ff[8] = { 1, 1, 2, 4, 8, 8, 8, 8 };
    check_rope(RUN_ROPE_NORM, 16, ff, 1);
    check_rope(RUN_ROPE_NEOX, 16, ff, 1);
    /* Phi-3 LongRoPE: partial NEOX rotation by factors, cos and sin times
     * the attention factor sqrt(13/11) */
    check_rope_m(RUN_ROPE_NEOX, 12, ff, 1, 1.0871146f);
}
END_TEST

/* llama.cpp's get_rope_factors: rope_freqs first; else the long factors
 * once the context, padded to 256 as llama.cpp pads it, passes the
 * original one. */
START_TEST(test_rope_factors_by_context)
{
    float freqs[1], lng[1], shrt[1];
    run_model m = { 0 };
    m.hp.n_ctx_orig = 2048;
    ck_assert_ptr_null(run_rope_factors(&m, 4096));
    m.rope_long = lng;
    m.rope_short = shrt;
    ck_assert_ptr_eq(run_rope_factors(&m, 1), shrt);
    ck_assert_ptr_eq(run_rope_factors(&m, 2048), shrt);
    ck_assert_ptr_eq(run_rope_factors(&m, 2049), lng);
    ck_assert_ptr_eq(run_rope_factors(&m, 2304), lng);
    m.hp.n_ctx_orig = 2100; /* 2049 pads to 2304 */
    ck_assert_ptr_eq(run_rope_factors(&m, 2049), lng);
    ck_assert_ptr_eq(run_rope_factors(&m, 2048), shrt);
    m.rope_freqs = freqs;
    ck_assert_ptr_eq(run_rope_factors(&m, 2049), freqs);
    ck_assert_ptr_eq(run_rope_factors(&m, 1), freqs);
}
END_TEST

START_TEST(test_softmax)
{
    float x[50];
    double e[50], sum = 0;
    for (int i = 0; i < 50; i++) {
        x[i] = rnd() * 100 + 1000; /* large: must not overflow */
        e[i] = x[i] * 0.125;
    }
    double mx = e[0];
    for (int i = 1; i < 50; i++)
        mx = e[i] > mx ? e[i] : mx;
    for (int i = 0; i < 50; i++)
        sum += e[i] = exp(e[i] - mx);
    run_softmax(x, 50, 0.125f);
    double total = 0;
    for (int i = 0; i < 50; i++) {
        ck_assert_double_eq_tol(x[i], e[i] / sum, 1e-6);
        total += x[i];
    }
    ck_assert_double_eq_tol(total, 1.0, 1e-6);
}
END_TEST

START_TEST(test_swiglu)
{
    float g[5] = { -3, -0.5f, 0, 0.5f, 3 }, u[5] = { 1, 2, 3, -1, 0.5f };
    float g0[5];
    memcpy(g0, g, sizeof g);
    run_swiglu(g, u, 5);
    for (int i = 0; i < 5; i++)
        ck_assert_double_eq_tol(g[i], g0[i] / (1 + exp(-g0[i])) * u[i], 1e-6);
}
END_TEST

/* GeGLU: gelu of g rounded to f16, from the table, times u; exactly 0
 * from -10 down and g · u from 10 up. Soft-capping: c·tanh(x/c). */
START_TEST(test_geglu_softcap)
{
    static gguf_half tab[65536];
    run_gelu_table(tab);
    const float g0[8] = { -12, -10, -3, -0.5f, 0, 0.7f, 9.99f, 10 };
    float g[8], u[8];
    for (int i = 0; i < 8; i++) {
        g[i] = g0[i];
        u[i] = 1.5f + (float)i;
    }
    run_geglu(g, u, 8, tab);
    for (int i = 0; i < 8; i++) {
        const double x = gguf_f16_to_f32(gguf_f32_to_f16(g0[i]));
        const double gelu = 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
        const double want = g0[i] <= -10 ? 0 : g0[i] >= 10 ? (double)g0[i] * u[i] : gelu * u[i];
        ck_assert_msg(fabs(g[i] - want) <= 1e-3 * fabs(want) + 1e-6, "gelu(%g): %g, want %g", g0[i],
                      g[i], want);
    }
    ck_assert(g[0] == 0.0f && g[1] == 0.0f && g[7] == 10.0f * u[7]);
    float x[5] = { -1000, -30, 0, 12, 1e6f };
    run_softcap(x, 5, 30.0f);
    const float x0[5] = { -1000, -30, 0, 12, 1e6f };
    for (int i = 0; i < 5; i++)
        ck_assert_double_eq_tol(x[i], 30 * tanh(x0[i] / 30.0), 1e-5);
}
END_TEST

/* ---------------------------------------------------------------------------
 * Gated DeltaNet operations (recurrent.h)
 */

/* A deterministic value in [-1, 1). */
static float rec_rnd(uint32_t *st)
{
    *st = *st * 1664525u + 1013904223u;
    return (float)(*st >> 8) / (float)(1u << 23) - 1.0f;
}

/* The dot product held to the sum in double for every length that takes a
 * different path (fused tail only, 8- and 16-blocks, the 64-wide vector
 * part); below 8 it is a chain of fused multiply-adds exactly. */
START_TEST(test_rec_dot)
{
    uint32_t st = 7;
    float x[200], y[200];
    for (int i = 0; i < 200; i++) {
        x[i] = rec_rnd(&st);
        y[i] = rec_rnd(&st);
    }
    const int ns[] = { 1, 5, 7, 8, 15, 16, 31, 32, 63, 64, 65, 128, 150, 200 };
    for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
        double want = 0, mag = 0;
        for (int i = 0; i < ns[t]; i++) {
            want += (double)x[i] * y[i];
            mag += fabs((double)x[i] * y[i]);
        }
        ck_assert_double_eq_tol(rec_dot(x, y, ns[t]), want, 1e-6 * mag + 1e-30);
    }
    float chain = 0;
    for (int i = 0; i < 7; i++)
        chain = fmaf(x[i], y[i], chain);
    ck_assert(rec_dot(x, y, 7) == chain);
}
END_TEST

/* The causal convolution: each output is Σ_k w[c][k] · in[t - (K-1) + k]
 * with the inputs before the sequence 0; one batch, token by token or in
 * pieces gives the same bits and the same final window (the last K-1
 * inputs of each channel). */
START_TEST(test_rec_conv)
{
    enum { C = 5, K = 4, T = 9 };
    uint32_t st = 11;
    float x[T * C], w[C * K], y1[T * C], y2[T * C];
    for (int i = 0; i < T * C; i++)
        x[i] = rec_rnd(&st);
    for (int i = 0; i < C * K; i++)
        w[i] = rec_rnd(&st);
    float s1[C * (K - 1)] = { 0 }, s2[C * (K - 1)] = { 0 }, win[K];
    rec_conv(y1, x, s1, w, C, K, T, win);
    rec_conv(y2, x, s2, w, C, K, 2, win);
    for (int t = 2; t < T; t++)
        rec_conv(y2 + t * C, x + t * C, s2, w, C, K, 1, win);
    ck_assert_mem_eq(y1, y2, sizeof y1);
    ck_assert_mem_eq(s1, s2, sizeof s1);
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++) {
            double want = 0;
            for (int k = 0; k < K; k++) {
                const int at = t - (K - 1) + k;
                want += at < 0 ? 0 : (double)w[c * K + k] * x[at * C + c];
            }
            ck_assert_double_eq_tol(y1[t * C + c], want, 1e-6);
        }
    for (int c = 0; c < C; c++)
        for (int k = 0; k < K - 1; k++)
            ck_assert(s1[c * (K - 1) + k] == x[(T - (K - 1) + k) * C + c]);
}
END_TEST

/* The vector convolution (forward_simd.c) gives rec_conv's bits and state:
 * kernels of 1 to 7 taps, channels in whole eights and a rest, in one block
 * of the vector path and in three, batches of
 * 1, 5 and 3 tokens one after another; a kernel of 8 is left to rec_conv. */
START_TEST(test_rec_conv_vector)
{
    const fwd_simd_ops *vec = fwd_simd_select(false);
    if (!vec->conv)
        return;
    enum { T = 9, MAX_C = 531 };
    static const int widths[] = { 19, MAX_C }; /* one block of channels; three, the last part */
    static float x[T * MAX_C], w[MAX_C * 8], y1[T * MAX_C], y2[T * MAX_C], s1[MAX_C * 7],
        s2[MAX_C * 7];
    float win[8];
    for (size_t cw = 0; cw < sizeof widths / sizeof *widths; cw++) {
        const int C = widths[cw];
        uint32_t st = 5;
        for (int i = 0; i < T * C; i++)
            x[i] = rec_rnd(&st);
        for (int i = 0; i < C * 8; i++)
            w[i] = rec_rnd(&st);
        for (int K = 1; K < 8; K++) {
            memset(s1, 0, sizeof s1);
            memset(s2, 0, sizeof s2);
            static const int parts[] = { 1, 5, 3 };
            int t = 0;
            for (int p = 0; p < 3; p++) {
                rec_conv(y1 + t * C, x + t * C, s1, w, C, K, parts[p], win);
                ck_assert_int_eq(vec->conv(y2 + t * C, x + t * C, s2, w, C, K, parts[p]), 0);
                t += parts[p];
            }
            ck_assert_msg(!memcmp(y1, y2, (size_t)(T * C) * sizeof(float)), "C %d K %d: outputs differ", C, K);
            ck_assert_msg(!memcmp(s1, s2, (size_t)(C * 7) * sizeof(float)), "C %d K %d: states differ", C, K);
        }
        ck_assert_int_eq(vec->conv(y2, x, s2, w, C, 8, 2), -1);
    }
}
END_TEST

/* The element-wise functions: SiLU (both exponentials), sigmoid,
 * softplus (the identity above 20), the l2 norm (unit length; eps keeps a
 * zero row finite). */
START_TEST(test_rec_elementwise)
{
    float x[20], x0[20];
    for (int i = 0; i < 20; i++)
        x[i] = x0[i] = -5.0f + 0.5f * (float)i;
    rec_silu_row(x, 20); /* 16 by the vector exponential, 4 by expf */
    for (int i = 0; i < 20; i++)
        ck_assert_double_eq_tol(x[i], x0[i] / (1 + exp(-x0[i])), 1e-6);
    memcpy(x, x0, sizeof x);
    rec_sigmoid(x, 20);
    for (int i = 0; i < 20; i++)
        ck_assert_double_eq_tol(x[i], 1 / (1 + exp(-x0[i])), 1e-7);
    ck_assert(rec_softplus(25.0f) == 25.0f);
    ck_assert_double_eq_tol(rec_softplus(0.3f), log1p(exp(0.3)), 1e-6);
    ck_assert_double_eq_tol(rec_softplus(-30.0f), 0, 1e-12);
    memcpy(x, x0, sizeof x);
    rec_l2_norm(x, 20, 1e-6f);
    double n2 = 0;
    for (int i = 0; i < 20; i++)
        n2 += (double)x[i] * x[i];
    ck_assert_double_eq_tol(n2, 1, 1e-6);
    float z[4] = { 0 };
    rec_l2_norm(z, 4, 1e-6f);
    ck_assert(z[0] == 0 && z[3] == 0);
}
END_TEST

/* The gated delta rule over several tokens against the recurrence in
 * double: S ← e^g S; S ← S + k (β (v − Sᵀk))ᵀ; o = Sᵀq / √d. */
START_TEST(test_rec_delta_rule)
{
    enum { S = 8, T = 6 };
    uint32_t st = 3;
    float M[S * S] = { 0 }, out[S], d[S];
    double R[S][S] = { { 0 } }; /* R[i][j] = S[i][j] */
    for (int t = 0; t < T; t++) {
        float q[S], k[S], v[S];
        for (int i = 0; i < S; i++) {
            q[i] = rec_rnd(&st);
            k[i] = rec_rnd(&st);
            v[i] = rec_rnd(&st);
        }
        rec_l2_norm(q, S, 1e-6f);
        rec_l2_norm(k, S, 1e-6f);
        const float g = -0.1f * (float)(t + 1), beta = 0.3f + 0.1f * (float)t;
        rec_delta_step(M, out, q, k, v, g, beta, S, d);
        double dd[S];
        for (int i = 0; i < S; i++)
            for (int j = 0; j < S; j++)
                R[i][j] *= exp((double)g);
        for (int j = 0; j < S; j++) {
            double sk = 0;
            for (int i = 0; i < S; i++)
                sk += R[i][j] * k[i];
            dd[j] = ((double)v[j] - sk) * beta;
        }
        for (int i = 0; i < S; i++)
            for (int j = 0; j < S; j++)
                R[i][j] += (double)k[i] * dd[j];
        for (int j = 0; j < S; j++) {
            double o = 0;
            for (int i = 0; i < S; i++)
                o += R[i][j] * q[i];
            ck_assert_double_eq_tol(out[j], o / sqrt((double)S), 1e-5);
        }
    }
    for (int i = 0; i < S; i++)
        for (int j = 0; j < S; j++)
            ck_assert_double_eq_tol(M[j * S + i], R[i][j], 1e-5);
}
END_TEST

/* The vector SiLU (its groups of 16, rec_silu_row the rest) against
 * rec_silu_row: the same bits over rows of 1 to 40 and 1003, values from
 * small to deep in the exponential's fallback lanes, signed zeros. */
START_TEST(test_rec_silu_vector)
{
    const fwd_simd_ops *vec = fwd_simd_select(false);
    if (!vec->silu)
        return;
    enum { MAX_N = 1003 };
    const float scales[] = { 1, 20, 400, 1e6f };
    uint32_t st = 3;
    static float want[MAX_N], got[MAX_N];
    for (int n = 1; n <= MAX_N; n = n < 40 ? n + 1 : n + MAX_N - 40) {
        for (size_t k = 0; k < sizeof scales / sizeof *scales; k++) {
            for (int i = 0; i < n; i++)
                want[i] = got[i] = i % 13 == 4 ? (i % 2 ? -0.0f : 0.0f) : rec_rnd(&st) * scales[k];
            rec_silu_row(want, n);
            const int done = vec->silu(got, n);
            ck_assert_int_eq(done, n - n % 16);
            rec_silu_row(got + done, n - done);
            for (int i = 0; i < n; i++)
                ck_assert_msg(!memcmp(&want[i], &got[i], sizeof(float)),
                              "silu n %d scale %g [%d]: %a vs %a", n, (double)scales[k], i,
                              (double)want[i], (double)got[i]);
        }
    }
}
END_TEST

/* The vector delta rule (forward_simd.c) gives rec_delta_step's bits: head
 * sizes with and without whole 64s and 8s, over several tokens of one
 * state. A CPU without AVX2 has no vector path: nothing to compare. */
START_TEST(test_rec_delta_rule_vector)
{
    const fwd_simd_ops *vec = fwd_simd_select(false);
    if (!vec->delta_step)
        return;
    static const int sizes[] = { 8, 32, 48, 64, 100, 128, 200 };
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        const int S = sizes[z];
        uint32_t st = 11 + (uint32_t)S;
        float *M1 = calloc((size_t)S * S, sizeof(float)), *M2 = calloc((size_t)S * S, sizeof(float));
        float *q = malloc((size_t)S * sizeof(float)), *k = malloc((size_t)S * sizeof(float));
        float *v = malloc((size_t)S * sizeof(float)), *d = malloc((size_t)S * sizeof(float));
        float *o1 = malloc((size_t)S * sizeof(float)), *o2 = malloc((size_t)S * sizeof(float));
        ck_assert(M1 && M2 && q && k && v && d && o1 && o2);
        for (int t = 0; t < 5; t++) {
            for (int i = 0; i < S; i++) {
                q[i] = rec_rnd(&st);
                k[i] = rec_rnd(&st);
                v[i] = rec_rnd(&st);
            }
            rec_l2_norm(q, S, 1e-6f);
            rec_l2_norm(k, S, 1e-6f);
            const float g = -0.05f * (float)(t + 1), beta = 0.2f + 0.15f * (float)t;
            rec_delta_step(M1, o1, q, k, v, g, beta, S, d);
            vec->delta_step(M2, o2, q, k, v, g, beta, S, d);
            ck_assert_msg(!memcmp(o1, o2, (size_t)S * sizeof(float)), "S %d token %d: outputs differ", S, t);
            ck_assert_msg(!memcmp(M1, M2, (size_t)S * S * sizeof(float)), "S %d token %d: states differ", S, t);
        }
        free(M1), free(M2), free(q), free(k), free(v), free(d), free(o1), free(o2);
    }
}
END_TEST

START_TEST(test_sampler)
{
    const float l[6] = { 0.5f, 2, -1, 2, 1.5f, 0 };
    ck_assert_int_eq(run_argmax(l, 6), 1); /* the first of equal maxima */
    run_sampler s;
    ck_assert_int_eq(run_sampler_init(&s, 6, 0, 40, 1, 1), 0);
    ck_assert_int_eq(run_sample(&s, l), 1);
    run_sampler_free(&s);
    /* top-k 1 is greedy whatever the temperature */
    ck_assert_int_eq(run_sampler_init(&s, 6, 2.0f, 1, 1, 9), 0);
    for (int i = 0; i < 20; i++)
        ck_assert_int_eq(run_sample(&s, l), 1);
    run_sampler_free(&s);
    /* same seed, same draws; only tokens inside top-k 3 */
    int a[50], b[50];
    for (int round = 0; round < 2; round++) {
        ck_assert_int_eq(run_sampler_init(&s, 6, 1.0f, 3, 1, 42), 0);
        for (int i = 0; i < 50; i++) {
            (round ? b : a)[i] = run_sample(&s, l);
            ck_assert_msg((round ? b : a)[i] == 1 || (round ? b : a)[i] == 3 ||
                          (round ? b : a)[i] == 4, "sampled %d outside the top 3", a[i]);
        }
        run_sampler_free(&s);
    }
    ck_assert_mem_eq(a, b, sizeof a);
}
END_TEST

/* ---------------------------------------------------------------------------
 * Model checks
 */

START_TEST(test_model_loads)
{
    spec s = base_spec();
    run_model m;
    gguf_file *f;
    gguf_error err;
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.hp.head_dim, 8);
    ck_assert_int_eq(m.hp.n_vocab, 40);
    ck_assert_int_eq(m.hp.n_rot, 8);
    ck_assert_int_eq(m.hp.rope_layout, RUN_ROPE_NORM);
    ck_assert(!m.tied);
    ck_assert(m.hp.rope_scale == 1.0f);
    run_model_free(&m);
    gguf_close(f);

    s.rope_scaling = "linear";
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    ck_assert(m.hp.rope_scale == 0.25f);
    run_model_free(&m);
    gguf_close(f);
    s.rope_scaling = NULL;

    s.tied = true;
    s.arch = "qwen2";
    s.bias = true;
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    ck_assert(m.tied);
    ck_assert_int_eq(m.hp.rope_layout, RUN_ROPE_NEOX);
    ck_assert_ptr_nonnull(m.layers[1].bv);
    run_model_free(&m);
    gguf_close(f);

    /* qwen3: heads of key_length 16 (4 × 16 = 64 ≠ dim 32), q/k norms */
    s = base_spec();
    s.arch = "qwen3";
    s.tied = true;
    s.head_dim = 16;
    s.rot = 16;
    s.qk_norm = true;
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.hp.head_dim, 16);
    ck_assert_int_eq(m.hp.q_dim, 64);
    ck_assert_int_eq(m.hp.rope_layout, RUN_ROPE_NEOX);
    ck_assert_ptr_nonnull(m.layers[1].q_norm);
    ck_assert_ptr_nonnull(m.layers[1].k_norm);
    ck_assert_ptr_null(m.layers[1].bq);
    run_model_free(&m);
    gguf_close(f);

    /* phi3: fused q/k/v (32 + 2 × 16 rows) and gate/up (2 × 64), NEOX, q
     * scaled before the scores */
    s = phi3_spec();
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.hp.rope_layout, RUN_ROPE_NEOX);
    ck_assert(m.hp.q_scale == 1.0f / sqrtf(8.0f));
    ck_assert_int_eq(m.layers[1].wqkv.rows, 64);
    ck_assert_int_eq(m.layers[1].w_gate_up.rows, 128);
    ck_assert_ptr_null(m.layers[1].wq.data);
    ck_assert_ptr_null(m.layers[1].w_gate.data);
    ck_assert(!m.tied);
    run_model_free(&m);
    gguf_close(f);

    /* gemma2: embeddings times sqrt(32), both soft-caps by default, every
     * other layer local with the global base, q scaled by 1/sqrt(16) */
    s = gemma_spec("gemma2");
    s.rope_base = 1e6f;
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    ck_assert(m.tied);
    ck_assert(m.hp.embd_scale == sqrtf(32.0f));
    ck_assert(m.hp.attn_softcap == 50.0f && m.hp.final_softcap == 30.0f);
    ck_assert(m.hp.q_scale == 0.25f);
    ck_assert_int_eq(m.hp.n_swa, 3);
    ck_assert_int_eq(m.hp.swa_period, 2);
    ck_assert(run_layer_is_swa(&m, 0) && !run_layer_is_swa(&m, 1));
    ck_assert(m.hp.rope_base_swa == 1e6f);
    ck_assert_ptr_nonnull(m.layers[1].attn_post_norm);
    ck_assert_ptr_nonnull(m.layers[1].ffn_post_norm);
    run_model_free(&m);
    gguf_close(f);

    /* gemma3: five local layers of six, their rope unscaled at base 10000
     * when the file gives none (llama.cpp's default; the global base is
     * 1e6 here), the global one scaled by 1/4, no soft-caps */
    s = gemma_spec("gemma3");
    s.rope_base = 1e6f;
    s.layers = 7;
    s.rope_scaling = "linear";
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    ck_assert(m.hp.attn_softcap == 0.0f && m.hp.final_softcap == 0.0f);
    ck_assert_int_eq(m.hp.swa_period, 6);
    for (int il = 0; il < 7; il++)
        ck_assert_int_eq(run_layer_is_swa(&m, il), il != 5);
    ck_assert(m.hp.rope_scale == 0.25f && m.hp.rope_scale_swa == 1.0f);
    ck_assert(m.hp.rope_base_swa == 10000.0f);
    ck_assert_ptr_nonnull(m.layers[6].q_norm);
    run_model_free(&m);
    gguf_close(f);

    /* gemma3 without a sliding window: every layer global */
    s.swa = 0;
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    for (int il = 0; il < 7; il++)
        ck_assert(!run_layer_is_swa(&m, il));
    run_model_free(&m);
    gguf_close(f);
}
END_TEST

/* One malformed model per row: what to change, and the message expected
 * (the hyper-parameters' are the registry's rules, gguf_hparams_read). */
typedef struct bad_case {
    const char *what;
    void (*apply)(spec *s);
    const char *msg;
} bad_case;

static void heads0(spec *s) { s->heads = 0; }
static void heads3(spec *s) { s->heads = 3; }
static void kv3(spec *s) { s->kv_heads = 3; }
static void rot_odd(spec *s) { s->rot = 7; }
static void rot_big(spec *s) { s->rot = 16; }
static void drop_v(spec *s) { s->drop = "blk.1.attn_v.weight"; }
static void qwen_nobias(spec *s) { s->arch = "qwen2"; }
static void unknown_arch(spec *s) { s->arch = "gpt2"; }
static void no_ctx(spec *s) { s->no_ctx_key = true; }
static void tokens_short(spec *s) { s->n_tokens = 39; }
static void i32_weights(spec *s) { s->wtype = GGUF_DT_I32; }
static void nan_eps(spec *s) { s->eps = NAN; }
static void bad_freqs(spec *s) { s->rope_freqs = true; s->rope_freq0 = -1; }
static void ff_mismatch(spec *s) { s->drop = "blk.0.ffn_gate.weight"; }
static void mistral_keys_llama(spec *s) { s->arch = "mistral"; s->kv_arch = "llama"; }
static void longrope(spec *s) { s->rope_scaling = "longrope"; }
static void qwen3_nonorm(spec *s) { s->arch = "qwen3"; s->head_dim = 16; s->rot = 16; }
static void qwen3_vlen(spec *s)
{
    qwen3_nonorm(s);
    s->qk_norm = true;
    s->drop = "blk.0.attn_k_norm.weight";
}
static void phi3_unfused(spec *s) { s->arch = "phi3"; }
static void phi3_wide_heads(spec *s) { *s = phi3_spec(); s->head_dim = 16; s->rot = 16; }
static void phi3_longrope(spec *s) { *s = phi3_spec(); s->extra = GGUF_T_ROPE_FACTORS_LONG; }
static void gemma2_no_post(spec *s) { *s = gemma_spec("gemma2"); s->drop = "blk.1.post_ffw_norm.weight"; }
static void gemma2_output(spec *s) { *s = gemma_spec("gemma2"); s->tied = false; }
static void q35_no_ssm_out(spec *s) { *s = hybrid_spec("qwen35"); s->drop = "blk.2.ssm_out.weight"; }
static void q35_inner(spec *s) { *s = hybrid_spec("qwen35"); s->ssm_inner = 48; }
static void q35_kind(spec *s) { *s = hybrid_spec("qwen35"); s->blk_extra = GGUF_T_SSM_A; }
static void q35_sections(spec *s) { *s = hybrid_spec("qwen35"); s->sections3 = 4; }

static const bad_case BAD[] = {
    { "head count 0", heads0, "llama.attention.head_count = 0, expected 1..16777216" },
    { "heads not dividing", heads3,
      "llama.attention.head_count_kv = 2 does not divide llama.attention.head_count = 3" },
    { "kv heads not dividing", kv3,
      "llama.attention.head_count_kv = 3 does not divide llama.attention.head_count = 4" },
    { "odd rope", rot_odd, "llama.rope.dimension_count = 7, expected 8 (the head size" },
    { "rope > head", rot_big, "llama.rope.dimension_count = 16, expected 8 (the head size" },
    { "missing tensor", drop_v, "missing tensor blk.1.attn_v.weight" },
    { "qwen2 without biases", qwen_nobias, "missing tensor blk.0.attn_q.bias" },
    { "unknown arch", unknown_arch, "unsupported architecture \"gpt2\"" },
    { "missing key", no_ctx, "missing key llama.context_length" },
    { "tokens vs rows", tokens_short, "tokenizer.ggml.tokens has 39 tokens but token_embd.weight has 40 rows" },
    { "integer weights", i32_weights, "has type i32" },
    { "NaN epsilon", nan_eps, "layer_norm_rms_epsilon = nan, expected a finite number > 0" },
    { "negative rope factor", bad_freqs, "rope_freqs.weight: factor 0 is -1" },
    { "missing gate", ff_mismatch, "missing tensor blk.0.ffn_gate.weight" },
    { "mistral with llama keys", mistral_keys_llama, "missing key mistral.context_length" },
    { "longrope rope scaling", longrope, "rope scaling \"longrope\" is not supported" },
    { "qwen3 without q/k norms", qwen3_nonorm, "missing tensor blk.0.attn_q_norm.weight" },
    { "qwen3 without one k norm", qwen3_vlen, "missing tensor blk.0.attn_k_norm.weight" },
    { "phi3 with separate q, k, v", phi3_unfused, "missing tensor blk.0.attn_qkv.weight" },
    { "phi3 with q wider than the model", phi3_wide_heads,
      "head count 4 times key length 16 is not the embedding length 32" },
    /* the random vector has negative entries: not frequency divisors */
    { "phi3 LongRoPE factors not all positive", phi3_longrope,
      "tensor rope_factors_long.weight: factor " },
    { "gemma2 without a post-norm", gemma2_no_post, "missing tensor blk.1.post_ffw_norm.weight" },
    { "gemma2 with an output matrix", gemma2_output,
      "tensor output.weight: gemma2 models take their output from token_embd.weight" },
    { "qwen35 recurrent block without ssm_out", q35_no_ssm_out, "missing tensor blk.2.ssm_out.weight" },
    { "qwen35 inner size not state × heads", q35_inner,
      "qwen35.ssm.inner_size = 48, expected qwen35.ssm.state_size × "
      "qwen35.ssm.time_step_rank = 64" },
    { "qwen35 attention block with ssm_a", q35_kind,
      "tensor blk.1.ssm_a: block 1 is not a recurrent block" },
    { "qwen35 M-RoPE sections on the fourth axis only", q35_sections,
      "rope.dimension_sections 0, 0, 0, 4: M-RoPE needs one of the first three" },
};

START_TEST(test_model_rejects)
{
    const bad_case *c = &BAD[_i];
    spec s = base_spec();
    c->apply(&s);
    run_model m;
    gguf_file *f;
    gguf_error err = { 0 };
    int rc = load(&s, &m, &f, &err);
    ck_assert_msg(rc == -1, "%s: accepted", c->what);
    ck_assert_msg(strstr(err.msg, c->msg) != NULL, "%s: message \"%s\", expected \"%s\"", c->what,
                  err.msg, c->msg);
}
END_TEST

/* ---------------------------------------------------------------------------
 * Forward pass: batching does not change the numbers
 */

/* Logits of every prompt position, with batches of n_batch tokens. */
static float *all_logits(const run_model *m, const int32_t *t, int n, int n_batch)
{
    run_state st;
    gguf_error err;
    ck_assert_msg(run_state_init(&st, m, 32, n_batch, &err) == 0, "%s", err.msg);
    float *l = malloc((size_t)n * (size_t)m->hp.n_vocab * sizeof *l);
    ck_assert_ptr_nonnull(l);
    if (n_batch >= n) {
        run_forward(&st, m, t, n, 0, 0, l);
    } else { /* one token at a time, as generation does */
        for (int i = 0; i < n; i++)
            run_forward(&st, m, t + i, 1, i, 0, l + (size_t)i * m->hp.n_vocab);
    }
    run_state_free(&st);
    return l;
}

static void check_batching(spec s)
{
    run_model m;
    gguf_file *f;
    gguf_error err;
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    const int32_t t[7] = { 1, 5, 9, 30, 2, 39, 7 };
    const int nv = m.hp.n_vocab;
    float *batch = all_logits(&m, t, 7, 16), *steps = all_logits(&m, t, 7, 1);
    for (int i = 0; i < 7 * nv; i++) {
        ck_assert(isfinite(batch[i]));
        ck_assert_msg(fabsf(batch[i] - steps[i]) <= 1e-5f * (1 + fabsf(steps[i])),
                      "row %d col %d: %g vs %g", i / nv, i % nv, batch[i], steps[i]);
    }
    /* batches of 3 with only the last 2 rows' logits wanted */
    run_state st;
    ck_assert_int_eq(run_state_init(&st, &m, 32, 3, &err), 0);
    float *last = malloc(2 * (size_t)nv * sizeof *last);
    run_forward(&st, &m, t, 7, 0, 5, last);
    for (int i = 0; i < 2 * nv; i++)
        ck_assert(fabsf(last[i] - batch[5 * nv + i]) <= 1e-5f * (1 + fabsf(last[i])));
    free(last);
    run_state_free(&st);
    free(batch);
    free(steps);
    run_model_free(&m);
    gguf_close(f);
}

START_TEST(test_batching_llama)
{
    check_batching(base_spec());
}
END_TEST

START_TEST(test_batching_phi3)
{
    check_batching(phi3_spec());
}
END_TEST

START_TEST(test_batching_gemma)
{
    check_batching(gemma_spec("gemma2"));
    spec s = gemma_spec("gemma3");
    s.layers = 7; /* layer 5 global */
    check_batching(s);
}
END_TEST

/* Rows [first, first + rows) of w as a matrix of their own (not packed). */
static run_matrix row_range(run_matrix w, int64_t first, int64_t rows)
{
    w.data = (const uint8_t *)w.data + first * (int64_t)w.row_bytes;
    w.rows = rows;
    w.packed = NULL;
    return w;
}

/* A fused matrix gives the bits its row ranges give as separate matrices:
 * phi3's forward pass against the same model with wq, wk, wv and w_gate,
 * w_up pointing into its attn_qkv and ffn_up rows. */
/* Routed experts: Mixtral (softmax, then top-k), Qwen3-MoE, and gpt-oss
 * (top-k, then softmax; SwiGLU-OAI; sinks; YaRN; biases; SWA) load and run
 * with finite logits, the same in one batch and token by token. */
START_TEST(test_batching_moe)
{
    check_batching(moe_spec("llama"));
    check_batching(moe_spec("qwen3moe"));
    check_batching(oss_spec());
    /* the small gpt-oss is one: every feature its forward pass has */
    spec s = oss_spec();
    run_model m;
    gguf_file *f;
    gguf_error err;
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.hp.n_expert, 4);
    ck_assert_int_eq(m.hp.n_ff_exp, 40);
    ck_assert(m.hp.rope_yarn);
    ck_assert_int_eq(gguf_arch_activation(m.row), GGUF_ACT_SWIGLU_OAI);
    ck_assert_int_eq(gguf_arch_routing(m.row), GGUF_ROUTING_TOPK_SOFTMAX);
    ck_assert(run_layer_is_swa(&m, 0) && !run_layer_is_swa(&m, 1));
    ck_assert_ptr_nonnull(m.layers[1].sinks);
    ck_assert_ptr_nonnull(m.layers[1].gate_exps_b);
    ck_assert_ptr_nonnull(m.layers[1].down_exps_b);
    run_model_free(&m);
    gguf_close(f);
}
END_TEST

/* Qwen 3.5 dense and MoE in small: the blocks' kinds as the interval says,
 * the gated q, M-RoPE and the shared expert loaded; a prompt in one batch,
 * token by token and in batches of 3 gives the same logits (the delta net
 * is a recurrence token by token in every case); the state is per
 * sequence: a second run from position 0 on the same state repeats the
 * first bit for bit. */
START_TEST(test_batching_hybrid)
{
    const char *arches[] = { "qwen35", "qwen35moe" };
    for (int a = 0; a < 2; a++) {
        spec s = hybrid_spec(arches[a]);
        check_batching(s);
        run_model m;
        gguf_file *f;
        gguf_error err;
        ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
        ck_assert(run_layer_is_recurrent(&m, 0) && !run_layer_is_recurrent(&m, 1));
        ck_assert(run_layer_is_recurrent(&m, 2) && !run_layer_is_recurrent(&m, 3));
        ck_assert_ptr_nonnull(m.layers[0].ssm_out.data);
        ck_assert_ptr_nonnull(m.layers[0].ssm_conv);
        ck_assert_ptr_null(m.layers[0].wq.data);
        ck_assert_ptr_null(m.layers[1].ssm_out.data);
        ck_assert_int_eq(m.layers[1].wq.rows, 2 * m.hp.q_dim);
        ck_assert(m.hp.rope_imrope);
        ck_assert_int_eq(m.hp.rope_sections[0], 2);
        ck_assert_int_eq(m.hp.ssm_d_inner, a ? 128 : 64);
        ck_assert_int_eq(m.hp.n_ff_shexp, a ? 64 : 0);
        ck_assert(a == 0 || m.layers[3].gate_inp_shexp.rows == 1);
        const int32_t t[7] = { 1, 5, 9, 30, 2, 39, 7 };
        const int nv = m.hp.n_vocab;
        run_state st;
        ck_assert_int_eq(run_state_init(&st, &m, 32, 4, &err), 0);
        ck_assert_ptr_nonnull(st.conv_state);
        /* a K/V cache for the attention blocks only */
        ck_assert_int_eq(st.n_cache_layers, 2);
        for (int il = 0; il < 4; il++)
            ck_assert_int_eq(m.layers[il].kv_slot, il % 2 ? il / 2 : -1);
        float *l1 = malloc(2 * (size_t)nv * sizeof *l1), *l2 = l1 + nv;
        run_forward(&st, &m, t, 7, 0, 6, l1);
        run_forward(&st, &m, t, 7, 0, 6, l2);
        ck_assert_mem_eq(l1, l2, (size_t)nv * sizeof *l1);
        free(l1);
        run_state_free(&st);
        run_model_free(&m);
        gguf_close(f);
    }
}
END_TEST

START_TEST(test_fused_as_row_ranges)
{
    spec s = phi3_spec();
    run_model m;
    gguf_file *f;
    gguf_error err;
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    run_model v = m;
    v.layers = malloc((size_t)m.hp.n_layer * sizeof *v.layers);
    ck_assert_ptr_nonnull(v.layers);
    const int64_t q = m.hp.q_dim, kv = (int64_t)m.hp.n_head_kv * m.hp.head_dim, ff = m.hp.n_ff;
    for (int i = 0; i < m.hp.n_layer; i++) {
        run_layer *l = &v.layers[i];
        *l = m.layers[i];
        l->wq = row_range(l->wqkv, 0, q);
        l->wk = row_range(l->wqkv, q, kv);
        l->wv = row_range(l->wqkv, q + kv, kv);
        l->w_gate = row_range(l->w_gate_up, 0, ff);
        l->w_up = row_range(l->w_gate_up, ff, ff);
        memset(&l->wqkv, 0, sizeof l->wqkv);
        memset(&l->w_gate_up, 0, sizeof l->w_gate_up);
    }
    const int32_t t[5] = { 1, 7, 30, 2, 11 };
    float *fused = all_logits(&m, t, 5, 8), *ranges = all_logits(&v, t, 5, 8);
    for (int i = 0; i < 5 * m.hp.n_vocab; i++)
        ck_assert_msg(!memcmp(&fused[i], &ranges[i], sizeof(float)), "[%d]: %a fused, %a ranges",
                      i, fused[i], ranges[i]);
    free(fused);
    free(ranges);
    free(v.layers);
    run_model_free(&m);
    gguf_close(f);
}
END_TEST

START_TEST(test_batching_qwen2_tied_freqs)
{
    spec s = base_spec();
    s.arch = "qwen2";
    s.bias = true;
    s.tied = true;
    s.rope_freqs = true;
    check_batching(s);
}
END_TEST

/* ---------------------------------------------------------------------------
 * Vector paths: the same bits as the scalar ones
 *
 * Each check runs a block with run_force_scalar(true), then with the vector
 * paths (where the CPU has none both runs are scalar and agree trivially),
 * and compares the outputs' bit patterns.
 */

static void same_bits(const float *scalar, const float *vec, int n, const char *what, int a,
                      int b)
{
    for (int i = 0; i < n; i++)
        ck_assert_msg(!memcmp(&scalar[i], &vec[i], sizeof(float)),
                      "%s (%d, %d) [%d]: %a scalar, %a vector", what, a, b, i, scalar[i], vec[i]);
}

static const float *f16_table(void)
{
    static float t[65536];
    for (uint32_t h = 0; h < 65536; h++)
        t[h] = gguf_f16_to_f32((gguf_half)h);
    return t;
}

/* A random f16 of about ±scale; now and then a zero, -0 or a subnormal. */
static gguf_half rnd_half(float scale)
{
    const float r = rnd();
    const uint32_t k = lcg >> 27;
    if (k == 0)
        return (gguf_half)((lcg >> 8) & 0x8000);
    if (k == 1)
        return (gguf_half)((lcg >> 8) & 0x83ff);
    return gguf_f32_to_f16(r * scale);
}

START_TEST(test_simd_attn_scores)
{
    const float *tab = f16_table();
    const int hds[] = { 12, 16, 24, 64, 128 }, nkvs[] = { 1, 3, 4, 5, 8, 16, 17, 63, 130 };
    enum { MAX_KV = 130 };
    for (size_t a = 0; a < sizeof hds / sizeof *hds; a++) {
        const int hd = hds[a];
        const size_t kv_dim = 2 * (size_t)hd + 16; /* other heads in between */
        gguf_half *kc = malloc(MAX_KV * kv_dim * sizeof *kc), q16[128];
        ck_assert_ptr_nonnull(kc);
        for (size_t i = 0; i < MAX_KV * kv_dim; i++)
            kc[i] = rnd_half(i / kv_dim % 3 == 0 ? 100.0f : 4.0f);
        for (int i = 0; i < hd; i++)
            q16[i] = rnd_half(8.0f);
        for (size_t b = 0; b < sizeof nkvs / sizeof *nkvs; b++) {
            float want[MAX_KV], got[MAX_KV];
            run_force_scalar(true);
            if (hd % 16 == 0)
                run_attn_scores(want, tab, q16, kc + 8, nkvs[b], hd, kv_dim);
            run_force_scalar(false);
            if (hd % 16 == 0) { /* the batch kernel's 16 lanes */
                run_attn_scores(got, tab, q16, kc + 8, nkvs[b], hd, kv_dim);
                same_bits(want, got, nkvs[b], "scores", hd, nkvs[b]);
            }
            /* one token: ggml_vec_dot_f16's four sums of 16 lanes */
            run_force_scalar(true);
            run_attn_scores1(want, tab, q16, kc + 8, nkvs[b], hd, kv_dim);
            run_force_scalar(false);
            run_attn_scores1(got, tab, q16, kc + 8, nkvs[b], hd, kv_dim);
            same_bits(want, got, nkvs[b], "scores1", hd, nkvs[b]);
        }
        free(kc);
    }
}
END_TEST

/* Scores of kind k: 0 moderate, 1 spread wide (exponentials from 1 down
 * to far below the smallest float), 2 clustered where e^x is near the
 * smallest normal float (subnormal results, both sides of the vector
 * path's limit), 3 with -inf and -1e30 scores. */
static float softmax_score(int k, int i)
{
    switch (k) {
    case 0: return rnd() * 20;
    case 1: return rnd() * 800;
    case 2: return i % 7 == 0 ? 0.0f : -87.0f + rnd() * 8 - (float)(i % 3) * 6;
    default: return i % 5 == 1 ? -INFINITY : i % 5 == 3 ? -1e30f : rnd() * 40;
    }
}

START_TEST(test_simd_attn_softmax)
{
    enum { MAX_N = 1000 };
    float x0[MAX_N], want[MAX_N], got[MAX_N];
    int ns[84], nn = 0; /* 1..80, around 256, and a long row */
    for (int n = 1; n <= 80; n++)
        ns[nn++] = n;
    ns[nn++] = 255, ns[nn++] = 256, ns[nn++] = 257, ns[nn++] = MAX_N;
    /* gpt-oss's sink logit: none, small, the largest logit, ±0 (a zero max
     * of either sign), far below every score, -inf */
    const float sinks[] = { NAN, 0.5f, 60.0f, 0.0f, -0.0f, -1e30f, -INFINITY };
    for (int c = 0; c < nn; c++) {
        const int n = ns[c];
        for (int k = 0; k < 4; k++) {
            const float scale = k == 2 ? 1.0f : 0.125f;
            for (int i = 0; i < n; i++)
                x0[i] = softmax_score(k, i);
            for (size_t j = 0; j < sizeof sinks / sizeof *sinks; j++) {
                memcpy(want, x0, (size_t)n * sizeof *x0);
                memcpy(got, x0, (size_t)n * sizeof *x0);
                run_force_scalar(true);
                run_attn_softmax(want, n, scale, sinks[j]);
                run_force_scalar(false);
                run_attn_softmax(got, n, scale, sinks[j]);
                same_bits(want, got, n, "softmax", n, k * 100 + (int)j);
            }
        }
    }
}
END_TEST

/* The heads of a GQA group together (run_attn_*_group, 2..4 heads, as
 * the batch attention calls them): each head's scores and values bit for
 * bit what the scalar code gives it alone. */
START_TEST(test_simd_attn_group)
{
    const float *tab = f16_table();
    const int hds[] = { 16, 64, 128 }, nkvs[] = { 1, 5, 17, 130 };
    enum { MAX_KV = 130, MAX_HD = 128, NH = 4 };
    const size_t stride = MAX_KV + MAX_HD; /* as the run state's per-head scratch */
    for (size_t a = 0; a < sizeof hds / sizeof *hds; a++) {
        const int hd = hds[a];
        const size_t kv_dim = 2 * (size_t)hd + 16;
        gguf_half *kc = malloc(MAX_KV * kv_dim * sizeof *kc);
        gguf_half *q16 = malloc(NH * stride * sizeof *q16), *p16 = malloc(NH * stride * sizeof *p16);
        float *want = malloc(NH * stride * sizeof *want), *got = malloc(NH * stride * sizeof *got);
        ck_assert(kc && q16 && p16 && want && got);
        for (size_t i = 0; i < MAX_KV * kv_dim; i++)
            kc[i] = rnd_half(i / kv_dim % 3 == 0 ? 100.0f : 4.0f);
        for (size_t i = 0; i < NH * stride; i++) {
            q16[i] = rnd_half(8.0f);
            p16[i] = i % 11 == 5 ? 0 : rnd_half(i % 4 ? 1.0f : 1e-5f);
        }
        for (int nh = 2; nh <= NH; nh++) {
            if (nh * hd > FWD_MAX_HEAD_DIM)
                continue;
            for (size_t b = 0; b < sizeof nkvs / sizeof *nkvs; b++) {
                const int n = nkvs[b];
                for (int g = 0; g < nh; g++) { /* each head alone, scalar */
                    run_force_scalar(true);
                    run_attn_scores(want + g * stride, tab, q16 + g * stride, kc + 8, n, hd, kv_dim);
                    run_attn_values(want + g * stride + MAX_KV, tab, p16 + g * stride, kc + 8, n, hd,
                                    kv_dim);
                    run_force_scalar(false);
                }
                run_attn_scores_group(got, stride, tab, q16, stride, nh, kc + 8, n, hd, kv_dim);
                run_attn_values_group(got + MAX_KV, stride, tab, p16, stride, nh, kc + 8, n, hd, kv_dim);
                for (int g = 0; g < nh; g++) {
                    same_bits(want + g * stride, got + g * stride, n, "group scores", hd, n);
                    same_bits(want + g * stride + MAX_KV, got + g * stride + MAX_KV, hd, "group values",
                              hd, n);
                }
            }
        }
        free(kc);
        free(q16);
        free(p16);
        free(want);
        free(got);
    }
}
END_TEST

START_TEST(test_simd_attn_values)
{
    const float *tab = f16_table();
    const int hds[] = { 8, 12, 16, 64, 128, 136 }, nkvs[] = { 1, 2, 15, 16, 17, 33, 100, 257 };
    enum { MAX_KV = 257, MAX_HD = 136 };
    gguf_half p16[MAX_KV];
    for (int t = 0; t < MAX_KV; t++) /* probabilities: some tiny, subnormal or zero */
        p16[t] = t % 11 == 5 ? 0 : rnd_half(t % 4 ? 1.0f : 1e-5f);
    for (size_t a = 0; a < sizeof hds / sizeof *hds; a++) {
        const int hd = hds[a];
        const size_t kv_dim = 3 * (size_t)hd;
        gguf_half *vc = malloc(MAX_KV * kv_dim * sizeof *vc);
        ck_assert_ptr_nonnull(vc);
        for (size_t i = 0; i < MAX_KV * kv_dim; i++)
            vc[i] = rnd_half(i % 5 ? 2.0f : 300.0f);
        for (size_t b = 0; b < sizeof nkvs / sizeof *nkvs; b++) {
            float want[MAX_HD], got[MAX_HD];
            run_force_scalar(true);
            run_attn_values(want, tab, p16, vc + hd, nkvs[b], hd, kv_dim);
            run_force_scalar(false);
            run_attn_values(got, tab, p16, vc + hd, nkvs[b], hd, kv_dim);
            same_bits(want, got, hd, "values", hd, nkvs[b]);
            run_force_scalar(true); /* one token: four sums of 16 lanes */
            run_attn_values1(want, tab, p16, vc + hd, nkvs[b], hd, kv_dim);
            run_force_scalar(false);
            run_attn_values1(got, tab, p16, vc + hd, nkvs[b], hd, kv_dim);
            same_bits(want, got, hd, "values1", hd, nkvs[b]);
        }
        free(vc);
    }
}
END_TEST

START_TEST(test_simd_swiglu)
{
    enum { MAX_N = 1003 };
    const float scales[] = { 1, 20, 400, 1e6f };
    float g0[MAX_N], u[MAX_N], want[MAX_N], got[MAX_N];
    for (int n = 1; n <= MAX_N; n = n < 40 ? n + 1 : n + MAX_N - 40) { /* 1..40, MAX_N */
        for (size_t k = 0; k < sizeof scales / sizeof *scales; k++) {
            for (int i = 0; i < n; i++) {
                g0[i] = i % 13 == 4 ? (i % 2 ? -0.0f : 0.0f) : rnd() * scales[k];
                u[i] = rnd() * 4;
            }
            memcpy(want, g0, (size_t)n * sizeof *g0);
            memcpy(got, g0, (size_t)n * sizeof *g0);
            run_force_scalar(true);
            run_swiglu(want, u, n);
            run_force_scalar(false);
            run_swiglu(got, u, n);
            same_bits(want, got, n, "swiglu", n, (int)k);
        }
    }
}
END_TEST

/* GeGLU and GELU from the f16 table, vector against scalar: rows of 1 to
 * 40 and 1003 around and past the ±10 bounds (both exactly), signed zeros,
 * infinities, and a NaN in some rows (the vector path stops at its group). */
START_TEST(test_simd_geglu)
{
    enum { MAX_N = 1003 };
    static gguf_half t[65536];
    run_gelu_table(t);
    static float g0[MAX_N], u[MAX_N], want[MAX_N], got[MAX_N];
    const float special[] = { -10.0f, 10.0f, 0.0f, -0.0f, INFINITY, -INFINITY, 9.999f, -9.999f };
    for (int n = 1; n <= MAX_N; n = n < 40 ? n + 1 : n + MAX_N - 40) {
        for (int k = 0; k < 3; k++) {
            for (int i = 0; i < n; i++) {
                g0[i] = i % 11 == 3 ? special[i % 8] : rnd() * (k == 0 ? 12 : k == 1 ? 3 : 1e5f);
                u[i] = rnd() * 4;
            }
            if (k == 2 && n > 20)
                g0[n / 2] = NAN;
            for (int gated = 0; gated < 2; gated++) {
                memcpy(want, g0, (size_t)n * sizeof *g0);
                memcpy(got, g0, (size_t)n * sizeof *g0);
                run_force_scalar(true);
                if (gated)
                    run_geglu(want, u, n, t);
                else
                    run_gelu(want, n, t);
                run_force_scalar(false);
                if (gated)
                    run_geglu(got, u, n, t);
                else
                    run_gelu(got, n, t);
                same_bits(want, got, n, gated ? "geglu" : "gelu", n, k);
            }
        }
    }
}
END_TEST

START_TEST(test_simd_rope)
{
    enum { HEADS = 3, HD = 16 };
    const int rots[] = { 16, 8, 6 };
    const float ff[8] = { 1, 1, 2, 4, 8, 8, 8, 8 };
    for (int layout = 0; layout < 2; layout++) {
        for (size_t r = 0; r < sizeof rots / sizeof *rots; r++) {
            for (int pos = 0; pos < 300; pos += 37) {
                float want[HEADS * HD], got[HEADS * HD];
                for (int i = 0; i < HEADS * HD; i++)
                    want[i] = got[i] = rnd() * 10;
                const enum run_rope_layout l = layout ? RUN_ROPE_NEOX : RUN_ROPE_NORM;
                run_force_scalar(true);
                run_rope(want, HEADS, HD, rots[r], pos, 10000.0f, 1.0f, pos % 2 ? ff : NULL,
                         pos % 3 ? 1.0f : 1.0871146f, l);
                run_force_scalar(false);
                run_rope(got, HEADS, HD, rots[r], pos, 10000.0f, 1.0f, pos % 2 ? ff : NULL,
                         pos % 3 ? 1.0f : 1.0871146f, l);
                same_bits(want, got, HEADS * HD, "rope", rots[r], pos);
            }
        }
    }
}
END_TEST

/* Whole forward passes: a prompt as one batch (and its logits at every
 * position) and token by token, scalar against vector. */
static void check_simd_forward(spec s)
{
    run_model m;
    gguf_file *f;
    gguf_error err;
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    enum { N = 30 };
    int32_t t[N];
    for (int i = 0; i < N; i++)
        t[i] = (int32_t)((i * 7 + 3) % s.vocab);
    const int nv = m.hp.n_vocab;
    for (int n_batch = 1; n_batch <= N; n_batch += N - 1) {
        run_force_scalar(true);
        float *want = all_logits(&m, t, N, n_batch);
        run_force_scalar(false);
        float *got = all_logits(&m, t, N, n_batch);
        same_bits(want, got, N * nv, "logits", m.hp.head_dim, n_batch);
        free(want);
        free(got);
    }
    run_model_free(&m);
    gguf_close(f);
}

START_TEST(test_simd_forward)
{
    spec s = base_spec(); /* head_dim 8: scores in double, values in lanes */
    check_simd_forward(s);
    s.dim = 64; /* head_dim 16: both in lanes; n_ff not a multiple of 8 */
    s.ff = 76;
    s.rot = 16;
    check_simd_forward(s);
    s.arch = "qwen2"; /* NEOX rotation, biases */
    s.bias = true;
    check_simd_forward(s);
    s.arch = "phi3"; /* fused products, q scaled before the scores */
    s.bias = false;
    s.fused = true;
    check_simd_forward(s);
    check_simd_forward(gemma_spec("gemma2")); /* soft-caps, post-norms, GeGLU, SWA */
    check_simd_forward(moe_spec("llama"));    /* experts: SwiGLU over n_ff_exp 24 */
    check_simd_forward(moe_spec("qwen3moe"));
    check_simd_forward(oss_spec());           /* sinks in the softmax, SwiGLU-OAI, YaRN */
    check_simd_forward(hybrid_spec("qwen35"));    /* delta net, gated q, M-RoPE */
    check_simd_forward(hybrid_spec("qwen35moe")); /* and a shared expert */
    s = gemma_spec("gemma3");
    s.head_dim = 64; /* scores1 over whole 64s */
    s.rot = 64;
    check_simd_forward(s);
}
END_TEST

/* ---------------------------------------------------------------------------
 * Perplexity and KL-divergence: a model against itself
 */

/* The base file in llama-perplexity's layout: "_logits_", u32 n_ctx, i32
 * n_vocab, i32 n_chunk, the text's tokens (BOS not put in), then rows of
 * 2·⌈n_vocab/2⌉ + 4 u16 words (scale, lowest log-prob, levels, pad). */
static void check_base_layout(const char *path, const int32_t *t, int ctx, int nv, int n_chunk)
{
    FILE *fp = fopen(path, "rb");
    ck_assert_ptr_nonnull(fp);
    char magic[8];
    uint32_t ctx32;
    int32_t head[2];
    ck_assert_int_eq(fread(magic, 8, 1, fp), 1);
    ck_assert(memcmp(magic, "_logits_", 8) == 0);
    ck_assert_int_eq(fread(&ctx32, 4, 1, fp), 1);
    ck_assert_int_eq(fread(head, 4, 2, fp), 2);
    ck_assert_uint_eq(ctx32, (uint32_t)ctx);
    ck_assert_int_eq(head[0], nv);
    ck_assert_int_eq(head[1], n_chunk);
    int32_t tok[64];
    ck_assert_int_le(n_chunk * ctx, 64);
    ck_assert_int_eq((int)fread(tok, 4, (size_t)(n_chunk * ctx), fp), n_chunk * ctx);
    for (int i = 0; i < n_chunk * ctx; i++)
        ck_assert_int_eq(tok[i], t[i]); /* as in the text, BOS not put in */
    const long rows = (long)n_chunk * (ctx - 1 - ctx / 2), words = 2 * ((nv + 1) / 2) + 4;
    long at = ftell(fp);
    fseek(fp, 0, SEEK_END);
    ck_assert_int_eq(ftell(fp) - at, rows * words * 2);
    /* the first row: its levels decode to log-probabilities at most 0, the
     * top one within a level of -log Σ, and the pad word (odd n_vocab) 0 */
    fseek(fp, at, SEEK_SET);
    float sc[2];
    uint16_t lv[64];
    ck_assert_int_eq(fread(sc, 4, 2, fp), 2);
    ck_assert_int_eq((long)fread(lv, 2, (size_t)(words - 4), fp), words - 4);
    ck_assert(sc[0] > 0 && sc[1] < 0);
    uint16_t top = 0;
    for (int i = 0; i < nv; i++)
        top = lv[i] > top ? lv[i] : top;
    ck_assert_uint_eq(top, 65535);
    ck_assert(sc[0] * top + sc[1] <= 1e-6f);
    if (nv % 2)
        ck_assert_uint_eq(lv[nv], 0);
    fclose(fp);
}

static void check_eval_self(int vocab)
{
    spec sp = base_spec();
    sp.vocab = sp.n_tokens = vocab;
    run_model m;
    gguf_file *f;
    gguf_error err;
    ck_assert_msg(load(&sp, &m, &f, &err) == 0, "%s", err.msg);
    enum { CTX = 16, N = 3 * CTX + 5 };
    int32_t t[N];
    for (int i = 0; i < N; i++)
        t[i] = (int32_t)((i * 7 + 3) % vocab);
    run_state st;
    ck_assert_int_eq(run_state_init(&st, &m, CTX, 5, &err), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/test_forward_%d.kld", test_tmpdir(), (int)getpid());
    run_eval_result a, b;
    ck_assert_msg(run_perplexity(&st, &m, t, N, 1, 0, path, &a, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(a.n_chunk, 3);
    ck_assert_int_eq(a.n_scored, 3 * (CTX - CTX / 2 - 1));
    ck_assert(a.ppl > 1 && a.ppl < 1000);
    check_base_layout(path, t, CTX, vocab, 3);
    ck_assert_int_eq(run_kld_file_ctx(path, &err), CTX);
    ck_assert_msg(run_kl_divergence(&st, &m, path, 1, &b, &err) == 0, "%s", err.msg);
    ck_assert_double_eq_tol(b.ppl, a.ppl, 1e-9 * a.ppl);
    ck_assert_double_eq_tol(b.ppl_base, a.ppl, 1e-3 * a.ppl); /* 16-bit levels */
    ck_assert(fabs(b.mean_kld) < 1e-5);
    ck_assert_double_eq(b.same_top, 1.0);
    /* without BOS in front the chunks are other inputs: the model's own
     * predictions move, the base's stay */
    ck_assert_msg(run_kl_divergence(&st, &m, path, -1, &b, &err) == 0, "%s", err.msg);
    ck_assert(fabs(b.ppl - a.ppl) > 1e-6 * a.ppl);
    ck_assert(b.mean_kld > 1e-6);
    /* a truncated base file */
    FILE *fp = fopen(path, "r+b");
    fseek(fp, 0, SEEK_END);
    ck_assert_int_eq(ftruncate(fileno(fp), ftell(fp) - 10), 0);
    fclose(fp);
    ck_assert_int_eq(run_kl_divergence(&st, &m, path, 1, &b, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "truncated: its header (n_ctx 16"));
    /* fuzz_kldbase found: a header promising 2^26 chunks (2^30 tokens) made the
     * reader allocate 4 GiB for tokens a 40-byte file does not have */
    fp = fopen(path, "wb");
    const uint32_t huge[5] = { CTX, (uint32_t)vocab, 0x04000000u, 3, 4 };
    fwrite("_logits_", 8, 1, fp);
    fwrite(huge, sizeof huge, 1, fp);
    fclose(fp);
    ck_assert_int_eq(run_kl_divergence(&st, &m, path, 1, &b, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "67108864 chunks) needs"));
    /* too short a text, and a file that is not a base file */
    ck_assert_int_eq(run_perplexity(&st, &m, t, 2 * CTX - 1, 1, 0, NULL, &a, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "needs at least 32"));
    fp = fopen(path, "wb");
    fputs("not a base file", fp);
    fclose(fp);
    ck_assert_int_eq(run_kl_divergence(&st, &m, path, 1, &b, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a --kl-divergence-base file"));
    unlink(path);
    run_state_free(&st);
    run_model_free(&m);
    gguf_close(f);
}

START_TEST(test_eval_self)
{
    check_eval_self(40);
    check_eval_self(41); /* odd: rows get a pad word */
}
END_TEST

/* ---------------------------------------------------------------------------
 * Importance matrix (--imatrix)
 */

START_TEST(test_importance_add)
{
    float sum[3] = { 0 };
    run_matrix w = { .cols = 3 };
    run_importance_entry e = { .w = &w, .ncols = 3, .sum = sum };
    const float a[2 * 3] = { 1, 2, 3, -1, 0, 0.5f };
    const float b[1 * 3] = { 2, -2, 1 };
    run_importance_add(&e, a, 2);
    run_importance_add(&e, b, 1);
    ck_assert_int_eq(e.ncall, 2);
    ck_assert_int_eq((int)e.count, 3);
    const float want[3] = { 1 + 1 + 4, 4 + 0 + 4, 9 + 0.25f + 1 };
    for (int j = 0; j < 3; j++) {
        ck_assert_float_eq(sum[j], want[j]);
        /* stored as llama-imatrix's save_imatrix: sum / count * ncall */
        ck_assert_float_eq_tol(run_importance_value(&e, j), want[j] / 3 * 2, 1e-6f);
    }
    /* the hook ignores products of fewer than 16 rows and matrices it does not know */
    run_importance im = { .n = 1, .e = &e };
    float rows[16 * 3];
    for (int i = 0; i < 16 * 3; i++)
        rows[i] = 1.0f;
    run_importance_hook(&im, &w, rows, RUN_IMPORTANCE_MIN_BATCH - 1);
    ck_assert_int_eq(e.ncall, 2);
    run_matrix other = w;
    run_importance_hook(&im, &other, rows, 16);
    ck_assert_int_eq(e.ncall, 2);
    run_importance_hook(&im, &w, rows, 16);
    ck_assert_int_eq(e.ncall, 3);
    ck_assert_int_eq((int)e.count, 19);
    ck_assert_float_eq(sum[0], want[0] + 16);
}
END_TEST

enum { COLLECT_CTX = 16, COLLECT_N = 3 * COLLECT_CTX + 5 };

/* Loads sp and collects its importance matrix (entries for every matrix
 * and the output) over COLLECT_N tokens t it fills, in chunks of COLLECT_CTX with
 * batches of COLLECT_CTX (with_output: the output's rows too): 3 chunks. */
static void collect_chunks(const spec *sp, run_model *m, gguf_file **f, run_state *st,
                           run_importance *im, int32_t *t, bool with_output)
{
    gguf_error err;
    ck_assert_msg(load(sp, m, f, &err) == 0, "%s", err.msg);
    for (int i = 0; i < COLLECT_N; i++)
        t[i] = (int32_t)((i * 7 + 3) % sp->vocab);
    ck_assert_int_eq(run_state_init(st, m, COLLECT_CTX, COLLECT_CTX, &err), 0);
    ck_assert_int_eq(run_importance_init(im, m, true, &err), 0);
    int n_chunk = 0;
    ck_assert_msg(run_importance_collect(im, st, m, t, COLLECT_N, 1, 0, with_output, &n_chunk,
                                         &err) == 0, "%s", err.msg);
    ck_assert_ptr_null(st->act_hook);
    ck_assert_int_eq(n_chunk, 3);
}

static void check_collect(bool tied)
{
    spec sp = base_spec();
    sp.tied = tied;
    run_model m;
    gguf_file *f;
    gguf_error err;
    int32_t t[COLLECT_N];
    run_state st;
    run_importance im;
    collect_chunks(&sp, &m, &f, &st, &im, t, !tied);
    ck_assert_int_eq(im.n, 7 * sp.layers + !tied);
    ck_assert_str_eq(im.e[0].name, "blk.0.attn_q.weight");
    ck_assert_str_eq(im.e[13].name, "blk.1.ffn_down.weight");
    int n_chunk = 0;
    for (int i = 0; i < im.n; i++) {
        ck_assert_int_eq(im.e[i].ncall, 3); /* one product per chunk of 16 */
        ck_assert_int_eq((int)im.e[i].count, 3 * COLLECT_CTX);
        for (int j = 0; j < im.e[i].ncols; j++)
            ck_assert(isfinite(im.e[i].sum[j]) && im.e[i].sum[j] > 0);
    }
    ck_assert_int_eq(im.e[3].ncols, sp.dim);   /* attn_output: the heads' outputs */
    ck_assert_int_eq(im.e[6].ncols, sp.ff);    /* ffn_down: the SwiGLU output */
    /* q, k and v see the same normed input, and so do gate and up */
    for (int j = 0; j < sp.dim; j++) {
        ck_assert_float_eq(im.e[0].sum[j], im.e[1].sum[j]);
        ck_assert_float_eq(im.e[0].sum[j], im.e[2].sum[j]);
        ck_assert_float_eq(im.e[4].sum[j], im.e[5].sum[j]);
    }
    /* written and read back as llama-imatrix's file */
    char path[512];
    snprintf(path, sizeof path, "%s/test_forward_%d.imatrix", test_tmpdir(), (int)getpid());
    ck_assert_msg(run_importance_save(&im, path, "text.txt", false, COLLECT_CTX, &err) == 0, "%s", err.msg);
    gguf_imatrix back;
    ck_assert_msg(gguf_imatrix_load(path, &back, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(back.n, im.n);
    ck_assert_int_eq(back.chunks, 3);
    ck_assert_str_eq(back.dataset, "text.txt");
    for (int i = 0; i < im.n; i++) {
        ck_assert_str_eq(back.entries[i].name, im.e[i].name);
        ck_assert_int_eq(back.entries[i].ncall, 3);
        for (int j = 0; j < im.e[i].ncols; j++)
            ck_assert_float_eq(back.entries[i].values[j], run_importance_value(&im.e[i], j));
    }
    gguf_imatrix_free(&back);
    /* and in the GGUF format (llama-imatrix e21cdc11): raw sums and row
     * counts, entries sorted by name, chunks = rows / context */
    ck_assert_msg(run_importance_save(&im, path, "text.txt", true, COLLECT_CTX, &err) == 0, "%s", err.msg);
    ck_assert_msg(gguf_imatrix_load(path, &back, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(back.n, im.n);
    ck_assert_int_eq(back.chunks, 3);
    ck_assert_uint_eq(back.chunk_size, COLLECT_CTX);
    ck_assert_str_eq(back.dataset, "text.txt");
    for (int i = 1; i < back.n; i++)
        ck_assert_int_lt(strcmp(back.entries[i - 1].name, back.entries[i].name), 0);
    for (int i = 0; i < im.n; i++) {
        int32_t n;
        const float *w = gguf_imatrix_find(&back, im.e[i].name, &n);
        ck_assert_ptr_nonnull(w);
        ck_assert_int_eq(n, im.e[i].ncols);
        for (int j = 0; j < n; j++)
            ck_assert(w[j] == im.e[i].sum[j] / (float)(3 * COLLECT_CTX));
    }
    gguf_imatrix_free(&back);
    run_importance_free(&im);
    run_state_free(&st);

    /* batches of 8 rows: nothing is collected, and nothing is written */
    ck_assert_int_eq(run_state_init(&st, &m, COLLECT_CTX, 8, &err), 0);
    ck_assert_int_eq(run_importance_init(&im, &m, false, &err), 0);
    ck_assert_int_eq(run_importance_collect(&im, &st, &m, t, COLLECT_N, 1, 2, false, &n_chunk, &err), 0);
    ck_assert_int_eq(n_chunk, 2);
    for (int i = 0; i < im.n; i++)
        ck_assert_int_eq(im.e[i].ncall, 0);
    ck_assert_int_eq(run_importance_save(&im, path, NULL, true, COLLECT_CTX, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "batch of 16"));
    /* a text shorter than two contexts */
    ck_assert_int_eq(run_importance_collect(&im, &st, &m, t, 2 * COLLECT_CTX - 1, 1, 0, false, &n_chunk,
                                            &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "needs at least 32"));
    unlink(path);
    run_importance_free(&im);
    run_state_free(&st);
    run_model_free(&m);
    gguf_close(f);
}

START_TEST(test_importance_collect)
{
    check_collect(false);
}
END_TEST

START_TEST(test_importance_collect_tied)
{
    check_collect(true);
}
END_TEST

/* ---------------------------------------------------------------------------
 * --verify: greedy continuation, agreement, limits
 */

START_TEST(test_verify_greedy)
{
    spec sp = base_spec();
    run_model m;
    gguf_file *f;
    gguf_error err;
    ck_assert_msg(load(&sp, &m, &f, &err) == 0, "%s", err.msg);
    const int nv = m.hp.n_vocab;
    const int32_t prompt[4] = { 1, 5, 9, 30 };
    enum { N = 6 };
    run_state st;
    ck_assert_int_eq(run_state_init(&st, &m, 32, 8, &err), 0);
    float *logits = malloc((size_t)nv * sizeof *logits);
    int32_t got[N];
    run_greedy(&st, &m, prompt, 4, N, logits, got);
    /* the same by hand: whole sequence re-run, argmax of the last row */
    int32_t seq[4 + N];
    memcpy(seq, prompt, sizeof prompt);
    for (int i = 0; i < N; i++) {
        float *all = all_logits(&m, seq, 4 + i, 16);
        const float *row = all + (size_t)(3 + i) * nv;
        int32_t best = 0;
        for (int v = 1; v < nv; v++)
            if (row[v] > row[best])
                best = v;
        ck_assert_int_eq(got[i], best);
        seq[4 + i] = best;
        free(all);
    }
    free(logits);
    run_state_free(&st);
    run_model_free(&m);
    gguf_close(f);
}
END_TEST

START_TEST(test_verify_limits)
{
    const int32_t a[5] = { 1, 2, 3, 4, 5 }, b[5] = { 1, 2, 9, 4, 5 };
    ck_assert_int_eq(run_leading_agreement(a, b, 5), 2);
    ck_assert_int_eq(run_leading_agreement(a, a, 5), 5);
    ck_assert_int_eq(run_leading_agreement(a, b, 0), 0);
    ck_assert_int_eq(run_leading_agreement(b, a, 1), 1);

    run_eval_result r = { .ppl = 11.0, .ppl_base = 10.0, .mean_kld = 0.01, .same_top = 0.9 };
    char why[160] = "";
    run_verify_limits none = { -1, -1, -1 };
    ck_assert(run_verify_within(&r, &none, why, sizeof why));
    run_verify_limits at = { 0.01, 0.9, 1.1 }; /* limits are inclusive */
    ck_assert(run_verify_within(&r, &at, why, sizeof why));
    run_verify_limits kld = { 0.005, -1, -1 };
    ck_assert(!run_verify_within(&r, &kld, why, sizeof why));
    ck_assert_str_eq(why, "mean KLD 0.010000 is above --max-kld 0.005");
    run_verify_limits top = { -1, 0.95, -1 };
    ck_assert(!run_verify_within(&r, &top, why, sizeof why));
    ck_assert_str_eq(why, "top-1 agreement 0.9000 is below --min-top1 0.95");
    run_verify_limits ratio = { -1, -1, 1.05 };
    ck_assert(!run_verify_within(&r, &ratio, why, sizeof why));
    ck_assert_str_eq(why, "perplexity ratio 1.100000 is above --max-ppl-ratio 1.05");
    /* a NaN (a model whose logits blew up) never passes a limit */
    r.mean_kld = NAN;
    ck_assert(!run_verify_within(&r, &at, why, sizeof why));
    r.mean_kld = 0.0;
    r.ppl = INFINITY;
    ck_assert(!run_verify_within(&r, &at, why, sizeof why));
}
END_TEST

/* ---------------------------------------------------------------------------
 * Gemma 4's blocks
 */

/* ggml_gelu is GeGLU's table without the up projection: 0 at or below -10,
 * x itself at or above 10, else the table's entry for x rounded to f16. */
START_TEST(test_gemma4_gelu)
{
    gguf_half *t = malloc(65536 * sizeof *t);
    ck_assert_ptr_nonnull(t);
    run_gelu_table(t);
    enum { N = 2000 };
    float x[N], g[N], ones[N];
    for (int i = 0; i < N; i++) {
        x[i] = g[i] = -12.0f + 24.0f * (float)i / (float)N + 0.001f * (float)(i % 7);
        ones[i] = 1.0f;
    }
    run_gelu(x, N, t);
    run_geglu(g, ones, N, t);
    for (int i = 0; i < N; i++) {
        const float in = -12.0f + 24.0f * (float)i / (float)N + 0.001f * (float)(i % 7);
        ck_assert_msg(memcmp(&x[i], &g[i], sizeof x[i]) == 0, "gelu(%g) = %g, geglu with 1 %g",
                      in, x[i], g[i]);
        if (in <= -10.0f)
            ck_assert(x[i] == 0.0f);
        else if (in >= 10.0f)
            ck_assert(x[i] == in);
        else /* the tanh form within the table's f16 rounding */
            ck_assert_msg(fabs(x[i] - 0.5 * in * (1 + tanh(0.7978845608 * (in + 0.044715 * in * in * in)))) <=
                          2e-3 * (1 + fabs(in)), "gelu(%g) = %g", in, x[i]);
    }
    free(t);
}
END_TEST

/* An f32 product of one activation row (ggml_vec_dot_f32): the products
 * past the last whole 64 are each rounded, then added to the float sum
 * (Gemma 4's per-layer projection is 32 wide: all of it). A fused
 * multiply-add there gives other bits for some of these rows. */
START_TEST(test_gemma4_f32_tail)
{
    enum { ROWS = 64 };
    for (int pass = 0; pass < 2; pass++) {
        kern_force_scalar(pass == 0);
        for (int cols = 32; cols <= 96; cols += 64) {
            float *w = malloc((size_t)ROWS * cols * sizeof *w), *x = malloc((size_t)cols * sizeof *x);
            float y[ROWS];
            ck_assert(w && x);
            for (int i = 0; i < ROWS * cols; i++)
                w[i] = rnd();
            for (int i = 0; i < cols; i++)
                x[i] = rnd() * 3.0f;
            void *xq = malloc(kern_act_row_size(GGUF_DT_F32, cols));
            ck_assert_ptr_nonnull(xq);
            kern_quantize_act(GGUF_DT_F32, x, xq, cols);
            kern_matmul(GGUF_DT_F32, w, (size_t)cols * sizeof *w, ROWS, cols, xq, 1, y);
            for (int r = 0; r < ROWS; r++) {
                const float *wr = w + (size_t)r * cols;
                float lane[4][16] = { { 0 } };
                int i = 0;
                for (; i + 64 <= cols; i += 64)
                    for (int j = 0; j < 4; j++)
                        for (int l = 0; l < 16; l++)
                            lane[j][l] = fmaf(wr[i + 16 * j + l], x[i + 16 * j + l], lane[j][l]);
                float e[16];
                for (int l = 0; l < 16; l++)
                    e[l] = (lane[0][l] + lane[2][l]) + (lane[1][l] + lane[3][l]);
                float sum = sum16_reduce(e);
                for (; i < cols; i++) {
                    const float p = wr[i] * x[i];
                    sum += p;
                }
                ck_assert_msg(memcmp(&sum, &y[r], sizeof sum) == 0, "%s, %d columns, row %d: %.9g, "
                              "want %.9g", pass ? "vector" : "scalar", cols, r, y[r], sum);
            }
            free(xq);
            free(w);
            free(x);
        }
    }
    kern_force_scalar(false);
}
END_TEST

/* A small Gemma 4: 5 blocks sliding, sliding, full, sliding, full (window
 * 3), the last 2 sharing the K/V of blocks 1 and 2; sliding heads of 16
 * rotated whole by base 1e4, full heads of 32 without attn_v (K as V),
 * their first 8 of 32 dims rotated by base 1e6 (rope_freqs 1, then 1e30);
 * dense feed-forward 32 wide, 64 in the shared blocks, beside 4 experts of
 * 16 (2 used); per-layer inputs 8 wide; a layer output scale, a final
 * soft-cap. drop: a tensor to leave out; pl_width: the per-layer input
 * width written (0: none of its tensors either); shared_k: attn_k and its
 * norm in the shared blocks too, written last (the other weights stay). */
static const char *write_gemma4(const char *drop, int pl_width, bool shared_k)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/test_forward_g4_%d.gguf", test_tmpdir(), (int)getpid());
    enum { D = 32, L = 5, H = 2, HS = 16, HF = 32, V = 40, NE = 4, FE = 16 };
    const bool swa[L] = { true, true, false, true, false };
    const int32_t ff[L] = { 32, 32, 32, 64, 64 };
    const int npl = pl_width;
    gguf_writer *w = gguf_writer_new();
    ck_assert_ptr_nonnull(w);
    gguf_writer_set_str(w, GGUF_KEY_ARCHITECTURE, "gemma4");
    gguf_writer_set_u32(w, "gemma4.block_count", L);
    gguf_writer_set_u32(w, "gemma4.context_length", 64);
    gguf_writer_set_u32(w, "gemma4.embedding_length", D);
    gguf_writer_set_array(w, "gemma4.feed_forward_length", GGUF_VT_I32, ff, L);
    gguf_writer_set_u32(w, "gemma4.attention.head_count", H);
    gguf_writer_set_u32(w, "gemma4.attention.head_count_kv", 1);
    gguf_writer_set_f32(w, "gemma4.rope.freq_base", 1e6f);
    gguf_writer_set_f32(w, "gemma4.rope.freq_base_swa", 1e4f);
    gguf_writer_set_f32(w, "gemma4.attention.layer_norm_rms_epsilon", 1e-6f);
    gguf_writer_set_u32(w, "gemma4.expert_count", NE);
    gguf_writer_set_u32(w, "gemma4.expert_used_count", 2);
    gguf_writer_set_u32(w, "gemma4.attention.key_length", HF);
    gguf_writer_set_u32(w, "gemma4.attention.value_length", HF);
    gguf_writer_set_f32(w, "gemma4.final_logit_softcapping", 30.0f);
    gguf_writer_set_u32(w, "gemma4.attention.sliding_window", 3);
    gguf_writer_set_u32(w, "gemma4.attention.shared_kv_layers", 2);
    gguf_writer_set_u32(w, "gemma4.embedding_length_per_layer_input", (uint32_t)npl);
    gguf_writer_set_array(w, "gemma4.attention.sliding_window_pattern", GGUF_VT_BOOL, swa, L);
    gguf_writer_set_u32(w, "gemma4.attention.key_length_swa", HS);
    gguf_writer_set_u32(w, "gemma4.attention.value_length_swa", HS);
    gguf_writer_set_u32(w, "gemma4.expert_feed_forward_length", FE);
    gguf_writer_set_u32(w, "gemma4.rope.dimension_count", HF);
    gguf_writer_set_u32(w, "gemma4.rope.dimension_count_swa", HS);
    const char *toks[V];
    char buf[V][8];
    for (int i = 0; i < V; i++) {
        snprintf(buf[i], sizeof buf[i], "t%d", i);
        toks[i] = buf[i];
    }
    gguf_writer_set_str(w, GGUF_KEY_TOK_MODEL, "llama");
    gguf_writer_set_str_array(w, GGUF_KEY_TOK_TOKENS, toks, NULL, V);
    spec s = { .drop = drop };
    const uint32_t f32 = GGUF_DT_F32;
    add(w, &s, "rope_freqs.weight", 0, f32, HF / 2, 0);
    add(w, &s, GGUF_T_TOKEN_EMBD, 0, f32, D, V);
    if (npl) {
        add(w, &s, "per_layer_token_embd.weight", 0, f32, npl * L, V);
        add(w, &s, "per_layer_model_proj.weight", 0, f32, D, npl * L);
        add(w, &s, "per_layer_proj_norm.weight", 0, f32, npl, 0);
    }
    for (int l = 0; l < L; l++) {
        const int hd = swa[l] ? HS : HF;
        const bool own_kv = l < 3;
        add(w, &s, GGUF_T_ATTN_NORM, l, f32, D, 0);
        add(w, &s, GGUF_T_ATTN_Q, l, f32, D, H * hd);
        if (own_kv)
            add(w, &s, GGUF_T_ATTN_K, l, f32, D, hd);
        if (own_kv && swa[l])
            add(w, &s, GGUF_T_ATTN_V, l, f32, D, hd);
        add(w, &s, GGUF_T_ATTN_OUT, l, f32, H * hd, D);
        add(w, &s, GGUF_T_ATTN_Q_NORM, l, f32, hd, 0);
        if (own_kv)
            add(w, &s, GGUF_T_ATTN_K_NORM, l, f32, hd, 0);
        add(w, &s, GGUF_T_ATTN_POST_NORM, l, f32, D, 0);
        add(w, &s, "blk.%d.layer_output_scale.weight", l, f32, 1, 0);
        add(w, &s, GGUF_T_FFN_NORM, l, f32, D, 0);
        add(w, &s, GGUF_T_FFN_GATE, l, f32, D, ff[l]);
        add(w, &s, GGUF_T_FFN_UP, l, f32, D, ff[l]);
        add(w, &s, GGUF_T_FFN_DOWN, l, f32, ff[l], D);
        add(w, &s, GGUF_T_FFN_POST_NORM, l, f32, D, 0);
        add(w, &s, GGUF_T_FFN_GATE_INP, l, f32, D, NE);
        add(w, &s, "blk.%d.ffn_gate_inp.scale", l, f32, D, 0);
        add(w, &s, "blk.%d.pre_ffw_norm_2.weight", l, f32, D, 0);
        add(w, &s, "blk.%d.post_ffw_norm_1.weight", l, f32, D, 0);
        add(w, &s, "blk.%d.post_ffw_norm_2.weight", l, f32, D, 0);
        add3(w, &s, "blk.%d.ffn_gate_up_exps.weight", l, f32, D, 2 * FE, NE);
        add3(w, &s, GGUF_T_FFN_DOWN_EXPS, l, f32, FE, D, NE);
        add(w, &s, "blk.%d.ffn_down_exps.scale", l, f32, NE, 0);
        if (npl) {
            add(w, &s, "blk.%d.inp_gate.weight", l, f32, D, npl);
            add(w, &s, "blk.%d.proj.weight", l, f32, npl, D);
            add(w, &s, "blk.%d.post_norm.weight", l, f32, D, 0);
        }
    }
    add(w, &s, GGUF_T_OUTPUT_NORM, 0, f32, D, 0);
    for (int l = 3; shared_k && l < L; l++) {
        add(w, &s, GGUF_T_ATTN_K, l, f32, D, swa[l] ? HS : HF);
        add(w, &s, GGUF_T_ATTN_K_NORM, l, f32, swa[l] ? HS : HF, 0);
    }
    gguf_error err;
    ck_assert_msg(gguf_writer_begin(w, path, &err) == 0, "%s", err.msg);
    for (uint64_t i = 0; i < gguf_writer_n_tensors(w); i++) {
        const uint64_t n = gguf_writer_tensor_nbytes(w, i) / 4;
        float *v = malloc(n * sizeof *v);
        ck_assert_ptr_nonnull(v);
        /* rope_freqs: proportional rope; norms and scales near 1; weights
         * around 0, the embeddings larger (they are scaled down by the
         * norms, not up) */
        for (uint64_t j = 0; j < n; j++)
            v[j] = i == 0 ? (j < 4 ? 1.0f : 1e30f) : n <= (uint64_t)D ? 1.0f + rnd() : rnd() * 2.0f;
        ck_assert_msg(gguf_writer_write_tensor(w, v, n * 4, &err) == 0, "%s", err.msg);
        free(v);
    }
    ck_assert_msg(gguf_writer_finish(w, &err) == 0, "%s", err.msg);
    gguf_writer_free(w);
    return path;
}

/* The small Gemma 4 loads with its blocks' geometry, and runs the same in
 * one batch, in batches of 3 and token by token (the products' order
 * differs: within 1e-5), and vector and scalar give the same bits. */
static void check_gemma4(int pl_width)
{
    gguf_error err;
    gguf_file *f = gguf_open(write_gemma4(NULL, pl_width, false), 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    ck_assert_msg(gguf_model_validate(f, &err) == 0, "%s", err.msg);
    run_model m;
    ck_assert_msg(run_model_load(&m, f, &err) == 0, "%s", err.msg);
    const int want_hd[5] = { 16, 16, 32, 16, 32 }, want_kv[5] = { 0, 1, 2, 1, 2 };
    const int want_ff[5] = { 32, 32, 32, 64, 64 }, want_rot[5] = { 16, 16, 32, 16, 32 };
    for (int il = 0; il < 5; il++) {
        ck_assert_int_eq(m.layers[il].head_dim, want_hd[il]);
        ck_assert_int_eq(m.layers[il].q_dim, 2 * want_hd[il]);
        ck_assert_int_eq(m.layers[il].n_rot, want_rot[il]);
        ck_assert_int_eq(m.layers[il].n_ff, want_ff[il]);
        ck_assert_int_eq(m.layers[il].kv_layer, want_kv[il]);
        ck_assert_int_eq(m.layers[il].kv_slot, want_kv[il]);
        ck_assert(run_layer_is_swa(&m, il) == (want_hd[il] == 16));
        ck_assert(m.layers[il].gate_up_exps.data && m.layers[il].out_scale);
        ck_assert((m.layers[il].pl_gate.data != NULL) == (pl_width > 0));
    }
    ck_assert((m.pl_tok_embd.data != NULL) == (pl_width > 0));
    enum { N = 12 };
    int32_t t[N];
    for (int i = 0; i < N; i++)
        t[i] = (int32_t)((i * 7 + 3) % 40);
    const int nv = m.hp.n_vocab;
    float *batch = all_logits(&m, t, N, 16), *steps = all_logits(&m, t, N, 1);
    run_state st;
    ck_assert_int_eq(run_state_init(&st, &m, 32, 3, &err), 0);
    float *last = malloc(2 * (size_t)nv * sizeof *last);
    ck_assert_ptr_nonnull(last);
    run_forward(&st, &m, t, N, 0, N - 2, last);
    /* a batch's products add in another order than one row's; each f16
     * rounding (the queries, keys, probabilities, every GELU input) can
     * then land on the next f16: within 3e-3 of the row's largest logit
     * (measured 5.1e-4) */
    for (int r = 0; r < N; r++) {
        float mx = 0;
        for (int v = 0; v < nv; v++)
            mx = fmaxf(mx, fabsf(steps[r * nv + v]));
        for (int v = 0; v < nv; v++) {
            const int i = r * nv + v;
            ck_assert(isfinite(batch[i]));
            ck_assert_msg(fabsf(batch[i] - steps[i]) <= 3e-3f * mx, "row %d col %d: %g in one "
                          "batch, %g token by token", r, v, batch[i], steps[i]);
            if (r >= N - 2)
                ck_assert_msg(fabsf(last[i - (N - 2) * nv] - steps[i]) <= 3e-3f * mx, "row %d col "
                              "%d: %g in batches of 3, %g token by token", r, v,
                              last[i - (N - 2) * nv], steps[i]);
        }
    }
    run_state_free(&st);
    free(last);
    for (int n_batch = 1; n_batch <= N; n_batch += N - 1) {
        run_force_scalar(true);
        float *want = all_logits(&m, t, N, n_batch);
        run_force_scalar(false);
        float *got = all_logits(&m, t, N, n_batch);
        same_bits(want, got, N * nv, "gemma4 logits", pl_width, n_batch);
        free(want);
        free(got);
    }
    free(batch);
    free(steps);
    run_model_free(&m);
    gguf_close(f);
}

START_TEST(test_gemma4_forward)
{
    check_gemma4(8);
    check_gemma4(0); /* without per-layer inputs */
}
END_TEST

/* attn_k in a block that shares another's K/V loads and changes nothing
 * (llama.cpp loads it and does not use it). */
START_TEST(test_gemma4_shared_k_unused)
{
    const int32_t t[6] = { 1, 5, 9, 30, 2, 39 };
    float *logits[2];
    for (int k = 0; k < 2; k++) {
        const uint32_t seed = lcg;
        gguf_error err;
        gguf_file *f = gguf_open(write_gemma4(NULL, 8, k == 1), 0, &err);
        ck_assert_msg(f != NULL, "%s", err.msg);
        ck_assert_msg(gguf_model_validate(f, &err) == 0, "%s", err.msg);
        run_model m;
        ck_assert_msg(run_model_load(&m, f, &err) == 0, "%s", err.msg);
        ck_assert(m.layers[3].wk.data == NULL && m.layers[3].kv_layer == 1);
        logits[k] = all_logits(&m, t, 6, 16);
        run_model_free(&m);
        gguf_close(f);
        if (k == 0) /* the same draws again: the extra tensors draw last */
            lcg = seed;
    }
    for (int i = 0; i < 6 * 40; i++)
        ck_assert_msg(!memcmp(&logits[0][i], &logits[1][i], sizeof(float)), "logit %d: %a, with "
                      "attn_k in the shared blocks %a", i, logits[0][i], logits[1][i]);
    free(logits[0]);
    free(logits[1]);
}
END_TEST

/* A Gemma 4 missing what its blocks need is refused with one sentence. */
START_TEST(test_gemma4_rejects)
{
    static const struct { const char *drop, *msg; } cases[] = {
        { "blk.1.attn_k.weight", "blk.1.attn_k.weight" },
        { "blk.2.ffn_gate_inp.scale", "blk.2.ffn_gate_inp.scale" },
        { "blk.3.proj.weight", "blk.3.proj.weight" },
        { "per_layer_model_proj.weight", "per_layer_model_proj.weight" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        gguf_error err = { 0 };
        gguf_file *f = gguf_open(write_gemma4(cases[k].drop, 8, false), 0, &err);
        ck_assert_msg(f != NULL, "%s", err.msg);
        run_model m;
        const int rc = gguf_model_validate(f, &err) ? -1 : run_model_load(&m, f, &err);
        ck_assert_msg(rc == -1, "without %s the model loaded", cases[k].drop);
        ck_assert_msg(strstr(err.msg, cases[k].msg), "without %s: \"%s\"", cases[k].drop, err.msg);
        gguf_close(f);
    }
}
END_TEST

/* ---------------------------------------------------------------------------
 * LoRA adapters (lora.h)
 */

/* One pair of an adapter: NAME.lora_a [a0, a1, a2] and NAME.lora_b
 * [b0, b1, b2] (a2, b2 0: matrices), both of type. */
typedef struct {
    const char *base;
    int64_t a[3], b[3];
    uint32_t type;
    bool no_b; /* leave lora_b out */
} lora_pair_spec;

typedef struct {
    const char *arch, *general_type, *adapter_type; /* NULL: "llama", "adapter", "lora" */
    float alpha;        /* NAN: no adapter.lora.alpha */
    bool alpha_u32;     /* written as a u32 */
    bool alora;         /* an adapter.alora.invocation_tokens array */
    const char *extra;  /* a tensor of another name to add */
    const lora_pair_spec *pairs;
    int n_pairs;
} lora_spec;

/* Writes the adapter a to a temporary file (which = 0, 1: two names);
 * its values are rnd() · 0.5. */
static const char *write_adapter(const lora_spec *a, int which)
{
    static char path[2][512];
    snprintf(path[which], sizeof path[which], "%s/test_lora_%d_%d.gguf", test_tmpdir(),
             (int)getpid(), which);
    gguf_writer *w = gguf_writer_new();
    ck_assert_ptr_nonnull(w);
    gguf_writer_set_str(w, GGUF_KEY_ARCHITECTURE, a->arch ? a->arch : "llama");
    gguf_writer_set_str(w, "general.type", a->general_type ? a->general_type : "adapter");
    gguf_writer_set_str(w, "adapter.type", a->adapter_type ? a->adapter_type : "lora");
    if (a->alpha_u32)
        gguf_writer_set_u32(w, "adapter.lora.alpha", 16);
    else if (!isnan(a->alpha))
        gguf_writer_set_f32(w, "adapter.lora.alpha", a->alpha);
    if (a->alora) {
        const uint32_t toks[2] = { 5, 6 };
        gguf_writer_set_array(w, "adapter.alora.invocation_tokens", GGUF_VT_U32, toks, 2);
    }
    gguf_error err;
    for (int i = 0; i < a->n_pairs; i++) {
        const lora_pair_spec *p = &a->pairs[i];
        char name[96];
        snprintf(name, sizeof name, "%s.lora_a", p->base);
        ck_assert(gguf_writer_add_tensor(w, name, p->type, p->a[2] ? 3 : 2, p->a, &err) >= 0);
        if (p->no_b)
            continue;
        snprintf(name, sizeof name, "%s.lora_b", p->base);
        ck_assert(gguf_writer_add_tensor(w, name, p->type, p->b[2] ? 3 : 2, p->b, &err) >= 0);
    }
    if (a->extra) {
        const int64_t ne[1] = { 4 };
        ck_assert(gguf_writer_add_tensor(w, a->extra, GGUF_DT_F32, 1, ne, &err) >= 0);
    }
    ck_assert_msg(gguf_writer_begin(w, path[which], &err) == 0, "%s", err.msg);
    for (uint64_t i = 0; i < gguf_writer_n_tensors(w); i++) {
        const uint64_t n = gguf_writer_tensor_nbytes(w, i);
        uint8_t *bytes = calloc(n, 1);
        ck_assert_ptr_nonnull(bytes);
        for (uint64_t j = 0; j + 4 <= n; j += 4) {
            const float v = rnd() * 0.5f;
            memcpy(bytes + j, &v, 4);
        }
        ck_assert_msg(gguf_writer_write_tensor(w, bytes, n, &err) == 0, "%s", err.msg);
        free(bytes);
    }
    ck_assert_msg(gguf_writer_finish(w, &err) == 0, "%s", err.msg);
    gguf_writer_free(w);
    return path[which];
}

/* The dense test adapter for base_spec's llama (d 32, ff 64, kv 16, vocab
 * 40): q, k of block 0, down of block 1, the output, the embedding
 * (transposed); ranks 4, 2, 3, 2, 4. */
static const lora_pair_spec DENSE_PAIRS[] = {
    { "blk.0.attn_q.weight", { 32, 4 }, { 4, 32 }, GGUF_DT_F32, false },
    { "blk.0.attn_k.weight", { 32, 2 }, { 2, 16 }, GGUF_DT_F32, false },
    { "blk.1.ffn_down.weight", { 64, 3 }, { 3, 32 }, GGUF_DT_F32, false },
    { "output.weight", { 32, 2 }, { 2, 40 }, GGUF_DT_F32, false },
    { "token_embd.weight", { 4, 40 }, { 4, 32 }, GGUF_DT_F32, false },
};

/* The experts' adapter for moe_spec("llama") (4 experts of ff_exp 24):
 * v of block 1, every expert's gate of block 0 and down of block 1. */
static const lora_pair_spec MOE_PAIRS[] = {
    { "blk.1.attn_v.weight", { 32, 4 }, { 4, 16 }, GGUF_DT_F32, false },
    { "blk.0.ffn_gate_exps.weight", { 32, 3, 4 }, { 3, 24, 4 }, GGUF_DT_F32, false },
    { "blk.1.ffn_down_exps.weight", { 24, 2, 4 }, { 2, 32, 4 }, GGUF_DT_F32, false },
};

/* phi3's fused matrices (attn_qkv, ffn_up of gate | up) and its output. */
static const lora_pair_spec PHI3_PAIRS[] = {
    { "blk.0.attn_qkv.weight", { 32, 4 }, { 4, 64 }, GGUF_DT_F32, false },
    { "blk.1.ffn_up.weight", { 32, 2 }, { 2, 128 }, GGUF_DT_F32, false },
    { "output.weight", { 32, 2 }, { 2, 40 }, GGUF_DT_F32, false },
};

/* Gemma 3 (tied: no output or embedding pair): q (heads of 16) and gate. */
static const lora_pair_spec GEMMA_PAIRS[] = {
    { "blk.0.attn_q.weight", { 32, 4 }, { 4, 64 }, GGUF_DT_F32, false },
    { "blk.1.ffn_gate.weight", { 32, 2 }, { 2, 64 }, GGUF_DT_F32, false },
};

/* Qwen 3.5 (blocks 0, 2 Gated DeltaNet, 1, 3 gated attention): the delta
 * net's qkv, out and output gate, the gated q, a dense down. */
static const lora_pair_spec QWEN35_PAIRS[] = {
    { "blk.0.attn_qkv.weight", { 32, 4 }, { 4, 128 }, GGUF_DT_F32, false },
    { "blk.0.ssm_out.weight", { 64, 2 }, { 2, 32 }, GGUF_DT_F32, false },
    { "blk.2.attn_gate.weight", { 32, 3 }, { 3, 64 }, GGUF_DT_F32, false },
    { "blk.1.attn_q.weight", { 32, 4 }, { 4, 128 }, GGUF_DT_F32, false },
    { "blk.3.ffn_down.weight", { 64, 2 }, { 2, 32 }, GGUF_DT_F32, false },
};

/* Qwen 3.5 MoE: every expert's up, the shared expert's gate, a beta. */
static const lora_pair_spec QWEN35MOE_PAIRS[] = {
    { "blk.0.ffn_up_exps.weight", { 32, 2, 4 }, { 2, 24, 4 }, GGUF_DT_F32, false },
    { "blk.1.ffn_gate_shexp.weight", { 32, 2 }, { 2, 64 }, GGUF_DT_F32, false },
    { "blk.2.ssm_beta.weight", { 32, 2 }, { 2, 4 }, GGUF_DT_F32, false },
};

/* W + s · B A in double, rounded once to f32, in place of the F32 matrix
 * w (n_stack experts of it; embd: the embedding's transposed pair): what
 * merging the pair into the weights gives. The buffer is returned (owned). */
static float *merge_pair(run_matrix *w, const gguf_tensor *a, const gguf_tensor *b, float s,
                         int n_stack, bool embd)
{
    ck_assert_int_eq(w->type, GGUF_DT_F32);
    const int64_t rows = w->rows / n_stack, cols = w->cols, rank = b->ne[0];
    const float *A = (const float *)a->data, *B = (const float *)b->data;
    float *out = malloc((size_t)(w->rows * cols) * sizeof *out);
    ck_assert_ptr_nonnull(out);
    for (int e = 0; e < n_stack; e++)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < cols; c++) {
                double ba = 0;
                for (int64_t k = 0; k < rank; k++)
                    ba += embd ? (double)B[c * rank + k] * A[r * rank + k]
                               : (double)B[(e * rows + r) * rank + k] * A[(e * rank + k) * cols + c];
                const size_t i = (size_t)((e * rows + r) * cols + c);
                out[i] = (float)((double)((const float *)w->data)[i] + (double)s * ba);
            }
    w->data = out;
    w->packed = NULL;
    return out;
}

/* Logits of the 7-token prompt of check_batching (n_batch 16: one batch; 1:
 * token by token). */
static const int32_t LORA_PROMPT[7] = { 1, 5, 9, 30, 2, 39, 7 };

/* The largest |a - b| of each row of n over the row's largest |b|. */
static double row_rel_diff(const float *a, const float *b, int rows, int n)
{
    double worst = 0;
    for (int r = 0; r < rows; r++) {
        double md = 0, mx = 0;
        for (int i = 0; i < n; i++) {
            const double d = fabs((double)a[r * n + i] - b[r * n + i]);
            md = d > md ? d : md;
            mx = fabs(b[r * n + i]) > mx ? fabs(b[r * n + i]) : mx;
        }
        worst = md / mx > worst ? md / mx : worst;
    }
    return worst;
}

/* Runs a model of spec s with the adapter of pairs at scale (alpha 8)
 * against the same model with each pair merged into its weights in double
 * (merge_pair): the logits, one batch and token by token, agree within
 * 1e-6 of each row's largest (the products' roundings differ: W x + s·B(A x)
 * against (W + s·BA) x), and differ from the model's own by far more.
 * Dense llama (with the embedding and output), Mixtral-style experts,
 * phi3's fused matrices, Gemma 3, Qwen 3.5's Gated DeltaNet and gated
 * attention blocks, Qwen 3.5 MoE's experts and shared expert. */
static void check_lora_merged(spec s, const lora_pair_spec *pairs, int n_pairs)
{
    lcg = 4242;
    const char *mp = write_model(&s);
    gguf_error err;
    gguf_file *fa = gguf_open(mp, 0, &err), *fb = gguf_open(mp, 0, &err);
    ck_assert_msg(fa && fb, "%s", err.msg);
    run_model ma, mb, mc;
    ck_assert_msg(run_model_load(&ma, fa, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(run_model_load(&mb, fb, &err), 0);
    ck_assert_int_eq(run_model_load(&mc, fb, &err), 0);
    const lora_spec ls = { .arch = s.arch, .alpha = 8.0f, .pairs = pairs, .n_pairs = n_pairs };
    const char *ap = write_adapter(&ls, 0);
    const float user = 0.75f;
    run_lora_set set;
    ck_assert_msg(run_lora_attach(&set, &ma, fa, &ap, &user, 1, &err) == 0, "%s", err.msg);
    gguf_file *af = gguf_open(ap, 0, &err);
    ck_assert_ptr_nonnull(af);
    float *merged[8] = { 0 };
    for (int i = 0; i < n_pairs; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s.lora_a", pairs[i].base);
        const gguf_tensor *a = gguf_lookup_tensor(af, name);
        snprintf(name, sizeof name, "%s.lora_b", pairs[i].base);
        const gguf_tensor *b = gguf_lookup_tensor(af, name);
        const float sc = user * 8.0f / (float)b->ne[0];
        const bool embd = !strcmp(pairs[i].base, "token_embd.weight");
        int n_stack = 1;
        run_matrix *w = embd ? &mb.tok_embd
                             : run_model_matrix_of(&mb, gguf_lookup_tensor(fb, pairs[i].base), &n_stack);
        ck_assert_ptr_nonnull(w);
        merged[i] = merge_pair(w, a, b, sc, n_stack, embd);
    }
    const int nv = ma.hp.n_vocab;
    for (int nb = 16; nb >= 1; nb -= 15) {
        float *la = all_logits(&ma, LORA_PROMPT, 7, nb), *lb = all_logits(&mb, LORA_PROMPT, 7, nb);
        float *lc = all_logits(&mc, LORA_PROMPT, 7, nb);
        const double d = row_rel_diff(la, lb, 7, nv), own = row_rel_diff(la, lc, 7, nv);
        ck_assert_msg(d <= 1e-6, "%s, batch %d: runtime LoRA vs merged weights %g", s.arch, nb, d);
        ck_assert_msg(own > 1e-3, "%s, batch %d: the adapter changed the logits by %g only",
                      s.arch, nb, own);
        free(la);
        free(lb);
        free(lc);
    }
    for (int i = 0; i < n_pairs; i++)
        free(merged[i]);
    gguf_close(af);
    run_lora_free(&set, &ma);
    run_model_free(&ma);
    run_model_free(&mb);
    run_model_free(&mc);
    gguf_close(fa);
    gguf_close(fb);
}

START_TEST(test_lora_merged)
{
    check_lora_merged(base_spec(), DENSE_PAIRS, 5);
    check_lora_merged(moe_spec("llama"), MOE_PAIRS, 3);
    check_lora_merged(phi3_spec(), PHI3_PAIRS, 3);
    check_lora_merged(gemma_spec("gemma3"), GEMMA_PAIRS, 2);
    check_lora_merged(hybrid_spec("qwen35"), QWEN35_PAIRS, 5);
    check_lora_merged(hybrid_spec("qwen35moe"), QWEN35MOE_PAIRS, 3);
}
END_TEST

/* Logits of LORA_PROMPT with the adapters paths at scales (n of them) on a
 * fresh load of the model at mp; one batch (nb 16) or token by token. */
typedef struct {
    int rank;       /* run_model.lora_rank */
    float wq_scale; /* block 0's wq's first pair's scale; NAN: no pair */
} lora_seen;

static float *lora_logits(const char *mp, const char *const *paths, const float *scales, int n,
                          int nb, lora_seen *seen)
{
    gguf_error err;
    gguf_file *f = gguf_open(mp, 0, &err);
    ck_assert_ptr_nonnull(f);
    run_model m;
    run_lora_set set;
    ck_assert_int_eq(run_model_load(&m, f, &err), 0);
    ck_assert_msg(run_lora_attach(&set, &m, f, paths, scales, n, &err) == 0, "%s", err.msg);
    float *l = all_logits(&m, LORA_PROMPT, 7, nb);
    if (seen)
        *seen = (lora_seen){ m.lora_rank, m.layers[0].wq.lora ? m.layers[0].wq.lora->scale : NAN };
    run_lora_free(&set, &m);
    run_model_free(&m);
    gguf_close(f);
    return l;
}

/* Scale 0 leaves the model's bits (the adapter is checked, not applied);
 * adapter.lora.alpha scales by alpha / rank: alpha 16 at 0.25 over rank 4
 * gives alpha 0 at 1, bit for bit; the scalar reference and the vector
 * paths give the same bits with adapters on (dense and experts), one batch
 * and token by token; two adapters are the sum of both. */
START_TEST(test_lora_scales)
{
    static const lora_pair_spec rank4[] = {
        { "blk.0.attn_q.weight", { 32, 4 }, { 4, 32 }, GGUF_DT_F32, false },
        { "blk.1.ffn_up.weight", { 32, 4 }, { 4, 64 }, GGUF_DT_F32, false },
    };
    spec s = base_spec();
    lcg = 99;
    const char *mp = write_model(&s);
    const int nv = 40, n = 7 * nv;
    for (int nb = 16; nb >= 1; nb -= 15) {
        float *base = lora_logits(mp, NULL, NULL, 0, nb, NULL);
        lcg = 5;
        lora_spec a16 = { .alpha = 16.0f, .pairs = rank4, .n_pairs = 2 };
        const char *p16 = write_adapter(&a16, 0);
        lora_seen seen;
        const float zero = 0.0f, quarter = 0.25f, one = 1.0f;
        float *z = lora_logits(mp, &p16, &zero, 1, nb, &seen);
        ck_assert_int_eq(seen.rank, 0);
        ck_assert(isnan(seen.wq_scale));
        ck_assert_msg(!memcmp(z, base, (size_t)n * sizeof *z), "scale 0 changed the logits");
        float *q = lora_logits(mp, &p16, &quarter, 1, nb, &seen);
        ck_assert_int_eq(seen.rank, 4);
        ck_assert(seen.wq_scale == 1.0f);
        lcg = 5;
        lora_spec a0 = { .alpha = 0.0f, .pairs = rank4, .n_pairs = 2 };
        const char *p0 = write_adapter(&a0, 1);
        float *o = lora_logits(mp, &p0, &one, 1, nb, NULL);
        ck_assert_msg(!memcmp(q, o, (size_t)n * sizeof *q), "alpha 16 / rank 4 at 0.25 is not 1");
        ck_assert_msg(memcmp(q, base, (size_t)n * sizeof *q), "the adapter changed nothing");
        /* two adapters at 0.5 each: the one at 1, up to rounding */
        const char *two[2] = { p0, p0 };
        const float halves[2] = { 0.5f, 0.5f };
        float *h = lora_logits(mp, two, halves, 2, nb, NULL);
        ck_assert(row_rel_diff(h, o, 7, nv) <= 1e-5);
        free(base);
        free(z);
        free(q);
        free(o);
        free(h);
    }
    /* the scalar reference defines the bits: dense and experts */
    for (int k = 0; k < 2; k++) {
        spec sk = k ? moe_spec("llama") : base_spec();
        lcg = 31;
        const char *mk = write_model(&sk);
        lora_spec ls = { .alpha = 8.0f, .pairs = k ? MOE_PAIRS : DENSE_PAIRS, .n_pairs = k ? 3 : 5 };
        const char *ap = write_adapter(&ls, 0);
        const float sc = 1.5f;
        for (int nb = 16; nb >= 1; nb -= 15) {
            float *vec = lora_logits(mk, &ap, &sc, 1, nb, NULL);
            run_force_scalar(true);
            kern_force_scalar(true);
            float *sca = lora_logits(mk, &ap, &sc, 1, nb, NULL);
            run_force_scalar(false);
            kern_force_scalar(false);
            ck_assert_msg(!memcmp(vec, sca, (size_t)n * sizeof *vec),
                          "%s batch %d: the vector paths part from the scalar with an adapter",
                          sk.arch, nb);
            free(vec);
            free(sca);
        }
    }
}
END_TEST

/* B's products side by side over B transposed (lora_b_product, f32 B of
 * rank < 64) give kern_matmul's bits: the logits with them and with every
 * pair's transposed copy taken away (the kernels then multiply by B) are
 * the same, one batch and token by token; ranks 2, 3, 4 and 16 (16: the
 * batch order in one batch, the kernels either way), the embedding's too. */
START_TEST(test_lora_b_side_by_side)
{
    static const lora_pair_spec pairs[] = {
        { "blk.0.attn_q.weight", { 32, 4 }, { 4, 32 }, GGUF_DT_F32, false },
        { "blk.0.attn_k.weight", { 32, 2 }, { 2, 16 }, GGUF_DT_F32, false },
        { "blk.1.ffn_down.weight", { 64, 3 }, { 3, 32 }, GGUF_DT_F32, false },
        { "blk.1.ffn_up.weight", { 32, 16 }, { 16, 64 }, GGUF_DT_F32, false },
        { "output.weight", { 32, 2 }, { 2, 40 }, GGUF_DT_F32, false },
        { "token_embd.weight", { 4, 40 }, { 4, 32 }, GGUF_DT_F32, false },
    };
    spec s = base_spec();
    lcg = 77;
    const char *mp = write_model(&s);
    const lora_spec ls = { .alpha = 8.0f, .pairs = pairs, .n_pairs = 6 };
    const char *ap = write_adapter(&ls, 0);
    gguf_error err;
    gguf_file *f = gguf_open(mp, 0, &err);
    ck_assert_ptr_nonnull(f);
    run_model m;
    run_lora_set set;
    const float sc = 1.25f;
    ck_assert_int_eq(run_model_load(&m, f, &err), 0);
    ck_assert_msg(run_lora_attach(&set, &m, f, &ap, &sc, 1, &err) == 0, "%s", err.msg);
    float *kept[8] = { 0 };
    int n_bt = 0;
    for (int nb = 16; nb >= 1; nb -= 15) {
        float *side = all_logits(&m, LORA_PROMPT, 7, nb);
        for (size_t i = 0; i < set.n_pairs; i++) {
            kept[i] = set.pairs[i].bt;
            n_bt += kept[i] != NULL;
            set.pairs[i].bt = NULL;
        }
        float *kern = all_logits(&m, LORA_PROMPT, 7, nb);
        for (size_t i = 0; i < set.n_pairs; i++)
            set.pairs[i].bt = kept[i];
        ck_assert_msg(!memcmp(side, kern, 7 * 40 * sizeof *side),
                      "batch %d: B side by side parts from the kernels", nb);
        free(side);
        free(kern);
    }
    ck_assert_int_eq(n_bt, 2 * 6); /* every pair had its copy (f32, rank < 64) */
    run_lora_free(&set, &m);
    run_model_free(&m);
    gguf_close(f);
}
END_TEST

static void no_b(lora_pair_spec *p) { p->no_b = true; }
static void wide_a(lora_pair_spec *p) { p->a[0] = 33; }
static void rank_mismatch(lora_pair_spec *p) { p->b[0] = 3; }
static void other_tensor(lora_pair_spec *p) { p->base = "blk.7.attn_q.weight"; }
static void i32_pair(lora_pair_spec *p) { p->type = GGUF_DT_I32; }
static void flat_a(lora_pair_spec *p) { p->a[2] = 2; }

/* Each kind of bad adapter is refused with one sentence that begins with
 * its path, and the model is left without pairs. */
START_TEST(test_lora_rejects)
{
    static const struct {
        const char *arch, *gtype, *atype, *extra;
        bool alpha_u32, alora;
        void (*pair)(lora_pair_spec *);
        bool tied_model;
        const char *msg;
    } cases[] = {
        { "qwen2", NULL, NULL, NULL, false, false, NULL, false, "an adapter for \"qwen2\", the model is llama" },
        { NULL, "model", NULL, NULL, false, false, NULL, false, "not a LoRA adapter: general.type is \"model\"" },
        { NULL, NULL, "ia3", NULL, false, false, NULL, false, "adapter.type is \"ia3\", not \"lora\"" },
        { NULL, NULL, NULL, NULL, true, false, NULL, false, "adapter.lora.alpha is not an f32" },
        { NULL, NULL, NULL, NULL, false, true, NULL, false, "activated LoRA" },
        { NULL, NULL, NULL, "blk.0.attn_q.scale", false, false, NULL, false, "neither NAME.lora_a nor NAME.lora_b" },
        { NULL, NULL, NULL, NULL, false, false, no_b, false, "has no blk.0.attn_q.weight.lora_b beside it" },
        { NULL, NULL, NULL, NULL, false, false, wide_a, false, "do not fit blk.0.attn_q.weight [32, 32, 1, 1]" },
        { NULL, NULL, NULL, NULL, false, false, rank_mismatch, false, "do not fit" },
        { NULL, NULL, NULL, NULL, false, false, flat_a, false, "do not fit" },
        { NULL, NULL, NULL, NULL, false, false, other_tensor, false, "the model has no blk.7.attn_q.weight" },
        { NULL, NULL, NULL, NULL, false, false, i32_pair, false, "which gguf-run cannot multiply" },
        { NULL, NULL, NULL, NULL, false, false, NULL, true, "(tied)" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        spec s = base_spec();
        s.tied = cases[k].tied_model;
        run_model m;
        gguf_file *f;
        gguf_error err;
        ck_assert_int_eq(load(&s, &m, &f, &err), 0);
        lora_pair_spec pairs[2] = { DENSE_PAIRS[0], DENSE_PAIRS[4] };
        if (cases[k].pair)
            cases[k].pair(&pairs[0]);
        const lora_spec ls = { .arch = cases[k].arch, .general_type = cases[k].gtype,
                               .adapter_type = cases[k].atype, .alpha = 16.0f,
                               .alpha_u32 = cases[k].alpha_u32, .alora = cases[k].alora,
                               .extra = cases[k].extra, .pairs = pairs,
                               .n_pairs = cases[k].tied_model ? 2 : 1 };
        const char *ap = write_adapter(&ls, 0);
        const float one = 1.0f;
        run_lora_set set;
        ck_assert_int_eq(run_lora_attach(&set, &m, f, &ap, &one, 1, &err), -1);
        ck_assert_msg(!strncmp(err.msg, ap, strlen(ap)) && strstr(err.msg, cases[k].msg),
                      "case %zu: \"%s\" does not name the file and say \"%s\"", k, err.msg,
                      cases[k].msg);
        ck_assert_ptr_null(m.layers[0].wq.lora);
        ck_assert_ptr_null(m.lora_embd);
        ck_assert_int_eq(m.lora_rank, 0);
        run_lora_free(&set, &m);
        run_model_free(&m);
        gguf_close(f);
    }
    /* not there; not a GGUF (the model's vocabulary as text) */
    spec s = base_spec();
    run_model m;
    gguf_file *f;
    gguf_error err;
    ck_assert_int_eq(load(&s, &m, &f, &err), 0);
    char missing[600];
    snprintf(missing, sizeof missing, "%s/no-such-adapter.gguf", test_tmpdir());
    const char *mp = missing;
    const float one = 1.0f;
    run_lora_set set;
    ck_assert_int_eq(run_lora_attach(&set, &m, f, &mp, &one, 1, &err), -1);
    ck_assert_msg(!strncmp(err.msg, missing, strlen(missing)), "%s", err.msg);
    /* the model itself given as an adapter */
    const char *self = gguf_shard_path(f, 0);
    ck_assert_int_eq(run_lora_attach(&set, &m, f, &self, &one, 1, &err), -1);
    ck_assert_msg(strstr(err.msg, "not a LoRA adapter: general.type is absent"), "%s", err.msg);
    run_model_free(&m);
    gguf_close(f);
}
END_TEST

/* Routes the 8 logits (run_route_biased) and checks the two experts
 * chosen and their weights (within tol). */
static void route_case(const float *logits, const float *bias, const run_route_params *rp,
                       int e0, int e1, float w0, float w1, float tol)
{
    float p[8], scratch[8 + 8], w[2];
    int sel[2];
    memcpy(p, logits, sizeof p);
    run_route_biased(p, bias, rp, scratch, sel, w);
    ck_assert_int_eq(sel[0], e0);
    ck_assert_int_eq(sel[1], e1);
    ck_assert_float_eq_tol(w[0], w0, tol);
    ck_assert_float_eq_tol(w[1], w1, tol);
}

/* ---------------------------------------------------------------------------
 * Multi-head latent attention (deepseek2)
 */

/* The small DeepSeek-V3 loads with its latent widths and the scores'
 * scale (1/√16 without YaRN; with it mscale² / √16, mscale llama.cpp's
 * attn_factor · (1 + 0.1 ln 4) · (1 + 0.1 · 1 · ln 4) in its float
 * order), a dense block 0 and a routed block 1; a prompt gives the same logits in one
 * batch, token by token and in batches of 3, with q through its latent or
 * one attn_q, with and without YaRN; scalar and vector give the same bits. */
START_TEST(test_mla_model)
{
    spec s = mla_spec();
    run_model m;
    gguf_file *f;
    gguf_error err;
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    ck_assert(m.hp.mla);
    ck_assert_int_eq(m.hp.kv_lora, 16);
    ck_assert_int_eq(m.hp.q_lora, 12);
    ck_assert_int_eq(m.hp.mla_nope, 8);
    ck_assert_int_eq(m.hp.mla_v, 8);
    ck_assert_int_eq(m.hp.head_dim, 24); /* the cached row: latent + rope key */
    ck_assert_float_eq(m.hp.mla_kq_scale, 0.25f);
    ck_assert_ptr_null(m.layers[0].gate_inp.data);
    ck_assert_ptr_nonnull(m.layers[1].gate_inp.data);
    ck_assert_ptr_nonnull(m.layers[1].exp_probs_b);
    ck_assert_int_eq(m.hp.n_group, 2);
    ck_assert(m.hp.weights_norm);
    run_state st;
    ck_assert_int_eq(run_state_init(&st, &m, 32, 4, &err), 0);
    ck_assert_uint_eq(st.kv_dim, 24); /* one row per token and block: K only */
    run_state_free(&st);
    run_model_free(&m);
    gguf_close(f);
    check_batching(s);
    check_simd_forward(s);
    s.rope_scaling = "yarn";
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    ck_assert(m.hp.rope_yarn);
    const float l4 = logf(4.0f), a = (0.1f * l4 + 1.0f) / (0.1f * l4 + 1.0f) *
                                     (1.0f / (1.0f + 0.1f * l4));
    const float ms = a * (1.0f + 0.1f * l4) * (1.0f + 0.1f * 1.0f * l4);
    ck_assert_float_eq(m.hp.mla_kq_scale, 1.0f * ms * ms / sqrtf(16.0f));
    run_model_free(&m);
    gguf_close(f);
    check_batching(s);
    check_simd_forward(s);
    s.mla_q_lora = 0;
    check_batching(s);
}
END_TEST

/* y (rows) = W x in double, W an f32 matrix (rows × cols). */
static void ref_mv(double *y, const float *w, int rows, int cols, const double *x)
{
    for (int r = 0; r < rows; r++) {
        double sum = 0;
        for (int c = 0; c < cols; c++)
            sum += (double)w[(size_t)r * cols + c] * x[c];
        y[r] = sum;
    }
}

static void ref_rms(double *y, const double *x, const float *g, int n, double eps)
{
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += x[i] * x[i];
    const double sc = 1.0 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++)
        y[i] = x[i] * sc * g[i];
}

/* Rotates the n_rot dims at x by pos (ggml's NORM pairs, base 10000). */
static void ref_rope(double *x, int n_rot, int pos)
{
    for (int i = 0; i < n_rot / 2; i++) {
        const double th = pos * pow(10000.0, -2.0 * i / n_rot), c = cos(th), sn = sin(th);
        const double a = x[2 * i], b = x[2 * i + 1];
        x[2 * i] = a * c - b * sn;
        x[2 * i + 1] = a * sn + b * c;
    }
}

/* The logits of every position of a one-block dense deepseek2 in double,
 * its attention in the expanded form (DeepSeek's own): each head's keys
 * k_b_h^T latent | k_rope and values v_b_h latent, attended as multi-head
 * attention scaled by 1/√(nope + rope). */
static double *mla_expanded_logits(const run_model *m, const int32_t *t, int n)
{
    const run_hparams *hp = &m->hp;
    const run_layer *l = &m->layers[0];
    const int d = hp->n_embd, H = hp->n_head, nope = hp->mla_nope, rot = hp->n_rot,
              kl = hp->kv_lora, vh = hp->mla_v, qk = nope + rot, ql = hp->q_lora, ff = hp->n_ff,
              nv = hp->n_vocab;
    double *x = calloc((size_t)n * d, sizeof *x), *q = calloc((size_t)n * H * qk, sizeof *q),
           *k = calloc((size_t)n * H * qk, sizeof *k), *v = calloc((size_t)n * H * vh, sizeof *v),
           *out = calloc((size_t)n * nv, sizeof *out);
    double h[64], qa[64], kv[64], lat[64], o[64], y[64], g[128], u[128], att[64];
    ck_assert(d <= 64 && ql <= 64 && kl + rot <= 64 && H * vh <= 64 && ff <= 128 && n <= 64);
    const float *emb = m->tok_embd.data;
    for (int p = 0; p < n; p++) {
        double *xp = x + (size_t)p * d, *qp = q + (size_t)p * H * qk;
        for (int i = 0; i < d; i++)
            xp[i] = emb[(size_t)t[p] * d + i];
        ref_rms(h, xp, l->attn_norm, d, hp->rms_eps);
        ref_mv(qa, l->wq_a.data, ql, d, h);
        ref_rms(qa, qa, l->q_a_norm, ql, hp->rms_eps);
        ref_mv(qp, l->wq_b.data, H * qk, ql, qa);
        ref_mv(kv, l->wkv_a_mqa.data, kl + rot, d, h);
        ref_rope(kv + kl, rot, p);
        ref_rms(lat, kv, l->kv_a_norm, kl, hp->rms_eps);
        for (int hh = 0; hh < H; hh++) {
            ref_rope(qp + hh * qk + nope, rot, p);
            const float *kb = (const float *)l->wk_b.data + (size_t)hh * kl * nope;
            double *kp = k + ((size_t)p * H + hh) * qk;
            for (int i = 0; i < nope; i++) {
                double sum = 0;
                for (int r = 0; r < kl; r++)
                    sum += (double)kb[(size_t)r * nope + i] * lat[r];
                kp[i] = sum;
            }
            memcpy(kp + nope, kv + kl, (size_t)rot * sizeof *kp);
            ref_mv(v + ((size_t)p * H + hh) * vh,
                   (const float *)l->wv_b.data + (size_t)hh * vh * kl, vh, kl, lat);
        }
    }
    const double scale = 1.0 / sqrt((double)qk);
    for (int p = 0; p < n; p++) {
        double *xp = x + (size_t)p * d;
        for (int hh = 0; hh < H; hh++) {
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j <= p; j++) {
                double sc = 0;
                for (int i = 0; i < qk; i++)
                    sc += q[((size_t)p * H + hh) * qk + i] * k[((size_t)j * H + hh) * qk + i];
                att[j] = sc * scale;
                mx = att[j] > mx ? att[j] : mx;
            }
            for (int j = 0; j <= p; j++)
                sum += att[j] = exp(att[j] - mx);
            for (int i = 0; i < vh; i++) {
                double acc = 0;
                for (int j = 0; j <= p; j++)
                    acc += att[j] / sum * v[((size_t)j * H + hh) * vh + i];
                o[hh * vh + i] = acc;
            }
        }
        ref_mv(y, l->wo.data, d, H * vh, o);
        for (int i = 0; i < d; i++)
            xp[i] += y[i];
        ref_rms(h, xp, l->ffn_norm, d, hp->rms_eps);
        ref_mv(g, l->w_gate.data, ff, d, h);
        ref_mv(u, l->w_up.data, ff, d, h);
        for (int i = 0; i < ff; i++)
            g[i] = g[i] / (1 + exp(-g[i])) * u[i];
        ref_mv(y, l->w_down.data, d, ff, g);
        for (int i = 0; i < d; i++)
            xp[i] += y[i];
        ref_rms(h, xp, m->output_norm, d, hp->rms_eps);
        ref_mv(out + (size_t)p * nv, m->output.data, nv, d, h);
    }
    free(x);
    free(q);
    free(k);
    free(v);
    return out;
}

/* The absorbed form gguf-run runs (llama.cpp's: q_nope through k_b into
 * the latent's space, the latent cached once as f16 and attended as one
 * K/V head, v_b after the attention) against the expanded form in double:
 * the logits of every position within 5e-4 of the row's largest (measured
 * 5.1e-5: the f16 cache, q and probabilities), in one batch and token by
 * token. A block that dropped the rope key, the latent's norm or v_b would
 * be off by far more. */
START_TEST(test_mla_expanded)
{
    spec s = mla_spec();
    s.layers = 1;
    run_model m;
    gguf_file *f;
    gguf_error err;
    ck_assert_msg(load(&s, &m, &f, &err) == 0, "%s", err.msg);
    enum { N = 20 };
    int32_t t[N];
    for (int i = 0; i < N; i++)
        t[i] = (int32_t)((i * 11 + 5) % s.vocab);
    const int nv = m.hp.n_vocab;
    double *want = mla_expanded_logits(&m, t, N), worst = 0;
    for (int n_batch = 1; n_batch <= N; n_batch += N - 1) {
        float *got = all_logits(&m, t, N, n_batch);
        for (int p = 0; p < N; p++) {
            double mx = 0, md = 0;
            for (int i = 0; i < nv; i++) {
                const double w = want[(size_t)p * nv + i], g = got[(size_t)p * nv + i];
                mx = fabs(w) > mx ? fabs(w) : mx;
                md = fabs(w - g) > md ? fabs(w - g) : md;
            }
            worst = md / mx > worst ? md / mx : worst;
            ck_assert_msg(md <= 5e-4 * mx, "position %d (batch %d): %g of %g", p, n_batch, md, mx);
        }
        free(got);
    }
    ck_assert(worst > 0); /* the f16 cache does round */
    free(want);
    run_model_free(&m);
    gguf_close(f);
}
END_TEST

/* The entry of im named name, or NULL. */
static const run_importance_entry *entry_named(const run_importance *im, const char *name)
{
    for (int i = 0; i < im->n; i++)
        if (!strcmp(im->e[i].name, name))
            return &im->e[i];
    return NULL;
}

/* --imatrix on the small DeepSeek-V3: attn_k_b and attn_v_b are one row
 * of every head's inputs side by side and one count (llama-imatrix's 3-D
 * mul_mat: [nope × heads], [kv_lora × heads]), the experts a row and count
 * each; every product of a chunk of 16 counted, every sum positive. */
START_TEST(test_mla_importance)
{
    spec sp = mla_spec();
    run_model m;
    gguf_file *f;
    int32_t t[COLLECT_N];
    run_state st;
    run_importance im;
    collect_chunks(&sp, &m, &f, &st, &im, t, true);
    const struct { const char *name; int ncols, n_mat; } want[] = {
        { "blk.0.attn_k_b.weight", 8 * 2, 1 },   { "blk.1.attn_v_b.weight", 16 * 2, 1 },
        { "blk.0.attn_q_b.weight", 12, 1 },      { "blk.0.attn_kv_a_mqa.weight", 32, 1 },
        { "blk.1.attn_output.weight", 2 * 8, 1 }, { "blk.1.ffn_gate_exps.weight", 32, 4 },
        { "blk.0.ffn_down.weight", 64, 1 },
    };
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        const run_importance_entry *e = entry_named(&im, want[k].name);
        ck_assert_msg(e != NULL, "no entry %s", want[k].name);
        ck_assert_int_eq(e->ncols, want[k].ncols);
        ck_assert_int_eq(e->n_mat, want[k].n_mat);
        if (want[k].n_mat == 1) {
            ck_assert_int_eq((int)e->count, 3 * COLLECT_CTX);
            ck_assert_int_eq(e->ncall, 3);
            for (int j = 0; j < e->ncols; j++)
                ck_assert(isfinite(e->sum[j]) && e->sum[j] > 0);
        }
    }
    run_importance_free(&im);
    run_state_free(&st);
    run_model_free(&m);
    gguf_close(f);
}
END_TEST

static void mla_q_lora_0(spec *s) { s->mla_key = GGUF_KEY_Q_LORA_RANK; s->mla_key_val = 0; }
static void mla_no_q_b(spec *s) { s->drop = "blk.1.attn_q_b.weight"; }
static void mla_both_q(spec *s) { s->blk_extra = GGUF_T_ATTN_Q; }
static void mla_no_q(spec *s) { s->mla_q_lora = 0; s->drop = "blk.0.attn_q.weight"; }
static void mla_kv_lora(spec *s) { s->mla_key = GGUF_KEY_KV_LORA_RANK; s->mla_key_val = 12; }
static void mla_no_nope(spec *s) { s->mla_key = GGUF_KEY_KEY_LENGTH_MLA; s->mla_key_val = 8; }
static void mla_no_k_b(spec *s) { s->drop = "blk.0.attn_k_b.weight"; }
static void mla_groups(spec *s) { s->mla_key = GGUF_KEY_EXPERT_GROUP_COUNT; s->mla_key_val = 3; }

static const bad_case MLA_BAD[] = {
    { "q_lora_rank 0 with a q latent", mla_q_lora_0, "blk.0.attn_q_a_norm.weight is [12" },
    { "no attn_q_b", mla_no_q_b, "missing tensor blk.1.attn_q_b.weight" },
    { "attn_q beside the q latent", mla_both_q, "tensor blk.0.attn_q.weight: q goes through" },
    { "no q at all", mla_no_q, "missing tensor blk.0.attn_q.weight" },
    { "kv_lora_rank not the key's", mla_kv_lora, "key_length = 24, expected" },
    { "no unrotated key", mla_no_nope, "key_length_mla = 8, expected more than" },
    { "no attn_k_b", mla_no_k_b, "blk.0.attn_k_b.weight" },
    { "groups not dividing the experts", mla_groups, "expert_group_count" },
};

/* Malformed deepseek2 files are refused with a message naming the
 * tensor or key. */
START_TEST(test_mla_rejects)
{
    const bad_case *c = &MLA_BAD[_i];
    spec s = mla_spec();
    c->apply(&s);
    run_model m;
    gguf_file *f;
    gguf_error err = { 0 };
    ck_assert_msg(load(&s, &m, &f, &err) == -1, "%s: accepted", c->what);
    ck_assert_msg(strstr(err.msg, c->msg) != NULL, "%s: message \"%s\", expected \"%s\"", c->what,
                  err.msg, c->msg);
}
END_TEST

/* Sigmoid routing with a score bias in expert groups (GLM-4.5,
 * DeepSeek), a case worked by hand: 8 experts in 4 groups of 2, logits
 * giving p = σ = .5 but .75 (expert 2) and .25 (expert 7), biases making
 * the choice scores s = p + b = .9 .2 | .6 .55 | .95 .05 | .5 .8. The
 * groups' sums of their best two are 1.1, 1.15, 1.0, 1.3: the best two
 * groups are 3 and 1, so experts 4 and 0 (the largest s) are masked, and
 * the top 2 of the rest are 7 (.8) then 2 (.6); their weights are the
 * unbiased p .25 and .75 (sum 1: normalised the same), times 2.5. With one
 * group the choice is 4 then 0 (weights .5, .5, normalised .5, .5). */
START_TEST(test_route_biased_groups)
{
    const float ln3 = logf(3.0f);
    const float logits[8] = { 0, 0, ln3, 0, 0, 0, 0, -ln3 };
    const float bias[8] = { 0.4f, -0.3f, -0.15f, 0.05f, 0.45f, -0.45f, 0.0f, 0.55f };
    float scratch[8 + 8], w[2];
    int sel[2];
    run_route_params rp = { .n_expert = 8, .n_used = 2, .n_group = 4, .n_group_used = 2,
                            .softmax = false, .norm = true, .scale = 2.5f };
    float p[8];
    memcpy(p, logits, sizeof p);
    run_route_biased(p, bias, &rp, scratch, sel, w);
    ck_assert_float_eq_tol(p[2], 0.75f, 1e-7f); /* p holds the probabilities */
    ck_assert_float_eq_tol(p[7], 0.25f, 1e-7f);
    route_case(logits, bias, &rp, 7, 2, 0.25f * 2.5f, 0.75f * 2.5f, 1e-6f);
    /* one group used of the four: group 3 alone, experts 7 then 6 */
    rp.n_group_used = 1;
    rp.norm = false;
    rp.scale = 1.0f;
    route_case(logits, bias, &rp, 7, 6, 0.25f, 0.5f, 1e-7f);
    /* no groups: the largest biased scores overall, unbiased weights */
    rp.n_group = 1;
    rp.n_group_used = 1;
    route_case(logits, bias, &rp, 4, 0, 0.5f, 0.5f, 1e-7f);
    /* without a bias, the probabilities choose: 2 (.75), then 0 (the first of the .5s);
     * normalised: .75 / 1.25, .5 / 1.25; scale 0 leaves them */
    rp.norm = true;
    rp.scale = 0.0f;
    route_case(logits, NULL, &rp, 2, 0, 0.6f, 0.4f, 1e-6f);
}
END_TEST

/* A group is scored by its best two, not its best one nor its sum: groups
 * (.9 .0 .0) (.5 .5 .5) (.6 .35 .3): best-two sums .9, 1.0, .95 (best-one
 * would pick group 0, the sum of all group 1 too, best-two group 1 then 2);
 * one group used picks group 1's first .5; softmax gating. */
START_TEST(test_route_biased_group_score)
{
    const float sc[9] = { 0.9f, 0.0f, 0.0f, 0.5f, 0.5f, 0.5f, 0.6f, 0.35f, 0.3f };
    float p[9], bias[9], scratch[9 + 6], w[1];
    int sel[1];
    /* sigmoid of 0 is .5: the bias makes each score */
    for (int e = 0; e < 9; e++) {
        p[e] = 0.0f;
        bias[e] = sc[e] - 0.5f;
    }
    run_route_params rp = { .n_expert = 9, .n_used = 1, .n_group = 3, .n_group_used = 1,
                            .softmax = false, .norm = false, .scale = 0.0f };
    run_route_biased(p, bias, &rp, scratch, sel, w);
    ck_assert_int_eq(sel[0], 3);
    ck_assert_float_eq(w[0], 0.5f);
    rp.n_group_used = 2; /* groups 1 and 2: .6 is the best of them */
    for (int e = 0; e < 9; e++)
        p[e] = 0.0f;
    run_route_biased(p, bias, &rp, scratch, sel, w);
    ck_assert_int_eq(sel[0], 6);
    /* softmax gating of equal logits: 1/9 each */
    rp.softmax = true;
    for (int e = 0; e < 9; e++)
        p[e] = 0.0f;
    run_route_biased(p, NULL, &rp, scratch, sel, w);
    ck_assert_int_eq(sel[0], 0);
    ck_assert_float_eq_tol(w[0], 1.0f / 9, 1e-7f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("forward");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_rmsnorm);
    tcase_add_test(tc, test_rope_norm);
    tcase_add_test(tc, test_rope_neox);
    tcase_add_test(tc, test_rope_freq_factors);
    tcase_add_test(tc, test_rope_factors_by_context);
    tcase_add_test(tc, test_softmax);
    tcase_add_test(tc, test_swiglu);
    tcase_add_test(tc, test_geglu_softcap);
    tcase_add_test(tc, test_rec_dot);
    tcase_add_test(tc, test_rec_conv);
    tcase_add_test(tc, test_rec_elementwise);
    tcase_add_test(tc, test_rec_delta_rule);
    tcase_add_test(tc, test_rec_delta_rule_vector);
    tcase_add_test(tc, test_rec_silu_vector);
    tcase_add_test(tc, test_rec_conv_vector);
    tcase_add_test(tc, test_sampler);
    tcase_add_test(tc, test_model_loads);
    tcase_add_loop_test(tc, test_model_rejects, 0, (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_test(tc, test_batching_llama);
    tcase_add_test(tc, test_batching_qwen2_tied_freqs);
    tcase_add_test(tc, test_batching_phi3);
    tcase_add_test(tc, test_batching_gemma);
    tcase_add_test(tc, test_batching_moe);
    tcase_add_test(tc, test_batching_hybrid);
    tcase_add_test(tc, test_fused_as_row_ranges);
    tcase_add_test(tc, test_simd_attn_scores);
    tcase_add_test(tc, test_simd_attn_softmax);
    tcase_add_test(tc, test_simd_attn_values);
    tcase_add_test(tc, test_simd_attn_group);
    tcase_add_test(tc, test_simd_swiglu);
    tcase_add_test(tc, test_simd_geglu);
    tcase_add_test(tc, test_simd_rope);
    tcase_add_test(tc, test_simd_forward);
    tcase_add_test(tc, test_eval_self);
    tcase_add_test(tc, test_importance_add);
    tcase_add_test(tc, test_importance_collect);
    tcase_add_test(tc, test_importance_collect_tied);
    tcase_add_test(tc, test_verify_greedy);
    tcase_add_test(tc, test_verify_limits);
    tcase_add_test(tc, test_gemma4_gelu);
    tcase_add_test(tc, test_gemma4_f32_tail);
    tcase_add_test(tc, test_gemma4_forward);
    tcase_add_test(tc, test_gemma4_shared_k_unused);
    tcase_add_test(tc, test_gemma4_rejects);
    tcase_add_test(tc, test_lora_merged);
    tcase_add_test(tc, test_lora_scales);
    tcase_add_test(tc, test_lora_rejects);
    tcase_add_test(tc, test_lora_b_side_by_side);
    tcase_add_test(tc, test_route_biased_groups);
    tcase_add_test(tc, test_mla_model);
    tcase_add_test(tc, test_mla_expanded);
    tcase_add_test(tc, test_mla_importance);
    tcase_add_loop_test(tc, test_mla_rejects, 0, (int)(sizeof MLA_BAD / sizeof *MLA_BAD));
    tcase_add_test(tc, test_route_biased_group_score);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
