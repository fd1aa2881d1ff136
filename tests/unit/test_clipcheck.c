/*
 * test_clipcheck.c — a projector's clip.vision.* sizes against its tensors
 * (common/clipcheck.h): Gemma 3's full tensor set passes; each size or
 * shape out of line is named.
 */
#include <stdio.h>
#include <string.h>

#include "clipcheck.h"
#include "testutil.h"

#define MAXT 64

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
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
