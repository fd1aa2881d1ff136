/*
 * actions.h — gguf-edit's metadata actions: parsing them from the command
 * line (every value parsed in full and range-checked for its GGUF type) and
 * applying them to a file's key/value list while it is copied to a writer.
 *
 * The actions, in the order given, describe the new key list:
 *   --set KEY=VALUE          type inferred: the existing key's type, else
 *                            bool (true/false), i32/i64 (an integer), f32
 *                            (a number), str (anything else)
 *   --set KEY:TYPE=VALUE     one of u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str
 *   --set-array KEY:TYPE=V1,V2,...   an array of that element type (str: no commas in items)
 *   --set-strings KEY=@FILE  an array of strings, one per line of FILE
 *   --delete PATTERN         every key matching the glob PATTERN (fnmatch)
 *   --rename OLD=NEW         a key gets a new name, keeping its place and value
 *   --chat-template FILE     tokenizer.chat_template = FILE's text
 *   --from-json FILE         a set per key of FILE, a map of keys to
 *                            {"type": T, "value": V} (gguf-inspect --json's form)
 * A set of an existing key replaces its value in place; a new key is
 * appended. Not for: reading or writing files (main.c).
 */
#ifndef EDIT_ACTIONS_H
#define EDIT_ACTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggufkit/gguf.h>

enum edit_kind { EDIT_SET, EDIT_DELETE, EDIT_RENAME };

/* A typed value: a scalar (n = 1) or an array of n elements of elem. */
typedef struct edit_value {
    uint32_t type;  /* GGUF_VT_*: GGUF_VT_ARR for arrays */
    uint32_t elem;  /* element type (== type for scalars) */
    uint64_t n;
    void    *data;  /* n packed numeric elements (bool: one byte each) */
    char   **strs;  /* n strings (str values and arrays) */
    uint64_t *lens;
} edit_value;

typedef struct edit_action {
    uint8_t    kind;     /* enum edit_kind */
    char      *key;      /* SET: the key; DELETE: the pattern; RENAME: the old name */
    char      *to;       /* RENAME: the new name */
    bool       inferred; /* SET without :TYPE: typed from the file's key when it exists */
    char      *text;     /* SET: the value's text, kept for inference */
    edit_value v;
} edit_action;

typedef struct edit_actions {
    edit_action *a;
    size_t       n;
} edit_actions;

/* Parses one command-line action (option name and its argument) into as.
 * 0, or -1 with a message naming the option and what is wrong. Files named
 * with @FILE / --chat-template are read here (at most 16 MiB). */
int edit_parse(edit_actions *as, const char *option, const char *arg, gguf_error *err);

/* Types every inferred SET from the key it replaces in f (or from its
 * text), now that the file is known. 0, or -1 with err. */
int edit_resolve(edit_actions *as, const gguf_file *f, gguf_error *err);

void edit_free(edit_actions *as);

/* The value of key after the actions, for a kv of the file: what happens
 * to it. */
typedef struct edit_fate {
    bool              deleted;
    const char       *name;  /* its (possibly new) name */
    const edit_value *value; /* a new value, or NULL to keep the file's */
} edit_fate;

/* What the actions do to the file's key kv (a later action wins over an
 * earlier one on the same key). */
edit_fate edit_fate_of(const edit_actions *as, const char *key);

/* True when a SET names a key the file does not have (it is appended). */
bool edit_is_new(const edit_actions *as, size_t i, const gguf_file *f);

/* Writes a value under key to w. 0, or -1 (the writer keeps the error). */
int edit_put(gguf_writer *w, const char *key, const edit_value *v);

/* Writes a file kv under another name (a rename). 0, or -1. */
int edit_put_kv_as(gguf_writer *w, const gguf_kv *kv, const char *key);

/* Prints a value as the dry run shows it ("u32 7", "str \"x\"", "arr[i32] 3"). */
void edit_describe(const edit_value *v, char *buf, size_t size);

#endif
