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
 * appended (edit_plan_build gives the resulting key list). Not for:
 * reading or writing GGUF files (main.c).
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
    bool       inferred; /* SET without :TYPE: typed from the key it names when it exists */
    char      *text;     /* SET: the value's text, kept for inference */
    edit_value v;
} edit_action;

typedef struct edit_actions {
    edit_action *a;
    size_t       n, cap;
} edit_actions;

/* Parses one command-line action (option name and its argument) into as.
 * 0, or -1 with a message naming the option and what is wrong. Files named
 * with @FILE / --chat-template / --from-json are read here (at most
 * EDIT_MAX_FILE bytes). */
int edit_parse(edit_actions *as, const char *option, const char *arg, gguf_error *err);

void edit_free(edit_actions *as);

/* @FILE, --chat-template and --from-json files. */
#define EDIT_MAX_FILE ((size_t)16 << 20)

/* ---------------------------------------------------------------------------
 * The key list after the actions.
 *
 * The actions run in order over the file's keys: a set names a key that
 * exists at that point (the file's, maybe renamed or deleted before: it is
 * revived in place, or one an earlier set added) or adds one; a delete
 * removes every key its glob matches at that point; a rename moves a key
 * that exists at that point (else it is an error). Names are hashed: the
 * plan costs O(keys + actions) plus one glob match per key and glob
 * delete.
 */
typedef struct edit_key {
    const char       *name;    /* its name after the actions */
    const gguf_kv    *kv;      /* the file's key it was, or NULL: one the actions add */
    const edit_value *value;   /* its new value, or NULL: the file's (also when set to the
                                * value it already had: that is no change) */
    bool              deleted;
    uint32_t          next;    /* internal: the next key of the same name + 1 */
    uint32_t          slot;    /* internal: its name's slot */
} edit_key;

typedef struct edit_name_slot {
    const char *name;
    uint32_t    head; /* first key of this name + 1; 0: none */
} edit_name_slot;

typedef struct edit_plan {
    edit_key       *keys;   /* the file's keys in file order, then the added ones in order */
    size_t          n, n_file, cap;
    edit_name_slot *slots;
    size_t          mask;
} edit_plan;

/* Runs the actions over the keys kvs[0..n_kv) (a file's, in order; their
 * strings must outlive the plan, as must as): every inferred SET gets its
 * type (the key's it names, else from its text). 0, or -1 with err naming
 * the action or key at fault (a rename of a key that does not exist at that
 * point; two keys ending with one name). */
int edit_plan_build(edit_plan *p, edit_actions *as, const gguf_kv *const *kvs, size_t n_kv,
                    gguf_error *err);

void edit_plan_free(edit_plan *p);

/* True when key k is in the result and differs from the file's (renamed,
 * a new value, or added); deleted keys are not. */
bool edit_key_changed(const edit_key *k);

/* Writes a value under key to w. 0, or -1 (the writer keeps the error). */
int edit_put(gguf_writer *w, const char *key, const edit_value *v);

/* Writes a file kv under another name (a rename). 0, or -1. */
int edit_put_kv_as(gguf_writer *w, const gguf_kv *kv, const char *key);

/* Prints a value as the dry run shows it ("u32 7", "str \"x\"", "arr[i32] 3"). */
void edit_describe(const edit_value *v, char *buf, size_t size);

#endif
