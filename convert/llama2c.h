/*
 * llama2.c checkpoints (legacy v0 with a shared or separate classifier, v1
 * "ak42" f32, v2 int8 groups) as a src_model, with the vocabulary from
 * --tokenizer: llama2.c's tokenizer.bin or a SentencePiece tokenizer.model.
 */
#ifndef CONVERT_LLAMA2C_H
#define CONVERT_LLAMA2C_H

#include <stdbool.h>

#include "model.h"

/* True for a regular file (a folder is a Hugging Face or Meta model). */
bool llama2c_detect(const char *path);

int llama2c_open(const char *path, const char *tokenizer, src_model *m, gguf_error *err);

#endif
