/*
 * preset.h — the quantization presets of llama-quantize (llama_ftype).
 *
 * A preset has a name (Q4_K_M), llama.cpp's ftype number (written to
 * general.file_type) and the default tensor type its mix starts from.
 */
#ifndef QUANTIZE_PRESET_H
#define QUANTIZE_PRESET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* llama.cpp's llama_ftype numbers for the presets we implement. */
enum ftype {
    FT_ALL_F32 = 0, FT_F16 = 1, FT_Q4_0 = 2, FT_Q4_1 = 3, FT_Q8_0 = 7, FT_Q5_0 = 8,
    FT_Q5_1 = 9, FT_Q2_K = 10, FT_Q3_K_S = 11, FT_Q3_K_M = 12, FT_Q3_K_L = 13,
    FT_Q4_K_S = 14, FT_Q4_K_M = 15, FT_Q5_K_S = 16, FT_Q5_K_M = 17, FT_Q6_K = 18,
    FT_IQ2_XXS = 19, FT_IQ2_XS = 20, FT_Q2_K_S = 21, FT_IQ3_XS = 22, FT_IQ3_XXS = 23,
    FT_IQ1_S = 24, FT_IQ4_NL = 25, FT_IQ3_S = 26, FT_IQ3_M = 27, FT_IQ2_S = 28, FT_IQ2_M = 29,
    FT_IQ4_XS = 30, FT_IQ1_M = 31, FT_BF16 = 32, FT_TQ1_0 = 36, FT_TQ2_0 = 37,
    FT_MXFP4_MOE = 38
};

typedef struct preset {
    const char *name;
    int         ftype;        /* enum ftype */
    uint32_t    default_type; /* ggml type id */
    const char *desc;
    bool        copy;         /* COPY: tensors copied as they are */
} preset;

/* By name (case-insensitive; aliases Q3_K, Q4_K, Q5_K included) or by
 * ftype number; NULL when unknown. */
const preset *preset_find(const char *name_or_number);

/* Canonical preset of an ftype number, or NULL. */
const preset *preset_by_ftype(int ftype);

/* Prints the table for --help. */
void preset_list(FILE *out);

#endif
