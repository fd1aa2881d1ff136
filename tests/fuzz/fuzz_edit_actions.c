/*
 * fuzz_edit_actions.c — gguf-edit's action parser on arbitrary arguments:
 * the input is split at NUL bytes into (option, argument) pairs, each
 * parsed (typed values range-checked, arrays split) and described; nothing
 * may crash, leak or read out of bounds. (@FILE and --chat-template read
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
            (void)edit_fate_of(&as, "general.name");
        }
    }
    edit_free(&as);
    free(buf);
    return 0;
}
