/*
 * fuzz_recipe.c — libFuzzer harness for gguf-quantize's YAML recipes.
 *
 * Any bytes go to recipe_parse_yaml(); an accepted recipe is matched
 * against a few tensor names.
 */
#include <stddef.h>
#include <stdint.h>

#include "recipe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = { "token_embd.weight", "blk.0.attn_v.weight",
                                         "blk.31.ffn_down.weight", "output.weight", "" };
    recipe r;
    gguf_error err;
    recipe_init(&r);
    if (recipe_parse_yaml(&r, (const char *)data, size, &err) == 0) {
        volatile int sink = 0;
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            sink += recipe_match(&r, names[i]);
        (void)sink;
    }
    recipe_free(&r);
    return 0;
}
