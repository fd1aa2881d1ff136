/*
 * meta.h — Meta's original LLaMA checkpoint folders as a src_model:
 * params.json, consolidated.00.pth (and .01, ... when sharded: merged as
 * llama.cpp merges them; torch.save archives with Meta's tensor
 * names and rotary layout, which is already llama.cpp's), tokenizer.model.
 * Metadata as llama.cpp's legacy converter writes it, plus the special-token
 * keys a Hugging Face folder gets.
 */
#ifndef CONVERT_META_H
#define CONVERT_META_H

#include <stdbool.h>

#include "model.h"

/* True for a folder with params.json. */
bool meta_detect(const char *dir);

int meta_open(const char *dir, src_model *m, gguf_error *err);

#endif
