/*
 * forward.c — the transformer forward pass (llama, mistral, qwen2, qwen3, qwen3moe,
 * phi3, gpt-oss, gemma2, gemma3, qwen35, qwen35moe, gemma4, glm4moe; deepseek2's
 * latent attention in mla_attention).
 *
 * Read forward_layer() top to bottom: it is the block diagram of one
 * decoder layer. Numerics follow llama.cpp's CPU backend (c392e50, flash
 * attention off): RMSNorm sums squares in double; K and V are cached as f16;
 * scores are dot products of f16 keys with the query rounded to f16, scaled
 * and soft-maxed in f32; the probabilities are rounded to f16 before they
 * weight the f16 values. Matrix products go through kernels.h, which converts
 * activations to each weight type's dot type as ggml does.
 *
 * The hot loops have AVX2 versions in forward_simd.c that give the same
 * bits; the scalar code here is the reference and the fallback.
 *
 * Not for: loading the model, sampling, or the matrix kernels themselves.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forward.h"
#include "forward_simd.h"
#include "kernels.h"
#include "pool.h"
#include "recurrent.h"
#include <ggufkit/quants.h>

/* ---------------------------------------------------------------------------
 * Scalar or vector
 *
 * The loops below are the reference; forward_simd.c has AVX2 versions of
 * the hot ones that give the same bits, used where the CPU has AVX2 unless
 * a test forces the scalar code. The table of them is chosen once (on
 * first use, or when a test forces the choice); each loop then calls its
 * entry, or runs the scalar code where the entry is NULL.
 */

static const fwd_simd_ops *simd_table;

static const fwd_simd_ops *simd(void)
{
    const fwd_simd_ops *t = __atomic_load_n(&simd_table, __ATOMIC_RELAXED);
    if (!t) { /* a race only ever stores the same table */
        t = fwd_simd_select(false);
        __atomic_store_n(&simd_table, t, __ATOMIC_RELAXED);
    }
    return t;
}

void run_force_scalar(bool on)
{
    __atomic_store_n(&simd_table, fwd_simd_select(on), __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------------
 * Building blocks
 */

void run_rmsnorm(float *y, const float *x, const float *w, int n, float eps)
{
    double ss = 0.0;
    for (int i = 0; i < n; i++)
        ss += (double)(x[i] * x[i]);
    const float mean = (float)(ss / n);
    const float scale = 1.0f / sqrtf(mean + eps);
    for (int i = 0; i < n; i++)
        y[i] = (x[i] * scale) * w[i];
}

/* cs[2i], cs[2i+1] = cos, sin of scale * (pos * base^(-2i/n_rot) / freqs[i]),
 * times mscale (LongRoPE's attention factor; 1 leaves them exact). The power
 * is stepped by repeated multiplication in float, as ggml does. */
static void rope_angles(float *cs, int n_rot, int pos, float base, float scale, const float *freqs,
                        float mscale)
{
    const float step = powf(base, -2.0f / (float)n_rot);
    float theta = (float)pos;
    for (int i = 0; i < n_rot / 2; i++) {
        const float t = scale * (freqs ? theta / freqs[i] : theta);
        cs[2 * i] = cosf(t) * mscale;
        cs[2 * i + 1] = sinf(t) * mscale;
        theta *= step;
    }
}

/* YaRN (ggml's rope_yarn over its rope cache): the unscaled angle θ (pos ·
 * base^(-2i/n_rot) / freqs[i]) and the scaled one θ·scale are blended by the ramp
 * between the correction dims, r = 1 - clamp((i - lo) / max(0.001, hi - lo)),
 * as scaled·(1 - r) + θ·r; cos and sin are then times the magnitude scale.
 * Scalar only, as rope_angles: n_rot / 2 libm cosf/sinf per token, shared by
 * every head (the rotation itself, rope_apply, has the vector path). */
static void rope_angles_yarn(float *cs, const run_hparams *hp, int pos, const float *freqs)
{
    const float step = powf(hp->rope_base, -2.0f / (float)hp->n_rot);
    const float lo = hp->yarn_corr[0], hi = hp->yarn_corr[1];
    float theta = (float)pos;
    for (int i = 0; i < hp->n_rot / 2; i++) {
        const float extrap = freqs ? theta / freqs[i] : theta;
        const float interp = hp->rope_scale * extrap;
        float t = interp;
        if (hp->yarn_ext_factor != 0.0f) {
            const float y = ((float)i - lo) / fmaxf(0.001f, hi - lo);
            const float mix = (1 - fminf(1, fmaxf(0, y))) * hp->yarn_ext_factor;
            t = interp * (1 - mix) + extrap * mix;
        }
        cs[2 * i] = cosf(t) * hp->yarn_mscale;
        cs[2 * i + 1] = sinf(t) * hp->yarn_mscale;
        theta *= step;
    }
}

/* Rotates each head of x by the angles in cs: (a, b) → (a cos - b sin, a sin + b cos). */
static void rope_apply(float *x, int n_heads, int head_dim, int n_rot, const float *cs,
                       enum run_rope_layout layout)
{
    const fwd_simd_ops *vec = simd();
    if (vec->rope_apply) {
        vec->rope_apply(x, n_heads, head_dim, n_rot, cs, layout);
        return;
    }
    run_rope_rotate(x, n_heads, head_dim, n_rot, cs, layout);
}

void run_rope(float *x, int n_heads, int head_dim, int n_rot, int pos, float base, float scale,
              const float *freqs, float mscale, enum run_rope_layout layout)
{
    float cs[n_rot > 0 ? n_rot : 1];
    rope_angles(cs, n_rot, pos, base, scale, freqs, mscale);
    rope_apply(x, n_heads, head_dim, n_rot, cs, layout);
}

void run_softmax(float *x, int n, float scale)
{
    float max = -INFINITY;
    for (int i = 0; i < n; i++) {
        x[i] *= scale;
        max = x[i] > max ? x[i] : max;
    }
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        x[i] = expf(x[i] - max);
        sum += (double)x[i];
    }
    const float inv = (float)(1.0 / sum);
    for (int i = 0; i < n; i++)
        x[i] *= inv;
}

static float exp_poly(float x);

/* silu(g) = g / (1 + e^-g) with the reference's vector exponential (its
 * rows of n_ff are whole groups of 16 for every model here), then · u. */
void run_swiglu(float *g, const float *u, int n)
{
    const fwd_simd_ops *vec = simd();
    int i = 0;
    if (vec->swiglu)
        i = vec->swiglu(g, u, n);
    for (; i < n; i++) {
        const float sg = g[i] / (1.0f + exp_poly(0.0f - g[i]));
        g[i] = sg * u[i];
    }
}

/* ggml's GELU, tanh form: 0.5x(1 + tanh(√(2/π)·x·(1 + 0.044715x²))), with
 * the one multiply-add its compiler fuses (1 + (0.044715x)·x). */
static float gelu_tanh(float x)
{
    const float inner = fmaf(0.044715f * x, x, 1.0f);
    return 0.5f * x * (1.0f + tanhf(0.79788456080286535587989211986876f * x * inner));
}

void run_gelu_table(gguf_half *t)
{
    for (uint32_t h = 0; h < 65536; h++)
        t[h] = gguf_f32_to_f16(gelu_tanh(gguf_f16_to_f32((gguf_half)h)));
}

/* GeGLU as ggml runs it (GGML_GELU_FP16): gelu of g looked up for g
 * rounded to f16, 0 below -10 and g itself from 10 up, then · u. */
void run_geglu(float *g, const float *u, int n, const gguf_half *gelu16)
{
    const fwd_simd_ops *vec = simd();
    for (int i = vec->geglu ? vec->geglu(g, u, n, gelu16) : 0; i < n; i++) {
        const float x = g[i];
        if (x <= -10.0f)
            g[i] = 0.0f;
        else if (x >= 10.0f)
            g[i] = x * u[i];
        else
            g[i] = gguf_f16_to_f32(gelu16[gguf_f32_to_f16(x)]) * u[i];
    }
}

/* x = cap · tanh(x / cap) as ggml (scale, tanh, scale), tanh by libm.
 * No vector path: ggml_vec_tanh_f32 calls libm's tanhf per element, and no
 * lane-wise polynomial gives a libm's tanhf bit for bit. */
void run_softcap(float *x, int n, float cap)
{
    const float inv = 1.0f / cap;
    for (int i = 0; i < n; i++)
        x[i] = tanhf(x[i] * inv) * cap;
}

/* ---------------------------------------------------------------------------
 * State
 */

static size_t max_act_row(const run_model *m)
{
    size_t r = kern_act_row_size(m->output.type, m->output.cols);
    if (m->pl_model_proj.data) {
        const size_t p = kern_act_row_size(m->pl_model_proj.type, m->pl_model_proj.cols);
        r = p > r ? p : r;
    }
    for (int i = 0; i < m->hp.n_layer; i++) {
        const run_layer *l = &m->layers[i];
        const run_matrix *ws[] = { &l->wq,       &l->wk,        &l->wv,      &l->wo,
                                   &l->w_gate,   &l->w_up,      &l->w_down,  &l->gate_inp,
                                   &l->gate_exps, &l->up_exps, &l->down_exps, &l->wqkv,
                                   &l->w_gate_up, &l->gate_up_exps, &l->pl_gate, &l->pl_proj };
        for (size_t j = 0; j < sizeof ws / sizeof ws[0]; j++) {
            size_t s = kern_act_row_size(ws[j]->type, ws[j]->cols);
            r = s > r ? s : r;
        }
    }
    return r;
}

/* The larger of row and the converted activation rows of n matrices. */
static size_t act_rows_max(size_t row, const run_matrix *const *ws, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        const size_t r = kern_act_row_size(ws[j]->type, ws[j]->cols);
        row = r > row ? r : row;
    }
    return row;
}

/* The batch's converted activation rows made row bytes wide when wider
 * than they are; -1 when out of memory. */
static int grow_act_rows(run_state *s, size_t row)
{
    if (row <= s->xq_row)
        return 0;
    free(s->xq);
    s->xq_row = row;
    return (s->xq = malloc((size_t)s->n_batch * row)) ? 0 : -1;
}

/* Hybrid models: the Gated DeltaNet layers' states (zero: a new
 * sequence) and scratch, and the gated attention's q | gate rows; -1 when
 * out of memory. Nothing for other models. */
static int recurrent_state_init(run_state *s, const run_model *m)
{
    const run_hparams *hp = &m->hp;
    const size_t nb = (size_t)s->n_batch;
    /* the activation rows converted for these blocks' matrices, when wider
     * than the others' */
    size_t row = s->xq_row;
    for (int il = 0; il < hp->n_layer; il++) {
        const run_layer *l = &m->layers[il];
        const run_matrix *ws[] = { &l->gate_shexp, &l->up_shexp, &l->down_shexp,
                                   &l->gate_inp_shexp, &l->wz, &l->ssm_alpha, &l->ssm_beta,
                                   &l->ssm_out };
        row = act_rows_max(row, ws, sizeof ws / sizeof ws[0]);
    }
    if (grow_act_rows(s, row))
        return -1;
    /* the shared expert's gate and up products */
    const size_t ffs = (size_t)hp->n_ff_shexp;
    if (ffs && (!(s->shexp_g = malloc(nb * ffs * sizeof(float))) ||
                !(s->shexp_u = malloc(nb * ffs * sizeof(float)))))
        return -1;
    bool gated = false;
    for (int il = 0; il < hp->n_layer; il++)
        gated |= m->layers[il].wq.rows == 2 * (int64_t)hp->q_dim;
    if (gated && !(s->qg = malloc(nb * 2 * (size_t)hp->q_dim * sizeof(float))))
        return -1;
    size_t n_rec = 0;
    for (int il = 0; il < hp->n_layer; il++)
        n_rec += run_layer_is_recurrent(m, il);
    if (!n_rec)
        return 0;
    const size_t S = (size_t)hp->ssm_d_state, hv = (size_t)hp->ssm_dt_rank;
    const size_t C = 2 * (size_t)hp->ssm_n_group * S + (size_t)hp->ssm_d_inner;
    /* (a kernel of 1 keeps no window: one float stands for the empty one) */
    s->conv_state = calloc(n_rec * C * (size_t)(hp->ssm_conv_k - 1) + 1, sizeof(float));
    s->delta_state = calloc(n_rec * hv * S * S, sizeof(float));
    s->rec_in = malloc(nb * C * sizeof(float));
    s->rec_conv = malloc(nb * C * sizeof(float));
    s->rec_z = malloc(nb * (size_t)hp->ssm_d_inner * sizeof(float));
    s->rec_o = malloc(nb * (size_t)hp->ssm_d_inner * sizeof(float));
    s->rec_g = malloc(nb * hv * sizeof(float));
    /* + the convolution's window (conv_k) and each thread's delta-rule scratch (S) */
    s->rec_beta = malloc((nb * hv + (size_t)hp->ssm_conv_k + (size_t)s->n_threads * S) *
                         sizeof(float));
    return s->conv_state && s->delta_state && s->rec_in && s->rec_conv && s->rec_z && s->rec_o &&
           s->rec_g && s->rec_beta ? 0 : -1;
}

static void recurrent_state_free(run_state *s)
{
    free(s->conv_state);
    free(s->delta_state);
    free(s->rec_in);
    free(s->rec_conv);
    free(s->rec_z);
    free(s->rec_o);
    free(s->rec_g);
    free(s->rec_beta);
    free(s->qg);
    free(s->shexp_g);
    free(s->shexp_u);
}

/* Latent attention's buffers (none for other models) and the activation
 * rows of its matrices where wider than the others'; -1 when out of memory. */
static int state_init_mla(run_state *s, const run_model *m)
{
    const run_hparams *hp = &m->hp;
    if (!hp->mla)
        return 0;
    const size_t nb = (size_t)s->n_batch, H = (size_t)hp->n_head;
    size_t row = s->xq_row;
    for (int il = 0; il < hp->n_layer; il++) {
        const run_layer *l = &m->layers[il];
        const run_matrix *ws[] = { &l->wq_a, &l->wq_b, &l->wkv_a_mqa, &l->wk_b, &l->wv_b };
        row = act_rows_max(row, ws, sizeof ws / sizeof ws[0]);
    }
    if (grow_act_rows(s, row))
        return -1;
    const size_t nope = (size_t)hp->mla_nope, kl = (size_t)hp->kv_lora, vh = (size_t)hp->mla_v;
    const size_t in = nope > kl ? nope : kl, out = kl > vh ? kl : vh;
    s->mla_q = malloc(nb * H * (nope + (size_t)hp->n_rot) * sizeof(float));
    s->mla_qa = malloc(nb * ((size_t)hp->q_lora + 1) * sizeof(float));
    s->mla_g = malloc(nb * (in > vh ? in : vh) * sizeof(float));
    s->mla_h = malloc(nb * out * sizeof(float));
    s->mla_o = malloc(nb * H * vh * sizeof(float));
    s->mla_hook = malloc(nb * H * in * sizeof(float));
    return s->mla_q && s->mla_qa && s->mla_g && s->mla_h && s->mla_o && s->mla_hook ? 0 : -1;
}

/* Gemma 4's buffers (none for a model without its experts beside the
 * dense feed-forward or per-layer inputs); -1 when out of memory. */
static int state_init_gemma4(run_state *s, const run_model *m)
{
    const run_hparams *hp = &m->hp;
    const size_t nb = (size_t)s->n_batch, d = (size_t)hp->n_embd;
    const size_t w = (size_t)hp->n_layer * (size_t)hp->n_embd_pl;
    bool beside = false;
    for (int il = 0; il < hp->n_layer; il++)
        beside |= m->layers[il].gate_up_exps.data != NULL;
    if (beside) {
        s->ffn_dense = malloc(nb * d * sizeof(float));
        s->moe_gu = malloc(nb * 2 * (size_t)hp->n_ff_exp * sizeof(float));
        if (!s->ffn_dense || !s->moe_gu)
            return -1;
    }
    if (m->pl_tok_embd.data) {
        s->pl = malloc(nb * w * sizeof(float));
        s->pl_row = malloc(w * sizeof(float));
        s->pl_h = malloc(nb * (size_t)hp->n_embd_pl * sizeof(float));
        if (!s->pl || !s->pl_row || !s->pl_h)
            return -1;
    }
    /* both run GELU from the table, whatever the model's activation */
    if ((beside || m->pl_tok_embd.data) && !s->gelu16) {
        if (!(s->gelu16 = malloc(65536 * sizeof(gguf_half))))
            return -1;
        run_gelu_table(s->gelu16);
    }
    return 0;
}

/* The largest of a per-block size over the blocks and the model's own:
 * what the buffers are sized by. */
static int layer_max(const run_model *m, int model_value, size_t off)
{
    int v = model_value;
    for (int il = 0; il < m->hp.n_layer; il++) {
        const int x = *(const int *)((const char *)&m->layers[il] + off);
        v = x > v ? x : v;
    }
    return v;
}

int run_state_init(run_state *s, const run_model *m, int n_ctx, int n_batch, gguf_error *err)
{
    memset(s, 0, sizeof *s);
    const run_hparams *hp = &m->hp;
    /* blocks of their own geometry (gemma4) size the buffers by the largest */
    const int head_dim = layer_max(m, hp->head_dim, offsetof(run_layer, head_dim));
    const int q_dim = layer_max(m, hp->q_dim, offsetof(run_layer, q_dim));
    const int n_rot = layer_max(m, hp->n_rot, offsetof(run_layer, n_rot));
    const int n_ff = layer_max(m, hp->n_ff, offsetof(run_layer, n_ff));
    s->kv_dim = (size_t)hp->n_head_kv * (size_t)head_dim;
    s->n_cache_layers = hp->n_layer > 0 ? layer_max(m, -1, offsetof(run_layer, kv_slot)) + 1 : 0;
    const size_t d = (size_t)hp->n_embd, kv = s->kv_dim;
    const size_t ff = (size_t)(n_ff > hp->n_ff_exp ? n_ff : hp->n_ff_exp);
    const size_t nb = (size_t)n_batch, ne = (size_t)hp->n_expert, nu = (size_t)hp->n_expert_used;
    s->n_threads = pool_threads(); /* per-thread scratch of attention */
    s->n_ctx = n_ctx;
    s->n_batch = n_batch;
    s->rope_freqs = run_rope_factors(m, n_ctx);
    s->xq_row = max_act_row(m);
    s->xq_row = m->extra_act_row > s->xq_row ? m->extra_act_row : s->xq_row;
    const size_t cache = (size_t)s->n_cache_layers * (size_t)n_ctx * kv;
    s->x = malloc(nb * d * sizeof(float));
    s->xb = malloc(nb * d * sizeof(float));
    s->q = malloc(nb * (size_t)q_dim * sizeof(float));
    s->xb2 = malloc(nb * d * sizeof(float));
    s->k = malloc(nb * kv * sizeof(float));
    s->v = malloc(nb * kv * sizeof(float));
    s->hb = malloc(nb * ff * sizeof(float));
    s->hb2 = malloc(nb * ff * sizeof(float));
    /* rows of the widest fused matrix (every layer has the same shapes) */
    const size_t fused = hp->n_layer < 1 ? 0
                       : (size_t)(m->layers[0].wqkv.rows > m->layers[0].w_gate_up.rows
                                  ? m->layers[0].wqkv.rows : m->layers[0].w_gate_up.rows);
    s->fused = fused ? malloc(nb * fused * sizeof(float)) : NULL;
    s->xq = malloc(nb * s->xq_row);
    s->k_cache = calloc(cache, sizeof(gguf_half));
    /* latent attention: the values are the cached latent, the keys' first
     * kv_lora dims (llama.cpp's K-only cache); no V cache */
    s->v_cache = calloc(hp->mla ? 1 : cache, sizeof(gguf_half));
    /* each thread's scratch: FWD_MAX_GROUP heads' scores (n_ctx) and output (head_dim) */
    s->att = malloc((size_t)s->n_threads * FWD_MAX_GROUP * ((size_t)n_ctx + (size_t)head_dim) *
                    sizeof(float));
    s->rope_cs = malloc(((size_t)n_rot + 1) * sizeof(float));
    s->att16 = malloc((size_t)s->n_threads * FWD_MAX_GROUP * ((size_t)n_ctx + (size_t)head_dim) *
                      sizeof(gguf_half));
    s->f16_table = malloc(65536 * sizeof(float));
    const bool gelu = m->row && gguf_arch_activation(m->row) == GGUF_ACT_GELU_TANH;
    s->gelu16 = gelu ? malloc(65536 * sizeof(gguf_half)) : NULL;
    if (ne) {
        s->moe_probs = malloc(nb * ne * sizeof(float));
        s->moe_w = malloc(nb * nu * sizeof(float));
        s->moe_sel = malloc(nb * nu * sizeof(int));
        s->moe_slot = malloc(nb * nu * sizeof(int));
        s->moe_x = malloc(nb * d * sizeof(float));
        s->moe_y = malloc(nb * nu * d * sizeof(float));
        s->moe_scratch = malloc((ne + 2 * (size_t)(hp->n_group > 1 ? hp->n_group : 1)) *
                                sizeof(float));
    }
    if (!s->x || !s->xb || !s->q || !s->xb2 || !s->k || !s->v || !s->hb || !s->hb2 || !s->xq ||
        (fused && !s->fused) ||
        !s->k_cache || !s->v_cache || !s->att || !s->att16 || !s->f16_table ||
        (gelu && !s->gelu16) ||
        !s->rope_cs || (ne && (!s->moe_probs || !s->moe_w || !s->moe_sel || !s->moe_slot ||
                               !s->moe_x || !s->moe_y || !s->moe_scratch))) {
        run_state_free(s);
        return gguf_error_set(err, "out of memory for a context of %d tokens", n_ctx);
    }
    if (m->lora_rank && (!(s->lora_t = malloc(nb * (size_t)m->lora_rank * sizeof(float))) ||
                         !(s->lora_u = malloc(nb * (size_t)m->lora_rows * sizeof(float))))) {
        run_state_free(s);
        return gguf_error_set(err, "out of memory for a context of %d tokens", n_ctx);
    }
    if (state_init_gemma4(s, m)) {
        run_state_free(s);
        return gguf_error_set(err, "out of memory for a context of %d tokens", n_ctx);
    }
    for (uint32_t h = 0; h < 65536; h++)
        s->f16_table[h] = gguf_f16_to_f32((gguf_half)h);
    if (gelu)
        run_gelu_table(s->gelu16);
    if (recurrent_state_init(s, m) || state_init_mla(s, m)) {
        run_state_free(s);
        return gguf_error_set(err, "out of memory for a context of %d tokens", n_ctx);
    }
    return 0;
}

void run_state_free(run_state *s)
{
    recurrent_state_free(s);
    free(s->x);
    free(s->xb);
    free(s->q);
    free(s->xb2);
    free(s->k);
    free(s->v);
    free(s->hb);
    free(s->hb2);
    free(s->fused);
    free(s->xq);
    free(s->k_cache);
    free(s->v_cache);
    free(s->att);
    free(s->att16);
    free(s->rope_cs);
    free(s->f16_table);
    free(s->gelu16);
    free(s->moe_probs);
    free(s->moe_scratch);
    free(s->moe_w);
    free(s->moe_sel);
    free(s->moe_slot);
    free(s->moe_x);
    free(s->moe_y);
    free(s->ffn_dense);
    free(s->moe_gu);
    free(s->pl);
    free(s->pl_row);
    free(s->pl_h);
    free(s->lora_t);
    free(s->lora_u);
    free(s->mla_q);
    free(s->mla_qa);
    free(s->mla_g);
    free(s->mla_h);
    free(s->mla_o);
    free(s->mla_hook);
    memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------------------
 * Layers
 */

/* Converts activation rows to a matrix's dot type, a row per unit. */
typedef struct {
    uint32_t    type;
    int64_t     cols;
    const float *x;
    uint8_t     *xq;
    size_t      rs;
} act_job;

static void act_unit(void *ctx, int64_t b, int thread)
{
    (void)thread;
    const act_job *j = ctx;
    kern_quantize_act(j->type, j->x + (size_t)b * (size_t)j->cols, j->xq + (size_t)b * j->rs, j->cols);
}

/* y (nb, W.rows) = x (nb, W.cols) @ W^T; x is first converted to W's dot type. */
static void product(run_state *s, const run_matrix *w, const float *x, int nb, float *y)
{
    const size_t rs = kern_act_row_size(w->type, w->cols);
    uint8_t *xq = s->xq;
    act_job aj = { w->type, w->cols, x, xq, rs };
    pool_for(nb, act_unit, &aj);
    if (w->packed)
        kern_matmul_packed(w->type, w->packed, w->rows, w->cols, xq, nb, y);
    else if (w->stack) // an expert: mul_mat_id multiplies row by row
        kern_matmul_rows(w->type, w->data, w->row_bytes, w->rows, w->cols, xq, nb, y);
    else
        kern_matmul(w->type, w->data, w->row_bytes, w->rows, w->cols, xq, nb, y);
}

/* y (nb, n) += u · scale, as ggml_scale then ggml_add: two roundings. */
static void lora_add(float *y, const float *u, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++) {
        const float d = u[i] * scale;
        y[i] = y[i] + d;
    }
}

/* u (nb, rows) = t (nb, rank) B^T for an f32 B of rank < 64 in ggml's
 * one-row order (kern_batch_order false): there each output is
 * ggml_vec_dot_f32's leftover loop alone, its rank products rounded and
 * added one by one to a float sum that starts at +0. The same sums here,
 * the outputs side by side over bt (B transposed, rank × rows) instead of
 * a call per output: kern_matmul's bits. */
static void lora_b_product(const float *bt, int64_t rows, int rank, const float *t, int nb,
                           float *u)
{
    for (int b = 0; b < nb; b++) {
        float *ub = u + (size_t)b * (size_t)rows;
        const float *tb = t + (size_t)b * (size_t)rank;
        for (int64_t r = 0; r < rows; r++)
            ub[r] = 0.0f;
        for (int k = 0; k < rank; k++) {
            const float *bk = bt + (size_t)k * (size_t)rows, xk = tb[k];
            for (int64_t r = 0; r < rows; r++) {
                const float p = bk[r] * xk;
                ub[r] = ub[r] + p;
            }
        }
    }
}

/* The product by W and, for each of its LoRA pairs in turn, y += scale ·
 * (x A^T) B^T (build_lora_mm; an expert's slice takes its stack's pairs
 * sliced alike, as build_lora_mm_id). The importance hook sees the input
 * of every product, A's and B's too (as llama-imatrix collects them). */
static void matmul(run_state *s, const run_matrix *w, const float *x, int nb, float *y)
{
    if (s->act_hook)
        s->act_hook(s->act_user, w, x, nb);
    product(s, w, x, nb, y);
    for (const run_lora *l = w->stack ? w->stack->lora : w->lora; l; l = l->next) {
        const run_matrix *a = &l->a, *b = &l->b;
        run_matrix ea, eb;
        if (w->stack) {
            ea = run_expert(&l->a, l->n_stack, w->expert);
            eb = run_expert(&l->b, l->n_stack, w->expert);
            a = &ea;
            b = &eb;
        }
        if (s->act_hook)
            s->act_hook(s->act_user, a, x, nb);
        product(s, a, x, nb, s->lora_t);
        if (s->act_hook)
            s->act_hook(s->act_user, b, s->lora_t, nb);
        if (l->bt && !kern_batch_order(b->type, b->rows, b->cols, nb))
            lora_b_product(l->bt, b->rows, l->rank, s->lora_t, nb, s->lora_u);
        else
            product(s, b, s->lora_t, nb, s->lora_u);
        lora_add(y, s->lora_u, (size_t)nb * (size_t)b->rows, l->scale);
    }
}

/* The product by W alone, its LoRA pairs unused: llama.cpp's plain
 * ggml_mul_mat (deepseek2's q path and kv_a_mqa). The importance hook sees
 * its input as any product's. */
static void matmul_plain(run_state *s, const run_matrix *w, const float *x, int nb, float *y)
{
    if (s->act_hook)
        s->act_hook(s->act_user, w, x, nb);
    product(s, w, x, nb, y);
}

/* The token embedding's LoRA pairs added to the nb rows of x (build_inp_embd):
 * each token's row of A, times B, times scale. */
static void embd_lora(run_state *s, const run_model *m, const int32_t *tokens, int nb)
{
    for (const run_lora *l = m->lora_embd; l; l = l->next) {
        for (int b = 0; b < nb; b++)
            gguf_dequantize_row(l->a.type, (const uint8_t *)l->a.data +
                                (size_t)tokens[b] * l->a.row_bytes,
                                s->lora_t + (size_t)b * l->rank, l->rank, NULL);
        if (l->bt && !kern_batch_order(l->b.type, l->b.rows, l->b.cols, nb))
            lora_b_product(l->bt, l->b.rows, l->rank, s->lora_t, nb, s->lora_u);
        else
            product(s, &l->b, s->lora_t, nb, s->lora_u);
        lora_add(s->x, s->lora_u, (size_t)nb * (size_t)l->b.rows, l->scale);
    }
}

/* y (nb, n) += bias (n,) on every row. */
static void add_bias(float *y, const float *bias, int nb, int n)
{
    if (!bias)
        return;
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < n; i++)
            y[(size_t)b * n + i] += bias[i];
}


/* e^x in float as a range reduction plus a degree-5 polynomial, every step
 * rounded as fused multiply-adds round it: x = n·ln2 + b with n =
 * round(x·log2 e) (found by adding and removing 1.5·2^23) and ln2 split
 * in a high and a low part; e^b ≈ 1 + c1 b + (c2 + c3 b) b² + (c4 + c5 b) b⁴;
 * the result is that times 2^n, and 0 or +inf once |n| passes 192. This is
 * the rounding the reference CPU backend's vector softmax produces (within
 * an ulp of expf, but not always equal to it). */
static float exp_poly(float x)
{
    const float shift = 0x1.8p23f;
    const float n = fmaf(x, 0x1.715476p+0f, shift) - shift;
    const float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));
    if (!(fabsf(n) <= 192.0f)) /* also NaN: (int)n of NaN is undefined */
        return n <= 0.0f ? 0.0f : n > 0.0f ? INFINITY : n;
    const float u = b * b;
    const float hi = fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f));
    const float j = fmaf(hi, u, fmaf(0x1.ffffecp-1f, b, 1.0f));
    return ldexpf(j, (int)n);
}

/* For forward_simd.c: the lanes its vector e^x leaves to this one. */
float run_exp_poly(float x)
{
    return exp_poly(x);
}

/* Attention softmax of x[0..n) scaled by scale, with the reference's
 * rounding: the scores are taken 16 at a time (positions 16c..16c+15, the
 * missing ones of a last group counting as 0), each group's exponentials
 * summed in float pairwise (i with i+8, then with i+4, then 0+2 and 1+3,
 * then those two) and the group sums added in double.
 * A sink (gpt-oss; NaN: none) is a logit that takes part in the
 * normalisation but weights no value (ggml's soft_max with sinks): the max
 * starts from it, and e^(sink - max) by libm joins the sum after the rows. */
static void attn_softmax(float *x, int n, float scale, float sink)
{
    const fwd_simd_ops *vec = simd();
    if (vec->attn_softmax) {
        vec->attn_softmax(x, n, scale, sink);
        return;
    }
    float max = isnan(sink) ? -INFINITY : sink;
    for (int i = 0; i < n; i++) {
        x[i] *= scale;
        max = x[i] > max ? x[i] : max;
    }
    double sum = 0.0;
    for (int g = 0; g < n; g += 16) {
        float e[16];
        for (int i = 0; i < 16; i++)
            e[i] = g + i < n ? (x[g + i] = exp_poly(x[g + i] - max)) : 0.0f;
        sum += (double)sum16_reduce(e);
    }
    if (!isnan(sink))
        sum += (double)expf(sink - max);
    const float inv = (float)(1.0 / sum);
    for (int i = 0; i < n; i++)
        x[i] *= inv;
}

/* attn_softmax for the tests (forward_simd.h). */
void run_attn_softmax(float *x, int n, float scale, float sink)
{
    attn_softmax(x, n, scale, sink);
}

/* Batch scores (forward_simd.h, run_attn_scores): q16 · each key in 16
 * float lanes with fused multiply-adds, then sum16_reduce. */
void run_attn_scores_group(float *att, size_t att_stride, const float *f16, const gguf_half *q16,
                           size_t q_stride, int nh, const gguf_half *kc, int n_kv, int head_dim,
                           size_t kv_dim)
{
    const fwd_simd_ops *vec = simd();
    if (vec->attn_scores) {
        vec->attn_scores(att, att_stride, q16, q_stride, nh, kc, n_kv, head_dim, kv_dim);
        return;
    }
    for (int g = 0; g < nh; g++)
        for (int t = 0; t < n_kv; t++) {
            const gguf_half *k = kc + (size_t)t * kv_dim, *q = q16 + (size_t)g * q_stride;
            float lane[16] = {0};
            for (int c = 0; c < head_dim; c += 16)
                for (int l = 0; l < 16; l++)
                    lane[l] = fmaf(f16[k[c + l]], f16[q[c + l]], lane[l]);
            att[(size_t)g * att_stride + t] = sum16_reduce(lane);
        }
}

void run_attn_scores(float *att, const float *f16, const gguf_half *q16, const gguf_half *kc,
                     int n_kv, int head_dim, size_t kv_dim)
{
    run_attn_scores_group(att, 0, f16, q16, 0, 1, kc, n_kv, head_dim, kv_dim);
}

/* Batch weighted values (forward_simd.h, run_attn_values): position t
 * feeds lane t % 16; missing positions add exact zeros. */
void run_attn_values_group(float *out, size_t out_stride, const float *f16, const gguf_half *p16,
                           size_t p_stride, int nh, const gguf_half *vc, int n_kv, int head_dim,
                           size_t kv_dim)
{
    const fwd_simd_ops *vec = simd();
    if (vec->attn_values && head_dim % 8 == 0 && nh * head_dim <= FWD_MAX_HEAD_DIM) {
        vec->attn_values(out, out_stride, p16, p_stride, nh, vc, n_kv, head_dim, kv_dim);
        return;
    }
    for (int g = 0; g < nh; g++)
        for (int i = 0; i < head_dim; i++) {
            const gguf_half *p = p16 + (size_t)g * p_stride;
            float lane[16] = {0};
            for (int t = 0; t < n_kv; t++)
                lane[t % 16] = fmaf(f16[p[t]], f16[vc[(size_t)t * kv_dim + i]], lane[t % 16]);
            out[(size_t)g * out_stride + i] = sum16_reduce(lane);
        }
}

void run_attn_values(float *out, const float *f16, const gguf_half *p16, const gguf_half *vc,
                     int n_kv, int head_dim, size_t kv_dim)
{
    run_attn_values_group(out, 0, f16, p16, 0, 1, vc, n_kv, head_dim, kv_dim);
}

/* y = f16(x) over n values. */
static void to_f16(const float *x, gguf_half *y, int64_t n)
{
    const fwd_simd_ops *vec = simd();
    if (vec->to_f16) {
        vec->to_f16(x, y, n);
        return;
    }
    gguf_f32_to_f16_row(x, y, n);
}

/* The four 16-lane sums of ggml_vec_dot_f16 on AVX-512 folded into one
 * float: sum0 + sum2 and sum1 + sum3, those two, then sum16_reduce. */
static float fold4x16(float acc[4][16])
{
    float e[16];
    for (int l = 0; l < 16; l++)
        e[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l]);
    return sum16_reduce(e);
}

/* One token's scores (forward_simd.h, run_attn_scores1): ggml_vec_dot_f16
 * of each key with q16 as an AVX-512 machine adds it — dims 64s + 16j + l
 * into sum j, lane l (the f16 products are exact in float), fold4x16; the
 * last head_dim % 64 products added in double after that. */
void run_attn_scores1(float *att, const float *f16, const gguf_half *q16, const gguf_half *kc,
                      int n_kv, int head_dim, size_t kv_dim)
{
    const fwd_simd_ops *vec = simd();
    int t = 0;
    if (vec->attn_scores1 && head_dim % 8 == 0)
        t = vec->attn_scores1(att, q16, kc, n_kv, head_dim, kv_dim);
    for (; t < n_kv; t++) {
        const gguf_half *k = kc + (size_t)t * kv_dim;
        float acc[4][16] = { { 0 } };
        int i = 0;
        for (; i + 64 <= head_dim; i += 64)
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 16; l++)
                    acc[j][l] += f16[k[i + 16 * j + l]] * f16[q16[i + 16 * j + l]];
        double dot = fold4x16(acc);
        for (; i < head_dim; i++)
            dot += (double)(f16[k[i]] * f16[q16[i]]);
        att[t] = (float)dot;
    }
}

/* One token's weighted values (forward_simd.h, run_attn_values1): for each
 * dim i, ggml_vec_dot_f16 over the positions of the probabilities with the
 * values — position t into sum (t / 16) % 4, lane t % 16, fold4x16. The
 * cache llama.cpp attends over is a whole number of 256 positions, those
 * past n_kv adding exact zeros: no position is left for the double tail. */
void run_attn_values1(float *out, const float *f16, const gguf_half *p16, const gguf_half *vc,
                      int n_kv, int head_dim, size_t kv_dim)
{
    const fwd_simd_ops *vec = simd();
    if (vec->attn_values1 && head_dim % 8 == 0) {
        vec->attn_values1(out, p16, vc, n_kv, head_dim, kv_dim);
        return;
    }
    for (int i = 0; i < head_dim; i++) {
        float acc[4][16] = { { 0 } };
        for (int t = 0; t < n_kv; t++)
            acc[(t / 16) % 4][t % 16] += f16[p16[t]] * f16[vc[(size_t)t * kv_dim + i]];
        out[i] = fold4x16(acc);
    }
}

/* Where the K/V cache of block `layer` starts: each block with a cache of
 * its own (its kv_slot) has n_ctx rows of the widest kv_dim (a block with
 * smaller heads packs its rows closer); a block sharing one uses its
 * source's, a recurrent block has none. */
static size_t kv_base(const run_state *s, const run_model *m, int layer)
{
    const int slot = m->layers[layer].kv_slot;
    return slot < 0 ? 0 : (size_t)slot * (size_t)s->n_ctx * s->kv_dim;
}

/* nh heads of one token that share a KV head (nh > 1 only for a batch):
 * head g's out (v_dim,) = softmax(K q_g · kq_scale) V over the n_kv cached
 * positions, q_g at q + g · head_dim, K and V rows kv_dim apart in the
 * cache, keys head_dim wide and values v_dim (the same but for latent
 * attention); positions before `from` are masked out (a sliding window),
 * and sinks[g], when sinks is not NULL, joins head g's softmax. Head g's
 * scratch is att + g · stride (scores, then its output at n_ctx) and att16
 * + g · stride (probabilities, then its query at n_kv); each head's numbers
 * are what it gets alone — a group only reads each key and value row once. */
static void attend_heads(const run_state *s, int nh, const float *q, const gguf_half *kc,
                         const gguf_half *vc, int n_kv, int head_dim, int v_dim, size_t kv_dim,
                         float kq_scale, float *att, gguf_half *att16, size_t stride, bool batch,
                         int from, const float *sinks, float softcap)
{
    const float *f16 = s->f16_table;
    for (int g = 0; g < nh; g++)
        to_f16(q + (size_t)g * head_dim, att16 + (size_t)g * stride + n_kv, head_dim);
    // att[t] = k_t · q, q rounded to f16, accumulated in f32
    if (batch && head_dim % 16 == 0)
        run_attn_scores_group(att, stride, f16, att16 + n_kv, stride, nh, kc, n_kv, head_dim, kv_dim);
    else
        for (int g = 0; g < nh; g++)
            run_attn_scores1(att + (size_t)g * stride, f16, att16 + (size_t)g * stride + n_kv, kc,
                             n_kv, head_dim, kv_dim);
    for (int g = 0; g < nh; g++) {
        float *a = att + (size_t)g * stride;
        // gemma2: att[t] = c · tanh(att[t] · (1/c)), before the mask
        if (softcap != 0)
            run_softcap(a, n_kv, softcap);
        // masked positions stay in their lanes as -inf: their e^x is 0
        for (int t = 0; t < from; t++)
            a[t] = -INFINITY;
        attn_softmax(a, n_kv, kq_scale, sinks ? sinks[g] : NAN);
        // out = sum_t p_t v_t, p rounded to f16
        to_f16(a, att16 + (size_t)g * stride, n_kv);
    }
    float *out = att + s->n_ctx;
    if (batch)
        run_attn_values_group(out, stride, f16, att16, stride, nh, vc, n_kv, v_dim, kv_dim);
    else
        for (int g = 0; g < nh; g++)
            run_attn_values1(out + (size_t)g * stride, f16, att16 + (size_t)g * stride, vc, n_kv,
                             v_dim, kv_dim);
}

/* One layer's attention job: a unit is nh query heads (of one KV head) of
 * one token. */
typedef struct {
    run_state       *s;
    const run_hparams *hp;
    const float     *sinks;
    size_t           base, kv_dim;
    float            kq_scale;
    int              nb, pos, group, nh;
    bool             swa;
    int              hd, qd;         /* the block's head size and n_head · hd */
    int              vd;             /* a value's width (hd but for latent attention) */
    const gguf_half *vc;             /* the value cache (latent attention: the keys') */
} att_job;

static void att_unit(void *ctx, int64_t u, int thread)
{
    const att_job *j = ctx;
    run_state *s = j->s;
    const run_hparams *hp = j->hp;
    const int units = hp->n_head / j->nh;
    const int b = (int)(u / units), h = (int)(u % units) * j->nh, hd = j->hd, pos = j->pos;
    const size_t th = (size_t)thread, stride = (size_t)s->n_ctx + (size_t)hd;
    float *qh = s->q + (size_t)b * j->qd + (size_t)h * hd;
    const size_t kvh = (size_t)(h / j->group) * hd;
    float *att = s->att + th * FWD_MAX_GROUP * stride;
    const int from = j->swa && pos + b + 1 > hp->n_swa ? pos + b + 1 - hp->n_swa : 0;
    attend_heads(s, j->nh, qh, s->k_cache + j->base + kvh, j->vc + j->base + kvh, pos + b + 1, hd,
                 j->vd, j->kv_dim, j->kq_scale, att, s->att16 + th * FWD_MAX_GROUP * stride, stride,
                 j->nb > 1, from, j->sinks ? j->sinks + h : NULL, hp->attn_softcap);
    for (int g = 0; g < j->nh; g++)
        memcpy(qh + (size_t)g * hd, att + (size_t)g * stride + s->n_ctx, (size_t)j->vd * sizeof(float));
}

/* Multi-head attention for nb tokens at positions pos..pos+nb-1: token b
 * sees cache positions 0..pos+b (causal), only the last n_swa of them in a
 * sliding-window layer; query head h reads key/value head h / (n_head /
 * n_head_kv); a head's sink logit (gpt-oss) joins its softmax. Writes the
 * heads' outputs over s->q. */
static void attention(run_state *s, const run_model *m, int layer, int nb, int pos)
{
    const run_hparams *hp = &m->hp;
    const run_layer *l = &m->layers[layer];
    const int hd = l->head_dim;
    const size_t kv_dim = (size_t)hp->n_head_kv * hd;
    att_job j = {
        .s = s, .hp = hp, .sinks = l->sinks, .hd = hd, .qd = l->q_dim,
        .base = kv_base(s, m, l->kv_layer), .kv_dim = kv_dim,
        // 1/sqrt(head_dim) scales the scores, or q was scaled already (phi3, gemma);
        // latent attention: its own scale
        .kq_scale = hp->mla ? hp->mla_kq_scale : hp->q_scale != 0 ? 1.0f : 1.0f / sqrtf((float)hd),
        .vd = hp->mla ? hp->kv_lora : hd, .vc = hp->mla ? s->k_cache : s->v_cache,
        .nb = nb, .pos = pos, .group = hp->n_head / hp->n_head_kv, .swa = run_layer_is_swa(m, layer),
        .nh = 1,
    };
    /* a batch takes the query heads of a KV head together, up to
     * FWD_MAX_GROUP of them: each key and value row is read once for them */
    while (nb > 1 && !hp->mla && j.nh * 2 <= FWD_MAX_GROUP && j.group % (j.nh * 2) == 0 &&
           j.nh * 2 * j.vd <= FWD_MAX_HEAD_DIM)
        j.nh *= 2;
    /* the per-thread scratch was sized by the pool when the state was made */
    assert(pool_threads() <= s->n_threads);
    pool_for((int64_t)nb * (hp->n_head / j.nh), att_unit, &j);
}

/* ggml's soft_max of one unpadded row (its ggml_vec_soft_max_f32 on this
 * CPU kind): groups of 16 through the vector exponential, the rest of the
 * row through libm's expf (the attention rows are padded to whole groups,
 * a router's 4..128 experts are not); the sum in double, then each value
 * times (float)(1 / sum). Scalar only: a row per token and layer of at most
 * n_expert values (the libm tail could not be lanes anyway). */
static void row_softmax(float *x, int n)
{
    float max = -INFINITY;
    for (int i = 0; i < n; i++)
        max = x[i] > max ? x[i] : max;
    double sum = 0.0;
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        for (int k = 0; k < 16; k++)
            x[i + k] = exp_poly(x[i + k] - max);
        sum += (double)sum16_reduce(x + i);
    }
    for (; i < n; i++) {
        x[i] = expf(x[i] - max);
        sum += (double)x[i];
    }
    const float inv = (float)(1.0 / sum);
    for (i = 0; i < n; i++)
        x[i] *= inv;
}

/* Routing of one token (ggml's build_moe_ffn with softmax gating and
 * normalised weights): p = softmax(router logits); the n_used largest (the
 * first on ties) in descending order; their weights p / max(Σp, 2^-14),
 * Σ in double. */
/* The k largest of v[0..n) in descending order (the first on ties): their
 * indices into sel, their values into w. */
static void top_k(const float *v, int n, int k, int *sel, float *w)
{
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int e = 0; e < n; e++) {
            bool taken = false;
            for (int i = 0; i < j; i++)
                taken |= sel[i] == e;
            if (!taken && (best < 0 || v[e] > v[best]))
                best = e;
        }
        sel[j] = best;
        w[j] = v[best];
    }
}

static void moe_route(float *p, int n_expert, int n_used, int *sel, float *w)
{
    row_softmax(p, n_expert);
    top_k(p, n_expert, n_used, sel, w);
    double sum = 0.0;
    for (int j = 0; j < n_used; j++)
        sum += (double)w[j];
    float fs = (float)sum;
    fs = fs > 6.103515625e-5f ? fs : 6.103515625e-5f;
    for (int j = 0; j < n_used; j++)
        w[j] = w[j] / fs;
}

void run_route_biased(float *p, const float *bias, const run_route_params *rp, float *scratch,
                      int *sel, float *w)
{
    const int ne = rp->n_expert, ng = rp->n_group > 1 ? rp->n_group : 1;
    if (rp->softmax)
        row_softmax(p, ne);
    else
        rec_sigmoid(p, ne);
    float *sc = scratch, *gs = scratch + ne;
    for (int e = 0; e < ne; e++)
        sc[e] = bias ? p[e] + bias[e] : p[e];
    if (ng > 1) {
        const int per = ne / ng;
        float *keep = gs + ng;
        int top[2];
        float v[2];
        for (int g = 0; g < ng; g++) {
            top_k(sc + (size_t)g * per, per, 2, top, v);
            gs[g] = v[0] + v[1];
            keep[g] = 0.0f;
        }
        /* the n_group_used best groups (the first on ties) are kept */
        for (int j = 0; j < rp->n_group_used; j++) {
            int best = -1;
            for (int g = 0; g < ng; g++)
                if (keep[g] == 0.0f && (best < 0 || gs[g] > gs[best]))
                    best = g;
            keep[best] = 1.0f;
        }
        for (int g = 0; g < ng; g++)
            for (int e = 0; keep[g] == 0.0f && e < per; e++)
                sc[(size_t)g * per + e] = -INFINITY;
    }
    top_k(sc, ne, rp->n_used, sel, w);
    for (int j = 0; j < rp->n_used; j++)
        w[j] = p[sel[j]];
    if (rp->norm) {
        double sum = 0.0;
        for (int j = 0; j < rp->n_used; j++)
            sum += (double)w[j];
        float fs = (float)sum;
        fs = fs > 6.103515625e-5f ? fs : 6.103515625e-5f;
        for (int j = 0; j < rp->n_used; j++)
            w[j] = w[j] / fs;
    }
    if (rp->scale != 0.0f && rp->scale != 1.0f)
        for (int j = 0; j < rp->n_used; j++)
            w[j] *= rp->scale;
}

/* gpt-oss's routing of one token (build_moe_ffn with
 * LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT): the n_used largest
 * logits (the first on ties) in descending order, their weights the
 * softmax of those n_used logits alone. */
static void moe_route_topk_softmax(const float *logits, int n_expert, int n_used, int *sel,
                                   float *w)
{
    top_k(logits, n_expert, n_used, sel, w);
    row_softmax(w, n_used);
}

/* SwiGLU-OAI (ggml_swiglu_oai, alpha 1.702, limit 7): with the gate g
 * clamped above at 7 and the up projection u to [-7, 7],
 * g · σ(1.702 g) · (u + 1), e^x by libm.
 * No vector path: ggml calls libm's expf here (not its vector exponential,
 * exp_poly), so the bits are whatever the C library's expf gives (glibc's
 * rounds a double-precision table-and-polynomial result to float, and picks
 * an FMA build of it at run time). Lanes could only repeat one libm's
 * algorithm, and would part from the scalar on another; the clamps, the
 * division and the product are cheap beside the expf calls. */
static void swiglu_oai(float *g, const float *u, int n)
{
    const float alpha = 1.702f, limit = 7.0f;
    for (int i = 0; i < n; i++) {
        const float x = fminf(g[i], limit);
        const float y = fminf(fmaxf(u[i], -limit), limit);
        const float glu = x / (1.f + expf(alpha * (-x)));
        g[i] = glu * (y + 1.f);
    }
}

/* y (n, cols) += bias row e (of rows cols wide), when there is a bias. */
static void add_expert_bias(float *y, const float *bias, int e, int n, int cols)
{
    if (bias)
        add_bias(y, bias + (size_t)e * cols, n, cols);
}

/* The rows of s->xb routed to expert e into s->moe_x, slot by slot, then
 * token by token (the order llama-imatrix adds an expert's rows in), each
 * row's slot in s->moe_slot; returns how many. */
static int gather_expert(run_state *s, int e, int nb, int nu, int d)
{
    int n = 0;
    for (int j = 0; j < nu; j++)
        for (int b = 0; b < nb; b++)
            if (s->moe_sel[(size_t)b * nu + j] == e) {
                memcpy(s->moe_x + (size_t)n * d, s->xb + (size_t)b * d, (size_t)d * sizeof(float));
                s->moe_slot[n++] = b * nu + j;
            }
    return n;
}

/* The routed feed-forward of nb tokens (rows of s->xb) into s->xb2: each
 * token's experts (silu(x Wg_e^T) · x Wu_e^T) Wd_e^T, expert by expert
 * over the tokens routed to it (as mul_mat_id), each output times its
 * weight, then added in the token's routing order. */
static void moe_ffn(run_state *s, const run_model *m, const run_layer *l, int nb)
{
    const run_hparams *hp = &m->hp;
    const int d = hp->n_embd, ne = hp->n_expert, nu = hp->n_expert_used, ff = hp->n_ff_exp;
    const int routing = m->row ? gguf_arch_routing(m->row) : GGUF_ROUTING_SOFTMAX_TOPK;
    const bool oai = routing == GGUF_ROUTING_TOPK_SOFTMAX;
    const run_route_params rp = { ne, nu, hp->n_group, hp->n_group_used, hp->gating == 1,
                                  hp->weights_norm, hp->weights_scale };
    matmul(s, &l->gate_inp, s->xb, nb, s->moe_probs);
    add_bias(s->moe_probs, l->gate_inp_b, nb, ne);
    for (int b = 0; b < nb; b++) {
        float *p = s->moe_probs + (size_t)b * ne, *w = s->moe_w + (size_t)b * nu;
        int *sel = s->moe_sel + (size_t)b * nu;
        if (oai)
            moe_route_topk_softmax(p, ne, nu, sel, w);
        else if (routing == GGUF_ROUTING_SIGMOID_BIAS)
            run_route_biased(p, l->exp_probs_b, &rp, s->moe_scratch, sel, w);
        else
            moe_route(p, ne, nu, sel, w);
    }
    int *slot_of = s->moe_slot;
    for (int e = 0; e < ne; e++) {
        const int n = gather_expert(s, e, nb, nu, d);
        if (!n)
            continue;
        const run_matrix gate = run_expert(&l->gate_exps, ne, e), up = run_expert(&l->up_exps, ne, e);
        const run_matrix down = run_expert(&l->down_exps, ne, e);
        matmul(s, &gate, s->moe_x, n, s->hb);
        add_expert_bias(s->hb, l->gate_exps_b, e, n, ff);
        matmul(s, &up, s->moe_x, n, s->hb2);
        add_expert_bias(s->hb2, l->up_exps_b, e, n, ff);
        if (oai)
            swiglu_oai(s->hb, s->hb2, n * ff);
        else
            run_swiglu(s->hb, s->hb2, n * ff);
        matmul(s, &down, s->hb, n, s->moe_x);
        add_expert_bias(s->moe_x, l->down_exps_b, e, n, d);
        for (int r = 0; r < n; r++) {
            const float wr = s->moe_w[slot_of[r]];
            float *y = s->moe_y + (size_t)slot_of[r] * d;
            for (int i = 0; i < d; i++)
                y[i] = s->moe_x[(size_t)r * d + i] * wr;
        }
    }
    for (int b = 0; b < nb; b++) {
        float *out = s->xb2 + (size_t)b * d;
        memcpy(out, s->moe_y + (size_t)b * nu * d, (size_t)d * sizeof(float));
        for (int j = 1; j < nu; j++)
            for (int i = 0; i < d; i++)
                out[i] += s->moe_y[((size_t)b * nu + j) * d + i];
    }
}

/* Each of n consecutive heads of x (head_dim wide) RMS-normalised in place
 * with weights w (nothing when w is NULL). */
static void head_norms(float *x, const float *w, int n, int head_dim, float eps)
{
    if (!w)
        return;
    for (int h = 0; h < n; h++)
        run_rmsnorm(x + (size_t)h * head_dim, x + (size_t)h * head_dim, w, head_dim, eps);
}

/* Each of the nb rows of src (the sum of the widths n[0..parts) wide) cut
 * into its consecutive parts: the first n[0] values to dst[0], the next
 * n[1] to dst[1], ... (a fused product's q | k | v or gate | up). */
static void split_rows(const float *src, int nb, float *const *dst, const int *n, int parts)
{
    for (int b = 0; b < nb; b++)
        for (int p = 0; p < parts; p++) {
            memcpy(dst[p] + (size_t)b * n[p], src, (size_t)n[p] * sizeof *src);
            src += n[p];
        }
}

/* gemma: each of the nb rows of x (n wide) RMS-normalised in place with
 * weights w, before it joins the residual (nothing when w is NULL). */
static void post_norm(float *x, const float *w, int nb, int n, float eps)
{
    for (int b = 0; w && b < nb; b++)
        run_rmsnorm(x + (size_t)b * n, x + (size_t)b * n, w, n, eps);
}

/* Rows keep..nb-1 of the nb rows (n wide) of x moved to the front. */
static void keep_rows(float *x, int keep, int nb, int n)
{
    memmove(x, x + (size_t)keep * n, (size_t)(nb - keep) * n * sizeof *x);
}

/* ---------------------------------------------------------------------------
 * Hybrid models (qwen35, qwen35moe): Gated DeltaNet layers, gated attention,
 * M-RoPE, the shared expert
 */

/* M-RoPE, interleaved (ggml's IMROPE): rope pair i belongs to sector
 * i mod Σsections; sectors 3j, 3j+1, 3j+2 below three times the first,
 * second and third section's size turn with the token's position (text:
 * all three the same), any other with the fourth position, 0 for text:
 * its angle is 0 (cos · mscale, 0; mscale YaRN's or rope.scaling.attn_factor). */
static void mrope_angles(float *cs, const run_hparams *hp)
{
    const int *sec = hp->rope_sections;
    const int dims = sec[0] + sec[1] + sec[2] + sec[3];
    for (int i = 0; dims > 0 && i < hp->n_rot / 2; i++) {
        const int t = i % dims;
        const bool turns = (t % 3 == 0 && t < 3 * sec[0]) || (t % 3 == 1 && t < 3 * sec[1]) ||
                           (t % 3 == 2 && t < 3 * sec[2]);
        if (!turns) {
            const float mscale = hp->rope_yarn ? hp->yarn_mscale : hp->rope_attn_factor;
            cs[2 * i] = cosf(0.0f) * mscale;
            cs[2 * i + 1] = sinf(0.0f) * mscale;
        }
    }
}

/* Gated attention: the nb rows of qg (per head, head_dim query values then
 * head_dim gate values) give q its query halves. */
static void gated_q_split(float *q, const float *qg, int nb, int n_head, int hd)
{
    for (int b = 0; b < nb; b++)
        for (int h = 0; h < n_head; h++)
            memcpy(q + ((size_t)b * n_head + h) * hd, qg + ((size_t)b * n_head + h) * 2 * hd,
                   (size_t)hd * sizeof *q);
}

/* The attention output (nb, n_head · hd) times sigmoid of the gate halves. */
static void gated_q_apply(float *out, const float *qg, int nb, int n_head, int hd)
{
    for (int b = 0; b < nb; b++)
        for (int h = 0; h < n_head; h++) {
            const float *g = qg + ((size_t)b * n_head + h) * 2 * hd + hd;
            float *o = out + ((size_t)b * n_head + h) * hd;
            for (int i = 0; i < hd; i++) {
                const float sg = 1.f / (1.f + expf(-g[i]));
                o[i] *= sg;
            }
        }
}

/* The shared expert of nb tokens (rows of s->xb) added to the routed
 * experts' output in s->xb2: (silu(x Wg^T) · x Wu^T) Wd^T, times
 * sigmoid(x · gate_inp_shexp) when it has that gate (qwen35moe; glm4moe's
 * shared experts are added as they are). */
static void shared_expert(run_state *s, const run_model *m, const run_layer *l, int nb)
{
    const int d = m->hp.n_embd, ff = m->hp.n_ff_shexp;
    if (!l->up_shexp.data)
        return;
    matmul(s, &l->gate_shexp, s->xb, nb, s->shexp_g);
    matmul(s, &l->up_shexp, s->xb, nb, s->shexp_u);
    run_swiglu(s->shexp_g, s->shexp_u, nb * ff);
    matmul(s, &l->down_shexp, s->shexp_g, nb, s->moe_x);
    if (!l->gate_inp_shexp.data) {
        for (size_t i = 0; i < (size_t)nb * d; i++)
            s->xb2[i] += s->moe_x[i];
        return;
    }
    matmul(s, &l->gate_inp_shexp, s->xb, nb, s->moe_probs);
    rec_sigmoid(s->moe_probs, nb);
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < d; i++) { // ggml_mul, then ggml_add: two roundings
            const float gated = s->moe_x[(size_t)b * d + i] * s->moe_probs[b];
            s->xb2[(size_t)b * d + i] += gated;
        }
}

/* Layer il's place among the recurrent layers (its state's index). */
static size_t recurrent_index(const run_model *m, int il)
{
    size_t r = 0;
    for (int i = 0; i < il; i++)
        r += run_layer_is_recurrent(m, i);
    return r;
}

/* The delta rule of one value head over a batch's tokens, in order (one
 * unit per head: the heads' states are independent, so any thread gives
 * the same bits). */
typedef struct {
    const run_state *s;
    float *states, *scratch;
    int S, hk, hv, di, C, nb;
} delta_job;

static void delta_unit(void *ctx, int64_t u, int thread)
{
    const delta_job *j = ctx;
    const int S = j->S, hk = j->hk, hv = j->hv, h = (int)u;
    float *d = j->scratch + (size_t)thread * S;
    const fwd_simd_ops *vec = simd();
    for (int b = 0; b < j->nb; b++) {
        const float *qkv = j->s->rec_conv + (size_t)b * j->C;
        (vec->delta_step ? vec->delta_step : rec_delta_step)(j->states + (size_t)h * S * S, j->s->rec_o + (size_t)b * j->di + (size_t)h * S,
                       qkv + (size_t)(h % hk) * S, qkv + (size_t)(hk + h % hk) * S,
                       qkv + (size_t)2 * hk * S + (size_t)h * S, j->s->rec_g[(size_t)b * hv + h],
                       j->s->rec_beta[(size_t)b * hv + h], S, d);
    }
}

/* rec_silu_row, its groups of 16 by the vector path where there is one. */
static void silu_row(float *x, int n)
{
    const fwd_simd_ops *vec = simd();
    const int i = vec->silu ? vec->silu(x, n) : 0;
    rec_silu_row(x + i, n - i);
}

/* A Gated DeltaNet layer's mixing of nb tokens (rows of s->xb) into s->xb2
 * (llama.cpp's build_layer_attn_linear with the fused delta rule): the
 * q | k | v channels through the causal convolution and SiLU; q and k
 * l2-normalised per key head; each value head's delta rule (key head
 * h mod key heads) with decay softplus(x Wa^T + dt) · a and strength
 * sigmoid(x Wb^T); each head's output RMS-normalised (ssm_norm) times
 * silu(z); then ssm_out. Token by token or as one batch: the same bits. */
static void delta_net(run_state *s, const run_model *m, int il, int nb)
{
    const run_hparams *hp = &m->hp;
    const run_layer *l = &m->layers[il];
    const int S = hp->ssm_d_state, hk = hp->ssm_n_group, hv = hp->ssm_dt_rank;
    const int di = hp->ssm_d_inner, K = hp->ssm_conv_k, C = 2 * hk * S + di;
    const size_t r = recurrent_index(m, il);
    float *conv = s->conv_state + r * (size_t)C * (size_t)(K - 1);
    float *states = s->delta_state + r * (size_t)hv * (size_t)S * (size_t)S;
    float *scratch = s->rec_beta + (size_t)s->n_batch * hv;
    matmul(s, &l->wqkv, s->xb, nb, s->rec_in);
    matmul(s, &l->wz, s->xb, nb, s->rec_z);
    matmul(s, &l->ssm_beta, s->xb, nb, s->rec_beta);
    rec_sigmoid(s->rec_beta, nb * hv);
    matmul(s, &l->ssm_alpha, s->xb, nb, s->rec_g);
    for (int b = 0; b < nb; b++)
        for (int h = 0; h < hv; h++) {
            float *g = s->rec_g + (size_t)b * hv + h;
            *g = rec_softplus(*g + l->ssm_dt[h]) * l->ssm_a[h];
        }
    const fwd_simd_ops *vec = simd();
    if (!vec->conv || vec->conv(s->rec_conv, s->rec_in, conv, l->ssm_conv, C, K, nb))
        rec_conv(s->rec_conv, s->rec_in, conv, l->ssm_conv, C, K, nb, scratch);
    for (int b = 0; b < nb; b++) {
        float *qkv = s->rec_conv + (size_t)b * C;
        silu_row(qkv, C);
        for (int h = 0; h < 2 * hk; h++)
            rec_l2_norm(qkv + (size_t)h * S, S, hp->rms_eps);
    }
    /* the per-thread scratch was sized by the pool when the state was made */
    assert(pool_threads() <= s->n_threads);
    delta_job j = { s, states, scratch + K, S, hk, hv, di, C, nb };
    pool_for(hv, delta_unit, &j);
    for (size_t h = 0; h < (size_t)nb * hv; h++) {
        float *o = s->rec_o + h * S, *z = s->rec_z + h * S;
        run_rmsnorm(o, o, l->ssm_norm, S, hp->rms_eps);
        silu_row(z, S);
        for (int i = 0; i < S; i++)
            o[i] *= z[i];
    }
    matmul(s, &l->ssm_out, s->rec_o, nb, s->xb2);
}

/* ---------------------------------------------------------------------------
 * Gemma 4: values normalised without weights, experts beside the dense
 * feed-forward, per-layer inputs
 */

/* ggml_rms_norm without weights: y = x / sqrt(mean(x^2) + eps), the sum
 * of squares in double as run_rmsnorm. */
static void rmsnorm_plain(float *y, const float *x, int n, float eps)
{
    double ss = 0.0;
    for (int i = 0; i < n; i++)
        ss += (double)(x[i] * x[i]);
    const float mean = (float)(ss / n);
    const float scale = 1.0f / sqrtf(mean + eps);
    for (int i = 0; i < n; i++)
        y[i] = x[i] * scale;
}

/* Each of n consecutive heads of x (head_dim wide) RMS-normalised in place
 * without weights (gemma4's values). */
static void head_norms_plain(float *x, int n, int head_dim, float eps)
{
    for (int h = 0; h < n; h++)
        rmsnorm_plain(x + (size_t)h * head_dim, x + (size_t)h * head_dim, head_dim, eps);
}

void run_gelu(float *x, int n, const gguf_half *gelu16)
{
    const fwd_simd_ops *vec = simd();
    for (int i = vec->geglu ? vec->geglu(x, NULL, n, gelu16) : 0; i < n; i++) {
        const float v = x[i];
        if (v <= -10.0f)
            x[i] = 0.0f;
        else if (v < 10.0f)
            x[i] = gguf_f16_to_f32(gelu16[gguf_f32_to_f16(v)]);
    }
}

/* Gemma 4's feed-forward of nb tokens (x after the attention; xb its
 * ffn_norm) into s->xb2, as llama.cpp's gemma4 graph: the dense GeGLU
 * normalised by post_norm_1, plus the experts normalised by post_norm_2.
 * The router reads rmsnorm(x) / sqrt(n_embd) · gate_inp_scale; the experts
 * read rmsnorm(x) · pre_norm_2, each one's fused gate | up product goes
 * through GeGLU and down, times the expert's scale, then times its
 * routing weight; the slots are added in routing order. */
static void ffn_beside_experts(run_state *s, const run_model *m, const run_layer *l, int nb)
{
    const run_hparams *hp = &m->hp;
    const int d = hp->n_embd, ff = l->n_ff, ne = hp->n_expert, nu = hp->n_expert_used,
              fe = hp->n_ff_exp;
    const float eps = hp->rms_eps, inv_sqrt_d = 1.0f / sqrtf((float)d);
    float *dense = s->ffn_dense;
    matmul(s, &l->w_gate, s->xb, nb, s->hb);
    matmul(s, &l->w_up, s->xb, nb, s->hb2);
    run_geglu(s->hb, s->hb2, nb * ff, s->gelu16);
    matmul(s, &l->w_down, s->hb, nb, dense);
    post_norm(dense, l->ffn_post_norm_1, nb, d, eps);
    // router logits of rmsnorm(x) / sqrt(d) · scale; softmax, top k, normalised
    for (int b = 0; b < nb; b++) {
        float *r = s->xb + (size_t)b * d;
        rmsnorm_plain(r, s->x + (size_t)b * d, d, eps);
        for (int i = 0; i < d; i++)
            r[i] = (r[i] * inv_sqrt_d) * l->gate_inp_scale[i];
    }
    matmul(s, &l->gate_inp, s->xb, nb, s->moe_probs);
    for (int b = 0; b < nb; b++)
        moe_route(s->moe_probs + (size_t)b * ne, ne, nu, s->moe_sel + (size_t)b * nu,
                  s->moe_w + (size_t)b * nu);
    for (int b = 0; b < nb; b++)
        run_rmsnorm(s->xb + (size_t)b * d, s->x + (size_t)b * d, l->ffn_pre_norm_2, d, eps);
    int *slot_of = s->moe_slot;
    for (int e = 0; e < ne; e++) {
        const int n = gather_expert(s, e, nb, nu, d);
        if (!n)
            continue;
        const run_matrix gu = run_expert(&l->gate_up_exps, ne, e);
        const run_matrix down = run_expert(&l->down_exps, ne, e);
        matmul(s, &gu, s->moe_x, n, s->moe_gu);
        split_rows(s->moe_gu, n, (float *const[]){ s->hb, s->hb2 }, (const int[]){ fe, fe }, 2);
        run_geglu(s->hb, s->hb2, n * fe, s->gelu16);
        matmul(s, &down, s->hb, n, s->moe_x);
        const float es = l->down_exps_scale ? l->down_exps_scale[e] : 1.0f; // · 1 is exact
        for (int r = 0; r < n; r++) {
            const float wr = s->moe_w[slot_of[r]];
            float *y = s->moe_y + (size_t)slot_of[r] * d;
            for (int i = 0; i < d; i++)
                y[i] = (s->moe_x[(size_t)r * d + i] * es) * wr;
        }
    }
    for (int b = 0; b < nb; b++) {
        float *out = s->xb2 + (size_t)b * d;
        memcpy(out, s->moe_y + (size_t)b * nu * d, (size_t)d * sizeof(float));
        for (int j = 1; j < nu; j++)
            for (int i = 0; i < d; i++)
                out[i] += s->moe_y[((size_t)b * nu + j) * d + i];
    }
    post_norm(s->xb2, l->ffn_post_norm_2, nb, d, eps);
    for (size_t i = 0; i < (size_t)nb * d; i++)
        s->xb2[i] = dense[i] + s->xb2[i];
}

/* Gemma 4's per-layer inputs of nb tokens (x: the scaled embeddings) into
 * s->pl, n_layer · n_embd_pl per token: (rmsnorm of each block's part of
 * x W_proj^T / sqrt(n_embd), by pl_proj_norm) + the token's row of
 * per_layer_token_embd · sqrt(n_embd_pl), all times 1/sqrt(2). */
static void per_layer_inputs(run_state *s, const run_model *m, const int32_t *tokens, int nb)
{
    const run_hparams *hp = &m->hp;
    const int d = hp->n_embd, npl = hp->n_embd_pl, w = hp->n_layer * npl;
    const float proj_scale = 1.0f / sqrtf((float)d), tok_scale = sqrtf((float)npl),
                in_scale = 1.0f / sqrtf(2.0f);
    matmul(s, &m->pl_model_proj, s->x, nb, s->pl);
    for (size_t i = 0; i < (size_t)nb * w; i++)
        s->pl[i] *= proj_scale;
    for (size_t r = 0; r < (size_t)nb * hp->n_layer; r++)
        run_rmsnorm(s->pl + r * npl, s->pl + r * npl, m->pl_proj_norm, npl, hp->rms_eps);
    for (int b = 0; b < nb; b++) {
        const uint8_t *row = (const uint8_t *)m->pl_tok_embd.data +
                             (size_t)tokens[b] * m->pl_tok_embd.row_bytes;
        gguf_dequantize_row(m->pl_tok_embd.type, row, s->pl_row, w, NULL);
        float *p = s->pl + (size_t)b * w;
        for (int i = 0; i < w; i++)
            p[i] = (p[i] + s->pl_row[i] * tok_scale) * in_scale;
    }
}

/* Block il's per-layer input for its nb rows (the token rows keep.. of the
 * batch): x += rmsnorm((gelu(x Wg^T) · pl) Wp^T) · pl_post_norm. */
static void per_layer_input(run_state *s, const run_model *m, const run_layer *l, int il, int nb,
                            int keep)
{
    const run_hparams *hp = &m->hp;
    const int d = hp->n_embd, npl = hp->n_embd_pl, w = hp->n_layer * npl;
    matmul(s, &l->pl_gate, s->x, nb, s->pl_h);
    run_gelu(s->pl_h, nb * npl, s->gelu16);
    for (int b = 0; b < nb; b++) {
        float *h = s->pl_h + (size_t)b * npl;
        const float *in = s->pl + (size_t)(b + keep) * w + (size_t)il * npl;
        for (int i = 0; i < npl; i++)
            h[i] *= in[i];
    }
    matmul(s, &l->pl_proj, s->pl_h, nb, s->xb2);
    post_norm(s->xb2, l->pl_post_norm, nb, d, hp->rms_eps);
    for (size_t i = 0; i < (size_t)nb * d; i++)
        s->x[i] += s->xb2[i];
}

/* ---------------------------------------------------------------------------
 * Multi-head latent attention (DeepSeek-V2/V3)
 */

/* dst (nb, n) = the n floats at off of each of nb rows stride apart in src. */
static void rows_get(float *dst, const float *src, int nb, size_t stride, size_t off, int n)
{
    for (int b = 0; b < nb; b++)
        memcpy(dst + (size_t)b * n, src + (size_t)b * stride + off, (size_t)n * sizeof *dst);
}

/* The n floats at off of each of nb rows stride apart in dst = src (nb, n). */
static void rows_put(float *dst, size_t stride, size_t off, const float *src, int nb, int n)
{
    for (int b = 0; b < nb; b++)
        memcpy(dst + (size_t)b * stride + off, src + (size_t)b * n, (size_t)n * sizeof *dst);
}

/* y (nb, rows) = x (nb, cols) times head h's matrix of a per-head stack
 * (k_b, v_b), as ggml's mul_mat of the 3-D weight: one 2-D product per
 * head, every output a one-row dot product (rows_order: ggml's order when
 * the activations are a permuted f32 view) or as kern_matmul orders a
 * batch. Not through matmul: the importance hook sees all heads at once
 * (mla_attention) and the stacks take no LoRA pairs. */
static void head_product(run_state *s, const run_matrix *w, int n_head, int h, bool rows_order,
                         const float *x, int nb, float *y)
{
    run_matrix wh = run_expert(w, n_head, h);
    wh.stack = rows_order ? w : NULL; /* product(): a slice of a stack goes row by row */
    product(s, &wh, x, nb, y);
}

/* The latent attention of nb tokens at pos (rows of s->xb) into s->xb2, as
 * llama.cpp's deepseek2 graph with the absorbed k_b/v_b (its is_mla form):
 *   q = q_b(rmsnorm(q_a x) · q_a_norm) (or attn_q x), per head nope | rope;
 *   kv_a_mqa x = latent | k_rope; both rope parts rotated by the position,
 *   the latent RMS-normalised (kv_a_norm) — the cached key row is
 *   latent | k_rope (f16, one per token: the only cache);
 *   each head's query is (k_b_h q_nope) | q_rope, attending over the cached
 *   rows with the latent as values (one K/V head, scores times mla_kq_scale);
 *   each head's output times v_b_h; the heads' values through attn_output. */
static void mla_attention(run_state *s, const run_model *m, int il, int nb, int pos)
{
    const run_hparams *hp = &m->hp;
    const run_layer *l = &m->layers[il];
    const int H = hp->n_head, nope = hp->mla_nope, rot = hp->n_rot, kl = hp->kv_lora,
              vh = hp->mla_v, qk = nope + rot, hd = l->head_dim, qd = l->q_dim;
    float *q = s->mla_q;
    /* llama.cpp e21cdc11 multiplies the q path and kv_a_mqa by plain mul_mat,
     * not build_lora_mm: an adapter's pairs on them are checked, not applied */
    if (l->wq_a.data) {
        matmul_plain(s, &l->wq_a, s->xb, nb, s->mla_qa);
        for (int b = 0; b < nb; b++) {
            float *r = s->mla_qa + (size_t)b * hp->q_lora;
            run_rmsnorm(r, r, l->q_a_norm, hp->q_lora, hp->rms_eps);
        }
        matmul_plain(s, &l->wq_b, s->mla_qa, nb, q);
    } else {
        matmul_plain(s, &l->wq, s->xb, nb, q);
    }
    matmul_plain(s, &l->wkv_a_mqa, s->xb, nb, s->k);
    for (int b = 0; b < nb; b++) {
        if (hp->rope_yarn)
            rope_angles_yarn(s->rope_cs, hp, pos + b, s->rope_freqs);
        else
            rope_angles(s->rope_cs, rot, pos + b, hp->rope_base, hp->rope_scale, s->rope_freqs,
                        hp->rope_attn_factor);
        rope_apply(q + (size_t)b * H * qk + nope, H, qk, rot, s->rope_cs, hp->rope_layout);
        float *kv = s->k + (size_t)b * hd;
        rope_apply(kv + kl, 1, hd, rot, s->rope_cs, hp->rope_layout);
        run_rmsnorm(kv, kv, l->kv_a_norm, kl, hp->rms_eps);
    }
    // the importance hook sees k_b's input as llama-imatrix sees the 3-D
    // product: each token's row of every head's nope part
    if (s->act_hook) {
        for (int h = 0; h < H; h++)
            for (int b = 0; b < nb; b++)
                memcpy(s->mla_hook + ((size_t)b * H + h) * nope, q + (size_t)b * H * qk +
                       (size_t)h * qk, (size_t)nope * sizeof *q);
        s->act_hook(s->act_user, &l->wk_b, s->mla_hook, nb);
    }
    // head h's query: k_b_h q_nope | q_rope (f32 weights: ggml multiplies
    // the permuted view row by row)
    const bool kb_rows = l->wk_b.type == GGUF_DT_F32;
    for (int h = 0; h < H; h++) {
        rows_get(s->mla_g, q, nb, (size_t)H * qk, (size_t)h * qk, nope);
        head_product(s, &l->wk_b, H, h, kb_rows, s->mla_g, nb, s->mla_h);
        rows_put(s->q, (size_t)qd, (size_t)h * hd, s->mla_h, nb, kl);
        for (int b = 0; b < nb; b++)
            memcpy(s->q + (size_t)b * qd + (size_t)h * hd + kl,
                   q + (size_t)b * H * qk + (size_t)h * qk + nope, (size_t)rot * sizeof *q);
    }
    to_f16(s->k, s->k_cache + kv_base(s, m, il) + (size_t)pos * s->kv_dim, (int64_t)nb * hd);
    attention(s, m, il, nb, pos); // head h's latent output at s->q[b][h · hd ..+ kl]
    if (s->act_hook) {
        for (int b = 0; b < nb; b++)
            for (int h = 0; h < H; h++)
                memcpy(s->mla_hook + ((size_t)b * H + h) * kl,
                       s->q + (size_t)b * qd + (size_t)h * hd, (size_t)kl * sizeof *q);
        s->act_hook(s->act_user, &l->wv_b, s->mla_hook, nb);
    }
    for (int h = 0; h < H; h++) {
        rows_get(s->mla_g, s->q, nb, (size_t)qd, (size_t)h * hd, kl);
        head_product(s, &l->wv_b, H, h, false, s->mla_g, nb, s->mla_h);
        rows_put(s->mla_o, (size_t)H * vh, (size_t)h * vh, s->mla_h, nb, vh);
    }
    matmul(s, &l->wo, s->mla_o, nb, s->xb2);
}

/* Layer il over nb tokens at pos. From the attention output on, only rows
 * keep..nb-1 go on (x then holds nb - keep rows), as llama.cpp keeps only
 * the rows whose logits are wanted after the last layer's attention. */
static void forward_layer(run_state *s, const run_model *m, int il, int nb, int pos, int keep)
{
    const run_hparams *hp = &m->hp;
    const run_layer *l = &m->layers[il];
    const int d = hp->n_embd, hd = l->head_dim, qd = l->q_dim, kv = hp->n_head_kv * hd,
              ff = l->n_ff, n_rot = l->n_rot;
    const size_t cache = kv_base(s, m, l->kv_layer) + (size_t)pos * (size_t)kv;
    const bool own_kv = l->kv_layer == il; /* else the cache of an earlier block, as written */

    // attention sub-layer: xb = rmsnorm(x) * attn_norm
    for (int b = 0; b < nb; b++)
        run_rmsnorm(s->xb + (size_t)b * d, s->x + (size_t)b * d, l->attn_norm, d, hp->rms_eps);
    // qwen35: a Gated DeltaNet layer mixes the tokens instead of attention
    const bool gated = l->wq.rows == 2 * (int64_t)qd;
    if (run_layer_is_recurrent(m, il)) {
        delta_net(s, m, il, nb);
        goto residual;
    }
    if (l->wkv_a_mqa.data) { // deepseek2: latent attention
        mla_attention(s, m, il, nb, pos);
        goto residual;
    }
    // q (nb, qd) = xb Wq^T + bq;  k, v (nb, kv) = xb Wk^T + bk, xb Wv^T + bv
    if (gated) { // qwen35: each head's query rows then its output gate's rows
        matmul(s, &l->wq, s->xb, nb, s->qg);
        gated_q_split(s->q, s->qg, nb, hp->n_head, hp->head_dim);
        matmul(s, &l->wk, s->xb, nb, s->k);
        matmul(s, &l->wv, s->xb, nb, s->v);
    } else if (l->wqkv.data) { // phi3: one product (nb, qd + 2 kv) = xb Wqkv^T, rows q | k | v
        matmul(s, &l->wqkv, s->xb, nb, s->fused);
        split_rows(s->fused, nb, (float *const[]){ s->q, s->k, s->v },
                   (const int[]){ qd, kv, kv }, 3);
    } else {
        matmul(s, &l->wq, s->xb, nb, s->q);
        if (own_kv)
            matmul(s, &l->wk, s->xb, nb, s->k);
        if (own_kv && l->wv.data)
            matmul(s, &l->wv, s->xb, nb, s->v);
        else if (own_kv) // gemma4's full blocks: no wv, the keys are the values
            memcpy(s->v, s->k, (size_t)nb * kv * sizeof *s->v);
    }
    add_bias(s->q, l->bq, nb, qd);
    add_bias(s->k, l->bk, nb, kv);
    add_bias(s->v, l->bv, nb, kv);
    // qwen3: every head of q and k RMS-normalised on its own, before rope
    head_norms(s->q, l->q_norm, nb * hp->n_head, hd, hp->rms_eps);
    head_norms(s->k, l->k_norm, nb * hp->n_head_kv, hd, hp->rms_eps);
    // gemma4: every value head RMS-normalised, without weights
    if (hp->v_norm && own_kv)
        head_norms_plain(s->v, nb * hp->n_head_kv, hd, hp->rms_eps);
    // rotate q and k by their positions (a sliding-window layer by its own
    // base and scale), append k and v to the cache as f16
    const bool swa = run_layer_is_swa(m, il);
    const float base = swa ? hp->rope_base_swa : hp->rope_base;
    const float scale = swa ? hp->rope_scale_swa : hp->rope_scale;
    // gemma4: the frequency divisors (proportional rope) are the full blocks' alone
    const float *freqs = swa && hp->swa_rope_plain_freqs ? NULL : s->rope_freqs;
    for (int b = 0; b < nb; b++) {
        if (hp->rope_yarn)
            rope_angles_yarn(s->rope_cs, hp, pos + b, freqs);
        else
            rope_angles(s->rope_cs, n_rot, pos + b, base, scale, freqs, hp->rope_attn_factor);
        if (hp->rope_imrope)
            mrope_angles(s->rope_cs, hp);
        rope_apply(s->q + (size_t)b * qd, hp->n_head, hd, n_rot, s->rope_cs, hp->rope_layout);
        if (own_kv)
            rope_apply(s->k + (size_t)b * kv, hp->n_head_kv, hd, n_rot, s->rope_cs,
                       hp->rope_layout);
    }
    // phi3, gemma: q times 1/sqrt(head_dim) here, in f32, so the scores are not scaled
    if (hp->q_scale != 0)
        for (size_t i = 0; i < (size_t)nb * qd; i++)
            s->q[i] *= hp->q_scale;
    if (own_kv) {
        to_f16(s->k, s->k_cache + cache, (int64_t)nb * kv);
        to_f16(s->v, s->v_cache + cache, (int64_t)nb * kv);
    }
    attention(s, m, il, nb, pos);
    if (gated) // qwen35: the attention output times sigmoid(gate)
        gated_q_apply(s->q, s->qg, nb, hp->n_head, hd);
    // x += att Wo^T + bo (gemma: rmsnorm(att Wo^T) * attn_post_norm)
    matmul(s, &l->wo, s->q, nb, s->xb2);
    add_bias(s->xb2, l->bo, nb, d);
residual:
    if (keep > 0) {
        keep_rows(s->x, keep, nb, d);
        keep_rows(s->xb2, keep, nb, d);
        nb -= keep;
    }
    post_norm(s->xb2, l->attn_post_norm, nb, d, hp->rms_eps);
    for (size_t i = 0; i < (size_t)nb * d; i++)
        s->x[i] += s->xb2[i];

    // feed-forward sub-layer: x += (silu(xb Wg^T) * (xb Wu^T)) Wd^T, xb = rmsnorm(x) * ffn_norm
    for (int b = 0; b < nb; b++)
        run_rmsnorm(s->xb + (size_t)b * d, s->x + (size_t)b * d, l->ffn_norm, d, hp->rms_eps);
    if (l->gate_up_exps.data) { // gemma4: the dense feed-forward and the experts side by side
        ffn_beside_experts(s, m, l, nb);
    } else if (hp->n_expert && l->gate_inp.data) { // glm4moe's leading blocks: dense
        moe_ffn(s, m, l, nb);
        shared_expert(s, m, l, nb);
    } else {
        if (l->w_gate_up.data) { // phi3: one product (nb, 2 ff) = xb Wgu^T, rows gate | up
            matmul(s, &l->w_gate_up, s->xb, nb, s->fused);
            split_rows(s->fused, nb, (float *const[]){ s->hb, s->hb2 }, (const int[]){ ff, ff },
                       2);
        } else {
            matmul(s, &l->w_gate, s->xb, nb, s->hb);
            matmul(s, &l->w_up, s->xb, nb, s->hb2);
        }
        if (s->gelu16)
            run_geglu(s->hb, s->hb2, nb * ff, s->gelu16);
        else
            run_swiglu(s->hb, s->hb2, nb * ff);
        matmul(s, &l->w_down, s->hb, nb, s->xb2);
    }
    post_norm(s->xb2, l->ffn_post_norm, nb, d, hp->rms_eps);
    for (size_t i = 0; i < (size_t)nb * d; i++)
        s->x[i] += s->xb2[i];
    // gemma4: the block's per-layer input, then the output scale
    if (l->pl_gate.data)
        per_layer_input(s, m, l, il, nb, keep);
    if (l->out_scale)
        for (size_t i = 0; i < (size_t)nb * d; i++)
            s->x[i] *= l->out_scale[0];
}

/* One batch of nb <= n_batch tokens at pos; logits of rows out_from..nb-1. */
static void forward_batch(run_state *s, const run_model *m, const int32_t *tokens, int nb, int pos,
                          int out_from, float *logits)
{
    const int d = m->hp.n_embd;
    // x (nb, d) = token_embd rows
    for (int b = 0; b < nb; b++) {
        const uint8_t *row = (const uint8_t *)m->tok_embd.data +
                             (size_t)tokens[b] * m->tok_embd.row_bytes;
        gguf_dequantize_row(m->tok_embd.type, row, s->x + (size_t)b * d, d, NULL);
    }
    embd_lora(s, m, tokens, nb);
    // gemma: x *= sqrt(n_embd)
    if (m->hp.embd_scale != 0)
        for (size_t i = 0; i < (size_t)nb * d; i++)
            s->x[i] *= m->hp.embd_scale;
    // gemma4: every block's input row of each token
    if (m->pl_tok_embd.data)
        per_layer_inputs(s, m, tokens, nb);
    // the last layer goes on with the wanted rows alone (all of them when
    // none is wanted: the importance matrix sees every row, as llama-imatrix)
    const int last = m->hp.n_layer_run - 1; /* glm4moe: its next-token block is not run */
    // --sensitivity: record each block's input, or start from a recorded one
    float *snap = NULL;
    const size_t snap_stride = (size_t)s->n_batch * (size_t)d;
    int il0 = 0;
    if (s->snap_mode && s->snap_at < s->snap_cap) {
        snap = s->snap + (size_t)s->snap_at++ * (size_t)(last + 2) * snap_stride;
        if (s->snap_mode == 2) {
            il0 = s->snap_from;
            memcpy(s->x, snap + (size_t)il0 * snap_stride, (size_t)nb * d * sizeof *s->x);
        }
    }
    for (int il = il0; il <= last; il++) {
        if (snap && s->snap_mode == 1)
            memcpy(snap + (size_t)il * snap_stride, s->x, (size_t)nb * d * sizeof *s->x);
        forward_layer(s, m, il, nb, pos, il == last && out_from < nb ? out_from : 0);
    }
    if (snap && s->snap_mode == 1)
        memcpy(snap + (size_t)(last + 1) * snap_stride, s->x, (size_t)nb * d * sizeof *s->x);
    if (out_from >= nb)
        return;
    // logits (n_out, n_vocab) = rmsnorm(x) * output_norm @ output^T
    const int n_out = nb - out_from;
    for (int b = 0; b < n_out; b++)
        run_rmsnorm(s->xb + (size_t)b * d, s->x + (size_t)b * d, m->output_norm, d,
                    m->hp.rms_eps);
    matmul(s, &m->output, s->xb, n_out, logits);
    // gemma: logits l = c · tanh(l · (1/c))
    if (m->hp.final_softcap != 0)
        run_softcap(logits, n_out * m->hp.n_vocab, m->hp.final_softcap);
    // A NaN or Inf anywhere upstream stays in the residual stream, but a
    // product with quantized activations turns it into zeros (the block's
    // absmax passes over a NaN: scale 0), so the logits could come out
    // finite — all 0 for a model with a NaN block scale. Such a row's
    // logits are NaN, which every caller reports as non-finite.
    for (int b = 0; b < n_out; b++)
        if (!run_all_finite(s->x + (size_t)b * d, d))
            for (int v = 0; v < m->hp.n_vocab; v++)
                logits[(size_t)b * m->hp.n_vocab + v] = NAN;
}

bool run_all_finite(const float *x, int n)
{
    float acc = 0.0f;
    for (int i = 0; i < n; i++)
        acc += x[i] * 0.0f;
    return acc == 0.0f;
}

void run_forward(run_state *s, const run_model *m, const int32_t *tokens, int n, int pos,
                 int out_from, float *logits)
{
    // a batch at position 0 starts a sequence: the recurrent layers forget
    if (pos == 0 && s->conv_state) {
        size_t n_rec = 0;
        const run_hparams *hp = &m->hp;
        const size_t S = (size_t)hp->ssm_d_state;
        const size_t C = 2 * (size_t)hp->ssm_n_group * S + (size_t)hp->ssm_d_inner;
        for (int il = 0; il < hp->n_layer; il++)
            n_rec += run_layer_is_recurrent(m, il);
        memset(s->conv_state, 0, n_rec * C * (size_t)(hp->ssm_conv_k - 1) * sizeof(float));
        memset(s->delta_state, 0, n_rec * (size_t)hp->ssm_dt_rank * S * S * sizeof(float));
    }
    for (int done = 0; done < n; done += s->n_batch) {
        const int nb = n - done < s->n_batch ? n - done : s->n_batch;
        const int from = out_from > done ? out_from - done : 0;
        float *out = NULL;
        if (from < nb) // this batch's first wanted row is logits row done + from - out_from
            out = logits + (size_t)(done + from - out_from) * (size_t)m->hp.n_vocab;
        /* the pool adapts to each batch size class apart: a prompt's loops
         * and one token's are not compared */
        int cls = 0;
        for (int b = nb; b; b >>= 1)
            cls++;
        pool_set_class(cls);
        forward_batch(s, m, tokens + done, nb, pos + done, from, out);
        pool_set_class(0);
    }
}
