/*
 * error.c — formatting of gguf_error messages.
 */
#include <ggufkit/gguf.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifndef GGUFKIT_VERSION
#error "GGUFKIT_VERSION must be defined by the build"
#endif

const char *gguf_version(void) { return GGUFKIT_VERSION; }

const char *gguf_errcode_name(int code)
{
    static const char *const names[] = { "none", "io", "format", "unsupported", "limit", "nomem", "arg" };
    return code >= 0 && code < (int)(sizeof names / sizeof names[0]) ? names[code] : "unknown";
}

static void error_vset(gguf_error *err, int code, const char *fmt, va_list ap)
{
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    err->code = code;
}

int gguf_error_set(gguf_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        error_vset(err, GGUF_ERR_FORMAT, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int gguf_error_setc(gguf_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        error_vset(err, code, fmt, ap);
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

const char *gguf_error_preview(const char *s, size_t len, char buf[48])
{
    size_t o = 0;
    for (size_t i = 0; i < len && o < 40; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != 0x7F && c != '"' && c != '\\')
            buf[o++] = (char)c;
        else
            o += (size_t)snprintf(buf + o, 48 - o, "\\x%02x", c);
    }
    buf[o > 40 ? 40 : o] = 0;
    return buf;
}
