/*
 * vocab.c — `gguf-inspect --vocab` and `--merges` (see vocab.h).
 */
#include "vocab.h"

#include "kv_value.h"
#include <ggufkit/arch.h>
#include "stream.h"

/* llama.cpp's llama_token_type, by value (<ggufkit/arch.h>, enum gguf_token_type). */
static const char *const token_type_names[] = {
    [GGUF_TOKEN_UNDEFINED] = "undefined", [GGUF_TOKEN_NORMAL] = "normal",
    [GGUF_TOKEN_UNKNOWN] = "unknown",     [GGUF_TOKEN_CONTROL] = "control",
    [GGUF_TOKEN_USER_DEFINED] = "user_defined", [GGUF_TOKEN_UNUSED] = "unused",
    [GGUF_TOKEN_BYTE] = "byte",
};

/* The kv of key when it is an array of `want` elements (for numbers: of any
 * numeric type), else NULL. */
static const gguf_kv *array_kv(const gguf_file *f, const char *key, bool want_str)
{
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    if (!kv || kv->type != GGUF_VT_ARR)
        return NULL;
    return (kv->elem_type == GGUF_VT_STR) == want_str ? kv : NULL;
}

static emit_value token_type(const gguf_kv *types, uint64_t i)
{
    if (!types || i >= types->n || types->elem_type == GGUF_VT_F32 ||
        types->elem_type == GGUF_VT_F64)
        return ev_absent();
    int64_t t = gguf_kv_elem_as_int(types, i);
    if (t >= 0 && t < (int64_t)(sizeof token_type_names / sizeof token_type_names[0]))
        return ev_str(token_type_names[t]);
    return ev_int(t);
}

/* ------------------------------------------------------------------------
 * Streaming: the rows are asked for one at a time (emit_table_rows), and
 * the arrays' pages are released as the rows go by (stream.h), so that
 * memory does not grow with the vocabulary (text output used to keep every
 * cell: 3.8 GB for 10M tokens)
 * ------------------------------------------------------------------------ */

typedef struct rows {
    const gguf_file *f;
    const gguf_kv   *arr[3]; /* the arrays read: text (tokens or merges), types, scores */
} rows;

/* Before row i: at row 0 all of every array (gguf_open's validation read
 * them), then every STREAM_ELEMS rows the ones just shown. */
static void release_rows(const rows *r, uint64_t i)
{
    if (i % STREAM_ELEMS != 0)
        return;
    for (int k = 0; k < 3; k++)
        if (r->arr[k])
            stream_release_elems(r->f, r->arr[k], i ? i - STREAM_ELEMS : 0,
                                 i ? i : r->arr[k]->n);
}

static int vocab_row(void *ctx, uint64_t i, emit_value *cells)
{
    const rows *r = ctx;
    const gguf_kv *tokens = r->arr[0], *types = r->arr[1], *scores = r->arr[2];
    release_rows(r, i);
    cells[0] = ev_uint(i);
    cells[1] = token_type(types, i);
    cells[2] = scores && i < scores->n ? kv_elem_value(scores, i) : ev_absent();
    cells[3] = kv_elem_value(tokens, i);
    return 0;
}

static int merge_row(void *ctx, uint64_t i, emit_value *cells)
{
    const rows *r = ctx;
    release_rows(r, i);
    cells[0] = ev_uint(i);
    cells[1] = kv_elem_value(r->arr[0], i);
    return 0;
}

int vocab_table_write(emit *e, const gguf_file *f, gguf_error *err)
{
    static const emit_column cols[] = {
        { "id", NULL, EMIT_COL_RIGHT },
        { "type", NULL, 0 },
        { "score", NULL, EMIT_COL_RIGHT },
        { "text", NULL, EMIT_COL_QUOTE },
    };
    rows r = { f, { array_kv(f, GGUF_KEY_TOK_TOKENS, true), array_kv(f, GGUF_KEY_TOK_TYPES, false),
                    array_kv(f, GGUF_KEY_TOK_SCORES, false) } };
    if (!r.arr[0])
        return gguf_error_set(err, "no " GGUF_KEY_TOK_TOKENS " string array");
    return emit_table_rows(e, "tokens", NULL, cols, 4, 0, r.arr[0]->n, vocab_row, &r);
}

int merges_table_write(emit *e, const gguf_file *f, gguf_error *err)
{
    static const emit_column cols[] = {
        { "rank", NULL, EMIT_COL_RIGHT },
        { "merge", NULL, EMIT_COL_QUOTE },
    };
    rows r = { f, { array_kv(f, GGUF_KEY_TOK_MERGES, true), NULL, NULL } };
    if (!r.arr[0])
        return gguf_error_set(err, "no " GGUF_KEY_TOK_MERGES " string array "
                              "(SentencePiece vocabularies have none)");
    return emit_table_rows(e, "merges", NULL, cols, 2, 0, r.arr[0]->n, merge_row, &r);
}
