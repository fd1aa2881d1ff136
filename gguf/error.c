/*
 * error.c — formatting of gguf_error messages.
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int gguf_error_set(gguf_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

void gguf_error_prefix(gguf_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char head[GGUF_ERROR_MAX], old[GGUF_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s%s", head, old);
}
