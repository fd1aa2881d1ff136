/*
 * quants_tq.c — the ternary formats (BitNet b1.58, TriLMs): tq1_0, tq2_0.
 *
 * Every element of a 256-element super-block is one trit t ∈ {0, 1, 2}
 * with x ≈ d · (t - 1), d the block's largest magnitude (f16):
 *
 *   tq1_0   five trits per byte in qs (48 bytes: 240 elements), four in
 *           qh (16 elements); each byte is the base-3 number of its trits,
 *           first trit most significant, scaled to 0..255 by
 *           ceil(v · 256 / 243), so that multiplying the byte by 3^k mod 256
 *           and taking the top bits of ·3 reads trit k back
 *   tq2_0   four 2-bit trits per byte
 *
 * Element order (ggml's): tq1_0's qs is filled in a run of 32 bytes
 * holding elements 0..159 (byte m: elements m, m+32, .., m+128), then 16
 * bytes holding 160..239 (byte m: 160+m, 176+m, ..); qh byte m holds
 * elements 240+m, 244+m, 248+m, 252+m. tq2_0's byte 32j+m holds elements
 * 128j + m + 32k in bits 2k..2k+1.
 *
 * ggml has no importance-weighted path for either (quantize_tq*_0 ignores
 * the weights), so neither has one here. Levels are lroundf(x/d) + 1 —
 * ties away from zero — as in ggml, bit for bit.
 *
 * Not for: the other formats (quants_legacy.c, quants_k.c, quants_iq4.c,
 * quants_mxfp4.c) or dispatch (quants.c).
 */
#include <math.h>

#include "quants_impl.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define QK GGUF_QK_K

/* The block's d (ggml's MAX(amax, |x|) loop, so a NaN propagates as in
 * ggml) stored as f16; returns the inverse scale, 0 for an all-zero block. */
static float ternary_scale(const float *x, gguf_half *d_out)
{
    float amax = 0.0f;
    for (int j = 0; j < QK; j++)
        amax = amax > fabsf(x[j]) ? amax : fabsf(x[j]);
    *d_out = gguf_f32_to_f16(amax);
    return amax != 0.0f ? 1.0f / amax : 0.0f;
}

/* The trit of x: lroundf(x·id) + 1, wrapped to int as ggml's int does. */
static inline int trit(float x, float id)
{
    return (int)lroundf(x * id) + 1;
}

/* ========================================================================
 * tq1_0
 * ======================================================================== */

/* k trits of x[0], x[stride], .. as a base-3 number (first trit most
 * significant) kept in a byte as ggml's uint8_t accumulator, padded to five
 * trits, then scaled to a byte: ceil(v · 256 / 243). */
static uint8_t pack_trits(const float *x, int stride, int k, float id)
{
    uint8_t q = 0;
    for (int n = 0; n < k; n++)
        q = (uint8_t)(q * 3 + trit(x[n * stride], id));
    for (int n = k; n < 5; n++)
        q = (uint8_t)(q * 3);
    return (uint8_t)(((unsigned)q * 256 + 242) / 243);
}

void gguf_tq1_0_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_tq1_0 *b = y;
    enum { QS = sizeof b->qs, QH = sizeof b->qh, RUN = QS - QS % 32 };
    for (int64_t i = 0; i < n / QK; i++, x += QK) {
        const float id = ternary_scale(x, &b[i].d);
        const float *xb = x;
        for (int j = 0; j < RUN; j += 32, xb += 5 * 32)
            for (int m = 0; m < 32; m++)
                b[i].qs[j + m] = pack_trits(xb + m, 32, 5, id);
        for (int j = RUN; j < QS; j += 16, xb += 5 * 16)
            for (int m = 0; m < 16; m++)
                b[i].qs[j + m] = pack_trits(xb + m, 16, 5, id);
        for (int m = 0; m < QH; m++)
            b[i].qh[m] = pack_trits(xb + m, QH, 4, id);
    }
}

/* Trit k of a packed byte: (byte · 3^k mod 256) · 3 / 256. */
static inline float unpack_trit(uint8_t byte, int k, float d)
{
    static const uint8_t pow3[5] = { 1, 3, 9, 27, 81 };
    const uint8_t q = (uint8_t)(byte * pow3[k]);
    return (float)((int)(q * 3 >> 8) - 1) * d;
}

void gguf_tq1_0_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_tq1_0 *b = x;
    enum { QS = sizeof b->qs, QH = sizeof b->qh, RUN = QS - QS % 32 };
    for (int64_t i = 0; i < n / QK; i++) {
        const float d = gguf_f16_to_f32(b[i].d);
        for (int j = 0; j < RUN; j += 32)
            for (int k = 0; k < 5; k++)
                for (int m = 0; m < 32; m++)
                    *y++ = unpack_trit(b[i].qs[j + m], k, d);
        for (int j = RUN; j < QS; j += 16)
            for (int k = 0; k < 5; k++)
                for (int m = 0; m < 16; m++)
                    *y++ = unpack_trit(b[i].qs[j + m], k, d);
        for (int k = 0; k < 4; k++)
            for (int m = 0; m < QH; m++)
                *y++ = unpack_trit(b[i].qh[m], k, d);
    }
}

/* ========================================================================
 * tq2_0
 * ======================================================================== */

void gguf_tq2_0_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_tq2_0 *b = y;
    for (int64_t i = 0; i < n / QK; i++, x += QK) {
        const float id = ternary_scale(x, &b[i].d);
        for (int j = 0; j < (int)sizeof b->qs; j += 32) {
            const float *xb = x + 4 * j;
            for (int m = 0; m < 32; m++) {
                unsigned q = 0;
                for (int k = 0; k < 4; k++)
                    q += (unsigned)(trit(xb[m + 32 * k], id) & 3) << 2 * k;
                b[i].qs[j + m] = (uint8_t)q;
            }
        }
    }
}

void gguf_tq2_0_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_tq2_0 *b = x;
    for (int64_t i = 0; i < n / QK; i++) {
        const float d = gguf_f16_to_f32(b[i].d);
        for (int j = 0; j < (int)sizeof b->qs; j += 32)
            for (int k = 0; k < 4; k++)
                for (int m = 0; m < 32; m++)
                    *y++ = (float)((b[i].qs[j + m] >> 2 * k & 3) - 1) * d;
    }
}
