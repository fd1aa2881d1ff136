/*
 * emit.h — a small structured emitter: every gguf-inspect report is written
 * once, as calls on an emitter, and comes out as text, JSON, YAML or
 * Markdown.
 *
 * A document is a sequence of sections, each of them one of:
 *
 *   map    named fields with one value each    (JSON object; text "label: value")
 *   table  rows of values under fixed columns  (JSON array of objects, or an
 *                                               object keyed by the first column;
 *                                               text: aligned columns)
 *
 * Values are scalars (null, bool, integers, floats, byte strings) or flat
 * lists of scalars that may be abbreviated ("the first 8 of 4096"). Strings
 * are bytes, not necessarily UTF-8: each backend escapes them so that its
 * output stays valid (JSON and YAML) and readable (text and Markdown). See
 * docs/gguf-inspect.md for the exact rendering of each kind in each format.
 *
 * Text buffers a table until its end (column widths); Markdown, JSON and
 * YAML stream. A table too long to hold (a vocabulary of millions of
 * tokens) is written with emit_table_rows() instead, which text reads twice
 * (measure, then print) and so holds nothing either. Write errors and
 * out-of-memory are remembered and reported by emit_close(), so report code
 * does not check every call.
 *
 * Not for: anything that is not a gguf-inspect report (no nesting beyond
 * document → section → field/row → list).
 */
#ifndef INSPECT_EMIT_H
#define INSPECT_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum emit_format { EMIT_TEXT, EMIT_JSON, EMIT_YAML, EMIT_MARKDOWN } emit_format;

typedef enum emit_kind {
    EV_ABSENT, /* no value: the field or cell is left out (JSON/YAML) or blank */
    EV_NULL,   /* an explicit "none" */
    EV_BOOL, EV_INT, EV_UINT, EV_FLOAT, EV_STR,
    EV_LIST    /* flat list of scalars, possibly the head of a longer one */
} emit_kind;

/* Text and Markdown add a human-readable form to numbers with a unit:
 * "1185376 (1.13 MiB)", "292160 (292.16 K)". JSON and YAML do not. */
typedef enum emit_unit { EU_NONE, EU_BYTES, EU_COUNT } emit_unit;

typedef struct emit_value {
    uint8_t kind;   /* emit_kind */
    uint8_t unit;   /* emit_unit */
    bool    is_f32; /* EV_FLOAT: print the shortest form that round-trips as a float */
    union {
        bool     b;
        int64_t  i;
        uint64_t u;
        double   f;
        struct { const char *ptr; size_t len; } s;
        /* items[0..n) are elements first..first+n of a list of total */
        struct { const struct emit_value *items; size_t n; uint64_t first, total; } list;
    } as;
} emit_value;

static inline emit_value ev_absent(void) { emit_value v = { .kind = EV_ABSENT }; return v; }
static inline emit_value ev_null(void) { emit_value v = { .kind = EV_NULL }; return v; }
static inline emit_value ev_bool(bool b) { emit_value v = { .kind = EV_BOOL, .as.b = b }; return v; }
static inline emit_value ev_int(int64_t i) { emit_value v = { .kind = EV_INT, .as.i = i }; return v; }
static inline emit_value ev_uint(uint64_t u) { emit_value v = { .kind = EV_UINT, .as.u = u }; return v; }
static inline emit_value ev_f64(double f) { emit_value v = { .kind = EV_FLOAT, .as.f = f }; return v; }
static inline emit_value ev_f32(float f)
{
    emit_value v = { .kind = EV_FLOAT, .is_f32 = true, .as.f = f };
    return v;
}
static inline emit_value ev_strn(const char *p, size_t n)
{
    emit_value v = { .kind = EV_STR, .as.s = { p, n } };
    return v;
}
emit_value ev_str(const char *s); /* NULL gives EV_NULL */
static inline emit_value ev_list(const emit_value *items, size_t n, uint64_t total)
{
    emit_value v = { .kind = EV_LIST, .as.list = { items, n, 0, total } };
    return v;
}
static inline emit_value ev_unit(emit_value v, emit_unit u) { v.unit = (uint8_t)u; return v; }

/* Column flags. */
enum {
    EMIT_COL_RIGHT = 1, /* text: right-align (numbers) */
    EMIT_COL_QUOTE = 2  /* text/Markdown: strings in double quotes, so spaces show */
};

typedef struct emit_column {
    const char *key;   /* JSON/YAML field name: [a-z0-9_]+ */
    const char *title; /* text/Markdown header; NULL: upper-cased key */
    unsigned    flags;
} emit_column;

/* Section flags. */
enum {
    EMIT_KEYED = 1, /* table: JSON/YAML object keyed by the first column's string */
    EMIT_BARE  = 2  /* text only: table without header or indent, two spaces between
                       columns; map as "VALUE  LABEL" lines (sha256sum's layout) */
};

typedef struct emit emit;

/* A new emitter writing fmt to out; title heads the document in Markdown.
 * NULL on out of memory. */
emit *emit_open(FILE *out, emit_format fmt, const char *title);

/* Ends the document, flushes and frees. A document without any section
 * writes nothing at all (so a report that fails before its first section
 * leaves stdout empty). Returns 0, or -1 when anything could not be written
 * (out of memory, write error). */
int emit_close(emit *e);


/* A map section. key names it in JSON/YAML (NULL: its fields go straight into
 * the top-level object); title heads it in text/Markdown (NULL: no heading). */
void emit_map_begin(emit *e, const char *key, const char *title, unsigned flags);
/* One field; label is what text/Markdown show (NULL: the key). Absent values
 * are skipped. */
void emit_field(emit *e, const char *key, const char *label, emit_value v);
void emit_map_end(emit *e);

/* A table section; cols must stay valid until emit_table_end(). */
void emit_table_begin(emit *e, const char *key, const char *title,
                      const emit_column *cols, size_t n_cols, unsigned flags);
/* One row: exactly n_cols values. Strings are copied when buffered. */
void emit_row(emit *e, const emit_value *cells);
void emit_table_end(emit *e);

/* Fills cells[0..n_cols) with row i of a table written by emit_table_rows;
 * what the values point to must stay valid until the next call. Returns 0,
 * or non-zero to stop. */
typedef int emit_row_fn(void *ctx, uint64_t i, emit_value *cells);

/* A whole table of n_rows rows asked from row() one at a time, in order, so
 * that memory does not grow with the table: text asks for every row twice
 * (the first pass measures the columns), the other formats once; the output
 * is the same as from emit_table_begin/emit_row/emit_table_end. Returns 0,
 * the first non-zero value of row() (the table then ends early), or -1 on
 * out of memory. */
int emit_table_rows(emit *e, const char *key, const char *title,
                    const emit_column *cols, size_t n_cols, unsigned flags,
                    uint64_t n_rows, emit_row_fn *row, void *ctx);

#endif
