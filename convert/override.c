/*
 * override.c — `--metadata FILE` (see override.h).
 */
#include "override.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keys whose value is one string (general.license also takes a list). */
static const char *const string_keys[] = {
    "general.name", "general.author", "general.version", "general.organization",
    "general.finetune", "general.basename", "general.description", "general.quantized_by",
    "general.size_label", "general.license", "general.license.name", "general.license.link",
    "general.url", "general.doi", "general.uuid", "general.repo_url", "general.source.url",
    "general.source.doi", "general.source.uuid", "general.source.repo_url",
};
#define N_STRING (sizeof string_keys / sizeof *string_keys)

/* Keys whose value is a list of strings. */
static const char *const list_keys[] = { "general.tags", "general.languages" };

/* Lists of entries: the override key, the GGUF key stem, the entry fields. */
static const struct {
    const char *key, *stem;
} entry_lists[] = {
    { "general.base_models", "general.base_model" },
    { "general.datasets", "general.dataset" },
};
static const char *const entry_fields[] = { "name", "author", "version", "organization",
                                            "description", "url", "doi", "uuid", "repo_url" };
#define N_FIELDS (sizeof entry_fields / sizeof *entry_fields)

static bool all_strings(const json_value *v)
{
    if (!v || v->type != JSON_ARRAY)
        return false;
    for (size_t i = 0; i < v->n; i++)
        if (v->items[i]->type != JSON_STRING)
            return false;
    return true;
}

int override_check(const json_value *doc, gguf_error *err)
{
    if (!doc || doc->type != JSON_OBJECT)
        return gguf_error_set(err, "not a JSON object of general.* keys");
    for (size_t i = 0; i < N_STRING; i++) {
        const json_value *v = json_get(doc, string_keys[i]);
        bool list_ok = !strcmp(string_keys[i], "general.license") && all_strings(v);
        if (v && v->type != JSON_STRING && !list_ok)
            return gguf_error_set(err, "line %zu: %s must be a string", v->line, string_keys[i]);
    }
    for (size_t i = 0; i < sizeof list_keys / sizeof *list_keys; i++) {
        const json_value *v = json_get(doc, list_keys[i]);
        if (v && !all_strings(v))
            return gguf_error_set(err, "line %zu: %s must be a list of strings", v->line,
                                  list_keys[i]);
    }
    for (size_t i = 0; i < sizeof entry_lists / sizeof *entry_lists; i++) {
        const json_value *v = json_get(doc, entry_lists[i].key);
        if (!v)
            continue;
        if (v->type != JSON_ARRAY)
            return gguf_error_set(err, "line %zu: %s must be a list of objects", v->line,
                                  entry_lists[i].key);
        for (size_t e = 0; e < v->n; e++) {
            const json_value *entry = v->items[e];
            if (entry->type != JSON_OBJECT)
                return gguf_error_set(err, "line %zu: %s entries must be objects", entry->line,
                                      entry_lists[i].key);
            for (size_t f = 0; f < N_FIELDS; f++) {
                const json_value *fv = json_get(entry, entry_fields[f]);
                if (fv && fv->type != JSON_STRING)
                    return gguf_error_set(err, "line %zu: %s[%zu].%s must be a string", fv->line,
                                          entry_lists[i].key, e, entry_fields[f]);
            }
        }
    }
    return 0;
}

json_value *override_load(const char *path, gguf_error *err)
{
    json_value *doc = json_load_file(path, err);
    if (doc && override_check(doc, err)) {
        json_free(doc);
        return NULL;
    }
    return doc;
}

const char *override_name(const json_value *doc)
{
    return json_str(json_get(doc, "general.name"));
}

/* A list of strings joined with sep (caller frees), or NULL. */
static char *join_strings(const json_value *v, const char *sep)
{
    size_t len = 1;
    for (size_t i = 0; i < v->n; i++)
        len += v->items[i]->len + strlen(sep);
    char *out = malloc(len), *w = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < v->n; i++) {
        if (i)
            w += sprintf(w, "%s", sep);
        memcpy(w, v->items[i]->str, v->items[i]->len);
        w += v->items[i]->len;
    }
    *w = 0;
    return out;
}

static int apply_entries(const json_value *list, const char *stem, gguf_writer *w)
{
    char key[160];
    snprintf(key, sizeof key, "%s.count", stem);
    if (gguf_writer_set_u32(w, key, (uint32_t)list->n))
        return -1;
    for (size_t e = 0; e < list->n; e++) {
        for (size_t f = 0; f < N_FIELDS; f++) {
            const json_value *fv = json_get(list->items[e], entry_fields[f]);
            snprintf(key, sizeof key, "%s.%zu.%s", stem, e, entry_fields[f]);
            if (fv && gguf_writer_set_strn(w, key, fv->str, fv->len))
                return -1;
        }
    }
    return 0;
}

int override_apply(const json_value *doc, gguf_writer *w, gguf_error *err)
{
    if (override_check(doc, err))
        return -1;
    int bad = 0;
    for (size_t i = 0; i < N_STRING && !bad; i++) {
        const json_value *v = json_get(doc, string_keys[i]);
        if (v && v->type == JSON_STRING) {
            bad = gguf_writer_set_strn(w, string_keys[i], v->str, v->len);
        } else if (v) { /* general.license as a list */
            char *joined = join_strings(v, ",");
            bad = !joined || gguf_writer_set_str(w, string_keys[i], joined);
            free(joined);
        }
    }
    for (size_t i = 0; i < sizeof list_keys / sizeof *list_keys && !bad; i++) {
        const json_value *v = json_get(doc, list_keys[i]);
        if (!v)
            continue;
        const char **strs = malloc((v->n + 1) * sizeof *strs);
        uint64_t *lens = malloc((v->n + 1) * sizeof *lens);
        bad = !strs || !lens;
        for (size_t k = 0; !bad && k < v->n; k++) {
            strs[k] = v->items[k]->str;
            lens[k] = v->items[k]->len;
        }
        bad = bad || gguf_writer_set_str_array(w, list_keys[i], strs, lens, v->n);
        free(strs);
        free(lens);
    }
    for (size_t i = 0; i < sizeof entry_lists / sizeof *entry_lists && !bad; i++) {
        const json_value *v = json_get(doc, entry_lists[i].key);
        if (v)
            bad = apply_entries(v, entry_lists[i].stem, w);
    }
    return bad ? gguf_error_set(err, "out of memory") : 0;
}
