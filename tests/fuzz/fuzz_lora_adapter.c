/*
 * fuzz_lora_adapter.c — libFuzzer harness for LoRA adapter GGUF files
 * against a base: the input is a u32 length N, N bytes of a base GGUF, then
 * the adapter GGUF; both through gguf_open_memory, then
 * gguf_lora_adapter_from (keys, pair names, ranks, shapes) and every pair
 * looked up.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lora_adapter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    uint32_t n;
    memcpy(&n, data, 4);
    if (n > size - 4)
        return 0;
    gguf_error err;
    gguf_file *base = gguf_open_memory(data + 4, n, &err);
    if (!base)
        return 0;
    gguf_file *f = gguf_open_memory(data + 4 + n, size - 4 - n, &err);
    gguf_lora_adapter a;
    if (f && gguf_lora_adapter_from(f, base, &a, &err) == 0) {
        for (uint64_t i = 0; i < gguf_n_tensors(base); i++) {
            const gguf_tensor *ta, *tb;
            if (gguf_lora_adapter_pair(&a, gguf_tensor_at(base, i)->name, &ta, &tb))
                (void)gguf_lora_adapter_scale(a.alpha, 1.0f, ta->ne[1]);
        }
        gguf_lora_adapter_close(&a);
    }
    gguf_close(base);
    return 0;
}
