/*
 * types.c — the ggml type table and the GGUF value-type table.
 *
 * Sizes are those of ggml-common.h's block structs; tests check each against
 * the fixture files.
 */
#include "types.h"

#include <strings.h>
#include <string.h>

#define T(id, nm, bs, ts, fl) [id] = { nm, bs, ts, true, fl }
#define REMOVED(id, nm)       [id] = { nm, 0, 0, false, false }

static const ggml_type_traits type_table[GGML_T_COUNT] = {
    T(GGML_T_F32, "f32", 1, 4, true),
    T(GGML_T_F16, "f16", 1, 2, true),
    T(GGML_T_Q4_0, "q4_0", 32, 18, false),
    T(GGML_T_Q4_1, "q4_1", 32, 20, false),
    REMOVED(4, "q4_2 (removed)"),
    REMOVED(5, "q4_3 (removed)"),
    T(GGML_T_Q5_0, "q5_0", 32, 22, false),
    T(GGML_T_Q5_1, "q5_1", 32, 24, false),
    T(GGML_T_Q8_0, "q8_0", 32, 34, false),
    T(GGML_T_Q8_1, "q8_1", 32, 36, false),
    T(GGML_T_Q2_K, "q2_K", 256, 84, false),
    T(GGML_T_Q3_K, "q3_K", 256, 110, false),
    T(GGML_T_Q4_K, "q4_K", 256, 144, false),
    T(GGML_T_Q5_K, "q5_K", 256, 176, false),
    T(GGML_T_Q6_K, "q6_K", 256, 210, false),
    T(GGML_T_Q8_K, "q8_K", 256, 292, false),
    T(GGML_T_IQ2_XXS, "iq2_xxs", 256, 66, false),
    T(GGML_T_IQ2_XS, "iq2_xs", 256, 74, false),
    T(GGML_T_IQ3_XXS, "iq3_xxs", 256, 98, false),
    T(GGML_T_IQ1_S, "iq1_s", 256, 50, false),
    T(GGML_T_IQ4_NL, "iq4_nl", 32, 18, false),
    T(GGML_T_IQ3_S, "iq3_s", 256, 110, false),
    T(GGML_T_IQ2_S, "iq2_s", 256, 82, false),
    T(GGML_T_IQ4_XS, "iq4_xs", 256, 136, false),
    T(GGML_T_I8, "i8", 1, 1, false),
    T(GGML_T_I16, "i16", 1, 2, false),
    T(GGML_T_I32, "i32", 1, 4, false),
    T(GGML_T_I64, "i64", 1, 8, false),
    T(GGML_T_F64, "f64", 1, 8, true),
    T(GGML_T_IQ1_M, "iq1_m", 256, 56, false),
    T(GGML_T_BF16, "bf16", 1, 2, true),
    REMOVED(31, "q4_0_4_4 (removed)"),
    REMOVED(32, "q4_0_4_8 (removed)"),
    REMOVED(33, "q4_0_8_8 (removed)"),
    T(GGML_T_TQ1_0, "tq1_0", 256, 54, false),
    T(GGML_T_TQ2_0, "tq2_0", 256, 66, false),
    REMOVED(36, "iq4_nl_4_4 (removed)"),
    REMOVED(37, "iq4_nl_4_8 (removed)"),
    REMOVED(38, "iq4_nl_8_8 (removed)"),
};

const ggml_type_traits *ggml_type_get(uint32_t type)
{
    return type < GGML_T_COUNT ? &type_table[type] : NULL;
}

const char *ggml_type_name(uint32_t type)
{
    return type < GGML_T_COUNT ? type_table[type].name : "unknown";
}

int ggml_type_from_name(const char *name)
{
    for (uint32_t i = 0; i < GGML_T_COUNT; i++) {
        const ggml_type_traits *t = &type_table[i];
        if (t->valid && strcasecmp(t->name, name) == 0)
            return (int)i;
    }
    return -1;
}

int ggml_row_size(uint32_t type, int64_t n, uint64_t *out)
{
    const ggml_type_traits *t = ggml_type_get(type);
    if (!t || !t->valid || n < 0 || n % t->blck_size != 0)
        return -1;
    uint64_t blocks = (uint64_t)n / t->blck_size;
    if (blocks > UINT64_MAX / t->type_size)
        return -1;
    *out = blocks * t->type_size;
    return 0;
}

static const struct { const char *name; uint32_t size; } vtype_table[GGUF_VT_COUNT] = {
    [GGUF_VT_U8] = { "u8", 1 },   [GGUF_VT_I8] = { "i8", 1 },
    [GGUF_VT_U16] = { "u16", 2 }, [GGUF_VT_I16] = { "i16", 2 },
    [GGUF_VT_U32] = { "u32", 4 }, [GGUF_VT_I32] = { "i32", 4 },
    [GGUF_VT_F32] = { "f32", 4 }, [GGUF_VT_BOOL] = { "bool", 1 },
    [GGUF_VT_STR] = { "str", 0 }, [GGUF_VT_ARR] = { "arr", 0 },
    [GGUF_VT_U64] = { "u64", 8 }, [GGUF_VT_I64] = { "i64", 8 },
    [GGUF_VT_F64] = { "f64", 8 },
};

const char *gguf_vtype_name(uint32_t vtype)
{
    return vtype < GGUF_VT_COUNT ? vtype_table[vtype].name : "invalid";
}

uint32_t gguf_vtype_size(uint32_t vtype)
{
    return vtype < GGUF_VT_COUNT ? vtype_table[vtype].size : 0;
}
