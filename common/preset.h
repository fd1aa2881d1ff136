/*
 * preset.h — the quantization presets of llama-quantize (llama_ftype).
 *
 * A preset has a name (Q4_K_M), llama.cpp's ftype number (written to
 * general.file_type; the numbers are libgguf's enum gguf_file_type) and the
 * default tensor type its mix starts from.
 */
#ifndef QUANTIZE_PRESET_H
#define QUANTIZE_PRESET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <ggufkit/gguf.h>

typedef struct preset {
    const char *name;
    int         ftype;        /* enum gguf_file_type (ggufkit/gguf.h) */
    uint32_t    default_type; /* ggml type id */
    const char *desc;
    bool        copy;         /* COPY: tensors copied as they are */
} preset;

/* By name (case-insensitive; aliases Q3_K, Q4_K, Q5_K included) or by
 * ftype number; NULL when unknown. */
const preset *preset_find(const char *name_or_number);


/* Prints the table for --help. */
void preset_list(FILE *out);

#endif
