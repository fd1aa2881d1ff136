/*
 * main.c — gguf-edit: change a GGUF file's metadata without touching its
 * tensors.
 *
 *   gguf-edit IN [-o OUT] [--dry-run] [--force] ACTIONS...
 *
 * The actions (actions.h) run in order over the file's key list; tensors
 * are copied as bytes, never decoded. Without -o the input is replaced
 * atomically: the new file is written next to it, synced and renamed over
 * it, so an interrupted or failed edit leaves the input as it was. Keys that
 * decide tensor shapes (and general.architecture) change only with --force,
 * and the result must pass the model rules when the input did.
 */
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <sys/stat.h>

#include <ggufkit/arch.h>
#include <ggufkit/gguf.h>

#include "actions.h"
#include "args.h"
#include "outpath.h"
#include "signals.h"

#define TOOL "gguf-edit"

typedef struct options {
    const char  *in, *out;
    bool         dry_run, force, quiet;
    edit_actions acts;
} options;

static void usage(FILE *out)
{
    fputs("usage: " TOOL " IN [-o OUT] [--dry-run] [--force] ACTIONS...\n"
          "\n"
          "Changes the metadata of a GGUF file; tensors are copied as they are. Without -o\n"
          "IN is replaced atomically (written beside it, synced, renamed over it).\n"
          "\n"
          "Actions, applied in order:\n"
          "  --set KEY=VALUE          set a key; type: the existing key's, else bool, i32,\n"
          "                           i64, f32 or str from the value\n"
          "  --set KEY:TYPE=VALUE     TYPE one of u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str\n"
          "  --set-array KEY:TYPE=V1,V2,...   an array\n"
          "  --set-strings KEY=@FILE  an array of strings, one per line of FILE\n"
          "  --delete PATTERN         delete every key matching the glob PATTERN\n"
          "  --rename OLD=NEW         rename a key, keeping its place and value\n"
          "  --chat-template FILE     tokenizer.chat_template from FILE\n"
          "\n"
          "Other:\n"
          "  -o, --output OUT         write OUT instead of replacing IN\n"
          "  --dry-run                print the key changes and write nothing\n"
          "  --force                  allow changing general.architecture and the keys that\n"
          "                           decide tensor shapes\n"
          "  -q, --quiet              no summary line\n"
          "  -h, --help               this help\n"
          "  --version                the version\n",
          out);
}

static const char *const actions[] = { "--set", "--set-array", "--set-strings", "--delete",
                                       "--rename", "--chat-template" };

static bool is_action(const char *a)
{
    for (size_t i = 0; i < sizeof actions / sizeof *actions; i++)
        if (!strcmp(a, actions[i]))
            return true;
    return false;
}

/* 0, -1 after --help/--version, or 2 after a usage error. */
static int parse_args(int argc, char **argv, options *o)
{
    gguf_error err = { 0 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(a, "--version")) {
            cli_print_version(TOOL);
            return -1;
        } else if (!strcmp(a, "--dry-run")) {
            o->dry_run = true;
        } else if (!strcmp(a, "--force")) {
            o->force = true;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o->quiet = true;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output") || is_action(a)) {
            if (i + 1 == argc)
                return cli_usage_error(TOOL, "%s needs a value", a);
            const char *v = argv[++i];
            if (a[1] == 'o' || !strcmp(a, "--output"))
                o->out = v;
            else if (edit_parse(&o->acts, a, v, &err))
                return err.code == GGUF_ERR_ARG ? cli_usage_error(TOOL, "%s", err.msg)
                                                : (fprintf(stderr, TOOL ": error: %s\n", err.msg), 1);
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error(TOOL, "unknown option '%s'", a);
        } else if (o->in) {
            return cli_usage_error(TOOL, "one input file, got '%s' and '%s'", o->in, a);
        } else {
            o->in = a;
        }
    }
    if (!o->in)
        return cli_usage_error(TOOL, "missing IN, the GGUF file to edit");
    if (o->acts.n == 0)
        return cli_usage_error(TOOL, "no action: give --set, --set-array, --set-strings, "
                               "--delete, --rename or --chat-template");
    return 0;
}

/* ---------------------------------------------------------------------------
 * Protected keys
 */

/* Keys that decide tensor shapes (or what the file is): changing them
 * makes the tensors lie, so it needs --force. */
static bool protected_key(const char *key, const char *arch)
{
    static const char *const suffixes[] = {
        "block_count", "embedding_length", "feed_forward_length", "attention.head_count",
        "attention.head_count_kv", "attention.key_length", "attention.value_length",
        "rope.dimension_count", "expert_count", "expert_used_count", "vocab_size",
    };
    if (!strcmp(key, GGUF_KEY_ARCHITECTURE) || !strcmp(key, GGUF_KEY_TOK_TOKENS))
        return true;
    size_t al = strlen(arch);
    if (!al || strncmp(key, arch, al) != 0 || key[al] != '.')
        return false;
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
        if (!strcmp(key + al + 1, suffixes[i]))
            return true;
    return false;
}

/* The first protected key an action would change (NULL: none). */
static const char *touches_protected(const options *o, const gguf_file *f)
{
    char arch[128] = "";
    gguf_str s;
    if (gguf_get_str(f, GGUF_KEY_ARCHITECTURE, &s, NULL) == 0 && s.len < sizeof arch)
        snprintf(arch, sizeof arch, "%.*s", (int)s.len, s.ptr);
    for (uint64_t k = 0; k < gguf_n_kv(f); k++) {
        const char *key = gguf_kv_at(f, k)->key;
        edit_fate fate = edit_fate_of(&o->acts, key);
        if (protected_key(key, arch) && (fate.deleted || fate.value || strcmp(fate.name, key)))
            return key;
        if (protected_key(fate.name, arch) && strcmp(fate.name, key))
            return fate.name;
    }
    for (size_t i = 0; i < o->acts.n; i++)
        if (edit_is_new(&o->acts, i, f) && protected_key(o->acts.a[i].key, arch))
            return o->acts.a[i].key;
    return NULL;
}

/* ---------------------------------------------------------------------------
 * The new key list
 */

/* The file's keys through the actions, then the new keys in order. */
static int build_metadata(gguf_writer *w, const options *o, const gguf_file *f)
{
    int rc = 0;
    for (uint64_t k = 0; k < gguf_n_kv(f) && !rc; k++) {
        const gguf_kv *kv = gguf_kv_at(f, k);
        edit_fate fate = edit_fate_of(&o->acts, kv->key);
        if (fate.deleted)
            continue;
        if (gguf_writer_has_kv(w, fate.name)) {
            fprintf(stderr, TOOL ": error: %s: two keys would be named %s\n", o->in, fate.name);
            return -1;
        }
        rc = fate.value ? edit_put(w, fate.name, fate.value)
           : strcmp(fate.name, kv->key) ? edit_put_kv_as(w, kv, fate.name)
           : gguf_writer_copy_kv(w, kv);
    }
    for (size_t i = 0; i < o->acts.n && !rc; i++)
        if (edit_is_new(&o->acts, i, f) && !edit_fate_of(&o->acts, o->acts.a[i].key).deleted) {
            /* the actions after it decide its value and name */
            edit_fate fate = edit_fate_of(&o->acts, o->acts.a[i].key);
            if (fate.value && !gguf_writer_has_kv(w, fate.name))
                rc = edit_put(w, fate.name, fate.value);
        }
    if (rc) {
        const gguf_error *e = gguf_writer_error(w);
        fprintf(stderr, TOOL ": error: %s: %s\n", o->in, e ? e->msg : "out of memory");
    }
    return rc;
}

/* The key changes, as --dry-run prints them. */
static void print_changes(const options *o, const gguf_file *f)
{
    int n = 0;
    char a[160];
    for (uint64_t k = 0; k < gguf_n_kv(f); k++) {
        const char *key = gguf_kv_at(f, k)->key;
        edit_fate fate = edit_fate_of(&o->acts, key);
        if (fate.deleted)
            printf("- %s\n", key), n++;
        else if (strcmp(fate.name, key))
            printf("> %s -> %s\n", key, fate.name), n++;
        if (!fate.deleted && fate.value) {
            edit_describe(fate.value, a, sizeof a);
            printf("~ %s = %s\n", fate.name, a), n++;
        }
    }
    for (size_t i = 0; i < o->acts.n; i++)
        if (edit_is_new(&o->acts, i, f) && !edit_fate_of(&o->acts, o->acts.a[i].key).deleted) {
            edit_describe(edit_fate_of(&o->acts, o->acts.a[i].key).value, a, sizeof a);
            printf("+ %s = %s\n", o->acts.a[i].key, a), n++;
        }
    printf("%d change%s, nothing written (--dry-run)\n", n, n == 1 ? "" : "s");
}

/* ---------------------------------------------------------------------------
 * Writing
 */

/* Tensor data in pieces of at most 64 MiB, released as they are copied. */
#define PIECE ((uint64_t)64 << 20)

static int copy_tensors(gguf_writer *w, const gguf_file *f, gguf_error *err)
{
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        for (uint64_t off = 0; off < t->nbytes; off += PIECE) {
            const uint64_t n = t->nbytes - off < PIECE ? t->nbytes - off : PIECE;
            if (gguf_writer_write_tensor(w, t->data + off, (size_t)n, err))
                return -1;
            gguf_release_range(f, t->data + off, n);
        }
    }
    return 0;
}

static int write_edit(const options *o, const gguf_file *f, gguf_writer *w, const char *out)
{
    gguf_error err = { 0 };
    uint64_t data_size;
    gguf_data_section(f, 0, &data_size);
    gguf_writer_set_version(w, gguf_file_version(f));
    gguf_writer_set_pad_empty(w, gguf_n_tensors(f) == 0 && data_size > 0);
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, &err) < 0) {
            fprintf(stderr, TOOL ": error: %s: %s\n", o->in, err.msg);
            return 1;
        }
    }
    gguf_error ferr = { 0 };
    const bool was_valid = gguf_model_validate(f, &ferr) == 0;
    if (gguf_model_validate_writer(w, &err)) {
        if (was_valid) {
            fprintf(stderr, TOOL ": error: %s: the edit would break the model: %s; nothing "
                    "written\n", o->in, err.msg);
            return 1;
        }
        if (!o->quiet)
            fprintf(stderr, TOOL ": warning: %s: the model was not valid before the edit "
                    "either: %s\n", o->in, err.msg);
    }
    if (gguf_writer_begin(w, out, &err) || copy_tensors(w, f, &err) || gguf_writer_finish(w, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", out, err.msg);
        gguf_writer_abort(w);
        return 1;
    }
    return 0;
}

static int run(options *o)
{
    gguf_error err = { 0 };
    gguf_file *f = gguf_open(o->in, 0, &err);
    if (!f) {
        fprintf(stderr, TOOL ": error: %s: %s\n", o->in, err.msg);
        return 1;
    }
    int status = 1;
    gguf_writer *w = NULL;
    const char *out = o->out ? o->out : o->in;
    const char *prot;
    if (gguf_n_shards(f) > 1) {
        fprintf(stderr, TOOL ": error: %s: a split model (%u shards): gguf-edit does not edit "
                "split models yet\n", o->in, gguf_n_shards(f));
        goto done;
    }
    if (edit_resolve(&o->acts, f, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", o->in, err.msg);
        goto done;
    }
    if (!o->force && (prot = touches_protected(o, f))) {
        fprintf(stderr, TOOL ": error: %s: %s decides what the tensors are: changing it needs "
                "--force\n", o->in, prot);
        goto done;
    }
    if (!(w = gguf_writer_new()) || build_metadata(w, o, f))
        goto done;
    if (o->dry_run) {
        print_changes(o, f);
        status = 0;
        goto done;
    }
    /* a new file: never a device nor the input; in place: a regular file */
    const char *inputs[] = { o->in };
    if (outpath_check(out, inputs, o->out ? 1 : 0, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", out, err.msg);
        goto done;
    }
    status = write_edit(o, f, w, out);
    if (status == 0 && !o->quiet)
        printf("%s: metadata edited, %" PRIu64 " tensors copied as they are\n", out,
               gguf_n_tensors(f));
done:
    gguf_writer_free(w);
    gguf_close(f);
    return status;
}

int main(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    int rc = parse_args(argc, argv, &o);
    if (rc == 0) {
        cli_cleanup_on_signals();
        rc = run(&o);
    } else if (rc < 0) {
        rc = 0;
    }
    edit_free(&o.acts);
    return cli_close_stdout(TOOL, rc);
}
