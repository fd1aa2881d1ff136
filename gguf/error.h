/*
 * error.h — the error record every libgguf call fills instead of printing.
 *
 * Library functions never print, exit or abort on bad input: they return a
 * status and write one human-readable sentence into a caller-owned
 * gguf_error. Tools prefix it with "gguf-TOOL: error: FILE: ".
 */
#ifndef GGUF_ERROR_H
#define GGUF_ERROR_H

#include <stddef.h>

#define GGUF_ERROR_MAX 512

typedef struct gguf_error {
    char msg[GGUF_ERROR_MAX];
} gguf_error;

/* Formats a message into err (when err is not NULL). Always returns -1 so
 * that callers can write `return gguf_error_set(err, ...);`. */
int gguf_error_set(gguf_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A string for a message: at most 40 bytes of s, control bytes, quotes and
 * backslashes as \xNN, NUL-terminated in buf. Returns buf. */
const char *gguf_error_preview(const char *s, size_t len, char buf[48]);

/* Prefixes the message already in err with more context ("shard 2: ..."). */
void gguf_error_prefix(gguf_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
