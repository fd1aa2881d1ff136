/*
 * finite.c — non-finite scans (see finite.h).
 */
#include "finite.h"

#include <string.h>

#include <ggufkit/quants.h>

/* The scans or together, over the whole span, the exponent field plus one
 * of every element in vector registers (GCC's vector extensions: SSE2 on
 * any x86-64), with no reduction until the end, and look for the index
 * only when the span has one. The writer's spans are rows already in the
 * cache, so a finite row is read once. */
typedef uint32_t u32x4 __attribute__((vector_size(16)));
typedef uint16_t u16x8 __attribute__((vector_size(16)));

int64_t nonfinite_f32(const float *x, int64_t n)
{
    const u32x4 exp = { 0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u };
    const u32x4 one = { 0x00800000u, 0x00800000u, 0x00800000u, 0x00800000u };
    u32x4 a0 = { 0 }, a1 = { 0 };
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        u32x4 v0, v1;
        memcpy(&v0, x + i, 16);
        memcpy(&v1, x + i + 4, 16);
        a0 |= (v0 & exp) + one; /* bit 31 set: exponent all ones */
        a1 |= (v1 & exp) + one;
    }
    a0 |= a1;
    uint32_t any = a0[0] | a0[1] | a0[2] | a0[3];
    for (; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, 4);
        any |= (u & 0x7f800000u) + 0x00800000u;
    }
    if (!(any & 0x80000000u))
        return -1;
    for (i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, 4);
        if ((u & 0x7f800000u) == 0x7f800000u)
            return i;
    }
    return -1;
}

/* 16-bit lanes: e is the exponent mask, o its lowest bit. */
static int64_t nonfinite_16(const uint16_t *x, int64_t n, uint16_t e, uint16_t o)
{
    const u16x8 exp = { e, e, e, e, e, e, e, e }, one = { o, o, o, o, o, o, o, o };
    u16x8 a0 = { 0 }, a1 = { 0 };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        u16x8 v0, v1;
        memcpy(&v0, x + i, 16);
        memcpy(&v1, x + i + 8, 16);
        a0 |= (v0 & exp) + one;
        a1 |= (v1 & exp) + one;
    }
    a0 |= a1;
    uint16_t any = 0;
    for (int k = 0; k < 8; k++)
        any |= a0[k];
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
