/*
 * hf.h — Hugging Face model folders as a src_model.
 *
 * config.json names the architecture (a family of arch.h) and its
 * hyperparameters; the weights are model.safetensors, or shards listed by
 * model.safetensors.index.json (or named model-*.safetensors); the
 * vocabulary is tokenizer.model (SentencePiece) with tokenizer_config.json
 * and config.json for special tokens. The result is what llama.cpp's
 * convert_hf_to_gguf.py writes for the same folder.
 */
#ifndef CONVERT_HF_H
#define CONVERT_HF_H

#include <stdbool.h>

#include "json.h"
#include "model.h"

/* Opens the folder. With vocab_only, config.json may be absent (a folder
 * of tokenizer files): the vocabulary is written as the llama family's,
 * with no hyperparameters. file_order: a safetensors file's tensors in
 * header order (llama.cpp c392e50) rather than name order (e21cdc11).
 * 0, or -1 with err (naming the file at fault). */
int hf_open(const char *dir, bool vocab_only, bool file_order, src_model *m, gguf_error *err);

/* A LoRA pair's lora_b ({rank, out}) on a Qwen 3.5 linear-attention
 * projection of the given role: its output rows get the value-head reorder
 * the base tensor's rows get (in_proj_qkv's v rows, in_proj_z, in_proj_a,
 * in_proj_b), as convert_lora_to_gguf.py's LoraTorchTensor carries it to
 * lora_B; other roles are left alone. config: the base's config.json
 * (its linear_* keys). 0, or -1 with err. */
int hf_lora_linear_attn(const json_value *config, src_tensor *lora_b, int role,
                        gguf_error *err);

/* PREFIX*SUFFIX files of dir in name order (llama.cpp's
 * get_model_part_names), malloc'd names. 0, or -1 with err. */
int hf_list_parts(const char *dir, const char *prefix, const char *suffix, char ***names,
                  int *n, gguf_error *err);

/* general.name of a folder: its last path component, first letter upper
 * case (malloc'd; NULL when out of memory). */
char *hf_default_name(const char *dir);

#endif
