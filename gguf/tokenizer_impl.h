/*
 * tokenizer_impl.h — the vocabulary object shared by tokenizer.c (loading,
 * special tokens, pieces), tokenizer_spm.c and tokenizer_bpe.c. Private to
 * libgguf: tools use <ggufkit/vocab.h>.
 */
#ifndef GGUF_TOKENIZER_IMPL_H
#define GGUF_TOKENIZER_IMPL_H

#include <ggufkit/vocab.h>

/* Token attributes, as llama.cpp derives them from tokenizer.ggml.token_type
 * (UNDEFINED is no bit at all). */
enum {
    TOK_UNKNOWN = 1 << 0, TOK_UNUSED = 1 << 1, TOK_NORMAL = 1 << 2, TOK_CONTROL = 1 << 3,
    TOK_USER_DEFINED = 1 << 4, TOK_BYTE = 1 << 5,
    TOK_LSTRIP = 1 << 7, /* whitespace before it in the input is dropped */
    TOK_RSTRIP = 1 << 8  /* whitespace after it in the input is dropped */
};

typedef struct vocab_token {
    uint32_t off, len; /* of its text in gguf_vocab.text */
    float    score;
    uint16_t attr;
} vocab_token;

/* A growing list of ids. */
typedef struct id_list {
    int32_t *ids;
    size_t   n, cap;
} id_list;

struct bpe_state;

struct gguf_vocab {
    enum gguf_vocab_type type;
    int32_t      n_tokens;
    vocab_token *tokens;
    char        *text;      /* every token's text, back to back */
    int32_t     *slots;     /* text -> id hash, open addressing, -1 = empty */
    uint32_t     slot_mask;

    /* BPE merges: (left id, right id) -> rank, open addressing. */
    uint64_t    *merge_keys; /* UINT64_MAX = empty */
    int32_t     *merge_ranks;
    uint32_t     merge_mask;

    int32_t byte_tok[256]; /* SPM: the token of each byte (<0xNN>, else the
                              byte itself, else unk; -1 when none) */
    int32_t bos, eos, unk, eot, eom;
    bool    add_bos, add_eos, add_space_prefix, ignore_merges;
    bool    escape_spaces; /* BPE "gemma4": spaces become U+2581 before the pre-tokenizer,
                              pieces turn it back (llama.cpp's escape_whitespaces) */

    int32_t *eog;     /* sorted ids */
    size_t   n_eog;
    int32_t *special; /* control/user-defined/unknown ids, longest text first */
    size_t   n_special;

    char              pre_name[64];
    struct bpe_state *bpe; /* BPE: the pre-tokenizer (tokenizer_bpe.c) */
};

static inline const char *tok_text(const gguf_vocab *v, int32_t id) { return v->text + v->tokens[id].off; }

/* Appends id to l; -1 when out of memory. */
int gguf_id_list_push(id_list *l, int32_t id);

/* A candidate merge of two adjacent symbols. The queue serves the highest
 * priority first (SPM: the merged token's score; BPE: minus the merge rank),
 * ties going to the leftmost pair, as llama.cpp's priority queues do. size is
 * the pair's byte length when queued: a pair whose symbols changed since is
 * stale and skipped. */
typedef struct bigram {
    double   priority;
    int32_t  left, right;
    size_t   size;
} bigram;

typedef struct bigram_queue {
    bigram *items;
    size_t  n, cap;
} bigram_queue;

int  gguf_bigram_push(bigram_queue *q, bigram b); /* -1 when out of memory */
bool gguf_bigram_pop(bigram_queue *q, bigram *out);

/* A symbol of a word being merged: a byte range of the word, linked to its
 * neighbours (-1 at the ends). */
typedef struct symbol {
    int32_t prev, next;
    size_t  off, n;
    int32_t id; /* BPE: the token spelling this symbol, -1 when none */
} symbol;

/* SPM: appends the tokens of one raw text fragment (already prefixed with a
 * space when wanted, not yet escaped). */
int gguf_vocab_encode_spm(const gguf_vocab *v, const char *text, size_t len, id_list *out);

/* BPE: pre-tokenizer setup (by tokenizer.ggml.pre) and teardown. */
int  gguf_vocab_bpe_init(gguf_vocab *v, const char *pre, gguf_error *err);
void gguf_vocab_bpe_free(gguf_vocab *v);
/* BPE: appends the tokens of one raw text fragment. */
int  gguf_vocab_encode_bpe(const gguf_vocab *v, const char *text, size_t len, id_list *out);
/* BPE: the pre-tokenizer's words of one raw text fragment, as byte lengths
 * of text in order (*lens is malloc'd; a bad byte counts as the one byte it
 * is). What the unit tests hold against llama.cpp's unicode_regex_split;
 * no tool needs it.
 * 0, or -1 when out of memory. */
int  gguf_vocab_bpe_words(const gguf_vocab *v, const char *text, size_t len, size_t **lens, size_t *n);

/* The rank of merging left+right, -1 when no such merge. */
int32_t gguf_vocab_merge_rank(const gguf_vocab *v, int32_t left, int32_t right);

#endif
