/*
 * kernels_impl.h — what kernels.c dispatches to: one dot-product function
 * per weight type and instruction set, and the q8_1 activation block.
 *
 * Private to run/kernels*.c. Every dot function has the shape
 *   float dot(int64_t n, const void *w, const void *x)
 * : n elements of weights w (blocks of the weight type) times one converted
 * activation row x (blocks of its dot type, kernels.h's table). The *_ref
 * functions are the scalar reference that defines the result; the *_avx2
 * ones compute the same integer block sums and differ only in the order the
 * float block terms are added. Not for: the type table or threading
 * (kernels.c).
 */
#ifndef RUN_KERNELS_IMPL_H
#define RUN_KERNELS_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggufkit/quants.h>

typedef float (*kern_dot_fn)(int64_t n, const void *w, const void *x);

/* Several activation rows at once: out[k] = dot(w, row k) for the rows at
 * x + k * xs, k < KERN_NX (KERN_NX_FLOAT for f32/f16/bf16), each exactly
 * what the one-row kernel gives. Prompt batches use these so that a weight
 * block is unpacked once per group of rows. */
typedef void (*kern_dotn_fn)(int64_t n, const void *w, const void *x, size_t xs, float *out);
#define KERN_NX 4
#define KERN_NX_FLOAT 2

/* Activation bytes a unit of a product takes at most (kernels.c x_block:
 * a block of rows that stays in L2 while the weights pass over it). */
#define KERN_XBLOCK_BYTES (160 * 1024)

/* Tiles for prompt batches: KERN_TW weight rows (ws bytes apart) ×
 * KERN_NX activation rows (xs bytes apart), out[r * KERN_NX + k], each
 * output again exactly what the one-row kernel gives. */
typedef void (*kern_tile_fn)(int64_t n, const void *w, size_t ws, const void *x, size_t xs,
                             float *out);
#define KERN_TW 4
#define KERN_TILE (KERN_TW * KERN_NX) /* the most outputs of any shape */

/* The activation rows for q4_0, q8_0 and mxfp4 weights are q8_0 blocks
 * followed, for the VNNI kernels, by extras (kern_act_extra() gives where
 * they start; nb blocks):
 *   nb floats      each block's scale as a float;
 *   nb int32       each block's lead: -B × the sum of its 32 levels;
 *   nb × 8 int32   the lead of each four consecutive levels (a lane's);
 * B = 8 for q4_0, whose unsigned nibbles u stand for u − 8, 128 for q8_0,
 * whose packed levels are stored as q + 128, and KERN_MXFP4_BIAS for
 * mxfp4, whose packed kernel looks its levels v (−12..12) up as
 * u = v + 12: dpbusd of the unsigned weights against the levels, started
 * from the lead, leaves exactly Σ (u − B)·a. */
#define KERN_ACT_EXTRA (4 + 4 + 32)
#define KERN_MXFP4_BIAS 12
static inline const uint8_t *kern_act_extra(const void *x, int64_t n)
{
    return (const uint8_t *)x + (size_t)(n / 32) * sizeof(gguf_block_q8_0);
}
#define KERN_EX_DX(ex, nb, i) ((ex) + 4 * (size_t)(i))
#define KERN_EX_LEAD(ex, nb, i) ((ex) + 4 * (size_t)(nb) + 4 * (size_t)(i))
#define KERN_EX_LANES(ex, nb, i) ((ex) + 8 * (size_t)(nb) + 32 * (size_t)(i))

/* The q8_K activation rows for q6_K weights are followed by extras too
 * (kern_act_extra_k()): per super-block, its 256 levels plus 128
 * (a ^ 0x80, the unsigned operand of the packed q6_K kernel's maddubs) in
 * the order of the packed levels: byte 32L + 16h + 4j + s holds level
 * kern_q6_K_elem(h, L, j, s). */
#define KERN_ACT_EXTRA_K 256

/* The element (within a super-block) whose level the packed q6_K vector
 * u_j of half h and lane group L holds at byte s of each lane. */
static inline int kern_q6_K_elem(int h, int L, int j, int s)
{
    return 128 * h + 32 * (2 * (j / 2) + s / 2) + 4 * L + 2 * (j % 2) + s % 2;
}

/* The q8_K activation rows for iq4_xs weights are followed (at
 * kern_act_extra_k()) by their levels again, 256 bytes per super-block,
 * in the order of the weights' nibbles: for blocks 2p and 2p + 1, their
 * levels 0..15 side by side (the low nibbles of the 32 bytes of quants
 * the two blocks take), then their levels 16..31 (the high nibbles). */
#define KERN_ACT_EXTRA_IQ4 256

/* And those for q4_K weights by their levels in the order of the packed
 * q4_K nibbles (kernels_k.c), 256 bytes per super-block: for each 64
 * levels g and lane group L, the eight bytes at 64g + 8L are levels
 * 64g + 4L + {0, 1}, 64g + 32 + 4L + {0, 1}, 64g + 4L + {2, 3},
 * 64g + 32 + 4L + {2, 3}. */
#define KERN_ACT_EXTRA_Q4K 256
static inline const uint8_t *kern_act_extra_k(const void *x, int64_t n)
{
    return (const uint8_t *)x + (size_t)(n / GGUF_QK_K) * sizeof(gguf_block_q8_K);
}

/* One q8_0 activation block as ggml's x86 quantize_row_q8_0. */
void kern_quantize_q8_0_block(const float *x, gguf_block_q8_0 *y);


/* Scalar reference kernels (kernels_float.c, kernels_legacy.c, kernels_k.c,
 * kernels_iq3s.c, kernels_iq.c). */
float dot_f32_ref(int64_t n, const void *w, const void *x);
float dot_f16_ref(int64_t n, const void *w, const void *x);
float dot_bf16_ref(int64_t n, const void *w, const void *x);
/* f32 and f16 products in the order of a batch (kernels_float.c) */
float batch_dot_f32_ref(int64_t n, const void *w, const void *x);
float batch_dot_f16_ref(int64_t n, const void *w, const void *x);
float dot_q4_0_ref(int64_t n, const void *w, const void *x);
float dot_q4_1_ref(int64_t n, const void *w, const void *x);
float dot_q5_0_ref(int64_t n, const void *w, const void *x);
float dot_q5_1_ref(int64_t n, const void *w, const void *x);
float dot_q8_0_ref(int64_t n, const void *w, const void *x);
float dot_q2_K_ref(int64_t n, const void *w, const void *x);
float dot_q3_K_ref(int64_t n, const void *w, const void *x);
float dot_q4_K_ref(int64_t n, const void *w, const void *x);
float dot_q5_K_ref(int64_t n, const void *w, const void *x);
float dot_q6_K_ref(int64_t n, const void *w, const void *x);
float dot_iq3_s_ref(int64_t n, const void *w, const void *x);
float dot_iq2_s_ref(int64_t n, const void *w, const void *x);
float dot_iq4_nl_ref(int64_t n, const void *w, const void *x);
float dot_iq4_xs_ref(int64_t n, const void *w, const void *x);
float dot_mxfp4_ref(int64_t n, const void *w, const void *x);

#if defined(__x86_64__) && defined(__GNUC__)
#define KERN_X86 1
/* The *_avx2 kernels are built for KERN_AVX2 and the *_vnni ones for
 * KERN_VNNI (kernels_simd.h); callers check the CPU first. */

/* AVX2 + FMA + F16C present (kern_probe_avx2, asked once). */
bool kern_cpu_has_avx2(void);

/* AVX-512 VNNI with VL as well (kern_probe_vnni, asked once): the vnni
 * kernels. */
bool kern_cpu_has_vnni(void);

float dot_f32_avx2(int64_t n, const void *w, const void *x);
float dot_f16_avx2(int64_t n, const void *w, const void *x);
float dot_bf16_avx2(int64_t n, const void *w, const void *x);
float dot_q4_0_avx2(int64_t n, const void *w, const void *x);
float dot_q4_1_avx2(int64_t n, const void *w, const void *x);
float dot_q5_0_avx2(int64_t n, const void *w, const void *x);
float dot_q5_1_avx2(int64_t n, const void *w, const void *x);
float dot_q8_0_avx2(int64_t n, const void *w, const void *x);
float dot_q2_K_avx2(int64_t n, const void *w, const void *x);
float dot_q3_K_avx2(int64_t n, const void *w, const void *x);
float dot_q4_K_avx2(int64_t n, const void *w, const void *x);
float dot_q5_K_avx2(int64_t n, const void *w, const void *x);
float dot_q6_K_avx2(int64_t n, const void *w, const void *x);
float dot_iq3_s_avx2(int64_t n, const void *w, const void *x);
float dot_iq2_s_avx2(int64_t n, const void *w, const void *x);
float dot_iq4_nl_avx2(int64_t n, const void *w, const void *x);
float dot_iq4_xs_avx2(int64_t n, const void *w, const void *x);
float dot_mxfp4_avx2(int64_t n, const void *w, const void *x);

void dotn_f32_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_f16_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_bf16_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
float batch_dot_f32_avx2(int64_t n, const void *w, const void *x);
void batch_dotn_f32_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
float batch_dot_f16_avx2(int64_t n, const void *w, const void *x);
void batch_dotn_f16_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_q4_0_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_q4_1_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_q5_0_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_q5_1_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_q8_0_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_q2_K_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_q3_K_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_q4_K_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_q5_K_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_q6_K_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_iq3_s_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_iq2_s_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_iq4_nl_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_iq4_xs_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);
void dotn_mxfp4_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out);

/* Tiles (kern_tile_fn) of the 32-element block types, and their AVX-512
 * VNNI builds. */
void tile_q4_0_avx2(int64_t n, const void *w, size_t ws, const void *x, size_t xs, float *out);
void tile_q4_1_avx2(int64_t n, const void *w, size_t ws, const void *x, size_t xs, float *out);
void tile_q5_0_avx2(int64_t n, const void *w, size_t ws, const void *x, size_t xs, float *out);
void tile_q5_1_avx2(int64_t n, const void *w, size_t ws, const void *x, size_t xs, float *out);
void tile_q8_0_avx2(int64_t n, const void *w, size_t ws, const void *x, size_t xs, float *out);
float dot_q4_0_vnni(int64_t n, const void *w, const void *x);
void dotn_q4_0_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
void tile_q4_0_vnni(int64_t n, const void *w, size_t ws, const void *x, size_t xs, float *out);
float dot_q4_1_vnni(int64_t n, const void *w, const void *x);
void dotn_q4_1_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
void tile_q4_1_vnni(int64_t n, const void *w, size_t ws, const void *x, size_t xs, float *out);
float dot_q5_0_vnni(int64_t n, const void *w, const void *x);
void dotn_q5_0_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
void tile_q5_0_vnni(int64_t n, const void *w, size_t ws, const void *x, size_t xs, float *out);
float dot_q5_1_vnni(int64_t n, const void *w, const void *x);
void dotn_q5_1_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
void tile_q5_1_vnni(int64_t n, const void *w, size_t ws, const void *x, size_t xs, float *out);
float dot_q8_0_vnni(int64_t n, const void *w, const void *x);
void dotn_q8_0_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
void tile_q8_0_vnni(int64_t n, const void *w, size_t ws, const void *x, size_t xs, float *out);
/* 8 packed rows (kern_pack) × nx (1..KERN_NX) activation rows,
 * out[k * 8 + r]. */
typedef void (*kern_rows8_fn)(int64_t n, const void *wp, const void *x, size_t xs, int nx,
                              float *out);
void q4_0x8_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out);
void q4_0x8_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out);
void q8_0x8_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out);
void q8_0x8_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out);
void q4_Kx8_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out);
void q4_Kx8_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out);
void q6_Kx8_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out);
void q6_Kx8_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out);
void mxfp4x8_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out);
void mxfp4x8_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out);
void iq4_xsx8_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out);
void iq4_xsx8_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out);

/* kern_pack's part per type: block blk of row r of a group of eight into
 * the group's packed block at dst (eight times the block's bytes); the
 * layouts are described beside each type's rows8 kernel. */
typedef void (*kern_pack_put_fn)(const void *blk, uint8_t *dst, int r);
void pack_put_q4_0(const void *blk, uint8_t *dst, int r);
void pack_put_q8_0(const void *blk, uint8_t *dst, int r);
void pack_put_q8_0_signed(const void *blk, uint8_t *dst, int r);
void pack_put_q4_K(const void *blk, uint8_t *dst, int r);
void pack_put_q6_K(const void *blk, uint8_t *dst, int r);
void pack_put_mxfp4(const void *blk, uint8_t *dst, int r);
void pack_put_iq4_xs(const void *blk, uint8_t *dst, int r);

/* kern_quantize_act's q8_0 rows (with the extras of bias 8 or 128; none
 * for 0) and q8_K rows, bit for bit as the scalar code; a block holding an
 * infinity or NaN goes through the scalar code. */
void quantize_q8_0_avx2(const float *x, void *y, int64_t n, int bias);
void quantize_q8_K_avx2(const float *x, void *y, int64_t n);

/* The k-quant kernels with AVX-512 VNNI (dpwssd for madd + add). */
float dot_q2_K_vnni(int64_t n, const void *w, const void *x);
void dotn_q2_K_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
float dot_q3_K_vnni(int64_t n, const void *w, const void *x);
void dotn_q3_K_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
float dot_q4_K_vnni(int64_t n, const void *w, const void *x);
void dotn_q4_K_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
float dot_q5_K_vnni(int64_t n, const void *w, const void *x);
void dotn_q5_K_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
float dot_q6_K_vnni(int64_t n, const void *w, const void *x);
void dotn_q6_K_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);

/* The i-quant kernels with AVX-512 VNNI: dpwssd for madd + add (iq3_s,
 * iq2_s, iq4_xs), dpbusd for maddubs + madd (iq4_nl, mxfp4). */
float dot_iq3_s_vnni(int64_t n, const void *w, const void *x);
void dotn_iq3_s_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
float dot_iq2_s_vnni(int64_t n, const void *w, const void *x);
void dotn_iq2_s_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
float dot_iq4_nl_vnni(int64_t n, const void *w, const void *x);
void dotn_iq4_nl_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
float dot_iq4_xs_vnni(int64_t n, const void *w, const void *x);
void dotn_iq4_xs_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
float dot_mxfp4_vnni(int64_t n, const void *w, const void *x);
void dotn_mxfp4_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out);
#endif

#endif
