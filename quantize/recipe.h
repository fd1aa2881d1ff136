/*
 * recipe.h — per-tensor type choices: --tensor-type PATTERN=TYPE and YAML
 * recipes (format in docs/gguf-quantize.md).
 *
 * A pattern is a POSIX extended regular expression searched in the tensor
 * name; the first matching pattern decides (command-line patterns come
 * before the recipe's).
 */
#ifndef QUANTIZE_RECIPE_H
#define QUANTIZE_RECIPE_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct recipe_rule {
    char    *pattern;
    regex_t  re;
    uint32_t type;
} recipe_rule;

typedef struct recipe {
    recipe_rule *rules;
    int          n_rules;
    char        *preset;               /* "preset:" or NULL */
    int          output_type;          /* -1 when not set */
    int          token_embedding_type; /* -1 when not set */
    int          pure;                 /* -1 unset, 0, 1 */
} recipe;

void recipe_init(recipe *r);

/* Adds PATTERN=TYPE (the --tensor-type form). 0, or -1 with err. */
int recipe_add_rule_arg(recipe *r, const char *arg, gguf_error *err);

/* Reads a YAML recipe file and appends its rules. 0, or -1 with err. */
int recipe_load_yaml(recipe *r, const char *path, gguf_error *err);

/* The same from memory (for tests and the fuzzer). Errors name the line;
 * the caller names the source. */
int recipe_parse_yaml(recipe *r, const char *data, size_t len, gguf_error *err);

/* Type for a tensor name, or -1 when no pattern matches. */
int recipe_match(const recipe *r, const char *name);

void recipe_free(recipe *r);

#endif
