/*
 * fuzz_tiktoken.c — libFuzzer harness for gguf-convert's tiktoken.model
 * reader (convert/tiktoken.c): any bytes go to tiktoken_parse(); accepted
 * ranks become a vocabulary (the merges rebuilt, Kimi's specials) of a
 * size taken from the first byte, with and without an added_tokens_decoder.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "json.h"
#include "tiktoken.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tiktoken_ranks t;
    gguf_error err;
    if (tiktoken_parse(&t, "fuzz", (const char *)data, size, &err))
        return 0;
    static const char cfg_text[] = "{\"added_tokens_decoder\": {\"3\": {\"content\": \"[BOS]\"}, "
                                   "\"4\": {\"content\": \"<|im_end|>\"}}}";
    json_value *cfg = json_parse(cfg_text, strlen(cfg_text), &err);
    int64_t sizes[3] = { (int64_t)t.n + 258, (int64_t)t.n + (size ? data[0] : 0), 1 };
    for (int k = 0; k < 3; k++) {
        vocab v;
        if (vocab_from_tiktoken_ranks(&v, &t, k ? NULL : cfg, sizes[k], &err) == 0)
            vocab_free(&v);
    }
    json_free(cfg);
    tiktoken_free(&t);
    return 0;
}
