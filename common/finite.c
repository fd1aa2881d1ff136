/*
 * finite.c — non-finite scans (see finite.h).
 */
#include "finite.h"

#include <stdbool.h>
#include <string.h>

#include <ggufkit/quants.h>

/* The 16-bit scans or together, over the whole span, the exponent field
 * plus one of every element in vector registers (GCC's vector extensions:
 * 16-byte vectors, SSE2 on any x86-64; 32-byte ones in a copy compiled for
 * AVX2, taken where the CPU has it), four vectors a step, with no reduction
 * until the end, and look for the index only when the span has one. The
 * f32 scan keeps the largest magnitude's bits instead (magnitudes' bits
 * order as the magnitudes do; Inf and NaN are the largest), which answers
 * both questions in one read. The writer's spans are rows already in the
 * cache, so a finite row is read once. */
#define DEFINE_SCAN(NAME, T, BYTES, ATTR, STEP, COMB, SCAL)                                \
    ATTR static T NAME(const T *x, int64_t n, T e, T o, int64_t *done)                  \
    {                                                                                    \
        typedef T vec __attribute__((vector_size(BYTES)));                               \
        enum { L = BYTES / sizeof(T) };                                                  \
        const vec ve = (vec){ 0 } + e, vo = (vec){ 0 } + o;                              \
        vec a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 }, v0, v1, v2, v3;              \
        int64_t i = 0;                                                                   \
        for (; i + 4 * L <= n; i += 4 * L) {                                             \
            memcpy(&v0, x + i, BYTES);                                                   \
            memcpy(&v1, x + i + L, BYTES);                                               \
            memcpy(&v2, x + i + 2 * L, BYTES);                                           \
            memcpy(&v3, x + i + 3 * L, BYTES);                                           \
            a0 = STEP(a0, v0, ve, vo);                                                   \
            a1 = STEP(a1, v1, ve, vo);                                                   \
            a2 = STEP(a2, v2, ve, vo);                                                   \
            a3 = STEP(a3, v3, ve, vo);                                                   \
        }                                                                                \
        a0 = COMB(COMB(a0, a1), COMB(a2, a3));                                           \
        T r = 0;                                                                         \
        for (int k = 0; k < L; k++)                                                      \
            r = SCAL(r, a0[k]);                                                          \
        *done = i;                                                                       \
        return r;                                                                        \
    }

/* The 16-bit scans: or of (v & e) + o (e the exponent mask, o its lowest
 * bit). The f32 one: the largest v & e (e = 0x7fffffff; o unused); GCC's C
 * has no ?: on vectors, so the comparison's mask selects. */
#define OR_EXP(a, v, e, o) ((a) | (((v) & (e)) + (o)))
#define OR2(a, b) ((a) | (b))
#define VMAX(a, b) (((a) & (vec) ~((a) < (b))) | ((b) & (vec)((a) < (b))))
#define MAX_MAG(a, v, e, o) ((void)(o), VMAX(a, (v) & (e)))
#define SMAX(a, b) ((b) > (a) ? (b) : (a))
#define DEFINE_OR_EXP(NAME, T, BYTES, ATTR) DEFINE_SCAN(NAME, T, BYTES, ATTR, OR_EXP, OR2, OR2)
#define DEFINE_MAX_MAG(NAME, BYTES, ATTR) DEFINE_SCAN(NAME, uint32_t, BYTES, ATTR, MAX_MAG, VMAX, SMAX)

DEFINE_OR_EXP(or_exp16, uint16_t, 16, )
DEFINE_MAX_MAG(max_mag32, 16, )
static bool force_generic;

void nonfinite_force_generic(bool on)
{
    force_generic = on;
}

#if defined(__x86_64__) && defined(__GNUC__)
DEFINE_OR_EXP(or_exp16_avx2, uint16_t, 32, __attribute__((target("avx2"))))
DEFINE_MAX_MAG(max_mag32_avx2, 32, __attribute__((target("avx2"))))
#define HAVE_AVX2() (!force_generic && __builtin_cpu_supports("avx2"))
#else
#define or_exp16_avx2 or_exp16
#define max_mag32_avx2 max_mag32
#define HAVE_AVX2() ((void)force_generic, 0)
#endif

int64_t nonfinite_amax_f32(const float *x, int64_t n, float *amax)
{
    const uint32_t *u = (const uint32_t *)(const void *)x;
    int64_t i;
    uint32_t top = (HAVE_AVX2() ? max_mag32_avx2 : max_mag32)(u, n, 0x7fffffffu, 0, &i);
    for (; i < n; i++)
        top = (u[i] & 0x7fffffffu) > top ? u[i] & 0x7fffffffu : top;
    int64_t at = -1;
    if (top >= 0x7f800000u) { /* Inf or NaN: the first, and the largest before it */
        for (at = 0, top = 0; (u[at] & 0x7f800000u) != 0x7f800000u; at++)
            top = (u[at] & 0x7fffffffu) > top ? u[at] & 0x7fffffffu : top;
    }
    memcpy(amax, &top, 4);
    return at;
}

int64_t nonfinite_f32(const float *x, int64_t n)
{
    float amax;
    return nonfinite_amax_f32(x, n, &amax);
}

/* 16-bit lanes: e is the exponent mask, o its lowest bit. */
static int64_t nonfinite_16(const uint16_t *x, int64_t n, uint16_t e, uint16_t o)
{
    int64_t i;
    uint16_t any = (HAVE_AVX2() ? or_exp16_avx2 : or_exp16)(x, n, e, o, &i);
    for (; i < n; i++)
        any |= (uint16_t)((x[i] & e) + o);
    if (!(any & 0x8000u))
        return -1;
    for (i = 0; i < n; i++)
        if ((x[i] & e) == e)
            return i;
    return -1;
}

int64_t nonfinite_f16(const uint16_t *x, int64_t n)
{
    return nonfinite_16(x, n, 0x7c00, 0x0400);
}

int64_t nonfinite_bf16(const uint16_t *x, int64_t n)
{
    return nonfinite_16(x, n, 0x7f80, 0x0080);
}

int64_t nonfinite_q8_0(const void *blocks, int64_t nb)
{
    const uint8_t *b = blocks;
    for (int64_t i = 0; i < nb; i++) {
        uint16_t d;
        memcpy(&d, b + (size_t)i * sizeof(gguf_block_q8_0), 2);
        if ((d & 0x7c00) == 0x7c00)
            return i;
    }
    return -1;
}

int64_t nonfinite_e8m0(const uint8_t *x, int64_t n)
{
    const uint8_t *p = n > 0 ? memchr(x, 0xff, (size_t)n) : NULL;
    return p ? (int64_t)(p - x) : -1;
}
