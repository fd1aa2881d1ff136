/*
 * vocab.h — the GGUF vocabulary a converter writes (tokens, scores, token
 * types), built from a SentencePiece model the way llama.cpp's converters
 * build it.
 */
#ifndef CONVERT_VOCAB_H
#define CONVERT_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggufkit/gguf.h>

typedef struct vocab {
    char   **tokens;  /* byte strings, NUL-terminated for convenience */
    size_t  *lens;
    float   *scores;  /* NULL: none written (byte-level BPE) */
    int32_t *types;   /* enum gguf_token_type */
    int64_t  n;
    /* byte-level BPE: tokenizer.ggml.model "gpt2" and the merges ("a b");
     * otherwise SentencePiece, model "llama" */
    bool        bpe;
    const char *pre;  /* tokenizer.ggml.pre (static); NULL: "default" */
    const char *model; /* tokenizer.ggml.model (static) when neither "gpt2" nor "llama" */
    bool        no_pre; /* no tokenizer.ggml.pre is written (gemma4) */
    char      **merges;
    size_t     *merge_lens;
    int64_t     n_merges;
    /* the SentencePiece trainer's special ids (-1: none) */
    int64_t  unk_id, bos_id, eos_id, pad_id;
} vocab;

/* tokenizer.model → n entries (n < 0: one per piece). Ids past the model's
 * pieces are "[PADi]", score -10000, unused; a user-defined piece is
 * written as normal (llama.cpp asks only IsUnknown/IsControl/IsUnused/
 * IsByte). 0, or -1 with err. */
int vocab_from_spm(vocab *v, const char *path, int64_t n, gguf_error *err);

/* Replaces entry id's text (copied). 0, or -1 when out of memory. */
int vocab_set(vocab *v, int64_t id, const char *text, size_t len);

/* tokenizer.ggml.model ("llama" or "gpt2"), pre, tokens, scores (when
 * present), token_type, merges (when present). */
int vocab_write(const vocab *v, gguf_writer *w, gguf_error *err);

void vocab_free(vocab *v);

#endif
