/*
 * model.h — a checkpoint as the converter sees it, whatever its layout.
 *
 * Each input reader (Hugging Face folder, Meta folder, llama2.c file) fills
 * a src_model: the family, the hyperparameters as metadata to write, the
 * vocabulary, and the source tensors in the order llama.cpp's converter
 * would visit them, each with its data mapped (never copied whole). The
 * writer (write.c) turns that into a GGUF one tensor at a time.
 */
#ifndef CONVERT_MODEL_H
#define CONVERT_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"
#include <ggufkit/gguf.h>

/* Element types of source tensors. SRC_I8_GROUPS: int8 values with one f32
 * scale per `group` consecutive values (llama2.c v2). */
enum src_dtype { SRC_F32, SRC_F16, SRC_BF16, SRC_I8_GROUPS,
                 SRC_MXFP4 /* GGML MXFP4 blocks, written as they are (gpt-oss experts) */,
                 SRC_F8_E4M3 /* FP8 bytes times a block scale (fp8.h: src_tensor.fp8) */,
                 SRC_QPACK /* integer-packed codes with scales (qpack.h: src_tensor.qp) */,
                 SRC_I8_SCALED /* int8 codes times a channel or block scale (fp8.h:
                                * src_tensor.fp8; compressed-tensors int-quantized) */ };

/* Where a tensor's values come from, for messages: the file (a name in the
 * input folder, config.json for values made from it; NULL: the input
 * itself, a llama2.c checkpoint) and the tensor's name there (NULL: none,
 * the output name is used). The strings belong to the reader. */
typedef struct src_origin {
    const char *file, *name;
} src_origin;

typedef struct src_tensor {
    char          *name;       /* GGUF name (already mapped) */
    uint8_t        dtype;      /* enum src_dtype */
    uint8_t        permute;    /* enum gguf_permute */
    int            n_dims;     /* 1..4 */
    int64_t        ne[4];      /* GGUF order: ne[0] is the row length */
    const void    *data;       /* mapped source bytes, row-major */
    void          *owned;      /* non-NULL when data was generated (freed with the model) */
    float          add;        /* added to every element (Gemma's norms: w + 1), in f32,
                                * rounded to f16 for an f16 source; 0: none */
    const uint8_t *scales;     /* SRC_I8_GROUPS: little-endian f32s, maybe unaligned */
    int            group;
    /* A tensor sharded over several files (Meta's model-parallel
     * checkpoints): its n_parts pieces in order (the array is freed with
     * the model; data is then unused). split_rows: each part holds
     * 1/n_parts of the rows; otherwise 1/n_parts of every row's columns. */
    const void   **parts;
    int            n_parts;
    bool           split_rows;
    /* data (and every part) lies in a read-only file mapping: the writer
     * drops its pages after use. Heap bytes (generated, inflated) are never
     * dropped: madvise(MADV_DONTNEED) on the heap zeroes live memory. */
    bool           mapped;
    /* Where the values come from: `from`, or with parts each part's
     * (part_from, n_parts of them, freed with the model; NULL: all from
     * `from`). Column c of the output is column c × col_step + col_first of
     * the source (gpt-oss's gate and up biases, interleaved in one tensor;
     * col_step 0 counts as 1). */
    src_origin     from;
    src_origin    *part_from;
    uint8_t        col_step, col_first;
    /* Qwen 3.5's linear attention (hf.c), as _LinearAttentionVReorderBase
     * does it: value heads grouped by key head ([k0: v0 v1][k1: v0 v1])
     * become tiled ([k0v0 k1v0 k0v1 k1v1]) — output row vh_first + o (o in
     * vh_k × vh_per_k heads of vh_dim rows) is source row vh_first + ((kh ×
     * vh_per_k + vi) × vh_dim + d) for o = (vi × vh_k + kh) × vh_dim + d; with
     * vh_cols the columns instead (vh_first 0). vh_k 0: none. */
    int32_t        vh_first, vh_k, vh_per_k, vh_dim;
    bool           vh_cols;
    /* A half of a fused experts tensor (gate_up_proj [experts, 2 × ff, n]):
     * output row e × ne[1] + f is source row e × ex_block + ex_skip + f.
     * ex_block 0: none. */
    int64_t        ex_block, ex_skip;
    /* With ex_block, DeepSeek's attn_k_b (kv_b_proj's nope rows per head,
     * transposed): output row h × ne[1] + j, column i is source row
     * h × ex_block + ex_skip + i, column j (source rows ne[1] wide). */
    bool           ex_transposed;
    bool           neg_exp;    /* the value is -exp(x) (A_log → ssm_a), in f32 */
    struct fp8_scale *fp8;     /* SRC_F8_E4M3: its block scales (fp8.h), freed with the model */
    struct qpack_src *qp;      /* SRC_QPACK: its packed parts (qpack.h), freed with the model */
    bool           forced;     /* written as force_type whatever the outtype */
    bool           half_or_f32; /* f16 at outtype f16, otherwise f32 (an mmproj's patch embedding) */
    uint32_t       force_type;
} src_tensor;

/* general.quantization_version of every output */
#define CONVERT_QUANT_VERSION 2

typedef struct src_model src_model;
struct src_model {
    const gguf_arch *arch;
    src_tensor        *tensors;     /* in llama.cpp's order */
    int                n_tensors, cap_tensors;
    uint32_t           n_head, n_head_kv; /* for the q/k permutation */
    char              *name;        /* general.name */
    const char        *path;        /* the input, for messages */
    /* Writes the {arch}.* keys, general.file_type and the tokenizer keys in
     * llama.cpp's order (the general.* identity keys and the quantization
     * version are the writer's). 0, or -1 with err. */
    int  (*write_metadata)(src_model *m, gguf_writer *w, uint32_t file_type, gguf_error *err);
    /* Optional: keys llama.cpp's converter adds while it makes the
     * generated tensors, so right after general.architecture. */
    int  (*write_tensor_keys)(src_model *m, gguf_writer *w, gguf_error *err);
    void (*close)(src_model *m);    /* frees the reader's state */
    /* Optional: 0 when the source bytes the reader holds in memory are
     * unchanged since they were read (checked before the output is renamed
     * into place), or -1 with err. */
    int  (*verify)(const src_model *m, gguf_error *err);
    void              *reader;
    /* A LoRA adapter (lora.h): general.type "adapter" and adapter.type
     * "lora" in place of general.type "model", no size label, and not
     * checked as a model (its tensors are lora_a/lora_b pairs). */
    bool               adapter;
    /* Not a language model (mmproj.h): general.architecture and
     * general.type as given (NULL: the family's name, "model"), and
     * validate in place of the language-model check (NULL: none). */
    const char        *arch_name, *general_type;
    int  (*validate)(src_model *m, gguf_writer *w, gguf_error *err);
};

/* Appends a tensor (name copied). Returns it, or NULL when out of memory. */
src_tensor *src_add_tensor(src_model *m, const char *name, int dtype, int n_dims,
                           const int64_t *ne, const void *data);

void src_model_free(src_model *m);

/* The enum src_dtype of a safetensors dtype name ("F32", "F16", "BF16",
 * "F8_E4M3", "I8": the last two only convert with their scales, fp8.h), or
 * -1. */
int src_dtype_of(const char *dtype);

#endif
