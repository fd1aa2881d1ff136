/*
 * fuzz_spm.c — libFuzzer harness for the tokenizer.model (protobuf) reader.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "spm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    spm_model m;
    gguf_error err;
    if (spm_parse(data, size, &m, &err))
        return 0;
    volatile size_t sink = 0;
    for (size_t i = 0; i < m.n; i++)
        sink += strlen(m.pieces[i].text) + (size_t)m.pieces[i].type;
    (void)sink;
    spm_free(&m);
    return 0;
}
