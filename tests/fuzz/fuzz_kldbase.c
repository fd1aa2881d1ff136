/*
 * fuzz_kldbase.c — libFuzzer harness for gguf-run's --kl-divergence-base
 * reader (run/eval.c, llama-perplexity's "_logits_" format).
 *
 * A tiny llama model (width 16, 1 layer, 24 tokens, context 8) is written
 * once to a temporary GGUF and loaded; every input is written to a
 * temporary file and given to run_kld_file_ctx() and, when its context is
 * the model's, run_kl_divergence(): any bytes must give a result or an
 * error, never a crash or a read past the data.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval.h"
#include "forward.h"
#include "model.h"
#include <ggufkit/arch.h>
#include <ggufkit/gguf.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { DIM = 16, FF = 32, VOCAB = 24, CTX = 8 };

static char model_path[256], base_path[256];
static gguf_file *file;
static run_model model;
static run_state state;

static void add(gguf_writer *w, const char *fmt, int layer, int64_t ne0, int64_t ne1)
{
    char name[96];
    snprintf(name, sizeof name, fmt, layer);
    const int64_t ne[2] = { ne0, ne1 };
    gguf_error err;
    if (gguf_writer_add_tensor(w, name, GGUF_DT_F32, ne1 ? 2 : 1, ne, &err) < 0)
        abort();
}

static void write_model(void)
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
    add(w, GGUF_T_TOKEN_EMBD, 0, DIM, VOCAB);
    add(w, GGUF_T_ATTN_NORM, 0, DIM, 0);
    add(w, GGUF_T_ATTN_Q, 0, DIM, DIM);
    add(w, GGUF_T_ATTN_K, 0, DIM, DIM / 2);
    add(w, GGUF_T_ATTN_V, 0, DIM, DIM / 2);
    add(w, GGUF_T_ATTN_OUT, 0, DIM, DIM);
    add(w, GGUF_T_FFN_NORM, 0, DIM, 0);
    add(w, GGUF_T_FFN_GATE, 0, DIM, FF);
    add(w, GGUF_T_FFN_UP, 0, DIM, FF);
    add(w, GGUF_T_FFN_DOWN, 0, FF, DIM);
    add(w, GGUF_T_OUTPUT_NORM, 0, DIM, 0);
    gguf_error err;
    if (gguf_writer_begin(w, model_path, &err))
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

static void setup(void)
{
    const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(model_path, sizeof model_path, "%s/fuzz_kldbase_%d.gguf", dir, (int)getpid());
    snprintf(base_path, sizeof base_path, "%s/fuzz_kldbase_%d.kld", dir, (int)getpid());
    write_model();
    gguf_error err;
    if (!(file = gguf_open(model_path, 0, &err)) || run_model_load(&model, file, &err) ||
        run_state_init(&state, &model, CTX, CTX, &err)) {
        fprintf(stderr, "fuzz_kldbase: %s\n", err.msg);
        abort();
    }
    unlink(model_path); /* the mapping stays */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!file)
        setup();
    FILE *f = fopen(base_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f))
        abort();
    gguf_error err;
    run_eval_result res;
    if (run_kld_file_ctx(base_path, &err) == CTX)
        (void)run_kl_divergence(&state, &model, base_path, 1, &res, &err);
    unlink(base_path);
    return 0;
}
