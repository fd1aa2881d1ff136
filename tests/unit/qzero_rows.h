/*
 * qzero_rows.h — the inputs of the zero-importance codec vectors: rows and
 * importance vectors in which some or all weights are 0 (an imatrix whose
 * sums are 0 for a tensor or some of its columns: experts calibration never
 * routed to, dead inputs). Shared by tests/ref/qzero_ref.c, which quantizes
 * them with ggml and writes tests/data/qzero.tsv, and by test_quants.c, which
 * quantizes them with libgguf and compares. Arithmetic only (no libm), so
 * both sides make the same floats on any machine.
 */
#ifndef GGUFKIT_QZERO_ROWS_H
#define GGUFKIT_QZERO_ROWS_H

#include <stdint.h>

#define QZ_NPR   512 /* values per row: two 256-superblocks */
#define QZ_ROWS  8
#define QZ_PATTERNS 5

static const char *const qz_pattern_names[QZ_PATTERNS] = {
    "all-zero",        /* every weight 0 */
    "first-half-zero", /* the first superblock's weights 0 */
    "odd-16-zero",     /* every other group of 16 (K-quant sub-blocks) 0 */
    "one-per-32",      /* one nonzero weight per block of 32 */
    "tiny",            /* every weight 1e-30 (sums underflow) */
};

typedef struct qz_rng { uint64_t s; } qz_rng;

static inline double qz_u(qz_rng *r) /* uniform in [0, 1) */
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (double)(r->s >> 11) * (1.0 / 9007199254740992.0);
}

static inline double qz_n(qz_rng *r) /* about normal: Irwin-Hall of 4 */
{
    return (qz_u(r) + qz_u(r) + qz_u(r) + qz_u(r) - 2.0) * 1.7320508075688772;
}

/* QZ_ROWS rows of QZ_NPR values into x. */
static inline void qz_make_rows(float *x)
{
    qz_rng r = { 0x9E3779B97F4A7C15ull };
    for (int i = 0; i < QZ_NPR; i++) {
        x[0 * QZ_NPR + i] = (float)qz_n(&r);                               /* normal */
        x[1 * QZ_NPR + i] = (float)(0.02 * qz_n(&r));                      /* weight-like */
        double n = qz_n(&r), d = qz_n(&r);
        x[2 * QZ_NPR + i] = (float)(0.05 * n / ((d < 0 ? -d : d) + 0.01)); /* heavy tails */
        x[3 * QZ_NPR + i] = 0.0f;                                          /* zeros */
        x[4 * QZ_NPR + i] = 0.75f;                                         /* constant */
        x[5 * QZ_NPR + i] = i == 37 ? 40.0f : 0.0f;                        /* lone outlier */
        x[6 * QZ_NPR + i] = qz_u(&r) < 0.05 ? (float)qz_n(&r) : 0.0f;      /* sparse */
        x[7 * QZ_NPR + i] = i < 256 ? 0.0f : (float)(3000.0 * qz_n(&r));   /* empty, large */
    }
}

/* The importance vector of pattern p (QZ_NPR weights). */
static inline void qz_make_weights(int p, float *w)
{
    qz_rng r = { 0xD1B54A32D192ED03ull };
    for (int i = 0; i < QZ_NPR; i++) {
        double g = qz_n(&r);
        float v = (float)(0.05 + g * g * (i % 61 == 7 ? 40.0 : 1.0));
        switch (p) {
        case 0: v = 0.0f; break;
        case 1: v = i < 256 ? 0.0f : v; break;
        case 2: v = (i / 16) % 2 ? 0.0f : v; break;
        case 3: v = i % 32 == 5 ? v : 0.0f; break;
        default: v = 1e-30f; break;
        }
        w[i] = v;
    }
}

#endif
