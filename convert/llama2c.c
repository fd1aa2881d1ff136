/*
 * llama2c.c — llama2.c checkpoints (see llama2c.h).
 *
 * Layouts (Karpathy's export.py):
 *   v0 "legacy": 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
 *       vocab_size — negative when the classifier is separate — seq_len),
 *       then f32: token embedding, attention norms, wq, wk, wv, wo, ffn
 *       norms, w1, w2, w3, final norm, freq_cis real and imaginary
 *       (seq_len × head_size/2 each, unused), classifier if separate.
 *   v1: a 256-byte header (u32 magic "ak42", i32 version 1, the 7 ints,
 *       u8 shared classifier), then f32: attention norms, ffn norms, final
 *       norm, token embedding, wq, wk, wv, wo, w1, w2, w3, classifier if
 *       separate.
 *   v2: the same header with version 2 and an i32 group size; f32 norms as
 *       v1, then each matrix as int8 values followed by one f32 scale per
 *       group (x = q * scale).
 * Tensors are written as llama.cpp's convert-llama2c-to-ggml orders them;
 * llama2.c's rotary layout is already llama.cpp's (no permutation).
 */
#include "llama2c.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ggufkit/gguf.h>
#include <ggufkit/arch.h>
#include "spm.h"
#include "vocab.h"

#define AK42 0x616b3432u

typedef struct l2c_state {
    uint8_t *map;
    size_t   size;
    int32_t  dim, hidden, layers, heads, kv_heads, vocab, seq_len;
    vocab    voc;
} l2c_state;

static int32_t rd32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* Hands out consecutive regions of the file. */
typedef struct cursor {
    const uint8_t *base;
    uint64_t       off, size;
    int            bad;
} cursor;

static const uint8_t *take(cursor *c, uint64_t bytes)
{
    if (c->bad || bytes > c->size - c->off) {
        c->bad = 1;
        return NULL;
    }
    const uint8_t *p = c->base + c->off;
    c->off += bytes;
    return p;
}

/* A tensor description before it is added (so the file can be read in
 * its own order and the tensors added in llama.cpp's). */
typedef struct piece {
    const uint8_t *q;      /* f32 data, or int8 values (v2) */
    const uint8_t *scales; /* v2: f32s, maybe unaligned */
    int64_t        rows, cols;
} piece;

static piece take_matrix(cursor *c, int version, int32_t group, int64_t rows, int64_t cols)
{
    piece p = { NULL, NULL, rows, cols };
    uint64_t n = (uint64_t)rows * (uint64_t)cols;
    if (version < 2) {
        p.q = take(c, n * 4);
    } else {
        p.q = take(c, n);
        p.scales = take(c, n / (uint64_t)group * 4);
    }
    return p;
}

static piece take_vector(cursor *c, int64_t n)
{
    piece p = { take(c, (uint64_t)n * 4), NULL, 1, n };
    return p;
}

static int add(src_model *m, const char *name, const piece *p, int32_t group, gguf_error *err)
{
    int64_t ne[2] = { p->cols, p->rows };
    src_tensor *t = src_add_tensor(m, name, p->scales ? SRC_I8_GROUPS : SRC_F32, p->rows == 1 ? 1 : 2,
                                   ne, p->q);
    if (!t)
        return gguf_error_set(err, "out of memory");
    t->scales = p->scales;
    t->group = group;
    const l2c_state *s = m->reader;
    const uint8_t *lo = s ? (const uint8_t *)s->map : NULL, *q = p->q;
    t->mapped = lo && q >= lo && q < lo + s->size; /* the writer may drop its pages */
    return 0;
}

static int load_tokenizer(l2c_state *s, const char *path, gguf_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return gguf_error_set(err, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return gguf_error_set(err, "%s: is %s, not a tokenizer file (tokenizer.bin or "
                              "tokenizer.model)", path, S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
    size_t len = strlen(path);
    if (len > 6 && !strcmp(path + len - 6, ".model")) {
        if (vocab_from_spm(&s->voc, path, s->vocab, err)) {
            gguf_error_prefix(err, "%s: ", path);
            return -1;
        }
        if (s->voc.n != s->vocab)
            return gguf_error_set(err, "%s: %" PRId64 " pieces for a vocabulary of %d", path,
                                  s->voc.n, s->vocab);
        return 0;
    }
    /* llama2.c tokenizer.bin: u32 max token length, then per token f32
     * score, i32 length, bytes — read as llama.cpp's converter does */
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return gguf_error_set(err, "%s: cannot open: %s", path, strerror(errno));
    vocab *v = &s->voc;
    memset(v, 0, sizeof *v);
    v->n = s->vocab;
    v->unk_id = 0, v->bos_id = 1, v->eos_id = 2, v->pad_id = -1;
    v->tokens = calloc((size_t)v->n, sizeof *v->tokens);
    v->lens = calloc((size_t)v->n, sizeof *v->lens);
    v->scores = calloc((size_t)v->n, sizeof *v->scores);
    v->types = calloc((size_t)v->n, sizeof *v->types);
    uint8_t hdr[4];
    int rc = 0;
    if (!v->tokens || !v->lens || !v->scores || !v->types)
        rc = gguf_error_set(err, "out of memory");
    else if (fread(hdr, 1, 4, fp) != 4)
        rc = gguf_error_set(err, "%s: truncated", path);
    for (int64_t id = 0; id < v->n && !rc; id++) {
        uint8_t rec[8];
        if (fread(rec, 1, 8, fp) != 8) {
            rc = gguf_error_set(err, "%s: truncated at token %" PRId64, path, id);
            break;
        }
        float score;
        memcpy(&score, rec, 4);
        if (!isfinite(score)) { /* a GGUF vocabulary holds no NaN or Inf */
            rc = gguf_error_set(err, "%s: token %" PRId64 " has a non-finite score (%s)", path, id,
                                isnan(score) ? "NaN" : score > 0 ? "+Inf" : "-Inf");
            break;
        }
        int32_t n = rd32(rec + 4);
        if (n < 0 || n > 65536) {
            rc = gguf_error_set(err, "%s: token %" PRId64 " has length %d", path, id, n);
            break;
        }
        /* the text, with ' ' escaped to U+2581 as llama.cpp does */
        /* room for the names ids 0-2 get ("<unk>") whatever their length */
        char *text = malloc((size_t)n + 8);
        if (!text || fread(text, 1, (size_t)n, fp) != (size_t)n) {
            free(text);
            rc = gguf_error_set(err, "%s: truncated at token %" PRId64, path, id);
            break;
        }
        text[n] = 0;
        int32_t type = GGUF_TOKEN_NORMAL;
        unsigned byte;
        char tail;
        if (id == 0) {
            strcpy(text, "<unk>"), n = 5, type = GGUF_TOKEN_UNKNOWN;
        } else if (id == 1 || id == 2) {
            strcpy(text, id == 1 ? "<s>" : "</s>"), n = id == 1 ? 3 : 4, type = GGUF_TOKEN_CONTROL;
        } else if (n == 0) {
            type = GGUF_TOKEN_CONTROL;
        } else if (sscanf(text, "<0x%2X%c", &byte, &tail) == 2 && tail == '>') {
            type = GGUF_TOKEN_BYTE;
        }
        size_t out = 0;
        char *esc = malloc((size_t)n * 3 + 1);
        if (!esc) {
            free(text);
            rc = gguf_error_set(err, "out of memory");
            break;
        }
        for (int32_t i = 0; i < n; i++) {
            if (text[i] == ' ') {
                memcpy(esc + out, "\xe2\x96\x81", 3);
                out += 3;
            } else {
                esc[out++] = text[i];
            }
        }
        free(text);
        rc = vocab_set(v, id, esc, out) ? gguf_error_set(err, "out of memory") : 0;
        free(esc);
        v->scores[id] = score;
        v->types[id] = type;
    }
    fclose(fp);
    return rc;
}

static int l2c_write_metadata(src_model *m, gguf_writer *w, uint32_t file_type, gguf_error *err)
{
    l2c_state *s = m->reader;
    struct { const char *key; uint32_t v; } u[] = {
        { GGUF_KEY_CONTEXT_LENGTH, (uint32_t)s->seq_len }, { GGUF_KEY_EMBEDDING_LENGTH, (uint32_t)s->dim },
        { GGUF_KEY_FFN_LENGTH, (uint32_t)s->hidden }, { GGUF_KEY_HEAD_COUNT, (uint32_t)s->heads },
        { GGUF_KEY_HEAD_COUNT_KV, (uint32_t)s->kv_heads }, { GGUF_KEY_BLOCK_COUNT, (uint32_t)s->layers },
        { GGUF_KEY_ROPE_DIM_COUNT, (uint32_t)(s->dim / s->heads) },
        { GGUF_KEY_VOCAB_SIZE, (uint32_t)s->vocab },
    };
    char key[128];
    for (size_t i = 0; i < sizeof u / sizeof *u; i++) {
        snprintf(key, sizeof key, u[i].key, "llama");
        if (gguf_writer_set_u32(w, key, u[i].v))
            return gguf_error_set(err, "out of memory");
    }
    snprintf(key, sizeof key, GGUF_KEY_RMS_EPS, "llama");
    if (gguf_writer_set_f32(w, key, 1e-5f) || gguf_writer_set_u32(w, GGUF_KEY_FILE_TYPE, file_type) ||
        vocab_write(&s->voc, w, err))
        return err->msg[0] ? -1 : gguf_error_set(err, "out of memory");
    if (gguf_writer_set_u32(w, GGUF_KEY_TOK_UNK, 0) || gguf_writer_set_u32(w, GGUF_KEY_TOK_BOS, 1) ||
        gguf_writer_set_u32(w, GGUF_KEY_TOK_EOS, 2) ||
        gguf_writer_set_bool(w, GGUF_KEY_TOK_ADD_BOS, true) ||
        gguf_writer_set_bool(w, GGUF_KEY_TOK_ADD_EOS, false))
        return gguf_error_set(err, "out of memory");
    return 0;
}

static void l2c_close(src_model *m)
{
    l2c_state *s = m->reader;
    if (!s)
        return;
    if (s->map)
        munmap(s->map, s->size);
    vocab_free(&s->voc);
    free(s);
    m->reader = NULL;
}

bool llama2c_detect(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Maps the checkpoint file into s. */
static int map_checkpoint(l2c_state *s, const char *path, gguf_error *err)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        gguf_error_set(err, "cannot open: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    s->size = (size_t)st.st_size;
    s->map = s->size >= 28 ? mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (!s->map || s->map == MAP_FAILED) {
        s->map = NULL;
        return gguf_error_set(err, "not a llama2.c checkpoint (%zu bytes)", s->size);
    }
    return 0;
}

/* The checkpoint's layout, as its header gives it. */
typedef struct l2c_layout {
    int     version; /* 0: the legacy float32 export; 1, 2: "ak42" exports */
    int32_t group;   /* version 2: the q8_0 group size */
    bool    shared;  /* the classifier is the embedding */
} l2c_layout;

/* Reads and checks the header (legacy 28 bytes, or the 256-byte "ak42"
 * one); c is left at the first weight. */
static int read_header(l2c_state *s, l2c_layout *lay, cursor *c, gguf_error *err)
{
    const uint8_t *h = s->map;
    *lay = (l2c_layout){ 0, 0, false };
    *c = (cursor){ s->map, 0, s->size, 0 };
    if ((uint32_t)rd32(h) == AK42) {
        if (s->size < 256)
            return gguf_error_set(err, "truncated llama2.c header");
        lay->version = rd32(h + 4);
        if (lay->version != 1 && lay->version != 2)
            return gguf_error_set(err, "llama2.c version %d (1 and 2 are read)", lay->version);
        h += 8;
        lay->shared = s->map[36] != 0;
        lay->group = lay->version == 2 ? rd32(s->map + 37) : 0;
        c->off = 256;
    } else {
        c->off = 28;
        lay->shared = rd32(h + 20) > 0;
    }
    s->dim = rd32(h), s->hidden = rd32(h + 4), s->layers = rd32(h + 8), s->heads = rd32(h + 12);
    s->kv_heads = rd32(h + 16), s->vocab = rd32(h + 20), s->seq_len = rd32(h + 24);
    if (s->vocab < 0 && s->vocab != INT32_MIN) /* negative: a separate classifier */
        s->vocab = -s->vocab;
    if (s->dim <= 0 || s->hidden <= 0 || s->layers <= 0 || s->heads <= 0 || s->kv_heads <= 0 ||
        s->vocab <= 0 || s->seq_len <= 0 || s->dim % s->heads || s->heads % s->kv_heads ||
        s->dim > 65536 || s->hidden > 1 << 20 || s->layers > 4096 || s->vocab > 1 << 24 ||
        s->seq_len > 1 << 24 ||
        (lay->version == 2 && (lay->group <= 0 || s->dim % lay->group || s->hidden % lay->group)))
        return gguf_error_set(err, "implausible llama2.c header (dim %d, hidden %d, layers %d, "
                              "heads %d/%d, vocab %d, seq_len %d)", s->dim, s->hidden, s->layers,
                              s->heads, s->kv_heads, s->vocab, s->seq_len);
    return 0;
}

/* Where every weight lies: per layer arrays of pieces of the mapping. */
typedef struct l2c_weights {
    piece *att_norm, *ffn_norm, *wq, *wk, *wv, *wo, *w1, *w2, *w3;
    piece  emb, final_norm, cls;
} l2c_weights;

static void free_weights(l2c_weights *w)
{
    free(w->att_norm), free(w->ffn_norm), free(w->wq), free(w->wk), free(w->wv), free(w->wo);
    free(w->w1), free(w->w2), free(w->w3);
}

static int alloc_weights(l2c_weights *w, int64_t L, gguf_error *err)
{
    memset(w, 0, sizeof *w);
    piece **arrays[] = { &w->att_norm, &w->ffn_norm, &w->wq, &w->wk, &w->wv,
                         &w->wo, &w->w1, &w->w2, &w->w3 };
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        if (!(*arrays[i] = calloc((size_t)L, sizeof **arrays[i]))) {
            free_weights(w);
            return gguf_error_set(err, "out of memory");
        }
    return 0;
}

/* Walks the weights in the file's order (the legacy export interleaves
 * them by kind with freq_cis after; version 1 and 2 put the norms first),
 * then checks the file ends exactly after the last one. */
static int locate_weights(const l2c_state *s, const l2c_layout *lay, cursor *c, l2c_weights *w,
                          gguf_error *err)
{
    const int64_t L = s->layers, D = s->dim, H = s->hidden, V = s->vocab;
    const int64_t KV = D / s->heads * s->kv_heads;
    const int v = lay->version;
    const int32_t g = lay->group;
#define EACH(arr, expr) for (int64_t l = 0; l < L; l++) w->arr[l] = expr
    if (v == 0) {
        w->emb = take_matrix(c, 0, 0, V, D);
        EACH(att_norm, take_vector(c, D));
        EACH(wq, take_matrix(c, 0, 0, D, D));
        EACH(wk, take_matrix(c, 0, 0, KV, D));
        EACH(wv, take_matrix(c, 0, 0, KV, D));
        EACH(wo, take_matrix(c, 0, 0, D, D));
        EACH(ffn_norm, take_vector(c, D));
        EACH(w1, take_matrix(c, 0, 0, H, D));
        EACH(w2, take_matrix(c, 0, 0, D, H));
        EACH(w3, take_matrix(c, 0, 0, H, D));
        w->final_norm = take_vector(c, D);
        take(c, (uint64_t)s->seq_len * (uint64_t)(D / s->heads / 2) * 4 * 2); /* freq_cis */
    } else {
        EACH(att_norm, take_vector(c, D));
        EACH(ffn_norm, take_vector(c, D));
        w->final_norm = take_vector(c, D);
        w->emb = take_matrix(c, v, g, V, D);
        EACH(wq, take_matrix(c, v, g, D, D));
        EACH(wk, take_matrix(c, v, g, KV, D));
        EACH(wv, take_matrix(c, v, g, KV, D));
        EACH(wo, take_matrix(c, v, g, D, D));
        EACH(w1, take_matrix(c, v, g, H, D));
        EACH(w2, take_matrix(c, v, g, D, H));
        EACH(w3, take_matrix(c, v, g, H, D));
    }
#undef EACH
    w->cls = lay->shared ? w->emb : take_matrix(c, v, g, V, D);
    if (c->bad)
        return gguf_error_set(err, "truncated: the header promises more weights than the file's "
                              "%zu bytes", s->size);
    if (c->off != c->size)
        return gguf_error_set(err, "%" PRIu64 " bytes after the weights (wrong header or format "
                              "version?)", c->size - c->off);
    return 0;
}

/* The tensors in llama.cpp's order: embedding, final norm, output, then
 * per layer. */
static int add_weights(src_model *m, const l2c_state *s, l2c_weights *w, int32_t group,
                       gguf_error *err)
{
    if (add(m, GGUF_T_TOKEN_EMBD, &w->emb, group, err) ||
        add(m, GGUF_T_OUTPUT_NORM, &w->final_norm, group, err) ||
        add(m, GGUF_T_OUTPUT, &w->cls, group, err))
        return -1;
    for (int64_t l = 0; l < s->layers; l++) {
        const struct { const char *fmt; piece *p; } order[] = {
            { GGUF_T_ATTN_Q, &w->wq[l] }, { GGUF_T_ATTN_K, &w->wk[l] }, { GGUF_T_ATTN_V, &w->wv[l] },
            { GGUF_T_ATTN_OUT, &w->wo[l] }, { GGUF_T_ATTN_NORM, &w->att_norm[l] },
            { GGUF_T_FFN_GATE, &w->w1[l] }, { GGUF_T_FFN_DOWN, &w->w2[l] },
            { GGUF_T_FFN_UP, &w->w3[l] }, { GGUF_T_FFN_NORM, &w->ffn_norm[l] },
        };
        for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
            char name[64];
            snprintf(name, sizeof name, order[k].fmt, (int)l);
            if (add(m, name, order[k].p, group, err))
                return -1;
        }
    }
    return 0;
}

/* The model's name: "stories260K/checkpoint_v1.bin" → "checkpoint_v1". */
static int set_name(src_model *m, const char *path, gguf_error *err)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!(m->name = strndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base))))
        return gguf_error_set(err, "out of memory");
    return 0;
}

int llama2c_open(const char *path, const char *tokenizer, src_model *m, gguf_error *err)
{
    memset(m, 0, sizeof *m);
    l2c_state *s = calloc(1, sizeof *s);
    if (!s)
        return gguf_error_set(err, "out of memory");
    m->reader = s;
    m->close = l2c_close;
    m->write_metadata = l2c_write_metadata;
    m->path = path;
    m->arch = arch_find("LlamaForCausalLM");
    l2c_layout lay;
    l2c_weights w;
    cursor c;
    if (map_checkpoint(s, path, err) || read_header(s, &lay, &c, err))
        goto fail;
    m->n_head = (uint32_t)s->heads;
    m->n_head_kv = (uint32_t)s->kv_heads;
    if (alloc_weights(&w, s->layers, err))
        goto fail;
    int rc = locate_weights(s, &lay, &c, &w, err) || add_weights(m, s, &w, lay.group, err);
    free_weights(&w);
    if (rc)
        goto fail;
    if (!tokenizer) {
        gguf_error_set(err, "a llama2.c checkpoint needs --tokenizer FILE (tokenizer.bin or "
                       "tokenizer.model)");
        goto fail;
    }
    if (load_tokenizer(s, tokenizer, err) || set_name(m, path, err))
        goto fail;
    return 0;
fail:
    src_model_free(m);
    return -1;
}
