/*
 * mkhf.c — writes a synthetic Hugging Face folder (config.json, tokenizer
 * files, model.safetensors with random weights) for the converter and
 * runner benchmarks.
 *
 *   mkhf OUTDIR [--family F] [--tokenizer tokenizer.model] [--dim N] [--layers N]
 *               [--ffn N] [--heads N] [--kv-heads N] [--head-dim N] [--vocab N]
 *               [--experts N] [--experts-used N] [--moe-ffn N] [--dtype f16|bf16|f32]
 *               [--set NAME[INDEX]=VALUE ...] [--lin-k-heads N] [--lin-v-heads N]
 *               [--lin-head-dim N] [--shexp-ffn N] [--global-head-dim N] [--ple-dim N]
 *               [--kv-shared N] [--q-lora N] [--kv-lora N] [--rope-dim N]
 *   mkhf --families
 *
 * --family takes a row's name or a GGUF architecture (its first row: gpt-oss
 * is gptoss); one with no row fails, so an architecture added to the
 * registry is noticed (convert.sh holds every architecture with a Hugging
 * Face class to a row). --families prints each row's name, architecture
 * and Hugging Face class, one a line: the e2e tests' list of them.
 *
 * Families (../shared/fixtures/models/FAMILY-rand: a real checkpoint of
 * each but llama, whose config.json keys and tensors mkhf copies):
 *   llama     LlamaForCausalLM (the default): heads hidden / heads wide
 *   qwen3     Qwen3ForCausalLM: per-head q/k norms, heads of --head-dim
 *   qwen2     Qwen2ForCausalLM: q/k/v biases, tied output
 *   mixtral   MixtralForCausalLM: --experts of --ffn, top --experts-used
 *   qwen3moe  Qwen3MoeForCausalLM: Qwen3 attention, --experts of --moe-ffn
 *   phi3      Phi3ForCausalLM: fused qkv_proj and gate_up_proj; Phi-3's 11
 *             chat tokens (<|endoftext|>, the end of a text, first) take the
 *             vocabulary's last ids
 *   gemma2    Gemma2ForCausalLM: heads of --head-dim, norms before and after
 *             attention and the feed-forward, soft-caps, tied output
 *   gemma3    Gemma3ForCausalLM: Gemma 2's layout with q/k norms, 5 local : 1
 *             global layers, no soft-caps
 *   gptoss    GptOssForCausalLM: q/k/v/o biases, attention sinks, a biased
 *             router, --experts of --moe-ffn top --experts-used stacked as
 *             MXFP4 (--ffn unused), heads of --head-dim
 *   qwen35    Qwen3_5ForCausalLM: every 4th block (every block's last of
 *             fewer) gated full attention (q_proj: per head, head_dim query
 *             rows then head_dim gate rows) with q/k norms, the others
 *             Gated DeltaNet linear attention of --lin-k-heads key heads
 *             (default heads / 2) and --lin-v-heads value heads (default
 *             heads), --lin-head-dim wide (default --head-dim), conv kernel
 *             4; norms stored as w of x·(1 + w) but linear_attn.norm; M-RoPE
 *             on a quarter of each head; tied output
 *   qwen35moe Qwen3_5MoeForCausalLM: qwen35's blocks with --experts of
 *             --moe-ffn top --experts-used stored fused as transformers 5
 *             writes them (experts.gate_up_proj, experts.down_proj) and a
 *             shared expert of --shexp-ffn (default --moe-ffn) with its
 *             sigmoid gate; untied
 *   gemma4    Gemma4ForConditionalGeneration (the text model under
 *             model.language_model., config under text_config), as
 *             gemma-4-26B-A4B: 5 sliding : 1 full blocks (the last full),
 *             sliding heads of --head-dim, full heads of --global-head-dim
 *             (default 2 × --head-dim) with K as V, proportional rope on a
 *             quarter of them, a dense GeGLU MLP of --ffn and beside it
 *             --experts of --moe-ffn top --experts-used, a layer scalar
 *   gemma4e   the same family as gemma-4-E2B: no experts, per-layer inputs
 *             --ple-dim wide (default 32), the last --kv-shared blocks
 *             (default 0) reusing the KV of earlier ones, their MLP twice
 *             as wide
 *   mistral3  Mistral3ForConditionalGeneration's text model (Mistral Small
 *             3.x): LLaMA's blocks with heads of --head-dim, the config
 *             under text_config (model_type mistral), every name under
 *             language_model.; untied
 *   glm4moe   Glm4MoeForCausalLM (GLM-4.5): q/k/v biases and q/k norms, heads
 *             of --head-dim; block 0 dense (--ffn), the others --experts of
 *             --moe-ffn top --experts-used with a score bias and one shared
 *             expert of --moe-ffn; one NextN block after the --layers
 *             (num_nextn_predict_layers 1); untied
 *   deepseek2 DeepseekV3ForCausalLM (DeepSeek-V3): multi-head latent
 *             attention over --heads (num_key_value_heads the same, whatever
 *             --kv-heads says: kv_b_proj is split by it), q_lora_rank
 *             --q-lora and kv_lora_rank --kv-lora (32 each by default),
 *             qk_nope and v_head_dim --head-dim, qk_rope --rope-dim (16); GLM-4.5's feed-forward (block 0 dense, sigmoid routing in
 *             one group, one shared expert); one MTP layer after the
 *             --layers that the converter drops; untied
 *   deepseek2lite DeepseekV2ForCausalLM as DeepSeek-V2-Lite's config: MLA
 *             without q_lora_rank (null: one self_attn.q_proj), softmax
 *             routing in one group (topk_method greedy, no score bias), two
 *             shared experts of --moe-ffn each, YaRN factor 40 with mscale
 *             0.707; block 0 dense; no MTP layer; untied
 *   glm4moelite Glm4MoeLiteForCausalLM as GLM-4.7-Flash's config: deepseek2's
 *             tensors (q_lora_rank --q-lora, one MTP layer the converter
 *             drops), no scoring_func (llama.cpp infers sigmoid only from
 *             GLM-4.7-Flash's layer and vocabulary counts), rope_scaling
 *             null, partial_rotary_factor 1.0, routed scale 1.8
 * Tensors are written in the module order a real checkpoint has (the
 * converter sorts them anyway); a family ignores the options it has no
 * use for (--head-dim in llama, mixtral and phi3, the expert options in the
 * dense families).
 *
 * A given tokenizer.model is copied; vocab (default 32000) may exceed its
 * pieces (the converter pads, as llama.cpp's does). Without one, mkhf writes
 * its own SentencePiece BPE model with a piece for every id not added (<unk>,
 * <s>, </s>, the 256 byte pieces, then characters, word starts and letter
 * pairs), so a model can be made from nothing. Weights stream to disk in
 * chunks, so a multi-gigabyte model needs no memory.
 *
 * --set writes VALUE at element INDEX (counted over the tensor's elements
 * in storage order) of checkpoint tensor NAME, in its dtype: a number,
 * nan, inf or -inf (as strtod reads them) for a float tensor, a byte 0-255
 * for a U8 one (MXFP4 _blocks and _scales) — the converter's tests make
 * NaN weights and E8M0 scales of 0xff so. Up to 8 of them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ggufkit/quants.h>

#define LL(x) ((long long)(x))

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A weight uniform in [-0.02, 0.02). */
static float randw(void)
{
    return ((float)(rng_next() >> 40) / (float)(1 << 24) - 0.5f) * 0.04f;
}

/* ===========================================================================
 * The families
 */

/* What the model is given on the command line. */
typedef struct shape {
    int64_t dim, layers, ffn, heads, kv, head_dim, experts, used, moe_ffn, vocab;
    int64_t lin_k, lin_v, lin_dim, shexp_ffn;  /* qwen35: linear attention, shared expert */
    int64_t global_head_dim, ple_dim, kv_shared; /* gemma4 */
    int64_t q_lora, kv_lora, rope_dim;         /* deepseek2: MLA's ranks, rotated part */
} shape;

enum {
    F_OWN_HEAD_DIM = 1 << 0, /* heads --head-dim wide, head_dim in config.json */
    F_QK_NORM      = 1 << 1, /* self_attn.{q,k}_norm over each head */
    F_FUSED        = 1 << 2, /* Phi-3: self_attn.qkv_proj, mlp.gate_up_proj */
    F_GEMMA_NORMS  = 1 << 3, /* pre/post_feedforward_layernorm; norms stored
                              * as w of x·(1 + w), so 0 for a plain RMSNorm */
    F_TIED         = 1 << 4, /* no lm_head: the output is the embedding */
    F_BIAS_SINKS   = 1 << 5, /* gpt-oss: q/k/v/o biases, self_attn.sinks */
    F_MXFP4        = 1 << 6, /* gpt-oss: biased mlp.router, stacked MXFP4 experts */
    F_CHAT_TOKENS  = 1 << 7, /* Phi-3's added tokens (phi3_tokens) */
    F_QKV_BIAS     = 1 << 8, /* Qwen2: q/k/v biases */
    F_QWEN35       = 1 << 9, /* Qwen3.5 hybrid blocks (add_qwen35_block) */
    F_GEMMA4       = 1 << 10,/* Gemma 4 blocks (add_gemma4_block), model.language_model. */
    F_PLE          = 1 << 11,/* Gemma 4 per-layer inputs, KV-shared blocks allowed */
    F_GLM4MOE      = 1 << 12,/* GLM-4.5: block 0 dense, the others experts with a score
                              * bias and a shared expert; one NextN block after */
    F_MLA          = 1 << 13,/* DeepSeek-V3: multi-head latent attention (add_mla) */
    F_MLA_LITE     = 1 << 14,/* DeepSeek-V2-Lite: q_proj (q_lora_rank null), no score
                              * bias, two shared experts, no MTP layer */
};

/* Per-expert matrices (Mixtral, Qwen3-MoE): the router and each expert's
 * projections after "model.layers.N.", %lld the expert. */
typedef struct expert_names {
    const char *router, *gate, *up, *down;
    bool        moe_width; /* --moe-ffn wide, else --ffn */
} expert_names;

static const expert_names mixtral_experts = {
    "block_sparse_moe.gate.weight", "block_sparse_moe.experts.%lld.w1.weight",
    "block_sparse_moe.experts.%lld.w3.weight", "block_sparse_moe.experts.%lld.w2.weight", false,
};
static const expert_names qwen3moe_experts = {
    "mlp.gate.weight", "mlp.experts.%lld.gate_proj.weight", "mlp.experts.%lld.up_proj.weight",
    "mlp.experts.%lld.down_proj.weight", true,
};

/* Qwen 3.5 and Gemma 4 store their experts fused (add_qwen35_block,
 * add_gemma4_block write them); the names mark them as MoE families. */
static const expert_names qwen35_experts = { "mlp.gate.weight", NULL, NULL, NULL, true };
static const expert_names gemma4_experts = { "router.proj.weight", NULL, NULL, NULL, true };

/* Phi-3's chat tokens, in its order; all but <|endoftext|> strip the
 * space after them. */
static const char *const phi3_tokens[] = {
    "<|endoftext|>", "<|assistant|>", "<|placeholder1|>", "<|placeholder2|>",
    "<|placeholder3|>", "<|placeholder4|>", "<|system|>", "<|end|>",
    "<|placeholder5|>", "<|placeholder6|>", "<|user|>",
};
#define N_PHI3_TOKENS ((int64_t)(sizeof phi3_tokens / sizeof *phi3_tokens))

/* config.json keys of one family beyond the common ones (write_config). */
typedef void config_keys(FILE *fp, const shape *s);

typedef struct family {
    const char         *name, *arch; /* mkhf's name, the GGUF architecture it converts to */
    const char         *hf_class, *model_type, *tokenizer_class;
    unsigned            flags;
    int64_t             context;            /* max_position_embeddings */
    double              rms_eps, rope_theta;
    const expert_names *experts;            /* per-expert matrices, or NULL */
    config_keys        *keys;               /* its own config.json keys, or NULL */
    /* a multimodal class: the keys under text_config, the top level's
     * model_type this; its tensor names start with wrap_prefix (or, NULL,
     * the family's own layout: Gemma 4's model.language_model.) */
    const char         *wrap_type, *wrap_prefix;
} family;

static void keys_head_dim(FILE *fp, const shape *s)
{
    fprintf(fp, ", \"head_dim\": %lld", LL(s->head_dim));
}

static void keys_mixtral(FILE *fp, const shape *s)
{
    fprintf(fp, ", \"num_local_experts\": %lld, \"num_experts_per_tok\": %lld", LL(s->experts),
            LL(s->used));
}

static void keys_qwen3moe(FILE *fp, const shape *s)
{
    fprintf(fp, ", \"head_dim\": %lld, \"num_experts\": %lld, \"num_experts_per_tok\": %lld, "
                "\"moe_intermediate_size\": %lld, \"norm_topk_prob\": true",
            LL(s->head_dim), LL(s->experts), LL(s->used), LL(s->moe_ffn));
}

/* GLM-4.5's: attention biases and q/k norms, half of each head rotated,
 * sigmoid routing over one group, one shared expert, one leading dense
 * block, one NextN layer. */
static void keys_glm4moe(FILE *fp, const shape *s)
{
    fprintf(fp, ", \"head_dim\": %lld, \"attention_bias\": true, \"use_qk_norm\": true, "
                "\"partial_rotary_factor\": 0.5, \"n_routed_experts\": %lld, "
                "\"num_experts_per_tok\": %lld, \"moe_intermediate_size\": %lld, "
                "\"n_shared_experts\": 1, \"n_group\": 1, \"topk_group\": 1, "
                "\"first_k_dense_replace\": 1, \"norm_topk_prob\": true, "
                "\"routed_scaling_factor\": 1.0, \"num_nextn_predict_layers\": 1",
            LL(s->head_dim), LL(s->experts), LL(s->used), LL(s->moe_ffn));
}

/* DeepSeek-V3's MLA widths: mkhf's defaults (--q-lora, --kv-lora,
 * --rope-dim) */
#define MLA_Q_LORA 32
#define MLA_KV_LORA 32
#define MLA_ROPE 16

/* The MLA keys every DeepseekV2Model family has: the ranks (q_lora_rank
 * null without one), the head widths, the routed experts. */
static void keys_mla(FILE *fp, const shape *s, bool q_lora)
{
    if (q_lora)
        fprintf(fp, ", \"q_lora_rank\": %d", (int)s->q_lora);
    else
        fputs(", \"q_lora_rank\": null", fp);
    fprintf(fp, ", \"kv_lora_rank\": %d, \"qk_nope_head_dim\": %lld, \"qk_rope_head_dim\": %d, "
                "\"v_head_dim\": %lld, \"n_routed_experts\": %lld, \"num_experts_per_tok\": %lld, "
                "\"moe_intermediate_size\": %lld",
            (int)s->kv_lora, LL(s->head_dim), (int)s->rope_dim, LL(s->head_dim), LL(s->experts),
            LL(s->used), LL(s->moe_ffn));
}

/* DeepSeek-V3's: MLA's ranks and head widths, GLM-4.5's routing keys with
 * sigmoid scoring and a YaRN rope scaling; one MTP layer. */
static void keys_deepseek2(FILE *fp, const shape *s)
{
    keys_mla(fp, s, true);
    fputs(", \"n_shared_experts\": 1, \"n_group\": 1, \"topk_group\": 1, "
          "\"scoring_func\": \"sigmoid\", \"topk_method\": \"noaux_tc\", "
          "\"first_k_dense_replace\": 1, \"norm_topk_prob\": true, "
          "\"routed_scaling_factor\": 2.5, \"num_nextn_predict_layers\": 1, "
          "\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 4.0, "
          "\"original_max_position_embeddings\": 4096, \"beta_fast\": 32, \"beta_slow\": 1, "
          "\"mscale\": 1.0, \"mscale_all_dim\": 1.0}", fp);
}

/* DeepSeek-V2-Lite's (config.json as released, the fields the converter
 * reads): q_lora_rank null, softmax routing (greedy top-k, one group, no
 * norm), two shared experts, YaRN 40x with mscale_all_dim 0.707. */
static void keys_deepseek2lite(FILE *fp, const shape *s)
{
    keys_mla(fp, s, false);
    fputs(", \"n_shared_experts\": 2, \"n_group\": 1, \"topk_group\": 1, "
          "\"scoring_func\": \"softmax\", \"topk_method\": \"greedy\", \"moe_layer_freq\": 1, "
          "\"first_k_dense_replace\": 1, \"norm_topk_prob\": false, "
          "\"routed_scaling_factor\": 1.0, \"aux_loss_alpha\": 0.001, \"seq_aux\": true, "
          "\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 40, "
          "\"original_max_position_embeddings\": 4096, \"beta_fast\": 32, \"beta_slow\": 1, "
          "\"mscale\": 0.707, \"mscale_all_dim\": 0.707}", fp);
}

/* GLM-4.7-Flash's (config.json as released, the fields the converter
 * reads): DeepSeek-V3's MLA keys and sigmoid-biased routing without a
 * scoring_func, no rope scaling, one MTP layer. */
static void keys_glm4moelite(FILE *fp, const shape *s)
{
    keys_mla(fp, s, true);
    fputs(", \"n_shared_experts\": 1, \"n_group\": 1, \"topk_group\": 1, "
          "\"topk_method\": \"noaux_tc\", \"first_k_dense_replace\": 1, "
          "\"norm_topk_prob\": true, \"routed_scaling_factor\": 1.8, "
          "\"num_nextn_predict_layers\": 1, \"partial_rotary_factor\": 1.0, "
          "\"attention_bias\": false, \"rope_scaling\": null", fp);
}

/* Phi-3 mini's: the whole head rotated, a sliding window llama.cpp ignores,
 * padding with <|endoftext|>. */
static void keys_phi3(FILE *fp, const shape *s)
{
    fprintf(fp, ", \"original_max_position_embeddings\": 4096, \"partial_rotary_factor\": 1.0, "
                "\"sliding_window\": 2047, \"rope_scaling\": null, \"attention_bias\": false, "
                "\"hidden_act\": \"silu\", \"pad_token_id\": %lld",
            LL(s->vocab - N_PHI3_TOKENS));
}

/* Gemma 2 (2B's): scores scaled by 1/sqrt(head_dim), soft-caps 50 and 30,
 * every other layer local within 4096 positions. */
static void keys_gemma2(FILE *fp, const shape *s)
{
    fprintf(fp, ", \"head_dim\": %lld, \"hidden_act\": \"gelu_pytorch_tanh\", "
                "\"hidden_activation\": \"gelu_pytorch_tanh\", \"query_pre_attn_scalar\": %lld, "
                "\"attn_logit_softcapping\": 50.0, \"final_logit_softcapping\": 30.0, "
                "\"sliding_window\": 4096, \"cache_implementation\": \"hybrid\", \"pad_token_id\": 0",
            LL(s->head_dim), LL(s->head_dim));
}

/* Gemma 3 (1B's): local layers of 512 positions with their own rope base. */
static void keys_gemma3(FILE *fp, const shape *s)
{
    fprintf(fp, ", \"head_dim\": %lld, \"hidden_activation\": \"gelu_pytorch_tanh\", "
                "\"rope_local_base_freq\": 10000.0, \"rope_scaling\": null, "
                "\"query_pre_attn_scalar\": %lld, \"attn_logit_softcapping\": null, "
                "\"final_logit_softcapping\": null, \"sliding_window\": 512, "
                "\"sliding_window_pattern\": 6, \"cache_implementation\": \"hybrid\", \"pad_token_id\": 0",
            LL(s->head_dim), LL(s->head_dim));
}

/* gpt-oss as released: YaRN from 4096 positions, even layers local within
 * 128, experts quantized as MXFP4 (what stays unquantized is listed). */
static void keys_gptoss(FILE *fp, const shape *s)
{
    fprintf(fp, ", \"head_dim\": %lld, \"hidden_act\": \"silu\", \"attention_bias\": true, "
                "\"num_local_experts\": %lld, \"num_experts_per_tok\": %lld, \"experts_per_token\": %lld, "
                "\"swiglu_limit\": 7.0, \"initial_context_length\": 4096, "
                "\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 32.0, \"beta_fast\": 32.0, "
                "\"beta_slow\": 1.0, \"original_max_position_embeddings\": 4096, \"truncate\": false}, "
                "\"sliding_window\": 128, \"pad_token_id\": 0, \"layer_types\": [",
            LL(s->head_dim), LL(s->experts), LL(s->used), LL(s->used));
    for (int64_t l = 0; l < s->layers; l++)
        fprintf(fp, "%s\"%s\"", l ? ", " : "", l % 2 ? "full_attention" : "sliding_attention");
    fprintf(fp, "], \"quantization_config\": {\"quant_method\": \"mxfp4\", \"modules_to_not_convert\": "
                "[\"model.layers.*.self_attn\", \"model.layers.*.mlp.router\", \"model.embed_tokens\", "
                "\"lm_head\"]}");
}

/* Qwen 3.5: block il is full attention when (il + 1) % interval == 0 (4,
 * or the block count when fewer). */
static int64_t qwen35_interval(const shape *s)
{
    return s->layers < 4 ? s->layers : 4;
}

/* Qwen3.5-27B's and -35B-A3B's: M-RoPE sections over a quarter of each
 * head (256-wide heads: [11, 11, 10]), rope theta 1e7, the linear
 * attention's widths. */
static void keys_qwen35(FILE *fp, const shape *s)
{
    const int64_t pairs = s->head_dim / 4 / 2, iv = qwen35_interval(s);
    fprintf(fp, ", \"head_dim\": %lld, \"hidden_act\": \"silu\", \"attn_output_gate\": true, "
                "\"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": 10000000.0, "
                "\"partial_rotary_factor\": 0.25, \"mrope_interleaved\": true, \"mrope_section\": [%lld, %lld, %lld]}, "
                "\"partial_rotary_factor\": 0.25, \"full_attention_interval\": %lld, \"layer_types\": [",
            LL(s->head_dim), LL(pairs / 3 + (pairs % 3 > 0)), LL(pairs / 3 + (pairs % 3 > 1)), LL(pairs / 3),
            LL(iv));
    for (int64_t l = 0; l < s->layers; l++)
        fprintf(fp, "%s\"%s\"", l ? ", " : "", (l + 1) % iv ? "linear_attention" : "full_attention");
    fprintf(fp, "], \"linear_conv_kernel_dim\": 4, \"linear_key_head_dim\": %lld, \"linear_value_head_dim\": %lld, "
                "\"linear_num_key_heads\": %lld, \"linear_num_value_heads\": %lld, \"mtp_num_hidden_layers\": 0",
            LL(s->lin_dim), LL(s->lin_dim), LL(s->lin_k), LL(s->lin_v));
}

static void keys_qwen35moe(FILE *fp, const shape *s)
{
    keys_qwen35(fp, s);
    fprintf(fp, ", \"num_experts\": %lld, \"num_experts_per_tok\": %lld, \"moe_intermediate_size\": %lld, "
                "\"shared_expert_intermediate_size\": %lld",
            LL(s->experts), LL(s->used), LL(s->moe_ffn), LL(s->shexp_ffn));
}

/* Gemma 4: block il is full attention when (il + 1) % 6 == 0 and the last
 * block always. */
static bool gemma4_full(const shape *s, int64_t il)
{
    return (il + 1) % 6 == 0 || il == s->layers - 1;
}

/* The text_config of Gemma 4 (inside the object write_config opens). */
static void keys_gemma4(FILE *fp, const shape *s, bool moe, bool ple)
{
    fprintf(fp, ", \"head_dim\": %lld, \"global_head_dim\": %lld, \"num_global_key_value_heads\": null, "
                "\"attention_k_eq_v\": %s, \"hidden_activation\": \"gelu_pytorch_tanh\", "
                "\"hidden_size_per_layer_input\": %lld, \"vocab_size_per_layer_input\": %lld, "
                "\"num_kv_shared_layers\": %lld, \"use_double_wide_mlp\": %s, \"layer_types\": [",
            LL(s->head_dim), LL(s->global_head_dim), ple ? "false" : "true", LL(ple ? s->ple_dim : 0),
            LL(s->vocab), LL(ple ? s->kv_shared : 0), ple ? "true" : "false");
    for (int64_t l = 0; l < s->layers; l++)
        fprintf(fp, "%s\"%s\"", l ? ", " : "", gemma4_full(s, l) ? "full_attention" : "sliding_attention");
    fprintf(fp, "], \"sliding_window\": 1024, \"rope_parameters\": {\"full_attention\": {\"rope_type\": "
                "\"proportional\", \"partial_rotary_factor\": 0.25, \"rope_theta\": 1000000.0}, "
                "\"sliding_attention\": {\"rope_type\": \"default\", \"rope_theta\": 10000.0}}, "
                "\"final_logit_softcapping\": 30.0, \"attn_logit_softcapping\": null, \"enable_moe_block\": %s",
            moe ? "true" : "false");
    if (moe)
        fprintf(fp, ", \"num_experts\": %lld, \"top_k_experts\": %lld, \"moe_intermediate_size\": %lld",
                LL(s->experts), LL(s->used), LL(s->moe_ffn));
    else
        fprintf(fp, ", \"num_experts\": null, \"top_k_experts\": null, \"moe_intermediate_size\": null");
    fprintf(fp, ", \"pad_token_id\": 0");
}

static void keys_gemma4_moe(FILE *fp, const shape *s)
{
    keys_gemma4(fp, s, true, false);
}

static void keys_gemma4_ple(FILE *fp, const shape *s)
{
    keys_gemma4(fp, s, false, true);
}

static const family FAMILIES[] = {
    { .name = "llama", .arch = "llama", .hf_class = "LlamaForCausalLM", .model_type = "llama",
      .tokenizer_class = "LlamaTokenizer", .context = 4096, .rms_eps = 1e-5, .rope_theta = 10000 },
    { .name = "qwen2", .arch = "qwen2", .hf_class = "Qwen2ForCausalLM", .model_type = "qwen2",
      .tokenizer_class = "LlamaTokenizer", .flags = F_QKV_BIAS | F_TIED, .context = 4096,
      .rms_eps = 1e-6, .rope_theta = 1000000 },
    { .name = "qwen3", .arch = "qwen3", .hf_class = "Qwen3ForCausalLM", .model_type = "qwen3",
      .tokenizer_class = "LlamaTokenizer", .flags = F_OWN_HEAD_DIM | F_QK_NORM, .context = 4096,
      .rms_eps = 1e-5, .rope_theta = 10000, .keys = keys_head_dim },
    { .name = "mixtral", .arch = "llama", .hf_class = "MixtralForCausalLM", .model_type = "mixtral",
      .tokenizer_class = "LlamaTokenizer", .context = 4096, .rms_eps = 1e-5, .rope_theta = 10000,
      .experts = &mixtral_experts, .keys = keys_mixtral },
    { .name = "qwen3moe", .arch = "qwen3moe", .hf_class = "Qwen3MoeForCausalLM", .model_type = "qwen3_moe",
      .tokenizer_class = "LlamaTokenizer", .flags = F_OWN_HEAD_DIM | F_QK_NORM, .context = 4096,
      .rms_eps = 1e-5, .rope_theta = 10000, .experts = &qwen3moe_experts, .keys = keys_qwen3moe },
    { .name = "phi3", .arch = "phi3", .hf_class = "Phi3ForCausalLM", .model_type = "phi3",
      .tokenizer_class = "LlamaTokenizer", .flags = F_FUSED | F_CHAT_TOKENS, .context = 4096,
      .rms_eps = 1e-5, .rope_theta = 10000, .keys = keys_phi3 },
    { .name = "gemma2", .arch = "gemma2", .hf_class = "Gemma2ForCausalLM", .model_type = "gemma2",
      .tokenizer_class = "GemmaTokenizer", .flags = F_OWN_HEAD_DIM | F_GEMMA_NORMS | F_TIED,
      .context = 8192, .rms_eps = 1e-6, .rope_theta = 10000, .keys = keys_gemma2 },
    { .name = "gemma3", .arch = "gemma3", .hf_class = "Gemma3ForCausalLM", .model_type = "gemma3_text",
      .tokenizer_class = "GemmaTokenizer",
      .flags = F_OWN_HEAD_DIM | F_QK_NORM | F_GEMMA_NORMS | F_TIED, .context = 32768,
      .rms_eps = 1e-6, .rope_theta = 1000000, .keys = keys_gemma3 },
    { .name = "gptoss", .arch = "gpt-oss", .hf_class = "GptOssForCausalLM", .model_type = "gpt_oss",
      .tokenizer_class = "LlamaTokenizer", .flags = F_OWN_HEAD_DIM | F_BIAS_SINKS | F_MXFP4,
      .context = 131072, .rms_eps = 1e-5, .rope_theta = 150000, .keys = keys_gptoss },
    { .name = "qwen35", .arch = "qwen35", .hf_class = "Qwen3_5ForCausalLM", .model_type = "qwen3_5_text",
      .tokenizer_class = "LlamaTokenizer", .flags = F_OWN_HEAD_DIM | F_QWEN35 | F_TIED, .context = 262144,
      .rms_eps = 1e-6, .rope_theta = 10000000, .keys = keys_qwen35 },
    { .name = "qwen35moe", .arch = "qwen35moe", .hf_class = "Qwen3_5MoeForCausalLM",
      .model_type = "qwen3_5_moe_text", .tokenizer_class = "LlamaTokenizer", .flags = F_OWN_HEAD_DIM | F_QWEN35,
      .context = 262144, .rms_eps = 1e-6, .rope_theta = 10000000, .experts = &qwen35_experts,
      .keys = keys_qwen35moe },
    { .name = "gemma4", .arch = "gemma4", .hf_class = "Gemma4ForConditionalGeneration",
      .model_type = "gemma4_text", .tokenizer_class = "GemmaTokenizer", .flags = F_OWN_HEAD_DIM | F_GEMMA4 | F_TIED,
      .context = 262144, .rms_eps = 1e-6, .rope_theta = 1000000, .experts = &gemma4_experts,
      .keys = keys_gemma4_moe, .wrap_type = "gemma4" },
    { .name = "gemma4e", .arch = "gemma4", .hf_class = "Gemma4ForConditionalGeneration",
      .model_type = "gemma4_text", .tokenizer_class = "GemmaTokenizer",
      .flags = F_OWN_HEAD_DIM | F_GEMMA4 | F_PLE | F_TIED, .context = 131072, .rms_eps = 1e-6,
      .rope_theta = 1000000, .keys = keys_gemma4_ple, .wrap_type = "gemma4" },
    { .name = "mistral3", .arch = "mistral3", .hf_class = "Mistral3ForConditionalGeneration",
      .model_type = "mistral", .tokenizer_class = "LlamaTokenizer", .flags = F_OWN_HEAD_DIM,
      .context = 131072, .rms_eps = 1e-5, .rope_theta = 1000000000, .keys = keys_head_dim,
      .wrap_type = "mistral3", .wrap_prefix = "language_model." },
    { .name = "glm4moe", .arch = "glm4moe", .hf_class = "Glm4MoeForCausalLM", .model_type = "glm4_moe",
      .tokenizer_class = "LlamaTokenizer",
      .flags = F_OWN_HEAD_DIM | F_QK_NORM | F_QKV_BIAS | F_GLM4MOE, .context = 131072,
      .rms_eps = 1e-5, .rope_theta = 1000000, .experts = &qwen3moe_experts, .keys = keys_glm4moe },
    { .name = "deepseek2", .arch = "deepseek2", .hf_class = "DeepseekV3ForCausalLM",
      .model_type = "deepseek_v3", .tokenizer_class = "LlamaTokenizer",
      .flags = F_OWN_HEAD_DIM | F_GLM4MOE | F_MLA, .context = 16384, .rms_eps = 1e-6,
      .rope_theta = 10000, .experts = &qwen3moe_experts, .keys = keys_deepseek2 },
    { .name = "deepseek2lite", .arch = "deepseek2", .hf_class = "DeepseekV2ForCausalLM",
      .model_type = "deepseek_v2", .tokenizer_class = "LlamaTokenizer",
      .flags = F_OWN_HEAD_DIM | F_GLM4MOE | F_MLA | F_MLA_LITE, .context = 163840, .rms_eps = 1e-6,
      .rope_theta = 10000, .experts = &qwen3moe_experts, .keys = keys_deepseek2lite },
    { .name = "glm4moelite", .arch = "deepseek2", .hf_class = "Glm4MoeLiteForCausalLM",
      .model_type = "glm4_moe_lite", .tokenizer_class = "LlamaTokenizer",
      .flags = F_OWN_HEAD_DIM | F_GLM4MOE | F_MLA, .context = 202752, .rms_eps = 1e-5,
      .rope_theta = 1000000, .experts = &qwen3moe_experts, .keys = keys_glm4moelite },
};
#define N_FAMILIES (sizeof FAMILIES / sizeof *FAMILIES)

/* The row named name, else the first row of GGUF architecture name. */
static const family *family_find(const char *name)
{
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (!strcmp(FAMILIES[i].name, name))
            return &FAMILIES[i];
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (!strcmp(FAMILIES[i].arch, name))
            return &FAMILIES[i];
    return NULL;
}

static bool is_moe(const family *f)
{
    return f->experts || (f->flags & F_MXFP4);
}

/* ===========================================================================
 * config.json and the tokenizer files
 */

/* The keys every family has, then the family's own. */
static int write_config(const char *dir, const family *f, const shape *s)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *fp = fopen(path, "w");
    if (!fp)
        return -1;
    /* gpt-oss has no dense feed-forward: its intermediate_size is the experts' */
    const int64_t ffn = f->flags & F_MXFP4 ? s->moe_ffn : s->ffn;
    const int64_t eos = f->flags & F_CHAT_TOKENS ? s->vocab - N_PHI3_TOKENS : 2;
    /* a multimodal class's text model is under text_config */
    if (f->wrap_type)
        fprintf(fp, "{\"architectures\": [\"%s\"], \"model_type\": \"%s\", \"text_config\": {",
                f->hf_class, f->wrap_type);
    else
        fprintf(fp, "{\"architectures\": [\"%s\"], ", f->hf_class);
    fprintf(fp, "\"model_type\": \"%s\", \"hidden_size\": %lld, ", f->model_type, LL(s->dim));
    /* Qwen3.5-MoE has no dense feed-forward and no intermediate_size */
    if (!(f->flags & F_QWEN35 && is_moe(f)))
        fprintf(fp, "\"intermediate_size\": %lld, ", LL(ffn));
    fprintf(fp, "\"num_hidden_layers\": %lld, "
                "\"num_attention_heads\": %lld, \"num_key_value_heads\": %lld, \"vocab_size\": %lld, "
                "\"max_position_embeddings\": %lld, \"rms_norm_eps\": %g, \"rope_theta\": %.1f, "
                "\"tie_word_embeddings\": %s, \"bos_token_id\": 1, \"eos_token_id\": %lld",
            LL(s->layers), LL(s->heads), LL(s->kv),
            LL(s->vocab), LL(f->context), f->rms_eps, f->rope_theta,
            f->flags & F_TIED ? "true" : "false", LL(eos));
    if (f->keys)
        f->keys(fp, s);
    if (f->wrap_type)
        fprintf(fp, "}, \"tie_word_embeddings\": %s, \"bos_token_id\": 1, \"eos_token_id\": %lld",
                f->flags & F_TIED ? "true" : "false", LL(eos));
    fprintf(fp, "}\n");
    return fclose(fp) ? -1 : 0;
}

/* --- a generated tokenizer.model (SentencePiece protobuf) ------------------ */

static void pb_varint(FILE *fp, uint64_t v)
{
    do {
        fputc((int)(v & 0x7f) | (v > 0x7f ? 0x80 : 0), fp);
        v >>= 7;
    } while (v);
}

/* One ModelProto.pieces entry: { piece = 1, score = 2, type = 3 }. */
static void pb_piece(FILE *fp, const char *text, float score, int type)
{
    size_t len = strlen(text);
    pb_varint(fp, 1 << 3 | 2);
    pb_varint(fp, 2 + len + 5 + 2);
    pb_varint(fp, 1 << 3 | 2);
    pb_varint(fp, len);
    fwrite(text, 1, len, fp);
    fputc(2 << 3 | 5, fp);
    fwrite(&score, 4, 1, fp); /* little-endian hosts */
    pb_varint(fp, 3 << 3);
    pb_varint(fp, (uint64_t)type);
}

/* n pieces: specials, bytes, then characters, "▁x" word starts and letter
 * pairs in that order, scores falling. 0, or -1 when n is too small. */
static int write_spm(const char *path, int64_t n)
{
    static const char chars[] = "etaoinshrdlcumwfgypbvkjxqzETAOINSHRDLCUMWFGYPBVKJXQZ0123456789.,;:!?'\"-()";
    static const char lower[] = "etaoinshrdlcumwfgypbvkjxqz";
    if (n < 259 + (int64_t)strlen(chars) + 1)
        return -1;
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    pb_piece(fp, "<unk>", 0, 2);
    pb_piece(fp, "<s>", 0, 3);
    pb_piece(fp, "</s>", 0, 3);
    char t[16];
    for (int b = 0; b < 256; b++) {
        snprintf(t, sizeof t, "<0x%02X>", b);
        pb_piece(fp, t, 0, 6);
    }
    int64_t k = 259;
    float score = -1;
    pb_piece(fp, "\xe2\x96\x81", score--, 1), k++;
    for (const char *c = chars; *c && k < n; c++, k++) {
        snprintf(t, sizeof t, "%c", *c);
        pb_piece(fp, t, score--, 1);
    }
    for (const char *c = chars; *c && k < n; c++, k++) {
        snprintf(t, sizeof t, "\xe2\x96\x81%c", *c);
        pb_piece(fp, t, score--, 1);
    }
    for (int round = 0; round < 2 && k < n; round++)
        for (const char *a = lower; *a && k < n; a++)
            for (const char *b = lower; *b && k < n; b++, k++) {
                snprintf(t, sizeof t, round ? "\xe2\x96\x81%c%c" : "%c%c", *a, *b);
                pb_piece(fp, t, score--, 1);
            }
    for (int64_t i = 0; k < n; i++, k++) { /* filler words past every pair */
        snprintf(t, sizeof t, "\xe2\x96\x81w%lld", (long long)i);
        pb_piece(fp, t, score--, 1);
    }
    /* trainer_spec = 2 { model_type = 3: BPE, byte_fallback = 35 } */
    fputc(2 << 3 | 2, fp);
    pb_varint(fp, 2 + 3);
    pb_varint(fp, 3 << 3);
    pb_varint(fp, 2);
    pb_varint(fp, 35 << 3);
    pb_varint(fp, 1);
    return fclose(fp) ? -1 : 0;
}

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[65536];
    size_t n;
    int rc = in && out ? 0 : -1;
    while (!rc && (n = fread(buf, 1, sizeof buf, in)) > 0)
        rc = fwrite(buf, 1, n, out) == n ? 0 : -1;
    if (in && ferror(in))
        rc = -1;
    if (in)
        fclose(in);
    if (out && fclose(out))
        rc = -1;
    return rc;
}

/* Phi-3's added tokens from id first on: added_tokens.json, and their
 * entries in the added_tokens_decoder of tokenizer_config.json (config,
 * left open for its closing brace). */
static int write_phi3_tokens(const char *dir, FILE *config, int64_t first)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/added_tokens.json", dir);
    FILE *fp = fopen(path, "w");
    if (!fp)
        return -1;
    fprintf(config, ", \"added_tokens_decoder\": {");
    for (int64_t i = 0; i < N_PHI3_TOKENS; i++) {
        fprintf(fp, "%s\"%s\": %lld", i ? ", " : "{", phi3_tokens[i], LL(first + i));
        fprintf(config, "%s\"%lld\": {\"content\": \"%s\", \"lstrip\": false, \"normalized\": false, "
                        "\"rstrip\": %s, \"single_word\": false, \"special\": true}",
                i ? ", " : "", LL(first + i), phi3_tokens[i], i ? "true" : "false");
    }
    fprintf(fp, "}\n");
    fprintf(config, "}");
    return fclose(fp) ? -1 : 0;
}

/* tokenizer.model (copied or generated), tokenizer_config.json and, for
 * Phi-3, its added tokens after the pieces. */
static int write_tokenizer(const char *dir, const family *f, const shape *s, const char *given)
{
    const int64_t n_added = f->flags & F_CHAT_TOKENS ? N_PHI3_TOKENS : 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizer.model", dir);
    if (given ? copy_file(given, path) : write_spm(path, s->vocab - n_added)) {
        fprintf(stderr, "mkhf: cannot %s %s%s\n", given ? "copy" : "write", given ? given : path,
                given ? "" : " (a generated vocabulary needs --vocab >= 350)");
        return -1;
    }
    snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
    FILE *fp = fopen(path, "w");
    if (!fp) {
        fprintf(stderr, "mkhf: cannot write %s\n", path);
        return -1;
    }
    fprintf(fp, "{\"add_bos_token\": true, \"add_eos_token\": false, \"bos_token\": \"<s>\", "
                "\"eos_token\": \"%s\", \"unk_token\": \"<unk>\", \"tokenizer_class\": \"%s\"",
            n_added ? phi3_tokens[0] : "</s>", f->tokenizer_class);
    int rc = n_added ? write_phi3_tokens(dir, fp, s->vocab - n_added) : 0;
    fprintf(fp, "}\n");
    return fclose(fp) || rc ? -1 : 0;
}

/* ===========================================================================
 * The tensors
 */

typedef enum fill {
    FILL_RANDOM, /* weights and biases: randw() */
    FILL_ONES,   /* RMSNorm weights */
    FILL_ZEROS,  /* Gemma's norm weights (x·(1 + w)) */
    FILL_E2M1,   /* U8, two random 4-bit E2M1 codes a byte (MXFP4 _blocks) */
    FILL_E8M0,   /* U8 MXFP4 block scales 2^-7 .. 2^-5 (the fixture's):
                  * weights |w| <= 6 × 2^-5 = 0.19, mean |w| about 0.04 */
} fill;

typedef struct tensor {
    char    name[96];
    int     n_dims;
    int64_t dims[4]; /* outermost first, as safetensors lists them */
    fill    fill;
} tensor;

typedef struct tensor_list {
    tensor *t;
    size_t  n, cap;
    bool    oom;
} tensor_list;

/* What every name starts with (a family's wrap_prefix). */
static const char *name_prefix = "";

/* Appends tensor NAME (printf-style, after name_prefix) of dims (outermost
 * first, ended by 0) filled as f. */
__attribute__((format(printf, 4, 5)))
static void add(tensor_list *L, fill f, const int64_t *dims, const char *fmt, ...)
{
    if (L->n == L->cap) {
        size_t cap = L->cap ? 2 * L->cap : 256;
        tensor *t = realloc(L->t, cap * sizeof *t);
        if (!t) {
            L->oom = true;
            return;
        }
        L->t = t, L->cap = cap;
    }
    tensor *t = &L->t[L->n++];
    va_list ap;
    va_start(ap, fmt);
    const int pre = snprintf(t->name, sizeof t->name, "%s", name_prefix);
    vsnprintf(t->name + pre, sizeof t->name - (size_t)pre, fmt, ap);
    va_end(ap);
    for (t->n_dims = 0; dims[t->n_dims]; t->n_dims++)
        t->dims[t->n_dims] = dims[t->n_dims];
    t->fill = f;
}

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__, 0 })
/* tensor "model.layers.l.PART" (l in scope) */
#define LAYER(part, f, ...) add(L, f, DIMS(__VA_ARGS__), "model.layers.%lld." part, LL(l))

/* gpt-oss's experts, stacked: gate and up rows interleaved in gate_up_proj,
 * every row in blocks of 32 elements, each 16 bytes of E2M1 codes and an
 * E8M0 scale. */
static void add_mxfp4_experts(tensor_list *L, const shape *s, int64_t l)
{
    const int64_t e = s->experts, ff = s->moe_ffn, dim = s->dim;
    LAYER("mlp.router.weight", FILL_RANDOM, e, dim);
    LAYER("mlp.router.bias", FILL_RANDOM, e);
    LAYER("mlp.experts.gate_up_proj_blocks", FILL_E2M1, e, 2 * ff, dim / 32, 16);
    LAYER("mlp.experts.gate_up_proj_scales", FILL_E8M0, e, 2 * ff, dim / 32);
    LAYER("mlp.experts.gate_up_proj_bias", FILL_RANDOM, e, 2 * ff);
    LAYER("mlp.experts.down_proj_blocks", FILL_E2M1, e, dim, ff / 32, 16);
    LAYER("mlp.experts.down_proj_scales", FILL_E8M0, e, dim, ff / 32);
    LAYER("mlp.experts.down_proj_bias", FILL_RANDOM, e, dim);
}

/* The feed-forward of block l: dense, fused, per-expert or MXFP4 experts. */
static void add_ffn(tensor_list *L, const family *f, const shape *s, int64_t l)
{
    const int64_t dim = s->dim, ffn = s->ffn;
    const expert_names *x = f->experts;
    if (f->flags & F_GLM4MOE && l == 0) {
        x = NULL; /* first_k_dense_replace 1 */
    } else if (f->flags & F_GLM4MOE) {
        /* DeepSeek-V2-Lite: no score bias, two shared experts as one */
        const int64_t sh = f->flags & F_MLA_LITE ? 2 * s->moe_ffn : s->moe_ffn;
        if (!(f->flags & F_MLA_LITE))
            LAYER("mlp.gate.e_score_correction_bias", FILL_RANDOM, s->experts);
        LAYER("mlp.shared_experts.gate_proj.weight", FILL_RANDOM, sh, dim);
        LAYER("mlp.shared_experts.up_proj.weight", FILL_RANDOM, sh, dim);
        LAYER("mlp.shared_experts.down_proj.weight", FILL_RANDOM, dim, sh);
    }
    if (f->flags & F_MXFP4) {
        add_mxfp4_experts(L, s, l);
    } else if (x) {
        const int64_t w = x->moe_width ? s->moe_ffn : ffn;
        add(L, FILL_RANDOM, DIMS(s->experts, dim), "model.layers.%lld.%s", LL(l), x->router);
        for (int64_t e = 0; e < s->experts; e++) {
            char gate[96], up[96], down[96];
            snprintf(gate, sizeof gate, x->gate, LL(e));
            snprintf(up, sizeof up, x->up, LL(e));
            snprintf(down, sizeof down, x->down, LL(e));
            add(L, FILL_RANDOM, DIMS(w, dim), "model.layers.%lld.%s", LL(l), gate);
            add(L, FILL_RANDOM, DIMS(w, dim), "model.layers.%lld.%s", LL(l), up);
            add(L, FILL_RANDOM, DIMS(dim, w), "model.layers.%lld.%s", LL(l), down);
        }
    } else if (f->flags & F_FUSED) {
        LAYER("mlp.gate_up_proj.weight", FILL_RANDOM, 2 * ffn, dim);
        LAYER("mlp.down_proj.weight", FILL_RANDOM, dim, ffn);
    } else {
        LAYER("mlp.gate_proj.weight", FILL_RANDOM, ffn, dim);
        LAYER("mlp.up_proj.weight", FILL_RANDOM, ffn, dim);
        LAYER("mlp.down_proj.weight", FILL_RANDOM, dim, ffn);
    }
}

/* Block l: attention (q [heads × head_dim, dim], k and v [kv × head_dim,
 * dim], o back to dim), then the feed-forward, each after its norm. */
static void add_block(tensor_list *L, const family *f, const shape *s, int64_t l)
{
    const fill norm = f->flags & F_GEMMA_NORMS ? FILL_ZEROS : FILL_ONES;
    const int64_t dim = s->dim, qd = s->heads * s->head_dim, kvd = s->kv * s->head_dim;
    LAYER("input_layernorm.weight", norm, dim);
    if (f->flags & F_MLA) { /* q and the KV through their low ranks */
        const int64_t hd = s->head_dim;
        if (f->flags & F_MLA_LITE) {
            LAYER("self_attn.q_proj.weight", FILL_RANDOM, s->heads * (hd + s->rope_dim), dim);
        } else {
            LAYER("self_attn.q_a_proj.weight", FILL_RANDOM, s->q_lora, dim);
            LAYER("self_attn.q_a_layernorm.weight", norm, s->q_lora);
            LAYER("self_attn.q_b_proj.weight", FILL_RANDOM, s->heads * (hd + s->rope_dim), s->q_lora);
        }
        LAYER("self_attn.kv_a_proj_with_mqa.weight", FILL_RANDOM, s->kv_lora + s->rope_dim, dim);
        LAYER("self_attn.kv_a_layernorm.weight", norm, s->kv_lora);
        LAYER("self_attn.kv_b_proj.weight", FILL_RANDOM, s->heads * 2 * hd, s->kv_lora);
        LAYER("self_attn.o_proj.weight", FILL_RANDOM, dim, qd);
        LAYER("post_attention_layernorm.weight", norm, dim);
        add_ffn(L, f, s, l);
        return;
    }
    if (f->flags & F_FUSED) {
        LAYER("self_attn.qkv_proj.weight", FILL_RANDOM, qd + 2 * kvd, dim);
    } else {
        LAYER("self_attn.q_proj.weight", FILL_RANDOM, qd, dim);
        LAYER("self_attn.k_proj.weight", FILL_RANDOM, kvd, dim);
        LAYER("self_attn.v_proj.weight", FILL_RANDOM, kvd, dim);
    }
    LAYER("self_attn.o_proj.weight", FILL_RANDOM, dim, qd);
    if (f->flags & F_QKV_BIAS) {
        LAYER("self_attn.q_proj.bias", FILL_RANDOM, qd);
        LAYER("self_attn.k_proj.bias", FILL_RANDOM, kvd);
        LAYER("self_attn.v_proj.bias", FILL_RANDOM, kvd);
    }
    if (f->flags & F_BIAS_SINKS) {
        LAYER("self_attn.q_proj.bias", FILL_RANDOM, qd);
        LAYER("self_attn.k_proj.bias", FILL_RANDOM, kvd);
        LAYER("self_attn.v_proj.bias", FILL_RANDOM, kvd);
        LAYER("self_attn.o_proj.bias", FILL_RANDOM, dim);
        LAYER("self_attn.sinks", FILL_RANDOM, s->heads); /* one logit per head */
    }
    if (f->flags & F_QK_NORM) {
        LAYER("self_attn.q_norm.weight", norm, s->head_dim);
        LAYER("self_attn.k_norm.weight", norm, s->head_dim);
    }
    LAYER("post_attention_layernorm.weight", norm, dim);
    if (f->flags & F_GEMMA_NORMS) {
        LAYER("pre_feedforward_layernorm.weight", norm, dim);
        LAYER("post_feedforward_layernorm.weight", norm, dim);
    }
    add_ffn(L, f, s, l);
}

/* Qwen 3.5's block l: gated full attention or Gated DeltaNet, then a
 * dense SwiGLU (qwen35) or fused experts with a shared expert (qwen35moe).
 * Norms are w of x·(1 + w) (zeros) but the gated linear_attn.norm (ones). */
static void add_qwen35_block(tensor_list *L, const family *f, const shape *s, int64_t l)
{
    const int64_t dim = s->dim, hd = s->head_dim, kd = s->lin_k * s->lin_dim, vd = s->lin_v * s->lin_dim;
    LAYER("input_layernorm.weight", FILL_ZEROS, dim);
    if ((l + 1) % qwen35_interval(s) == 0) {
        LAYER("self_attn.q_proj.weight", FILL_RANDOM, 2 * s->heads * hd, dim);
        LAYER("self_attn.k_proj.weight", FILL_RANDOM, s->kv * hd, dim);
        LAYER("self_attn.v_proj.weight", FILL_RANDOM, s->kv * hd, dim);
        LAYER("self_attn.o_proj.weight", FILL_RANDOM, dim, s->heads * hd);
        LAYER("self_attn.q_norm.weight", FILL_ZEROS, hd);
        LAYER("self_attn.k_norm.weight", FILL_ZEROS, hd);
    } else {
        LAYER("linear_attn.in_proj_qkv.weight", FILL_RANDOM, 2 * kd + vd, dim);
        LAYER("linear_attn.in_proj_z.weight", FILL_RANDOM, vd, dim);
        LAYER("linear_attn.in_proj_b.weight", FILL_RANDOM, s->lin_v, dim);
        LAYER("linear_attn.in_proj_a.weight", FILL_RANDOM, s->lin_v, dim);
        LAYER("linear_attn.conv1d.weight", FILL_RANDOM, 2 * kd + vd, 1, 4);
        LAYER("linear_attn.dt_bias", FILL_RANDOM, s->lin_v);
        LAYER("linear_attn.A_log", FILL_RANDOM, s->lin_v);
        LAYER("linear_attn.norm.weight", FILL_ONES, s->lin_dim);
        LAYER("linear_attn.out_proj.weight", FILL_RANDOM, dim, vd);
    }
    LAYER("post_attention_layernorm.weight", FILL_ZEROS, dim);
    if (!is_moe(f)) {
        LAYER("mlp.gate_proj.weight", FILL_RANDOM, s->ffn, dim);
        LAYER("mlp.up_proj.weight", FILL_RANDOM, s->ffn, dim);
        LAYER("mlp.down_proj.weight", FILL_RANDOM, dim, s->ffn);
        return;
    }
    LAYER("mlp.gate.weight", FILL_RANDOM, s->experts, dim);
    LAYER("mlp.experts.gate_up_proj", FILL_RANDOM, s->experts, 2 * s->moe_ffn, dim);
    LAYER("mlp.experts.down_proj", FILL_RANDOM, s->experts, dim, s->moe_ffn);
    LAYER("mlp.shared_expert.gate_proj.weight", FILL_RANDOM, s->shexp_ffn, dim);
    LAYER("mlp.shared_expert.up_proj.weight", FILL_RANDOM, s->shexp_ffn, dim);
    LAYER("mlp.shared_expert.down_proj.weight", FILL_RANDOM, dim, s->shexp_ffn);
    LAYER("mlp.shared_expert_gate.weight", FILL_RANDOM, 1, dim);
}
#undef LAYER

/* tensor "model.language_model.layers.l.PART" */
#define GLAYER(part, f, ...) add(L, f, DIMS(__VA_ARGS__), "model.language_model.layers.%lld." part, LL(l))

/* Gemma 4's block l (norms x·w, ones): attention of the block's kind (full
 * blocks: global heads, K as V without per-layer inputs), a dense GeGLU
 * (twice as wide in KV-shared blocks) and the parallel experts or the
 * per-layer input. */
static void add_gemma4_block(tensor_list *L, const family *f, const shape *s, int64_t l)
{
    const bool full = gemma4_full(s, l), ple = f->flags & F_PLE;
    const bool own_kv = !ple || l < s->layers - s->kv_shared;
    const int64_t dim = s->dim, hd = full ? s->global_head_dim : s->head_dim;
    const int64_t ffn = ple && !own_kv ? 2 * s->ffn : s->ffn;
    GLAYER("input_layernorm.weight", FILL_ONES, dim);
    GLAYER("self_attn.q_proj.weight", FILL_RANDOM, s->heads * hd, dim);
    GLAYER("self_attn.q_norm.weight", FILL_ONES, hd);
    if (own_kv) {
        GLAYER("self_attn.k_proj.weight", FILL_RANDOM, s->kv * hd, dim);
        GLAYER("self_attn.k_norm.weight", FILL_ONES, hd);
        if (!full || ple)
            GLAYER("self_attn.v_proj.weight", FILL_RANDOM, s->kv * hd, dim);
    }
    GLAYER("self_attn.o_proj.weight", FILL_RANDOM, dim, s->heads * hd);
    GLAYER("post_attention_layernorm.weight", FILL_ONES, dim);
    GLAYER("pre_feedforward_layernorm.weight", FILL_ONES, dim);
    GLAYER("mlp.gate_proj.weight", FILL_RANDOM, ffn, dim);
    GLAYER("mlp.up_proj.weight", FILL_RANDOM, ffn, dim);
    GLAYER("mlp.down_proj.weight", FILL_RANDOM, dim, ffn);
    GLAYER("post_feedforward_layernorm.weight", FILL_ONES, dim);
    if (is_moe(f)) {
        GLAYER("router.proj.weight", FILL_RANDOM, s->experts, dim);
        GLAYER("router.scale", FILL_ONES, dim);
        GLAYER("router.per_expert_scale", FILL_ONES, s->experts);
        GLAYER("experts.gate_up_proj", FILL_RANDOM, s->experts, 2 * s->moe_ffn, dim);
        GLAYER("experts.down_proj", FILL_RANDOM, s->experts, dim, s->moe_ffn);
        GLAYER("pre_feedforward_layernorm_2.weight", FILL_ONES, dim);
        GLAYER("post_feedforward_layernorm_1.weight", FILL_ONES, dim);
        GLAYER("post_feedforward_layernorm_2.weight", FILL_ONES, dim);
    }
    if (ple) {
        GLAYER("per_layer_input_gate.weight", FILL_RANDOM, s->ple_dim, dim);
        GLAYER("per_layer_projection.weight", FILL_RANDOM, dim, s->ple_dim);
        GLAYER("post_per_layer_input_norm.weight", FILL_ONES, dim);
    }
    GLAYER("layer_scalar", FILL_ONES, 1);
}
#undef GLAYER

/* Gemma 4's checkpoint: the text model's tensors under model.language_model. */
static void list_gemma4(tensor_list *L, const family *f, const shape *s)
{
    add(L, FILL_RANDOM, DIMS(s->vocab, s->dim), "model.language_model.embed_tokens.weight");
    if (f->flags & F_PLE) {
        add(L, FILL_RANDOM, DIMS(s->vocab, s->layers * s->ple_dim),
            "model.language_model.embed_tokens_per_layer.weight");
        add(L, FILL_RANDOM, DIMS(s->layers * s->ple_dim, s->dim),
            "model.language_model.per_layer_model_projection.weight");
        add(L, FILL_ONES, DIMS(s->ple_dim), "model.language_model.per_layer_projection_norm.weight");
    }
    for (int64_t l = 0; l < s->layers; l++)
        add_gemma4_block(L, f, s, l);
    add(L, FILL_ONES, DIMS(s->dim), "model.language_model.norm.weight");
}

/* Every tensor of the checkpoint, in Hugging Face's module order. */
static int list_tensors(tensor_list *L, const family *f, const shape *s)
{
    name_prefix = f->wrap_prefix ? f->wrap_prefix : "";
    if (f->flags & F_GEMMA4) {
        list_gemma4(L, f, s);
        return L->oom ? -1 : 0;
    }
    add(L, FILL_RANDOM, DIMS(s->vocab, s->dim), "model.embed_tokens.weight");
    for (int64_t l = 0; l < s->layers; l++)
        if (f->flags & F_QWEN35)
            add_qwen35_block(L, f, s, l);
        else
            add_block(L, f, s, l);
    if (f->flags & F_GLM4MOE && !(f->flags & F_MLA_LITE)) { /* the NextN (MTP) block */
        const int64_t l = s->layers, dim = s->dim;
        add_block(L, f, s, l);
        add(L, FILL_RANDOM, DIMS(dim, 2 * dim), "model.layers.%lld.eh_proj.weight", LL(l));
        add(L, FILL_ONES, DIMS(dim), "model.layers.%lld.enorm.weight", LL(l));
        add(L, FILL_ONES, DIMS(dim), "model.layers.%lld.hnorm.weight", LL(l));
        add(L, FILL_ONES, DIMS(dim), "model.layers.%lld.shared_head.norm.weight", LL(l));
    }
    add(L, f->flags & F_GEMMA_NORMS ? FILL_ZEROS : FILL_ONES, DIMS(s->dim), "model.norm.weight");
    if (!(f->flags & F_TIED))
        add(L, FILL_RANDOM, DIMS(s->vocab, s->dim), "lm_head.weight");
    return L->oom ? -1 : 0;
}

/* ===========================================================================
 * model.safetensors
 */

typedef struct weight_type {
    const char *name; /* the safetensors dtype of the float tensors */
    int         size;
} weight_type;

static bool is_u8(const tensor *t)
{
    return t->fill == FILL_E2M1 || t->fill == FILL_E8M0;
}

static uint64_t n_elements(const tensor *t)
{
    uint64_t n = 1;
    for (int d = 0; d < t->n_dims; d++)
        n *= (uint64_t)t->dims[d];
    return n;
}

/* The JSON header, padded with spaces to a multiple of 8; NULL when out of
 * memory. */
static char *safetensors_header(const tensor_list *L, weight_type wt, size_t *len_out)
{
    size_t cap = L->n * 200 + 64, len = 0;
    char *hdr = malloc(cap);
    if (!hdr)
        return NULL;
    uint64_t off = 0;
    len += (size_t)snprintf(hdr + len, cap - len, "{");
    for (size_t i = 0; i < L->n; i++) {
        const tensor *t = &L->t[i];
        uint64_t bytes = n_elements(t) * (uint64_t)(is_u8(t) ? 1 : wt.size);
        len += (size_t)snprintf(hdr + len, cap - len, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[",
                                i ? "," : "", t->name, is_u8(t) ? "U8" : wt.name);
        for (int d = 0; d < t->n_dims; d++)
            len += (size_t)snprintf(hdr + len, cap - len, "%s%lld", d ? "," : "", LL(t->dims[d]));
        len += (size_t)snprintf(hdr + len, cap - len, "],\"data_offsets\":[%llu,%llu]}",
                                (unsigned long long)off, (unsigned long long)(off + bytes));
        off += bytes;
    }
    len += (size_t)snprintf(hdr + len, cap - len, "}");
    while (len % 8)
        hdr[len++] = ' ';
    *len_out = len;
    return hdr;
}

/* --set: a value at one element of a named tensor. */
typedef struct poke {
    char     name[96];
    uint64_t index;
    double   value;
} poke;

#define MAX_POKES 8
static poke pokes[MAX_POKES];
static int n_pokes;

/* "NAME[INDEX]=VALUE" into pokes; 0, or -1 when malformed. */
static int parse_poke(const char *arg)
{
    const char *open = strchr(arg, '['), *close = open ? strchr(open, ']') : NULL;
    char *end;
    if (n_pokes == MAX_POKES || !open || !close || close[1] != '=' || open == arg ||
        (size_t)(open - arg) >= sizeof pokes[0].name)
        return -1;
    poke *p = &pokes[n_pokes];
    memcpy(p->name, arg, (size_t)(open - arg));
    p->name[open - arg] = 0;
    errno = 0;
    p->index = strtoull(open + 1, &end, 10);
    if (end != close || errno)
        return -1;
    p->value = strtod(close + 2, &end);
    if (end == close + 2 || *end)
        return -1;
    n_pokes++;
    return 0;
}

/* Writes one tensor's values in chunks. */
static void write_values(FILE *fp, const tensor *t, weight_type wt)
{
    enum { CHUNK = 1 << 16 };
    static uint16_t h[CHUNK];
    static float f[CHUNK];
    static uint8_t b[CHUNK];
    const uint64_t count = n_elements(t);
    for (uint64_t done = 0; done < count; done += CHUNK) {
        size_t c = count - done < CHUNK ? (size_t)(count - done) : CHUNK;
        if (is_u8(t)) {
            for (size_t j = 0; j < c; j++)
                b[j] = t->fill == FILL_E8M0 ? (uint8_t)(120 + rng_next() % 3) : (uint8_t)(rng_next() >> 56);
            for (int k = 0; k < n_pokes; k++)
                if (!strcmp(pokes[k].name, t->name) && pokes[k].index - done < c)
                    b[pokes[k].index - done] = (uint8_t)pokes[k].value;
            fwrite(b, 1, c, fp);
            continue;
        }
        for (size_t j = 0; j < c; j++)
            f[j] = t->fill == FILL_ONES ? 1.0f : t->fill == FILL_ZEROS ? 0.0f : randw();
        for (int k = 0; k < n_pokes; k++)
            if (!strcmp(pokes[k].name, t->name) && pokes[k].index - done < c)
                f[pokes[k].index - done] = (float)pokes[k].value;
        if (wt.size == 4) {
            fwrite(f, 4, c, fp);
            continue;
        }
        for (size_t j = 0; j < c; j++)
            h[j] = wt.name[0] == 'F' ? gguf_f32_to_f16(f[j]) : gguf_f32_to_bf16(f[j]);
        fwrite(h, 2, c, fp);
    }
}

static int write_safetensors(const char *dir, const tensor_list *L, weight_type wt)
{
    size_t len;
    char *hdr = safetensors_header(L, wt, &len);
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    FILE *fp = hdr ? fopen(path, "wb") : NULL;
    if (!fp) {
        free(hdr);
        return -1;
    }
    uint64_t hl = len;
    fwrite(&hl, 8, 1, fp);
    fwrite(hdr, 1, len, fp);
    free(hdr);
    for (size_t i = 0; i < L->n; i++)
        write_values(fp, &L->t[i], wt);
    const int bad = ferror(fp);
    return fclose(fp) || bad ? -1 : 0;
}

/* ===========================================================================
 * main
 */

static int usage(void)
{
    fprintf(stderr, "usage: mkhf OUTDIR [--family ");
    for (size_t i = 0; i < N_FAMILIES; i++)
        fprintf(stderr, "%s%s", i ? "|" : "", FAMILIES[i].name);
    fprintf(stderr, "]\n"
                    "            [--tokenizer tokenizer.model] [--dim N] [--layers N] [--ffn N] [--heads N]\n"
                    "            [--kv-heads N] [--head-dim N] [--vocab N] [--experts N] [--experts-used N]\n"
                    "            [--moe-ffn N] [--dtype f16|bf16|f32] [--set NAME[INDEX]=VALUE ...]\n"
                    "            [--lin-k-heads N] [--lin-v-heads N] [--lin-head-dim N] [--shexp-ffn N]\n"
                    "            [--global-head-dim N] [--ple-dim N] [--kv-shared N]\n"
                    "            [--q-lora N] [--kv-lora N] [--rope-dim N]\n"
                    "       mkhf --families   (one line per family: NAME ARCHITECTURE HF_CLASS)\n");
    return 2;
}

/* Whether the sizes make a model of family f (head_dim already set). */
static bool consistent(const family *f, const shape *s)
{
    if (s->dim <= 0 || s->layers < 1 || s->heads <= 0 || s->kv <= 0 || s->head_dim <= 0 ||
        s->vocab < 1 || s->heads % s->kv)
        return false;
    if (!(f->flags & F_OWN_HEAD_DIM) && s->dim % s->heads)
        return false;
    if (!(f->flags & F_MXFP4) && s->ffn < 1)
        return false;
    if (is_moe(f) && (s->experts < 1 || s->used < 1 || s->used > s->experts || s->moe_ffn < 1))
        return false;
    if ((f->flags & F_MLA) && (s->q_lora < 1 || s->kv_lora < 1 || s->rope_dim < 2 || s->rope_dim % 2))
        return false;
    /* Qwen 3.5: value heads a multiple of key heads; a quarter of each head
     * rotated in pairs */
    if (f->flags & F_QWEN35 && (s->lin_k < 1 || s->lin_v < 1 || s->lin_dim < 1 || s->lin_v % s->lin_k ||
                                s->head_dim % 8 || s->shexp_ffn < 1))
        return false;
    if (f->flags & F_GEMMA4) {
        /* llama.cpp maps a KV-shared block to the last full block before
         * them and the sliding one before that */
        const int64_t first = s->layers - s->kv_shared;
        if (s->global_head_dim < 8 || s->global_head_dim % 8 || s->ple_dim < 1 || s->kv_shared < 0 ||
            (s->kv_shared && (first < 2 || !gemma4_full(s, first - 1) || gemma4_full(s, first - 2))))
            return false;
    }
    /* MXFP4 rows are whole blocks of 32 */
    return !(f->flags & F_MXFP4) || (s->dim % 32 == 0 && s->moe_ffn % 32 == 0);
}

int main(int argc, char **argv)
{
    shape s = { .dim = 2048, .layers = 16, .ffn = 5632, .heads = 16, .kv = 16, .vocab = 32000,
                .experts = 8, .used = 2, .moe_ffn = 768,
                .q_lora = MLA_Q_LORA, .kv_lora = MLA_KV_LORA, .rope_dim = MLA_ROPE };
    const char *dtype = "bf16", *out = NULL, *tok = NULL, *name = "llama";
    if (argc == 2 && !strcmp(argv[1], "--families")) {
        for (size_t i = 0; i < N_FAMILIES; i++)
            printf("%s %s %s\n", FAMILIES[i].name, FAMILIES[i].arch, FAMILIES[i].hf_class);
        return ferror(stdout) ? 1 : 0;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t *num = !strcmp(a, "--dim") ? &s.dim : !strcmp(a, "--layers") ? &s.layers
                     : !strcmp(a, "--ffn") ? &s.ffn : !strcmp(a, "--heads") ? &s.heads
                     : !strcmp(a, "--kv-heads") ? &s.kv : !strcmp(a, "--vocab") ? &s.vocab
                     : !strcmp(a, "--head-dim") ? &s.head_dim : !strcmp(a, "--experts") ? &s.experts
                     : !strcmp(a, "--experts-used") ? &s.used : !strcmp(a, "--moe-ffn") ? &s.moe_ffn
                     : !strcmp(a, "--lin-k-heads") ? &s.lin_k : !strcmp(a, "--lin-v-heads") ? &s.lin_v
                     : !strcmp(a, "--lin-head-dim") ? &s.lin_dim : !strcmp(a, "--shexp-ffn") ? &s.shexp_ffn
                     : !strcmp(a, "--global-head-dim") ? &s.global_head_dim
                     : !strcmp(a, "--ple-dim") ? &s.ple_dim : !strcmp(a, "--kv-shared") ? &s.kv_shared
                     : !strcmp(a, "--q-lora") ? &s.q_lora : !strcmp(a, "--kv-lora") ? &s.kv_lora
                     : !strcmp(a, "--rope-dim") ? &s.rope_dim
                     : NULL;
        if (num && v) {
            *num = atoll(v), i++;
        } else if (!strcmp(a, "--family") && v) {
            name = v, i++;
        } else if (!strcmp(a, "--dtype") && v) {
            dtype = v, i++;
        } else if (!strcmp(a, "--tokenizer") && v) {
            tok = v, i++;
        } else if (!strcmp(a, "--set") && v) {
            if (parse_poke(v)) {
                fprintf(stderr, "mkhf: bad --set '%s' (NAME[INDEX]=VALUE, at most %d)\n", v, MAX_POKES);
                return 2;
            }
            i++;
        } else if (!out && a[0] != '-') {
            out = a;
        } else {
            return usage();
        }
    }
    const family *f = family_find(name);
    if (!f) {
        fprintf(stderr, "mkhf: no family %s: neither a row's name nor its architecture "
                        "(a new architecture needs a row in tests/tools/mkhf.c's FAMILIES)\n", name);
        return usage();
    }
    const weight_type wt = !strcmp(dtype, "f32") ? (weight_type){ "F32", 4 }
                         : !strcmp(dtype, "f16") ? (weight_type){ "F16", 2 } : (weight_type){ "BF16", 2 };
    if (!s.head_dim || !(f->flags & F_OWN_HEAD_DIM)) /* else heads are hidden / heads wide */
        s.head_dim = s.heads > 0 ? s.dim / s.heads : 0;
    /* the defaults of the Qwen 3.5 and Gemma 4 sizes (see the family list) */
    if (!s.lin_k)
        s.lin_k = s.heads > 1 ? s.heads / 2 : 1;
    if (!s.lin_v)
        s.lin_v = s.heads;
    if (!s.lin_dim)
        s.lin_dim = s.head_dim;
    if (!s.shexp_ffn)
        s.shexp_ffn = s.moe_ffn;
    if (!s.global_head_dim)
        s.global_head_dim = 2 * s.head_dim;
    if (!s.ple_dim)
        s.ple_dim = 32;
    if (f->flags & F_MLA) /* DeepseekV2Model splits kv_b_proj by num_key_value_heads */
        s.kv = s.heads;
    if (!out || !consistent(f, &s)) {
        fprintf(stderr, "mkhf: need OUTDIR and consistent dimensions\n");
        return 2;
    }
    if (mkdir(out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "mkhf: %s: %s\n", out, strerror(errno));
        return 1;
    }
    tensor_list L = { 0 };
    int rc = 1;
    if (write_config(out, f, &s)) {
        fprintf(stderr, "mkhf: %s/config.json: write error\n", out);
        goto done;
    }
    if (write_tokenizer(out, f, &s, tok))
        goto done;
    if (list_tensors(&L, f, &s)) {
        fprintf(stderr, "mkhf: out of memory\n");
        goto done;
    }
    if (write_safetensors(out, &L, wt)) {
        fprintf(stderr, "mkhf: %s/model.safetensors: write error\n", out);
        goto done;
    }
    rc = 0;
done:
    free(L.t);
    return rc;
}
