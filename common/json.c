/*
 * json.c — JSON through libyaml's event parser (see json.h).
 */
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

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

void json_free(json_value *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        json_free(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

/* Appends item (and for objects key) to a container; capacity doubles at
 * each power of two. */
static int push(json_value *c, char *key, json_value *item)
{
    if ((c->n & (c->n - 1)) == 0) {
        size_t cap = c->n < 4 ? 4 : 2 * c->n;
        json_value **items = realloc(c->items, cap * sizeof *items);
        if (!items)
            return -1;
        c->items = items;
        if (c->type == JSON_OBJECT) {
            char **keys = realloc(c->keys, cap * sizeof *keys);
            if (!keys)
                return -1;
            c->keys = keys;
        }
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

static json_value *scalar_value(const yaml_event_t *e, gguf_error *err)
{
    size_t line = e->start_mark.line + 1;
    const char *text = (const char *)e->data.scalar.value;
    size_t len = e->data.scalar.length;
    json_value *v;
    if (e->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
        e->data.scalar.style == YAML_LITERAL_SCALAR_STYLE ||
        e->data.scalar.style == YAML_FOLDED_SCALAR_STYLE) {
        gguf_error_set(err, "line %zu: not JSON (YAML scalar style)", line);
        return NULL;
    }
    if (e->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE) {
        if (!(v = new_value(JSON_STRING, line)) || !(v->str = malloc(len + 1))) {
            free(v);
            gguf_error_set(err, "out of memory");
            return NULL;
        }
        memcpy(v->str, text, len);
        v->str[len] = 0;
        v->len = len;
        return v;
    }
    if (!strcmp(text, "true") || !strcmp(text, "false")) {
        if ((v = new_value(JSON_BOOL, line)))
            v->b = text[0] == 't';
    } else if (!strcmp(text, "null")) {
        v = new_value(JSON_NULL, line);
    } else {
        bool integral;
        /* Python's json also writes NaN and Infinity; accept those too */
        bool special = !strcmp(text, "NaN") || !strcmp(text, "Infinity") ||
                       !strcmp(text, "-Infinity");
        if (!special && !number_syntax(text, &integral)) {
            gguf_error_set(err, "line %zu: '%.40s' is not a JSON value", line, text);
            return NULL;
        }
        if ((v = new_value(JSON_NUMBER, line))) {
            v->num = special ? (text[0] == 'N' ? NAN : text[0] == '-' ? -INFINITY : INFINITY)
                             : strtod(text, NULL);
            v->integral = !special && integral;
            v->str = strdup(text); /* the digits, for exact integers */
            v->len = len;
            if (!v->str) {
                free(v);
                v = NULL;
            }
        }
    }
    if (!v)
        gguf_error_set(err, "out of memory");
    return v;
}

/* The parse: containers on a stack, each value attached to the top. */
typedef struct frame {
    json_value *c;
    char       *key; /* pending object key */
} frame;

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

/* The raw UTF-8 characters inside a JSON string that libyaml would not
 * read as themselves: DEL and the C1 controls it refuses as unprintable,
 * NEL, LINE and PARAGRAPH SEPARATOR that YAML folds as line breaks, and the
 * BOM and non-characters. Real tokenizer.json files hold such pieces. The
 * length of the sequence at p, with its code point, or 0. */
static int yaml_unsafe_char(const unsigned char *p, size_t avail, unsigned *cp)
{
    if (p[0] == 0x7f) {
        *cp = 0x7f;
        return 1;
    }
    if (avail >= 2 && p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
        *cp = p[1];
        return 2;
    }
    if (avail >= 3 && ((p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) ||
                       (p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) ||
                       (p[0] == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf)))) {
        *cp = (unsigned)(p[0] & 0x0f) << 12 | (unsigned)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
        return 3;
    }
    return 0;
}

/* What libyaml needs to read a JSON document as JSON means it: inside
 * strings, UTF-16 surrogate pairs ("\ud83d\ude00", which libyaml rejects)
 * become "\U0001f600", and the characters of yaml_unsafe_char become
 * "\uXXXX" escapes. Returns a rewritten copy, or NULL (with *out_len
 * untouched) when nothing needs rewriting or memory ran out. */
static char *rewrite_for_yaml(const char *data, size_t len, size_t *out_len)
{
    char *out = NULL;
    size_t w = 0;
    bool in_string = false;
    unsigned cp = 0;
    for (size_t i = 0; i < len; i++) {
        char c = data[i];
        int hi = -1, lo = -1, n = 0;
        if (!in_string) {
            in_string = c == '"';
        } else if (c == '"') {
            in_string = false;
        } else if (c == '\\' && i + 1 < len) {
            if (!(data[i + 1] == 'u' && i + 12 <= len && (hi = hex4(data + i + 2)) >= 0xd800 &&
                  hi < 0xdc00 && data[i + 6] == '\\' && data[i + 7] == 'u' &&
                  (lo = hex4(data + i + 8)) >= 0xdc00 && lo < 0xe000)) {
                hi = -1;
                if (out)
                    out[w++] = c;
                c = data[++i]; /* the escaped character is copied below */
            }
        } else {
            n = yaml_unsafe_char((const unsigned char *)data + i, len - i, &cp);
        }
        if ((hi >= 0 || n) && !out) {
            /* an escape is at most six times the bytes it replaces (DEL:
             * one byte, "\\u007f") */
            if (len > SIZE_MAX / 6 - 1 || !(out = malloc(6 * len + 1)))
                return NULL;
            memcpy(out, data, i);
            w = i;
        }
        if (hi >= 0) {
            cp = 0x10000u + ((unsigned)(hi - 0xd800) << 10) + (unsigned)(lo - 0xdc00);
            w += (size_t)snprintf(out + w, 11, "\\U%08x", cp);
            i += 11;
        } else if (n) {
            w += (size_t)snprintf(out + w, 7, "\\u%04x", cp);
            i += (size_t)n - 1;
        } else if (out) {
            out[w++] = c;
        }
    }
    if (out)
        *out_len = w;
    return out;
}

static json_value *parse_events(const char *data, size_t len, gguf_error *err);

json_value *json_parse(const char *data, size_t len, gguf_error *err)
{
    size_t n;
    char *copy = rewrite_for_yaml(data, len, &n);
    json_value *v = parse_events(copy ? copy : data, copy ? n : len, err);
    free(copy);
    return v;
}

static json_value *parse_events(const char *data, size_t len, gguf_error *err)
{
    yaml_parser_t p;
    yaml_event_t e;
    frame stack[JSON_MAX_DEPTH + 1];
    int depth = 0;
    json_value *root = NULL;
    bool done = false, ok = true;
    if (!yaml_parser_initialize(&p)) {
        gguf_error_set(err, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
    while (ok && !done) {
        if (!yaml_parser_parse(&p, &e)) {
            gguf_error_set(err, "line %zu: %s", p.problem_mark.line + 1,
                           p.problem ? p.problem : "syntax error");
            ok = false;
            break;
        }
        size_t line = e.start_mark.line + 1;
        json_value *v = NULL;
        switch (e.type) {
        case YAML_STREAM_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (root) {
                gguf_error_set(err, "line %zu: more than one document", line);
                ok = false;
            }
            break;
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_ALIAS_EVENT:
            gguf_error_set(err, "line %zu: not JSON (YAML alias)", line);
            ok = false;
            break;
        case YAML_SCALAR_EVENT:
            if (e.data.scalar.anchor || e.data.scalar.tag) {
                gguf_error_set(err, "line %zu: not JSON (YAML anchor or tag)", line);
                ok = false;
                break;
            }
            /* an object key */
            if (depth > 0 && stack[depth - 1].c->type == JSON_OBJECT && !stack[depth - 1].key) {
                if (e.data.scalar.style != YAML_DOUBLE_QUOTED_SCALAR_STYLE) {
                    gguf_error_set(err, "line %zu: object keys are quoted strings", line);
                    ok = false;
                } else if (memchr(e.data.scalar.value, 0, e.data.scalar.length)) {
                    gguf_error_set(err, "line %zu: NUL in an object key", line);
                    ok = false;
                } else if (!(stack[depth - 1].key = strdup((const char *)e.data.scalar.value))) {
                    gguf_error_set(err, "out of memory");
                    ok = false;
                }
                break;
            }
            ok = (v = scalar_value(&e, err)) != NULL;
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
            bool seq = e.type == YAML_SEQUENCE_START_EVENT;
            if ((seq ? (void *)e.data.sequence_start.anchor : (void *)e.data.mapping_start.anchor) ||
                (seq ? (void *)e.data.sequence_start.tag : (void *)e.data.mapping_start.tag) ||
                (seq ? e.data.sequence_start.style == YAML_BLOCK_SEQUENCE_STYLE
                     : e.data.mapping_start.style == YAML_BLOCK_MAPPING_STYLE)) {
                gguf_error_set(err, "line %zu: not JSON (YAML block style, anchor or tag)", line);
                ok = false;
                break;
            }
            if (depth > 0 && stack[depth - 1].c->type == JSON_OBJECT && !stack[depth - 1].key) {
                gguf_error_set(err, "line %zu: object keys are quoted strings", line);
                ok = false;
                break;
            }
            if (depth == JSON_MAX_DEPTH) {
                gguf_error_set(err, "line %zu: nested deeper than %d", line, JSON_MAX_DEPTH);
                ok = false;
                break;
            }
            json_value *c = new_value(seq ? JSON_ARRAY : JSON_OBJECT, line);
            if (!c) {
                gguf_error_set(err, "out of memory");
                ok = false;
                break;
            }
            stack[depth].c = c;
            stack[depth].key = NULL;
            depth++;
            break;
        }
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            v = stack[--depth].c; /* libyaml balances start and end events */
            break;
        default:
            break;
        }
        yaml_event_delete(&e);
        if (!ok || !v)
            continue;
        if (depth == 0) {
            root = v;
        } else {
            frame *f = &stack[depth - 1];
            char *key = f->key;
            f->key = NULL;
            if (push(f->c, key, v)) {
                free(key);
                json_free(v);
                gguf_error_set(err, "out of memory");
                ok = false;
            }
        }
    }
    /* unwind whatever was open */
    for (int i = depth - 1; i >= 0; i--) { /* containers join their parent only when closed */
        free(stack[i].key);
        json_free(stack[i].c);
    }
    yaml_parser_delete(&p);
    if (!ok) {
        json_free(root);
        return NULL;
    }
    if (!root) {
        gguf_error_set(err, "empty document");
        return NULL;
    }
    return root;
}

json_value *json_load_file(const char *path, gguf_error *err)
{
    uint8_t *buf;
    size_t len;
    if (gguf_read_file(path, JSON_MAX_FILE, &buf, &len, err))
        return NULL;
    json_value *v = json_parse((const char *)buf, len, err);
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
