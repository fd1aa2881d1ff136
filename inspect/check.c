/*
 * check.c — `gguf-inspect --check` (see check.h): structure, the model's
 * semantic rules (gguf/modelcheck.h), then a NaN/Inf scan of every float
 * tensor's data, one problem row per affected tensor.
 */
#include "check.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <ggufkit/arch.h>
#include <ggufkit/quants.h>
#include "clipcheck.h"
#include "stream.h"

typedef struct nonfinite {
    uint64_t nan, inf;
    uint64_t first; /* element index of the first NaN or Inf */
} nonfinite;

/* Bit layout of one IEEE-style float kind (quants.h's gguf_scale_kind):
 * its size and the exponent and mantissa masks of its bit pattern. */
typedef struct float_layout {
    uint32_t size;
    uint64_t exp, mant;
} float_layout;

static const float_layout kind_layouts[] = {
    [GGUF_SCALE_F16] = { 2, 0x7c00u, 0x03ffu },
    [GGUF_SCALE_BF16] = { 2, 0x7f80u, 0x007fu },
    [GGUF_SCALE_F32] = { 4, 0x7f800000u, 0x007fffffu },
    [GGUF_SCALE_F64] = { 8, 0x7ff0000000000000u, 0x000fffffffffffffu },
};

/* Where a type's floats are (gguf_dtype_scales): a plain float type is
 * scanned element by element (elem), a block type by the scale fields of
 * each block (n of them). A type with neither (integers, nvfp4) has no
 * float that can be NaN or Inf. */
typedef struct floats_of {
    const float_layout *elem;
    int                 n;
    gguf_scale_field    f[GGUF_MAX_SCALE_FIELDS];
} floats_of;

#define N_KINDS (sizeof kind_layouts / sizeof *kind_layouts)

/* The layout of an IEEE-style kind, or NULL (E8M0, iq1_m's packed f16). */
static const float_layout *kind_layout(uint32_t kind)
{
    return kind < N_KINDS && kind_layouts[kind].size ? &kind_layouts[kind] : NULL;
}

static void floats_of_type(uint32_t type, floats_of *o)
{
    const gguf_dtype_traits *tr = gguf_dtype_get(type);
    o->elem = NULL;
    o->n = tr ? gguf_dtype_scales(type, o->f) : -1;
    if (o->n < 0)
        o->n = 0;
    if (o->n == 1 && tr->blck_size == 1) {
        o->elem = kind_layout(o->f[0].kind);
        o->n = 0;
    }
}

/* Little-endian load of `size` bytes. With the constant sizes of the calls
 * below, the memcpy becomes one plain load (and the count loop vectorizes). */
static inline uint64_t load_le(const uint8_t *p, uint32_t size)
{
    uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (uint32_t i = 0; i < size; i++)
        v |= (uint64_t)p[i] << (8 * i);
#else
    memcpy(&v, p, size);
#endif
    return v;
}

/* Elements of p[0..n) whose exponent bits are all ones. Branch-free, so the
 * compiler vectorizes it: a clean block costs one pass at memory speed. */
static inline uint64_t count_special(const uint8_t *p, size_t n, uint32_t size, uint64_t exp)
{
    uint64_t k = 0;
    for (size_t i = 0; i < n; i++, p += size)
        k += (load_le(p, size) & exp) == exp;
    return k;
}

/* Counts the NaNs and Infs of p[0..n); `base` is p[0]'s element index in
 * the tensor. Blocks without any are skipped after the fast count. */
static inline void scan(const uint8_t *p, size_t n, uint64_t base, uint32_t size, uint64_t exp,
                        uint64_t mant, nonfinite *c)
{
    enum { BLOCK = 4096 };
    for (size_t b = 0; b < n; b += BLOCK) {
        size_t m = n - b < BLOCK ? n - b : BLOCK;
        const uint8_t *q = p + b * size;
        if (count_special(q, m, size, exp) == 0)
            continue;
        for (size_t i = 0; i < m; i++, q += size) {
            uint64_t v = load_le(q, size);
            if ((v & exp) != exp)
                continue;
            if (c->nan + c->inf == 0)
                c->first = base + b + i;
            if (v & mant)
                c->nan++;
            else
                c->inf++;
        }
    }
}

/* One instantiation per element size, so each loop has constant masks. The
 * data is read in released pieces (stream.h): memory stays bounded however
 * large the tensor. */
static void scan_tensor(const gguf_file *f, const gguf_tensor *t, const float_layout *l,
                        nonfinite *c)
{
    stream s;
    const uint8_t *p;
    size_t n;
    stream_begin(&s, f, t->data, t->nbytes);
    while ((n = stream_next(&s, &p)) > 0) {
        uint64_t base = s.pos / l->size;
        switch (l->size) {
        case 2: scan(p, n / 2, base, 2, l->exp, l->mant, c); break;
        case 4: scan(p, n / 4, base, 4, l->exp, l->mant, c); break;
        default: scan(p, n / 8, base, 8, l->exp, l->mant, c); break;
        }
    }
}

/* One block's scales: adds its NaN and Inf scales to c. */
static void scan_scales(const uint8_t *blk, const floats_of *l, uint64_t elem,
                        nonfinite *c)
{
    for (int k = 0; k < l->n; k++) {
        const uint8_t *p = blk + l->f[k].offset;
        bool nan = false, inf = false;
        uint64_t v = 0;
        const float_layout *fl = &kind_layouts[GGUF_SCALE_F16];
        switch (l->f[k].kind) {
        case GGUF_SCALE_E8M0:
            nan = *p == 0xff;
            break;
        case GGUF_SCALE_IQ1_M: { /* the f16 scale's nibbles are the top of the 4 scale words */
            uint16_t sc[4];
            memcpy(sc, p, 8);
            v = (uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) |
                           (sc[3] & 0xf000));
            nan = (v & fl->exp) == fl->exp && (v & fl->mant);
            inf = (v & fl->exp) == fl->exp && !(v & fl->mant);
            break;
        }
        default: /* F16, BF16, F32, F64 */
            if (!(fl = kind_layout(l->f[k].kind)))
                continue;
            v = load_le(p, fl->size);
            nan = (v & fl->exp) == fl->exp && (v & fl->mant);
            inf = (v & fl->exp) == fl->exp && !(v & fl->mant);
            break;
        }
        if ((nan || inf) && c->nan + c->inf == 0)
            c->first = elem;
        c->nan += nan;
        c->inf += inf;
    }
}

/* The scales of every block of a quantized tensor, in released pieces of
 * whole blocks (memory stays bounded). */
static void scan_quantized(const gguf_file *f, const gguf_tensor *t, const floats_of *l,
                           nonfinite *c)
{
    const gguf_dtype_traits *tr = gguf_dtype_get(t->type);
    const uint64_t bs = tr->type_size, per = STREAM_CHUNK / bs * bs;
    for (uint64_t off = 0; off < t->nbytes; off += per) {
        const uint64_t len = t->nbytes - off < per ? t->nbytes - off : per;
        for (uint64_t b = 0; b + bs <= len; b += bs)
            scan_scales(t->data + off + b, l, (off + b) / bs * tr->blck_size, c);
        gguf_release_range(f, t->data + off, len);
    }
}

int check_deepseek2_lite(const char *arch, int64_t blocks, int64_t vocab, int64_t q_lora, char *msg,
                         size_t size)
{
    const bool lite = blocks == 26 || blocks == 27 || (blocks == 48 && vocab == 128256);
    if (!lite && q_lora < 0) {
        snprintf(msg, size, "%s.attention.q_lora_rank is missing: llama.cpp e21cdc11 loads a "
                 "deepseek2 without it only at 26 or 27 blocks (or 48 with 128256 tokens), not at "
                 "%lld blocks (%lld tokens): it refuses this file", arch, (long long)blocks,
                 (long long)vocab);
        return 1;
    }
    if (lite && q_lora > 0) {
        snprintf(msg, size, "%s.attention.q_lora_rank = %lld at %lld blocks (%lld tokens): "
                 "llama.cpp e21cdc11 takes such a deepseek2 for a lite one, ignores the key and "
                 "wants attn_q in place of attn_q_a / attn_q_b: it refuses this file", arch,
                 (long long)q_lora, (long long)blocks, (long long)vocab);
        return 1;
    }
    return 0;
}

/* An integer key's value, or dflt when absent or not an integer. */
static int64_t key_int(const gguf_file *f, const char *arch, const char *fmt, int64_t dflt)
{
    char key[160];
    int64_t v;
    snprintf(key, sizeof key, fmt, arch);
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    return kv && gguf_kv_int(kv, &v) ? v : dflt;
}

int check_llama_loader(const gguf_file *f, char *msg, size_t size)
{
    gguf_str a;
    gguf_error err;
    if (gguf_get_str(f, GGUF_KEY_ARCHITECTURE, &a, &err) || a.len != 9 || memcmp(a.ptr, "deepseek2", 9))
        return 0;
    /* a model (a LoRA adapter has no hyper-parameters of its own) */
    gguf_str type;
    if (!gguf_get_str(f, "general.type", &type, &err) && !(type.len == 5 && !memcmp(type.ptr, "model", 5)))
        return 0;
    /* the loader's n_vocab: {arch}.vocab_size, else the token list's length */
    const gguf_kv *toks = gguf_lookup_kv(f, GGUF_KEY_TOK_TOKENS);
    int64_t vocab = key_int(f, "deepseek2", GGUF_KEY_VOCAB_SIZE, -1);
    if (vocab < 0)
        vocab = toks && toks->type == GGUF_VT_ARR ? (int64_t)toks->n : 0;
    return check_deepseek2_lite("deepseek2", key_int(f, "deepseek2", GGUF_KEY_BLOCK_COUNT, 0), vocab,
                                key_int(f, "deepseek2", GGUF_KEY_Q_LORA_RANK, -1), msg, size);
}

static const emit_column problem_cols[] = {
    { "tensor", NULL, 0 },
    { "type", NULL, 0 },
    { "nan", "NAN", EMIT_COL_RIGHT },
    { "inf", "INF", EMIT_COL_RIGHT },
    { "first_index", "FIRST", EMIT_COL_RIGHT },
};

/* Scans every float tensor; one row per tensor with NaN or Inf. Returns the
 * number of such tensors. */
static int scan_all(emit *e, const gguf_file *f)
{
    int problems = 0;
    emit_table_begin(e, "problems", "NaN/Inf", problem_cols, 5, 0);
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        floats_of q;
        floats_of_type(t->type, &q);
        nonfinite c = { 0, 0, 0 };
        if (q.elem)
            scan_tensor(f, t, q.elem, &c);
        else if (q.n)
            scan_quantized(f, t, &q, &c);
        else
            continue;
        if (c.nan + c.inf == 0)
            continue;
        problems++;
        emit_value row[] = {
            ev_str(t->name), ev_str(gguf_dtype_name(t->type)),
            ev_uint(c.nan), ev_uint(c.inf), ev_uint(c.first),
        };
        emit_row(e, row);
    }
    emit_table_end(e);
    return problems;
}

static void result(emit *e, int problems)
{
    emit_map_begin(e, NULL, NULL, 0);
    emit_field(e, "n_problems", "problems", ev_uint((uint64_t)problems));
    emit_field(e, "result", NULL, ev_str(problems ? "FAILED" : "ok"));
    emit_map_end(e);
}

/* The model problems gguf_model_check reports: the first MAX_LISTED
 * messages, and how many there were. */
#define MAX_LISTED 50
typedef struct model_problems {
    int  n;
    char msg[MAX_LISTED][GGUF_ERROR_MAX];
} model_problems;

static void collect(void *ctx, const gguf_error *problem)
{
    model_problems *p = ctx;
    if (p->n < MAX_LISTED)
        snprintf(p->msg[p->n], sizeof p->msg[p->n], "%s", problem->msg);
    p->n++;
}

/* Every model problem (the model line shows the first). */
static void list_model_problems(emit *e, const model_problems *p)
{
    static const emit_column cols[] = { { "problem", "MODEL PROBLEMS", 0 } };
    emit_table_begin(e, "model_problems", NULL, cols, 1, 0);
    for (int i = 0; i < p->n && i < MAX_LISTED; i++) {
        emit_value row[] = { ev_str(p->msg[i]) };
        emit_row(e, row);
    }
    if (p->n > MAX_LISTED) {
        char more[64];
        snprintf(more, sizeof more, "... and %d more", p->n - MAX_LISTED);
        emit_value row[] = { ev_str(more) };
        emit_row(e, row);
    }
    emit_table_end(e);
}

int check_write(emit *e, const char *path, const gguf_file *f, const char *open_error)
{
    emit_map_begin(e, NULL, NULL, 0);
    emit_field(e, "file", NULL, ev_str(path));
    emit_field(e, "structure", NULL, ev_str(f ? "ok" : open_error));
    if (!f) {
        emit_map_end(e);
        result(e, 1);
        return 1;
    }
    /* the model against itself (hyper-parameters, shapes, vocabulary):
     * the rules every tool applies, gguf/modelcheck.h */
    gguf_error merr = { 0 };
    static model_problems mp;
    mp.n = 0;
    int n_model, n_extra = 0;
    if (clip_file_is_projector(f)) {
        /* a multimodal projector (llama.cpp's --mmproj file), no language
         * model: its clip.vision.* sizes against its tensors */
        n_model = clip_check_file(f, &merr) ? 1 : 0;
        emit_field(e, "projector", NULL, ev_str(n_model == 0 ? "ok" : merr.msg));
    } else {
        n_model = gguf_model_check(f, collect, &mp, &merr);
        if (n_model < 0) /* out of memory: the message says so */
            snprintf(mp.msg[0], sizeof mp.msg[0], "%s", merr.msg), n_model = 1, mp.n = 1;
        emit_field(e, "model", NULL, ev_str(n_model == 0 ? "ok" : mp.msg[0]));
        /* what llama.cpp's loader refuses beyond the model rules: one problem */
        char ll[GGUF_ERROR_MAX];
        const int n_ll = check_llama_loader(f, ll, sizeof ll);
        emit_field(e, "llama_cpp", "llama.cpp", ev_str(n_ll ? ll : "ok"));
        n_extra = n_ll;
    }
    uint64_t n_float = 0, n_quant = 0, bytes = 0;
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        floats_of q;
        floats_of_type(t->type, &q);
        if (q.elem)
            n_float++, bytes += t->nbytes;
        else if (q.n)
            n_quant++;
    }
    emit_field(e, "n_tensors", "tensors", ev_uint(gguf_n_tensors(f)));
    emit_field(e, "n_float_tensors", "float tensors", ev_uint(n_float));
    emit_field(e, "n_quantized_tensors", "quantized tensors", ev_uint(n_quant));
    emit_field(e, "bytes_scanned", "bytes scanned", ev_unit(ev_uint(bytes), EU_BYTES));
    emit_map_end(e);

    if (n_model > 1)
        list_model_problems(e, &mp);
    int problems = scan_all(e, f) + n_model + n_extra;
    result(e, problems);
    return problems;
}
