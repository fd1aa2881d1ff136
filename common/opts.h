/*
 * opts.h — every tool's command line from one table.
 *
 * A tool describes its options as an array of `opt` rows (name, short
 * name, kind, where the value goes, range, help) ending in OPTS_END, and
 * calls opts_parse(). Words are read left to right, each as soon as it is
 * seen (so the first error wins and -h stops at once):
 *
 *   - "-x" or "--xx" with a row of that spelling: the row's kind acts;
 *     a row that takes a value takes the next word, whatever it is
 *     ("-o --quiet" makes "--quiet" the output). No "--opt=value", no
 *     bundled short options.
 *   - any other word starting with '-' (but "-" alone): "unknown option 'W'".
 *   - "--" with opts_spec.dashdash: every later word is an operand.
 *   - anything else, and "-": an operand, handed to opts_spec.operand.
 *
 * Usage errors print "TOOL: error: MESSAGE (see 'TOOL --help')" and make
 * the exit status 2 (cli_usage_error). The help text comes from the same
 * rows (opts_help): a row with help text is one line, or more, in table
 * order; OPT_TEXT rows add headings and free text.
 */
#ifndef COMMON_OPTS_H
#define COMMON_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum opt_kind {
    OPT_END,      /* ends the table */
    OPT_TEXT,     /* help text only: `help` as it is, or a line with `name`/`arg` */
    OPT_HELP,     /* prints opts_spec.usage to stdout; opts_parse returns OPTS_STOP */
    OPT_VERSION,  /* prints "TOOL (ggufkit) VERSION"; opts_parse returns OPTS_STOP */
    OPT_FLAG,     /* bool at `off` becomes true */
    OPT_SET,      /* int at `off` becomes `val` (the last one given wins) */
    OPT_STRING,   /* const char * at `off` becomes the value (the last one wins) */
    OPT_INT,      /* int at `off`: a whole number in [lo, hi] */
    OPT_U64,      /* uint64_t at `off`: a whole number in [lo, hi] */
    OPT_FLOAT,    /* float at `off`: a finite number in [min, max], read as a double */
    OPT_SIZE,     /* uint64_t at `off`: N, NK, NM or NG (cli_parse_size) */
    OPT_THREADS,  /* int at `off`: a thread count (cli_parse_threads, which may warn) */
    OPT_CHOICE,   /* int at `off`: the index of the value in `choices` */
    OPT_CALL,     /* call(): anything else */
} opt_kind;

/* Row flags. */
#define OPT_ABOVE_MIN 1u /* OPT_FLOAT: more than min, not min itself */
#define OPT_NOCASE    2u /* OPT_CHOICE: letters in either case */

/* opts_parse's results besides an exit status (> 0). */
#define OPTS_OK        0
#define OPTS_STOP     -1 /* --help or --version printed: exit 0 */
/* What a call() returns for a value it refuses: reported as
 * opts_spec.bad_value says, exit status 2. */
#define OPTS_BAD_VALUE -2

struct opt;

/* What a call() gets: the caller's struct, the row, the option as typed,
 * its value (NULL for a row without arg), and the words after the value,
 * of which it may take some more (`took`). */
typedef struct opts_call {
    void             *user;
    const struct opt *row;
    const char       *name;
    const char       *value;
    char *const      *rest;
    int               n_rest;
    int               took;
} opts_call;

typedef struct opt {
    opt_kind    kind;
    const char *name;     /* "--outfile" (or a short "-x" alone) */
    const char *short_;   /* "-o", or NULL */
    const char *arg;      /* the value's name in the help ("FILE"); set = takes a value */
    size_t      off;      /* offsetof(the caller's struct, field) */
    long        lo, hi;   /* OPT_INT, OPT_U64 */
    double      min, max; /* OPT_FLOAT */
    int         val;      /* OPT_SET's value; free for call() */
    unsigned    flags;    /* OPT_ABOVE_MIN, OPT_NOCASE */
    unsigned    when;     /* non-zero: the row exists only when opts_parse's
                           * context has one of these bits */
    const char *const *choices; /* OPT_CHOICE: NULL-terminated */
    const char *what;     /* what a valid value is, for bad_value's message */
    const char *missing;  /* the usage error when the value is missing
                           * (default: "OPTION needs a value") */
    int (*call)(opts_call *c); /* OPT_CALL: OPTS_OK, OPTS_BAD_VALUE or an exit status */
    const char *help;     /* help text; '\n' starts a continuation line; NULL: not listed */
} opt;

#define OPTS_END { .kind = OPT_END }

typedef struct opts_spec {
    const char *tool;               /* "gguf-convert" */
    const opt  *rows;               /* ends with OPTS_END */
    int         width;              /* help: the option column's width */
    bool        dashdash;           /* "--" ends the options */
    void (*usage)(FILE *out);       /* the whole --help text */
    /* An operand: OPTS_OK or an exit status. last: no word follows. NULL:
     * every operand is "unknown option". */
    int (*operand)(void *user, const char *arg, bool last);
    /* A value the row refuses: prints the usage error, returns its status.
     * NULL: "bad value 'VALUE' for OPTION". */
    int (*bad_value)(const opt *row, const char *name, const char *value);
} opts_spec;

/* Reads argv[first..argc) into user. Returns OPTS_OK, OPTS_STOP, or the exit
 * status after an error (2 for a usage error, already reported). context
 * selects the rows with a `when`. */
int opts_parse(const opts_spec *spec, unsigned context, int argc, char **argv, int first,
               void *user);

/* Prints the rows' help lines: "  -o, --outfile FILE" padded to
 * spec->width (two spaces after a longer one), the help, and its
 * continuation lines indented to the help's column. */
void opts_help(const opts_spec *spec, FILE *out);

/* The row for a spelling ("-o" or "--outfile") in context, or NULL. */
const opt *opts_find(const opts_spec *spec, unsigned context, const char *word);

#endif
