/*
 * st_touch.h — for the weight-file fuzz harnesses: reads every byte of
 * every tensor an accepted file lists (so the sanitizers see any range
 * error), then closes it.
 */
#ifndef FUZZ_ST_TOUCH_H
#define FUZZ_ST_TOUCH_H

#include "safetensors.h"

static inline void st_touch_and_close(st_file *f)
{
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < f->n; i++)
        for (uint64_t b = 0; b < f->tensors[i].nbytes; b++)
            sink ^= f->tensors[i].data[b];
    (void)sink;
    st_close(f);
}

#endif
