/*
 * test_kernels.c — run/kernels.h: the matrix kernels of gguf-run.
 *
 * For every weight type, random weights are quantized with libgguf's codecs
 * and the activations converted with kern_quantize_act. Then:
 *   1. the scalar kern_vec_dot equals dequantize(w) · dequantize(x̂) summed
 *      in double, within the float rounding the kernel's formula allows;
 *   2. the SIMD kernel equals the scalar one within the reassociation bound;
 *   3. q8_1 activation bytes equal ggml's quantize_row_q8_1_ref, recomputed
 *      here, and a hand-worked block;
 *   4. kern_matmul for nb = 1, 3, 17 and an odd row count gives exactly the
 *      per-row kern_vec_dot (the same kernel on the same bytes), for every
 *      instruction set, and with 40 rows (f32, f16: ggml's batch order for
 *      nb > 1) kern_batch_dot; the AVX-512 VNNI kernels give exactly what
 *      the AVX2 ones give (the same integer lanes, the same float additions);
 *      the f32 and f16 kernels' vector paths give the scalar bits in both
 *      orders, and those orders are ggml's (computed here lane by lane);
 *   5. unsupported types and shapes answer false / -1 / 0;
 *   6. iq3_s and iq2_s (kernels_iq3s.c): the scalar kernel equals ggml's
 *      formula evaluated in double from the blocks decoded here (which
 *      decode to libgguf's dequantized weights exactly), the AVX2 dot and
 *      dotn kernels equal it within the reassociation bound, and on random
 *      block bytes and activation levels down to -128 too; the VNNI ones
 *      give the AVX2 bits on all of them (likewise iq4_nl, iq4_xs and mxfp4
 *      in 4c).
 *
 * Error bounds. Let u = 2^-24 (float's unit roundoff) and, per element i,
 * M = Σ_i (|ŵ_i| + |min_i|) · |x̂_i| with ŵ the dequantized weight, min_i its
 * block's min (0 for scale-only types) and x̂ the dequantized activation.
 * Every float term a kernel adds (a block's d_w·d_x·Σq·a [+ m·s], a lane's
 * partial sum, a product of floats) is bounded by the part of M it covers,
 * and is computed with at most 6 roundings; a chain of k float additions
 * adds at most k·u·Σ|terms| (Higham, recursive summation). So
 *   |scalar − exact| ≤ (B_ref + 10)·u·M       B_ref: terms the scalar path
 *                                               adds in float (n/32 legacy,
 *                                               n/256 k-quants, 1 for bf16,
 *                                               summed in double; f32 and f16
 *                                               add n/64 per lane in ggml's
 *                                               order, folded in 6 steps, then
 *                                               the tail)
 *   |simd − scalar| ≤ 2·(n/32 + 20)·u·M       every SIMD lane adds at most
 *                                               n/32 terms, plus an 8-lane
 *                                               reduction and a tail
 * A kernel that gets one element of one block wrong is off by about M/n,
 * (50 to 500 times these bounds at n = 2048), so the tests can fail.
 */
#include <math.h>
#include "pool.h"
#include <stddef.h>
#include <stdint.h>

#include <ggufkit/quants.h>
#include "kernels.h"
#include "kernels_impl.h"
#include "testutil.h"
#include <ggufkit/gguf.h>

#define U 0x1p-24

static const uint32_t wtypes[] = {
    GGUF_DT_F32,  GGUF_DT_F16,  GGUF_DT_BF16, GGUF_DT_Q4_0, GGUF_DT_Q4_1, GGUF_DT_Q5_0, GGUF_DT_Q5_1,
    GGUF_DT_Q8_0, GGUF_DT_Q2_K, GGUF_DT_Q3_K, GGUF_DT_Q4_K, GGUF_DT_Q5_K, GGUF_DT_Q6_K,
    GGUF_DT_IQ3_S, GGUF_DT_IQ2_S, GGUF_DT_IQ4_NL, GGUF_DT_IQ4_XS, GGUF_DT_MXFP4,
};
#define N_WTYPES (sizeof wtypes / sizeof *wtypes)

/* ---------------------------------------------------------------------------
 * Data
 */

static uint64_t rng_state;

static double uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * 0x1p-53;
}

/* Roughly normal values whose scale and offset change every 32 elements
 * (so block scales and mins differ), with one all-zero 256 block and an
 * outlier. */
static void fill(float *x, int64_t n, uint64_t seed)
{
    rng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (int64_t i = 0; i < n; i++) {
        const int64_t blk = i / 32;
        const double scale = ldexp(1.0, (int)(blk % 7) - 3);
        const double offset = blk % 3 == 1 ? 0.7 * scale : 0.0;
        const double g = uniform() + uniform() + uniform() - 1.5;
        x[i] = (float)(scale * 2.0 * g + offset);
    }
    if (n >= 1024)
        for (int64_t i = 512; i < 768; i++)
            x[i] = 0.0f;
    x[n / 3] = 9.5f;
}

/* Bytes of one weight row of n elements. */
static size_t wrow_bytes(uint32_t t, int64_t n)
{
    uint64_t b = 0;
    ck_assert_int_eq(gguf_row_size(t, n, &b, NULL), 0);
    return (size_t)b;
}

/* One product's data for the tests: W (rows × cols of t) and nb activation
 * rows as floats (wf, xf, filled from seeds for the test to adjust), their
 * quantized forms (w, xq: product_quantize), room for W packed and for two
 * results (y1, y2: nb × rows). */
typedef struct {
    uint32_t t;
    int      rows, cols, nb;
    size_t   rb, xb;
    float   *wf, *xf, *y1, *y2;
    uint8_t *w, *packed, *xq;
} product;

static void product_init(product *p, uint32_t t, int rows, int cols, int nb, uint64_t wseed,
                         uint64_t xseed)
{
    p->t = t, p->rows = rows, p->cols = cols, p->nb = nb;
    p->rb = wrow_bytes(t, cols);
    p->xb = kern_act_row_size(t, cols);
    p->wf = malloc(sizeof(float) * (size_t)rows * (size_t)cols);
    p->xf = malloc(sizeof(float) * (size_t)nb * (size_t)cols);
    p->y1 = malloc(sizeof(float) * (size_t)nb * (size_t)rows);
    p->y2 = malloc(sizeof(float) * (size_t)nb * (size_t)rows);
    p->w = malloc(p->rb * (size_t)rows);
    p->packed = malloc(p->rb * (size_t)rows);
    p->xq = malloc(p->xb * (size_t)nb);
    fill(p->wf, (int64_t)rows * cols, wseed);
    fill(p->xf, (int64_t)nb * cols, xseed);
}

static void product_quantize(product *p)
{
    ck_assert_uint_eq(gguf_quantize_rows(p->t, p->wf, p->w, p->rows, p->cols, NULL, NULL),
                      p->rb * (size_t)p->rows);
    for (int b = 0; b < p->nb; b++)
        kern_quantize_act(p->t, p->xf + (size_t)b * (size_t)p->cols, p->xq + (size_t)b * p->xb, p->cols);
}

static void product_free(product *p)
{
    free(p->wf);
    free(p->xf);
    free(p->y1);
    free(p->y2);
    free(p->w);
    free(p->packed);
    free(p->xq);
}

static bool has_min(uint32_t t)
{
    return t == GGUF_DT_Q4_1 || t == GGUF_DT_Q5_1 || t == GGUF_DT_Q2_K || t == GGUF_DT_Q4_K ||
           t == GGUF_DT_Q5_K;
}

/* Per-element block minimum of a weight row, taken from libgguf's
 * dequantizer: with every level byte zeroed, a block with a min decodes to
 * exactly its min (d·0 + m, or d·sc·0 − dmin·mn). Zero for other types. */
static void row_mins(uint32_t t, const void *w, int64_t n, float *mins)
{
    if (!has_min(t)) {
        for (int64_t i = 0; i < n; i++)
            mins[i] = 0.0f;
        return;
    }
    const size_t bytes = wrow_bytes(t, n);
    uint8_t *z = malloc(bytes);
    memcpy(z, w, bytes);
    const gguf_dtype_traits *tr = gguf_dtype_get(t);
    for (int64_t b = 0; b < n / tr->blck_size; b++) {
        uint8_t *blk = z + (size_t)b * tr->type_size;
        switch (t) {
        case GGUF_DT_Q4_1: memset(((gguf_block_q4_1 *)blk)->qs, 0, 16); break;
        case GGUF_DT_Q5_1:
            memset(((gguf_block_q5_1 *)blk)->qs, 0, 16);
            memset(((gguf_block_q5_1 *)blk)->qh, 0, 4);
            break;
        case GGUF_DT_Q2_K: memset(((gguf_block_q2_K *)blk)->qs, 0, GGUF_QK_K / 4); break;
        case GGUF_DT_Q4_K: memset(((gguf_block_q4_K *)blk)->qs, 0, GGUF_QK_K / 2); break;
        case GGUF_DT_Q5_K:
            memset(((gguf_block_q5_K *)blk)->qs, 0, GGUF_QK_K / 2);
            memset(((gguf_block_q5_K *)blk)->qh, 0, GGUF_QK_K / 8);
            break;
        }
    }
    ck_assert_int_eq(gguf_dequantize_row(t, z, mins, n, NULL), 0);
    free(z);
}

/* The activation row as the exact values it stands for (d·q in double). */
static void act_values(uint32_t dot_type, const void *xq, int64_t n, double *v)
{
    const uint8_t *p = xq;
    for (int64_t i = 0; i < n; i++) {
        switch (dot_type) {
        case GGUF_DT_F32: v[i] = ((const float *)xq)[i]; break;
        case GGUF_DT_F16: v[i] = gguf_f16_to_f32(((const gguf_half *)xq)[i]); break;
        case GGUF_DT_BF16: v[i] = gguf_bf16_to_f32(((const uint16_t *)xq)[i]); break;
        case GGUF_DT_Q8_0: {
            const gguf_block_q8_0 *b = (const gguf_block_q8_0 *)p + i / 32;
            v[i] = (double)gguf_f16_to_f32(b->d) * b->qs[i % 32];
            break;
        }
        case GGUF_DT_Q8_1: {
            const gguf_block_q8_1 *b = (const gguf_block_q8_1 *)p + i / 32;
            v[i] = (double)gguf_f16_to_f32(b->d) * b->qs[i % 32];
            break;
        }
        case GGUF_DT_Q8_K: {
            const gguf_block_q8_K *b = (const gguf_block_q8_K *)p + i / GGUF_QK_K;
            v[i] = (double)b->d * b->qs[i % GGUF_QK_K];
            break;
        }
        default: ck_abort_msg("dot type %u", dot_type);
        }
    }
}

/* One weight row and one activation row of a type, with the exact product
 * of what they stand for and the magnitude M of the header. */
typedef struct {
    uint32_t t;
    int64_t  n;
    uint8_t *w, *xq;
    double   exact, mag;
} case_row;

static void case_make(case_row *c, uint32_t t, int64_t n, uint64_t seed)
{
    float *wf = malloc((size_t)n * sizeof *wf), *xf = malloc((size_t)n * sizeof *xf);
    float *wd = malloc((size_t)n * sizeof *wd), *mins = malloc((size_t)n * sizeof *mins);
    double *xv = malloc((size_t)n * sizeof *xv);
    c->t = t;
    c->n = n;
    c->w = malloc(wrow_bytes(t, n));
    c->xq = malloc(kern_act_row_size(t, n));
    fill(wf, n, seed);
    fill(xf, n, seed + 1000);
    ck_assert_uint_eq(gguf_quantize_rows(t, wf, c->w, 1, n, NULL, NULL), wrow_bytes(t, n));
    ck_assert_int_eq(gguf_dequantize_row(t, c->w, wd, n, NULL), 0);
    row_mins(t, c->w, n, mins);
    kern_quantize_act(t, xf, c->xq, n);
    act_values((uint32_t)kern_dot_type(t), c->xq, n, xv);

    c->exact = c->mag = 0.0;
    for (int64_t i = 0; i < n; i++) {
        c->exact += (double)wd[i] * xv[i];
        c->mag += (fabs(wd[i]) + fabs(mins[i])) * fabs(xv[i]);
    }
    /* q8_1: ggml's formula takes a block's Σ m·x̂ as m·s with s the f16 of
     * d·Σq, not m·f16(d)·Σq; that difference is part of the definition. */
    if (kern_dot_type(t) == GGUF_DT_Q8_1)
        for (int64_t b = 0; b < n / 32; b++) {
            const gguf_block_q8_1 *xb = (const gguf_block_q8_1 *)c->xq + b;
            double qsum = 0;
            for (int j = 0; j < 32; j++)
                qsum += xb->qs[j];
            c->exact += (double)mins[b * 32] *
                        ((double)gguf_f16_to_f32(xb->s) - (double)gguf_f16_to_f32(xb->d) * qsum);
        }
    free(wf);
    free(xf);
    free(wd);
    free(mins);
    free(xv);
}

static void case_free(case_row *c)
{
    free(c->w);
    free(c->xq);
}

/* Float terms the scalar path adds in float (B_ref of the header). */
static double ref_terms(uint32_t t, int64_t n)
{
    const gguf_dtype_traits *tr = gguf_dtype_get(t);
    if (t == GGUF_DT_BF16)
        return 1; /* summed in double */
    if (tr->blck_size == 1) /* f32, f16: a lane's n/64 products, the fold, the tail */
        return (double)(n / 64) + 6 + (double)(n % 64);
    return (double)(n / tr->blck_size);
}

static bool simd_available(void)
{
#ifdef KERN_X86
    return kern_cpu_has_avx2();
#else
    return false;
#endif
}

#ifdef KERN_X86
/* Bit for bit (== would take -0 for +0), for the VNNI kernels against the
 * AVX2 ones. */
static bool same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}
#endif

/* ---------------------------------------------------------------------------
 * 1, 2: the dot products
 */

START_TEST(test_scalar_matches_dequantized)
{
    const uint32_t t = wtypes[_i];
    case_row c;
    case_make(&c, t, 2048, 11 + _i);
    kern_force_scalar(true);
    const double got = kern_vec_dot(t, c.n, c.w, c.xq);
    kern_force_scalar(false);
    const double tol = (ref_terms(t, c.n) + 10) * U * c.mag;
    ck_assert_msg(c.mag > 1.0, "%s: magnitude %g", gguf_dtype_name(t), c.mag);
    ck_assert_msg(fabs(got - c.exact) <= tol, "%s: scalar %.9g, exact %.9g, |diff| %g > %g",
                  gguf_dtype_name(t), got, c.exact, fabs(got - c.exact), tol);
    case_free(&c);
}
END_TEST

START_TEST(test_simd_matches_scalar)
{
    const uint32_t t = wtypes[_i];
    /* 2048, and for the float types a length with a tail past the lanes */
    const int64_t ns[] = { 2048, gguf_dtype_get(t)->blck_size == 1 ? 45 : 256 };
    if (!simd_available())
        fprintf(stderr, "test_kernels: no AVX2+FMA+F16C here, SIMD path not tested\n");
    for (size_t k = 0; k < 2; k++) {
        case_row c;
        case_make(&c, t, ns[k], 40 + _i);
        kern_force_scalar(true);
        const double ref = kern_vec_dot(t, c.n, c.w, c.xq);
        kern_force_scalar(false);
        const double simd = kern_vec_dot(t, c.n, c.w, c.xq);
        const double tol = 2 * ((double)c.n / 32 + 20) * U * c.mag;
        ck_assert_msg(fabs(simd - ref) <= tol, "%s n=%lld: simd %.9g scalar %.9g |diff| %g > %g",
                      gguf_dtype_name(t), (long long)c.n, simd, ref, fabs(simd - ref), tol);
        case_free(&c);
    }
}
END_TEST

/* ggml's orders for f32 and f16 on an AVX-512 machine, lane by lane in
 * the plainest form: one row (four 16-lane sums over 64s, folded, the
 * tail after) and a batch (one 16-lane sum); the kernels of every
 * instruction set give exactly these bits. */
static float lanes16(const float *e)
{
    float t[8], q[4];
    for (int i = 0; i < 8; i++)
        t[i] = e[i] + e[i + 8];
    for (int i = 0; i < 4; i++)
        q[i] = t[i] + t[i + 4];
    return (q[0] + q[2]) + (q[1] + q[3]);
}

static float value_at(uint32_t t, const void *p, int64_t i)
{
    return t == GGUF_DT_F16 ? gguf_f16_to_f32(((const gguf_half *)p)[i]) : ((const float *)p)[i];
}

START_TEST(test_float_orders)
{
    const uint32_t types[] = { GGUF_DT_F32, GGUF_DT_F16 };
    const int64_t ns[] = { 16, 64, 192, 512, 45, 100, 2048 + 33 };
    for (size_t a = 0; a < 2; a++) {
        const uint32_t t = types[a];
        for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
            const int64_t n = ns[k];
            case_row c;
            case_make(&c, t, n, 70 + (int)k);
            float acc[4][16] = { { 0 } }, one[16] = { 0 };
            int64_t i = 0;
            for (; i + 64 <= n; i += 64)
                for (int j = 0; j < 64; j++)
                    acc[j / 16][j % 16] = fmaf(value_at(t, c.w, i + j), value_at(t, c.xq, i + j),
                                               acc[j / 16][j % 16]);
            float e[16];
            for (int l = 0; l < 16; l++)
                e[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l]);
            float vec = lanes16(e);
            double d = vec;
            for (; i < n; i++) { /* f32: fused into the float; f16: exact products in double */
                vec = fmaf(value_at(t, c.w, i), value_at(t, c.xq, i), vec);
                d += (double)(value_at(t, c.w, i) * value_at(t, c.xq, i));
            }
            if (t == GGUF_DT_F16)
                vec = (float)d;
            for (i = 0; i + 16 <= n; i += 16)
                for (int l = 0; l < 16; l++)
                    one[l] = fmaf(value_at(t, c.w, i + l), value_at(t, c.xq, i + l), one[l]);
            const float batch = lanes16(one);
            for (int isa = KERN_ISA_SCALAR; isa <= KERN_ISA_BEST; isa++) {
                kern_force_isa((enum kern_isa)isa);
                ck_assert_msg(kern_vec_dot(t, n, c.w, c.xq) == vec, "%s n=%lld isa %d: one row",
                              gguf_dtype_name(t), (long long)n, isa);
                if (n % 16 == 0)
                    ck_assert_msg(kern_batch_dot(t, n, c.w, c.xq) == batch,
                                  "%s n=%lld isa %d: batch", gguf_dtype_name(t), (long long)n, isa);
            }
            kern_force_isa(KERN_ISA_BEST);
            case_free(&c);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------------------
 * 3: q8_1 activations
 */

/* ggml's x86 (AVX2) activation quantizer quantize_row_q8_1 for one block,
 * written out again here: the multiplier is 127/amax (not 1/d) and levels
 * round to nearest, ties to even (not roundf's away from zero). That, not
 * the reference quantizer, is what llama.cpp feeds its dot products on this
 * machine: with it the logits of Q8_0/Q5_x/Q4_1 files equal llama.cpp's
 * bit for bit. */
static void q8_1_expected(const float *x, gguf_half *d16, gguf_half *s16, int8_t q[32])
{
    float amax = 0.0f;
    for (int j = 0; j < 32; j++)
        amax = fabsf(x[j]) > amax ? fabsf(x[j]) : amax;
    const float d = amax / 127;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    int sum = 0;
    for (int j = 0; j < 32; j++) {
        q[j] = (int8_t)nearbyintf(x[j] * id);
        sum += q[j];
    }
    *d16 = gguf_f32_to_f16(d);
    *s16 = gguf_f32_to_f16((float)sum * d);
}

START_TEST(test_q8_1_bytes)
{
    enum { N = 1024 };
    float x[N];
    uint8_t got[N / 32 * 36];
    fill(x, N, 7);
    ck_assert_uint_eq(kern_act_row_size(GGUF_DT_Q4_1, N), sizeof got);
    kern_quantize_act(GGUF_DT_Q5_1, x, got, N);
    for (int b = 0; b < N / 32; b++) {
        const uint8_t *blk = got + 36 * b; /* d: bytes 0-1, s: 2-3, qs: 4-35 */
        gguf_half d, s;
        int8_t q[32];
        q8_1_expected(x + 32 * b, &d, &s, q);
        if (b >= 16 && b < 24) { /* fill's zero block: d = s = 0, q = 0 */
            ck_assert_uint_eq(blk[0] | blk[1] | blk[2] | blk[3], 0);
            for (int j = 0; j < 32; j++)
                ck_assert_int_eq(blk[4 + j], 0);
            continue;
        }
        ck_assert_uint_eq(blk[0] | blk[1] << 8, d);
        ck_assert_uint_eq(blk[2] | blk[3] << 8, s);
        ck_assert_mem_eq(blk + 4, q, 32);
        /* the definition: q is x·127/amax rounded, so within half a step of
         * x / d; d's rounding to f16 (relative ≤ 2^-11) moves x / d by at
         * most 127·2^-11 < 0.07 steps. The largest |q| is 127. */
        const double df = gguf_f16_to_f32(d);
        int qmax = 0;
        for (int j = 0; j < 32; j++) {
            ck_assert(fabs(x[32 * b + j] / df - q[j]) <= 0.57);
            qmax = abs(q[j]) > qmax ? abs(q[j]) : qmax;
        }
        ck_assert_int_eq(qmax, 127);
    }

    /* Worked by hand: amax 127 gives d = 1, id = 1; ties go to even
     * (0.5 → 0, -2.5 → -2, 1.5 → 2, -63.5 → -64), where roundf would give
     * 1, -3, 2, -64. Σq = 127 + 0 - 2 + 2 - 64 = 63, s = 63. */
    float h[32] = { 127.0f, 0.5f, -2.5f, 1.5f, -63.5f };
    uint8_t hb[36];
    kern_quantize_act(GGUF_DT_Q4_1, h, hb, 32);
    ck_assert_uint_eq(hb[0] | hb[1] << 8, 0x3c00); /* 1.0 */
    ck_assert_uint_eq(hb[2] | hb[3] << 8, gguf_f32_to_f16(63.0f));
    const int8_t hq[5] = { 127, 0, -2, 2, -64 };
    ck_assert_mem_eq(hb + 4, hq, 5);
    for (int j = 5; j < 32; j++)
        ck_assert_int_eq((int8_t)hb[4 + j], 0);
}
END_TEST

/* The other dot types are libgguf's bytes — f16/bf16 conversion and the
 * q8_K reference quantizer (ggml uses the reference for q8_K on x86) — and
 * q8_0 is q8_1's levels and d without the sum. */
START_TEST(test_act_bytes_are_libgguf)
{
    enum { N = 512 };
    float x[N];
    uint8_t got[N * 4], want[N * 4];
    fill(x, N, 3);
    for (size_t k = 0; k < N_WTYPES; k++) {
        const uint32_t t = wtypes[k], dt = (uint32_t)kern_dot_type(t);
        if (dt == GGUF_DT_Q8_1)
            continue;
        if (dt == GGUF_DT_Q8_0) {
            for (int b = 0; b < N / 32; b++) {
                gguf_half d, sum;
                int8_t q[32];
                q8_1_expected(x + 32 * b, &d, &sum, q);
                uint8_t blk[34 + KERN_ACT_EXTRA];
                ck_assert_uint_le(kern_act_row_size(t, 32), sizeof blk);
                kern_quantize_act(t, x + 32 * b, blk, 32);
                ck_assert_uint_eq(blk[0] | blk[1] << 8, d);
                ck_assert_mem_eq(blk + 2, q, 32);
                if (t == GGUF_DT_Q4_0 || t == GGUF_DT_Q8_0 || t == GGUF_DT_MXFP4) {
                    /* then the scale, -bias × the block's sum and × four-level sums */
                    const int bias = t == GGUF_DT_Q4_0 ? 8 : t == GGUF_DT_MXFP4 ? 12 : 128;
                    ck_assert_uint_eq(kern_act_row_size(t, 32), 34 + KERN_ACT_EXTRA);
                    float df;
                    int32_t total, sum4 = 0;
                    memcpy(&df, blk + 34, 4);
                    ck_assert(df == gguf_f16_to_f32(d));
                    memcpy(&total, blk + 38, 4);
                    for (int l = 0; l < 8; l++) {
                        int32_t sl;
                        const int s4 = q[4 * l] + q[4 * l + 1] + q[4 * l + 2] + q[4 * l + 3];
                        memcpy(&sl, blk + 42 + 4 * l, 4);
                        ck_assert_int_eq(sl, -bias * s4);
                        sum4 += s4;
                    }
                    ck_assert_int_eq(total, -bias * sum4);
                } else {
                    ck_assert_uint_eq(kern_act_row_size(t, 32), 34);
                }
            }
            continue;
        }
        const size_t bytes = wrow_bytes(dt, N);
        kern_quantize_act(t, x, got, N);
        ck_assert_uint_eq(gguf_quantize_rows(dt, x, want, 1, N, NULL, NULL), bytes);
        ck_assert_mem_eq(got, want, bytes);
        if (t == GGUF_DT_IQ4_XS) {
            /* iq4_xs's rows go on with the levels in nibble order: per two
             * blocks, levels 0..15 of each, then 16..31 of each */
            ck_assert_uint_eq(kern_act_row_size(t, N), bytes + N / 256 * KERN_ACT_EXTRA_IQ4);
            for (int i = 0; i < N; i++) {
                const int8_t *q = ((const gguf_block_q8_K *)got)[i / 256].qs;
                const int l = i % 256, p64 = l / 64, half = l % 64 / 32, blk = l % 32 / 16;
                const uint8_t *e = got + bytes + (size_t)(i / 256) * KERN_ACT_EXTRA_IQ4;
                ck_assert_int_eq((int8_t)e[l], q[64 * p64 + 32 * blk + 16 * half + l % 16]);
            }
            continue;
        }
        if (t == GGUF_DT_Q4_K) {
            /* q4_K's rows go on with the levels in packed nibble order */
            ck_assert_uint_eq(kern_act_row_size(t, N), bytes + N / 256 * KERN_ACT_EXTRA_Q4K);
            for (int i = 0; i < N; i++) {
                const int8_t *q = ((const gguf_block_q8_K *)got)[i / 256].qs;
                const int l = i % 256, g = l / 64, L = l % 64 / 8, j = l % 8;
                const int lev = 64 * g + 4 * L + (j & 1) + 2 * (j >= 4) + 32 * ((j & 2) != 0);
                const uint8_t *e = got + bytes + (size_t)(i / 256) * KERN_ACT_EXTRA_Q4K;
                ck_assert_int_eq((int8_t)e[l], q[lev]);
            }
            continue;
        }
        if (t != GGUF_DT_Q6_K) {
            ck_assert_uint_eq(kern_act_row_size(t, N), bytes);
            continue;
        }
        /* q6_K's rows go on, per super-block, with the levels plus 128 in
         * the packed levels' order: byte 32L + 16h + 4j + s holds level
         * 128h + 32g + 4L + t, g = 2·(j / 2) + s / 2, t = 2·(j % 2) + s % 2 */
        ck_assert_uint_eq(kern_act_row_size(t, N), bytes + N / 256 * KERN_ACT_EXTRA_K);
        for (int i = 0; i < N; i++) {
            const int8_t *q = ((const gguf_block_q8_K *)got)[i / 256].qs;
            const int l = i % 256, L = l / 32, h = l / 16 % 2, j = l / 4 % 4, s = l % 4;
            const int lev = 128 * h + 32 * (2 * (j / 2) + s / 2) + 4 * L + 2 * (j % 2) + s % 2;
            const uint8_t *e = got + bytes + (size_t)(i / 256) * KERN_ACT_EXTRA_K;
            ck_assert_int_eq(e[l], q[lev] + 128);
        }
    }
}
END_TEST

/* The vector activation quantizers (q8_0 with and without extras, q8_K)
 * against the scalar code, byte for byte, on blocks made to hit their
 * edges: all zeros, levels exactly halfway (ties to even), the largest
 * magnitude at two places with both signs (the first one sets q8_K's
 * sign), a single spike, infinities and NaNs (the scalar path's bytes),
 * subnormals, and ordinary noise. */
START_TEST(test_act_simd_equals_scalar)
{
    enum { N = 2048 }; /* 8 q8_K blocks, 64 q8_0 blocks */
    static float x[N];
    static uint8_t want[N * 4], got[N * 4];
    fill(x, N, 29);
    for (int i = 0; i < 256; i++)
        x[i] = 0.0f;                                      /* q8_K block 0 */
    for (int i = 256; i < 512; i++)                       /* halves: 127 * k / 254 */
        x[i] = (float)((i % 64) - 32) * (127.0f / 254.0f);
    x[256] = 127.0f;
    x[600] = -3.5f, x[700] = 3.5f;                         /* block 2: first is - */
    x[800] = 5.0f, x[900] = -5.0f;                         /* block 3: first is + */
    x[1100] = INFINITY;                                    /* block 4 */
    x[1300] = NAN, x[1301] = -INFINITY;                    /* block 5 */
    for (int i = 1536; i < 1792; i++)                      /* block 6: subnormal */
        x[i] = (float)(i % 7 - 3) * 1e-39f;
    x[1900] = 1000.0f;                                     /* block 7: a spike */
    const uint32_t types[] = { GGUF_DT_Q8_0, GGUF_DT_Q4_0, GGUF_DT_Q5_0, GGUF_DT_Q4_K, GGUF_DT_Q6_K };
    for (size_t k = 0; k < sizeof types / sizeof *types; k++) {
        const size_t bytes = kern_act_row_size(types[k], N);
        ck_assert_uint_le(bytes, sizeof want);
        memset(want, 0xAA, bytes);
        memset(got, 0x55, bytes);
        kern_force_scalar(true);
        kern_quantize_act(types[k], x, want, N);
        kern_force_scalar(false);
        kern_quantize_act(types[k], x, got, N);
        for (size_t i = 0; i < bytes; i++)
            ck_assert_msg(want[i] == got[i], "%s activation byte %zu: scalar %u, vector %u",
                          gguf_dtype_name(types[k]), i, want[i], got[i]);
    }
}
END_TEST

/* ---------------------------------------------------------------------------
 * 4: matmul
 */

START_TEST(test_matmul_equals_vec_dot)
{
    const uint32_t t = wtypes[_i % N_WTYPES];
    const enum kern_isa isa = (enum kern_isa)(_i / (int)N_WTYPES); /* scalar, AVX2, VNNI */
    /* 303 rows: more than one of kern_matmul's L2 blocks of activation
     * rows (KERN_XBLOCK_BYTES) for every type, the last one not
     * a whole group of KERN_NX */
    enum { MAX_ROWS = 40, COLS = 512, MAX_NB = 303 };
    const int64_t nbs[] = { 1, 3, 17, MAX_NB }, rowss[] = { 37, MAX_ROWS };
    const size_t rb = wrow_bytes(t, COLS), xb = kern_act_row_size(t, COLS);
    float *wf = malloc(sizeof(float) * MAX_ROWS * COLS), *xf = malloc(sizeof(float) * MAX_NB * COLS);
    uint8_t *w = malloc(rb * MAX_ROWS), *xq = malloc(xb * MAX_NB);
    ck_assert_uint_gt(xb * MAX_NB, KERN_XBLOCK_BYTES);
    float *y = malloc(sizeof(float) * MAX_NB * MAX_ROWS);
    fill(wf, MAX_ROWS * COLS, 5);
    fill(xf, MAX_NB * COLS, 6);
    ck_assert_uint_eq(gguf_quantize_rows(t, wf, w, MAX_ROWS, COLS, NULL, NULL), rb * MAX_ROWS);
    for (int b = 0; b < MAX_NB; b++)
        kern_quantize_act(t, xf + b * COLS, xq + b * xb, COLS);
    kern_force_isa(isa);
    if (kern_isa_in_use() != isa)
        fprintf(stderr, "test_kernels: instruction set %d not on this CPU, matmul tested on %d\n",
                (int)isa, (int)kern_isa_in_use());
    for (size_t k = 0; k < 7; k++) { /* MAX_NB with 37 rows only */
        const int64_t nb = nbs[k % 4], rows = rowss[k / 4];
        const bool batch = kern_batch_order(t, rows, COLS, nb);
        ck_assert(batch == ((t == GGUF_DT_F32 || t == GGUF_DT_F16) && nb > 1 && rows == 40));
        for (int i = 0; i < MAX_NB * MAX_ROWS; i++)
            y[i] = NAN;
        kern_matmul(t, w, rb, rows, COLS, xq, nb, y);
        /* (the first difference found before one assertion: Check records
         * every assertion it runs) */
        for (int64_t b = 0; b < nb; b++)
            for (int r = 0; r < rows; r++) {
                const float want = batch ? kern_batch_dot(t, COLS, w + r * rb, xq + b * xb)
                                         : kern_vec_dot(t, COLS, w + r * rb, xq + b * xb);
                if (y[b * rows + r] != want)
                    ck_abort_msg("%s isa %d nb=%lld y[%lld,%d] = %g, dot %g", gguf_dtype_name(t),
                                 (int)isa, (long long)nb, (long long)b, r, y[b * rows + r], want);
            }
        int past = -1;
        for (int i = (int)(nb * rows); i < MAX_NB * MAX_ROWS && past < 0; i++)
            past = isnan(y[i]) ? -1 : i;
        ck_assert_int_eq(past, -1); /* nothing past nb rows written */
        /* the experts' products (mul_mat_id): the one-row order whatever nb */
        if (nb == MAX_NB)
            continue;
        kern_matmul_rows(t, w, rb, rows, COLS, xq, nb, y);
        for (int64_t b = 0; b < nb; b++)
            for (int r = 0; r < rows; r++)
                if (y[b * rows + r] != kern_vec_dot(t, COLS, w + r * rb, xq + b * xb))
                    ck_abort_msg("%s isa %d nb=%lld rows: y[%lld,%d] differs", gguf_dtype_name(t),
                                 (int)isa, (long long)nb, (long long)b, r);
    }
    kern_force_isa(KERN_ISA_BEST);
    free(wf);
    free(xf);
    free(w);
    free(xq);
    free(y);
}
END_TEST

/* Level e of an iq4_xs activation row (q8_K, n elements, at x) set to a,
 * in its q8_K block and in the row's extras (nibble order, kernels_impl.h),
 * where iq4_xs's kernels read it. */
static void iq4_xs_act_set(uint8_t *x, int64_t n, int64_t e, int8_t a)
{
    ((gguf_block_q8_K *)x)[e / 256].qs[e % 256] = a;
    const int64_t m = e % 256, p64 = m / 64, blk = m % 64 / 32, half = m % 32 / 16;
    uint8_t *ex = x + (size_t)(n / 256) * sizeof(gguf_block_q8_K) + (size_t)(e / 256) * KERN_ACT_EXTRA_IQ4;
    ex[64 * p64 + 32 * half + 16 * blk + m % 16] = (uint8_t)a;
}

/* q4_0, q8_0, q4_K, q6_K, mxfp4 and iq4_xs packed eight rows at a time
 * give kern_matmul's y bit for bit, for every activation row count 1..8
 * (passes of 4, 3, 2, 1) and for 303; mxfp4's also the scalar reference's. */
static void packed_equals_matmul(void)
{
    /* NB and then BIG activation rows: BIG takes several of a packed
     * product's L2 blocks of rows (KERN_XBLOCK_BYTES),
     * the last one not a whole group of KERN_NX */
    enum { ROWS = 40, COLS = 512, NB = 8, BIG = 303 };
    const uint32_t types[] = { GGUF_DT_Q4_0, GGUF_DT_Q8_0, GGUF_DT_Q4_K, GGUF_DT_Q6_K,
                               GGUF_DT_MXFP4, GGUF_DT_IQ4_XS };
    if (!kern_pack_usable(GGUF_DT_Q4_0, ROWS, COLS)) {
        ck_assert(!kern_pack_usable(GGUF_DT_Q8_0, ROWS, COLS));
        fprintf(stderr, "test_kernels: no AVX2 here, packed matrices not tested\n");
        return;
    }
    ck_assert(!kern_pack_usable(GGUF_DT_Q4_0, 36, COLS)); /* not 8k rows */
    ck_assert(!kern_pack_usable(GGUF_DT_Q8_0, ROWS, 48)); /* not whole blocks */
    ck_assert(!kern_pack_usable(GGUF_DT_Q4_1, ROWS, COLS));
    ck_assert(!kern_pack_usable(GGUF_DT_Q4_K, ROWS, 288)); /* not whole super-blocks */
    ck_assert(!kern_pack_usable(GGUF_DT_Q6_K, ROWS, 96));
    ck_assert(!kern_pack_usable(GGUF_DT_Q5_K, ROWS, COLS));
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
        const uint32_t t = types[ti];
        if (!kern_pack_usable(t, ROWS, COLS)) {
            fprintf(stderr, "test_kernels: no packed %s kernel on this CPU\n", gguf_dtype_name(t));
            continue;
        }
        product p;
        product_init(&p, t, ROWS, COLS, BIG, 17, 18);
        const size_t rb = p.rb;
        uint8_t *w = p.w, *packed = p.packed, *xq = p.xq;
        float *y1 = p.y1, *y2 = p.y2;
        /* extreme levels: a q8_0 row of ±127 against activations of ±127 */
        for (int j = 0; j < COLS; j++) {
            p.wf[3 * COLS + j] = (j & 1) ? -1.0f : 1.0f;
            p.xf[2 * COLS + j] = (j & 2) ? -1.0f : 1.0f;
        }
        product_quantize(&p);
        const bool kq = t == GGUF_DT_Q4_K || t == GGUF_DT_Q6_K || t == GGUF_DT_IQ4_XS;
        if (kq) {
            /* rows 4-7: every byte 0xff, 0x00, 0x80 or pseudo-random (levels
             * 15 / 63 and 0, scales 63 and q6_K's -128, iq4_xs's ls − 32 of
             * 31 and -32 and levels 113, -127, 1), d = 1 and dmin = 0.5 so
             * that the products stay finite */
            uint32_t lcg = 12345;
            for (int r = 4; r < 8; r++)
                for (size_t i = 0; i < rb; i++) {
                    lcg = lcg * 1103515245u + 12345u;
                    w[r * rb + i] = r == 4 ? 0xff : r == 5 ? 0x00 : r == 6 ? 0x80 : (uint8_t)(lcg >> 24);
                }
            for (int r = 4; r < 8; r++)
                for (size_t i = 0; i < rb; i += rb / (COLS / 256)) {
                    const gguf_half one = 0x3c00, half = 0x3800;
                    if (t == GGUF_DT_Q4_K) {
                        memcpy(w + r * rb + i, &one, 2);
                        memcpy(w + r * rb + i + 2, &half, 2);
                    } else if (t == GGUF_DT_IQ4_XS)
                        memcpy(w + r * rb + i + offsetof(gguf_block_iq4_xs, d), &one, 2);
                    else
                        memcpy(w + r * rb + i + offsetof(gguf_block_q6_K, d), &one, 2);
                }
        }
        if (t == GGUF_DT_MXFP4)
            /* rows 4-7: the exponents 0 and 1 (subnormal scales), 2 and 200,
             * rows 4 and 5 every level 12 and -12, 6 and 7 every nibble
             * pseudo-random */
            for (int r = 4; r < 8; r++) {
                uint32_t lcg = 777u * (uint32_t)r;
                for (int b = 0; b < COLS / 32; b++) {
                    gguf_block_mxfp4 *blk = (gguf_block_mxfp4 *)(w + r * rb) + b;
                    blk->e = (uint8_t)(r == 4 ? 0 : r == 5 ? 1 : r == 6 ? 2 : 200);
                    for (int j = 0; j < 16; j++) {
                        lcg = lcg * 1103515245u + 12345u;
                        blk->qs[j] = r == 4 ? 0x77 : r == 5 ? 0xff : (uint8_t)(lcg >> 24);
                    }
                }
            }
        if (t == GGUF_DT_IQ4_XS) {
            /* activation rows 5 and 6: every level -128, and pseudo-random
             * bytes with every fifth -128 (no quantizer writes -128; the
             * sign trick wraps it alike in both kernels) */
            rng_state = 4242;
            for (int k = 5; k < 7; k++)
                for (int64_t e = 0; e < COLS; e++)
                    iq4_xs_act_set(xq + (size_t)k * p.xb, COLS, e,
                                   k == 5 || e % 5 == 0 ? -128 : (int8_t)(uniform() * 256 - 128));
        }
        kern_pack(t, w, rb, ROWS, COLS, packed);
        /* block 1 of row 9 (group 1): its scale at position 1 of the group's
         * block 1, its first four quant bytes in lane 1 of the first vector */
        const size_t gb = 8 * rb, bb = rb / (COLS / (kq ? 256 : 32)); /* a group, a block */
        const uint8_t *pb = packed + gb + 8 * bb, *b9 = w + 9 * rb + bb;
        if (t == GGUF_DT_Q6_K) {
            /* d in lane 1; scales 12..15 in lane 1 of the fourth scale
             * vector; byte 2 of lane 1 of P0 for L 1, h 1: the level u_0 of
             * element 128 + 32 + 4 (group 1, t 0: low nibble of ql[100],
             * bits 2-3 of qh[36]) topped by the high two bits of u_2,
             * element 128 + 96 + 4 (group 3, t 0: high nibble of ql[100],
             * bits 6-7 of qh[36]) */
            const gguf_block_q6_K *b = (const gguf_block_q6_K *)b9;
            ck_assert_mem_eq(pb + 2, &b->d, 2);
            ck_assert_mem_eq(pb + 16 + 96 + 4, b->scales + 12, 4);
            ck_assert_int_eq(kern_q6_K_elem(1, 1, 0, 2), 128 + 32 + 4);
            ck_assert_int_eq(kern_q6_K_elem(1, 1, 2, 2), 128 + 96 + 4);
            const int u0 = (b->ql[100] & 15) | ((b->qh[36] >> 2) & 3) << 4;
            const int u2 = (b->ql[100] >> 4) | ((b->qh[36] >> 6) & 3) << 4;
            ck_assert_uint_eq(pb[144 + 96 * 3 + 4 + 2], (unsigned)(u0 | (u2 >> 4) << 6));
        } else if (t == GGUF_DT_MXFP4) {
            /* the exponent at byte 1, qs[4..7] in lane 1 of the second vector */
            const gguf_block_mxfp4 *b = (const gguf_block_mxfp4 *)b9;
            ck_assert_uint_eq(pb[1], b->e);
            ck_assert_mem_eq(pb + 8 + 32 + 4, b->qs + 4, 4);
        } else if (t == GGUF_DT_IQ4_XS) {
            /* d, scales_h and scales_l in lane 1 of theirs; byte t of lane
             * 1 of quant vector 4L + p (L 5, p 2): level 4L + t (20 + t: a
             * high nibble of qs[16j + 4 + t]) of block j = 4 low, of block
             * 5 high */
            const gguf_block_iq4_xs *b = (const gguf_block_iq4_xs *)b9;
            ck_assert_mem_eq(pb + 2, &b->d, 2);
            ck_assert_mem_eq(pb + 16 + 2, &b->scales_h, 2);
            ck_assert_mem_eq(pb + 32 + 4, b->scales_l, 4);
            for (int u = 0; u < 4; u++)
                ck_assert_uint_eq(pb[64 + 32 * (4 * 5 + 2) + 4 + u],
                                  (unsigned)((b->qs[64 + 4 + u] >> 4) | (b->qs[80 + 4 + u] & 0xf0)));
        } else
            ck_assert_mem_eq(pb + 2, b9, 2);
        if (t == GGUF_DT_Q4_K) {
            /* dmin in lane 1 of the second scale vector, scale bytes 8..11 in
             * lane 1 of the third word vector, the nibbles of qs[32 + 4..32 +
             * 7] (L 1, q 1) in lane 1 of quant vector 4 · 1 + 1: low nibbles
             * lo_0, lo_1, hi_0, hi_1, high nibbles lo_2, lo_3, hi_2, hi_3 */
            ck_assert_mem_eq(pb + 16 + 2, b9 + 2, 2);
            ck_assert_mem_eq(pb + 32 + 64 + 4, b9 + 4 + 8, 4);
            const uint8_t *q = b9 + 16 + 32 + 4, *o = pb + 128 + 32 * 5 + 4;
            const uint8_t want[4] = { (uint8_t)((q[0] & 15) | (q[2] & 15) << 4),
                                      (uint8_t)((q[1] & 15) | (q[3] & 15) << 4),
                                      (uint8_t)((q[0] >> 4) | (q[2] >> 4) << 4),
                                      (uint8_t)((q[1] >> 4) | (q[3] >> 4) << 4) };
            ck_assert_mem_eq(o, want, 4);
        } else if (!kq && t != GGUF_DT_MXFP4)
            for (int j = 0; j < 4; j++)
                ck_assert_uint_eq(pb[16 + 4 + j], (uint8_t)(b9[2 + j] ^ (t == GGUF_DT_Q8_0 &&
                                                                        kern_isa_in_use() == KERN_ISA_VNNI
                                                                    ? 0x80 : 0)));
        ck_assert_uint_gt((uint64_t)BIG * p.xb, 2 * KERN_XBLOCK_BYTES);
        for (int64_t nb = 1; nb <= BIG; nb = nb == NB ? BIG : nb + 1) {
            kern_matmul(t, w, rb, ROWS, COLS, xq, nb, y1);
            kern_matmul_packed(t, packed, ROWS, COLS, xq, nb, y2);
            for (int i = 0; i < nb * ROWS; i++)
                ck_assert_msg(y1[i] == y2[i], "%s nb %lld y[%d]: rows %.9g packed %.9g",
                              gguf_dtype_name(t), (long long)nb, i, y1[i], y2[i]);
            if (t != GGUF_DT_MXFP4)
                continue;
            /* the experts' path (kern_matmul_rows), and the reference */
            kern_matmul_rows(t, w, rb, ROWS, COLS, xq, nb, y1);
            for (int64_t b = 0; b < nb; b++)
                for (int r = 0; r < ROWS; r++) {
                    const float want = dot_mxfp4_ref(COLS, w + r * rb, xq + b * p.xb);
                    const float got = y2[b * ROWS + r];
                    ck_assert_msg(memcmp(&want, &got, 4) == 0 && y1[b * ROWS + r] == got,
                                  "mxfp4 nb %lld row %d: ref %.9g packed %.9g", (long long)nb, r,
                                  want, got);
                }
        }
        product_free(&p);
    }
}

/* q8_0 with AVX2 adds in ggml's x86 order (ggml_vec_dot_q8_0_q8_0 and
 * llamafile's tinyBLAS_Q0_AVX, which llama.cpp runs for prompts): eight
 * float chains, chain m adding d · Σ of levels 4m..4m+3 of every block
 * (d = dw · dx), the chains in hsum8's order. Written out here in scalar
 * code, it must give the one-row, tiled, experts' and packed kernels' bits:
 * 11 blocks, rows with every level −128 (a file may hold it), a negative, a
 * zero and a subnormal scale, 1..9 activation rows. */
static float q8_0_avx2_order(int64_t n, const gguf_block_q8_0 *w, const gguf_block_q8_0 *x)
{
    float c[8] = { 0 };
    for (int64_t i = 0; i < n / 32; i++) {
        const float d = gguf_f16_to_f32(w[i].d) * gguf_f16_to_f32(x[i].d);
        for (int m = 0; m < 8; m++) {
            int32_t s = 0;
            for (int j = 4 * m; j < 4 * m + 4; j++)
                s += w[i].qs[j] * x[i].qs[j];
            c[m] = fmaf(d, (float)s, c[m]);
        }
    }
    return ((c[0] + c[4]) + (c[2] + c[6])) + ((c[1] + c[5]) + (c[3] + c[7]));
}

START_TEST(test_q8_0_avx2_order)
{
    enum { ROWS = 16, COLS = 32 * 11, NB = 9 };
    kern_force_isa(KERN_ISA_AVX2);
    if (kern_isa_in_use() != KERN_ISA_AVX2) {
        fprintf(stderr, "test_kernels: no AVX2 here, q8_0's AVX2 order not tested\n");
        kern_force_isa(KERN_ISA_BEST);
        return;
    }
    product p;
    product_init(&p, GGUF_DT_Q8_0, ROWS, COLS, NB, 41, 42);
    product_quantize(&p);
    gguf_block_q8_0 *w = (gguf_block_q8_0 *)p.w;
    const int nbk = COLS / 32;
    for (int b = 0; b < nbk; b++) {
        memset(w[1 * nbk + b].qs, 0x80, 32);                  /* every level -128 */
        w[2 * nbk + b].d = (gguf_half)(w[2 * nbk + b].d | 0x8000); /* negative */
        w[3 * nbk + b].d = b == 5 ? 0 : 0x0001;               /* zero, subnormal */
    }
    ck_assert(kern_pack_usable(GGUF_DT_Q8_0, ROWS, COLS));
    kern_pack(GGUF_DT_Q8_0, p.w, p.rb, ROWS, COLS, p.packed);
    for (int64_t nb = 1; nb <= NB; nb++) {
        kern_matmul(GGUF_DT_Q8_0, p.w, p.rb, ROWS, COLS, p.xq, nb, p.y1);
        kern_matmul_packed(GGUF_DT_Q8_0, p.packed, ROWS, COLS, p.xq, nb, p.y2);
        for (int64_t b = 0; b < nb; b++)
            for (int r = 0; r < ROWS; r++) {
                const float want = q8_0_avx2_order(COLS, w + r * nbk,
                                                   (const gguf_block_q8_0 *)(p.xq + b * p.xb));
                const size_t o = (size_t)b * ROWS + (size_t)r;
                ck_assert_msg(memcmp(&want, p.y1 + o, 4) == 0 && memcmp(&want, p.y2 + o, 4) == 0,
                              "q8_0 nb %lld row %d: order %.9g rows %.9g packed %.9g",
                              (long long)nb, r, want, p.y1[o], p.y2[o]);
            }
        kern_matmul_rows(GGUF_DT_Q8_0, p.w, p.rb, ROWS, COLS, p.xq, nb, p.y1);
        ck_assert_mem_eq(p.y1, p.y2, sizeof(float) * (size_t)(nb * ROWS));
    }
    product_free(&p);
    kern_force_isa(KERN_ISA_BEST);
}
END_TEST

/* ... on each instruction set the CPU has (the packed layouts and kernels
 * differ between AVX2 and AVX-512 VNNI). */
START_TEST(test_packed_equals_matmul)
{
    for (int isa = KERN_ISA_AVX2; isa <= KERN_ISA_BEST; isa++) {
        kern_force_isa((enum kern_isa)isa);
        if (kern_isa_in_use() == (enum kern_isa)isa)
            packed_equals_matmul();
    }
    kern_force_isa(KERN_ISA_BEST);
}
END_TEST

/* A product started from inside a unit of another loop (it runs inline on
 * that unit's thread); the other unit does nothing. */
typedef struct {
    uint32_t       t;
    int            path;
    const uint8_t *w, *packed;
    size_t         rb;
    int64_t        rows, cols;
    const uint8_t *xq;
    int            nb;
    float         *y;
} nested_product;

static void nested_unit(void *ctx, int64_t u, int thread)
{
    (void)thread;
    const nested_product *n = ctx;
    if (u != 1)
        return;
    if (n->path)
        kern_matmul_packed(n->t, n->packed, n->rows, n->cols, n->xq, n->nb, n->y);
    else
        kern_matmul(n->t, n->w, n->rb, n->rows, n->cols, n->xq, n->nb, n->y);
}

/* Threads share a product's units (contiguous ranges, the rest taken from
 * the back of the fullest): whatever the pool's size, more threads than
 * units included, and from inside a unit of another loop (inline), every
 * output is written once and the same bits come out. */
START_TEST(test_matmul_any_team)
{
    enum { ROWS = 200, COLS = 512, NB = 3 };
    const uint32_t types[] = { GGUF_DT_Q6_K, GGUF_DT_Q4_K };
    const int saved = pool_threads();
    pool_set_adaptive(false); /* every product on every thread */
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
        const uint32_t t = types[ti];
        product p;
        product_init(&p, t, ROWS, COLS, NB, 31, 32);
        product_quantize(&p);
        const size_t rb = p.rb;
        const uint8_t *w = p.w, *xq = p.xq;
        uint8_t *packed = p.packed;
        float *want = p.y1, *y = p.y2;
        const bool pack = kern_pack_usable(t, ROWS, COLS);
        if (pack)
            kern_pack(t, w, rb, ROWS, COLS, packed);
        for (int nb = 1; nb <= NB; nb += NB - 1) {
            pool_set_threads(1);
            kern_matmul(t, w, rb, ROWS, COLS, xq, nb, want);
            const int teams[] = { 2, 3, 7, 40 }; /* 40: more threads than groups */
            const size_t nteams = sizeof teams / sizeof *teams;
            /* row by row (tiles), then packed (groups of 8) where it can */
            for (int path = 0; path < (pack ? 2 : 1); path++)
                for (size_t k = 0; k <= nteams; k++) {
                    for (int i = 0; i < nb * ROWS; i++)
                        y[i] = NAN;
                    if (k < nteams) {
                        pool_set_threads(teams[k]);
                        if (path)
                            kern_matmul_packed(t, packed, ROWS, COLS, xq, nb, y);
                        else
                            kern_matmul(t, w, rb, ROWS, COLS, xq, nb, y);
                    } else { /* called from a unit of a loop of 5 threads: runs inline */
                        pool_set_threads(5);
                        nested_product np = { t, path, w, packed, rb, ROWS, COLS, xq, nb, y };
                        pool_for(2, nested_unit, &np);
                    }
                    for (int i = 0; i < nb * ROWS; i++)
                        ck_assert_msg(y[i] == want[i], "%s path %d team %zu nb %d y[%d]: %.9g want %.9g",
                                      gguf_dtype_name(t), path, k, nb, i, y[i], want[i]);
                }
        }
        product_free(&p);
    }
    pool_set_threads(saved);
    pool_set_adaptive(true);
}
END_TEST

/* The VNNI kernels against the AVX2 ones, bit for bit, one row and tiles,
 * on rows whose byte products reach the extremes (levels ±127 against
 * ±127, where maddubs' 16-bit pair sums come closest to saturating). */
START_TEST(test_vnni_equals_avx2)
{
    const uint32_t t = wtypes[_i];
    kern_force_isa(KERN_ISA_VNNI);
    if (kern_isa_in_use() != KERN_ISA_VNNI) {
        kern_force_isa(KERN_ISA_BEST);
        fprintf(stderr, "test_kernels: no AVX-512 VNNI here, VNNI kernels not tested\n");
        return;
    }
    enum { ROWS = 9, COLS = 1024, NB = 6 };
    product p;
    product_init(&p, t, ROWS, COLS, NB, 70 + (uint64_t)_i, 90 + (uint64_t)_i);
    for (int j = 0; j < COLS; j += 7) { /* extremes: ±amax in every block */
        p.wf[j] = (j & 8) ? 4.0f : -4.0f;
        p.xf[j] = (j & 16) ? 3.0f : -3.0f;
    }
    product_quantize(&p);
    const size_t rb = p.rb;
    const uint8_t *w = p.w, *xq = p.xq;
    float *y1 = p.y1, *y2 = p.y2;
    kern_matmul(t, w, rb, ROWS, COLS, xq, NB, y1);
    const float one = kern_vec_dot(t, COLS, w, xq);
    kern_force_isa(KERN_ISA_AVX2);
    kern_matmul(t, w, rb, ROWS, COLS, xq, NB, y2);
    ck_assert(kern_vec_dot(t, COLS, w, xq) == one);
    kern_force_isa(KERN_ISA_BEST);
    for (int i = 0; i < NB * ROWS; i++)
        ck_assert_msg(y1[i] == y2[i], "%s y[%d]: vnni %.9g avx2 %.9g", gguf_dtype_name(t), i,
                      y1[i], y2[i]);
    product_free(&p);
}
END_TEST

/* ---------------------------------------------------------------------------
 * 4b: the dequantize-then-multiply types (kernels_deq.c): every product is
 * the dot of libgguf's dequantized weights with the f32 activations
 * (checked in double), and kern_matmul gives each row's kern_vec_dot.
 */

START_TEST(test_dequant_types)
{
    static const uint32_t types[] = {
        GGUF_DT_IQ3_XXS, GGUF_DT_IQ2_XS, GGUF_DT_IQ2_XXS, GGUF_DT_IQ1_S, GGUF_DT_IQ1_M,
        GGUF_DT_TQ1_0,   GGUF_DT_TQ2_0,
    };
    enum { ROWS = 6, COLS = 512, NB = 3 };
    static float wf[ROWS * COLS], xf[NB * COLS], deq[COLS], ones[COLS], y[NB * ROWS];
    static uint8_t w[ROWS * COLS * 2], xq[NB * COLS * 4];
    for (int i = 0; i < COLS; i++)
        ones[i] = 1.0f;
    fill(wf, ROWS * COLS, 11);
    fill(xf, NB * COLS, 12);
    for (size_t k = 0; k < sizeof types / sizeof *types; k++) {
        const uint32_t t = types[k];
        ck_assert_msg(kern_supported(t), "%s", gguf_dtype_name(t));
        ck_assert_int_eq(kern_dot_type(t), GGUF_DT_F32);
        const size_t rb = wrow_bytes(t, COLS), xb = kern_act_row_size(t, COLS);
        ck_assert_uint_eq(xb, COLS * sizeof(float));
        ck_assert_uint_gt(gguf_quantize_rows(t, wf, w, ROWS, COLS, ones, NULL), 0);
        for (int b = 0; b < NB; b++)
            kern_quantize_act(t, xf + b * COLS, xq + b * xb, COLS);
        kern_matmul(t, w, rb, ROWS, COLS, xq, NB, y);
        for (int r = 0; r < ROWS; r++) {
            ck_assert_int_eq(gguf_dequantize_row(t, w + r * rb, deq, COLS, NULL), 0);
            for (int b = 0; b < NB; b++) {
                double want = 0, mag = 0;
                for (int i = 0; i < COLS; i++) {
                    want += (double)deq[i] * xf[b * COLS + i];
                    mag += fabs((double)deq[i] * xf[b * COLS + i]);
                }
                const float one = kern_vec_dot(t, COLS, w + r * rb, xq + b * xb);
                ck_assert_msg(fabs(one - want) <= 1e-5 * mag + 1e-6, "%s row %d: %.9g vs %.9g",
                              gguf_dtype_name(t), r, one, want);
                ck_assert_msg(y[b * ROWS + r] == one, "%s row %d batch %d: matmul %.9g dot %.9g",
                              gguf_dtype_name(t), r, b, y[b * ROWS + r], one);
            }
        }
    }
}
END_TEST

/* ---------------------------------------------------------------------------
 * 6: iq3_s and iq2_s with q8_K activations
 */

/* Element e of a row of iq3_s or iq2_s decoded from the block bytes as
 * ggml-common.h lays them out, with ggml's grid (gguf_iq_grid): the value
 * without the super-block's f16 scale, which goes to *d —
 *   iq3_s  (2·ls + 1) · ±g          ls: a nibble of scales[ib / 2]
 *   iq2_s  (2·ls + 1) / 8 · ±g      ls: a nibble of scales[ib] per 16 */
static double iq_weight(uint32_t t, const uint8_t *row, int64_t e, double *d)
{
    uint32_t np = 0, width = 0;
    const uint8_t *grid = gguf_iq_grid(t, &np, &width);
    const int64_t blk = e / 256;
    const int el = (int)(e % 256), ib = el / 32, j = el % 32;
    unsigned g, neg, ls;
    const uint8_t *b;
    if (t == GGUF_DT_IQ3_S) { /* d 0, qs 2, qh 66, signs 74, scales 106 */
        ck_assert(grid && np == 512 && width == 4);
        b = row + 110 * blk;
        const unsigned idx = b[2 + 8 * ib + j / 4] | (b[66 + ib] >> (j / 4) & 1u) << 8;
        g = grid[4 * idx + j % 4];
        neg = b[74 + 4 * ib + j / 8] >> (j % 8) & 1u;
        ls = b[106 + ib / 2] >> 4 * (ib % 2) & 15u;
    } else { /* d 0, qs 2 (indices, then signs at 34), qh 66, scales 74 */
        ck_assert(grid && np == 1024 && width == 8);
        b = row + 82 * blk;
        const unsigned idx = b[2 + 4 * ib + j / 8] | (b[66 + ib] >> (2 * (j / 8)) & 3u) << 8;
        g = grid[8 * idx + j % 8];
        neg = b[34 + 4 * ib + j / 8] >> (j % 8) & 1u;
        ls = b[74 + ib] >> 4 * (j / 16) & 15u;
    }
    *d = gguf_f16_to_f32((gguf_half)(b[0] | b[1] << 8));
    const double v = (double)(2 * ls + 1) * g * (neg ? -1.0 : 1.0);
    return t == GGUF_DT_IQ3_S ? v : v / 8;
}

/* W: rows 0-3 quantized by libgguf (no imatrix), 4-6 random bytes under a
 * finite f16 scale, row 6 every byte 0xff (largest index, every sign,
 * scale 15); activations: rows 0-5 from kern_quantize_act, 6-8 random
 * levels, row 8 all -128 — so that |a| · g reaches 128 · 62 in both signs.
 * Each (weight row, activation row): ggml's formula in double from
 * iq_weight (which must decode to libgguf's dequantized weights exactly),
 * dot_T_ref against it, dot_T_avx2 and dotn_T_avx2 (exactly dot_T_avx2 per
 * row) against dot_T_ref, dot_T_vnni and dotn_T_vnni bit for bit against
 * dot_T_avx2; then kern_matmul equals kern_vec_dot for every instruction
 * set and batch size. */
START_TEST(test_iq_lattice_kernels)
{
    const uint32_t t = _i ? GGUF_DT_IQ2_S : GGUF_DT_IQ3_S;
    enum { ROWS = 7, COLS = 1024, NB = 9 };
    kern_dot_fn ref = _i ? dot_iq2_s_ref : dot_iq3_s_ref;
    ck_assert_int_eq(kern_dot_type(t), GGUF_DT_Q8_K);
    product p;
    product_init(&p, t, ROWS, COLS, NB, 51 + (uint64_t)_i, 52 + (uint64_t)_i);
    const size_t rb = p.rb, xb = p.xb;
    ck_assert_uint_eq(xb, COLS / 256 * sizeof(gguf_block_q8_K)); /* no extras */
    ck_assert_uint_eq(gguf_quantize_rows(t, p.wf, p.w, 4, COLS, NULL, NULL), 4 * rb);
    for (int b = 0; b < 6; b++)
        kern_quantize_act(t, p.xf + (size_t)b * COLS, p.xq + (size_t)b * xb, COLS);
    rng_state = 977 + (uint64_t)_i;
    const size_t bbytes = rb / (COLS / 256);
    for (int r = 4; r < ROWS; r++)
        for (int blk = 0; blk < COLS / 256; blk++) {
            uint8_t *b = p.w + r * rb + blk * bbytes;
            for (size_t i = 2; i < bbytes; i++)
                b[i] = r == 6 ? 0xff : (uint8_t)(uniform() * 256);
            const gguf_half d = gguf_f32_to_f16((float)ldexp(1.0 + uniform(), -6 - blk));
            memcpy(b, &d, 2);
        }
    for (int bn = 6; bn < NB; bn++)
        for (int blk = 0; blk < COLS / 256; blk++) {
            gguf_block_q8_K *a = (gguf_block_q8_K *)(p.xq + bn * xb) + blk;
            a->d = (float)ldexp(1.0 + uniform(), -8 + blk);
            for (int i = 0; i < 256; i++)
                a->qs[i] = bn == 8 ? -128 : (int8_t)(uniform() * 256 - 128);
            for (int j = 0; j < 16; j++) {
                int s = 0;
                for (int i = 0; i < 16; i++)
                    s += a->qs[16 * j + i];
                a->bsums[j] = (int16_t)s;
            }
        }

    float *deq = malloc(sizeof(float) * COLS);
    for (int r = 0; r < ROWS; r++) {
        const uint8_t *w = p.w + r * rb;
        ck_assert_int_eq(gguf_dequantize_row(t, w, deq, COLS, NULL), 0);
        for (int64_t e = 0; e < COLS; e++) {
            double d;
            const double v = iq_weight(t, w, e, &d);
            ck_assert_msg((double)deq[e] == d * v, "%s row %d element %lld: libgguf %.9g, here %.9g",
                          gguf_dtype_name(t), r, (long long)e, deq[e], d * v);
        }
#ifdef KERN_X86
        float simd[NB];
#endif
        for (int b = 0; b < NB; b++) {
            const gguf_block_q8_K *x = (const gguf_block_q8_K *)(p.xq + b * xb);
            double want = 0, mag = 0;
            for (int64_t e = 0; e < COLS; e++) {
                double d;
                const double term = iq_weight(t, w, e, &d) * x[e / 256].qs[e % 256];
                want += d * x[e / 256].d * term;
                mag += fabs(d * x[e / 256].d * term);
            }
            ck_assert_msg(mag > 0, "%s row %d batch %d: all zero", gguf_dtype_name(t), r, b);
            const double got = ref(COLS, w, x);
            ck_assert_msg(fabs(got - want) <= 1e-5 * mag,
                          "%s row %d batch %d: ref %.9g, formula %.9g (magnitude %g)",
                          gguf_dtype_name(t), r, b, got, want, mag);
#ifdef KERN_X86
            if (simd_available()) {
                simd[b] = _i ? dot_iq2_s_avx2(COLS, w, x) : dot_iq3_s_avx2(COLS, w, x);
                const double tol = 2 * ((double)COLS / 32 + 20) * U * mag;
                ck_assert_msg(fabs(simd[b] - got) <= tol,
                              "%s row %d batch %d: avx2 %.9g, ref %.9g |diff| %g > %g",
                              gguf_dtype_name(t), r, b, simd[b], got, fabs(simd[b] - got), tol);
                if (kern_cpu_has_vnni()) {
                    const float v = _i ? dot_iq2_s_vnni(COLS, w, x) : dot_iq3_s_vnni(COLS, w, x);
                    ck_assert_msg(same_bits(v, simd[b]), "%s row %d batch %d: vnni %.9g, avx2 %.9g",
                                  gguf_dtype_name(t), r, b, v, simd[b]);
                }
            }
#endif
        }
#ifdef KERN_X86
        if (simd_available())
            for (int b = 0; b + KERN_NX <= NB; b++) {
                float out[KERN_NX], outv[KERN_NX];
                if (_i)
                    dotn_iq2_s_avx2(COLS, w, p.xq + b * xb, xb, out);
                else
                    dotn_iq3_s_avx2(COLS, w, p.xq + b * xb, xb, out);
                for (int k = 0; k < KERN_NX; k++)
                    ck_assert_msg(out[k] == simd[b + k], "%s row %d batch %d+%d: dotn %.9g, dot %.9g",
                                  gguf_dtype_name(t), r, b, k, out[k], simd[b + k]);
                if (!kern_cpu_has_vnni())
                    continue;
                if (_i)
                    dotn_iq2_s_vnni(COLS, w, p.xq + b * xb, xb, outv);
                else
                    dotn_iq3_s_vnni(COLS, w, p.xq + b * xb, xb, outv);
                for (int k = 0; k < KERN_NX; k++)
                    ck_assert_msg(same_bits(outv[k], simd[b + k]),
                                  "%s row %d batch %d+%d: vnni dotn %.9g, avx2 dot %.9g",
                                  gguf_dtype_name(t), r, b, k, outv[k], simd[b + k]);
            }
#endif
    }
    free(deq);

    const enum kern_isa isas[] = { KERN_ISA_SCALAR, KERN_ISA_AVX2, KERN_ISA_BEST };
    const int64_t nbs[] = { 1, 3, 4, 9 };
    for (size_t s = 0; s < 3; s++) {
        kern_force_isa(isas[s]);
        for (size_t k = 0; k < 4; k++) {
            const int64_t nb = nbs[k];
            for (int i = 0; i < NB * ROWS; i++)
                p.y1[i] = NAN;
            kern_matmul(t, p.w, rb, ROWS, COLS, p.xq, nb, p.y1);
            for (int64_t b = 0; b < nb; b++)
                for (int r = 0; r < ROWS; r++) {
                    const float want = kern_vec_dot(t, COLS, p.w + r * rb, p.xq + b * xb);
                    ck_assert_msg(p.y1[b * ROWS + r] == want,
                                  "%s isa %d nb %lld y[%lld,%d]: matmul %.9g, dot %.9g",
                                  gguf_dtype_name(t), (int)isas[s], (long long)nb, (long long)b, r,
                                  p.y1[b * ROWS + r], want);
                }
            for (int64_t i = nb * ROWS; i < NB * ROWS; i++)
                ck_assert(isnan(p.y1[i]));
        }
    }
    kern_force_isa(KERN_ISA_BEST);
    product_free(&p);
}
END_TEST

/* ---------------------------------------------------------------------------
 * 4c: iq4_nl and mxfp4 (× q8_0) and iq4_xs (× q8_K), kernels_iq.c: the
 * reference kernel against ggml's generic formula recomputed here in double
 * from the bytes, the AVX2 kernels (one row, and KERN_NX rows at once)
 * against the reference (and against llama.cpp's AVX2 order of float
 * operations exactly), the VNNI kernels against the AVX2
 * ones bit for bit, and kern_matmul against kern_vec_dot.
 */

/* ggml-common.h's kvalues_iq4nl and kvalues_mxfp4, written out again. */
static const int iq_levels_nl[16] = { -127, -104, -83, -65, -49, -35, -22, -10,
                                      1,    13,   25,  38,  53,  69,  89,  113 };
static const int iq_levels_mx[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };

/* Where a type's block keeps its nibbles. */
static size_t iq_qs_offset(uint32_t t)
{
    return t == GGUF_DT_IQ4_NL ? offsetof(gguf_block_iq4_nl, qs)
         : t == GGUF_DT_MXFP4  ? offsetof(gguf_block_mxfp4, qs)
                               : offsetof(gguf_block_iq4_xs, qs);
}

/* Σ_b s_b · Σ_e v[q_e]·a_e over the 32-element blocks b of a row, in double
 * (every product exact): s_b = d_x·d_w (iq4_nl), d_x·2^(e−128) (mxfp4,
 * ggml's E8M0 half scale), d_w·d_x·(ls_b − 32) (iq4_xs, ls_b the six-bit
 * scale of block b % 8 of its super-block); *mag = Σ |s_b·v·a|. */
static double iq_formula(uint32_t t, int64_t n, const uint8_t *w, const uint8_t *xq, double *mag)
{
    double sum = 0.0;
    *mag = 0.0;
    for (int64_t b = 0; b < n / 32; b++) {
        const uint8_t *qs;
        const int *v = t == GGUF_DT_MXFP4 ? iq_levels_mx : iq_levels_nl;
        const int8_t *a;
        double s;
        if (t == GGUF_DT_IQ4_XS) {
            const gguf_block_iq4_xs *wb = (const gguf_block_iq4_xs *)w + b / 8;
            const gguf_block_q8_K *xb = (const gguf_block_q8_K *)xq + b / 8;
            const int j = (int)(b % 8);
            const int ls = ((wb->scales_l[j / 2] >> (4 * (j % 2))) & 15) | ((wb->scales_h >> (2 * j)) & 3) << 4;
            s = (double)gguf_f16_to_f32(wb->d) * xb->d * (ls - 32);
            qs = wb->qs + 16 * j;
            a = xb->qs + 32 * j;
        } else {
            const gguf_block_q8_0 *xb = (const gguf_block_q8_0 *)xq + b;
            if (t == GGUF_DT_MXFP4) {
                const gguf_block_mxfp4 *wb = (const gguf_block_mxfp4 *)w + b;
                s = ldexp(1.0, wb->e - 128) * gguf_f16_to_f32(xb->d);
                qs = wb->qs;
            } else {
                const gguf_block_iq4_nl *wb = (const gguf_block_iq4_nl *)w + b;
                s = (double)gguf_f16_to_f32(wb->d) * gguf_f16_to_f32(xb->d);
                qs = wb->qs;
            }
            a = xb->qs;
        }
        for (int e = 0; e < 32; e++) {
            const int q = e < 16 ? qs[e] & 15 : qs[e - 16] >> 4;
            sum += s * v[q] * a[e];
            *mag += fabs(s * v[q] * a[e]);
        }
    }
    return sum;
}

#ifdef KERN_X86
/* What llama.cpp computes for iq4_nl and mxfp4 on AVX2 CPUs (it repacks
 * their matrices, and its repacked kernels in ggml-cpu/arch/x86/repack.cpp
 * add per output): acc = fma(Σ_b v[q]·a, d_w·d_x, acc) block by block. */
static float iq_fma_chain(uint32_t t, int64_t n, const uint8_t *w, const uint8_t *xq)
{
    float acc = 0.0f;
    for (int64_t b = 0; b < n / 32; b++) {
        const gguf_block_q8_0 *xb = (const gguf_block_q8_0 *)xq + b;
        const uint8_t *qs;
        float dw;
        if (t == GGUF_DT_MXFP4) {
            const gguf_block_mxfp4 *wb = (const gguf_block_mxfp4 *)w + b;
            dw = ldexpf(1.0f, wb->e - 128);
            qs = wb->qs;
        } else {
            const gguf_block_iq4_nl *wb = (const gguf_block_iq4_nl *)w + b;
            dw = gguf_f16_to_f32(wb->d);
            qs = wb->qs;
        }
        const int *v = t == GGUF_DT_MXFP4 ? iq_levels_mx : iq_levels_nl;
        int isum = 0;
        for (int e = 0; e < 32; e++)
            isum += v[e < 16 ? qs[e] & 15 : qs[e - 16] >> 4] * xb->qs[e];
        acc = fmaf((float)isum, dw * gguf_f16_to_f32(xb->d), acc);
    }
    return acc;
}

/* What llama.cpp computes for iq4_xs on AVX2 CPUs (ggml_vec_dot_iq4_xs_q8_K
 * in ggml-cpu/arch/x86/quants.c): per super-block and lane L (elements
 * 4L..4L + 3 of each block), the exact integer Σ_j (ls_j − 32) · Σ v·a, then
 * acc_L = fma(d_w·d_x, that, acc_L); the lanes added as hsum_float_8 does. */
static float iq4_xs_x86(int64_t n, const uint8_t *w, const uint8_t *xq)
{
    float acc[8] = { 0 };
    for (int64_t i = 0; i < n / 256; i++) {
        const gguf_block_iq4_xs *wb = (const gguf_block_iq4_xs *)w + i;
        const gguf_block_q8_K *xb = (const gguf_block_q8_K *)xq + i;
        for (int L = 0; L < 8; L++) {
            int32_t isum = 0;
            for (int j = 0; j < 8; j++) {
                const int ls = ((wb->scales_l[j / 2] >> (4 * (j % 2))) & 15) | ((wb->scales_h >> (2 * j)) & 3) << 4;
                int bs = 0;
                for (int e = 4 * L; e < 4 * L + 4; e++) {
                    const uint8_t q = wb->qs[16 * j + e % 16];
                    bs += iq_levels_nl[e < 16 ? q & 15 : q >> 4] * xb->qs[32 * j + e];
                }
                isum += (ls - 32) * bs;
            }
            acc[L] = fmaf(gguf_f16_to_f32(wb->d) * xb->d, (float)isum, acc[L]);
        }
    }
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}
#endif

START_TEST(test_iq_kernels)
{
    const uint32_t t = (const uint32_t[]){ GGUF_DT_IQ4_NL, GGUF_DT_IQ4_XS, GGUF_DT_MXFP4 }[_i];
    kern_dot_fn ref = t == GGUF_DT_IQ4_NL ? dot_iq4_nl_ref
                    : t == GGUF_DT_IQ4_XS ? dot_iq4_xs_ref
                                          : dot_mxfp4_ref;
#ifdef KERN_X86
    kern_dot_fn avx2 = t == GGUF_DT_IQ4_NL ? dot_iq4_nl_avx2
                     : t == GGUF_DT_IQ4_XS ? dot_iq4_xs_avx2
                                           : dot_mxfp4_avx2;
    kern_dotn_fn avx2n = t == GGUF_DT_IQ4_NL ? dotn_iq4_nl_avx2
                       : t == GGUF_DT_IQ4_XS ? dotn_iq4_xs_avx2
                                             : dotn_mxfp4_avx2;
    kern_dot_fn vnni = t == GGUF_DT_IQ4_NL ? dot_iq4_nl_vnni
                     : t == GGUF_DT_IQ4_XS ? dot_iq4_xs_vnni
                                           : dot_mxfp4_vnni;
    kern_dotn_fn vnnin = t == GGUF_DT_IQ4_NL ? dotn_iq4_nl_vnni
                       : t == GGUF_DT_IQ4_XS ? dotn_iq4_xs_vnni
                                             : dotn_mxfp4_vnni;
#endif
    const bool xs = t == GGUF_DT_IQ4_XS;
    ck_assert_int_eq(kern_dot_type(t), xs ? GGUF_DT_Q8_K : GGUF_DT_Q8_0);
    /* mxfp4's rows carry the extras its packed kernel reads, iq4_xs's
     * its levels in nibble order */
    ck_assert_uint_eq(kern_act_row_size(t, 512), xs                     ? 2 * (292 + KERN_ACT_EXTRA_IQ4)
                                                 : t == GGUF_DT_MXFP4 ? 16 * (34 + KERN_ACT_EXTRA)
                                                                      : 16 * 34);
    if (!simd_available())
        fprintf(stderr, "test_kernels: no AVX2+FMA+F16C here, iq SIMD kernels not tested\n");
    /* lengths: one block (the AVX2 32-block kernels' odd last block alone),
     * odd and even block counts */
    const int64_t ns32[] = { 32, 96, 2080, 2048 }, nsxs[] = { 256, 768, 2048 };
    const int64_t *ns = xs ? nsxs : ns32;
    const size_t nns = xs ? 3 : 4;
    enum { ROWS = 7, NB = 9 };
    for (size_t in = 0; in < nns; in++) {
        const int64_t n = ns[in];
        product p;
        product_init(&p, t, ROWS, (int)n, NB, 300 + (uint64_t)_i, 400 + (uint64_t)_i);
        /* activation row 3: ±1 in same-sign pairs, levels ±127 everywhere */
        for (int64_t j = 0; j < n; j++)
            p.xf[3 * n + j] = (j & 2) ? -1.0f : 1.0f;
        product_quantize(&p);
        /* weight rows 3..6: every nibble byte 0x00, 0xff, 0x88 or random
         * (for iq4 levels -127, 113, 1; mxfp4 0, -12, 0), scales kept */
        const gguf_dtype_traits *tr = gguf_dtype_get(t);
        uint32_t lcg = 777;
        for (int r = 3; r < 7; r++)
            for (int64_t b = 0; b < n / tr->blck_size; b++) {
                uint8_t *q = p.w + (size_t)r * p.rb + (size_t)b * tr->type_size + iq_qs_offset(t);
                for (uint32_t j = 0; j < tr->blck_size / 2; j++) {
                    lcg = lcg * 1103515245u + 12345u;
                    q[j] = r == 3 ? 0x00 : r == 4 ? 0xff : r == 5 ? 0x88 : (uint8_t)(lcg >> 24);
                }
            }
        for (int r = 0; r < ROWS; r++) {
            const uint8_t *w = p.w + (size_t)r * p.rb;
#ifdef KERN_X86
            float outn[KERN_NX], outv[KERN_NX];
            if (simd_available())
                avx2n(n, w, p.xq, p.xb, outn);
            if (kern_cpu_has_vnni())
                vnnin(n, w, p.xq, p.xb, outv);
#endif
            for (int k = 0; k < NB; k++) {
                const uint8_t *x = p.xq + (size_t)k * p.xb;
                double mag;
                const double exact = iq_formula(t, n, w, x, &mag);
                const float got = ref(n, w, x);
                /* (1) the reference is ggml's formula up to float rounding */
                ck_assert_msg(fabs(got - exact) <= 1e-5 * mag,
                              "%s n=%lld w%d x%d: ref %.9g, formula %.9g (M %g)", gguf_dtype_name(t),
                              (long long)n, r, k, got, exact, mag);
                ck_assert_msg(fabs(got - exact) <= ((double)n / 32 + 10) * U * mag,
                              "%s n=%lld w%d x%d: ref %.9g, formula %.9g (M %g)", gguf_dtype_name(t),
                              (long long)n, r, k, got, exact, mag);
                kern_force_scalar(true);
                ck_assert(kern_vec_dot(t, n, w, x) == got);
                kern_force_scalar(false);
#ifdef KERN_X86
                if (!simd_available())
                    continue;
                /* (2) AVX2 within the reassociation bound; KERN_NX rows at
                 * once exactly as one row */
                const float v = avx2(n, w, x);
                const double tol = 2 * ((double)n / 32 + 20) * U * mag;
                ck_assert_msg(fabs(v - got) <= tol, "%s n=%lld w%d x%d: avx2 %.9g ref %.9g |diff| %g > %g",
                              gguf_dtype_name(t), (long long)n, r, k, v, got, fabs(v - got), tol);
                if (k < KERN_NX)
                    ck_assert_msg(outn[k] == v, "%s n=%lld w%d x%d: dotn %.9g dot %.9g",
                                  gguf_dtype_name(t), (long long)n, r, k, outn[k], v);
                /* VNNI: the AVX2 bits, one row and KERN_NX rows */
                if (kern_cpu_has_vnni()) {
                    const float vv = vnni(n, w, x);
                    ck_assert_msg(same_bits(vv, v), "%s n=%lld w%d x%d: vnni %.9g avx2 %.9g",
                                  gguf_dtype_name(t), (long long)n, r, k, vv, v);
                    if (k < KERN_NX)
                        ck_assert_msg(same_bits(outv[k], v), "%s n=%lld w%d x%d: vnni dotn %.9g avx2 dot %.9g",
                                      gguf_dtype_name(t), (long long)n, r, k, outv[k], v);
                }
                /* llama.cpp's AVX2 result, bit for bit */
                const float want = xs ? iq4_xs_x86(n, w, x) : iq_fma_chain(t, n, w, x);
                ck_assert_msg(same_bits(v, want), "%s n=%lld w%d x%d: avx2 %.9g, llama.cpp's %.9g",
                              gguf_dtype_name(t), (long long)n, r, k, v, want);
#endif
            }
        }
        /* (3) kern_matmul gives each pair's kern_vec_dot, on every
         * instruction set, for batches with and without a remainder */
        for (int isa = KERN_ISA_SCALAR; isa <= KERN_ISA_BEST; isa++) {
            kern_force_isa((enum kern_isa)isa);
            for (int nb = 1; nb <= NB; nb += 2) {
                for (int i = 0; i < NB * ROWS; i++)
                    p.y1[i] = NAN;
                kern_matmul(t, p.w, p.rb, ROWS, (int64_t)n, p.xq, nb, p.y1);
                for (int b = 0; b < nb; b++)
                    for (int r = 0; r < ROWS; r++) {
                        const float want = kern_vec_dot(t, n, p.w + (size_t)r * p.rb, p.xq + (size_t)b * p.xb);
                        ck_assert_msg(p.y1[b * ROWS + r] == want,
                                      "%s isa %d n=%lld nb=%d y[%d,%d] = %.9g, dot %.9g", gguf_dtype_name(t),
                                      isa, (long long)n, nb, b, r, p.y1[b * ROWS + r], want);
                    }
                for (int i = nb * ROWS; i < NB * ROWS; i++)
                    ck_assert(isnan(p.y1[i]));
            }
        }
        kern_force_isa(KERN_ISA_BEST);
#ifdef KERN_X86
        /* (4) VNNI gives the AVX2 bits on any activation bytes too, -128
         * included (no quantizer writes it; the sign trick wraps it alike
         * in both) */
        if (kern_cpu_has_vnni()) {
            rng_state = 500 + (uint64_t)_i;
            for (int k = 0; k < NB; k++)
                for (int64_t e = 0; e < n; e++) {
                    const int8_t a = e % 5 == 0 ? -128 : (int8_t)(uniform() * 256 - 128);
                    if (xs) /* in the q8_K block and the extras iq4_xs's kernels read */
                        iq4_xs_act_set(p.xq + (size_t)k * p.xb, n, e, a);
                    else
                        ((gguf_block_q8_0 *)(p.xq + (size_t)k * p.xb))[e / 32].qs[e % 32] = a;
                }
            for (int r = 0; r < ROWS; r++) {
                const uint8_t *w = p.w + (size_t)r * p.rb;
                float outn[KERN_NX], outv[KERN_NX];
                avx2n(n, w, p.xq, p.xb, outn);
                vnnin(n, w, p.xq, p.xb, outv);
                for (int k = 0; k < NB; k++) {
                    const uint8_t *x = p.xq + (size_t)k * p.xb;
                    const float v = avx2(n, w, x), vv = vnni(n, w, x);
                    ck_assert_msg(same_bits(vv, v), "%s n=%lld w%d random x%d: vnni %.9g avx2 %.9g",
                                  gguf_dtype_name(t), (long long)n, r, k, vv, v);
                    if (k < KERN_NX)
                        ck_assert_msg(same_bits(outv[k], outn[k]),
                                      "%s n=%lld w%d random x%d: vnni dotn %.9g avx2 dotn %.9g",
                                      gguf_dtype_name(t), (long long)n, r, k, outv[k], outn[k]);
                }
            }
        }
#endif
        product_free(&p);
    }
}
END_TEST

/* ---------------------------------------------------------------------------
 * 5: what the kernels refuse
 */

START_TEST(test_unsupported)
{
    const uint32_t no[] = { GGUF_DT_Q8_1, GGUF_DT_Q8_K, GGUF_DT_NVFP4, GGUF_DT_Q1_0,
                            GGUF_DT_I8,   GGUF_DT_F64,  4, 1000 };
    for (size_t k = 0; k < sizeof no / sizeof *no; k++) {
        ck_assert(!kern_supported(no[k]));
        ck_assert_int_eq(kern_dot_type(no[k]), -1);
        ck_assert_uint_eq(kern_act_row_size(no[k], 256), 0);
        ck_assert(kern_vec_dot(no[k], 256, NULL, NULL) == 0.0f);
    }
    for (size_t k = 0; k < N_WTYPES; k++)
        ck_assert(kern_supported(wtypes[k]));
    /* dot types of kernels.h's table */
    ck_assert_int_eq(kern_dot_type(GGUF_DT_F16), GGUF_DT_F16);
    ck_assert_int_eq(kern_dot_type(GGUF_DT_BF16), GGUF_DT_BF16);
    ck_assert_int_eq(kern_dot_type(GGUF_DT_Q5_0), GGUF_DT_Q8_0);
    ck_assert_int_eq(kern_dot_type(GGUF_DT_Q4_1), GGUF_DT_Q8_1);
    ck_assert_int_eq(kern_dot_type(GGUF_DT_Q3_K), GGUF_DT_Q8_K);
    /* sizes: 4096 floats are 128 q8_0 blocks of 34 (for q4_0 and q8_0
     * weights each with 40 more bytes: a float scale, the block's lead and
     * eight lane leads), 128 q8_1 of 36, 16 q8_K of 292 (for q4_K and
     * q6_K weights each with 256 more: the levels in the packed kernels'
     * orders, q6_K's plus 128; iq4_xs's likewise in nibble order); a
     * length off the block size or not positive has none */
    ck_assert_uint_eq(kern_act_row_size(GGUF_DT_Q5_0, 4096), 128 * 34);
    ck_assert_uint_eq(kern_act_row_size(GGUF_DT_Q8_0, 4096), 128 * (34 + 40));
    ck_assert_uint_eq(kern_act_row_size(GGUF_DT_Q4_0, 4096), 128 * (34 + 40));
    ck_assert_uint_eq(kern_act_row_size(GGUF_DT_MXFP4, 4096), 128 * (34 + 40));
    ck_assert_uint_eq(kern_act_row_size(GGUF_DT_Q5_1, 4096), 128 * 36);
    ck_assert_uint_eq(kern_act_row_size(GGUF_DT_Q4_K, 4096), 16 * (292 + 256));
    ck_assert_uint_eq(kern_act_row_size(GGUF_DT_Q5_K, 4096), 16 * 292);
    ck_assert_uint_eq(kern_act_row_size(GGUF_DT_Q6_K, 4096), 16 * (292 + 256));
    ck_assert_uint_eq(kern_act_row_size(GGUF_DT_F16, 45), 90);
    ck_assert_uint_eq(kern_act_row_size(GGUF_DT_Q4_K, 4096 + 32), 0);
    ck_assert_uint_eq(kern_act_row_size(GGUF_DT_Q8_0, 33), 0);
    ck_assert_uint_eq(kern_act_row_size(GGUF_DT_F32, 0), 0);
    /* matmul on an unsupported type writes nothing */
    float y = 1.5f;
    kern_matmul(GGUF_DT_NVFP4, NULL, 0, 1, 256, NULL, 1, &y);
    ck_assert(y == 1.5f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_scalar_matches_dequantized, 0, N_WTYPES);
    tcase_add_loop_test(tc, test_simd_matches_scalar, 0, N_WTYPES);
    tcase_add_test(tc, test_float_orders);
    tcase_add_test(tc, test_q8_1_bytes);
    tcase_add_test(tc, test_act_bytes_are_libgguf);
    tcase_add_test(tc, test_act_simd_equals_scalar);
    tcase_add_loop_test(tc, test_matmul_equals_vec_dot, 0, 3 * N_WTYPES);
    tcase_add_loop_test(tc, test_vnni_equals_avx2, 0, N_WTYPES);
    tcase_add_test(tc, test_packed_equals_matmul);
    tcase_add_test(tc, test_q8_0_avx2_order);
    tcase_add_test(tc, test_matmul_any_team);
    tcase_add_loop_test(tc, test_iq_kernels, 0, 3);
    tcase_add_test(tc, test_dequant_types);
    tcase_add_loop_test(tc, test_iq_lattice_kernels, 0, 2);
    tcase_add_test(tc, test_unsupported);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
