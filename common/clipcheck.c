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

const clip_key clip_audio_keys[] = {
    { "clip.audio.projection_dim", offsetof(clip_hparams, a_proj) },
    { "clip.audio.embedding_length", offsetof(clip_hparams, a_embd) },
    { "clip.audio.feed_forward_length", offsetof(clip_hparams, a_ff) },
    { "clip.audio.block_count", offsetof(clip_hparams, a_block) },
    { "clip.audio.attention.head_count", offsetof(clip_hparams, a_head) },
    { "clip.audio.num_mel_bins", offsetof(clip_hparams, a_mel) },
};
const size_t clip_n_audio_keys = sizeof clip_audio_keys / sizeof *clip_audio_keys;

/* The sizes a dimension can be: the vision tower's (E width, F feed-forward,
 * HD a head's width E / heads, P the text width, PATCH, POS the patches of
 * an image, EMM the width of spatial_merge_size² patches side by side), the
 * audio tower's (AE, AF, AHD, AP; AE2 twice the width), ANY whatever the
 * keys say (sizes no key holds: a kernel, Gemma 4's position table, the
 * audio output width). */
enum { D_1, D_2, D_3, D_E, D_F, D_HD, D_P, D_PATCH, D_POS, D_EMM, D_AE, D_AE2, D_AF, D_AHD, D_AP, D_ANY };

/* A bias beside a row's weight: none, one, or one when present; shaped
 * [the weight's last dimension] (its outputs). */
enum { B_NONE, B_YES, B_OPT };

typedef struct want {
    const char *name;     /* NAME.weight; "%d": each block */
    int         n_dims;
    uint8_t     ne[4];
    bool        optional; /* checked when present */
    uint8_t     bias;     /* B_*: NAME.bias */
    const char *needs;    /* present only with this tensor (the graph uses both) */
    bool        bare;     /* NAME is the whole name (no .weight) */
} want;
#define R(nm, nd, ...) .name = nm, .n_dims = nd, .ne = { __VA_ARGS__ }

/* SigLIP's encoder and Gemma 3's projector (llama.cpp's PROJECTOR_TYPE_GEMMA3). */
static const want gemma3[] = {
    { R("v.patch_embd", 4, D_PATCH, D_PATCH, D_3, D_E), .bias = B_YES },
    { R("v.position_embd", 2, D_E, D_POS) },
    { R("v.blk.%d.attn_q", 2, D_E, D_E), .bias = B_YES },
    { R("v.blk.%d.attn_k", 2, D_E, D_E), .bias = B_YES },
    { R("v.blk.%d.attn_v", 2, D_E, D_E), .bias = B_YES },
    { R("v.blk.%d.attn_out", 2, D_E, D_E), .bias = B_YES },
    { R("v.blk.%d.ln1", 1, D_E), .bias = B_YES },
    { R("v.blk.%d.ln2", 1, D_E), .bias = B_YES },
    { R("v.blk.%d.ffn_up", 2, D_E, D_F), .bias = B_YES },
    { R("v.blk.%d.ffn_down", 2, D_F, D_E), .bias = B_YES },
    { R("v.post_ln", 1, D_E), .bias = B_YES },
    { R("mm.input_projection", 2, D_P, D_E) },
    { R("mm.soft_emb_norm", 1, D_E) },
};

/* Gemma 4's vision encoder and projector (PROJECTOR_TYPE_GEMMA4V): the
 * patch embedding without bias, a learned 2-D position table [E, n, 2],
 * RMS norms around attention and the gated feed-forward, per-head q/k norms. */
static const want gemma4v[] = {
    { R("v.patch_embd", 4, D_PATCH, D_PATCH, D_3, D_E) },
    { R("v.position_embd", 3, D_E, D_ANY, D_2) },
    { R("v.std_bias", 1, D_E), .optional = true, .bare = true },
    { R("v.std_scale", 1, D_E), .optional = true, .bare = true },
    { R("v.blk.%d.ln1", 1, D_E) },
    { R("v.blk.%d.attn_q", 2, D_E, D_E) },
    { R("v.blk.%d.attn_k", 2, D_E, D_E) },
    { R("v.blk.%d.attn_v", 2, D_E, D_E) },
    { R("v.blk.%d.attn_out", 2, D_E, D_E) },
    { R("v.blk.%d.attn_q_norm", 1, D_HD) },
    { R("v.blk.%d.attn_k_norm", 1, D_HD) },
    { R("v.blk.%d.attn_post_norm", 1, D_E) },
    { R("v.blk.%d.ln2", 1, D_E) },
    { R("v.blk.%d.ffn_gate", 2, D_E, D_F) },
    { R("v.blk.%d.ffn_up", 2, D_E, D_F) },
    { R("v.blk.%d.ffn_down", 2, D_F, D_E) },
    { R("v.blk.%d.ffn_post_norm", 1, D_E) },
    { R("mm.input_projection", 2, D_E, D_P) },
};

/* Gemma 4's audio conformer and projector (PROJECTOR_TYPE_GEMMA4A): two
 * subsampling convolutions and their norms, the input projection, per
 * block two half-step feed-forwards, relative-position attention and the
 * light convolution module; the output projection and the text embedder. */
static const want gemma4a[] = {
    { R("a.conv1d.0", 4, D_ANY, D_ANY, D_1, D_ANY) },
    { R("a.conv1d.1", 4, D_ANY, D_ANY, D_ANY, D_ANY) },
    { R("a.input_projection", 2, D_ANY, D_AE) },
    { R("a.blk.%d.ffn_norm", 1, D_AE) },
    { R("a.blk.%d.ffn_up", 2, D_AE, D_AF) },
    { R("a.blk.%d.ffn_down", 2, D_AF, D_AE) },
    { R("a.blk.%d.ffn_post_norm", 1, D_AE) },
    { R("a.blk.%d.attn_pre_norm", 1, D_AE) },
    { R("a.blk.%d.attn_q", 2, D_AE, D_AE) },
    { R("a.blk.%d.attn_k", 2, D_AE, D_AE) },
    { R("a.blk.%d.attn_v", 2, D_AE, D_AE) },
    { R("a.blk.%d.attn_out", 2, D_AE, D_AE) },
    { R("a.blk.%d.attn_k_rel", 2, D_AE, D_AE), .optional = true },
    { R("a.blk.%d.per_dim_scale", 1, D_AHD), .optional = true },
    { R("a.blk.%d.attn_post_norm", 1, D_AE) },
    { R("a.blk.%d.conv_norm", 1, D_AE), .optional = true },
    { R("a.blk.%d.conv_pw1", 2, D_AE, D_AE2) },
    { R("a.blk.%d.conv_dw", 2, D_ANY, D_AE) },
    { R("a.blk.%d.norm_conv", 1, D_AE), .optional = true },
    { R("a.blk.%d.conv_pw2", 2, D_AE, D_AE) },
    { R("a.blk.%d.ffn_norm_1", 1, D_AE) },
    { R("a.blk.%d.ffn_up_1", 2, D_AE, D_AF) },
    { R("a.blk.%d.ffn_down_1", 2, D_AF, D_AE) },
    { R("a.blk.%d.ffn_post_norm_1", 1, D_AE), .optional = true },
    { R("a.blk.%d.ln2", 1, D_AE), .optional = true },
    { R("a.pre_encode.out", 2, D_AE, D_ANY), .optional = true },
    { R("mm.a.input_projection", 2, D_ANY, D_AP), .optional = true },
};

/* Pixtral's encoder (RMS norms, a gated feed-forward, 2-D RoPE: no position
 * table) and its projector (PROJECTOR_TYPE_PIXTRAL): Mistral Small 3.1's
 * norm and patch merger (spatial_merge_size² patches into one), two linears
 * into the text width, and the [IMG_BREAK] token's text embedding. */
static const want pixtral[] = {
    { R("v.patch_embd", 4, D_PATCH, D_PATCH, D_3, D_E), .bias = B_OPT },
    { R("v.pre_ln", 1, D_E), .optional = true },
    { R("v.blk.%d.ln1", 1, D_E) },
    { R("v.blk.%d.attn_q", 2, D_E, D_E), .bias = B_OPT },
    { R("v.blk.%d.attn_k", 2, D_E, D_E), .bias = B_OPT },
    { R("v.blk.%d.attn_v", 2, D_E, D_E), .bias = B_OPT },
    { R("v.blk.%d.attn_out", 2, D_E, D_E), .bias = B_OPT },
    { R("v.blk.%d.ln2", 1, D_E) },
    { R("v.blk.%d.ffn_gate", 2, D_E, D_F), .optional = true },
    { R("v.blk.%d.ffn_up", 2, D_E, D_F) },
    { R("v.blk.%d.ffn_down", 2, D_F, D_E) },
    { R("mm.input_norm", 1, D_E), .optional = true },
    { R("mm.patch_merger", 2, D_EMM, D_E), .optional = true, .needs = "mm.input_norm.weight" },
    { R("mm.1", 2, D_E, D_P), .bias = B_OPT },
    { R("mm.2", 2, D_P, D_P), .bias = B_OPT },
    { R("v.token_embd.img_break", 1, D_P), .bare = true },
};
#undef R

typedef struct projector {
    const char *type;
    const want *rows;
    size_t      n;
    bool        audio;
} projector;

static const projector PROJECTORS[] = {
    { "gemma3", gemma3, sizeof gemma3 / sizeof *gemma3, false },
    { "gemma4v", gemma4v, sizeof gemma4v / sizeof *gemma4v, false },
    { "gemma4a", gemma4a, sizeof gemma4a / sizeof *gemma4a, true },
    { "pixtral", pixtral, sizeof pixtral / sizeof *pixtral, false },
};

static const projector *projector_of(const char *type, bool audio)
{
    for (size_t i = 0; type && i < sizeof PROJECTORS / sizeof *PROJECTORS; i++)
        if (!strcmp(type, PROJECTORS[i].type) && PROJECTORS[i].audio == audio)
            return &PROJECTORS[i];
    return NULL;
}

bool clip_projector_known(const char *type) { return projector_of(type, false) != NULL; }

bool clip_audio_projector_known(const char *type) { return projector_of(type, true) != NULL; }

/* A dimension's size, or -1 for D_ANY. */
static int64_t dim_of(const clip_hparams *hp, int d)
{
    const int64_t side = hp->patch_size ? (int64_t)(hp->image_size / hp->patch_size) : 0;
    switch (d) {
    case D_2: return 2;
    case D_3: return 3;
    case D_E: return (int64_t)hp->n_embd;
    case D_F: return (int64_t)hp->n_ff;
    case D_HD: return hp->n_head ? (int64_t)(hp->n_embd / hp->n_head) : 0;
    case D_P: return (int64_t)hp->proj_dim;
    case D_PATCH: return (int64_t)hp->patch_size;
    case D_POS: return side * side;
    case D_EMM: return (int64_t)hp->n_embd * (int64_t)(hp->merge ? hp->merge * hp->merge : 1);
    case D_AE: return (int64_t)hp->a_embd;
    case D_AE2: return 2 * (int64_t)hp->a_embd;
    case D_AF: return (int64_t)hp->a_ff;
    case D_AHD: return hp->a_head ? (int64_t)(hp->a_embd / hp->a_head) : 0;
    case D_AP: return (int64_t)hp->a_proj;
    case D_ANY: return -1;
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
        o += ne[d] < 0 ? (size_t)snprintf(out + o, cap - o, "%s*", d ? ", " : "")
                       : (size_t)snprintf(out + o, cap - o, "%s%" PRId64, d ? ", " : "", ne[d]);
    snprintf(out + o, cap - o, "]");
}

/* The block number of a "P.blk.N." name (P "v" or "a"), or -1. */
static long block_of(const char *name, char p)
{
    if (name[0] != p || strncmp(name + 1, ".blk.", 5))
        return -1;
    char *end;
    long b = strtol(name + 6, &end, 10);
    return end != name + 6 && *end == '.' && b >= 0 ? b : -1;
}

/* A tensor's shape against the sizes; "*" matches any size from 1. */
static int check_shape(const clip_tensor *x, int n_dims, const int64_t *ne, const char *keys,
                       gguf_error *err)
{
    bool ok = x->n_dims == n_dims;
    for (int d = 0; ok && d < n_dims; d++)
        ok = ne[d] < 0 ? x->ne[d] >= 1 : x->ne[d] == ne[d];
    if (ok)
        return 0;
    char got[128], exp[128];
    shape_str(got, sizeof got, x->n_dims, x->ne);
    shape_str(exp, sizeof exp, n_dims, ne);
    return gguf_error_set(err, "tensor '%s' has shape %s; %s sizes say %s", x->name, got, keys, exp);
}

/* One tensor of a row: missing (unless optional), or shaped as the sizes
 * say. */
static int check_one(const clip_hparams *hp, const projector *pj, const clip_tensor *t, size_t n,
                     const char *name, int n_dims, const uint8_t *dims, bool optional, gguf_error *err)
{
    const clip_tensor *x = find(t, n, name);
    if (!x)
        return optional ? 0 : gguf_error_set(err, "projector '%s': tensor '%s' is missing", pj->type, name);
    int64_t ne[4] = { 1, 1, 1, 1 };
    for (int d = 0; d < n_dims; d++)
        ne[d] = dim_of(hp, dims[d]);
    return check_shape(x, n_dims, ne, pj->audio ? "clip.audio.*" : "clip.vision.*", err);
}

static int check_rows(const clip_hparams *hp, const projector *pj, const clip_tensor *t, size_t n,
                      gguf_error *err)
{
    const uint64_t blocks = pj->audio ? hp->a_block : hp->n_block;
    for (size_t w = 0; w < pj->n; w++) {
        const want *q = &pj->rows[w];
        const bool per_block = strstr(q->name, "%d") != NULL;
        for (uint64_t b = 0; b < (per_block ? blocks : 1); b++) {
            char base[80], name[96];
            snprintf(base, sizeof base, q->name, (int)b);
            snprintf(name, sizeof name, "%s%s", base, q->bare ? "" : ".weight");
            const bool present = find(t, n, name) != NULL;
            if (check_one(hp, pj, t, n, name, q->n_dims, q->ne, q->optional, err))
                return -1;
            if (present && q->needs && !find(t, n, q->needs))
                return gguf_error_set(err, "projector '%s': tensor '%s' needs '%s', which is missing",
                                      pj->type, name, q->needs);
            snprintf(name, sizeof name, "%s.bias", base);
            if (q->bias != B_NONE &&
                check_one(hp, pj, t, n, name, 1, &q->ne[q->n_dims - 1], q->bias == B_OPT, err))
                return -1;
        }
    }
    return 0;
}

/* Gemma 4's clipped linears: a bound (NAME.input_max and the like) is one
 * value, beside its NAME.weight. */
static int check_bounds(const clip_tensor *t, size_t n, gguf_error *err)
{
    static const char *const bounds[] = { ".input_max", ".input_min", ".output_max", ".output_min" };
    for (size_t i = 0; i < n; i++) {
        const size_t len = strlen(t[i].name);
        for (int k = 0; k < 4; k++) {
            const size_t bl = strlen(bounds[k]);
            if (len <= bl || strcmp(t[i].name + len - bl, bounds[k]))
                continue;
            int64_t ne[4] = { 1, 1, 1, 1 };
            if (check_shape(&t[i], 1, ne, "a clipped linear's bound:", err))
                return -1;
            char w[160];
            if (len - bl + 8 > sizeof w)
                return gguf_error_set(err, "tensor '%s': name too long", t[i].name);
            memcpy(w, t[i].name, len - bl);
            memcpy(w + len - bl, ".weight", 8);
            if (!find(t, n, w))
                return gguf_error_set(err, "tensor '%s' bounds a linear '%s' that is missing", t[i].name, w);
        }
    }
    return 0;
}

/* The tensors of Gemma 4's audio encoder that depend on each other rather
 * than on keys: the two convolutions' channels and norms, the input
 * projection over the second's channels, the output projection's width
 * into the text embedder. */
static int check_gemma4a_links(const clip_tensor *t, size_t n, gguf_error *err)
{
    const clip_tensor *c0 = find(t, n, "a.conv1d.0.weight"), *c1 = find(t, n, "a.conv1d.1.weight"),
                      *ip = find(t, n, "a.input_projection.weight"),
                      *out = find(t, n, "a.pre_encode.out.weight"),
                      *mm = find(t, n, "mm.a.input_projection.weight");
    if (c1->ne[2] != c0->ne[3])
        return gguf_error_set(err, "tensor 'a.conv1d.1.weight' takes %" PRId64 " channels; "
                              "'a.conv1d.0.weight' makes %" PRId64, c1->ne[2], c0->ne[3]);
    for (int k = 0; k < 2; k++) {
        char name[32];
        snprintf(name, sizeof name, "a.conv1d.%d.norm.weight", k);
        const clip_tensor *nm = find(t, n, name);
        const int64_t ch = (k ? c1 : c0)->ne[3];
        if (nm && (nm->n_dims != 1 || nm->ne[0] != ch))
            return gguf_error_set(err, "tensor '%s' has %" PRId64 " values; its convolution makes %" PRId64
                                  " channels", name, nm->ne[0], ch);
    }
    if (ip->ne[0] % c1->ne[3])
        return gguf_error_set(err, "tensor 'a.input_projection.weight' takes %" PRId64 " inputs, not a "
                              "multiple of the %" PRId64 " channels of 'a.conv1d.1.weight'", ip->ne[0],
                              c1->ne[3]);
    if (out && mm && out->ne[1] != mm->ne[0])
        return gguf_error_set(err, "tensor 'mm.a.input_projection.weight' takes %" PRId64 " inputs; "
                              "'a.pre_encode.out.weight' makes %" PRId64, mm->ne[0], out->ne[1]);
    return 0;
}

int clip_check(const clip_hparams *hp, const clip_tensor *t, size_t n, gguf_error *err)
{
    /* the two encoders: their keys, sizes, block prefix and projector */
    const struct {
        bool            on;
        const char     *what;
        char            blk;
        const clip_key *keys;
        size_t          n_keys;
        uint64_t        embd, head, blocks;
        const projector *pj;
    } enc[2] = {
        { !hp->no_vision, "vision", 'v', clip_keys, clip_n_keys, hp->n_embd, hp->n_head, hp->n_block,
          hp->no_vision ? NULL : projector_of(hp->projector_type, false) },
        { hp->audio_type != NULL, "audio", 'a', clip_audio_keys, clip_n_audio_keys, hp->a_embd, hp->a_head,
          hp->a_block, projector_of(hp->audio_type, true) },
    };
    for (int e = 0; e < 2; e++) {
        if (!enc[e].on)
            continue;
        for (size_t k = 0; k < enc[e].n_keys; k++)
            if (!*(const uint64_t *)((const char *)hp + enc[e].keys[k].off))
                return gguf_error_set(err, "%s is missing or 0", enc[e].keys[k].key);
        if (e == 0 && !hp->projector_type)
            return gguf_error_set(err, "clip.projector_type is missing");
        if (e == 0 && hp->image_size % hp->patch_size)
            return gguf_error_set(err, "clip.vision.image_size %" PRIu64 " is not a multiple of "
                                  "clip.vision.patch_size %" PRIu64, hp->image_size, hp->patch_size);
        if (enc[e].embd % enc[e].head)
            return gguf_error_set(err, "clip.%s.embedding_length %" PRIu64 " is not a multiple of "
                                  "clip.%s.attention.head_count %" PRIu64, enc[e].what, enc[e].embd,
                                  enc[e].what, enc[e].head);
    }
    for (size_t i = 0; i < n; i++)
        for (int e = 0; e < 2; e++) {
            const long b = block_of(t[i].name, enc[e].blk);
            if (b >= 0 && (!enc[e].on || (uint64_t)b >= enc[e].blocks))
                return gguf_error_set(err, "tensor '%s': block %ld, but clip.%s.block_count is %" PRIu64,
                                      t[i].name, b, enc[e].what, enc[e].on ? enc[e].blocks : 0);
        }
    for (int e = 0; e < 2; e++)
        if (enc[e].pj && check_rows(hp, enc[e].pj, t, n, err))
            return -1;
    const projector *pv = enc[0].pj, *pa = enc[1].pj;
    if (pa && !strcmp(pa->type, "gemma4a") && check_gemma4a_links(t, n, err))
        return -1;
    if (((pv && !strcmp(pv->type, "gemma4v")) || pa) && check_bounds(t, n, err))
        return -1;
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

/* A string key into buf (64 bytes): 1 when found, 0 when absent, -1. */
static int get_type(const gguf_file *f, const char *key, char *buf, gguf_error *err)
{
    if (!gguf_lookup_kv(f, key))
        return 0;
    gguf_str s;
    if (gguf_get_str(f, key, &s, err))
        return -1;
    if (s.len == 0 || s.len >= 64 || memchr(s.ptr, 0, s.len))
        return gguf_error_set(err, "%s is not a projector name", key);
    memcpy(buf, s.ptr, s.len);
    buf[s.len] = 0;
    return 1;
}

static bool flag(const gguf_file *f, const char *key)
{
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    return kv && kv->type == GGUF_VT_BOOL && *(const uint8_t *)kv->data;
}

/* An encoder's u32 sizes (keys) and its projector type: type_key, or
 * alt_key when the file has not that one. 0, or -1 with err. */
static int read_encoder(const gguf_file *f, clip_hparams *hp, const clip_key *keys, size_t n_keys,
                        const char *type_key, const char *alt_key, char *buf, gguf_error *err)
{
    for (size_t k = 0; k < n_keys; k++) {
        uint32_t v;
        if (gguf_get_u32(f, keys[k].key, &v, err))
            return -1;
        *(uint64_t *)((char *)hp + keys[k].off) = v;
    }
    int r = get_type(f, type_key, buf, err);
    if (r == 0)
        r = get_type(f, alt_key, buf, err);
    if (r == 0)
        return gguf_error_set(err, "%s (or %s) is missing", type_key, alt_key);
    return r < 0 ? -1 : 0;
}

int clip_check_file(const gguf_file *f, gguf_error *err)
{
    const bool vision = flag(f, "clip.has_vision_encoder"), audio = flag(f, "clip.has_audio_encoder");
    if (!vision && !audio)
        return 0; /* no encoder: nothing here to check it against */
    clip_hparams hp = { 0 };
    char type[64], atype[64];
    hp.no_vision = !vision;
    if (vision) {
        if (read_encoder(f, &hp, clip_keys, clip_n_keys, "clip.projector_type", "clip.vision.projector_type",
                         type, err))
            return -1;
        hp.projector_type = type;
        if (check_channels(f, "clip.vision.image_mean", err) || check_channels(f, "clip.vision.image_std", err))
            return -1;
        uint32_t merge = 0;
        if (gguf_lookup_kv(f, "clip.vision.spatial_merge_size") &&
            gguf_get_u32(f, "clip.vision.spatial_merge_size", &merge, err))
            return -1;
        if (gguf_lookup_kv(f, "clip.vision.spatial_merge_size") && (merge < 1 || merge > 65536))
            return gguf_error_set(err, "clip.vision.spatial_merge_size %" PRIu32 " is not from 1 to 65536",
                                  merge);
        hp.merge = merge;
    }
    if (audio) {
        if (read_encoder(f, &hp, clip_audio_keys, clip_n_audio_keys, "clip.audio.projector_type",
                         "clip.projector_type", atype, err))
            return -1;
        hp.audio_type = atype;
    }
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
