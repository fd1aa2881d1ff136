/*
 * fuzz_target_table.c — libFuzzer harness for gguf-quantize --sensitivity's
 * table (quantize/target.c).
 *
 * Any bytes go to target_table_parse(); an accepted table is then used to
 * choose types for three tensors of fixed shapes at a budget taken from the
 * input's first bytes — rows of other sizes, types that do not fit, KLDs
 * of any sign must give a choice or an error, never a read out of bounds or
 * an endless loop.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ggufkit/gguf.h>

#include "target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    target_table t;
    gguf_error err;
    if (target_table_parse((const char *)data, size, &t, &err))
        return 0;
    uint64_t budget = 0;
    memcpy(&budget, data, size < sizeof budget ? size : sizeof budget);
    target_item it[3] = {
        { t.rows[0].name, 256, 4, GGUF_DT_Q4_K, 0 },
        { "blk.0.attn_q.weight", 32, 7, GGUF_DT_Q8_0, 0 },
        { t.rows[t.n - 1].name, 512, 1, GGUF_DT_Q6_K, 0 },
    };
    target_result r;
    (void)target_allocate(it, 3, &t, budget % (1u << 20), &r, &err);
    target_table_free(&t);
    return 0;
}
