/*
 * arch.h — the converter's use of the architecture registry: which family a
 * checkpoint is, and how its tensor names become GGUF names.
 *
 * What a family is (its tensor table, keys, features) is a row of libgguf's
 * registry (<ggufkit/arch.h>, gguf/arch.c); how llama.cpp's converter
 * makes its files (its Hugging Face classes, the checkpoint name of each
 * tensor, its config.json keys, its conversion facts) is the family's
 * recipe (gguf/arch_recipe.h); this file only matches names against them.
 */
#ifndef CONVERT_ARCH_H
#define CONVERT_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggufkit/arch.h>

#include "arch_recipe.h"

/* The family of a Hugging Face "architectures" entry, or NULL. */
const gguf_arch *arch_find(const char *hf_name);

/* "LlamaForCausalLM, MistralForCausalLM, ..." for error messages. */
const char *arch_supported_list(void);

/* Maps a Hugging Face checkpoint tensor name: 1 with the GGUF name in out
 * (and the row permutation, enum gguf_permute, and the block index), 0 when
 * the family drops the tensor, -1 when no row matches. *expert: the expert
 * index of one expert's projection (a row with ne2, whose hf name has a
 * second "%d"; out is then the stacked tensor's name), else -1. *row: the
 * registry row. A multimodal checkpoint's names are first taken to the
 * text model's (the recipe's hf_strip and hf_skip_prefix). */
int arch_map_name(const gguf_arch *a, const char *name, char *out, size_t out_size,
                  uint8_t *permute, int *block, int *expert, const gguf_arch_tensor **row);

/* Whether the checkpoint has row t per expert (its name has the layer's
 * and the expert's "%d"), not stacked (Gemma 4: the layer's alone). */
bool arch_per_expert(const gguf_arch *a, const gguf_arch_tensor *t);

/* Maps a Meta checkpoint name (consolidated.NN.pth): 1 (out, block), or -1.
 * Meta's q/k are already in llama.cpp's rotary order: no permutation. */
int arch_map_meta(const gguf_arch *a, const char *name, char *out, size_t out_size, int *block);

#endif
