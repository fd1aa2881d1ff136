/*
 * recipe.c — tensor-type patterns from the command line and YAML files.
 *
 * The YAML is read into a libyaml document and walked: a mapping with the
 * optional keys preset, output_tensor_type, token_embedding_type, pure, and
 * tensors: a sequence of {match: REGEX, type: TYPE}.
 */
#include "recipe.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "readfile.h"
#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>

void recipe_init(recipe *r)
{
    memset(r, 0, sizeof *r);
    r->output_type = -1;
    r->token_embedding_type = -1;
    r->pure = -1;
}

int recipe_parse_type(const char *s, gguf_error *err)
{
    int t = gguf_dtype_from_name(s);
    if (t < 0)
        return gguf_error_set(err, "unknown tensor type '%s'", s);
    /* q8_K has a codec (the k-quant dot products' activations) but is no
     * storage type: no ggml backend multiplies weights in it */
    if (t == GGUF_DT_Q8_K)
        return gguf_error_setc(err, GGUF_ERR_UNSUPPORTED, "tensor type '%s' is ggml's activation "
                               "format for k-quant products, not a type for weights", s);
    if (!gguf_codec_get((uint32_t)t))
        return gguf_error_setc(err, GGUF_ERR_UNSUPPORTED, "tensor type '%s' cannot be written: "
                               "gguf-quantize has no quantizer for it", s);
    return t;
}

static int add_rule(recipe *r, const char *pattern, const char *type, gguf_error *err)
{
    int t = recipe_parse_type(type, err);
    if (t < 0)
        return -1;
    recipe_rule *rules = realloc(r->rules, (size_t)(r->n_rules + 1) * sizeof *rules);
    if (!rules)
        return gguf_error_set(err, "out of memory");
    r->rules = rules;
    recipe_rule *rule = &rules[r->n_rules];
    size_t len = strlen(pattern);
    if (len > RECIPE_MAX_PATTERN)
        return gguf_error_set(err, "pattern of %zu bytes is longer than %d", len,
                              RECIPE_MAX_PATTERN);
    int code;
    PCRE2_SIZE at;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, len, 0, &code, &at, NULL);
    if (!re) {
        PCRE2_UCHAR msg[128];
        pcre2_get_error_message(code, msg, sizeof msg);
        return gguf_error_set(err, "bad pattern '%s': %s at offset %zu", pattern, (char *)msg,
                              (size_t)at);
    }
    if (!(rule->pattern = strdup(pattern))) {
        pcre2_code_free(re);
        return gguf_error_set(err, "out of memory");
    }
    rule->code = re;
    rule->type = (uint32_t)t;
    r->n_rules++;
    return 0;
}

int recipe_add_rule_arg(recipe *r, const char *arg, gguf_error *err)
{
    const char *eq = strrchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return gguf_error_set(err, "--tensor-type wants PATTERN=TYPE, got '%s'", arg);
    char *pattern = strndup(arg, (size_t)(eq - arg));
    if (!pattern)
        return gguf_error_set(err, "out of memory");
    int rc = add_rule(r, pattern, eq + 1, err);
    free(pattern);
    return rc;
}

/* --- YAML ---------------------------------------------------------------- */

static const char *scalar(yaml_document_t *d, yaml_node_t *n)
{
    (void)d;
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *map_get(yaml_document_t *d, yaml_node_t *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        const char *k = scalar(d, yaml_document_get_node(d, p->key));
        if (k && strcmp(k, key) == 0)
            return yaml_document_get_node(d, p->value);
    }
    return NULL;
}

static int check_keys(yaml_document_t *d, yaml_node_t *map, const char *const *allowed,
                      const char *where, gguf_error *err)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yaml_document_get_node(d, p->key);
        const char *k = scalar(d, kn);
        bool ok = false;
        for (int i = 0; k && allowed[i]; i++)
            ok |= strcmp(k, allowed[i]) == 0;
        if (!ok)
            return gguf_error_set(err, "line %zu: unknown key '%s' in %s", kn->start_mark.line + 1,
                                  k ? k : "?", where);
    }
    return 0;
}

static int opt_type(yaml_document_t *d, yaml_node_t *root, const char *key, int *out, gguf_error *err)
{
    yaml_node_t *n = map_get(d, root, key);
    if (!n)
        return 0;
    const char *s = scalar(d, n);
    if (!s)
        return gguf_error_set(err, "line %zu: %s must be a type name", n->start_mark.line + 1, key);
    return (*out = recipe_parse_type(s, err)) < 0 ? -1 : 0;
}

static int walk(recipe *r, yaml_document_t *d, gguf_error *err)
{
    static const char *const top_keys[] = { "preset", "output_tensor_type", "token_embedding_type",
                                            "pure", "tensors", NULL };
    static const char *const rule_keys[] = { "match", "type", NULL };
    yaml_node_t *root = yaml_document_get_root_node(d);
    if (!root)
        return gguf_error_set(err, "empty recipe");
    if (root->type != YAML_MAPPING_NODE)
        return gguf_error_set(err, "line %zu: a recipe is a mapping (preset:, tensors:, ...)",
                              root->start_mark.line + 1);
    if (check_keys(d, root, top_keys, "the recipe", err))
        return -1;
    yaml_node_t *n = map_get(d, root, "preset");
    if (n) {
        if (!scalar(d, n))
            return gguf_error_set(err, "line %zu: preset must be a name", n->start_mark.line + 1);
        free(r->preset);
        r->preset = strdup(scalar(d, n));
    }
    if (opt_type(d, root, "output_tensor_type", &r->output_type, err) ||
        opt_type(d, root, "token_embedding_type", &r->token_embedding_type, err))
        return -1;
    if ((n = map_get(d, root, "pure"))) {
        const char *s = scalar(d, n);
        if (!s || (strcasecmp(s, "true") && strcasecmp(s, "false")))
            return gguf_error_set(err, "line %zu: pure must be true or false", n->start_mark.line + 1);
        r->pure = strcasecmp(s, "true") == 0;
    }
    yaml_node_t *ts = map_get(d, root, "tensors");
    if (!ts)
        return 0;
    if (ts->type != YAML_SEQUENCE_NODE)
        return gguf_error_set(err, "line %zu: tensors must be a list of {match, type}",
                              ts->start_mark.line + 1);
    for (yaml_node_item_t *it = ts->data.sequence.items.start; it < ts->data.sequence.items.top; it++) {
        yaml_node_t *e = yaml_document_get_node(d, *it);
        if (e->type != YAML_MAPPING_NODE)
            return gguf_error_set(err, "line %zu: each tensors entry is {match: REGEX, type: TYPE}",
                                  e->start_mark.line + 1);
        if (check_keys(d, e, rule_keys, "a tensors entry", err))
            return -1;
        const char *m = scalar(d, map_get(d, e, "match")), *t = scalar(d, map_get(d, e, "type"));
        if (!m || !t)
            return gguf_error_set(err, "line %zu: a tensors entry needs match: and type:",
                                  e->start_mark.line + 1);
        if (add_rule(r, m, t, err)) {
            gguf_error_prefix(err, "line %zu: ", e->start_mark.line + 1);
            return -1;
        }
    }
    return 0;
}

/* Refuses a document nested deeper than RECIPE_MAX_DEPTH before libyaml
 * builds it (a recipe nested 1,000,000 deep ran for minutes): one pass over
 * the events, counting open mappings and sequences. */
static int check_depth(const char *data, size_t len, gguf_error *err)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return gguf_error_set(err, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
    int depth = 0, rc = 0;
    for (;;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&p, &e)) {
            rc = gguf_error_set(err, "line %zu: %s", p.problem_mark.line + 1,
                                p.problem ? p.problem : "YAML syntax error");
            break;
        }
        yaml_event_type_t t = e.type;
        size_t line = e.start_mark.line + 1;
        yaml_event_delete(&e);
        if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) {
            if (++depth > RECIPE_MAX_DEPTH) {
                rc = gguf_error_set(err, "line %zu: nested more than %d levels deep", line,
                                    RECIPE_MAX_DEPTH);
                break;
            }
        } else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) {
            depth--;
        } else if (t == YAML_STREAM_END_EVENT) {
            break;
        }
    }
    yaml_parser_delete(&p);
    return rc;
}

/* Loads one YAML document from an initialized parser and walks it. */
static int load(recipe *r, yaml_parser_t *p, gguf_error *err)
{
    yaml_document_t d;
    if (!yaml_parser_load(p, &d))
        return gguf_error_set(err, "line %zu: %s", p->problem_mark.line + 1,
                              p->problem ? p->problem : "YAML syntax error");
    int rc = walk(r, &d, err);
    yaml_document_delete(&d);
    return rc;
}

int recipe_parse_yaml(recipe *r, const char *data, size_t len, gguf_error *err)
{
    if (len > RECIPE_MAX_FILE)
        return gguf_error_set(err, "larger than %d KiB: not a recipe", RECIPE_MAX_FILE >> 10);
    if (check_depth(data, len, err))
        return -1;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return gguf_error_set(err, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
    int rc = load(r, &p, err);
    yaml_parser_delete(&p);
    return rc;
}

int recipe_load_yaml(recipe *r, const char *path, gguf_error *err)
{
    uint8_t *data;
    size_t len;
    if (gguf_read_file(path, RECIPE_MAX_FILE, &data, &len, err))
        return -1;
    int rc = recipe_parse_yaml(r, (const char *)data, len, err);
    free(data);
    return rc;
}

int recipe_find(const recipe *r, const char *name, int *type, gguf_error *err)
{
    *type = -1;
    if (!r->n_rules)
        return 0;
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    int rc = 0;
    if (!mc || !md) {
        rc = gguf_error_set(err, "out of memory");
        goto done;
    }
    pcre2_set_match_limit(mc, RECIPE_MATCH_LIMIT);
    pcre2_set_depth_limit(mc, RECIPE_MATCH_LIMIT);
    pcre2_set_heap_limit(mc, RECIPE_HEAP_LIMIT_KB);
    for (int i = 0; i < r->n_rules; i++) {
        int m = pcre2_match(r->rules[i].code, (PCRE2_SPTR)name, strlen(name), 0, 0, md, mc);
        if (m >= 0) {
            *type = (int)r->rules[i].type;
            break;
        }
        if (m != PCRE2_ERROR_NOMATCH) {
            PCRE2_UCHAR msg[128];
            pcre2_get_error_message(m, msg, sizeof msg);
            rc = gguf_error_set(err, "pattern '%s' on tensor '%s': %s (a pattern this costly "
                                "is refused)", r->rules[i].pattern, name, (char *)msg);
            break;
        }
    }
done:
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    return rc;
}

int recipe_match(const recipe *r, const char *name)
{
    int type;
    return recipe_find(r, name, &type, NULL) ? -1 : type;
}

void recipe_free(recipe *r)
{
    for (int i = 0; i < r->n_rules; i++) {
        pcre2_code_free(r->rules[i].code);
        free(r->rules[i].pattern);
    }
    free(r->rules);
    free(r->preset);
    recipe_init(r);
}
