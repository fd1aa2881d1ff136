/*
 * tokjson.h — GGUF vocabularies from a Hugging Face tokenizer.json, built
 * the way llama.cpp's convert_hf_to_gguf.py (c392e50) builds them when a
 * folder has no tokenizer.model.
 *
 * Two kinds of tokenizer.json are read:
 *  - byte-level BPE (Llama 3, Qwen2/3, GPT-2 style): tokenizer.ggml.model
 *    "gpt2", the token strings as stored (byte-level alphabet), token types
 *    from the added tokens, the merges, and tokenizer.ggml.pre named after
 *    the pre-tokenizer (see tokjson_pre);
 *  - SentencePiece-style BPE with byte fallback (Mistral/Llama 2 exported by
 *    transformers): model "llama", every score -1000, <0xNN> pieces as
 *    bytes, special tokens as control (llama.cpp's LlamaHfVocab).
 * Not for: tokenizing (libgguf's tokenizer does that from the GGUF).
 */
#ifndef CONVERT_TOKJSON_H
#define CONVERT_TOKJSON_H

#include <stdint.h>

#include <ggufkit/gguf.h>
#include "json.h"
#include "vocab.h"

enum tokjson_kind {
    TOKJSON_BYTE_LEVEL, /* → _set_vocab_gpt2 */
    TOKJSON_SPM_BPE,    /* → _set_vocab_llama_hf (BPE, byte_fallback, Sequence decoder) */
};

/* Which of the two vocabularies llama.cpp would build from tj. */
enum tokjson_kind tokjson_kind(const json_value *tj);

/* tokenizer.ggml.pre for a byte-level tokenizer.json: the llama.cpp name of
 * its pre-tokenizer ("llama-bpe", "qwen2", "gpt-2", ...), recognised by its
 * regexes and options. NULL with err (listing what is known) otherwise. */
const char *tokjson_pre(const json_value *tj, gguf_error *err);

/* Byte-level BPE vocabulary (get_vocab_base + merges). n_vocab < 0: as many
 * entries as the tokenizer has ids (config.json's vocab_size otherwise; ids
 * without a token become "[PADi]", unused). 0, or -1 with err. */
int vocab_from_bpe_json(vocab *v, const json_value *tj, int64_t n_vocab, gguf_error *err);

/* SentencePiece-style BPE vocabulary (LlamaHfVocab): base pieces then added
 * tokens past them; tok_config names the special tokens. 0, or -1 with err. */
int vocab_from_spm_json(vocab *v, const json_value *tj, const json_value *tok_config,
                        gguf_error *err);

/* Gemma 4's vocabulary (e21cdc11's Gemma4Model.set_vocab): the
 * SentencePiece-style reading above, <|channel> <channel|> <|tool_call>
 * <tool_call|> <|tool_response> <tool_response|> <|"|> made user-defined,
 * tokenizer.json's merges, tokenizer.ggml.model "gemma4" and no
 * tokenizer.ggml.pre. 0, or -1 with err. */
int vocab_from_gemma4_json(vocab *v, const json_value *tj, const json_value *tok_config,
                           gguf_error *err);

/* llama.cpp's does_token_look_special: "<|x|>", "<｜x｜>", "<pad>", ... */
bool tokjson_looks_special(const char *text);

#endif
