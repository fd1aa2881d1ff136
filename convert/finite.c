/*
 * finite.c — non-finite scans (see finite.h).
 */
#include "finite.h"

#include <stdbool.h>
#include <string.h>

#include <ggufkit/quants.h>

/* The scans or together, over the whole span, the exponent field plus one
 * of every element in vector registers (GCC's vector extensions: 16-byte
 * vectors, SSE2 on any x86-64; 32-byte ones in a copy compiled for AVX2,
 * taken where the CPU has it), four vectors a step, with no reduction until
 * the end, and look for the index only when the span has one. The writer's
 * spans are rows already in the cache, so a finite row is read once. */
#define DEFINE_OR_EXP(NAME, T, BYTES, ATTR)                                              \
    ATTR static T NAME(const T *x, int64_t n, T e, T o, int64_t *done)                  \
    {                                                                                    \
        typedef T vec __attribute__((vector_size(BYTES)));                               \
        enum { L = BYTES / sizeof(T) };                                                  \
        const vec exp = (vec){ 0 } + e, one = (vec){ 0 } + o;                            \
        vec a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 }, v0, v1, v2, v3;              \
        int64_t i = 0;                                                                   \
        for (; i + 4 * L <= n; i += 4 * L) {                                             \
            memcpy(&v0, x + i, BYTES);                                                   \
            memcpy(&v1, x + i + L, BYTES);                                               \
            memcpy(&v2, x + i + 2 * L, BYTES);                                           \
            memcpy(&v3, x + i + 3 * L, BYTES);                                           \
            a0 |= (v0 & exp) + one;                                                      \
            a1 |= (v1 & exp) + one;                                                      \
            a2 |= (v2 & exp) + one;                                                      \
            a3 |= (v3 & exp) + one;                                                      \
        }                                                                                \
        a0 |= a1 | a2 | a3;                                                              \
        T any = 0;                                                                       \
        for (int k = 0; k < L; k++)                                                      \
            any |= a0[k];                                                                \
        *done = i;                                                                       \
        return any;                                                                      \
    }

DEFINE_OR_EXP(or_exp32, uint32_t, 16, )
DEFINE_OR_EXP(or_exp16, uint16_t, 16, )
static bool force_generic;

void nonfinite_force_generic(bool on)
{
    force_generic = on;
}

#if defined(__x86_64__) && defined(__GNUC__)
DEFINE_OR_EXP(or_exp32_avx2, uint32_t, 32, __attribute__((target("avx2"))))
DEFINE_OR_EXP(or_exp16_avx2, uint16_t, 32, __attribute__((target("avx2"))))
#define HAVE_AVX2() (!force_generic && __builtin_cpu_supports("avx2"))
#else
#define or_exp32_avx2 or_exp32
#define or_exp16_avx2 or_exp16
#define HAVE_AVX2() ((void)force_generic, 0)
#endif

int64_t nonfinite_f32(const float *x, int64_t n)
{
    const uint32_t e = 0x7f800000u, o = 0x00800000u; /* bit 31 of the sum: exponent all ones */
    int64_t i;
    uint32_t u, any = (HAVE_AVX2() ? or_exp32_avx2 : or_exp32)((const uint32_t *)(const void *)x,
                                                               n, e, o, &i);
    for (; i < n; i++) {
        memcpy(&u, x + i, 4);
        any |= (u & e) + o;
    }
    if (!(any & 0x80000000u))
        return -1;
    for (i = 0; i < n; i++) {
        memcpy(&u, x + i, 4);
        if ((u & e) == e)
            return i;
    }
    return -1;
}

float finite_amax(const float *x, int64_t n)
{
    /* magnitudes' bits order as the magnitudes do: the largest, as an
     * integer (a loop the compiler makes vector code of) */
    uint32_t top = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, 4);
        u &= 0x7fffffffu;
        top = u > top ? u : top;
    }
    float a;
    memcpy(&a, &top, 4);
    return a;
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
