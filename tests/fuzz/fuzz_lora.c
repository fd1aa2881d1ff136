/*
 * fuzz_lora.c — libFuzzer harness for gguf-run's LoRA adapter checks
 * (run/lora.c).
 *
 * The tiny llama model of tiny_llama.h (with an output.weight of its own)
 * is written once and loaded; every input is opened as a GGUF in memory
 * and, when the reader takes it, checked and applied at scale 1 to the
 * model (run_lora_attach_files); an adapter it accepts then runs a prompt
 * of 3 tokens as one batch and a fourth token on its own, so that every
 * pair it hangs on a matrix is multiplied by. Any bytes must give an
 * error or a run, never a crash or a read past the data.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forward.h"
#include "../../run/lora.h" /* not convert/lora.h: both tools have a lora.h */
#include "model.h"
#include <ggufkit/arch.h>
#include <ggufkit/gguf.h>
#include "tiny_llama.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gguf_file *file;
static run_model model;

static void setup(void)
{
    char path[256];
    const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/fuzz_lora_%d.gguf", dir, (int)getpid());
    tiny_llama_write(path, true);
    gguf_error err;
    if (!(file = gguf_open(path, 0, &err)) || run_model_load(&model, file, &err)) {
        fprintf(stderr, "fuzz_lora: %s\n", err.msg);
        abort();
    }
    unlink(path); /* the mapping stays */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!file)
        setup();
    gguf_error err;
    gguf_file **files = malloc(sizeof *files);
    if (!files)
        return 0;
    if (!(files[0] = gguf_open_memory(data, size, &err))) {
        free(files);
        return 0;
    }
    const char *name = "input";
    const float one = 1.0f;
    run_lora_set set;
    if (run_lora_attach_files(&set, &model, file, files, &name, &one, 1, &err) == 0) {
        run_state st;
        float logits[VOCAB];
        const int32_t prompt[4] = { 1, 5, 23, 7 };
        if (run_state_init(&st, &model, CTX, CTX, &err) == 0) {
            run_forward(&st, &model, prompt, 3, 0, 2, logits);
            run_forward(&st, &model, prompt + 3, 1, 3, 0, logits);
            run_state_free(&st);
        }
    }
    run_lora_free(&set, &model);
    return 0;
}
