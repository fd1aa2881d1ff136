/*
 * types.c — the ggml type table and the GGUF value-type table.
 *
 * Sizes are those of ggml-common.h's block structs; tests check each against
 * the fixture files.
 */
#include <ggufkit/gguf.h>

#include <inttypes.h>

#include <strings.h>
#include <string.h>

#define T(id, nm, bs, ts, fl) [id] = { nm, bs, ts, true, fl }
#define REMOVED(id, nm)       [id] = { nm, 0, 0, false, false }

static const gguf_dtype_traits type_table[GGUF_DT_COUNT] = {
    T(GGUF_DT_F32, "f32", 1, 4, true),
    T(GGUF_DT_F16, "f16", 1, 2, true),
    T(GGUF_DT_Q4_0, "q4_0", 32, 18, false),
    T(GGUF_DT_Q4_1, "q4_1", 32, 20, false),
    REMOVED(4, "q4_2 (removed)"),
    REMOVED(5, "q4_3 (removed)"),
    T(GGUF_DT_Q5_0, "q5_0", 32, 22, false),
    T(GGUF_DT_Q5_1, "q5_1", 32, 24, false),
    T(GGUF_DT_Q8_0, "q8_0", 32, 34, false),
    T(GGUF_DT_Q8_1, "q8_1", 32, 36, false),
    T(GGUF_DT_Q2_K, "q2_K", 256, 84, false),
    T(GGUF_DT_Q3_K, "q3_K", 256, 110, false),
    T(GGUF_DT_Q4_K, "q4_K", 256, 144, false),
    T(GGUF_DT_Q5_K, "q5_K", 256, 176, false),
    T(GGUF_DT_Q6_K, "q6_K", 256, 210, false),
    T(GGUF_DT_Q8_K, "q8_K", 256, 292, false),
    T(GGUF_DT_IQ2_XXS, "iq2_xxs", 256, 66, false),
    T(GGUF_DT_IQ2_XS, "iq2_xs", 256, 74, false),
    T(GGUF_DT_IQ3_XXS, "iq3_xxs", 256, 98, false),
    T(GGUF_DT_IQ1_S, "iq1_s", 256, 50, false),
    T(GGUF_DT_IQ4_NL, "iq4_nl", 32, 18, false),
    T(GGUF_DT_IQ3_S, "iq3_s", 256, 110, false),
    T(GGUF_DT_IQ2_S, "iq2_s", 256, 82, false),
    T(GGUF_DT_IQ4_XS, "iq4_xs", 256, 136, false),
    T(GGUF_DT_I8, "i8", 1, 1, false),
    T(GGUF_DT_I16, "i16", 1, 2, false),
    T(GGUF_DT_I32, "i32", 1, 4, false),
    T(GGUF_DT_I64, "i64", 1, 8, false),
    T(GGUF_DT_F64, "f64", 1, 8, true),
    T(GGUF_DT_IQ1_M, "iq1_m", 256, 56, false),
    T(GGUF_DT_BF16, "bf16", 1, 2, true),
    REMOVED(31, "q4_0_4_4 (removed)"),
    REMOVED(32, "q4_0_4_8 (removed)"),
    REMOVED(33, "q4_0_8_8 (removed)"),
    T(GGUF_DT_TQ1_0, "tq1_0", 256, 54, false),
    T(GGUF_DT_TQ2_0, "tq2_0", 256, 66, false),
    REMOVED(36, "iq4_nl_4_4 (removed)"),
    REMOVED(37, "iq4_nl_4_8 (removed)"),
    REMOVED(38, "iq4_nl_8_8 (removed)"),
    T(GGUF_DT_MXFP4, "mxfp4", 32, 17, false),
    T(GGUF_DT_NVFP4, "nvfp4", 64, 36, false),
    T(GGUF_DT_Q1_0, "q1_0", 128, 18, false),
};

const gguf_dtype_traits *gguf_dtype_get(uint32_t type)
{
    return type < GGUF_DT_COUNT ? &type_table[type] : NULL;
}

const char *gguf_dtype_name(uint32_t type)
{
    return type < GGUF_DT_COUNT ? type_table[type].name : "unknown";
}

int gguf_dtype_from_name(const char *name)
{
    for (uint32_t i = 0; i < GGUF_DT_COUNT; i++) {
        const gguf_dtype_traits *t = &type_table[i];
        if (t->valid && strcasecmp(t->name, name) == 0)
            return (int)i;
    }
    return -1;
}

int gguf_row_size(uint32_t type, int64_t n, uint64_t *out, gguf_error *err)
{
    const gguf_dtype_traits *t = gguf_dtype_get(type);
    if (!t || !t->valid)
        return gguf_error_setc(err, GGUF_ERR_UNSUPPORTED, "type id %" PRIu32 " (%s) has no size",
                               type, gguf_dtype_name(type));
    if (n < 0 || n % t->blck_size != 0)
        return gguf_error_setc(err, GGUF_ERR_ARG, "%" PRId64 " elements are not whole %s blocks "
                               "of %" PRIu32, n, t->name, t->blck_size);
    uint64_t blocks = (uint64_t)n / t->blck_size;
    if (blocks > UINT64_MAX / t->type_size)
        return gguf_error_setc(err, GGUF_ERR_LIMIT, "%" PRId64 " elements of %s: size overflows",
                               n, t->name);
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
