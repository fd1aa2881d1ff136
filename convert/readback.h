/*
 * readback.h — the converter's proof that it wrote what it read.
 *
 * While tensors are encoded, each tensor's output bytes are summed as they
 * go to the writer (data_sum: a streaming 64-bit hash in four xxHash64-style
 * lanes, ~10 GB/s, for finding accidents, not attacks). Once the writer has
 * completed (every shard fsync'd, nothing renamed yet), readback_verify()
 * opens each temporary shard with the full validating reader and sums each
 * tensor's bytes again. A header that does not describe the data, a short
 * or misplaced write, or bytes that changed in memory after encoding stop
 * the conversion before anything is renamed into place.
 */
#ifndef CONVERT_READBACK_H
#define CONVERT_READBACK_H

#include <stddef.h>
#include <stdint.h>

#include <ggufkit/gguf.h>

typedef struct data_sum {
    uint64_t lane[4];
    uint64_t len;
    uint8_t  tail[32];
    uint32_t n_tail;
} data_sum;

void data_sum_init(data_sum *s);
void data_sum_add(data_sum *s, const void *p, size_t n);
uint64_t data_sum_final(const data_sum *s);

/* Reads the completed but not yet renamed output of w back: n tensors, in
 * order, named names[i] with sums[i] (data_sum of the bytes written). 0, or
 * -1 with err naming the first tensor that differs. */
int readback_verify(gguf_writer *w, const char *const *names, const uint64_t *sums, uint64_t n,
                    gguf_error *err);

#endif
