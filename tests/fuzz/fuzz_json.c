/*
 * fuzz_json.c — libFuzzer harness for the JSON reader: any bytes go to
 * json_parse(); an accepted document is walked and its lookups exercised,
 * and read as a chat template (common/chat_template.c).
 */
#include <stddef.h>
#include <stdint.h>

#include "chat_template.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t walk(const json_value *v)
{
    size_t n = 1;
    int64_t i;
    double d;
    (void)json_int(v, &i);
    (void)json_num(v, &d);
    (void)json_str(v);
    for (size_t k = 0; k < v->n; k++) {
        n += walk(v->items[k]);
        if (v->keys)
            (void)json_get(v, v->keys[k]);
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gguf_error err;
    json_value *v = json_parse((const char *)data, size, &err);
    if (v) {
        volatile size_t sink = walk(v);
        (void)sink;
        /* a chat_template value, as tokenizer_config.json's or on its own */
        chat_templates ct;
        if (chat_templates_from_json(&ct, json_get(v, "chat_template"), &err) == 0)
            chat_templates_free(&ct);
        if (chat_templates_from_json(&ct, v, &err) == 0)
            chat_templates_free(&ct);
        json_free(v);
    }
    return 0;
}
