/*
 * mmproj.h — gguf-convert --mmproj: the vision tower and projector of a
 * multimodal Hugging Face checkpoint as the "clip" GGUF llama.cpp's
 * multimodal tools load beside the text model (llama-mtmd-cli,
 * llama-server --mmproj), as llama.cpp e21cdc11's convert_hf_to_gguf.py
 * --mmproj writes it.
 *
 * Families: Gemma 3 (Gemma3ForConditionalGeneration, projector "gemma3"),
 * Qwen 3.5 and 3.5 MoE (Qwen3_5ForConditionalGeneration,
 * Qwen3_5MoeForConditionalGeneration, "qwen3vl_merger"), Gemma 4
 * (Gemma4ForConditionalGeneration: vision "gemma4v" and, with an
 * audio_config, audio "gemma4a" in the same file), Mistral Small 3.1
 * (Mistral3ForConditionalGeneration, "pixtral"). Any other checkpoint
 * with a vision_config is refused by name.
 */
#ifndef CONVERT_MMPROJ_H
#define CONVERT_MMPROJ_H

#include "model.h"

/* Opens DIR's vision tower and projector as a src_model whose writer
 * writes general.architecture "clip", general.type "mmproj" and the clip.*
 * keys. 0, or -1 with err (naming the file at fault). */
int mmproj_open(const char *dir, src_model *m, gguf_error *err);

#endif
