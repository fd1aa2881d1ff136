/*
 * fuzz_imatrix_combine.c — libFuzzer harness for gguf-run --in-file's
 * combining (run/importance.c run_importance_merge).
 *
 * Any bytes the importance-matrix reader accepts are added to an empty
 * table, then again (a file combined with itself), then into a table that
 * already holds one small expert entry and one plain entry of common names
 * — the sizes, expert counts, huge counts and sums that overflow must give
 * an error or sums, never a read or write out of bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <ggufkit/quants.h>

#include "importance.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gguf_imatrix f;
    gguf_error err;
    if (gguf_imatrix_parse(data, size, &f, &err))
        return 0;
    const uint32_t chunk = size > 0 ? 1u + data[size - 1] : 512u;
    run_importance im = { 0 };
    if (run_importance_merge(&im, &f, chunk, &err) == 0)
        (void)run_importance_merge(&im, &f, chunk, &err);
    run_importance_free(&im);

    /* a table with entries of its own first */
    float s1[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, c1[2] = { 3, 0 }, s2[4] = { 1, 1, 1, 1 }, c2[1] = { 9 };
    gguf_imatrix_entry pre[2] = {
        { "blk.0.ffn_up_exps.weight", 3, 8, s1, NULL, 2, c1 },
        { "blk.0.attn_q.weight", 9, 4, s2, NULL, 1, c2 },
    };
    gguf_imatrix base = { 2, pre, 1, NULL, chunk };
    run_importance im2 = { 0 };
    if (run_importance_merge(&im2, &base, chunk, &err) == 0)
        (void)run_importance_merge(&im2, &f, chunk, &err);
    run_importance_free(&im2);
    gguf_imatrix_free(&f);
    return 0;
}
