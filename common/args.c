/*
 * args.c — shared command-line helpers (see args.h).
 */
#define _GNU_SOURCE
#include "args.h"
#include "pool.h"

#include <ctype.h>

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool cli_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

bool cli_parse_double(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* The CPU quota of the process's cgroup (v2 cpu.max "QUOTA PERIOD", or v1
 * cfs_quota_us / cfs_period_us) rounded up to whole CPUs; 0 when none is
 * set or none can be read. */
static int cgroup_cpus(void)
{
    long long quota = -1, period = 0;
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
    if (f) {
        char q[32];
        if (fscanf(f, "%31s %lld", q, &period) == 2 && strcmp(q, "max") != 0)
            quota = strtoll(q, NULL, 10);
        fclose(f);
    } else if ((f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "r"))) {
        if (fscanf(f, "%lld", &quota) != 1)
            quota = -1;
        fclose(f);
        if ((f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "r"))) {
            if (fscanf(f, "%lld", &period) != 1)
                period = 0;
            fclose(f);
        }
    }
    if (quota <= 0 || period <= 0)
        return 0;
    const long long n = (quota + period - 1) / period;
    return n > 4096 ? 4096 : (int)n;
}

int cli_available_cores(void)
{
    int n = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
    if (n <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (int)c : 1;
    }
    const int quota = cgroup_cpus();
    return quota > 0 && quota < n ? quota : n;
}

int cli_max_threads(void)
{
    int n = 4 * cli_available_cores();
    return n > POOL_MAX_THREADS ? POOL_MAX_THREADS : n;
}

int cli_default_threads(void)
{
    return cli_available_cores();
}

bool cli_parse_threads(const char *tool, const char *s, int *out)
{
    long v;
    if (!cli_parse_long(s, 1, cli_max_threads(), &v))
        return false;
    int cores = cli_available_cores();
    if (v > cores)
        fprintf(stderr, "%s: warning: %ld threads on %d available core%s: the extra threads "
                "only compete for the same cores\n", tool, v, cores, cores == 1 ? "" : "s");
    *out = (int)v;
    return true;
}

int cli_usage_error(const char *tool, const char *fmt, ...)
{
    fflush(stdout);
    fprintf(stderr, "%s: error: ", tool);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see '%s --help')\n", tool);
    return 2;
}

void cli_print_version(const char *tool)
{
    printf("%s (ggufkit) %s\n", tool, GGUFKIT_VERSION);
}

int cli_close_stdout(const char *tool, int status)
{
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        fprintf(stderr, "%s: error: standard output: %s\n", tool, e ? strerror(e) : "write error");
        return 1;
    }
    return status;
}

bool cli_parse_size(const char *s, uint64_t *out)
{
    if (!isdigit((unsigned char)s[0]))
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return false;
    uint64_t mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1000, end++;
    else if (*end == 'M' || *end == 'm')
        mul = 1000 * 1000, end++;
    else if (*end == 'G' || *end == 'g')
        mul = 1000 * 1000 * 1000, end++;
    if (*end || v == 0 || v > UINT64_MAX / mul)
        return false;
    *out = v * mul;
    return true;
}

bool cli_csv_fields(const char *s, char ***out, int *n)
{
    const size_t len = strlen(s);
    char **v = NULL, *field = malloc(len + 1);
    int nf = 0;
    size_t fl = 0;
    bool quoted = false;
    if (!field)
        return false;
    for (size_t i = 0;; i++) {
        const char ch = s[i];
        if (ch == '"') {
            if (!quoted) {
                if (fl)
                    field[fl++] = '"'; /* inside an unquoted field: literal */
                else
                    quoted = true;
            } else if (s[i + 1] == '"') {
                field[fl++] = '"';
                i++;
            } else
                quoted = false;
            continue;
        }
        if (ch != '\0' && (ch != ',' || quoted)) {
            field[fl++] = ch;
            continue;
        }
        char **nv = realloc(v, (size_t)(nf + 1) * sizeof *nv);
        char *copy = nv ? malloc(fl + 1) : NULL;
        if (nv)
            v = nv;
        if (!copy) {
            cli_csv_free(v, nf);
            free(field);
            return false;
        }
        memcpy(copy, field, fl);
        copy[fl] = '\0';
        v[nf++] = copy;
        fl = 0;
        if (ch == '\0')
            break;
    }
    free(field);
    *out = v;
    *n = nf;
    return true;
}

void cli_csv_free(char **fields, int n)
{
    for (int i = 0; i < n; i++)
        free(fields[i]);
    free(fields);
}

/* One more item: copies of file and scale (NULL: none). */
static int lora_push(const char *tool, cli_lora_item **items, int *n, const char *file,
                     const char *scale)
{
    cli_lora_item *v = realloc(*items, (size_t)(*n + 1) * sizeof *v);
    if (!v)
        return cli_usage_error(tool, "out of memory");
    *items = v;
    char *f = strdup(file), *sc = f && scale ? strdup(scale) : NULL;
    if (!f || (scale && !sc)) {
        free(f);
        return cli_usage_error(tool, "out of memory");
    }
    v[(*n)++] = (cli_lora_item){ f, sc };
    return 0;
}

int cli_lora_items(const char *tool, const char *opt, bool scaled, const char *value,
                   const char *next, int *took, cli_lora_item **items, int *n)
{
    char **f;
    int nf, rc = 0;
    *took = 0;
    if (!cli_csv_fields(value, &f, &nf))
        return cli_usage_error(tool, "out of memory");
    bool pairs = scaled;
    for (int i = 0; pairs && i < nf; i++) {
        const char *colon = strrchr(f[i], ':');
        double v;
        pairs = colon && colon > f[i] && cli_parse_double(colon + 1, -HUGE_VAL, HUGE_VAL, &v);
    }
    if (scaled && !pairs) { /* FILE S */
        cli_csv_free(f, nf);
        if (!next)
            return cli_usage_error(tool, "%s needs FILE:SCALE[,FILE:SCALE...] or FILE SCALE", opt);
        *took = 1;
        return lora_push(tool, items, n, value, next);
    }
    for (int i = 0; !rc && i < nf; i++) {
        char *colon = scaled ? strrchr(f[i], ':') : NULL;
        if (colon)
            *colon = '\0';
        rc = f[i][0] ? lora_push(tool, items, n, f[i], colon ? colon + 1 : NULL)
                     : cli_usage_error(tool, "%s: an empty file name in '%s'", opt, value);
    }
    cli_csv_free(f, nf);
    return rc;
}

void cli_lora_free(cli_lora_item *items, int n)
{
    for (int i = 0; i < n; i++) {
        free(items[i].file);
        free(items[i].scale);
    }
    free(items);
}
