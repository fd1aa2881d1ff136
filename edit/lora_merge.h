/*
 * lora_merge.h — gguf-edit BASE --lora FILE [--lora-scaled FILE S]... -o OUT:
 * LoRA adapters merged into their base model as llama.cpp e21cdc11's
 * llama-export-lora merges them, byte for byte.
 *
 * The output has the base's keys in its order with general.file_type moved
 * last and set to 1 (MOSTLY_F16), and the base's tensors in name order
 * (export-lora walks a std::map). A tensor some adapter has a pair for is
 * base + Σ scale_k × B_k·A_k, computed in f32 (the base dequantized) with
 * ggml's CPU order of sums, then written f32 if the base tensor is f32,
 * else f16; every other tensor is copied as it is. Adapters must all hold
 * the same tensors (as export-lora requires) and not be quantized.
 */
#ifndef EDIT_LORA_MERGE_H
#define EDIT_LORA_MERGE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct lora_merge_input {
    const char *path;
    float       scale; /* the user's scale: 1 for --lora */
} lora_merge_input;

/* Writes out from base and the n adapters; prints what went wrong
 * (naming the file) and returns the exit status. */
int lora_merge_run(const char *base, const lora_merge_input *in, int n, const char *out,
                   bool quiet);

/* One element of B·A as ggml's CPU backend adds it on an AVX-512 machine:
 * at is row i of Aᵀ (rank values), b row j of B (rank values). batch: the
 * product goes to tinyBLAS (lora_merge_batch_order), else
 * ggml_vec_dot_f32's order. */
float lora_merge_dot(const float *at, const float *b, int64_t rank, bool batch);

/* Whether ggml hands a product of a [rank, in] by [rank, out] to tinyBLAS
 * (out ≥ 2, rank a multiple of 16, in of 4). */
bool lora_merge_batch_order(int64_t in, int64_t out, int64_t rank);

#endif
