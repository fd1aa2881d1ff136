/*
 * vocab.h — `gguf-inspect --vocab` and `--merges`: the tokenizer arrays of
 * the metadata as tables.
 *
 * --vocab lists tokenizer.ggml.tokens with the matching entries of
 * tokenizer.ggml.token_type and tokenizer.ggml.scores (either may be
 * missing); --merges lists tokenizer.ggml.merges. Token texts are bytes: the
 * emitter escapes whatever is not printable UTF-8. Not for: tokenizing
 * (libgguf's vocabulary).
 */
#ifndef INSPECT_VOCAB_H
#define INSPECT_VOCAB_H

#include "emit.h"
#include <ggufkit/gguf.h>

/* Returns 0, or -1 with err set when the file has no token list. */
int vocab_table_write(emit *e, const gguf_file *f, gguf_error *err);

/* Returns 0, or -1 with err set when the file has no merges. */
int merges_table_write(emit *e, const gguf_file *f, gguf_error *err);

#endif
