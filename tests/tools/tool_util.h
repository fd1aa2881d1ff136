/*
 * tool_util.h — what the test tools share: a fatal error, checked
 * allocation and a JSON string writer. Define TOOL_NAME (the program's name,
 * a string literal) before including it.
 */
#ifndef GGUFKIT_TOOL_UTIL_H
#define GGUFKIT_TOOL_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TOOL_NAME
#error "define TOOL_NAME before including tool_util.h"
#endif

static inline void die(const char *what)
{
    fprintf(stderr, TOOL_NAME ": %s\n", what);
    exit(1);
}

static inline void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

static inline void *xmalloc(size_t n) { return xrealloc(NULL, n); }

static inline char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

/* s[0..n) as a JSON string: quotes and backslashes escaped, \n and \t as
 * such, other control bytes as \u00XX, everything else (UTF-8) as it is. */
static inline void json_put_str(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

#endif
