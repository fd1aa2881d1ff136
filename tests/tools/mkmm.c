/*
 * mkmm.c — a multimodal Hugging Face checkpoint made from a text-only one,
 * laid out as the released multimodal checkpoints of its family are.
 *
 *   mkmm FAMILY SRC OUT
 *
 * qwen35moe-experts: qwen35moe's, with each block's stacked experts saved one
 * tensor per expert and projection (mlp.experts.N.gate_proj.weight, ...), as
 * fine-tunes are: the same bytes, so the same GGUF.
 *
 * FAMILY is qwen35, qwen35moe, gemma4, gemma4-vision, gemma3, mistral3 or
 * mistral3-tokjson; SRC a folder with config.json,
 * model.safetensors, tokenizer.model and tokenizer_config.json (the
 * fixtures' qwen35-rand, qwen35moe-rand, gemma4-rand, gemma3-rand, mistral3-rand); OUT is created
 * (its parent must exist) and must not hold files of another run.
 *
 * What OUT holds:
 *   qwen35, qwen35moe   Qwen3_5ForConditionalGeneration /
 *                       Qwen3_5MoeForConditionalGeneration as Qwen3.5-0.8B and
 *                       Qwen3.6-35B-A3B are released: config.json with the
 *                       text model's keys under text_config (no
 *                       "architectures" there, partial_rotary_factor only
 *                       in rope_parameters), vision_config, the image,
 *                       video and vision start/end token ids and
 *                       tie_word_embeddings at the top level; SRC's
 *                       model.* tensors under model.language_model.,
 *                       lm_head.weight and mtp.* as they are, an MTP layer's
 *                       tensors (mtp.layers.0.*, per-expert in the MoE) and a
 *                       one-block vision tower (model.visual.patch_embed,
 *                       pos_embed, blocks.0.*, merger.*).
 *   gemma4              Gemma4ForConditionalGeneration as gemma-4 E2B and
 *                       26B-A4B are released: SRC's text_config kept, the top
 *                       level with eos_token_id [EOS, 106] (gguf-py's
 *                       SpecialVocab reads no eos from a list, nor looks past
 *                       it into text_config), the image/audio token ids,
 *                       vision_config and audio_config; a one-layer vision
 *                       tower with clipped linears (0-dimensional
 *                       input/output min/max tensors, F32),
 *                       model.embed_vision.embedding_projection, a
 *                       one-layer conformer audio tower (gemma4_audio) and
 *                       model.embed_audio.embedding_projection.
 *   gemma4-vision       the same without an audio tower, audio_config null
 *                       (as 26B-A4B and 31B are released); SRC gemma4-rand.
 *   gemma3              Gemma3ForConditionalGeneration as google/gemma-3-4b-it
 *                       is released: SRC's config.json under text_config,
 *                       the image token ids, mm_tokens_per_image and a
 *                       SigLIP vision_config (2 layers, width 32, 56-pixel
 *                       images, 14-pixel patches) at the top level,
 *                       preprocessor_config.json (image_seq_length 4);
 *                       SRC's model.* under language_model.model.*, the
 *                       vision_tower.vision_model.* tower and the
 *                       multi_modal_projector.* tensors first.
 *   mistral3            Mistral3ForConditionalGeneration as
 *                       mistralai/Mistral-Small-3.1-24B-Instruct-2503 is
 *                       released (HF layout): SRC's config.json with a full
 *                       Pixtral vision_config (3 blocks, width 32, 4-pixel
 *                       patches, hidden_act silu) and spatial_merge_size 2;
 *                       preprocessor_config.json and processor_config.json;
 *                       tokenizer_config.json with the released
 *                       added_tokens_decoder's first 20 ([IMG] 10,
 *                       [IMG_BREAK] 12, [IMG_END] 13); the tower
 *                       vision_tower.{patch_conv, ln_pre,
 *                       transformer.layers.N.*} and multi_modal_projector.{norm,
 *                       patch_merger.merging_layer, linear_1, linear_2} first
 *                       (SRC's stub tower dropped), SRC's language_model.*.
 *   mistral3-tokjson    the same with the image tokens in tokenizer.json's
 *                       added_tokens, none in tokenizer_config.json.
 * The tensors go into two shards with model.safetensors.index.json, each
 * shard's header in module order (not name order): the first shard holds
 * the text model's blocks before the middle one, the second the rest (for
 * Qwen 3.5 the vision tower comes first, as in transformers' state dict).
 * tokenizer.model and tokenizer_config.json are copied. Generated values
 * are BF16 from a fixed xorshift seed: the same bytes on every run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ggufkit/quants.h>

#define TOOL_NAME "mkmm"
#include "tool_util.h"

#include "json.h"

#define MAX_DIMS 5

typedef struct tensor {
    char          *name;
    char           dtype[8];
    int            n_dims;
    int64_t        dims[MAX_DIMS];
    const uint8_t *data; /* into the source file, or owned (gen) */
    uint8_t       *gen;
    size_t         bytes;
    int            shard; /* 0 or 1 */
} tensor;

static tensor *T;
static size_t  n_t, cap_t;




static tensor *push(const char *name)
{
    if (n_t == cap_t) {
        cap_t = cap_t ? 2 * cap_t : 256;
        tensor *nt = realloc(T, cap_t * sizeof *T);
        if (!nt)
            die("out of memory");
        T = nt;
    }
    tensor *t = &T[n_t++];
    memset(t, 0, sizeof *t);
    t->name = xstrdup(name);
    return t;
}

/* ---- generated tensors ---------------------------------------------------- */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static float randw(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((float)(rng >> 40) / (float)(1 << 24) - 0.5f) * 0.04f;
}

/* A generated tensor: BF16 weights, or one F32 value for a 0-d one (n = 0). */
static void gen(int shard, const char *name, int n, ...)
{
    va_list ap;
    tensor *t = push(name);
    size_t count = 1;
    va_start(ap, n);
    for (int d = 0; d < n; d++) {
        t->dims[d] = va_arg(ap, int64_t);
        count *= (size_t)t->dims[d];
    }
    va_end(ap);
    t->n_dims = n;
    t->shard = shard;
    if (n == 0) {
        strcpy(t->dtype, "F32");
        float v = 1.0f + randw();
        t->bytes = 4;
        t->gen = xmalloc(4);
        memcpy(t->gen, &v, 4);
    } else {
        strcpy(t->dtype, "BF16");
        t->bytes = 2 * count;
        t->gen = xmalloc(t->bytes);
        for (size_t i = 0; i < count; i++) {
            uint16_t h = gguf_f32_to_bf16(randw());
            memcpy(t->gen + 2 * i, &h, 2);
        }
    }
    t->data = t->gen;
}
#define I(x) ((int64_t)(x))

/* ---- the source checkpoint ------------------------------------------------ */

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "mkmm: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    if (fseek(fp, 0, SEEK_END) || ftell(fp) < 0)
        die("cannot size a source file");
    *len = (size_t)ftell(fp);
    rewind(fp);
    uint8_t *buf = xmalloc(*len);
    if (fread(buf, 1, *len, fp) != *len)
        die("short read");
    fclose(fp);
    return buf;
}

static json_value *load_json(const char *path)
{
    gguf_error err = { .code = 0 };
    json_value *v = json_load_file(path, &err);
    if (!v) {
        fprintf(stderr, "mkmm: %s: %s\n", path, err.msg);
        exit(1);
    }
    return v;
}

/* The text model's tensors of SRC/model.safetensors in header order, named
 * as the multimodal checkpoint names them (rename: "model." becomes
 * "model.language_model." where the source has no language_model yet). */
static void read_text(const char *src, bool rename, uint8_t **file)
{
    char path[4096];
    size_t len;
    snprintf(path, sizeof path, "%s/model.safetensors", src);
    *file = read_file(path, &len);
    uint64_t hl;
    if (len < 8)
        die("model.safetensors: too short");
    memcpy(&hl, *file, 8);
    if (hl > len - 8)
        die("model.safetensors: bad header length");
    gguf_error err = { .code = 0 };
    json_value *h = json_parse((const char *)*file + 8, (size_t)hl, &err);
    if (!h || h->type != JSON_OBJECT)
        die("model.safetensors: bad header");
    const uint8_t *base = *file + 8 + hl;
    for (size_t i = 0; i < h->n; i++) {
        if (!strcmp(h->keys[i], "__metadata__"))
            continue;
        const json_value *e = h->items[i], *shape = json_get(e, "shape"),
                         *off = json_get(e, "data_offsets");
        const char *dt = json_str(json_get(e, "dtype"));
        int64_t a, b;
        if (!shape || shape->type != JSON_ARRAY || shape->n > MAX_DIMS || !dt || strlen(dt) > 7 ||
            !off || off->type != JSON_ARRAY || off->n != 2 || !json_int(off->items[0], &a) ||
            !json_int(off->items[1], &b) || a < 0 || b < a || (uint64_t)b > len - 8 - hl)
            die("model.safetensors: bad tensor entry");
        char name[512];
        if (rename && !strncmp(h->keys[i], "model.", 6))
            snprintf(name, sizeof name, "model.language_model.%s", h->keys[i] + 6);
        else
            snprintf(name, sizeof name, "%s", h->keys[i]);
        tensor *t = push(name);
        strcpy(t->dtype, dt);
        t->n_dims = (int)shape->n;
        for (size_t d = 0; d < shape->n; d++)
            if (!json_int(shape->items[d], &t->dims[d]))
                die("model.safetensors: bad shape");
        t->data = base + a;
        t->bytes = (size_t)(b - a);
    }
    json_free(h);
}

/* qwen35moe-experts: the stacked experts of each block
 * (mlp.experts.gate_up_proj [E, 2F, D]: gate rows then up rows;
 * mlp.experts.down_proj [E, D, F]) as one tensor per expert and
 * projection, mlp.experts.N.{gate,up,down}_proj.weight, as fine-tunes are
 * saved: views of the same bytes, in the stacked tensors' place. */
static void unstack_experts(size_t first)
{
    tensor *old = T;
    size_t n_old = n_t;
    T = NULL, n_t = cap_t = 0;
    for (size_t i = 0; i < n_old; i++) {
        const tensor *o = &old[i];
        const size_t nl = strlen(o->name);
        const bool gu = i >= first && nl > 13 && !strcmp(o->name + nl - 13, ".gate_up_proj");
        const bool dn = i >= first && nl > 10 && !strcmp(o->name + nl - 10, ".down_proj") &&
                        strstr(o->name, ".experts.");
        if ((!gu && !dn) || o->n_dims != 3) {
            tensor *t = push(o->name);
            char *name = t->name;
            *t = *o;
            t->name = name;
            free(o->name);
            continue;
        }
        const int64_t E = o->dims[0], rows = o->dims[1], cols = o->dims[2];
        const size_t per = o->bytes / (size_t)E, half = per / 2;
        char base[512];
        snprintf(base, sizeof base, "%.*s", (int)(nl - (gu ? 12 : 9)), o->name); /* "...experts." */
        for (int64_t e = 0; e < E; e++)
            for (int part = 0; part < (gu ? 2 : 1); part++) {
                char name[600];
                snprintf(name, sizeof name, "%s%lld.%s_proj.weight", base, (long long)e,
                         !gu ? "down" : part ? "up" : "gate");
                tensor *t = push(name);
                strcpy(t->dtype, o->dtype);
                t->n_dims = 2;
                t->dims[0] = gu ? rows / 2 : rows;
                t->dims[1] = cols;
                t->data = o->data + (size_t)e * per + (gu ? (size_t)part * half : 0);
                t->bytes = gu ? half : per;
            }
        free(o->name);
    }
    free(old);
}

/* The first text block of the second shard: the middle one. */
static void split_text(int64_t layers)
{
    char mark[64];
    snprintf(mark, sizeof mark, ".layers.%lld.", (long long)(layers / 2));
    int shard = 0;
    for (size_t i = 0; i < n_t; i++) {
        if (strstr(T[i].name, mark) || !strncmp(T[i].name, "lm_head", 7) ||
            !strncmp(T[i].name, "mtp.", 4))
            shard = 1;
        T[i].shard = shard;
    }
}

/* split_text over the tensors from first on (the text model's, after the
 * towers generated before it). */
static void split_text_from(size_t first, int64_t layers)
{
    tensor *all = T;
    size_t n_all = n_t;
    T += first, n_t -= first;
    split_text(layers);
    T = all, n_t = n_all;
}

/* ---- JSON out ------------------------------------------------------------- */


static void indent(FILE *fp, int depth)
{
    fputc('\n', fp);
    for (int i = 0; i < depth; i++)
        fputs("  ", fp);
}

static void put_members(FILE *fp, const json_value *v, int depth, const char *const *skip, bool first);

/* v as JSON (numbers as written), members but those named in skip. */
static void put_value(FILE *fp, const json_value *v, int depth, const char *const *skip)
{
    switch (v->type) {
    case JSON_NULL: fputs("null", fp); break;
    case JSON_BOOL: fputs(v->b ? "true" : "false", fp); break;
    case JSON_NUMBER: fwrite(v->str, 1, v->len, fp); break;
    case JSON_STRING: json_put_str(fp, v->str, v->len); break;
    case JSON_ARRAY:
        fputc('[', fp);
        for (size_t i = 0; i < v->n; i++) {
            fputs(i ? ", " : "", fp);
            put_value(fp, v->items[i], depth + 1, NULL);
        }
        fputc(']', fp);
        break;
    case JSON_OBJECT:
        fputc('{', fp);
        put_members(fp, v, depth, skip, true);
        indent(fp, depth);
        fputc('}', fp);
        break;
    }
}

/* An object's members but those named in skip, each on its own line (the
 * first with no comma before it when first is set). */
static void put_members(FILE *fp, const json_value *v, int depth, const char *const *skip, bool first)
{
    for (size_t i = 0; i < v->n; i++) {
        bool skipped = false;
        for (const char *const *s = skip; s && *s; s++)
            skipped |= !strcmp(*s, v->keys[i]);
        if (skipped)
            continue;
        fputs(first ? "" : ",", fp);
        first = false;
        indent(fp, depth + 1);
        json_put_str(fp, v->keys[i], strlen(v->keys[i]));
        fputs(": ", fp);
        put_value(fp, v->items[i], depth + 1, NULL);
    }
}

/* ---- the families ------------------------------------------------------------ */

/* Qwen 3.5's vision tower (Qwen3VL's without deepstack): hidden 32, one
 * block, patches 4×4 over 2 frames, 2×2 merged into the text width. */
static void qwen35_vision(int64_t text_dim)
{
    const int64_t v = 32, ffn = 64, merged = v * 4;
    gen(0, "model.visual.patch_embed.proj.weight", 5, I(v), I(3), I(2), I(4), I(4));
    gen(0, "model.visual.patch_embed.proj.bias", 1, I(v));
    gen(0, "model.visual.pos_embed.weight", 2, I(16), I(v));
    gen(0, "model.visual.blocks.0.norm1.weight", 1, I(v));
    gen(0, "model.visual.blocks.0.norm1.bias", 1, I(v));
    gen(0, "model.visual.blocks.0.norm2.weight", 1, I(v));
    gen(0, "model.visual.blocks.0.norm2.bias", 1, I(v));
    gen(0, "model.visual.blocks.0.attn.qkv.weight", 2, I(3 * v), I(v));
    gen(0, "model.visual.blocks.0.attn.qkv.bias", 1, I(3 * v));
    gen(0, "model.visual.blocks.0.attn.proj.weight", 2, I(v), I(v));
    gen(0, "model.visual.blocks.0.attn.proj.bias", 1, I(v));
    gen(0, "model.visual.blocks.0.mlp.linear_fc1.weight", 2, I(ffn), I(v));
    gen(0, "model.visual.blocks.0.mlp.linear_fc1.bias", 1, I(ffn));
    gen(0, "model.visual.blocks.0.mlp.linear_fc2.weight", 2, I(v), I(ffn));
    gen(0, "model.visual.blocks.0.mlp.linear_fc2.bias", 1, I(v));
    gen(0, "model.visual.merger.norm.weight", 1, I(v));
    gen(0, "model.visual.merger.norm.bias", 1, I(v));
    gen(0, "model.visual.merger.linear_fc1.weight", 2, I(merged), I(merged));
    gen(0, "model.visual.merger.linear_fc1.bias", 1, I(merged));
    gen(0, "model.visual.merger.linear_fc2.weight", 2, I(text_dim), I(merged));
    gen(0, "model.visual.merger.linear_fc2.bias", 1, I(text_dim));
}

/* The MTP layer's tensors a release has beside mtp.fc and the mtp norms
 * (a few: the converter drops every mtp.* name). */
static void qwen35_mtp(int64_t dim, bool moe)
{
    gen(1, "mtp.layers.0.input_layernorm.weight", 1, I(dim));
    gen(1, "mtp.layers.0.post_attention_layernorm.weight", 1, I(dim));
    gen(1, "mtp.layers.0.self_attn.q_norm.weight", 1, I(32));
    if (moe) {
        gen(1, "mtp.layers.0.mlp.gate.weight", 2, I(4), I(dim));
        gen(1, "mtp.layers.0.mlp.experts.0.down_proj.weight", 2, I(dim), I(64));
        gen(1, "mtp.layers.0.mlp.shared_expert_gate.weight", 2, I(1), I(dim));
    } else {
        gen(1, "mtp.layers.0.mlp.down_proj.weight", 2, I(dim), I(64));
    }
}

static void qwen35_config(FILE *fp, const json_value *src, bool moe)
{
    /* a release's text_config: no class of its own, the rotary share only in
     * rope_parameters (Qwen3NextModel's default 0.25 applies) */
    static const char *const not_text[] = { "architectures", "partial_rotary_factor", NULL };
    const json_value *tie = json_get(src, "tie_word_embeddings");
    int64_t dim = 0;
    json_int(json_get(src, "hidden_size"), &dim);
    fprintf(fp, "{\n  \"architectures\": [\n    \"%s\"\n  ],\n  \"image_token_id\": 508,\n"
                "  \"model_type\": \"%s\",\n  \"text_config\": ",
            moe ? "Qwen3_5MoeForConditionalGeneration" : "Qwen3_5ForConditionalGeneration",
            moe ? "qwen3_5_moe" : "qwen3_5");
    put_value(fp, src, 1, not_text);
    fprintf(fp, ",\n  \"tie_word_embeddings\": %s,\n  \"transformers_version\": \"4.57.0.dev0\",\n"
                "  \"video_token_id\": 509,\n  \"vision_config\": {\n"
                "    \"deepstack_visual_indexes\": [],\n    \"depth\": 1,\n"
                "    \"hidden_act\": \"gelu_pytorch_tanh\",\n    \"hidden_size\": 32,\n"
                "    \"in_channels\": 3,\n    \"initializer_range\": 0.02,\n"
                "    \"intermediate_size\": 64,\n    \"model_type\": \"%s\",\n    \"num_heads\": 2,\n"
                "    \"num_position_embeddings\": 16,\n    \"out_hidden_size\": %lld,\n"
                "    \"patch_size\": 4,\n    \"spatial_merge_size\": 2,\n    \"temporal_patch_size\": 2\n"
                "  },\n  \"vision_end_token_id\": 506,\n  \"vision_start_token_id\": 505\n}\n",
            tie && tie->type == JSON_BOOL && tie->b ? "true" : "false", moe ? "qwen3_5_moe" : "qwen3_5",
            (long long)dim);
}

/* Gemma 4's audio tower (Gemma4AudioModel): the subsampling convolutions
 * (two 3x3 stride-2 Conv2d over the 128 mel bins, each with its norm, then
 * input_proj_linear from channels x 32 bins), one conformer layer (feed_forward1,
 * self_attn with relative_k_proj and per_dim_scale, lconv1d with its depthwise
 * Conv1d, feed_forward2, the norms around them) whose linears are clipped
 * (.linear.weight and 0-d input/output min/max), and output_proj to
 * output_proj_dims. Width 16, 2 heads, 4 channels, kernel 5. */
enum { A_W = 16, A_CH = 4, A_KERNEL = 5, A_OUT = 24, A_MEL = 128 };
static bool g4_audio = true; /* gemma4-vision: no audio tower, audio_config null */
static void gemma4_clipped(const char *base, int64_t out, int64_t in)
{
    static const char *const clip[] = { "input_max", "input_min", "output_max", "output_min" };
    char name[200];
    snprintf(name, sizeof name, "%s.linear.weight", base);
    gen(1, name, 2, I(out), I(in));
    for (int c = 0; c < 4; c++) {
        snprintf(name, sizeof name, "%s.%s", base, clip[c]);
        gen(1, name, 0);
    }
}

static void gemma4_audio(void)
{
    const char *l = "model.audio_tower.layers.0";
    char name[200];
    gen(1, "model.audio_tower.subsample_conv_projection.layer0.conv.weight", 4, I(A_CH), I(1), I(3), I(3));
    gen(1, "model.audio_tower.subsample_conv_projection.layer0.norm.weight", 1, I(A_CH));
    gen(1, "model.audio_tower.subsample_conv_projection.layer1.conv.weight", 4, I(A_CH), I(A_CH), I(3), I(3));
    gen(1, "model.audio_tower.subsample_conv_projection.layer1.norm.weight", 1, I(A_CH));
    gen(1, "model.audio_tower.subsample_conv_projection.input_proj_linear.weight", 2, I(A_W),
        I(A_CH * A_MEL / 4));
    for (int f = 1; f <= 2; f++) {
        snprintf(name, sizeof name, "%s.feed_forward%d.pre_layer_norm.weight", l, f);
        gen(1, name, 1, I(A_W));
        snprintf(name, sizeof name, "%s.feed_forward%d.ffw_layer_1", l, f);
        gemma4_clipped(name, 4 * A_W, A_W);
        snprintf(name, sizeof name, "%s.feed_forward%d.ffw_layer_2", l, f);
        gemma4_clipped(name, A_W, 4 * A_W);
        snprintf(name, sizeof name, "%s.feed_forward%d.post_layer_norm.weight", l, f);
        gen(1, name, 1, I(A_W));
        if (f == 2)
            break;
        snprintf(name, sizeof name, "%s.norm_pre_attn.weight", l);
        gen(1, name, 1, I(A_W));
        static const char *const qkv[] = { "q_proj", "k_proj", "v_proj", "post" };
        for (int p = 0; p < 4; p++) {
            snprintf(name, sizeof name, "%s.self_attn.%s", l, qkv[p]);
            gemma4_clipped(name, A_W, A_W);
        }
        snprintf(name, sizeof name, "%s.self_attn.relative_k_proj.weight", l);
        gen(1, name, 2, I(A_W), I(A_W));
        snprintf(name, sizeof name, "%s.self_attn.per_dim_scale", l);
        gen(1, name, 1, I(A_W / 2));
        snprintf(name, sizeof name, "%s.norm_post_attn.weight", l);
        gen(1, name, 1, I(A_W));
        snprintf(name, sizeof name, "%s.lconv1d.pre_layer_norm.weight", l);
        gen(1, name, 1, I(A_W));
        snprintf(name, sizeof name, "%s.lconv1d.linear_start", l);
        gemma4_clipped(name, 2 * A_W, A_W);
        snprintf(name, sizeof name, "%s.lconv1d.depthwise_conv1d.weight", l);
        gen(1, name, 3, I(A_W), I(1), I(A_KERNEL));
        snprintf(name, sizeof name, "%s.lconv1d.conv_norm.weight", l);
        gen(1, name, 1, I(A_W));
        snprintf(name, sizeof name, "%s.lconv1d.linear_end", l);
        gemma4_clipped(name, A_W, A_W);
    }
    snprintf(name, sizeof name, "%s.norm_out.weight", l);
    gen(1, name, 1, I(A_W));
    gen(1, "model.audio_tower.output_proj.weight", 2, I(A_OUT), I(A_W));
    gen(1, "model.audio_tower.output_proj.bias", 1, I(A_OUT));
}

/* Gemma 4's vision tower (one encoder layer with clipped linears), its
 * embedder, the audio tower and its embedder. */
static void gemma4_towers(int64_t text_dim)
{
    const int64_t v = 32, ffn = 64;
    static const char *const proj[] = { "q_proj", "k_proj", "v_proj", "o_proj" };
    static const char *const clip[] = { "input_max", "input_min", "output_max", "output_min" };
    char name[160];
    gen(1, "model.vision_tower.patch_embedder.input_proj.weight", 2, I(v), I(3 * 4 * 4));
    gen(1, "model.vision_tower.patch_embedder.position_embedding_table", 3, I(2), I(16), I(v));
    gen(1, "model.vision_tower.encoder.layers.0.input_layernorm.weight", 1, I(v));
    for (int p = 0; p < 4; p++) {
        snprintf(name, sizeof name, "model.vision_tower.encoder.layers.0.self_attn.%s.linear.weight",
                 proj[p]);
        gen(1, name, 2, I(v), I(v));
        for (int c = 0; c < 4; c++) {
            snprintf(name, sizeof name, "model.vision_tower.encoder.layers.0.self_attn.%s.%s", proj[p],
                     clip[c]);
            gen(1, name, 0);
        }
    }
    gen(1, "model.vision_tower.encoder.layers.0.self_attn.q_norm.weight", 1, I(16));
    gen(1, "model.vision_tower.encoder.layers.0.self_attn.k_norm.weight", 1, I(16));
    gen(1, "model.vision_tower.encoder.layers.0.post_attention_layernorm.weight", 1, I(v));
    gen(1, "model.vision_tower.encoder.layers.0.pre_feedforward_layernorm.weight", 1, I(v));
    gen(1, "model.vision_tower.encoder.layers.0.mlp.gate_proj.linear.weight", 2, I(ffn), I(v));
    gen(1, "model.vision_tower.encoder.layers.0.mlp.up_proj.linear.weight", 2, I(ffn), I(v));
    gen(1, "model.vision_tower.encoder.layers.0.mlp.down_proj.linear.weight", 2, I(v), I(ffn));
    gen(1, "model.vision_tower.encoder.layers.0.post_feedforward_layernorm.weight", 1, I(v));
    if (g4_audio)
        gemma4_audio();
    gen(1, "model.embed_vision.embedding_projection.weight", 2, I(text_dim), I(v));
    if (g4_audio)
        gen(1, "model.embed_audio.embedding_projection.weight", 2, I(text_dim), I(A_OUT));
}

static void gemma4_config(FILE *fp, const json_value *src)
{
    const json_value *text = json_get(src, "text_config");
    int64_t eos = 1;
    json_int(json_get(text, "eos_token_id"), &eos);
    fputs("{\n  \"architectures\": [\n    \"Gemma4ForConditionalGeneration\"\n  ],\n", fp);
    if (!g4_audio)
        fputs("  \"audio_config\": null,\n", fp);
    else
        fputs("  \"audio_config\": {\n    \"attention_chunk_size\": 12,\n"
                "    \"attention_context_left\": 13,\n    \"attention_context_right\": 0,\n"
                "    \"attention_logit_cap\": 50.0,\n    \"conv_kernel_size\": 5,\n"
                "    \"hidden_act\": \"silu\",\n    \"hidden_size\": 16,\n"
                "    \"model_type\": \"gemma4_audio\",\n"
                "    \"num_attention_heads\": 2,\n    \"num_hidden_layers\": 1,\n"
                "    \"output_proj_dims\": 24,\n    \"residual_weight\": 0.5,\n"
                "    \"rms_norm_eps\": 1e-06,\n    \"subsampling_conv_channels\": [\n      4,\n      4\n    ],\n"
                "    \"use_clipped_linears\": true\n  },\n", fp);
    fprintf(fp, "  \"audio_token_id\": 501,\n  \"boa_token_id\": 502,\n  \"boi_token_id\": 503,\n"
                "  \"dtype\": \"bfloat16\",\n  \"eoa_token_id\": 504,\n  \"eoa_token_index\": 504,\n"
                "  \"eoi_token_id\": 505,\n  \"eos_token_id\": [\n    %lld,\n    106\n  ],\n"
                "  \"image_token_id\": 506,\n  \"initializer_range\": 0.02,\n"
                "  \"model_type\": \"gemma4\",\n  \"text_config\": ",
            (long long)eos);
    put_value(fp, text, 1, NULL);
    fputs(",\n  \"tie_word_embeddings\": true,\n  \"transformers_version\": \"5.5.0.dev0\",\n"
          "  \"video_token_id\": 507,\n  \"vision_config\": {\n    \"attention_bias\": false,\n"
          "    \"head_dim\": 16,\n    \"hidden_activation\": \"gelu_pytorch_tanh\",\n"
          "    \"hidden_size\": 32,\n    \"intermediate_size\": 64,\n"
          "    \"model_type\": \"gemma4_vision\",\n    \"num_attention_heads\": 2,\n"
          "    \"num_hidden_layers\": 1,\n    \"num_key_value_heads\": 2,\n    \"patch_size\": 4,\n"
          "    \"pooling_kernel_size\": 2,\n    \"position_embedding_size\": 16,\n"
          "    \"rms_norm_eps\": 1e-06,\n    \"rope_parameters\": {\n      \"rope_theta\": 100.0,\n"
          "      \"rope_type\": \"default\"\n    },\n    \"standardize\": false,\n"
          "    \"use_clipped_linears\": true\n  },\n  \"vision_soft_tokens_per_image\": 280\n}\n",
          fp);
}

/* Gemma 3's SigLIP vision tower (two encoder layers, hidden 32, 56-pixel
 * images in 14-pixel patches: 16 positions) and its projector, as
 * google/gemma-3-4b-it names them. */
static void gemma3_vision(int64_t text_dim)
{
    const int64_t v = 32, ffn = 64;
    static const char *const proj[] = { "q_proj", "k_proj", "v_proj", "out_proj" };
    static const char *const norms[] = { "layer_norm1", "layer_norm2" };
    char name[160];
    gen(0, "vision_tower.vision_model.embeddings.patch_embedding.weight", 4, I(v), I(3), I(14), I(14));
    gen(0, "vision_tower.vision_model.embeddings.patch_embedding.bias", 1, I(v));
    gen(0, "vision_tower.vision_model.embeddings.position_embedding.weight", 2, I(16), I(v));
    for (int l = 0; l < 2; l++) {
        for (int k = 0; k < 4; k++)
            for (int b = 0; b < 2; b++) {
                snprintf(name, sizeof name, "vision_tower.vision_model.encoder.layers.%d.self_attn.%s.%s", l,
                         proj[k], b ? "bias" : "weight");
                if (b)
                    gen(0, name, 1, I(v));
                else
                    gen(0, name, 2, I(v), I(v));
            }
        for (int k = 0; k < 2; k++)
            for (int b = 0; b < 2; b++) {
                snprintf(name, sizeof name, "vision_tower.vision_model.encoder.layers.%d.%s.%s", l,
                         norms[k], b ? "bias" : "weight");
                gen(0, name, 1, I(v));
            }
        snprintf(name, sizeof name, "vision_tower.vision_model.encoder.layers.%d.mlp.fc1.weight", l);
        gen(0, name, 2, I(ffn), I(v));
        snprintf(name, sizeof name, "vision_tower.vision_model.encoder.layers.%d.mlp.fc1.bias", l);
        gen(0, name, 1, I(ffn));
        snprintf(name, sizeof name, "vision_tower.vision_model.encoder.layers.%d.mlp.fc2.weight", l);
        gen(0, name, 2, I(v), I(ffn));
        snprintf(name, sizeof name, "vision_tower.vision_model.encoder.layers.%d.mlp.fc2.bias", l);
        gen(0, name, 1, I(v));
    }
    gen(0, "vision_tower.vision_model.post_layernorm.weight", 1, I(v));
    gen(0, "vision_tower.vision_model.post_layernorm.bias", 1, I(v));
    gen(0, "multi_modal_projector.mm_input_projection_weight", 2, I(v), I(text_dim));
    gen(0, "multi_modal_projector.mm_soft_emb_norm.weight", 1, I(v));
}

static void gemma3_config(FILE *fp, const json_value *src)
{
    static const char *const not_text[] = { "architectures", NULL };
    fputs("{\n  \"architectures\": [\n    \"Gemma3ForConditionalGeneration\"\n  ],\n"
          "  \"boi_token_index\": 505,\n  \"eoi_token_index\": 506,\n"
          "  \"eos_token_id\": [\n    1,\n    106\n  ],\n  \"image_token_index\": 507,\n"
          "  \"initializer_range\": 0.02,\n  \"mm_tokens_per_image\": 4,\n"
          "  \"model_type\": \"gemma3\",\n  \"text_config\": ", fp);
    put_value(fp, src, 1, not_text);
    fputs(",\n  \"torch_dtype\": \"bfloat16\",\n  \"transformers_version\": \"4.50.0.dev0\",\n"
          "  \"vision_config\": {\n    \"hidden_size\": 32,\n    \"image_size\": 56,\n"
          "    \"intermediate_size\": 64,\n    \"layer_norm_eps\": 1e-06,\n"
          "    \"model_type\": \"siglip_vision_model\",\n    \"num_attention_heads\": 2,\n"
          "    \"num_hidden_layers\": 2,\n    \"patch_size\": 14,\n    \"vision_use_head\": false\n"
          "  }\n}\n", fp);
}

/* The image processor's file as the released checkpoints have it:
 * gemma-3-4b-it's preprocessor_config.json (image_seq_length 4 here: 2×2
 * soft tokens from the 4×4 patches, a pooling of 2), Qwen3.5's
 * preprocessor_config.json (the fixture's 4-pixel patches), gemma-4's
 * processor_config.json (its image_processor: no normalisation). */
static const char GEMMA3_PP[] =
    "{\n  \"do_convert_rgb\": null,\n  \"do_normalize\": true,\n"
    "  \"do_pan_and_scan\": null,\n  \"do_rescale\": true,\n  \"do_resize\": true,\n"
    "  \"image_mean\": [\n    0.5,\n    0.5,\n    0.5\n  ],\n"
    "  \"image_processor_type\": \"Gemma3ImageProcessor\",\n  \"image_seq_length\": 4,\n"
    "  \"image_std\": [\n    0.5,\n    0.5,\n    0.5\n  ],\n"
    "  \"processor_class\": \"Gemma3Processor\",\n  \"resample\": 2,\n"
    "  \"rescale_factor\": 0.00392156862745098,\n"
    "  \"size\": {\n    \"height\": 56,\n    \"width\": 56\n  }\n}\n";
static const char QWEN35_PP[] =
    "{\n  \"size\": {\n    \"longest_edge\": 16777216,\n    \"shortest_edge\": 65536\n  },\n"
    "  \"patch_size\": 4,\n  \"temporal_patch_size\": 2,\n  \"merge_size\": 2,\n"
    "  \"image_mean\": [\n    0.5,\n    0.5,\n    0.5\n  ],\n"
    "  \"image_std\": [\n    0.5,\n    0.5,\n    0.5\n  ],\n"
    "  \"processor_class\": \"Qwen3VLProcessor\",\n"
    "  \"image_processor_type\": \"Qwen2VLImageProcessorFast\"\n}\n";
static const char GEMMA4_PP[] =
    "{\n  \"image_processor\": {\n    \"do_normalize\": false,\n    \"do_rescale\": true,\n"
    "    \"image_mean\": [\n      0.0,\n      0.0,\n      0.0\n    ],\n"
    "    \"image_processor_type\": \"Gemma4ImageProcessor\",\n"
    "    \"image_std\": [\n      1.0,\n      1.0,\n      1.0\n    ],\n"
    "    \"patch_size\": 4,\n    \"rescale_factor\": 0.00392156862745098\n  },\n"
    "  \"processor_class\": \"Gemma4Processor\"\n}\n";

/* Mistral Small 3.1's Pixtral tower (Mistral3ForConditionalGeneration as
 * mistralai/Mistral-Small-3.1-24B-Instruct-2503 is released, the HF layout
 * of transformers 4.50): patch_conv without bias, ln_pre, RMS-normed
 * blocks with a gated feed-forward and no biases, then the projector's
 * norm, patch merger (2×2 patches into one) and two linears without
 * biases (multimodal_projector_bias false), in module order. Width 32,
 * 3 blocks of 2 heads, feed-forward 64, 4-pixel patches (three at least:
 * gguf-py maps multi_modal_projector.linear_N as mm.N only for N below the
 * tower's block count). */
enum { M3_W = 32, M3_FF = 64, M3_LAYERS = 3, M3_HEADS = 2, M3_PATCH = 4, M3_MERGE = 2 };
static void mistral3_vision(int64_t text_dim)
{
    static const char *const attn[] = { "k_proj", "v_proj", "q_proj", "o_proj" };
    char name[160];
    gen(0, "vision_tower.patch_conv.weight", 4, I(M3_W), I(3), I(M3_PATCH), I(M3_PATCH));
    gen(0, "vision_tower.ln_pre.weight", 1, I(M3_W));
    for (int l = 0; l < M3_LAYERS; l++) {
        const char *p = "vision_tower.transformer.layers";
        snprintf(name, sizeof name, "%s.%d.attention_norm.weight", p, l);
        gen(0, name, 1, I(M3_W));
        snprintf(name, sizeof name, "%s.%d.feed_forward.gate_proj.weight", p, l);
        gen(0, name, 2, I(M3_FF), I(M3_W));
        snprintf(name, sizeof name, "%s.%d.feed_forward.down_proj.weight", p, l);
        gen(0, name, 2, I(M3_W), I(M3_FF));
        snprintf(name, sizeof name, "%s.%d.feed_forward.up_proj.weight", p, l);
        gen(0, name, 2, I(M3_FF), I(M3_W));
        for (int k = 0; k < 4; k++) {
            snprintf(name, sizeof name, "%s.%d.attention.%s.weight", p, l, attn[k]);
            gen(0, name, 2, I(M3_W), I(M3_W));
        }
        snprintf(name, sizeof name, "%s.%d.ffn_norm.weight", p, l);
        gen(0, name, 1, I(M3_W));
    }
    gen(0, "multi_modal_projector.norm.weight", 1, I(M3_W));
    gen(0, "multi_modal_projector.patch_merger.merging_layer.weight", 2, I(M3_W),
        I(M3_W * M3_MERGE * M3_MERGE));
    gen(0, "multi_modal_projector.linear_1.weight", 2, I(text_dim), I(M3_W));
    gen(0, "multi_modal_projector.linear_2.weight", 2, I(text_dim), I(text_dim));
}

/* SRC's config.json (its text_config, token ids and projector keys kept)
 * with the released vision_config: a Pixtral tower with every field
 * Mistral-Small-3.1's has (hidden_act silu; no layer_norm_eps, which
 * modeling_pixtral.py hard-codes as 1e-5) and spatial_merge_size 2 at the
 * top level. */
static void mistral3_config(FILE *fp, const json_value *src)
{
    static const char *const not_here[] = { "vision_config", "spatial_merge_size", NULL };
    fputc('{', fp);
    put_members(fp, src, 0, not_here, true);
    fprintf(fp, ",\n  \"spatial_merge_size\": %d,\n  \"vision_config\": {\n"
                "    \"attention_dropout\": 0.0,\n    \"head_dim\": %d,\n    \"hidden_act\": \"silu\",\n"
                "    \"hidden_size\": %d,\n    \"image_size\": 64,\n    \"initializer_range\": 0.02,\n"
                "    \"intermediate_size\": %d,\n    \"model_type\": \"pixtral\",\n"
                "    \"num_attention_heads\": %d,\n    \"num_channels\": 3,\n"
                "    \"num_hidden_layers\": %d,\n    \"patch_size\": %d,\n    \"rope_theta\": 10000.0\n"
                "  }\n}\n",
            M3_MERGE, M3_W / M3_HEADS, M3_W, M3_FF, M3_HEADS, M3_LAYERS, M3_PATCH);
}

/* SRC's tokenizer_config.json with the released added_tokens_decoder's
 * first 20 special tokens ([IMG] 10, [IMG_BREAK] 12, [IMG_END] 13 among
 * them); tok_json: none there, the image tokens in a tokenizer.json's
 * added_tokens instead (the other place e21cdc11 looks for [IMG_BREAK]). */
static const char *const M3_SPECIAL[20] = {
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]",
    "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
};
static void mistral3_tokenizer(const char *src, const char *out, bool tok_json)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizer_config.json", src);
    json_value *tc = load_json(path);
    snprintf(path, sizeof path, "%s/tokenizer_config.json", out);
    FILE *fp = fopen(path, "w");
    if (!fp)
        die("cannot create tokenizer_config.json");
    fputc('{', fp);
    if (!tok_json) {
        fputs("\n  \"added_tokens_decoder\": {", fp);
        for (int i = 0; i < 20; i++)
            fprintf(fp, "%s\n    \"%d\": {\n      \"content\": \"%s\",\n      \"lstrip\": false,\n"
                        "      \"normalized\": false,\n      \"rstrip\": false,\n"
                        "      \"single_word\": false,\n      \"special\": true\n    }",
                    i ? "," : "", i, M3_SPECIAL[i]);
        fputs("\n  }", fp);
    }
    put_members(fp, tc, 0, NULL, tok_json);
    fputs("\n}\n", fp);
    if (ferror(fp) | fclose(fp))
        die("write error");
    json_free(tc);
    if (!tok_json)
        return;
    snprintf(path, sizeof path, "%s/tokenizer.json", out);
    if (!(fp = fopen(path, "w")))
        die("cannot create tokenizer.json");
    fputs("{\n  \"version\": \"1.0\",\n  \"added_tokens\": [", fp);
    for (int i = 10; i < 14; i++)
        fprintf(fp, "%s\n    {\n      \"id\": %d,\n      \"content\": \"%s\",\n      \"single_word\": false,\n"
                    "      \"lstrip\": false,\n      \"rstrip\": false,\n      \"normalized\": false,\n"
                    "      \"special\": true\n    }", i > 10 ? "," : "", i, M3_SPECIAL[i]);
    fputs("\n  ]\n}\n", fp);
    if (ferror(fp) | fclose(fp))
        die("write error");
}

/* Mistral-Small-3.1's image processor files, with the fixture's 4-pixel
 * patches: preprocessor_config.json (CLIP's mean and deviation) and
 * processor_config.json (the image tokens, spatial_merge_size). */
static const char MISTRAL3_PP[] =
    "{\n  \"crop_size\": null,\n  \"data_format\": \"channels_first\",\n"
    "  \"default_to_square\": true,\n  \"device\": null,\n  \"do_center_crop\": null,\n"
    "  \"do_convert_rgb\": true,\n  \"do_normalize\": true,\n  \"do_rescale\": true,\n"
    "  \"do_resize\": true,\n"
    "  \"image_mean\": [\n    0.48145466,\n    0.4578275,\n    0.40821073\n  ],\n"
    "  \"image_processor_type\": \"PixtralImageProcessorFast\",\n"
    "  \"image_std\": [\n    0.26862954,\n    0.26130258,\n    0.27577711\n  ],\n"
    "  \"input_data_format\": null,\n  \"patch_size\": {\n    \"height\": 4,\n    \"width\": 4\n  },\n"
    "  \"processor_class\": \"PixtralProcessor\",\n  \"resample\": 3,\n"
    "  \"rescale_factor\": 0.00392156862745098,\n  \"return_tensors\": null,\n"
    "  \"size\": {\n    \"longest_edge\": 64\n  }\n}\n";
static const char MISTRAL3_PROC[] =
    "{\n  \"image_break_token\": \"[IMG_BREAK]\",\n  \"image_end_token\": \"[IMG_END]\",\n"
    "  \"image_token\": \"[IMG]\",\n  \"patch_size\": 4,\n"
    "  \"processor_class\": \"PixtralProcessor\",\n  \"spatial_merge_size\": 2\n}\n";

static void put_file(const char *out, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out, name);
    FILE *fp = fopen(path, "w");
    if (!fp)
        die(name);
    fputs(text, fp);
    if (ferror(fp) | fclose(fp))
        die("write error");
}

/* ---- writing -------------------------------------------------------------- */

static const char *const SHARDS[2] = { "model-00001-of-00002.safetensors",
                                       "model-00002-of-00002.safetensors" };

static void write_shard(const char *out, int k)
{
    size_t cap = 256 + n_t * 256, len = 0;
    char *hdr = xmalloc(cap);
    uint64_t off = 0;
    len += (size_t)snprintf(hdr + len, cap - len, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (size_t i = 0; i < n_t; i++) {
        const tensor *t = &T[i];
        if (t->shard != k)
            continue;
        len += (size_t)snprintf(hdr + len, cap - len, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", t->name,
                                t->dtype);
        for (int d = 0; d < t->n_dims; d++)
            len += (size_t)snprintf(hdr + len, cap - len, "%s%lld", d ? "," : "", (long long)t->dims[d]);
        len += (size_t)snprintf(hdr + len, cap - len, "],\"data_offsets\":[%llu,%llu]}",
                                (unsigned long long)off, (unsigned long long)(off + t->bytes));
        off += t->bytes;
        if (len + 512 > cap)
            die("header too long");
    }
    len += (size_t)snprintf(hdr + len, cap - len, "}");
    while (len % 8)
        hdr[len++] = ' ';
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out, SHARDS[k]);
    FILE *fp = fopen(path, "wb");
    if (!fp)
        die("cannot create a shard");
    uint64_t hl = len;
    fwrite(&hl, 8, 1, fp);
    fwrite(hdr, 1, len, fp);
    for (size_t i = 0; i < n_t; i++)
        if (T[i].shard == k)
            fwrite(T[i].data, 1, T[i].bytes, fp);
    if (ferror(fp) | fclose(fp))
        die("write error");
    free(hdr);
}

static void write_index(const char *out)
{
    char path[4096];
    uint64_t total = 0;
    for (size_t i = 0; i < n_t; i++)
        total += T[i].bytes;
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", out);
    FILE *fp = fopen(path, "w");
    if (!fp)
        die("cannot create the index");
    fprintf(fp, "{\n  \"metadata\": {\n    \"total_size\": %llu\n  },\n  \"weight_map\": {",
            (unsigned long long)total);
    for (size_t i = 0; i < n_t; i++)
        fprintf(fp, "%s\n    \"%s\": \"%s\"", i ? "," : "", T[i].name, SHARDS[T[i].shard]);
    fputs("\n  }\n}\n", fp);
    if (ferror(fp) | fclose(fp))
        die("write error");
}

static void copy_file(const char *src, const char *out, const char *name)
{
    char path[4096];
    size_t len;
    snprintf(path, sizeof path, "%s/%s", src, name);
    uint8_t *buf = read_file(path, &len);
    snprintf(path, sizeof path, "%s/%s", out, name);
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(buf, 1, len, fp) != len || fclose(fp))
        die("cannot copy a tokenizer file");
    free(buf);
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "qwen35") && strcmp(argv[1], "qwen35moe") &&
                      strcmp(argv[1], "qwen35moe-experts") && strcmp(argv[1], "gemma4") &&
                      strcmp(argv[1], "gemma4-vision") && strcmp(argv[1], "gemma3") &&
                      strcmp(argv[1], "mistral3") && strcmp(argv[1], "mistral3-tokjson"))) {
        fprintf(stderr, "usage: mkmm qwen35|qwen35moe|qwen35moe-experts|gemma4|gemma4-vision|gemma3|"
                        "mistral3|mistral3-tokjson SRC OUT\n");
        return 2;
    }
    const char *fam = argv[1], *src = argv[2], *out = argv[3];
    const bool per_expert = !strcmp(fam, "qwen35moe-experts");
    const bool gemma3 = !strcmp(fam, "gemma3"), mistral3 = !strncmp(fam, "mistral3", 8);
    g4_audio = strcmp(fam, "gemma4-vision") != 0;
    const bool gemma = !strncmp(fam, "gemma4", 6), moe = per_expert || !strcmp(fam, "qwen35moe");
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", src);
    json_value *cfg = load_json(path);
    const json_value *text = gemma || mistral3 ? json_get(cfg, "text_config") : cfg;
    int64_t dim, layers;
    if (!text || !json_int(json_get(text, "hidden_size"), &dim) ||
        !json_int(json_get(text, "num_hidden_layers"), &layers))
        die("config.json: no hidden_size or num_hidden_layers");
    if (mkdir(out, 0755) && errno != EEXIST) {
        fprintf(stderr, "mkmm: %s: %s\n", out, strerror(errno));
        return 1;
    }
    uint8_t *file;
    if (mistral3) {
        mistral3_vision(dim); /* the state dict's first modules */
        size_t first = n_t;
        read_text(src, false, &file);
        /* the fixture's stub tower gives way to the generated one */
        size_t o = first;
        for (size_t i = first; i < n_t; i++) {
            if (!strncmp(T[i].name, "vision_tower.", 13) || !strncmp(T[i].name, "multi_modal_projector.", 22))
                free(T[i].name);
            else
                T[o++] = T[i];
        }
        n_t = o;
        split_text_from(first, layers);
        put_file(out, "preprocessor_config.json", MISTRAL3_PP);
        put_file(out, "processor_config.json", MISTRAL3_PROC);
    } else if (gemma3) {
        gemma3_vision(dim); /* the state dict's first modules */
        size_t first = n_t;
        read_text(src, false, &file);
        for (size_t i = first; i < n_t; i++) { /* "model." under "language_model." */
            char *nn = xmalloc(strlen(T[i].name) + 16);
            sprintf(nn, "language_model.%s", T[i].name);
            free(T[i].name);
            T[i].name = nn;
        }
        split_text_from(first, layers);
        put_file(out, "preprocessor_config.json", GEMMA3_PP);
    } else if (gemma) {
        read_text(src, false, &file);
        split_text(layers);
        gemma4_towers(dim);
        put_file(out, "processor_config.json", GEMMA4_PP);
    } else {
        qwen35_vision(dim); /* the state dict's first module */
        size_t first = n_t;
        read_text(src, true, &file);
        if (per_expert)
            unstack_experts(first);
        split_text_from(first, layers);
        qwen35_mtp(dim, moe);
        put_file(out, "preprocessor_config.json", QWEN35_PP);
    }
    snprintf(path, sizeof path, "%s/config.json", out);
    FILE *fp = fopen(path, "w");
    if (!fp)
        die("cannot create config.json");
    if (mistral3)
        mistral3_config(fp, cfg);
    else if (gemma3)
        gemma3_config(fp, cfg);
    else if (gemma)
        gemma4_config(fp, cfg);
    else
        qwen35_config(fp, cfg, moe);
    if (ferror(fp) | fclose(fp))
        die("write error");
    write_shard(out, 0);
    write_shard(out, 1);
    write_index(out);
    copy_file(src, out, "tokenizer.model");
    if (mistral3)
        mistral3_tokenizer(src, out, !strcmp(fam, "mistral3-tokjson"));
    else
        copy_file(src, out, "tokenizer_config.json");
    for (size_t i = 0; i < n_t; i++) {
        free(T[i].name);
        free(T[i].gen);
    }
    free(T);
    free(file);
    json_free(cfg);
    return 0;
}
