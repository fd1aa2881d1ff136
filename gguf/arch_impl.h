/*
 * arch_impl.h — the registry's rows as the library stores them (private:
 * arch.c, arch_recipe.c and modelcheck.c only; tools reach the rows through
 * <ggufkit/arch.h> and the conversion recipe through arch_recipe.h).
 *
 * A family's tensor table is a list of parts, each a base table (shared
 * between families, such as the LLaMA-style decoder's) with patches by
 * role: a row dropped, a row replaced, or rows added after one. Walking it
 * (gguf_arch_tensor_at) gives the rows in their order: each base row (or
 * its replacement) followed by what is added after it.
 */
#ifndef GGUF_ARCH_IMPL_H
#define GGUF_ARCH_IMPL_H

#include <ggufkit/arch.h>

#include "arch_recipe.h"

/* Whether a tensor must be there. */
enum gguf_need {
    GGUF_NEED_REQUIRED,
    GGUF_NEED_OPTIONAL,
    GGUF_NEED_IF_FEAT,    /* required when the architecture has need_feat, else optional */
    GGUF_NEED_UNLESS_FEAT,/* optional when the architecture has need_feat, else required */
    GGUF_NEED_DENSE,      /* required in a model without experts (expert_count absent or 0) */
    GGUF_NEED_EXPERTS,    /* required in a model with experts (expert_count > 0) */
    GGUF_NEED_IN_LAYERS,  /* a per-block row: required in the blocks of its kind (layers;
                           * a row of a Gemma 4 kind is optional in the others, where
                           * llama.cpp loads it if there); a global one: required when
                           * some block is of its kind (Gemma 4's rope_freqs: a full one) */
    GGUF_NEED_PER_LAYER_INPUTS /* required when embedding_length_per_layer_input > 0 */
};

/* One tensor of an architecture (zeroes: required, shape [1]). */
struct gguf_arch_tensor {
    const char *name;      /* "token_embd.weight", or "blk.%d.attn_q.weight" per block */
    uint8_t     role;      /* enum gguf_role */
    uint8_t     need;      /* enum gguf_need */
    uint8_t     need_feat; /* enum gguf_feature for the _FEAT needs */
    uint8_t     ne[3];     /* enum gguf_dim: the shape; GGUF_DIM_1 for an absent axis */
    uint8_t     layers;    /* enum gguf_layers: the blocks it is in (0: every block) */
};

/* A change a family makes to a base table, by role. */
enum { GGUF_PATCH_END, GGUF_PATCH_DROP, GGUF_PATCH_SET, GGUF_PATCH_AFTER };
typedef struct gguf_tensor_patch {
    uint8_t          op;   /* GGUF_PATCH_*; a table of patches ends with GGUF_PATCH_END */
    uint8_t          at;   /* the base row's role */
    gguf_arch_tensor row;  /* SET: the row instead; AFTER: a row added after it */
} gguf_tensor_patch;

/* One part of a tensor table: rows (ending with name NULL) and patches
 * (NULL: none). A family's list of parts ends with rows NULL. */
typedef struct gguf_tensor_part {
    const gguf_arch_tensor  *rows;
    const gguf_tensor_patch *patches;
} gguf_tensor_part;

/* One {arch}.* key of a GGUF file (its key: gguf_hp_key(id)). */
struct gguf_arch_hparam {
    uint8_t id;       /* enum gguf_hp */
    bool    is_float; /* f32 (f64 accepted), finite and > 0 (zero_ok: >= 0); else an integer */
    bool    required; /* a model file must have it */
    bool    zero_ok;  /* a float may be 0 (>= 0 rather than > 0) */
    uint8_t derive;   /* enum gguf_derive, when absent */
    double  def;      /* with GGUF_DERIVE_DEFAULT */
    int64_t lo, hi;   /* integer range (of each element of an array) */
    uint8_t array;    /* enum gguf_hp_array */
    uint16_t count;   /* a GGUF_HP_ARRAY's element count */
};

struct gguf_arch {
    const char             *name;       /* general.architecture */
    const char             *about;      /* one line for listings */
    const gguf_arch_hparam *hparams;    /* checking order; ends with id GGUF_HP_COUNT */
    const gguf_tensor_part *tables;     /* terminated by rows == NULL */
    uint32_t                features;   /* 1 << enum gguf_feature */
    uint8_t                 rope;       /* enum gguf_rope_layout */
    uint8_t                 activation; /* enum gguf_activation */
    uint8_t                 routing;    /* enum gguf_routing (with GGUF_FEAT_EXPERTS) */
};

/* A model's hyper-parameters, read and derived as the registry says. */
struct gguf_hparams {
    const gguf_arch *arch;
    int64_t  v[GGUF_HP_COUNT];   /* integer values (derived ones filled in) */
    double   f[GGUF_HP_COUNT];   /* float values */
    bool     has[GGUF_HP_COUNT]; /* present in the file */
    bool     set[GGUF_HP_COUNT]; /* present or derived */
    int64_t  n_head_kv, head_k, head_v, n_rot; /* derived */
    int64_t  n_vocab;            /* the token count, -1 when unknown */
    int64_t *arr[GGUF_HP_COUNT]; /* an array row's elements (owned; NULL: none) */
    int64_t  n_arr[GGUF_HP_COUNT];
};

/* Frees what hp owns (its arrays), not hp. */
void gguf_hparams_release(gguf_hparams *hp);

/* The families (families.c): gguf_n_archs rows in registry order, and
 * their recipes, one per row in the same order. */
extern const gguf_arch gguf_archs[];
extern const size_t gguf_n_archs;
extern const gguf_recipe gguf_recipes[];
extern const size_t gguf_n_recipes;

#endif
