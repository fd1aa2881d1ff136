/*
 * fuzz_memory.c — libFuzzer harness for `gguf-inspect --memory`
 * (inspect/memory.h).
 *
 * Any bytes the reader accepts go to the memory report, whose plan reads
 * block counts, head sizes, the sliding pattern, shared-KV and recurrent
 * sizes the file chose, at a context and cache types taken from the input's
 * first bytes; every failure must be a message, never an out-of-bounds
 * read, an overflow or a hang. Seed it with small real models
 * (build/sample.gguf, stories260K-f32.gguf, our conversions of the gemma4
 * and qwen35 fixtures) so that mutations reach the per-block rules.
 * Build: make fuzz; run: build-fuzz/fuzz_memory -rss_limit_mb=512 CORPUS_DIR
 */
#define _GNU_SOURCE /* open_memstream */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/gguf.h>

#include "emit.h"
#include "memory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gguf_error err;
    gguf_file *f = gguf_open_memory(data, size, &err);
    if (!f)
        return 0;
    /* the context and cache types from the file's last bytes (a GGUF's
     * first bytes are its magic): any context in range, any type id */
    uint8_t k = size ? data[size - 1] : 0, v = size > 1 ? data[size - 2] : 0;
    uint32_t c = size > 5 ? (uint32_t)data[size - 3] | (uint32_t)data[size - 4] << 8 |
                            (uint32_t)data[size - 5] << 16 : 0;
    memory_opts o = { (int64_t)(c % MEMORY_MAX_CTX), k % (GGUF_DT_COUNT + 2u),
                      v % (GGUF_DT_COUNT + 2u) };
    char *out = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&out, &len);
    if (mf) {
        emit *e = emit_open(mf, EMIT_TEXT, "fuzz");
        if (e) {
            int rc = memory_write(e, f, "fuzz.gguf", &o, &err);
            if (rc == 1 && !memchr(err.msg, 0, sizeof err.msg))
                __builtin_trap(); /* a failure always leaves a terminated message */
            emit_close(e);
        }
        fclose(mf);
        free(out);
    }
    gguf_close(f);
    return 0;
}
