/*
 * opts.c — the option-table parser and help printer (see opts.h).
 */
#include "opts.h"
#include "args.h"

#include <string.h>
#include <strings.h>

static bool in_context(const opt *r, unsigned context)
{
    return r->when == 0 || (r->when & context) != 0;
}

const opt *opts_find(const opts_spec *spec, unsigned context, const char *word)
{
    for (const opt *r = spec->rows; r->kind != OPT_END; r++)
        if (r->kind != OPT_TEXT && in_context(r, context) &&
            ((r->name && !strcmp(word, r->name)) || (r->short_ && !strcmp(word, r->short_))))
            return r;
    return NULL;
}

static bool takes_value(const opt *r)
{
    return r->kind >= OPT_STRING && (r->kind != OPT_CALL || r->arg);
}

static int bad_value(const opts_spec *spec, const opt *r, const char *name, const char *value)
{
    if (spec->bad_value)
        return spec->bad_value(r, name, value);
    return cli_usage_error(spec->tool, "bad value '%s' for %s", value, name);
}

/* Stores value by the row's kind: true when it is valid. */
static bool store(const opts_spec *spec, const opt *r, const char *value, char *field)
{
    long n;
    double d;
    switch (r->kind) {
    case OPT_STRING:
        *(const char **)field = value;
        return true;
    case OPT_INT:
        if (!cli_parse_long(value, r->lo, r->hi, &n))
            return false;
        *(int *)field = (int)n;
        return true;
    case OPT_U64:
        if (!cli_parse_long(value, r->lo, r->hi, &n))
            return false;
        *(uint64_t *)field = (uint64_t)n;
        return true;
    case OPT_FLOAT:
        if (!cli_parse_double(value, r->min, r->max, &d))
            return false;
        if ((r->flags & OPT_ABOVE_MIN) && !((float)d > r->min))
            return false;
        *(float *)field = (float)d;
        return true;
    case OPT_SIZE:
        return cli_parse_size(value, (uint64_t *)field);
    case OPT_THREADS:
        return cli_parse_threads(spec->tool, value, (int *)field);
    case OPT_CHOICE:
        for (int i = 0; r->choices[i]; i++)
            if ((r->flags & OPT_NOCASE) ? !strcasecmp(value, r->choices[i])
                                        : !strcmp(value, r->choices[i])) {
                *(int *)field = i;
                return true;
            }
        return false;
    default:
        return false;
    }
}

int opts_parse(const opts_spec *spec, unsigned context, int argc, char **argv, int first,
               void *user)
{
    bool operands_only = false;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (operands_only || a[0] != '-' || !a[1]) {
            int rc = spec->operand ? spec->operand(user, a, i + 1 == argc)
                                   : cli_usage_error(spec->tool, "unknown option '%s'", a);
            if (rc)
                return rc;
            continue;
        }
        if (spec->dashdash && !strcmp(a, "--")) {
            operands_only = true;
            continue;
        }
        const opt *r = opts_find(spec, context, a);
        if (!r)
            return cli_usage_error(spec->tool, "unknown option '%s'", a);
        const char *value = NULL;
        if (takes_value(r)) {
            if (i + 1 == argc)
                return r->missing ? cli_usage_error(spec->tool, "%s", r->missing)
                                  : cli_usage_error(spec->tool, "%s needs a value", a);
            value = argv[++i];
        }
        char *field = (char *)user + r->off;
        switch (r->kind) {
        case OPT_HELP:
            spec->usage(stdout);
            return OPTS_STOP;
        case OPT_VERSION:
            cli_print_version(spec->tool);
            return OPTS_STOP;
        case OPT_FLAG:
            *(bool *)field = true;
            break;
        case OPT_SET:
            *(int *)field = r->val;
            break;
        case OPT_CALL: {
            opts_call c = { user, r, a, value, argv + i + 1, argc - i - 1, 0 };
            int rc = r->call(&c);
            if (rc == OPTS_BAD_VALUE)
                return bad_value(spec, r, a, value);
            if (rc)
                return rc;
            i += c.took;
            break;
        }
        default:
            if (!store(spec, r, value, field))
                return bad_value(spec, r, a, value);
        }
    }
    return OPTS_OK;
}

/* Writes text, each '\n' inside it followed by indent spaces. */
static void put_indented(FILE *out, const char *text, int indent)
{
    for (const char *p = text; *p; p++) {
        fputc(*p, out);
        if (*p == '\n' && p[1])
            fprintf(out, "%*s", indent, "");
    }
}

void opts_help(const opts_spec *spec, FILE *out)
{
    for (const opt *r = spec->rows; r->kind != OPT_END; r++) {
        if (!r->help)
            continue;
        if (r->kind == OPT_TEXT && !r->name) {
            fputs(r->help, out);
            continue;
        }
        char left[128];
        snprintf(left, sizeof left, "%s%s%s%s%s", r->short_ ? r->short_ : "",
                 r->short_ ? ", " : "", r->name, r->arg ? " " : "", r->arg ? r->arg : "");
        int len = (int)strlen(left);
        fprintf(out, "  %s%*s", left, len < spec->width ? spec->width - len : 2, "");
        put_indented(out, r->help, spec->width + 2);
        fputc('\n', out);
    }
}
