/*
 * main.c — gguf-edit: change a GGUF file's metadata without touching its
 * tensors.
 *
 *   gguf-edit IN [-o OUT] [--dry-run] [--force] ACTIONS...
 *
 * The actions (actions.h) run in order over the file's key list; tensors
 * are copied as bytes, never decoded. Without -o the input is replaced
 * atomically: the new file is written next to it, synced and renamed over
 * it, so an interrupted or failed edit leaves the input as it was; the
 * input is locked meanwhile (flock), so concurrent in-place edits of one
 * file run one after the other and none is lost. Keys that decide tensor
 * shapes (and general.architecture) change only with --force, split.* keys
 * never on a whole file, and the result must pass the model rules when the
 * input did.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ggufkit/arch.h>
#include <ggufkit/gguf.h>

#include "actions.h"
#include "args.h"
#include "lora_merge.h"
#include "opts.h"
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
    bool         repair;
    int          keep;        /* --keep: -1 not given, 0 first, 1 last */
    const char  *files[2];    /* IN, and split's OUTPREFIX or merge's OUT */
    int          n_files;
    bool         drop_split;  /* --repair of a whole file with stray split.* keys */
    edit_actions acts;
    edit_plan    plan;        /* the key list after the actions */
    lora_merge_input *loras;  /* --lora, --lora-scaled: merged into IN */
    int          n_loras;
    cli_lora_item *items;     /* their file names and scales */
    int          n_items;
} options;

/* --lora FILE[,FILE...], --lora-scaled FILE:S[,FILE:S...] or FILE S: more
 * adapters to merge (cli_lora_items); each scale checked here. */
static int opt_lora(opts_call *c)
{
    options *o = c->user;
    const int n0 = o->n_items;
    int rc = cli_lora_items(TOOL, c->name, !strcmp(c->name, "--lora-scaled"), c->value,
                            c->n_rest ? c->rest[0] : NULL, &c->took, &o->items, &o->n_items);
    if (rc)
        return rc;
    lora_merge_input *l = realloc(o->loras, (size_t)o->n_items * sizeof *l);
    if (!l) {
        fprintf(stderr, TOOL ": error: out of memory\n");
        return 1;
    }
    o->loras = l;
    for (int i = n0; i < o->n_items; i++) {
        double scale = 1.0;
        if (o->items[i].scale && !cli_parse_double(o->items[i].scale, -1e6, 1e6, &scale))
            return cli_usage_error(TOOL, "bad scale '%s' for --lora-scaled (a number from "
                                   "-1000000 to 1000000)", o->items[i].scale);
        o->loras[o->n_loras++] = (lora_merge_input){ o->items[i].file, (float)scale };
    }
    return OPTS_OK;
}

/* --set, --set-array, --set-strings, --delete, --rename, --chat-template,
 * --from-json: one more action, in order. */
static int opt_action(opts_call *c)
{
    options *o = c->user;
    gguf_error err = { 0 };
    if (!edit_parse(&o->acts, c->name, c->value, &err))
        return OPTS_OK;
    if (err.code == GGUF_ERR_ARG)
        return cli_usage_error(TOOL, "%s", err.msg);
    fprintf(stderr, TOOL ": error: %s\n", err.msg);
    return 1;
}

static int add_file(void *user, const char *a, bool last)
{
    options *o = user;
    (void)last;
    if (o->n_files == 2)
        return cli_usage_error(TOOL, "too many file names (at '%s')", a);
    o->files[o->n_files++] = a;
    return OPTS_OK;
}

static int bad_value(const opt *r, const char *name, const char *v)
{
    return cli_usage_error(TOOL, "%s: '%s' is not %s", name, v, r->what);
}

static const char *const keeps[] = { "first", "last", NULL };

static void usage(FILE *out);

#define O(f) offsetof(options, f)
#define SPLIT (1u << CMD_SPLIT)
static const opt option_rows[] = {
    { OPT_TEXT, .help = "Actions, applied in order:\n" },
    { OPT_CALL, "--set", .arg = "KEY=VALUE", .call = opt_action,
      .help = "set a key; type: the existing key's, else bool, i32,\n"
              "i64, f32 or str from the value" },
    { OPT_TEXT, "--set", .arg = "KEY:TYPE=VALUE",
      .help = "TYPE one of u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str" },
    { OPT_CALL, "--set-array", .arg = "KEY:TYPE=V1,V2,...", .call = opt_action,
      .help = " an array" /* one space more than the two after a long option */ },
    { OPT_CALL, "--set-strings", .arg = "KEY=@FILE", .call = opt_action,
      .help = "an array of strings, one per line of FILE" },
    { OPT_CALL, "--delete", .arg = "PATTERN", .call = opt_action,
      .help = "delete every key matching the glob PATTERN" },
    { OPT_CALL, "--rename", .arg = "OLD=NEW", .call = opt_action,
      .help = "rename a key, keeping its place and value" },
    { OPT_CALL, "--chat-template", .arg = "FILE", .call = opt_action,
      .help = "tokenizer.chat_template from FILE" },
    { OPT_CALL, "--from-json", .arg = "FILE", .call = opt_action,
      .help = "set every key of FILE: {\"KEY\": {\"type\": \"u32\", \"value\": 7}, ...}\n"
              "(gguf-inspect --json --full's metadata works as it is)" },
    { OPT_FLAG, "--repair", .off = O(repair),
      .help = "open a file the reader refuses for a recoverable reason\n"
              "(a duplicate key or tensor name, a bad general.alignment,\n"
              "stray split.* keys on a whole file), say what was\n"
              "repaired, write a valid file" },
    { OPT_CHOICE, "--keep", .arg = "first|last", .off = O(keep), .choices = keeps,
      .what = "first or last", .missing = "--keep needs a value (first or last)",
      .help = "which of duplicates --repair keeps (default: last)" },
    { OPT_TEXT, .help = "\nLoRA merge (as llama-export-lora; with -o, no other action):\n" },
    { OPT_CALL, "--lora", .arg = "FILE[,FILE...]", .call = opt_lora,
      .help = "merge the LoRA adapter FILE (a GGUF) into IN" },
    { OPT_CALL, "--lora-scaled", .arg = "FILE:S[,...]", .call = opt_lora,
      .help = "the same, its scale times S" },
    { OPT_TEXT, .help = "\nOther:\n" },
    { OPT_STRING, "--output", "-o", "OUT", O(out), .help = "write OUT instead of replacing IN" },
    { OPT_FLAG, "--dry-run", .off = O(dry_run), .help = "print the key changes and write nothing" },
    { OPT_FLAG, "--force", .off = O(force),
      .help = "allow changing general.architecture and the keys that\n"
              "decide tensor shapes" },
    { OPT_FLAG, "--quiet", "-q", .off = O(quiet), .help = "no summary line" },
    { OPT_SIZE, "--max-size", .arg = "N[K|M|G]", .off = O(max_bytes), .when = SPLIT,
      .what = "a size (N, NK, NM, NG)" },
    { OPT_U64, "--max-tensors", .arg = "N", .off = O(max_tensors), .lo = 1, .hi = INT32_MAX,
      .when = SPLIT, .what = "a count from 1" },
    { OPT_FLAG, "--no-tensor-first-split", .off = O(no_tensor_first), .when = SPLIT },
    { OPT_TEXT, .help = "\n"
      "split writes OUTPREFIX-00001-of-0000N.gguf ... (default prefix: IN without .gguf)\n"
      "with llama-gguf-split's split.no, split.count and split.tensors.count keys; merge\n"
      "writes the shards back as one file. The actions apply while splitting or merging.\n" },
    { OPT_HELP, "--help", "-h", .help = "this help" },
    { OPT_VERSION, "--version", .help = "the version" },
    OPTS_END
};
#undef SPLIT
#undef O

static const opts_spec spec = { TOOL, option_rows, 25, false, usage, add_file, bad_value };

static void usage(FILE *out)
{
    fputs("usage: " TOOL " IN [-o OUT] [--dry-run] [--force] [--repair [--keep first|last]] ACTIONS...\n"
          "       " TOOL " split IN (--max-size N[K|M|G] | --max-tensors N) [--no-tensor-first-split]\n"
          "                 [ACTIONS...] [OUTPREFIX]\n"
          "       " TOOL " merge FIRST-00001-of-0000N.gguf OUT [ACTIONS...]\n"
          "       " TOOL " BASE --lora FILE [--lora FILE | --lora-scaled FILE S]... -o OUT\n"
          "\n"
          "Changes the metadata of a GGUF file; tensors are copied as they are. Without -o\n"
          "IN is replaced atomically (written beside it, synced, renamed over it); in-place\n"
          "edits of one file wait for each other (a lock on IN), so none is lost.\n"
          "\n", out);
    opts_help(&spec, out);
}

/* 0, -1 after --help/--version, or an exit status after an error. "split"
 * and "merge" are commands only as the first word. */
static int parse_args(int argc, char **argv, options *o)
{
    int first = 1;
    if (argc > 1 && (!strcmp(argv[1], "split") || !strcmp(argv[1], "merge")))
        o->cmd = argv[1][0] == 's' ? CMD_SPLIT : CMD_MERGE, first = 2;
    o->keep = -1;
    int rc = opts_parse(&spec, 1u << o->cmd, argc, argv, first, o);
    if (rc)
        return rc;
    const char **files = o->files;
    const int n_files = o->n_files;
    if (n_files == 0)
        return cli_usage_error(TOOL, o->cmd == CMD_MERGE ? "merge: missing the first shard"
                               : "missing IN, the GGUF file to edit");
    o->in = files[0];
    if (o->cmd == CMD_EDIT) {
        if (n_files > 1)
            return cli_usage_error(TOOL, "one input file, got '%s' and '%s' (OUT is -o OUT)",
                                   files[0], files[1]);
        if (o->n_loras) {
            if (!o->out)
                return cli_usage_error(TOOL, "--lora writes a new file: give -o OUT");
            if (o->acts.n || o->repair || o->dry_run || o->force)
                return cli_usage_error(TOOL, "--lora and --lora-scaled go with -o and -q only");
            return 0;
        }
        if (o->acts.n == 0 && !o->repair)
            return cli_usage_error(TOOL, "no action: give --set, --set-array, --set-strings, "
                                   "--delete, --rename, --chat-template, --from-json or --repair");
    }
    if (o->keep >= 0 && !o->repair)
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

/* The first key matching hit(key, arch) that the actions change — give it
 * another value, rename another key onto it, add it, or (with removals)
 * delete it or rename it away — or NULL. A key set to the value it has is
 * not changed. arch is general.architecture ("" when absent). */
static const char *first_touched(const options *o, const gguf_file *f,
                                 bool (*hit)(const char *key, const char *arch), bool removals)
{
    char arch[128] = "";
    gguf_str s;
    if (gguf_get_str(f, GGUF_KEY_ARCHITECTURE, &s, NULL) == 0 && s.len < sizeof arch)
        snprintf(arch, sizeof arch, "%.*s", (int)s.len, s.ptr);
    for (size_t i = 0; i < o->plan.n; i++) {
        const edit_key *k = &o->plan.keys[i];
        if (!k->kv) {
            if (!k->deleted && hit(k->name, arch))
                return k->name;
            continue;
        }
        const bool renamed = strcmp(k->name, k->kv->key) != 0;
        if (hit(k->kv->key, arch) && ((!k->deleted && k->value) || (removals && (k->deleted || renamed))))
            return k->kv->key;
        if (!k->deleted && renamed && hit(k->name, arch))
            return k->name;
    }
    return NULL;
}

/* The keys that tie a split model's shards together (the reader's). */
static bool split_tie_key(const char *key)
{
    return !strcmp(key, GGUF_KEY_SPLIT_NO) || !strcmp(key, GGUF_KEY_SPLIT_COUNT) ||
           !strcmp(key, GGUF_KEY_SPLIT_TENSORS);
}

/* The split.* keys: on a split model they say which files make the model;
 * on a whole file the reader takes them for a broken split. */
static bool split_key(const char *key, const char *arch)
{
    (void)arch;
    return !strncmp(key, "split.", 6);
}

/* The keys the plan starts from: the file's, without the split.* keys
 * that split and merge write themselves, nor stray ones --repair drops. */
static int make_plan(options *o, const gguf_file *f, gguf_error *err)
{
    const uint64_t n = gguf_n_kv(f);
    const gguf_kv **kvs = malloc((n ? n : 1) * sizeof *kvs);
    if (!kvs)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    size_t m = 0;
    for (uint64_t k = 0; k < n; k++) {
        const gguf_kv *kv = gguf_kv_at(f, k);
        if ((o->cmd != CMD_EDIT && split_key(kv->key, "")) || (o->drop_split && split_tie_key(kv->key)))
            continue;
        kvs[m++] = kv;
    }
    int rc = edit_plan_build(&o->plan, &o->acts, kvs, m, err);
    free(kvs);
    return rc;
}

/* ---------------------------------------------------------------------------
 * The new key list
 */

/* The keys through the actions, the added ones after the file's. */
static int build_metadata(gguf_writer *w, const options *o)
{
    int rc = 0;
    for (size_t i = 0; i < o->plan.n && !rc; i++) {
        const edit_key *k = &o->plan.keys[i];
        if (k->deleted)
            continue;
        if (gguf_writer_has_kv(w, k->name)) { /* edit_plan_build refuses this: a safety net */
            fprintf(stderr, TOOL ": error: %s: two keys would be named %s\n", o->in, k->name);
            return -1;
        }
        rc = k->value ? edit_put(w, k->name, k->value)
           : strcmp(k->name, k->kv->key) ? edit_put_kv_as(w, k->kv, k->name)
           : gguf_writer_copy_kv(w, k->kv);
    }
    if (rc) {
        const gguf_error *e = gguf_writer_error(w);
        fprintf(stderr, TOOL ": error: %s: %s\n", o->in, e ? e->msg : "out of memory");
    }
    return rc;
}

/* The key changes, as --dry-run prints them. */
static void print_changes(const options *o)
{
    int n = 0;
    char a[160];
    for (size_t i = 0; i < o->plan.n; i++) {
        const edit_key *k = &o->plan.keys[i];
        if (!k->kv) {
            if (!k->deleted) {
                edit_describe(k->value, a, sizeof a);
                printf("+ %s = %s\n", k->name, a), n++;
            }
            continue;
        }
        if (k->deleted)
            printf("- %s\n", k->kv->key), n++;
        else if (strcmp(k->name, k->kv->key))
            printf("> %s -> %s\n", k->kv->key, k->name), n++;
        if (!k->deleted && k->value) {
            edit_describe(k->value, a, sizeof a);
            printf("~ %s = %s\n", k->name, a), n++;
        }
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
    if (!all || build_metadata(all, o)) {
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

/* ---------------------------------------------------------------------------
 * Opening
 */

/* Why the split.* keys of f (opened as one file) are stray — they cannot
 * describe a split model this file is a shard of — or NULL when they may:
 * all three keys of their types, split.no below split.count, and the file
 * named as that shard (the error is then about the other shards, and no
 * repair of this file's keys would fix it). */
static const char *stray_split_keys(const gguf_file *f, const char *path, char *why, size_t size)
{
    const gguf_kv *no = gguf_lookup_kv(f, GGUF_KEY_SPLIT_NO), *cnt = gguf_lookup_kv(f, GGUF_KEY_SPLIT_COUNT),
                  *tc = gguf_lookup_kv(f, GGUF_KEY_SPLIT_TENSORS);
    uint16_t n = 0, c = 0;
    int32_t t = 0;
    uint32_t name_no, name_count;
    size_t plen;
    if (!no && !cnt && !tc)
        return NULL;
    if (!gguf_kv_u16(no, &n) || !gguf_kv_u16(cnt, &c) || !gguf_kv_i32(tc, &t))
        snprintf(why, size, "not u16 split.no, u16 split.count and i32 split.tensors.count together");
    else if (c == 0 || n >= c || t < 0)
        snprintf(why, size, "split.no %u, split.count %u, split.tensors.count %d describe no split",
                 n, c, (int)t);
    else if (!gguf_split_parse_name(path, &name_no, &name_count, &plen) || name_no != n + 1u ||
             name_count != c)
        snprintf(why, size, "the file is not named as shard %u of %u (NAME-%05u-of-%05u.gguf)",
                 n + 1u, c, n + 1u, c);
    else if (c == 1 && (uint64_t)t != gguf_n_tensors(f))
        snprintf(why, size, "split.tensors.count is %d but the file holds %" PRIu64 " tensors",
                 (int)t, gguf_n_tensors(f));
    else
        return NULL;
    return why;
}

/* Opens IN as the reader does; with --repair, also a whole file the reader
 * refuses for stray split.* keys (then o->drop_split, the reason in why).
 * NULL with err (the first open's message). */
static gguf_file *open_input(options *o, unsigned flags, char *why, size_t size, gguf_error *err)
{
    gguf_file *f = gguf_open(o->in, flags, err);
    if (f || !o->repair)
        return f;
    gguf_error e2 = { 0 };
    gguf_file *g = gguf_open(o->in, flags | GGUF_OPEN_NO_SPLIT, &e2);
    if (g && stray_split_keys(g, o->in, why, size)) {
        o->drop_split = true;
        return g;
    }
    gguf_close(g);
    return NULL;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* An in-place edit holds an exclusive flock(2) on IN — the file it read —
 * until its result has been renamed over the path, so that concurrent
 * in-place edits of one file run one after the other and each sees the
 * result of the one before (otherwise the last rename wins and the other
 * edits are lost). When the lock is granted the path may name another file
 * already (the edit before renamed its result over it): then the new file
 * is locked instead. The file opened is checked to be the one locked.
 * Returns the model (and *lock_fd, to close after the rename), or NULL
 * with err. */
static gguf_file *open_locked(options *o, unsigned flags, char *why, size_t size, int *lock_fd,
                              gguf_error *err)
{
    bool said = false;
    for (;;) {
        /* O_NONBLOCK: a FIFO named as IN is refused, not waited on */
        int fd = open(o->in, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        struct stat locked, now;
        if (fd < 0) {
            gguf_error_setc(err, GGUF_ERR_IO, "cannot open: %s", strerror(errno));
            return NULL;
        }
        if (fstat(fd, &locked) != 0 || !S_ISREG(locked.st_mode)) {
            gguf_error_setc(err, GGUF_ERR_IO, "not a regular file");
            close(fd);
            return NULL;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            if (e == EWOULDBLOCK && !said) {
                fprintf(stderr, TOOL ": %s: waiting for another edit of this file to finish\n", o->in);
                said = true;
            }
            while (e == EWOULDBLOCK || e == EINTR)
                e = flock(fd, LOCK_EX) == 0 ? 0 : errno;
            if (e) {
                gguf_error_setc(err, GGUF_ERR_IO, "cannot lock the file for an in-place edit: %s "
                                "(write the result to another file with -o)", strerror(e));
                close(fd);
                return NULL;
            }
        }
        if (stat(o->in, &now) != 0 || !same_file(&locked, &now)) {
            close(fd); /* replaced while we waited: lock what the path names now */
            continue;
        }
        gguf_file *f = open_input(o, flags, why, size, err);
        if (!f) {
            close(fd);
            return NULL;
        }
        int rfd = gguf_shard_fd(f, 0);
        if (rfd < 0 || fstat(rfd, &now) != 0 || !same_file(&locked, &now)) {
            gguf_close(f); /* the path changed between the check and the open */
            o->drop_split = false;
            close(fd);
            continue;
        }
        *lock_fd = fd;
        return f;
    }
}

/* Prints why IN cannot be opened (err), and when --repair would open it. */
static void open_failed(const options *o, const gguf_error *err)
{
    char why[160];
    bool fixable = false;
    if (!o->repair && err->code != GGUF_ERR_IO) {
        gguf_error e2 = { 0 };
        gguf_file *g = gguf_open(o->in, GGUF_OPEN_REPAIR, &e2);
        if (!g && (g = gguf_open(o->in, GGUF_OPEN_REPAIR | GGUF_OPEN_NO_SPLIT, &e2)) &&
            !stray_split_keys(g, o->in, why, sizeof why)) {
            gguf_close(g);
            g = NULL;
        }
        fixable = g != NULL;
        gguf_close(g);
    }
    fprintf(stderr, TOOL ": error: %s: %s%s\n", o->in, err->msg, fixable ? " (--repair can fix this)" : "");
}

static int run(options *o)
{
    gguf_error err = { 0 };
    const unsigned flags = o->repair ? GGUF_OPEN_REPAIR | (o->keep == 0 ? GGUF_OPEN_KEEP_FIRST : 0u) : 0u;
    const bool in_place = o->cmd == CMD_EDIT && !o->out && !o->dry_run;
    char why[160] = "";
    int lock_fd = -1;
    gguf_file *f = in_place ? open_locked(o, flags, why, sizeof why, &lock_fd, &err)
                            : open_input(o, flags, why, sizeof why, &err);
    if (!f) {
        open_failed(o, &err);
        return 1;
    }
    for (uint64_t i = 0; i < gguf_n_repairs(f); i++)
        printf("%s: repair: %s\n", o->in, gguf_repair_at(f, i));
    for (uint64_t i = 0; o->drop_split && i < gguf_n_kv(f); i++) {
        const gguf_kv *kv = gguf_kv_at(f, i);
        char v[160];
        if (!split_tie_key(kv->key))
            continue;
        if (kv->type == GGUF_VT_ARR || kv->type == GGUF_VT_STR)
            snprintf(v, sizeof v, "%s", gguf_vtype_name(kv->type));
        else if (kv->type == GGUF_VT_F32 || kv->type == GGUF_VT_F64)
            snprintf(v, sizeof v, "%s %g", gguf_vtype_name(kv->type), gguf_kv_elem_as_double(kv, 0));
        else
            snprintf(v, sizeof v, "%s %" PRId64, gguf_vtype_name(kv->type), gguf_kv_elem_as_int(kv, 0));
        printf("%s: repair: stray split key %s (%s) dropped: a whole file, not a shard (%s)\n",
               o->in, kv->key, v, why);
    }
    int status = 1;
    gguf_writer *w = NULL;
    char prefix[4096];
    const char *out = o->out ? o->out : o->in;
    const char *prot;
    if (o->repair && gguf_n_repairs(f) == 0 && !o->drop_split && o->acts.n == 0) {
        printf("%s: nothing to repair, nothing written\n", o->in);
        status = 0;
        goto done;
    }
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
    if (make_plan(o, f, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", o->in, err.msg);
        goto done;
    }
    /* a split model's split.* keys stay as they are; a whole file gets none
     * (it may lose some: they are not the reader's, or --repair drops them) */
    const bool split_model = o->cmd == CMD_EDIT && !o->drop_split &&
                             gguf_lookup_kv(f, GGUF_KEY_SPLIT_COUNT);
    if ((prot = first_touched(o, f, split_key, split_model))) {
        if (split_model)
            fprintf(stderr, TOOL ": error: %s: %s ties the %u shard%s together and cannot be "
                    "edited (merge, edit, split)\n", o->in, prot, gguf_n_shards(f),
                    gguf_n_shards(f) == 1 ? "" : "s");
        else
            fprintf(stderr, TOOL ": error: %s: %s: split.* keys tie the shards of a split model "
                    "together (gguf-edit split writes them); %s cannot have one\n", o->in, prot,
                    o->cmd == CMD_SPLIT ? "the shards get their own, and the model"
                    : o->cmd == CMD_MERGE ? "the merged file is whole and" : "a whole file");
        goto done;
    }
    if (!o->force && (prot = first_touched(o, f, protected_key, true))) {
        fprintf(stderr, TOOL ": error: %s: %s decides what the tensors are: changing it needs "
                "--force\n", o->in, prot);
        goto done;
    }
    if (!(w = gguf_writer_new()) || build_metadata(w, o))
        goto done;
    if (o->dry_run) {
        print_changes(o);
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
    /* the result is in place (renamed) before the lock goes */
    gguf_writer_free(w);
    gguf_close(f);
    if (lock_fd >= 0)
        close(lock_fd);
    edit_plan_free(&o->plan);
    return status;
}

int main(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    int rc = parse_args(argc, argv, &o);
    if (rc == 0) {
        cli_cleanup_on_signals();
        rc = o.n_loras ? lora_merge_run(o.in, o.loras, o.n_loras, o.out, o.quiet) : run(&o);
    } else if (rc < 0) {
        rc = 0;
    }
    edit_free(&o.acts);
    free(o.loras);
    cli_lora_free(o.items, o.n_items);
    return cli_close_stdout(TOOL, rc);
}
