/*
 * lora.h — PEFT LoRA adapters as a src_model, as llama.cpp e21cdc11's
 * convert_lora_to_gguf.py writes them.
 *
 * An adapter folder holds adapter_config.json (lora_alpha, and what PEFT
 * options it was trained with) and adapter_model.safetensors (each target
 * module's lora_A [rank, in] and lora_B [out, rank]). The base model — its
 * Hugging Face folder or its GGUF — gives the family, the head counts of
 * the q/k row permutation, and the tensors the pairs must fit. Each pair
 * becomes BASE_NAME.lora_a [in, rank] and BASE_NAME.lora_b [rank, out]
 * (lora_b's rows permuted as the base tensor's); one block's per-expert
 * pairs are stacked into the _exps tensors' pairs, as the family's
 * converter stacks the experts. Pairs come in the order of their first
 * tensor in the safetensors header.
 */
#ifndef CONVERT_LORA_H
#define CONVERT_LORA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "model.h"

/* Whether dir is an adapter folder (adapter_config.json or
 * adapter_model.safetensors in it). */
bool lora_detect(const char *dir);

/* What adapter_config.json says, checked (lora_config_read). */
typedef struct lora_config {
    float     alpha;
    uint32_t *alora_tokens; /* adapter.alora.invocation_tokens, or NULL */
    size_t    n_alora;
} lora_config;

/* Reads a parsed adapter_config.json. Refuses what llama.cpp's converter
 * refuses or would convert wrong: a peft_type other than LORA, DoRA,
 * rsLoRA, alpha_pattern, bias other than "none", modules_to_save, an
 * invocation_string without its tokens. 0, or -1 with err (message without
 * the file name). Free with lora_config_free. */
int lora_config_read(const json_value *cfg, lora_config *c, gguf_error *err);
void lora_config_free(lora_config *c);

/* How a PEFT tensor name takes part (convert_lora_to_gguf.py's rules). */
enum lora_kind { LORA_A, LORA_B, LORA_SKIP /* .base_layer.weight */,
                 LORA_NORM /* mergekit's norms, kept */, LORA_OTHER };

/* The kind of a PEFT tensor name and the base tensor's checkpoint name
 * (get_base_tensor_name: "base_model.model." removed, ".lora_A.weight" →
 * ".weight"); 0, or -1 when out is too small. */
int lora_base_name(const char *peft, char *out, size_t cap, enum lora_kind *kind);

/* llama.cpp's name of a model named by its folder (gguf-py's
 * Metadata.id_to_title): '-' as ' ', lower-case words capitalized unless a
 * version or a number. Returns a new string, NULL when out of memory. */
char *lora_title(const char *dir);

/* Opens the adapter folder dir against base (a Hugging Face folder or a
 * GGUF file). 0, or -1 with err (naming the file at fault). */
int lora_open(const char *dir, const char *base, src_model *m, gguf_error *err);

#endif
