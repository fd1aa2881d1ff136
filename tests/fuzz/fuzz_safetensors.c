/*
 * fuzz_safetensors.c — libFuzzer harness for the safetensors reader: any
 * bytes go to st_parse(); every accepted tensor's data is read.
 */
#include <stddef.h>
#include <stdint.h>

#include "safetensors.h"
#include "st_touch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    st_file f;
    gguf_error err;
    if (st_parse(data, size, &f, &err) == 0)
        st_touch_and_close(&f);
    return 0;
}
