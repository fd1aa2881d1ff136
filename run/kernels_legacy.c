/*
 * kernels_legacy.c — dot products of the 32-element block types q4_0, q4_1,
 * q5_0, q5_1, q8_0 with q8_0 or q8_1 activations (kernels.h).
 *
 * Per block b of 32 elements, with integer weight levels q and activation
 * levels a:
 *   scale-only types (q4_0, q5_0, q8_0):  term_b = Σ q·a · d_w · d_x
 *   types with a min (q4_1, q5_1):        term_b = Σ q·a · d_w · d_x + m_w · s_x
 * where s_x = d_x · Σa (q8_1's stored block sum), since Σ (d_w q + m_w) d_x a
 * splits that way. Σ q·a is an exact integer; the row's result is Σ_b term_b
 * added in float. Not for: quantizing (libgguf's codecs, kernels.c).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include "kernels_impl.h"

/* ---------------------------------------------------------------------------
 * Scalar reference: unpack a weight block to its 32 signed levels, then one
 * integer dot per block.
 */

/* Levels of element j of a 4-bit block: low nibbles are elements 0..15,
 * high nibbles 16..31. */
static void unpack_nibbles(const uint8_t qs[16], int offset, int q[32])
{
    for (int j = 0; j < 16; j++) {
        q[j] = (qs[j] & 0x0f) - offset;
        q[j + 16] = (qs[j] >> 4) - offset;
    }
}

/* As unpack_nibbles, with element j's fifth bit in bit j of qh. */
static void unpack_5bit(const uint8_t qs[16], const uint8_t qh_bytes[4], int offset, int q[32])
{
    uint32_t qh;
    memcpy(&qh, qh_bytes, sizeof qh);
    for (int j = 0; j < 16; j++) {
        q[j] = ((qs[j] & 0x0f) | (int)((qh >> j) & 1) << 4) - offset;
        q[j + 16] = ((qs[j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4) - offset;
    }
}

static int dot32(const int q[32], const int8_t a[32])
{
    int s = 0;
    for (int j = 0; j < 32; j++)
        s += q[j] * a[j];
    return s;
}

float dot_q4_0_ref(int64_t n, const void *w, const void *x)
{
    const gguf_block_q4_0 *bw = w;
    const gguf_block_q8_0 *bx = x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / GGUF_QK4_0; i++) {
        int q[32];
        unpack_nibbles(bw[i].qs, 8, q);
        sum += (float)dot32(q, bx[i].qs) * gguf_f16_to_f32(bw[i].d) * gguf_f16_to_f32(bx[i].d);
    }
    return sum;
}

float dot_q5_0_ref(int64_t n, const void *w, const void *x)
{
    const gguf_block_q5_0 *bw = w;
    const gguf_block_q8_0 *bx = x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / GGUF_QK5_0; i++) {
        int q[32];
        unpack_5bit(bw[i].qs, bw[i].qh, 16, q);
        sum += (float)dot32(q, bx[i].qs) * gguf_f16_to_f32(bw[i].d) * gguf_f16_to_f32(bx[i].d);
    }
    return sum;
}

float dot_q8_0_ref(int64_t n, const void *w, const void *x)
{
    const gguf_block_q8_0 *bw = w;
    const gguf_block_q8_0 *bx = x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / GGUF_QK8_0; i++) {
        int q[32];
        for (int j = 0; j < 32; j++)
            q[j] = bw[i].qs[j];
        sum += (float)dot32(q, bx[i].qs) * gguf_f16_to_f32(bw[i].d) * gguf_f16_to_f32(bx[i].d);
    }
    return sum;
}

float dot_q4_1_ref(int64_t n, const void *w, const void *x)
{
    const gguf_block_q4_1 *bw = w;
    const gguf_block_q8_1 *bx = x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / GGUF_QK4_1; i++) {
        int q[32];
        unpack_nibbles(bw[i].qs, 0, q);
        const float dd = gguf_f16_to_f32(bw[i].d) * gguf_f16_to_f32(bx[i].d);
        sum += dd * (float)dot32(q, bx[i].qs) + gguf_f16_to_f32(bw[i].m) * gguf_f16_to_f32(bx[i].s);
    }
    return sum;
}

float dot_q5_1_ref(int64_t n, const void *w, const void *x)
{
    const gguf_block_q5_1 *bw = w;
    const gguf_block_q8_1 *bx = x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / GGUF_QK5_1; i++) {
        int q[32];
        unpack_5bit(bw[i].qs, bw[i].qh, 0, q);
        const float dd = gguf_f16_to_f32(bw[i].d) * gguf_f16_to_f32(bx[i].d);
        sum += dd * (float)dot32(q, bx[i].qs) + gguf_f16_to_f32(bw[i].m) * gguf_f16_to_f32(bx[i].s);
    }
    return sum;
}

/* ---------------------------------------------------------------------------
 * AVX2: a block's 32 weight levels are one register of bytes. The byte
 * products go through maddubs (unsigned × signed bytes → 16-bit pair sums,
 * at most 2·128·127 < 2^15, so nothing saturates), then madd with ones to
 * eight 32-bit sums, which become floats scaled by d_w·d_x into eight lane
 * accumulators: each lane adds one term per block.
 *
 * Each kernel is written once for nx activation rows: a weight block is
 * unpacked once and met by every row. Row k's arithmetic is the same
 * whatever nx is, so dotn_* gives exactly what dot_* gives row by row.
 */
#ifdef KERN_X86
#include "kernels_simd.h"

/* The 32 nibbles of qs as bytes: elements 0..15 from the low nibbles,
 * 16..31 from the high ones. */
ALWAYS __m256i nibbles_to_bytes(const uint8_t qs[16])
{
    const __m128i v = _mm_loadu_si128((const __m128i *)qs), low4 = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_and_si128(v, low4), hi = _mm_and_si128(_mm_srli_epi16(v, 4), low4);
    return _mm256_set_m128i(hi, lo);
}

/* Byte j = 0x10 where bit j of qh is set, else 0 (a 5-bit type's top bit). */
ALWAYS __m256i fifth_bits(const uint8_t qh_bytes[4])
{
    uint32_t qh;
    memcpy(&qh, qh_bytes, sizeof qh);
    /* byte j takes qh's byte j/8, then keeps bit j%8 */
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)qh), spread);
    v = _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
    return _mm256_and_si256(v, _mm256_set1_epi8(0x10));
}

ALWAYS __m256i load32(const int8_t *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

/* The weight levels of block i as bytes, and whether they are signed. */
ALWAYS __m256i levels_q4_0(const gguf_block_q4_0 *b)
{
    return _mm256_sub_epi8(nibbles_to_bytes(b->qs), _mm256_set1_epi8(8));
}
ALWAYS __m256i levels_q5_0(const gguf_block_q5_0 *b)
{
    const __m256i q = _mm256_or_si256(nibbles_to_bytes(b->qs), fifth_bits(b->qh));
    return _mm256_sub_epi8(q, _mm256_set1_epi8(16));
}
ALWAYS __m256i levels_q8_0(const gguf_block_q8_0 *b)
{
    return load32(b->qs);
}
ALWAYS __m256i levels_q4_1(const gguf_block_q4_1 *b)
{
    return nibbles_to_bytes(b->qs);
}
ALWAYS __m256i levels_q5_1(const gguf_block_q5_1 *b)
{
    return _mm256_or_si256(nibbles_to_bytes(b->qs), fifth_bits(b->qh));
}

/* The kernels below take the weight type (a GGUF_DT_ id) as a constant
 * argument: each switch folds away in the named entry points. */

/* Block i of weight row r (rows ws bytes apart from w). */
ALWAYS const void *block_at(uint32_t type, const void *w, size_t ws, int r, int64_t i)
{
    const uint8_t *row = (const uint8_t *)w + r * ws;
    switch (type) {
    case GGUF_DT_Q4_0: return (const gguf_block_q4_0 *)row + i;
    case GGUF_DT_Q4_1: return (const gguf_block_q4_1 *)row + i;
    case GGUF_DT_Q5_0: return (const gguf_block_q5_0 *)row + i;
    case GGUF_DT_Q5_1: return (const gguf_block_q5_1 *)row + i;
    default: return (const gguf_block_q8_0 *)row + i;
    }
}

ALWAYS __m256i levels(uint32_t type, const void *b)
{
    switch (type) {
    case GGUF_DT_Q4_0: return levels_q4_0(b);
    case GGUF_DT_Q4_1: return levels_q4_1(b);
    case GGUF_DT_Q5_0: return levels_q5_0(b);
    case GGUF_DT_Q5_1: return levels_q5_1(b);
    default: return levels_q8_0(b);
    }
}

/* The block's scale d and (types with a min) its min m. */
ALWAYS gguf_half block_d(uint32_t type, const void *b)
{
    switch (type) {
    case GGUF_DT_Q4_0: return ((const gguf_block_q4_0 *)b)->d;
    case GGUF_DT_Q4_1: return ((const gguf_block_q4_1 *)b)->d;
    case GGUF_DT_Q5_0: return ((const gguf_block_q5_0 *)b)->d;
    case GGUF_DT_Q5_1: return ((const gguf_block_q5_1 *)b)->d;
    default: return ((const gguf_block_q8_0 *)b)->d;
    }
}

ALWAYS gguf_half block_m(uint32_t type, const void *b)
{
    return type == GGUF_DT_Q4_1 ? ((const gguf_block_q4_1 *)b)->m : ((const gguf_block_q5_1 *)b)->m;
}

ALWAYS const gguf_block_q8_1 *act_q8_1(const void *x, size_t xs, int k, int64_t i)
{
    return (const gguf_block_q8_1 *)((const uint8_t *)x + k * xs) + i;
}

ALWAYS int hsum_i32x8(__m256i v)
{
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 1));
    return _mm_cvtsi128_si32(h);
}

/* Each kernel below computes a tile: nw weight rows (ws bytes apart) times
 * nx activation rows (xs bytes apart), out[r * nx + k]. Every output keeps
 * its own accumulator and its own order of additions, so a tile gives each
 * pair exactly what the one-row kernel gives; the tile only lets a weight
 * block be unpacked once for nx activation rows, an activation block be
 * loaded once for nw weight rows, and nw·nx independent additions hide the
 * latency of each other's fused multiply-adds. */

/* Scale-only types (q5_0, q8_0) against q8_0 rows: signed levels q go
 * through the unsigned × signed byte product as |q| against a·sign(q)
 * (a q8_0 level −128 is |q| = 128 against −a: the product is exact; the
 * activation levels stay within ±127). */
ALWAYS void rows_scale_only_avx2(uint32_t type, int64_t n, const void *w, size_t ws, int nw,
                                 const void *x, size_t xs, int nx, float *out)
{
    __m256 acc[KERN_TILE];
    UNROLL for (int k = 0; k < nw * nx; k++)
        acc[k] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 32; i++) {
        __m256i q[KERN_TW], aq[KERN_TW];
        float dw[KERN_TW];
        UNROLL for (int r = 0; r < nw; r++) {
            const void *b = block_at(type, w, ws, r, i);
            q[r] = levels(type, b);
            aq[r] = _mm256_sign_epi8(q[r], q[r]);
            dw[r] = h2f(block_d(type, b));
        }
        UNROLL for (int k = 0; k < nx; k++) {
            const gguf_block_q8_0 *bx = act_q8_0(x, xs, k, i);
            const __m256i a = load32(bx->qs);
            const float dx = h2f(bx->d);
            UNROLL for (int r = 0; r < nw; r++) {
                const __m256i s = dot_u8_i8(aq[r], _mm256_sign_epi8(a, q[r]));
                acc[r * nx + k] = add_scaled(acc[r * nx + k], dw[r] * dx, s);
            }
        }
    }
    UNROLL for (int k = 0; k < nw * nx; k++)
        out[k] = hsum8(acc[k]);
}

/* Types with a min (q4_1, q5_1) against q8_1 rows: unsigned levels, and
 * Σ m_w · s_x added apart; dot is the instruction set's byte product. */
ALWAYS void rows_with_min(uint32_t type, byte_dot_fn dot, int64_t n, const void *w, size_t ws,
                          int nw, const void *x, size_t xs, int nx, float *out)
{
    __m256 acc[KERN_TILE];
    float mins[KERN_TILE];
    UNROLL for (int k = 0; k < nw * nx; k++) {
        acc[k] = _mm256_setzero_ps();
        mins[k] = 0.0f;
    }
    for (int64_t i = 0; i < n / 32; i++) {
        __m256i q[KERN_TW];
        float dw[KERN_TW], mw[KERN_TW];
        UNROLL for (int r = 0; r < nw; r++) {
            const void *b = block_at(type, w, ws, r, i);
            q[r] = levels(type, b);
            dw[r] = h2f(block_d(type, b));
            mw[r] = h2f(block_m(type, b));
        }
        UNROLL for (int k = 0; k < nx; k++) {
            const gguf_block_q8_1 *bx = act_q8_1(x, xs, k, i);
            const __m256i a = load32(bx->qs);
            const float dx = h2f(bx->d), sx = h2f(bx->s);
            UNROLL for (int r = 0; r < nw; r++) {
                acc[r * nx + k] = add_scaled(acc[r * nx + k], dw[r] * dx, dot(q[r], a));
                mins[r * nx + k] += mw[r] * sx;
            }
        }
    }
    UNROLL for (int k = 0; k < nw * nx; k++)
        out[k] = hsum8(acc[k]) + mins[k];
}

/* q4_0 as the reference CPU backend computes it on x86 (it regroups q4_0
 * matrices of 8k rows into 8-row tiles): one float accumulator per output,
 * and each block adds its whole integer sum, times d_w·d_x, in one fused
 * multiply-add. */
ALWAYS void rows_q4_0_avx2(int64_t n, const void *w, size_t ws, int nw, const void *x, size_t xs,
                           int nx, float *out)
{
    float acc[KERN_TILE];
    UNROLL for (int k = 0; k < nw * nx; k++)
        acc[k] = 0.0f;
    for (int64_t i = 0; i < n / 32; i++) {
        __m256i q[KERN_TW], aq[KERN_TW];
        float dw[KERN_TW];
        UNROLL for (int r = 0; r < nw; r++) {
            const gguf_block_q4_0 *b = block_at(GGUF_DT_Q4_0, w, ws, r, i);
            q[r] = levels_q4_0(b);
            aq[r] = _mm256_sign_epi8(q[r], q[r]);
            dw[r] = h2f(b->d);
        }
        UNROLL for (int k = 0; k < nx; k++) {
            const gguf_block_q8_0 *bx = act_q8_0(x, xs, k, i);
            const __m256i a = load32(bx->qs);
            const float dx = h2f(bx->d);
            UNROLL for (int r = 0; r < nw; r++) {
                const int isum = hsum_i32x8(dot_u8_i8(aq[r], _mm256_sign_epi8(a, q[r])));
                acc[r * nx + k] = fmaf((float)isum, dw[r] * dx, acc[r * nx + k]);
            }
        }
    }
    UNROLL for (int k = 0; k < nw * nx; k++)
        out[k] = acc[k];
}

/* The scale-only types with VNNI, without the sign trick: dpbusd wants
 * unsigned bytes first, so the activations go in as a + 128 (an xor) and
 * the lane sums start from -128·Σq over the lane's four weight levels,
 * computed once per weight block: (a + 128)·q summed on top gives exactly
 * Σ a·q, lane by lane — the same integers as above. The scale d_w·d_x is
 * the same float product, taken from broadcast registers. */
ALWAYS_VNNI void rows_scale_only_vnni(uint32_t type, int64_t n, const void *w, size_t ws, int nw,
                                      const void *x, size_t xs, int nx, float *out)
{
    const __m256i bias = _mm256_set1_epi8((char)0x80), zero = _mm256_setzero_si256();
    __m256 acc[KERN_TILE];
    UNROLL for (int k = 0; k < nw * nx; k++)
        acc[k] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / 32; i++) {
        __m256i q[KERN_TW], lead[KERN_TW];
        __m256 dw[KERN_TW];
        UNROLL for (int r = 0; r < nw; r++) {
            const void *b = block_at(type, w, ws, r, i);
            q[r] = levels(type, b);
            lead[r] = _mm256_sub_epi32(zero, _mm256_dpbusd_epi32(zero, bias, q[r]));
            dw[r] = _mm256_set1_ps(h2f(block_d(type, b)));
        }
        UNROLL for (int k = 0; k < nx; k++) {
            const gguf_block_q8_0 *bx = act_q8_0(x, xs, k, i);
            const __m256i a = _mm256_xor_si256(load32(bx->qs), bias);
            const __m256 dx = _mm256_set1_ps(h2f(bx->d));
            UNROLL for (int r = 0; r < nw; r++) {
                const __m256i s = _mm256_dpbusd_epi32(lead[r], a, q[r]);
                acc[r * nx + k] = _mm256_fmadd_ps(_mm256_mul_ps(dw[r], dx), _mm256_cvtepi32_ps(s),
                                                  acc[r * nx + k]);
            }
        }
    }
    UNROLL for (int k = 0; k < nw * nx; k++)
        out[k] = hsum8(acc[k]);
}

/* Eight vectors' lane sums as one vector: lane j = Σ lanes of v[j]
 * (integers: any order gives the same). */
ALWAYS __m256i hsum8_i32x8(const __m256i v[8])
{
    const __m256i t0 = _mm256_hadd_epi32(v[0], v[1]), t1 = _mm256_hadd_epi32(v[2], v[3]);
    const __m256i t2 = _mm256_hadd_epi32(v[4], v[5]), t3 = _mm256_hadd_epi32(v[6], v[7]);
    const __m256i u0 = _mm256_hadd_epi32(t0, t1), u1 = _mm256_hadd_epi32(t2, t3);
    return _mm256_add_epi32(_mm256_permute2x128_si256(u0, u1, 0x20),
                            _mm256_permute2x128_si256(u0, u1, 0x31));
}

/* q4_0 with VNNI: the unsigned nibbles u go straight into dpbusd against
 * the activation levels, each lane starting from -8 × its four levels' sum
 * (stored with the activation row, kernels_impl.h), which leaves exactly
 * Σ (u − 8)·a per lane; the activation scales are read as floats. There is
 * one float accumulator per output. A tile of KERN_TW × KERN_NX (16)
 * outputs keeps those accumulators as two vectors, lane = output: each
 * block's 16 integer sums come out of two eight-way reductions, and one
 * vector fma per eight outputs does what fmaf does for each. */
ALWAYS_VNNI void rows_q4_0_vnni(int64_t n, const void *w, size_t ws, int nw, const void *x,
                                size_t xs, int nx, float *out)
{
    const int64_t nb = n / 32;
    if (nw == KERN_TW && nx == KERN_NX && KERN_TW * KERN_NX == 16) {
        __m256 acc[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() };
        const uint8_t *ex[KERN_NX];
        UNROLL for (int k = 0; k < KERN_NX; k++)
            ex[k] = kern_act_extra((const uint8_t *)x + k * xs, n);
        for (int64_t i = 0; i < nb; i++) {
            __m256i u[KERN_TW], a[KERN_NX], lead[KERN_NX], isum[16];
            float dw[KERN_TW], dx[KERN_NX];
            UNROLL for (int r = 0; r < KERN_TW; r++) {
                const gguf_block_q4_0 *b = (const gguf_block_q4_0 *)((const uint8_t *)w + r * ws) + i;
                u[r] = nibbles_to_bytes(b->qs);
                dw[r] = h2f(b->d);
            }
            UNROLL for (int k = 0; k < KERN_NX; k++) {
                const gguf_block_q8_0 *bx = (const gguf_block_q8_0 *)((const uint8_t *)x + k * xs) + i;
                a[k] = load32(bx->qs);
                lead[k] = _mm256_loadu_si256((const __m256i *)KERN_EX_LANES(ex[k], nb, i));
                memcpy(&dx[k], KERN_EX_DX(ex[k], nb, i), 4);
            }
            UNROLL for (int r = 0; r < KERN_TW; r++)
                UNROLL for (int k = 0; k < KERN_NX; k++)
                    isum[r * KERN_NX + k] = _mm256_dpbusd_epi32(lead[k], u[r], a[k]);
            const __m256 dxv = _mm256_setr_ps(dx[0], dx[1], dx[2], dx[3], dx[0], dx[1], dx[2], dx[3]);
            UNROLL for (int h = 0; h < 2; h++) {
                const __m256 dwv = _mm256_setr_ps(dw[2 * h], dw[2 * h], dw[2 * h], dw[2 * h],
                                                  dw[2 * h + 1], dw[2 * h + 1], dw[2 * h + 1],
                                                  dw[2 * h + 1]);
                const __m256 sums = _mm256_cvtepi32_ps(hsum8_i32x8(isum + 8 * h));
                acc[h] = _mm256_fmadd_ps(sums, _mm256_mul_ps(dwv, dxv), acc[h]);
            }
        }
        _mm256_storeu_ps(out, acc[0]);
        _mm256_storeu_ps(out + 8, acc[1]);
        return;
    }
    float acc[KERN_TILE];
    UNROLL for (int k = 0; k < nw * nx; k++)
        acc[k] = 0.0f;
    int64_t i = 0;
    if (nw == 1 && nx == 1) {
        /* one pair (generation): eight blocks' sums and scales at a time,
         * then their fmas in order */
        const uint8_t *ex = kern_act_extra(x, n);
        for (; i + 8 <= nb; i += 8) {
            const gguf_block_q4_0 *b = (const gguf_block_q4_0 *)w + i;
            const gguf_block_q8_0 *bx = (const gguf_block_q8_0 *)x + i;
            __m256i isum[8];
            UNROLL for (int j = 0; j < 8; j++) {
                const __m256i lead = _mm256_loadu_si256((const __m256i *)KERN_EX_LANES(ex, nb, i + j));
                isum[j] = _mm256_dpbusd_epi32(lead, nibbles_to_bytes(b[j].qs), load32(bx[j].qs));
            }
            const __m128i dw16 = _mm_setr_epi16((short)b[0].d, (short)b[1].d, (short)b[2].d,
                                                (short)b[3].d, (short)b[4].d, (short)b[5].d,
                                                (short)b[6].d, (short)b[7].d);
            const __m256 sc = _mm256_mul_ps(_mm256_cvtph_ps(dw16),
                                            _mm256_loadu_ps((const float *)(const void *)KERN_EX_DX(ex, nb, i)));
            float sums[8], scale[8];
            _mm256_storeu_ps(sums, _mm256_cvtepi32_ps(hsum8_i32x8(isum)));
            _mm256_storeu_ps(scale, sc);
            UNROLL for (int j = 0; j < 8; j++)
                acc[0] = fmaf(sums[j], scale[j], acc[0]);
        }
    }
    const __m256i bias = _mm256_set1_epi8((char)0x80), zero = _mm256_setzero_si256();
    for (; i < nb; i++) {
        __m256i q[KERN_TW], lead[KERN_TW];
        float dw[KERN_TW];
        UNROLL for (int r = 0; r < nw; r++) {
            const gguf_block_q4_0 *b = (const gguf_block_q4_0 *)((const uint8_t *)w + r * ws) + i;
            q[r] = levels_q4_0(b);
            lead[r] = _mm256_sub_epi32(zero, _mm256_dpbusd_epi32(zero, bias, q[r]));
            dw[r] = h2f(b->d);
        }
        UNROLL for (int k = 0; k < nx; k++) {
            const gguf_block_q8_0 *bx = (const gguf_block_q8_0 *)((const uint8_t *)x + k * xs) + i;
            const __m256i a = _mm256_xor_si256(load32(bx->qs), bias);
            const float dx = h2f(bx->d);
            UNROLL for (int r = 0; r < nw; r++) {
                const int isum = hsum_i32x8(_mm256_dpbusd_epi32(lead[r], a, q[r]));
                acc[r * nx + k] = fmaf((float)isum, dw[r] * dx, acc[r * nx + k]);
            }
        }
    }
    UNROLL for (int k = 0; k < nw * nx; k++)
        out[k] = acc[k];
}

/* kern_quantize_q8_0_block on eight lanes: the same maximum (an exact
 * operation in any order), d and 1/d from it as scalars, and each level
 * x · id rounded to nearest even as nearbyintf does. */
KERN_AVX2 void quantize_q8_0_avx2(const float *x, void *vy, int64_t n, int bias)
{
    gguf_block_q8_0 *y = vy;
    const int64_t nb = n / 32;
    uint8_t *ex = (uint8_t *)kern_act_extra(vy, n);
    const __m256 sign = _mm256_set1_ps(-0.0f), inf = _mm256_set1_ps(INFINITY);
    for (int64_t ib = 0; ib < nb; ib++) {
        const float *xb = x + 32 * ib;
        __m256 v[4], m = _mm256_setzero_ps();
        int finite = 0xff;
        UNROLL for (int j = 0; j < 4; j++) {
            v[j] = _mm256_loadu_ps(xb + 8 * j);
            const __m256 a = _mm256_andnot_ps(sign, v[j]);
            finite &= _mm256_movemask_ps(_mm256_cmp_ps(a, inf, _CMP_LT_OQ));
            m = _mm256_max_ps(m, a);
        }
        const float amax = hmax8(m);
        const float d = amax / 127.0f, id = amax != 0.0f ? 127.0f / amax : 0.0f;
        __m256i b;
        if (finite != 0xff || !(id <= FLT_MAX)) { /* NaN or ±inf in, or 1/d overflows */
            kern_quantize_q8_0_block(xb, &y[ib]);
            b = load32(y[ib].qs);
        } else {
            const __m256 vid = _mm256_set1_ps(id);
            __m256i q[4];
            UNROLL for (int j = 0; j < 4; j++)
                q[j] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[j], vid),
                                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
            b = pack_levels(q);
            _mm256_storeu_si256((__m256i *)y[ib].qs, b);
            y[ib].d = gguf_f32_to_f16(d);
        }
        if (bias) { /* the extras (kernels_impl.h) */
            const float dx = gguf_f16_to_f32(y[ib].d);
            const __m256i lanes = _mm256_mullo_epi32(sums4_i8(b), _mm256_set1_epi32(-bias));
            const int32_t total = hsum_i32x8(lanes);
            memcpy(KERN_EX_DX(ex, nb, ib), &dx, 4);
            memcpy(KERN_EX_LEAD(ex, nb, ib), &total, 4);
            _mm256_storeu_si256((__m256i *)KERN_EX_LANES(ex, nb, ib), lanes);
        }
    }
}

/* Packed rows (kern_pack): per group of eight rows and block i, the eight
 * f16 scales side by side, then vectors whose lane r holds four bytes of
 * row r — q4_0: vector c = bytes 4c..4c+3 of qs, whose low nibbles are
 * levels 4c..4c+3 and high nibbles levels 16+4c..; q8_0: vector m = levels
 * 4m..4m+3 plus 128. A dpbusd of such a vector against four activation
 * levels broadcast to every lane adds those four products to each row's
 * own lane, so one row's sum never leaves its lane: no horizontal sums. */
#define PACK_Q4_0_BYTES (16 + 4 * 32)
#define PACK_Q8_0_BYTES (16 + 8 * 32)

/* A row's block into its group's packed block: the scale, then nvec
 * four-byte pieces of the quants, each byte XOR flip. */
static void put_legacy(const uint8_t *b, uint8_t *dst, int r, int nvec, uint8_t flip)
{
    memcpy(dst + 2 * r, b, 2); /* the f16 scale leads both block types */
    for (int c = 0; c < nvec; c++)
        for (int j = 0; j < 4; j++)
            dst[16 + 32 * c + 4 * r + j] = (uint8_t)(b[2 + 4 * c + j] ^ flip);
}

void pack_put_q4_0(const void *blk, uint8_t *dst, int r)
{
    put_legacy(blk, dst, r, 4, 0);
}

void pack_put_q8_0(const void *blk, uint8_t *dst, int r)
{
    put_legacy(blk, dst, r, 8, 0x80);
}

/* q8_0 for the AVX2 kernel: the levels as they are (signed). */
void pack_put_q8_0_signed(const void *blk, uint8_t *dst, int r)
{
    put_legacy(blk, dst, r, 8, 0);
}

/* q8_0's activation rows per pass: its 16 float accumulators and 8 weight
 * vectors fill the 32 registers AVX-512 gives (AVX2's kernel takes as
 * many, spilling some). */
#define KERN_NX8 2

/* q4_0 × nx activation rows: lane r of acc[k] is row r's chain, each block
 * adding fmaf(Σ (u − 8)·a, dw · dx) as the one-row kernel does. The lead
 * (−8 Σ a) starts the first of two integer chains (for latency). */
ALWAYS void rows8_q4_0(packed8_acc_fn block_acc, int64_t n, const void *wp, const void *x,
                      size_t xs, int nx, float *out)
{
    const int64_t nb = n / 32;
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256 acc[KERN_NX];
    const uint8_t *ex[KERN_NX];
    UNROLL for (int k = 0; k < nx; k++) {
        acc[k] = _mm256_setzero_ps();
        ex[k] = kern_act_extra((const uint8_t *)x + k * xs, n);
    }
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *blk = (const uint8_t *)wp + (size_t)i * PACK_Q4_0_BYTES;
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)blk));
        __m256i lo[4], hi[4];
        UNROLL for (int c = 0; c < 4; c++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)(blk + 16 + 32 * c));
            lo[c] = _mm256_and_si256(v, low4);
            hi[c] = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
        }
        block_acc(acc, ex, nb, i, dw, lo, hi, x, xs, nx);
    }
    UNROLL for (int k = 0; k < nx; k++)
        _mm256_storeu_ps(out + 8 * k, acc[k]);
}

ALWAYS_VNNI void rows8_q4_0_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx,
                                 float *out)
{
    rows8_q4_0(packed8_block_acc, n, wp, x, xs, nx, out);
}

ALWAYS void rows8_q4_0_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx,
                            float *out)
{
    rows8_q4_0(packed8_block_acc_avx2, n, wp, x, xs, nx, out);
}

/* q8_0 × nx activation rows. The one-row kernel keeps eight float lanes per
 * output, lane m adding the block's levels 4m..4m+3 times dw · dx, and adds
 * the lanes at the end as hsum8 does; here f[k][m] holds lane m of all
 * eight rows (lane r = row r), and the final sums go in hsum8's order. */
ALWAYS_VNNI void rows8_q8_0_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx,
                                 float *out)
{
    const int64_t nb = n / 32;
    __m256 f[KERN_NX8][8];
    const uint8_t *ex[KERN_NX8];
    UNROLL for (int k = 0; k < nx; k++) {
        UNROLL for (int m = 0; m < 8; m++)
            f[k][m] = _mm256_setzero_ps();
        ex[k] = kern_act_extra((const uint8_t *)x + k * xs, n);
    }
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *blk = (const uint8_t *)wp + (size_t)i * PACK_Q8_0_BYTES;
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)blk));
        __m256i q[8];
        UNROLL for (int m = 0; m < 8; m++)
            q[m] = _mm256_loadu_si256((const __m256i *)(blk + 16 + 32 * m));
        UNROLL for (int k = 0; k < nx; k++) {
            const int8_t *a = ((const gguf_block_q8_0 *)((const uint8_t *)x + k * xs) + i)->qs;
            const int8_t *lead = (const int8_t *)KERN_EX_LANES(ex[k], nb, i);
            const __m256 d = _mm256_mul_ps(dw, bcast_f32(KERN_EX_DX(ex[k], nb, i)));
            UNROLL for (int m = 0; m < 8; m++) {
                const __m256i s = _mm256_dpbusd_epi32(bcast4(lead + 4 * m), q[m], bcast4(a + 4 * m));
                f[k][m] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(s), f[k][m]);
            }
        }
    }
    UNROLL for (int k = 0; k < nx; k++) {
        _mm256_storeu_ps(out + 8 * k, hsum8_rows(f[k]));
    }
}

KERN_VNNI void q4_0x8_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx,
                                float *out)
{
    rows8_by_nx(rows8_q4_0_vnni, n, wp, x, xs, nx, out);
}

KERN_AVX2 void q4_0x8_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx,
                           float *out)
{
    rows8_by_nx(rows8_q4_0_avx2, n, wp, x, xs, nx, out);
}

KERN_VNNI void q8_0x8_vnni(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out)
{
    packed_passes(rows8_q8_0_vnni, KERN_NX8, n, wp, x, xs, nx, out);
}

/* q8_0 with AVX2, packed with signed levels (pack_put_q8_0_signed): the
 * one-row kernel's sign trick (|q| against a·sign(q), then maddubs and
 * madd with ones) lane by lane gives its integers, f[k][m] lane r the float
 * chain m of row r with activation row k; two activation rows a pass share
 * each weight vector and its |q| (their sixteen chains spill some
 * registers, still 5-10% faster than one row a pass). */
ALWAYS void rows8_q8_0_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx,
                            float *out)
{
    const int64_t nb = n / 32;
    const __m256i ones = _mm256_set1_epi16(1);
    const uint8_t *ex[KERN_NX8];
    __m256 f[KERN_NX8][8];
    UNROLL for (int k = 0; k < nx; k++) {
        ex[k] = kern_act_extra((const uint8_t *)x + k * xs, n);
        UNROLL for (int m = 0; m < 8; m++)
            f[k][m] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *blk = (const uint8_t *)wp + (size_t)i * PACK_Q8_0_BYTES;
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)blk));
        __m256 d[KERN_NX8];
        const int8_t *a[KERN_NX8];
        UNROLL for (int k = 0; k < nx; k++) {
            d[k] = _mm256_mul_ps(dw, bcast_f32(KERN_EX_DX(ex[k], nb, i)));
            a[k] = act_q8_0(x, xs, k, i)->qs;
        }
        UNROLL for (int m = 0; m < 8; m++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(blk + 16 + 32 * m));
            const __m256i aq = _mm256_sign_epi8(q, q);
            UNROLL for (int k = 0; k < nx; k++) {
                const __m256i p = _mm256_maddubs_epi16(aq, _mm256_sign_epi8(bcast4(a[k] + 4 * m), q));
                f[k][m] = _mm256_fmadd_ps(d[k], _mm256_cvtepi32_ps(_mm256_madd_epi16(p, ones)), f[k][m]);
            }
        }
    }
    UNROLL for (int k = 0; k < nx; k++)
        _mm256_storeu_ps(out + 8 * k, hsum8_rows(f[k]));
}

KERN_AVX2 void q8_0x8_avx2(int64_t n, const void *wp, const void *x, size_t xs, int nx, float *out)
{
    packed_passes(rows8_q8_0_avx2, KERN_NX8, n, wp, x, xs, nx, out);
}

/* ---------------------------------------------------------------------------
 * The entry points of each type and instruction set: one pair (dot), one
 * weight row × KERN_NX activation rows (dotn) and KERN_TW × KERN_NX (tile,
 * for prompt batches), each a call of the type's kernel with constant
 * shapes.
 */

KERN_AVX2 float dot_q4_0_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    rows_q4_0_avx2(n, w, 0, 1, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_q4_0_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_q4_0_avx2(n, w, 0, 1, x, xs, KERN_NX, out);
}

KERN_AVX2 void tile_q4_0_avx2(int64_t n, const void *w, size_t ws, const void *x, size_t xs,
                              float *out)
{
    rows_q4_0_avx2(n, w, ws, KERN_TW, x, xs, KERN_NX, out);
}

KERN_AVX2 float dot_q5_0_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    rows_scale_only_avx2(GGUF_DT_Q5_0, n, w, 0, 1, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_q5_0_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_scale_only_avx2(GGUF_DT_Q5_0, n, w, 0, 1, x, xs, KERN_NX, out);
}

KERN_AVX2 void tile_q5_0_avx2(int64_t n, const void *w, size_t ws, const void *x, size_t xs,
                              float *out)
{
    rows_scale_only_avx2(GGUF_DT_Q5_0, n, w, ws, KERN_TW, x, xs, KERN_NX, out);
}

KERN_AVX2 float dot_q8_0_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    rows_scale_only_avx2(GGUF_DT_Q8_0, n, w, 0, 1, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_q8_0_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_scale_only_avx2(GGUF_DT_Q8_0, n, w, 0, 1, x, xs, KERN_NX, out);
}

KERN_AVX2 void tile_q8_0_avx2(int64_t n, const void *w, size_t ws, const void *x, size_t xs,
                              float *out)
{
    rows_scale_only_avx2(GGUF_DT_Q8_0, n, w, ws, KERN_TW, x, xs, KERN_NX, out);
}

KERN_AVX2 float dot_q4_1_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    rows_with_min(GGUF_DT_Q4_1, dot_u8_i8, n, w, 0, 1, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_q4_1_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_with_min(GGUF_DT_Q4_1, dot_u8_i8, n, w, 0, 1, x, xs, KERN_NX, out);
}

KERN_AVX2 void tile_q4_1_avx2(int64_t n, const void *w, size_t ws, const void *x, size_t xs,
                              float *out)
{
    rows_with_min(GGUF_DT_Q4_1, dot_u8_i8, n, w, ws, KERN_TW, x, xs, KERN_NX, out);
}

KERN_AVX2 float dot_q5_1_avx2(int64_t n, const void *w, const void *x)
{
    float r;
    rows_with_min(GGUF_DT_Q5_1, dot_u8_i8, n, w, 0, 1, x, 0, 1, &r);
    return r;
}

KERN_AVX2 void dotn_q5_1_avx2(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_with_min(GGUF_DT_Q5_1, dot_u8_i8, n, w, 0, 1, x, xs, KERN_NX, out);
}

KERN_AVX2 void tile_q5_1_avx2(int64_t n, const void *w, size_t ws, const void *x, size_t xs,
                              float *out)
{
    rows_with_min(GGUF_DT_Q5_1, dot_u8_i8, n, w, ws, KERN_TW, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_q4_0_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    rows_q4_0_vnni(n, w, 0, 1, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_q4_0_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_q4_0_vnni(n, w, 0, 1, x, xs, KERN_NX, out);
}

KERN_VNNI void tile_q4_0_vnni(int64_t n, const void *w, size_t ws, const void *x, size_t xs,
                              float *out)
{
    rows_q4_0_vnni(n, w, ws, KERN_TW, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_q5_0_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    rows_scale_only_vnni(GGUF_DT_Q5_0, n, w, 0, 1, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_q5_0_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_scale_only_vnni(GGUF_DT_Q5_0, n, w, 0, 1, x, xs, KERN_NX, out);
}

KERN_VNNI void tile_q5_0_vnni(int64_t n, const void *w, size_t ws, const void *x, size_t xs,
                              float *out)
{
    rows_scale_only_vnni(GGUF_DT_Q5_0, n, w, ws, KERN_TW, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_q8_0_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    rows_scale_only_vnni(GGUF_DT_Q8_0, n, w, 0, 1, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_q8_0_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_scale_only_vnni(GGUF_DT_Q8_0, n, w, 0, 1, x, xs, KERN_NX, out);
}

KERN_VNNI void tile_q8_0_vnni(int64_t n, const void *w, size_t ws, const void *x, size_t xs,
                              float *out)
{
    rows_scale_only_vnni(GGUF_DT_Q8_0, n, w, ws, KERN_TW, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_q4_1_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    rows_with_min(GGUF_DT_Q4_1, dot_u8_i8_vnni, n, w, 0, 1, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_q4_1_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_with_min(GGUF_DT_Q4_1, dot_u8_i8_vnni, n, w, 0, 1, x, xs, KERN_NX, out);
}

KERN_VNNI void tile_q4_1_vnni(int64_t n, const void *w, size_t ws, const void *x, size_t xs,
                              float *out)
{
    rows_with_min(GGUF_DT_Q4_1, dot_u8_i8_vnni, n, w, ws, KERN_TW, x, xs, KERN_NX, out);
}

KERN_VNNI float dot_q5_1_vnni(int64_t n, const void *w, const void *x)
{
    float r;
    rows_with_min(GGUF_DT_Q5_1, dot_u8_i8_vnni, n, w, 0, 1, x, 0, 1, &r);
    return r;
}

KERN_VNNI void dotn_q5_1_vnni(int64_t n, const void *w, const void *x, size_t xs, float *out)
{
    rows_with_min(GGUF_DT_Q5_1, dot_u8_i8_vnni, n, w, 0, 1, x, xs, KERN_NX, out);
}

KERN_VNNI void tile_q5_1_vnni(int64_t n, const void *w, size_t ws, const void *x, size_t xs,
                              float *out)
{
    rows_with_min(GGUF_DT_Q5_1, dot_u8_i8_vnni, n, w, ws, KERN_TW, x, xs, KERN_NX, out);
}
#endif
