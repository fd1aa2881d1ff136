/*
 * <ggufkit/vocab.h> — a model's vocabulary and tokenizer.
 */
#ifndef GGUFKIT_VOCAB_H
#define GGUFKIT_VOCAB_H

#include "gguf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * a model's vocabulary (tokenizer.ggml.*): text to token ids
 * and token ids to text, exactly as llama.cpp (c392e50) does it.
 *
 * Three tokenizer models are supported:
 *   "llama"  SentencePiece (SPM): spaces become U+2581, a leading space is
 *            added (tokenizer.ggml.add_space_prefix, default true), adjacent
 *            symbols merge greedily by token score, and text no token covers
 *            falls back to <0xNN> byte tokens.
 *   "gpt2"   byte-level BPE: the text is split into words by the
 *            pre-tokenizer regexes that tokenizer.ggml.pre names, each word's
 *            bytes are spelled in GPT-2's byte alphabet and merged by the rank
 *            of tokenizer.ggml.merges.
 *   "gemma4" SentencePiece-style BPE (Gemma 4; gguf_vocab_type says BPE,
 *            gguf_vocab_pre "gemma4"): spaces become U+2581, the text is
 *            split only at newline runs, merged by rank as raw UTF-8, with
 *            <0xNN> byte fallback; BOS is always added.
 * "bert", "t5", "rwkv" and "no_vocab" vocabularies are refused by name.
 *
 * gguf_vocab_load() validates the whole vocabulary (see docs/libgguf.md):
 * after it succeeds, encoding and decoding cannot fail on any input except
 * for lack of memory. The vocabulary is a copy: the file may be closed.
 * A loaded vocabulary is read-only and may be used from several threads.
 *
 * Not for: chat templates, detokenizing whole sequences with
 * clean-up rules (callers concatenate pieces), WordPiece/Unigram/RWKV.
 */
typedef struct gguf_vocab gguf_vocab;

/* Which tokenizer a vocabulary uses. */
enum gguf_vocab_type { GGUF_VOCAB_SPM = 1, GGUF_VOCAB_BPE = 2 };

/* Reads and validates tokenizer.ggml.* of f. NULL with err on a bad vocabulary. */
GGUF_API gguf_vocab *gguf_vocab_load(const gguf_file *f, gguf_error *err);

/* Frees v; NULL is fine. */
GGUF_API void gguf_vocab_free(gguf_vocab *v);

/* The number of tokens (ids are 0 .. n-1). */
GGUF_API int32_t gguf_vocab_n_tokens(const gguf_vocab *v);

/* GGUF_VOCAB_SPM or GGUF_VOCAB_BPE. */
GGUF_API enum gguf_vocab_type gguf_vocab_type(const gguf_vocab *v);

/* The pre-tokenizer name (tokenizer.ggml.pre; "default" when absent). */
GGUF_API const char *gguf_vocab_pre(const gguf_vocab *v);

/* The beginning-of-sequence token, -1 when none. */
GGUF_API int32_t gguf_vocab_bos(const gguf_vocab *v);

/* The end-of-sequence token, -1 when none. */
GGUF_API int32_t gguf_vocab_eos(const gguf_vocab *v);

/* Whether encoding with add_special adds BOS / EOS (the file's
 * add_bos_token / add_eos_token, else llama.cpp's default for the model). */
GGUF_API bool gguf_vocab_adds_bos(const gguf_vocab *v);
GGUF_API bool gguf_vocab_adds_eos(const gguf_vocab *v);

/* True when id ends generation: eos, eot, eom, fim pad/rep/sep and the
 * tokens llama.cpp recognises by text (<|eot_id|>, <|im_end|>, <|end|>,
 * <end_of_turn>, <|endoftext|>, <|eom_id|>, <EOT>). */
GGUF_API bool gguf_vocab_is_eog(const gguf_vocab *v, int32_t id);

/* True for control and unknown tokens: their piece is "" unless special. */
GGUF_API bool gguf_vocab_is_control(const gguf_vocab *v, int32_t id);

/* Tokenizes text[0..len). add_special: BOS/EOS as tokenizer.ggml.add_bos_token/add_eos_token say
 * (llama.cpp defaults per model type when absent). parse_special: control/user-defined token texts
 * in the input become those tokens. *ids is malloc'd. 0, or -1 with err. */
GGUF_API int gguf_vocab_encode(const gguf_vocab *v, const char *text, size_t len, bool add_special,
                      bool parse_special, int32_t **ids, size_t *n_ids, gguf_error *err);

/* The text of token id as llama_token_to_piece gives it (SPM: ▁ → space, <0xNN> → byte; BPE:
 * byte-level unicode → bytes; control tokens → "" unless special). Returns the length written
 * (may exceed size: then call again with a bigger buffer), -1 for an invalid id. The bytes
 * written are the first min(size, length) of the piece. */
GGUF_API int gguf_vocab_piece(const gguf_vocab *v, int32_t id, bool special, char *buf, size_t size);

/* The raw token text as stored (not NUL-terminated); NULL for an invalid id. */
GGUF_API const char *gguf_vocab_text(const gguf_vocab *v, int32_t id, size_t *len);

/* The id of the token whose raw text is s[0..len), -1 when none. */
GGUF_API int32_t gguf_vocab_find(const gguf_vocab *v, const char *s, size_t len);

#ifdef __cplusplus
}
#endif

#endif
