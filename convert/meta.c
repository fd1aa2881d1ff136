/*
 * meta.c — Meta's original LLaMA folders (see meta.h): params.json,
 * consolidated.00.pth, tokenizer.model, as llama.cpp's legacy converter
 * (examples/convert_legacy_llama.py) reads them.
 */
#include "meta.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "names.h"
#include "torch.h"
#include "vocab.h"

typedef struct meta_state {
    json_value *params;
    st_file     ckpt;
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
    if (!json_int(json_get(s->params, key), out) || *out <= 0 || *out > UINT32_MAX)
        return gguf_error_set(err, "params.json: '%s' missing or not a count", key);
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
    if (!json_num(json_get(s->params, "norm_eps"), &eps) || !(eps > 0))
        return gguf_error_set(err, "params.json: 'norm_eps' missing");
    bool have_theta = json_num(json_get(s->params, "rope_theta"), &theta);
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

static void meta_close(src_model *m)
{
    meta_state *s = m->reader;
    if (!s)
        return;
    st_close(&s->ckpt);
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
    m->write_metadata = meta_write_metadata;
    m->path = dir;
    m->arch = arch_find("LlamaForCausalLM");
    char path[4096];
    snprintf(path, sizeof path, "%s/params.json", dir);
    if (!(s->params = json_load_file(path, err))) {
        gguf_error_prefix(err, "params.json: ");
        goto fail;
    }
    snprintf(path, sizeof path, "%s/consolidated.01.pth", dir);
    if (file_exists(path)) {
        gguf_error_set(err, "consolidated.01.pth: checkpoints sharded over several files are not "
                       "merged yet");
        goto fail;
    }
    snprintf(path, sizeof path, "%s/consolidated.00.pth", dir);
    if (torch_open(path, &s->ckpt, err)) {
        gguf_error_prefix(err, "consolidated.00.pth: ");
        goto fail;
    }
    int64_t heads, kv;
    if (param_int(s, "n_heads", &heads, err))
        goto fail;
    kv = heads;
    if (json_get(s->params, "n_kv_heads") && param_int(s, "n_kv_heads", &kv, err))
        goto fail;
    m->n_head = (uint32_t)heads;
    m->n_head_kv = (uint32_t)kv;
    for (size_t i = 0; i < s->ckpt.n; i++) {
        const st_tensor *t = &s->ckpt.tensors[i];
        char name[256];
        int block;
        if (!strcmp(t->name, "rope.freqs"))
            continue; /* Meta's cached rotary frequencies: recomputed by the runtime */
        if (arch_map_rules(arch_meta_names, t->name, name, sizeof name, &block) < 0) {
            gguf_error_set(err, "consolidated.00.pth: tensor '%s': no llama tensor of that name",
                           t->name);
            goto fail;
        }
        int dt = !strcmp(t->dtype, "F32") ? SRC_F32 : !strcmp(t->dtype, "F16") ? SRC_F16
               : !strcmp(t->dtype, "BF16") ? SRC_BF16 : -1;
        if (dt < 0 || t->n_dims < 1 || t->n_dims > 4) {
            gguf_error_set(err, "consolidated.00.pth: tensor '%s': unsupported %s of %d dimensions",
                           t->name, t->dtype, t->n_dims);
            goto fail;
        }
        int64_t ne[4];
        for (int d = 0; d < t->n_dims; d++)
            ne[d] = t->shape[t->n_dims - 1 - d];
        if (!strcmp(t->name, "tok_embeddings.weight"))
            s->n_vocab = t->shape[0];
        if (!strcmp(t->name, "layers.0.feed_forward.w1.weight"))
            s->n_ff = t->shape[0];
        if (!src_add_tensor(m, name, dt, t->n_dims, ne, t->data)) {
            gguf_error_set(err, "out of memory");
            goto fail;
        }
    }
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
