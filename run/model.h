/*
 * model.h — a transformer's hyperparameters and weights, found in a mapped GGUF.
 *
 * run_model_load() takes the hyper-parameters of a model of the registry
 * from libgguf's validated view of them (gguf_hparams_read), finds every
 * tensor the forward pass needs and checks that all of it adds up (what
 * gguf-run needs beyond validity, every tensor's shape and type against the
 * hyperparameters and the vocabulary size) before anything runs, so that a
 * malformed model is an error message, never a crash or a division by zero.
 * Weight matrices stay in the mapping (no copies); only the small 1-D
 * tensors (norm weights, biases, rope frequency factors) are converted to
 * owned f32 arrays.
 *
 * Not for: running the model (forward.h) or the vocabulary (<ggufkit/vocab.h>).
 */
#ifndef RUN_MODEL_H
#define RUN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggufkit/arch.h>
#include <ggufkit/gguf.h>

/* How RoPE pairs the dimensions of a head (ggml's rope modes). */
enum run_rope_layout {
    RUN_ROPE_NORM = 0, /* llama, mistral: rotate (x[2i], x[2i+1]) */
    RUN_ROPE_NEOX = 2  /* qwen2: rotate (x[i], x[i + n_rot/2]) */
};

typedef struct run_hparams {
    int   n_embd;      /* model width */
    int   n_layer;
    int   n_head;      /* query heads */
    int   n_head_kv;   /* key/value heads; n_head is a multiple of it */
    int   head_dim;    /* attention.key_length, else n_embd / n_head */
    int   q_dim;       /* n_head * head_dim: q and the attention output */
    int   n_ff;        /* feed-forward width */
    int   n_expert;    /* experts per layer (0: a dense feed-forward) */
    int   n_expert_used; /* experts each token is routed to */
    int   n_ff_exp;    /* one expert's feed-forward width */
    int   n_vocab;     /* rows of token_embd == number of tokens */
    int   n_ctx_train; /* {arch}.context_length */
    /* hybrid models (qwen35, qwen35moe): layer il is a Gated DeltaNet
     * layer (run_layer_is_recurrent) unless (il + 1) % full_attn_interval
     * is 0; its convolution has ssm_conv_k taps over the q | k | v channels
     * (2 · ssm_n_group · ssm_d_state + ssm_d_inner), ssm_n_group key heads
     * and ssm_dt_rank value heads, both ssm_d_state wide (0: no such layers) */
    int   full_attn_interval;
    int   ssm_conv_k, ssm_d_state, ssm_n_group, ssm_dt_rank, ssm_d_inner;
    /* M-RoPE (rope.dimension_sections): with rope_imrope, rope pair i of a
     * head turns with the position unless its sector (i mod Σsections) is
     * none of the first three interleaved sections', where it stays put (text
     * tokens: every section the same position, the fourth 0) */
    bool  rope_imrope;
    int   rope_sections[4];
    int   n_ff_shexp;  /* the shared expert's feed-forward width (0: none) */
    int   n_rot;       /* rotated dimensions per head (even, <= head_dim) */
    float rope_base;   /* theta_i = pos * rope_base^(-2i/n_rot) */
    float rope_scale;  /* linear rope scaling: angles times this (1 / factor) */
    float rms_eps;
    enum run_rope_layout rope_layout;
    float q_scale;     /* phi3, gemma: q times this after rope, before the scores (which
                        * are then not scaled); 0: scores times 1/sqrt(head_dim) */
    float embd_scale;  /* gemma: token embeddings times this (sqrtf(n_embd)); 0: none */
    float attn_softcap;  /* gemma2: scores s become c·tanh(s/c) before the softmax; 0: none */
    float final_softcap; /* gemma: logits l become c·tanh(l/c); 0: none */
    /* YaRN (rope.scaling.type "yarn"): angles blend scaled and unscaled by
     * the ramp between the correction dims, cos/sin times yarn_mscale */
    bool  rope_yarn;
    float yarn_ext_factor, yarn_mscale, yarn_corr[2];
    float yarn_attn;   /* llama.cpp's attn_factor (cparams.yarn_attn_factor) before rope's
                        * own YaRN factor: rope_attn_factor without YaRN */
    int   n_ctx_orig;  /* rope.scaling.original_context_length */
    float rope_attn_factor; /* rope.scaling.attn_factor (phi3 LongRoPE): cos and sin times
                             * this, as llama.cpp's context applies it; 1 when absent */
    /* sliding window (run_layer_is_swa): with n_swa > 0, layer il attends
     * to its n_swa last positions unless il % swa_period == swa_period - 1
     * (every layer when swa_period is 0), rotated by rope_base_swa and
     * rope_scale_swa */
    int   n_swa, swa_period;
    float rope_base_swa, rope_scale_swa;
    /* Gemma 4: blocks of their own geometry (run_layer's head_dim, q_dim,
     * n_rot, n_ff: head_dim, q_dim, n_rot and n_ff above are the largest),
     * each value head RMS-normalised without weights (v_norm), the
     * sliding-window blocks rotated without the frequency divisors
     * (swa_rope_plain_freqs), the last n_layer - n_layer_kv blocks
     * attending over the cache of the last earlier block of their kind
     * (run_layer.kv_layer), per-block inputs n_embd_pl wide (0: none) */
    bool  v_norm, swa_rope_plain_freqs;
    int   n_layer_kv, n_embd_pl;
    /* the blocks the forward pass runs: the first n_layer_run (GLM-4.5's
     * last nextn_predict_layers blocks are loaded and checked, never run) */
    int   n_layer_run;
    /* sigmoid routing with a score bias (GGUF_ROUTING_SIGMOID_BIAS,
     * run_route_biased): the experts in n_group groups of which the
     * n_group_used best are kept; the chosen weights renormalised
     * (weights_norm), times weights_scale (0 or 1: unscaled); gating
     * 1 softmax, else sigmoid (expert_gating_func) */
    int   n_group, n_group_used, gating;
    bool  weights_norm;
    float weights_scale;
    /* multi-head latent attention (DeepSeek-V2/V3, run_layer.wkv_a_mqa):
     * q through a rank-q_lora latent (0: one attn_q), a KV latent of
     * kv_lora per token cached with its rotated key (head_dim = kv_lora +
     * n_rot, one K/V head, the values the latent: v_dim), each head's key
     * mla_nope unrotated + n_rot rotated dims and its value mla_v wide; the
     * scores times mla_kq_scale (llama.cpp's deepseek2: mscale² / √(nope +
     * rope), mscale from YaRN's attention factor and yarn_log_multiplier) */
    bool  mla;
    int   q_lora, kv_lora, mla_nope, mla_v;
    float mla_kq_scale;
} run_hparams;

/* A weight matrix in the mapping: rows × cols elements of a ggml type, each
 * row row_bytes long. y = W x takes x of cols and gives y of rows. packed:
 * a copy in kern_pack's layout (q4_0, q8_0, q4_K, q6_K, mxfp4, iq4_xs on CPUs
 * with kernels for it, in run_model.packed_arena; an expert's slice of a
 * packed stack too), which products use instead of data; NULL otherwise. */
typedef struct run_matrix {
    const void *data;
    uint32_t    type;
    int64_t     rows, cols;
    size_t      row_bytes;
    void       *packed;
    /* an expert's slice (run_expert): the stacked matrix and the expert */
    const struct run_matrix *stack;
    int         expert;
    /* LoRA pairs applied to every product by this matrix (an expert's
     * slice: its stack's), in the order they are added; NULL: none */
    const struct run_lora *lora;
} run_matrix;

/* One LoRA adapter's pair for a weight matrix W (run/lora.h): a product
 * y = W x becomes y + scale · B (A x), as llama.cpp's build_lora_mm adds
 * it (two products, the second's result times scale, then added).
 * a (rank, cols) and b (rows, rank) in the adapter's mapping, stored type;
 * for a stack of n_stack experts each is a stack of as many (sliced with
 * run_expert, products by mul_mat_id's rows). For token_embd, a is
 * (n_vocab, rank): a token's row of it, then times b (n_embd, rank). */
typedef struct run_lora {
    run_matrix a, b;
    int        rank, n_stack;
    float      scale;    /* user scale × alpha / rank (alpha 0: the user scale) */
    const struct run_lora *next;
    /* an f32 B of rank < 64 on a plain matrix: B transposed (rank, rows),
     * owned by the adapter set, for forward.c's lora_b_product; else NULL */
    float     *bt;
} run_lora;

typedef struct run_layer {
    float     *attn_norm;            /* (n_embd,) */
    float     *attn_post_norm;       /* gemma: of the attention output (n_embd,), or NULL */
    float     *ffn_post_norm;        /* gemma: of the feed-forward output (n_embd,), or NULL */
    run_matrix wq, wk, wv, wo;       /* (q_dim or kv_dim, n_embd); wo (n_embd, q_dim) */
    float     *bq, *bk, *bv;         /* qwen2 biases (NULL when absent) */
    float     *q_norm, *k_norm;      /* qwen3 per-head RMSNorm weights (head_dim,), or NULL */
    float     *bo;                   /* attention output bias (n_embd,), or NULL */
    float     *sinks;                /* gpt-oss: a sink logit per head (n_head,), or NULL */
    float     *ffn_norm;             /* (n_embd,) */
    run_matrix w_gate, w_up, w_down; /* (n_ff, n_embd), (n_ff, n_embd), (n_embd, n_ff) */
    /* experts: the router (n_expert, n_embd) and each projection of all
     * experts, expert e's rows at e · rows / n_expert (run_expert) */
    run_matrix gate_inp, gate_exps, up_exps, down_exps;
    /* qwen35moe's shared expert (data NULL when absent): gate, up
     * (n_ff_shexp, n_embd), down (n_embd, n_ff_shexp) and its gate's row
     * (1, n_embd), the output times sigmoid of that row · x */
    run_matrix gate_shexp, up_shexp, down_shexp, gate_inp_shexp;
    /* a Gated DeltaNet layer (qwen35): wqkv holds the q | k | v rows of
     * the convolution's channels; wz (ssm_d_inner, n_embd) the output gate;
     * ssm_alpha, ssm_beta (ssm_dt_rank, n_embd) each value head's decay and
     * write strength; ssm_out (n_embd, ssm_d_inner); ssm_conv (channels,
     * ssm_conv_k), ssm_a and ssm_dt (ssm_dt_rank,), ssm_norm (ssm_d_state,) */
    run_matrix wz, ssm_alpha, ssm_beta, ssm_out;
    float     *ssm_conv, *ssm_a, *ssm_dt, *ssm_norm;
    /* phi3's fused matrices, used instead of wq, wk, wv and w_gate, w_up
     * (data NULL when absent): wqkv (q_dim + 2 kv_dim, n_embd), rows q | k | v;
     * w_gate_up (2 n_ff, n_embd), rows gate | up */
    run_matrix wqkv, w_gate_up;
    /* gpt-oss biases: the router's (n_expert,) and each expert's row of
     * (n_expert, n_ff_exp) or (n_expert, n_embd); NULL when absent */
    float     *gate_inp_b, *gate_exps_b, *up_exps_b, *down_exps_b;
    /* the block's geometry (run_model_load sets it for every family):
     * head size, n_head · head_dim, rotated dimensions, feed-forward width,
     * and the block whose K/V cache it writes and reads (itself, or the
     * block whose cache it shares: it then has no wk, wv) and that cache's
     * slot (the blocks with a K/V cache of their own numbered in order;
     * -1 for a recurrent block, which has none) */
    int        head_dim, q_dim, n_rot, n_ff, kv_layer, kv_slot;
    /* Gemma 4's experts beside the dense feed-forward (with gate_inp and
     * down_exps): the router's input scale (n_embd,), gate and up of each
     * expert in one stack (n_expert · 2 n_ff_exp, n_embd), rows gate | up,
     * each expert's output scale (n_expert,), the norms of the expert input
     * (pre_norm_2) and of the dense and expert outputs (post_norm_1, _2) */
    float     *gate_inp_scale, *down_exps_scale;
    run_matrix gate_up_exps;
    float     *ffn_pre_norm_2, *ffn_post_norm_1, *ffn_post_norm_2;
    /* Gemma 4's per-block input: gelu(x inp_gate^T) times the block's row
     * of the per-layer inputs, projected back (proj), RMS-normalised
     * (pl_post_norm) and added; then the output times out_scale[0] */
    run_matrix pl_gate, pl_proj;     /* (n_embd_pl, n_embd), (n_embd, n_embd_pl) */
    float     *pl_post_norm, *out_scale;
    /* GLM-4.5: the bias added to the expert scores for the choice
     * (n_expert,), or NULL; a next-token-prediction block's tensors (loaded
     * and checked, never run) */
    float     *exp_probs_b;
    run_matrix nextn_eh_proj;
    float     *nextn_enorm, *nextn_hnorm, *nextn_shared_head_norm;
    /* DeepSeek-V2/V3's latent attention (data NULL when absent): q's
     * down-projection (q_lora, n_embd), its norm (q_lora,) and
     * up-projection (n_head · (mla_nope + n_rot), q_lora) — or wq of that
     * height; the KV latent and the shared rope key (kv_lora + n_rot,
     * n_embd), the latent's norm (kv_lora,); per head h (n_head stacked,
     * run_expert(w, n_head, h)) k_b (kv_lora, mla_nope): a head's unrotated
     * query into the latent's space, v_b (mla_v, kv_lora): the latent's
     * attention output into the head's values */
    run_matrix wq_a, wq_b, wkv_a_mqa, wk_b, wv_b;
    float     *q_a_norm, *kv_a_norm;
} run_layer;

typedef struct run_model {
    char        arch[16];
    const gguf_arch *row;    /* its row in libgguf's architecture registry */
    gguf_hparams *hparams;   /* the registry's view of its hyper-parameters (owned) */
    run_hparams hp;
    run_matrix  tok_embd;    /* (n_vocab, n_embd): one row per token */
    float      *output_norm; /* (n_embd,) */
    run_matrix  output;      /* (n_vocab, n_embd); token_embd when tied */
    bool        tied;
    float      *rope_freqs;  /* (n_rot/2,) divisors of the frequencies, or NULL */
    float      *rope_long, *rope_short; /* phi3 LongRoPE's divisors (n_rot/2,) for contexts
                                         * beyond n_ctx_orig and within it, or NULL */
    run_layer  *layers;      /* n_layer */
    void       *packed_arena; /* owns every matrix's packed copy */
    /* Gemma 4's per-layer inputs (data NULL without them): token rows
     * (n_vocab, n_layer · n_embd_pl), the projection of the embeddings
     * (n_layer · n_embd_pl, n_embd) and its norm (n_embd_pl,) */
    run_matrix  pl_tok_embd, pl_model_proj;
    float      *pl_proj_norm;
    bool       *swa_layers;  /* a per-block sliding-window pattern (n_layer), or NULL */
    /* LoRA adapters (run/lora.h; none: NULL, 0): the token embedding's
     * pairs, and what the state's buffers need for any pair — the largest
     * rank, the most rows of a product; the widest converted activation
     * row the state must hold beyond the model's own matrices' (a LoRA
     * pair's, or a type --sensitivity puts in a matrix's place) */
    const run_lora *lora_embd;
    int         lora_rank;
    int64_t     lora_rows;
    size_t      extra_act_row;
} run_model;

/* Reads and validates the model in f (which must outlive it). On failure
 * returns -1 with one sentence in err and leaves nothing to free. */
int run_model_load(run_model *m, const gguf_file *f, gguf_error *err);

/* Whether run_model_load packs the matrices it can (default true; off:
 * llama.cpp's --no-repack — every product reads the mapping row by row,
 * with the same results). */
void run_model_set_repack(bool on);

/* Frees the owned arrays; the model must not be used afterwards. */
void run_model_free(run_model *m);

/* The matrix of a layer that holds a tensor role (GGUF_ROLE_*), or NULL
 * when the role is not a matrix the forward pass multiplies. */
run_matrix *run_layer_matrix(run_layer *l, int role);

/* Whether layer il attends within the sliding window (llama.cpp's
 * set_swa_pattern over the period). */
bool run_layer_is_swa(const run_model *m, int il);

/* The frequency divisors a context of n_ctx positions rotates by, or NULL:
 * rope_freqs when present, else as llama.cpp's get_rope_factors picks
 * LongRoPE's: the long factors when n_ctx (rounded up to a multiple of
 * 256, as llama.cpp pads it) exceeds the original context. */
const float *run_rope_factors(const run_model *m, int n_ctx);

/* Whether layer il is a Gated DeltaNet layer (hybrid models). */
bool run_layer_is_recurrent(const run_model *m, int il);

/* Expert e's part of a stacked expert matrix of n experts. */
run_matrix run_expert(const run_matrix *w, int n, int e);

/* The matrix of m that multiplies by the model tensor t (its data), with
 * the number of experts it stacks in *n_stack (1: a plain matrix); NULL
 * when t is no matrix the forward pass multiplies with build_lora_mm's
 * products (the token embedding is looked up, Gemma 4's per-layer
 * projection and embeddings take none). */
run_matrix *run_model_matrix_of(run_model *m, const gguf_tensor *t, int *n_stack);

#endif
