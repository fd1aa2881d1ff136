/*
 * forward_simd.c — the AVX2 (+FMA, F16C) paths of forward.c's attention,
 * softmax (gpt-oss's sink logit included), SiLU, RoPE and the Gated
 * DeltaNet's delta rule (forward_simd.h);
 * gpt-oss's SwiGLU-OAI and Gemma's soft-caps have none (forward.c says why).
 *
 * The scalar code in forward.c defines the result; each function here
 * reorganises its loops without changing any output's operations. What
 * makes that hold:
 *  - f16 → float by _mm256_cvtph_ps is exact, as the table lookup;
 *  - float → f16 by _mm256_cvtps_ph (round to nearest even) equals
 *    gguf_f32_to_f16 for every non-NaN float (checked over all 2^32);
 *    groups holding a NaN take the scalar conversion;
 *  - fmaf(a, b, c), a + b, a * b, a / b are single IEEE operations, so a
 *    lane of _mm256_fmadd_ps etc. gives the same bits;
 *  - the sixteen float lanes of the batch dot products are two registers,
 *    lanes 0–7 and 8–15, added the way sum16_reduce adds them.
 * The file is built for generic x86-64 like the rest; only the functions
 * marked KERN_AVX2 (kernels_simd.h) use the wider instruction sets, and
 * forward.c reaches them only through the table fwd_simd_select gives it
 * where the CPU has them. Not for: the matrix products (kernels*.c).
 */
#include "forward_simd.h"

#include "kernels_simd.h"
#include "recurrent.h"

/* The scalar code everywhere: no vector entries. */
static const fwd_simd_ops fwd_scalar = { .name = "scalar" };

#ifdef KERN_X86
#include <math.h>
#include <string.h>

/* clang fuses a * b + c written in one expression when FMA is available
 * (-ffp-contract=on); the exact roundings here must be the ones written.
 * (gcc does not contract in ISO C mode.) */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* exp_poly on eight lanes. 2^n is built in the exponent field, so j · 2^n
 * is one multiplication rounded once, which is what ldexpf(j, n) gives
 * while 2^n is a normal float (-126 <= n <= 127); a vector with any lane
 * outside that (deep underflow, overflow, |n| > 192, NaN) redoes those
 * lanes with the scalar function. */
ALWAYS __m256 exp8(__m256 x)
{
    const __m256 shift = _mm256_set1_ps(0x1.8p23f);
    const __m256 log2e = _mm256_set1_ps(0x1.715476p+0f);
    const __m256 n = _mm256_sub_ps(_mm256_fmadd_ps(x, log2e, shift), shift);
    /* fma(-n, c, x) = fnmadd(n, c, x): -n · c is -(n · c) exactly */
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                      _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 hi = _mm256_fmadd_ps(
        _mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
        _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f)));
    const __m256 j = _mm256_fmadd_ps(
        hi, u, _mm256_fmadd_ps(_mm256_set1_ps(0x1.ffffecp-1f), b, _mm256_set1_ps(1.0f)));
    const __m256 ok = _mm256_and_ps(_mm256_cmp_ps(n, _mm256_set1_ps(-126.0f), _CMP_GE_OQ),
                                    _mm256_cmp_ps(n, _mm256_set1_ps(127.0f), _CMP_LE_OQ));
    /* in the lanes kept n is a whole number (|x · log2 e| < 2^22), converted exactly */
    const __m256i e = _mm256_slli_epi32(
        _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    __m256 r = _mm256_mul_ps(j, _mm256_castsi256_ps(e));
    const int m = _mm256_movemask_ps(ok);
    if (__builtin_expect(m != 0xff, 0)) {
        float xs[8], rs[8];
        _mm256_storeu_ps(xs, x);
        _mm256_storeu_ps(rs, r);
        for (int l = 0; l < 8; l++)
            if (!(m >> l & 1))
                rs[l] = run_exp_poly(xs[l]);
        r = _mm256_loadu_ps(rs);
    }
    return r;
}

/* ---------------------------------------------------------------------------
 * Attention
 */

/* The nh heads of a GQA group (nh <= FWD_MAX_GROUP) against the same keys:
 * each key's row is loaded and converted once for all of them. Each head
 * keeps its two accumulators per key (lanes c..c+7 and c+8..c+15 of every
 * 16 dims), fused-multiply-added over the dims in order and added by
 * hsum16, the chain of the scalar code; with one head, four keys go at a
 * time so that eight independent chains overlap. */
ALWAYS void attn_scores_group_avx2(float *att, size_t att_stride, const float *qf, int n_kv,
                                   const gguf_half *kc, int head_dim, size_t kv_dim, const int nh)
{
    for (int t = 0; t < n_kv; t++) {
        const gguf_half *k = kc + (size_t)t * kv_dim;
        __m256 a[FWD_MAX_GROUP], b[FWD_MAX_GROUP];
        UNROLL for (int g = 0; g < nh; g++)
            a[g] = b[g] = _mm256_setzero_ps();
        for (int c = 0; c < head_dim; c += 16) {
            const __m256 kl = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k + c)));
            const __m256 kh = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k + c + 8)));
            UNROLL for (int g = 0; g < nh; g++) {
                a[g] = _mm256_fmadd_ps(kl, _mm256_loadu_ps(qf + (size_t)g * head_dim + c), a[g]);
                b[g] = _mm256_fmadd_ps(kh, _mm256_loadu_ps(qf + (size_t)g * head_dim + c + 8), b[g]);
            }
        }
        UNROLL for (int g = 0; g < nh; g++)
            att[(size_t)g * att_stride + t] = hsum16(a[g], b[g]);
    }
}

KERN_AVX2 static void fwd_attn_scores_avx2(float *att, size_t att_stride, const gguf_half *q16,
                                            size_t q_stride, int nh, const gguf_half *kc, int n_kv,
                                            int head_dim, size_t kv_dim)
{
    float qf[FWD_MAX_GROUP * head_dim];
    for (int g = 0; g < nh; g++)
        for (int c = 0; c < head_dim; c += 8)
            _mm256_storeu_ps(qf + (size_t)g * head_dim + c, _mm256_cvtph_ps(_mm_loadu_si128(
                                            (const __m128i *)(q16 + (size_t)g * q_stride + c))));
#define KEY(r, c) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k##r + (c))))
    int t = 0;
    switch (nh) { /* constant group sizes, unrolled */
    case 2: attn_scores_group_avx2(att, att_stride, qf, n_kv, kc, head_dim, kv_dim, 2); return;
    case 3: attn_scores_group_avx2(att, att_stride, qf, n_kv, kc, head_dim, kv_dim, 3); return;
    case 4: attn_scores_group_avx2(att, att_stride, qf, n_kv, kc, head_dim, kv_dim, 4); return;
    default: break;
    }
    const float *qf0 = qf;
    for (; t + 4 <= n_kv; t += 4) {
        const gguf_half *k0 = kc + (size_t)t * kv_dim, *k1 = k0 + kv_dim, *k2 = k1 + kv_dim,
                        *k3 = k2 + kv_dim;
        __m256 a0 = _mm256_setzero_ps(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0,
               b3 = a0;
        for (int c = 0; c < head_dim; c += 16) {
            const __m256 ql = _mm256_loadu_ps(qf0 + c), qh = _mm256_loadu_ps(qf0 + c + 8);
            a0 = _mm256_fmadd_ps(KEY(0, c), ql, a0);
            b0 = _mm256_fmadd_ps(KEY(0, c + 8), qh, b0);
            a1 = _mm256_fmadd_ps(KEY(1, c), ql, a1);
            b1 = _mm256_fmadd_ps(KEY(1, c + 8), qh, b1);
            a2 = _mm256_fmadd_ps(KEY(2, c), ql, a2);
            b2 = _mm256_fmadd_ps(KEY(2, c + 8), qh, b2);
            a3 = _mm256_fmadd_ps(KEY(3, c), ql, a3);
            b3 = _mm256_fmadd_ps(KEY(3, c + 8), qh, b3);
        }
        att[t] = hsum16(a0, b0);
        att[t + 1] = hsum16(a1, b1);
        att[t + 2] = hsum16(a2, b2);
        att[t + 3] = hsum16(a3, b3);
    }
    for (; t < n_kv; t++) {
        const gguf_half *k0 = kc + (size_t)t * kv_dim;
        __m256 a0 = _mm256_setzero_ps(), b0 = a0;
        for (int c = 0; c < head_dim; c += 16) {
            a0 = _mm256_fmadd_ps(KEY(0, c), _mm256_loadu_ps(qf0 + c), a0);
            b0 = _mm256_fmadd_ps(KEY(0, c + 8), _mm256_loadu_ps(qf0 + c + 8), b0);
        }
        att[t] = hsum16(a0, b0);
    }
#undef KEY
}

/* The scores are scaled and their maximum taken eight at a time; the
 * lanes' maxima may differ from the scalar scan's only in the sign of a
 * zero maximum, and e^(x - ±0) is the same for every x. Whole groups of 16
 * are two exp8 calls; a last partial group is padded with the maximum
 * (e^0, no fallback) and its padding zeroed before the sum, as the scalar
 * code counts missing positions as 0. A sink (not NaN) starts the scan of
 * the lanes' maxima, as it starts the scalar scan, and its e^(sink - max)
 * is the scalar one (libm's expf; sign of a zero max: e^±0 = 1 too), added
 * after the groups as there. */
KERN_AVX2 static void fwd_attn_softmax_avx2(float *x, int n, float scale, float sink)
{
    const __m256 vscale = _mm256_set1_ps(scale);
    __m256 vmax = _mm256_set1_ps(-INFINITY);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), vscale);
        _mm256_storeu_ps(x + i, v);
        vmax = _mm256_max_ps(v, vmax); /* v > max ? v : max, NaN skipped, as the scalar scan */
    }
    float lanes[8], max = isnan(sink) ? -INFINITY : sink;
    _mm256_storeu_ps(lanes, vmax);
    for (int l = 0; l < 8; l++)
        max = lanes[l] > max ? lanes[l] : max;
    for (; i < n; i++) {
        x[i] *= scale;
        max = x[i] > max ? x[i] : max;
    }
    const __m256 vm = _mm256_set1_ps(max);
    double sum = 0.0;
    int g = 0;
    for (; g + 16 <= n; g += 16) {
        const __m256 e0 = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + g), vm));
        const __m256 e1 = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + g + 8), vm));
        _mm256_storeu_ps(x + g, e0);
        _mm256_storeu_ps(x + g + 8, e1);
        sum += (double)hsum16(e0, e1);
    }
    if (g < n) {
        const int left = n - g;
        float e[16];
        for (int l = 0; l < 16; l++)
            e[l] = l < left ? x[g + l] : max;
        for (int h = 0; h < 16; h += 8)
            _mm256_storeu_ps(e + h, exp8(_mm256_sub_ps(_mm256_loadu_ps(e + h), vm)));
        for (int l = 0; l < 16; l++) {
            if (l < left)
                x[g + l] = e[l];
            else
                e[l] = 0.0f;
        }
        sum += (double)hsum16(_mm256_loadu_ps(e), _mm256_loadu_ps(e + 8));
    }
    if (!isnan(sink))
        sum += (double)expf(sink - max);
    const float inv = (float)(1.0 / sum);
    const __m256 vinv = _mm256_set1_ps(inv);
    for (i = 0; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vinv));
    for (; i < n; i++)
        x[i] *= inv;
}

/* The scalar loop runs over i outside and t inside, reading a column of V
 * (kv_dim apart) per output. Here t is outside: the sixteen lane sums of
 * every i become sixteen rows acc[l][0..head_dim), position t adding
 * p_t · v_t into row t % 16 across contiguous i, so V is read row by row
 * (once for the nh heads of a GQA group, each with its own rows and
 * probabilities). Each acc[l][i] sees the same fused multiply-adds in the
 * same t order as the scalar lane l of output i, and the rows are then
 * added as sum16_reduce adds lanes. */
ALWAYS void attn_values_avx2(float *out, size_t out_stride, const gguf_half *p16, size_t p_stride,
                             const gguf_half *vc, int n_kv, int head_dim, size_t kv_dim, float *acc,
                             const int nh)
{
    const size_t rows = 16 * (size_t)head_dim;
    memset(acc, 0, (size_t)nh * rows * sizeof *acc);
    for (int t = 0; t < n_kv; t++) {
        const gguf_half *v = vc + (size_t)t * kv_dim;
        __m256 p[FWD_MAX_GROUP];
        UNROLL for (int g = 0; g < nh; g++)
            p[g] = _mm256_broadcastss_ps(
                _mm_cvtph_ps(_mm_cvtsi32_si128(p16[(size_t)g * p_stride + (size_t)t])));
        float *a = acc + (size_t)(t & 15) * head_dim;
        for (int i = 0; i < head_dim; i += 8) {
            const __m256 vi = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(v + i)));
            UNROLL for (int g = 0; g < nh; g++) {
                float *ag = a + (size_t)g * rows + i;
                _mm256_storeu_ps(ag, _mm256_fmadd_ps(p[g], vi, _mm256_loadu_ps(ag)));
            }
        }
    }
    for (int g = 0; g < nh; g++) {
        const float *ag = acc + (size_t)g * rows;
        for (int i = 0; i < head_dim; i += 8) {
            __m256 r[8], q[4];
            for (int l = 0; l < 8; l++)
                r[l] = _mm256_add_ps(_mm256_loadu_ps(ag + (l + 8) * head_dim + i),
                                     _mm256_loadu_ps(ag + l * head_dim + i));
            for (int l = 0; l < 4; l++)
                q[l] = _mm256_add_ps(r[l + 4], r[l]);
            const __m256 s02 = _mm256_add_ps(q[0], q[2]), s13 = _mm256_add_ps(q[1], q[3]);
            _mm256_storeu_ps(out + (size_t)g * out_stride + i, _mm256_add_ps(s02, s13));
        }
    }
}

KERN_AVX2 static void fwd_attn_values_avx2(float *out, size_t out_stride, const gguf_half *p16,
                                            size_t p_stride, int nh, const gguf_half *vc, int n_kv,
                                            int head_dim, size_t kv_dim)
{
    float acc[FWD_MAX_HEAD_DIM * 16];
    switch (nh) { /* constant group sizes, unrolled */
    case 1: attn_values_avx2(out, out_stride, p16, p_stride, vc, n_kv, head_dim, kv_dim, acc, 1); break;
    case 2: attn_values_avx2(out, out_stride, p16, p_stride, vc, n_kv, head_dim, kv_dim, acc, 2); break;
    case 3: attn_values_avx2(out, out_stride, p16, p_stride, vc, n_kv, head_dim, kv_dim, acc, 3); break;
    default: attn_values_avx2(out, out_stride, p16, p_stride, vc, n_kv, head_dim, kv_dim, acc, 4); break;
    }
}

/* ---------------------------------------------------------------------------
 * SiLU, RoPE, f16 rounding
 */

/* silu(g) = g / (1 + e^(0 - g)) on eight lanes, as run_swiglu and
 * rec_silu_row have it: 0 - g (not -g, which differs for g = +0). */
ALWAYS __m256 silu8(__m256 g)
{
    const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
    return _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

KERN_AVX2 static int fwd_swiglu_avx2(float *g, const float *u, int n)
{
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(g + i, _mm256_mul_ps(silu8(_mm256_loadu_ps(g + i)), _mm256_loadu_ps(u + i)));
    return i;
}

/* rec_silu_row's groups of 16 (the vector exponential's part). */
KERN_AVX2 static int fwd_silu_avx2(float *x, int n)
{
    const int n16 = n & ~15;
    for (int i = 0; i < n16; i += 8)
        _mm256_storeu_ps(x + i, silu8(_mm256_loadu_ps(x + i)));
    return n16;
}

/* run_geglu (u) or run_gelu (u NULL) over whole groups of eight up to the
 * first holding a NaN (the scalar code's cases for it differ); returns how
 * many it did. x rounds to f16 as gguf_f32_to_f16 rounds it (no NaN), the
 * table's entry (a 32-bit gather at 2·h: h is at most 0xfc00, -inf, so
 * the read stays inside the 65536 entries) back to float exactly; then
 * x itself from 10 up, 0 at -10 and below, as the scalar branches. */
KERN_AVX2 static int fwd_geglu_avx2(float *g, const float *u, int n, const gguf_half *gelu16)
{
    const __m256 lo = _mm256_set1_ps(-10.0f), hi = _mm256_set1_ps(10.0f);
    const __m256i low16 = _mm256_set1_epi32(0xffff);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(g + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
            break;
        const __m256i h = _mm256_cvtepu16_epi32(
            _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        const __m256i e = _mm256_and_si256(
            _mm256_i32gather_epi32((const int *)(const void *)gelu16, h, 2), low16);
        const __m128i e16 = _mm_packus_epi32(_mm256_castsi256_si128(e), _mm256_extracti128_si256(e, 1));
        __m256 r = _mm256_blendv_ps(_mm256_cvtph_ps(e16), x, _mm256_cmp_ps(x, hi, _CMP_GE_OQ));
        if (u)
            r = _mm256_mul_ps(r, _mm256_loadu_ps(u + i));
        _mm256_storeu_ps(g + i, _mm256_andnot_ps(_mm256_cmp_ps(x, lo, _CMP_LE_OQ), r));
    }
    return i;
}

/* run_rope_rotate built for FMA. */
KERN_AVX2 static void fwd_rope_apply_fma(float *x, int n_heads, int head_dim, int n_rot,
                                          const float *cs, enum run_rope_layout layout)
{
    run_rope_rotate(x, n_heads, head_dim, n_rot, cs, layout);
}

KERN_AVX2 static void fwd_f32_to_f16_avx2(const float *x, gguf_half *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
            /* NaN: gguf_f32_to_f16 makes ggml's canonical quiet NaN */
            for (int l = 0; l < 8; l++)
                y[i + l] = gguf_f32_to_f16(x[i + l]);
            continue;
        }
        _mm_storeu_si128((__m128i *)(y + i),
                         _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    for (; i < n; i++)
        y[i] = gguf_f32_to_f16(x[i]);
}

/* The four 16-lane sums of run_attn_scores1/values1, sum j as lanes
 * 0–7 in a[2j] and 8–15 in a[2j + 1], folded as forward.c's fold4x16. */
ALWAYS float fold4x16_avx2(const __m256 a[8])
{
    const __m256 lo = _mm256_add_ps(_mm256_add_ps(a[0], a[4]), _mm256_add_ps(a[2], a[6]));
    const __m256 hi = _mm256_add_ps(_mm256_add_ps(a[1], a[5]), _mm256_add_ps(a[3], a[7]));
    return hsum16(lo, hi);
}

/* One token's scores: each key's dims 64 at a time into the four sums
 * (eight registers), folded; the tail in double. */
KERN_AVX2 static int fwd_attn_scores1_avx2(float *att, const gguf_half *q16, const gguf_half *kc,
                                            int n_kv, int head_dim, size_t kv_dim)
{
    const int body = head_dim / 64 * 64;
    for (int t = 0; t < n_kv; t++) {
        const gguf_half *k = kc + (size_t)t * kv_dim;
        __m256 a[8];
        for (int j = 0; j < 8; j++)
            a[j] = _mm256_setzero_ps();
        for (int i = 0; i < body; i += 64)
            for (int j = 0; j < 8; j++)
                a[j] = _mm256_fmadd_ps(
                    _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k + i + 8 * j))),
                    _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(q16 + i + 8 * j))), a[j]);
        double dot = fold4x16_avx2(a);
        for (int i = body; i < head_dim; i++)
            dot += (double)(_cvtsh_ss(k[i]) * _cvtsh_ss(q16[i]));
        att[t] = (float)dot;
    }
    return n_kv;
}

/* One token's weighted values, up to 32 dims (nv vectors of eight) per
 * pass over the positions: position t's products go to accumulator t % 64
 * (sum (t / 16) % 4, lane t % 16), a vector per eight dims; then per dim
 * the 64 are folded as fold4x16 folds them, lane by lane across the
 * vectors. */
KERN_AVX2 static void fwd_attn_values1_avx2(float *out, const gguf_half *p16, const gguf_half *vc,
                                             int n_kv, int head_dim, size_t kv_dim)
{
    for (int i0 = 0; i0 < head_dim; i0 += 32) {
        const int nv = head_dim - i0 < 32 ? (head_dim - i0) / 8 : 4;
        __m256 acc[64][4];
        for (int c = 0; c < 64; c++)
            for (int j = 0; j < 4; j++)
                acc[c][j] = _mm256_setzero_ps();
        for (int t = 0; t < n_kv; t++) {
            const __m256 p = _mm256_set1_ps(_cvtsh_ss(p16[t]));
            const gguf_half *v = vc + (size_t)t * kv_dim + i0;
            for (int j = 0; j < nv; j++)
                acc[t % 64][j] = _mm256_fmadd_ps(
                    p, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(v + 8 * j))), acc[t % 64][j]);
        }
        for (int j = 0; j < nv; j++) {
            __m256 e[16], tt[8], q[4];
            for (int l = 0; l < 16; l++) /* (sum0 + sum2) + (sum1 + sum3), lane l */
                e[l] = _mm256_add_ps(_mm256_add_ps(acc[l][j], acc[32 + l][j]),
                                     _mm256_add_ps(acc[16 + l][j], acc[48 + l][j]));
            for (int l = 0; l < 8; l++)
                tt[l] = _mm256_add_ps(e[l + 8], e[l]);
            for (int l = 0; l < 4; l++)
                q[l] = _mm256_add_ps(tt[l + 4], tt[l]);
            _mm256_storeu_ps(out + i0 + 8 * j,
                             _mm256_add_ps(_mm256_add_ps(q[0], q[2]), _mm256_add_ps(q[1], q[3])));
        }
    }
}

/* rec_dot (recurrent.c): four 16-lane accumulators fed 64 elements at a
 * time, acc[j] lanes 0–7 in a[2j] and 8–15 in a[2j + 1], folded as the
 * scalar code folds them; then its tail (16 or 8 rounded products added
 * in order, the last < 8 fused). */
KERN_AVX2 static float fwd_rec_dot_avx2(const float *x, const float *y, int n)
{
    const int np = n & ~63;
    float s = 0.0f;
    if (np) {
        __m256 a[8];
        for (int j = 0; j < 8; j++)
            a[j] = _mm256_setzero_ps();
        for (int i = 0; i < np; i += 64)
            for (int j = 0; j < 8; j++)
                a[j] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8 * j), _mm256_loadu_ps(y + i + 8 * j), a[j]);
        const __m256 lo = _mm256_add_ps(_mm256_add_ps(a[0], a[4]), _mm256_add_ps(a[2], a[6]));
        const __m256 hi = _mm256_add_ps(_mm256_add_ps(a[1], a[5]), _mm256_add_ps(a[3], a[7]));
        const __m256 c8 = _mm256_add_ps(lo, hi);
        const __m128 c4 = _mm_add_ps(_mm256_castps256_ps128(c8), _mm256_extractf128_ps(c8, 1));
        float c[4];
        _mm_storeu_ps(c, c4);
        s = (c[0] + c[2]) + (c[1] + c[3]);
    }
    return rec_sum_tail(s, x + np, y + np, n - np);
}

/* The fold rec_dot ends with (fwd_rec_dot_avx2's), of eight accumulators
 * a[j] given as their pairwise sums: lo = (a0 + a4) + (a2 + a6), hi =
 * (a1 + a5) + (a3 + a7). */
KERN_AVX2 static inline float fwd_rec_fold(__m256 lo, __m256 hi)
{
    const __m256 c8 = _mm256_add_ps(lo, hi);
    const __m128 c4 = _mm_add_ps(_mm256_castps256_ps128(c8), _mm256_extractf128_ps(c8, 1));
    const __m128 t = _mm_add_ps(c4, _mm_movehl_ps(c4, c4)); /* c0 + c2, c1 + c3 */
    return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

/* Two rows of the state at once, S a multiple of 64: rec_dot's
 * accumulator a[j] (elements 64i + 8j ... + 7, i = 0, 1, ...) is made one
 * j at a time for both rows, each k or q vector loaded once for the two,
 * and the fold's pairs added as soon as both exist (few registers live).
 * The decayed row is made twice (for the dot with k, then for the update)
 * rather than stored and read back: the same product each time. Every
 * element sees rec_delta_step's operations in its order. */
KERN_AVX2 static void fwd_delta_rows2_avx2(float *r0, float *r1, float *out, const float *q,
                                           const float *k, const float *v, __m256 vd, float beta,
                                           float scale, int S, float *d)
{
    static const int jorder[8] = { 0, 4, 2, 6, 1, 5, 3, 7 };
    __m256 s0[8], s1[8]; /* the accumulators, in jorder */
    for (int n = 0; n < 8; n++) {
        const int j = jorder[n];
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        for (int i = 8 * j; i < S; i += 64) {
            const __m256 kk = _mm256_loadu_ps(k + i);
            a0 = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_loadu_ps(r0 + i), vd), kk, a0);
            a1 = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_loadu_ps(r1 + i), vd), kk, a1);
        }
        s0[n] = a0, s1[n] = a1;
    }
    const float k0 = fwd_rec_fold(_mm256_add_ps(_mm256_add_ps(s0[0], s0[1]), _mm256_add_ps(s0[2], s0[3])),
                                  _mm256_add_ps(_mm256_add_ps(s0[4], s0[5]), _mm256_add_ps(s0[6], s0[7])));
    const float k1 = fwd_rec_fold(_mm256_add_ps(_mm256_add_ps(s1[0], s1[1]), _mm256_add_ps(s1[2], s1[3])),
                                  _mm256_add_ps(_mm256_add_ps(s1[4], s1[5]), _mm256_add_ps(s1[6], s1[7])));
    d[0] = (v[0] - k0) * beta;
    d[1] = (v[1] - k1) * beta;
    const __m256 d0 = _mm256_set1_ps(d[0]), d1 = _mm256_set1_ps(d[1]);
    for (int n = 0; n < 8; n++) {
        const int j = jorder[n];
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        for (int i = 8 * j; i < S; i += 64) {
            const __m256 kk = _mm256_loadu_ps(k + i), qq = _mm256_loadu_ps(q + i);
            const __m256 x0 = _mm256_fmadd_ps(kk, d0, _mm256_mul_ps(_mm256_loadu_ps(r0 + i), vd));
            const __m256 x1 = _mm256_fmadd_ps(kk, d1, _mm256_mul_ps(_mm256_loadu_ps(r1 + i), vd));
            _mm256_storeu_ps(r0 + i, x0);
            _mm256_storeu_ps(r1 + i, x1);
            a0 = _mm256_fmadd_ps(x0, qq, a0);
            a1 = _mm256_fmadd_ps(x1, qq, a1);
        }
        s0[n] = a0, s1[n] = a1;
    }
    out[0] = fwd_rec_fold(_mm256_add_ps(_mm256_add_ps(s0[0], s0[1]), _mm256_add_ps(s0[2], s0[3])),
                          _mm256_add_ps(_mm256_add_ps(s0[4], s0[5]), _mm256_add_ps(s0[6], s0[7]))) * scale;
    out[1] = fwd_rec_fold(_mm256_add_ps(_mm256_add_ps(s1[0], s1[1]), _mm256_add_ps(s1[2], s1[3])),
                          _mm256_add_ps(_mm256_add_ps(s1[4], s1[5]), _mm256_add_ps(s1[6], s1[7]))) * scale;
}

/* rec_delta_step row by row: row j's decay, write strength d[j] (its dot
 * with k), rank-one update and read (its dot with q) need no other row, so
 * each element sees the scalar passes' operations in their order while
 * the row stays in L1, one pass over the state instead of four; rows in
 * pairs where S is a multiple of 64 (fwd_delta_rows2_avx2). */
KERN_AVX2 static void fwd_delta_step_avx2(float *M, float *out, const float *q, const float *k,
                                          const float *v, float g, float beta, int S, float *d)
{
    const float decay = expf(g);
    const __m256 vd = _mm256_set1_ps(decay);
    const float scale = 1.0f / sqrtf((float)S);
    if (S % 64 == 0) {
        for (int j = 0; j < S; j += 2)
            fwd_delta_rows2_avx2(M + (size_t)j * S, M + (size_t)(j + 1) * S, out + j, q, k, v + j, vd,
                                 beta, scale, S, d + j);
        return;
    }
    for (int j = 0; j < S; j++) {
        float *row = M + (size_t)j * S;
        int c = 0;
        for (; c + 8 <= S; c += 8)
            _mm256_storeu_ps(row + c, _mm256_mul_ps(_mm256_loadu_ps(row + c), vd));
        for (; c < S; c++)
            row[c] *= decay;
        d[j] = (v[j] - fwd_rec_dot_avx2(row, k, S)) * beta;
        const __m256 dj = _mm256_set1_ps(d[j]);
        for (c = 0; c + 8 <= S; c += 8)
            _mm256_storeu_ps(row + c, _mm256_fmadd_ps(_mm256_loadu_ps(k + c), dj, _mm256_loadu_ps(row + c)));
        for (; c < S; c++)
            row[c] = fmaf(k[c], d[j], row[c]);
        out[j] = fwd_rec_dot_avx2(row, q, S) * scale;
    }
}

/* rec_conv for K < 8: each output a chain of fused multiply-adds over its
 * window (sum_tail's < 8 part), eight channels a register. The window of
 * token b is the state's K - 1 values then the inputs, seq[b .. b+K-1].
 * The channels go in blocks of CONV_BLOCK, token by token within a block,
 * so that each token's inputs are read a block's width at a time (token by
 * token per register of channels, each read would be a row C floats away
 * from the last: a cache line and a page per read). */
#define CONV_BLOCK 256
KERN_AVX2 static int fwd_conv_avx2(float *y, const float *x, float *state, const float *w, int C,
                                   int K, int nb)
{
    if (K < 1 || K >= 8)
        return -1;
    const int C8 = C & ~7;
    float st[7][CONV_BLOCK], wt[7][CONV_BLOCK];
    for (int c0 = 0; c0 < C8; c0 += CONV_BLOCK) {
        const int cn = C8 - c0 < CONV_BLOCK ? C8 - c0 : CONV_BLOCK;
        for (int c = 0; c < cn; c++) {
            for (int j = 0; j < K - 1; j++)
                st[j][c] = state[(size_t)(c0 + c) * (size_t)(K - 1) + (size_t)j];
            for (int i = 0; i < K; i++)
                wt[i][c] = w[(size_t)(c0 + c) * (size_t)K + (size_t)i];
        }
        for (int b = 0; b < nb; b++) {
            float *yb = y + (size_t)b * C + c0;
            for (int c = 0; c < cn; c += 8) {
                __m256 acc = _mm256_setzero_ps();
                for (int i = 0; i < K; i++) {
                    const int j = b + i; /* in seq */
                    const __m256 xv = j < K - 1 ? _mm256_loadu_ps(st[j] + c)
                                                : _mm256_loadu_ps(x + (size_t)(j - (K - 1)) * C + c0 + c);
                    acc = _mm256_fmadd_ps(xv, _mm256_loadu_ps(wt[i] + c), acc);
                }
                _mm256_storeu_ps(yb + c, acc);
            }
        }
        /* the new state: seq[nb .. nb+K-2] */
        for (int c = 0; c < cn; c++)
            for (int j = 0; j < K - 1; j++) {
                const int q = nb + j;
                state[(size_t)(c0 + c) * (size_t)(K - 1) + (size_t)j] =
                    q < K - 1 ? st[q][c] : x[(size_t)(q - (K - 1)) * C + c0 + c];
            }
    }
    for (int c = C8; c < C; c++) {
        float *sc = state + (size_t)c * (size_t)(K - 1);
        const float *wc = w + (size_t)c * (size_t)K;
        float seq[7];
        for (int b = 0; b < nb; b++) {
            float acc = 0.0f;
            for (int i = 0; i < K; i++) {
                const int j = b + i;
                acc = fmaf(j < K - 1 ? sc[j] : x[(size_t)(j - (K - 1)) * C + c], wc[i], acc);
            }
            y[(size_t)b * C + c] = acc;
        }
        for (int j = 0; j < K - 1; j++) {
            const int q = nb + j;
            seq[j] = q < K - 1 ? sc[q] : x[(size_t)(q - (K - 1)) * C + c];
        }
        memcpy(sc, seq, (size_t)(K - 1) * sizeof *sc);
    }
    return 0;
}

static const fwd_simd_ops fwd_avx2 = {
    .name = "avx2",
    .rope_apply = fwd_rope_apply_fma,
    .swiglu = fwd_swiglu_avx2,
    .silu = fwd_silu_avx2,
    .geglu = fwd_geglu_avx2,
    .attn_softmax = fwd_attn_softmax_avx2,
    .attn_scores = fwd_attn_scores_avx2,
    .attn_values = fwd_attn_values_avx2,
    .to_f16 = fwd_f32_to_f16_avx2,
    .attn_scores1 = fwd_attn_scores1_avx2,
    .attn_values1 = fwd_attn_values1_avx2,
    .delta_step = fwd_delta_step_avx2,
    .conv = fwd_conv_avx2,
};
#endif

const fwd_simd_ops *fwd_simd_select(bool scalar)
{
#ifdef KERN_X86
    if (!scalar && kern_cpu_has_avx2())
        return &fwd_avx2;
#endif
    (void)scalar;
    return &fwd_scalar;
}
