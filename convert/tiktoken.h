/*
 * tiktoken.h — Kimi K2's vocabulary from tiktoken.model (one "BASE64 RANK"
 * line per token) and tokenizer_config.json's added_tokens_decoder, as
 * llama.cpp e21cdc11's DeepseekV2Model.set_vocab builds it for "kimi-k2".
 */
#ifndef CONVERT_TIKTOKEN_H
#define CONVERT_TIKTOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "vocab.h"

/* The parsed ranks: token i is bytes[off[i] .. off[i] + len[i]) with rank
 * rank[i], in file order. */
typedef struct tiktoken_ranks {
    uint8_t *bytes;
    size_t  *off, *len;
    int64_t *rank;
    size_t   n;
} tiktoken_ranks;

/* Parses a tiktoken.model held in memory (name: for messages). Each
 * non-empty line is a base64 token (of at most 1024 bytes) and a rank;
 * repeated tokens or ranks are left to the vocabulary's builder. 0, or -1
 * with err naming the line. */
int tiktoken_parse(tiktoken_ranks *t, const char *name, const char *data, size_t len,
                   gguf_error *err);
void tiktoken_free(tiktoken_ranks *t);

/* The vocabulary of n_vocab entries (config.json's vocab_size): every rank's
 * token in GPT-2's byte alphabet, the merges QwenModel.bpe rebuilds (the two
 * parts of each multi-byte token, merged below its own rank), Kimi's
 * special tokens from the first id past the ranks on (tokenizer_config's
 * added_tokens_decoder names, else "<|reserved_token_i|>"; control), the
 * rest "[PADi]" (unused); pre "kimi-k2". 0, or -1 with err. */
int vocab_from_tiktoken_ranks(vocab *v, const tiktoken_ranks *t, const json_value *tok_config,
                              int64_t n_vocab, gguf_error *err);

/* The same from the file at path. */
int vocab_from_tiktoken(vocab *v, const char *path, const json_value *tok_config, int64_t n_vocab,
                        gguf_error *err);

#endif
