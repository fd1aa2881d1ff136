/*
 * test_clipcheck.c — a projector's clip.vision.* / clip.audio.* sizes
 * against its tensors (common/clipcheck.h): Gemma 3's, Gemma 4's (vision
 * and audio) and Pixtral's (Mistral Small 3.1) full tensor sets pass; each
 * size or shape out of line is named.
 */
#include <stdio.h>
#include <string.h>

#include "clipcheck.h"
#include "testutil.h"

#define MAXT 128

typedef struct set {
    clip_hparams hp;
    clip_tensor  t[MAXT];
    char         names[MAXT][64];
    int64_t      ne[MAXT][4];
    size_t       n;
} set;

static void add(set *s, const char *name, int n_dims, const int64_t *ne)
{
    size_t i = s->n++;
    ck_assert_uint_lt(i, MAXT);
    snprintf(s->names[i], sizeof s->names[i], "%s", name);
    for (int d = 0; d < 4; d++)
        s->ne[i][d] = d < n_dims ? ne[d] : 1;
    s->t[i] = (clip_tensor){ s->names[i], n_dims, s->ne[i] };
}

/* A tensor of a projector: "%d" in the name for each block; with bias a
 * NAME.bias of its last dimension; clipped (Gemma 4's clipped linears) its
 * four one-value bounds NAME.input_max and the like. */
typedef struct spec {
    const char *name;
    int         n_dims;
    int64_t     ne[4];
    bool        bias, clipped;
} spec;

static void add_specs(set *s, const spec *sp, size_t n, int blocks)
{
    static const char *const bounds[] = { "input_max", "input_min", "output_max", "output_min" };
    static const int64_t one[1] = { 1 };
    for (size_t k = 0; k < n; k++)
        for (int b = 0; b < (strstr(sp[k].name, "%d") ? blocks : 1); b++) {
            char name[64], stem[64];
            snprintf(name, sizeof name, sp[k].name, b);
            add(s, name, sp[k].n_dims, sp[k].ne);
            snprintf(stem, sizeof stem, "%.*s", (int)(strlen(name) - strlen(".weight")), name);
            if (sp[k].bias) {
                snprintf(name, sizeof name, "%s.bias", stem);
                add(s, name, 1, &sp[k].ne[sp[k].n_dims - 1]);
            }
            for (int c = 0; sp[k].clipped && c < 4; c++) {
                snprintf(name, sizeof name, "%s.%s", stem, bounds[c]);
                add(s, name, 1, one);
            }
        }
}
#define ADD_SPECS(s, sp, blocks) add_specs(s, sp, sizeof sp / sizeof *sp, blocks)

/* Gemma 3's projector: width 32, ffn 64, 2 blocks, 56-pixel images in
 * 14-pixel patches, text width 128 (what gguf-convert --mmproj writes
 * for tests/tools/mkmm gemma3). */
static void gemma3(set *s)
{
    static const spec sp[] = {
        { "mm.input_projection.weight", 2, { 128, 32 }, false, false },
        { "mm.soft_emb_norm.weight", 1, { 32 }, false, false },
        { "v.patch_embd.weight", 4, { 14, 14, 3, 32 }, true, false },
        { "v.position_embd.weight", 2, { 32, 16 }, false, false },
        { "v.blk.%d.attn_q.weight", 2, { 32, 32 }, true, false },
        { "v.blk.%d.attn_k.weight", 2, { 32, 32 }, true, false },
        { "v.blk.%d.attn_v.weight", 2, { 32, 32 }, true, false },
        { "v.blk.%d.attn_out.weight", 2, { 32, 32 }, true, false },
        { "v.blk.%d.ln1.weight", 1, { 32 }, true, false },
        { "v.blk.%d.ln2.weight", 1, { 32 }, true, false },
        { "v.blk.%d.ffn_up.weight", 2, { 32, 64 }, true, false },
        { "v.blk.%d.ffn_down.weight", 2, { 64, 32 }, true, false },
        { "v.post_ln.weight", 1, { 32 }, true, false },
    };
    memset(s, 0, sizeof *s);
    s->hp = (clip_hparams){ .image_size = 56, .patch_size = 14, .n_embd = 32, .n_ff = 64, .n_block = 2,
                            .n_head = 2, .proj_dim = 128, .projector_type = "gemma3" };
    ADD_SPECS(s, sp, 2);
}

/* Gemma 4's vision and audio projector as gguf-convert --mmproj writes it
 * for tests/tools/mkmm gemma4 (and e21cdc11 alike): vision width 32, ffn 64,
 * one block, 2 heads of 16, 4-pixel patches, a 16 × 2 position table; audio
 * width 16, ffn 64, one block, 2 heads, 4 convolution channels, output 24;
 * text width 128. Clipped linears have their four bounds. */
static void gemma4(set *s)
{
    static const spec sp[] = {
        { "v.patch_embd.weight", 4, { 4, 4, 3, 32 }, false, false },
        { "v.position_embd.weight", 3, { 32, 16, 2 }, false, false },
        { "v.blk.%d.ln1.weight", 1, { 32 }, false, false },
        { "v.blk.%d.attn_q.weight", 2, { 32, 32 }, false, true },
        { "v.blk.%d.attn_k.weight", 2, { 32, 32 }, false, true },
        { "v.blk.%d.attn_v.weight", 2, { 32, 32 }, false, true },
        { "v.blk.%d.attn_out.weight", 2, { 32, 32 }, false, true },
        { "v.blk.%d.attn_q_norm.weight", 1, { 16 }, false, false },
        { "v.blk.%d.attn_k_norm.weight", 1, { 16 }, false, false },
        { "v.blk.%d.attn_post_norm.weight", 1, { 32 }, false, false },
        { "v.blk.%d.ln2.weight", 1, { 32 }, false, false },
        { "v.blk.%d.ffn_gate.weight", 2, { 32, 64 }, false, false },
        { "v.blk.%d.ffn_up.weight", 2, { 32, 64 }, false, false },
        { "v.blk.%d.ffn_down.weight", 2, { 64, 32 }, false, false },
        { "v.blk.%d.ffn_post_norm.weight", 1, { 32 }, false, false },
        { "mm.input_projection.weight", 2, { 32, 128 }, false, false },
        { "a.conv1d.0.weight", 4, { 3, 3, 1, 4 }, false, false },
        { "a.conv1d.0.norm.weight", 1, { 4 }, false, false },
        { "a.conv1d.1.weight", 4, { 3, 3, 4, 4 }, false, false },
        { "a.conv1d.1.norm.weight", 1, { 4 }, false, false },
        { "a.input_projection.weight", 2, { 128, 16 }, false, false },
        { "a.blk.%d.ffn_norm.weight", 1, { 16 }, false, false },
        { "a.blk.%d.ffn_post_norm.weight", 1, { 16 }, false, false },
        { "a.blk.%d.ffn_norm_1.weight", 1, { 16 }, false, false },
        { "a.blk.%d.ffn_post_norm_1.weight", 1, { 16 }, false, false },
        { "a.blk.%d.attn_pre_norm.weight", 1, { 16 }, false, false },
        { "a.blk.%d.attn_post_norm.weight", 1, { 16 }, false, false },
        { "a.blk.%d.conv_norm.weight", 1, { 16 }, false, false },
        { "a.blk.%d.norm_conv.weight", 1, { 16 }, false, false },
        { "a.blk.%d.ln2.weight", 1, { 16 }, false, false },
        { "a.blk.%d.ffn_up.weight", 2, { 16, 64 }, false, true },
        { "a.blk.%d.ffn_down.weight", 2, { 64, 16 }, false, true },
        { "a.blk.%d.ffn_up_1.weight", 2, { 16, 64 }, false, true },
        { "a.blk.%d.ffn_down_1.weight", 2, { 64, 16 }, false, true },
        { "a.blk.%d.attn_q.weight", 2, { 16, 16 }, false, true },
        { "a.blk.%d.attn_k.weight", 2, { 16, 16 }, false, true },
        { "a.blk.%d.attn_v.weight", 2, { 16, 16 }, false, true },
        { "a.blk.%d.attn_out.weight", 2, { 16, 16 }, false, true },
        { "a.blk.%d.conv_pw2.weight", 2, { 16, 16 }, false, true },
        { "a.blk.%d.conv_pw1.weight", 2, { 16, 32 }, false, true },
        { "a.blk.%d.attn_k_rel.weight", 2, { 16, 16 }, false, false },
        { "a.blk.%d.per_dim_scale.weight", 1, { 8 }, false, false },
        { "a.blk.%d.conv_dw.weight", 2, { 5, 16 }, false, false },
        { "a.pre_encode.out.weight", 2, { 16, 24 }, true, false },
        { "mm.a.input_projection.weight", 2, { 24, 128 }, false, false },
    };
    memset(s, 0, sizeof *s);
    s->hp = (clip_hparams){ .image_size = 224, .patch_size = 4, .n_embd = 32, .n_ff = 64, .n_block = 1,
                            .n_head = 2, .proj_dim = 128, .projector_type = "gemma4v", .a_embd = 16,
                            .a_ff = 64, .a_block = 1, .a_head = 2, .a_proj = 128, .a_mel = 128,
                            .audio_type = "gemma4a" };
    ADD_SPECS(s, sp, 1);
}

/* Pixtral's projector as gguf-convert --mmproj writes it for
 * tests/tools/mkmm mistral3 (and e21cdc11 alike): width 32, ffn 64, 3
 * blocks of 2 heads, 64-pixel images in 4-pixel patches, text width 128,
 * spatial_merge_size 2 (the patch merger 4 patches = 128 wide). */
static void pixtral(set *s)
{
    static const spec sp[] = {
        { "v.token_embd.img_break.weight", 1, { 128 }, false, false },
        { "mm.1.weight", 2, { 32, 128 }, false, false },
        { "mm.2.weight", 2, { 128, 128 }, false, false },
        { "mm.input_norm.weight", 1, { 32 }, false, false },
        { "mm.patch_merger.weight", 2, { 128, 32 }, false, false },
        { "v.pre_ln.weight", 1, { 32 }, false, false },
        { "v.patch_embd.weight", 4, { 4, 4, 3, 32 }, false, false },
        { "v.blk.%d.attn_k.weight", 2, { 32, 32 }, false, false },
        { "v.blk.%d.attn_out.weight", 2, { 32, 32 }, false, false },
        { "v.blk.%d.attn_q.weight", 2, { 32, 32 }, false, false },
        { "v.blk.%d.attn_v.weight", 2, { 32, 32 }, false, false },
        { "v.blk.%d.ln1.weight", 1, { 32 }, false, false },
        { "v.blk.%d.ffn_down.weight", 2, { 64, 32 }, false, false },
        { "v.blk.%d.ffn_gate.weight", 2, { 32, 64 }, false, false },
        { "v.blk.%d.ffn_up.weight", 2, { 32, 64 }, false, false },
        { "v.blk.%d.ln2.weight", 1, { 32 }, false, false },
    };
    memset(s, 0, sizeof *s);
    s->hp = (clip_hparams){ .image_size = 64, .patch_size = 4, .n_embd = 32, .n_ff = 64, .n_block = 3,
                            .n_head = 2, .proj_dim = 128, .merge = 2, .projector_type = "pixtral" };
    ADD_SPECS(s, sp, 3);
    /* the image break's tensor has a bare name */
    s->names[0][strlen("v.token_embd.img_break")] = 0;
}

static int find(const set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->names[i], name))
            return (int)i;
    ck_abort_msg("no tensor %s", name);
    return -1;
}

static const struct {
    void (*build)(set *);
    size_t n;
} good[] = { { gemma3, 39 }, { gemma4, 102 }, { pixtral, 34 } };

START_TEST(test_good)
{
    static set s;
    good[_i].build(&s);
    gguf_error err = { 0 };
    ck_assert_uint_eq(s.n, good[_i].n);
    ck_assert_msg(clip_check(&s.hp, s.t, s.n, &err) == 0, "%s", err.msg);
    ck_assert(clip_projector_known(s.hp.projector_type));
}
END_TEST

START_TEST(test_good_variants)
{
    static set s;
    gguf_error err = { 0 };
    /* an unknown projector type: only the sizes and the block numbers */
    gemma3(&s);
    s.hp.projector_type = "mlp";
    s.n = 3;
    ck_assert_msg(clip_check(&s.hp, s.t, s.n, &err) == 0, "%s", err.msg);
    ck_assert(!clip_projector_known("mlp") && !clip_projector_known(NULL));
    ck_assert(clip_projector_known("gemma4v") && !clip_projector_known("gemma4a"));
    ck_assert(clip_audio_projector_known("gemma4a") && !clip_audio_projector_known("gemma4v"));
    /* Gemma 4's audio encoder alone (no vision sizes), its optional tensors gone */
    gemma4(&s);
    s.hp = (clip_hparams){ .no_vision = true, .a_embd = 16, .a_ff = 64, .a_block = 1, .a_head = 2,
                           .a_proj = 128, .a_mel = 128, .audio_type = "gemma4a" };
    size_t o = 0;
    for (size_t i = 0; i < s.n; i++)
        if (s.names[i][0] == 'a' && !strstr(s.names[i], "per_dim_scale") && !strstr(s.names[i], "pre_encode"))
            s.t[o++] = s.t[i];
    ck_assert_msg(clip_check(&s.hp, s.t, o, &err) == 0, "%s", err.msg);
    /* Pixtral 12B's layout: no norm nor patch merger, no spatial_merge_size,
     * the linears' biases */
    pixtral(&s);
    s.hp.merge = 0;
    snprintf(s.names[find(&s, "mm.input_norm.weight")], 64, "mm.1.bias");
    snprintf(s.names[find(&s, "mm.patch_merger.weight")], 64, "mm.2.bias");
    s.ne[find(&s, "mm.1.bias")][0] = 128;
    s.t[find(&s, "mm.1.bias")].n_dims = 1;
    s.t[find(&s, "mm.2.bias")].n_dims = 1;
    ck_assert_msg(clip_check(&s.hp, s.t, s.n, &err) == 0, "%s", err.msg);
}
END_TEST

/* A fault: the set its builder makes, changed by mutate, fails with want. */
static void g3_ffn(set *s) { s->hp.n_ff = 48; }
static void g3_no_blocks(set *s) { s->hp.n_block = 0; }
static void g3_one_block(set *s) { s->hp.n_block = 1; }
static void g3_image(set *s) { s->hp.image_size = 50; }
static void g3_heads(set *s) { s->hp.n_head = 3; }
static void no_type(set *s) { s->hp.projector_type = NULL; }
static void g3_proj(set *s) { s->ne[find(s, "mm.input_projection.weight")][0] = 64; }
static void g3_pos(set *s) { s->ne[find(s, "v.position_embd.weight")][1] = 15; }
static void g3_dims(set *s) { s->t[find(s, "v.patch_embd.weight")].n_dims = 3; }
static void g3_missing(set *s) { s->names[find(s, "v.blk.1.attn_v.bias")][0] = 'w'; }
static void g4_audio_width(set *s) { s->hp.a_embd = 32; }
static void g4_audio_heads(set *s) { s->hp.a_head = 3; }
static void g4_no_mel(set *s) { s->hp.a_mel = 0; }
static void g4_audio_blocks(set *s) { s->hp.a_block = 0; }
static void g4_qnorm(set *s) { s->ne[find(s, "v.blk.0.attn_q_norm.weight")][0] = 32; }
static void g4_pos(set *s) { s->ne[find(s, "v.position_embd.weight")][2] = 3; }
static void g4_bound(set *s) { s->ne[find(s, "a.blk.0.attn_q.input_max")][0] = 2; }
static void g4_lone_bound(set *s)
{
    snprintf(s->names[find(s, "v.blk.0.attn_v.input_max")], 64, "v.blk.0.attn_x.input_max");
}
static void g4_channels(set *s) { s->ne[find(s, "a.conv1d.1.weight")][2] = 8; }
static void g4_conv_norm(set *s) { s->ne[find(s, "a.conv1d.0.norm.weight")][0] = 5; }
static void g4_inp(set *s) { s->ne[find(s, "a.input_projection.weight")][0] = 130; }
static void g4_out(set *s) { s->ne[find(s, "mm.a.input_projection.weight")][0] = 16; }
static void g4_missing(set *s) { s->names[find(s, "a.blk.0.conv_dw.weight")][0] = 'w'; }
static void g4_audio_blk(set *s) { s->names[find(s, "a.blk.0.ln2.weight")][6] = '1'; }
static void g4_dw(set *s) { s->ne[find(s, "a.blk.0.conv_dw.weight")][1] = 32; }
static void px_merge(set *s) { s->hp.merge = 3; }
static void px_no_break(set *s) { s->names[find(s, "v.token_embd.img_break")][0] = 'w'; }
static void px_break(set *s) { s->ne[find(s, "v.token_embd.img_break")][0] = 64; }
static void px_lone_merger(set *s) { s->names[find(s, "mm.input_norm.weight")][0] = 'w'; }
static void px_bias(set *s)
{
    const int i = find(s, "mm.input_norm.weight"); /* the norm made into a bias of the wrong size */
    snprintf(s->names[i], 64, "mm.1.bias");
    s->names[find(s, "mm.patch_merger.weight")][0] = 'w';
}
static void px_gate(set *s) { s->ne[find(s, "v.blk.2.ffn_gate.weight")][1] = 48; }
static void px_block(set *s) { s->names[find(s, "v.blk.0.ln1.weight")][6] = '3'; }
static void px_mm1(set *s) { s->ne[find(s, "mm.1.weight")][1] = 64; }

static const struct {
    void (*build)(set *), (*mutate)(set *);
    const char *want;
} bad[] = {
    { gemma3, g3_ffn, "tensor 'v.blk.0.ffn_up.weight' has shape [32, 64]; clip.vision.* sizes say [32, 48]" },
    { gemma3, g3_no_blocks, "clip.vision.block_count is missing or 0" },
    { gemma3, g3_one_block, "tensor 'v.blk.1.attn_q.weight': block 1, but clip.vision.block_count is 1" },
    { gemma3, g3_image, "clip.vision.image_size 50 is not a multiple of clip.vision.patch_size 14" },
    { gemma3, g3_heads, "clip.vision.embedding_length 32 is not a multiple of clip.vision.attention.head_count 3" },
    { gemma3, no_type, "clip.projector_type is missing" },
    { gemma3, g3_proj, "tensor 'mm.input_projection.weight' has shape [64, 32]; clip.vision.* sizes say [128, 32]" },
    { gemma3, g3_pos, "tensor 'v.position_embd.weight' has shape [32, 15]; clip.vision.* sizes say [32, 16]" },
    { gemma3, g3_dims, "tensor 'v.patch_embd.weight' has shape [14, 14, 3]; clip.vision.* sizes say [14, 14, 3, 32]" },
    { gemma3, g3_missing, "projector 'gemma3': tensor 'v.blk.1.attn_v.bias' is missing" },
    { gemma4, g4_audio_width, "tensor 'a.input_projection.weight' has shape [128, 16]; clip.audio.* sizes say [*, 32]" },
    { gemma4, g4_audio_heads, "clip.audio.embedding_length 16 is not a multiple of clip.audio.attention.head_count 3" },
    { gemma4, g4_no_mel, "clip.audio.num_mel_bins is missing or 0" },
    { gemma4, g4_audio_blocks, "clip.audio.block_count is missing or 0" },
    { gemma4, g4_qnorm, "tensor 'v.blk.0.attn_q_norm.weight' has shape [32]; clip.vision.* sizes say [16]" },
    { gemma4, g4_pos, "tensor 'v.position_embd.weight' has shape [32, 16, 3]; clip.vision.* sizes say [32, *, 2]" },
    { gemma4, g4_bound, "tensor 'a.blk.0.attn_q.input_max' has shape [2]; a clipped linear's bound: sizes say [1]" },
    { gemma4, g4_lone_bound, "tensor 'v.blk.0.attn_x.input_max' bounds a linear 'v.blk.0.attn_x.weight' that is missing" },
    { gemma4, g4_channels, "tensor 'a.conv1d.1.weight' takes 8 channels; 'a.conv1d.0.weight' makes 4" },
    { gemma4, g4_conv_norm, "tensor 'a.conv1d.0.norm.weight' has 5 values; its convolution makes 4 channels" },
    { gemma4, g4_inp, "tensor 'a.input_projection.weight' takes 130 inputs, not a multiple of the 4 channels of "
                      "'a.conv1d.1.weight'" },
    { gemma4, g4_out, "tensor 'mm.a.input_projection.weight' takes 16 inputs; 'a.pre_encode.out.weight' makes 24" },
    { gemma4, g4_missing, "projector 'gemma4a': tensor 'a.blk.0.conv_dw.weight' is missing" },
    { gemma4, g4_audio_blk, "tensor 'a.blk.1.ln2.weight': block 1, but clip.audio.block_count is 1" },
    { gemma4, no_type, "clip.projector_type is missing" },
    { gemma4, g4_dw, "tensor 'a.blk.0.conv_dw.weight' has shape [5, 32]; clip.audio.* sizes say [*, 16]" },
    { pixtral, px_merge, "tensor 'mm.patch_merger.weight' has shape [128, 32]; clip.vision.* sizes say [288, 32]" },
    { pixtral, px_no_break, "projector 'pixtral': tensor 'v.token_embd.img_break' is missing" },
    { pixtral, px_break, "tensor 'v.token_embd.img_break' has shape [64]; clip.vision.* sizes say [128]" },
    { pixtral, px_lone_merger, "projector 'pixtral': tensor 'mm.patch_merger.weight' needs 'mm.input_norm.weight', "
                               "which is missing" },
    { pixtral, px_bias, "tensor 'mm.1.bias' has shape [32]; clip.vision.* sizes say [128]" },
    { pixtral, px_gate, "tensor 'v.blk.2.ffn_gate.weight' has shape [32, 48]; clip.vision.* sizes say [32, 64]" },
    { pixtral, px_block, "tensor 'v.blk.3.ln1.weight': block 3, but clip.vision.block_count is 3" },
    { pixtral, px_mm1, "tensor 'mm.1.weight' has shape [32, 64]; clip.vision.* sizes say [32, 128]" },
};

START_TEST(test_bad)
{
    static set s;
    bad[_i].build(&s);
    bad[_i].mutate(&s);
    gguf_error err = { 0 };
    ck_assert_int_eq(clip_check(&s.hp, s.t, s.n, &err), -1);
    ck_assert_msg(!strcmp(err.msg, bad[_i].want), "'%s', not '%s'", err.msg, bad[_i].want);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("clipcheck");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_good, 0, (int)(sizeof good / sizeof *good));
    tcase_add_test(tc, test_good_variants);
    tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad / sizeof *bad));
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
