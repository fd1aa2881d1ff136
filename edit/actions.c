/*
 * actions.c — parsing and applying gguf-edit's metadata actions (see
 * actions.h).
 */
#include "actions.h"
#include "chat_template.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ggufkit/arch.h>

#include "json.h"
#include "readfile.h"

static const struct { const char *name; uint32_t type; } type_names[] = {
    { "u8", GGUF_VT_U8 },   { "i8", GGUF_VT_I8 },   { "u16", GGUF_VT_U16 }, { "i16", GGUF_VT_I16 },
    { "u32", GGUF_VT_U32 }, { "i32", GGUF_VT_I32 }, { "u64", GGUF_VT_U64 }, { "i64", GGUF_VT_I64 },
    { "f32", GGUF_VT_F32 }, { "f64", GGUF_VT_F64 }, { "bool", GGUF_VT_BOOL }, { "str", GGUF_VT_STR },
};

static int type_by_name(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
        if (strlen(type_names[i].name) == len && !strncmp(type_names[i].name, s, len))
            return (int)type_names[i].type;
    return -1;
}

static bool key_ok(const char *k)
{
    size_t n = strlen(k);
    return n > 0 && n <= GGUF_MAX_KEY;
}

/* ---------------------------------------------------------------------------
 * Values
 */

/* One element of type t from text into out (the element's bytes). Every
 * number is parsed in full, without white space around it, and must fit
 * the type; f32 is rounded once, from the text (not through a double). */
static bool parse_elem(uint32_t t, const char *s, void *out)
{
    char *end;
    errno = 0;
    if (!*s || isspace((unsigned char)*s))
        return false;
    switch (t) {
    case GGUF_VT_BOOL:
        if (!strcmp(s, "true") || !strcmp(s, "1"))
            *(uint8_t *)out = 1;
        else if (!strcmp(s, "false") || !strcmp(s, "0"))
            *(uint8_t *)out = 0;
        else
            return false;
        return true;
    case GGUF_VT_F32: {
        float f = strtof(s, &end);
        /* ERANGE: an overflow (refused) or an underflow to a subnormal or
         * zero (kept, as a double's cast would) */
        if (*end || !isfinite(f) || (errno && fabsf(f) > 1))
            return false;
        memcpy(out, &f, 4);
        return true;
    }
    case GGUF_VT_F64: {
        double d = strtod(s, &end);
        if (*end || errno || !isfinite(d))
            return false;
        memcpy(out, &d, 8);
        return true;
    }
    case GGUF_VT_U8: case GGUF_VT_U16: case GGUF_VT_U32: case GGUF_VT_U64: {
        if (*s == '-')
            return false;
        unsigned long long u = strtoull(s, &end, 10);
        const unsigned long long max = t == GGUF_VT_U8 ? UINT8_MAX : t == GGUF_VT_U16 ? UINT16_MAX
                                     : t == GGUF_VT_U32 ? UINT32_MAX : UINT64_MAX;
        if (*end || errno || u > max)
            return false;
        uint64_t v = u;
        memcpy(out, &v, gguf_vtype_size(t)); /* little-endian: the low bytes */
        return true;
    }
    default: { /* signed */
        long long v = strtoll(s, &end, 10);
        const long long lo = t == GGUF_VT_I8 ? INT8_MIN : t == GGUF_VT_I16 ? INT16_MIN
                           : t == GGUF_VT_I32 ? INT32_MIN : INT64_MIN;
        const long long hi = t == GGUF_VT_I8 ? INT8_MAX : t == GGUF_VT_I16 ? INT16_MAX
                           : t == GGUF_VT_I32 ? INT32_MAX : INT64_MAX;
        if (*end || errno || v < lo || v > hi)
            return false;
        int64_t x = v;
        memcpy(out, &x, gguf_vtype_size(t));
        return true;
    }
    }
}

static void value_free(edit_value *v)
{
    for (uint64_t i = 0; v->strs && i < v->n; i++)
        free(v->strs[i]);
    free(v->strs);
    free(v->lens);
    free(v->data);
    memset(v, 0, sizeof *v);
}

/* A value of n items of element type elem from items[0..n) (texts). */
static int make_value(edit_value *v, uint32_t elem, bool array, char **items, uint64_t n,
                      const char *what, gguf_error *err)
{
    memset(v, 0, sizeof *v);
    v->type = array ? GGUF_VT_ARR : elem;
    v->elem = elem;
    v->n = n;
    if (elem == GGUF_VT_STR) {
        v->strs = calloc(n ? n : 1, sizeof *v->strs);
        v->lens = calloc(n ? n : 1, sizeof *v->lens);
        if (!v->strs || !v->lens)
            return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        for (uint64_t i = 0; i < n; i++) {
            if (!(v->strs[i] = strdup(items[i])))
                return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
            v->lens[i] = strlen(items[i]);
        }
        return 0;
    }
    const uint32_t esz = gguf_vtype_size(elem);
    if (!(v->data = calloc(n ? n : 1, esz)))
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    for (uint64_t i = 0; i < n; i++)
        if (!parse_elem(elem, items[i], (uint8_t *)v->data + i * esz)) {
            char pb[48];
            return gguf_error_setc(err, GGUF_ERR_ARG, "%s: \"%s\" is not a %s", what,
                                   gguf_error_preview(items[i], strlen(items[i]), pb),
                                   gguf_vtype_name(elem));
        }
    return 0;
}

/* The type a bare --set value gets when the file has no such key. */
static uint32_t infer_type(const char *s)
{
    uint8_t buf[8];
    if (!strcmp(s, "true") || !strcmp(s, "false"))
        return GGUF_VT_BOOL;
    if (parse_elem(GGUF_VT_I32, s, buf))
        return GGUF_VT_I32;
    if (parse_elem(GGUF_VT_I64, s, buf))
        return GGUF_VT_I64;
    if (parse_elem(GGUF_VT_F32, s, buf))
        return GGUF_VT_F32;
    return GGUF_VT_STR;
}

/* ---------------------------------------------------------------------------
 * Parsing
 */

/* A new action at the end of the list (the list grows by doubling: a
 * --from-json file of n keys costs O(n)). */
static edit_action *new_action(edit_actions *as, gguf_error *err)
{
    if (as->n == as->cap) {
        size_t cap = as->cap ? 2 * as->cap : 16;
        edit_action *p = cap < SIZE_MAX / sizeof *p ? realloc(as->a, cap * sizeof *p) : NULL;
        if (!p) {
            gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
            return NULL;
        }
        as->a = p;
        as->cap = cap;
    }
    memset(&as->a[as->n], 0, sizeof *as->a);
    return &as->a[as->n++];
}

/* Splits "KEY[:TYPE]=VALUE": the key (malloc'd), the type (-1 when absent)
 * and a pointer to the value. */
static int split_assign(const char *arg, const char *opt, char **key, int *type,
                        const char **value, gguf_error *err)
{
    const char *eq = strchr(arg, '=');
    if (!eq)
        return gguf_error_setc(err, GGUF_ERR_ARG, "%s: '%s' is not KEY=VALUE", opt, arg);
    const char *colon = memchr(arg, ':', (size_t)(eq - arg));
    size_t klen = (size_t)((colon ? colon : eq) - arg);
    *type = -1;
    if (colon && (*type = type_by_name(colon + 1, (size_t)(eq - colon - 1))) < 0)
        return gguf_error_setc(err, GGUF_ERR_ARG, "%s: unknown type '%.*s' (u8, i8, u16, i16, u32, "
                               "i32, u64, i64, f32, f64, bool, str)", opt, (int)(eq - colon - 1),
                               colon + 1);
    if (!(*key = strndup(arg, klen)))
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    if (!key_ok(*key))
        return gguf_error_setc(err, GGUF_ERR_ARG, "%s: a key of 1 to 65535 bytes, got '%s'", opt, arg);
    *value = eq + 1;
    return 0;
}

/* A file's text as one string (NUL bytes refused). */
static char *read_text(const char *path, const char *opt, size_t *len, gguf_error *err)
{
    uint8_t *buf;
    if (gguf_read_file(path, EDIT_MAX_FILE, &buf, len, err)) {
        gguf_error_prefix(err, "%s %s: ", opt, path);
        return NULL;
    }
    if (memchr(buf, 0, *len)) {
        free(buf);
        gguf_error_setc(err, GGUF_ERR_ARG, "%s %s: contains a NUL byte", opt, path);
        return NULL;
    }
    return (char *)buf;
}

/* Splits text at sep into items (pointers into text, which is modified). */
static char **split_items(char *text, char sep, bool drop_last_empty, uint64_t *n)
{
    uint64_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == sep;
    char **items = calloc(cap, sizeof *items);
    if (!items)
        return NULL;
    *n = 0;
    for (char *p = text;;) {
        char *q = strchr(p, sep);
        if (q)
            *q = 0;
        items[(*n)++] = p;
        if (!q)
            break;
        p = q + 1;
    }
    if (drop_last_empty && *n > 0 && !*items[*n - 1])
        (*n)--;
    return items;
}

/* A new SET action from "KEY[:TYPE]=VALUE": *a, the type (-1: none) and
 * the value's text. */
static int start_set(edit_actions *as, const char *opt, const char *arg, edit_action **a,
                     int *type, const char **value, gguf_error *err)
{
    if (!(*a = new_action(as, err)))
        return -1;
    (*a)->kind = EDIT_SET;
    return split_assign(arg, opt, &(*a)->key, type, value, err);
}

static int parse_set(edit_actions *as, const char *opt, const char *arg, gguf_error *err)
{
    edit_action *a;
    int type;
    const char *value;
    if (start_set(as, opt, arg, &a, &type, &value, err))
        return -1;
    if (type < 0) { /* typed later, from the file's key or the text */
        a->inferred = true;
        return (a->text = strdup(value)) ? 0 : gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    }
    char *item = (char *)value;
    return make_value(&a->v, (uint32_t)type, false, &item, 1, opt, err);
}

static int parse_set_array(edit_actions *as, const char *opt, const char *arg, gguf_error *err)
{
    edit_action *a;
    int type;
    const char *value;
    if (start_set(as, opt, arg, &a, &type, &value, err))
        return -1;
    if (type < 0)
        return gguf_error_setc(err, GGUF_ERR_ARG, "%s: give the element type, KEY:TYPE=V1,V2,...",
                               opt);
    char *text = strdup(value);
    uint64_t n = 0;
    char **items = text ? split_items(text, ',', false, &n) : NULL;
    int rc = items ? make_value(&a->v, (uint32_t)type, true, items, *value ? n : 0, opt, err)
                   : gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    free(items);
    free(text);
    return rc;
}

static int parse_strings(edit_actions *as, const char *opt, const char *arg, gguf_error *err)
{
    edit_action *a;
    int type;
    const char *value;
    if (start_set(as, opt, arg, &a, &type, &value, err))
        return -1;
    if (value[0] != '@' || (type >= 0 && type != GGUF_VT_STR))
        return gguf_error_setc(err, GGUF_ERR_ARG, "%s: want KEY=@FILE (one string per line)", opt);
    size_t len;
    char *text = read_text(value + 1, opt, &len, err);
    if (!text)
        return -1;
    uint64_t n = 0;
    char **items = split_items(text, '\n', true, &n);
    int rc = items ? make_value(&a->v, GGUF_VT_STR, true, items, len ? n : 0, opt, err)
                   : gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    free(items);
    free(text);
    return rc;
}

static void action_free(edit_action *a)
{
    free(a->key);
    free(a->to);
    free(a->text);
    value_free(&a->v);
    memset(a, 0, sizeof *a);
}

static int parse_one(edit_actions *as, const char *option, const char *arg, gguf_error *err);
static int parse_json_file(edit_actions *as, const char *path, gguf_error *err);

/* A failed action leaves nothing behind: the list is as it was. */
int edit_parse(edit_actions *as, const char *option, const char *arg, gguf_error *err)
{
    const size_t before = as->n;
    if (parse_one(as, option, arg, err) == 0)
        return 0;
    while (as->n > before)
        action_free(&as->a[--as->n]);
    return -1;
}

/* --chat-template with a model folder or a JSON file (tokenizer_config.json,
 * chat_template.json): the templates as gguf-convert reads them
 * (common/chat_template.h), replacing the file's: its named templates and
 * their list go, then each of the new ones is set. A text file is the
 * default template as it is (parse_one). */
static bool chat_source(const char *arg)
{
    struct stat st;
    size_t n = strlen(arg);
    return (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) || (n > 5 && !strcmp(arg + n - 5, ".json"));
}

static int add_set_str(edit_actions *as, const char *key, char **items, uint64_t n, bool array,
                       gguf_error *err)
{
    edit_action *a = new_action(as, err);
    if (!a)
        return -1;
    a->kind = EDIT_SET;
    if (!(a->key = strdup(key)))
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    return make_value(&a->v, GGUF_VT_STR, array, items, n, "--chat-template", err);
}

static int add_delete(edit_actions *as, const char *pattern, gguf_error *err)
{
    edit_action *a = new_action(as, err);
    if (!a)
        return -1;
    a->kind = EDIT_DELETE;
    return (a->key = strdup(pattern)) ? 0 : gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
}

static int parse_chat_templates(edit_actions *as, const char *arg, gguf_error *err)
{
    chat_templates ct = { 0 };
    struct stat st;
    int rc;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        char path[4096];
        snprintf(path, sizeof path, "%s/tokenizer_config.json", arg);
        json_value *tc = NULL;
        rc = 0;
        if (stat(path, &st) == 0 && !(tc = json_load_file(path, err))) {
            gguf_error_prefix(err, "tokenizer_config.json: ");
            rc = -1;
        }
        if (rc == 0)
            rc = chat_templates_from_folder(&ct, arg, tc, err);
        json_free(tc);
        if (rc == 0 && !ct.deflt && !ct.n)
            rc = gguf_error_set(err, "no chat template in the folder (its tokenizer_config.json, "
                                "chat_template.jinja or chat_template.json)");
    } else {
        json_value *doc = json_load_file(arg, err);
        const json_value *v = doc ? json_get(doc, "chat_template") : NULL;
        rc = !doc ? -1
           : !v   ? gguf_error_set(err, "no \"chat_template\" in the JSON object")
                  : chat_templates_from_json(&ct, v, err);
        json_free(doc);
        if (rc == 0 && !ct.deflt && !ct.n)
            rc = gguf_error_set(err, "chat_template is null");
    }
    if (rc == 0)
        rc = add_delete(as, "tokenizer.chat_template.*", err) ||
             add_delete(as, "tokenizer.chat_templates", err) ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < ct.n; i++) {
        char key[600];
        snprintf(key, sizeof key, "tokenizer.chat_template.%s", ct.names[i]);
        rc = add_set_str(as, key, &ct.texts[i], 1, false, err);
    }
    if (rc == 0 && ct.n)
        rc = add_set_str(as, "tokenizer.chat_templates", ct.names, ct.n, true, err);
    if (rc == 0)
        rc = ct.deflt ? add_set_str(as, GGUF_KEY_CHAT_TEMPLATE, &ct.deflt, 1, false, err)
                      : add_delete(as, GGUF_KEY_CHAT_TEMPLATE, err);
    chat_templates_free(&ct);
    if (rc)
        gguf_error_prefix(err, "--chat-template %s: ", arg);
    return rc;
}

static int parse_one(edit_actions *as, const char *option, const char *arg, gguf_error *err)
{
    if (!strcmp(option, "--set"))
        return parse_set(as, option, arg, err);
    if (!strcmp(option, "--set-array"))
        return parse_set_array(as, option, arg, err);
    if (!strcmp(option, "--set-strings"))
        return parse_strings(as, option, arg, err);
    if (!strcmp(option, "--from-json"))
        return parse_json_file(as, arg, err);
    edit_action *a = new_action(as, err);
    if (!a)
        return -1;
    if (!strcmp(option, "--delete")) {
        a->kind = EDIT_DELETE;
        if (!key_ok(arg))
            return gguf_error_setc(err, GGUF_ERR_ARG, "--delete: a pattern of 1 to 65535 bytes");
        return (a->key = strdup(arg)) ? 0 : gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    }
    if (!strcmp(option, "--rename")) {
        a->kind = EDIT_RENAME;
        const char *eq = strchr(arg, '=');
        if (!eq || eq == arg || !eq[1])
            return gguf_error_setc(err, GGUF_ERR_ARG, "--rename: '%s' is not OLD=NEW", arg);
        a->key = strndup(arg, (size_t)(eq - arg));
        a->to = strdup(eq + 1);
        if (!a->key || !a->to)
            return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        if (!key_ok(a->key) || !key_ok(a->to))
            return gguf_error_setc(err, GGUF_ERR_ARG, "--rename: keys of 1 to 65535 bytes");
        return 0;
    }
    if (!strcmp(option, "--chat-template") && chat_source(arg)) {
        as->n--; /* a set of actions of its own */
        action_free(a);
        return parse_chat_templates(as, arg, err);
    }
    if (!strcmp(option, "--chat-template")) {
        a->kind = EDIT_SET;
        size_t len;
        char *text = read_text(arg, option, &len, err);
        if (!text)
            return -1;
        int rc = (a->key = strdup(GGUF_KEY_CHAT_TEMPLATE)) ? make_value(&a->v, GGUF_VT_STR, false,
                                                                         &text, 1, option, err)
                                                           : gguf_error_setc(err, GGUF_ERR_NOMEM,
                                                                             "out of memory");
        free(text);
        return rc;
    }
    return gguf_error_setc(err, GGUF_ERR_ARG, "unknown action %s", option);
}

/* ---------------------------------------------------------------------------
 * --from-json
 */

/* "u32" → GGUF_VT_U32, "arr[i32]" → array of i32; -1 when neither. */
static int json_type_of(const char *t, bool *array)
{
    size_t n = strlen(t);
    *array = n > 5 && !strncmp(t, "arr[", 4) && t[n - 1] == ']';
    return *array ? type_by_name(t + 4, n - 5) : type_by_name(t, n);
}

/* One JSON scalar as the text parse_elem reads (not a copy): a number as
 * written (the parser keeps its text: integers exact at any size the type
 * holds, floats rounded once), a bool as true or false. NULL with err. */
static const char *json_item_text(const json_value *v, uint32_t elem, const char *where,
                                  gguf_error *err)
{
    if (elem == GGUF_VT_BOOL) {
        if (v->type == JSON_BOOL)
            return v->b ? "true" : "false";
        gguf_error_setc(err, GGUF_ERR_ARG, "%s: line %zu: expected true or false", where, v->line);
        return NULL;
    }
    if (v->type != JSON_NUMBER || !v->str) {
        gguf_error_setc(err, GGUF_ERR_ARG, "%s: line %zu: expected a number", where, v->line);
        return NULL;
    }
    if (!v->integral && elem != GGUF_VT_F32 && elem != GGUF_VT_F64) {
        gguf_error_setc(err, GGUF_ERR_ARG, "%s: line %zu: expected a whole number (no fraction or "
                        "exponent) for %s, got %.40s", where, v->line, gguf_vtype_name(elem), v->str);
        return NULL;
    }
    return v->str;
}

/* One key: {"type": T, "value": V} (with an optional "count" that must be
 * the array's length: gguf-inspect --json without --full shortens arrays). */
static int json_entry(edit_actions *as, const char *path, const char *key, const json_value *e,
                      gguf_error *err)
{
    char where[160], pb[48];
    const size_t klen = strlen(key);
    snprintf(where, sizeof where, "--from-json %s: key '%s%s'", path,
             gguf_error_preview(key, klen, pb), klen > 40 ? "..." : "");
    if (klen == 0 || klen > GGUF_MAX_KEY)
        return gguf_error_setc(err, GGUF_ERR_ARG, "%s: line %zu: a key of %zu bytes (GGUF keys "
                               "are 1 to %d bytes)", where, e->line, klen, GGUF_MAX_KEY);
    const char *t = json_str(json_get(e, "type"));
    const json_value *val = json_get(e, "value"), *count = json_get(e, "count");
    bool array = false;
    int elem = t ? json_type_of(t, &array) : -1;
    if (e->type != JSON_OBJECT || elem < 0 || !val)
        return gguf_error_setc(err, GGUF_ERR_ARG, "%s: line %zu: want {\"type\": "
                               "\"u32\"|\"arr[i32]\"|..., \"value\": ...}", where, e->line);
    const json_value *const *items = &val;
    size_t n = 1;
    if (array) {
        if (val->type != JSON_ARRAY)
            return gguf_error_setc(err, GGUF_ERR_ARG, "%s: line %zu: expected an array", where,
                                   val->line);
        int64_t c;
        if (count && (!json_int(count, &c) || c != (int64_t)val->n))
            return gguf_error_setc(err, GGUF_ERR_ARG, "%s: count says %s but the value holds %zu "
                                   "items (shortened output: use gguf-inspect --json --full)",
                                   where, count->str && count->type == JSON_NUMBER ? count->str
                                   : "another number", val->n);
        items = (const json_value *const *)val->items;
        n = val->n;
    }
    /* the items' texts (pointers into the tree; one on the stack for a scalar) */
    char *one, **texts = n <= 1 ? &one : calloc(n, sizeof *texts);
    if (!texts)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (elem == GGUF_VT_STR) {
            if (items[i]->type != JSON_STRING || memchr(items[i]->str, 0, items[i]->len))
                rc = gguf_error_setc(err, GGUF_ERR_ARG, "%s: line %zu: expected a string without "
                                     "NUL bytes", where, items[i]->line);
            else
                texts[i] = items[i]->str;
        } else if (!(texts[i] = (char *)json_item_text(items[i], (uint32_t)elem, where, err))) {
            rc = -1;
        }
    }
    edit_action *a = rc == 0 ? new_action(as, err) : NULL;
    if (a) {
        a->kind = EDIT_SET;
        rc = (a->key = strdup(key)) ? make_value(&a->v, (uint32_t)elem, array, texts, n, where, err)
                                    : gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    } else {
        rc = -1;
    }
    if (texts != &one)
        free(texts);
    return rc;
}

/* A map of keys to typed values, or a whole gguf-inspect --json document
 * (its "metadata" map); at most EDIT_MAX_FILE bytes. */
static int parse_json_file(edit_actions *as, const char *path, gguf_error *err)
{
    uint8_t *buf;
    size_t len;
    if (gguf_read_file(path, EDIT_MAX_FILE, &buf, &len, err)) {
        gguf_error_prefix(err, "--from-json %s: ", path);
        return -1;
    }
    json_value *doc = json_parse((const char *)buf, len, err);
    free(buf);
    if (!doc) {
        gguf_error_prefix(err, "--from-json %s: ", path);
        err->code = strstr(err->msg, "out of memory") ? GGUF_ERR_NOMEM : GGUF_ERR_FORMAT;
        return -1;
    }
    const json_value *map = json_get(doc, "metadata");
    map = map ? map : doc;
    int rc = 0;
    if (map->type != JSON_OBJECT)
        rc = gguf_error_setc(err, GGUF_ERR_ARG, "--from-json %s: expected an object of keys", path);
    else if (map->n > as->cap - as->n) { /* room for all of them at once */
        edit_action *a = map->n < SIZE_MAX / sizeof *a - as->n
                       ? realloc(as->a, (as->n + map->n) * sizeof *a) : NULL;
        if (!a)
            rc = gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        else
            as->a = a, as->cap = as->n + map->n;
    }
    for (size_t i = 0; rc == 0 && i < map->n; i++)
        rc = json_entry(as, path, map->keys[i], map->items[i], err);
    json_free(doc);
    if (rc && err->code == GGUF_ERR_ARG)
        err->code = GGUF_ERR_FORMAT; /* the file's content is wrong, not the command line */
    return rc;
}

void edit_free(edit_actions *as)
{
    for (size_t i = 0; i < as->n; i++)
        action_free(&as->a[i]);
    free(as->a);
    memset(as, 0, sizeof *as);
}

/* ---------------------------------------------------------------------------
 * The plan: the actions run over the key list
 */

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

/* The slot of name, taken for it if it has none (the table is sized for
 * every name the keys and actions hold: it never fills). */
static uint32_t name_slot(edit_plan *p, const char *name)
{
    for (size_t i = name_hash(name) & p->mask;; i = (i + 1) & p->mask) {
        edit_name_slot *s = &p->slots[i];
        if (!s->name)
            s->name = name;
        if (!strcmp(s->name, name))
            return (uint32_t)i;
    }
}

static void unlink_key(edit_plan *p, uint32_t k)
{
    uint32_t *at = &p->slots[p->keys[k].slot].head;
    while (*at != k + 1)
        at = &p->keys[*at - 1].next;
    *at = p->keys[k].next;
}

static void link_key(edit_plan *p, uint32_t k, const char *name)
{
    uint32_t s = name_slot(p, name);
    p->keys[k].name = name;
    p->keys[k].slot = s;
    p->keys[k].next = p->slots[s].head;
    p->slots[s].head = k + 1;
}

static int add_key(edit_plan *p, const gguf_kv *kv, const char *name, const edit_value *v,
                   gguf_error *err)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        edit_key *k = cap < UINT32_MAX / 2 ? realloc(p->keys, cap * sizeof *k) : NULL;
        if (!k)
            return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        p->keys = k;
        p->cap = cap;
    }
    p->keys[p->n] = (edit_key){ .kv = kv, .value = v };
    link_key(p, (uint32_t)p->n, name);
    p->n++;
    return 0;
}

/* A glob: a pattern fnmatch gives meaning to (else the delete names one key). */
static bool is_glob(const char *pat)
{
    return strpbrk(pat, "*?[\\") != NULL;
}

/* The type key k has at this point of the actions. */
static uint32_t current_type(const edit_key *k)
{
    return k->value ? k->value->type : k->kv->type;
}

/* A --set without :TYPE: the type of the key it names (the first alive of
 * that name, else any), else the text's. */
static int resolve(edit_plan *p, edit_action *a, uint32_t slot, gguf_error *err)
{
    const edit_key *named = NULL;
    for (uint32_t k = p->slots[slot].head; k; k = p->keys[k - 1].next)
        if (!named || (named->deleted && !p->keys[k - 1].deleted))
            named = &p->keys[k - 1];
    uint32_t t = named ? current_type(named) : infer_type(a->text);
    if (t == GGUF_VT_ARR)
        return gguf_error_setc(err, GGUF_ERR_ARG, "--set %s: the key is an array; use --set-array "
                               "or --set-strings", a->key);
    char *item = a->text;
    if (make_value(&a->v, t, false, &item, 1, "--set", err))
        return -1;
    a->inferred = false;
    return 0;
}

static bool value_is_kv(const edit_value *v, const gguf_kv *kv)
{
    if (v->type != kv->type || v->elem != kv->elem_type || v->n != kv->n)
        return false;
    if (v->n == 0)
        return true;
    if (v->elem != GGUF_VT_STR)
        return !memcmp(v->data, kv->data, (size_t)v->n * gguf_vtype_size(v->elem));
    for (uint64_t i = 0; i < v->n; i++)
        if (v->lens[i] != kv->strs[i].len || memcmp(v->strs[i], kv->strs[i].ptr, v->lens[i]))
            return false;
    return true;
}

static int apply(edit_plan *p, edit_action *a, gguf_error *err)
{
    char pb[48], pb2[48];
    if (a->kind == EDIT_DELETE && is_glob(a->key)) {
        for (size_t k = 0; k < p->n; k++)
            if (!p->keys[k].deleted && fnmatch(a->key, p->keys[k].name, 0) == 0)
                p->keys[k].deleted = true;
        return 0;
    }
    const uint32_t slot = name_slot(p, a->key);
    if (a->kind == EDIT_DELETE) {
        for (uint32_t k = p->slots[slot].head; k; k = p->keys[k - 1].next)
            p->keys[k - 1].deleted = true;
        return 0;
    }
    if (a->kind == EDIT_SET) {
        if (a->inferred && resolve(p, a, slot, err))
            return -1;
        if (!p->slots[slot].head) /* a new key */
            return add_key(p, NULL, a->key, &a->v, err);
        for (uint32_t k = p->slots[slot].head; k; k = p->keys[k - 1].next) {
            p->keys[k - 1].deleted = false; /* revived in its place */
            p->keys[k - 1].value = &a->v;
        }
        return 0;
    }
    /* a rename: every key of that name alive now (more than one only when
     * two already collide, which is refused at the end) */
    bool any = false, moved = false;
    for (uint32_t k = p->slots[slot].head, next; k; k = next) {
        next = p->keys[k - 1].next;
        any = true;
        if (p->keys[k - 1].deleted)
            continue;
        unlink_key(p, k - 1);
        link_key(p, k - 1, a->to);
        moved = true;
    }
    if (!moved)
        return gguf_error_setc(err, GGUF_ERR_ARG, "--rename %s%s=%s%s: %s", gguf_error_preview(
                               a->key, strlen(a->key), pb), strlen(a->key) > 40 ? "..." : "",
                               gguf_error_preview(a->to, strlen(a->to), pb2),
                               strlen(a->to) > 40 ? "..." : "",
                               any ? "that key is deleted by an earlier action"
                                   : "there is no such key to rename");
    return 0;
}

void edit_plan_free(edit_plan *p)
{
    free(p->keys);
    free(p->slots);
    memset(p, 0, sizeof *p);
}

int edit_plan_build(edit_plan *p, edit_actions *as, const gguf_kv *const *kvs, size_t n_kv,
                    gguf_error *err)
{
    memset(p, 0, sizeof *p);
    /* names: the keys', and each action's key and new name */
    size_t names = n_kv + 2 * as->n, cap = 64;
    while (cap < 2 * names && cap < SIZE_MAX / 4)
        cap *= 2;
    if (names >= UINT32_MAX / 2 || !(p->slots = calloc(cap, sizeof *p->slots)))
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    p->mask = cap - 1;
    for (size_t i = 0; i < n_kv; i++)
        if (add_key(p, kvs[i], kvs[i]->key, NULL, err))
            goto fail;
    p->n_file = n_kv;
    for (size_t i = 0; i < as->n; i++)
        if (apply(p, &as->a[i], err))
            goto fail;
    for (size_t k = 0; k < p->n; k++) {
        edit_key *key = &p->keys[k];
        if (key->deleted)
            continue;
        if (key->kv && key->value && value_is_kv(key->value, key->kv))
            key->value = NULL; /* set to what it was: no change */
        for (uint32_t o = p->slots[key->slot].head; o; o = p->keys[o - 1].next)
            if (o - 1 != k && !p->keys[o - 1].deleted) {
                char pb[48];
                gguf_error_setc(err, GGUF_ERR_ARG, "two keys would be named %s%s",
                                gguf_error_preview(key->name, strlen(key->name), pb),
                                strlen(key->name) > 40 ? "..." : "");
                goto fail;
            }
    }
    return 0;
fail:
    edit_plan_free(p);
    return -1;
}

bool edit_key_changed(const edit_key *k)
{
    return !k->deleted && (!k->kv || k->value || strcmp(k->name, k->kv->key));
}

int edit_put(gguf_writer *w, const char *key, const edit_value *v)
{
    if (v->elem == GGUF_VT_STR)
        return v->type == GGUF_VT_ARR
             ? gguf_writer_set_str_array(w, key, (const char *const *)v->strs, v->lens, v->n)
             : gguf_writer_set_strn(w, key, v->strs[0], v->lens[0]);
    if (v->type == GGUF_VT_ARR)
        return gguf_writer_set_array(w, key, v->elem, v->data, v->n);
    /* a scalar: the setter of its type, through a one-element copy */
    const uint8_t *d = v->data;
    switch (v->type) {
    case GGUF_VT_U8: return gguf_writer_set_u8(w, key, d[0]);
    case GGUF_VT_I8: return gguf_writer_set_i8(w, key, (int8_t)d[0]);
    case GGUF_VT_BOOL: return gguf_writer_set_bool(w, key, d[0] != 0);
    default: break;
    }
    uint64_t raw = 0;
    memcpy(&raw, d, gguf_vtype_size(v->type));
    switch (v->type) {
    case GGUF_VT_U16: return gguf_writer_set_u16(w, key, (uint16_t)raw);
    case GGUF_VT_I16: return gguf_writer_set_i16(w, key, (int16_t)(uint16_t)raw);
    case GGUF_VT_U32: return gguf_writer_set_u32(w, key, (uint32_t)raw);
    case GGUF_VT_I32: return gguf_writer_set_i32(w, key, (int32_t)(uint32_t)raw);
    case GGUF_VT_U64: return gguf_writer_set_u64(w, key, raw);
    case GGUF_VT_I64: return gguf_writer_set_i64(w, key, (int64_t)raw);
    case GGUF_VT_F32: { float f; memcpy(&f, d, 4); return gguf_writer_set_f32(w, key, f); }
    default: { double x; memcpy(&x, d, 8); return gguf_writer_set_f64(w, key, x); }
    }
}

int edit_put_kv_as(gguf_writer *w, const gguf_kv *kv, const char *key)
{
    edit_value v = { kv->type, kv->elem_type, kv->n, (void *)kv->data, NULL, NULL };
    if (kv->elem_type != GGUF_VT_STR)
        return edit_put(w, key, &v);
    /* strings: pointers into the mapping, not NUL-terminated */
    const char **p = malloc((kv->n ? kv->n : 1) * sizeof *p);
    uint64_t *l = malloc((kv->n ? kv->n : 1) * sizeof *l);
    int rc = -1;
    if (p && l) {
        for (uint64_t i = 0; i < kv->n; i++)
            p[i] = kv->strs[i].ptr, l[i] = kv->strs[i].len;
        rc = kv->type == GGUF_VT_ARR ? gguf_writer_set_str_array(w, key, p, l, kv->n)
                                     : gguf_writer_set_strn(w, key, p[0], l[0]);
    }
    free(p);
    free(l);
    return rc;
}

void edit_describe(const edit_value *v, char *buf, size_t size)
{
    if (v->type == GGUF_VT_ARR) {
        snprintf(buf, size, "arr[%s] of %" PRIu64, gguf_vtype_name(v->elem), v->n);
        return;
    }
    if (v->type == GGUF_VT_STR) {
        char pb[48];
        snprintf(buf, size, "str \"%s\"%s", gguf_error_preview(v->strs[0], v->lens[0], pb),
                 v->lens[0] > 40 ? "..." : "");
        return;
    }
    gguf_kv kv = { .type = v->type, .elem_type = v->type, .n = 1, .data = v->data };
    if (v->type == GGUF_VT_F32 || v->type == GGUF_VT_F64)
        snprintf(buf, size, "%s %.9g", gguf_vtype_name(v->type), gguf_kv_elem_as_double(&kv, 0));
    else if (v->type == GGUF_VT_U64) {
        uint64_t u;
        memcpy(&u, v->data, 8);
        snprintf(buf, size, "u64 %" PRIu64, u);
    } else if (v->type == GGUF_VT_BOOL)
        snprintf(buf, size, "bool %s", *(const uint8_t *)v->data ? "true" : "false");
    else
        snprintf(buf, size, "%s %" PRId64, gguf_vtype_name(v->type), gguf_kv_elem_as_int(&kv, 0));
}
