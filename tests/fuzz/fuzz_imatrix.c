/*
 * fuzz_imatrix.c — libFuzzer harness for the importance-matrix reader.
 *
 * Any bytes go to gguf_imatrix_parse(); an accepted file has every weight
 * read and every name looked up again, then goes through gguf-inspect
 * --imatrix-stats (inspect/imatrix_stats.h) into a memory stream: counts of
 * zero, names without "blk." or "weight", blocks that do not fit an int and
 * experts of every width must give figures or a message, never a read out
 * of bounds.
 */
#define _GNU_SOURCE /* open_memstream */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <ggufkit/quants.h>

#include "imatrix_stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gguf_imatrix im;
    gguf_error err;
    if (gguf_imatrix_parse(data, size, &im, &err))
        return 0;
    volatile float sink = 0;
    for (int32_t i = 0; i < im.n; i++) {
        int32_t n;
        const float *w = gguf_imatrix_find(&im, im.entries[i].name, &n);
        for (int32_t j = 0; w && j < n; j++)
            sink += w[j];
    }
    (void)sink;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f) {
        (void)imatrix_stats_write(f, "fuzz", &im);
        fclose(f);
    }
    free(buf);
    gguf_imatrix_free(&im);
    return 0;
}
