/*
 * test_float16.c — f16 and bf16 conversions against ggml: rounding, NaN and
 * Inf handling, every 16-bit pattern, and the fixture vectors f16.qvec and
 * bf16.qvec (ggml's conversion of real and adversarial rows).
 */
#include <math.h>
#include <string.h>
#include <stdint.h>

#include <ggufkit/quants.h>
#include "testutil.h"

START_TEST(test_f16_conversions)
{
    ck_assert_uint_eq(gguf_f32_to_f16(1.0f), 0x3c00);
    ck_assert_uint_eq(gguf_f32_to_f16(-2.0f), 0xc000);
    ck_assert_uint_eq(gguf_f32_to_f16(65504.0f), 0x7bff);
    ck_assert_uint_eq(gguf_f32_to_f16(65519.0f), 0x7bff);
    ck_assert_uint_eq(gguf_f32_to_f16(65520.0f), 0x7c00);      /* ties to even → Inf */
    ck_assert_uint_eq(gguf_f32_to_f16(INFINITY), 0x7c00);
    ck_assert_uint_eq(gguf_f32_to_f16(-INFINITY), 0xfc00);
    ck_assert_uint_eq(gguf_f32_to_f16(NAN) & 0x7fff, 0x7e00);
    ck_assert_uint_eq(gguf_f32_to_f16(5.960464477539063e-08f), 0x0001); /* 2^-24 */
    ck_assert_uint_eq(gguf_f32_to_f16(2.98023223876953125e-08f), 0x0000); /* 2^-25 tie → 0 */
    ck_assert_uint_eq(gguf_f32_to_f16(6.103515625e-05f), 0x0400);       /* 2^-14 */
    ck_assert_uint_eq(gguf_f32_to_f16(-0.0f), 0x8000);
    /* every half converts to float and back unchanged (NaNs stay NaN) */
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = gguf_f16_to_f32((gguf_half)h);
        if (isnan(f))
            ck_assert(isnan(gguf_f16_to_f32(gguf_f32_to_f16(f))));
        else
            ck_assert_uint_eq(gguf_f32_to_f16(f), h);
    }
}
END_TEST

START_TEST(test_bf16_conversions)
{
    ck_assert_uint_eq(gguf_f32_to_bf16(1.0f), 0x3f80);
    ck_assert_uint_eq(gguf_f32_to_bf16(1.00390625f), 0x3f80);  /* tie → even */
    ck_assert_uint_eq(gguf_f32_to_bf16(1.01171875f), 0x3f82);  /* tie → even (up) */
    ck_assert_uint_eq(gguf_f32_to_bf16(INFINITY), 0x7f80);
    uint32_t snan = 0x7f800001u;
    float f;
    memcpy(&f, &snan, 4);
    ck_assert_uint_eq(gguf_f32_to_bf16(f), 0x7fc0);            /* quieted */
    for (uint32_t h = 0; h < 0x10000; h++) {
        float g = gguf_bf16_to_f32((uint16_t)h);
        if (!isnan(g))
            ck_assert_uint_eq(gguf_f32_to_bf16(g), h);
    }
}
END_TEST

/* f16.qvec / bf16.qvec: input floats, ggml's 16-bit encoding, and ggml's
 * decoding of it — both directions must match bit for bit. */
static void check_vector(const char *name, uint16_t (*enc)(float), float (*dec)(uint16_t))
{
    char rel[64], path[1024];
    snprintf(rel, sizeof rel, "vectors/%s.qvec", name);
    ck_assert_ptr_nonnull(fixture_path(path, sizeof path, rel));
    FILE *fp = fopen(path, "rb");
    uint32_t h[6];
    ck_assert_uint_eq(fread(h, 4, 6, fp), 6);
    size_t n = (size_t)h[3] * h[4];
    ck_assert_uint_eq(h[5], h[4] * 2);
    float *in = malloc(n * 4), *deq = malloc(n * 4);
    uint16_t *q = malloc(n * 2);
    ck_assert(fread(in, 4, n, fp) == n && fread(q, 2, n, fp) == n && fread(deq, 4, n, fp) == n);
    fclose(fp);
    size_t bad_enc = 0, bad_dec = 0;
    for (size_t i = 0; i < n; i++) {
        bad_enc += enc(in[i]) != q[i];
        float d = dec(q[i]);
        bad_dec += memcmp(&d, &deq[i], 4) != 0;
    }
    free(in);
    free(q);
    free(deq);
    ck_assert_msg(bad_enc == 0 && bad_dec == 0, "%s: %zu encodings and %zu decodings of %zu differ",
                  name, bad_enc, bad_dec, n);
}

/* The row conversions (vectorized where the CPU allows) give exactly the
 * scalar results for every half and bf16 value, NaNs included, at every
 * alignment and tail length. */
START_TEST(test_rows_match_scalar)
{
    enum { N = 65536 + 13 };
    static gguf_half h[N];
    static float a[N], b[N];
    for (int i = 0; i < N; i++)
        h[i] = (gguf_half)(i * 40503u);
    for (int off = 0; off < 3; off++) {
        gguf_f16_to_f32_row(h + off, a, N - off);
        for (int i = 0; i < N - off; i++)
            b[i] = gguf_f16_to_f32(h[i + off]);
        ck_assert_msg(memcmp(a, b, (size_t)(N - off) * 4) == 0, "f16 rows differ at offset %d", off);
        gguf_bf16_to_f32_row(h + off, a, N - off);
        for (int i = 0; i < N - off; i++)
            b[i] = gguf_bf16_to_f32(h[i + off]);
        ck_assert(memcmp(a, b, (size_t)(N - off) * 4) == 0);
    }
    static gguf_half r1[N], r2[N];
    for (int i = 0; i < N; i++)
        memcpy(&a[i], &(uint32_t){ (uint32_t)i * 2654435761u }, 4);
    gguf_f32_to_f16_row(a, r1, N);
    for (int i = 0; i < N; i++)
        r2[i] = gguf_f32_to_f16(a[i]);
    ck_assert(memcmp(r1, r2, sizeof r1) == 0);
    gguf_f32_to_bf16_row(a, r1, N);
    for (int i = 0; i < N; i++)
        r2[i] = gguf_f32_to_bf16(a[i]);
    ck_assert(memcmp(r1, r2, sizeof r1) == 0);
}
END_TEST

/* f32 → f16 and bf16 rows against the scalars on runs of consecutive bit
 * patterns: around every boundary of the f16 rounding (2^-25, the smallest
 * normal, overflow to Inf, Inf/NaN) with both signs, and 4096-pattern runs
 * spread over all 2^32 (every exponent, ties and their neighbours). */
START_TEST(test_rows_f32_sweep)
{
    enum { RUN = 4096 };
    static float x[RUN];
    static gguf_half r1[RUN], r2[RUN];
    static const uint32_t edges[] = { 0x00000000, 0x33000000, 0x387ff800, 0x38800000, 0x477fe800,
                                      0x477ff000, 0x7f7ff800, 0x7f800000, 0x7fbff800, 0x7fc00000 };
    uint32_t starts[2 * sizeof edges / sizeof *edges + 1100];
    size_t n = 0;
    for (size_t e = 0; e < sizeof edges / sizeof *edges; e++) {
        starts[n++] = edges[e] - RUN / 2;
        starts[n++] = (edges[e] - RUN / 2) | 0x80000000u;
    }
    for (uint64_t b = 0; b < ((uint64_t)1 << 32) && n < sizeof starts / sizeof *starts; b += 4096u * 1021u)
        starts[n++] = (uint32_t)b;
    for (size_t k = 0; k < n; k++) {
        for (int i = 0; i < RUN; i++)
            memcpy(&x[i], &(uint32_t){ starts[k] + (uint32_t)i }, 4);
        gguf_f32_to_f16_row(x, r1, RUN);
        for (int i = 0; i < RUN; i++)
            r2[i] = gguf_f32_to_f16(x[i]);
        ck_assert_msg(memcmp(r1, r2, sizeof r1) == 0, "f16 rows differ in the run from 0x%08x", starts[k]);
        gguf_f32_to_bf16_row(x, r1, RUN);
        for (int i = 0; i < RUN; i++)
            r2[i] = gguf_f32_to_bf16(x[i]);
        ck_assert_msg(memcmp(r1, r2, sizeof r1) == 0, "bf16 rows differ in the run from 0x%08x", starts[k]);
    }
}
END_TEST

START_TEST(test_vectors)
{
    check_vector("f16", gguf_f32_to_f16, gguf_f16_to_f32);
    check_vector("bf16", gguf_f32_to_bf16, gguf_bf16_to_f32);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("float16");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_f16_conversions);
    tcase_add_test(tc, test_bf16_conversions);
    tcase_add_test(tc, test_rows_match_scalar);
    tcase_add_test(tc, test_rows_f32_sweep);
    int skipped = 0;
    if (fixtures_present())
        tcase_add_test(tc, test_vectors);
    else
        skipped++;
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
