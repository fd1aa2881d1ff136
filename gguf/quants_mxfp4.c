/*
 * quants_mxfp4.c — OCP microscaling fp4: mxfp4.
 *
 * A block of 32 elements is one E8M0 exponent byte e and 32 E2M1 codes
 * (four bits: sign, two exponent bits, one mantissa bit), packed as q4_0's
 * nibbles (byte j: element j low, j + 16 high):
 *
 *   x = 2^(e-127) · E2M1(q) = 2^(e-128) · v[q]
 *
 * v is ggml's kvalues_mxfp4, the E2M1 values doubled to integers, so the
 * scale ggml multiplies by is half the E8M0 value (GGML_E8M0_TO_FP32_HALF).
 *
 * Quantizing (ggml's quantize_row_mxfp4_ref; quantize_mxfp4 ignores
 * importance weights, so there is no weighted path here either): e puts
 * the block's largest magnitude in the top binade of E2M1 (4 ≤ amax/2^(e-127)
 * < 8, so values up to 6 are representable and larger ones clamp), and
 * every element takes the code of least |v·d - x|, the first on ties.
 *
 * Not for: the other formats (quants_legacy.c, quants_k.c, quants_iq4.c,
 * quants_tq.c) or dispatch (quants.c).
 */
#include <math.h>
#include <string.h>

#include "quants_impl.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define QK GGUF_QK_MXFP4

/* The 16 E2M1 codes, doubled: ggml-common.h's kvalues_mxfp4. */
static const int8_t MXFP4_LEVELS[16] = {
    0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12,
};

const int8_t *gguf_mxfp4_levels(void) { return MXFP4_LEVELS; }

/* ggml's exponent floor(log2(amax)) - 2 + 127 in float, then narrowed to
 * a byte: for a normal amax it is 0..252. ggml's (uint8_t) cast of a float
 * out of byte range (a subnormal amax: negative; an infinite one) is
 * undefined in C; its x86-64 builds take the low byte of cvttss2si's
 * 32-bit result (0x80000000 when out of int range), reproduced here
 * without the undefined conversion. log2f is the C library's, as ggml's:
 * just below a power of two it rounds up, which the exact exponent would
 * not. */
static uint8_t block_exponent(float amax)
{
    if (!(amax > 0.0f))
        return 0;
    const float e = floorf(log2f(amax)) - 2.0f + 127.0f;
    return fabsf(e) < 2147483648.0f ? (uint8_t)(uint32_t)(int32_t)e : 0;
}

/* The code of least |v·d - x|, the first one on ties (so +0, never -0). */
static int nearest_code(float x, float d)
{
    int best = 0;
    float best_err = fabsf((float)MXFP4_LEVELS[0] * d - x);
    for (int i = 1; i < 16; i++) {
        const float err = fabsf((float)MXFP4_LEVELS[i] * d - x);
        if (err < best_err) {
            best = i;
            best_err = err;
        }
    }
    return best;
}

void gguf_mxfp4_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_mxfp4 *b = y;
    for (int64_t i = 0; i < n / QK; i++, x += QK) {
        float amax = 0.0f;
        for (int j = 0; j < QK; j++)
            if (amax < fabsf(x[j]))
                amax = fabsf(x[j]);
        b[i].e = block_exponent(amax);
        const float d = gguf_e8m0_to_f32_half(b[i].e);
        for (int j = 0; j < QK / 2; j++)
            b[i].qs[j] = (uint8_t)(nearest_code(x[j], d) | nearest_code(x[j + QK / 2], d) << 4);
    }
}

void gguf_mxfp4_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_mxfp4 *b = x;
    for (int64_t i = 0; i < n / QK; i++, y += QK) {
        const float d = gguf_e8m0_to_f32_half(b[i].e);
        for (int j = 0; j < QK / 2; j++) {
            y[j] = (float)MXFP4_LEVELS[b[i].qs[j] & 0x0F] * d;
            y[j + QK / 2] = (float)MXFP4_LEVELS[b[i].qs[j] >> 4] * d;
        }
    }
}
