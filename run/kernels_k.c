/*
 * kernels_k.c — dot products of the k-quant types q2_K, q3_K, q4_K, q5_K,
 * q6_K with q8_K activations (kernels.h).
 *
 * A super-block holds 256 weights in 16 sub-blocks of 16 (q2_K, q3_K, q6_K)
 * or 8 of 32 (q4_K, q5_K, here seen as 16 halves sharing a scale). With
 * weight levels q, sub-block scales sc_j and mins mn_j (integers), weight
 * super-scales d, dmin, and q8_K activations a with scale d_x and 16-element
 * block sums bsum_j = Σ_{e in j} a_e:
 *
 *   w_e = d · sc_j · q_e − dmin · mn_j
 *   Σ_e w_e · d_x a_e = d·d_x · Σ_j sc_j Σ_{e in j} q_e a_e − dmin·d_x · Σ_j mn_j bsum_j
 *
 * Both sums over j are exact integers; a row's result adds the super-block
 * terms in float. (q3_K and q6_K have signed levels and no mins.)
 * Not for: quantizing (libgguf's codecs).
 */
#include <string.h>

#include "float16.h"
#include "kernels_impl.h"

/* One super-block as integers: signed levels, 16 scales and mins (a
 * 32-element sub-block's scale appears twice), and the float super-scales. */
typedef struct {
    int8_t q[QK_K];
    int    sc[16], mn[16];
    float  d, dmin;
} kblock;

/* ---------------------------------------------------------------------------
 * Scales
 */

/* q3_K's 16 six-bit scales, stored biased by 32: the low four bits of
 * scale j are nibble j%8 of bytes 0..7 (low nibbles for j < 8), the top two
 * are bits 2·(j/4) of byte 8 + j%4. */
static void scales_q3_K(const uint8_t s[12], int sc[16])
{
    for (int j = 0; j < 16; j++) {
        const int lo = j < 8 ? s[j] & 0x0f : s[j - 8] >> 4;
        const int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
        sc[j] = (lo | hi << 4) - 32;
    }
}

/* q4_K/q5_K's eight six-bit scales and mins in 12 bytes: for j < 4 the low
 * six bits of bytes j (scale) and j + 4 (min); for j ≥ 4 a nibble of byte
 * j + 4 topped with the two high bits of bytes j − 4 (scale) and j (min). */
static void scales_k4(const uint8_t s[12], int sc[8], int mn[8])
{
    for (int j = 0; j < 8; j++) {
        if (j < 4) {
            sc[j] = s[j] & 63;
            mn[j] = s[j + 4] & 63;
        } else {
            sc[j] = (s[j + 4] & 0x0f) | (s[j - 4] >> 6) << 4;
            mn[j] = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
        }
    }
}

/* ---------------------------------------------------------------------------
 * Unpacking a super-block. Element e = 128h + 32c + l (h, c, l the half,
 * the 32-column group and the column) is where the formats interleave.
 */

static void unpack_q2_K(const block_q2_K *b, kblock *k)
{
    /* 2-bit level: bits 2c of byte qs[32h + l] */
    for (int e = 0; e < QK_K; e++)
        k->q[e] = (int8_t)((b->qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3);
    for (int j = 0; j < 16; j++) {
        k->sc[j] = b->scales[j] & 0x0f;
        k->mn[j] = b->scales[j] >> 4;
    }
    k->d = gguf_f16_to_f32(b->d);
    k->dmin = gguf_f16_to_f32(b->dmin);
}

static void unpack_q3_K(const block_q3_K *b, kblock *k)
{
    /* 2 low bits as q2_K; a clear bit (4h + c) of hmask[l] subtracts 4 */
    for (int e = 0; e < QK_K; e++) {
        const int low = (b->qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3;
        const int high = (b->hmask[e % 32] >> (e / 32)) & 1;
        k->q[e] = (int8_t)(low - (high ? 0 : 4));
    }
    scales_q3_K(b->scales, k->sc);
    memset(k->mn, 0, sizeof k->mn);
    k->d = gguf_f16_to_f32(b->d);
    k->dmin = 0.0f;
}

/* Sub-block j of 32 of q4_K/q5_K covers 16-element halves 2j and 2j + 1. */
static void spread_k4_scales(const uint8_t s[12], kblock *k)
{
    int sc[8], mn[8];
    scales_k4(s, sc, mn);
    for (int j = 0; j < 16; j++) {
        k->sc[j] = sc[j / 2];
        k->mn[j] = mn[j / 2];
    }
}

static void unpack_q4_K(const block_q4_K *b, kblock *k)
{
    /* bytes qs[32g..32g+31] hold sub-block 2g in their low nibbles and
     * 2g + 1 in their high ones */
    for (int e = 0; e < QK_K; e++) {
        const uint8_t byte = b->qs[32 * (e / 64) + e % 32];
        k->q[e] = (int8_t)((e / 32) % 2 ? byte >> 4 : byte & 0x0f);
    }
    spread_k4_scales(b->scales, k);
    k->d = gguf_f16_to_f32(b->d);
    k->dmin = gguf_f16_to_f32(b->dmin);
}

static void unpack_q5_K(const block_q5_K *b, kblock *k)
{
    /* q4_K's nibbles, the fifth bit of element e in bit e/32 of qh[e%32] */
    for (int e = 0; e < QK_K; e++) {
        const uint8_t byte = b->qs[32 * (e / 64) + e % 32];
        const int low = (e / 32) % 2 ? byte >> 4 : byte & 0x0f;
        k->q[e] = (int8_t)(low | ((b->qh[e % 32] >> (e / 32)) & 1) << 4);
    }
    spread_k4_scales(b->scales, k);
    k->d = gguf_f16_to_f32(b->d);
    k->dmin = gguf_f16_to_f32(b->dmin);
}

static void unpack_q6_K(const block_q6_K *b, kblock *k)
{
    /* e = 128h + 32c + l: low 4 bits from ql[64h + 32(c%2) + l] (low nibble
     * for c < 2), high 2 bits from bits 2c of qh[32h + l]; stored + 32 */
    for (int e = 0; e < QK_K; e++) {
        const int h = e / 128, c = e % 128 / 32, l = e % 32;
        const uint8_t lo = b->ql[64 * h + 32 * (c % 2) + l];
        const int low = c < 2 ? lo & 0x0f : lo >> 4;
        const int high = (b->qh[32 * h + l] >> (2 * c)) & 3;
        k->q[e] = (int8_t)((low | high << 4) - 32);
    }
    for (int j = 0; j < 16; j++)
        k->sc[j] = b->scales[j];
    memset(k->mn, 0, sizeof k->mn);
    k->d = gguf_f16_to_f32(b->d);
    k->dmin = 0.0f;
}

/* ---------------------------------------------------------------------------
 * Scalar reference
 */

/* The super-block term d·d_x·Σ sc_j Σ q·a − dmin·d_x·Σ mn_j bsum_j. */
static float kblock_dot(const kblock *k, const block_q8_K *a)
{
    int isum = 0, msum = 0;
    for (int j = 0; j < 16; j++) {
        int s = 0;
        for (int i = 16 * j; i < 16 * j + 16; i++)
            s += k->q[i] * a->qs[i];
        isum += k->sc[j] * s;
        msum += k->mn[j] * a->bsums[j];
    }
    return a->d * k->d * (float)isum - a->d * k->dmin * (float)msum;
}

#define KQUANT_REF(T)                                                       \
    float dot_##T##_ref(int64_t n, const void *w, const void *x)           \
    {                                                                       \
        const block_##T *bw = w;                                            \
        const block_q8_K *bx = x;                                           \
        float sum = 0.0f;                                                   \
        for (int64_t i = 0; i < n / QK_K; i++) {                            \
            kblock k;                                                       \
            unpack_##T(&bw[i], &k);                                         \
            sum += kblock_dot(&k, &bx[i]);                                  \
        }                                                                   \
        return sum;                                                         \
    }

KQUANT_REF(q2_K)
KQUANT_REF(q3_K)
KQUANT_REF(q4_K)
KQUANT_REF(q5_K)
KQUANT_REF(q6_K)
