/*
 * tiny_llama.h — the tiny llama model the gguf-run harnesses load (width
 * 16, 1 layer, 24 tokens, context 8, f32 weights from a fixed generator),
 * written to a temporary GGUF. Included by one harness each (static).
 */
#ifndef FUZZ_TINY_LLAMA_H
#define FUZZ_TINY_LLAMA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <ggufkit/arch.h>
#include <ggufkit/gguf.h>

enum { DIM = 16, FF = 32, VOCAB = 24, CTX = 8 };

static void tiny_add(gguf_writer *w, const char *fmt, int layer, int64_t ne0, int64_t ne1)
{
    char name[96];
    snprintf(name, sizeof name, fmt, layer);
    const int64_t ne[2] = { ne0, ne1 };
    gguf_error err;
    if (gguf_writer_add_tensor(w, name, GGUF_DT_F32, ne1 ? 2 : 1, ne, &err) < 0)
        abort();
}

/* Writes the tiny llama model to path; with output, an output.weight of
 * its own (else tied to token_embd). */
static void tiny_llama_write(const char *path, bool output)
{
    gguf_writer *w = gguf_writer_new();
    char key[96];
    gguf_writer_set_str(w, GGUF_KEY_ARCHITECTURE, "llama");
    const struct { const char *fmt; uint32_t v; } u[] = {
        { GGUF_KEY_CONTEXT_LENGTH, CTX }, { GGUF_KEY_EMBEDDING_LENGTH, DIM },
        { GGUF_KEY_BLOCK_COUNT, 1 },      { GGUF_KEY_FFN_LENGTH, FF },
        { GGUF_KEY_HEAD_COUNT, 2 },       { GGUF_KEY_HEAD_COUNT_KV, 1 },
    };
    for (size_t i = 0; i < sizeof u / sizeof *u; i++) {
        snprintf(key, sizeof key, u[i].fmt, "llama");
        gguf_writer_set_u32(w, key, u[i].v);
    }
    snprintf(key, sizeof key, GGUF_KEY_RMS_EPS, "llama");
    gguf_writer_set_f32(w, key, 1e-5f);
    const char *toks[VOCAB];
    char buf[VOCAB][8];
    for (int i = 0; i < VOCAB; i++) {
        snprintf(buf[i], sizeof buf[i], "t%d", i);
        toks[i] = buf[i];
    }
    gguf_writer_set_str(w, GGUF_KEY_TOK_MODEL, "llama");
    gguf_writer_set_str_array(w, GGUF_KEY_TOK_TOKENS, toks, NULL, VOCAB);
    tiny_add(w, GGUF_T_TOKEN_EMBD, 0, DIM, VOCAB);
    tiny_add(w, GGUF_T_ATTN_NORM, 0, DIM, 0);
    tiny_add(w, GGUF_T_ATTN_Q, 0, DIM, DIM);
    tiny_add(w, GGUF_T_ATTN_K, 0, DIM, DIM / 2);
    tiny_add(w, GGUF_T_ATTN_V, 0, DIM, DIM / 2);
    tiny_add(w, GGUF_T_ATTN_OUT, 0, DIM, DIM);
    tiny_add(w, GGUF_T_FFN_NORM, 0, DIM, 0);
    tiny_add(w, GGUF_T_FFN_GATE, 0, DIM, FF);
    tiny_add(w, GGUF_T_FFN_UP, 0, DIM, FF);
    tiny_add(w, GGUF_T_FFN_DOWN, 0, FF, DIM);
    tiny_add(w, GGUF_T_OUTPUT_NORM, 0, DIM, 0);
    if (output)
        tiny_add(w, GGUF_T_OUTPUT, 0, DIM, VOCAB);
    gguf_error err;
    if (gguf_writer_begin(w, path, &err))
        abort();
    uint32_t seed = 1;
    for (uint64_t i = 0; i < gguf_writer_n_tensors(w); i++) {
        const uint64_t n = gguf_writer_tensor_nbytes(w, i);
        float *v = malloc(n);
        for (uint64_t j = 0; j < n / 4; j++) {
            seed = seed * 1664525u + 1013904223u;
            v[j] = (float)((int)(seed >> 9) % 2001 - 1000) / 4000.0f;
        }
        if (gguf_writer_write_tensor(w, v, n, &err))
            abort();
        free(v);
    }
    if (gguf_writer_finish(w, &err))
        abort();
    gguf_writer_free(w);
}

#endif
