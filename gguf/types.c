/*
 * types.c — the ggml type table and the GGUF value-type table.
 *
 * One row per ggml type id holds every fact about the type that is not
 * code: its name, block size and bytes (from the block struct of quants.h
 * where it has one), llama.cpp's fallback for rows that do not fit its
 * blocks, the file type of a file mostly of it, and where its blocks keep
 * floats (gguf-inspect --check scans those for NaN and Inf). A row must
 * state each of them: the macros take them all, and tests/unit/test_types.c
 * checks the table's invariants (a new id without a row fails there).
 * Codecs are in quants.c's table, by the same ids.
 */
#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include <stdlib.h>
#include <strings.h>
#include <string.h>

typedef struct type_row {
    gguf_dtype_traits pub;
    int8_t            fallback;  /* gguf_dtype_fallback: a type id, or -1 */
    int8_t            file_type; /* gguf_dtype_file_type: enum gguf_file_type, or -1 */
    uint8_t           n_scales;
    gguf_scale_field  scales[GGUF_MAX_SCALE_FIELDS];
} type_row;

/* What a row says about its floats. */
#define NO_FLOATS 0, { { 0, 0 } }
#define ONE(kind, off) 1, { { GGUF_SCALE_##kind, off } }
#define TWO(kind, off0, off1) 2, { { GGUF_SCALE_##kind, off0 }, { GGUF_SCALE_##kind, off1 } }
/* The f16 scale d at the start of the block (most formats). */
#define D_AT(st) ONE(F16, offsetof(st, d))

/* A plain type (one element a block), a block type with its struct, a
 * block type without one here, and an id ggml removed. */
#define PLAIN(id, nm, ts, fl, ft, sc) [id] = { { nm, 1, ts, true, fl }, -1, ft, sc }
#define BLOCK(id, nm, qk, st, fb, ft, sc) [id] = { { nm, qk, sizeof(st), true, false }, fb, ft, sc }
#define REMOVED(id, nm) [id] = { { nm, 0, 0, false, false }, -1, -1, NO_FLOATS }
#define NONE (-1)

static const type_row type_table[GGUF_DT_COUNT] = {
    PLAIN(GGUF_DT_F32, "f32", 4, true, GGUF_FT_ALL_F32, ONE(F32, 0)),
    PLAIN(GGUF_DT_F16, "f16", 2, true, GGUF_FT_F16, ONE(F16, 0)),
    BLOCK(GGUF_DT_Q4_0, "q4_0", GGUF_QK4_0, gguf_block_q4_0, NONE, GGUF_FT_Q4_0,
          D_AT(gguf_block_q4_0)),
    BLOCK(GGUF_DT_Q4_1, "q4_1", GGUF_QK4_1, gguf_block_q4_1, NONE, GGUF_FT_Q4_1,
          TWO(F16, offsetof(gguf_block_q4_1, d), offsetof(gguf_block_q4_1, m))),
    REMOVED(4, "q4_2 (removed)"),
    REMOVED(5, "q4_3 (removed)"),
    BLOCK(GGUF_DT_Q5_0, "q5_0", GGUF_QK5_0, gguf_block_q5_0, NONE, GGUF_FT_Q5_0,
          D_AT(gguf_block_q5_0)),
    BLOCK(GGUF_DT_Q5_1, "q5_1", GGUF_QK5_1, gguf_block_q5_1, NONE, GGUF_FT_Q5_1,
          TWO(F16, offsetof(gguf_block_q5_1, d), offsetof(gguf_block_q5_1, m))),
    BLOCK(GGUF_DT_Q8_0, "q8_0", GGUF_QK8_0, gguf_block_q8_0, NONE, GGUF_FT_Q8_0,
          D_AT(gguf_block_q8_0)),
    BLOCK(GGUF_DT_Q8_1, "q8_1", GGUF_QK8_1, gguf_block_q8_1, NONE, NONE,
          TWO(F16, offsetof(gguf_block_q8_1, d), offsetof(gguf_block_q8_1, s))),
    BLOCK(GGUF_DT_Q2_K, "q2_K", GGUF_QK_K, gguf_block_q2_K, GGUF_DT_Q4_0, GGUF_FT_Q2_K,
          TWO(F16, offsetof(gguf_block_q2_K, d), offsetof(gguf_block_q2_K, dmin))),
    BLOCK(GGUF_DT_Q3_K, "q3_K", GGUF_QK_K, gguf_block_q3_K, GGUF_DT_Q4_0, GGUF_FT_Q3_K_M,
          D_AT(gguf_block_q3_K)),
    BLOCK(GGUF_DT_Q4_K, "q4_K", GGUF_QK_K, gguf_block_q4_K, GGUF_DT_Q5_0, GGUF_FT_Q4_K_M,
          TWO(F16, offsetof(gguf_block_q4_K, d), offsetof(gguf_block_q4_K, dmin))),
    BLOCK(GGUF_DT_Q5_K, "q5_K", GGUF_QK_K, gguf_block_q5_K, GGUF_DT_Q5_1, GGUF_FT_Q5_K_M,
          TWO(F16, offsetof(gguf_block_q5_K, d), offsetof(gguf_block_q5_K, dmin))),
    BLOCK(GGUF_DT_Q6_K, "q6_K", GGUF_QK_K, gguf_block_q6_K, GGUF_DT_Q8_0, GGUF_FT_Q6_K,
          D_AT(gguf_block_q6_K)),
    BLOCK(GGUF_DT_Q8_K, "q8_K", GGUF_QK_K, gguf_block_q8_K, NONE, NONE,
          ONE(F32, offsetof(gguf_block_q8_K, d))),
    BLOCK(GGUF_DT_IQ2_XXS, "iq2_xxs", GGUF_QK_K, gguf_block_iq2_xxs, GGUF_DT_IQ4_NL,
          GGUF_FT_IQ2_XXS, D_AT(gguf_block_iq2_xxs)),
    BLOCK(GGUF_DT_IQ2_XS, "iq2_xs", GGUF_QK_K, gguf_block_iq2_xs, GGUF_DT_IQ4_NL,
          GGUF_FT_IQ2_XS, D_AT(gguf_block_iq2_xs)),
    BLOCK(GGUF_DT_IQ3_XXS, "iq3_xxs", GGUF_QK_K, gguf_block_iq3_xxs, GGUF_DT_IQ4_NL,
          GGUF_FT_IQ3_XXS, D_AT(gguf_block_iq3_xxs)),
    BLOCK(GGUF_DT_IQ1_S, "iq1_s", GGUF_QK_K, gguf_block_iq1_s, GGUF_DT_IQ4_NL, GGUF_FT_IQ1_S,
          D_AT(gguf_block_iq1_s)),
    BLOCK(GGUF_DT_IQ4_NL, "iq4_nl", GGUF_QK4_NL, gguf_block_iq4_nl, NONE, GGUF_FT_IQ4_NL,
          D_AT(gguf_block_iq4_nl)),
    BLOCK(GGUF_DT_IQ3_S, "iq3_s", GGUF_QK_K, gguf_block_iq3_s, GGUF_DT_IQ4_NL, GGUF_FT_IQ3_S,
          D_AT(gguf_block_iq3_s)),
    BLOCK(GGUF_DT_IQ2_S, "iq2_s", GGUF_QK_K, gguf_block_iq2_s, GGUF_DT_IQ4_NL, GGUF_FT_IQ2_S,
          D_AT(gguf_block_iq2_s)),
    BLOCK(GGUF_DT_IQ4_XS, "iq4_xs", GGUF_QK_K, gguf_block_iq4_xs, GGUF_DT_IQ4_NL, GGUF_FT_IQ4_XS,
          D_AT(gguf_block_iq4_xs)),
    PLAIN(GGUF_DT_I8, "i8", 1, false, NONE, NO_FLOATS),
    PLAIN(GGUF_DT_I16, "i16", 2, false, NONE, NO_FLOATS),
    PLAIN(GGUF_DT_I32, "i32", 4, false, NONE, NO_FLOATS),
    PLAIN(GGUF_DT_I64, "i64", 8, false, NONE, NO_FLOATS),
    PLAIN(GGUF_DT_F64, "f64", 8, true, NONE, ONE(F64, 0)),
    BLOCK(GGUF_DT_IQ1_M, "iq1_m", GGUF_QK_K, gguf_block_iq1_m, GGUF_DT_IQ4_NL, GGUF_FT_IQ1_M,
          ONE(IQ1_M, offsetof(gguf_block_iq1_m, scales))),
    PLAIN(GGUF_DT_BF16, "bf16", 2, true, GGUF_FT_BF16, ONE(BF16, 0)),
    REMOVED(31, "q4_0_4_4 (removed)"),
    REMOVED(32, "q4_0_4_8 (removed)"),
    REMOVED(33, "q4_0_8_8 (removed)"),
    BLOCK(GGUF_DT_TQ1_0, "tq1_0", GGUF_QK_K, gguf_block_tq1_0, GGUF_DT_Q4_0, GGUF_FT_TQ1_0,
          D_AT(gguf_block_tq1_0)),
    BLOCK(GGUF_DT_TQ2_0, "tq2_0", GGUF_QK_K, gguf_block_tq2_0, GGUF_DT_Q4_0, GGUF_FT_TQ2_0,
          D_AT(gguf_block_tq2_0)),
    REMOVED(36, "iq4_nl_4_4 (removed)"),
    REMOVED(37, "iq4_nl_4_8 (removed)"),
    REMOVED(38, "iq4_nl_8_8 (removed)"),
    BLOCK(GGUF_DT_MXFP4, "mxfp4", GGUF_QK_MXFP4, gguf_block_mxfp4, NONE, GGUF_FT_MXFP4_MOE,
          ONE(E8M0, offsetof(gguf_block_mxfp4, e))),
    /* UE4M3 scales: ggml decodes every byte to a finite value (0x7f as 0) */
    BLOCK(GGUF_DT_NVFP4, "nvfp4", GGUF_QK_NVFP4, gguf_block_nvfp4, NONE, GGUF_FT_NVFP4, NO_FLOATS),
    BLOCK(GGUF_DT_Q1_0, "q1_0", GGUF_QK1_0, gguf_block_q1_0, NONE, GGUF_FT_Q1_0, D_AT(gguf_block_q1_0)),
};

static const type_row *row_of(uint32_t type)
{
    return type < GGUF_DT_COUNT && type_table[type].pub.valid ? &type_table[type] : NULL;
}

const gguf_dtype_traits *gguf_dtype_get(uint32_t type)
{
    return type < GGUF_DT_COUNT ? &type_table[type].pub : NULL;
}

const char *gguf_dtype_name(uint32_t type)
{
    return type < GGUF_DT_COUNT ? type_table[type].pub.name : "unknown";
}

int gguf_dtype_from_name(const char *name)
{
    for (uint32_t i = 0; i < GGUF_DT_COUNT; i++) {
        const gguf_dtype_traits *t = &type_table[i].pub;
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

int gguf_dtype_fallback(uint32_t type)
{
    const type_row *r = row_of(type);
    return r ? r->fallback : -1;
}

uint32_t gguf_dtype_fit(uint32_t type, int64_t ne0)
{
    uint64_t row;
    if (gguf_row_size(type, ne0, &row, NULL) == 0)
        return type;
    const int fb = gguf_dtype_fallback(type);
    if (fb >= 0 && gguf_row_size((uint32_t)fb, ne0, &row, NULL) == 0)
        return (uint32_t)fb;
    return GGUF_DT_F16;
}

int gguf_dtype_file_type(uint32_t type)
{
    const type_row *r = row_of(type);
    return r ? r->file_type : -1;
}

int gguf_tensor_name_order(const char *a, const char *b)
{
    int la = -1, lb = -1; /* llama.cpp's sscanf(name, "blk.%d.", &layer) */
    sscanf(a, "blk.%d.", &la);
    sscanf(b, "blk.%d.", &lb);
    return la != lb ? (la < lb ? -1 : 1) : strcmp(a, b);
}

static int loader_order(const void *pa, const void *pb)
{
    return gguf_tensor_name_order((*(const gguf_tensor *const *)pa)->name,
                                  (*(const gguf_tensor *const *)pb)->name);
}

int gguf_file_type_of(const gguf_file *f, uint32_t *out, gguf_error *err)
{
    if (gguf_get_u32(f, "general.file_type", out, NULL) == 0)
        return 0;
    const uint64_t n = gguf_n_tensors(f);
    const gguf_tensor **order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory ordering %" PRIu64 " tensors", n);
    for (uint64_t i = 0; i < n; i++)
        order[i] = gguf_tensor_at(f, i);
    qsort(order, (size_t)n, sizeof *order, loader_order);
    /* the type that first reaches the highest count wins (f32 when none) */
    uint64_t count[GGUF_DT_COUNT] = { 0 }, most = 0;
    uint32_t best = GGUF_DT_F32;
    for (uint64_t i = 0; i < n; i++) {
        const uint32_t t = order[i]->type;
        if (t < GGUF_DT_COUNT && ++count[t] > most) {
            most = count[t];
            best = t;
        }
    }
    free(order);
    const int ft = gguf_dtype_file_type(best);
    *out = (ft < 0 ? (uint32_t)GGUF_FT_ALL_F32 : (uint32_t)ft) | GGUF_FT_GUESSED;
    return 0;
}

int gguf_dtype_scales(uint32_t type, gguf_scale_field out[GGUF_MAX_SCALE_FIELDS])
{
    const type_row *r = row_of(type);
    if (!r)
        return -1;
    for (uint8_t k = 0; k < r->n_scales; k++)
        out[k] = r->scales[k];
    return r->n_scales;
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
