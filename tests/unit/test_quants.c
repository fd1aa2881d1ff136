/*
 * test_quants.c — the block codecs against ggml.
 *
 * For every row of every ../shared/fixtures/vectors/TYPE.qvec file (ggml's
 * reference quantizer output and dequantizer output for that row),
 * quantizing the input must give exactly the stored bytes and dequantizing
 * the stored bytes exactly the stored floats, bit for bit. Round-trip error
 * on llama.cpp's synthetic data must stay within test-quantize-fns'
 * thresholds. (The f16/bf16 scalar conversions: test_float16.c.)
 */
#include <math.h>
#include <stdint.h>

#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include "testutil.h"
#include "qzero_rows.h"

/* One qvec file in memory (format: fixtures/README.md). */
typedef struct qvec {
    uint32_t type, n_rows, n_per_row, row_bytes;
    float   *input;
    float   *weights; /* version 2: the importance vector of every row; else NULL */
    uint8_t *quant;
    float   *deq;
} qvec;

static int qvec_load(const char *name, qvec *q)
{
    char rel[128], path[1024];
    snprintf(rel, sizeof rel, "vectors/%s.qvec", name);
    if (!fixture_path(path, sizeof path, rel))
        return -1;
    FILE *fp = fopen(path, "rb");
    uint32_t h[6];
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fread(h, 4, 6, fp), 6);
    ck_assert_uint_eq(h[0], 0x43455651u);
    ck_assert(h[1] == 1 || h[1] == 2);
    q->type = h[2];
    q->n_rows = h[3];
    q->n_per_row = h[4];
    q->row_bytes = h[5];
    size_t nf = (size_t)q->n_rows * q->n_per_row, nq = (size_t)q->n_rows * q->row_bytes;
    q->input = malloc(nf * 4);
    q->quant = malloc(nq);
    q->deq = malloc(nf * 4);
    q->weights = NULL;
    ck_assert(fread(q->input, 4, nf, fp) == nf);
    if (h[1] == 2) {
        q->weights = malloc((size_t)q->n_per_row * 4);
        ck_assert(fread(q->weights, 4, q->n_per_row, fp) == q->n_per_row);
    }
    ck_assert(fread(q->quant, 1, nq, fp) == nq);
    ck_assert(fread(q->deq, 4, nf, fp) == nf);
    fclose(fp);
    return 0;
}

static void qvec_free(qvec *q)
{
    free(q->weights);
    free(q->input);
    free(q->quant);
    free(q->deq);
}

static const char *vector_types[] = { "f16",   "bf16",   "q4_0",   "q4_1",  "q5_0",
                                      "q5_1",  "q8_0",   "q2_K",   "q3_K",  "q4_K",
                                      "q5_K",  "q6_K",   "iq4_nl", "iq4_xs", "tq1_0",
                                      "tq2_0", "mxfp4",  "iq2_s", "iq3_xxs", "iq3_s",
                                      "iq1_m" };
#define N_VECTOR_TYPES (int)(sizeof vector_types / sizeof *vector_types)

/* Loop index i: type i % N_VECTOR_TYPES, with the scale searches forced
 * one block at a time for i ≥ N_VECTOR_TYPES (both paths must give ggml's
 * bytes; which one runs by default depends on the CPU). */
START_TEST(test_vectors_quantize_exact)
{
    qvec q;
    const bool scalar = _i >= N_VECTOR_TYPES;
    _i %= N_VECTOR_TYPES;
    gguf_quants_force_scalar(scalar);
    ck_assert_int_eq(qvec_load(vector_types[_i], &q), 0);
    ck_assert_int_eq(gguf_dtype_from_name(vector_types[_i]), (int)q.type);
    uint8_t *out = malloc(q.row_bytes);
    int bad_rows = 0, first_bad = -1, first_byte = -1;
    for (uint32_t r = 0; r < q.n_rows; r++) {
        memset(out, 0xAA, q.row_bytes);
        size_t n = gguf_quantize_rows(q.type, q.input + (size_t)r * q.n_per_row, out, 1,
                                      q.n_per_row, NULL, NULL);
        ck_assert_uint_eq(n, q.row_bytes);
        const uint8_t *want = q.quant + (size_t)r * q.row_bytes;
        if (memcmp(out, want, q.row_bytes) != 0) {
            if (first_bad < 0) {
                first_bad = (int)r;
                for (uint32_t b = 0; b < q.row_bytes; b++)
                    if (out[b] != want[b]) {
                        first_byte = (int)b;
                        break;
                    }
            }
            bad_rows++;
        }
    }
    free(out);
    gguf_quants_force_scalar(false);
    ck_assert_msg(bad_rows == 0, "%s%s: %d of %u rows differ from ggml (first: row %d byte %d)",
                  vector_types[_i], scalar ? " (scalar)" : "", bad_rows, q.n_rows, first_bad,
                  first_byte);
    qvec_free(&q);
}
END_TEST

/* The version-2 vectors: ggml_quantize_chunk with an importance vector
 * (llama-quantize --imatrix), every row, both search paths. */
static const char *imatrix_types[] = { "q4_0",   "q4_1",   "q5_0",  "q5_1",  "q8_0",
                                       "q2_K",   "q3_K",   "q4_K",  "q5_K",  "q6_K",
                                       "iq4_nl", "iq4_xs", "tq1_0", "tq2_0", "mxfp4",
                                       "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s",
                                       "iq1_s", "iq1_m" };
#define N_IMATRIX_TYPES (int)(sizeof imatrix_types / sizeof *imatrix_types)

START_TEST(test_vectors_imatrix_exact)
{
    qvec q;
    const bool scalar = _i >= N_IMATRIX_TYPES;
    _i %= N_IMATRIX_TYPES;
    char name[64];
    snprintf(name, sizeof name, "%s-imatrix", imatrix_types[_i]);
    gguf_quants_force_scalar(scalar);
    ck_assert_int_eq(qvec_load(name, &q), 0);
    ck_assert_ptr_nonnull(q.weights);
    ck_assert_int_eq(gguf_dtype_from_name(imatrix_types[_i]), (int)q.type);
    uint8_t *out = malloc(q.row_bytes);
    float *deq = malloc((size_t)q.n_per_row * 4);
    int bad_rows = 0, bad_deq = 0, first_bad = -1;
    for (uint32_t r = 0; r < q.n_rows; r++) {
        size_t n = gguf_quantize_rows(q.type, q.input + (size_t)r * q.n_per_row, out, 1,
                                      q.n_per_row, q.weights, NULL);
        ck_assert_uint_eq(n, q.row_bytes);
        if (memcmp(out, q.quant + (size_t)r * q.row_bytes, q.row_bytes) != 0) {
            bad_rows++;
            if (first_bad < 0)
                first_bad = (int)r;
        }
        ck_assert_int_eq(gguf_dequantize_row(q.type, q.quant + (size_t)r * q.row_bytes, deq,
                                             q.n_per_row, NULL), 0);
        bad_deq += memcmp(deq, q.deq + (size_t)r * q.n_per_row, (size_t)q.n_per_row * 4) != 0;
    }
    free(out);
    free(deq);
    gguf_quants_force_scalar(false);
    ck_assert_msg(bad_rows == 0, "%s%s: %d of %u rows differ from ggml (first: row %d)", name,
                  scalar ? " (scalar)" : "", bad_rows, q.n_rows, first_bad);
    ck_assert_msg(bad_deq == 0, "%s: %d rows dequantize differently", name, bad_deq);
    qvec_free(&q);
}
END_TEST

START_TEST(test_vectors_dequantize_exact)
{
    qvec q;
    ck_assert_int_eq(qvec_load(vector_types[_i], &q), 0);
    float *out = malloc((size_t)q.n_per_row * 4);
    int bad_rows = 0, first_bad = -1;
    for (uint32_t r = 0; r < q.n_rows; r++) {
        ck_assert_int_eq(gguf_dequantize_row(q.type, q.quant + (size_t)r * q.row_bytes, out,
                                             q.n_per_row, NULL), 0);
        if (memcmp(out, q.deq + (size_t)r * q.n_per_row, (size_t)q.n_per_row * 4) != 0) {
            bad_rows++;
            if (first_bad < 0)
                first_bad = (int)r;
        }
    }
    free(out);
    ck_assert_msg(bad_rows == 0, "%s: %d of %u rows dequantize differently (first: row %d)",
                  vector_types[_i], bad_rows, q.n_rows, first_bad);
    qvec_free(&q);
}
END_TEST

/* test-quantize-fns: data 0.1 + 2 cos(i + offset), 32×128 values, RMSE of
 * the round trip (sqrt(sum d²) / n) under a per-type threshold. */
START_TEST(test_round_trip_error)
{
    static const struct { uint32_t type; float max; } limits[] = {
        { GGUF_DT_F16, 0.002f },  { GGUF_DT_BF16, 0.002f }, { GGUF_DT_Q4_0, 0.002f },
        { GGUF_DT_Q4_1, 0.002f }, { GGUF_DT_Q5_0, 0.002f }, { GGUF_DT_Q5_1, 0.002f },
        { GGUF_DT_Q8_0, 0.002f }, { GGUF_DT_Q2_K, 0.0075f }, { GGUF_DT_Q3_K, 0.0040f },
        { GGUF_DT_Q4_K, 0.002f }, { GGUF_DT_Q5_K, 0.002f }, { GGUF_DT_Q6_K, 0.002f },
        { GGUF_DT_Q8_K, 0.002f }, { GGUF_DT_IQ4_NL, 0.002f }, { GGUF_DT_IQ4_XS, 0.002f },
        { GGUF_DT_TQ1_0, 0.01f }, { GGUF_DT_TQ2_0, 0.01f }, { GGUF_DT_MXFP4, 0.002f },
    };
    enum { N = 32 * 128 };
    static float x[N], y[N];
    static uint8_t q[2 * N * 4];
    for (int i = 0; i < N; i++)
        x[i] = 0.1f + 2 * cosf((float)i + 0.0f);
    for (size_t t = 0; t < sizeof limits / sizeof *limits; t++) {
        ck_assert_uint_gt(gguf_quantize_rows(limits[t].type, x, q, 1, N, NULL, NULL), 0);
        ck_assert_int_eq(gguf_dequantize_row(limits[t].type, q, y, N, NULL), 0);
        double sum = 0;
        for (int i = 0; i < N; i++)
            sum += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
        float rmse = (float)(sqrtf((float)sum) / N);
        ck_assert_msg(rmse < limits[t].max, "%s: round-trip error %g ≥ %g",
                      gguf_dtype_name(limits[t].type), rmse, limits[t].max);
    }
}
END_TEST

/* Importance weights: uniform weights give a valid result close to the
 * plain one, and zero weights do not crash or produce NaN. */
START_TEST(test_weighted_paths)
{
    static const uint32_t types[] = { GGUF_DT_Q4_0, GGUF_DT_Q4_1, GGUF_DT_Q5_0, GGUF_DT_Q5_1,
                                      GGUF_DT_Q2_K, GGUF_DT_Q3_K, GGUF_DT_Q4_K, GGUF_DT_Q5_K,
                                      GGUF_DT_Q6_K, GGUF_DT_IQ4_NL, GGUF_DT_IQ4_XS,
                                      GGUF_DT_IQ3_XXS, GGUF_DT_IQ3_S };
    enum { N = 512 };
    static float x[N], w[N], y[N];
    static uint8_t q[N * 4];
    for (int i = 0; i < N; i++) {
        x[i] = sinf((float)i * 0.37f) * (1 + (i % 7));
        w[i] = 1.0f + (float)(i % 5);
    }
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
        ck_assert_ptr_nonnull(gguf_codec_get(types[t])->quantize_weighted);
        ck_assert_uint_gt(gguf_quantize_rows(types[t], x, q, 1, N, w, NULL), 0);
        ck_assert_int_eq(gguf_dequantize_row(types[t], q, y, N, NULL), 0);
        double err = 0, mag = 0;
        for (int i = 0; i < N; i++) {
            ck_assert(isfinite(y[i]));
            err += (x[i] - y[i]) * (x[i] - y[i]);
            mag += x[i] * x[i];
        }
        ck_assert_msg(err / mag < 0.1, "%s: weighted round trip relative error %g",
                      gguf_dtype_name(types[t]), err / mag);
    }
}
END_TEST

/* ggml ignores importance weights for tq1_0, tq2_0 and mxfp4: no weighted
 * quantizer, and gguf_quantize_rows gives the plain bytes with an imatrix. */
START_TEST(test_unweighted_types)
{
    static const uint32_t types[] = { GGUF_DT_Q8_0, GGUF_DT_TQ1_0, GGUF_DT_TQ2_0, GGUF_DT_MXFP4 };
    enum { N = 512 };
    static float x[N], w[N];
    static uint8_t a[N * 2], b[N * 2];
    for (int i = 0; i < N; i++) {
        x[i] = sinf((float)i * 0.61f) * (float)(1 + i % 11);
        w[i] = (float)(i % 3);
    }
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
        const gguf_codec *c = gguf_codec_get(types[t]);
        ck_assert_ptr_nonnull(c);
        ck_assert_ptr_null(c->quantize_weighted);
        size_t n = gguf_quantize_rows(types[t], x, a, 1, N, NULL, NULL);
        ck_assert_uint_gt(n, 0);
        ck_assert_uint_eq(gguf_quantize_rows(types[t], x, b, 1, N, w, NULL), n);
        ck_assert_msg(memcmp(a, b, n) == 0, "%s: weights changed the bytes",
                      gguf_dtype_name(types[t]));
    }
}
END_TEST

/* Values on a format's grid come back exactly: d·(t - 1) for the ternary
 * formats, 2^(e-128)·v[q] for mxfp4 when the block holds the extreme ±12
 * (its exponent is then the grid's). */
START_TEST(test_grid_values_exact)
{
    enum { N = 1024 };
    static const int8_t fp4[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };
    static float x[N], y[N];
    static uint8_t q[N * 2];
    uint64_t r = 99;
    for (int tern = 0; tern < 2; tern++) {
        const uint32_t types[] = { GGUF_DT_TQ1_0, GGUF_DT_TQ2_0 };
        for (int i = 0; i < N; i++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            x[i] = 0.375f * (float)((int)(r >> 33) % 3 - 1);
        }
        x[5] = 0.375f; /* every block's d: 0.375 */
        x[256 + 7] = x[512 + 9] = x[768 + 255] = -0.375f;
        ck_assert_uint_gt(gguf_quantize_rows(types[tern], x, q, 1, N, NULL, NULL), 0);
        ck_assert_int_eq(gguf_dequantize_row(types[tern], q, y, N, NULL), 0);
        ck_assert_msg(memcmp(x, y, sizeof x) == 0, "%s: ternary grid not exact",
                      gguf_dtype_name(types[tern]));
    }
    for (int i = 0; i < N; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        int block = i / 32;
        float scale = ldexpf(1.0f, block % 40 - 20);
        x[i] = (float)fp4[(r >> 33) % 16] * scale;
        if (i % 32 == (block * 7) % 32)
            x[i] = (block % 2 ? -12.0f : 12.0f) * scale;
    }
    ck_assert_uint_gt(gguf_quantize_rows(GGUF_DT_MXFP4, x, q, 1, N, NULL, NULL), 0);
    ck_assert_int_eq(gguf_dequantize_row(GGUF_DT_MXFP4, q, y, N, NULL), 0);
    for (int i = 0; i < N; i++)
        ck_assert_msg(x[i] == y[i], "mxfp4: element %d: %g came back as %g", i, x[i], y[i]);
}
END_TEST

/* Blocks at the edges: all zero (iq4: zero scale, every level index 8 —
 * the level 1 nearest 0; iq4_xs's sub-scales 0 stored as 32), and mxfp4's
 * exponents for a subnormal or infinite extreme, which ggml computes as
 * floor(log2 amax) + 125 narrowed to a byte the x86 way (-8 → 248, inf → 0). */
START_TEST(test_edge_blocks)
{
    enum { N = 256 };
    static float x[N], w[N], y[N];
    static uint8_t q[N * 2];
    for (int i = 0; i < N; i++)
        w[i] = 1.0f;
    for (int weighted = 0; weighted < 2; weighted++) {
        memset(x, 0, sizeof x);
        gguf_block_iq4_nl nl[N / 32];
        gguf_block_iq4_xs xs;
        ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_IQ4_NL, x, nl, 1, N, weighted ? w : NULL, NULL),
                          sizeof nl);
        ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_IQ4_XS, x, &xs, 1, N, weighted ? w : NULL, NULL),
                          sizeof xs);
        for (int b = 0; b < N / 32; b++) {
            ck_assert_uint_eq(nl[b].d, 0);
            for (int j = 0; j < 16; j++)
                ck_assert_uint_eq(nl[b].qs[j], 0x88);
        }
        ck_assert_uint_eq(xs.d & 0x7fff, 0);
        ck_assert_uint_eq(xs.scales_h, 0xAAAA);
        for (int j = 0; j < 4; j++)
            ck_assert_uint_eq(xs.scales_l[j], 0);
        for (int j = 0; j < 128; j++)
            ck_assert_uint_eq(xs.qs[j], 0x88);
    }
    for (int t = 0; t < 5; t++) {
        const uint32_t types[] = { GGUF_DT_IQ4_NL, GGUF_DT_IQ4_XS, GGUF_DT_TQ1_0, GGUF_DT_TQ2_0,
                                   GGUF_DT_MXFP4 };
        memset(x, 0, sizeof x);
        ck_assert_uint_gt(gguf_quantize_rows(types[t], x, q, 1, N, NULL, NULL), 0);
        ck_assert_int_eq(gguf_dequantize_row(types[t], q, y, N, NULL), 0);
        for (int i = 0; i < N; i++)
            ck_assert_msg(y[i] == 0.0f, "%s: zero row gives %g", gguf_dtype_name(types[t]), y[i]);
    }
    gguf_block_mxfp4 m[N / 32];
    for (int i = 0; i < N; i++)
        x[i] = 0.0f;
    x[0] = 1e-40f;    /* block 0: subnormal extreme */
    x[33] = INFINITY; /* block 1: infinite */
    x[64] = NAN;      /* block 2: NaN, never the extreme; the block is zero */
    x[96] = 6.0f;     /* block 3: 6 = 12 · 2^(127-128) */
    x[128] = 7.99f;   /* block 4: the same binade */
    /* block 5: just below 2^10, where log2f rounds up to 10: ggml's
     * exponent is 135, not the exact 134 (and 1024 - 2^-14 encodes as 8 · 2^7) */
    x[160] = 1024.0f - 0x1p-14f;
    ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_MXFP4, x, m, 1, N, NULL, NULL), sizeof m);
    ck_assert_uint_eq(m[0].e, 248);
    ck_assert_uint_eq(m[1].e, 0);
    ck_assert_uint_eq(m[2].e, 0);
    ck_assert_uint_eq(m[3].e, 127);
    ck_assert_uint_eq(m[3].qs[0], 7);
    ck_assert_uint_eq(m[4].e, 127);
    ck_assert_uint_eq(m[4].qs[0], 7); /* beyond 6: clamped to the largest code */
    ck_assert_uint_eq(m[5].e, 135);
    ck_assert_uint_eq(m[5].qs[0], 6);
    ck_assert_uint_eq(m[6].e, 0);
    ck_assert_int_eq(gguf_dequantize_row(GGUF_DT_MXFP4, m, y, N, NULL), 0);
    ck_assert(y[160] == 1024.0f && y[96] == 6.0f && y[128] == 6.0f);
    /* extremes (for the sanitizer build: no undefined conversion on any
     * path): tiny, huge, infinite and NaN values, with and without weights */
    static const float specials[] = { 1e-30f, 1e-44f, 1e30f, 3e38f, INFINITY, -INFINITY, NAN };
    for (size_t k = 0; k < sizeof specials / sizeof *specials; k++) {
        for (int i = 0; i < N; i++)
            x[i] = i % 5 == 0 ? specials[k] : (i % 2 ? 0.5f : -0.25f) * (k < 2 ? specials[k] : 1.0f);
        for (int t = 0; t < 5; t++) {
            const uint32_t types[] = { GGUF_DT_IQ4_NL, GGUF_DT_IQ4_XS, GGUF_DT_TQ1_0,
                                       GGUF_DT_TQ2_0, GGUF_DT_MXFP4 };
            for (int weighted = 0; weighted < 2; weighted++) {
                ck_assert_uint_gt(gguf_quantize_rows(types[t], x, q, 1, N, weighted ? w : NULL, NULL), 0);
                ck_assert_int_eq(gguf_dequantize_row(types[t], q, y, N, NULL), 0);
            }
        }
    }
}
END_TEST

/* The eight-lane searches and the one-block-at-a-time ones give the same
 * bytes, with and without importance weights, on rows that exercise the
 * special cases (all zero, constant, one outlier, tiny, huge, negative). */
START_TEST(test_lanes_match_scalar)
{
    static const uint32_t types[] = { GGUF_DT_Q4_0, GGUF_DT_Q8_0, GGUF_DT_Q4_1, GGUF_DT_Q5_0, GGUF_DT_Q5_1,
                                      GGUF_DT_Q2_K, GGUF_DT_Q3_K, GGUF_DT_Q4_K, GGUF_DT_Q5_K,
                                      GGUF_DT_Q6_K, GGUF_DT_IQ4_NL, GGUF_DT_IQ4_XS,
                                      GGUF_DT_IQ3_XXS, GGUF_DT_IQ3_S };
    enum { N = 1024, ROWS = 9 };
    static float x[ROWS * N], w[N];
    static uint8_t a[ROWS * N * 2], b[ROWS * N * 2];
    uint64_t r = 12345;
    for (int i = 0; i < ROWS * N; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        float u = (float)(r >> 40) / (float)(1 << 24) - 0.5f;
        int row = i / N;
        x[i] = row == 0 ? 0.0f : row == 1 ? 0.25f : row == 2 ? (i % 97 == 0 ? 40.0f : u * 0.01f)
             : row == 3 ? u * 1e-30f : row == 4 ? u * 1e30f : row == 5 ? -fabsf(u)
             : row == 6 ? (i % 256 < 128 ? u : u * 1e-3f)
             : row == 8 ? (float)((int)(r >> 61) % 5 - 2) /* ties of |x| of both signs */ : u;
    }
    for (int i = 0; i < N; i++)
        w[i] = (float)(i % 13) * 0.5f;
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
        for (int weighted = 0; weighted < 2; weighted++) {
            gguf_quants_force_scalar(false);
            size_t n = gguf_quantize_rows(types[t], x, a, ROWS, N, weighted ? w : NULL, NULL);
            gguf_quants_force_scalar(true);
            ck_assert_uint_eq(gguf_quantize_rows(types[t], x, b, ROWS, N, weighted ? w : NULL, NULL), n);
            gguf_quants_force_scalar(false);
            ck_assert_msg(memcmp(a, b, n) == 0, "%s%s: lanes and scalar differ",
                          gguf_dtype_name(types[t]), weighted ? " weighted" : "");
        }
    }
    /* iq4: blocks about ggml's all-zero threshold (squares still normal);
     * blocks of its levels, an extreme of -127, and every eighth value
     * halfway between two levels near zero: the trial whose inverse scale
     * is -127/max = 1 keeps the levels and meets exact ties (resolved
     * upwards, a choice no other trial repeats on both signs) and wins;
     * -0.0 and denormals; rows of 11 iq4_nl blocks end in a short group */
    static const float iq4_levels[16] = { -127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113 };
    enum { NZ = 11 * 32, ZROWS = 8 };
    static float z[ZROWS * NZ];
    for (int i = 0; i < ZROWS * NZ; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        float u = (float)(r >> 40) / (float)(1 << 24) - 0.5f;
        int l = (int)(r >> 60), row = i / NZ;
        float tie = (iq4_levels[6 + l % 4] + iq4_levels[7 + l % 4]) / 2;
        z[i] = row == 0 ? u * 4e-15f : row == 1 ? u * 1e-16f
             : row <= 3 ? (i % 32 == 7 ? -127.0f : i % 8 == 0 ? tie : iq4_levels[l])
             : row == 4 ? (i % 3 == 0 ? -0.0f : u * 1e-40f)
             : row == 5 ? (i % 5 == 0 ? 0.0f : u * 1e-37f) : u * 1e-18f;
    }
    for (int weighted = 0; weighted < 2; weighted++) {
        for (int xs = 0; xs < 2; xs++) {
            const uint32_t type = xs ? GGUF_DT_IQ4_XS : GGUF_DT_IQ4_NL;
            const int64_t rows = xs ? ZROWS * NZ / 256 : ZROWS, per_row = xs ? 256 : NZ;
            gguf_quants_force_scalar(false);
            size_t n = gguf_quantize_rows(type, z, a, rows, per_row, weighted ? w : NULL, NULL);
            gguf_quants_force_scalar(true);
            ck_assert_uint_eq(gguf_quantize_rows(type, z, b, rows, per_row, weighted ? w : NULL,
                                                 NULL), n);
            gguf_quants_force_scalar(false);
            ck_assert_msg(memcmp(a, b, n) == 0, "%s%s, adversarial rows: lanes and scalar differ",
                          gguf_dtype_name(type), weighted ? " weighted" : "");
        }
    }
}
END_TEST

START_TEST(test_bad_arguments)
{
    float x[33] = { 0 };
    uint8_t q[64];
    ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_Q8_0, x, q, 1, 33, NULL, NULL), 0);
    gguf_error err = { 0 };
    float x256[256] = { 0 };
    uint8_t q256[128];
    ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_IQ2_XXS, x256, q256, 1, 256, NULL, &err), 0);
    ck_assert_str_eq(err.msg, "type iq2_xxs needs an importance matrix (ggml has no quantizer "
                     "for it without one)");
    ck_assert_ptr_null(gguf_codec_get(GGUF_DT_IQ2_XS)->quantize);
    ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_IQ2_XS, x256, q256, 1, 256, x256, NULL), 74);
    ck_assert_int_eq(gguf_dequantize_row(GGUF_DT_Q4_K, q, x, 32, NULL), -1);
    ck_assert_ptr_null(gguf_codec_get(4));
    ck_assert_ptr_null(gguf_codec_get(1000));
}
END_TEST

/* gguf_iq_grid gives ggml's grid tables byte for byte: the sha256 of each
 * table of ggml-common.h (e21cdc11) as stored, little-endian. */
START_TEST(test_iq_grids)
{
    static const struct { uint32_t type, n, width; const char *sha; } grids[] = {
        { GGUF_DT_IQ2_XXS, 256, 8, "05826b5d3e472a3a78f196be62ac78acf81df0f909626e12ab9fa2a5d490dd54" },
        { GGUF_DT_IQ2_XS, 512, 8, "06e47aaca60b4dc1d9b5a3f34540437058a6b142b4d7a59d5ded769b4d1bf1de" },
        { GGUF_DT_IQ2_S, 1024, 8, "e1aa1473412b0552c2174c30ef22ab4073f6a181b85a17056e8249bd2932fd88" },
        { GGUF_DT_IQ3_XXS, 256, 4, "46e35f5a997efdee6c99ce57854c8a0d4f0ff8ca57e5e8a60c0793ea580acf5d" },
        { GGUF_DT_IQ3_S, 512, 4, "bd1af4945a1717c65610b0284e4628b9a1ba3b306fae3a06f6e5f597356e349f" },
        { GGUF_DT_IQ1_S, 2048, 8, "07540ffc1aeaf6ad4d97e96b0fcc765aae39671d4ae4a27bbd0e796fde167c6a" },
        { GGUF_DT_IQ1_M, 2048, 8, "07540ffc1aeaf6ad4d97e96b0fcc765aae39671d4ae4a27bbd0e796fde167c6a" },
    };
    for (size_t i = 0; i < sizeof grids / sizeof *grids; i++) {
        uint32_t n = 0, w = 0;
        const uint8_t *g = gguf_iq_grid(grids[i].type, &n, &w);
        ck_assert_ptr_nonnull(g);
        ck_assert_uint_eq(n, grids[i].n);
        ck_assert_uint_eq(w, grids[i].width);
        char hex[65];
        gguf_sha256_hex(g, (size_t)n * w, hex);
        ck_assert_msg(!strcmp(hex, grids[i].sha), "%s grid: %s", gguf_dtype_name(grids[i].type), hex);
    }
    /* the nibble levels: ggml-common.h's kvalues_iq4nl and kvalues_mxfp4 */
    static const int8_t iq4[16] = { -127, -104, -83, -65, -49, -35, -22, -10,
                                    1, 13, 25, 38, 53, 69, 89, 113 };
    static const int8_t mx[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };
    ck_assert_mem_eq(gguf_nl_levels(GGUF_DT_IQ4_NL), iq4, 16);
    ck_assert_mem_eq(gguf_nl_levels(GGUF_DT_IQ4_XS), iq4, 16);
    ck_assert_mem_eq(gguf_nl_levels(GGUF_DT_MXFP4), mx, 16);
    ck_assert_ptr_null(gguf_nl_levels(GGUF_DT_Q4_0));
    /* E8M0 halves: 2^(e-128), subnormal for e = 0, 1 */
    ck_assert(gguf_e8m0_to_f32_half(128) == 1.0f);
    ck_assert(gguf_e8m0_to_f32_half(127) == 0.5f);
    ck_assert(gguf_e8m0_to_f32_half(2) == 0x1p-126f);
    ck_assert(gguf_e8m0_to_f32_half(1) == 0x1p-127f);
    ck_assert(gguf_e8m0_to_f32_half(0) == 0x1p-128f);
    ck_assert(gguf_e8m0_to_f32_half(255) == 0x1p127f);
    ck_assert_ptr_null(gguf_iq_grid(GGUF_DT_IQ4_XS, NULL, NULL));
    ck_assert_ptr_null(gguf_iq_grid(GGUF_DT_Q4_K, NULL, NULL));
}
END_TEST

/* Importance vectors with some or all weights 0 (an imatrix whose sums are 0
 * for a tensor, as for experts calibration never routed to, or for some
 * columns): ggml's bytes for every weighted type, both search paths, from
 * tests/data/qzero.tsv (tests/ref/qzero_ref.c against ggml e21cdc11), and no
 * value that dequantizes to NaN or Inf. The inputs are made here
 * (qzero_rows.h), so this needs no fixtures. */
START_TEST(test_zero_importance_exact)
{
    const bool scalar = _i >= N_IMATRIX_TYPES;
    const char *type = imatrix_types[_i % N_IMATRIX_TYPES];
    const int ty = gguf_dtype_from_name(type);
    ck_assert_int_ge(ty, 0);
    FILE *fp = fopen("tests/data/qzero.tsv", "r");
    ck_assert_msg(fp != NULL, "tests/data/qzero.tsv: cannot open (run from the repository)");
    static float x[QZ_ROWS * QZ_NPR], w[QZ_NPR], y[QZ_NPR];
    qz_make_rows(x);
    uint8_t out[QZ_NPR * 4];
    char line[256], want_type[32], pattern[32], hash[32], hex[65], first[160] = "";
    int row, finite, seen = 0, bad = 0, nonfinite = 0;
    gguf_quants_force_scalar(scalar);
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#' ||
            sscanf(line, "%31s %31s %d %31s %d", want_type, pattern, &row, hash, &finite) != 5 ||
            strcmp(want_type, type) != 0)
            continue;
        int p = 0;
        while (p < QZ_PATTERNS && strcmp(qz_pattern_names[p], pattern) != 0)
            p++;
        ck_assert_msg(p < QZ_PATTERNS && row >= 0 && row < QZ_ROWS, "qzero.tsv: bad line %s", line);
        qz_make_weights(p, w);
        size_t n = gguf_quantize_rows((uint32_t)ty, x + (size_t)row * QZ_NPR, out, 1, QZ_NPR, w, NULL);
        ck_assert_uint_gt(n, 0);
        gguf_sha256_hex(out, n, hex);
        ck_assert_int_eq(gguf_dequantize_row((uint32_t)ty, out, y, QZ_NPR, NULL), 0);
        int fin = 1;
        for (int i = 0; i < QZ_NPR; i++)
            fin &= isfinite(y[i]) != 0;
        nonfinite += !fin;
        if (strncmp(hex, hash, 16) != 0 && bad++ == 0)
            snprintf(first, sizeof first, "pattern %s row %d", pattern, row);
        seen++;
    }
    fclose(fp);
    gguf_quants_force_scalar(false);
    ck_assert_msg(seen == QZ_PATTERNS * QZ_ROWS, "%s: %d rows in qzero.tsv, expected %d", type, seen,
                  QZ_PATTERNS * QZ_ROWS);
    ck_assert_msg(bad == 0 && nonfinite == 0, "%s%s: %d of %d rows differ from ggml (first: %s), %d "
                  "dequantize to NaN/Inf", type, scalar ? " (scalar)" : "", bad, seen, first, nonfinite);
}
END_TEST

/* f16 → q8_0 in one pass: the bytes of the f32 route (f16 dequantized,
 * then the scalar q8_0 codec) on random halves, ties x·id = k + 1/2,
 * zeros, subnormals and ±65504, by the vector path and the scalar one;
 * any NaN or infinity refused. */
static uint32_t f16_rng = 12345;
static uint16_t f16_random(int kind)
{
    f16_rng = f16_rng * 1664525u + 1013904223u;
    uint16_t h = (uint16_t)(f16_rng >> 16);
    if (kind == 1) /* subnormal or zero */
        h &= 0x83ff;
    else if ((h & 0x7c00) == 0x7c00)
        h &= 0xbfff;
    return h;
}

static void f16_q8_0_same(const uint16_t *h, int64_t n, const char *what)
{
    float *x = malloc((size_t)n * sizeof *x), amax_want = 0, amax = -1;
    const size_t bytes = (size_t)n / 32 * 34;
    uint8_t *want = malloc(bytes), *got = malloc(bytes);
    ck_assert_int_eq(gguf_dequantize_row(GGUF_DT_F16, h, x, n, NULL), 0);
    for (int64_t i = 0; i < n; i++)
        amax_want = fabsf(x[i]) > amax_want ? fabsf(x[i]) : amax_want;
    gguf_quants_force_scalar(true);
    ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_Q8_0, x, want, 1, n, NULL, NULL), bytes);
    for (int scalar = 0; scalar < 2; scalar++) {
        gguf_quants_force_scalar(scalar);
        memset(got, 0xAA, bytes);
        ck_assert_msg(gguf_quantize_q8_0_f16(h, got, n, &amax), "%s: refused", what);
        size_t b = 0;
        while (b < bytes && got[b] == want[b])
            b++;
        ck_assert_msg(b == bytes, "%s%s: byte %zu differs", what, scalar ? " (scalar)" : "", b);
        ck_assert_msg(amax == amax_want, "%s: amax %g, want %g", what, (double)amax, (double)amax_want);
    }
    gguf_quants_force_scalar(false);
    free(x);
    free(want);
    free(got);
}

START_TEST(test_q8_0_f16_fused)
{
    enum { N = 32 * 67 }; /* not a multiple of eight blocks */
    uint16_t h[N];
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < N; i++)
            h[i] = f16_random(0);
        f16_q8_0_same(h, N, "random");
        for (int i = 0; i < N; i++)
            h[i] = f16_random(1);
        f16_q8_0_same(h, N, "subnormal");
        for (int i = 0; i < N; i++)
            h[i] = i % 32 == round % 32 ? (i & 32 ? 0xfbff : 0x7bff) : f16_random(0);
        f16_q8_0_same(h, N, "65504");
    }
    /* ties: amax 127·2^e makes d = 2^e and id = 2^-e exact, so (k + 1/2)·2^e
     * scales to k + 1/2; amax 63.5 (d 0.5, id 2) with quarters likewise */
    static const float scale[] = { 1.0f, 0x1p-20f, 0x1p-8f, 0x1p3f, 0.5f };
    for (int s = 0; s < 5; s++) {
        float x[N];
        for (int i = 0; i < N; i++) {
            const int k = (int)(f16_random(0) % 127);
            x[i] = i % 32 == 5 ? 127.0f * scale[s] : (k + 0.5f) * scale[s] * (i & 1 ? -1.0f : 1.0f);
        }
        ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_F16, x, h, 1, N, NULL, NULL), sizeof h);
        f16_q8_0_same(h, N, "ties");
        for (int i = 0; i < N; i++)
            x[i] = i % 32 == 0 ? 63.5f : (float)((int)(f16_random(0) % 254) - 127) / 2 + 0.25f;
        ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_F16, x, h, 1, N, NULL, NULL), sizeof h);
        f16_q8_0_same(h, N, "quarter ties");
    }
    memset(h, 0, sizeof h);
    f16_q8_0_same(h, N, "zeros");
    for (int i = 0; i < N; i++)
        h[i] = i % 3 ? 0x8000 : 0;
    f16_q8_0_same(h, N, "signed zeros");
    static const uint16_t bad[] = { 0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x7c01 };
    uint8_t out[N / 32 * 34];
    for (int b = 0; b < 5; b++)
        for (int scalar = 0; scalar < 2; scalar++) {
            for (int i = 0; i < N; i++)
                h[i] = f16_random(0);
            h[(b * 997 + 31) % N] = bad[b];
            gguf_quants_force_scalar(scalar);
            ck_assert(!gguf_quantize_q8_0_f16(h, out, N, NULL));
            gguf_quants_force_scalar(false);
        }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("quants");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_round_trip_error);
    tcase_add_test(tc, test_weighted_paths);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_test(tc, test_lanes_match_scalar);
    tcase_add_test(tc, test_unweighted_types);
    tcase_add_test(tc, test_grid_values_exact);
    tcase_add_test(tc, test_edge_blocks);
    tcase_add_test(tc, test_q8_0_f16_fused);
    tcase_add_test(tc, test_iq_grids);
    tcase_add_loop_test(tc, test_zero_importance_exact, 0, 2 * N_IMATRIX_TYPES);
    int skipped = 0;
    if (fixtures_present()) {
        tcase_add_loop_test(tc, test_vectors_quantize_exact, 0, 2 * N_VECTOR_TYPES);
        tcase_add_loop_test(tc, test_vectors_dequantize_exact, 0, N_VECTOR_TYPES);
        tcase_add_loop_test(tc, test_vectors_imatrix_exact, 0, 2 * N_IMATRIX_TYPES);
    } else {
        skipped += 3 * N_VECTOR_TYPES + 2 * N_IMATRIX_TYPES;
    }
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
