/*
 * test_finite.c — gguf-convert's non-finite scans (convert/finite.c): for
 * every length up to past two vector steps and every position, each kind
 * of Inf and NaN is found at its index, the first of two wins, and the
 * finite extremes (largest, smallest subnormal, -0) are never taken for
 * one. The scans' vector loop and tail are both walked: lengths 0-300
 * (past four vectors of 32 bytes), each through the AVX2 loops (where the
 * CPU has them) and the generic 16-byte ones.
 */
#include <math.h>
#include <stdint.h>

#include <ggufkit/quants.h>
#include "finite.h"
#include "testutil.h"

#define MAXN 300

START_TEST(test_f32)
{
    nonfinite_force_generic(_i == 1);
    const float bad[] = { NAN, -NAN, INFINITY, -INFINITY };
    const uint32_t bad_bits[] = { 0x7f800001u, 0xffffffffu, 0x7fc00000u }; /* sNaN, -qNaN */
    const float good[] = { 0.0f, -0.0f, 3.4028234663852886e38f, -3.4028234663852886e38f,
                           1.4e-45f, 1.0f, -65504.0f };
    float x[MAXN];
    for (int n = 0; n <= MAXN; n++) {
        for (int i = 0; i < n; i++)
            x[i] = good[i % 7];
        ck_assert_int_eq(nonfinite_f32(x, n), -1);
        for (int at = 0; at < n; at++) {
            for (size_t b = 0; b < 4; b++) {
                x[at] = bad[b];
                ck_assert_int_eq(nonfinite_f32(x, n), at);
            }
            for (size_t b = 0; b < 3; b++) {
                memcpy(&x[at], &bad_bits[b], 4);
                ck_assert_int_eq(nonfinite_f32(x, n), at);
            }
            if (at + 3 < n) { /* two: the first is reported */
                x[at + 3] = NAN;
                ck_assert_int_eq(nonfinite_f32(x, n), at);
                x[at + 3] = good[(at + 3) % 7];
            }
            x[at] = good[at % 7];
        }
    }
}
END_TEST

/* f16 (exponent 0x7c00) and bf16 (0x7f80) bits. */
static void check_16(int64_t (*scan)(const uint16_t *, int64_t), const uint16_t *bad, int n_bad,
                     const uint16_t *good, int n_good)
{
    uint16_t x[MAXN];
    for (int n = 0; n <= MAXN; n++) {
        for (int i = 0; i < n; i++)
            x[i] = good[i % n_good];
        ck_assert_int_eq(scan(x, n), -1);
        for (int at = 0; at < n; at++) {
            for (int b = 0; b < n_bad; b++) {
                x[at] = bad[b];
                ck_assert_int_eq(scan(x, n), at);
            }
            if (at + 9 < n) {
                x[at + 9] = bad[0];
                ck_assert_int_eq(scan(x, n), at);
                x[at + 9] = good[(at + 9) % n_good];
            }
            x[at] = good[at % n_good];
        }
    }
}

START_TEST(test_f16)
{
    nonfinite_force_generic(_i == 1);
    /* +Inf, -Inf, quiet and signalling NaN, -NaN */
    const uint16_t bad[] = { 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xffff };
    /* 0, -0, 65504, -65504, smallest subnormal, 1, largest subnormal */
    const uint16_t good[] = { 0x0000, 0x8000, 0x7bff, 0xfbff, 0x0001, 0x3c00, 0x03ff };
    check_16(nonfinite_f16, bad, 5, good, 7);
}
END_TEST

START_TEST(test_bf16)
{
    nonfinite_force_generic(_i == 1);
    const uint16_t bad[] = { 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffff };
    /* 0, -0, the largest finite (3.39e38) and its negative, 1, f16's Inf
     * pattern (a finite bf16: 2^-7 × 1.0) */
    const uint16_t good[] = { 0x0000, 0x8000, 0x7f7f, 0xff7f, 0x0001, 0x3f80, 0x7c00 };
    check_16(nonfinite_bf16, bad, 5, good, 7);
}
END_TEST

START_TEST(test_q8_0)
{
    gguf_block_q8_0 b[9];
    for (int nb = 0; nb <= 9; nb++) {
        for (int i = 0; i < nb; i++) {
            b[i].d = i % 2 ? 0x7bff : 0x3c00; /* 65504, 1 */
            memset(b[i].qs, 0x7f, sizeof b[i].qs); /* bytes that would be NaN as f16 pairs */
        }
        ck_assert_int_eq(nonfinite_q8_0(b, nb), -1);
        for (int at = 0; at < nb; at++) {
            const uint16_t d = b[at].d;
            b[at].d = 0x7c00;
            ck_assert_int_eq(nonfinite_q8_0(b, nb), at);
            b[at].d = 0xfe00;
            ck_assert_int_eq(nonfinite_q8_0(b, nb), at);
            b[at].d = d;
        }
    }
}
END_TEST

/* nonfinite_amax_f32: the largest magnitude wherever it sits, negative or
 * not, subnormals and -0 beside it, every length (both vector widths and
 * the tails); with an Inf or NaN after it, the index of that and the
 * largest magnitude before it. */
START_TEST(test_amax)
{
    float x[MAXN] = { 0 }, a = -1;
    for (int g = 0; g < 2; g++) {
        nonfinite_force_generic(g);
        ck_assert_int_eq(nonfinite_amax_f32(x, 0, &a), -1);
        ck_assert(a == 0.0f);
        for (int n = 1; n <= MAXN; n++)
            for (int at = 0; at < n; at++) {
                for (int i = 0; i < n; i++)
                    x[i] = i % 3 == 0 ? -0.0f : i % 3 == 1 ? 1.4e-45f : 0.5f * (float)(i % 7);
                x[at] = at % 2 ? -1000.0f : 1000.0f;
                ck_assert_int_eq(nonfinite_amax_f32(x, n, &a), -1);
                ck_assert(a == 1000.0f);
                x[at] = -3.4028234663852886e38f;
                ck_assert_int_eq(nonfinite_amax_f32(x, n, &a), -1);
                ck_assert(a == 3.4028234663852886e38f);
                x[at] = at % 2 ? -INFINITY : NAN;
                if (n > at + 1)
                    x[n - 1] = 1e30f; /* after the bad one: not counted */
                float before = 0.0f;
                for (int i = 0; i < at; i++)
                    before = fabsf(x[i]) > before ? fabsf(x[i]) : before;
                ck_assert_int_eq(nonfinite_amax_f32(x, n, &a), at);
                ck_assert(a == before);
            }
        const float small[] = { -0.0f, 1.4e-45f, -255.99998f };
        ck_assert_int_eq(nonfinite_amax_f32(small, 3, &a), -1);
        ck_assert(a == 255.99998f);
    }
    nonfinite_force_generic(false);
}
END_TEST

START_TEST(test_e8m0)
{
    uint8_t x[MAXN];
    for (int n = 0; n <= MAXN; n++) {
        for (int i = 0; i < n; i++)
            x[i] = (uint8_t)(i * 37 % 255); /* every byte but 0xff, 0xfe included */
        ck_assert_int_eq(nonfinite_e8m0(x, n), -1);
        for (int at = 0; at < n; at++) {
            const uint8_t v = x[at];
            x[at] = 0xff;
            ck_assert_int_eq(nonfinite_e8m0(x, n), at);
            x[at] = v;
        }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("finite");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_f32, 0, 2);
    tcase_add_loop_test(tc, test_f16, 0, 2);
    tcase_add_loop_test(tc, test_bf16, 0, 2);
    tcase_add_test(tc, test_q8_0);
    tcase_add_test(tc, test_e8m0);
    tcase_add_test(tc, test_amax);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
