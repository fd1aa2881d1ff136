/*
 * fuzz_target_table.c — libFuzzer harness for gguf-quantize --sensitivity's
 * table (quantize/target.c).
 *
 * Any bytes go to target_table_parse(); an accepted table is then used to
 * choose types for three tensors of fixed shapes at a budget taken from the
 * input's first bytes — rows of other sizes, types that do not fit, KLDs
 * of any sign must give a choice or an error, never a read out of bounds or
 * an endless loop. Input with a line "%%" is two tables: the measured one
 * above it, completed by target_table_fill with the one below (as an
 * estimate) before the choice.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ggufkit/gguf.h>

#include "target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    target_table t, est;
    gguf_error err;
    const char *cut = NULL;
    for (size_t i = 0; !cut && i + 4 <= size; i++)
        if (!memcmp(data + i, "\n%%\n", 4))
            cut = (const char *)data + i;
    const size_t first = cut ? (size_t)(cut - (const char *)data) + 1 : size;
    if (target_table_parse((const char *)data, first, &t, &err))
        return 0;
    if (cut && target_table_parse(cut + 4, size - first - 3, &est, &err) == 0) {
        const int rc = target_table_fill(&t, &est, &err);
        target_table_free(&est);
        if (rc) {
            target_table_free(&t);
            return 0;
        }
    }
    uint64_t budget = 0;
    memcpy(&budget, data, size < sizeof budget ? size : sizeof budget);
    target_item it[3] = {
        { t.rows[0].name, 256, 4, GGUF_DT_Q4_K, 0, NULL, NULL, 1 },
        { "blk.0.attn_q.weight", 32, 7, GGUF_DT_Q8_0, 0, NULL, NULL, 1 },
        { t.rows[t.n - 1].name, 512, 1, GGUF_DT_Q6_K, 0, NULL, NULL, 1 },
    };
    target_result r;
    (void)target_allocate(it, 3, &t, budget % (1u << 20), &r, &err);
    target_table_free(&t);
    return 0;
}
