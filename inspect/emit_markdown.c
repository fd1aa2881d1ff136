/*
 * emit_markdown.c — the emitter's Markdown backend (GitHub-flavoured):
 * the document title as "# ", each titled section as "## ", maps as bullet
 * lists, tables as pipe tables.
 *
 * Strings and lists go into code spans, so token texts such as "<s>" or
 * "*" are shown literally instead of being read as HTML or emphasis; '|' is
 * escaped as "\|", which GFM honours even inside code spans in a table.
 * Not for: text escaping itself (display_value in emit.c).
 */
#include "emit_impl.h"

#include <stdlib.h>
#include <string.h>

/* Longest run of backticks in s: the code span fence must be longer. */
static size_t longest_backtick_run(const char *s)
{
    size_t best = 0, run = 0;
    for (; *s; s++) {
        run = *s == '`' ? run + 1 : 0;
        best = run > best ? run : best;
    }
    return best;
}

static void put_escaped_pipes(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', out);
        fputc(*s, out);
    }
}

static void put_code_span(FILE *out, const char *s)
{
    size_t len = strlen(s), fence = longest_backtick_run(s) + 1;
    bool all_spaces = strspn(s, " ") == len;
    /* CommonMark strips one space from each end when both ends are spaces;
     * pad so that what is shown is exactly s. */
    bool padded = s[0] == '`' || (len && s[len - 1] == '`') ||
                  (!all_spaces && s[0] == ' ' && s[len - 1] == ' ');
    for (size_t i = 0; i < fence; i++)
        fputc('`', out);
    if (padded)
        fputc(' ', out);
    put_escaped_pipes(out, s);
    if (padded)
        fputc(' ', out);
    for (size_t i = 0; i < fence; i++)
        fputc('`', out);
}

static void put_value(emit *e, const emit_value *v, bool quote)
{
    sbuf b = { 0 };
    display_value(&b, v, quote);
    char *s = sbuf_take(&b);
    if (!s) {
        e->failed = true;
        return;
    }
    if ((v->kind == EV_STR || v->kind == EV_LIST) && s[0])
        put_code_span(e->out, s);
    else
        put_escaped_pipes(e->out, s);
    free(s);
}

static void heading(emit *e)
{
    if (e->title)
        fprintf(e->out, "## %s\n\n", e->title);
}

static void md_begin(emit *e, const char *title)
{
    if (title) { /* a file name: shown literally */
        fputs("# ", e->out);
        put_code_span(e->out, title);
        fputs("\n\n", e->out);
    }
}

static void md_end(emit *e) { (void)e; }
static void md_map_begin(emit *e) { heading(e); }

static void md_field(emit *e, const char *key, const char *label, const emit_value *v)
{
    (void)key;
    fprintf(e->out, "- %s: ", label);
    put_value(e, v, false);
    fputc('\n', e->out);
}

static void md_map_end(emit *e)
{
    if (e->n_items)
        fputc('\n', e->out);
}

static void md_table_begin(emit *e)
{
    heading(e);
}

static void header(emit *e)
{
    fputc('|', e->out);
    for (size_t c = 0; c < e->n_cols; c++)
        fprintf(e->out, " %s |", e->cols[c].title ? e->cols[c].title : e->cols[c].key);
    fputs("\n|", e->out);
    for (size_t c = 0; c < e->n_cols; c++)
        fputs(e->cols[c].flags & EMIT_COL_RIGHT ? " ---: |" : " --- |", e->out);
    fputc('\n', e->out);
}

static void md_row(emit *e, const emit_value *cells)
{
    if (e->n_items == 0)
        header(e);
    fputc('|', e->out);
    for (size_t c = 0; c < e->n_cols; c++) {
        fputc(' ', e->out);
        put_value(e, &cells[c], (e->cols[c].flags & EMIT_COL_QUOTE) != 0);
        fputs(" |", e->out);
    }
    fputc('\n', e->out);
}

static void md_table_end(emit *e)
{
    fputs(e->n_items ? "\n" : "_none_\n\n", e->out);
}

const emit_ops emit_markdown_ops = {
    md_begin, md_end, md_map_begin, md_field, md_map_end,
    md_table_begin, md_row, md_table_end, NULL,
};
