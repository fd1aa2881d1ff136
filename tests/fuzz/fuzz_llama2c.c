/*
 * fuzz_llama2c.c — libFuzzer harness for llama2.c checkpoints and
 * tokenizer.bin: the input is split in two (the first byte picks where),
 * written to two temporary files (the reader maps files), and opened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "llama2c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void dump(const char *path, const uint8_t *p, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (fp) {
        fwrite(p, 1, n, fp);
        fclose(fp);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t split = 1 + (size - 1) * data[0] / 255;
    char ck[64], tok[64];
    snprintf(ck, sizeof ck, "/tmp/fuzz-l2c-%d.bin", (int)getpid());
    snprintf(tok, sizeof tok, "/tmp/fuzz-l2c-%d.tok", (int)getpid());
    dump(ck, data + 1, split - 1);
    dump(tok, data + split, size - split);
    src_model m;
    gguf_error err;
    if (llama2c_open(ck, tok, &m, &err) == 0) {
        volatile float sink = 0;
        for (int i = 0; i < m.n_tensors; i++)
            sink += *(const volatile uint8_t *)m.tensors[i].data;
        (void)sink;
        src_model_free(&m);
    }
    unlink(ck);
    unlink(tok);
    return 0;
}
