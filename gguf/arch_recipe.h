/*
 * arch_recipe.h — how llama.cpp's converter makes a family's files, and
 * the one table of feature words (private to ggufkit: not installed, not
 * exported from libgguf.so; the tools link it from libgguf.a).
 *
 * The registry (<ggufkit/arch.h>) is the model schema: keys, tensors,
 * shapes, features — what a file is. A recipe, keyed by architecture
 * name, is what gguf-convert needs to make one as e21cdc11's
 * convert_hf_to_gguf.py does, and the llama.cpp loader details gguf-run
 * repeats: the Hugging Face classes and checkpoint names, config.json's
 * keys in the converter's order (with the rules that leave one out), the
 * converter's facts (vocabulary rules, q/k permutation, ...), a value
 * added to the norms, multimodal name rules. None of it is ABI: it changes
 * with the converter it follows.
 */
#ifndef GGUF_ARCH_RECIPE_H
#define GGUF_ARCH_RECIPE_H

#include <ggufkit/arch.h>

/* What llama.cpp's converter does for the family (gguf_recipe.facts). */
enum gguf_fact {
    GGUF_FACT_PERMUTE_QK,      /* q/k rows get the rotary permutation */
    GGUF_FACT_LLAMA_VOCAB,     /* LlamaModel's vocabulary rules */
    GGUF_FACT_WRITES_ROPE_DIM, /* writes rope.dimension_count and vocab_size */
    GGUF_FACT_PHI3_VOCAB,      /* Phi3MiniModel's vocabulary: added tokens typed by "special"
                                * alone, tokenizer.json's added_tokens too, BPE only for a
                                * GPT2Tokenizer */
    GGUF_FACT_TRIM_EMBD,       /* token_embd rows past the vocabulary dropped */
    GGUF_FACT_NO_SPACE_PREFIX, /* a tokenizer.model vocabulary gets
                                * tokenizer.ggml.add_space_prefix false */
    GGUF_FACT_OWN_ROPE_KEYS,   /* its converter writes none of the base converter's
                                * rope.scaling.* keys (phi3: LongRoPE's own) */
    GGUF_FACT_MXFP4_EXPERTS,   /* experts come as MXFP4 blocks + scales and stay MXFP4;
                                * float outtypes get file_type 38 */
    GGUF_FACT_ROPE_PROPORTIONAL, /* generates rope_freqs for the full layers' "proportional"
                                * rope: 1 for the rotated pairs, 1e30 for the rest (Gemma 4) */
    GGUF_FACT_NEXTN_BLOCKS,    /* block_count = num_hidden_layers + num_nextn_predict_layers:
                                * the next-token-prediction layers converted (GLM-4.5) */
    GGUF_FACT_KV_B_SPLIT,      /* kv_b_proj split per head (num_key_value_heads of them) into
                                * attn_k_b (its qk_nope_head_dim rows, transposed) and
                                * attn_v_b (its v_head_dim rows); layers from
                                * num_hidden_layers on (MTP) dropped (DeepseekV2Model) */
    GGUF_FACT_COUNT
};

/* The converter's reordering of a tensor's rows (LLaMA's rotary halves). */
enum gguf_permute { GGUF_PERMUTE_NONE, GGUF_PERMUTE_Q, GGUF_PERMUTE_K };

/* Where the checkpoint has the tensor of a role: its Hugging Face name
 * ("%d": layer; a row with a third axis, the experts', has a second "%d",
 * the expert, whose tensors the converter stacks in expert order), its
 * Meta consolidated.NN.pth name, and its row permutation (with
 * GGUF_FACT_PERMUTE_QK). A list ends with role GGUF_ROLE_COUNT. */
typedef struct gguf_recipe_tensor {
    uint8_t     role;    /* enum gguf_role */
    uint8_t     permute; /* enum gguf_permute */
    const char *hf;      /* NULL: none */
    const char *meta;    /* NULL: none */
} gguf_recipe_tensor;

/* When a config.json row is written (gguf_recipe_hf_hparam.when). */
enum gguf_when {
    GGUF_WHEN_ALWAYS,        /* as the other columns say */
    GGUF_WHEN_NOT_PATTERN_1, /* not when config.json's sliding_window_pattern is 1 (no
                              * local layers: Gemma3Model) */
    GGUF_WHEN_NONZERO        /* not when the value is 0 (and the row is not required) */
};

/* How a row's value is made (gguf_recipe_hf_hparam.make). */
enum gguf_make {
    GGUF_MAKE_READ,          /* from the first present name (a null value is absent) */
    GGUF_MAKE_BLOCK_COUNT,   /* from llama.cpp's names for block_count, whatever the row's */
    GGUF_MAKE_ROTARY,        /* int(F × hidden_size) / num_attention_heads, F the value of
                              * the row's names (1 when absent: partial_rotary_factor) */
    GGUF_MAKE_ZERO_ABSENT,   /* read; 0 when absent or null and not required */
    GGUF_MAKE_ROPE_THETA,    /* rope_parameters' (else rope_scaling's) rope_theta, else read
                              * (TextModel mirrors the top level's into rope_parameters) */
    GGUF_MAKE_PRODUCT,       /* the product of the values of hf[0] and hf[1] (both required) */
    GGUF_MAKE_ROTARY_HEAD,   /* int(head_dim × F) (Qwen3NextModel), head_dim from "head_dim"
                              * else hidden_size / num_attention_heads, F the value of the
                              * row's names, def when absent */
    /* Gemma 4's per-layer values (arrays of one entry per layer) */
    GGUF_MAKE_SWA_LAYERS,    /* bool[]: layer_types[il] == "sliding_attention" */
    GGUF_MAKE_FF_DOUBLE_WIDE,/* i32[]: with use_double_wide_mlp true, the value for the
                              * layers before the KV-shared ones (the row's names give the
                              * count), twice it after; nothing otherwise */
    GGUF_MAKE_KV_HEADS_SWA_FULL,/* i32[]: when the row's name and num_key_value_heads are
                              * both given, the latter for sliding layers, the former for
                              * full ones; nothing otherwise */
    GGUF_MAKE_CONST,         /* def, always (GLM-4.5's expert_gating_func 2) */
    GGUF_MAKE_BOOL,          /* a JSON bool, written as a bool (when present; with
                              * GGUF_WHEN_NONZERO only when true) */
    GGUF_MAKE_SUM,           /* the sum of the values of hf[0] and hf[1] (both required) */
    GGUF_MAKE_GATING_FUNC,   /* "sigmoid" 2, "softmax" 1 (the base converter's scoring_func);
                              * nothing when absent */
    GGUF_MAKE_YARN_LOG_MUL   /* 0.1 × rope_scaling's mscale_all_dim, when it has one
                              * (DeepseekV2Model) */
};

/* One config.json hyper-parameter the converter writes, in the order it
 * writes them (llama.cpp's base converter). block_count is written first
 * unless the table has a GGUF_HP_BLOCK_COUNT row; the base converter's
 * rope scaling keys follow the GGUF_HP_HEAD_COUNT_KV row
 * (GGUF_FACT_OWN_ROPE_KEYS: none). A table ends with hf[0] NULL. */
typedef struct gguf_recipe_hf_hparam {
    const char *hf[8];    /* config.json names, the first present wins; NULL after the last;
                           * "a.b.c" names member c of object b of object a */
    uint8_t     id;       /* enum gguf_hp: the key it becomes */
    bool        is_float; /* written as f32; else u32 */
    bool        required; /* the conversion fails without it */
    uint8_t     make;     /* enum gguf_make */
    uint8_t     when;     /* enum gguf_when */
    double      def;      /* written when every name is absent (not required); 0: nothing */
} gguf_recipe_hf_hparam;

typedef struct gguf_recipe {
    const char                  *arch;       /* general.architecture */
    const char *const           *hf_classes; /* Hugging Face "architectures" it is converted from */
    const char *const           *hf_skip;    /* checkpoint name suffixes the converter drops */
    const gguf_recipe_hf_hparam *hf_hparams; /* writing order */
    const gguf_recipe_hf_hparam *hf_hparams_late; /* written after general.file_type (the
                                                   * family's own keys; one written before
                                                   * takes the new value in its place, as in
                                                   * gguf-py's writer), or NULL */
    const gguf_recipe_tensor *const *tensors; /* lists of checkpoint names; ends with NULL */
    uint32_t                     facts;      /* 1 << enum gguf_fact */
    float                        norm_offset;/* added to every *norm.weight (Gemma's x·(1 + w)
                                              * norms: 1) */
    uint32_t                     q_scale_width_blocks; /* with GGUF_FEAT_SCALE_Q: at this
                                              * block_count llama.cpp scales q by
                                              * 1/√(embedding_length / head_count), else by
                                              * 1/√key_length (its rule for the 27B Gemmas);
                                              * 0: never */
    /* Multimodal checkpoints of the family (Gemma3ForConditionalGeneration,
     * as Gemma3Model.modify_tensors): hf_strip is taken out of every
     * checkpoint name that has it, wherever it occurs ("language_model."),
     * and a name without it that starts with one of hf_skip_prefix (the
     * vision tower, the projector) is dropped; NULL: neither */
    const char                  *hf_strip;
    const char *const           *hf_skip_prefix;
    /* The text model_types the recipe converts (config.json's "model_type"
     * after text_config is read over the top level); another is refused by
     * name, where upstream's converter would write keys the recipe does not
     * (Mistral3Model's "ministral3": YaRN, attention temperature); NULL:
     * any */
    const char *const           *hf_model_types;
} gguf_recipe;

/* The recipe of an architecture (every registered one has one). */
const gguf_recipe *gguf_recipe_of(const gguf_arch *a);

/* The architecture of a Hugging Face class ("LlamaForCausalLM"), or NULL. */
const gguf_arch *gguf_recipe_find_hf(const char *hf_class);

/* "LlamaForCausalLM, MistralForCausalLM, ..." (for messages). */
const char *gguf_recipe_hf_list(void);

/* Whether the recipe has a fact (enum gguf_fact). */
bool gguf_recipe_has(const gguf_recipe *r, int fact);

/* The checkpoint names of a's tensor row t, or NULL when the checkpoint
 * has none (a generated tensor, one the converter builds itself). */
const gguf_recipe_tensor *gguf_recipe_tensor_of(const gguf_recipe *r, int role);

/* ---------------------------------------------------------------------------
 * The feature words: every model feature and converter fact with the word
 * `gguf-inspect --arches` prints for it, in printing order, and its kind —
 * which also tells gguf-run whether its forward pass implements it.
 */
enum gguf_word_kind {
    GGUF_WORD_RUN,     /* a model feature gguf-run's forward pass implements */
    GGUF_WORD_MODEL,   /* a model feature gguf-run refuses (not implemented yet) */
    GGUF_WORD_CONVERT  /* a converter fact: "convert:" words, nothing to run */
};
typedef struct gguf_feature_word {
    uint8_t     kind; /* enum gguf_word_kind */
    uint8_t     id;   /* enum gguf_feature, or enum gguf_fact for GGUF_WORD_CONVERT */
    const char *word;
} gguf_feature_word;

/* The table: *n words. */
const gguf_feature_word *gguf_feature_words(size_t *n);

/* Whether architecture a has the feature or fact of word w. */
bool gguf_feature_word_on(const gguf_feature_word *w, const gguf_arch *a);

#endif
