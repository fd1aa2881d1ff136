/*
 * emit_text.c — the emitter's plain-text backend: maps as aligned
 * "label: value" lines, tables as aligned columns under an upper-case header.
 *
 * Both are buffered until the section ends, because alignment needs the
 * widest cell. A titled section is indented under its title and set off by
 * a blank line; an untitled one starts at column 0, so `--vocab` or
 * `--hash` output is easy to cut and grep. Not for: escaping rules (emit.c,
 * display_value) or any other format.
 */
#include "emit_impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Terminal columns of a UTF-8 string, counting each code point as one. */
static size_t display_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            w++;
    return w;
}

static void pad(FILE *out, size_t n)
{
    while (n--)
        fputc(' ', out);
}

/* Blank line between sections when either side has a title. */
static void separate(emit *e)
{
    if (e->n_sections > 0 && (e->title || e->prev_titled))
        fputc('\n', e->out);
    e->n_sections++;
    e->prev_titled = e->title != NULL;
}

static void text_begin(emit *e, const char *title) { (void)e, (void)title; }
static void text_end(emit *e) { (void)e; }
static void text_map_begin(emit *e) { (void)e; }
static void text_table_begin(emit *e) { (void)e; }

static char *render(const emit_value *v, bool quote)
{
    sbuf b = { 0 };
    display_value(&b, v, quote);
    return sbuf_take(&b);
}

static void text_field(emit *e, const char *key, const char *label, const emit_value *v)
{
    (void)key;
    emit_keep_cell(e, strdup(label));
    emit_keep_cell(e, render(v, false));
}

static void text_map_end(emit *e)
{
    if (e->n_cells < 2 * e->n_items)
        return; /* out of memory: already flagged */
    separate(e);
    if (e->title)
        fprintf(e->out, "%s\n", e->title);
    const char *indent = e->title ? "  " : "";
    size_t w = 0;
    for (size_t i = 0; i < e->n_items; i++) {
        size_t lw = display_width(e->cells[2 * i]);
        w = lw > w ? lw : w;
    }
    for (size_t i = 0; i < e->n_items; i++) {
        const char *label = e->cells[2 * i], *value = e->cells[2 * i + 1];
        if (e->flags & EMIT_BARE) {
            fprintf(e->out, "%s  %s\n", value, label);
            continue;
        }
        fprintf(e->out, "%s%s:", indent, label);
        pad(e->out, w - display_width(label) + 1);
        fprintf(e->out, "%s\n", value);
    }
}

static char *header_title(const emit_column *col)
{
    char *t = strdup(col->title ? col->title : col->key);
    if (t && !col->title)
        for (char *p = t; *p; p++)
            *p = (char)toupper((unsigned char)*p);
    return t;
}

/* Prints one line of cells, padded to the column widths, without trailing
 * blanks. */
static void print_line(emit *e, char *const *cells, const size_t *w, const char *indent)
{
    size_t last = e->n_cols;
    while (last > 0 && !cells[last - 1][0])
        last--;
    fputs(indent, e->out);
    for (size_t c = 0; c < last; c++) {
        size_t cw = display_width(cells[c]);
        bool right = (e->cols[c].flags & EMIT_COL_RIGHT) != 0;
        if (c)
            fputs("  ", e->out);
        if (right)
            pad(e->out, w[c] - cw);
        fputs(cells[c], e->out);
        if (!right && c + 1 < last)
            pad(e->out, w[c] - cw);
    }
    fputc('\n', e->out);
}

static const char *indent_of(const emit *e) { return e->title ? "  " : ""; }

/* What comes before a table's first row: the blank line, the title, and
 * (unless bare) the header line. */
static void table_heading(emit *e, const size_t *w)
{
    separate(e);
    if (e->title)
        fprintf(e->out, "%s\n", e->title);
    if (e->flags & EMIT_BARE)
        return;
    char **head = calloc(e->n_cols, sizeof *head);
    bool ok = head != NULL;
    for (size_t c = 0; ok && c < e->n_cols; c++)
        ok = (head[c] = header_title(&e->cols[c])) != NULL;
    if (ok)
        print_line(e, head, w, indent_of(e));
    else
        e->failed = true;
    if (head)
        for (size_t c = 0; c < e->n_cols; c++)
            free(head[c]);
    free(head);
}

/* A table with no rows: "TITLE: none", or nothing when untitled. */
static void table_none(emit *e)
{
    separate(e);
    if (e->title)
        fprintf(e->out, "%s: none\n", e->title);
}

/* Starting widths: the header's, or 0 for a bare table. */
static void header_widths(const emit *e, size_t *w)
{
    for (size_t c = 0; c < e->n_cols; c++)
        w[c] = e->flags & EMIT_BARE ? 0
             : display_width(e->cols[c].title ? e->cols[c].title : e->cols[c].key);
}

/* ------------------------------------------------------------------------
 * Buffered tables (emit_row): every cell kept until the end
 * ------------------------------------------------------------------------ */

static void buffer_row(emit *e, const emit_value *cells)
{
    for (size_t c = 0; c < e->n_cols; c++)
        emit_keep_cell(e, render(&cells[c], (e->cols[c].flags & EMIT_COL_QUOTE) != 0));
}

static void print_buffered(emit *e)
{
    size_t n_cols = e->n_cols;
    if (n_cols == 0 || e->n_cells < e->n_items * n_cols)
        return;
    if (e->n_items == 0) {
        table_none(e);
        return;
    }
    size_t *w = calloc(n_cols, sizeof *w);
    if (!w) {
        e->failed = true;
        return;
    }
    header_widths(e, w);
    for (size_t i = 0; i < e->n_items * n_cols; i++) {
        size_t cw = display_width(e->cells[i]);
        w[i % n_cols] = cw > w[i % n_cols] ? cw : w[i % n_cols];
    }
    table_heading(e, w);
    for (size_t r = 0; r < e->n_items; r++)
        print_line(e, e->cells + r * n_cols, w, indent_of(e));
    free(w);
}

/* ------------------------------------------------------------------------
 * Streamed tables (emit_table_rows): the first pass over the rows only
 * measures, the second prints each row as it comes; nothing is kept but
 * the widths and one row's rendering
 * ------------------------------------------------------------------------ */

struct text_stream {
    size_t *w;    /* column widths */
    sbuf   *cell; /* one rendering buffer per column */
    char  **ptr;  /* the rendered cells of the current row */
};

static void stream_free(emit *e)
{
    struct text_stream *ts = e->stream;
    if (!ts)
        return;
    for (size_t c = 0; ts->cell && c < e->n_cols; c++)
        sbuf_free(&ts->cell[c]);
    free(ts->cell);
    free(ts->w);
    free(ts->ptr);
    free(ts);
    e->stream = NULL;
}

static struct text_stream *stream_start(emit *e)
{
    struct text_stream *ts = calloc(1, sizeof *ts);
    size_t n = e->n_cols ? e->n_cols : 1;
    e->stream = ts;
    if (!ts || !(ts->w = calloc(n, sizeof *ts->w)) || !(ts->cell = calloc(n, sizeof *ts->cell)) ||
        !(ts->ptr = calloc(n, sizeof *ts->ptr))) {
        stream_free(e);
        e->failed = true;
        return NULL;
    }
    header_widths(e, ts->w);
    return ts;
}

/* Renders a row into the stream's buffers (ts->ptr[c] points to cell c);
 * false on out of memory. */
static bool render_row(emit *e, struct text_stream *ts, const emit_value *cells)
{
    for (size_t c = 0; c < e->n_cols; c++) {
        sbuf *b = &ts->cell[c];
        b->len = 0;
        if (b->ptr)
            b->ptr[0] = '\0';
        display_value(b, &cells[c], (e->cols[c].flags & EMIT_COL_QUOTE) != 0);
        if (b->failed) {
            e->failed = true;
            return false;
        }
        ts->ptr[c] = b->ptr ? b->ptr : "";
    }
    return true;
}

static void text_measure(emit *e, const emit_value *cells)
{
    struct text_stream *ts = e->stream ? e->stream : stream_start(e);
    if (!ts || !render_row(e, ts, cells))
        return;
    for (size_t c = 0; c < e->n_cols; c++) {
        size_t cw = display_width(ts->ptr[c]);
        ts->w[c] = cw > ts->w[c] ? cw : ts->w[c];
    }
}

static void print_streamed(emit *e, const emit_value *cells)
{
    struct text_stream *ts = e->stream;
    if (e->n_items == 0)
        table_heading(e, ts->w);
    if (render_row(e, ts, cells))
        print_line(e, ts->ptr, ts->w, indent_of(e));
}

/* ------------------------------------------------------------------------
 * Either kind
 * ------------------------------------------------------------------------ */

static void text_row(emit *e, const emit_value *cells)
{
    if (e->stream)
        print_streamed(e, cells);
    else
        buffer_row(e, cells);
}

static void text_table_end(emit *e)
{
    if (!e->stream) {
        print_buffered(e);
        return;
    }
    if (e->n_items == 0 && e->n_cols > 0)
        table_none(e);
    stream_free(e);
}

const emit_ops emit_text_ops = {
    text_begin, text_end, text_map_begin, text_field, text_map_end,
    text_table_begin, text_row, text_table_end, text_measure,
};
