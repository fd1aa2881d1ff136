/*
 * main.c — gguf-inspect: look inside GGUF files.
 *
 *   gguf-inspect [options] FILE          summary, metadata, tensor table
 *   gguf-inspect diff [options] A B      what differs between two files
 *
 * This file only reads the command line (options may come before or after
 * the file names), opens the file(s) and hands them to one report: report.c
 * (default), vocab.c (--vocab, --merges), check.c (--check), hash.c (--hash)
 * or diff.c; --tokenize runs libgguf's tokenizer here and prints plain text. Each report writes through the emitter (emit.h), which gives the
 * text, JSON, YAML and Markdown forms.
 *
 * Exit status: 0 success (and for diff: files identical), 1 error, a failed
 * --check, or (diff) files that differ; 2 usage error, and for diff any error
 * (as diff(1) does), so that "differ" stays distinguishable from "could not
 * compare". Output that could not be written (a full disk, /dev/full) is an
 * error too: cli_close_stdout() checks the final flush.
 */
#include <stdbool.h>
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
#include "report.h"
#include "signals.h"
#include <ggufkit/vocab.h>
#include "vocab.h"

#define TOOL "gguf-inspect"

typedef enum mode { MODE_REPORT, MODE_VOCAB, MODE_MERGES, MODE_CHECK, MODE_HASH, MODE_DIFF,
                   MODE_TOKENIZE, MODE_ARCHES } mode;

typedef struct options {
    mode        mode;
    const char *mode_flag; /* the option that chose the mode, for conflict messages */
    emit_format fmt;
    bool        full, no_tensors, no_metadata, no_split;
    const char *tokenize_text; /* --tokenize TEXT */
    bool        special;       /* --special: BOS/EOS and special-token parsing */
    const char *files[3];
    int         n_files;
} options;

static void usage(FILE *out)
{
    fputs("usage: " TOOL " [options] FILE\n"
          "       " TOOL " diff [options] A B\n"
          "\n"
          "Prints a GGUF file's summary, metadata and tensor table; FILE '-' is standard\n"
          "input (a regular file, not a pipe). Split models open from the first shard.\n"
          "\n"
          "Output format (default: text):\n"
          "  --json          JSON\n"
          "  --yaml          YAML\n"
          "  --markdown      Markdown (GitHub tables)\n"
          "  --text          text (the last format option wins)\n"
          "\n"
          "What to show (default: summary, tensor types, metadata, tensors):\n"
          "  --full          whole arrays instead of their first 8 elements\n"
          "  --no-metadata   leave out the metadata table\n"
          "  --no-tensors    leave out the tensor table\n"
          "  --vocab         the vocabulary: id, type, score, text of every token\n"
          "  --merges        the BPE merges (tokenizer.ggml.merges)\n"
          "  --check         validate the structure and scan float tensors for NaN/Inf;\n"
          "                  exit 1 if anything is wrong\n"
          "  --hash          SHA-256 of every tensor and of the data section\n"
          "  --tokenize TEXT the token ids of TEXT, then one line per token: id, tab, piece\n"
          "  --arches        the architecture registry (no FILE): every architecture the\n"
          "                  tools support, its features, keys and tensor table\n"
          "  --special       with --tokenize: add BOS/EOS as the model does and turn\n"
          "                  special-token texts in TEXT into those tokens\n"
          "\n"
          "Other:\n"
          "  --no-split      open only FILE, even if it is the first shard of a split model\n"
          "  -h, --help      this help\n"
          "  --version       the version\n"
          "\n"
          "diff compares metadata (type and value) and tensors (type, shape, data bytes);\n"
          "it exits 0 when the files are the same, 1 when they differ, 2 on errors.\n",
          out);
}

/* ------------------------------------------------------------------------
 * Command line
 * ------------------------------------------------------------------------ */

static const struct { const char *name; mode mode; } mode_flags[] = {
    { "--vocab", MODE_VOCAB }, { "--merges", MODE_MERGES },
    { "--check", MODE_CHECK }, { "--hash", MODE_HASH }, { "--tokenize", MODE_TOKENIZE },
    { "--arches", MODE_ARCHES },
};

static const struct { const char *name; emit_format fmt; } format_flags[] = {
    { "--text", EMIT_TEXT }, { "--json", EMIT_JSON },
    { "--yaml", EMIT_YAML }, { "--markdown", EMIT_MARKDOWN },
};

/* What parse_args found: go on, or stop with an exit status. */
enum { ARGS_OK = 0, ARGS_HELP = -1, ARGS_VERSION = -2 };

/* Sets o's field for one option; returns ARGS_OK, ARGS_HELP, ARGS_VERSION,
 * or 2 after a usage error. */
static int parse_option(options *o, const char *arg)
{
    for (size_t i = 0; i < sizeof format_flags / sizeof format_flags[0]; i++)
        if (strcmp(arg, format_flags[i].name) == 0) {
            o->fmt = format_flags[i].fmt; /* the last one wins */
            return ARGS_OK;
        }
    for (size_t i = 0; i < sizeof mode_flags / sizeof mode_flags[0]; i++)
        if (strcmp(arg, mode_flags[i].name) == 0) {
            if (o->mode_flag && strcmp(o->mode_flag, arg) != 0)
                return cli_usage_error(TOOL, "%s and %s cannot be combined; choose one of "
                                       "--vocab, --merges, --check, --hash, --tokenize",
                                       o->mode_flag, arg);
            o->mode = mode_flags[i].mode;
            o->mode_flag = mode_flags[i].name;
            return ARGS_OK;
        }
    if (strcmp(arg, "--full") == 0)
        o->full = true;
    else if (strcmp(arg, "--no-tensors") == 0)
        o->no_tensors = true;
    else if (strcmp(arg, "--no-metadata") == 0)
        o->no_metadata = true;
    else if (strcmp(arg, "--no-split") == 0)
        o->no_split = true;
    else if (strcmp(arg, "--special") == 0)
        o->special = true;
    else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)
        return ARGS_HELP;
    else if (strcmp(arg, "--version") == 0)
        return ARGS_VERSION;
    else
        return cli_usage_error(TOOL, "unknown option '%s'", arg);
    return ARGS_OK;
}

static int add_file(options *o, const char *arg)
{
    if (o->n_files == 3)
        return cli_usage_error(TOOL, "too many file names (at '%s')", arg);
    o->files[o->n_files++] = arg;
    return ARGS_OK;
}

/* "diff" is a command only as the first non-option word (a file of that name
 * can be given as ./diff). */
static int finish_args(options *o)
{
    if (o->n_files > 0 && strcmp(o->files[0], "diff") == 0) {
        if (o->mode_flag)
            return cli_usage_error(TOOL, "diff does not take %s", o->mode_flag);
        if (o->special)
            return cli_usage_error(TOOL, "diff does not take --special");
        if (o->n_files == 1)
            return cli_usage_error(TOOL, "diff: missing A and B, the two GGUF files to compare");
        if (o->n_files == 2)
            return cli_usage_error(TOOL, "diff: missing B, the file to compare '%s' with",
                                   o->files[1]);
        o->mode = MODE_DIFF;
        o->files[0] = o->files[1];
        o->files[1] = o->files[2];
        o->n_files = 2;
        return ARGS_OK;
    }
    if (o->special && o->mode != MODE_TOKENIZE)
        return cli_usage_error(TOOL, "--special needs --tokenize");
    if (o->mode == MODE_ARCHES)
        return o->n_files ? cli_usage_error(TOOL, "--arches takes no FILE (got '%s')",
                                            o->files[0]) : ARGS_OK;
    if (o->n_files == 0)
        return cli_usage_error(TOOL, "missing FILE, the GGUF file to inspect");
    if (o->n_files > 1)
        return cli_usage_error(TOOL, "one FILE expected, got '%s' and '%s'; to compare two "
                               "files: %s diff A B", o->files[0], o->files[1], TOOL);
    return ARGS_OK;
}

/* Returns ARGS_OK to go on, ARGS_HELP, ARGS_VERSION, or 2 after a usage
 * error. */
static int parse_args(options *o, int argc, char **argv)
{
    bool only_files = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int rc;
        if (only_files || arg[0] != '-' || strcmp(arg, "-") == 0)
            rc = add_file(o, arg);
        else if (strcmp(arg, "--") == 0)
            only_files = true, rc = ARGS_OK;
        else if (strcmp(arg, "--tokenize") == 0) {
            if (i + 1 == argc)
                return cli_usage_error(TOOL, "--tokenize: missing TEXT, the text to tokenize");
            o->tokenize_text = argv[++i];
            rc = parse_option(o, "--tokenize");
        } else
            rc = parse_option(o, arg);
        if (rc)
            return rc;
    }
    return finish_args(o);
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
    case MODE_VOCAB: rc = vocab_write(e, f, &err); break;
    case MODE_MERGES: rc = merges_write(e, f, &err); break;
    case MODE_HASH: rc = hash_write(e, f); break;
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
    int rc = parse_args(&o, argc, argv);
    if (rc == ARGS_HELP || rc == ARGS_VERSION) {
        if (rc == ARGS_HELP)
            usage(stdout);
        else
            cli_print_version(TOOL);
        return cli_close_stdout(TOOL, 0);
    }
    if (rc)
        return rc;
    if (o.mode == MODE_ARCHES) {
        emit *e = start(&o, "Architectures");
        if (!e)
            return 1;
        arches_write(e);
        return cli_close_stdout(TOOL, finish(e, 0, 1));
    }
    if (o.mode != MODE_DIFF)
        return cli_close_stdout(TOOL, run_single(&o));
    /* diff keeps 1 for "different": a write error is an error, 2 */
    rc = run_diff(&o);
    return cli_close_stdout(TOOL, 0) ? 2 : rc;
}
