/*
 * kernels_simd.h — the x86 instruction sets gguf-run's vector code is built
 * for, and the vector helpers the kernel files share.
 *
 * The one place that spells them: each instruction set's target attribute
 * (KERN_AVX2, KERN_VNNI) and the CPU probe that says whether this machine
 * has it (kern_probe_avx2, kern_probe_vnni; kernels.c asks once and caches
 * the answers for everyone, forward_simd.c included). Every function built
 * for a set carries its attribute by name; nothing else calls
 * __builtin_cpu_supports or writes a target("...") list.
 *
 * Then the small operations every block kernel uses (always inlined, built
 * for AVX2 so that a function of either set may inline them), and the
 * integer product steps of each set that a kernel body written once for
 * both takes as a parameter. Included by run/kernels*.c and
 * run/forward_simd.c; empty off x86-64.
 *
 * Not for: a kernel's own unpacking (its file), dispatch (kernels.c).
 */
#ifndef RUN_KERNELS_SIMD_H
#define RUN_KERNELS_SIMD_H

#include "kernels_impl.h"

#ifdef KERN_X86
#include <cpuid.h>
#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Instruction sets
 */

/* AVX2 + FMA + F16C: every vector kernel and forward_simd.c's loops. */
#define KERN_AVX2 __attribute__((target("avx2,fma,f16c")))

/* AVX-512 VNNI with VL, for 256-bit registers: dpbusd / dpwssd do what
 * maddubs + madd (+ add) do, with the same exact integers in the same
 * lanes, so the float arithmetic after them is unchanged. */
#define KERN_VNNI __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512vnni")))

/* Whether this CPU runs KERN_AVX2 code: asks cpuid each time (in a VM a
 * trap to the hypervisor), so only kern_cpu_has_avx2() calls it. F16C is
 * leaf 1 ECX bit 29, which clang's __builtin_cpu_supports does not name. */
static inline bool kern_probe_avx2(void)
{
    unsigned a, b, c, d;
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1);
}

/* Whether a CPU that runs KERN_AVX2 code runs KERN_VNNI code as well: the
 * AVX-512 part of the set (kern_cpu_has_vnni() asks once). */
static inline bool kern_probe_vnni(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512vnni");
}

/* Inline helpers of each set; an AVX2 helper inlines into VNNI code too. */
#define ALWAYS KERN_AVX2 static inline __attribute__((always_inline))
#define ALWAYS_VNNI KERN_VNNI static inline __attribute__((always_inline))

/* ---------------------------------------------------------------------------
 * Shared helpers
 */

/* Loops over a tile's rows or a super-block's registers have constant
 * bounds once inlined; unrolled, their arrays stay in registers. */
#define UNROLL _Pragma("GCC unroll 8")

/* sum16_reduce of the lanes 0–7 in lo and 8–15 in hi: i + 8 with i, then
 * i + 4 with i, then (0 + 2) + (1 + 3). */
ALWAYS float hsum16(__m256 lo, __m256 hi)
{
    const __m256 t = _mm256_add_ps(hi, lo);
    const __m128 q = _mm_add_ps(_mm256_extractf128_ps(t, 1), _mm256_castps256_ps128(t));
    const __m128 s = _mm_add_ps(q, _mm_movehl_ps(q, q)); /* q0 + q2, q1 + q3 */
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

/* f16 → float with F16C (exact for every non-NaN value). */
ALWAYS float h2f(gguf_half h)
{
    return _cvtsh_ss(h);
}

/* The eight lanes added: (i + i+4) pairwise, then 0+2 and 1+3, then those
 * two — the order ggml's AVX2 reduction uses. */
ALWAYS float hsum8(__m256 v)
{
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

/* Eight vectors of per-row chains (vector m = lane m of eight rows' sums)
 * added so that each row's lane gets hsum8's order. */
ALWAYS __m256 hsum8_rows(const __m256 f[8])
{
    const __m256 lo = _mm256_add_ps(_mm256_add_ps(f[0], f[4]), _mm256_add_ps(f[2], f[6]));
    const __m256 hi = _mm256_add_ps(_mm256_add_ps(f[1], f[5]), _mm256_add_ps(f[3], f[7]));
    return _mm256_add_ps(lo, hi);
}

/* acc += d · float(s), lane by lane. */
ALWAYS __m256 add_scaled(__m256 acc, float d, __m256i s)
{
    return _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(s), acc);
}

ALWAYS __m256i load256(const uint8_t *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

/* Four bytes at p (levels, a lead, a pair of int16) in every 32-bit lane. */
ALWAYS __m256i bcast4(const void *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

/* The float at p in every lane. */
ALWAYS __m256 bcast_f32(const uint8_t *p)
{
    float v;
    memcpy(&v, p, 4);
    return _mm256_set1_ps(v);
}

/* Activation block i of row k (q8_0 rows, or q8_1 / q8_K ones, which start
 * alike, xs bytes apart from x). */
ALWAYS const gguf_block_q8_0 *act_q8_0(const void *x, size_t xs, int k, int64_t i)
{
    return (const gguf_block_q8_0 *)((const uint8_t *)x + k * xs) + i;
}

/* One block's step of a packed q4_0 / mxfp4 kernel (below: with VNNI or
 * with AVX2), the kernel body taking it as a constant. */
typedef void (*packed8_acc_fn)(__m256 *acc, const uint8_t *const *ex, int64_t nb, int64_t i,
                               __m256 dw, const __m256i lo[4], const __m256i hi[4], const void *x,
                               size_t xs, int nx);

/* Block i of eight packed rows (the q4_0 and mxfp4 layouts: dw the rows'
 * scales, lo[c] and hi[c] four of each row's first and last sixteen
 * unsigned values) against nx q8_0 activation rows with their extras ex:
 * lane r of acc[k] adds fmaf(lead + Σ u·a, dw · dx), the one-row kernel's
 * chain for row r, the lead (−bias · Σ a) starting the first of two integer
 * chains (for latency). */
ALWAYS_VNNI void packed8_block_acc(__m256 *acc, const uint8_t *const *ex, int64_t nb, int64_t i,
                                   __m256 dw, const __m256i lo[4], const __m256i hi[4],
                                   const void *x, size_t xs, int nx)
{
    UNROLL for (int k = 0; k < nx; k++) {
        const int8_t *a = act_q8_0(x, xs, k, i)->qs;
        int32_t lead;
        memcpy(&lead, KERN_EX_LEAD(ex[k], nb, i), 4);
        __m256i s0 = _mm256_set1_epi32(lead), s1 = _mm256_setzero_si256();
        UNROLL for (int c = 0; c < 4; c++) {
            s0 = _mm256_dpbusd_epi32(s0, lo[c], bcast4(a + 4 * c));
            s1 = _mm256_dpbusd_epi32(s1, hi[c], bcast4(a + 16 + 4 * c));
        }
        acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(s0, s1)),
                                 _mm256_mul_ps(dw, bcast_f32(KERN_EX_DX(ex[k], nb, i))), acc[k]);
    }
}

/* packed8_block_acc with AVX2 (no dpbusd): the same integers in the same
 * lanes. The unsigned values (at most 24) times the levels (at most 128 in
 * magnitude) go through maddubs, whose pair sums (within ±2·24·128) add in
 * 16 bits four at a time (within ±24576 < 2^15) before a madd with ones,
 * one chain for lo and one for hi. */
ALWAYS void packed8_block_acc_avx2(__m256 *acc, const uint8_t *const *ex, int64_t nb, int64_t i,
                                   __m256 dw, const __m256i lo[4], const __m256i hi[4],
                                   const void *x, size_t xs, int nx)
{
    const __m256i ones = _mm256_set1_epi16(1);
    UNROLL for (int k = 0; k < nx; k++) {
        const int8_t *a = act_q8_0(x, xs, k, i)->qs;
        __m256i s0 = _mm256_maddubs_epi16(lo[0], bcast4(a));
        __m256i s1 = _mm256_maddubs_epi16(hi[0], bcast4(a + 16));
        UNROLL for (int c = 1; c < 4; c++) {
            s0 = _mm256_add_epi16(s0, _mm256_maddubs_epi16(lo[c], bcast4(a + 4 * c)));
            s1 = _mm256_add_epi16(s1, _mm256_maddubs_epi16(hi[c], bcast4(a + 16 + 4 * c)));
        }
        const __m256i s = _mm256_add_epi32(
            _mm256_add_epi32(_mm256_madd_epi16(s0, ones), _mm256_madd_epi16(s1, ones)),
            bcast4(KERN_EX_LEAD(ex[k], nb, i)));
        acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s),
                                 _mm256_mul_ps(dw, bcast_f32(KERN_EX_DX(ex[k], nb, i))), acc[k]);
    }
}

/* A type's eight-row kernel rows8 (always inline) called with the constant
 * shape nx (1..KERN_NX), so each shape unrolls. */
ALWAYS void rows8_by_nx(kern_rows8_fn rows8, int64_t n, const void *wp, const void *x, size_t xs,
                        int nx, float *out)
{
    switch (nx) {
    case 1: rows8(n, wp, x, xs, 1, out); break;
    case 2: rows8(n, wp, x, xs, 2, out); break;
    case 3: rows8(n, wp, x, xs, 3, out); break;
    default: rows8(n, wp, x, xs, KERN_NX, out); break;
    }
}

/* A pshufb control giving each 32-bit lane bytes b0..b3 of that same lane
 * of the source (a negative b: a zero byte). */
ALWAYS uint32_t lane_byte(int b)
{
    return b < 0 ? 0x80u : (uint32_t)b;
}

ALWAYS __m256i lane_bytes(int b0, int b1, int b2, int b3)
{
    const uint32_t v = lane_byte(b0) | lane_byte(b1) << 8 | lane_byte(b2) << 16 | lane_byte(b3) << 24;
    /* lane k of a 128-bit half starts at byte 4k; 0x80 + 4k still zeroes */
    return _mm256_add_epi8(_mm256_set1_epi32((int)v),
                           _mm256_setr_epi32(0, 0x04040404, 0x08080808, 0x0c0c0c0c,
                                             0, 0x04040404, 0x08080808, 0x0c0c0c0c));
}

/* Four vectors of eight int32 levels (elements 0-7, ..., 24-31) as 32
 * bytes in element order: the packs interleave 128-bit halves, which the
 * permute undoes. */
ALWAYS __m256i pack_levels(const __m256i q[4])
{
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
    return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* v stays a value in a vector register here: an empty asm the compiler
 * cannot see through, so it cannot reassociate an integer chain across it
 * (GCC otherwise turns a long chain of exact adds into a tree of every
 * product, more than the sixteen registers hold). */
#define KEEP_REG(v) __asm__("" : "+x"(v))

/* Sums of each four consecutive levels, as eight int32 lanes. */
ALWAYS __m256i sums4_i8(__m256i b)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), b), _mm256_set1_epi16(1));
}

/* The largest of eight lanes (no NaNs: max is exact in any order). */
ALWAYS float hmax8(__m256 v)
{
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

/* Eight packed rows × nx activation rows (a kern_rows8_fn) in passes of
 * rows8(..., nxp, ...) and single rows for the rest; rows8 is a type's
 * always-inline kernel and nxp its rows per pass, both constants in the
 * type's named wrapper, so the passes inline with constant shapes. */
ALWAYS void packed_passes(kern_rows8_fn rows8, int nxp, int64_t n, const void *wp,
                               const void *x, size_t xs, int nx, float *out)
{
    for (int k = 0; k < nx;) {
        const int m = nx - k >= nxp ? nxp : 1;
        if (m == nxp)
            rows8(n, wp, (const uint8_t *)x + k * xs, xs, nxp, out + 8 * k);
        else
            rows8(n, wp, (const uint8_t *)x + k * xs, xs, 1, out + 8 * k);
        k += m;
    }
}

/* ---------------------------------------------------------------------------
 * Integer product steps: what a kernel body shared by both instruction sets
 * takes as a constant pointer (it inlines in each set's named entry point),
 * so that one body serves AVX2 and VNNI. Each VNNI step computes the AVX2
 * step's integers in the same lanes, hence the same float arithmetic after.
 */

/* Eight lanes of Σ q·a over each four consecutive bytes, q unsigned and a
 * signed: maddubs + madd with ones, or one dpbusd. dpbusd never saturates;
 * maddubs saturates its 16-bit pair sums, so a caller of dot_u8_i8 keeps
 * them within int16 (each kernel states its bound), and then both give
 * the exact sums. */
typedef __m256i (*byte_dot_fn)(__m256i q, __m256i a);

ALWAYS __m256i dot_u8_i8(__m256i q, __m256i a)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(q, a), _mm256_set1_epi16(1));
}

ALWAYS_VNNI __m256i dot_u8_i8_vnni(__m256i q, __m256i a)
{
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), q, a);
}

/* acc + madd(p, s) for int16 p, s: two instructions with AVX2, one dpwssd
 * with VNNI (the same exact products, the same wrapping 32-bit add). */
typedef __m256i (*madd_add_fn)(__m256i acc, __m256i p, __m256i s);

ALWAYS __m256i madd_add_avx2(__m256i acc, __m256i p, __m256i s)
{
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p, s));
}

ALWAYS_VNNI __m256i madd_add_vnni(__m256i acc, __m256i p, __m256i s)
{
    return _mm256_dpwssd_epi32(acc, p, s);
}

/* rows8 bodies of the packed super-block types (q4_K, q6_K, iq4_xs),
 * madd_add the instruction set's step (always inlined, so that it and nx
 * are constants). */
typedef void (*rows8k_fn)(madd_add_fn madd_add, int64_t n, const void *wp, const void *x, size_t xs,
                          int nx, float *out);

/* nx activation rows by rows8, the count a constant in each case so
 * that the loops unroll; the float chains of several rows wait in memory
 * between super-blocks (the same operations, so the same bits). */
ALWAYS void kpacked_passes(rows8k_fn rows8, madd_add_fn madd_add, int64_t n, const void *wp, const void *x,
                           size_t xs, int nx, float *out)
{
    switch (nx) {
    case 1: rows8(madd_add, n, wp, x, xs, 1, out); break;
    case 2: rows8(madd_add, n, wp, x, xs, 2, out); break;
    case 3: rows8(madd_add, n, wp, x, xs, 3, out); break;
    default: rows8(madd_add, n, wp, x, xs, KERN_NX, out); break;
    }
}

#endif /* KERN_X86 */

#endif
