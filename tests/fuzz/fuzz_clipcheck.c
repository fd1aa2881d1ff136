/*
 * fuzz_clipcheck.c — libFuzzer harness for the projector rules
 * (common/clipcheck.h).
 *
 * Any bytes the reader accepts go to clip_check_file(), which reads sizes
 * (vision and audio), projector types, colour arrays and tensor shapes the
 * file chose; every failure must be a message, never an out-of-bounds read,
 * an overflow or a hang. Seed it with projector files (gguf-convert --mmproj
 * of the checkpoints tests/tools/mkmm gemma3, gemma4 and mistral3 make:
 * gemma4 has both encoders, Gemma 4's clipped-linear bounds and audio
 * convolutions; mistral3 a pixtral projector with spatial_merge_size).
 * Build: make fuzz; run: build-fuzz/fuzz_clipcheck -rss_limit_mb=512 CORPUS_DIR
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ggufkit/gguf.h>

#include "clipcheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gguf_error err;
    gguf_file *f = gguf_open_memory(data, size, &err);
    if (!f)
        return 0;
    err.msg[0] = 0;
    (void)clip_file_is_projector(f); /* any file: the rules must hold up whatever it says */
    if (clip_check_file(f, &err) != 0 &&
        (!memchr(err.msg, 0, sizeof err.msg) || !err.msg[0]))
        __builtin_trap(); /* a failure always leaves a message */
    gguf_close(f);
    return 0;
}
