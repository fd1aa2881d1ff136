/*
 * kernels.h — matrix-vector and matrix-matrix products on weights stored in
 * any of the block types the runner accepts, working on the blocks directly.
 *
 * As in ggml's CPU backend, the activations are first converted to the
 * "dot type" of the weight type, and each output is one dot product of a
 * weight row with a converted activation row:
 *
 *   weight type                     activation (dot) type
 *   f32                             f32
 *   f16                             f16
 *   bf16                            bf16
 *   q4_0, q5_0, q8_0                q8_0
 *   q4_1, q5_1                      q8_1  (q8_0 plus d * sum(q) per block)
 *   q2_K, q3_K, q4_K, q5_K, q6_K    q8_K
 *   iq4_nl, mxfp4                   q8_0
 *   iq4_xs, iq3_s, iq2_s            q8_K
 *   iq3_xxs, iq2_xxs, iq2_xs,       f32: the weight row is dequantized
 *   iq1_s, iq1_m, tq1_0, tq2_0      (libgguf's codec), then the f32 product
 *
 * so a product gives what ggml's gives up to the order of float additions.
 * Every kernel has a scalar reference path and, where the CPU has them
 * (checked once at run time), AVX2 / AVX-512 paths; the tests hold the two
 * to each other and the scalar path to dequantize-then-multiply.
 *
 * Not for: quantizing weights (libgguf's codecs), attention or norms (the
 * forward pass).
 */
#ifndef RUN_KERNELS_H
#define RUN_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sum16.h" /* sum16_reduce: every 16-lane sum of the f32/f16 products,
                     * the softmax and the attention rows */

/* True when the runner can multiply by weights of this ggml type id. */
bool kern_supported(uint32_t wtype);

/* The ggml type id of the activation rows a weight type multiplies with
 * (table above); -1 when unsupported. */
int kern_dot_type(uint32_t wtype);

/* Bytes of one converted activation row of n floats for weight type wtype
 * (n a multiple of the weight type's block size); 0 when unsupported. */
size_t kern_act_row_size(uint32_t wtype, int64_t n);

/* Converts n floats x into the dot type of wtype, into xq
 * (kern_act_row_size(wtype, n) bytes). */
void kern_quantize_act(uint32_t wtype, const float *x, void *xq, int64_t n);

/* One dot product: weight row w (n elements of wtype) with converted
 * activation row xq. */
float kern_vec_dot(uint32_t wtype, int64_t n, const void *w, const void *xq);

/* Whether a product of nb activation rows with W (nrows rows of ncols of
 * wtype) adds in the batch order: f32 and f16 weights where ggml's CPU
 * backend hands the product to tinyBLAS (nb >= 2, nrows a multiple of 4,
 * ncols of 16). Its outputs are then kern_batch_dot's, else kern_vec_dot's. */
bool kern_batch_order(uint32_t wtype, int64_t nrows, int64_t ncols, int64_t nb);

/* One dot product in the batch order (kern_vec_dot for the types that
 * have none, or n not a multiple of 16). */
float kern_batch_dot(uint32_t wtype, int64_t n, const void *w, const void *xq);


/* y[b * nrows + r] = dot(W row r, activation row b) for r < nrows, b < nb
 * (kern_batch_order says which dot). W is nrows rows of ncols elements of wtype, row_bytes apart; xq holds nb
 * converted activation rows of kern_act_row_size(wtype, ncols) bytes each.
 * Parallel over rows on common/pool.c's threads. */
void kern_matmul(uint32_t wtype, const void *w, size_t row_bytes, int64_t nrows, int64_t ncols,
                 const void *xq, int64_t nb, float *y);

/* kern_matmul with every output kern_vec_dot's, whatever nb (ggml's
 * mul_mat_id: the products of experts). */
void kern_matmul_rows(uint32_t wtype, const void *w, size_t row_bytes, int64_t nrows,
                      int64_t ncols, const void *xq, int64_t nb, float *y);

/* q4_0, q8_0, q4_K, q6_K, mxfp4 and iq4_xs matrices of 8k rows can be packed, as
 * llama.cpp also repacks q4_0: block i of rows 8g..8g+7 side by side in
 * the bytes the eight blocks take, their quants interleaved four bytes at
 * a time, so that one stream of memory feeds eight rows at once and each
 * row's sum stays in one vector lane. True when this CPU has kernels for
 * that layout (AVX-512 VNNI or AVX2; the layout is the set's: pack with the
 * set in use when multiplying) and W (nrows rows of wtype) suits it. */
bool kern_pack_usable(uint32_t wtype, int64_t nrows, int64_t ncols);

/* Writes the packed layout of W (nrows rows of ncols elements of wtype,
 * row_bytes apart) to out (as many bytes as W's rows). */
void kern_pack(uint32_t wtype, const void *w, size_t row_bytes, int64_t nrows, int64_t ncols,
               void *out);

/* kern_matmul on a packed matrix: the same y, bit for bit. */
void kern_matmul_packed(uint32_t wtype, const void *packed, int64_t nrows, int64_t ncols,
                        const void *xq, int64_t nb, float *y);

/* Instruction sets, in order: a kernel of a set runs only where the CPU has
 * it (asked at run time). */
enum kern_isa { KERN_ISA_SCALAR, KERN_ISA_AVX2, KERN_ISA_VNNI, KERN_ISA_BEST = KERN_ISA_VNNI };

/* The set products run on now. */
enum kern_isa kern_isa_in_use(void);

/* Tests and benchmarks: use the scalar reference kernels even where SIMD
 * ones exist (on) or the best (off). Not thread-safe: set before
 * multiplying. */
void kern_force_scalar(bool on);

/* Tests and benchmarks: use no set above isa (KERN_ISA_BEST: no limit). */
void kern_force_isa(enum kern_isa isa);

#endif
