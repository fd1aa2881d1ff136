/*
 * main.c — gguf-inspect: look inside GGUF files.
 *
 *   gguf-inspect [options] FILE          summary, metadata, tensor table
 *   gguf-inspect diff [options] A B      what differs between two files
 *
 * This file only reads the command line (options may come before or after
 * the file names), opens the file(s) and hands them to one report: report.c
 * (default), vocab.c (--vocab, --merges), check.c (--check), hash.c (--hash),
 * memory.c (--memory) or diff.c; --tokenize runs libgguf's tokenizer here and prints plain text. Each report writes through the emitter (emit.h), which gives the
 * text, JSON, YAML and Markdown forms.
 *
 * Exit status: 0 success (and for diff: files identical), 1 error, a failed
 * --check, or (diff) files that differ; 2 usage error, and for diff any error
 * (as diff(1) does), so that "differ" stays distinguishable from "could not
 * compare". Output that could not be written (a full disk, /dev/full) is an
 * error too: cli_close_stdout() checks the final flush.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arches.h"
#include "args.h"
#include "check.h"
#include "diff.h"
#include "emit.h"
#include <ggufkit/gguf.h>
#include "hash.h"
#include "llhash.h"
#include "imatrix_stats.h"
#include "memory.h"
#include "opts.h"
#include "report.h"
#include "signals.h"
#include <ggufkit/vocab.h>
#include "vocab.h"

#define TOOL "gguf-inspect"

typedef enum mode { MODE_REPORT, MODE_VOCAB, MODE_MERGES, MODE_CHECK, MODE_HASH, MODE_DIFF,
                   MODE_TOKENIZE, MODE_ARCHES, MODE_MEMORY, MODE_IMATRIX } mode;

typedef struct options {
    mode        mode;
    const char *mode_flag; /* the option that chose the mode, for conflict messages */
    int         fmt;       /* emit_format */
    bool        full, no_tensors, no_metadata, no_split;
    const char *tokenize_text; /* --tokenize TEXT */
    bool        special;       /* --special: BOS/EOS and special-token parsing */
    /* llama-gguf-hash's listing (llhash.h): --xxh64 ... --all, --no-layer,
     * -c/--hash-check MANIFEST */
    bool        xxh64, sha1, sha256, uuid, all_hashes, no_layer;
    const char *hash_manifest;
    bool        hash_c;        /* the manifest came as -c: with --memory, the context */
    /* --memory: the context (--ctx-size, or -c with --memory) and cache types */
    const char *ctx_size, *ctx_flag;
    int         type_k, type_v;
    const char *type_k_flag, *type_v_flag;
    const char *files[3];
    int         n_files;
} options;

/* ------------------------------------------------------------------------
 * Command line
 * ------------------------------------------------------------------------ */

/* --vocab, --merges, --check, --hash, --arches, --tokenize TEXT: the mode
 * (val), one at a time. */
static int opt_mode(opts_call *c)
{
    options *o = c->user;
    if (c->value)
        o->tokenize_text = c->value;
    if (o->mode_flag && strcmp(o->mode_flag, c->name) != 0)
        return cli_usage_error(TOOL, "%s and %s cannot be combined; choose one of "
                               "--vocab, --merges, --check, --hash, --tokenize, --memory, "
                               "--imatrix-stats",
                               o->mode_flag, c->name);
    o->mode = c->row->val;
    o->mode_flag = c->row->name;
    return OPTS_OK;
}

/* --hash-check MANIFEST, or -c: llama-gguf-hash's manifest, or with
 * --memory (llama.cpp's spelling) the context; finish_args decides. */
static int opt_hash_check(opts_call *c)
{
    options *o = c->user;
    o->hash_manifest = c->value;
    o->hash_c = strcmp(c->name, "-c") == 0;
    return OPTS_OK;
}

static int opt_ctx_size(opts_call *c)
{
    options *o = c->user;
    o->ctx_size = c->value;
    o->ctx_flag = c->name;
    return OPTS_OK;
}

/* --ctk / --ctv TYPE: a type llama.cpp takes for the KV cache */
static int opt_cache_type(opts_call *c)
{
    options *o = c->user;
    int t = gguf_dtype_from_name(c->value);
    if (t < 0 || !memory_cache_type_ok(t))
        return cli_usage_error(TOOL, "%s: '%s' is not a KV cache type llama.cpp takes (%s)",
                               c->name, c->value, memory_cache_type_names());
    *(c->row->val ? &o->type_v : &o->type_k) = t;
    *(c->row->val ? &o->type_v_flag : &o->type_k_flag) = c->name;
    return OPTS_OK;
}

static int add_file(void *user, const char *arg, bool last)
{
    options *o = user;
    (void)last;
    if (o->n_files == 3)
        return cli_usage_error(TOOL, "too many file names (at '%s')", arg);
    o->files[o->n_files++] = arg;
    return OPTS_OK;
}

static void usage(FILE *out);

#define O(f) offsetof(options, f)
static const opt option_rows[] = {
    { OPT_TEXT, .help = "Output format (default: text):\n" },
    { OPT_SET, "--json", .off = O(fmt), .val = EMIT_JSON, .help = "JSON" },
    { OPT_SET, "--yaml", .off = O(fmt), .val = EMIT_YAML, .help = "YAML" },
    { OPT_SET, "--markdown", .off = O(fmt), .val = EMIT_MARKDOWN, .help = "Markdown (GitHub tables)" },
    { OPT_SET, "--text", .off = O(fmt), .val = EMIT_TEXT, .help = "text (the last format option wins)" },
    { OPT_TEXT, .help = "\nWhat to show (default: summary, tensor types, metadata, tensors):\n" },
    { OPT_FLAG, "--full", .off = O(full), .help = "whole arrays instead of their first 8 elements" },
    { OPT_FLAG, "--no-metadata", .off = O(no_metadata), .help = "leave out the metadata table" },
    { OPT_FLAG, "--no-tensors", .off = O(no_tensors), .help = "leave out the tensor table" },
    { OPT_CALL, "--vocab", .call = opt_mode, .val = MODE_VOCAB,
      .help = "the vocabulary: id, type, score, text of every token" },
    { OPT_CALL, "--merges", .call = opt_mode, .val = MODE_MERGES,
      .help = "the BPE merges (tokenizer.ggml.merges)" },
    { OPT_CALL, "--check", .call = opt_mode, .val = MODE_CHECK,
      .help = "validate the structure and scan float tensors for NaN/Inf;\n"
              "exit 1 if anything is wrong" },
    { OPT_CALL, "--hash", .call = opt_mode, .val = MODE_HASH,
      .help = "SHA-256 of every tensor and of the data section" },
    { OPT_FLAG, "--xxh64", .off = O(xxh64),
      .help = "with --hash: llama-gguf-hash's lines instead, xxh64 of\n"
              "every tensor and of the model (tensor bytes in order)" },
    { OPT_FLAG, "--sha1", .off = O(sha1), .help = "... SHA-1" },
    { OPT_FLAG, "--sha256", .off = O(sha256), .help = "... SHA-256" },
    { OPT_FLAG, "--uuid", .off = O(uuid), .help = "... the model's UUIDv5 (llama.cpp's namespace)" },
    { OPT_FLAG, "--all", .off = O(all_hashes), .help = "... xxh64, SHA-1 and SHA-256" },
    { OPT_FLAG, "--no-layer", .off = O(no_layer), .help = "... the model's lines only" },
    { OPT_CALL, "--hash-check", "-c", .arg = "MANIFEST", .call = opt_hash_check,
      .help = "check the lines against MANIFEST (llama-gguf-hash's --check;\n"
              "exit 1 on a mismatch, 3 when nothing is listed); with\n"
              "--memory, -c is --ctx-size" },
    { OPT_CALL, "--tokenize", .arg = "TEXT", .call = opt_mode, .val = MODE_TOKENIZE,
      .missing = "--tokenize: missing TEXT, the text to tokenize",
      .help = "the token ids of TEXT, then one line per token: id, tab, piece" },
    { OPT_CALL, "--arches", .call = opt_mode, .val = MODE_ARCHES,
      .help = "the architecture registry (no FILE): every architecture the\n"
              "tools support, its features, keys and tensor table" },
    { OPT_CALL, "--memory", .call = opt_mode, .val = MODE_MEMORY,
      .help = "what running the model takes: weights per type (experts\n"
              "apart), the KV cache and recurrent state as llama.cpp\n"
              "allocates them, a compute buffer estimate" },
    { OPT_CALL, "--imatrix-stats", .call = opt_mode, .val = MODE_IMATRIX,
      .help = "FILE is an importance matrix (llama-imatrix's GGUF or .dat):\n"
              "llama-imatrix --show-statistics' tables, then the matrices\n"
              "and experts no activation reached" },
    { OPT_CALL, "--ctx-size", .arg = "N", .call = opt_ctx_size,
      .help = "with --memory: the context (1 to 16777216; default the\n"
              "model's context_length)" },
    { OPT_CALL, "--cache-type-k", "--ctk", .arg = "TYPE", .call = opt_cache_type, .val = 0,
      .help = "with --memory: the K cache type (default f16)" },
    { OPT_CALL, "--cache-type-v", "--ctv", .arg = "TYPE", .call = opt_cache_type, .val = 1,
      .help = "with --memory: the V cache type (default f16)" },
    { OPT_FLAG, "--special", .off = O(special),
      .help = "with --tokenize: add BOS/EOS as the model does and turn\n"
              "special-token texts in TEXT into those tokens" },
    { OPT_TEXT, .help = "\nOther:\n" },
    { OPT_FLAG, "--no-split", .off = O(no_split),
      .help = "open only FILE, even if it is the first shard of a split model" },
    { OPT_HELP, "--help", "-h", .help = "this help" },
    { OPT_VERSION, "--version", .help = "the version" },
    OPTS_END
};
#undef O

static const opts_spec spec = { TOOL, option_rows, 16, true, usage, add_file, NULL };

static void usage(FILE *out)
{
    fputs("usage: " TOOL " [options] FILE\n"
          "       " TOOL " diff [options] A B\n"
          "\n"
          "Prints a GGUF file's summary, metadata and tensor table; FILE '-' is standard\n"
          "input (a regular file, not a pipe). Split models open from the first shard.\n"
          "\n", out);
    opts_help(&spec, out);
    fputs("\n"
          "diff compares metadata (type and value) and tensors (type, shape, data bytes);\n"
          "it exits 0 when the files are the same, 1 when they differ, 2 on errors.\n",
          out);
}

/* Whether the hash listing is llama-gguf-hash's, and the option that says so */
static bool llhash_mode(const options *o)
{
    return o->xxh64 || o->sha1 || o->sha256 || o->uuid || o->all_hashes || o->no_layer ||
           o->hash_manifest;
}

static const char *llhash_flag(const options *o)
{
    return o->xxh64 ? "--xxh64" : o->sha1 ? "--sha1" : o->sha256 ? "--sha256" : o->uuid ? "--uuid"
         : o->all_hashes ? "--all" : o->no_layer ? "--no-layer" : "--hash-check";
}

/* --memory's options: -c is the context there; each needs --memory. */
static int finish_memory(options *o)
{
    if (o->mode != MODE_MEMORY) {
        const char *f = o->ctx_flag ? o->ctx_flag : o->type_k_flag ? o->type_k_flag
                      : o->type_v_flag;
        return f ? cli_usage_error(TOOL, "%s needs --memory", f) : OPTS_OK;
    }
    if (o->hash_manifest && !o->hash_c)
        return cli_usage_error(TOOL, "--hash-check does not go with --memory");
    if (o->hash_manifest) {
        if (o->ctx_size)
            return cli_usage_error(TOOL, "-c and %s both give the context; give one",
                                   o->ctx_flag);
        o->ctx_size = o->hash_manifest;
        o->ctx_flag = "-c";
        o->hash_manifest = NULL;
    }
    long n;
    if (o->ctx_size && !cli_parse_long(o->ctx_size, 1, (long)MEMORY_MAX_CTX, &n))
        return cli_usage_error(TOOL, "%s: '%s' is not a context of 1 to %ld tokens",
                               o->ctx_flag, o->ctx_size, (long)MEMORY_MAX_CTX);
    return OPTS_OK;
}

/* "diff" is a command only as the first non-option word (a file of that name
 * can be given as ./diff). */
static int finish_args(options *o)
{
    int mrc = finish_memory(o);
    if (mrc)
        return mrc;
    if (o->n_files > 0 && strcmp(o->files[0], "diff") == 0) {
        if (o->mode_flag)
            return cli_usage_error(TOOL, "diff does not take %s", o->mode_flag);
        if (o->special)
            return cli_usage_error(TOOL, "diff does not take --special");
        if (llhash_mode(o))
            return cli_usage_error(TOOL, "diff does not take %s", llhash_flag(o));
        if (o->n_files == 1)
            return cli_usage_error(TOOL, "diff: missing A and B, the two GGUF files to compare");
        if (o->n_files == 2)
            return cli_usage_error(TOOL, "diff: missing B, the file to compare '%s' with",
                                   o->files[1]);
        o->mode = MODE_DIFF;
        o->files[0] = o->files[1];
        o->files[1] = o->files[2];
        o->n_files = 2;
        return OPTS_OK;
    }
    if (o->special && o->mode != MODE_TOKENIZE)
        return cli_usage_error(TOOL, "--special needs --tokenize");
    if (llhash_mode(o)) {
        if (o->mode != MODE_HASH && o->mode_flag)
            return cli_usage_error(TOOL, "%s does not go with %s", llhash_flag(o), o->mode_flag);
        if (o->fmt != EMIT_TEXT)
            return cli_usage_error(TOOL, "%s prints llama-gguf-hash's lines: text only",
                                   llhash_flag(o));
        o->mode = MODE_HASH;
    }
    if (o->mode == MODE_ARCHES)
        return o->n_files ? cli_usage_error(TOOL, "--arches takes no FILE (got '%s')",
                                            o->files[0]) : OPTS_OK;
    if (o->mode == MODE_IMATRIX && o->fmt != EMIT_TEXT)
        return cli_usage_error(TOOL, "--imatrix-stats prints llama-imatrix's tables: text only");
    if (o->n_files == 0)
        return cli_usage_error(TOOL, "missing FILE, the GGUF file to inspect");
    if (o->n_files > 1)
        return cli_usage_error(TOOL, "one FILE expected, got '%s' and '%s'; to compare two "
                               "files: %s diff A B", o->files[0], o->files[1], TOOL);
    return OPTS_OK;
}

/* Returns 0 to go on, OPTS_STOP after --help or --version, or 2 after a
 * usage error. */
static int parse_args(options *o, int argc, char **argv)
{
    int rc = opts_parse(&spec, 0, argc, argv, 1, o);
    return rc ? rc : finish_args(o);
}

/* ------------------------------------------------------------------------
 * Running a report
 * ------------------------------------------------------------------------ */

/* "-" is standard input; gguf_open maps files, so it must be a regular file. */
static const char *open_path(const char *name)
{
    return strcmp(name, "-") == 0 ? "/dev/stdin" : name;
}

static gguf_file *open_file(const char *name, const options *o, gguf_error *err)
{
    gguf_file *f = gguf_open(open_path(name), o->no_split ? GGUF_OPEN_NO_SPLIT : 0, err);
    /* a pipe cannot be mapped: say what to do instead */
    if (!f && strcmp(name, "-") == 0 && strcmp(err->msg, "not a regular file") == 0)
        gguf_error_set(err, "not a regular file: standard input must come from a file "
                       "(< FILE), since GGUF files are mapped, not read");
    if (!f)
        fprintf(stderr, TOOL ": error: %s: %s\n", name, err->msg);
    return f;
}

/* Ends the output: out of memory (rc < 0 or a failed emit_close) becomes
 * the error status `fail`. A write error is left to cli_close_stdout() in
 * main, which says why ("standard output: No space left on device"). */
static int finish(emit *e, int rc, int fail)
{
    if (emit_close(e) != 0 || rc < 0) {
        if (!ferror(stdout))
            fprintf(stderr, TOOL ": error: out of memory\n");
        return fail;
    }
    return rc;
}

static emit *start(const options *o, const char *title)
{
    emit *e = emit_open(stdout, o->fmt, title);
    if (!e)
        fprintf(stderr, TOOL ": error: out of memory\n");
    return e;
}

/* The report of one opened file (not --check). Returns 0, 1 after printing
 * an error about the file's contents, or -1 on out of memory. */
static int write_report(const options *o, emit *e, const gguf_file *f, const char *name)
{
    gguf_error err = { 0 };
    report_opts ro = { o->full, !o->no_metadata, !o->no_tensors };
    int rc;
    switch (o->mode) {
    case MODE_VOCAB: rc = vocab_table_write(e, f, &err); break;
    case MODE_MERGES: rc = merges_table_write(e, f, &err); break;
    case MODE_HASH: rc = hash_write(e, f); break;
    case MODE_MEMORY: {
        long n = 0;
        if (o->ctx_size)
            cli_parse_long(o->ctx_size, 1, (long)MEMORY_MAX_CTX, &n); /* checked by finish_memory */
        memory_opts mo = { n, (uint32_t)o->type_k, (uint32_t)o->type_v };
        rc = memory_write(e, f, name, &mo, &err);
        break;
    }
    default: rc = report_write(e, f, name, &ro); break;
    }
    if (rc && err.msg[0]) {
        fprintf(stderr, TOOL ": error: %s: %s\n", name, err.msg);
        return 1;
    }
    return rc;
}

/* Prints piece bytes: valid UTF-8 as is, "\\" for a backslash, C escapes or
 * \xNN for control bytes and bytes that are not part of valid UTF-8. */
static void print_escaped(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t len = c < 0x80 ? 1 : c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3
                   : c >= 0xF0 && c < 0xF5 ? 4 : 0;
        bool ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            ok = ((unsigned char)s[i + k] & 0xC0) == 0x80;
        if (ok && len > 1) {
            fwrite(s + i, 1, len, stdout);
            i += len;
            continue;
        }
        if (c == '\\')
            fputs("\\\\", stdout);
        else if (c == '\n')
            fputs("\\n", stdout);
        else if (c == '\t')
            fputs("\\t", stdout);
        else if (c == '\r')
            fputs("\\r", stdout);
        else if (c < 0x20 || c >= 0x7F)
            printf("\\x%02x", c);
        else
            putchar(c);
        i++;
    }
}

/* --tokenize: the ids on one line, then "id<TAB>piece" per token (control
 * tokens shown by their text). Returns the exit status. */
static int run_tokenize(const options *o, const gguf_file *f, const char *name)
{
    gguf_error err = { 0 };
    gguf_vocab *v = gguf_vocab_load(f, &err);
    int32_t *ids = NULL;
    size_t n = 0;
    const char *t = o->tokenize_text;
    if (!v || gguf_vocab_encode(v, t, strlen(t), o->special, o->special, &ids, &n, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", name, err.msg);
        gguf_vocab_free(v);
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        printf("%s%d", i ? " " : "", ids[i]);
    putchar('\n');
    char buf[256];
    for (size_t i = 0; i < n; i++) {
        int len = gguf_vocab_piece(v, ids[i], true, buf, sizeof buf);
        char *piece = len > (int)sizeof buf ? malloc((size_t)len) : buf;
        if (piece != buf && piece)
            gguf_vocab_piece(v, ids[i], true, piece, (size_t)len);
        printf("%d\t", ids[i]);
        if (piece)
            print_escaped(piece, (size_t)len);
        putchar('\n');
        if (piece != buf)
            free(piece);
    }
    free(ids);
    gguf_vocab_free(v);
    return 0; /* a write error is cli_close_stdout's to report */
}

/* Runs the single-file reports; returns the exit status. */
static int run_single(const options *o)
{
    const char *name = o->files[0];
    gguf_error err = { 0 };
    gguf_file *f = open_file(name, o, &err);
    if (!f && o->mode != MODE_CHECK)
        return 1; /* --check still reports the structural error as its finding */
    if (llhash_mode(o)) {
        llhash_opts h = { o->xxh64 || o->all_hashes, o->sha1 || o->all_hashes,
                          o->sha256 || o->all_hashes, o->uuid, o->no_layer,
                          o->hash_manifest };
        int hrc = llhash_run(f, name, h);
        gguf_close(f);
        return hrc;
    }
    if (o->mode == MODE_TOKENIZE) {
        int trc = run_tokenize(o, f, name);
        gguf_close(f);
        return trc;
    }
    emit *e = start(o, name);
    int rc = 1;
    if (e && o->mode == MODE_CHECK)
        rc = finish(e, check_write(e, name, f, f ? NULL : err.msg) ? 1 : 0, 1);
    else if (e)
        rc = finish(e, write_report(o, e, f, name), 1);
    gguf_close(f);
    return rc;
}

static int run_diff(const options *o)
{
    gguf_error err;
    gguf_file *a = open_file(o->files[0], o, &err), *b = NULL;
    emit *e = NULL;
    int rc = 2;
    if (!a || !(b = open_file(o->files[1], o, &err)))
        goto done;
    char title[512];
    snprintf(title, sizeof title, "%s vs %s", o->files[0], o->files[1]);
    if (!(e = start(o, title)))
        goto done;
    diff_opts d = { o->full, !o->no_metadata, !o->no_tensors };
    rc = finish(e, diff_write(e, a, o->files[0], b, o->files[1], &d), 2);
done:
    gguf_close(a);
    gguf_close(b);
    return rc;
}

int main(int argc, char **argv)
{
    cli_cleanup_on_signals(); /* SIGXFSZ: a report to a file past ulimit -f is a write error */
    options o;
    memset(&o, 0, sizeof o);
    o.type_k = o.type_v = GGUF_DT_F16; /* llama.cpp's default cache types */
    int rc = parse_args(&o, argc, argv);
    if (rc == OPTS_STOP)
        return cli_close_stdout(TOOL, 0);
    if (rc)
        return rc;
    if (o.mode == MODE_ARCHES) {
        emit *e = start(&o, "Architectures");
        if (!e)
            return 1;
        arches_write(e);
        return cli_close_stdout(TOOL, finish(e, 0, 1));
    }
    if (o.mode == MODE_IMATRIX) {
        gguf_imatrix im;
        gguf_error err = { 0 };
        if (gguf_imatrix_load(o.files[0], &im, &err)) {
            fprintf(stderr, TOOL ": error: %s: %s\n", o.files[0], err.msg);
            return 1;
        }
        rc = imatrix_stats_write(stdout, o.files[0], &im);
        gguf_imatrix_free(&im);
        return cli_close_stdout(TOOL, rc);
    }
    if (o.mode != MODE_DIFF)
        return cli_close_stdout(TOOL, run_single(&o));
    /* diff keeps 1 for "different": a write error is an error, 2 */
    rc = run_diff(&o);
    return cli_close_stdout(TOOL, 0) ? 2 : rc;
}
