/*
 * preset.c — the preset table (names and numbers as llama-quantize's).
 */
#include "preset.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ggufkit/gguf.h>

static const preset presets[] = {
    { "Q4_0",   FT_Q4_0,   GGUF_DT_Q4_0, "4.5 bpw, legacy 4-bit with scale" },
    { "Q4_1",   FT_Q4_1,   GGUF_DT_Q4_1, "5.0 bpw, legacy 4-bit with scale and min" },
    { "Q5_0",   FT_Q5_0,   GGUF_DT_Q5_0, "5.5 bpw, legacy 5-bit with scale" },
    { "Q5_1",   FT_Q5_1,   GGUF_DT_Q5_1, "6.0 bpw, legacy 5-bit with scale and min" },
    { "Q2_K",   FT_Q2_K,   GGUF_DT_Q2_K, "2-bit k-quant mix" },
    { "Q3_K",   FT_Q3_K_M, GGUF_DT_Q3_K, "alias for Q3_K_M" },
    { "Q3_K_S", FT_Q3_K_S, GGUF_DT_Q3_K, "3-bit k-quant, small" },
    { "Q3_K_M", FT_Q3_K_M, GGUF_DT_Q3_K, "3-bit k-quant mix, medium" },
    { "Q3_K_L", FT_Q3_K_L, GGUF_DT_Q3_K, "3-bit k-quant mix, large" },
    { "Q4_K",   FT_Q4_K_M, GGUF_DT_Q4_K, "alias for Q4_K_M" },
    { "Q4_K_S", FT_Q4_K_S, GGUF_DT_Q4_K, "4-bit k-quant, small" },
    { "Q4_K_M", FT_Q4_K_M, GGUF_DT_Q4_K, "4-bit k-quant mix, medium" },
    { "Q5_K",   FT_Q5_K_M, GGUF_DT_Q5_K, "alias for Q5_K_M" },
    { "Q5_K_S", FT_Q5_K_S, GGUF_DT_Q5_K, "5-bit k-quant, small" },
    { "Q5_K_M", FT_Q5_K_M, GGUF_DT_Q5_K, "5-bit k-quant mix, medium" },
    { "Q6_K",   FT_Q6_K,   GGUF_DT_Q6_K, "6.56 bpw k-quant" },
    { "Q8_0",   FT_Q8_0,   GGUF_DT_Q8_0, "8.5 bpw" },
    { "IQ4_NL", FT_IQ4_NL, GGUF_DT_IQ4_NL, "4.50 bpw non-linear quantization" },
    { "IQ4_XS", FT_IQ4_XS, GGUF_DT_IQ4_XS, "4.25 bpw non-linear quantization" },
    { "TQ1_0",  FT_TQ1_0,  GGUF_DT_TQ1_0, "1.69 bpw ternarization" },
    { "TQ2_0",  FT_TQ2_0,  GGUF_DT_TQ2_0, "2.06 bpw ternarization" },
    { "F16",    FT_F16,    GGUF_DT_F16,  "16-bit IEEE half" },
    { "BF16",   FT_BF16,   GGUF_DT_BF16, "16-bit bfloat" },
    { "F32",    FT_ALL_F32, GGUF_DT_F32, "32-bit float" },
};
#define N_PRESETS (sizeof presets / sizeof *presets)

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

const preset *preset_by_ftype(int ftype)
{
    for (size_t i = 0; i < N_PRESETS; i++)
        if (presets[i].ftype == ftype && strstr(presets[i].desc, "alias") == NULL)
            return &presets[i];
    return NULL;
}

void preset_list(FILE *out)
{
    for (size_t i = 0; i < N_PRESETS; i++)
        fprintf(out, "  %2d  or  %-7s : %s\n", presets[i].ftype, presets[i].name, presets[i].desc);
}
