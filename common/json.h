/*
 * json.h — JSON documents (config.json, safetensors headers, tokenizer
 * files, gguf-edit --from-json) as a small tree.
 *
 * The reader takes JSON (RFC 8259) in one linear pass, plus NaN, Infinity
 * and -Infinity (Python's json writes them) and a leading byte-order mark;
 * anything else (YAML's extras, comments, trailing commas, single quotes,
 * raw control characters in strings other than tab, invalid UTF-8, lone
 * UTF-16 surrogates) is an error naming its line. Strings may hold NUL
 * (from \u0000), keys may not; keys have no length limit. Numbers keep
 * their text (str, len), so integers of any size are read exactly.
 * Objects keep their members in document order; a duplicate key is kept
 * twice and json_get finds the last one (as Python's json module keeps the
 * last). Nesting deeper than JSON_MAX_DEPTH is an error rather than a deep
 * stack.
 */
#ifndef COMMON_JSON_H
#define COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggufkit/gguf.h>

#define JSON_MAX_DEPTH 128
/* The largest JSON file json_load_file reads (the largest real
 * tokenizer.json files are ~35 MB); a larger one, or an endless stream such
 * as a FIFO, is an error rather than all of memory. */
#define JSON_MAX_FILE (256 << 20)

typedef enum json_type {
    JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT
} json_type;

typedef struct json_value json_value;
struct json_value {
    json_type    type;
    bool         integral; /* JSON_NUMBER written without fraction or exponent */
    bool         b;        /* JSON_BOOL */
    bool         str_inline; /* internal: str is in v's own block */
    size_t       line;     /* 1-based line where the value starts */
    char        *str;      /* JSON_STRING: the text (NUL-terminated; may hold NULs);
                            * JSON_NUMBER: the number as written */
    size_t       len;      /* its length in bytes */
    double       num;      /* JSON_NUMBER */
    json_value **items;    /* JSON_ARRAY items, JSON_OBJECT values */
    char       **keys;     /* JSON_OBJECT keys, parallel to items */
    size_t       n;
    size_t       cap;      /* internal: room in items (and keys, in the same block) */
};

/* Parses a whole document. NULL with err ("line N: ...") on failure. */
json_value *json_parse(const char *data, size_t len, gguf_error *err);

/* Reads and parses a file; err names the line (the caller the file). */
json_value *json_load_file(const char *path, gguf_error *err);

void json_free(json_value *v);

/* The member of an object (last one of that name), or NULL. */
const json_value *json_get(const json_value *obj, const char *key);

/* Moves every member of the object src (in order) to the end of the object
 * obj, so that json_get on obj finds them before obj's own of the same
 * names — Python's {**obj, **src} for lookups. src may be a member of obj
 * (but not hold obj: the tree would be a cycle); it is left empty. 0, or -1 when either is not an object or memory ran
 * out (the members not moved stay in src). */
int json_object_absorb(json_value *obj, json_value *src);

/* A string's text, or NULL when v is not a string. */
const char *json_str(const json_value *v);

/* An integral number that fits int64_t. */
bool json_int(const json_value *v, int64_t *out);

/* Any number. */
bool json_num(const json_value *v, double *out);

/* A whole number in [lo, hi] for key of file (both only for the message):
 * 0, or -1 with a message that tells a missing key ("'K' is missing") from
 * a value of the wrong kind ("line N: 'K' is a string \"4\", not a whole
 * number") or out of range ("line N: 'K' is 0, out of range (1 to 100000)"). */
int json_count(const json_value *v, const char *file, const char *key, int64_t lo, int64_t hi,
               int64_t *out, gguf_error *err);

#endif
