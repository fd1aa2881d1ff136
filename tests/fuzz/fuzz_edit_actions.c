/*
 * fuzz_edit_actions.c — gguf-edit's action parser on arbitrary arguments:
 * the input is split at NUL bytes into (option, argument) pairs, each
 * parsed (typed values range-checked, arrays split) and described, then
 * the actions are run over a small key list (edit_plan_build); nothing may
 * crash, leak or read out of bounds. (@FILE and --chat-template read
 * files: the fuzzer's file names mostly do not exist, which is an error
 * path too.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"

static const char *const options[] = { "--set", "--set-array", "--set-strings", "--delete",
                                       "--rename", "--chat-template" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    edit_actions as = { 0 };
    gguf_error err = { 0 };
    size_t at = 0;
    for (int k = 0; at < size && k < 16; k++) {
        const char *opt = options[(uint8_t)buf[at] % 6];
        at++;
        const char *arg = buf + at;
        at += strlen(arg) + 1;
        if (edit_parse(&as, opt, arg, &err) == 0 && as.n) {
            char d[160];
            const edit_action *a = &as.a[as.n - 1];
            if (a->kind == EDIT_SET && !a->inferred)
                edit_describe(&a->v, d, sizeof d);
        }
    }
    /* general.name (str), a.b (u32), a.c (arr[i8]) */
    static const gguf_str name = { "model", 5 };
    static const uint8_t u32[4] = { 7, 0, 0, 0 }, i8s[3] = { 1, 2, 3 };
    static const gguf_kv kvs[] = {
        { .key = "general.name", .key_len = 12, .type = GGUF_VT_STR, .elem_type = GGUF_VT_STR, .n = 1, .strs = &name },
        { .key = "a.b", .key_len = 3, .type = GGUF_VT_U32, .elem_type = GGUF_VT_U32, .n = 1, .data = u32 },
        { .key = "a.c", .key_len = 3, .type = GGUF_VT_ARR, .elem_type = GGUF_VT_I8, .n = 3, .data = i8s },
    };
    const gguf_kv *ptrs[] = { &kvs[0], &kvs[1], &kvs[2] };
    edit_plan p;
    if (edit_plan_build(&p, &as, ptrs, 3, &err) == 0) {
        for (size_t i = 0; i < p.n; i++)
            (void)edit_key_changed(&p.keys[i]);
        edit_plan_free(&p);
    }
    edit_free(&as);
    free(buf);
    return 0;
}
