/*
 * vocab.c — `gguf-inspect --vocab` and `--merges` (see vocab.h).
 */
#include "vocab.h"

#include "kv_value.h"
#include "names.h"

/* llama.cpp's llama_token_type, by value (names.h, enum gguf_token_type). */
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
    const gguf_kv *kv = gguf_find_kv(f, key);
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

int vocab_write(emit *e, const gguf_file *f, gguf_error *err)
{
    static const emit_column cols[] = {
        { "id", NULL, EMIT_COL_RIGHT },
        { "type", NULL, 0 },
        { "score", NULL, EMIT_COL_RIGHT },
        { "text", NULL, EMIT_COL_QUOTE },
    };
    const gguf_kv *tokens = array_kv(f, GGUF_KEY_TOK_TOKENS, true);
    const gguf_kv *types = array_kv(f, GGUF_KEY_TOK_TYPES, false);
    const gguf_kv *scores = array_kv(f, GGUF_KEY_TOK_SCORES, false);
    if (!tokens)
        return gguf_error_set(err, "no " GGUF_KEY_TOK_TOKENS " string array");
    emit_table_begin(e, "tokens", NULL, cols, 4, 0);
    for (uint64_t i = 0; i < tokens->n; i++) {
        emit_value row[] = {
            ev_uint(i), token_type(types, i),
            scores && i < scores->n ? kv_elem_value(scores, i) : ev_absent(),
            kv_elem_value(tokens, i),
        };
        emit_row(e, row);
    }
    emit_table_end(e);
    return 0;
}

int merges_write(emit *e, const gguf_file *f, gguf_error *err)
{
    static const emit_column cols[] = {
        { "rank", NULL, EMIT_COL_RIGHT },
        { "merge", NULL, EMIT_COL_QUOTE },
    };
    const gguf_kv *merges = array_kv(f, GGUF_KEY_TOK_MERGES, true);
    if (!merges)
        return gguf_error_set(err, "no " GGUF_KEY_TOK_MERGES " string array "
                              "(SentencePiece vocabularies have none)");
    emit_table_begin(e, "merges", NULL, cols, 2, 0);
    for (uint64_t i = 0; i < merges->n; i++) {
        emit_value row[] = { ev_uint(i), kv_elem_value(merges, i) };
        emit_row(e, row);
    }
    emit_table_end(e);
    return 0;
}
