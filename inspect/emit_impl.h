/*
 * emit_impl.h — what the emitter's backends share (emit.c, emit_text.c,
 * emit_markdown.c, emit_tree.c). Private to the emitter: reports use emit.h.
 *
 * emit.c keeps the section state and checks that calls come in a sensible
 * order; each backend only turns "a section starts", "a field", "a row",
 * "a section ends" into its syntax. The helpers here are the pieces more than
 * one backend needs: a growable byte buffer, a strict UTF-8 decoder, number
 * formatting, and the human-readable rendering of a value used by text and
 * Markdown.
 */
#ifndef INSPECT_EMIT_IMPL_H
#define INSPECT_EMIT_IMPL_H

#include "emit.h"

/* A growable, NUL-terminated byte buffer. On out of memory it sets failed
 * and drops further appends, so callers check once at the end. */
typedef struct sbuf {
    char  *ptr;
    size_t len, cap;
    bool   failed;
} sbuf;

void sbuf_putn(sbuf *b, const char *s, size_t n);
void sbuf_puts(sbuf *b, const char *s);
void sbuf_putc(sbuf *b, char c);
void sbuf_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the buffer's string over (caller frees) and resets it. NULL on failure. */
char *sbuf_take(sbuf *b);
void sbuf_free(sbuf *b);

/* Decodes one UTF-8 code point from p[0..n) (n >= 1) into *cp and returns its
 * length, or returns 0 when p[0] does not start a valid, shortest-form
 * sequence of a scalar value (no surrogates, <= U+10FFFF). */
size_t utf8_decode(const unsigned char *p, size_t n, uint32_t *cp);

/* The fewest significant digits of v that read back to the same double (or
 * float, when is_f32): in fixed notation for decimal exponents -5..15
 * ("10000.0", "0.00001", "-260.0"), else with an exponent ("1.0e-07"); always
 * with a '.', so that YAML 1.1 parsers see a float too. Non-finite values
 * give "nan", "inf", "-inf" (backends spell those themselves). */
void format_float(char out[40], double v, bool is_f32);

/* Decimal digits of v ('-' first when negative), NUL-terminated; returns
 * the length. printf's result, at a fraction of its cost in long tables. */
size_t format_uint(char out[24], uint64_t v);
size_t format_int(char out[24], int64_t v);

/* The human-readable form used by text and Markdown: strings escaped (and
 * quoted when quote is set or inside lists), lists as "[a, b, ... (N total)]",
 * null as "-", absent as "", units as "1185376 (1.13 MiB)". */
void display_value(sbuf *b, const emit_value *v, bool quote);

typedef struct emit_ops {
    void (*begin)(emit *e, const char *title);
    void (*end)(emit *e);
    void (*map_begin)(emit *e);
    void (*field)(emit *e, const char *key, const char *label, const emit_value *v);
    void (*map_end)(emit *e);
    void (*table_begin)(emit *e);
    void (*row)(emit *e, const emit_value *cells);
    void (*table_end)(emit *e);
    /* emit_table_rows' first pass over a table's rows, for backends that
     * must see every row before printing one (text); NULL for the others */
    void (*measure)(emit *e, const emit_value *cells);
} emit_ops;

enum { SEC_NONE, SEC_MAP, SEC_TABLE };

struct emit {
    FILE           *out;
    emit_format     fmt;
    const emit_ops *ops;
    bool            failed;
    bool            begun;     /* the document starts with the first section */
    char           *doc_title;

    /* The open section (SEC_NONE between sections). */
    int                sec;
    const char        *key, *title;
    unsigned           flags;
    const emit_column *cols;
    size_t             n_cols;
    size_t             n_items;    /* fields or rows so far in this section */

    size_t             n_top;      /* JSON/YAML: members written into the top object */
    size_t             n_sections; /* text/Markdown: sections printed so far */
    bool               prev_titled;

    /* Text: the section's cells (label/value pairs of a map, or rows × cols). */
    char             **cells;
    size_t             n_cells, cap_cells;
    /* Text: the widths and scratch buffers of a table that emit_table_rows
     * measured, whose rows are then printed as they come (emit_text.c) */
    struct text_stream *stream;
};

/* Text: keep one rendered cell until the section ends. */
void emit_keep_cell(emit *e, char *cell);

extern const emit_ops emit_text_ops, emit_markdown_ops, emit_json_ops, emit_yaml_ops;

#endif
