/*
 * arch.h — what the converter knows about each model family, as data.
 *
 * One table entry per family (llama, qwen2): the Hugging Face architecture
 * names it covers, its GGUF architecture name, how checkpoint tensor names
 * map to GGUF names, which tensors get the rotary q/k row permutation, and
 * which config.json hyperparameters become which metadata keys. Adding a
 * family is adding rows here, not code elsewhere.
 */
#ifndef CONVERT_ARCH_H
#define CONVERT_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a tensor's rows are reordered before writing. */
enum permute_kind {
    PERMUTE_NONE = 0,
    PERMUTE_Q, /* rotary pairs interleaved → halves, over n_head heads */
    PERMUTE_K, /* the same over n_head_kv heads */
};

/* One name rule: a checkpoint name pattern with at most one "%d" (the
 * block index) and the GGUF name it becomes ("%d" again for the block). */
typedef struct name_rule {
    const char *from;
    const char *to;
    uint8_t     permute; /* enum permute_kind */
} name_rule;

/* How a config.json hyperparameter becomes a metadata key. */
enum hparam_kind { HP_U32, HP_F32 };
typedef struct hparam_rule {
    const char *keys[4]; /* config.json names, first present wins */
    const char *gguf;    /* key with "%s" for the architecture */
    uint8_t     kind;    /* enum hparam_kind */
    bool        required;
} hparam_rule;

typedef struct arch_family {
    const char        *gguf_arch;     /* "llama", "qwen2" */
    const char *const *hf_names;      /* NULL-terminated "LlamaForCausalLM", ... */
    const name_rule   *names;         /* terminated by { NULL } */
    const char *const *skip_suffixes; /* checkpoint tensors dropped (NULL-terminated) */
    bool               rope_dim_key;  /* writes {arch}.rope.dimension_count and vocab_size */
    bool               llama3_rope;   /* rope_scaling "llama3" → rope_freqs tensor */
    bool               permute_qk;    /* q/k rows get the rotary permutation */
    /* llama.cpp's LlamaModel vocabulary rules: a byte-fallback
     * tokenizer.json is read as SentencePiece pieces (LlamaHfVocab), and
     * tokenizer_config's add_prefix_space is written */
    bool               llama_vocab;
} arch_family;

/* The family of a Hugging Face "architectures" entry, or NULL. */
const arch_family *arch_find(const char *hf_name);

/* "LlamaForCausalLM, MistralForCausalLM, ..." for error messages. */
const char *arch_supported_list(void);

/* The hyperparameters every family writes (llama.cpp's base converter),
 * in its order; terminated by { { NULL } }. */
extern const hparam_rule arch_base_hparams[];

/* Maps a checkpoint tensor name: 1 with the GGUF name in out (and the
 * permutation and block index), 0 when the family drops the tensor, -1
 * when no rule matches. */
int arch_map_name(const arch_family *a, const char *name, char *out, size_t out_size,
                  enum permute_kind *permute, int *block);

/* Meta's checkpoint names for the llama family ("layers.%d.attention.wq.weight", ...). */
extern const name_rule arch_meta_names[];

/* Maps name by a rule list alone: 1 (out, block), or -1. */
int arch_map_rules(const name_rule *rules, const char *name, char *out, size_t out_size,
                   int *block);

#endif
