/*
 * modelcheck.c — the model rules of <ggufkit/arch.h> (gguf_model_validate, gguf_model_check).
 *
 * The rules are written once, over a view of a model (look a key up, walk
 * the tensors) that an opened file or a writer provides. What differs per
 * architecture is data, in the registry (arch.c): its hyper-parameter
 * table, its tensor tables (name pattern, required or optional, shape in
 * terms of the hyper-parameters) and its flags.
 *
 * Order of the checks, and so which problem is reported when there are
 * several: identity keys, hyper-parameters, vocabulary, tensor names (file
 * order), then each table tensor (globals, then block by block).
 */
#include "arch_impl.h"
#include "hparams_writer.h"
#include "special_tokens.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Keys only this module reads (<ggufkit/arch.h> names the shared ones). */
#define KEY_ADD_SPACE_PREFIX "tokenizer.ggml.add_space_prefix"

/* ===========================================================================
 * The view: one model, from a file or from a writer
 */

/* A key's value. kv holds type, elem_type, n and (numbers, bools) data, so
 * the reader's accessors work on it; strings come from strs (a file) or from
 * packed (a writer: u64 length + bytes, back to back). */
typedef struct mc_kv {
    gguf_kv         kv;
    const gguf_str *strs;
    const uint8_t  *packed;
    size_t          packed_size;
} mc_kv;

typedef struct mc_tensor {
    const char *name;
    int64_t     ne[GGUF_MAX_DIMS]; /* 1 beyond n_dims */
    uint32_t    n_dims;
} mc_tensor;

typedef struct mc_view {
    const void *src;
    bool (*find)(const void *src, const char *key, mc_kv *out);
    void (*tensor)(const void *src, uint64_t i, mc_tensor *out);
    uint64_t n_tensors;
} mc_view;

static bool file_find(const void *src, const char *key, mc_kv *out)
{
    const gguf_kv *kv = gguf_lookup_kv(src, key);
    if (!kv)
        return false;
    *out = (mc_kv){ .kv = *kv, .strs = kv->strs };
    return true;
}

static void file_tensor(const void *src, uint64_t i, mc_tensor *out)
{
    const gguf_tensor *t = gguf_tensor_at(src, i);
    *out = (mc_tensor){ t->name, { t->ne[0], t->ne[1], t->ne[2], t->ne[3] }, t->n_dims };
}

static bool writer_find(const void *src, const char *key, mc_kv *out)
{
    gguf_writer_value v;
    if (!gguf_writer_find_value(src, key, &v))
        return false;
    *out = (mc_kv){ .kv = { .key = key, .type = v.type, .elem_type = v.elem_type, .n = v.n } };
    if (v.elem_type == GGUF_VT_STR) {
        out->packed = v.bytes;
        out->packed_size = v.size;
    } else {
        out->kv.data = v.bytes;
    }
    return true;
}

static void writer_tensor(const void *src, uint64_t i, mc_tensor *out)
{
    gguf_writer_tensor t;
    gguf_writer_tensor_at(src, i, &t);
    *out = (mc_tensor){ t.name, { t.ne[0], t.ne[1], t.ne[2], t.ne[3] }, t.n_dims };
}

/* Walks the strings of a str value or str array in order. */
typedef struct str_iter {
    const mc_kv *k;
    uint64_t     i;
    size_t       off;
} str_iter;

static bool str_next(str_iter *it, gguf_str *s)
{
    const mc_kv *k = it->k;
    if (it->i >= k->kv.n)
        return false;
    if (k->strs) {
        *s = k->strs[it->i++];
        return true;
    }
    uint64_t len;
    if (!k->packed || k->packed_size - it->off < 8)
        return false;
    memcpy(&len, k->packed + it->off, 8);
    if (len > k->packed_size - it->off - 8)
        return false;
    *s = (gguf_str){ (const char *)k->packed + it->off + 8, len };
    it->off += 8 + (size_t)len;
    it->i++;
    return true;
}

/* The string of a str scalar; false for other types. */
static bool kv_str(const mc_kv *k, gguf_str *s)
{
    str_iter it = { k, 0, 0 };
    return k->kv.type == GGUF_VT_STR && str_next(&it, s);
}

/* ===========================================================================
 * The checker
 */

typedef struct checker {
    const mc_view   *v;
    gguf_error      *err;
    char             arch[64];   /* general.architecture; "" when absent or unusable */
    const gguf_arch *row;        /* set for a model of a registered architecture */
    bool             tables;     /* its tensor tables apply (not an expert model it lacks) */
    gguf_hparams     hp;         /* hp.n_vocab: GGUF_DIM_VOCAB, -1 when unknown */
    int64_t          n_blocks;   /* block_count, -1 when unknown */
    int64_t          n_tokens;   /* tokenizer.ggml.tokens, -1 without */
    char             vocab_src[96]; /* "the vocabulary has N tokens", ... */
    gguf_model_problem_fn *report; /* gguf_model_check: every tensor problem */
    void            *report_ctx;
    int              n_problems;
} checker;

/* A tensor problem just set in c->err: with a report function it is
 * reported and the check goes on (0); otherwise the check stops (-1). */
static int tensor_problem(checker *c)
{
    if (!c->report)
        return -1;
    c->report(c->report_ctx, c->err);
    c->n_problems++;
    return 0;
}

static bool find(const checker *c, const char *key, mc_kv *out)
{
    return c->v->find(c->v->src, key, out);
}

/* An {arch}.* key name. */
static const char *akey(const checker *c, const char *fmt, char buf[128])
{
    snprintf(buf, 128, fmt, c->arch);
    return buf;
}

static const char *type_text(const gguf_kv *kv, char buf[32])
{
    if (kv->type == GGUF_VT_ARR)
        snprintf(buf, 32, "arr[%s]", gguf_vtype_name(kv->elem_type));
    else
        snprintf(buf, 32, "%s", gguf_vtype_name(kv->type));
    return buf;
}

static int type_error(checker *c, const char *key, const mc_kv *k, const char *want)
{
    char tb[32];
    return gguf_error_set(c->err, "%s is %s, expected %s", key, type_text(&k->kv, tb), want);
}


/* An integer scalar: its value (u64 beyond INT64_MAX clamped) and exact
 * decimal text. False when k is not an integer scalar. */
static bool int_value(const mc_kv *k, int64_t *v, char text[24])
{
    if (k->kv.type == GGUF_VT_U64) {
        uint64_t u;
        memcpy(&u, k->kv.data, 8);
        *v = u > INT64_MAX ? INT64_MAX : (int64_t)u;
        snprintf(text, 24, "%" PRIu64, u);
        return true;
    }
    if (!gguf_kv_int(&k->kv, v))
        return false;
    snprintf(text, 24, "%" PRId64, *v);
    return true;
}

/* ---------------------------------------------------------------------------
 * Identity: general.architecture, general.type
 */

static int check_identity(checker *c)
{
    mc_kv k;
    gguf_str s;
    bool model = true;
    if (find(c, GGUF_KEY_ARCHITECTURE, &k)) {
        if (!kv_str(&k, &s))
            return type_error(c, GGUF_KEY_ARCHITECTURE, &k, "str");
        /* a name that cannot be part of a key names no key: arch stays "" */
        if (s.len > 0 && s.len < sizeof c->arch && !memchr(s.ptr, 0, s.len)) {
            memcpy(c->arch, s.ptr, s.len);
            c->arch[s.len] = 0;
        }
    }
    if (find(c, GGUF_KEY_GENERAL_TYPE, &k)) {
        if (!kv_str(&k, &s))
            return type_error(c, GGUF_KEY_GENERAL_TYPE, &k, "str");
        model = gguf_str_eq(s, "model");
    }
    if (model && c->v->n_tensors > 0 && c->arch[0])
        c->row = gguf_arch_find(c->arch);
    return 0;
}

/* ---------------------------------------------------------------------------
 * Hyper-parameters
 */

/* Element i of an integer or bool array (or scalar). */
static bool int_elem(const mc_kv *k, uint64_t i, int64_t *v)
{
    const uint8_t *p = k->kv.data;
    union { uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32;
            uint64_t u64; int64_t i64; } x;
    switch (k->kv.elem_type) {
    case GGUF_VT_U8: case GGUF_VT_BOOL: memcpy(&x.u8, p + i, 1); *v = x.u8; return true;
    case GGUF_VT_I8:  memcpy(&x.i8, p + i, 1); *v = x.i8; return true;
    case GGUF_VT_U16: memcpy(&x.u16, p + 2 * i, 2); *v = x.u16; return true;
    case GGUF_VT_I16: memcpy(&x.i16, p + 2 * i, 2); *v = x.i16; return true;
    case GGUF_VT_U32: memcpy(&x.u32, p + 4 * i, 4); *v = x.u32; return true;
    case GGUF_VT_I32: memcpy(&x.i32, p + 4 * i, 4); *v = x.i32; return true;
    case GGUF_VT_U64: memcpy(&x.u64, p + 8 * i, 8); *v = x.u64 > INT64_MAX ? INT64_MAX : (int64_t)x.u64;
        return true;
    case GGUF_VT_I64: memcpy(&x.i64, p + 8 * i, 8); *v = x.i64; return true;
    }
    return false;
}

/* An array row (enum gguf_hp_array): an array of integers or bools of the
 * row's count (block_count for a per-block one), or one integer for all,
 * each in the row's range; kept in hp.arr, the largest in hp.v. */
static int read_array(checker *c, const gguf_arch_hparam *r, const char *key, const mc_kv *k)
{
    const int64_t want = r->array == GGUF_HP_ARRAY ? r->count : c->hp.v[GGUF_HP_BLOCK_COUNT];
    const bool arr = k->kv.type == GGUF_VT_ARR;
    int64_t v;
    if (!k->kv.data || (k->kv.n > 0 && !int_elem(k, 0, &v)))
        return type_error(c, key, k, r->array == GGUF_HP_ARRAY ? "an integer array"
                                                               : "an integer or bool array");
    if (arr && (int64_t)k->kv.n != want)
        return gguf_error_set(c->err, "%s has %" PRIu64 " elements, expected %" PRId64 "%s", key,
                              k->kv.n, want, r->array == GGUF_HP_PER_BLOCK ? " (block_count)" : "");
    if (want < 1)
        return gguf_error_set(c->err, "%s: no elements", key);
    int64_t *a = malloc((size_t)want * sizeof *a);
    if (!a)
        return gguf_error_setc(c->err, GGUF_ERR_NOMEM, "out of memory");
    int64_t max = INT64_MIN;
    for (int64_t i = 0; i < want; i++) {
        int_elem(k, arr ? (uint64_t)i : 0, &a[i]);
        if (a[i] < r->lo || a[i] > r->hi) {
            const int64_t bad = a[i];
            free(a);
            return gguf_error_set(c->err, "%s[%" PRId64 "] = %" PRId64 ", expected %" PRId64
                                  "..%" PRId64, key, i, bad, r->lo, r->hi);
        }
        max = a[i] > max ? a[i] : max;
    }
    free(c->hp.arr[r->id]);
    c->hp.arr[r->id] = a;
    c->hp.n_arr[r->id] = want;
    c->hp.v[r->id] = max;
    return 0;
}

static int read_hparam(checker *c, const gguf_arch_hparam *r)
{
    char key[128], text[24];
    mc_kv k;
    akey(c, gguf_hp_key(r->id), key);
    if (!find(c, key, &k)) {
        if (r->required)
            return gguf_error_set(c->err, "missing key %s", key);
        return 0;
    }
    c->hp.has[r->id] = c->hp.set[r->id] = true;
    if (r->array != GGUF_HP_SCALAR)
        return read_array(c, r, key, &k);
    if (r->is_float) {
        double d;
        float f;
        if (gguf_kv_f32(&k.kv, &f))
            d = f;
        else if (!gguf_kv_f64(&k.kv, &d))
            return type_error(c, key, &k, "f32");
        if (!isfinite(d) || d < 0 || (d == 0 && !r->zero_ok))
            return gguf_error_set(c->err, "%s = %g, expected a finite number %s 0", key, d,
                                  r->zero_ok ? ">=" : ">");
        c->hp.f[r->id] = d;
        return 0;
    }
    int64_t v;
    if (!int_value(&k, &v, text))
        return type_error(c, key, &k, "an integer");
    if (v < r->lo || v > r->hi)
        return gguf_error_set(c->err, "%s = %s, expected %" PRId64 "..%" PRId64, key, text, r->lo,
                              r->hi);
    c->hp.v[r->id] = v;
    return 0;
}

/* The recurrent blocks' keys against each other: full_attention_interval
 * within block_count, value heads a multiple of the key heads (groups). */
static int check_layer_keys(checker *c)
{
    const gguf_hparams *hp = &c->hp;
    char k1[128], k2[128];
    if (hp->has[GGUF_HP_FULL_ATTN_INTERVAL] &&
        hp->v[GGUF_HP_FULL_ATTN_INTERVAL] > hp->v[GGUF_HP_BLOCK_COUNT])
        return gguf_error_set(c->err, "%s = %" PRId64 ", expected 1 to %s = %" PRId64
                              " (no block would be full attention)",
                              akey(c, GGUF_KEY_FULL_ATTN_INTERVAL, k1),
                              hp->v[GGUF_HP_FULL_ATTN_INTERVAL],
                              akey(c, GGUF_KEY_BLOCK_COUNT, k2), hp->v[GGUF_HP_BLOCK_COUNT]);
    if (hp->has[GGUF_HP_SSM_GROUP_COUNT] && hp->has[GGUF_HP_SSM_TIME_STEP_RANK] &&
        hp->v[GGUF_HP_SSM_TIME_STEP_RANK] % hp->v[GGUF_HP_SSM_GROUP_COUNT])
        return gguf_error_set(c->err, "%s = %" PRId64 " does not divide %s = %" PRId64
                              " (value heads per key head)",
                              akey(c, GGUF_KEY_SSM_GROUP_COUNT, k1), hp->v[GGUF_HP_SSM_GROUP_COUNT],
                              akey(c, GGUF_KEY_SSM_TIME_STEP_RANK, k2),
                              hp->v[GGUF_HP_SSM_TIME_STEP_RANK]);
    /* llama.cpp's loader takes a value head as state_size wide, its graph
     * as inner_size / time_step_rank: the two must agree */
    if (hp->has[GGUF_HP_SSM_INNER_SIZE] && hp->has[GGUF_HP_SSM_STATE_SIZE] &&
        hp->has[GGUF_HP_SSM_TIME_STEP_RANK] &&
        hp->v[GGUF_HP_SSM_INNER_SIZE] !=
            hp->v[GGUF_HP_SSM_STATE_SIZE] * hp->v[GGUF_HP_SSM_TIME_STEP_RANK]) {
        char k3[128];
        return gguf_error_set(c->err, "%s = %" PRId64 ", expected %s × %s = %" PRId64,
                              akey(c, GGUF_KEY_SSM_INNER_SIZE, k3), hp->v[GGUF_HP_SSM_INNER_SIZE],
                              akey(c, GGUF_KEY_SSM_STATE_SIZE, k1),
                              akey(c, GGUF_KEY_SSM_TIME_STEP_RANK, k2),
                              hp->v[GGUF_HP_SSM_STATE_SIZE] * hp->v[GGUF_HP_SSM_TIME_STEP_RANK]);
    }
    return 0;
}

/* GLM-4.5's blocks and routing (llama.cpp's glm4moe loader and its
 * grouped top-k): the next-token-prediction blocks fewer than block_count
 * (llama.cpp asserts it), the leading dense blocks at most block_count,
 * the expert groups dividing the experts, no more groups used than there
 * are, and enough experts in the used groups for expert_used_count. */
static int check_experts_keys(checker *c)
{
    const gguf_hparams *hp = &c->hp;
    char k1[128], k2[128], k3[128];
    const int64_t n = hp->v[GGUF_HP_BLOCK_COUNT];
    if (hp->has[GGUF_HP_NEXTN_PREDICT_LAYERS] && hp->v[GGUF_HP_NEXTN_PREDICT_LAYERS] >= n)
        return gguf_error_set(c->err, "%s = %" PRId64 ", expected 0 to %s - 1 = %" PRId64
                              " (the next-token-prediction blocks come after the model's own)",
                              akey(c, GGUF_KEY_NEXTN_PREDICT_LAYERS, k1),
                              hp->v[GGUF_HP_NEXTN_PREDICT_LAYERS],
                              akey(c, GGUF_KEY_BLOCK_COUNT, k2), n - 1);
    if (hp->has[GGUF_HP_LEADING_DENSE_BLOCK_COUNT] && hp->v[GGUF_HP_LEADING_DENSE_BLOCK_COUNT] > n)
        return gguf_error_set(c->err, "%s = %" PRId64 ", expected 0 to %s = %" PRId64,
                              akey(c, GGUF_KEY_LEADING_DENSE_BLOCK_COUNT, k1),
                              hp->v[GGUF_HP_LEADING_DENSE_BLOCK_COUNT],
                              akey(c, GGUF_KEY_BLOCK_COUNT, k2), n);
    if (!hp->set[GGUF_HP_EXPERT_GROUP_COUNT] || !hp->set[GGUF_HP_EXPERT_COUNT])
        return 0;
    const int64_t groups = hp->v[GGUF_HP_EXPERT_GROUP_COUNT];
    const int64_t used = hp->set[GGUF_HP_EXPERT_GROUP_USED_COUNT]
                             ? hp->v[GGUF_HP_EXPERT_GROUP_USED_COUNT] : groups;
    const int64_t experts = hp->v[GGUF_HP_EXPERT_COUNT];
    akey(c, GGUF_KEY_EXPERT_GROUP_COUNT, k1);
    akey(c, GGUF_KEY_EXPERT_COUNT, k2);
    if (groups < 1 || experts % groups)
        return gguf_error_set(c->err, "%s = %" PRId64 " does not divide %s = %" PRId64
                              " (experts per group)", k1, groups, k2, experts);
    if (used > groups)
        return gguf_error_set(c->err, "%s = %" PRId64 ", expected 1 to %s = %" PRId64,
                              akey(c, GGUF_KEY_EXPERT_GROUP_USED_COUNT, k3), used, k1, groups);
    if (hp->set[GGUF_HP_EXPERT_USED_COUNT] &&
        hp->v[GGUF_HP_EXPERT_USED_COUNT] > used * (experts / groups))
        return gguf_error_set(c->err, "%s = %" PRId64 ", but %" PRId64 " used group%s of %"
                              PRId64 " expert%s hold%s %" PRId64,
                              akey(c, GGUF_KEY_EXPERT_USED_COUNT, k3),
                              hp->v[GGUF_HP_EXPERT_USED_COUNT], used, used == 1 ? "" : "s",
                              experts / groups, experts / groups == 1 ? "" : "s",
                              used == 1 ? "s" : "", used * (experts / groups));
    return 0;
}

/* Gemma 4's KV-shared blocks (llama.cpp's gemma4 loader and its KV cache
 * reuse): the first block keeps its own KV; each shared block il reuses the
 * KV of block first - 2 when it is sliding, first - 1 when it is full
 * (first = block_count - shared_kv_layers), which must exist and be of its
 * kind; K and V heads of one size, in the sliding blocks too; the sliding
 * blocks' rotary width even and within their heads. */
static int check_shared_kv(checker *c)
{
    const gguf_hparams *hp = &c->hp;
    char k1[128], k2[128];
    if (!gguf_arch_has(c->row, GGUF_FEAT_SHARED_KV))
        return 0;
    const int64_t n = hp->v[GGUF_HP_BLOCK_COUNT], shared = hp->v[GGUF_HP_SHARED_KV_LAYERS];
    const int64_t first = n - shared;
    akey(c, GGUF_KEY_SHARED_KV_LAYERS, k1);
    if (shared >= n)
        return gguf_error_set(c->err, "%s = %" PRId64 ", expected 0 to %s - 1 = %" PRId64
                              " (the first block has its own KV)", k1, shared,
                              akey(c, GGUF_KEY_BLOCK_COUNT, k2), n - 1);
    for (int64_t il = first; il < n; il++) {
        const bool swa = gguf_hparams_layer_in(hp, GGUF_LAYERS_SLIDING, il);
        const int64_t from = first - (swa ? 2 : 1);
        if (from >= 0 && gguf_hparams_layer_in(hp, GGUF_LAYERS_SLIDING, from) == swa)
            continue;
        if (from < 0)
            return gguf_error_set(c->err, "%s = %" PRId64 ": block %" PRId64 " (%s) would reuse "
                                  "the KV of block %" PRId64 ", which does not exist", k1, shared,
                                  il, swa ? "sliding" : "full", from);
        return gguf_error_set(c->err, "%s = %" PRId64 ": block %" PRId64 " (%s) would reuse the "
                              "KV of block %" PRId64 ", which is %s (llama.cpp: a shared sliding "
                              "block takes the KV of the block two before the first shared "
                              "one, a full block that of the block right before it)", k1,
                              shared, il, swa ? "sliding" : "full", from, swa ? "full" : "sliding");
    }
    static const int pairs[2][2] = { { GGUF_HP_KEY_LENGTH, GGUF_HP_VALUE_LENGTH },
                                     { GGUF_HP_KEY_LENGTH_SWA, GGUF_HP_VALUE_LENGTH_SWA } };
    for (int i = 0; i < 2; i++)
        if (hp->set[pairs[i][0]] && hp->set[pairs[i][1]] &&
            hp->v[pairs[i][0]] != hp->v[pairs[i][1]])
            return gguf_error_set(c->err, "%s = %" PRId64 ", expected %s = %" PRId64
                                  " (%s: K serves as V, heads of one size)",
                                  akey(c, gguf_hp_key(pairs[i][1]), k1), hp->v[pairs[i][1]],
                                  akey(c, gguf_hp_key(pairs[i][0]), k2), hp->v[pairs[i][0]],
                                  c->arch);
    const int64_t rot = hp->v[GGUF_HP_ROPE_DIM_SWA], head = hp->v[GGUF_HP_KEY_LENGTH_SWA];
    if (hp->has[GGUF_HP_ROPE_DIM_SWA] && (rot < 2 || rot % 2 || rot > head))
        return gguf_error_set(c->err, "%s = %" PRId64 ", expected an even number from 2 to %"
                              PRId64 " (%s)", akey(c, GGUF_KEY_ROPE_DIM_COUNT_SWA, k1), rot, head,
                              akey(c, GGUF_KEY_KEY_LENGTH_SWA, k2));
    return 0;
}

/* Absent keys take their values as the table's derive column says
 * (llama.cpp's defaults: head_count_kv = head_count, head size =
 * embedding_length / head_count, rope dimensions = head size); then head
 * counts and sizes against each other and the rope dimensions against the
 * head size. */
static int check_mla_keys(checker *c);

static int derive(checker *c)
{
    char kh[128], kkv[128], ke[128], kr[128];
    akey(c, GGUF_KEY_HEAD_COUNT, kh);
    akey(c, GGUF_KEY_HEAD_COUNT_KV, kkv);
    akey(c, GGUF_KEY_EMBEDDING_LENGTH, ke);
    akey(c, GGUF_KEY_ROPE_DIM_COUNT, kr);
    gguf_hparams *hp = &c->hp;
    const int64_t heads = hp->v[GGUF_HP_HEAD_COUNT], embd = hp->v[GGUF_HP_EMBEDDING_LENGTH];
    if (hp->has[GGUF_HP_HEAD_COUNT_KV] && heads % hp->v[GGUF_HP_HEAD_COUNT_KV])
        return gguf_error_set(c->err, "%s = %" PRId64 " does not divide %s = %" PRId64, kkv,
                              hp->v[GGUF_HP_HEAD_COUNT_KV], kh, heads);
    for (const gguf_arch_hparam *r = c->row->hparams; r->id != GGUF_HP_COUNT; r++) {
        if (hp->has[r->id])
            continue;
        hp->set[r->id] = r->derive != GGUF_DERIVE_NONE;
        switch (r->derive) {
        case GGUF_DERIVE_HEAD_COUNT:
            hp->v[r->id] = heads;
            break;
        case GGUF_DERIVE_HEAD_SIZE:
            if (embd % heads)
                return gguf_error_set(c->err, "%s = %" PRId64 " does not divide %s = %" PRId64,
                                      kh, heads, ke, embd);
            hp->v[r->id] = embd / heads;
            break;
        case GGUF_DERIVE_KEY_LENGTH:
            hp->v[r->id] = hp->v[GGUF_HP_KEY_LENGTH];
            break;
        case GGUF_DERIVE_DEFAULT:
            hp->v[r->id] = (int64_t)r->def;
            hp->f[r->id] = r->def;
            break;
        case GGUF_DERIVE_ROPE_BASE: /* its row comes after rope.freq_base's */
            hp->f[r->id] = hp->f[GGUF_HP_ROPE_FREQ_BASE];
            break;
        case GGUF_DERIVE_CONTEXT_LENGTH: /* the same: after context_length's */
            hp->v[r->id] = hp->v[GGUF_HP_CONTEXT_LENGTH];
            break;
        }
    }
    if (check_layer_keys(c) || check_shared_kv(c) || check_experts_keys(c))
        return -1;
    hp->n_head_kv = hp->v[GGUF_HP_HEAD_COUNT_KV];
    hp->head_k = hp->v[GGUF_HP_KEY_LENGTH];
    hp->head_v = hp->v[GGUF_HP_VALUE_LENGTH];
    hp->n_rot = hp->v[GGUF_HP_ROPE_DIM];
    if (gguf_arch_has(c->row, GGUF_FEAT_ROPE_WHOLE_HEAD)) {
        if (hp->n_rot != hp->head_k)
            return gguf_error_set(c->err, "%s = %" PRId64 ", expected %" PRId64
                                  " (the head size: %s rotates whole heads)",
                                  kr, hp->n_rot, hp->head_k, c->arch);
    } else if (hp->n_rot < 2 || hp->n_rot % 2 || hp->n_rot > hp->head_k) {
        return gguf_error_set(c->err, "%s = %" PRId64 ", expected an even number from 2 to %" PRId64
                              " (the head size)", kr, hp->n_rot, hp->head_k);
    }
    if (check_mla_keys(c))
        return -1;
    /* M-RoPE: the sections share out the rotary pairs */
    if (hp->arr[GGUF_HP_ROPE_DIM_SECTIONS]) {
        int64_t sum = 0;
        for (int64_t i = 0; i < hp->n_arr[GGUF_HP_ROPE_DIM_SECTIONS]; i++)
            sum += hp->arr[GGUF_HP_ROPE_DIM_SECTIONS][i];
        char ks[128];
        if (sum < 1 || sum > hp->n_rot / 2)
            return gguf_error_set(c->err, "%s adds up to %" PRId64 ", expected 1 to %s / 2 = %" PRId64,
                                  akey(c, GGUF_KEY_ROPE_DIM_SECTIONS, ks), sum, kr, hp->n_rot / 2);
    }
    return 0;
}

/* DeepSeek-V2/V3's multi-head latent attention as llama.cpp's deepseek2
 * graph takes it (after derive: the rope width is known): one KV "head"
 * (head_count_kv 1), key_length the latent and the rope key
 * (kv_lora_rank + rope.dimension_count), value_length the latent alone,
 * and a head's key (key_length_mla) wider than its rotated part. */
static int check_mla_keys(checker *c)
{
    const gguf_hparams *hp = &c->hp;
    if (!gguf_arch_has(c->row, GGUF_FEAT_MLA))
        return 0;
    char k1[128], k2[128], k3[128];
    const int64_t lora = hp->v[GGUF_HP_KV_LORA_RANK];
    akey(c, GGUF_KEY_KV_LORA_RANK, k2);
    akey(c, GGUF_KEY_ROPE_DIM_COUNT, k3);
    if (hp->n_head_kv != 1)
        return gguf_error_set(c->err, "%s = %" PRId64 ", expected 1 (multi-head latent attention "
                              "keeps one latent per token)", akey(c, GGUF_KEY_HEAD_COUNT_KV, k1),
                              hp->n_head_kv);
    if (hp->head_k != lora + hp->n_rot)
        return gguf_error_set(c->err, "%s = %" PRId64 ", expected %s + %s = %" PRId64,
                              akey(c, GGUF_KEY_KEY_LENGTH, k1), hp->head_k, k2, k3,
                              lora + hp->n_rot);
    if (hp->head_v != lora)
        return gguf_error_set(c->err, "%s = %" PRId64 ", expected %s = %" PRId64,
                              akey(c, GGUF_KEY_VALUE_LENGTH, k1), hp->head_v, k2, lora);
    if (hp->v[GGUF_HP_KEY_LENGTH_MLA] <= hp->n_rot)
        return gguf_error_set(c->err, "%s = %" PRId64 ", expected more than %s = %" PRId64,
                              akey(c, GGUF_KEY_KEY_LENGTH_MLA, k1), hp->v[GGUF_HP_KEY_LENGTH_MLA],
                              k3, hp->n_rot);
    return 0;
}

static int check_hparams(checker *c)
{
    c->hp.arch = c->row;
    for (const gguf_arch_hparam *r = c->row->hparams; r->id != GGUF_HP_COUNT; r++)
        if (read_hparam(c, r))
            return -1;
    if (derive(c))
        return -1;
    c->n_blocks = c->hp.v[GGUF_HP_BLOCK_COUNT];
    /* an expert model of an architecture whose tables have no experts:
     * its tensors are checked only by the rules of every file */
    char key[128], text[24];
    mc_kv k;
    int64_t experts = 0;
    if (find(c, akey(c, GGUF_KEY_EXPERT_COUNT, key), &k)) {
        if (!int_value(&k, &experts, text))
            return type_error(c, key, &k, "an integer");
        c->hp.set[GGUF_HP_EXPERT_COUNT] = true;
    }
    c->hp.v[GGUF_HP_EXPERT_COUNT] = experts;
    c->tables = experts <= 0 || gguf_arch_has(c->row, GGUF_FEAT_EXPERTS);
    if (experts > 0 && gguf_arch_has(c->row, GGUF_FEAT_EXPERTS)) {
        /* the router picks expert_used_count of the experts per token */
        const int64_t used = c->hp.v[GGUF_HP_EXPERT_USED_COUNT];
        char ku[128];
        akey(c, GGUF_KEY_EXPERT_USED_COUNT, ku);
        if (!c->hp.has[GGUF_HP_EXPERT_USED_COUNT])
            return gguf_error_set(c->err, "%s = %" PRId64 " but %s is missing", key, experts, ku);
        if (used < 1 || used > experts)
            return gguf_error_set(c->err, "%s = %" PRId64 ", expected 1 to %s = %" PRId64, ku,
                                  used, key, experts);
    }
    return 0;
}

/* block_count of a file the table does not describe: used only to refuse
 * blocks beyond it, and only when it is a plain count. */
static void generic_block_count(checker *c)
{
    char key[128], text[24];
    mc_kv k;
    int64_t v;
    if (c->arch[0] && find(c, akey(c, GGUF_KEY_BLOCK_COUNT, key), &k) && int_value(&k, &v, text) &&
        v >= 0)
        c->n_blocks = v;
}

/* ---------------------------------------------------------------------------
 * Vocabulary
 */

/* Token texts by hash (open addressing, FNV-1a as in tokenizer.c). Empty
 * texts are left out: llama.cpp renames each to a unique "[EMPTY_<id>]". */
typedef struct text_set {
    const gguf_str *texts;
    int32_t        *slots; /* token id, -1 when free */
    uint64_t        mask;
} text_set;

static uint64_t hash_text(const char *s, uint64_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

/* The id holding text s, or -1; with insert, adds id when s is new. */
static int32_t set_find(text_set *t, const char *s, uint64_t len, int32_t insert)
{
    for (uint64_t i = hash_text(s, len) & t->mask;; i = (i + 1) & t->mask) {
        int32_t id = t->slots[i];
        if (id < 0) {
            if (insert >= 0)
                t->slots[i] = insert;
            return -1;
        }
        if (t->texts[id].len == len && memcmp(t->texts[id].ptr, s, len) == 0)
            return id;
    }
}

/* The texts of tokenizer.ggml.tokens as an array: the file's own, or one
 * built from a writer's packed strings into *owned. */
static int token_texts(checker *c, const mc_kv *k, const gguf_str **texts, gguf_str **owned)
{
    *owned = NULL;
    if (k->strs) {
        *texts = k->strs;
        return 0;
    }
    gguf_str *a = malloc((size_t)k->kv.n * sizeof *a);
    if (!a)
        return gguf_error_setc(c->err, GGUF_ERR_NOMEM, "out of memory for %" PRIu64 " tokens", k->kv.n);
    str_iter it = { k, 0, 0 };
    for (uint64_t i = 0; i < k->kv.n; i++)
        if (!str_next(&it, &a[i])) {
            free(a);
            return gguf_error_set(c->err, "%s: string %" PRIu64 " is malformed",
                                  GGUF_KEY_TOK_TOKENS, i);
        }
    *texts = *owned = a;
    return 0;
}

/* Token texts are unique (llama.cpp asserts it: its text → id map must be
 * as large as the list). */
static int check_unique(checker *c, text_set *t)
{
    for (int64_t id = 0; id < c->n_tokens; id++) {
        const gguf_str *s = &t->texts[id];
        if (s->len == 0)
            continue;
        int32_t other = set_find(t, s->ptr, s->len, (int32_t)id);
        if (other >= 0) {
            char pb[48];
            return gguf_error_set(c->err, "%s[%" PRId64 "] \"%s\" has the same text as token %d",
                                  GGUF_KEY_TOK_TOKENS, id, gguf_error_preview(s->ptr, s->len, pb), other);
        }
    }
    return 0;
}

/* BPE merges "LEFT RIGHT" (split at the first space after the first byte)
 * name two tokens (gguf-run's tokenizer refuses them otherwise). */
static int check_merges(checker *c, text_set *t)
{
    mc_kv k;
    if (!find(c, GGUF_KEY_TOK_MERGES, &k))
        return 0;
    if (k.kv.type != GGUF_VT_ARR || k.kv.elem_type != GGUF_VT_STR)
        return type_error(c, GGUF_KEY_TOK_MERGES, &k, "arr[str]");
    str_iter it = { &k, 0, 0 };
    gguf_str m;
    char pa[48], pb[48];
    for (uint64_t r = 0; r < k.kv.n; r++) {
        if (!str_next(&it, &m))
            return gguf_error_set(c->err, "%s: string %" PRIu64 " is malformed",
                                  GGUF_KEY_TOK_MERGES, r);
        const char *sp = m.len > 1 ? memchr(m.ptr + 1, ' ', m.len - 1) : NULL;
        if (!sp)
            return gguf_error_set(c->err,
                                  "%s[%" PRIu64 "] \"%s\" is not two pieces separated by a space",
                                  GGUF_KEY_TOK_MERGES, r, gguf_error_preview(m.ptr, m.len, pa));
        uint64_t ll = (uint64_t)(sp - m.ptr), rl = m.len - ll - 1;
        bool left = ll && set_find(t, m.ptr, ll, -1) >= 0;
        bool right = rl && set_find(t, sp + 1, rl, -1) >= 0;
        if (!left || !right)
            return gguf_error_set(c->err, "%s[%" PRIu64 "] \"%s\": piece \"%s\" is not a token",
                                  GGUF_KEY_TOK_MERGES, r, gguf_error_preview(m.ptr, m.len, pb),
                                  !left ? gguf_error_preview(m.ptr, ll, pa) : gguf_error_preview(sp + 1, rl, pa));
    }
    return 0;
}

/* SPM byte tokens (type 6) read <0xNN> (gguf-run's tokenizer maps bytes
 * through them). */
static int check_byte_tokens(checker *c, const gguf_str *texts, const mc_kv *types)
{
    for (int64_t id = 0; id < c->n_tokens; id++) {
        const gguf_str *s = &texts[id];
        if (gguf_kv_elem_as_int(&types->kv, (uint64_t)id) != GGUF_TOKEN_BYTE)
            continue;
        if (s->len == 6 && !memcmp(s->ptr, "<0x", 3) && isxdigit((unsigned char)s->ptr[3]) &&
            isxdigit((unsigned char)s->ptr[4]) && s->ptr[5] == '>')
            continue;
        char pb[48];
        return gguf_error_set(c->err, "%s[%" PRId64 "] \"%s\" is a byte token (type 6) but not "
                              "of the form <0xNN>", GGUF_KEY_TOK_TOKENS, id,
                              gguf_error_preview(s->ptr, s->len, pb));
    }
    return 0;
}

/* Whether s holds sub, ignoring ASCII case. */
static bool contains_nocase(gguf_str s, const char *sub)
{
    const size_t n = strlen(sub);
    for (size_t i = 0; i + n <= s.len; i++) {
        size_t j = 0;
        while (j < n && tolower((unsigned char)s.ptr[i + j]) == sub[j])
            j++;
        if (j == n)
            return true;
    }
    return false;
}

/* llama.cpp gives Phi-3's special tokens their strip attributes by looking
 * four of them up by text, and fails to load a vocabulary without them: a
 * general.name holding "phi-3" or "phi3" (any case) needs <unk>, <s>, </s>
 * and <|endoftext|> (its jina rules, tested first, spare a jina-v2
 * pre-tokenizer and the nomic-bert-moe and jina-bert-v3 architectures). */
static int check_phi3_tokens(checker *c, text_set *t)
{
    static const char *const needed[] = { "<unk>", "<s>", "</s>", "<|endoftext|>" };
    mc_kv k;
    gguf_str name, pre = { "", 0 }, arch = { c->arch, strlen(c->arch) };
    if (!find(c, GGUF_KEY_NAME, &k) || !kv_str(&k, &name) ||
        !(contains_nocase(name, "phi-3") || contains_nocase(name, "phi3")))
        return 0;
    if (find(c, GGUF_KEY_TOK_PRE, &k))
        kv_str(&k, &pre);
    if (contains_nocase(pre, "jina-v2-de") || contains_nocase(pre, "jina-v2-es") ||
        contains_nocase(pre, "jina-v2-code") || contains_nocase(arch, "nomic-bert-moe") ||
        contains_nocase(arch, "jina-bert-v3"))
        return 0;
    for (size_t i = 0; i < sizeof needed / sizeof *needed; i++)
        if (set_find(t, needed[i], strlen(needed[i]), -1) < 0) {
            char pb[48];
            return gguf_error_set(c->err, "%s \"%s\" makes llama.cpp treat the vocabulary as "
                                  "Phi-3's, which needs the token %s", GGUF_KEY_NAME,
                                  gguf_error_preview(name.ptr, name.len, pb), needed[i]);
        }
    return 0;
}

/* The token-text rules: unique texts, BPE merges naming tokens, SPM byte
 * tokens of the form <0xNN>, Phi-3's named tokens. */
static int check_texts(checker *c, const mc_kv *tokens, gguf_str model, const mc_kv *types)
{
    const gguf_str *texts = NULL;
    gguf_str *owned;
    if (token_texts(c, tokens, &texts, &owned))
        return -1;
    uint64_t n_slots = 1;
    while (n_slots < 2 * (uint64_t)c->n_tokens)
        n_slots <<= 1;
    text_set t = { texts, malloc((size_t)n_slots * sizeof *t.slots), n_slots - 1 };
    int rc = -1;
    if (!t.slots) {
        gguf_error_setc(c->err, GGUF_ERR_NOMEM, "out of memory for %" PRId64 " tokens", c->n_tokens);
        goto done;
    }
    memset(t.slots, 0xff, (size_t)n_slots * sizeof *t.slots);
    if (check_unique(c, &t))
        goto done;
    if ((gguf_str_eq(model, "gpt2") || gguf_str_eq(model, "gemma4")) && check_merges(c, &t))
        goto done;
    if (gguf_str_eq(model, "llama") && types && check_byte_tokens(c, texts, types))
        goto done;
    if (check_phi3_tokens(c, &t))
        goto done;
    rc = 0;
done:
    free(t.slots);
    free(owned);
    return rc;
}

/* An array parallel to the tokens: elem elements, one per token. */
static int parallel(checker *c, const char *key, uint32_t elem, mc_kv *k, bool *present)
{
    char want[32];
    *present = find(c, key, k);
    if (!*present)
        return 0;
    snprintf(want, sizeof want, "arr[%s]", gguf_vtype_name(elem));
    if (k->kv.type != GGUF_VT_ARR || k->kv.elem_type != elem)
        return type_error(c, key, k, want);
    if (k->kv.n != (uint64_t)c->n_tokens)
        return gguf_error_set(c->err,
                              "%s has %" PRIu64 " elements but there are %" PRId64 " tokens", key,
                              k->kv.n, c->n_tokens);
    return 0;
}

/* Special-token ids: inside the vocabulary, or -1 (u32 0xFFFFFFFF) for
 * "none" (the keys gguf-run's tokenizer reads). */
static int check_special_ids(checker *c)
{
    const char *const *keys = gguf_special_keys;
    for (size_t i = 0; i < GGUF_SPECIAL_COUNT; i++) {
        mc_kv k;
        int64_t id;
        char text[24];
        if (!find(c, keys[i], &k))
            continue;
        if (!int_value(&k, &id, text))
            return type_error(c, keys[i], &k, "an integer");
        if (id == -1 || (k.kv.type == GGUF_VT_U32 && id == UINT32_MAX))
            continue;
        if (id < 0 || id >= c->n_tokens)
            return gguf_error_set(c->err, "%s = %s is outside the vocabulary of %" PRId64 " tokens",
                                  keys[i], text, c->n_tokens);
    }
    return 0;
}

/* Keys the tokenizer reads with one type. */
static int check_typed_keys(checker *c)
{
    static const struct {
        const char *key;
        uint32_t    type;
    } keys[] = {
        { GGUF_KEY_TOK_PRE, GGUF_VT_STR },         { GGUF_KEY_TOK_ADD_BOS, GGUF_VT_BOOL },
        { GGUF_KEY_TOK_ADD_EOS, GGUF_VT_BOOL },    { KEY_ADD_SPACE_PREFIX, GGUF_VT_BOOL },
    };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        mc_kv k;
        if (find(c, keys[i].key, &k) && k.kv.type != keys[i].type)
            return type_error(c, keys[i].key, &k, gguf_vtype_name(keys[i].type));
    }
    return 0;
}

/* Token types are llama.cpp's llama_token_type values, 0 (undefined) to 6
 * (byte). */
static int check_token_types(checker *c, const mc_kv *types)
{
    for (uint64_t i = 0; i < types->kv.n; i++) {
        int64_t t = gguf_kv_elem_as_int(&types->kv, i);
        if (t < GGUF_TOKEN_UNDEFINED || t > GGUF_TOKEN_BYTE)
            return gguf_error_set(c->err, "%s[%" PRIu64 "] = %" PRId64
                                  " is not a token type (0-6)", GGUF_KEY_TOK_TYPES, i, t);
    }
    return 0;
}

/* {arch}.vocab_size, when given, counts the same tokens. */
static int check_declared_size(checker *c)
{
    char key[128], text[24];
    mc_kv k;
    int64_t vs;
    if (!c->arch[0] || !find(c, akey(c, GGUF_KEY_VOCAB_SIZE, key), &k))
        return 0;
    if (!int_value(&k, &vs, text))
        return type_error(c, key, &k, "an integer");
    if (vs != c->n_tokens)
        return gguf_error_set(c->err, "%s = %s but %s has %" PRId64 " tokens", key, text,
                              GGUF_KEY_TOK_TOKENS, c->n_tokens);
    return 0;
}

/* Finds tokenizer.ggml.model (into *model, "" when absent) and the token
 * list: 1 with it in *tokens, 0 when the file has no vocabulary. */
static int find_vocab(checker *c, gguf_str *model, mc_kv *tokens)
{
    mc_kv k;
    *model = (gguf_str){ "", 0 };
    bool has_model = find(c, GGUF_KEY_TOK_MODEL, &k);
    if (has_model && !kv_str(&k, model))
        return type_error(c, GGUF_KEY_TOK_MODEL, &k, "str");
    /* a model of a described architecture says what its vocabulary is
     * (llama.cpp requires the key) */
    if (c->row && !has_model)
        return gguf_error_set(c->err, "missing key %s (a %s model needs a vocabulary)",
                              GGUF_KEY_TOK_MODEL, c->arch);
    if (find(c, GGUF_KEY_TOK_TOKENS, tokens))
        return 1;
    if (has_model && !gguf_str_eq(*model, "none") && !gguf_str_eq(*model, "no_vocab")) {
        char pb[48];
        return gguf_error_set(c->err, "missing key %s (%s is \"%s\")", GGUF_KEY_TOK_TOKENS,
                              GGUF_KEY_TOK_MODEL, gguf_error_preview(model->ptr, model->len, pb));
    }
    return 0;
}

static int check_vocab(checker *c)
{
    mc_kv tokens, scores, types;
    gguf_str model;
    int found = find_vocab(c, &model, &tokens);
    if (found <= 0)
        return found;
    if (tokens.kv.type != GGUF_VT_ARR || tokens.kv.elem_type != GGUF_VT_STR)
        return type_error(c, GGUF_KEY_TOK_TOKENS, &tokens, "arr[str]");
    if (tokens.kv.n == 0)
        return gguf_error_set(c->err, "%s is empty", GGUF_KEY_TOK_TOKENS);
    if (tokens.kv.n > (uint64_t)INT32_MAX / 4)
        return gguf_error_setc(c->err, GGUF_ERR_LIMIT, "%s has %" PRIu64 " tokens, more than token ids can number",
                              GGUF_KEY_TOK_TOKENS, tokens.kv.n);
    c->n_tokens = c->hp.n_vocab = (int64_t)tokens.kv.n;
    snprintf(c->vocab_src, sizeof c->vocab_src, "the vocabulary has %" PRId64 " tokens",
             c->hp.n_vocab);
    bool has_scores, has_types;
    if (parallel(c, GGUF_KEY_TOK_SCORES, GGUF_VT_F32, &scores, &has_scores) ||
        parallel(c, GGUF_KEY_TOK_TYPES, GGUF_VT_I32, &types, &has_types) ||
        (has_types && check_token_types(c, &types)) || check_special_ids(c) ||
        check_typed_keys(c) || check_texts(c, &tokens, model, has_types ? &types : NULL) ||
        check_declared_size(c))
        return -1;
    return 0;
}

/* ---------------------------------------------------------------------------
 * Tensors
 */

/* The row's tensor rules, split into globals and per-block ones. */
#define MAX_RULES 64
typedef struct rule_list {
    const gguf_arch_tensor *glob[MAX_RULES], *blk[MAX_RULES];
    size_t                  n_glob, n_blk;
} rule_list;

#define BLOCK_PREFIX "blk.%d."

static void list_rules(const gguf_arch *row, rule_list *l)
{
    l->n_glob = l->n_blk = 0;
    const gguf_arch_tensor *r;
    for (size_t i = 0; (r = gguf_arch_tensor_at(row, i)); i++) {
        if (gguf_arch_tensor_per_block(r) && l->n_blk < MAX_RULES)
            l->blk[l->n_blk++] = r;
        else if (!gguf_arch_tensor_per_block(r) && l->n_glob < MAX_RULES)
            l->glob[l->n_glob++] = r;
    }
}

static void shape_text(const int64_t *ne, uint32_t n, char *buf, size_t size)
{
    size_t o = (size_t)snprintf(buf, size, "[");
    for (uint32_t i = 0; i < n && o < size; i++)
        o += (size_t)snprintf(buf + o, size - o, "%s%" PRId64, i ? ", " : "", ne[i]);
    if (o < size)
        snprintf(buf + o, size - o, "]");
}

/* "NAME has R rows but <where the vocabulary size comes from>" */
static int rows_error(checker *c, const char *name, int64_t rows)
{
    return gguf_error_set(c->err, "%s has %" PRId64 " rows but %s", name, rows, c->vocab_src);
}

/* dim's value in block (a global: block -1) */
static int64_t dim_in(const checker *c, int dim, int block)
{
    return block < 0 ? gguf_hparams_dim(&c->hp, dim) : gguf_hparams_layer_dim(&c->hp, dim, block);
}

static int check_shape(checker *c, const gguf_arch_tensor *r, const mc_tensor *t, int block)
{
    const int64_t want[GGUF_MAX_DIMS] = { dim_in(c, r->ne[0], block), dim_in(c, r->ne[1], block),
                                         dim_in(c, r->ne[2], block), 1 };
    if (!memcmp(want, t->ne, sizeof want))
        return 0;
    if (r->ne[1] == GGUF_DIM_VOCAB && t->ne[0] == want[0] && t->ne[2] == 1 && t->ne[3] == 1)
        return rows_error(c, t->name, t->ne[1]);
    char have[96], exp[64], why[96];
    shape_text(t->ne, t->n_dims ? t->n_dims : 1, have, sizeof have);
    shape_text(want, r->ne[2] != GGUF_DIM_1 ? 3 : r->ne[1] == GGUF_DIM_1 ? 1 : 2, exp, sizeof exp);
    if (r->ne[2] != GGUF_DIM_1)
        snprintf(why, sizeof why, "%s, %s, %s", gguf_dim_name(r->ne[0]), gguf_dim_name(r->ne[1]),
                 gguf_dim_name(r->ne[2]));
    else if (r->ne[1] == GGUF_DIM_1)
        snprintf(why, sizeof why, "%s", gguf_dim_name(r->ne[0]));
    else
        snprintf(why, sizeof why, "%s, %s", gguf_dim_name(r->ne[0]), gguf_dim_name(r->ne[1]));
    return gguf_error_set(c->err, "tensor %s has shape %s, expected %s (%s)", t->name, have, exp,
                          why);
}

/* GGUF_DIM_VOCAB without a token list (check_vocab sets it from one): the
 * declared {arch}.vocab_size, else token_embd's own rows. */
static int vocab_size(checker *c, int64_t embd_rows)
{
    char key[128], text[24];
    mc_kv k;
    int64_t vs;
    if (c->n_tokens >= 0)
        return 0;
    if (find(c, akey(c, GGUF_KEY_VOCAB_SIZE, key), &k)) {
        if (!int_value(&k, &vs, text))
            return type_error(c, key, &k, "an integer");
        c->hp.n_vocab = vs;
        snprintf(c->vocab_src, sizeof c->vocab_src, "%s = %s", key, text);
    } else {
        c->hp.n_vocab = embd_rows;
        snprintf(c->vocab_src, sizeof c->vocab_src, "%s has %" PRId64 " rows", GGUF_T_TOKEN_EMBD,
                 embd_rows);
    }
    if (c->hp.n_vocab < 1)
        return gguf_error_set(c->err, "%s: expected at least one token", c->vocab_src);
    return 0;
}

/* Every tensor by name: blocks within block_count, and (with the tables)
 * each one known; slot[rule] = tensor index + 1. */
static int scan_names(checker *c, const rule_list *l, uint64_t *slots, mc_tensor *embd)
{
    mc_tensor t;
    embd->name = NULL;
    for (uint64_t i = 0; i < c->v->n_tensors; i++) {
        c->v->tensor(c->v->src, i, &t);
        int64_t b;
        const char *rest;
        bool known = false;
        if (gguf_parse_block_name(t.name, &b, &rest)) {
            if (c->n_blocks >= 0 && b >= c->n_blocks) {
                char key[128];
                gguf_error_set(c->err, "tensor %s: block %" PRId64 " is beyond %s = %" PRId64,
                               t.name, b, akey(c, GGUF_KEY_BLOCK_COUNT, key), c->n_blocks);
                if (tensor_problem(c))
                    return -1;
                continue;
            }
            /* a row of the block's kind first (two rows may share a name,
             * one per kind of block), then any */
            for (int pass = 0; pass < 2; pass++)
                for (size_t r = 0; l && r < l->n_blk && !known; r++)
                    if (!strcmp(l->blk[r]->name + strlen(BLOCK_PREFIX), rest) &&
                        (pass || gguf_hparams_layer_in(&c->hp, l->blk[r]->layers, b))) {
                        slots[l->n_glob + (uint64_t)b * l->n_blk + r] = i + 1;
                        known = true;
                    }
        } else {
            for (size_t r = 0; l && r < l->n_glob && !known; r++)
                if (!strcmp(l->glob[r]->name, t.name)) {
                    slots[r] = i + 1;
                    known = true;
                }
        }
        if (l && !known) {
            gguf_error_set(c->err, "tensor %s is not a %s tensor", t.name, c->arch);
            if (tensor_problem(c))
                return -1;
        }
        if (!strcmp(t.name, GGUF_T_TOKEN_EMBD))
            *embd = t;
    }
    return 0;
}

/* One table tensor: present when required, of its shape when present. */
/* A per-block row of a Gemma 4 kind (sliding or full, own or shared KV)
 * in a block of the other kind: optional there, as llama.cpp loads attn_k
 * where it is and requires it only where the block has its own KV; its
 * shape is that block's. 1 when the row was dealt with here. */
static int check_other_kind(checker *c, const gguf_arch_tensor *r, uint64_t slot, int block,
                            int *rc)
{
    if (block < 0 || r->layers < GGUF_LAYERS_SLIDING || r->layers > GGUF_LAYERS_SHARED_KV ||
        gguf_hparams_layer_in(&c->hp, r->layers, block))
        return 0;
    *rc = 0;
    if (slot) {
        mc_tensor t;
        c->v->tensor(c->v->src, slot - 1, &t);
        *rc = check_shape(c, r, &t, block);
    }
    return 1;
}

/* Whether a row that is not there must be: the public rule, and the two
 * needs only the hyper-parameters decide (a global GGUF_NEED_IN_LAYERS row
 * when some block is of its kind; the per-layer inputs when they have a
 * width). */
static bool required_here(const checker *c, const gguf_arch_tensor *r, int block)
{
    if (r->need == GGUF_NEED_PER_LAYER_INPUTS)
        return c->hp.v[GGUF_HP_EMBD_PER_LAYER] > 0;
    if (r->need == GGUF_NEED_IN_LAYERS && block < 0) {
        for (int64_t b = 0; b < c->n_blocks; b++)
            if (gguf_hparams_layer_in(&c->hp, r->layers, b))
                return true;
        return false;
    }
    return gguf_arch_tensor_required_for(c->row, r, c->hp.v[GGUF_HP_EXPERT_COUNT] > 0);
}

static int check_rule(checker *c, const gguf_arch_tensor *r, uint64_t slot, int block)
{
    int rc;
    if (check_other_kind(c, r, slot, block, &rc))
        return rc;
    if (block >= 0 && r->layers != GGUF_LAYERS_ALL && !gguf_hparams_layer_in(&c->hp, r->layers, block)) {
        if (!slot)
            return 0;
        char name[GGUF_MAX_NAME + 16], key[128];
        snprintf(name, sizeof name, r->name, block);
        /* GLM-4.5's kinds: by leading_dense_block_count, nextn_predict_layers */
        if (r->layers == GGUF_LAYERS_LEADING_DENSE || r->layers == GGUF_LAYERS_MOE)
            return gguf_error_set(c->err, "tensor %s: block %d is a%s block (%s = %" PRId64
                                  "), %s is only in %s blocks", name, block,
                                  r->layers == GGUF_LAYERS_MOE ? " dense" : "n moe",
                                  akey(c, GGUF_KEY_LEADING_DENSE_BLOCK_COUNT, key),
                                  c->hp.v[GGUF_HP_LEADING_DENSE_BLOCK_COUNT],
                                  gguf_role_name(r->role), gguf_layers_name(r->layers));
        if (r->layers == GGUF_LAYERS_NEXTN)
            return gguf_error_set(c->err, "tensor %s: block %d is not a next-token-prediction "
                                  "block (%s = %" PRId64 "), %s is only in nextn blocks", name,
                                  block, akey(c, GGUF_KEY_NEXTN_PREDICT_LAYERS, key),
                                  c->hp.v[GGUF_HP_NEXTN_PREDICT_LAYERS], gguf_role_name(r->role));
        /* the kind of the block: the first kind that has it */
        int kind = GGUF_LAYERS_ALL + 1;
        while (kind < GGUF_LAYERS_COUNT - 1 && !gguf_hparams_layer_in(&c->hp, kind, block))
            kind++;
        return gguf_error_set(c->err, "tensor %s: block %d is a%s %s block (%s = %" PRId64
                              "), %s is only in %s blocks", name, block,
                              kind == GGUF_LAYERS_ATTENTION ? "n" : "", gguf_layers_name(kind),
                              akey(c, GGUF_KEY_FULL_ATTN_INTERVAL, key),
                              c->hp.v[GGUF_HP_FULL_ATTN_INTERVAL], gguf_role_name(r->role),
                              gguf_layers_name(r->layers));
    }
    if (!slot) {
        if (!required_here(c, r, block))
            return 0;
        char name[GGUF_MAX_NAME + 16];
        snprintf(name, sizeof name, r->name, block);
        return gguf_error_set(c->err, "missing tensor %s", name);
    }
    mc_tensor t;
    c->v->tensor(c->v->src, slot - 1, &t);
    return check_shape(c, r, &t, block);
}

static int check_tensors(checker *c)
{
    rule_list l;
    uint64_t *slots = NULL;
    const bool tables = c->row && c->tables;
    if (tables) {
        list_rules(c->row, &l);
        slots = calloc(l.n_glob + (size_t)c->n_blocks * l.n_blk, sizeof *slots);
        if (!slots)
            return gguf_error_setc(c->err, GGUF_ERR_NOMEM, "out of memory");
    }
    mc_tensor embd;
    int rc = -1;
    if (scan_names(c, tables ? &l : NULL, slots, &embd))
        goto done;
    /* token_embd's rows are the vocabulary (every architecture) */
    if (embd.name && c->n_tokens >= 0 && embd.ne[1] != c->n_tokens) {
        rows_error(c, embd.name, embd.ne[1]);
        if (tensor_problem(c))
            goto done;
    }
    if (tables) {
        if (vocab_size(c, embd.name ? embd.ne[1] : -1))
            goto done;
        for (size_t r = 0; r < l.n_glob; r++)
            if (check_rule(c, l.glob[r], slots[r], -1) && tensor_problem(c))
                goto done;
        for (int64_t b = 0; b < c->n_blocks; b++)
            for (size_t r = 0; r < l.n_blk; r++)
                if (check_rule(c, l.blk[r], slots[l.n_glob + (uint64_t)b * l.n_blk + r], (int)b) &&
                    tensor_problem(c))
                    goto done;
    }
    rc = 0;
done:
    free(slots);
    return rc;
}

/* ===========================================================================
 * Entry points
 */

/* The rules in order. Without a report function: 0, or -1 at the first
 * problem. With one: the number of problems (each reported), a problem
 * before the tensors ending the check; -1 only when out of memory. */
static int validate(const mc_view *v, gguf_error *err, gguf_model_problem_fn *report, void *ctx)
{
    checker c = { .v = v, .err = err, .n_blocks = -1, .n_tokens = -1, .hp.n_vocab = -1,
                  .report = report, .report_ctx = ctx };
    int rc = check_identity(&c);
    if (!rc && c.row)
        rc = check_hparams(&c);
    else if (!rc)
        generic_block_count(&c);
    rc = rc ? rc : check_vocab(&c);
    rc = rc ? rc : check_tensors(&c);
    gguf_hparams_release(&c.hp);
    if (!report)
        return rc;
    if (rc && err->code == GGUF_ERR_NOMEM)
        return -1;
    if (rc) {
        report(ctx, err);
        c.n_problems++;
    }
    return c.n_problems;
}

int gguf_model_validate(const gguf_file *f, gguf_error *err)
{
    const mc_view v = { f, file_find, file_tensor, gguf_n_tensors(f) };
    return validate(&v, err, NULL, NULL);
}

int gguf_model_check(const gguf_file *f, gguf_model_problem_fn *fn, void *ctx, gguf_error *err)
{
    const mc_view v = { f, file_find, file_tensor, gguf_n_tensors(f) };
    gguf_error local = { 0 };
    return validate(&v, err ? err : &local, fn, ctx);
}

int gguf_model_validate_writer(const gguf_writer *w, gguf_error *err)
{
    const mc_view v = { w, writer_find, writer_tensor, gguf_writer_n_tensors(w) };
    return validate(&v, err, NULL, NULL);
}

static int hparams_read_view(const mc_view *v, gguf_hparams **out, gguf_error *err)
{
    checker c = { .v = v, .err = err, .n_blocks = -1, .n_tokens = -1, .hp.n_vocab = -1 };
    *out = NULL;
    if (check_identity(&c))
        return -1;
    if (!c.arch[0])
        return gguf_error_set(err, "missing key %s", GGUF_KEY_ARCHITECTURE);
    if (!(c.row = gguf_arch_find(c.arch)))
        return gguf_error_setc(err, GGUF_ERR_UNSUPPORTED, "architecture \"%s\" is not registered",
                               c.arch);
    if (check_hparams(&c)) {
        gguf_hparams_release(&c.hp);
        return -1;
    }
    /* the vocabulary size: the token list, else {arch}.vocab_size, else
     * token_embd's rows */
    mc_kv kv;
    char key[128];
    int64_t vs;
    mc_tensor embd = { 0 };
    for (uint64_t i = 0; i < v->n_tensors && !embd.name; i++) {
        v->tensor(v->src, i, &embd);
        if (strcmp(embd.name, GGUF_T_TOKEN_EMBD))
            embd.name = NULL;
    }
    if (v->find(v->src, GGUF_KEY_TOK_TOKENS, &kv) && kv.kv.type == GGUF_VT_ARR &&
        kv.kv.elem_type == GGUF_VT_STR)
        c.hp.n_vocab = (int64_t)kv.kv.n;
    else if (v->find(v->src, akey(&c, GGUF_KEY_VOCAB_SIZE, key), &kv) && gguf_kv_int(&kv.kv, &vs))
        c.hp.n_vocab = vs;
    else if (embd.name)
        c.hp.n_vocab = embd.ne[1];
    if (!(*out = malloc(sizeof **out))) {
        gguf_hparams_release(&c.hp);
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    }
    **out = c.hp; /* the arrays move with it */
    return 0;
}

int gguf_hparams_read(const gguf_file *f, gguf_hparams **out, gguf_error *err)
{
    const mc_view v = { f, file_find, file_tensor, gguf_n_tensors(f) };
    return hparams_read_view(&v, out, err);
}

int gguf_hparams_read_writer(const gguf_writer *w, gguf_hparams **out, gguf_error *err)
{
    const mc_view v = { w, writer_find, writer_tensor, gguf_writer_n_tensors(w) };
    return hparams_read_view(&v, out, err);
}
