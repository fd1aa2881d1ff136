/*
 * types.h — the table of ggml tensor types (ids 0..38) and GGUF value types.
 *
 * Every size computation in ggufkit goes through this table. Ids that ggml
 * removed (4, 5, 31..33, 36..38) are present but marked invalid, so a file
 * that uses them is rejected by name rather than as "unknown". Not for:
 * encoding or decoding blocks (see the codecs).
 */
#ifndef GGUF_TYPES_H
#define GGUF_TYPES_H

#include <stdbool.h>
#include <stdint.h>

/* ggml tensor type ids as stored in GGUF tensor infos. */
enum ggml_type_id {
    GGML_T_F32 = 0, GGML_T_F16 = 1, GGML_T_Q4_0 = 2, GGML_T_Q4_1 = 3,
    GGML_T_Q5_0 = 6, GGML_T_Q5_1 = 7, GGML_T_Q8_0 = 8, GGML_T_Q8_1 = 9,
    GGML_T_Q2_K = 10, GGML_T_Q3_K = 11, GGML_T_Q4_K = 12, GGML_T_Q5_K = 13,
    GGML_T_Q6_K = 14, GGML_T_Q8_K = 15, GGML_T_IQ2_XXS = 16,
    GGML_T_IQ2_XS = 17, GGML_T_IQ3_XXS = 18, GGML_T_IQ1_S = 19,
    GGML_T_IQ4_NL = 20, GGML_T_IQ3_S = 21, GGML_T_IQ2_S = 22,
    GGML_T_IQ4_XS = 23, GGML_T_I8 = 24, GGML_T_I16 = 25, GGML_T_I32 = 26,
    GGML_T_I64 = 27, GGML_T_F64 = 28, GGML_T_IQ1_M = 29, GGML_T_BF16 = 30,
    GGML_T_TQ1_0 = 34, GGML_T_TQ2_0 = 35,
    GGML_T_COUNT = 39 /* one past the largest id ggml knows */
};

typedef struct ggml_type_traits {
    const char *name;      /* as llama.cpp prints it: "f32", "q4_K", "iq2_xxs" */
    uint32_t    blck_size; /* elements per block (1 for plain types) */
    uint32_t    type_size; /* bytes per block */
    bool        valid;     /* false for removed ids: name says what it was */
    bool        is_float;  /* f32, f16, bf16, f64: scanned for NaN/Inf */
} ggml_type_traits;

/* Traits of type id `type`, or NULL when type >= GGML_T_COUNT. Removed ids
 * return traits with valid == false. */
const ggml_type_traits *ggml_type_get(uint32_t type);

/* Name of a type id ("q4_K"); "unknown" for ids out of range. */
const char *ggml_type_name(uint32_t type);

/* Looks a type up by name, case-insensitively ("Q4_K" finds q4_K). Returns
 * the id, or -1 when no valid type has that name. */
int ggml_type_from_name(const char *name);

/* Bytes of one row of n elements of `type`, into *out. Returns 0, or -1 when
 * the type is invalid, n is not a multiple of the block size, or the size
 * overflows. */
int ggml_row_size(uint32_t type, int64_t n, uint64_t *out);

/* GGUF metadata value types (the 13 of the spec). */
enum gguf_vtype {
    GGUF_VT_U8 = 0, GGUF_VT_I8 = 1, GGUF_VT_U16 = 2, GGUF_VT_I16 = 3,
    GGUF_VT_U32 = 4, GGUF_VT_I32 = 5, GGUF_VT_F32 = 6, GGUF_VT_BOOL = 7,
    GGUF_VT_STR = 8, GGUF_VT_ARR = 9, GGUF_VT_U64 = 10, GGUF_VT_I64 = 11,
    GGUF_VT_F64 = 12,
    GGUF_VT_COUNT = 13
};

/* Short name of a value type: "u8", "i32", "f32", "bool", "str", "arr". */
const char *gguf_vtype_name(uint32_t vtype);

/* Bytes of one element of a fixed-size value type; 0 for str, arr and
 * out-of-range ids. */
uint32_t gguf_vtype_size(uint32_t vtype);

#endif
