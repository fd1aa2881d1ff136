/*
 * fuzz_safetensors.c — libFuzzer harness for the safetensors reader: any
 * bytes go to st_parse(); every accepted tensor's data is read.
 */
#include <stddef.h>
#include <stdint.h>

#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    st_file f;
    gguf_error err;
    if (st_parse(data, size, &f, &err))
        return 0;
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < f.n; i++)
        for (uint64_t b = 0; b < f.tensors[i].nbytes; b++)
            sink ^= f.tensors[i].data[b];
    (void)sink;
    st_close(&f);
    return 0;
}
