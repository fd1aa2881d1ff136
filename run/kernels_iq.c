/*
 * kernels_iq.c — dot products of the non-linear 4-bit types iq4_nl and
 * mxfp4 with q8_0 activations, and iq4_xs with q8_K activations
 * (kernels.h), as ggml's CPU backend pairs them.
 *
 * Each weight element is a 4-bit index q into a fixed table of 16 integer
 * levels v (iq4_nl, iq4_xs: -127 .. 113; mxfp4: the E2M1 values doubled,
 * 0, ±1 .. ±12), nibbles packed as q4_0's (low nibbles are elements 0..15
 * of a 32-element block, high nibbles 16..31). Per 32-element block b,
 * with activation levels a:
 *   iq4_nl:  term_b = (d_x · d_w)                 · Σ v[q]·a
 *   mxfp4:   term_b = (d_x · 2^(e−128))           · Σ v[q]·a
 *   iq4_xs:  term_b = ((d_w · d_x) · (ls_b − 32)) · Σ v[q]·a
 * (iq4_xs: 8 blocks of a 256 super-block share d_w and the q8_K d_x, each
 * has a 6-bit scale ls_b), the float factors multiplied in that order, as
 * ggml's generic kernels (ggml-cpu/quants.c, e21cdc11) do. Σ v[q]·a is an
 * exact integer; a row's result is Σ_b term_b added in float. mxfp4's
 * 2^(e−128) is ggml's GGML_E8M0_TO_FP32_HALF: half the E8M0 scale, since
 * the table holds doubled values (e = 0, 1 give subnormals, e = 255 gives
 * 2^127 as in ggml).
 *
 * The *_ref functions define the result. The AVX2 ones compute the same
 * exact integers; they differ in how the float terms are formed and added
 * (the AVX-512 VNNI ones are the AVX2 ones with dpbusd for maddubs + madd,
 * or dpwssd for madd + add: the same bits):
 *   iq4_nl, mxfp4: one accumulator per output, acc = fma(Σ_b, d_w·d_x, acc)
 *     block after block (the reference's order, the term not rounded
 *     before it is added): what llama.cpp computes on AVX2 CPUs, where it
 *     repacks these matrices (rows a multiple of 8) as it does q4_0 and
 *     its repacked gemv / gemm add exactly so (ggml-cpu/arch/x86/repack.cpp;
 *     its unrepacked ggml_vec_dot_*_q8_0 would add in 2 × 8 lanes instead);
 *   iq4_xs: llama.cpp's AVX2 order (ggml_vec_dot_iq4_xs_q8_K): eight
 *     lanes per output, each adding the exact integer Σ_b (ls_b − 32)·(its
 *     part of Σ v[q]·a) over a super-block, then one fused multiply-add by
 *     d_w·d_x per super-block; the lanes reduced as hsum8 does at the end.
 * Not for: quantizing (libgguf's codecs), the type table (kernels.c).
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include "kernels_impl.h"

/* iq4_xs block j's scale ls_j − 32: the low four bits are nibble j%2 of
 * scales_l[j/2], the top two bits 2j, 2j+1 of scales_h. */
static inline int iq4_xs_scale(const gguf_block_iq4_xs *b, int j)
{
    const int lo = (b->scales_l[j / 2] >> (4 * (j % 2))) & 0x0f;
    const int hi = (b->scales_h >> (2 * j)) & 3;
    return (lo | hi << 4) - 32;
}

/* ---------------------------------------------------------------------------
 * Scalar reference
 */

/* Σ v[q]·a over one 32-element block of nibbles qs. */
static int block_isum(const int8_t v[16], const uint8_t qs[16], const int8_t a[32])
{
    int lo = 0, hi = 0;
    for (int j = 0; j < 16; j++) {
        lo += a[j] * v[qs[j] & 0x0f];
        hi += a[j + 16] * v[qs[j] >> 4];
    }
    return lo + hi;
}

float dot_iq4_nl_ref(int64_t n, const void *w, const void *x)
{
    const gguf_block_iq4_nl *bw = w;
    const gguf_block_q8_0 *bx = x;
    const int8_t *v = gguf_nl_levels(GGUF_DT_IQ4_NL);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / GGUF_QK4_NL; i++) {
        const float d = gguf_f16_to_f32(bx[i].d) * gguf_f16_to_f32(bw[i].d);
        sum += d * (float)block_isum(v, bw[i].qs, bx[i].qs);
    }
    return sum;
}

float dot_mxfp4_ref(int64_t n, const void *w, const void *x)
{
    const gguf_block_mxfp4 *bw = w;
    const gguf_block_q8_0 *bx = x;
    const int8_t *v = gguf_nl_levels(GGUF_DT_MXFP4);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / GGUF_QK_MXFP4; i++) {
        const float d = gguf_f16_to_f32(bx[i].d) * gguf_e8m0_to_f32_half(bw[i].e);
        sum += d * (float)block_isum(v, bw[i].qs, bx[i].qs);
    }
    return sum;
}

float dot_iq4_xs_ref(int64_t n, const void *w, const void *x)
{
    const gguf_block_iq4_xs *bw = w;
    const gguf_block_q8_K *bx = x;
    const int8_t *v = gguf_nl_levels(GGUF_DT_IQ4_XS);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        const float d4d8 = gguf_f16_to_f32(bw[i].d) * bx[i].d;
        for (int j = 0; j < GGUF_QK_K / 32; j++) {
            const float dj = d4d8 * (float)iq4_xs_scale(&bw[i], j);
            sum += dj * (float)block_isum(v, bw[i].qs + 16 * j, bx[i].qs + 32 * j);
        }
    }
    return sum;
}

/* ---------------------------------------------------------------------------
 * AVX2: a block's 32 levels are one register of bytes, looked up with
 * pshufb from the 16-entry table (in both 128-bit halves). The signed
 * levels go through maddubs' unsigned × signed product as |v| against
 * a·sign(v) (no level is -128, and q8_0 / q8_K levels stay within ±127, so
 * every 16-bit pair sum is at most 2·127·127 < 2^15), then madd with ones
 * gives eight exact 32-bit lane sums of the block's Σ v·a. With AVX-512
 * VNNI one dpbusd of the same two registers gives the same eight lanes
 * (kernels_simd.h's dot_u8_i8 / dot_u8_i8_vnni, the kernels' parameter):
 * maddubs cannot saturate even on bytes no quantizer writes (|v| ≤ 127
 * against any byte: at most 2·127·128 per pair), so the two agree on every
 * input and so does all the float arithmetic after them.
 *
 * Each kernel is written once for nx activation rows: a weight block is
 * looked up once and met by every row, and row k's float operations are
 * the same whatever nx is, so dotn_* gives exactly what dot_* gives row by
 * row.
 */
#ifdef KERN_X86
#include "kernels_simd.h"

_Static_assert(KERN_NX == 4, "rows_w32 reduces the sums of four activation rows at once");

/* The table of 16 levels in both halves of a register. */
ALWAYS __m256i level_table(const int8_t v[16])
{
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)v));
}

/* The 32 levels of a block of nibbles qs: the bytes in both halves, the
 * high half shifted down by four, the nibbles looked up. */
ALWAYS __m256i lookup_levels(__m256i table, const uint8_t qs[16])
{
    const __m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)qs));
    const __m256i idx = _mm256_and_si256(_mm256_blend_epi32(b, _mm256_srli_epi16(b, 4), 0xf0),
                                         _mm256_set1_epi8(0x0f));
    return _mm256_shuffle_epi8(table, idx);
}

/* Eight 32-bit lane sums of Σ v·a, given av = |v|, by the instruction
 * set's byte product dot. */
ALWAYS __m256i lanes_isum(byte_dot_fn dot, __m256i v, __m256i av, const int8_t *a)
{
    const __m256i x = _mm256_loadu_si256((const __m256i *)a);
    return dot(av, _mm256_sign_epi8(x, v));
}

ALWAYS int hsum_lanes(__m256i v)
{
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 1));
    return _mm_cvtsi128_si32(h);
}

ALWAYS const gguf_block_q8_K *act_q8_K(const void *x, size_t xs, int k, int64_t i)
{
    return (const gguf_block_q8_K *)((const uint8_t *)x + k * xs) + i;
}

/* The 32-element types against q8_0 rows (type GGUF_DT_IQ4_NL or
 * GGUF_DT_MXFP4, a constant): block i's scale, nibbles. */
ALWAYS float w32_scale(uint32_t type, const void *w, int64_t i)
{
    return type == GGUF_DT_MXFP4 ? gguf_e8m0_to_f32_half(((const gguf_block_mxfp4 *)w)[i].e)
                                 : h2f(((const gguf_block_iq4_nl *)w)[i].d);
}

ALWAYS const uint8_t *w32_qs(uint32_t type, const void *w, int64_t i)
{
    return type == GGUF_DT_MXFP4 ? ((const gguf_block_mxfp4 *)w)[i].qs
                                 : ((const gguf_block_iq4_nl *)w)[i].qs;
}

/* The whole sums of four vectors of eight lane sums, in order (horizontal
 * adds: exact, whatever the order). */
ALWAYS __m128i sums4(__m256i s0, __m256i s1, __m256i s2, __m256i s3)
{
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(s0, s1), _mm256_hadd_epi32(s2, s3));
    /* lane k: the first half of sum k, lane 4 + k: its second half */
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* One weight row × nx (1 or KERN_NX) q8_0 rows as llama.cpp's AVX2 code
 * multiplies these types (it repacks iq4_nl and mxfp4 matrices of 8k rows
 * as it does q4_0, and its repacked gemv / gemm in
 * ggml-cpu/arch/x86/repack.cpp add so): one float accumulator per output,
 * and each block adds its whole integer sum times d_w·d_x in one fused
 * multiply-add, block after block. One row takes four blocks at a time to
 * reduce their lane sums together; KERN_NX rows reduce one block's four
 * sums together and run the four outputs' multiply-adds side by side in
 * one register, each lane the operations of the one-row path's fmaf. dot
 * is the instruction set's byte product. */
ALWAYS void rows_w32(uint32_t type, byte_dot_fn dot, int64_t n, const void *w, const void *x,
                     size_t xs, int nx, float *out)
{
    const __m256i table = level_table(gguf_nl_levels(type));
    const int64_t nb = n / 32;
    if (nx == 1) {
        float acc = 0.0f;
        int64_t i = 0;
        for (; i + 4 <= nb; i += 4) {
            __m256i s[4];
            float d[4], f[4];
            UNROLL for (int m = 0; m < 4; m++) {
                const __m256i v = lookup_levels(table, w32_qs(type, w, i + m));
                const gguf_block_q8_0 *a = act_q8_0(x, 0, 0, i + m);
                s[m] = lanes_isum(dot, v, _mm256_sign_epi8(v, v), a->qs);
                d[m] = w32_scale(type, w, i + m) * h2f(a->d);
            }
            _mm_storeu_ps(f, _mm_cvtepi32_ps(sums4(s[0], s[1], s[2], s[3])));
            UNROLL for (int m = 0; m < 4; m++)
                acc = fmaf(f[m], d[m], acc);
        }
        for (; i < nb; i++) {
            const __m256i v = lookup_levels(table, w32_qs(type, w, i));
            const gguf_block_q8_0 *a = act_q8_0(x, 0, 0, i);
            const int isum = hsum_lanes(lanes_isum(dot, v, _mm256_sign_epi8(v, v), a->qs));
            acc = fmaf((float)isum, w32_scale(type, w, i) * h2f(a->d), acc);
        }
        out[0] = acc;
        return;
    }
    __m128 acc = _mm_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        const __m256i v = lookup_levels(table, w32_qs(type, w, i));
        const __m256i av = _mm256_sign_epi8(v, v);
        const gguf_block_q8_0 *a0 = act_q8_0(x, xs, 0, i), *a1 = act_q8_0(x, xs, 1, i);
        const gguf_block_q8_0 *a2 = act_q8_0(x, xs, 2, i), *a3 = act_q8_0(x, xs, 3, i);
        const __m128i isum = sums4(lanes_isum(dot, v, av, a0->qs), lanes_isum(dot, v, av, a1->qs),
                                   lanes_isum(dot, v, av, a2->qs), lanes_isum(dot, v, av, a3->qs));
        const __m128 dx = _mm_setr_ps(h2f(a0->d), h2f(a1->d), h2f(a2->d), h2f(a3->d));
        acc = _mm_fmadd_ps(_mm_cvtepi32_ps(isum), _mm_mul_ps(_mm_set1_ps(w32_scale(type, w, i)), dx), acc);
    }
    _mm_storeu_ps(out, acc);
}

/* The eight scales ls_j − 32 of an iq4_xs super-block, lane j holding it
 * in both of its int16 (a madd operand): the low four bits are bits
 * 4j..4j+3 of scales_l read as a little-endian word, the top two bits
 * 2j, 2j+1 of scales_h (the word at offset 0 holds d, then scales_h). */
ALWAYS __m256i iq4_xs_scales8(const gguf_block_iq4_xs *b)
{
    _Static_assert(offsetof(gguf_block_iq4_xs, scales_h) == 2 && offsetof(gguf_block_iq4_xs, scales_l) == 4,
                   "iq4_xs block layout");
    const __m256i l = bcast4(b->scales_l), h = bcast4(b);
    const __m256i lo = _mm256_and_si256(_mm256_srlv_epi32(l, _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
                                        _mm256_set1_epi32(0x0f));
    const __m256i hi = _mm256_and_si256(
        _mm256_srlv_epi32(h, _mm256_setr_epi32(12, 14, 16, 18, 20, 22, 24, 26)), _mm256_set1_epi32(0x30));
    const __m256i ls = _mm256_sub_epi32(_mm256_or_si256(lo, hi), _mm256_set1_epi32(32));
    return _mm256_shuffle_epi8(ls, _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13, 0, 1, 0,
                                                    1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13));
}

/* iq4_xs × nx q8_K rows in ggml's x86 order (ggml_vec_dot_iq4_xs_q8_K's
 * AVX2 code, what llama.cpp runs on these CPUs): per super-block, block
 * j's maddubs pair sums times ls_j − 32 as 16-bit integers (madd), added
 * in eight exact 32-bit lanes over the eight blocks — lane L holding
 * levels 4L .. 4L + 3 of each block; then one fused multiply-add of each
 * lane by d_w·d_x per super-block, and hsum8's order at the end. madd_add
 * is the instruction set's madd + add.
 * Here two blocks at a time: their 32 bytes of quants give the levels
 * 0..15 of both (low nibbles) in one vector and 16..31 (high nibbles) in
 * another, against the activation levels in that order (the row's extras,
 * kernels_impl.h), the scale vector ls_2p − 32 in the low half and
 * ls_2p+1 − 32 in the high one. The low-nibble sums land in lanes 0..3
 * (block 2p) and 4..7 (block 2p + 1) of one accumulator, where ggml has
 * both in lanes 0..3; the high-nibble sums likewise in another for ggml's
 * lanes 4..7; the halves are added across once per super-block. The same
 * exact integers in the same lanes, so the same bits, with no shuffles
 * of the quants across halves and the scales decoded once per super-block. */
ALWAYS void rows_iq4_xs(madd_add_fn madd_add, int64_t n, const void *w, const void *x, size_t xs,
                        int nx, float *out)
{
    const __m256i table = level_table(gguf_nl_levels(GGUF_DT_IQ4_XS));
    const __m256i m0f = _mm256_set1_epi8(0x0f);
    const gguf_block_iq4_xs *bw = w;
    const uint8_t *ex[KERN_NX];
    __m256 acc[KERN_NX];
    UNROLL for (int k = 0; k < nx; k++) {
        acc[k] = _mm256_setzero_ps();
        ex[k] = kern_act_extra_k((const uint8_t *)x + k * xs, n);
    }
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        const gguf_block_iq4_xs *b = &bw[i];
        const __m256i ls2 = iq4_xs_scales8(b);
        __m256i lo[KERN_NX], hi[KERN_NX];
        UNROLL for (int k = 0; k < nx; k++)
            lo[k] = hi[k] = _mm256_setzero_si256();
        UNROLL for (int p = 0; p < 4; p++) {
            const __m256i qs = load256(b->qs + 32 * p);
            const __m256i vl = _mm256_shuffle_epi8(table, _mm256_and_si256(qs, m0f));
            const __m256i vh = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(qs, 4), m0f));
            const __m256i al = _mm256_sign_epi8(vl, vl), ah = _mm256_sign_epi8(vh, vh);
            /* ls_2p − 32 in every int16 of the low half, ls_2p+1 − 32 of the high */
            const __m256i sc = _mm256_permutevar8x32_epi32(
                ls2, _mm256_setr_epi32(2 * p, 2 * p, 2 * p, 2 * p, 2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1));
            UNROLL for (int k = 0; k < nx; k++) {
                const uint8_t *a = ex[k] + (size_t)i * KERN_ACT_EXTRA_IQ4 + 64 * p;
                lo[k] = madd_add(lo[k], _mm256_maddubs_epi16(al, _mm256_sign_epi8(load256(a), vl)), sc);
                hi[k] = madd_add(hi[k], _mm256_maddubs_epi16(ah, _mm256_sign_epi8(load256(a + 32), vh)), sc);
                KEEP_REG(lo[k]);
                KEEP_REG(hi[k]);
            }
        }
        const float dw = h2f(b->d);
        UNROLL for (int k = 0; k < nx; k++) {
            const __m256i is = _mm256_add_epi32(_mm256_permute2x128_si256(lo[k], hi[k], 0x20),
                                                _mm256_permute2x128_si256(lo[k], hi[k], 0x31));
            acc[k] = _mm256_fmadd_ps(_mm256_set1_ps(dw * act_q8_K(x, xs, k, i)->d), _mm256_cvtepi32_ps(is),
                                     acc[k]);
        }
    }
    UNROLL for (int k = 0; k < nx; k++)
        out[k] = hsum8(acc[k]);
}

/* Packed iq4_xs rows (kern_pack): per group of eight rows and super-block,
 * the 1088 bytes the eight blocks take, lane r = row r:
 *   0..15     the eight d (f16); 16..31 the eight scales_h (u16)
 *   32..63    one vector: lane r holds row r's four scales_l bytes
 *   64..      32 vectors: lane r of vector 4L + p holds, in byte t, the
 *             nibble of level 4L + t of block 2p (low) and of block 2p + 1
 *             (high) of row r.
 * Lane L of rows_iq4_xs's integer sum for a super-block is
 *   Σ_j (ls_j − 32) · Σ_t v·a   over levels 4L + t of each block j,
 * an exact integer in any order: here it is vectors 4L..4L + 3, one lane
 * per row, each nibble half looked up and met (maddubs of |v| against the
 * activation levels signed by v, rows_iq4_xs's products) by the levels
 * the row's extras hold at the same place, four bytes broadcast to every
 * lane, then madd by its block's scale — eight rows' own scales, ls_j − 32
 * in both int16 of each lane. The float chains are the one-row kernel's
 * eight lanes, f = fma(d_w·d_x, lane, f) per super-block, kept per row and
 * added at the end in hsum8's order: the same bits. */
#define PACK_IQ4_XS_BYTES (8 * sizeof(gguf_block_iq4_xs))

/* The nibble of level e (0..31) of block j of a super-block. */
static int iq4_xs_nibble(const gguf_block_iq4_xs *b, int j, int e)
{
    const uint8_t q = b->qs[16 * j + e % 16];
    return e < 16 ? q & 0x0f : q >> 4;
}

void pack_put_iq4_xs(const void *blk, uint8_t *dst, int r)
{
    const gguf_block_iq4_xs *b = blk;
    memcpy(dst + 2 * r, &b->d, 2);
    memcpy(dst + 16 + 2 * r, &b->scales_h, 2);
    memcpy(dst + 32 + 4 * r, b->scales_l, 4);
    for (int L = 0; L < 8; L++)
        for (int p = 0; p < 4; p++)
            for (int t = 0; t < 4; t++)
                dst[64 + 32 * (4 * L + p) + 4 * r + t] =
                    (uint8_t)(iq4_xs_nibble(b, 2 * p, 4 * L + t) |
                              iq4_xs_nibble(b, 2 * p + 1, 4 * L + t) << 4);
}

/* The eight rows' ls_j − 32 of a packed super-block, each lane's in both
 * of its int16 (madd's operand), j = 0..7. */
ALWAYS void iq4_xs_scales8x8(const uint8_t *blk, __m256i ls[8])
{
    const __m256i m0f = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
    const __m256i sl = load256(blk + 32);
    /* scales_h's bytes zero-extended to int16: lane r holds h0, 0, h1, 0;
     * its nibbles n_c (bits 4c..4c + 3: the top bits of ls_2c, then of
     * ls_2c+1) spread to byte c */
    const __m256i h = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(blk + 16)));
    const __m256i nib = _mm256_or_si256(_mm256_and_si256(h, _mm256_set1_epi16(0x000f)),
                                        _mm256_and_si256(_mm256_slli_epi16(h, 4), _mm256_set1_epi16(0x0f00)));
    /* byte c of lane r: row r's ls_2c (ev), ls_2c+1 (od) */
    const __m256i ev = _mm256_or_si256(_mm256_and_si256(sl, m0f),
                                       _mm256_and_si256(_mm256_slli_epi16(nib, 4), m30));
    const __m256i od = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(sl, 4), m0f),
                                       _mm256_and_si256(_mm256_slli_epi16(nib, 2), m30));
    UNROLL for (int j = 0; j < 8; j++)
        ls[j] = _mm256_sub_epi16(_mm256_shuffle_epi8(j % 2 ? od : ev, lane_bytes(j / 2, -1, j / 2, -1)),
                                 _mm256_set1_epi16(32));
}

/* Lane group L of eight packed rows against nx activation rows (at ax[k]
 * in the super-block's extras): f[k][L] = fma(d[k], the rows' integer
 * lanes, f[k][L]). */
ALWAYS void iq4_xs_lane8(madd_add_fn madd_add, __m256i table, const uint8_t *blk, const __m256i ls[8],
                         int L, const uint8_t *const *ax, const __m256 *d, int nx, __m256 f[][8])
{
    const __m256i atable = _mm256_abs_epi8(table), m0f = _mm256_set1_epi8(0x0f);
    __m256i is[KERN_NX];
    UNROLL for (int k = 0; k < nx; k++)
        is[k] = _mm256_setzero_si256();
    UNROLL for (int p = 0; p < 4; p++) {
        const __m256i v = load256(blk + 64 + 32 * (4 * L + p));
        const __m256i ql = _mm256_and_si256(v, m0f), qh = _mm256_and_si256(_mm256_srli_epi16(v, 4), m0f);
        const __m256i vl = _mm256_shuffle_epi8(table, ql), vh = _mm256_shuffle_epi8(table, qh);
        const __m256i al = _mm256_shuffle_epi8(atable, ql), ah = _mm256_shuffle_epi8(atable, qh);
        UNROLL for (int k = 0; k < nx; k++) {
            /* levels 4L.. of block 2p in the extras (nibble order), those
             * of block 2p + 1 sixteen bytes on */
            const uint8_t *a = ax[k] + 64 * p + 4 * L + 16 * (L / 4);
            is[k] = madd_add(is[k], _mm256_maddubs_epi16(al, _mm256_sign_epi8(bcast4(a), vl)), ls[2 * p]);
            is[k] = madd_add(is[k], _mm256_maddubs_epi16(ah, _mm256_sign_epi8(bcast4(a + 16), vh)),
                             ls[2 * p + 1]);
            KEEP_REG(is[k]); /* a chain per row */
        }
    }
    UNROLL for (int k = 0; k < nx; k++)
        f[k][L] = _mm256_fmadd_ps(d[k], _mm256_cvtepi32_ps(is[k]), f[k][L]);
}

/* Eight packed rows × nx activation rows. One row's eight float chains
 * stay in registers, the lane groups unrolled; several rows' wait in
 * memory, a loop over the lane groups keeping the code small enough for
 * the decoded-instruction cache. */
ALWAYS void rows8_iq4_xs(madd_add_fn madd_add, int64_t n, const void *wp, const void *x, size_t xs,
                         int nx, float *out)
{
    const __m256i table = level_table(gguf_nl_levels(GGUF_DT_IQ4_XS));
    __m256 f[KERN_NX][8];
    const uint8_t *ex[KERN_NX];
    UNROLL for (int k = 0; k < nx; k++) {
        ex[k] = kern_act_extra_k((const uint8_t *)x + k * xs, n);
        UNROLL for (int L = 0; L < 8; L++)
            f[k][L] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        const uint8_t *blk = (const uint8_t *)wp + (size_t)i * PACK_IQ4_XS_BYTES;
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)blk));
        __m256i ls[8];
        iq4_xs_scales8x8(blk, ls);
        __m256 d[KERN_NX];
        const uint8_t *ax[KERN_NX];
        UNROLL for (int k = 0; k < nx; k++) {
            d[k] = _mm256_mul_ps(dw, _mm256_set1_ps(act_q8_K(x, xs, k, i)->d));
            ax[k] = ex[k] + (size_t)i * KERN_ACT_EXTRA_IQ4;
        }
        if (nx == 1) {
            UNROLL for (int L = 0; L < 8; L++)
                iq4_xs_lane8(madd_add, table, blk, ls, L, ax, d, nx, f);
        } else {
            _Pragma("GCC unroll 1") for (int L = 0; L < 8; L++)
                iq4_xs_lane8(madd_add, table, blk, ls, L, ax, d, nx, f);
        }
    }
    UNROLL for (int k = 0; k < nx; k++)
        _mm256_storeu_ps(out + 8 * k, hsum8_rows(f[k]));
}

KERN_VNNI void iq4_xsx8_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out)
{
    kpacked_passes(rows8_iq4_xs, madd_add_vnni, n, wp, x, xs, nx, out);
}

KERN_AVX2 void iq4_xsx8_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out)
{
    kpacked_passes(rows8_iq4_xs, madd_add_avx2, n, wp, x, xs, nx, out);
}

/* Packed mxfp4 rows (kern_pack), as q4_0's in kernels_legacy.c: per group
 * of eight rows and block i, the eight E8M0 exponents (byte r: row r's),
 * then four vectors whose lane r holds bytes 4c..4c+3 of row r's nibbles
 * (low nibbles levels 4c..4c+3, high ones 16+4c..). The 136 bytes are the
 * eight blocks' own, so a packed matrix takes what the rows take. */
#define PACK_MXFP4_BYTES (8 + 4 * 32)

void pack_put_mxfp4(const void *blk, uint8_t *dst, int r)
{
    const gguf_block_mxfp4 *b = blk;
    dst[r] = b->e;
    for (int c = 0; c < 4; c++)
        memcpy(dst + 8 + 32 * c + 4 * r, b->qs + 4 * c, 4);
}

/* Eight rows' 2^(e−128) (gguf_e8m0_to_f32_half, lane r from byte r). */
ALWAYS __m256 e8m0_half8(const uint8_t *e8)
{
    const __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)e8));
    const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
    const __m256i sub = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
    const __m256i tiny = _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e);
    return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, sub, tiny));
}

/* mxfp4 × nx q8_0 rows, eight packed rows at once: the nibbles look up
 * u = v + 12 (0..24, unsigned, as dpbusd wants its first operand), each
 * row's lane starting from −12 × the activation block's level sum (the
 * lead the rows carry for bias 12, kernels_impl.h), which leaves exactly
 * Σ v·a in lane r; then lane r of acc[k] adds fmaf(Σ v·a, d_w · d_x) block
 * after block, rows_w32's chain for that output, so the bits are the
 * one-row kernel's. */
ALWAYS void rows8_mxfp4(packed8_acc_fn block_acc, int64_t n, const void *wp, const void *x,
                       size_t xs, int nx, float *out)
{
    const int64_t nb = n / 32;
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m256i table = _mm256_add_epi8(level_table(gguf_nl_levels(GGUF_DT_MXFP4)),
                                          _mm256_set1_epi8(KERN_MXFP4_BIAS));
    __m256 acc[KERN_NX];
    const uint8_t *ex[KERN_NX];
    UNROLL for (int k = 0; k < nx; k++) {
        acc[k] = _mm256_setzero_ps();
        ex[k] = kern_act_extra((const uint8_t *)x + k * xs, n);
    }
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *blk = (const uint8_t *)wp + (size_t)i * PACK_MXFP4_BYTES;
        const __m256 dw = e8m0_half8(blk);
        __m256i lo[4], hi[4];
        UNROLL for (int c = 0; c < 4; c++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)(blk + 8 + 32 * c));
            lo[c] = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low4));
            hi[c] = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4));
        }
        block_acc(acc, ex, nb, i, dw, lo, hi, x, xs, nx);
    }
    UNROLL for (int k = 0; k < nx; k++)
        _mm256_storeu_ps(out + 8 * k, acc[k]);
}

ALWAYS_VNNI void rows8_mxfp4_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx,
                                  float *out)
{
    rows8_mxfp4(packed8_block_acc, n, wp, x, xs, nx, out);
}

ALWAYS void rows8_mxfp4_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx,
                             float *out)
{
    rows8_mxfp4(packed8_block_acc_avx2, n, wp, x, xs, nx, out);
}

KERN_VNNI void mxfp4x8_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out)
{
    rows8_by_nx(rows8_mxfp4_vnni, n, wp, x, xs, nx, out);
}

KERN_AVX2 void mxfp4x8_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out)
{
    rows8_by_nx(rows8_mxfp4_avx2, n, wp, x, xs, nx, out);
}

/* ---------------------------------------------------------------------------
 * Entry points of each type and instruction set: one pair (dot) and one
 * weight row × KERN_NX activation rows (dotn), each the type's kernel with
 * constant shapes and the set's byte product.
 */

KERN_AVX2 float dot_iq4_nl_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    rows_w32(GGUF_DT_IQ4_NL, dot_u8_i8, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_iq4_nl_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_w32(GGUF_DT_IQ4_NL, dot_u8_i8, n, w, x, xs, KERN_NX, out);
}

KERN_AVX2 float dot_mxfp4_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    rows_w32(GGUF_DT_MXFP4, dot_u8_i8, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_mxfp4_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_w32(GGUF_DT_MXFP4, dot_u8_i8, n, w, x, xs, KERN_NX, out);
}

KERN_AVX2 float dot_iq4_xs_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    rows_iq4_xs(madd_add_avx2, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_iq4_xs_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_iq4_xs(madd_add_avx2, n, w, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_iq4_nl_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    rows_w32(GGUF_DT_IQ4_NL, dot_u8_i8_vnni, n, w, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_iq4_nl_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_w32(GGUF_DT_IQ4_NL, dot_u8_i8_vnni, n, w, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_mxfp4_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    rows_w32(GGUF_DT_MXFP4, dot_u8_i8_vnni, n, w, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_mxfp4_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_w32(GGUF_DT_MXFP4, dot_u8_i8_vnni, n, w, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_iq4_xs_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    rows_iq4_xs(madd_add_vnni, n, w, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_iq4_xs_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_iq4_xs(madd_add_vnni, n, w, x, xs, KERN_NX, out);
}
#endif
