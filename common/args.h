/*
 * args.h — what every tool's command line shares: whole-number parsing
 * with ranges, the thread count, --version, and an honest exit status when
 * standard output could not be written.
 */
#ifndef COMMON_ARGS_H
#define COMMON_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#ifndef GGUFKIT_VERSION
#define GGUFKIT_VERSION "0.0.0"
#endif

/* Parses all of s as a decimal integer in [lo, hi] (no sign games, no
 * trailing text, no overflow). true on success. */
bool cli_parse_long(const char *s, long lo, long hi, long *out);

/* Parses all of s as a finite number in [lo, hi]. */
bool cli_parse_double(const char *s, double lo, double hi, double *out);

/* Splits s as llama.cpp's option lists (its common/arg.cpp parse_csv_row):
 * fields between commas; a field that starts with '"' runs to the next
 * lone '"' and may hold commas, '""' inside standing for one '"'; a '"'
 * elsewhere is kept as it is. *out gets *n malloc'ed strings in a
 * malloc'ed array (free with cli_csv_free). false: out of memory. */
bool cli_csv_fields(const char *s, char ***out, int *n);
void cli_csv_free(char **fields, int n);

/* The adapters of one --lora / --lora-scaled option, as llama.cpp e21cdc11
 * takes them: --lora FILE[,FILE...] (scale 1: scale NULL) and --lora-scaled
 * FILE:S[,FILE:S...] (lists split by cli_csv_fields; S after the last ':'),
 * or the older --lora-scaled FILE S, taken when an item does not end in
 * ':' and a number (then *took = 1: next, the following argument, was S).
 * Appends to *items (*n of them, strings malloc'ed). Returns OPTS_OK-style
 * 0, or cli_usage_error's status after printing why. */
typedef struct {
    char *file, *scale;
} cli_lora_item;
int cli_lora_items(const char *tool, const char *opt, bool scaled, const char *value,
                   const char *next, int *took, cli_lora_item **items, int *n);
void cli_lora_free(cli_lora_item *items, int n);

/* A size: "123", "10K", "500M", "2G" (powers of 1000, as llama.cpp's
 * gguf-split and converters read them); no sign or spaces, at least 1. */
bool cli_parse_size(const char *s, uint64_t *out);

/* CPUs this process may run on (sched_getaffinity), fewer if its cgroup's
 * CPU quota (cpu.max) allows fewer; at least 1. */
int cli_available_cores(void);

/* Most threads a tool accepts: 4 × the available cores, at most 256
 * (POOL_MAX_THREADS). */
int cli_max_threads(void);

/* Parses a thread count: 1 … cli_max_threads(). Above the available
 * cores it warns on stderr ("TOOL: warning: ..."), since extra threads
 * only compete for the same cores. false (nothing printed) when invalid. */
bool cli_parse_threads(const char *tool, const char *s, int *out);

/* The thread count to use when none was given: the available cores. */
int cli_default_threads(void);

/* The one wording of a usage error in every tool: prints
 * "TOOL: error: MESSAGE (see 'TOOL --help')" to stderr and returns 2, the
 * usage-error exit status. E.g. cli_usage_error(TOOL, "unknown option '%s'", a). */
int cli_usage_error(const char *tool, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "TOOL (ggufkit) VERSION" to stdout. */
void cli_print_version(const char *tool);

/* Flushes and closes stdout. Returns status unchanged when that worked,
 * else prints "TOOL: error: standard output: REASON" and returns 1: output
 * that went nowhere (a full disk, a closed pipe) is a failure. */
int cli_close_stdout(const char *tool, int status);

#endif
