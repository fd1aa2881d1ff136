/*
 * <ggufkit/quants.h> — 16-bit floats, ggml's block formats and their row
 * codecs, and importance matrices.
 */
#ifndef GGUFKIT_QUANTS_H
#define GGUFKIT_QUANTS_H

#include "gguf.h"

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * the two 16-bit float formats of GGUF tensors.
 *
 * binary16 (f16) and bfloat16 (bf16) to and from float, bit for bit as
 * ggml converts them (round to nearest even; NaN handling as ggml's
 * reference conversions). Used by the codecs, the converter and the runner.
 */
typedef uint16_t gguf_half; /* IEEE 754 binary16 bits */

/* binary16 → float: exact; Inf and NaN payloads preserved. */
GGUF_API float gguf_f16_to_f32(gguf_half h);

/* float → binary16, round to nearest even; overflow to Inf; any NaN becomes
 * the quiet NaN 0x7e00 with the sign kept (ggml's software conversion). */
GGUF_API gguf_half gguf_f32_to_f16(float f);

/* bfloat16 → float: exact. */
GGUF_API float gguf_bf16_to_f32(uint16_t h);

/* float → bfloat16, round to nearest even; a NaN is truncated and forced
 * quiet (ggml_compute_fp32_to_bf16). */
GGUF_API uint16_t gguf_f32_to_bf16(float f);

/* Half the value of an E8M0 scale byte e, 2^(e-128), bit for bit as ggml's
 * ggml_e8m0_to_fp32_half (mxfp4 blocks keep their scale so; e = 0 and 1
 * give subnormals, 255 — the E8M0 NaN — gives 2^127 as in ggml). Inline:
 * kernels call it once per block. */
static inline float gguf_e8m0_to_f32_half(uint8_t e)
{
    const uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* The same conversions over n values (x and y must not overlap). */
GGUF_API void gguf_f16_to_f32_row(const gguf_half *x, float *y, int64_t n);
GGUF_API void gguf_f32_to_f16_row(const float *x, gguf_half *y, int64_t n);
GGUF_API void gguf_bf16_to_f32_row(const uint16_t *x, float *y, int64_t n);
GGUF_API void gguf_f32_to_bf16_row(const float *x, uint16_t *y, int64_t n);

/* ---------------------------------------------------------------------------
 * ggml's block formats and the row codecs for them.
 *
 * Each block struct is laid out exactly as ggml-common.h's, with its size
 * asserted next to it; a row of n elements is n / block_size consecutive
 * blocks. The plain quantizers produce exactly the bytes ggml's
 * ggml_quantize_chunk writes without importance weights, bit for bit (for
 * every type but iq4_nl those of its reference quantizer quantize_row_*_ref;
 * iq4_nl's skips the scale trials and only serves run-time copies into
 * iq4_nl tensors such as a KV cache, not model files); the
 * importance-weighted ones those of ggml's quantize_* with quant_weights;
 * the dequantizers exactly ggml's floats. Tests hold them to the fixture
 * vectors in ../shared/fixtures/vectors.
 *
 * Not for: matrix kernels (the runner owns those) or choosing types per
 * tensor (gguf-quantize).
 */
#define GGUF_QK4_0 32
#define GGUF_QK4_1 32
#define GGUF_QK5_0 32
#define GGUF_QK5_1 32
#define GGUF_QK8_0 32
#define GGUF_QK8_1 32
#define GGUF_QK1_0 128
#define GGUF_QK_NVFP4 64
#define GGUF_QK4_NL 32
#define GGUF_QK_MXFP4 32
#define GGUF_QK_K  256
#define GGUF_K_SCALE_SIZE 12

/* --- legacy 32-element blocks ------------------------------------------- */

/* 4-bit, scale only: x = d * (q - 8). */
typedef struct { gguf_half d; uint8_t qs[GGUF_QK4_0 / 2]; } gguf_block_q4_0;
GGUF_STATIC_ASSERT(sizeof(gguf_block_q4_0) == 18, "gguf_block_q4_0 is 18 bytes");

/* 4-bit, scale and min: x = d * q + m. */
typedef struct { gguf_half d, m; uint8_t qs[GGUF_QK4_1 / 2]; } gguf_block_q4_1;
GGUF_STATIC_ASSERT(sizeof(gguf_block_q4_1) == 20, "gguf_block_q4_1 is 20 bytes");

/* 5-bit, scale only: low nibbles in qs, fifth bits in qh. */
typedef struct { gguf_half d; uint8_t qh[4]; uint8_t qs[GGUF_QK5_0 / 2]; } gguf_block_q5_0;
GGUF_STATIC_ASSERT(sizeof(gguf_block_q5_0) == 22, "gguf_block_q5_0 is 22 bytes");

/* 5-bit, scale and min. */
typedef struct { gguf_half d, m; uint8_t qh[4]; uint8_t qs[GGUF_QK5_1 / 2]; } gguf_block_q5_1;
GGUF_STATIC_ASSERT(sizeof(gguf_block_q5_1) == 24, "gguf_block_q5_1 is 24 bytes");

/* 8-bit, scale only. */
typedef struct { gguf_half d; int8_t qs[GGUF_QK8_0]; } gguf_block_q8_0;
GGUF_STATIC_ASSERT(sizeof(gguf_block_q8_0) == 34, "gguf_block_q8_0 is 34 bytes");

/* 8-bit with the scaled sum s = d * Σq (ggml's activation type for q4_1,
 * q5_1; no codec here: gguf-run makes it). */
typedef struct { gguf_half d, s; int8_t qs[GGUF_QK8_1]; } gguf_block_q8_1;
GGUF_STATIC_ASSERT(sizeof(gguf_block_q8_1) == 36, "gguf_block_q8_1 is 36 bytes");

/* 1-bit, scale only: x = ±d, a bit per element (no codec here). */
typedef struct { gguf_half d; uint8_t qs[GGUF_QK1_0 / 8]; } gguf_block_q1_0;
GGUF_STATIC_ASSERT(sizeof(gguf_block_q1_0) == 18, "gguf_block_q1_0 is 18 bytes");

/* --- k-quants: 256-element super-blocks ----------------------------------- */

/* 2-bit: 16 blocks of 16, 4-bit scales and mins, super-block d and dmin. */
typedef struct {
    uint8_t   scales[GGUF_QK_K / 16];
    uint8_t   qs[GGUF_QK_K / 4];
    gguf_half d, dmin;
} gguf_block_q2_K;
GGUF_STATIC_ASSERT(sizeof(gguf_block_q2_K) == 84, "gguf_block_q2_K is 84 bytes");

/* 3-bit: 16 blocks of 16, 6-bit scales, high bits in hmask. */
typedef struct {
    uint8_t   hmask[GGUF_QK_K / 8];
    uint8_t   qs[GGUF_QK_K / 4];
    uint8_t   scales[12];
    gguf_half d;
} gguf_block_q3_K;
GGUF_STATIC_ASSERT(sizeof(gguf_block_q3_K) == 110, "gguf_block_q3_K is 110 bytes");

/* 4-bit: 8 blocks of 32, 6-bit scales and mins packed in 12 bytes. */
typedef struct {
    gguf_half d, dmin;
    uint8_t   scales[GGUF_K_SCALE_SIZE];
    uint8_t   qs[GGUF_QK_K / 2];
} gguf_block_q4_K;
GGUF_STATIC_ASSERT(sizeof(gguf_block_q4_K) == 144, "gguf_block_q4_K is 144 bytes");

/* 5-bit: as q4_K plus the fifth bits in qh. */
typedef struct {
    gguf_half d, dmin;
    uint8_t   scales[GGUF_K_SCALE_SIZE];
    uint8_t   qh[GGUF_QK_K / 8];
    uint8_t   qs[GGUF_QK_K / 2];
} gguf_block_q5_K;
GGUF_STATIC_ASSERT(sizeof(gguf_block_q5_K) == 176, "gguf_block_q5_K is 176 bytes");

/* 6-bit: 16 blocks of 16, low 4 bits in ql, high 2 in qh, 8-bit scales. */
typedef struct {
    uint8_t   ql[GGUF_QK_K / 2];
    uint8_t   qh[GGUF_QK_K / 4];
    int8_t    scales[GGUF_QK_K / 16];
    gguf_half d;
} gguf_block_q6_K;
GGUF_STATIC_ASSERT(sizeof(gguf_block_q6_K) == 210, "gguf_block_q6_K is 210 bytes");

/* 8-bit activations for k-quant dot products: float scale, block sums. */
typedef struct {
    float   d;
    int8_t  qs[GGUF_QK_K];
    int16_t bsums[GGUF_QK_K / 16];
} gguf_block_q8_K;
GGUF_STATIC_ASSERT(sizeof(gguf_block_q8_K) == 292, "gguf_block_q8_K is 292 bytes");

/* --- non-linear, ternary and fp4 formats ---------------------------------- */

/* 4-bit non-linear, one scale per 32: x = d * v[q], v the fixed 16-entry
 * table kvalues_iq4nl (-127 .. 113). Nibbles packed as q4_0's. */
typedef struct { gguf_half d; uint8_t qs[GGUF_QK4_NL / 2]; } gguf_block_iq4_nl;
GGUF_STATIC_ASSERT(sizeof(gguf_block_iq4_nl) == 18, "gguf_block_iq4_nl is 18 bytes");

/* 4-bit non-linear super-block: 8 blocks of 32 with 6-bit scales ls (low 4
 * bits in scales_l, high 2 in scales_h): x = d * (ls - 32) * v[q]. */
typedef struct {
    gguf_half d;
    uint16_t  scales_h;
    uint8_t   scales_l[GGUF_QK_K / 64];
    uint8_t   qs[GGUF_QK_K / 2];
} gguf_block_iq4_xs;
GGUF_STATIC_ASSERT(sizeof(gguf_block_iq4_xs) == 136, "gguf_block_iq4_xs is 136 bytes");

/* --- lattice i-quants: 256-element super-blocks of grid indices ----------- */

/* 2.0625 bits: per 32, four 8-bit indices into a 256-point grid and a u32
 * of four 7-bit sign masks and a 4-bit scale. */
typedef struct { gguf_half d; uint16_t qs[GGUF_QK_K / 8]; } gguf_block_iq2_xxs;
GGUF_STATIC_ASSERT(sizeof(gguf_block_iq2_xxs) == 66, "gguf_block_iq2_xxs is 66 bytes");

/* 2.3125 bits: per 8, a 9-bit index into 512 points and a 7-bit sign mask;
 * 4-bit scales, two per byte. */
typedef struct {
    gguf_half d;
    uint16_t  qs[GGUF_QK_K / 8];
    uint8_t   scales[GGUF_QK_K / 32];
} gguf_block_iq2_xs;
GGUF_STATIC_ASSERT(sizeof(gguf_block_iq2_xs) == 74, "gguf_block_iq2_xs is 74 bytes");

/* 2.5625 bits: 10-bit indices into 1024 points (low bytes in qs, then 32
 * sign bytes; two high bits each in qh), 4-bit scales. */
typedef struct {
    gguf_half d;
    uint8_t   qs[GGUF_QK_K / 4];
    uint8_t   qh[GGUF_QK_K / 32];
    uint8_t   scales[GGUF_QK_K / 32];
} gguf_block_iq2_s;
GGUF_STATIC_ASSERT(sizeof(gguf_block_iq2_s) == 82, "gguf_block_iq2_s is 82 bytes");

/* 3.0625 bits: 64 8-bit indices into a 256-point grid of four levels, then
 * per 32 a u32 of four 7-bit sign masks and a 4-bit scale. */
typedef struct { gguf_half d; uint8_t qs[3 * GGUF_QK_K / 8]; } gguf_block_iq3_xxs;
GGUF_STATIC_ASSERT(sizeof(gguf_block_iq3_xxs) == 98, "gguf_block_iq3_xxs is 98 bytes");

/* 3.4375 bits: 9-bit indices into 512 points (low bytes in qs, ninth bits
 * a byte per sub-block in qh), a sign bit per element, 4-bit scales two
 * sub-blocks a byte. */
typedef struct {
    gguf_half d;
    uint8_t   qs[GGUF_QK_K / 4];
    uint8_t   qh[GGUF_QK_K / 32];
    uint8_t   signs[GGUF_QK_K / 8];
    uint8_t   scales[GGUF_QK_K / 64];
} gguf_block_iq3_s;
GGUF_STATIC_ASSERT(sizeof(gguf_block_iq3_s) == 110, "gguf_block_iq3_s is 110 bytes");

/* 1.5625 bits: 11-bit indices into a 2048-point grid of -1, 0, 1 (low
 * bytes in qs; per 32, qh holds the high bits, a 3-bit scale and the sign
 * of the shift). */
typedef struct {
    gguf_half d;
    uint8_t   qs[GGUF_QK_K / 8];
    uint16_t  qh[GGUF_QK_K / 32];
} gguf_block_iq1_s;
GGUF_STATIC_ASSERT(sizeof(gguf_block_iq1_s) == 50, "gguf_block_iq1_s is 50 bytes");

/* 1.75 bits: as iq1_s with a shift sign per 8 and 3-bit scales per 16;
 * the f16 super-block scale is spread over the top nibbles of the four
 * u16 scale words. */
typedef struct {
    uint8_t qs[GGUF_QK_K / 8];
    uint8_t qh[GGUF_QK_K / 16];
    uint8_t scales[GGUF_QK_K / 32];
} gguf_block_iq1_m;
GGUF_STATIC_ASSERT(sizeof(gguf_block_iq1_m) == 56, "gguf_block_iq1_m is 56 bytes");

/* Ternary, 1.6875 bits: x = d * (t - 1), t ∈ {0,1,2}; five trits per qs
 * byte, four per qh byte, each byte a base-3 fraction scaled to 0..255. */
typedef struct {
    uint8_t   qs[(GGUF_QK_K - 4 * GGUF_QK_K / 64) / 5];
    uint8_t   qh[GGUF_QK_K / 64];
    gguf_half d;
} gguf_block_tq1_0;
GGUF_STATIC_ASSERT(sizeof(gguf_block_tq1_0) == 54, "gguf_block_tq1_0 is 54 bytes");

/* Ternary, 2 bits per element: x = d * (t - 1), four per byte. */
typedef struct {
    uint8_t   qs[GGUF_QK_K / 4];
    gguf_half d;
} gguf_block_tq2_0;
GGUF_STATIC_ASSERT(sizeof(gguf_block_tq2_0) == 66, "gguf_block_tq2_0 is 66 bytes");

/* MX fp4: an E8M0 exponent e and 32 E2M1 codes: x = 2^(e-128) * v[q], v the
 * doubled E2M1 values (kvalues_mxfp4: 0, ±1, ±2, ±3, ±4, ±6, ±8, ±12). */
typedef struct { uint8_t e; uint8_t qs[GGUF_QK_MXFP4 / 2]; } gguf_block_mxfp4;
GGUF_STATIC_ASSERT(sizeof(gguf_block_mxfp4) == 17, "gguf_block_mxfp4 is 17 bytes");

/* NV fp4: four UE4M3 scales, one per 16 elements, and 64 E2M1 codes (no
 * codec here). */
typedef struct { uint8_t d[GGUF_QK_NVFP4 / 16]; uint8_t qs[GGUF_QK_NVFP4 / 2]; } gguf_block_nvfp4;
GGUF_STATIC_ASSERT(sizeof(gguf_block_nvfp4) == 36, "gguf_block_nvfp4 is 36 bytes");

/* --- where the floats of a block are --------------------------------------
 * For a NaN/Inf scan: the fields of one block that hold IEEE-style floats
 * (its scales; for the plain float types, whose block is one element, the
 * element itself). */
enum gguf_scale_kind {
    GGUF_SCALE_F16 = 1, GGUF_SCALE_BF16, GGUF_SCALE_F32, GGUF_SCALE_F64,
    GGUF_SCALE_E8M0, /* an exponent byte; 0xff is NaN (mxfp4) */
    GGUF_SCALE_IQ1_M /* an f16 from the top nibbles of four u16 words (iq1_m) */
};

typedef struct gguf_scale_field {
    uint32_t kind;   /* enum gguf_scale_kind */
    uint32_t offset; /* bytes from the start of the block */
} gguf_scale_field;

#define GGUF_MAX_SCALE_FIELDS 2

/* The float fields of one block of `type` into out (up to
 * GGUF_MAX_SCALE_FIELDS); returns how many. 0 when the type has none that
 * can be NaN or Inf: the integer types, and nvfp4 (ggml decodes every
 * UE4M3 byte to a finite value, 0x7f as 0). -1 for removed and unknown ids. */
GGUF_API int gguf_dtype_scales(uint32_t type, gguf_scale_field out[GGUF_MAX_SCALE_FIELDS]);

/* --- row codecs --------------------------------------------------------------
 * n (and n_per_row) must be a multiple of the type's block size. */

typedef struct gguf_codec {
    uint32_t type;
    /* ggml's quantizer without weights: n floats → n / block blocks; NULL
     * for the types ggml only quantizes with importance weights (iq2_xxs,
     * iq2_xs, iq1_s). */
    void (*quantize)(const float *x, void *y, int64_t n);
    /* Importance-weighted quantizer for one row of n floats with weights qw
     * (n of them); NULL when the type has none (it then ignores weights). */
    void (*quantize_weighted)(const float *x, void *y, int64_t n, const float *qw);
    void (*dequantize)(const void *x, float *y, int64_t n);
} gguf_codec;

/* The codec of a type, or NULL when libgguf cannot encode it (nvfp4,
 * q1_0, q8_1, integer types). f32, f16, bf16
 * are included. */
GGUF_API const gguf_codec *gguf_codec_get(uint32_t type);

/* The 16 levels a nibble stands for in iq4_nl and iq4_xs (ggml's
 * kvalues_iq4nl) or in mxfp4 (kvalues_mxfp4: the E2M1 values doubled), as
 * int8; NULL for any other type. */
GGUF_API const int8_t *gguf_nl_levels(uint32_t type);

/* The point grid of a lattice i-quant, for kernels that multiply the stored
 * grid indices directly: n_points points of width bytes (8 for iq2_xxs,
 * iq2_xs, iq2_s, iq1_s and iq1_m; 4 for iq3_xxs and iq3_s), each byte one
 * element exactly as ggml's grid tables hold it (ggml-common.h's
 * iq2xxs_grid … iq3s_grid: the unsigned magnitudes; iq1s_grid: the signed
 * levels -1, 0, 1 as int8). NULL for any other type. Built once, then
 * read-only (thread-safe). */
GGUF_API const uint8_t *gguf_iq_grid(uint32_t type, uint32_t *n_points, uint32_t *width);

/* Quantizes nrows rows of n_per_row floats as ggml_quantize_chunk does:
 * with imatrix (n_per_row weights) the weighted quantizer where the type has
 * one, otherwise the reference one. Returns the bytes written, or 0 with
 * err (may be NULL) when the type has no codec (GGUF_ERR_UNSUPPORTED),
 * n_per_row is not a block multiple, or the type needs an imatrix and has
 * none (GGUF_ERR_ARG). */
GGUF_API size_t gguf_quantize_rows(uint32_t type, const float *src, void *dst, int64_t nrows,
                                   int64_t n_per_row, const float *imatrix, gguf_error *err);

/* f16 → q8_0 in one pass (n a multiple of 32): each block converted,
 * checked and quantized while in registers, the same bytes as
 * gguf_quantize_rows(GGUF_DT_Q8_0) on the row's f32 form. Returns true with
 * *amax (may be NULL) the row's largest magnitude; false, with dst
 * unspecified, when a value is NaN or infinite (the caller finds it the
 * ordinary way). Since 1.4.0. */
GGUF_API bool gguf_quantize_q8_0_f16(const gguf_half *src, void *dst, int64_t n, float *amax);

/* Dequantizes n elements. Returns 0, or -1 with err (may be NULL) when the
 * type has no codec or n is not a block multiple. */
GGUF_API int gguf_dequantize_row(uint32_t type, const void *src, float *dst, int64_t n,
                                 gguf_error *err);

/* Tests and benchmarks: run the scale searches one block at a time even
 * where eight-lane vector code is available (same bytes, slower). Not
 * thread-safe: set it before quantizing. */
GGUF_API void gguf_quants_force_scalar(bool on);

/* ---------------------------------------------------------------------------
 * importance matrices, in both of llama-imatrix's file formats.
 *
 * The legacy .dat (llama.cpp c392e50, all little-endian):
 *   i32 n_entries
 *   n_entries × { i32 name_len, name bytes, i32 ncall, i32 nval, f32 values[nval] }
 *   optional: i32 chunks (last_call), i32 dataset_len, dataset bytes
 * values are sums of squared activations scaled to ncall calls; the weights
 * used for quantization are values / ncall (as llama-quantize computes them).
 *
 * The GGUF format (llama-imatrix's default since e21cdc11's era): general.type
 * "imatrix", imatrix.datasets (arr[str]), imatrix.chunk_count and
 * imatrix.chunk_size (u32), and per matrix NAME.in_sum2 (f32 [n_per_row,
 * n_mat]: sums of squared activations, one row per expert) and NAME.counts
 * (f32 [1, n_mat]: the activation rows summed); weights = sums / count per
 * expert, 1 for an expert no row reached. Loading tells the two apart by
 * content. Shared by gguf-quantize (reads) and gguf-run --imatrix (writes).
 */
typedef struct gguf_imatrix_entry {
    char    *name;    /* tensor name, e.g. "blk.0.attn_q.weight" */
    int32_t  ncall;   /* .dat: calls; GGUF: the largest count */
    int32_t  nval;
    float   *values;  /* .dat: the stored values; GGUF: the raw sums (nval) */
    float   *weights; /* what quantization uses (see above), nval of them */
    int32_t  n_mat;   /* matrices (experts) the values are rows of; 0 or 1: one */
    float   *counts;  /* GGUF: the n_mat counts; NULL for a .dat entry */
} gguf_imatrix_entry;

typedef struct gguf_imatrix {
    int32_t             n;
    gguf_imatrix_entry *entries;
    int32_t             chunks;     /* 0 when the file has no trailer */
    char               *dataset;    /* NULL when absent */
    uint32_t            chunk_size; /* GGUF: tokens per chunk; 0 when unknown */
} gguf_imatrix;

/* Reads and validates a file of either format (counts bounded by its size,
 * nval >= 1, all values finite, no duplicate names; GGUF: sums and counts in
 * pairs of matching shapes, counts finite and >= 0). 0, or -1 with err. */
GGUF_API int gguf_imatrix_load(const char *path, gguf_imatrix *im, gguf_error *err);

/* The same from a buffer (the fuzzer's entry point). */
GGUF_API int gguf_imatrix_parse(const void *data, size_t size, gguf_imatrix *im, gguf_error *err);

/* Weights of a tensor (n = nval), or NULL when the file has none for it. */
GGUF_API const float *gguf_imatrix_find(const gguf_imatrix *im, const char *name, int32_t *n);

/* Writes im in the legacy .dat format (entries, chunks, dataset)
 * atomically. 0, or -1 with err. */
GGUF_API int gguf_imatrix_save(const char *path, const gguf_imatrix *im, gguf_error *err);

/* Writes im in the GGUF format, as llama-imatrix e21cdc11 lays it out
 * (keys general.type, imatrix.datasets, .chunk_count, .chunk_size; tensors
 * sorted by name, NAME.in_sum2 then NAME.counts). Entries with counts are
 * written as they are; a .dat entry (counts NULL) as llama-imatrix --in-file
 * converts it: sums = values × chunk_size, count = ncall × chunk_size, so
 * that both files give the same weights. im->chunk_size must be > 0.
 * Atomic; 0, or -1 with err. */
GGUF_API int gguf_imatrix_save_gguf(const char *path, const gguf_imatrix *im, gguf_error *err);

/* The same with imatrix.datasets = the n_datasets strings of datasets, in
 * their order (im->dataset is not used): what llama-imatrix writes after
 * --in-file files, their datasets first, then the text's. Since 1.3.0. */
GGUF_API int gguf_imatrix_save_gguf_datasets(const char *path, const gguf_imatrix *im,
                                             const char *const *datasets, size_t n_datasets,
                                             gguf_error *err);

GGUF_API void gguf_imatrix_free(gguf_imatrix *im);

#ifdef __cplusplus
}
#endif

#endif
