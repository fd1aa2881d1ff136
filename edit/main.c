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

enum command { CMD_EDIT, CMD_SPLIT, CMD_MERGE };

typedef struct options {
    int          cmd;         /* enum command */
    const char  *in, *out;    /* split: out is the prefix; merge: the merged file */
    bool         dry_run, force, quiet;
    uint64_t     max_tensors, max_bytes; /* split */
    bool         no_tensor_first;        /* split: first shard metadata only */
    bool         repair, keep_first, keep_set; /* --repair, --keep first|last */
    edit_actions acts;
} options;

static void usage(FILE *out)
{
    fputs("usage: " TOOL " IN [-o OUT] [--dry-run] [--force] [--repair [--keep first|last]] ACTIONS...\n"
          "       " TOOL " split IN (--max-size N[K|M|G] | --max-tensors N) [--no-tensor-first-split]\n"
          "                 [ACTIONS...] [OUTPREFIX]\n"
          "       " TOOL " merge FIRST-00001-of-0000N.gguf OUT [ACTIONS...]\n"
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
          "  --from-json FILE         set every key of FILE: {\"KEY\": {\"type\": \"u32\", \"value\": 7}, ...}\n"
          "                           (gguf-inspect --json --full's metadata works as it is)\n"
          "  --repair                 open a file the reader refuses for a recoverable reason\n"
          "                           (a duplicate key or tensor name, a bad general.alignment),\n"
          "                           say what was repaired, write a valid file\n"
          "  --keep first|last        which of duplicates --repair keeps (default: last)\n"
          "\n"
          "Other:\n"
          "  -o, --output OUT         write OUT instead of replacing IN\n"
          "  --dry-run                print the key changes and write nothing\n"
          "  --force                  allow changing general.architecture and the keys that\n"
          "                           decide tensor shapes\n"
          "  -q, --quiet              no summary line\n"
          "\n"
          "split writes OUTPREFIX-00001-of-0000N.gguf ... (default prefix: IN without .gguf)\n"
          "with llama-gguf-split's split.no, split.count and split.tensors.count keys; merge\n"
          "writes the shards back as one file. The actions apply while splitting or merging.\n"
          "  -h, --help               this help\n"
          "  --version                the version\n",
          out);
}

static const char *const actions[] = { "--set", "--set-array", "--set-strings", "--delete",
                                       "--rename", "--chat-template", "--from-json" };

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
    const char *files[2];
    int n_files = 0, first = 1;
    if (argc > 1 && (!strcmp(argv[1], "split") || !strcmp(argv[1], "merge")))
        o->cmd = argv[1][0] == 's' ? CMD_SPLIT : CMD_MERGE, first = 2;
    for (int i = first; i < argc; i++) {
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
        } else if (!strcmp(a, "--repair")) {
            o->repair = true;
        } else if (!strcmp(a, "--keep")) {
            if (i + 1 == argc)
                return cli_usage_error(TOOL, "--keep needs a value (first or last)");
            const char *v = argv[++i];
            if (strcmp(v, "first") && strcmp(v, "last"))
                return cli_usage_error(TOOL, "--keep: '%s' is not first or last", v);
            o->keep_first = v[0] == 'f';
            o->keep_set = true;
        } else if (!strcmp(a, "--no-tensor-first-split") && o->cmd == CMD_SPLIT) {
            o->no_tensor_first = true;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output") || is_action(a) ||
                   (o->cmd == CMD_SPLIT && (!strcmp(a, "--max-size") || !strcmp(a, "--max-tensors")))) {
            if (i + 1 == argc)
                return cli_usage_error(TOOL, "%s needs a value", a);
            const char *v = argv[++i];
            long n;
            if (!strcmp(a, "--max-size")) {
                if (!cli_parse_size(v, &o->max_bytes))
                    return cli_usage_error(TOOL, "--max-size: '%s' is not a size (N, NK, NM, NG)", v);
            } else if (!strcmp(a, "--max-tensors")) {
                if (!cli_parse_long(v, 1, INT32_MAX, &n))
                    return cli_usage_error(TOOL, "--max-tensors: '%s' is not a count from 1", v);
                o->max_tensors = (uint64_t)n;
            } else if (a[1] == 'o' || !strcmp(a, "--output")) {
                o->out = v;
            } else if (edit_parse(&o->acts, a, v, &err)) {
                return err.code == GGUF_ERR_ARG ? cli_usage_error(TOOL, "%s", err.msg)
                                                : (fprintf(stderr, TOOL ": error: %s\n", err.msg), 1);
            }
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error(TOOL, "unknown option '%s'", a);
        } else if (n_files == 2) {
            return cli_usage_error(TOOL, "too many file names (at '%s')", a);
        } else {
            files[n_files++] = a;
        }
    }
    if (n_files == 0)
        return cli_usage_error(TOOL, o->cmd == CMD_MERGE ? "merge: missing the first shard"
                               : "missing IN, the GGUF file to edit");
    o->in = files[0];
    if (o->cmd == CMD_EDIT) {
        if (n_files > 1)
            return cli_usage_error(TOOL, "one input file, got '%s' and '%s' (OUT is -o OUT)",
                                   files[0], files[1]);
        if (o->acts.n == 0 && !o->repair)
            return cli_usage_error(TOOL, "no action: give --set, --set-array, --set-strings, "
                                   "--delete, --rename, --chat-template, --from-json or --repair");
    }
    if (o->keep_set && !o->repair)
        return cli_usage_error(TOOL, "--keep goes with --repair");
    if (o->cmd == CMD_EDIT)
        return 0;
    if (o->out)
        return cli_usage_error(TOOL, "%s takes its output as a file name, not -o", argv[1]);
    if (o->cmd == CMD_MERGE && n_files < 2)
        return cli_usage_error(TOOL, "merge: missing OUT, the merged file");
    if (o->cmd == CMD_SPLIT && !o->max_bytes == !o->max_tensors)
        return cli_usage_error(TOOL, "split: give one of --max-size and --max-tensors");
    o->out = n_files > 1 ? files[1] : NULL;
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

/* The first key matching hit(key, arch) that an action would change —
 * delete, set, rename it or rename another key onto it — or add (NULL:
 * none). arch is general.architecture ("" when absent). */
static const char *first_touched(const options *o, const gguf_file *f,
                                 bool (*hit)(const char *key, const char *arch))
{
    char arch[128] = "";
    gguf_str s;
    if (gguf_get_str(f, GGUF_KEY_ARCHITECTURE, &s, NULL) == 0 && s.len < sizeof arch)
        snprintf(arch, sizeof arch, "%.*s", (int)s.len, s.ptr);
    for (uint64_t k = 0; k < gguf_n_kv(f); k++) {
        const char *key = gguf_kv_at(f, k)->key;
        edit_fate fate = edit_fate_of(&o->acts, key);
        if (hit(key, arch) && (fate.deleted || fate.value || strcmp(fate.name, key)))
            return key;
        if (hit(fate.name, arch) && strcmp(fate.name, key))
            return fate.name;
    }
    for (size_t i = 0; i < o->acts.n; i++)
        if (edit_is_new(&o->acts, i, f) && hit(o->acts.a[i].key, arch))
            return o->acts.a[i].key;
    return NULL;
}

/* The split.* keys: on a split model they say which files make the model. */
static bool split_key(const char *key, const char *arch)
{
    (void)arch;
    return !strncmp(key, "split.", 6);
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
        if (fate.deleted || (o->cmd != CMD_EDIT && !strncmp(kv->key, "split.", 6)))
            continue; /* split and merge write their own split.* keys */
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

/* Whether tensor t goes into what this run writes: all of them, except
 * when editing a split model, where shard 1 is rewritten and the other
 * shards stay as they are. */
static bool writes_tensor(const options *o, const gguf_tensor *t)
{
    return o->cmd != CMD_EDIT || t->shard == 0;
}

/* How many tensors this run writes. */
static uint64_t count_written(const options *o, const gguf_file *f)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++)
        n += writes_tensor(o, gguf_tensor_at(f, i));
    return n;
}

/* Tensor data: copied by the kernel from the input file (gguf_writer_copy_tensor). */
static int copy_tensors(const options *o, gguf_writer *w, const gguf_file *f, gguf_error *err)
{
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++)
        if (writes_tensor(o, gguf_tensor_at(f, i)) &&
            gguf_writer_copy_tensor(w, f, gguf_tensor_at(f, i), err))
            return -1;
    return 0;
}

/* The model rules on the edited metadata and every tensor of the model:
 * for a split model, shard 1's writer holds only its own tensors, so a
 * second writer (never written) declares all of them. */
static int validate_result(const options *o, const gguf_file *f, gguf_writer *w, gguf_error *err)
{
    if (gguf_n_shards(f) == 1 || o->cmd != CMD_EDIT)
        return gguf_model_validate_writer(w, err);
    gguf_writer *all = gguf_writer_new();
    int rc = -1;
    if (!all || build_metadata(all, o, f)) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (gguf_writer_add_tensor(all, t->name, t->type, t->n_dims, t->ne, err) < 0)
            goto done;
    }
    rc = gguf_model_validate_writer(all, err);
done:
    gguf_writer_free(all);
    return rc;
}

/* --no-tensor-first-split: the shard (0-based, before the metadata-only
 * first one) tensor i goes to, filling shards by --max-tensors or
 * --max-size as gguf-split does. */
static uint64_t split_shard_of(const options *o, const gguf_file *f, uint64_t i)
{
    uint64_t shard = 0, n = 0, bytes = 0;
    for (uint64_t k = 0; k <= i; k++) {
        const uint64_t a = gguf_alignment(f), nb = gguf_tensor_at(f, k)->nbytes;
        const uint64_t sz = nb + (a - nb % a) % a; /* padded, as the writer counts */
        if (n > 0 && ((o->max_tensors && n >= o->max_tensors) ||
                      (o->max_bytes && bytes + sz > o->max_bytes)))
            shard++, n = 0, bytes = 0;
        n++, bytes += sz;
    }
    return shard;
}

/* An output path: never a device, FIFO or directory, never one of the
 * input's files (every shard), except the input itself for an in-place
 * edit. */
static int check_out(const options *o, const gguf_file *f, const char *out, gguf_error *err)
{
    const char *inputs[64];
    size_t n = 0;
    for (uint32_t s = 0; s < gguf_n_shards(f) && n < 64; s++)
        inputs[n++] = gguf_shard_path(f, s);
    if (o->cmd == CMD_EDIT && !o->out)
        n = 0; /* in place: the input is the output, replaced by rename */
    return outpath_check(out, inputs, n, err);
}

static int write_edit(const options *o, const gguf_file *f, gguf_writer *w, const char *out)
{
    gguf_error err = { 0 };

    uint64_t data_size;
    gguf_data_section(f, 0, &data_size);
    gguf_writer_set_version(w, gguf_file_version(f));
    gguf_writer_set_pad_empty(w, count_written(o, f) == 0 && data_size > 0);
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (!writes_tensor(o, t))
            continue;
        if (gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, &err) < 0) {
            fprintf(stderr, TOOL ": error: %s: %s\n", o->in, err.msg);
            return 1;
        }
    }
    if (o->cmd == CMD_SPLIT) {
        gguf_writer_set_split(w, o->max_tensors, o->max_bytes);
        gguf_writer_set_split_keys(w, true); /* one shard too, as llama-gguf-split */
        /* --no-tensor-first-split: shard 1 holds the metadata alone */
        for (uint64_t i = 0; o->no_tensor_first && i < gguf_n_tensors(f); i++)
            if (gguf_writer_set_tensor_shard(w, i, (uint32_t)split_shard_of(o, f, i) + 1)) {
                fprintf(stderr, TOOL ": error: %s: %s\n", o->in, gguf_writer_error(w)->msg);
                return 1;
            }
    }
    gguf_error ferr = { 0 };
    const bool was_valid = gguf_model_validate(f, &ferr) == 0;
    if (validate_result(o, f, w, &err)) {
        if (was_valid) {
            fprintf(stderr, TOOL ": error: %s: the edit would break the model: %s; nothing "
                    "written\n", o->in, err.msg);
            return 1;
        }
        if (!o->quiet)
            fprintf(stderr, TOOL ": warning: %s: the model was not valid before the edit "
                    "either: %s\n", o->in, err.msg);
    }
    if (gguf_writer_begin(w, out, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", out, err.msg);
        gguf_writer_abort(w);
        return 1;
    }
    /* every shard name: never a device nor an input */
    for (uint32_t s = 0; s < gguf_writer_n_shards(w); s++)
        if (check_out(o, f, gguf_writer_shard_path(w, s), &err)) {
            fprintf(stderr, TOOL ": error: %s: %s\n", gguf_writer_shard_path(w, s), err.msg);
            gguf_writer_abort(w);
            return 1;
        }
    if (copy_tensors(o, w, f, &err) || gguf_writer_finish(w, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", out, err.msg);
        gguf_writer_abort(w);
        return 1;
    }
    return 0;
}

static int run(options *o)
{
    gguf_error err = { 0 };
    const unsigned flags = o->repair ? GGUF_OPEN_REPAIR | (o->keep_first ? GGUF_OPEN_KEEP_FIRST : 0u) : 0u;
    gguf_file *f = gguf_open(o->in, flags, &err);
    if (!f) {
        /* say so when --repair would have opened it */
        gguf_error e2 = { 0 };
        gguf_file *g = o->repair ? NULL : gguf_open(o->in, GGUF_OPEN_REPAIR, &e2);
        fprintf(stderr, TOOL ": error: %s: %s%s\n", o->in, err.msg,
                g ? " (--repair can fix this)" : "");
        gguf_close(g);
        return 1;
    }
    for (uint64_t i = 0; i < gguf_n_repairs(f); i++)
        printf("%s: repair: %s\n", o->in, gguf_repair_at(f, i));
    if (o->repair && gguf_n_repairs(f) == 0 && o->acts.n == 0) {
        printf("%s: nothing to repair, nothing written\n", o->in);
        gguf_close(f);
        return 0;
    }
    int status = 1;
    gguf_writer *w = NULL;
    char prefix[4096];
    const char *out = o->out ? o->out : o->in;
    const char *prot;
    if (o->cmd == CMD_SPLIT) { /* the prefix: OUTPREFIX, or IN without .gguf */
        const char *p = o->out ? o->out : o->in;
        size_t len = strlen(p);
        if (len > 5 && !strcmp(p + len - 5, ".gguf"))
            len -= 5;
        /* one shard is still named as a shard (llama-gguf-split does so) */
        const uint64_t nt = gguf_n_tensors(f);
        const uint64_t shards = (nt ? split_shard_of(o, f, nt - 1) + 1 : 1) + o->no_tensor_first;
        if (shards == 1)
            snprintf(prefix, sizeof prefix, "%.*s-00001-of-00001.gguf", (int)len, p);
        else
            snprintf(prefix, sizeof prefix, "%.*s", (int)len, p);
        out = prefix;
    }
    if (o->cmd == CMD_SPLIT && gguf_n_shards(f) > 1) {
        fprintf(stderr, TOOL ": error: %s: a split model (%u shards): merge it first, then "
                "split the merged file\n", o->in, gguf_n_shards(f));
        goto done;
    }
    if (o->cmd == CMD_EDIT && gguf_n_shards(f) > 1 && o->out) {
        fprintf(stderr, TOOL ": error: %s: a split model (%u shards) is edited in place (its "
                "first shard, which holds the metadata, is rewritten); without -o, or merge it "
                "with the actions\n", o->in, gguf_n_shards(f));
        goto done;
    }
    if (o->cmd == CMD_EDIT && gguf_n_shards(f) > 1 && (prot = first_touched(o, f, split_key))) {
        fprintf(stderr, TOOL ": error: %s: %s ties the %u shards together and cannot be edited "
                "(merge, edit, split)\n", o->in, prot, gguf_n_shards(f));
        goto done;
    }
    if (edit_resolve(&o->acts, f, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", o->in, err.msg);
        goto done;
    }
    if (!o->force && (prot = first_touched(o, f, protected_key))) {
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
    if (o->cmd != CMD_SPLIT && check_out(o, f, out, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", out, err.msg);
        goto done;
    }
    status = write_edit(o, f, w, out);
    if (status == 0 && !o->quiet)
        printf("%s: %s, %" PRIu64 " tensors copied as they are\n",
               o->cmd == CMD_SPLIT ? gguf_writer_shard_path(w, 0) : out,
               o->cmd == CMD_SPLIT ? "split" : o->cmd == CMD_MERGE ? "merged"
               : o->acts.n ? "metadata edited" : "repaired",
               o->cmd == CMD_SPLIT ? gguf_n_tensors(f) : count_written(o, f));
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
