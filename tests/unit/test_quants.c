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

#include <ggufkit/quants.h>
#include "testutil.h"

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

static const char *vector_types[] = { "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1",
                                      "q8_0", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K" };
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
static const char *imatrix_types[] = { "q4_0", "q4_1", "q5_0", "q5_1", "q8_0",
                                       "q2_K", "q3_K", "q4_K", "q5_K", "q6_K" };
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
        { GGUF_DT_Q8_K, 0.002f },
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
                                      GGUF_DT_Q6_K };
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

/* The eight-lane searches and the one-block-at-a-time ones give the same
 * bytes, with and without importance weights, on rows that exercise the
 * special cases (all zero, constant, one outlier, tiny, huge, negative). */
START_TEST(test_lanes_match_scalar)
{
    static const uint32_t types[] = { GGUF_DT_Q4_0, GGUF_DT_Q4_1, GGUF_DT_Q5_0, GGUF_DT_Q5_1,
                                      GGUF_DT_Q2_K, GGUF_DT_Q3_K, GGUF_DT_Q4_K, GGUF_DT_Q5_K,
                                      GGUF_DT_Q6_K };
    enum { N = 1024, ROWS = 8 };
    static float x[ROWS * N], w[N];
    static uint8_t a[ROWS * N * 2], b[ROWS * N * 2];
    uint64_t r = 12345;
    for (int i = 0; i < ROWS * N; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        float u = (float)(r >> 40) / (float)(1 << 24) - 0.5f;
        int row = i / N;
        x[i] = row == 0 ? 0.0f : row == 1 ? 0.25f : row == 2 ? (i % 97 == 0 ? 40.0f : u * 0.01f)
             : row == 3 ? u * 1e-30f : row == 4 ? u * 1e30f : row == 5 ? -fabsf(u)
             : row == 6 ? (i % 256 < 128 ? u : u * 1e-3f) : u;
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
}
END_TEST

START_TEST(test_bad_arguments)
{
    float x[33] = { 0 };
    uint8_t q[64];
    ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_Q8_0, x, q, 1, 33, NULL, NULL), 0);
    ck_assert_uint_eq(gguf_quantize_rows(GGUF_DT_IQ2_XXS, x, q, 1, 256, NULL, NULL), 0);
    ck_assert_int_eq(gguf_dequantize_row(GGUF_DT_Q4_K, q, x, 32, NULL), -1);
    ck_assert_ptr_null(gguf_codec_get(4));
    ck_assert_ptr_null(gguf_codec_get(1000));
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
