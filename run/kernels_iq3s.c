/*
 * kernels_iq3s.c — dot products of the lattice i-quants iq3_s and iq2_s
 * with q8_K activations (kernels.h), as ggml's CPU backend computes them
 * (ggml_vec_dot_iq3_s_q8_K / ggml_vec_dot_iq2_s_q8_K).
 *
 * Both types cut a super-block of 256 weights into eight sub-blocks of 32.
 * A weight is a grid magnitude g (a byte of ggml's iq3s_grid or iq2s_grid:
 * 1..15 or 8..62) times a sign bit, under an odd integer scale s = 2·ls + 1
 * (ls a 4-bit field) and the super-block's f16 d:
 *
 *   iq3_s  (110 bytes)  groups of four share a 9-bit grid index: the low
 *          eight bits in qs[8·ib + k], the ninth bit k of qh[ib] (group k
 *          of sub-block ib); signs[4·ib + e/8] bit e%8 is the sign of
 *          element e of the sub-block; one scale per sub-block, the low
 *          nibble of scales[ib/2] for even ib, the high one for odd.
 *          w = d · s · ±g
 *   iq2_s  (82 bytes)   groups of eight share a 10-bit index: qs[4·ib + l]
 *          and bits 2l, 2l+1 of qh[ib] (group l of sub-block ib); the sign
 *          bytes follow the 32 index bytes, laid out as iq3_s's; two
 *          scales per sub-block: the low nibble of scales[ib] for its first
 *          16 elements, the high one for the last 16.
 *          w = d · s / 8 · ±g
 *
 * With q8_K activations a (scale d_x) a super-block contributes
 *   (d · d_x) · Σ_ib Σ_half s · Σ_e ±g_e · a_e      (· 1/8 for iq2_s)
 * where the double sum is an exact integer (at most 256·62·128·31 < 2^31).
 * ggml's scalar code forms d·d_x in float, multiplies it by the integer
 * converted to float and adds the super-block terms in order; iq2_s's 1/8
 * is applied once at the end (exact). That is dot_T_ref, the definition.
 *
 * AVX2: a sub-block's 32 weights become one register of signed bytes ±g
 * (|g| ≤ 62 fits), built once and used by every activation row of a dotn
 * call. maddubs wants one unsigned operand, so the product is taken as
 * |a| · (±g · sign a): abs(-128) is 128 as an unsigned byte and ±g · sign a
 * stays within ±62, so every byte product is exact, a = -128 included
 * (ggml's x86 code negates a instead, which wraps -128; the q8_K quantizer
 * never makes -128 from finite input), and a 16-bit pair sum is at most
 * 2·128·62. madd with the scales (one per 16 elements) gives eight 32-bit
 * lanes per sub-block, summed over the super-block as exact integers; each
 * super-block adds d·d_x times its eight lanes to eight float accumulators
 * (fma), reduced at the end with hsum8 — the scalar path's integer block
 * sums, split over lanes, with only the float additions reordered.
 *
 * AVX-512 VNNI: the same code with one dpwssd for each madd + add (the
 * same products of the same 16-bit pair sums into the same lanes), so the
 * same bits as AVX2. maddubs stays (its pair sums never saturate, above):
 * a weight times its scale, up to 62·31, would not fit dpbusd's signed
 * bytes.
 *
 * The grids come from libgguf (gguf_iq_grid: ggml's tables byte for byte),
 * asked once and cached. Not for: quantizing (libgguf), the other i-quants
 * (dequantize-then-multiply in kernels.c, iq4_nl/iq4_xs/mxfp4 in
 * kernels_iq.c), dispatch (kernels.c).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include "kernels_impl.h"

/* ---------------------------------------------------------------------------
 * The grids: ggml's iq3s_grid (512 points × 4 bytes) and iq2s_grid (1024 ×
 * 8), asked of libgguf once (its tables are built once and then only read;
 * racing first calls store the same pointer).
 */

static const uint8_t *grid_get(const uint8_t **cache, uint32_t type)
{
    const uint8_t *g = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!g) {
        g = gguf_iq_grid(type, NULL, NULL);
        __atomic_store_n(cache, g, __ATOMIC_RELEASE);
    }
    return g;
}

static const uint8_t *grid_iq3s_cache, *grid_iq2s_cache;

static inline const uint8_t *grid_iq3s(void)
{
    return grid_get(&grid_iq3s_cache, GGUF_DT_IQ3_S);
}

static inline const uint8_t *grid_iq2s(void)
{
    return grid_get(&grid_iq2s_cache, GGUF_DT_IQ2_S);
}

/* Grid index of group k (of four) of iq3_s sub-block ib. */
static inline unsigned iq3s_index(const gguf_block_iq3_s *b, int ib, int k)
{
    return b->qs[8 * ib + k] | (unsigned)(b->qh[ib] >> k & 1) << 8;
}

/* Grid index of group l (of eight) of iq2_s sub-block ib. */
static inline unsigned iq2s_index(const gguf_block_iq2_s *b, int ib, int l)
{
    return b->qs[4 * ib + l] | (unsigned)(b->qh[ib] >> (2 * l) & 3) << 8;
}

/* The odd scale 2·ls + 1 of iq3_s sub-block ib. */
static inline int iq3s_scale(const gguf_block_iq3_s *b, int ib)
{
    return 2 * (b->scales[ib / 2] >> 4 * (ib % 2) & 0x0f) + 1;
}

/* ---------------------------------------------------------------------------
 * Scalar reference: ggml's generic arithmetic
 */

float dot_iq3_s_ref(int64_t n, const void *w, const void *x)
{
    const uint8_t *grid = grid_iq3s();
    const gguf_block_iq3_s *bw = w;
    const gguf_block_q8_K *bx = x;
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        const gguf_block_iq3_s *b = &bw[i];
        const int8_t *q8 = bx[i].qs;
        const float d = gguf_f16_to_f32(b->d) * bx[i].d;
        int32_t bsum = 0;
        for (int ib = 0; ib < 8; ib++) {
            int32_t sumi = 0;
            for (int k = 0; k < 8; k++) {
                const uint8_t *g = grid + 4 * iq3s_index(b, ib, k);
                const unsigned sg = b->signs[4 * ib + k / 2] >> 4 * (k % 2);
                for (int j = 0; j < 4; j++) {
                    const int32_t p = g[j] * q8[32 * ib + 4 * k + j];
                    sumi += sg >> j & 1 ? -p : p;
                }
            }
            bsum += iq3s_scale(b, ib) * sumi;
        }
        sumf += d * (float)bsum;
    }
    return sumf;
}

float dot_iq2_s_ref(int64_t n, const void *w, const void *x)
{
    const uint8_t *grid = grid_iq2s();
    const gguf_block_iq2_s *bw = w;
    const gguf_block_q8_K *bx = x;
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        const gguf_block_iq2_s *b = &bw[i];
        const int8_t *q8 = bx[i].qs;
        const uint8_t *signs = b->qs + GGUF_QK_K / 8;
        const float d = gguf_f16_to_f32(b->d) * bx[i].d;
        int32_t bsum = 0;
        for (int ib = 0; ib < 8; ib++) {
            int32_t sumi[2] = { 0, 0 }; /* the two halves of 16 */
            for (int l = 0; l < 4; l++) {
                const uint8_t *g = grid + 8 * iq2s_index(b, ib, l);
                const unsigned sg = signs[4 * ib + l];
                for (int j = 0; j < 8; j++) {
                    const int32_t p = g[j] * q8[32 * ib + 8 * l + j];
                    sumi[l / 2] += sg >> j & 1 ? -p : p;
                }
            }
            const int ls1 = 2 * (b->scales[ib] & 0x0f) + 1, ls2 = 2 * (b->scales[ib] >> 4) + 1;
            bsum += ls1 * sumi[0] + ls2 * sumi[1];
        }
        sumf += d * (float)bsum;
    }
    return 0.125f * sumf;
}

/* ---------------------------------------------------------------------------
 * AVX2 (the arithmetic of the header)
 */
#ifdef KERN_X86
#include "kernels_simd.h"

/* 0xff in the bytes of element e whose sign bit (bit e%8 of byte e/8 of
 * the sub-block's four sign bytes s) is set. */
ALWAYS __m256i sign_mask(const uint8_t s[4])
{
    /* byte e of the register takes byte e/8 of s (each 128-bit half holds
     * all four), then tests its bit e%8 */
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, //
                                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    const __m256i v = _mm256_shuffle_epi8(bcast4(s), spread);
    return _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
}

/* Four and eight bytes of a grid point. */
ALWAYS int load4(const uint8_t *p)
{
    int v;
    memcpy(&v, p, 4);
    return v;
}

ALWAYS long long load8(const uint8_t *p)
{
    long long v;
    memcpy(&v, p, 8);
    return v;
}

/* Magnitudes g with the signs of mask m (0 or -1 per byte): g ^ m − m. */
ALWAYS __m256i apply_signs(__m256i g, __m256i m)
{
    return _mm256_sub_epi8(_mm256_xor_si256(g, m), m);
}

/* The sixteen pair sums Σ ws·a of a sub-block: ws the signed weights
 * (|ws| ≤ 62), a the activation bytes, each product exact (header). */
ALWAYS __m256i pair_sums(__m256i ws, __m256i a)
{
    return _mm256_maddubs_epi16(_mm256_abs_epi8(a), _mm256_sign_epi8(ws, a));
}

/* Control for a shuffle giving every 16-bit element of each 128-bit half
 * element j of that half. */
ALWAYS __m256i word_bcast(int j)
{
    return _mm256_set1_epi16((short)(2 * j | (2 * j + 1) << 8));
}

/* The 32 grid magnitudes of iq3_s sub-block ib, as bytes in element order. */
ALWAYS __m256i grid_iq3s_sub(const gguf_block_iq3_s *b, const uint8_t *grid, int ib)
{
    /* four-byte loads inserted into two 128-bit halves: a vector built
     * from an array on the stack would stall on store forwarding, and
     * gathers or vector-made indices were slower here (Zen 4) */
    __m128i h[2];
    UNROLL for (int m = 0; m < 2; m++) {
        h[m] = _mm_cvtsi32_si128(load4(grid + 4 * iq3s_index(b, ib, 4 * m)));
        h[m] = _mm_insert_epi32(h[m], load4(grid + 4 * iq3s_index(b, ib, 4 * m + 1)), 1);
        h[m] = _mm_insert_epi32(h[m], load4(grid + 4 * iq3s_index(b, ib, 4 * m + 2)), 2);
        h[m] = _mm_insert_epi32(h[m], load4(grid + 4 * iq3s_index(b, ib, 4 * m + 3)), 3);
    }
    return _mm256_set_m128i(h[1], h[0]);
}

/* The 32 grid magnitudes of iq2_s sub-block ib. */
ALWAYS __m256i grid_iq2s_sub(const gguf_block_iq2_s *b, const uint8_t *grid, int ib)
{
    __m128i h[2];
    UNROLL for (int m = 0; m < 2; m++) {
        h[m] = _mm_loadl_epi64((const __m128i *)(grid + 8 * iq2s_index(b, ib, 2 * m)));
        h[m] = _mm_insert_epi64(h[m], load8(grid + 8 * iq2s_index(b, ib, 2 * m + 1)), 1);
    }
    return _mm256_set_m128i(h[1], h[0]);
}

/* The scales of an iq3_s super-block: that of sub-block ib in 16-bit
 * element ib of both 128-bit halves. */
ALWAYS __m256i scales_iq3s(const gguf_block_iq3_s *b)
{
    uint32_t s;
    memcpy(&s, b->scales, 4);
    /* ls of sub-blocks 0..7: low and high nibbles of bytes 0..3 interleaved */
    const __m128i ls = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)(s & 0x0f0f0f0f)),
                                         _mm_cvtsi32_si128((int)(s >> 4 & 0x0f0f0f0f)));
    const __m128i odd = _mm_add_epi16(_mm_slli_epi16(_mm_cvtepu8_epi16(ls), 1), _mm_set1_epi16(1));
    return _mm256_broadcastsi128_si256(odd);
}

/* The scales of an iq2_s super-block: the first half's scale of sub-block
 * ib in element ib of the low 128 bits, the second half's in element ib of
 * the high ones. */
ALWAYS __m256i scales_iq2s(const gguf_block_iq2_s *b)
{
    const __m128i s8 = _mm_loadl_epi64((const __m128i *)b->scales);
    const __m128i lo4 = _mm_set1_epi8(0x0f);
    const __m256i ls = _mm256_cvtepu8_epi16(
        _mm_unpacklo_epi64(_mm_and_si128(s8, lo4), _mm_and_si128(_mm_srli_epi16(s8, 4), lo4)));
    return _mm256_add_epi16(_mm256_slli_epi16(ls, 1), _mm256_set1_epi16(1));
}

/* nx activation rows against one weight row of type (GGUF_DT_IQ3_S or
 * GGUF_DT_IQ2_S, a constant in the entry points): each sub-block's signed
 * weights are built once and meet every row; row k's integer lanes and
 * float operations do not depend on nx. madd_add is the instruction set's
 * (kernels_simd.h). The loops over rows are unrolled so that isum[] stays
 * in registers: kept on the stack, each madd_add waited on a reload (with
 * dpwssd, whose accumulator is an input, the KERN_NX-row kernel ran 20%
 * slower than AVX2's; unrolled, both run about 1.5 times as fast). */
ALWAYS void iq_rows(uint32_t type, madd_add_fn madd_add, int64_t n, const void *w, const void *x,
                    size_t xs, int nx, float *out)
{
    const bool iq3 = type == GGUF_DT_IQ3_S;
    const uint8_t *grid = iq3 ? grid_iq3s() : grid_iq2s();
    __m256 acc[KERN_NX];
    UNROLL for (int k = 0; k < nx; k++)
        acc[k] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        const gguf_block_iq3_s *b3 = iq3 ? (const gguf_block_iq3_s *)w + i : NULL;
        const gguf_block_iq2_s *b2 = iq3 ? NULL : (const gguf_block_iq2_s *)w + i;
        const __m256i sv = iq3 ? scales_iq3s(b3) : scales_iq2s(b2);
        const uint8_t *signs = iq3 ? b3->signs : b2->qs + GGUF_QK_K / 8;
        const gguf_block_q8_K *bx[KERN_NX];
        __m256i isum[KERN_NX];
        UNROLL for (int k = 0; k < nx; k++) {
            bx[k] = (const gguf_block_q8_K *)((const uint8_t *)x + k * xs) + i;
            isum[k] = _mm256_setzero_si256();
        }
        UNROLL for (int ib = 0; ib < 8; ib++) {
            const __m256i g = iq3 ? grid_iq3s_sub(b3, grid, ib) : grid_iq2s_sub(b2, grid, ib);
            const __m256i ws = apply_signs(g, sign_mask(signs + 4 * ib));
            const __m256i sc = _mm256_shuffle_epi8(sv, word_bcast(ib));
            UNROLL for (int k = 0; k < nx; k++) {
                const __m256i a = _mm256_loadu_si256((const __m256i *)(bx[k]->qs + 32 * ib));
                isum[k] = madd_add(isum[k], pair_sums(ws, a), sc);
            }
        }
        const float dw = h2f(iq3 ? b3->d : b2->d);
        UNROLL for (int k = 0; k < nx; k++)
            acc[k] = add_scaled(acc[k], dw * bx[k]->d, isum[k]);
    }
    UNROLL for (int k = 0; k < nx; k++)
        out[k] = iq3 ? hsum8(acc[k]) : 0.125f * hsum8(acc[k]);
}

/* The entry points of each type and instruction set: one pair (dot) and
 * one weight row × KERN_NX activation rows (dotn). */

KERN_AVX2 float dot_iq3_s_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    iq_rows(GGUF_DT_IQ3_S, madd_add_avx2, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_iq3_s_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    iq_rows(GGUF_DT_IQ3_S, madd_add_avx2, n, w, x, xs, KERN_NX, out);
}

KERN_AVX2 float dot_iq2_s_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    iq_rows(GGUF_DT_IQ2_S, madd_add_avx2, n, w, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_iq2_s_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    iq_rows(GGUF_DT_IQ2_S, madd_add_avx2, n, w, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_iq3_s_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    iq_rows(GGUF_DT_IQ3_S, madd_add_vnni, n, w, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_iq3_s_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    iq_rows(GGUF_DT_IQ3_S, madd_add_vnni, n, w, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_iq2_s_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    iq_rows(GGUF_DT_IQ2_S, madd_add_vnni, n, w, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_iq2_s_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    iq_rows(GGUF_DT_IQ2_S, madd_add_vnni, n, w, x, xs, KERN_NX, out);
}
#endif /* KERN_X86 */
