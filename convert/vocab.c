/*
 * vocab.c — see vocab.h.
 */
#include "vocab.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/arch.h>
#include "spm.h"

int vocab_set(vocab *v, int64_t id, const char *text, size_t len)
{
    char *t = malloc(len + 1);
    if (!t)
        return -1;
    memcpy(t, text, len);
    t[len] = 0;
    free(v->tokens[id]);
    v->tokens[id] = t;
    v->lens[id] = len;
    return 0;
}

int vocab_from_spm(vocab *v, const char *path, int64_t n, gguf_error *err)
{
    memset(v, 0, sizeof *v);
    spm_model spm;
    if (spm_load(path, &spm, err))
        return -1;
    if (n < 0)
        n = (int64_t)spm.n;
    if (n < (int64_t)spm.n || n > 16 * 1024 * 1024) {
        gguf_error_set(err, "vocabulary size %" PRId64 " but tokenizer.model has %zu pieces", n,
                       spm.n);
        spm_free(&spm);
        return -1;
    }
    v->n = n;
    v->unk_id = spm.unk_id;
    v->bos_id = spm.bos_id;
    v->eos_id = spm.eos_id;
    v->pad_id = spm.pad_id;
    v->tokens = calloc((size_t)n, sizeof *v->tokens);
    v->lens = calloc((size_t)n, sizeof *v->lens);
    v->scores = calloc((size_t)n, sizeof *v->scores);
    v->types = calloc((size_t)n, sizeof *v->types);
    int rc = !v->tokens || !v->lens || !v->scores || !v->types;
    for (int64_t i = 0; i < n && !rc; i++) {
        if (i < (int64_t)spm.n) {
            const spm_piece *p = &spm.pieces[i];
            int t = p->type;
            rc = vocab_set(v, i, p->text, p->len);
            v->scores[i] = p->score;
            v->types[i] = t == SPM_UNKNOWN ? GGUF_TOKEN_UNKNOWN : t == SPM_CONTROL ? GGUF_TOKEN_CONTROL
                        : t == SPM_UNUSED ? GGUF_TOKEN_UNUSED : t == SPM_BYTE ? GGUF_TOKEN_BYTE
                        : GGUF_TOKEN_NORMAL;
        } else {
            char pad[32];
            int len = snprintf(pad, sizeof pad, "[PAD%" PRId64 "]", i);
            rc = vocab_set(v, i, pad, (size_t)len);
            v->scores[i] = -10000.0f;
            v->types[i] = GGUF_TOKEN_UNUSED;
        }
    }
    spm_free(&spm);
    if (rc) {
        vocab_free(v);
        return gguf_error_set(err, "out of memory");
    }
    return 0;
}

int vocab_write(const vocab *v, gguf_writer *w, gguf_error *err)
{
    const char **ptrs = malloc((size_t)v->n * sizeof *ptrs);
    uint64_t *lens = malloc((size_t)v->n * sizeof *lens);
    int bad = !ptrs || !lens;
    for (int64_t i = 0; !bad && i < v->n; i++) {
        ptrs[i] = v->tokens[i];
        lens[i] = v->lens[i];
    }
    bad = bad || gguf_writer_set_str(w, GGUF_KEY_TOK_MODEL, v->model ? v->model : v->bpe ? "gpt2" : "llama") ||
          (!v->no_pre && gguf_writer_set_str(w, GGUF_KEY_TOK_PRE, v->pre ? v->pre : "default")) ||
          gguf_writer_set_str_array(w, GGUF_KEY_TOK_TOKENS, ptrs, lens, (uint64_t)v->n) ||
          (v->scores &&
           gguf_writer_set_array(w, GGUF_KEY_TOK_SCORES, GGUF_VT_F32, v->scores, (uint64_t)v->n)) ||
          gguf_writer_set_array(w, GGUF_KEY_TOK_TYPES, GGUF_VT_I32, v->types, (uint64_t)v->n);
    free(ptrs);
    free(lens);
    if (!bad && v->n_merges) {
        uint64_t *mlens = malloc((size_t)v->n_merges * sizeof *mlens);
        bad = !mlens;
        for (int64_t i = 0; !bad && i < v->n_merges; i++)
            mlens[i] = v->merge_lens[i];
        bad = bad || gguf_writer_set_str_array(w, GGUF_KEY_TOK_MERGES, (const char *const *)v->merges,
                                               mlens, (uint64_t)v->n_merges);
        free(mlens);
    }
    return bad ? gguf_error_set(err, "out of memory") : 0;
}

void vocab_free(vocab *v)
{
    for (int64_t i = 0; v->tokens && i < v->n; i++)
        free(v->tokens[i]);
    free(v->tokens);
    free(v->lens);
    free(v->scores);
    free(v->types);
    for (int64_t i = 0; v->merges && i < v->n_merges; i++)
        free(v->merges[i]);
    free(v->merges);
    free(v->merge_lens);
    memset(v, 0, sizeof *v);
}
