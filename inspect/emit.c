/*
 * emit.c — the emitter's front end (see emit.h) and the pieces its backends
 * share: byte buffer, UTF-8 decoding, number formatting and the
 * human-readable rendering of values for text and Markdown.
 *
 * Not for: any one format's syntax; that lives in emit_text.c,
 * emit_markdown.c and emit_tree.c (JSON and YAML).
 */
#include "emit_impl.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Byte buffer
 * ------------------------------------------------------------------------ */

static bool sbuf_reserve(sbuf *b, size_t more)
{
    if (b->failed)
        return false;
    if (b->len + more + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + more + 1) {
        if (cap > SIZE_MAX / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *p = realloc(b->ptr, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->ptr = p;
    b->cap = cap;
    return true;
}

void sbuf_putn(sbuf *b, const char *s, size_t n)
{
    if (!sbuf_reserve(b, n))
        return;
    memcpy(b->ptr + b->len, s, n);
    b->len += n;
    b->ptr[b->len] = '\0';
}

void sbuf_puts(sbuf *b, const char *s) { sbuf_putn(b, s, strlen(s)); }
void sbuf_putc(sbuf *b, char c) { sbuf_putn(b, &c, 1); }

void sbuf_printf(sbuf *b, const char *fmt, ...)
{
    char small[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        sbuf_putn(b, small, (size_t)n);
        return;
    }
    if (!sbuf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *sbuf_take(sbuf *b)
{
    if (!b->failed && !b->ptr)
        sbuf_reserve(b, 0);
    char *s = b->failed ? NULL : b->ptr;
    if (!s)
        free(b->ptr);
    else
        b->ptr[b->len] = '\0';
    b->ptr = NULL;
    b->len = b->cap = 0;
    b->failed = false;
    return s;
}

void sbuf_free(sbuf *b)
{
    free(b->ptr);
    b->ptr = NULL;
    b->len = b->cap = 0;
}

/* ------------------------------------------------------------------------
 * UTF-8 and numbers
 * ------------------------------------------------------------------------ */

size_t utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
    unsigned char c = p[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        len = 2, v = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, v = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0; /* continuation byte, overlong lead (c0, c1) or > U+10FFFF lead */
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

size_t format_uint(char out[24], uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

size_t format_int(char out[24], int64_t v)
{
    if (v >= 0)
        return format_uint(out, (uint64_t)v);
    char digits[24];
    size_t n = format_uint(digits, 0 - (uint64_t)v); /* at most 19 digits */
    out[0] = '-';
    memcpy(out + 1, digits, n + 1);
    return n + 1;
}

void format_float(char out[40], double v, bool is_f32)
{
    /* The fewest significant digits that read back to the same value: 9
     * always suffice for a float, 17 for a double. */
    int max = is_f32 ? 9 : 17, prec = 1;
    char sci[40];
    if (!isfinite(v)) {
        snprintf(out, 40, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
        return;
    }
    /* Whole numbers below 1e15 come out below as "%.1f" of themselves, i.e.
     * their digits and ".0": written directly, which is what makes long
     * score columns cheap. -0.0 keeps its sign through the slow path. */
    if (v == (double)(int64_t)v && fabs(v) < 1e15 && (v != 0 || !signbit(v))) {
        size_t n = format_int(out, (int64_t)v);
        memcpy(out + n, ".0", 3);
        return;
    }
    for (; prec <= max; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec - 1, v);
        if (is_f32 ? strtof(sci, NULL) == (float)v : strtod(sci, NULL) == v)
            break;
    }
    if (prec > max)
        prec = max;
    /* Those digits in fixed notation when the decimal exponent is moderate
     * ("-260.0", "0.00001"), else in exponent notation ("1.5e-07"); both with
     * a '.', so YAML 1.1 readers also see a float. */
    int exp10 = atoi(strchr(sci, 'e') + 1);
    if (exp10 >= -5 && exp10 < 16) {
        int decimals = prec - 1 - exp10;
        snprintf(out, 40, "%.*f", decimals > 1 ? decimals : 1, v);
        return;
    }
    char *e = strchr(sci, 'e');
    if (prec == 1) { /* "1e-07" → "1.0e-07" */
        snprintf(out, 40, "%.*s.0%s", (int)(e - sci), sci, e);
        return;
    }
    snprintf(out, 40, "%s", sci);
}

/* ------------------------------------------------------------------------
 * Human-readable values (text and Markdown)
 * ------------------------------------------------------------------------ */

/* Invisible or layout-changing characters that must not reach a terminal raw:
 * C0/C1 controls, DEL, line/paragraph separators, zero-width and bidi
 * controls, BOM and the noncharacters at the end of the BMP. */
static bool cp_is_invisible(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x200b && cp <= 0x200f) ||
           cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) ||
           cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) || cp == 0xfffe || cp == 0xffff;
}

static void display_string(sbuf *b, const char *s, size_t n, bool quote)
{
    const unsigned char *p = (const unsigned char *)s;
    if (quote)
        sbuf_putc(b, '"');
    for (size_t i = 0; i < n;) {
        /* a run of printable ASCII that needs no escape goes in at once */
        size_t run = i;
        while (run < n && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '\\' &&
               !(quote && p[run] == '"'))
            run++;
        if (run > i) {
            sbuf_putn(b, s + i, run - i);
            i = run;
            continue;
        }
        uint32_t cp;
        size_t len = utf8_decode(p + i, n - i, &cp);
        if (len == 0) {
            sbuf_printf(b, "\\x%02x", p[i]); /* not UTF-8: show the byte */
            i++;
            continue;
        }
        if (cp == '\\' || (quote && cp == '"')) {
            sbuf_putc(b, '\\');
            sbuf_putc(b, (char)cp);
        } else if (cp == '\n') {
            sbuf_puts(b, "\\n");
        } else if (cp == '\t') {
            sbuf_puts(b, "\\t");
        } else if (cp == '\r') {
            sbuf_puts(b, "\\r");
        } else if (cp < 0x80 && cp_is_invisible(cp)) {
            sbuf_printf(b, "\\x%02" PRIx32, cp);
        } else if (cp_is_invisible(cp)) {
            sbuf_printf(b, "\\u%04" PRIx32, cp);
        } else {
            sbuf_putn(b, s + i, len);
        }
        i += len;
    }
    if (quote)
        sbuf_putc(b, '"');
}

static void display_human(sbuf *b, uint64_t v, emit_unit unit)
{
    static const char *const bytes[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    static const char *const counts[] = { "K", "M", "B", "T", "P", "E" };
    double base = unit == EU_BYTES ? 1024.0 : 1000.0;
    if ((double)v < base)
        return;
    double x = (double)v;
    int i = -1;
    while (x >= base && i < 5) {
        x /= base;
        i++;
    }
    sbuf_printf(b, " (%.2f %s)", x, unit == EU_BYTES ? bytes[i] : counts[i]);
}

static void display_float(sbuf *b, double f, bool is_f32)
{
    if (isnan(f)) {
        sbuf_puts(b, "nan");
    } else if (isinf(f)) {
        sbuf_puts(b, f < 0 ? "-inf" : "inf");
    } else {
        char num[40];
        format_float(num, f, is_f32);
        sbuf_puts(b, num);
    }
}

void display_value(sbuf *b, const emit_value *v, bool quote)
{
    char num[24];
    switch (v->kind) {
    case EV_ABSENT: break;
    case EV_NULL: sbuf_putc(b, '-'); break;
    case EV_BOOL: sbuf_puts(b, v->as.b ? "true" : "false"); break;
    case EV_INT: sbuf_putn(b, num, format_int(num, v->as.i)); break;
    case EV_UINT:
        sbuf_putn(b, num, format_uint(num, v->as.u));
        if (v->unit != EU_NONE)
            display_human(b, v->as.u, (emit_unit)v->unit);
        break;
    case EV_FLOAT: display_float(b, v->as.f, v->is_f32); break;
    case EV_STR: display_string(b, v->as.s.ptr, v->as.s.len, quote); break;
    case EV_LIST:
        sbuf_putc(b, '[');
        if (v->as.list.first > 0)
            sbuf_printf(b, "... %" PRIu64 " before%s", v->as.list.first,
                        v->as.list.n ? ", " : "");
        for (size_t i = 0; i < v->as.list.n; i++) {
            if (i)
                sbuf_puts(b, ", ");
            display_value(b, &v->as.list.items[i], true);
        }
        if (v->as.list.total > v->as.list.first + v->as.list.n)
            sbuf_printf(b, "%s... (%" PRIu64 " total)",
                        v->as.list.n || v->as.list.first ? ", " : "", v->as.list.total);
        sbuf_putc(b, ']');
        break;
    }
}

/* ------------------------------------------------------------------------
 * Front end: section state
 * ------------------------------------------------------------------------ */

emit_value ev_str(const char *s)
{
    return s ? ev_strn(s, strlen(s)) : ev_null();
}

emit *emit_open(FILE *out, emit_format fmt, const char *title)
{
    static const emit_ops *const ops[] = {
        [EMIT_TEXT] = &emit_text_ops, [EMIT_JSON] = &emit_json_ops,
        [EMIT_YAML] = &emit_yaml_ops, [EMIT_MARKDOWN] = &emit_markdown_ops,
    };
    emit *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->out = out;
    e->fmt = fmt;
    e->ops = ops[fmt];
    if (title && !(e->doc_title = strdup(title))) {
        free(e);
        return NULL;
    }
    return e;
}


/* A section left open is closed, so a report that bails out early still
 * produces a well-formed document. */
static void close_section(emit *e)
{
    if (e->sec == SEC_MAP)
        emit_map_end(e);
    else if (e->sec == SEC_TABLE)
        emit_table_end(e);
}

int emit_close(emit *e)
{
    if (!e)
        return -1;
    close_section(e);
    if (e->begun)
        e->ops->end(e);
    int rc = e->failed || fflush(e->out) != 0 || ferror(e->out) ? -1 : 0;
    free(e->cells);
    free(e->doc_title);
    free(e);
    return rc;
}

static void section_begin(emit *e, int sec, const char *key, const char *title, unsigned flags)
{
    close_section(e);
    if (!e->begun) { /* the document starts with its first section */
        e->ops->begin(e, e->doc_title);
        e->begun = true;
    }
    e->sec = sec;
    e->key = key;
    e->title = title;
    e->flags = flags;
    e->n_items = 0;
}

static void section_end(emit *e)
{
    for (size_t i = 0; i < e->n_cells; i++)
        free(e->cells[i]);
    e->n_cells = 0;
    e->sec = SEC_NONE;
    e->cols = NULL;
    e->n_cols = 0;
}

void emit_map_begin(emit *e, const char *key, const char *title, unsigned flags)
{
    section_begin(e, SEC_MAP, key, title, flags);
    e->ops->map_begin(e);
}

void emit_field(emit *e, const char *key, const char *label, emit_value v)
{
    if (e->sec != SEC_MAP || v.kind == EV_ABSENT)
        return;
    e->ops->field(e, key, label ? label : key, &v);
    e->n_items++;
}

void emit_map_end(emit *e)
{
    if (e->sec != SEC_MAP)
        return;
    e->ops->map_end(e);
    section_end(e);
}

void emit_table_begin(emit *e, const char *key, const char *title,
                      const emit_column *cols, size_t n_cols, unsigned flags)
{
    section_begin(e, SEC_TABLE, key, title, flags);
    e->cols = cols;
    e->n_cols = n_cols;
    e->ops->table_begin(e);
}

void emit_row(emit *e, const emit_value *cells)
{
    if (e->sec != SEC_TABLE)
        return;
    e->ops->row(e, cells);
    e->n_items++;
}

void emit_table_end(emit *e)
{
    if (e->sec != SEC_TABLE)
        return;
    e->ops->table_end(e);
    section_end(e);
}

int emit_table_rows(emit *e, const char *key, const char *title,
                    const emit_column *cols, size_t n_cols, unsigned flags,
                    uint64_t n_rows, emit_row_fn *row, void *ctx)
{
    emit_value *cells = calloc(n_cols ? n_cols : 1, sizeof *cells);
    int rc = 0;
    if (!cells) {
        e->failed = true;
        return -1;
    }
    emit_table_begin(e, key, title, cols, n_cols, flags);
    /* a failed write ends the table too: the run fails in emit_close */
    if (e->ops->measure)
        for (uint64_t i = 0; i < n_rows && !rc && !e->failed; i++)
            if (!(rc = row(ctx, i, cells)))
                e->ops->measure(e, cells);
    for (uint64_t i = 0; i < n_rows && !rc && !e->failed && !ferror(e->out); i++)
        if (!(rc = row(ctx, i, cells)))
            emit_row(e, cells);
    emit_table_end(e);
    free(cells);
    return rc ? rc : e->failed ? -1 : 0;
}

void emit_keep_cell(emit *e, char *cell)
{
    if (!cell) {
        e->failed = true;
        return;
    }
    if (e->n_cells == e->cap_cells) {
        size_t cap = e->cap_cells ? e->cap_cells * 2 : 256;
        char **p = realloc(e->cells, cap * sizeof *p);
        if (!p) {
            free(cell);
            e->failed = true;
            return;
        }
        e->cells = p;
        e->cap_cells = cap;
    }
    e->cells[e->n_cells++] = cell;
}
