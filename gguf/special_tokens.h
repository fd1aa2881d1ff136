/*
 * special_tokens.h — the special-token keys of tokenizer.ggml.* (private to
 * ggufkit): one table, read by the tokenizer (tokenizer.c), checked by the
 * model rules (modelcheck.c) and written by gguf-convert, in llama.cpp's
 * order (llama_vocab::load).
 */
#ifndef GGUF_SPECIAL_TOKENS_H
#define GGUF_SPECIAL_TOKENS_H

enum gguf_special {
    GGUF_SPECIAL_BOS, GGUF_SPECIAL_EOS, GGUF_SPECIAL_EOT, GGUF_SPECIAL_EOM, GGUF_SPECIAL_UNK,
    GGUF_SPECIAL_SEP, GGUF_SPECIAL_PAD, GGUF_SPECIAL_MASK, GGUF_SPECIAL_CLS,
    GGUF_SPECIAL_FIM_PRE, GGUF_SPECIAL_FIM_SUF, GGUF_SPECIAL_FIM_MID, GGUF_SPECIAL_FIM_PAD,
    GGUF_SPECIAL_FIM_REP, GGUF_SPECIAL_FIM_SEP,
    GGUF_SPECIAL_PREFIX, GGUF_SPECIAL_SUFFIX, GGUF_SPECIAL_MIDDLE, /* older names of fim_pre/suf/mid */
    GGUF_SPECIAL_COUNT
};

/* The key of each (GGUF_SPECIAL_BOS: "tokenizer.ggml.bos_token_id"). */
extern const char *const gguf_special_keys[GGUF_SPECIAL_COUNT];

#endif
