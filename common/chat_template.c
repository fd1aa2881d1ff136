/*
 * chat_template.c — chat templates from a model folder (chat_template.h).
 */
#include "chat_template.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "readfile.h"
#include "unicode.h"

#define TEMPLATE_MAX ((size_t)16 << 20) /* real templates are a few KiB */

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

void chat_templates_free(chat_templates *ct)
{
    free(ct->deflt);
    for (size_t i = 0; i < ct->n; i++) {
        free(ct->names[i]);
        free(ct->texts[i]);
    }
    free(ct->names);
    free(ct->texts);
    memset(ct, 0, sizeof *ct);
}

/* A text file as Python's open(encoding='utf-8').read() gives it: UTF-8,
 * newlines "\r\n" and "\r" made "\n". The name for messages is `label`. */
static char *read_text(const char *path, const char *label, gguf_error *err)
{
    uint8_t *buf;
    size_t len;
    if (gguf_read_file(path, TEMPLATE_MAX, &buf, &len, err)) {
        gguf_error_prefix(err, "%s: ", label);
        return NULL;
    }
    if (!gguf_utf8_valid(buf, len) || memchr(buf, 0, len)) {
        free(buf);
        gguf_error_set(err, "%s: not UTF-8 text", label);
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '\r') {
            buf[o++] = '\n';
            if (i + 1 < len && buf[i + 1] == '\n')
                i++;
        } else {
            buf[o++] = buf[i];
        }
    }
    buf[o] = 0;
    return (char *)buf;
}

/* A template's name as gguf-py's add_chat_template keeps it: every character
 * but ASCII letters and digits becomes '_'. A character is one Python
 * character: a whole UTF-8 sequence gives one '_', and a byte that starts
 * none (a file name's invalid byte, decoded with surrogateescape) one '_' of
 * its own. NULL when out of memory. */
static char *filter_name(const char *s, size_t n)
{
    char *name = malloc(n + 1);
    if (!name)
        return NULL;
    size_t o = 0;
    for (size_t k = 0; k < n;) {
        const unsigned char c = (unsigned char)s[k];
        if (c < 0x80) {
            bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
            name[o++] = keep ? (char)c : '_';
            k++;
            continue;
        }
        size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
        size_t j = 1;
        while (len && j < len && k + j < n && ((unsigned char)s[k + j] & 0xC0) == 0x80)
            j++;
        name[o++] = '_';
        k += len && j == len ? len : 1;
    }
    name[o] = 0;
    return name;
}

/* Adds a named template (name already filtered); -1 with err. */
static int add_named(chat_templates *ct, char *name, char *text, gguf_error *err)
{
    if (name && strlen(name) > 256) {
        gguf_error_set(err, "a chat template name is longer than 256 characters");
        free(name);
        free(text);
        return -1;
    }
    for (size_t i = 0; i < ct->n; i++)
        if (!strcmp(ct->names[i], name)) {
            gguf_error_set(err, "the chat template \"%s\" is given twice", name);
            free(name);
            free(text);
            return -1;
        }
    char **nn = realloc(ct->names, (ct->n + 1) * sizeof *nn);
    if (nn)
        ct->names = nn;
    char **tt = nn ? realloc(ct->texts, (ct->n + 1) * sizeof *tt) : NULL;
    if (tt)
        ct->texts = tt;
    if (!nn || !tt || !name || !text) {
        free(name);
        free(text);
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    }
    ct->names[ct->n] = name;
    ct->texts[ct->n++] = text;
    return 0;
}

/* One entry of a list: {"name": ..., "template": ...}; entries without a
 * name or a template are skipped, as add_chat_template skips them. */
static int add_entry(chat_templates *ct, const json_value *e, size_t i, gguf_error *err)
{
    if (!e || e->type != JSON_OBJECT)
        return gguf_error_set(err, "chat_template[%zu] is not an object with a name and a template",
                              i);
    const json_value *nv = json_get(e, "name"), *tv = json_get(e, "template");
    if (nv && nv->type != JSON_STRING && nv->type != JSON_NULL)
        return gguf_error_set(err, "chat_template[%zu].name is not a string", i);
    if (!tv || tv->type == JSON_NULL)
        return 0;
    if (tv->type != JSON_STRING || memchr(tv->str, 0, tv->len))
        return gguf_error_set(err, "chat_template[%zu].template is not a string%s", i,
                              tv->type == JSON_STRING ? " without NUL characters" : "");
    if (!nv || nv->type == JSON_NULL || nv->len == 0)
        return 0;
    char *name = filter_name(nv->str, nv->len);
    char *text = dup_n(tv->str, tv->len);
    if (name && !strcmp(name, "default")) {
        free(name);
        if (!text)
            return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        free(ct->deflt); /* a later "default" wins, as in add_chat_template */
        ct->deflt = text;
        return 0;
    }
    return add_named(ct, name, text, err);
}

int chat_templates_from_json(chat_templates *ct, const json_value *v, gguf_error *err)
{
    memset(ct, 0, sizeof *ct);
    if (!v || v->type == JSON_NULL)
        return 0;
    if (v->type == JSON_STRING) {
        if (memchr(v->str, 0, v->len))
            return gguf_error_set(err, "chat_template holds a NUL character");
        if (!(ct->deflt = dup_n(v->str, v->len)))
            return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        return 0;
    }
    if (v->type != JSON_ARRAY)
        return gguf_error_set(err, "chat_template is neither a string nor a list of named templates");
    for (size_t i = 0; i < v->n; i++)
        if (add_entry(ct, v->items[i], i, err)) {
            chat_templates_free(ct);
            return -1;
        }
    return 0;
}

int chat_templates_from_text_file(chat_templates *ct, const char *path, gguf_error *err)
{
    memset(ct, 0, sizeof *ct);
    ct->deflt = read_text(path, path, err);
    return ct->deflt ? 0 : -1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* chat_template.jinja and additional_chat_templates/NAME.jinja (by name:
 * gguf-py takes them in directory order, which no two machines share). */
static int from_jinja(chat_templates *ct, const char *dir, const char *jinja, gguf_error *err)
{
    char *deflt = read_text(jinja, "chat_template.jinja", err);
    if (!deflt)
        return -1;
    char extra[4096];
    snprintf(extra, sizeof extra, "%s/additional_chat_templates", dir);
    DIR *d = opendir(extra);
    char **files = NULL;
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l <= 6 || strcmp(e->d_name + l - 6, ".jinja"))
            continue;
        char **f = realloc(files, (n + 1) * sizeof *f);
        if (!f || !(f[n] = strdup(e->d_name))) {
            files = f ? f : files;
            break;
        }
        files = f;
        n++;
    }
    if (d)
        closedir(d);
    if (n) /* qsort wants a non-null base, even for none */
        qsort(files, n, sizeof *files, cmp_str);
    ct->deflt = deflt;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[8192], label[600];
        snprintf(path, sizeof path, "%s/%s", extra, files[i]);
        snprintf(label, sizeof label, "additional_chat_templates/%s", files[i]);
        if (!is_file(path))
            continue;
        char *text = read_text(path, label, err);
        char *name = filter_name(files[i], strlen(files[i]) - 6);
        if (!text) {
            free(name);
            rc = -1;
        } else if (name && !strcmp(name, "default")) {
            free(name);
            free(ct->deflt);
            ct->deflt = text;
        } else {
            rc = add_named(ct, name, text, err);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    return rc;
}

int chat_templates_from_folder(chat_templates *ct, const char *dir, const json_value *tok_config,
                               gguf_error *err)
{
    memset(ct, 0, sizeof *ct);
    if (!tok_config || (tok_config->type == JSON_OBJECT && tok_config->n == 0))
        return 0;
    const json_value *v = json_get(tok_config, "chat_template");
    if (v) {
        if (chat_templates_from_json(ct, v, err) == 0)
            return 0;
        gguf_error_prefix(err, "tokenizer_config.json: ");
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/chat_template.jinja", dir);
    if (is_file(path)) {
        if (from_jinja(ct, dir, path, err)) {
            chat_templates_free(ct);
            return -1;
        }
        return 0;
    }
    snprintf(path, sizeof path, "%s/chat_template.json", dir);
    if (!is_file(path))
        return 0;
    json_value *doc = json_load_file(path, err);
    if (!doc) {
        gguf_error_prefix(err, "chat_template.json: ");
        return -1;
    }
    int rc = doc->type != JSON_OBJECT
                 ? gguf_error_set(err, "chat_template.json: not a JSON object")
                 : chat_templates_from_json(ct, json_get(doc, "chat_template"), err);
    if (rc && doc->type == JSON_OBJECT)
        gguf_error_prefix(err, "chat_template.json: ");
    json_free(doc);
    return rc;
}

int chat_templates_write(const chat_templates *ct, gguf_writer *w, gguf_error *err)
{
    int bad = 0;
    for (size_t i = 0; i < ct->n; i++) {
        char key[600];
        snprintf(key, sizeof key, "tokenizer.chat_template.%s", ct->names[i]);
        bad |= gguf_writer_set_str(w, key, ct->texts[i]);
    }
    if (ct->n)
        bad |= gguf_writer_set_str_array(w, "tokenizer.chat_templates",
                                         (const char *const *)ct->names, NULL, ct->n);
    if (ct->deflt)
        bad |= gguf_writer_set_str(w, "tokenizer.chat_template", ct->deflt);
    return bad ? gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory") : 0;
}
