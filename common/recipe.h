/*
 * recipe.h — per-tensor type choices: --tensor-type PATTERN=TYPE and YAML
 * recipes (format in docs/gguf-quantize.md).
 *
 * A pattern is a regular expression (PCRE2, close to the ECMAScript regex
 * llama-quantize's std::regex uses) searched in the tensor name; the first
 * matching pattern decides (command-line patterns come before the
 * recipe's). Bounded resources, whatever the input: a pattern is at most
 * RECIPE_MAX_PATTERN bytes and each match at most RECIPE_MATCH_LIMIT steps
 * and RECIPE_HEAP_LIMIT_KB of memory (a pattern past those is an error
 * naming it); a YAML recipe is at most RECIPE_MAX_FILE bytes and
 * RECIPE_MAX_DEPTH levels deep.
 */
#ifndef QUANTIZE_RECIPE_H
#define QUANTIZE_RECIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggufkit/gguf.h>

#define RECIPE_MAX_PATTERN   256
#define RECIPE_MATCH_LIMIT   100000
#define RECIPE_HEAP_LIMIT_KB 1024
#define RECIPE_MAX_FILE      (1 << 20)
#define RECIPE_MAX_DEPTH     64

typedef struct recipe_rule {
    char    *pattern;
    void    *code;  /* pcre2_code */
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

/* A tensor type named by the user (case-insensitive): its id, or -1 with
 * err when the name is unknown or gguf-quantize cannot write the type (no
 * quantizer for it, or q8_K, which is no weight type). Every type the user
 * names goes through here, before any tensor is read. */
int recipe_parse_type(const char *s, gguf_error *err);

/* Reads a YAML recipe file and appends its rules. 0, or -1 with err. */
int recipe_load_yaml(recipe *r, const char *path, gguf_error *err);

/* The same from memory (for tests and the fuzzer). Errors name the line;
 * the caller names the source. */
int recipe_parse_yaml(recipe *r, const char *data, size_t len, gguf_error *err);

/* Type for a tensor name, or -1 when no pattern matches. */
int recipe_match(const recipe *r, const char *name);

/* The same, telling an error apart: *type is the first matching rule's
 * type or -1; -1 with err when a pattern passes the match limits. */
int recipe_find(const recipe *r, const char *name, int *type, gguf_error *err);

void recipe_free(recipe *r);

#endif
