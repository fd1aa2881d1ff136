/*
 * meta.c — Meta's original LLaMA folders (see meta.h): params.json,
 * consolidated.00.pth, tokenizer.model, as llama.cpp's legacy converter
 * (examples/convert_legacy_llama.py) reads them.
 */
#include "meta.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include <ggufkit/arch.h>
#include "torch.h"
#include "vocab.h"

/* Meta's model-parallel checkpoints have at most this many files (65B: 8). */
#define MAX_SHARDS 64

typedef struct meta_state {
    json_value *params;
    st_file     ckpt[MAX_SHARDS]; /* consolidated.00.pth, .01, ... */
    char        names[MAX_SHARDS][24]; /* their file names, for messages */
    int         n_shards;
    vocab       voc;
    int64_t     n_vocab, n_ff;
} meta_state;

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool meta_detect(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/params.json", dir);
    return file_exists(path);
}

static int param_int(const meta_state *s, const char *key, int64_t *out, gguf_error *err)
{
    /* layers as bounded as config.json's; the other counts fit a u32 */
    int64_t hi = !strcmp(key, "n_layers") ? 100000 : UINT32_MAX;
    const json_value *v = json_get(s->params, key);
    if (v && v->type == JSON_NUMBER && !isfinite(v->num)) /* NaN, Infinity: not "fractional" */
        return gguf_error_set(err, "params.json line %zu: '%s' is %s, not a whole number", v->line,
                              key, v->str);
    return json_count(v, "params.json", key, 1, hi, out, err);
}

/* A float of params.json: a number > 0 that the f32 it is written as holds
 * finite (Python's json writes NaN and Infinity). */
static int param_float(const meta_state *s, const char *key, double *out, gguf_error *err)
{
    const json_value *v = json_get(s->params, key);
    if (!json_num(v, out) || !isfinite(*out) || !(*out > 0) || fabs(*out) > FLT_MAX)
        return gguf_error_set(err, "params.json line %zu: '%s' is %s, expected a finite number > 0",
                              v->line, key, v->type == JSON_NUMBER ? v->str : "not a number");
    return 0;
}

static int meta_write_metadata(src_model *m, gguf_writer *w, uint32_t file_type, gguf_error *err)
{
    meta_state *s = m->reader;
    int64_t dim, layers, heads, kv;
    double eps, theta;
    if (param_int(s, "dim", &dim, err) || param_int(s, "n_layers", &layers, err) ||
        param_int(s, "n_heads", &heads, err))
        return -1;
    kv = heads;
    if (json_get(s->params, "n_kv_heads") && param_int(s, "n_kv_heads", &kv, err))
        return -1;
    if (!json_get(s->params, "norm_eps"))
        return gguf_error_set(err, "params.json: 'norm_eps' is missing");
    if (param_float(s, "norm_eps", &eps, err))
        return -1;
    const json_value *tv = json_get(s->params, "rope_theta");
    bool have_theta = tv && tv->type != JSON_NULL;
    if (have_theta && param_float(s, "rope_theta", &theta, err))
        return -1;
    /* the legacy converter's guess of the training context */
    uint32_t n_ctx = have_theta && theta == 1000000.0 ? 16384 : eps == 1e-05 ? 4096 : 2048;
    struct { const char *key; uint32_t v; } u[] = {
        { GGUF_KEY_VOCAB_SIZE, (uint32_t)s->n_vocab }, { GGUF_KEY_CONTEXT_LENGTH, n_ctx },
        { GGUF_KEY_EMBEDDING_LENGTH, (uint32_t)dim }, { GGUF_KEY_BLOCK_COUNT, (uint32_t)layers },
        { GGUF_KEY_FFN_LENGTH, (uint32_t)s->n_ff }, { GGUF_KEY_ROPE_DIM_COUNT, (uint32_t)(dim / heads) },
        { GGUF_KEY_HEAD_COUNT, (uint32_t)heads }, { GGUF_KEY_HEAD_COUNT_KV, (uint32_t)kv },
    };
    char key[128];
    for (size_t i = 0; i < sizeof u / sizeof *u; i++) {
        snprintf(key, sizeof key, u[i].key, "llama");
        if (gguf_writer_set_u32(w, key, u[i].v))
            return gguf_error_set(err, "out of memory");
    }
    snprintf(key, sizeof key, GGUF_KEY_RMS_EPS, "llama");
    int bad = gguf_writer_set_f32(w, key, (float)eps);
    snprintf(key, sizeof key, GGUF_KEY_ROPE_FREQ_BASE, "llama");
    if (have_theta)
        bad |= gguf_writer_set_f32(w, key, (float)theta);
    bad |= gguf_writer_set_u32(w, GGUF_KEY_FILE_TYPE, file_type);
    if (bad || vocab_write(&s->voc, w, err))
        return bad ? gguf_error_set(err, "out of memory") : -1;
    /* the special tokens as for a Hugging Face folder: the SentencePiece
     * model's bos/eos, BOS added, EOS not (llama.cpp's legacy converter
     * writes none of these) */
    if ((s->voc.bos_id >= 0 && s->voc.bos_id < s->voc.n &&
         gguf_writer_set_u32(w, GGUF_KEY_TOK_BOS, (uint32_t)s->voc.bos_id)) ||
        (s->voc.eos_id >= 0 && s->voc.eos_id < s->voc.n &&
         gguf_writer_set_u32(w, GGUF_KEY_TOK_EOS, (uint32_t)s->voc.eos_id)) ||
        gguf_writer_set_bool(w, GGUF_KEY_TOK_ADD_BOS, true) ||
        gguf_writer_set_bool(w, GGUF_KEY_TOK_ADD_EOS, false))
        return gguf_error_set(err, "out of memory");
    return 0;
}

/* consolidated.00.pth, .01, ... in order: Meta shards every tensor over
 * all of them. */
static int open_shards(meta_state *s, const char *dir, gguf_error *err)
{
    char path[4096], name[32];
    for (int i = 0; i < MAX_SHARDS; i++) {
        snprintf(name, sizeof name, "consolidated.%02d.pth", i);
        snprintf(s->names[i], sizeof s->names[i], "%s", name);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (!file_exists(path))
            break;
        if (torch_open(path, &s->ckpt[i], err)) {
            gguf_error_prefix(err, "%s: ", name);
            return -1;
        }
        s->n_shards = i + 1;
    }
    if (!s->n_shards)
        return gguf_error_set(err, "consolidated.00.pth: not found");
    return 0;
}

static const st_tensor *find_in(const st_file *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->tensors[i].name, name))
            return &f->tensors[i];
    return NULL;
}

/* How llama.cpp's legacy converter merges a sharded tensor: vectors are
 * copies (shard 0's is taken), the embedding, wo and w2 are split by
 * columns, everything else by rows. */
static bool split_by_columns(const char *name)
{
    size_t n = strlen(name);
    static const char *const suffixes[] = { ".attention.wo.weight", ".feed_forward.w2.weight" };
    if (!strncmp(name, "tok_embeddings.", 15))
        return true;
    for (size_t i = 0; i < 2; i++) {
        size_t k = strlen(suffixes[i]);
        if (n >= k && !strcmp(name + n - k, suffixes[i]))
            return true;
    }
    return false;
}

/* The merged shape (outermost first) of tensor t over the shards, with its
 * parts in parts[] (when sharded); *mapped when t and every part lie in
 * file mappings. 0, or -1 with err. */
static int merge_parts(const meta_state *s, const st_tensor *t, int64_t *shape, const void **parts,
                       bool *split_rows, bool *mapped, gguf_error *err)
{
    *mapped = t->mapped;
    for (int d = 0; d < t->n_dims; d++)
        shape[d] = t->shape[d];
    *split_rows = !split_by_columns(t->name);
    if (s->n_shards == 1 || t->n_dims == 1)
        return 0;
    int axis = *split_rows ? 0 : 1;
    if (t->n_dims != 2)
        return gguf_error_set(err, "tensor '%s': cannot merge a %d-dimensional tensor over "
                              "shards", t->name, t->n_dims);
    for (int k = 0; k < s->n_shards; k++) {
        const st_tensor *p = find_in(&s->ckpt[k], t->name);
        if (!p)
            return gguf_error_set(err, "consolidated.%02d.pth: tensor '%s' is missing", k, t->name);
        if (strcmp(p->dtype, t->dtype) || p->n_dims != 2 || p->shape[1 - axis] != t->shape[1 - axis] ||
            p->shape[axis] != t->shape[axis])
            return gguf_error_set(err, "consolidated.%02d.pth: tensor '%s' is not a shard of the "
                                  "same type and shape as in consolidated.00.pth", k, t->name);
        parts[k] = p->data;
        *mapped = *mapped && p->mapped;
    }
    shape[axis] = t->shape[axis] * s->n_shards;
    return 0;
}

static int add_tensor(src_model *m, meta_state *s, const st_tensor *t, gguf_error *err)
{
    char name[256];
    int block;
    if (!strcmp(t->name, "rope.freqs"))
        return 0; /* Meta's cached rotary frequencies: recomputed by the runtime */
    if (arch_map_meta(m->arch, t->name, name, sizeof name, &block) < 0)
        return gguf_error_set(err, "consolidated.00.pth: tensor '%s': no llama tensor of that name",
                              t->name);
    int dt = !strcmp(t->dtype, "F32") ? SRC_F32 : !strcmp(t->dtype, "F16") ? SRC_F16
           : !strcmp(t->dtype, "BF16") ? SRC_BF16 : -1;
    if (dt < 0 || t->n_dims < 1 || t->n_dims > 4)
        return gguf_error_set(err, "consolidated.00.pth: tensor '%s': unsupported %s of %d "
                              "dimensions", t->name, t->dtype, t->n_dims);
    int64_t shape[ST_MAX_DIMS], ne[4];
    const void **parts = calloc(MAX_SHARDS, sizeof *parts);
    bool split_rows, mapped;
    if (!parts)
        return gguf_error_set(err, "out of memory");
    if (merge_parts(s, t, shape, parts, &split_rows, &mapped, err)) {
        free(parts);
        return -1;
    }
    for (int d = 0; d < t->n_dims; d++)
        ne[d] = shape[t->n_dims - 1 - d];
    if (!strcmp(t->name, "tok_embeddings.weight"))
        s->n_vocab = shape[0];
    if (!strcmp(t->name, "layers.0.feed_forward.w1.weight"))
        s->n_ff = shape[0];
    src_tensor *st = src_add_tensor(m, name, dt, t->n_dims, ne, t->data);
    if (!st) {
        free(parts);
        return gguf_error_set(err, "out of memory");
    }
    st->mapped = mapped;
    st->from = (src_origin){ s->names[0], t->name };
    if (s->n_shards > 1 && t->n_dims > 1) {
        if (!(st->part_from = malloc((size_t)s->n_shards * sizeof *st->part_from))) {
            free(parts);
            return gguf_error_set(err, "out of memory");
        }
        for (int k = 0; k < s->n_shards; k++)
            st->part_from[k] = (src_origin){ s->names[k], t->name };
        st->parts = parts;
        st->n_parts = s->n_shards;
        st->split_rows = split_rows;
    } else {
        free(parts);
    }
    return 0;
}

static int meta_verify(const src_model *m, gguf_error *err)
{
    const meta_state *s = m->reader;
    for (int i = 0; s && i < s->n_shards; i++)
        if (st_verify(&s->ckpt[i], err)) {
            gguf_error_prefix(err, "consolidated.%02d.pth: ", i);
            return -1;
        }
    return 0;
}

static void meta_close(src_model *m)
{
    meta_state *s = m->reader;
    if (!s)
        return;
    for (int i = 0; i < s->n_shards; i++)
        st_close(&s->ckpt[i]);
    vocab_free(&s->voc);
    json_free(s->params);
    free(s);
    m->reader = NULL;
}

int meta_open(const char *dir, src_model *m, gguf_error *err)
{
    memset(m, 0, sizeof *m);
    meta_state *s = calloc(1, sizeof *s);
    if (!s)
        return gguf_error_set(err, "out of memory");
    m->reader = s;
    m->close = meta_close;
    m->verify = meta_verify;
    m->write_metadata = meta_write_metadata;
    m->path = dir;
    m->arch = arch_find("LlamaForCausalLM");
    char path[4096];
    snprintf(path, sizeof path, "%s/params.json", dir);
    if (!(s->params = json_load_file(path, err))) {
        gguf_error_prefix(err, "params.json: ");
        goto fail;
    }
    if (open_shards(s, dir, err))
        goto fail;
    int64_t heads, kv;
    if (param_int(s, "n_heads", &heads, err))
        goto fail;
    kv = heads;
    if (json_get(s->params, "n_kv_heads") && param_int(s, "n_kv_heads", &kv, err))
        goto fail;
    m->n_head = (uint32_t)heads;
    m->n_head_kv = (uint32_t)kv;
    for (size_t i = 0; i < s->ckpt[0].n; i++)
        if (add_tensor(m, s, &s->ckpt[0].tensors[i], err))
            goto fail;
    if (!s->n_vocab || !s->n_ff) {
        gguf_error_set(err, "consolidated.00.pth: no tok_embeddings or feed_forward.w1 tensor");
        goto fail;
    }
    snprintf(path, sizeof path, "%s/tokenizer.model", dir);
    if (vocab_from_spm(&s->voc, path, s->n_vocab, err)) {
        gguf_error_prefix(err, "tokenizer.model: ");
        goto fail;
    }
    /* "meta" → "Meta", as for Hugging Face folders */
    const char *base = strrchr(dir, '/');
    base = base && base[1] ? base + 1 : dir;
    if (!(m->name = strdup(base))) {
        gguf_error_set(err, "out of memory");
        goto fail;
    }
    if (m->name[0] >= 'a' && m->name[0] <= 'z')
        m->name[0] = (char)(m->name[0] - 'a' + 'A');
    return 0;
fail:
    src_model_free(m);
    return -1;
}
