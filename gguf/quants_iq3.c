/*
 * quants_iq3.c — the 3-bit lattice formats: iq3_xxs and iq3_s.
 *
 * Both cut a super-block of 256 elements into eight sub-blocks of 32, and
 * each sub-block into eight groups of four. A group stores only magnitudes
 * and signs: the four magnitudes are levels l in 0..7 (value 2l + 1), and
 * the quad of levels must be one of a fixed set of grid points, stored by
 * its index in that set.
 *
 *   iq3_xxs  98 bytes: f16 d; qs[64] = one byte grid index per group (256
 *            points); then one little-endian u32 per sub-block: bits
 *            7m..7m+6 are the signs of elements 8m..8m+6 (m = 0..3), the
 *            sign of element 8m+7 is implied (each eight has an even number
 *            of negatives), bits 28..31 the scale ls.
 *            x ≈ d · (0.5 + ls) · 0.5 · v, v = 4,12,20,28,36,44,52,62 for
 *            l = 0..7 (4(2l+1), but 62 at the top).
 *   iq3_s    110 bytes: f16 d; qs[64] = low eight bits of a nine-bit grid
 *            index (512 points), qh[8] their ninth bits (bit k of qh[ib]
 *            for group k of sub-block ib); signs[32], one bit per element;
 *            scales[4], sub-block 2i in the low nibble of byte i, 2i + 1 in
 *            the high one.  x ≈ d · (1 + 2 ls) · (2l + 1).
 *
 * The grids are ggml's kgrid_256 / kgrid_512 (the iq3xxs_grid and
 * iq3s_grid of ggml-common.h, whose bytes follow from them as above): each
 * entry packs four 3-bit levels, element j in bits 3j..3j+2.
 *
 * Quantizing (ggml's quantize_row_iq3_xxs_impl and quantize_row_iq3_s_impl,
 * as quantize_iq3_xxs and quantize_iq3_s call them), per sub-block:
 *   1. weights w: x² without importance weights, else qw · sqrt(σ² + x²)
 *      with σ² = 2/256 · Σx² over the super-block; the search for the
 *      nearest grid point weighs squared errors by sqrt(w);
 *   2. signs come off: the values become magnitudes. iq3_xxs needs an even
 *      number of negatives per eight, so on an odd count the element of
 *      least w·x² keeps its wrong sign (its "magnitude" is then negative);
 *   3. for trial inverse scales (15 + 0.2 k)/max, k = -15..15 (iq3_xxs) or
 *      -9..9 (iq3_s), every group's levels are rounded; a quad off the grid
 *      is replaced by the best of its precomputed neighbours (the grid
 *      points at the two (iq3_xxs) or three (iq3_s) smallest distances
 *      from it). The trial whose least-squares scale removes the most
 *      weighted error wins;
 *   4. if a group of the winner was off the grid, groups are rounded again
 *      against the winner's scale (iq3_xxs: only those groups; iq3_s: all)
 *      and the least-squares scale refitted;
 *   5. the super-block d = max scale / 31 (stored times a fudge factor,
 *      1.0125 and 1.033) and each sub-block scale becomes a 4-bit ls.
 * The neighbour lists are built once, on first use (pthread_once), into
 * static storage; dequantizing needs only the constant grids.
 *
 * With AVX2, step 3 runs eight trials at once (one per lane) and step 4
 * eight groups at once, each lane performing the scalar operations in the
 * scalar order (quants_lanes.h's discipline), so the bytes do not change;
 * gguf_quants_force_scalar(true) keeps the one-at-a-time code, and the
 * unit tests hold both to ggml's vectors.
 *
 * The bytes must be ggml's (quants.h): single-precision sums left to
 * right, products in ggml's order, no fused multiply-add, ggml's rounding
 * (round_half_even) and its tie rules: first trial / first neighbour wins
 * unless strictly better. ggml aborts on NaN input; here it gives some
 * valid block instead.
 *
 * Not for: the other formats (quants_legacy.c, quants_k.c, quants_iq4.c,
 * quants_tq.c, quants_mxfp4.c) or dispatch (quants.c).
 */
#include "quants_impl.h"
#include "cpu.h"

#include <float.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define SUB     32                  /* elements per sub-block */
#define N_SUB   (GGUF_QK_K / SUB)   /* sub-blocks per super-block */
#define N_GROUP (SUB / 4)           /* groups of four per sub-block */
#define N_QUADS 4096                /* all quads of 3-bit levels */
#define MAX_LEVEL 7

/* ggml's kgrid_256 (iq3_xxs): four 3-bit levels per point, ascending. */
static const uint16_t GRID_256[256] = {
       0,    2,    4,    9,   11,   15,   16,   18,   25,   34,   59,   61,   65,   67,   72,   74,
      81,   85,   88,   90,   97,  108,  120,  128,  130,  132,  137,  144,  146,  153,  155,  159,
     169,  175,  189,  193,  199,  200,  202,  213,  248,  267,  287,  292,  303,  315,  317,  321,
     327,  346,  362,  413,  436,  456,  460,  462,  483,  497,  513,  515,  520,  522,  529,  531,
     536,  538,  540,  551,  552,  576,  578,  585,  592,  594,  641,  643,  648,  650,  657,  664,
     698,  704,  706,  720,  729,  742,  758,  769,  773,  808,  848,  852,  870,  889,  901,  978,
     992, 1024, 1026, 1033, 1035, 1040, 1042, 1046, 1049, 1058, 1089, 1091, 1093, 1096, 1098, 1105,
    1112, 1139, 1143, 1144, 1152, 1154, 1161, 1167, 1168, 1170, 1183, 1184, 1197, 1217, 1224, 1228,
    1272, 1276, 1309, 1323, 1347, 1367, 1377, 1404, 1473, 1475, 1486, 1509, 1537, 1544, 1546, 1553,
    1555, 1576, 1589, 1594, 1600, 1602, 1616, 1625, 1636, 1638, 1665, 1667, 1672, 1685, 1706, 1722,
    1737, 1755, 1816, 1831, 1850, 1856, 1862, 1874, 1901, 1932, 1950, 1971, 2011, 2032, 2052, 2063,
    2077, 2079, 2091, 2095, 2172, 2192, 2207, 2208, 2224, 2230, 2247, 2277, 2308, 2345, 2356, 2389,
    2403, 2424, 2501, 2504, 2506, 2520, 2570, 2593, 2616, 2624, 2630, 2646, 2669, 2700, 2714, 2746,
    2754, 2795, 2824, 2835, 2839, 2874, 2882, 2905, 2984, 3028, 3042, 3092, 3108, 3110, 3124, 3153,
    3185, 3215, 3252, 3288, 3294, 3364, 3397, 3434, 3483, 3523, 3537, 3587, 3589, 3591, 3592, 3610,
    3626, 3670, 3680, 3722, 3749, 3754, 3776, 3789, 3803, 3824, 3857, 3873, 3904, 3906, 3924, 3992,
};

/* ggml's kgrid_512 (iq3_s). */
static const uint16_t GRID_512[512] = {
       0,    1,    2,    5,    7,    8,    9,   10,   12,   14,   16,   17,   21,   27,   32,   34,
      37,   39,   41,   43,   48,   50,   57,   60,   63,   64,   65,   66,   68,   72,   73,   77,
      80,   83,   87,   89,   93,  100,  113,  117,  122,  128,  129,  133,  135,  136,  139,  142,
     145,  149,  152,  156,  162,  165,  167,  169,  171,  184,  187,  195,  201,  205,  208,  210,
     217,  219,  222,  228,  232,  234,  247,  249,  253,  256,  267,  271,  273,  276,  282,  288,
     291,  297,  312,  322,  324,  336,  338,  342,  347,  353,  357,  359,  374,  379,  390,  393,
     395,  409,  426,  441,  448,  450,  452,  464,  466,  470,  475,  488,  492,  512,  513,  514,
     516,  520,  521,  523,  525,  527,  528,  530,  537,  540,  542,  556,  558,  561,  570,  576,
     577,  579,  582,  584,  588,  593,  600,  603,  609,  616,  618,  632,  638,  640,  650,  653,
     655,  656,  660,  666,  672,  675,  685,  688,  698,  705,  708,  711,  712,  715,  721,  727,
     728,  732,  737,  754,  760,  771,  773,  778,  780,  793,  795,  802,  806,  808,  812,  833,
     840,  843,  849,  856,  858,  873,  912,  916,  919,  932,  934,  961,  963,  968,  970,  977,
     989,  993, 1010, 1016, 1024, 1025, 1027, 1029, 1031, 1032, 1034, 1036, 1038, 1041, 1043, 1047,
    1048, 1050, 1057, 1059, 1061, 1064, 1066, 1079, 1080, 1083, 1085, 1088, 1090, 1096, 1099, 1103,
    1106, 1109, 1113, 1116, 1122, 1129, 1153, 1156, 1159, 1169, 1171, 1176, 1183, 1185, 1195, 1199,
    1209, 1212, 1216, 1218, 1221, 1225, 1234, 1236, 1241, 1243, 1250, 1256, 1270, 1281, 1287, 1296,
    1299, 1306, 1309, 1313, 1338, 1341, 1348, 1353, 1362, 1375, 1376, 1387, 1400, 1408, 1410, 1415,
    1425, 1453, 1457, 1477, 1481, 1494, 1496, 1507, 1512, 1538, 1545, 1547, 1549, 1551, 1554, 1561,
    1563, 1565, 1570, 1572, 1575, 1577, 1587, 1593, 1601, 1603, 1605, 1612, 1617, 1619, 1632, 1648,
    1658, 1662, 1664, 1674, 1680, 1690, 1692, 1704, 1729, 1736, 1740, 1745, 1747, 1751, 1752, 1761,
    1763, 1767, 1773, 1787, 1795, 1801, 1806, 1810, 1817, 1834, 1840, 1844, 1857, 1864, 1866, 1877,
    1882, 1892, 1902, 1915, 1934, 1953, 1985, 1987, 2000, 2002, 2013, 2048, 2052, 2058, 2064, 2068,
    2071, 2074, 2081, 2088, 2104, 2114, 2119, 2121, 2123, 2130, 2136, 2141, 2147, 2153, 2157, 2177,
    2179, 2184, 2189, 2193, 2203, 2208, 2223, 2226, 2232, 2244, 2249, 2251, 2256, 2258, 2265, 2269,
    2304, 2306, 2324, 2335, 2336, 2361, 2373, 2375, 2385, 2418, 2443, 2460, 2480, 2504, 2509, 2520,
    2531, 2537, 2562, 2568, 2572, 2578, 2592, 2596, 2599, 2602, 2614, 2620, 2625, 2627, 2629, 2634,
    2641, 2650, 2682, 2688, 2697, 2707, 2712, 2718, 2731, 2754, 2759, 2760, 2775, 2788, 2793, 2805,
    2811, 2817, 2820, 2832, 2842, 2854, 2890, 2902, 2921, 2923, 2978, 3010, 3012, 3026, 3081, 3083,
    3085, 3097, 3099, 3120, 3136, 3152, 3159, 3188, 3210, 3228, 3234, 3245, 3250, 3256, 3264, 3276,
    3281, 3296, 3349, 3363, 3378, 3392, 3395, 3420, 3440, 3461, 3488, 3529, 3531, 3584, 3588, 3591,
    3600, 3602, 3614, 3616, 3628, 3634, 3650, 3657, 3668, 3683, 3685, 3713, 3716, 3720, 3726, 3729,
    3736, 3753, 3778, 3802, 3805, 3819, 3841, 3845, 3851, 3856, 3880, 3922, 3938, 3970, 3993, 4032,
};

/* The byte iq3xxs_grid holds for level l (4(2l+1), except 62 for l = 7). */
static const uint8_t XXS_VALUE[8] = { 4, 12, 20, 28, 36, 44, 52, 62 };

/* ========================================================================
 * The lattices: which quads are grid points, and the neighbours of the
 * others (ggml's iq3xs_init_impl)
 * ======================================================================== */

/* Exact totals of the neighbour lists over all off-grid quads (fixed by
 * the grids; the builder checks them). */
#define NB_TOTAL_256 18985
#define NB_TOTAL_512 24733

typedef struct iq3_lattice {
    const uint16_t *points; /* the grid */
    int             n_points;
    int             n_dist; /* neighbours: the points at this many smallest distances */
    int             nb_cap;
    uint16_t       *nb;     /* the lists, back to back */
    /* grid index of each quad, -1 off the grid */
    int16_t         index[N_QUADS];
    /* neighbours of off-grid quad u: nb[nb_start[u] .. nb_start[u + 1]) */
    uint16_t        nb_start[N_QUADS + 1];
    /* the same as 32-bit words for the lanes' gathers: index and nb_start,
     * and each neighbour's quad (points[nb[n]]) */
    int32_t         index32[N_QUADS];
    int32_t         start32[N_QUADS + 1];
    uint16_t       *nb_quad; /* nb_cap + 1: a gather of two reads one past */
    pthread_once_t  once;
} iq3_lattice;

static uint16_t nb_256[NB_TOTAL_256];
static uint16_t nb_512[NB_TOTAL_512];
static uint16_t nb_quad_256[NB_TOTAL_256 + 1];
static uint16_t nb_quad_512[NB_TOTAL_512 + 1];

static iq3_lattice lattice_256 = {
    .points = GRID_256, .n_points = 256, .n_dist = 2, .nb_cap = NB_TOTAL_256, .nb = nb_256,
    .nb_quad = nb_quad_256,
    .once = PTHREAD_ONCE_INIT,
};
static iq3_lattice lattice_512 = {
    .points = GRID_512, .n_points = 512, .n_dist = 3, .nb_cap = NB_TOTAL_512, .nb = nb_512,
    .nb_quad = nb_quad_512,
    .once = PTHREAD_ONCE_INIT,
};

static inline int level_of(unsigned quad, int j)
{
    return (int)(quad >> 3 * j & 7);
}

/* Squared distance of two quads in grid values 2l + 1 (as ggml measures). */
static int quad_dist2(unsigned a, unsigned b)
{
    int d2 = 0;
    for (int j = 0; j < 4; j++) {
        const int diff = (2 * level_of(a, j) + 1) - (2 * level_of(b, j) + 1);
        d2 += diff * diff;
    }
    return d2;
}

/* ggml sorts the grid by (distance, index) and keeps every point up to the
 * n_dist-th distinct distance; listing the points of each of those
 * distances in ascending index order gives the same list, in the same
 * order (which settles ties in best_neighbour). */
static void build_lattice(iq3_lattice *g)
{
    int d2[512];
    for (int u = 0; u < N_QUADS; u++)
        g->index[u] = -1;
    for (int k = 0; k < g->n_points; k++)
        g->index[g->points[k]] = (int16_t)k;
    int count = 0;
    for (int u = 0; u < N_QUADS; u++) {
        g->nb_start[u] = (uint16_t)count;
        if (g->index[u] >= 0)
            continue;
        for (int k = 0; k < g->n_points; k++)
            d2[k] = quad_dist2((unsigned)u, g->points[k]);
        int last = -1;
        for (int have = 0; have < g->n_dist; have++) {
            int next = INT32_MAX;
            for (int k = 0; k < g->n_points; k++)
                if (d2[k] > last && d2[k] < next)
                    next = d2[k];
            for (int k = 0; k < g->n_points; k++) {
                if (d2[k] != next)
                    continue;
                if (count >= g->nb_cap)
                    abort(); /* cannot happen: the totals are fixed by the grids */
                g->nb[count++] = (uint16_t)k;
            }
            last = next;
        }
    }
    if (count != g->nb_cap)
        abort();
    g->nb_start[N_QUADS] = (uint16_t)count;
    for (int u = 0; u <= N_QUADS; u++) {
        if (u < N_QUADS)
            g->index32[u] = g->index[u];
        g->start32[u] = g->nb_start[u];
    }
    for (int n = 0; n < count; n++)
        g->nb_quad[n] = g->points[g->nb[n]];
}

static void init_256(void) { build_lattice(&lattice_256); }
static void init_512(void) { build_lattice(&lattice_512); }

static const iq3_lattice *get_lattice_256(void)
{
    pthread_once(&lattice_256.once, init_256);
    return &lattice_256;
}

static const iq3_lattice *get_lattice_512(void)
{
    pthread_once(&lattice_512.once, init_512);
    return &lattice_512;
}

/* ========================================================================
 * The sub-block search (shared by both formats)
 * ======================================================================== */

/* The neighbour of off-grid quad u that best fits the four magnitudes xv
 * at scale s: least Σ sw·(s·q - x)², each term (sw·diff)·diff summed from
 * 0 in float (ggml's iq3_find_best_neighbour); the first in list order
 * on ties. Writes its levels to L and returns its grid index. */
static int best_neighbour(const iq3_lattice *g, unsigned u, const float xv[4],
                          const float sw[4], float s, int8_t L[4])
{
    float best_d2 = FLT_MAX;
    int best = g->nb[g->nb_start[u]]; /* ggml aborts if nothing beats FLT_MAX */
    for (int n = g->nb_start[u]; n < g->nb_start[u + 1]; n++) {
        const unsigned p = g->points[g->nb[n]];
        float d2 = 0.0f;
        for (int j = 0; j < 4; j++) {
            const float q = (float)(2 * level_of(p, j) + 1);
            const float diff = s * q - xv[j];
            d2 += sw[j] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            best = g->nb[n];
        }
    }
    for (int j = 0; j < 4; j++)
        L[j] = (int8_t)level_of(g->points[best], j);
    return best;
}

/* Levels of one group for inverse scale id: l = round((id·x - 1)/2),
 * computed as 0.5·(id·x - 1) and clamped to 0..7; an off-grid quad is
 * replaced by its best neighbour at scale s. True if it was on the grid. */
static bool snap_group(const iq3_lattice *g, const float xv[4], const float sw[4], float id,
                       float s, int8_t L[4])
{
    unsigned u = 0;
    for (int j = 0; j < 4; j++) {
        int l = round_half_even(0.5f * (id * xv[j] - 1.0f));
        l = l < 0 ? 0 : l > MAX_LEVEL ? MAX_LEVEL : l;
        L[j] = (int8_t)l;
        u |= (unsigned)l << 3 * j;
    }
    if (g->index[u] >= 0)
        return true;
    best_neighbour(g, u, xv, sw, s, L);
    return false;
}

/* Σ w·x·q and Σ w·q² over the sub-block, q = 2l + 1, formed as (w·x)·q
 * and (w·q)·q (as ggml). */
static void fit_sums(const float xv[SUB], const float w[SUB], const int8_t L[SUB], float *sumqx,
                     float *sumq2)
{
    float sx = 0.0f, s2 = 0.0f;
    for (int i = 0; i < SUB; i++) {
        const float q = (float)(2 * L[i] + 1);
        sx += w[i] * xv[i] * q;
        s2 += w[i] * q * q;
    }
    *sumqx = sx;
    *sumq2 = s2;
}

typedef struct search_mode {
    int  n_trials;      /* trial inverse scales (15 + 0.2 k)/max, k = -n..n */
    bool refit_all;     /* step 4 re-rounds every group, not just off-grid ones */
} search_mode;

static const search_mode MODE_XXS = { 15, false };
static const search_mode MODE_S   = { 9, true };

#define MAX_TRIALS 32 /* 2·15 + 1 trials, rounded up to whole sets of eight */

/* Step 3's trials, each one's outcome kept for the choice that follows:
 * the levels (always a grid point per group), whether each group was on
 * the grid before snapping, and Σwxq, Σwq². */
typedef struct trials {
    int8_t L[MAX_TRIALS][SUB];
    bool   on_grid[MAX_TRIALS][N_GROUP];
    float  sumqx[MAX_TRIALS], sumq2[MAX_TRIALS];
} trials;

/* Trial is (slot t) one at a time. */
static void trial_scalar(const iq3_lattice *g, int is, int t, const float xv[SUB],
                         const float w[SUB], const float sw[SUB], float max, trials *tr)
{
    const float id = (15.0f + (float)is * 0.2f) / max;
    const float this_scale = 1.0f / id;
    for (int k = 0; k < N_GROUP; k++)
        tr->on_grid[t][k] = snap_group(g, xv + 4 * k, sw + 4 * k, id, this_scale, tr->L[t] + 4 * k);
    fit_sums(xv, w, tr->L[t], &tr->sumqx[t], &tr->sumq2[t]);
}

/* ------------------------------------------------------------------------
 * AVX2: eight trials at once, one per lane (quants_lanes.h's discipline:
 * each lane performs the scalar trial's float operations in its order, so
 * its outcome is the scalar one bit for bit). A group's neighbour search
 * runs in the lanes whose quad is off the grid, each over its own list
 * (lists differ in length: a lane past its end stops taking candidates),
 * keeping the first least d² as best_neighbour does.
 * ------------------------------------------------------------------------ */
#if GGUF_X86
#include <immintrin.h>

#include "quants_lanes.h"

#define UNROLL4 _Pragma("GCC unroll 4")

/* snap_group on eight groups at once: lane b rounds magnitudes X[j][b]
 * (j = 0..3) at inverse scale id[b] into l[j][b] and, off the grid,
 * replaces them by its best neighbour at scale s[b] (weights SW[j][b]).
 * Returns the lanes that were off the grid. */
LANE_FN vi snap8(const iq3_lattice *g, vf id, vf s, const vf X[4], const vf SW[4], vi l[4])
{
    vi u = splat_i(0);
    for (int j = 0; j < 4; j++) {
        l[j] = clamp_v(round_v(0.5f * (id * X[j] - 1.0f)), 0, MAX_LEVEL);
        u |= l[j] << 3 * j;
    }
    const vi off = (vi)_mm256_i32gather_epi32(g->index32, (__m256i)u, 4) < 0;
    if (!_mm256_movemask_ps((__m256)off))
        return off;
    const vi start = (vi)_mm256_i32gather_epi32(g->start32, (__m256i)u, 4);
    const vi len = ((vi)_mm256_i32gather_epi32(g->start32 + 1, (__m256i)u, 4) - start) & off;
    int max_len = 0;
    for (int b = 0; b < LANES; b++)
        max_len = len[b] > max_len ? len[b] : max_len;
    const vf Q = { 1.0f, 3.0f, 5.0f, 7.0f, 9.0f, 11.0f, 13.0f, 15.0f };
    vf best = splat(FLT_MAX);
    vi best_p = splat_i(0);
    /* neighbours n and n + 1 in one gather of two 16-bit quads */
    for (int n = 0; n < max_len; n += 2) {
        const vi pair = (vi)_mm256_mask_i32gather_epi32(
            _mm256_setzero_si256(), (const int *)g->nb_quad, (__m256i)(start + n),
            (__m256i)(splat_i(n) < len), 2);
        if (n == 0)
            best_p = pair & 0xffff; /* the first neighbour unless one beats FLT_MAX */
        for (int h = 0; h < 2; h++) {
            const vi valid = splat_i(n + h) < len;
            const vi p = h ? pair >> 16 & 0xffff : pair & 0xffff;
            vf d2 = splat(0.0f);
            UNROLL4
            for (int j = 0; j < 4; j++) {
                /* (float)(2l + 1) for level l: the permute reads bits 0..2 */
                const vf q = (vf)_mm256_permutevar8x32_ps((__m256)Q, (__m256i)(p >> 3 * j));
                const vf diff = s * q - X[j];
                d2 += SW[j] * diff * diff;
            }
            const vi lt = valid & (d2 < best);
            best = sel(lt, d2, best);
            best_p = sel_i(lt, p, best_p);
        }
    }
    for (int j = 0; j < 4; j++)
        l[j] = sel_i(off, best_p >> 3 * j & 7, l[j]);
    return off;
}

/* Step 3's trials is0 .. is0 + 7 into slots t0 .. t0 + 7, one per lane. */
GGUF_TARGET_AVX2 static void trials_x8(const iq3_lattice *g, int is0, int t0, const float xv[SUB],
                                      const float w[SUB], const float sw[SUB], float max,
                                      trials *tr)
{
    const vf id = (15.0f + to_f(splat_i(is0) + (vi){ 0, 1, 2, 3, 4, 5, 6, 7 }) * 0.2f) / max;
    const vf s = 1.0f / id;
    vi L[SUB];
    for (int k = 0; k < N_GROUP; k++) {
        vf X[4], SW[4];
        for (int j = 0; j < 4; j++) {
            X[j] = splat(xv[4 * k + j]);
            SW[j] = splat(sw[4 * k + j]);
        }
        const int off = _mm256_movemask_ps((__m256)snap8(g, id, s, X, SW, L + 4 * k));
        for (int b = 0; b < LANES; b++)
            tr->on_grid[t0 + b][k] = !(off >> b & 1);
    }
    vf sx = splat(0.0f), s2 = splat(0.0f);
    for (int i = 0; i < SUB; i++) {
        const vf q = to_f(2 * L[i] + 1);
        sx += w[i] * xv[i] * q;
        s2 += w[i] * q * q;
    }
    for (int b = 0; b < LANES; b++) {
        for (int i = 0; i < SUB; i++)
            tr->L[t0 + b][i] = (int8_t)L[i][b];
        tr->sumqx[t0 + b] = sx[b];
        tr->sumq2[t0 + b] = s2[b];
    }
}

/* Step 4's re-rounding of the groups in mask (bit k: group k) at scale
 * s, one group per lane; the others keep their levels in L. */
GGUF_TARGET_AVX2 static void refit_x8(const iq3_lattice *g, unsigned mask, const float xv[SUB],
                                     const float sw[SUB], float s, int8_t L[SUB])
{
    vf X[4], SW[4];
    vi l[4];
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < N_GROUP; k++) {
            X[j][k] = xv[4 * k + j];
            SW[j][k] = sw[4 * k + j];
        }
    snap8(g, splat(1.0f / s), splat(s), X, SW, l);
    for (int k = 0; k < N_GROUP; k++)
        if (mask >> k & 1)
            for (int j = 0; j < 4; j++)
                L[4 * k + j] = (int8_t)l[j][k];
}

static bool use_lanes(void)
{
    return !gguf_quants_scalar_forced() && gguf_cpu_avx2();
}
#else
static bool use_lanes(void) { return false; }
static void refit_x8(const iq3_lattice *g, unsigned mask, const float xv[SUB],
                     const float sw[SUB], float s, int8_t L[SUB])
{
    for (int k = 0; k < N_GROUP; k++)
        if (mask >> k & 1)
            snap_group(g, xv + 4 * k, sw + 4 * k, 1.0f / s, s, L + 4 * k);
}
static void trials_x8(const iq3_lattice *g, int is0, int t0, const float xv[SUB],
                      const float w[SUB], const float sw[SUB], float max, trials *tr)
{
    for (int b = 0; b < 8; b++)
        trial_scalar(g, is0 + b, t0 + b, xv, w, sw, max, tr);
}
#endif

/* Steps 3 and 4 for one sub-block of magnitudes xv (largest max > 0),
 * weights w and their square roots sw: the levels in L (always a grid
 * point per group) and the returned scale. lanes: run the trials eight at
 * a time (use_lanes()). */
static float search_sub_block(const iq3_lattice *g, const search_mode *mode, bool lanes,
                              const float xv[SUB], const float w[SUB], const float sw[SUB],
                              float max, int8_t L[SUB])
{
    trials tr;
    const int n_trials = 2 * mode->n_trials + 1;
    if (lanes) {
        /* the last set's spare lanes try scales past the range, unused */
        for (int t = 0; t < n_trials; t += 8)
            trials_x8(g, t - mode->n_trials, t, xv, w, sw, max, &tr);
    } else {
        for (int t = 0; t < n_trials; t++)
            trial_scalar(g, t - mode->n_trials, t, xv, w, sw, max, &tr);
    }
    bool on_grid[N_GROUP];
    float best = 0.0f;
    float scale = max / 15.0f;
    memset(L, 0, SUB);
    /* if no trial wins, L stays all level 0 (a grid point): iq3_xxs then
     * skips step 4, iq3_s re-rounds at max/15 */
    for (int k = 0; k < N_GROUP; k++)
        on_grid[k] = !mode->refit_all;
    for (int t = 0; t < n_trials; t++) {
        const float sumqx = tr.sumqx[t], sumq2 = tr.sumq2[t];
        /* this trial's removed error (Σwxq)²/Σwq² beats best = scale·Σwxq,
         * compared without dividing (as ggml) */
        if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            memcpy(L, tr.L[t], SUB);
            memcpy(on_grid, tr.on_grid[t], sizeof on_grid);
        }
    }
    bool any_off = false;
    for (int k = 0; k < N_GROUP; k++)
        any_off |= !on_grid[k];
    if (any_off && scale > 0.0f) {
        unsigned mask = 0;
        for (int k = 0; k < N_GROUP; k++)
            mask |= (unsigned)(mode->refit_all || !on_grid[k]) << k;
        if (lanes) {
            refit_x8(g, mask, xv, sw, scale, L);
        } else {
            const float id = 1.0f / scale;
            for (int k = 0; k < N_GROUP; k++)
                if (mask >> k & 1)
                    snap_group(g, xv + 4 * k, sw + 4 * k, id, scale, L + 4 * k);
        }
        float sumqx, sumq2;
        fit_sums(xv, w, L, &sumqx, &sumq2);
        if (sumq2 > 0.0f)
            scale = sumqx / sumq2;
    }
    return scale;
}

/* Step 1 for sub-block xb: weights w and their square roots sw. */
static void sub_block_weights(const float *xb, const float *qw, float sigma2, float w[SUB],
                              float sw[SUB])
{
    for (int i = 0; i < SUB; i++)
        w[i] = qw ? qw[i] * sqrtf(sigma2 + xb[i] * xb[i]) : xb[i] * xb[i];
    for (int i = 0; i < SUB; i++)
        sw[i] = sqrtf(w[i]);
}

/* σ² of a super-block: 2·Σx²/256, the sum left to right in float and the
 * operations in ggml's order. */
static float sigma2_of(const float *x)
{
    float sum = 0.0f;
    for (int i = 0; i < GGUF_QK_K; i++)
        sum += x[i] * x[i];
    return 2.0f * sum / (float)GGUF_QK_K;
}

/* Step 2, plain: magnitudes into xv, sign bits (1 = negative, element i of
 * each eight in bit i) into signs[4]. Zero counts as positive. */
static void split_signs(const float *xb, float xv[SUB], uint8_t signs[SUB / 8])
{
    for (int k = 0; k < SUB / 8; k++) {
        unsigned s = 0;
        for (int i = 0; i < 8; i++) {
            const float v = xb[8 * k + i];
            if (v >= 0.0f) {
                xv[8 * k + i] = v;
            } else {
                xv[8 * k + i] = -v;
                s |= 1u << i;
            }
        }
        signs[k] = (uint8_t)s;
    }
}

/* Largest magnitude (ggml's MAX chain from xv[0]). */
static float max_of(const float xv[SUB])
{
    float max = xv[0];
    for (int i = 1; i < SUB; i++)
        max = max > xv[i] ? max : xv[i];
    return max;
}

/* The 4-bit sub-block scale for scale s against inverse super-block scale
 * id: round((id·s - 1)/2), clamped to 0..15. */
static unsigned scale_code(float id, float s)
{
    int l = round_half_even(0.5f * (id * s - 1.0f));
    return (unsigned)(l < 0 ? 0 : l > 15 ? 15 : l);
}

static unsigned pack_quad(const int8_t L[4])
{
    return (unsigned)L[0] | (unsigned)L[1] << 3 | (unsigned)L[2] << 6 | (unsigned)L[3] << 9;
}

/* ========================================================================
 * iq3_xxs
 * ======================================================================== */

/* GROUP_MAX_EPS_IQ3_XXS: a sub-block below this is left all zero. */
#define XXS_ZERO_EPS 1e-8f

/* Parity of the low eight bits of s (1: an odd number of them set). */
static unsigned parity8(unsigned s)
{
    s ^= s >> 4;
    s ^= s >> 2;
    s ^= s >> 1;
    return s & 1;
}

static void iq3_xxs_superblock(const float *x, const float *qw, bool lanes, gguf_block_iq3_xxs *b)
{
    const iq3_lattice *g = get_lattice_256();
    const float sigma2 = qw ? sigma2_of(x) : 0.0f;
    uint8_t idx[N_SUB * N_GROUP] = { 0 };
    uint32_t words[N_SUB] = { 0 }; /* sign bits now, scale codes later */
    float scales[N_SUB];
    float max_scale = 0.0f;
    for (int ib = 0; ib < N_SUB; ib++) {
        const float *xb = x + ib * SUB;
        float w[SUB], sw[SUB], xv[SUB];
        uint8_t signs[SUB / 8];
        sub_block_weights(xb, qw ? qw + ib * SUB : NULL, sigma2, w, sw);
        split_signs(xb, xv, signs);
        for (int k = 0; k < SUB / 8; k++) {
            if (!parity8(signs[k]))
                continue; /* even count: bit 7 follows from bits 0..6 */
            /* odd: the element of least w·x² (first on ties) keeps its
             * wrong sign */
            int imin = 0;
            float min = w[8 * k] * xb[8 * k] * xb[8 * k];
            for (int i = 1; i < 8; i++) {
                const float a = w[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
                if (a < min) {
                    min = a;
                    imin = i;
                }
            }
            xv[8 * k + imin] = -xv[8 * k + imin];
            signs[k] ^= (uint8_t)(1u << imin);
        }
        const float max = max_of(xv);
        if (max < XXS_ZERO_EPS) {
            scales[ib] = 0.0f;
            continue;
        }
        int8_t L[SUB];
        float scale = search_sub_block(g, &MODE_XXS, lanes, xv, w, sw, max, L);
        if (scale < 0.0f) {
            /* ggml's guard (not reached: magnitudes and weights are ≥ 0) */
            scale = -scale;
            for (int k = 0; k < SUB / 8; k++)
                signs[k] = (uint8_t)~signs[k];
        }
        for (int k = 0; k < N_GROUP; k++)
            idx[ib * N_GROUP + k] = (uint8_t)g->index[pack_quad(L + 4 * k)];
        for (int k = 0; k < SUB / 8; k++)
            words[ib] |= (uint32_t)(signs[k] & 127) << 7 * k;
        scales[ib] = scale;
        max_scale = max_scale > scale ? max_scale : scale;
    }
    memset(b, 0, sizeof *b);
    b->d = gguf_f32_to_f16(0.0f);
    if (max_scale == 0.0f)
        return;
    const float d = max_scale / 31.0f;
    b->d = gguf_f32_to_f16(d * 1.0125f);
    const float id = 1.0f / d;
    /* a skipped sub-block (scale 0) gets code round(-0.5) = 0 */
    for (int ib = 0; ib < N_SUB; ib++)
        words[ib] |= (uint32_t)scale_code(id, scales[ib]) << 28;
    memcpy(b->qs, idx, sizeof idx);
    uint8_t *out = b->qs + sizeof idx;
    for (int ib = 0; ib < N_SUB; ib++)
        for (int j = 0; j < 4; j++)
            out[4 * ib + j] = (uint8_t)(words[ib] >> 8 * j); /* little-endian */
}

void gguf_iq3_xxs_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_iq3_xxs *b = y;
    const bool lanes = use_lanes();
    for (int64_t i = 0; i < n / GGUF_QK_K; i++)
        iq3_xxs_superblock(x + i * GGUF_QK_K, NULL, lanes, &b[i]);
}

/* σ² over each super-block of 256, its weights qw[256i .. 256i+255]. */
void gguf_iq3_xxs_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    gguf_block_iq3_xxs *b = y;
    const bool lanes = use_lanes();
    for (int64_t i = 0; i < n / GGUF_QK_K; i++)
        iq3_xxs_superblock(x + i * GGUF_QK_K, qw + i * GGUF_QK_K, lanes, &b[i]);
}

/* Each value (d·(0.5 + ls))·0.5, times the grid byte, times ±1 (as ggml). */
void gguf_iq3_xxs_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_iq3_xxs *b = x;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        const float d = gguf_f16_to_f32(b[i].d);
        const uint8_t *idx = b[i].qs;
        const uint8_t *words = b[i].qs + N_SUB * N_GROUP;
        for (int ib = 0; ib < N_SUB; ib++) {
            const uint32_t w = (uint32_t)words[4 * ib] | (uint32_t)words[4 * ib + 1] << 8 |
                               (uint32_t)words[4 * ib + 2] << 16 |
                               (uint32_t)words[4 * ib + 3] << 24;
            const float db = d * (0.5f + (float)(w >> 28)) * 0.5f;
            for (int k = 0; k < N_GROUP; k++, y += 4) {
                const unsigned s7 = w >> 7 * (k / 2) & 127;
                const unsigned signs = s7 | parity8(s7) << 7;
                const unsigned p = GRID_256[idx[ib * N_GROUP + k]];
                for (int j = 0; j < 4; j++) {
                    const float v = (float)XXS_VALUE[level_of(p, j)];
                    y[j] = db * v * (signs >> (4 * (k % 2) + j) & 1 ? -1.0f : 1.0f);
                }
            }
        }
    }
}

/* ========================================================================
 * iq3_s
 * ======================================================================== */

static void iq3_s_superblock(const float *x, const float *qw, bool lanes, gguf_block_iq3_s *b)
{
    const iq3_lattice *g = get_lattice_512();
    memset(b, 0, sizeof *b);
    b->d = gguf_f32_to_f16(0.0f);
    const float sigma2 = qw ? sigma2_of(x) : 0.0f;
    float scales[N_SUB];
    float max_scale = 0.0f;
    /* ggml advances its qs and signs write positions only past sub-blocks
     * it quantizes: after an all-zero sub-block the later ones land one
     * sub-block early (and the dequantizer reads them against the wrong
     * scales). qh is addressed by sub-block. Kept for identical bytes. */
    int slot = 0;
    for (int ib = 0; ib < N_SUB; ib++) {
        const float *xb = x + ib * SUB;
        float w[SUB], sw[SUB], xv[SUB];
        uint8_t signs[SUB / 8];
        sub_block_weights(xb, qw ? qw + ib * SUB : NULL, sigma2, w, sw);
        split_signs(xb, xv, signs);
        const float max = max_of(xv);
        if (max == 0.0f) {
            scales[ib] = 0.0f;
            continue;
        }
        int8_t L[SUB];
        float scale = search_sub_block(g, &MODE_S, lanes, xv, w, sw, max, L);
        if (scale < 0.0f) {
            /* ggml's guard (not reached: magnitudes and weights are ≥ 0) */
            scale = -scale;
            for (int k = 0; k < SUB / 8; k++)
                signs[k] = (uint8_t)~signs[k];
        }
        for (int k = 0; k < N_GROUP; k++) {
            const int gi = g->index[pack_quad(L + 4 * k)];
            b->qs[slot * N_GROUP + k] = (uint8_t)(gi & 255);
            b->qh[ib] |= (uint8_t)((gi >> 8) << k);
        }
        memcpy(b->signs + slot * (SUB / 8), signs, SUB / 8);
        slot++;
        scales[ib] = scale;
        max_scale = max_scale > scale ? max_scale : scale;
    }
    if (max_scale == 0.0f)
        return;
    const float d = max_scale / 31.0f;
    b->d = gguf_f32_to_f16(d * 1.033f);
    const float id = 1.0f / d;
    for (int ib = 0; ib < N_SUB; ib += 2)
        b->scales[ib / 2] = (uint8_t)(scale_code(id, scales[ib]) | scale_code(id, scales[ib + 1]) << 4);
}

void gguf_iq3_s_quantize(const float *x, void *y, int64_t n)
{
    gguf_block_iq3_s *b = y;
    const bool lanes = use_lanes();
    for (int64_t i = 0; i < n / GGUF_QK_K; i++)
        iq3_s_superblock(x + i * GGUF_QK_K, NULL, lanes, &b[i]);
}

/* σ² over each super-block of 256, its weights qw[256i .. 256i+255]. */
void gguf_iq3_s_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    gguf_block_iq3_s *b = y;
    const bool lanes = use_lanes();
    for (int64_t i = 0; i < n / GGUF_QK_K; i++)
        iq3_s_superblock(x + i * GGUF_QK_K, qw + i * GGUF_QK_K, lanes, &b[i]);
}

/* Each value d·(1 + 2ls) times 2l + 1, times ±1 (as ggml). */
void gguf_iq3_s_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_iq3_s *b = x;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        const float d = gguf_f16_to_f32(b[i].d);
        for (int ib = 0; ib < N_SUB; ib++) {
            const int ls = b[i].scales[ib / 2] >> 4 * (ib % 2) & 0x0F;
            const float db = d * (float)(1 + 2 * ls);
            for (int k = 0; k < N_GROUP; k++, y += 4) {
                const unsigned gi = b[i].qs[ib * N_GROUP + k] | (b[i].qh[ib] >> k & 1u) << 8;
                const unsigned p = GRID_512[gi];
                const unsigned signs = b[i].signs[ib * (SUB / 8) + k / 2];
                for (int j = 0; j < 4; j++) {
                    const float v = (float)(2 * level_of(p, j) + 1);
                    y[j] = db * v * (signs >> (4 * (k % 2) + j) & 1 ? -1.0f : 1.0f);
                }
            }
        }
    }
}

/* ========================================================================
 * The grids as bytes (gguf_iq_grid): ggml's iq3xxs_grid and iq3s_grid
 * ======================================================================== */

static uint8_t BYTES_256[256 * 4], BYTES_512[512 * 4];
static pthread_once_t bytes_once = PTHREAD_ONCE_INIT;

static void init_bytes(void)
{
    for (int k = 0; k < 256; k++)
        for (int j = 0; j < 4; j++)
            BYTES_256[4 * k + j] = XXS_VALUE[level_of(GRID_256[k], j)];
    for (int k = 0; k < 512; k++)
        for (int j = 0; j < 4; j++)
            BYTES_512[4 * k + j] = (uint8_t)(2 * level_of(GRID_512[k], j) + 1);
}

const uint8_t *gguf_iq3_grid_bytes(uint32_t type, uint32_t *n)
{
    pthread_once(&bytes_once, init_bytes);
    switch (type) {
    case GGUF_DT_IQ3_XXS: *n = 256; return BYTES_256;
    case GGUF_DT_IQ3_S: *n = 512; return BYTES_512;
    default: return NULL;
    }
}
