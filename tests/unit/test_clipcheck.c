/*
 * test_clipcheck.c — a projector's clip.vision.* / clip.audio.* sizes
 * against its tensors (common/clipcheck.h): Gemma 3's and Gemma 4's
 * (vision and audio) full tensor sets pass; each size or shape out of line
 * is named.
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

static void add(set *s, const char *name, int n_dims, int64_t a, int64_t b, int64_t c, int64_t d)
{
    size_t i = s->n++;
    snprintf(s->names[i], sizeof s->names[i], "%s", name);
    s->ne[i][0] = a, s->ne[i][1] = b, s->ne[i][2] = c, s->ne[i][3] = d;
    s->t[i] = (clip_tensor){ s->names[i], n_dims, s->ne[i] };
}

/* Gemma 3's projector: width 32, ffn 64, 2 blocks, 56-pixel images in
 * 14-pixel patches, text width 128 (what gguf-convert --mmproj writes
 * for tests/tools/mkmm gemma3). */
static void gemma3(set *s)
{
    memset(s, 0, sizeof *s);
    s->hp = (clip_hparams){ .image_size = 56, .patch_size = 14, .n_embd = 32, .n_ff = 64, .n_block = 2,
                            .n_head = 2, .proj_dim = 128, .projector_type = "gemma3" };
    add(s, "mm.input_projection.weight", 2, 128, 32, 1, 1);
    add(s, "mm.soft_emb_norm.weight", 1, 32, 1, 1, 1);
    add(s, "v.patch_embd.bias", 1, 32, 1, 1, 1);
    add(s, "v.patch_embd.weight", 4, 14, 14, 3, 32);
    add(s, "v.position_embd.weight", 2, 32, 16, 1, 1);
    static const char *const sq[] = { "attn_q", "attn_k", "attn_v", "attn_out" };
    static const char *const ln[] = { "ln1", "ln2" };
    char name[64];
    for (int b = 0; b < 2; b++) {
        for (int k = 0; k < 4; k++) {
            snprintf(name, sizeof name, "v.blk.%d.%s.weight", b, sq[k]);
            add(s, name, 2, 32, 32, 1, 1);
            snprintf(name, sizeof name, "v.blk.%d.%s.bias", b, sq[k]);
            add(s, name, 1, 32, 1, 1, 1);
        }
        for (int k = 0; k < 2; k++) {
            snprintf(name, sizeof name, "v.blk.%d.%s.weight", b, ln[k]);
            add(s, name, 1, 32, 1, 1, 1);
            snprintf(name, sizeof name, "v.blk.%d.%s.bias", b, ln[k]);
            add(s, name, 1, 32, 1, 1, 1);
        }
        snprintf(name, sizeof name, "v.blk.%d.ffn_up.weight", b);
        add(s, name, 2, 32, 64, 1, 1);
        snprintf(name, sizeof name, "v.blk.%d.ffn_up.bias", b);
        add(s, name, 1, 64, 1, 1, 1);
        snprintf(name, sizeof name, "v.blk.%d.ffn_down.weight", b);
        add(s, name, 2, 64, 32, 1, 1);
        snprintf(name, sizeof name, "v.blk.%d.ffn_down.bias", b);
        add(s, name, 1, 32, 1, 1, 1);
    }
    add(s, "v.post_ln.weight", 1, 32, 1, 1, 1);
    add(s, "v.post_ln.bias", 1, 32, 1, 1, 1);
}

/* Gemma 4's vision and audio projector as gguf-convert --mmproj writes it
 * for tests/tools/mkmm gemma4 (and e21cdc11 alike): vision width 32, ffn 64,
 * one block, 2 heads of 16, 4-pixel patches, a 16 × 2 position table; audio
 * width 16, ffn 64, one block, 2 heads, 4 convolution channels, output 24;
 * text width 128. Clipped linears have their four bounds. */
static void clipped(set *s, const char *base, int64_t a, int64_t b)
{
    static const char *const bounds[] = { "input_max", "input_min", "output_max", "output_min" };
    char name[64];
    snprintf(name, sizeof name, "%s.weight", base);
    add(s, name, 2, a, b, 1, 1);
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "%s.%s", base, bounds[k]);
        add(s, name, 1, 1, 1, 1, 1);
    }
}

static void gemma4(set *s)
{
    memset(s, 0, sizeof *s);
    s->hp = (clip_hparams){ .image_size = 224, .patch_size = 4, .n_embd = 32, .n_ff = 64, .n_block = 1,
                            .n_head = 2, .proj_dim = 128, .projector_type = "gemma4v", .a_embd = 16,
                            .a_ff = 64, .a_block = 1, .a_head = 2, .a_proj = 128, .a_mel = 128,
                            .audio_type = "gemma4a" };
    add(s, "v.patch_embd.weight", 4, 4, 4, 3, 32);
    add(s, "v.position_embd.weight", 3, 32, 16, 2, 1);
    add(s, "v.blk.0.ln1.weight", 1, 32, 1, 1, 1);
    static const char *const vq[] = { "attn_q", "attn_k", "attn_v", "attn_out" };
    char name[64];
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "v.blk.0.%s", vq[k]);
        clipped(s, name, 32, 32);
    }
    add(s, "v.blk.0.attn_q_norm.weight", 1, 16, 1, 1, 1);
    add(s, "v.blk.0.attn_k_norm.weight", 1, 16, 1, 1, 1);
    add(s, "v.blk.0.attn_post_norm.weight", 1, 32, 1, 1, 1);
    add(s, "v.blk.0.ln2.weight", 1, 32, 1, 1, 1);
    add(s, "v.blk.0.ffn_gate.weight", 2, 32, 64, 1, 1);
    add(s, "v.blk.0.ffn_up.weight", 2, 32, 64, 1, 1);
    add(s, "v.blk.0.ffn_down.weight", 2, 64, 32, 1, 1);
    add(s, "v.blk.0.ffn_post_norm.weight", 1, 32, 1, 1, 1);
    add(s, "mm.input_projection.weight", 2, 32, 128, 1, 1);
    add(s, "a.conv1d.0.weight", 4, 3, 3, 1, 4);
    add(s, "a.conv1d.0.norm.weight", 1, 4, 1, 1, 1);
    add(s, "a.conv1d.1.weight", 4, 3, 3, 4, 4);
    add(s, "a.conv1d.1.norm.weight", 1, 4, 1, 1, 1);
    add(s, "a.input_projection.weight", 2, 128, 16, 1, 1);
    static const char *const norms[] = { "ffn_norm", "ffn_post_norm", "ffn_norm_1", "ffn_post_norm_1",
                                         "attn_pre_norm", "attn_post_norm", "conv_norm", "norm_conv", "ln2" };
    for (int k = 0; k < 9; k++) {
        snprintf(name, sizeof name, "a.blk.0.%s.weight", norms[k]);
        add(s, name, 1, 16, 1, 1, 1);
    }
    clipped(s, "a.blk.0.ffn_up", 16, 64);
    clipped(s, "a.blk.0.ffn_down", 64, 16);
    clipped(s, "a.blk.0.ffn_up_1", 16, 64);
    clipped(s, "a.blk.0.ffn_down_1", 64, 16);
    static const char *const aq[] = { "attn_q", "attn_k", "attn_v", "attn_out", "conv_pw2" };
    for (int k = 0; k < 5; k++) {
        snprintf(name, sizeof name, "a.blk.0.%s", aq[k]);
        clipped(s, name, 16, 16);
    }
    clipped(s, "a.blk.0.conv_pw1", 16, 32);
    add(s, "a.blk.0.attn_k_rel.weight", 2, 16, 16, 1, 1);
    add(s, "a.blk.0.per_dim_scale.weight", 1, 8, 1, 1, 1);
    add(s, "a.blk.0.conv_dw.weight", 2, 5, 16, 1, 1);
    add(s, "a.pre_encode.out.weight", 2, 16, 24, 1, 1);
    add(s, "a.pre_encode.out.bias", 1, 24, 1, 1, 1);
    add(s, "mm.a.input_projection.weight", 2, 24, 128, 1, 1);
}

static int find(const set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->names[i], name))
            return (int)i;
    ck_abort_msg("no tensor %s", name);
    return -1;
}

START_TEST(test_good)
{
    static set s;
    gemma3(&s);
    gguf_error err = { 0 };
    ck_assert_uint_eq(s.n, 39);
    ck_assert_msg(clip_check(&s.hp, s.t, s.n, &err) == 0, "%s", err.msg);
    /* an unknown projector type: only the sizes and the block numbers */
    s.hp.projector_type = "mlp";
    s.n = 3;
    ck_assert_msg(clip_check(&s.hp, s.t, s.n, &err) == 0, "%s", err.msg);
    ck_assert(clip_projector_known("gemma3") && !clip_projector_known("mlp") && !clip_projector_known(NULL));
    ck_assert(clip_projector_known("gemma4v") && !clip_projector_known("gemma4a"));
    ck_assert(clip_audio_projector_known("gemma4a") && !clip_audio_projector_known("gemma4v"));
}
END_TEST

START_TEST(test_gemma4_good)
{
    static set s;
    gemma4(&s);
    gguf_error err = { 0 };
    ck_assert_uint_eq(s.n, 102);
    ck_assert_msg(clip_check(&s.hp, s.t, s.n, &err) == 0, "%s", err.msg);
    /* the audio encoder alone (no vision sizes), with its optional tensors gone */
    s.hp = (clip_hparams){ .no_vision = true, .a_embd = 16, .a_ff = 64, .a_block = 1, .a_head = 2,
                           .a_proj = 128, .a_mel = 128, .audio_type = "gemma4a" };
    size_t o = 0;
    for (size_t i = 0; i < s.n; i++)
        if (s.names[i][0] == 'a' && !strstr(s.names[i], "per_dim_scale") && !strstr(s.names[i], "pre_encode"))
            s.t[o++] = s.t[i];
    ck_assert_msg(clip_check(&s.hp, s.t, o, &err) == 0, "%s", err.msg);
}
END_TEST

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
static void g4_vision_type(set *s) { s->hp.projector_type = NULL; }
static void g4_dw(set *s) { s->ne[find(s, "a.blk.0.conv_dw.weight")][1] = 32; }

static const struct {
    void (*mutate)(set *);
    const char *want;
} bad4[] = {
    { g4_audio_width, "tensor 'a.input_projection.weight' has shape [128, 16]; clip.audio.* sizes say [*, 32]" },
    { g4_audio_heads, "clip.audio.embedding_length 16 is not a multiple of clip.audio.attention.head_count 3" },
    { g4_no_mel, "clip.audio.num_mel_bins is missing or 0" },
    { g4_audio_blocks, "clip.audio.block_count is missing or 0" },
    { g4_qnorm, "tensor 'v.blk.0.attn_q_norm.weight' has shape [32]; clip.vision.* sizes say [16]" },
    { g4_pos, "tensor 'v.position_embd.weight' has shape [32, 16, 3]; clip.vision.* sizes say [32, *, 2]" },
    { g4_bound, "tensor 'a.blk.0.attn_q.input_max' has shape [2]; a clipped linear's bound: sizes say [1]" },
    { g4_lone_bound, "tensor 'v.blk.0.attn_x.input_max' bounds a linear 'v.blk.0.attn_x.weight' that is missing" },
    { g4_channels, "tensor 'a.conv1d.1.weight' takes 8 channels; 'a.conv1d.0.weight' makes 4" },
    { g4_conv_norm, "tensor 'a.conv1d.0.norm.weight' has 5 values; its convolution makes 4 channels" },
    { g4_inp, "tensor 'a.input_projection.weight' takes 130 inputs, not a multiple of the 4 channels of "
              "'a.conv1d.1.weight'" },
    { g4_out, "tensor 'mm.a.input_projection.weight' takes 16 inputs; 'a.pre_encode.out.weight' makes 24" },
    { g4_missing, "projector 'gemma4a': tensor 'a.blk.0.conv_dw.weight' is missing" },
    { g4_audio_blk, "tensor 'a.blk.1.ln2.weight': block 1, but clip.audio.block_count is 1" },
    { g4_vision_type, "clip.projector_type is missing" },
    { g4_dw, "tensor 'a.blk.0.conv_dw.weight' has shape [5, 32]; clip.audio.* sizes say [*, 16]" },
};

START_TEST(test_gemma4_bad)
{
    static set s;
    gemma4(&s);
    bad4[_i].mutate(&s);
    gguf_error err = { 0 };
    ck_assert_int_eq(clip_check(&s.hp, s.t, s.n, &err), -1);
    ck_assert_msg(!strcmp(err.msg, bad4[_i].want), "'%s', not '%s'", err.msg, bad4[_i].want);
}
END_TEST

static void bad_ffn(set *s) { s->hp.n_ff = 48; }
static void bad_no_blocks(set *s) { s->hp.n_block = 0; }
static void bad_one_block(set *s) { s->hp.n_block = 1; }
static void bad_image(set *s) { s->hp.image_size = 50; }
static void bad_heads(set *s) { s->hp.n_head = 3; }
static void bad_type(set *s) { s->hp.projector_type = NULL; }
static void bad_proj(set *s) { s->ne[find(s, "mm.input_projection.weight")][0] = 64; }
static void bad_pos(set *s) { s->ne[find(s, "v.position_embd.weight")][1] = 15; }
static void bad_dims(set *s) { s->t[find(s, "v.patch_embd.weight")].n_dims = 3; }
static void bad_missing(set *s) { s->names[find(s, "v.blk.1.attn_v.bias")][0] = 'w'; }

static const struct {
    void (*mutate)(set *);
    const char *want;
} bad[] = {
    { bad_ffn, "tensor 'v.blk.0.ffn_up.weight' has shape [32, 64]; clip.vision.* sizes say [32, 48]" },
    { bad_no_blocks, "clip.vision.block_count is missing or 0" },
    { bad_one_block, "tensor 'v.blk.1.attn_q.weight': block 1, but clip.vision.block_count is 1" },
    { bad_image, "clip.vision.image_size 50 is not a multiple of clip.vision.patch_size 14" },
    { bad_heads, "clip.vision.embedding_length 32 is not a multiple of clip.vision.attention.head_count 3" },
    { bad_type, "clip.projector_type is missing" },
    { bad_proj, "tensor 'mm.input_projection.weight' has shape [64, 32]; clip.vision.* sizes say [128, 32]" },
    { bad_pos, "tensor 'v.position_embd.weight' has shape [32, 15]; clip.vision.* sizes say [32, 16]" },
    { bad_dims, "tensor 'v.patch_embd.weight' has shape [14, 14, 3]; clip.vision.* sizes say [14, 14, 3, 32]" },
    { bad_missing, "projector 'gemma3': tensor 'v.blk.1.attn_v.bias' is missing" },
};

START_TEST(test_bad)
{
    static set s;
    gemma3(&s);
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
    tcase_add_test(tc, test_good);
    tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, test_gemma4_good);
    tcase_add_loop_test(tc, test_gemma4_bad, 0, (int)(sizeof bad4 / sizeof *bad4));
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
