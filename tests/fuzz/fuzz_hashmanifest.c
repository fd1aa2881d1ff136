/*
 * fuzz_hashmanifest.c — libFuzzer harness for gguf-inspect's reader of
 * llama-gguf-hash manifests (inspect/llhash.c): any bytes go to
 * llhash_manifest_parse(); an accepted manifest is looked up with each of
 * its own lines and with a name it does not hold.
 */
#include <stddef.h>
#include <stdint.h>

#include "llhash.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    llhash_manifest m;
    gguf_error err;
    if (llhash_manifest_parse(&m, (const char *)data, size, &err) == 0) {
        volatile int sink = 0;
        for (size_t i = 0; i < m.n; i++)
            sink += llhash_manifest_verify(&m, m.e[i].type, m.e[i].name, m.e[i].hash);
        for (int t = 0; t < LLHASH_TYPES; t++)
            sink += llhash_manifest_verify(&m, t, "no such tensor", "0");
        llhash_manifest_free(&m);
    }
    return 0;
}
