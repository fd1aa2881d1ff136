/*
 * emit_tree.c — the emitter's JSON and YAML backends. Both write the same
 * tree: one top-level object whose members are the sections; maps become
 * objects, tables arrays of one-line objects (or objects keyed by the first
 * column). They stream; nothing is buffered.
 *
 * The two differ only in punctuation and in string escaping:
 *   JSON  strings escaped per RFC 8259; a byte that is not part of valid
 *         UTF-8 becomes \u00XX (the byte as a Latin-1 code point: lossy but
 *         deterministic, and every JSON parser accepts it); NaN and
 *         infinities, which JSON lacks, become the strings "nan", "inf", "-inf".
 *   YAML  block style for sections, flow style for rows and lists; every
 *         string double-quoted with YAML escapes for whatever is outside
 *         YAML's printable set (invalid bytes as \xXX, same code point as
 *         JSON); .nan/.inf/-.inf.
 * Not for: text or Markdown (emit_text.c, emit_markdown.c).
 */
#include "emit_impl.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Scalars
 * ------------------------------------------------------------------------ */

/* Length of the run of printable ASCII from p[0] that both JSON and YAML
 * write as it is (no quote, no backslash), written in one call. */
static size_t plain_run(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n && p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\')
        i++;
    return i;
}

static void json_string(FILE *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        size_t run = plain_run(p + i, n - i);
        if (run) {
            fwrite(s + i, 1, run, out);
            i += run;
            continue;
        }
        uint32_t cp;
        size_t len = utf8_decode(p + i, n - i, &cp);
        if (len == 0) {
            fprintf(out, "\\u%04x", p[i]);
            i++;
            continue;
        }
        switch (cp) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (cp < 0x20 || cp == 0x7f)
                fprintf(out, "\\u%04" PRIx32, cp);
            else
                fwrite(s + i, 1, len, out);
        }
        i += len;
    }
    fputc('"', out);
}

/* YAML 1.2's printable set (c-printable) minus the BOM, which may not appear
 * inside a document. */
static bool yaml_printable(uint32_t cp)
{
    return cp == 0x09 || cp == 0x0a || cp == 0x0d || (cp >= 0x20 && cp <= 0x7e) ||
           cp == 0x85 || (cp >= 0xa0 && cp <= 0xd7ff) ||
           (cp >= 0xe000 && cp <= 0xfffd && cp != 0xfeff) || cp >= 0x10000;
}

static void yaml_string(FILE *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        size_t run = plain_run(p + i, n - i);
        if (run) {
            fwrite(s + i, 1, run, out);
            i += run;
            continue;
        }
        uint32_t cp;
        size_t len = utf8_decode(p + i, n - i, &cp);
        if (len == 0) {
            fprintf(out, "\\x%02x", p[i]);
            i++;
            continue;
        }
        switch (cp) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case 0: fputs("\\0", out); break;
        case '\t': fputs("\\t", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case 0x85: fputs("\\N", out); break;
        case 0x2028: fputs("\\L", out); break;
        case 0x2029: fputs("\\P", out); break;
        default:
            if (cp <= 0xff && !yaml_printable(cp))
                fprintf(out, "\\x%02" PRIx32, cp);
            else if (!yaml_printable(cp))
                fprintf(out, "\\u%04" PRIx32, cp);
            else
                fwrite(s + i, 1, len, out);
        }
        i += len;
    }
    fputc('"', out);
}

static void tree_value(emit *e, const emit_value *v)
{
    bool yaml = e->fmt == EMIT_YAML;
    FILE *out = e->out;
    char num[40];
    switch (v->kind) {
    case EV_ABSENT:
    case EV_NULL: fputs("null", out); break;
    case EV_BOOL: fputs(v->as.b ? "true" : "false", out); break;
    case EV_INT: fwrite(num, 1, format_int(num, v->as.i), out); break;
    case EV_UINT: fwrite(num, 1, format_uint(num, v->as.u), out); break;
    case EV_FLOAT:
        if (isnan(v->as.f)) {
            fputs(yaml ? ".nan" : "\"nan\"", out);
        } else if (isinf(v->as.f)) {
            fputs(v->as.f < 0 ? (yaml ? "-.inf" : "\"-inf\"") : (yaml ? ".inf" : "\"inf\""), out);
        } else {
            format_float(num, v->as.f, v->is_f32);
            fputs(num, out);
        }
        break;
    case EV_STR:
        (yaml ? yaml_string : json_string)(out, v->as.s.ptr, v->as.s.len);
        break;
    case EV_LIST:
        fputc('[', out);
        for (size_t i = 0; i < v->as.list.n; i++) {
            if (i)
                fputs(", ", out);
            tree_value(e, &v->as.list.items[i]);
        }
        fputc(']', out);
        break;
    }
}

/* A member name: JSON always quotes; YAML quotes only names that come from
 * the file (keyed tables), schema names are plain [a-z0-9_]. */
static void name(emit *e, const char *s, size_t n, bool from_file)
{
    if (e->fmt == EMIT_JSON)
        json_string(e->out, s, n);
    else if (from_file)
        yaml_string(e->out, s, n);
    else
        fwrite(s, 1, n, e->out);
    fputs(": ", e->out);
}

static void plain_name(emit *e, const char *s)
{
    name(e, s, strlen(s), false);
}

/* ------------------------------------------------------------------------
 * Structure
 * ------------------------------------------------------------------------ */

/* JSON: starts the next member of the top-level object. */
static void json_member(emit *e, const char *key)
{
    fputs(e->n_top++ ? ",\n  " : "\n  ", e->out);
    plain_name(e, key);
}

static const char *section_key(const emit *e)
{
    return e->key ? e->key : "rows";
}

static void tree_begin(emit *e, const char *title)
{
    (void)title;
    if (e->fmt == EMIT_JSON)
        fputc('{', e->out);
}

static void tree_end(emit *e)
{
    if (e->fmt == EMIT_JSON)
        fputs(e->n_top ? "\n}\n" : "}\n", e->out);
    else if (e->n_top == 0)
        fputs("{}\n", e->out);
}

static void tree_map_begin(emit *e)
{
    if (e->key && e->fmt == EMIT_JSON) {
        json_member(e, e->key);
        fputc('{', e->out);
    } else if (e->key) {
        e->n_top++; /* YAML writes "key:" with the first field */
    }
}

static void tree_field(emit *e, const char *key, const char *label, const emit_value *v)
{
    (void)label;
    bool json = e->fmt == EMIT_JSON;
    if (!e->key) { /* straight into the top-level object */
        if (json) {
            json_member(e, key);
        } else {
            e->n_top++;
            plain_name(e, key);
        }
    } else {
        if (json) {
            fputs(e->n_items ? ",\n    " : "\n    ", e->out);
        } else {
            if (e->n_items == 0)
                fprintf(e->out, "%s:\n", e->key);
            fputs("  ", e->out);
        }
        plain_name(e, key);
    }
    tree_value(e, v);
    if (!json)
        fputc('\n', e->out);
}

static void tree_map_end(emit *e)
{
    if (!e->key)
        return;
    if (e->fmt == EMIT_JSON)
        fputs(e->n_items ? "\n  }" : "}", e->out);
    else if (e->n_items == 0)
        fprintf(e->out, "%s: {}\n", e->key);
}

static void tree_table_begin(emit *e)
{
    if (e->fmt == EMIT_JSON) {
        json_member(e, section_key(e));
        fputc(e->flags & EMIT_KEYED ? '{' : '[', e->out);
    } else {
        e->n_top++;
    }
}

static void tree_row(emit *e, const emit_value *cells)
{
    bool json = e->fmt == EMIT_JSON, keyed = (e->flags & EMIT_KEYED) && e->n_cols > 0;
    if (json) {
        fputs(e->n_items ? ",\n    " : "\n    ", e->out);
    } else {
        if (e->n_items == 0)
            fprintf(e->out, "%s:\n", section_key(e));
        fputs(keyed ? "  " : "  - ", e->out);
    }
    size_t c = 0;
    if (keyed && cells[0].kind == EV_STR) {
        name(e, cells[0].as.s.ptr, cells[0].as.s.len, true);
        c = 1;
    } else if (keyed) { /* a key must be a string: use the value's text form */
        sbuf b = { 0 };
        display_value(&b, &cells[0], false);
        name(e, b.ptr ? b.ptr : "", b.len, true);
        e->failed |= b.failed;
        sbuf_free(&b);
        c = 1;
    }
    fputc('{', e->out);
    bool first = true;
    for (; c < e->n_cols; c++) {
        if (cells[c].kind == EV_ABSENT)
            continue;
        if (!first)
            fputs(", ", e->out);
        first = false;
        plain_name(e, e->cols[c].key);
        tree_value(e, &cells[c]);
    }
    fputs(json ? "}" : "}\n", e->out);
}

static void tree_table_end(emit *e)
{
    bool keyed = e->flags & EMIT_KEYED;
    if (e->fmt == EMIT_JSON) {
        if (e->n_items)
            fputs("\n  ", e->out);
        fputc(keyed ? '}' : ']', e->out);
    } else if (e->n_items == 0) {
        fprintf(e->out, "%s: %s\n", section_key(e), keyed ? "{}" : "[]");
    }
}

const emit_ops emit_json_ops = {
    tree_begin, tree_end, tree_map_begin, tree_field, tree_map_end,
    tree_table_begin, tree_row, tree_table_end, NULL,
};

const emit_ops emit_yaml_ops = {
    tree_begin, tree_end, tree_map_begin, tree_field, tree_map_end,
    tree_table_begin, tree_row, tree_table_end, NULL,
};
