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

#include "model.h"

/* Opens the folder. 0, or -1 with err (naming the file at fault). */
int hf_open(const char *dir, src_model *m, gguf_error *err);

#endif
