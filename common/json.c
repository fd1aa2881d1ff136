/*
 * json.c — a JSON reader (see json.h): one pass over the bytes, recursive
 * descent bounded by JSON_MAX_DEPTH, linear in the document's size.
 */
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"

static json_value *new_value(json_type type, size_t line)
{
    json_value *v = calloc(1, sizeof *v);
    if (v) {
        v->type = type;
        v->line = line;
    }
    return v;
}

/* A value with room for a text of len bytes (and its NUL) in the same
 * block: one allocation per string or number, not two. */
static json_value *new_text_value(json_type type, size_t line, size_t len)
{
    if (len > SIZE_MAX - sizeof(json_value) - 1)
        return NULL;
    json_value *v = calloc(1, sizeof *v + len + 1);
    if (v) {
        v->type = type;
        v->line = line;
        v->str = (char *)(v + 1);
        v->str_inline = true;
    }
    return v;
}

void json_free(json_value *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        json_free(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items); /* an object's keys are in the same block */
    if (!v->str_inline)
        free(v->str);
    free(v);
}

/* Appends item (and for objects key) to a container; capacity doubles. An
 * object's items and keys share one block (one allocation per object of
 * up to 4 members). */
static int push(json_value *c, char *key, json_value *item)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 4;
        if (cap > SIZE_MAX / (2 * sizeof(void *)))
            return -1;
        if (c->type == JSON_OBJECT) {
            json_value **items = malloc(cap * (sizeof *items + sizeof *c->keys));
            if (!items)
                return -1;
            char **keys = (char **)(items + cap);
            if (c->n) {
                memcpy(items, c->items, c->n * sizeof *items);
                memcpy(keys, c->keys, c->n * sizeof *keys);
            }
            free(c->items);
            c->items = items;
            c->keys = keys;
        } else {
            json_value **items = realloc(c->items, cap * sizeof *items);
            if (!items)
                return -1;
            c->items = items;
        }
        c->cap = cap;
    }
    c->items[c->n] = item;
    if (c->type == JSON_OBJECT)
        c->keys[c->n] = key;
    c->n++;
    return 0;
}

/* A JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool number_syntax(const char *s, bool *integral)
{
    const char *p = s;
    *integral = true;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return false;
    if (*p == '.') {
        *integral = false;
        if (!(*++p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        *integral = false;
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == 0;
}

/* ---------------------------------------------------------------------------
 * The parser
 */

typedef struct parser {
    const char *p, *end;
    size_t      line;
    int         depth;
    gguf_error *err;
} parser;

static void skip_ws(parser *ps)
{
    for (; ps->p < ps->end; ps->p++) {
        char c = *ps->p;
        if (c == '\n')
            ps->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            break;
    }
}

static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = p[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The length of the well-formed UTF-8 sequence at p (at most avail bytes)
 * that is not ASCII, or 0: no overlong forms, no surrogates, nothing past
 * U+10FFFF. */
static size_t utf8_len(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!n || n > avail)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) || (c == 0xf0 && p[1] < 0x90) ||
        (c == 0xf4 && p[1] >= 0x90))
        return 0;
    return n;
}

/* A string at ps->p (the opening quote): its text, malloc'd and
 * NUL-terminated (it may hold NULs from \u0000), into *out and *len. The
 * decoded text is never longer than the quoted one. */
static int parse_string(parser *ps, char **out, json_value **val, size_t *len)
{
    const char *q = ++ps->p; /* past the quote */
    bool plain = true;
    while (q < ps->end && *q != '"') {
        if (*q == '\\') {
            plain = false;
            q++;
        }
        q++;
    }
    if (q >= ps->end)
        return gguf_error_set(ps->err, "line %zu: a string without its closing quote", ps->line);
    /* a key on its own, a string value inside its json_value */
    json_value *v = val ? new_text_value(JSON_STRING, ps->line, (size_t)(q - ps->p)) : NULL;
    char *o = val ? (v ? v->str : NULL) : malloc((size_t)(q - ps->p) + 1);
    if (!o)
        return gguf_error_set(ps->err, "out of memory");
    size_t w = 0;
    const char *p = ps->p;
    while (p < q) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x80) {
            size_t n = utf8_len((const unsigned char *)p, (size_t)(q - p));
            if (!n) {
                free(val ? (void *)v : (void *)o);
                return gguf_error_set(ps->err, "line %zu: invalid UTF-8 in a string", ps->line);
            }
            memcpy(o + w, p, n);
            w += n;
            p += n;
            continue;
        }
        if (c < 0x20 && c != '\t') {
            free(val ? (void *)v : (void *)o);
            return gguf_error_set(ps->err, "line %zu: a raw control character (0x%02x) in a string "
                                  "(JSON writes it as an escape)", ps->line, c);
        }
        if (c != '\\' || plain) {
            o[w++] = (char)c;
            p++;
            continue;
        }
        char e = p[1];
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *k = e ? strchr(from, e) : NULL;
        if (k) {
            o[w++] = to[k - from];
            p += 2;
            continue;
        }
        int hi = e == 'u' && q - p >= 6 ? hex4(p + 2) : -1;
        if (hi < 0) {
            free(val ? (void *)v : (void *)o);
            return gguf_error_set(ps->err, "line %zu: bad escape '\\%c' in a string", ps->line,
                                  e >= 0x20 && e < 0x7f ? e : '?');
        }
        p += 6;
        unsigned cp = (unsigned)hi;
        if (hi >= 0xd800 && hi < 0xdc00) { /* a surrogate pair: "\ud83d\ude00" */
            int lo = q - p >= 6 && p[0] == '\\' && p[1] == 'u' ? hex4(p + 2) : -1;
            if (lo < 0xdc00 || lo >= 0xe000) {
                free(val ? (void *)v : (void *)o);
                return gguf_error_set(ps->err, "line %zu: a lone UTF-16 surrogate \\u%04x in a "
                                      "string", ps->line, (unsigned)hi);
            }
            cp = 0x10000u + ((unsigned)(hi - 0xd800) << 10) + (unsigned)(lo - 0xdc00);
            p += 6;
        } else if (hi >= 0xdc00 && hi < 0xe000) {
            free(val ? (void *)v : (void *)o);
            return gguf_error_set(ps->err, "line %zu: a lone UTF-16 surrogate \\u%04x in a string",
                                  ps->line, (unsigned)hi);
        }
        w += put_utf8(o + w, cp); /* at most 4 bytes for 6 or 12 read */
    }
    o[w] = 0;
    ps->p = q + 1;
    if (val) {
        v->len = w;
        *val = v;
    } else {
        *out = o;
        *len = w;
    }
    return 0;
}

static json_value *parse_value(parser *ps);

/* A word outside quotes: true, false, null, a number (or NaN, Infinity,
 * -Infinity, which Python's json writes), else an error naming it. */
static json_value *parse_word(parser *ps)
{
    const char *a = ps->p;
    while (ps->p < ps->end && !strchr(" \t\r\n,:[]{}\"", *ps->p))
        ps->p++;
    const size_t len = (size_t)(ps->p - a);
    char text[64];
    if (len == 0) {
        if (a == ps->end)
            gguf_error_set(ps->err, "line %zu: the document ends where a value should be", ps->line);
        else
            gguf_error_set(ps->err, "line %zu: expected a value, found '%c'", ps->line, *a);
        return NULL;
    }
    if (len >= sizeof text || memchr(a, 0, len)) {
        gguf_error_set(ps->err, "line %zu: '%.40s' is not a JSON value", ps->line,
                       memchr(a, 0, len < 40 ? len : 40) ? "(a NUL byte)" : a);
        return NULL;
    }
    memcpy(text, a, len);
    text[len] = 0;
    json_value *v;
    if (!strcmp(text, "true") || !strcmp(text, "false")) {
        if ((v = new_value(JSON_BOOL, ps->line)))
            v->b = text[0] == 't';
    } else if (!strcmp(text, "null")) {
        v = new_value(JSON_NULL, ps->line);
    } else {
        bool integral = false;
        bool special = !strcmp(text, "NaN") || !strcmp(text, "Infinity") ||
                       !strcmp(text, "-Infinity");
        if (!special && !number_syntax(text, &integral)) {
            gguf_error_set(ps->err, "line %zu: '%s' is not a JSON value%s", ps->line, text,
                           strchr("'&*!|>%@`#", text[0])
                           ? " (not JSON: YAML syntax?)" : "");
            return NULL;
        }
        if ((v = new_text_value(JSON_NUMBER, ps->line, len))) {
            v->num = special ? (text[0] == 'N' ? NAN : text[0] == '-' ? -INFINITY : INFINITY)
                             : strtod(text, NULL);
            v->integral = !special && integral;
            memcpy(v->str, text, len + 1); /* the digits, for exact integers */
            v->len = len;
        }
    }
    if (!v)
        gguf_error_set(ps->err, "out of memory");
    return v;
}

/* An object or array at ps->p (its opening bracket). */
static json_value *parse_container(parser *ps)
{
    const bool obj = *ps->p == '{';
    const char close = obj ? '}' : ']';
    if (ps->depth == JSON_MAX_DEPTH) {
        gguf_error_set(ps->err, "line %zu: nested deeper than %d", ps->line, JSON_MAX_DEPTH);
        return NULL;
    }
    json_value *c = new_value(obj ? JSON_OBJECT : JSON_ARRAY, ps->line);
    if (!c) {
        gguf_error_set(ps->err, "out of memory");
        return NULL;
    }
    ps->depth++;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return c;
    }
    for (;;) {
        char *key = NULL;
        size_t klen;
        if (obj) {
            if (ps->p >= ps->end || *ps->p != '"') {
                gguf_error_set(ps->err, "line %zu: object keys are quoted strings", ps->line);
                goto fail;
            }
            if (parse_string(ps, &key, NULL, &klen))
                goto fail;
            if (memchr(key, 0, klen)) {
                gguf_error_set(ps->err, "line %zu: NUL in an object key", ps->line);
                free(key);
                goto fail;
            }
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                gguf_error_set(ps->err, "line %zu: expected ':' after an object key", ps->line);
                free(key);
                goto fail;
            }
            ps->p++;
        }
        skip_ws(ps);
        json_value *v = parse_value(ps);
        if (!v) {
            free(key);
            goto fail;
        }
        if (push(c, key, v)) {
            free(key);
            json_free(v);
            gguf_error_set(ps->err, "out of memory");
            goto fail;
        }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            ps->depth--;
            return c;
        }
        gguf_error_set(ps->err, "line %zu: expected ',' or '%c' %s", ps->line, close,
                       ps->p >= ps->end ? "before the end of the document" : "");
        goto fail;
    }
fail:
    json_free(c);
    return NULL;
}

static json_value *parse_value(parser *ps)
{
    if (ps->p < ps->end && (*ps->p == '{' || *ps->p == '['))
        return parse_container(ps);
    if (ps->p < ps->end && *ps->p == '"') {
        json_value *v = NULL;
        if (parse_string(ps, NULL, &v, NULL))
            return NULL;
        return v;
    }
    return parse_word(ps);
}

json_value *json_parse(const char *data, size_t len, gguf_error *err)
{
    parser ps = { data, data + len, 1, 0, err };
    if (len >= 3 && !memcmp(data, "\xef\xbb\xbf", 3)) /* a byte-order mark */
        ps.p += 3;
    skip_ws(&ps);
    if (ps.p == ps.end) {
        gguf_error_set(err, "empty document");
        return NULL;
    }
    json_value *v = parse_value(&ps);
    if (!v)
        return NULL;
    skip_ws(&ps);
    if (ps.p < ps.end) {
        gguf_error_set(err, "line %zu: more than one document (text after the value)", ps.line);
        json_free(v);
        return NULL;
    }
    return v;
}

json_value *json_load_file(const char *path, gguf_error *err)
{
    uint8_t *buf;
    size_t len;
    if (gguf_read_file(path, JSON_MAX_FILE, &buf, &len, err))
        return NULL;
    json_value *v = json_parse((const char *)buf, len, err);
    char kb[256];
    const char *kind = v ? NULL : gguf_foreign_kind(buf, len, len, kb, sizeof kb);
    if (kind && strncmp(kind, "a JSON document", 15))
        gguf_error_set(err, "not JSON but %s", kind);
    free(buf);
    return v;
}

const json_value *json_get(const json_value *obj, const char *key)
{
    if (!obj || obj->type != JSON_OBJECT)
        return NULL;
    for (size_t i = obj->n; i-- > 0;)
        if (!strcmp(obj->keys[i], key))
            return obj->items[i];
    return NULL;
}

int json_object_absorb(json_value *obj, json_value *src)
{
    if (!obj || !src || obj == src || obj->type != JSON_OBJECT || src->type != JSON_OBJECT)
        return -1;
    size_t moved = 0;
    while (moved < src->n && push(obj, src->keys[moved], src->items[moved]) == 0)
        moved++;
    if (moved == src->n) {
        src->n = 0;
        return 0;
    }
    memmove(src->items, src->items + moved, (src->n - moved) * sizeof *src->items);
    memmove(src->keys, src->keys + moved, (src->n - moved) * sizeof *src->keys);
    src->n -= moved;
    return -1;
}

const char *json_str(const json_value *v)
{
    return v && v->type == JSON_STRING ? v->str : NULL;
}

bool json_int(const json_value *v, int64_t *out)
{
    if (!v || v->type != JSON_NUMBER || !v->integral)
        return false;
    errno = 0;
    char *end;
    long long x = strtoll(v->str, &end, 10);
    if (errno || *end)
        return false;
    *out = x;
    return true;
}

bool json_num(const json_value *v, double *out)
{
    if (!v || v->type != JSON_NUMBER)
        return false;
    *out = v->num;
    return true;
}

int json_count(const json_value *v, const char *file, const char *key, int64_t lo, int64_t hi,
               int64_t *out, gguf_error *err)
{
    if (!v)
        return gguf_error_set(err, "%s: '%s' is missing", file, key);
    if (json_int(v, out) && *out >= lo && *out <= hi)
        return 0;
    if (v->type == JSON_NUMBER && v->integral)
        return gguf_error_set(err, "%s line %zu: '%s' is %s, out of range (%" PRId64 " to %" PRId64
                              ")", file, v->line, key, v->str, lo, hi);
    static const char *const kinds[] = { "null", "a boolean", "a fractional number", "a string",
                                         "an array", "an object" };
    bool str = v->type == JSON_STRING;
    return gguf_error_set(err, "%s line %zu: '%s' is %s%s%s%s, not a whole number", file, v->line,
                          key, kinds[v->type], str ? " \"" : "", str ? v->str : "", str ? "\"" : "");
}
