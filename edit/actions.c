/*
 * actions.c — parsing and applying gguf-edit's metadata actions (see
 * actions.h).
 */
#include "actions.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/arch.h>

#include "json.h"
#include "readfile.h"

/* @FILE and --chat-template texts. */
#define EDIT_MAX_FILE ((size_t)16 << 20)

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
 * number is parsed in full and must fit the type. */
static bool parse_elem(uint32_t t, const char *s, void *out)
{
    char *end;
    errno = 0;
    if (!*s)
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
    case GGUF_VT_F32: case GGUF_VT_F64: {
        double d = strtod(s, &end);
        if (*end || errno || !isfinite(d) || (t == GGUF_VT_F32 && fabs(d) > 3.4028234663852886e38))
            return false;
        if (t == GGUF_VT_F32) {
            float f = (float)d;
            memcpy(out, &f, 4);
        } else {
            memcpy(out, &d, 8);
        }
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

static edit_action *new_action(edit_actions *as, gguf_error *err)
{
    edit_action *p = realloc(as->a, (as->n + 1) * sizeof *p);
    if (!p) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        return NULL;
    }
    as->a = p;
    memset(&p[as->n], 0, sizeof *p);
    return &p[as->n++];
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

/* One JSON scalar as the text parse_elem reads (integers exactly; larger
 * than 2^53 is refused: a double cannot hold it). */
static int json_item_text(const json_value *v, uint32_t elem, char *buf, size_t size,
                          const char *key, gguf_error *err)
{
    if (elem == GGUF_VT_BOOL) {
        if (v->type != JSON_BOOL)
            return gguf_error_setc(err, GGUF_ERR_ARG, "--from-json: %s: line %zu: expected true or "
                                   "false", key, v->line);
        snprintf(buf, size, "%s", v->b ? "true" : "false");
        return 0;
    }
    if (v->type != JSON_NUMBER)
        return gguf_error_setc(err, GGUF_ERR_ARG, "--from-json: %s: line %zu: expected a number",
                               key, v->line);
    if (elem == GGUF_VT_F32 || elem == GGUF_VT_F64) {
        snprintf(buf, size, "%.17g", v->num);
        return 0;
    }
    if (!v->integral || fabs(v->num) > 9007199254740992.0)
        return gguf_error_setc(err, GGUF_ERR_ARG, "--from-json: %s: line %zu: expected a whole "
                               "number within 2^53 (give larger ones with --set KEY:TYPE=N)", key,
                               v->line);
    snprintf(buf, size, "%.0f", v->num);
    return 0;
}

/* One key: {"type": T, "value": V} (with an optional "count" that must be
 * the array's length: gguf-inspect --json without --full shortens arrays). */
static int json_entry(edit_actions *as, const char *key, const json_value *e, gguf_error *err)
{
    const char *t = json_str(json_get(e, "type"));
    const json_value *val = json_get(e, "value"), *count = json_get(e, "count");
    bool array = false;
    int elem = t ? json_type_of(t, &array) : -1;
    if (!key_ok(key) || e->type != JSON_OBJECT || elem < 0 || !val)
        return gguf_error_setc(err, GGUF_ERR_ARG, "--from-json: %s: line %zu: want {\"type\": "
                               "\"u32\"|\"arr[i32]\"|..., \"value\": ...}", key, e->line);
    const json_value *const *items = &val;
    size_t n = 1;
    if (array) {
        if (val->type != JSON_ARRAY)
            return gguf_error_setc(err, GGUF_ERR_ARG, "--from-json: %s: line %zu: expected an "
                                   "array", key, val->line);
        int64_t c;
        if (count && (!json_int(count, &c) || c != (int64_t)val->n))
            return gguf_error_setc(err, GGUF_ERR_ARG, "--from-json: %s: count says %s but the "
                                   "value holds %zu items (shortened output: use gguf-inspect "
                                   "--json --full)", key, count ? "another number" : "", val->n);
        items = (const json_value *const *)val->items;
        n = val->n;
    }
    char **texts = calloc(n ? n : 1, sizeof *texts);
    edit_action *a = texts ? new_action(as, err) : NULL;
    int rc = a ? 0 : -1;
    if (!texts)
        rc = gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char buf[64];
        if (elem == GGUF_VT_STR) {
            if (items[i]->type != JSON_STRING || memchr(items[i]->str, 0, items[i]->len))
                rc = gguf_error_setc(err, GGUF_ERR_ARG, "--from-json: %s: line %zu: expected a "
                                     "string without NUL bytes", key, items[i]->line);
            else
                texts[i] = items[i]->str;
        } else if (!(rc = json_item_text(items[i], (uint32_t)elem, buf, sizeof buf, key, err)) &&
                   !(texts[i] = strdup(buf))) {
            rc = gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        }
    }
    if (rc == 0) {
        a->kind = EDIT_SET;
        rc = (a->key = strdup(key)) ? make_value(&a->v, (uint32_t)elem, array, texts, n,
                                                 "--from-json", err)
                                    : gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; elem != GGUF_VT_STR && texts && i < n; i++)
        free(texts[i]);
    free(texts);
    return rc;
}

/* A map of keys to typed values, or a whole gguf-inspect --json document
 * (its "metadata" map). */
static int parse_json_file(edit_actions *as, const char *path, gguf_error *err)
{
    json_value *doc = json_load_file(path, err);
    if (!doc) {
        gguf_error_prefix(err, "--from-json %s: ", path);
        err->code = GGUF_ERR_ARG;
        return -1;
    }
    const json_value *map = json_get(doc, "metadata");
    map = map ? map : doc;
    int rc = 0;
    if (map->type != JSON_OBJECT)
        rc = gguf_error_setc(err, GGUF_ERR_ARG, "--from-json %s: expected an object of keys", path);
    for (size_t i = 0; rc == 0 && i < map->n; i++)
        rc = json_entry(as, map->keys[i], map->items[i], err);
    json_free(doc);
    return rc;
}

int edit_resolve(edit_actions *as, const gguf_file *f, gguf_error *err)
{
    for (size_t i = 0; i < as->n; i++) {
        edit_action *a = &as->a[i];
        if (a->kind != EDIT_SET || !a->inferred)
            continue;
        const gguf_kv *kv = gguf_lookup_kv(f, a->key);
        uint32_t t = infer_type(a->text);
        if (kv && kv->type == GGUF_VT_ARR)
            return gguf_error_setc(err, GGUF_ERR_ARG, "--set %s: the key is an array; use "
                                   "--set-array or --set-strings", a->key);
        if (kv)
            t = kv->type;
        char *item = a->text;
        if (make_value(&a->v, t, false, &item, 1, "--set", err))
            return -1;
        a->inferred = false;
    }
    return 0;
}

void edit_free(edit_actions *as)
{
    for (size_t i = 0; i < as->n; i++)
        action_free(&as->a[i]);
    free(as->a);
    memset(as, 0, sizeof *as);
}

/* ---------------------------------------------------------------------------
 * Applying
 */

edit_fate edit_fate_of(const edit_actions *as, const char *key)
{
    edit_fate f = { false, key, NULL };
    for (size_t i = 0; i < as->n; i++) {
        const edit_action *a = &as->a[i];
        switch (a->kind) {
        case EDIT_DELETE:
            if (!f.deleted && fnmatch(a->key, f.name, 0) == 0)
                f.deleted = true;
            break;
        case EDIT_RENAME:
            if (!f.deleted && !strcmp(a->key, f.name))
                f.name = a->to;
            break;
        default: /* a set of the (current) name revives a deleted key in place */
            if (!strcmp(a->key, f.name)) {
                f.deleted = false;
                f.value = &a->v;
            }
            break;
        }
    }
    return f;
}

bool edit_is_new(const edit_actions *as, size_t i, const gguf_file *f)
{
    const edit_action *a = &as->a[i];
    if (a->kind != EDIT_SET)
        return false;
    /* the key is the file's when some file key ends up with this name */
    for (uint64_t k = 0; k < gguf_n_kv(f); k++) {
        edit_fate fate = edit_fate_of(as, gguf_kv_at(f, k)->key);
        if (!strcmp(fate.name, a->key))
            return false;
    }
    /* an earlier set of the same key already appends it */
    for (size_t j = 0; j < i; j++)
        if (as->a[j].kind == EDIT_SET && !strcmp(as->a[j].key, a->key))
            return false;
    return true;
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
