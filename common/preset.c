/*
 * preset.c — the preset table (names and numbers as llama-quantize's).
 */
#include "preset.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ggufkit/gguf.h>

static const preset presets[] = {
    { "Q4_0",   GGUF_FT_Q4_0,   GGUF_DT_Q4_0, "4.5 bpw, legacy 4-bit with scale", false },
    { "Q4_1",   GGUF_FT_Q4_1,   GGUF_DT_Q4_1, "5.0 bpw, legacy 4-bit with scale and min", false },
    { "MXFP4_MOE", GGUF_FT_MXFP4_MOE, GGUF_DT_MXFP4, "MXFP4 experts, q8_0 elsewhere", false },
    { "Q5_0",   GGUF_FT_Q5_0,   GGUF_DT_Q5_0, "5.5 bpw, legacy 5-bit with scale", false },
    { "Q5_1",   GGUF_FT_Q5_1,   GGUF_DT_Q5_1, "6.0 bpw, legacy 5-bit with scale and min", false },
    { "IQ2_XXS", GGUF_FT_IQ2_XXS, GGUF_DT_IQ2_XXS, "2.06 bpw quantization (needs an imatrix)", false },
    { "IQ2_XS", GGUF_FT_IQ2_XS, GGUF_DT_IQ2_XS, "2.31 bpw quantization (needs an imatrix)", false },
    { "IQ2_S",  GGUF_FT_IQ2_S,  GGUF_DT_IQ2_XS, "2.5  bpw quantization (needs an imatrix)", false },
    { "IQ2_M",  GGUF_FT_IQ2_M,  GGUF_DT_IQ2_S, "2.7  bpw quantization (needs an imatrix)", false },
    { "IQ1_S",  GGUF_FT_IQ1_S,  GGUF_DT_IQ1_S, "1.56 bpw quantization (needs an imatrix)", false },
    { "IQ1_M",  GGUF_FT_IQ1_M,  GGUF_DT_IQ1_M, "1.75 bpw quantization (needs an imatrix)", false },
    { "Q2_K",   GGUF_FT_Q2_K,   GGUF_DT_Q2_K, "2-bit k-quant mix", false },
    { "Q2_K_S", GGUF_FT_Q2_K_S, GGUF_DT_Q2_K, "2-bit k-quant, small (needs an imatrix)", false },
    { "IQ3_XXS", GGUF_FT_IQ3_XXS, GGUF_DT_IQ3_XXS, "3.06 bpw quantization (needs an imatrix)", false },
    { "IQ3_S",  GGUF_FT_IQ3_S,  GGUF_DT_IQ3_S, "3.44 bpw quantization", false },
    { "IQ3_M",  GGUF_FT_IQ3_M,  GGUF_DT_IQ3_S, "3.66 bpw quantization mix", false },
    { "IQ3_XS", GGUF_FT_IQ3_XS, GGUF_DT_IQ3_S, "3.3 bpw quantization", false },
    { "Q3_K",   GGUF_FT_Q3_K_M, GGUF_DT_Q3_K, "alias for Q3_K_M", false },
    { "Q3_K_S", GGUF_FT_Q3_K_S, GGUF_DT_Q3_K, "3-bit k-quant, small", false },
    { "Q3_K_M", GGUF_FT_Q3_K_M, GGUF_DT_Q3_K, "3-bit k-quant mix, medium", false },
    { "Q3_K_L", GGUF_FT_Q3_K_L, GGUF_DT_Q3_K, "3-bit k-quant mix, large", false },
    { "Q4_K",   GGUF_FT_Q4_K_M, GGUF_DT_Q4_K, "alias for Q4_K_M", false },
    { "Q4_K_S", GGUF_FT_Q4_K_S, GGUF_DT_Q4_K, "4-bit k-quant, small", false },
    { "Q4_K_M", GGUF_FT_Q4_K_M, GGUF_DT_Q4_K, "4-bit k-quant mix, medium", false },
    { "Q5_K",   GGUF_FT_Q5_K_M, GGUF_DT_Q5_K, "alias for Q5_K_M", false },
    { "Q5_K_S", GGUF_FT_Q5_K_S, GGUF_DT_Q5_K, "5-bit k-quant, small", false },
    { "Q5_K_M", GGUF_FT_Q5_K_M, GGUF_DT_Q5_K, "5-bit k-quant mix, medium", false },
    { "Q6_K",   GGUF_FT_Q6_K,   GGUF_DT_Q6_K, "6.56 bpw k-quant", false },
    { "Q8_0",   GGUF_FT_Q8_0,   GGUF_DT_Q8_0, "8.5 bpw", false },
    { "IQ4_NL", GGUF_FT_IQ4_NL, GGUF_DT_IQ4_NL, "4.50 bpw non-linear quantization", false },
    { "IQ4_XS", GGUF_FT_IQ4_XS, GGUF_DT_IQ4_XS, "4.25 bpw non-linear quantization", false },
    { "TQ1_0",  GGUF_FT_TQ1_0,  GGUF_DT_TQ1_0, "1.69 bpw ternarization", false },
    { "TQ2_0",  GGUF_FT_TQ2_0,  GGUF_DT_TQ2_0, "2.06 bpw ternarization", false },
    { "F16",    GGUF_FT_F16,    GGUF_DT_F16,  "16-bit IEEE half", false },
    { "BF16",   GGUF_FT_BF16,   GGUF_DT_BF16, "16-bit bfloat", false },
    { "F32",    GGUF_FT_ALL_F32, GGUF_DT_F32, "32-bit float", false },
    /* after F32: ftype 0 finds F32 */
    { "COPY",   GGUF_FT_ALL_F32, GGUF_DT_F32, "only copy tensors, no quantizing", true },
};
#define N_PRESETS (sizeof presets / sizeof *presets)

/* Canonical preset of an ftype number, or NULL. */
static const preset *preset_by_ftype(int ftype)
{
    for (size_t i = 0; i < N_PRESETS; i++)
        if (presets[i].ftype == ftype && strstr(presets[i].desc, "alias") == NULL && !presets[i].copy)
            return &presets[i];
    return NULL;
}

const preset *preset_find(const char *s)
{
    for (size_t i = 0; i < N_PRESETS; i++)
        if (strcasecmp(presets[i].name, s) == 0)
            return &presets[i];
    char *end;
    long n = strtol(s, &end, 10);
    if (*s && !*end)
        return preset_by_ftype((int)n);
    return NULL;
}

void preset_list(FILE *out)
{
    for (size_t i = 0; i < N_PRESETS; i++)
        fprintf(out, "  %2d  or  %-7s : %s\n", presets[i].ftype, presets[i].name, presets[i].desc);
}
