/*
 * fuzz_lora_config.c — libFuzzer harness for adapter_config.json: any
 * bytes that parse as JSON go through lora_config_read (every field's type
 * and range, the refusals, the aLoRA token list).
 */
#include <stddef.h>
#include <stdint.h>

#include "lora.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gguf_error err;
    json_value *cfg = json_parse((const char *)data, size, &err);
    if (!cfg)
        return 0;
    lora_config c;
    if (lora_config_read(cfg, &c, &err) == 0)
        lora_config_free(&c);
    json_free(cfg);
    return 0;
}
