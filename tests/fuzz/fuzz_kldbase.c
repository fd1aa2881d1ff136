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
#include "tiny_llama.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char model_path[256], base_path[256];
static gguf_file *file;
static run_model model;
static run_state state;

static void setup(void)
{
    const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(model_path, sizeof model_path, "%s/fuzz_kldbase_%d.gguf", dir, (int)getpid());
    snprintf(base_path, sizeof base_path, "%s/fuzz_kldbase_%d.kld", dir, (int)getpid());
    tiny_llama_write(model_path, false);
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
