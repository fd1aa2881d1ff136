/*
 * clipcheck.c — a projector GGUF's sizes against its tensors (clipcheck.h).
 */
#include "clipcheck.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const clip_key clip_keys[] = {
    { "clip.vision.projection_dim", offsetof(clip_hparams, proj_dim) },
    { "clip.vision.image_size", offsetof(clip_hparams, image_size) },
    { "clip.vision.patch_size", offsetof(clip_hparams, patch_size) },
    { "clip.vision.embedding_length", offsetof(clip_hparams, n_embd) },
    { "clip.vision.feed_forward_length", offsetof(clip_hparams, n_ff) },
    { "clip.vision.block_count", offsetof(clip_hparams, n_block) },
    { "clip.vision.attention.head_count", offsetof(clip_hparams, n_head) },
};
const size_t clip_n_keys = sizeof clip_keys / sizeof *clip_keys;

/* The sizes a dimension can be. */
enum { D_1, D_3, D_E, D_F, D_P, D_PATCH, D_POS };

typedef struct want {
    const char *name;   /* "%d": each block */
    int         n_dims;
    uint8_t     ne[4];
} want;

/* SigLIP's encoder and Gemma 3's projector (llama.cpp's PROJECTOR_TYPE_GEMMA3). */
static const want gemma3[] = {
    { "v.patch_embd.weight", 4, { D_PATCH, D_PATCH, D_3, D_E } },
    { "v.patch_embd.bias", 1, { D_E } },
    { "v.position_embd.weight", 2, { D_E, D_POS } },
    { "v.blk.%d.attn_q.weight", 2, { D_E, D_E } },
    { "v.blk.%d.attn_q.bias", 1, { D_E } },
    { "v.blk.%d.attn_k.weight", 2, { D_E, D_E } },
    { "v.blk.%d.attn_k.bias", 1, { D_E } },
    { "v.blk.%d.attn_v.weight", 2, { D_E, D_E } },
    { "v.blk.%d.attn_v.bias", 1, { D_E } },
    { "v.blk.%d.attn_out.weight", 2, { D_E, D_E } },
    { "v.blk.%d.attn_out.bias", 1, { D_E } },
    { "v.blk.%d.ln1.weight", 1, { D_E } },
    { "v.blk.%d.ln1.bias", 1, { D_E } },
    { "v.blk.%d.ln2.weight", 1, { D_E } },
    { "v.blk.%d.ln2.bias", 1, { D_E } },
    { "v.blk.%d.ffn_up.weight", 2, { D_E, D_F } },
    { "v.blk.%d.ffn_up.bias", 1, { D_F } },
    { "v.blk.%d.ffn_down.weight", 2, { D_F, D_E } },
    { "v.blk.%d.ffn_down.bias", 1, { D_E } },
    { "v.post_ln.weight", 1, { D_E } },
    { "v.post_ln.bias", 1, { D_E } },
    { "mm.input_projection.weight", 2, { D_P, D_E } },
    { "mm.soft_emb_norm.weight", 1, { D_E } },
};

bool clip_projector_known(const char *type) { return type && !strcmp(type, "gemma3"); }

static int64_t dim_of(const clip_hparams *hp, int d)
{
    const int64_t side = hp->patch_size ? (int64_t)(hp->image_size / hp->patch_size) : 0;
    switch (d) {
    case D_3: return 3;
    case D_E: return (int64_t)hp->n_embd;
    case D_F: return (int64_t)hp->n_ff;
    case D_P: return (int64_t)hp->proj_dim;
    case D_PATCH: return (int64_t)hp->patch_size;
    case D_POS: return side * side;
    default: return 1;
    }
}

static const clip_tensor *find(const clip_tensor *t, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].name, name))
            return &t[i];
    return NULL;
}

static void shape_str(char *out, size_t cap, int n_dims, const int64_t *ne)
{
    size_t o = 0;
    out[o++] = '[';
    out[o] = 0;
    for (int d = 0; d < n_dims && o + 24 < cap; d++)
        o += (size_t)snprintf(out + o, cap - o, "%s%" PRId64, d ? ", " : "", ne[d]);
    snprintf(out + o, cap - o, "]");
}

/* The block number of a "v.blk.N." name, or -1. */
static long block_of(const char *name)
{
    if (strncmp(name, "v.blk.", 6))
        return -1;
    char *end;
    long b = strtol(name + 6, &end, 10);
    return end != name + 6 && *end == '.' && b >= 0 ? b : -1;
}

int clip_check(const clip_hparams *hp, const clip_tensor *t, size_t n, gguf_error *err)
{
    for (size_t k = 0; k < clip_n_keys; k++)
        if (!*(const uint64_t *)((const char *)hp + clip_keys[k].off))
            return gguf_error_set(err, "%s is missing or 0", clip_keys[k].key);
    if (!hp->projector_type)
        return gguf_error_set(err, "clip.projector_type is missing");
    if (hp->image_size % hp->patch_size)
        return gguf_error_set(err, "clip.vision.image_size %" PRIu64 " is not a multiple of "
                              "clip.vision.patch_size %" PRIu64, hp->image_size, hp->patch_size);
    if (hp->n_embd % hp->n_head)
        return gguf_error_set(err, "clip.vision.embedding_length %" PRIu64 " is not a multiple of "
                              "clip.vision.attention.head_count %" PRIu64, hp->n_embd, hp->n_head);
    for (size_t i = 0; i < n; i++) {
        long b = block_of(t[i].name);
        if (b >= 0 && (uint64_t)b >= hp->n_block)
            return gguf_error_set(err, "tensor '%s': block %ld, but clip.vision.block_count is %" PRIu64,
                                  t[i].name, b, hp->n_block);
    }
    if (!clip_projector_known(hp->projector_type))
        return 0;
    const uint64_t blocks = hp->n_block;
    for (size_t w = 0; w < sizeof gemma3 / sizeof *gemma3; w++) {
        const want *q = &gemma3[w];
        const bool per_block = strstr(q->name, "%d") != NULL;
        for (uint64_t b = 0; b < (per_block ? blocks : 1); b++) {
            char name[96];
            snprintf(name, sizeof name, q->name, (int)b);
            const clip_tensor *x = find(t, n, name);
            if (!x)
                return gguf_error_set(err, "projector '%s': tensor '%s' is missing", hp->projector_type,
                                      name);
            int64_t ne[4] = { 1, 1, 1, 1 };
            for (int d = 0; d < q->n_dims; d++)
                ne[d] = dim_of(hp, q->ne[d]);
            bool ok = x->n_dims == q->n_dims;
            for (int d = 0; ok && d < q->n_dims; d++)
                ok = x->ne[d] == ne[d];
            if (!ok) {
                char got[128], exp[128];
                shape_str(got, sizeof got, x->n_dims, x->ne);
                shape_str(exp, sizeof exp, q->n_dims, ne);
                return gguf_error_set(err, "tensor '%s' has shape %s; clip.vision.* sizes say %s", name,
                                      got, exp);
            }
        }
    }
    return 0;
}

bool clip_file_is_projector(const gguf_file *f)
{
    gguf_str s;
    gguf_error e = { 0 };
    return gguf_get_str(f, "general.architecture", &s, &e) == 0 && s.len == 4 && !memcmp(s.ptr, "clip", 4);
}

/* clip.vision.KEY: GGUF_VT_F32 numbers, 3 of them (one a colour channel). */
static int check_channels(const gguf_file *f, const char *key, gguf_error *err)
{
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    if (!kv)
        return gguf_error_set(err, "%s is missing", key);
    if (kv->type != GGUF_VT_ARR || kv->elem_type != GGUF_VT_F32 || kv->n != 3)
        return gguf_error_set(err, "%s is not 3 f32 values (one a colour channel)", key);
    return 0;
}

int clip_check_file(const gguf_file *f, gguf_error *err)
{
    const gguf_kv *kv = gguf_lookup_kv(f, "clip.has_vision_encoder");
    if (!kv || kv->type != GGUF_VT_BOOL || !*(const uint8_t *)kv->data)
        return 0; /* no vision encoder: nothing here to check it against */
    clip_hparams hp = { 0 };
    for (size_t k = 0; k < clip_n_keys; k++) {
        uint32_t v;
        if (gguf_get_u32(f, clip_keys[k].key, &v, err))
            return -1;
        *(uint64_t *)((char *)&hp + clip_keys[k].off) = v;
    }
    char type[64];
    gguf_str s;
    if (gguf_get_str(f, "clip.projector_type", &s, err))
        return -1;
    if (s.len >= sizeof type || memchr(s.ptr, 0, s.len))
        return gguf_error_set(err, "clip.projector_type is not a projector name");
    memcpy(type, s.ptr, s.len);
    type[s.len] = 0;
    hp.projector_type = type;
    if (check_channels(f, "clip.vision.image_mean", err) || check_channels(f, "clip.vision.image_std", err))
        return -1;
    const uint64_t n = gguf_n_tensors(f);
    clip_tensor *t = calloc(n + 1, sizeof *t);
    if (!t)
        return gguf_error_set(err, "out of memory");
    for (uint64_t i = 0; i < n; i++) {
        const gguf_tensor *x = gguf_tensor_at(f, i);
        t[i] = (clip_tensor){ x->name, (int)x->n_dims, x->ne };
    }
    int rc = clip_check(&hp, t, (size_t)n, err);
    free(t);
    return rc;
}
