/*
 * quants.h — ggml's block formats and the row codecs for them.
 *
 * Each block struct is laid out exactly as ggml-common.h's, with its size
 * asserted next to it; a row of n elements is n / block_size consecutive
 * blocks. The plain quantizers produce exactly the bytes of ggml's reference
 * quantizers (quantize_row_*_ref) for the same input, bit for bit; the
 * importance-weighted ones those of ggml's quantize_* with quant_weights;
 * the dequantizers exactly ggml's floats. Tests hold them to the fixture
 * vectors in ../shared/fixtures/vectors.
 *
 * Not for: matrix kernels (the runner owns those) or choosing types per
 * tensor (gguf-quantize).
 */
#ifndef GGUF_QUANTS_H
#define GGUF_QUANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "float16.h"
#include "types.h"

#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK_K  256
#define K_SCALE_SIZE 12

/* --- legacy 32-element blocks ------------------------------------------- */

/* 4-bit, scale only: x = d * (q - 8). */
typedef struct { gguf_half d; uint8_t qs[QK4_0 / 2]; } block_q4_0;
_Static_assert(sizeof(block_q4_0) == 18, "block_q4_0 is 18 bytes");

/* 4-bit, scale and min: x = d * q + m. */
typedef struct { gguf_half d, m; uint8_t qs[QK4_1 / 2]; } block_q4_1;
_Static_assert(sizeof(block_q4_1) == 20, "block_q4_1 is 20 bytes");

/* 5-bit, scale only: low nibbles in qs, fifth bits in qh. */
typedef struct { gguf_half d; uint8_t qh[4]; uint8_t qs[QK5_0 / 2]; } block_q5_0;
_Static_assert(sizeof(block_q5_0) == 22, "block_q5_0 is 22 bytes");

/* 5-bit, scale and min. */
typedef struct { gguf_half d, m; uint8_t qh[4]; uint8_t qs[QK5_1 / 2]; } block_q5_1;
_Static_assert(sizeof(block_q5_1) == 24, "block_q5_1 is 24 bytes");

/* 8-bit, scale only. */
typedef struct { gguf_half d; int8_t qs[QK8_0]; } block_q8_0;
_Static_assert(sizeof(block_q8_0) == 34, "block_q8_0 is 34 bytes");

/* --- k-quants: 256-element super-blocks ----------------------------------- */

/* 2-bit: 16 blocks of 16, 4-bit scales and mins, super-block d and dmin. */
typedef struct {
    uint8_t   scales[QK_K / 16];
    uint8_t   qs[QK_K / 4];
    gguf_half d, dmin;
} block_q2_K;
_Static_assert(sizeof(block_q2_K) == 84, "block_q2_K is 84 bytes");

/* 3-bit: 16 blocks of 16, 6-bit scales, high bits in hmask. */
typedef struct {
    uint8_t   hmask[QK_K / 8];
    uint8_t   qs[QK_K / 4];
    uint8_t   scales[12];
    gguf_half d;
} block_q3_K;
_Static_assert(sizeof(block_q3_K) == 110, "block_q3_K is 110 bytes");

/* 4-bit: 8 blocks of 32, 6-bit scales and mins packed in 12 bytes. */
typedef struct {
    gguf_half d, dmin;
    uint8_t   scales[K_SCALE_SIZE];
    uint8_t   qs[QK_K / 2];
} block_q4_K;
_Static_assert(sizeof(block_q4_K) == 144, "block_q4_K is 144 bytes");

/* 5-bit: as q4_K plus the fifth bits in qh. */
typedef struct {
    gguf_half d, dmin;
    uint8_t   scales[K_SCALE_SIZE];
    uint8_t   qh[QK_K / 8];
    uint8_t   qs[QK_K / 2];
} block_q5_K;
_Static_assert(sizeof(block_q5_K) == 176, "block_q5_K is 176 bytes");

/* 6-bit: 16 blocks of 16, low 4 bits in ql, high 2 in qh, 8-bit scales. */
typedef struct {
    uint8_t   ql[QK_K / 2];
    uint8_t   qh[QK_K / 4];
    int8_t    scales[QK_K / 16];
    gguf_half d;
} block_q6_K;
_Static_assert(sizeof(block_q6_K) == 210, "block_q6_K is 210 bytes");

/* 8-bit activations for k-quant dot products: float scale, block sums. */
typedef struct {
    float   d;
    int8_t  qs[QK_K];
    int16_t bsums[QK_K / 16];
} block_q8_K;
_Static_assert(sizeof(block_q8_K) == 292, "block_q8_K is 292 bytes");

/* --- row codecs --------------------------------------------------------------
 * n (and n_per_row) must be a multiple of the type's block size. */

typedef struct gguf_codec {
    uint32_t type;
    /* ggml's reference quantizer: n floats → n / block blocks. */
    void (*quantize)(const float *x, void *y, int64_t n);
    /* Importance-weighted quantizer for one row of n floats with weights qw
     * (n of them); NULL when the type has none (it then ignores weights). */
    void (*quantize_weighted)(const float *x, void *y, int64_t n, const float *qw);
    void (*dequantize)(const void *x, float *y, int64_t n);
} gguf_codec;

/* The codec of a type, or NULL when libgguf cannot encode it (IQ/TQ types,
 * q8_1, integer types). f32, f16, bf16 are included. */
const gguf_codec *gguf_codec_get(uint32_t type);

/* Quantizes nrows rows of n_per_row floats as ggml_quantize_chunk does:
 * with imatrix (n_per_row weights) the weighted quantizer where the type has
 * one, otherwise the reference one. Returns the bytes written, 0 when the
 * type has no codec or n_per_row is not a block multiple. */
size_t gguf_quantize_rows(uint32_t type, const float *src, void *dst, int64_t nrows,
                          int64_t n_per_row, const float *imatrix);

/* Dequantizes n elements. Returns 0, or -1 when the type has no codec or n
 * is not a block multiple. */
int gguf_dequantize_row(uint32_t type, const void *src, float *dst, int64_t n);

/* Tests and benchmarks: run the scale searches one block at a time even
 * where eight-lane vector code is available (same bytes, slower). Not
 * thread-safe: set it before quantizing. */
void gguf_quants_force_scalar(bool on);

#endif
