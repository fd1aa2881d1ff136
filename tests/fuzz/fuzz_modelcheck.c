/*
 * fuzz_modelcheck.c — libFuzzer harness for the model rules
 * (gguf/modelcheck.h).
 *
 * Any bytes the reader accepts go to gguf_model_validate(), whose rules read
 * counts, shapes and token arrays the file chose; every failure must be a
 * message, never an out-of-bounds read, an overflow or a hang. Seed it with
 * small real models (build/sample.gguf, stories260K-f32.gguf) so that
 * mutations reach the hyper-parameter, shape and vocabulary rules.
 * Build: make fuzz; run: build-fuzz/fuzz_modelcheck -rss_limit_mb=512 CORPUS_DIR
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ggufkit/gguf.h>
#include <ggufkit/arch.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gguf_error err;
    gguf_file *f = gguf_open_memory(data, size, &err);
    if (!f)
        return 0;
    if (gguf_model_validate(f, &err) != 0 && !memchr(err.msg, 0, sizeof err.msg))
        __builtin_trap(); /* a failure always leaves a terminated message */
    gguf_close(f);
    return 0;
}
