/*
 * test_opts.c — common/opts: the option-table parser and help printer.
 * Every kind stores what it should and refuses what it should with the
 * tool's message and exit status 2; words are read left to right (the first
 * error wins, --help stops at once); "-" is an operand, "--" ends the
 * options only where the table says so; rows with a context exist only in
 * it; the help is laid out from the rows.
 */
#include <stddef.h>
#include <unistd.h>

#include "args.h"
#include "opts.h"
#include "testutil.h"

typedef struct cfg {
    bool        flag;
    int         set, n, choice, threads;
    uint64_t    u, size;
    float       f;
    const char *s, *ops[4], *extra;
    int         n_ops, calls;
    bool        last_seen;
} cfg;

static int call_two(opts_call *c)
{
    cfg *g = c->user;
    g->calls++;
    if (c->n_rest < 1)
        return 7; /* an exit status of the handler's own */
    if (!strcmp(c->value, "bad"))
        return OPTS_BAD_VALUE;
    g->extra = c->rest[0];
    c->took = 1;
    return OPTS_OK;
}

static int operand(void *user, const char *a, bool last)
{
    cfg *g = user;
    if (g->n_ops == 4)
        return cli_usage_error("t", "too many ('%s')", a);
    g->ops[g->n_ops++] = a;
    g->last_seen = last;
    return 0;
}

static const char *const colors[] = { "red", "green", NULL };

static void usage(FILE *out) { fputs("usage: t\n", out); }

#define O(f) offsetof(cfg, f)
static const opt rows[] = {
    { OPT_TEXT, .help = "Head:\n" },
    { OPT_FLAG, "--flag", "-f", .off = O(flag), .help = "a flag" },
    { OPT_SET, "--seven", .off = O(set), .val = 7, .help = "set seven" },
    { OPT_SET, "--eight", .off = O(set), .val = 8 },
    { OPT_STRING, "--str", "-s", "S", O(s), .help = "a string\nsecond line" },
    { OPT_INT, "--num", .arg = "N", .off = O(n), .lo = -2, .hi = 10, .help = "from -2 to 10" },
    { OPT_U64, "--u", .arg = "N", .off = O(u), .lo = 1, .hi = INT32_MAX },
    { OPT_FLOAT, "--frac", .arg = "P", .off = O(f), .min = 0, .max = 1, .flags = OPT_ABOVE_MIN },
    { OPT_SIZE, "--size", .arg = "N[K|M|G]", .off = O(size) },
    { OPT_THREADS, "--threads", "-t", "N", .off = O(threads) },
    { OPT_CHOICE, "--color", .arg = "red|green", .off = O(choice), .choices = colors,
      .flags = OPT_NOCASE, .missing = "--color wants red or green" },
    { OPT_CALL, "--two", .arg = "A B", .call = call_two, .help = "a long option name's help" },
    { OPT_FLAG, "--only-b", .off = O(flag), .when = 2 },
    { OPT_TEXT, "--str", .arg = "OTHER", .help = "help-only line" },
    { OPT_HELP, "--help", "-h", .help = "this" },
    { OPT_VERSION, .name = "--version" },
    OPTS_END
};
#undef O

static const opts_spec spec = { "t", rows, 12, false, usage, operand, NULL };
static const opts_spec spec_dd = { "t", rows, 12, true, usage, operand, NULL };

/* Runs opts_parse on words (NULL-terminated) with stderr and stdout
 * captured into err and out. */
static int parse(const opts_spec *sp, unsigned context, cfg *g, char *err, char *out,
                 const char *const *words)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"t";
    while (*words)
        argv[argc++] = (char *)*words++;
    argv[argc] = NULL;
    memset(g, 0, sizeof *g);
    fflush(stdout);
    fflush(stderr);
    FILE *fe = tmpfile(), *fo = tmpfile();
    ck_assert_ptr_nonnull(fe);
    ck_assert_ptr_nonnull(fo);
    int save_e = dup(2), save_o = dup(1);
    dup2(fileno(fe), 2);
    dup2(fileno(fo), 1);
    int rc = opts_parse(sp, context, argc, argv, 1, g);
    fflush(stdout);
    fflush(stderr);
    dup2(save_e, 2);
    dup2(save_o, 1);
    close(save_e);
    close(save_o);
    size_t n;
    rewind(fe);
    n = fread(err, 1, 511, fe);
    err[n] = 0;
    rewind(fo);
    n = fread(out, 1, 511, fo);
    out[n] = 0;
    fclose(fe);
    fclose(fo);
    return rc;
}

#define PARSE(g, ...) parse(&spec, 1, (g), err, out, (const char *const[]){ __VA_ARGS__, NULL })
#define USAGE(msg) "t: error: " msg " (see 't --help')\n"

START_TEST(test_kinds_store)
{
    cfg g;
    char err[512], out[512];
    ck_assert_int_eq(PARSE(&g, "-f", "--seven", "-s", "x", "--str", "y", "--num", "-2", "--u",
                           "2147483647", "--frac", "1", "--size", "2K", "--color", "GREEN",
                           "--eight", "-t", "1"), OPTS_OK);
    ck_assert_str_eq(err, "");
    ck_assert(g.flag);
    ck_assert_int_eq(g.set, 8);        /* the last OPT_SET wins */
    ck_assert_str_eq(g.s, "y");        /* the last string wins */
    ck_assert_int_eq(g.n, -2);
    ck_assert_uint_eq(g.u, 2147483647u);
    ck_assert(g.f == 1.0f);
    ck_assert_uint_eq(g.size, 2000);
    ck_assert_int_eq(g.choice, 1);     /* OPT_NOCASE */
    ck_assert_int_eq(g.threads, 1);
    ck_assert_int_eq(g.n_ops, 0);
}
END_TEST

START_TEST(test_bad_values)
{
    cfg g;
    char err[512], out[512];
    static const char *const bad[][2] = {
        { "--num", "11" }, { "--num", "-3" }, { "--num", "1x" }, { "--num", "" },
        { "--u", "0" }, { "--u", "2147483648" }, { "--frac", "0" }, { "--frac", "1.5" },
        { "--frac", "nan" }, { "--frac", "1e-50" }, { "--size", "0" }, { "--size", "1X" },
        { "--color", "blue" }, { "-t", "0" }, { "--threads", "x" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(PARSE(&g, bad[i][0], bad[i][1], "-f"), 2);
        char want[256];
        snprintf(want, sizeof want, USAGE("bad value '%s' for %s"), bad[i][1], bad[i][0]);
        ck_assert_str_eq(err, want);
        ck_assert(!g.flag); /* nothing after the error was read */
    }
}
END_TEST

START_TEST(test_missing_and_unknown)
{
    cfg g;
    char err[512], out[512];
    ck_assert_int_eq(PARSE(&g, "-f", "--num"), 2);
    ck_assert_str_eq(err, USAGE("--num needs a value"));
    ck_assert(g.flag);
    ck_assert_int_eq(PARSE(&g, "-s"), 2);
    ck_assert_str_eq(err, USAGE("-s needs a value")); /* named as typed */
    ck_assert_int_eq(PARSE(&g, "--color"), 2);
    ck_assert_str_eq(err, USAGE("--color wants red or green"));
    ck_assert_int_eq(PARSE(&g, "--bogus", "--num"), 2);
    ck_assert_str_eq(err, USAGE("unknown option '--bogus'"));
    ck_assert_int_eq(PARSE(&g, "--num=3"), 2); /* no --opt=value */
    ck_assert_str_eq(err, USAGE("unknown option '--num=3'"));
    ck_assert_int_eq(PARSE(&g, "-fs", "x"), 2); /* no bundling */
    ck_assert_str_eq(err, USAGE("unknown option '-fs'"));
}
END_TEST

START_TEST(test_context)
{
    cfg g;
    char err[512], out[512];
    ck_assert_int_eq(parse(&spec, 1, &g, err, out, (const char *const[]){ "--only-b", NULL }), 2);
    ck_assert_str_eq(err, USAGE("unknown option '--only-b'"));
    ck_assert_int_eq(parse(&spec, 2 | 4, &g, err, out, (const char *const[]){ "--only-b", NULL }), OPTS_OK);
    ck_assert(g.flag);
    /* a help-only row is not an option */
    ck_assert_ptr_eq(opts_find(&spec, 1, "--str"), &rows[4]);
    ck_assert_ptr_null(opts_find(&spec, 1, "--only-b"));
    ck_assert_ptr_eq(opts_find(&spec, 2, "--only-b"), &rows[12]);
}
END_TEST

/* cli_csv_fields splits as llama.cpp's parse_csv_row (its own example,
 * and the edges: empty fields, a quote inside a field, an open quote). */
static void csv_is(const char *s, int n, const char *const *want)
{
    char **f;
    int got;
    ck_assert(cli_csv_fields(s, &f, &got));
    ck_assert_int_eq(got, n);
    for (int i = 0; i < n; i++)
        ck_assert_str_eq(f[i], want[i]);
    cli_csv_free(f, got);
}

START_TEST(test_csv_fields)
{
    csv_is("value1,\"value, with, commas\",\"value with \"\"escaped\"\" quotes\",value4", 4,
           (const char *const[]){ "value1", "value, with, commas", "value with \"escaped\" quotes",
                                  "value4" });
    csv_is("a.gguf", 1, (const char *const[]){ "a.gguf" });
    csv_is("", 1, (const char *const[]){ "" });
    csv_is("a,,b,", 4, (const char *const[]){ "a", "", "b", "" });
    csv_is("x\"y,\"p\"q", 2, (const char *const[]){ "x\"y", "pq" });
    csv_is("\"open, to the end", 1, (const char *const[]){ "open, to the end" });
}
END_TEST

START_TEST(test_operands)
{
    cfg g;
    char err[512], out[512];
    ck_assert_int_eq(PARSE(&g, "a", "-", "-f", "b"), OPTS_OK);
    ck_assert_int_eq(g.n_ops, 3);
    ck_assert_str_eq(g.ops[1], "-");
    ck_assert(g.last_seen);
    ck_assert_int_eq(PARSE(&g, "a", "b"), OPTS_OK);
    ck_assert(g.last_seen);
    ck_assert_int_eq(PARSE(&g, "a", "-f"), OPTS_OK);
    ck_assert(!g.last_seen);
    ck_assert_int_eq(PARSE(&g, "1", "2", "3", "4", "5"), 2);
    ck_assert_str_eq(err, USAGE("too many ('5')"));
    /* "--" is an unknown option, or with dashdash the end of the options */
    ck_assert_int_eq(PARSE(&g, "--", "-f"), 2);
    ck_assert_str_eq(err, USAGE("unknown option '--'"));
    ck_assert_int_eq(parse(&spec_dd, 1, &g, err, out, (const char *const[]){ "-f", "--", "-s", "--", NULL }), OPTS_OK);
    ck_assert(g.flag);
    ck_assert_int_eq(g.n_ops, 2);
    ck_assert_str_eq(g.ops[0], "-s");
    ck_assert_str_eq(g.ops[1], "--");
    /* a value is taken whatever it looks like */
    ck_assert_int_eq(PARSE(&g, "-s", "--flag"), OPTS_OK);
    ck_assert_str_eq(g.s, "--flag");
    ck_assert(!g.flag);
    opts_spec none = spec;
    none.operand = NULL;
    ck_assert_int_eq(parse(&none, 1, &g, err, out, (const char *const[]){ "x", NULL }), 2);
    ck_assert_str_eq(err, USAGE("unknown option 'x'"));
}
END_TEST

START_TEST(test_call)
{
    cfg g;
    char err[512], out[512];
    ck_assert_int_eq(PARSE(&g, "--two", "a", "b", "c"), OPTS_OK);
    ck_assert_str_eq(g.extra, "b");
    ck_assert_int_eq(g.n_ops, 1); /* b was taken by --two */
    ck_assert_str_eq(g.ops[0], "c");
    ck_assert_int_eq(PARSE(&g, "--two", "a"), 7);
    ck_assert_str_eq(err, "");
    ck_assert_int_eq(PARSE(&g, "--two", "bad", "x"), 2);
    ck_assert_str_eq(err, USAGE("bad value 'bad' for --two"));
}
END_TEST

START_TEST(test_help_and_version_stop)
{
    cfg g;
    char err[512], out[512];
    ck_assert_int_eq(PARSE(&g, "-f", "-h", "--bogus"), OPTS_STOP);
    ck_assert_str_eq(out, "usage: t\n");
    ck_assert_str_eq(err, "");
    ck_assert_int_eq(PARSE(&g, "--bogus", "-h"), 2); /* the first word wins */
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(PARSE(&g, "--version"), OPTS_STOP);
    ck_assert(strncmp(out, "t (ggufkit) ", 12) == 0);
}
END_TEST

START_TEST(test_help_layout)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    opts_help(&spec, f);
    fclose(f);
    ck_assert_str_eq(buf,
        "Head:\n"
        "  -f, --flag  a flag\n"
        "  --seven     set seven\n"
        "  -s, --str S a string\n"
        "              second line\n"
        "  --num N     from -2 to 10\n"
        "  --two A B   a long option name's help\n"
        "  --str OTHER help-only line\n"
        "  -h, --help  this\n");
    free(buf);
    opts_spec narrow = spec;
    narrow.width = 6;
    f = open_memstream(&buf, &len);
    opts_help(&narrow, f);
    fclose(f);
    ck_assert(strstr(buf, "  -f, --flag  a flag\n") != NULL);   /* longer: two spaces */
    ck_assert(strstr(buf, "  --num N  from -2 to 10\n") != NULL);
    ck_assert(strstr(buf, "a string\n        second line\n") != NULL);
    free(buf);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("opts");
    TCase *tc = tcase_create("opts");
    tcase_add_test(tc, test_kinds_store);
    tcase_add_test(tc, test_bad_values);
    tcase_add_test(tc, test_missing_and_unknown);
    tcase_add_test(tc, test_context);
    tcase_add_test(tc, test_operands);
    tcase_add_test(tc, test_csv_fields);
    tcase_add_test(tc, test_call);
    tcase_add_test(tc, test_help_and_version_stop);
    tcase_add_test(tc, test_help_layout);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
