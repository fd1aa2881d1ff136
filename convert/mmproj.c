/*
 * mmproj.c — a multimodal checkpoint's vision tower and projector as a
 * "clip" GGUF (see mmproj.h), as e21cdc11's MmprojModel and
 * Gemma3VisionModel write it:
 *
 *   keys    general.file_type, clip.has_vision_encoder,
 *           clip.vision.{projection_dim (the text width), image_size,
 *           patch_size, embedding_length, feed_forward_length, block_count,
 *           attention.head_count, image_mean, image_std} (the means and
 *           deviations from preprocessor_config.json / processor_config.json),
 *           clip.projector_type "gemma3", clip.vision.attention.layer_norm_epsilon
 *           (default 1e-6), clip.use_gelu, and clip.vision.projector.scale_factor
 *           when (image_size / patch_size) / √image_seq_length is not 4
 *   tensors the vision_tower.* and multi_modal_projector.* names of every
 *           shard (shards in file-name order, names sorted in each), named
 *           v.* and mm.*; mm_soft_emb_norm + 1 (Gemma3RMSNorm's weight),
 *           mm.input_projection always F16, the embeddings always F32
 *
 * and as Gemma4VisionAudioModel writes Gemma 4's vision and audio towers:
 * clip.vision.projector_type "gemma4v" (image_size 224 whatever the config),
 * with a non-empty audio_config clip.has_audio_encoder and clip.audio.*
 * (feed_forward_length 4 × hidden_size, num_mel_bins input_feat_size or 128,
 * layer_norm_epsilon 1e-5, projector_type "gemma4a"); the clipped linears'
 * ".linear." dropped and their 0-d bounds written as [1]; the patch
 * embedding [n, p·p·3] as a Conv2D [p, p, 3, n]; the depthwise Conv1d
 * squeezed; per_dim_scale through softplus; the subsampling convolutions
 * and every ".conv"/"_conv" tensor F32 (mmproj.c's GEMMA4* rows).
 *
 * and as LlavaVisionModel writes Mistral Small 3.1's Pixtral tower:
 * clip.projector_type "pixtral", layer_norm_epsilon default 1e-5,
 * clip.use_silu (or use_gelu) by vision_config.hidden_act, the top level's
 * spatial_merge_size; q/k permuted as LLaMA's over the tower's heads; the
 * patch merger F16 at f16, otherwise F32; the [IMG_BREAK] token's row of
 * the text embedding (its id from tokenizer_config.json's
 * added_tokens_decoder, else tokenizer.json's added_tokens) as
 * v.token_embd.img_break (mmproj.c's PIXTRAL* rows).
 */
#include "mmproj.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ggufkit/quants.h>

#include "clipcheck.h"
#include "hf.h"
#include "json.h"
#include "safetensors.h"

/* One name of the tower: `from` under a section's prefix (or its block
 * prefix and a block number), written `to` (with ".N." for the block). */
typedef struct mm_row {
    const char *from, *to;
    uint8_t     force;  /* MM_F16, MM_F32, MM_HALF: the type whatever the outtype */
    bool        plus1;  /* Gemma3RMSNorm's weight is 1 + w */
    bool        kt2;    /* a Conv3D of temporal size 2: two Conv2D tensors, "to" and "to.1" */
    uint8_t     op;     /* MM_OP_*: a change of layout or value */
    bool        bare;   /* the checkpoint's name has no .weight/.bias: "to" is the whole name */
    uint8_t     rope;   /* enum gguf_permute: LlamaModel.permute over the tower's heads (q, k) */
} mm_row;

enum {
    MM_OP_NONE,
    MM_OP_PATCH,    /* Gemma 4's patch embedding [n, p·p·3] (pixels, channels last) as Conv2D [n, 3, p, p] */
    MM_OP_DW,       /* a depthwise Conv1d [c, 1, k] as [c, k] */
    MM_OP_SOFTPLUS, /* softplus(x) in F32 (F16 for an F16 source): Gemma 4's per_dim_scale */
};

enum { MM_ANY, MM_F16, MM_F32, MM_HALF /* f16 at outtype f16, otherwise f32 */ };

typedef struct mm_section {
    const char   *prefix, *block_prefix;
    const mm_row *fixed, *block;
    const char   *block_to; /* NULL: "v.blk." */
    bool          audio;    /* its blocks are counted by the audio tower's layers */
} mm_section;

/* A family: its classes, the prefixes of its tower's tensors (the rest is
 * the text model's), its sections and what its MmprojModel writes. */
typedef struct mm_family {
    const char       *cls[3];
    const char       *projector;
    const char       *tower[5], *ignore[2];
    const mm_section *sections;
    bool              qwen3vl;  /* Qwen3VLVisionModel: image_size from num_position_embeddings,
                                   eps from text_config.rms_norm_eps, spatial_merge_size,
                                   is_deepstack_layers */
    bool              gemma4;   /* Gemma4VisionAudioModel: image_size 224, clipped linears
                                   (".linear." dropped, 0-d min/max as [1]), an audio tower */
    bool              pixtral;  /* LlavaVisionModel: vision_config.model_type pixtral, eps
                                   default 1e-5, use_silu / use_gelu by hidden_act, the
                                   top level's spatial_merge_size, the [IMG_BREAK] token's
                                   row of the text embedding as v.token_embd.img_break */
} mm_family;

#define END { .from = NULL }
static const mm_row GEMMA3_FIXED[] = {
    { .from = "embeddings.patch_embedding", .to = "v.patch_embd", .force = MM_F32 },
    { .from = "embeddings.position_embedding", .to = "v.position_embd", .force = MM_F32 },
    { .from = "post_layernorm", .to = "v.post_ln" }, END,
}, GEMMA3_BLOCK[] = {
    { .from = "self_attn.q_proj", .to = "attn_q" }, { .from = "self_attn.k_proj", .to = "attn_k" },
    { .from = "self_attn.v_proj", .to = "attn_v" }, { .from = "self_attn.out_proj", .to = "attn_out" },
    { .from = "layer_norm1", .to = "ln1" }, { .from = "layer_norm2", .to = "ln2" },
    { .from = "mlp.fc1", .to = "ffn_up" }, { .from = "mlp.fc2", .to = "ffn_down" }, END,
}, GEMMA3_PROJ[] = {
    { .from = "mm_input_projection", .to = "mm.input_projection", .force = MM_F16 },
    { .from = "mm_soft_emb_norm", .to = "mm.soft_emb_norm", .plus1 = true }, END,
}, QWEN3VL_FIXED[] = {
    { .from = "patch_embed.proj", .to = "v.patch_embd", .force = MM_HALF, .kt2 = true },
    { .from = "pos_embed", .to = "v.position_embd", .force = MM_F32 },
    { .from = "merger.norm", .to = "v.post_ln" },
    { .from = "merger.linear_fc1", .to = "mm.0" }, { .from = "merger.linear_fc2", .to = "mm.2" }, END,
}, GEMMA4V_FIXED[] = {
    { .from = "patch_embedder.input_proj", .to = "v.patch_embd", .force = MM_HALF, .op = MM_OP_PATCH },
    { .from = "patch_embedder.position_embedding_table", .to = "v.position_embd.weight", .force = MM_F32,
      .bare = true },
    { .from = "std_bias", .to = "v.std_bias", .bare = true },
    { .from = "std_scale", .to = "v.std_scale", .bare = true }, END,
}, GEMMA4V_BLOCK[] = {
    { .from = "input_layernorm", .to = "ln1" }, { .from = "self_attn.q_proj", .to = "attn_q" },
    { .from = "self_attn.k_proj", .to = "attn_k" }, { .from = "self_attn.v_proj", .to = "attn_v" },
    { .from = "self_attn.o_proj", .to = "attn_out" }, { .from = "self_attn.q_norm", .to = "attn_q_norm" },
    { .from = "self_attn.k_norm", .to = "attn_k_norm" },
    { .from = "post_attention_layernorm", .to = "attn_post_norm" },
    { .from = "pre_feedforward_layernorm", .to = "ln2" }, { .from = "mlp.gate_proj", .to = "ffn_gate" },
    { .from = "mlp.up_proj", .to = "ffn_up" }, { .from = "mlp.down_proj", .to = "ffn_down" },
    { .from = "post_feedforward_layernorm", .to = "ffn_post_norm" },
    { .from = "layer_scalar", .to = "out_scale.weight", .bare = true }, END,
}, GEMMA4V_PROJ[] = {
    { .from = "embedding_projection", .to = "mm.input_projection" }, END,
}, GEMMA4A_FIXED[] = { /* ".conv" or "_conv" in the name: F32 (Gemma4VisionAudioModel) */
    { .from = "subsample_conv_projection.layer0.conv", .to = "a.conv1d.0", .force = MM_F32 },
    { .from = "subsample_conv_projection.layer0.norm", .to = "a.conv1d.0.norm", .force = MM_F32 },
    { .from = "subsample_conv_projection.layer1.conv", .to = "a.conv1d.1", .force = MM_F32 },
    { .from = "subsample_conv_projection.layer1.norm", .to = "a.conv1d.1.norm", .force = MM_F32 },
    { .from = "subsample_conv_projection.input_proj_linear", .to = "a.input_projection", .force = MM_F32 },
    { .from = "output_proj", .to = "a.pre_encode.out" }, END,
}, GEMMA4A_BLOCK[] = {
    { .from = "feed_forward1.pre_layer_norm", .to = "ffn_norm" },
    { .from = "feed_forward1.ffw_layer_1", .to = "ffn_up" },
    { .from = "feed_forward1.ffw_layer_2", .to = "ffn_down" },
    { .from = "feed_forward1.post_layer_norm", .to = "ffn_post_norm" },
    { .from = "feed_forward2.pre_layer_norm", .to = "ffn_norm_1" },
    { .from = "feed_forward2.ffw_layer_1", .to = "ffn_up_1" },
    { .from = "feed_forward2.ffw_layer_2", .to = "ffn_down_1" },
    { .from = "feed_forward2.post_layer_norm", .to = "ffn_post_norm_1" },
    { .from = "norm_pre_attn", .to = "attn_pre_norm" }, { .from = "norm_post_attn", .to = "attn_post_norm" },
    { .from = "self_attn.q_proj", .to = "attn_q" }, { .from = "self_attn.k_proj", .to = "attn_k" },
    { .from = "self_attn.v_proj", .to = "attn_v" }, { .from = "self_attn.post", .to = "attn_out" },
    { .from = "self_attn.relative_k_proj", .to = "attn_k_rel" },
    { .from = "self_attn.per_dim_scale", .to = "per_dim_scale.weight", .op = MM_OP_SOFTPLUS,
      .bare = true },
    { .from = "lconv1d.pre_layer_norm", .to = "conv_norm", .force = MM_F32 },
    { .from = "lconv1d.linear_start", .to = "conv_pw1" },
    { .from = "lconv1d.depthwise_conv1d", .to = "conv_dw", .force = MM_F32, .op = MM_OP_DW },
    { .from = "lconv1d.conv_norm", .to = "norm_conv", .force = MM_F32 },
    { .from = "lconv1d.linear_end", .to = "conv_pw2" }, { .from = "norm_out", .to = "ln2" }, END,
}, PIXTRAL_FIXED[] = { /* Mistral3ForConditionalGeneration's HF names */
    { .from = "patch_conv", .to = "v.patch_embd", .force = MM_HALF },
    { .from = "ln_pre", .to = "v.pre_ln" }, END,
}, PIXTRAL_BLOCK[] = {
    { .from = "attention_norm", .to = "ln1" },
    { .from = "attention.q_proj", .to = "attn_q", .rope = GGUF_PERMUTE_Q },
    { .from = "attention.k_proj", .to = "attn_k", .rope = GGUF_PERMUTE_K },
    { .from = "attention.v_proj", .to = "attn_v" }, { .from = "attention.o_proj", .to = "attn_out" },
    { .from = "ffn_norm", .to = "ln2" }, { .from = "feed_forward.gate_proj", .to = "ffn_gate" },
    { .from = "feed_forward.up_proj", .to = "ffn_up" },
    { .from = "feed_forward.down_proj", .to = "ffn_down" }, END,
}, PIXTRAL_PROJ[] = {
    { .from = "norm", .to = "mm.input_norm" },
    { .from = "patch_merger.merging_layer", .to = "mm.patch_merger", .force = MM_HALF },
    { .from = "linear_1", .to = "mm.1" }, { .from = "linear_2", .to = "mm.2" }, END,
}, GEMMA4A_PROJ[] = {
    { .from = "embedding_projection", .to = "mm.a.input_projection" }, END,
}, QWEN3VL_BLOCK[] = {
    { .from = "norm1", .to = "ln1" }, { .from = "norm2", .to = "ln2" },
    { .from = "attn.qkv", .to = "attn_qkv" }, { .from = "attn.proj", .to = "attn_out" },
    { .from = "mlp.linear_fc1", .to = "ffn_up" }, { .from = "mlp.linear_fc2", .to = "ffn_down" }, END,
};
#undef END

static const mm_section GEMMA3_SECTIONS[] = {
    { "vision_tower.vision_model.", "encoder.layers.", GEMMA3_FIXED, GEMMA3_BLOCK, NULL, false },
    { "multi_modal_projector.", NULL, GEMMA3_PROJ, NULL, NULL, false },
    { NULL, NULL, NULL, NULL, NULL, false },
}, QWEN3VL_SECTIONS[] = {
    { "model.visual.", "blocks.", QWEN3VL_FIXED, QWEN3VL_BLOCK, NULL, false },
    { NULL, NULL, NULL, NULL, NULL, false },
}, GEMMA4_SECTIONS[] = {
    { "model.vision_tower.", "encoder.layers.", GEMMA4V_FIXED, GEMMA4V_BLOCK, NULL, false },
    { "model.embed_vision.", NULL, GEMMA4V_PROJ, NULL, NULL, false },
    { "model.audio_tower.", "layers.", GEMMA4A_FIXED, GEMMA4A_BLOCK, "a.blk.", true },
    { "model.embed_audio.", NULL, GEMMA4A_PROJ, NULL, NULL, true },
    { NULL, NULL, NULL, NULL, NULL, false },
}, PIXTRAL_SECTIONS[] = {
    { "vision_tower.", "transformer.layers.", PIXTRAL_FIXED, PIXTRAL_BLOCK, NULL, false },
    { "multi_modal_projector.", NULL, PIXTRAL_PROJ, NULL, NULL, false },
    { NULL, NULL, NULL, NULL, NULL, false },
};

static const mm_family FAMILIES[] = {
    { { "Gemma3ForConditionalGeneration", NULL, NULL }, "gemma3",
      { "vision_tower.", "multi_modal_projector.", "multimodal_projector.", "vision_model.", NULL },
      { "vision_model.head.", NULL } /* tinygemma3's unused head */, GEMMA3_SECTIONS, false, false,
      false },
    { { "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration", NULL },
      "qwen3vl_merger", { "model.visual.", NULL }, { NULL, NULL }, QWEN3VL_SECTIONS, true, false, false },
    { { "Gemma4ForConditionalGeneration", NULL, NULL }, "gemma4v",
      { "model.vision_tower.", "model.embed_vision.", "model.audio_tower.", "model.embed_audio.", NULL },
      { NULL, NULL }, GEMMA4_SECTIONS, false, true, false },
    { { "Mistral3ForConditionalGeneration", NULL, NULL }, "pixtral",
      { "vision_tower.", "multi_modal_projector.", NULL }, { NULL, NULL }, PIXTRAL_SECTIONS, false, false,
      true },
};

typedef struct mm_state {
    const mm_family *fam;
    st_file   *shards;
    char     **shard_names;
    int        n_shards;
    clip_hparams hp;
    double     eps;
    float      mean[16], std[16];
    size_t     n_mean, n_std;
    uint32_t   scale;         /* clip.vision.projector.scale_factor, 0: not written */
    bool       audio;         /* Gemma 4: an audio encoder (a non-empty audio_config) */
    const char *act;          /* clip.use_gelu or clip.use_silu (written true) */
    int64_t    img_break;     /* Pixtral: the [IMG_BREAK] token's id */
    bool       has_break;     /* its row is among the tensors */
} mm_state;

static const char *const N_BLOCK_KEYS[] = { "n_layers", "num_hidden_layers", "n_layer", "num_layers",
                                            "depth", "layers", "encoder_layers",
                                            "vt_num_hidden_layers", NULL };

/* The first of keys in obj (find_vparam), or NULL. */
static const json_value *first_of(const json_value *obj, const char *const *keys, const char **which)
{
    for (; *keys; keys++) {
        const json_value *v = json_get(obj, *keys);
        if (v) {
            *which = *keys;
            return v;
        }
    }
    *which = keys[-1];
    return NULL;
}

/* A size of vision_config: the first of keys, a whole number 1..2^31-1. */
static int vsize(const json_value *vc, const char *const *keys, uint64_t *out, gguf_error *err)
{
    const char *which;
    const json_value *v = first_of(vc, keys, &which);
    int64_t x;
    if (!v)
        return gguf_error_set(err, "config.json: vision_config has no %s", keys[0]);
    if (!json_int(v, &x) || x < 1 || x > INT32_MAX)
        return gguf_error_set(err, "config.json: vision_config.%s is not a whole number from 1 to "
                              "2147483647", which);
    *out = (uint64_t)x;
    return 0;
}

/* image_mean / image_std: 1 to 16 finite numbers. */
static int num_list(const json_value *v, const char *key, float *out, size_t *n, gguf_error *err)
{
    if (!v)
        return gguf_error_set(err, "preprocessor_config.json: no %s", key);
    if (v->type != JSON_ARRAY || v->n < 1 || v->n > 16)
        return gguf_error_set(err, "preprocessor_config.json: %s is not a list of 1 to 16 numbers", key);
    for (size_t i = 0; i < v->n; i++) {
        double d;
        if (!json_num(v->items[i], &d) || !isfinite(d) || fabs(d) > 3.4e38)
            return gguf_error_set(err, "preprocessor_config.json: %s[%zu] is not a finite number", key, i);
        out[i] = (float)d;
    }
    *n = v->n;
    return 0;
}

/* preprocessor_config.json (its media_proc_cfg absorbed), then
 * processor_config.json (its image_processor absorbed) over it: the key
 * of the last that has it, as MmprojModel merges them. */
static const json_value *pp_get(json_value *const *pp, const char *key)
{
    static const char *const inner[2] = { "media_proc_cfg", "image_processor" };
    const json_value *found = NULL;
    for (int i = 0; i < 2; i++) {
        if (!pp[i])
            continue;
        const json_value *v = json_get(json_get(pp[i], inner[i]), key);
        if (!v)
            v = json_get(pp[i], key);
        if (v)
            found = v;
    }
    return found;
}

static int load_opt(const char *dir, const char *name, json_value **out, gguf_error *err)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    *out = NULL;
    if (stat(path, &st) != 0)
        return 0;
    if (!(*out = json_load_file(path, err))) {
        gguf_error_prefix(err, "%s: ", name);
        return -1;
    }
    return 0;
}

/* The id of [IMG_BREAK], as LlavaVisionModel.get_token_id looks it up:
 * the first entry of tokenizer_config.json's added_tokens_decoder with that
 * content, else the first of tokenizer.json's added_tokens. */
static int break_token(const char *dir, int64_t *id, gguf_error *err)
{
    static const char *const files[2] = { "tokenizer_config.json", "tokenizer.json" };
    static const char tok[] = "[IMG_BREAK]";
    for (int f = 0; f < 2; f++) {
        json_value *v;
        if (load_opt(dir, files[f], &v, err))
            return -1;
        const json_value *list = json_get(v, f ? "added_tokens" : "added_tokens_decoder");
        bool found = false, ok = true;
        for (size_t i = 0; list && !found && i < list->n; i++) {
            const json_value *e = list->items[i];
            const char *content = json_str(json_get(e, "content"));
            if (!content || strcmp(content, tok))
                continue;
            found = true;
            if (f) {
                ok = list->type == JSON_ARRAY && json_int(json_get(e, "id"), id);
            } else {
                char *end;
                const char *key = list->type == JSON_OBJECT ? list->keys[i] : "";
                errno = 0;
                const long long x = strtoll(key, &end, 10);
                ok = *key && !*end && !errno;
                *id = x;
            }
        }
        json_free(v);
        if (found && (!ok || *id < 1 || *id > INT32_MAX))
            return gguf_error_set(err, "%s: %s's id is not a whole number from 1 to 2147483647 (its "
                                  "row of the text embedding is the image break)", files[f], tok);
        if (found)
            return 0;
    }
    return gguf_error_set(err, "neither tokenizer_config.json (added_tokens_decoder) nor "
                          "tokenizer.json (added_tokens) has the %s token, whose row of the text "
                          "embedding the projector needs", tok);
}

/* The hyperparameters of config.json and the processor files. */
static int read_config(mm_state *s, const char *dir, const json_value *cfg, gguf_error *err)
{
    const json_value *arch = json_get(cfg, "architectures");
    const char *cls = arch && arch->type == JSON_ARRAY && arch->n ? json_str(arch->items[0]) : NULL;
    const json_value *vc = json_get(cfg, "vision_config");
    if (!vc || vc->type != JSON_OBJECT)
        return gguf_error_set(err, "config.json: no vision_config: %s has no vision projector",
                              cls ? cls : "the model");
    for (size_t f = 0; cls && !s->fam && f < sizeof FAMILIES / sizeof *FAMILIES; f++)
        for (int c = 0; FAMILIES[f].cls[c]; c++)
            if (!strcmp(cls, FAMILIES[f].cls[c]))
                s->fam = &FAMILIES[f];
    if (!s->fam)
        return gguf_error_set(err, "--mmproj: %s's projector is not supported (supported: "
                              "Gemma3ForConditionalGeneration, Gemma4ForConditionalGeneration, "
                              "Mistral3ForConditionalGeneration, Qwen3_5ForConditionalGeneration, "
                              "Qwen3_5MoeForConditionalGeneration)",
                              cls ? cls : "an unnamed model");
    if (s->fam->pixtral) {
        const char *mt = json_str(json_get(vc, "model_type"));
        if (!mt || strcmp(mt, "pixtral"))
            return gguf_error_set(err, "config.json: vision_config.model_type is %s%s%s, not \"pixtral\" "
                                  "(the only %s tower converted)", mt ? "\"" : "", mt ? mt : "missing",
                                  mt ? "\"" : "", cls);
    }
    /* the text width: text_config's hidden_size over the top level's */
    const json_value *tc = json_get(cfg, "text_config");
    const json_value *hv = json_get(tc, "hidden_size");
    if (!hv)
        hv = json_get(cfg, "hidden_size");
    int64_t x;
    if (!hv || !json_int(hv, &x) || x < 1 || x > INT32_MAX)
        return gguf_error_set(err, "config.json: no text_config.hidden_size (a whole number from 1 to "
                              "2147483647): the projection width");
    s->hp.proj_dim = (uint64_t)x;
    static const char *const k_image[] = { "image_size", NULL }, *const k_patch[] = { "patch_size", NULL },
                             *const k_embd[] = { "hidden_size", "width", "vt_hidden_size", NULL },
                             *const k_ff[] = { "intermediate_size", "vt_intermediate_size", NULL },
                             *const k_head[] = { "num_attention_heads", "num_heads", "heads",
                                                 "vt_num_attention_heads", NULL };
    if (s->fam->gemma4) {
        s->hp.image_size = 224; /* Gemma4VisionAudioModel: unused, written as 224 */
    } else if (s->fam->qwen3vl && !json_get(vc, "image_size")) {
        /* Qwen3VLVisionModel: √num_position_embeddings (default 2304) patches a side */
        int64_t pos = 2304, patch = 16;
        const json_value *pv = json_get(vc, "num_position_embeddings"), *zv = json_get(vc, "patch_size");
        if ((pv && (!json_int(pv, &pos) || pos < 1 || pos > INT32_MAX)) ||
            (zv && (!json_int(zv, &patch) || patch < 1 || patch > 65536)))
            return gguf_error_set(err, "config.json: vision_config.num_position_embeddings or "
                                  "patch_size is not a whole number in range");
        const double side = sqrt((double)pos) * (double)patch;
        if (side < 1 || side > INT32_MAX)
            return gguf_error_set(err, "config.json: vision_config: image size out of range");
        s->hp.image_size = (uint64_t)side;
    } else if (vsize(vc, k_image, &s->hp.image_size, err)) {
        return -1;
    }
    if (vsize(vc, k_patch, &s->hp.patch_size, err) ||
        vsize(vc, k_embd, &s->hp.n_embd, err) || vsize(vc, k_ff, &s->hp.n_ff, err) ||
        vsize(vc, N_BLOCK_KEYS, &s->hp.n_block, err) || vsize(vc, k_head, &s->hp.n_head, err))
        return -1;
    if (s->hp.n_block > 4096)
        return gguf_error_set(err, "config.json: vision_config has %llu layers (at most 4096)",
                              (unsigned long long)s->hp.n_block);
    s->hp.projector_type = s->fam->projector;
    const json_value *ac = s->fam->gemma4 ? json_get(cfg, "audio_config") : NULL;
    if (ac && ac->type != JSON_OBJECT && ac->type != JSON_NULL)
        return gguf_error_set(err, "config.json: audio_config is not an object");
    if (ac && ac->type == JSON_OBJECT && ac->n) {
        /* Gemma4VisionAudioModel: the feed-forward width is 4 × hidden_size,
         * the mel bins input_feat_size (default 128) */
        static const char *const k_ah[] = { "hidden_size", NULL },
                                 *const k_an[] = { "num_attention_heads", NULL };
        const json_value *mel = json_get(ac, "input_feat_size");
        int64_t nm = 128;
        if (vsize(ac, k_ah, &s->hp.a_embd, err) || vsize(ac, N_BLOCK_KEYS, &s->hp.a_block, err) ||
            vsize(ac, k_an, &s->hp.a_head, err)) {
            gguf_error_prefix(err, "audio_config: ");
            return -1;
        }
        if (mel && (!json_int(mel, &nm) || nm < 1 || nm > INT32_MAX))
            return gguf_error_set(err, "config.json: audio_config.input_feat_size is not a whole number "
                                  "from 1 to 2147483647");
        if (s->hp.a_embd > INT32_MAX / 4 || s->hp.a_block > 4096)
            return gguf_error_set(err, "config.json: audio_config.hidden_size or num_hidden_layers "
                                  "out of range");
        s->hp.a_ff = 4 * s->hp.a_embd;
        s->hp.a_mel = (uint64_t)nm;
        s->hp.a_proj = s->hp.proj_dim;
        s->hp.audio_type = "gemma4a";
        s->audio = true;
    }
    /* modeling_pixtral.py hard-codes 1e-5 */
    s->eps = s->fam->pixtral ? 1e-5 : 1e-6;
    /* Qwen3VLVisionModel takes the text model's rms_norm_eps */
    const char *eps_key = s->fam->qwen3vl ? "rms_norm_eps" : "layer_norm_eps";
    const json_value *ev = json_get(s->fam->qwen3vl ? tc : vc, eps_key);
    if (ev && (!json_num(ev, &s->eps) || !(s->eps > 0) || s->eps > 1))
        return gguf_error_set(err, "config.json: %s.%s is not a number in (0, 1]",
                              s->fam->qwen3vl ? "text_config" : "vision_config", eps_key);
    /* Qwen3VLVisionModel: vision_config's; LlavaVisionModel: the top level's */
    const json_value *mv = s->fam->qwen3vl ? json_get(vc, "spatial_merge_size")
                         : s->fam->pixtral ? json_get(cfg, "spatial_merge_size") : NULL;
    int64_t merge = 0;
    if (mv && (!json_int(mv, &merge) || merge < 1 || merge > 65536))
        return gguf_error_set(err, "config.json: %sspatial_merge_size is not a whole number from 1 to "
                              "65536", s->fam->qwen3vl ? "vision_config." : "");
    s->hp.merge = (uint64_t)merge;
    s->act = "clip.use_gelu";
    if (s->fam->pixtral) { /* LlavaVisionModel looks the token up first */
        if (break_token(dir, &s->img_break, err))
            return -1;
        const char *act = json_str(json_get(vc, "hidden_act"));
        if (!act || (strcmp(act, "silu") && strcmp(act, "gelu")))
            return gguf_error_set(err, "config.json: vision_config.hidden_act is %s, not \"silu\" or "
                                  "\"gelu\"", act ? act : "missing");
        s->act = !strcmp(act, "silu") ? "clip.use_silu" : "clip.use_gelu";
    }
    const json_value *dv = s->fam->qwen3vl ? json_get(vc, "deepstack_visual_indexes") : NULL;
    if (dv && (dv->type != JSON_ARRAY || dv->n))
        return gguf_error_set(err, "config.json: vision_config.deepstack_visual_indexes: deepstack "
                              "mergers are not supported (an empty list is)");

    json_value *pp[2] = { NULL, NULL };
    int rc = 0;
    if (load_opt(dir, "preprocessor_config.json", &pp[0], err) ||
        load_opt(dir, "processor_config.json", &pp[1], err)) {
        rc = -1;
    } else if (!pp[0] && !pp[1]) {
        rc = gguf_error_set(err, "preprocessor_config.json: not found (image_mean, image_std)");
    } else {
        if (num_list(pp_get(pp, "image_mean"), "image_mean", s->mean, &s->n_mean, err) ||
            num_list(pp_get(pp, "image_std"), "image_std", s->std, &s->n_std, err))
            rc = -1;
        /* Gemma3VisionModel: the soft tokens' pooling, written when not 4 */
        int64_t seq = 256;
        if (s->fam->qwen3vl || s->fam->pixtral)
            seq = 0;
        const json_value *sv = seq ? pp_get(pp, "image_seq_length") : NULL;
        if (!rc && sv && (!json_int(sv, &seq) || seq < 1 || seq > INT32_MAX))
            rc = gguf_error_set(err, "preprocessor_config.json: image_seq_length is not a whole "
                                "number from 1 to 2147483647");
        if (!rc && seq) {
            const int64_t per_side = (int64_t)sqrt((double)seq);
            const int64_t f = (int64_t)(s->hp.image_size / s->hp.patch_size) / per_side;
            s->scale = f > 0 && f != 4 ? (uint32_t)f : 0;
        }
    }
    json_free(pp[0]);
    json_free(pp[1]);
    return rc;
}

static bool has_prefix(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strncmp(s, *list, strlen(*list)))
            return true;
    return false;
}

/* A tensor's name, "_weight" → ".weight", mapped by the family's rows:
 * 1 with the GGUF name (and its row), 0 for a tensor of the text model, -1
 * for one of the tower that has no name. */
static int map_name(const mm_family *fam, const char *hf, char *out, size_t cap, uint64_t n_block,
                    uint64_t n_block_audio, const mm_row **row)
{
    if (!has_prefix(hf, fam->tower))
        return 0;
    if (fam->ignore[0] && has_prefix(hf, fam->ignore))
        return 0;
    char name[512];
    size_t o = 0;
    for (const char *p = hf; *p && o + 1 < sizeof name;) {
        if (fam->gemma4 && !strncmp(p, ".linear.", 8)) {
            p += 7; /* Gemma4ClippableLinear's inner module */
        } else if (!strncmp(p, "_weight", 7)) {
            if (o + 7 >= sizeof name)
                return -1;
            memcpy(name + o, ".weight", 7);
            o += 7, p += 7;
        } else {
            name[o++] = *p++;
        }
    }
    name[o] = 0;
    static const char *const suffixes[] = { ".weight", ".bias", ".input_max", ".input_min",
                                            ".output_max", ".output_min", NULL };
    const char *suffix = "";
    size_t len = strlen(name);
    for (int k = 0; suffixes[k] && (k < 2 || fam->gemma4); k++) {
        const size_t sl = strlen(suffixes[k]);
        if (len > sl && !strcmp(name + len - sl, suffixes[k])) {
            suffix = suffixes[k], len -= sl;
            break;
        }
    }
    name[len] = 0;
    for (const mm_section *sec = fam->sections; sec->prefix; sec++) {
        const size_t pl = strlen(sec->prefix);
        if (strncmp(name, sec->prefix, pl))
            continue;
        const char *rest = name + pl;
        for (const mm_row *r = sec->fixed; r && r->from; r++)
            if (!strcmp(rest, r->from) && r->bare == !*suffix)
                return *row = r, snprintf(out, cap, "%s%s", r->to, suffix), 1;
        const size_t bl = sec->block_prefix ? strlen(sec->block_prefix) : 0;
        if (bl && !strncmp(rest, sec->block_prefix, bl)) {
            const char *num = rest + bl;
            char *end;
            unsigned long b = strtoul(num, &end, 10);
            if (!isdigit((unsigned char)num[0]) || *end != '.' ||
                b >= (sec->audio ? n_block_audio : n_block) || (num[0] == '0' && end != num + 1))
                return -1;
            for (const mm_row *r = sec->block; r && r->from; r++)
                if (!strcmp(end + 1, r->from) && r->bare == !*suffix)
                    return *row = r, snprintf(out, cap, "%s%lu.%s%s", sec->block_to ? sec->block_to : "v.blk.",
                                              b, r->to, suffix), 1;
        }
        return -1;
    }
    return -1;
}

static int cmp_st_name(const void *a, const void *b)
{
    return strcmp(((const st_tensor *)a)->name, ((const st_tensor *)b)->name);
}

static const char *suffix_of(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot ? dot : "";
}

static size_t dt_size(int dt) { return dt == SRC_F32 ? 4 : 2; }

static float dt_get(int dt, const uint8_t *p)
{
    if (dt == SRC_F32) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, p, 2);
    return dt == SRC_F16 ? gguf_f16_to_f32(h) : gguf_bf16_to_f32(h);
}

static void dt_put(int dt, uint8_t *p, float f)
{
    if (dt == SRC_F32) {
        memcpy(p, &f, 4);
        return;
    }
    const uint16_t h = dt == SRC_F16 ? gguf_f32_to_f16(f) : gguf_f32_to_bf16(f);
    memcpy(p, &h, 2);
}

/* A tensor whose layout or values change (MM_OP_*), made in memory in its
 * own type (the towers' tensors these apply to are small): Gemma 4's patch
 * embedding [n, p·p·3] reshaped to [n, p, p, 3] and permuted to [n, 3, p, p];
 * a depthwise Conv1d [c, 1, k] as [c, k]; softplus(x) = log(1 + e^x) (x past
 * 20: x; e^x rounded to float before log1p, as torch's float kernel has it:
 * glibc's expf and log1pf matched its values on the test checkpoint, the
 * two libraries may differ by an ulp elsewhere), in F32 for F32 and BF16
 * sources (convert_hf_to_gguf.py widens BF16 before it), in F16 for F16. */
static int mm_reshape(src_model *m, const st_tensor *st, int dt, int op, const char *name,
                      const char *file, src_tensor **out, gguf_error *err)
{
    const size_t es = dt_size(dt);
    int64_t ne[4] = { 1, 1, 1, 1 }, n = 1;
    int nd = 0;
    for (int d = 0; d < st->n_dims; d++)
        n *= st->shape[d];
    if (op == MM_OP_PATCH) {
        int64_t p = 0;
        if (st->n_dims == 2)
            while ((p + 1) * (p + 1) * 3 <= st->shape[1])
                p++;
        if (st->n_dims != 2 || p < 1 || p * p * 3 != st->shape[1])
            return gguf_error_set(err, "%s: tensor '%s': not a patch embedding [width, patch × patch × 3]",
                                  file, st->name);
        ne[0] = p, ne[1] = p, ne[2] = 3, ne[3] = st->shape[0], nd = 4;
    } else if (op == MM_OP_DW) {
        if (st->n_dims != 3 || st->shape[1] != 1)
            return gguf_error_set(err, "%s: tensor '%s': not a depthwise Conv1d weight [channels, 1, "
                                  "kernel]", file, st->name);
        ne[0] = st->shape[2], ne[1] = st->shape[0], nd = 2;
    } else {
        if (st->n_dims > 4)
            return gguf_error_set(err, "%s: tensor '%s': %d dimensions (1 to 4)", file, st->name,
                                  st->n_dims);
        for (int d = st->n_dims - 1; d >= 0; d--)
            ne[nd++] = st->shape[d];
    }
    /* convert_hf_to_gguf.py takes a BF16 source to F32 before modify_tensors */
    const int out_dt = op == MM_OP_SOFTPLUS && dt == SRC_BF16 ? SRC_F32 : dt;
    uint8_t *buf = malloc((size_t)n * dt_size(out_dt) + 1);
    if (!buf)
        return gguf_error_set(err, "out of memory");
    const uint8_t *src = st->data;
    if (op == MM_OP_PATCH) {
        const int64_t p = ne[0], rows = ne[3];
        for (int64_t o = 0; o < rows; o++)
            for (int64_t c = 0; c < 3; c++)
                for (int64_t y = 0; y < p; y++)
                    for (int64_t x = 0; x < p; x++)
                        memcpy(buf + (size_t)(((o * 3 + c) * p + y) * p + x) * es,
                               src + (size_t)(o * p * p * 3 + (y * p + x) * 3 + c) * es, es);
    } else if (op == MM_OP_DW) {
        memcpy(buf, src, (size_t)n * es);
    } else {
        for (int64_t i = 0; i < n; i++) {
            const float x = dt_get(dt, src + (size_t)i * es);
            dt_put(out_dt, buf + (size_t)i * dt_size(out_dt), x > 20.0f ? x : log1pf(expf(x)));
        }
    }
    src_tensor *t = src_add_tensor(m, name, out_dt, nd, ne, buf);
    if (!t) {
        free(buf);
        return gguf_error_set(err, "out of memory");
    }
    t->owned = buf;
    t->from.file = file;
    t->from.name = st->name;
    *out = t;
    return 0;
}

/* A row's type rule and +1 on the tensor made of it. */
static void apply_row(src_tensor *t, const mm_row *row, const char *name)
{
    if (row->plus1 && !strcmp(suffix_of(name), ".weight"))
        t->add = 1.0f;
    if (row->force == MM_F16 || row->force == MM_F32)
        t->forced = true, t->force_type = row->force == MM_F16 ? GGUF_DT_F16 : GGUF_DT_F32;
    else if (row->force == MM_HALF && !strcmp(suffix_of(name), ".weight"))
        t->half_or_f32 = true;
}

/* Pixtral's v.token_embd.img_break: row img_break of the text embedding
 * (written F32, as every 1-D tensor). */
static int break_row(src_model *m, mm_state *s, const st_tensor *st, const char *file, gguf_error *err)
{
    const int dt = src_dtype_of(st->dtype);
    if (s->has_break)
        return gguf_error_set(err, "%s: tensor '%s': a second text embedding (embed_tokens.weight)", file,
                              st->name);
    if (dt < 0 || dt > SRC_BF16 || st->n_dims != 2)
        return gguf_error_set(err, "%s: tensor '%s': %s with %d dimensions (F32, F16 or BF16, 2 "
                              "dimensions)", file, st->name, st->dtype, st->n_dims);
    if (s->img_break >= st->shape[0])
        return gguf_error_set(err, "%s: tensor '%s': %lld rows, no row for [IMG_BREAK] (id %lld)", file,
                              st->name, (long long)st->shape[0], (long long)s->img_break);
    const int64_t ne[1] = { st->shape[1] };
    src_tensor *t = src_add_tensor(m, "v.token_embd.img_break", dt, 1, ne,
                                   st->data + (size_t)s->img_break * (size_t)st->shape[1] * dt_size(dt));
    if (!t)
        return gguf_error_set(err, "out of memory");
    t->mapped = st->mapped;
    t->from.file = file;
    t->from.name = st->name;
    s->has_break = true;
    return 0;
}

static int load_tensors(src_model *m, mm_state *s, const char *dir, gguf_error *err)
{
    char **parts = NULL;
    int n_parts = 0, rc = 0;
    if (hf_list_parts(dir, "model", ".safetensors", &parts, &n_parts, err))
        return -1;
    if (n_parts == 0)
        rc = gguf_error_set(err, "no weights (model*.safetensors)");
    if (!rc && (!(s->shards = calloc((size_t)n_parts, sizeof *s->shards)) ||
                !(s->shard_names = calloc((size_t)n_parts, sizeof *s->shard_names))))
        rc = gguf_error_set(err, "out of memory");
    for (int i = 0; i < n_parts && !rc; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, parts[i]);
        if (st_open(path, &s->shards[i], err)) {
            gguf_error_prefix(err, "%s: ", parts[i]);
            rc = -1;
            break;
        }
        s->shard_names[i] = parts[i];
        parts[i] = NULL;
        s->n_shards++;
        st_file *f = &s->shards[i];
        qsort(f->tensors, f->n, sizeof *f->tensors, cmp_st_name);
        for (size_t k = 0; k < f->n && !rc; k++) {
            const st_tensor *st = &f->tensors[k];
            char name[256];
            const mm_row *row = NULL;
            static const char *const audio_prefix[] = { "model.audio_tower.", "model.embed_audio.", NULL };
            if (s->fam->gemma4 && !s->audio && has_prefix(st->name, audio_prefix)) {
                rc = gguf_error_set(err, "%s: tensor '%s': an audio tower's tensor, but config.json has "
                                    "no audio_config", s->shard_names[i], st->name);
                break;
            }
            int r = map_name(s->fam, st->name, name, sizeof name, s->hp.n_block, s->hp.a_block, &row);
            if (r == 0 && s->fam->pixtral && strstr(st->name, "embed_tokens.weight")) {
                rc = break_row(m, s, st, s->shard_names[i], err);
                continue;
            }
            if (r == 0)
                continue;
            if (r < 0) {
                rc = gguf_error_set(err, "%s: tensor '%s': no projector tensor of that name",
                                    s->shard_names[i], st->name);
                break;
            }
            const int dt = src_dtype_of(st->dtype);
            const bool kt2 = row->kt2 && !strcmp(suffix_of(name), ".weight");
            if (row->op != MM_OP_NONE && strcmp(suffix_of(name), ".bias")) {
                src_tensor *t = NULL;
                if (dt < 0 || dt > SRC_BF16 || st->n_dims < 1) {
                    rc = gguf_error_set(err, "%s: tensor '%s': %s with %d dimensions (F32, F16 or BF16, "
                                        "1 or more dimensions)", s->shard_names[i], st->name, st->dtype,
                                        st->n_dims);
                    break;
                }
                if (!(rc = mm_reshape(m, st, dt, row->op, name, s->shard_names[i], &t, err)))
                    apply_row(t, row, name);
                continue;
            }
            /* Gemma 4's 0-d scalars (a clipped linear's bounds) are written as [1] */
            if (dt < 0 || st->n_dims < (s->fam->gemma4 ? 0 : 1) || st->n_dims > (kt2 ? 5 : 4) ||
                (kt2 && st->n_dims != 5)) {
                rc = gguf_error_set(err, "%s: tensor '%s': %s with %d dimensions (F32, F16 or BF16, "
                                    "%s)", s->shard_names[i], st->name, st->dtype, st->n_dims,
                                    kt2 ? "5 dimensions" : "1 to 4 dimensions");
                break;
            }
            if (kt2 && st->shape[2] != 2) {
                rc = gguf_error_set(err, "%s: tensor '%s': temporal patch size %lld (only 2 is "
                                    "supported)", s->shard_names[i], st->name, (long long)st->shape[2]);
                break;
            }
            /* the Conv3D [out, in, 2, h, w] as two Conv2D [out, in, h, w]:
             * rows of w, row e × h + f of the k-th from e × 2h + k × h + f */
            for (int half = 0; half < (kt2 ? 2 : 1) && !rc; half++) {
                int64_t ne[4];
                int nd = 0;
                for (int d = st->n_dims - 1; d >= 0; d--)
                    if (!(kt2 && d == 2))
                        ne[nd++] = st->shape[d];
                if (nd == 0)
                    ne[nd++] = 1;
                char nm[260];
                snprintf(nm, sizeof nm, "%s%s", name, half ? ".1" : "");
                src_tensor *t = src_add_tensor(m, nm, dt, nd, ne, st->data);
                if (!t) {
                    rc = gguf_error_set(err, "out of memory");
                    break;
                }
                t->mapped = st->mapped;
                t->from.file = s->shard_names[i];
                t->from.name = st->name;
                t->permute = row->rope;
                if (kt2)
                    t->ex_block = 2 * ne[1], t->ex_skip = half * ne[1];
                apply_row(t, row, name);
            }
        }
    }
    for (int i = 0; i < n_parts; i++)
        free(parts[i]);
    free(parts);
    if (!rc && m->n_tensors == 0)
        rc = gguf_error_set(err, "no vision_tower.* or multi_modal_projector.* tensors");
    if (!rc && s->fam->pixtral && !s->has_break)
        rc = gguf_error_set(err, "no text embedding (embed_tokens.weight): the projector needs its "
                            "[IMG_BREAK] row");
    /* LlamaModel.permute of the tower's q and k over its heads */
    m->n_head = m->n_head_kv = (uint32_t)s->hp.n_head;
    return rc;
}

/* The model as it would be written, against its own sizes. */
static int mm_validate(src_model *m, gguf_writer *w, gguf_error *err)
{
    (void)w;
    const mm_state *s = m->reader;
    clip_tensor *t = calloc((size_t)m->n_tensors + 1, sizeof *t);
    if (!t)
        return gguf_error_set(err, "out of memory");
    for (int i = 0; i < m->n_tensors; i++)
        t[i] = (clip_tensor){ m->tensors[i].name, m->tensors[i].n_dims, m->tensors[i].ne };
    int rc = clip_check(&s->hp, t, (size_t)m->n_tensors, err);
    free(t);
    return rc;
}

static int mm_write_metadata(src_model *m, gguf_writer *w, uint32_t file_type, gguf_error *err)
{
    const mm_state *s = m->reader;
    const clip_hparams *hp = &s->hp;
    int bad = gguf_writer_set_u32(w, "general.file_type", file_type);
    bad |= gguf_writer_set_bool(w, "clip.has_vision_encoder", true);
    for (size_t k = 0; k < clip_n_keys; k++)
        bad |= gguf_writer_set_u32(w, clip_keys[k].key,
                                   (uint32_t) * (const uint64_t *)((const char *)hp + clip_keys[k].off));
    bad |= gguf_writer_set_array(w, "clip.vision.image_mean", GGUF_VT_F32, s->mean, s->n_mean);
    bad |= gguf_writer_set_array(w, "clip.vision.image_std", GGUF_VT_F32, s->std, s->n_std);
    if (s->fam->gemma4) { /* Gemma4VisionAudioModel's order */
        if (s->audio) {
            bad |= gguf_writer_set_bool(w, "clip.has_audio_encoder", true);
            for (size_t k = 0; k + 1 < clip_n_audio_keys; k++)
                bad |= gguf_writer_set_u32(w, clip_audio_keys[k].key,
                                           (uint32_t) * (const uint64_t *)((const char *)hp +
                                                                           clip_audio_keys[k].off));
        }
        bad |= gguf_writer_set_str(w, "clip.vision.projector_type", hp->projector_type);
        bad |= gguf_writer_set_f32(w, "clip.vision.attention.layer_norm_epsilon", (float)s->eps);
        if (s->audio) {
            bad |= gguf_writer_set_str(w, "clip.audio.projector_type", hp->audio_type);
            bad |= gguf_writer_set_u32(w, "clip.audio.num_mel_bins", (uint32_t)hp->a_mel);
            bad |= gguf_writer_set_f32(w, "clip.audio.attention.layer_norm_epsilon", 1e-5f);
        }
        return bad ? gguf_error_set(err, "out of memory") : 0;
    }
    bad |= gguf_writer_set_str(w, "clip.projector_type", hp->projector_type);
    if (s->fam->qwen3vl) { /* Qwen3VLVisionModel's order */
        bad |= gguf_writer_set_bool(w, "clip.use_gelu", true);
        if (hp->merge)
            bad |= gguf_writer_set_u32(w, "clip.vision.spatial_merge_size", (uint32_t)hp->merge);
        bad |= gguf_writer_set_f32(w, "clip.vision.attention.layer_norm_epsilon", (float)s->eps);
        if (hp->n_block) { /* no deepstack layer (deepstack_visual_indexes is empty) */
            bool *ds = calloc(hp->n_block, sizeof *ds);
            bad |= !ds || gguf_writer_set_array(w, "clip.vision.is_deepstack_layers", GGUF_VT_BOOL,
                                                ds, hp->n_block);
            free(ds);
        }
        return bad ? gguf_error_set(err, "out of memory") : 0;
    }
    /* Gemma3VisionModel's and LlavaVisionModel's order */
    bad |= gguf_writer_set_f32(w, "clip.vision.attention.layer_norm_epsilon", (float)s->eps);
    bad |= gguf_writer_set_bool(w, s->act, true);
    if (s->scale)
        bad |= gguf_writer_set_u32(w, "clip.vision.projector.scale_factor", s->scale);
    if (hp->merge)
        bad |= gguf_writer_set_u32(w, "clip.vision.spatial_merge_size", (uint32_t)hp->merge);
    return bad ? gguf_error_set(err, "out of memory") : 0;
}

static int mm_verify(const src_model *m, gguf_error *err)
{
    const mm_state *s = m->reader;
    for (int i = 0; s && i < s->n_shards; i++)
        if (st_verify(&s->shards[i], err))
            return -1;
    return 0;
}

static void mm_close(src_model *m)
{
    mm_state *s = m->reader;
    if (!s)
        return;
    for (int i = 0; i < s->n_shards; i++) {
        st_close(&s->shards[i]);
        free(s->shard_names[i]);
    }
    free(s->shards);
    free(s->shard_names);
    free(s);
    m->reader = NULL;
}

int mmproj_open(const char *dir, src_model *m, gguf_error *err)
{
    memset(m, 0, sizeof *m);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return gguf_error_set(err, "--mmproj: not a Hugging Face model folder (a GGUF or a single "
                              "file has no vision tower to convert)");
    mm_state *s = calloc(1, sizeof *s);
    if (!s)
        return gguf_error_set(err, "out of memory");
    m->reader = s;
    m->path = dir;
    m->close = mm_close;
    m->verify = mm_verify;
    m->write_metadata = mm_write_metadata;
    m->validate = mm_validate;
    m->arch_name = "clip";
    m->general_type = "mmproj";
    json_value *cfg = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    int rc = 0;
    if (stat(path, &st) != 0)
        rc = gguf_error_set(err, "config.json: not found");
    else if (!(cfg = json_load_file(path, err)))
        rc = -1, gguf_error_prefix(err, "config.json: ");
    if (!rc && (read_config(s, dir, cfg, err) || load_tensors(m, s, dir, err)))
        rc = -1;
    json_free(cfg);
    if (!rc && !(m->name = hf_default_name(dir)))
        rc = gguf_error_set(err, "out of memory");
    if (rc)
        src_model_free(m);
    return rc;
}
