/*
 * kernels.c — kernels.h's entry points: the table of weight types, the
 * conversion of activations to each type's dot type, the choice between
 * scalar and vector kernels, and the tiled matmul spread over the threads of
 * common/pool.c.
 *
 * The per-type arithmetic lives in kernels_float.c (f32, f16, bf16),
 * kernels_legacy.c (32-element blocks), kernels_k.c (k-quants) and
 * kernels_iq3s.c (iq3_s, iq2_s), kernels_iq.c (iq4_nl, iq4_xs, mxfp4).
 * Not for: weight quantization (libgguf) or anything of the forward pass.
 */
#include "kernels.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

#include <ggufkit/quants.h>
#include "kernels_impl.h"
#include <ggufkit/gguf.h>

/* ---------------------------------------------------------------------------
 * The type table
 */

/* One instruction set's kernels for a type; NULL where it has none. */
typedef struct {
    kern_dot_fn  dot;  /* one pair of rows */
    kern_dotn_fn dotn; /* one weight row × nx activation rows */
    int          nx;
    kern_tile_fn tile; /* KERN_TW × KERN_NX */
} kern_impl;

typedef struct {
    uint32_t    wtype;
    uint32_t    dot_type;
    kern_dot_fn ref;  /* scalar reference */
    kern_impl   avx2; /* AVX2 (+FMA, F16C) */
    kern_impl   vnni; /* AVX-512 VNNI (+VL); dot NULL: use avx2's */
    /* f32, f16: the products of a batch add in another order (ggml's
     * tinyBLAS, kern_batch_order); NULL: the same kernels */
    kern_dot_fn batch_ref;
    kern_impl   batch_avx2;
} kern_type;

#define NONE { NULL, NULL, 0, NULL }
#define NO_BATCH NULL, NONE

#ifdef KERN_X86
#define AVX2(T, nx, tile) { dot_##T##_avx2, dotn_##T##_avx2, nx, tile }
#define VNNI(T, tile) { dot_##T##_vnni, dotn_##T##_vnni, KERN_NX, tile }
#define SIMD(T, nx) AVX2(T, nx, NULL), NONE, NO_BATCH
#define KVNNI(T) AVX2(T, KERN_NX, NULL), VNNI(T, NULL), NO_BATCH
#define TILED(T) AVX2(T, KERN_NX, tile_##T##_avx2), VNNI(T, tile_##T##_vnni), NO_BATCH
/* f32, f16: the one-row kernels, and the batch ones */
#define FLOAT(T) AVX2(T, KERN_NX_FLOAT, NULL), NONE, batch_dot_##T##_ref, \
                 { batch_dot_##T##_avx2, batch_dotn_##T##_avx2, KERN_NX_FLOAT, NULL }
#else
#define SIMD(T, nx) NONE, NONE, NO_BATCH
#define TILED(T) SIMD(T, 0)
#define KVNNI(T) SIMD(T, 0)
#define FLOAT(T) NONE, NONE, batch_dot_##T##_ref, NONE
#endif

static const kern_type kern_types[] = {
    { GGUF_DT_F32,  GGUF_DT_F32,  dot_f32_ref,  FLOAT(f32) },
    { GGUF_DT_F16,  GGUF_DT_F16,  dot_f16_ref,  FLOAT(f16) },
    { GGUF_DT_BF16, GGUF_DT_BF16, dot_bf16_ref, SIMD(bf16, KERN_NX_FLOAT) },
    { GGUF_DT_Q4_0, GGUF_DT_Q8_0, dot_q4_0_ref, TILED(q4_0) },
    { GGUF_DT_Q4_1, GGUF_DT_Q8_1, dot_q4_1_ref, TILED(q4_1) },
    { GGUF_DT_Q5_0, GGUF_DT_Q8_0, dot_q5_0_ref, TILED(q5_0) },
    { GGUF_DT_Q5_1, GGUF_DT_Q8_1, dot_q5_1_ref, TILED(q5_1) },
    { GGUF_DT_Q8_0, GGUF_DT_Q8_0, dot_q8_0_ref, TILED(q8_0) },
    { GGUF_DT_Q2_K, GGUF_DT_Q8_K, dot_q2_K_ref, KVNNI(q2_K) },
    { GGUF_DT_Q3_K, GGUF_DT_Q8_K, dot_q3_K_ref, KVNNI(q3_K) },
    { GGUF_DT_Q4_K, GGUF_DT_Q8_K, dot_q4_K_ref, KVNNI(q4_K) },
    { GGUF_DT_Q5_K, GGUF_DT_Q8_K, dot_q5_K_ref, KVNNI(q5_K) },
    { GGUF_DT_Q6_K, GGUF_DT_Q8_K, dot_q6_K_ref, KVNNI(q6_K) },
    { GGUF_DT_IQ3_S, GGUF_DT_Q8_K, dot_iq3_s_ref, KVNNI(iq3_s) },
    { GGUF_DT_IQ2_S, GGUF_DT_Q8_K, dot_iq2_s_ref, KVNNI(iq2_s) },
    { GGUF_DT_IQ4_NL, GGUF_DT_Q8_0, dot_iq4_nl_ref, KVNNI(iq4_nl) },
    { GGUF_DT_IQ4_XS, GGUF_DT_Q8_K, dot_iq4_xs_ref, KVNNI(iq4_xs) },
    { GGUF_DT_MXFP4,  GGUF_DT_Q8_0, dot_mxfp4_ref,  KVNNI(mxfp4) },
    /* dequantize-then-multiply: f32 activations, products through is_deq()
     * (no kernels of their own yet) */
#define DEQ(T, ID) { ID, GGUF_DT_F32, NULL, NONE, NONE, NO_BATCH }
    DEQ(iq3_xxs, GGUF_DT_IQ3_XXS), DEQ(iq2_xs, GGUF_DT_IQ2_XS),   DEQ(iq2_xxs, GGUF_DT_IQ2_XXS),
    DEQ(iq1_s, GGUF_DT_IQ1_S),     DEQ(iq1_m, GGUF_DT_IQ1_M),     DEQ(tq1_0, GGUF_DT_TQ1_0),
    DEQ(tq2_0, GGUF_DT_TQ2_0),
#undef DEQ
};
#define N_KERN_TYPES (sizeof kern_types / sizeof *kern_types)

static const kern_type *kern_type_get(uint32_t wtype)
{
    for (size_t i = 0; i < N_KERN_TYPES; i++)
        if (kern_types[i].wtype == wtype)
            return &kern_types[i];
    return NULL;
}

static int isa_limit = KERN_ISA_BEST;

void kern_force_scalar(bool on)
{
    isa_limit = on ? KERN_ISA_SCALAR : KERN_ISA_BEST;
}

void kern_force_isa(enum kern_isa isa)
{
    isa_limit = isa;
}

#ifdef KERN_X86
#include "kernels_simd.h"

/* cpuid traps to the hypervisor in a VM: each probe is asked once (a race
 * only ever stores the same answer). */
bool kern_cpu_has_avx2(void)
{
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        v = kern_probe_avx2();
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
}

bool kern_cpu_has_vnni(void)
{
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        v = kern_cpu_has_avx2() && kern_probe_vnni();
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
}
#endif

enum kern_isa kern_isa_in_use(void)
{
#ifdef KERN_X86
    if (isa_limit >= KERN_ISA_VNNI && kern_cpu_has_vnni())
        return KERN_ISA_VNNI;
    if (isa_limit >= KERN_ISA_AVX2 && kern_cpu_has_avx2())
        return KERN_ISA_AVX2;
#endif
    return KERN_ISA_SCALAR;
}

/* The kernels a product on this type runs: the best instruction set the
 * CPU has and the tests allow, falling back a level where a type has no
 * kernel of that set. */
static kern_impl kern_select(const kern_type *t)
{
    const enum kern_isa isa = kern_isa_in_use();
    if (isa >= KERN_ISA_VNNI && t->vnni.dot)
        return t->vnni;
    if (isa >= KERN_ISA_AVX2 && t->avx2.dot)
        return t->avx2;
    return (kern_impl){ t->ref, NULL, 1, NULL };
}

/* The kernels of a batch product (kern_batch_order) on this type. */
static kern_impl kern_select_batch(const kern_type *t)
{
    if (kern_isa_in_use() >= KERN_ISA_AVX2 && t->batch_avx2.dot)
        return t->batch_avx2;
    return (kern_impl){ t->batch_ref, NULL, 1, NULL };
}

bool kern_batch_order(uint32_t wtype, int64_t nrows, int64_t ncols, int64_t nb)
{
    const kern_type *t = kern_type_get(wtype);
    return t && t->batch_ref && nb >= 2 && nrows % 4 == 0 && ncols % 16 == 0;
}

float kern_batch_dot(uint32_t wtype, int64_t n, const void *w, const void *xq)
{
    const kern_type *t = kern_type_get(wtype);
    if (t && t->batch_ref && n % 16 == 0)
        return kern_select_batch(t).dot(n, w, xq);
    return kern_vec_dot(wtype, n, w, xq);
}

/* ---------------------------------------------------------------------------
 * Activations
 */

bool kern_supported(uint32_t wtype)
{
    return kern_type_get(wtype) != NULL;
}

int kern_dot_type(uint32_t wtype)
{
    const kern_type *t = kern_type_get(wtype);
    return t ? (int)t->dot_type : -1;
}

/* Elements per block and bytes per block of a dot type (q8_1 is not in
 * libgguf's table of valid types: it has no codec there). */
static void dot_type_shape(uint32_t dot_type, int64_t *blck, int64_t *bytes)
{
    if (dot_type == GGUF_DT_Q8_1) {
        *blck = GGUF_QK8_1;
        *bytes = sizeof(gguf_block_q8_1);
        return;
    }
    const gguf_dtype_traits *tr = gguf_dtype_get(dot_type);
    *blck = tr->blck_size;
    *bytes = tr->type_size;
}

/* The level offset B of a weight type whose activation rows carry the
 * extras (kernels_impl.h): 8 for q4_0, 12 for mxfp4, 128 for q8_0; 0 for
 * the others. */
static int act_bias(uint32_t wtype)
{
    return wtype == GGUF_DT_Q4_0    ? 8
           : wtype == GGUF_DT_MXFP4 ? KERN_MXFP4_BIAS
           : wtype == GGUF_DT_Q8_0  ? 128
                                    : 0;
}

/* Bytes of extras per super-block after a q8_K activation row for
 * wtype's kernels (kernels_impl.h), 0 for none. */
static size_t q8_K_extra_bytes(uint32_t wtype)
{
    return wtype == GGUF_DT_Q6_K    ? KERN_ACT_EXTRA_K
           : wtype == GGUF_DT_IQ4_XS ? KERN_ACT_EXTRA_IQ4
           : wtype == GGUF_DT_Q4_K   ? KERN_ACT_EXTRA_Q4K
                                     : 0;
}

size_t kern_act_row_size(uint32_t wtype, int64_t n)
{
    const kern_type *t = kern_type_get(wtype);
    if (!t || n <= 0)
        return 0;
    int64_t blck, bytes;
    dot_type_shape(t->dot_type, &blck, &bytes);
    if (n % blck)
        return 0;
    if (act_bias(wtype))
        bytes += KERN_ACT_EXTRA;
    else
        bytes += q8_K_extra_bytes(wtype);
    return (size_t)(n / blck) * (size_t)bytes;
}

/* The q8_K extras of one super-block of levels q for wtype's kernels
 * (kernels_impl.h): q6_K's levels plus 128 in packed order, iq4_xs's in
 * nibble order, q4_K's in packed nibble order. */
static void q8_K_extra_block(uint32_t wtype, const int8_t *q, uint8_t *eb)
{
    switch (wtype) {
    case GGUF_DT_Q6_K:
        for (int L = 0; L < 8; L++)
            for (int h = 0; h < 2; h++)
                for (int j = 0; j < 4; j++)
                    for (int s = 0; s < 4; s++)
                        eb[32 * L + 16 * h + 4 * j + s] = (uint8_t)q[kern_q6_K_elem(h, L, j, s)] ^ 0x80;
        break;
    case GGUF_DT_IQ4_XS:
        for (int p = 0; p < GGUF_QK_K / 64; p++)
            for (int half = 0; half < 2; half++)     /* levels 0..15, 16..31 */
                for (int blk = 0; blk < 2; blk++) /* block 2p, 2p + 1 */
                    memcpy(eb + 64 * p + 32 * half + 16 * blk, q + 64 * p + 32 * blk + 16 * half, 16);
        break;
    case GGUF_DT_Q4_K:
        for (int g = 0; g < 4; g++)
            for (int L = 0; L < 8; L++) {
                const int8_t *a = q + 64 * g + 4 * L;
                const int8_t v[8] = { a[0], a[1], a[32], a[33], a[2], a[3], a[34], a[35] };
                memcpy(eb + 64 * g + 8 * L, v, 8);
            }
        break;
    default: break;
    }
}

/* Appends wtype's extras (if any) to a q8_K activation row. */
static void act_extra_q8_K(uint32_t wtype, void *xq, int64_t n)
{
    const size_t bytes = q8_K_extra_bytes(wtype);
    if (!bytes)
        return;
    const gguf_block_q8_K *y = xq;
    uint8_t *e = (uint8_t *)kern_act_extra_k(xq, n);
    for (int64_t ib = 0; ib < n / GGUF_QK_K; ib++)
        q8_K_extra_block(wtype, y[ib].qs, e + (size_t)ib * bytes);
}

/* The scales as floats and the leads, −bias × level sums (kernels_impl.h). */
static void act_extra(void *xq, int64_t n, int bias)
{
    const gguf_block_q8_0 *y = xq;
    uint8_t *e = (uint8_t *)kern_act_extra(xq, n);
    const int64_t nb = n / 32;
    for (int64_t ib = 0; ib < nb; ib++) {
        const float d = gguf_f16_to_f32(y[ib].d);
        memcpy(KERN_EX_DX(e, nb, ib), &d, 4);
        int32_t total = 0;
        for (int l = 0; l < 8; l++) {
            const int8_t *q = y[ib].qs + 4 * l;
            const int32_t s = -bias * (q[0] + q[1] + q[2] + q[3]);
            memcpy(KERN_EX_LANES(e, nb, ib) + 4 * l, &s, 4);
            total += s;
        }
        memcpy(KERN_EX_LEAD(e, nb, ib), &total, 4);
    }
}

/* x rounded to nearest even as an int8 level, as ggml's x86 code converts
 * (cvtps_epi32, then saturating packs): a NaN or a value out of range (only
 * from an infinite or NaN input) gives -128, where a C cast would be
 * undefined. */
static int8_t level_i8(float x)
{
    const float v = nearbyintf(x);
    return v >= -128.0f && v <= 127.0f ? (int8_t)v : (int8_t)-128;
}

/* ggml's x86 quantize_row_q8_0: 127 / amax, levels rounded to nearest even. */
void kern_quantize_q8_0_block(const float *x, gguf_block_q8_0 *y)
{
    float amax = 0.0f;
    for (int j = 0; j < 32; j++) {
        const float a = fabsf(x[j]);
        amax = amax > a ? amax : a;
    }
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    for (int j = 0; j < 32; j++)
        y->qs[j] = level_i8(x[j] * id);
    y->d = gguf_f32_to_f16(d);
}

/* ggml's quantize_row_q8_1_ref: per block of 32, d = amax / 127,
 * q = roundf(x / d) (ties away from zero), s = f16(Σq * d) with d unrounded. */
static void kern_quantize_q8_1(const float *x, void *y, int64_t n);

void kern_quantize_act(uint32_t wtype, const float *x, void *xq, int64_t n)
{
    const kern_type *t = kern_type_get(wtype);
    if (!t)
        return;
    switch (t->dot_type) {
    case GGUF_DT_F32: memcpy(xq, x, (size_t)n * sizeof(float)); break;
    case GGUF_DT_F16: gguf_f32_to_f16_row(x, xq, n); break;
    case GGUF_DT_BF16: gguf_f32_to_bf16_row(x, xq, n); break;
    case GGUF_DT_Q8_1: kern_quantize_q8_1(x, xq, n); break;
    case GGUF_DT_Q8_0: {
        const int bias = act_bias(wtype);
#ifdef KERN_X86
        if (kern_isa_in_use() != KERN_ISA_SCALAR) {
            quantize_q8_0_avx2(x, xq, n, bias);
            break;
        }
#endif
        gguf_block_q8_0 *y = xq;
        for (int64_t ib = 0; ib < n / 32; ib++)
            kern_quantize_q8_0_block(x + 32 * ib, &y[ib]);
        if (bias)
            act_extra(xq, n, bias);
        break;
    }
    case GGUF_DT_Q8_K:
#ifdef KERN_X86
        if (kern_isa_in_use() != KERN_ISA_SCALAR)
            quantize_q8_K_avx2(x, xq, n);
        else
#endif
            gguf_codec_get(GGUF_DT_Q8_K)->quantize(x, xq, n);
        act_extra_q8_K(wtype, xq, n);
        break;
    default:
        gguf_codec_get(t->dot_type)->quantize(x, xq, n);
        break;
    }
}

/* q8_1 is quantize_row_q8_0_ref plus the block sum s. */
static void kern_quantize_q8_1(const float *x, void *vy, int64_t n)
{
    gguf_block_q8_1 *y = vy;
    for (int64_t ib = 0; ib < n / GGUF_QK8_1; ib++, x += GGUF_QK8_1) {
        float amax = 0.0f;
        for (int j = 0; j < GGUF_QK8_1; j++) {
            const float a = fabsf(x[j]);
            amax = amax > a ? amax : a; /* ggml's MAX: a NaN propagates */
        }
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        int sum = 0;
        for (int j = 0; j < GGUF_QK8_1; j++) {
            const int8_t q = level_i8(x[j] * id);
            y[ib].qs[j] = q;
            sum += q;
        }
        y[ib].d = gguf_f32_to_f16(d);
        y[ib].s = gguf_f32_to_f16((float)sum * d);
    }
}

/* ---------------------------------------------------------------------------
 * Products
 */

/* The dequantize-then-multiply types (kernels_deq.c): f32 activations for
 * a weight type that is not f32. Their products dequantize a whole weight
 * row (libgguf's codec) and take the f32 kernel's dot with it, so a row is
 * decoded once per product, not once per activation row. */
static bool is_deq(const kern_type *t)
{
    return t->dot_type == GGUF_DT_F32 && t->wtype != GGUF_DT_F32;
}

/* The f32 kernel the dequantized rows are multiplied with. */
static kern_dot_fn deq_dot(void)
{
    return kern_select(kern_type_get(GGUF_DT_F32)).dot;
}

float kern_vec_dot(uint32_t wtype, int64_t n, const void *w, const void *xq)
{
    const kern_type *t = kern_type_get(wtype);
    if (!t)
        return 0.0f;
    if (is_deq(t)) {
        float *row = malloc((size_t)n * sizeof *row);
        float v = NAN; /* out of memory: a non-finite logit is reported */
        if (row) {
            gguf_dequantize_row(wtype, w, row, n, NULL);
            v = deq_dot()(n, row, xq);
        }
        free(row);
        return v;
    }
    return kern_select(t).dot(n, w, xq);
}

/* ---------------------------------------------------------------------------
 * Products are spread over the threads by common/pool.c: each thread starts
 * on a contiguous range of units (tiles, or packed groups of rows: one
 * stream of weight rows, as reading several at once is slower here), and a
 * thread that finishes takes units one by one from the end of the fullest
 * range left, so the threads of a memory-bound product finish within one
 * unit of each other.
 */

/* The activation rows a unit of a product takes: as many whole groups of
 * KERN_NX as fit KERN_XBLOCK_BYTES (L2 with room for the weights), at
 * least one group. A block's units (every weight tile or packed group
 * against it) are consecutive, and a thread runs a range of consecutive
 * units, so each core keeps one block of rows in its L2 while the weights
 * pass over it: a prompt's activations (1-6 MiB for 512 rows) come from
 * L2 rather than L3, the weights once per block (a few per prompt). */
static int64_t x_block(size_t xbytes)
{
    const int64_t b = (int64_t)(KERN_XBLOCK_BYTES / (xbytes ? xbytes : 1)) / KERN_NX * KERN_NX;
    return b < KERN_NX ? KERN_NX : b;
}

/* Weight rows per tile: enough bytes of W (~32 KiB, half of L1d) that the
 * tile stays in cache while every activation row of a block passes over
 * it. */
static int64_t tile_rows(size_t row_bytes, int64_t nb)
{
    if (nb == 1)
        return 16;
    int64_t r = (int64_t)((32u << 10) / (row_bytes ? row_bytes : 1));
    if (r < 1)
        r = 1;
    if (r > 64)
        r = 64;
    return r >= 4 ? r & ~(int64_t)3 : r; /* whole tiles of KERN_TW rows */
}

/* A product by dequantizing (types without a dot kernel): units of 4 rows. */
typedef struct {
    uint32_t       wtype;
    const uint8_t *w;
    size_t         row_bytes;
    int64_t        nrows, ncols;
    const uint8_t *xq;
    size_t         xbytes;
    int64_t        nb;
    float         *y, *rows; /* rows: one f32 row per thread (NULL: out of memory) */
    kern_dot_fn    dot;
} deq_job;

static void deq_unit(void *ctx, int64_t u, int thread)
{
    const deq_job *j = ctx;
    float *row = j->rows ? j->rows + (size_t)thread * (size_t)j->ncols : NULL;
    const int64_t r1 = 4 * u + 4 < j->nrows ? 4 * u + 4 : j->nrows;
    for (int64_t r = 4 * u; r < r1; r++) {
        if (row)
            gguf_dequantize_row(j->wtype, j->w + (size_t)r * j->row_bytes, row, j->ncols, NULL);
        for (int64_t b = 0; b < j->nb; b++)
            j->y[b * j->nrows + r] = row ? j->dot(j->ncols, row, j->xq + (size_t)b * j->xbytes) : NAN;
    }
}

/* A product by the type's kernels: a unit is a tile of tr weight rows. */
typedef struct {
    kern_impl      k;
    const uint8_t *wb;
    size_t         row_bytes;
    int64_t        nrows, ncols;
    const uint8_t *xb;
    size_t         xbytes;
    int64_t        nb;
    float         *y;
    int64_t        tr, nx;
    int64_t        ntiles, xblock; /* a unit: tile u % ntiles, activation block u / ntiles */
} tile_job;

static void tile_unit(void *ctx, int64_t it, int thread)
{
    (void)thread;
    const tile_job *jb = ctx;
    const kern_impl k = jb->k;
    const uint8_t *wb = jb->wb, *xb = jb->xb;
    const size_t row_bytes = jb->row_bytes, xbytes = jb->xbytes;
    const int64_t nrows = jb->nrows, ncols = jb->ncols, tr = jb->tr, nx = jb->nx;
    float *y = jb->y;
    const int64_t r0 = it % jb->ntiles * tr, r1 = r0 + tr < nrows ? r0 + tr : nrows;
    const int64_t b0 = it / jb->ntiles * jb->xblock, nb = jb->nb - b0 < jb->xblock ? jb->nb : b0 + jb->xblock;
    int64_t b = b0;
    for (; k.tile && b + KERN_NX <= nb; b += KERN_NX) {
        const uint8_t *x = xb + (size_t)b * xbytes;
        int64_t r = r0;
        for (; r + KERN_TW <= r1; r += KERN_TW) {
            float out[KERN_TW * KERN_NX];
            k.tile(ncols, wb + (size_t)r * row_bytes, row_bytes, x, xbytes, out);
            for (int64_t i = 0; i < KERN_TW; i++)
                for (int64_t j = 0; j < KERN_NX; j++)
                    y[(b + j) * nrows + r + i] = out[i * KERN_NX + j];
        }
        for (; r < r1; r++) {
            float out[KERN_NX];
            k.dotn(ncols, wb + (size_t)r * row_bytes, x, xbytes, out);
            for (int64_t j = 0; j < KERN_NX; j++)
                y[(b + j) * nrows + r] = out[j];
        }
    }
    for (; k.dotn && b + nx <= nb; b += nx) {
        const uint8_t *x = xb + (size_t)b * xbytes;
        for (int64_t r = r0; r < r1; r++) {
            float out[KERN_NX];
            k.dotn(ncols, wb + (size_t)r * row_bytes, x, xbytes, out);
            for (int64_t j = 0; j < nx; j++)
                y[(b + j) * nrows + r] = out[j];
        }
    }
    /* one activation row (generation) runs row by row: on this
     * machine a single stream of weight rows reads faster than
     * several rows side by side */
    for (; b < nb; b++) {
        const uint8_t *x = xb + (size_t)b * xbytes;
        float *yb = y + b * nrows;
        for (int64_t r = r0; r < r1; r++)
            yb[r] = k.dot(ncols, wb + (size_t)r * row_bytes, x);
    }
}

static void matmul_order(uint32_t wtype, const void *w, size_t row_bytes, int64_t nrows,
                         int64_t ncols, const void *xq, int64_t nb, float *y, bool batch);

void kern_matmul(uint32_t wtype, const void *w, size_t row_bytes, int64_t nrows, int64_t ncols,
                 const void *xq, int64_t nb, float *y)
{
    matmul_order(wtype, w, row_bytes, nrows, ncols, xq, nb, y,
                 kern_batch_order(wtype, nrows, ncols, nb));
}

void kern_matmul_rows(uint32_t wtype, const void *w, size_t row_bytes, int64_t nrows,
                      int64_t ncols, const void *xq, int64_t nb, float *y)
{
    matmul_order(wtype, w, row_bytes, nrows, ncols, xq, nb, y, false);
}

/* kern_matmul with each output kern_batch_dot's (batch) or kern_vec_dot's. */
static void matmul_order(uint32_t wtype, const void *w, size_t row_bytes, int64_t nrows,
                         int64_t ncols, const void *xq, int64_t nb, float *y, bool batch)
{
    const kern_type *t = kern_type_get(wtype);
    if (!t || nrows <= 0 || nb <= 0)
        return;
    const size_t xbytes = kern_act_row_size(wtype, ncols);
    if (is_deq(t)) {
        /* rows in groups of 4, each dequantized into its thread's row */
        const int nt = pool_threads();
        float *rows = malloc((size_t)nt * (size_t)ncols * sizeof *rows);
        deq_job j = { wtype, w, row_bytes, nrows, ncols, xq, xbytes, nb, y, rows, deq_dot() };
        pool_for((nrows + 3) / 4, deq_unit, &j);
        free(rows);
        return;
    }
    const kern_impl k = batch ? kern_select_batch(t) : kern_select(t);
    const int64_t nx = k.dotn ? k.nx : 1;
    const int64_t tr = tile_rows(row_bytes, nb);
    const int64_t ntiles = (nrows + tr - 1) / tr;
    const uint8_t *wb = w, *xb = xq;

    /* y (nb, nrows): tile k covers weight rows [k*tr, k*tr + tr); each of
     * its rows meets every activation row while the tile is cached. Every
     * kernel gives an output what k.dot gives it, so the split into tiles
     * and kernel shapes does not change a bit. */
    const int64_t xblock = x_block(xbytes), nxb = (nb + xblock - 1) / xblock;
    tile_job j = { k, wb, row_bytes, nrows, ncols, xb, xbytes, nb, y, tr, nx, ntiles, xblock };
    pool_for(ntiles * nxb, tile_unit, &j);
}

/* ---------------------------------------------------------------------------
 * Packed matrices: q4_0 and q8_0 (kernels_legacy.c describes the layouts),
 * q4_K and q6_K (kernels_k.c), mxfp4 and iq4_xs (kernels_iq.c)
 */

#ifdef KERN_X86
/* The packable types: how a row's block goes into a group's packed block,
 * and the kernel of eight packed rows. */
typedef struct {
    uint32_t        type;
    kern_pack_put_fn put;       /* the layout */
    kern_rows8_fn   vnni, avx2; /* the kernel of each set (NULL: none) */
    kern_pack_put_fn put_avx2;  /* the AVX2 kernel's layout where it differs */
} pack_kind;

static const pack_kind *pack_kind_get(uint32_t wtype)
{
    static const pack_kind kinds[] = {
        { GGUF_DT_Q4_0, pack_put_q4_0, q4_0x8_vnni, q4_0x8_avx2, NULL },
        { GGUF_DT_Q8_0, pack_put_q8_0, q8_0x8_vnni, q8_0x8_avx2, pack_put_q8_0_signed },
        { GGUF_DT_Q4_K, pack_put_q4_K, q4_Kx8_vnni, q4_Kx8_avx2, NULL },
        { GGUF_DT_Q6_K, pack_put_q6_K, q6_Kx8_vnni, q6_Kx8_avx2, NULL },
        { GGUF_DT_MXFP4, pack_put_mxfp4, mxfp4x8_vnni, mxfp4x8_avx2, NULL },
        { GGUF_DT_IQ4_XS, pack_put_iq4_xs, iq4_xsx8_vnni, iq4_xsx8_avx2, NULL },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (kinds[i].type == wtype)
            return &kinds[i];
    return NULL;
}

/* The eight-row kernel of wtype on the instruction set in use; NULL: none. */
static kern_rows8_fn pack_rows8(uint32_t wtype)
{
    const pack_kind *p = pack_kind_get(wtype);
    const enum kern_isa isa = kern_isa_in_use();
    if (!p || isa == KERN_ISA_SCALAR)
        return NULL;
    return isa == KERN_ISA_VNNI ? p->vnni : p->avx2;
}
#endif

bool kern_pack_usable(uint32_t wtype, int64_t nrows, int64_t ncols)
{
#ifdef KERN_X86
    return pack_rows8(wtype) && nrows > 0 && nrows % 8 == 0 && ncols > 0 &&
           ncols % gguf_dtype_get(wtype)->blck_size == 0;
#else
    (void)wtype, (void)nrows, (void)ncols;
    return false;
#endif
}

void kern_pack(uint32_t wtype, const void *w, size_t row_bytes, int64_t nrows, int64_t ncols,
               void *out)
{
#ifdef KERN_X86
    const pack_kind *p = pack_kind_get(wtype);
    const kern_pack_put_fn put =
        kern_isa_in_use() == KERN_ISA_AVX2 && p->put_avx2 ? p->put_avx2 : p->put;
    const gguf_dtype_traits *tt = gguf_dtype_get(wtype);
    const int64_t nb = ncols / tt->blck_size;
    uint8_t *dst = out;
    for (int64_t g = 0; g < nrows / 8; g++)
        for (int64_t i = 0; i < nb; i++) {
            for (int r = 0; r < 8; r++)
                put((const uint8_t *)w + (size_t)(8 * g + r) * row_bytes + (size_t)i * tt->type_size,
                       dst, r);
            dst += 8 * (size_t)tt->type_size;
        }
#else
    (void)wtype, (void)w, (void)row_bytes, (void)nrows, (void)ncols, (void)out;
#endif
}

#ifdef KERN_X86
/* A product of a packed matrix: a unit is a group of 8 rows (a few KiB,
 * cached while every activation row passes over them). */
typedef struct {
    kern_rows8_fn  rows8;
    const uint8_t *wp;
    size_t         gbytes;
    int64_t        nrows, ncols;
    const uint8_t *xb;
    size_t         xbytes;
    int64_t        nb, xblock; /* activation rows, and how many a unit takes */
    float         *y;
} packed_job;

static void packed_unit(void *ctx, int64_t u, int thread)
{
    (void)thread;
    const packed_job *jb = ctx;
    const int64_t groups = jb->nrows / 8, g = u % groups, b0 = u / groups * jb->xblock;
    const int64_t b1 = jb->nb - b0 < jb->xblock ? jb->nb : b0 + jb->xblock;
    for (int64_t b = b0; b < b1; b += KERN_NX) {
        const int nx = b1 - b < KERN_NX ? (int)(b1 - b) : KERN_NX;
        float out[8 * KERN_NX];
        jb->rows8(jb->ncols, jb->wp + (size_t)g * jb->gbytes, jb->xb + (size_t)b * jb->xbytes, jb->xbytes,
                  nx, out);
        for (int k = 0; k < nx; k++)
            memcpy(jb->y + (b + k) * jb->nrows + 8 * g, out + 8 * k, 8 * sizeof(float));
    }
}
#endif

void kern_matmul_packed(uint32_t wtype, const void *packed, int64_t nrows, int64_t ncols,
                        const void *xq, int64_t nb, float *y)
{
#ifdef KERN_X86
    const kern_rows8_fn rows8 = pack_rows8(wtype);
    const size_t xbytes = kern_act_row_size(wtype, ncols);
    const gguf_dtype_traits *tt = gguf_dtype_get(wtype);
    const size_t gbytes = 8 * (size_t)(ncols / tt->blck_size) * tt->type_size;
    const uint8_t *wp = packed, *xb = xq;
    /* a unit: a group's 8 rows (a few KiB, in L1 while it lasts) times a
     * block of activation rows (x_block) */
    const int64_t xblock = x_block(xbytes);
    const int64_t nxb = (nb + xblock - 1) / xblock;
    packed_job jb = { rows8, wp, gbytes, nrows, ncols, xb, xbytes, nb, xblock, y };
    pool_for(nrows / 8 * nxb, packed_unit, &jb);
#else
    (void)wtype, (void)packed, (void)nrows, (void)ncols, (void)xq, (void)nb, (void)y;
#endif
}
