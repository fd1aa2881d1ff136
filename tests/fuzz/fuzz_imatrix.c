/*
 * fuzz_imatrix.c — libFuzzer harness for the importance-matrix reader.
 *
 * Any bytes go to gguf_imatrix_parse(); an accepted file has every weight
 * read and every name looked up again.
 */
#include <stddef.h>
#include <stdint.h>

#include <ggufkit/quants.h>

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
    gguf_imatrix_free(&im);
    return 0;
}
