/*
 * quants_iq1.c — the 1-bit grid formats: iq1_s and iq1_m.
 *
 * Both store a super-block of 256 values as 32 groups of 8. Each group is
 * an index into a fixed grid of 2048 ternary vectors (entries -1, 0, +1;
 * 2048 of the 3^8 = 6561 possible ones, ggml's iq1s_grid), moved by a
 * shift of ±1/8, times an odd block scale 2l+1 (l of 3 bits) times the
 * super-block scale d:
 *
 *   iq1_s  50 bytes: f16 d; qs[32], the low 8 index bits of each group;
 *          per block of 32 a u16 qh: the high 3 index bits of its four
 *          groups (bits 0-11), l (bits 12-14), the shift's sign (bit 15).
 *   iq1_m  56 bytes: qs[32] as iq1_s; per block of 16 a byte qh: for each
 *          of its two groups the high 3 index bits and the shift's sign
 *          (bits 0-3 and 4-7); scales[8], read as four little-endian u16:
 *          four 3-bit l each (bits 0-11) and one nibble of the f16 d
 *          (bits 12-15, least significant nibble in the first u16).
 *
 *   x ≈ d · (2l + 1) · (g + δ),   g ∈ {-1, 0, 1},   δ = ±1/8
 *
 * Quantizing (ggml's quantize_row_iq1_s_impl and quantize_row_iq1_m_impl):
 *   1. weights w = imatrix · sqrt(σ² + x²), σ² = 2/256 · Σx² over the
 *      super-block (iq1_m without an imatrix: w = x²; iq1_s has no
 *      weight-less path in ggml and none here);
 *   2. per block (32 for iq1_s, 16 for iq1_m) an exact search of the
 *      ternary levels: with the values sorted, every pair of cut points
 *      sends the lowest to -1, the middle to 0 and the rest to +1; for each
 *      choice of shift signs (iq1_s: one per block, iq1_m: one per group,
 *      four combinations) the weighted least-squares scale of the levels
 *      g + δ, keeping the fit that removes the most weighted squared error;
 *   3. a group whose ternary vector is not on the grid takes, among its
 *      grid neighbours (every grid point in the three nearest distance
 *      shells), the one of least weighted squared error at that scale; the
 *      block's scale is then refitted to the grid points;
 *   4. block scales become l = round((s/d - 1)/2) for d = max s / 15.
 *      iq1_s stores d·1.125; iq1_m refits d over the whole super-block
 *      with the integer scales and stores that times 1.1125 (both factors
 *      ggml's empirical fudge).
 *
 * The neighbour lists (step 3) are built once, on the first quantize call
 * (pthread_once: safe from several threads), in about 690 KiB of static
 * tables. ggml sorts the values of a block with qsort and a comparator on
 * the value alone, so equal values keep an order that is glibc's; sort_block
 * replays glibc's merge sort step for step, giving ggml's order for ties
 * (and for NaN, which compares equal to everything) on every platform.
 *
 * The bytes must be ggml's (quants.h): single-precision sums in ggml's
 * order, products associated as ggml writes them, no fused multiply-add,
 * ties resolved as ggml's strict comparisons resolve them.
 *
 * Not for: the other formats (quants_legacy.c, quants_k.c, quants_iq4.c,
 * quants_tq.c, quants_mxfp4.c) or dispatch (quants.c).
 */
#include "quants_impl.h"

#include <float.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define GROUP      8      /* values per grid index */
#define N_GRID     2048   /* grid points */
#define N_TERNARY  6561   /* 3^8 ternary vectors of a group */
#define N_SHELLS   3      /* distance shells in a neighbour list */
#define MAX_DIST   32     /* largest squared distance of two ternary groups */
#define N_NEIGHBOURS 327721 /* total length of the lists for this grid */

#define S_BLOCK 32 /* iq1_s block */
#define M_BLOCK 16 /* iq1_m block */

#define DELTA 0.125f /* the shift δ (ggml's IQ1S_DELTA and IQ1M_DELTA) */
#define IQ1_S_EPS 1e-12f /* a block below this magnitude is all zero */
#define IQ1_M_EPS 1e-7f

/* The levels g + δ for g = -1, 0, 1 (index 0, 1, 2): shift +δ and -δ. */
static const float LEVELS_POS[3] = {-1.0f + DELTA, DELTA, 1.0f + DELTA};
static const float LEVELS_NEG[3] = {-1.0f - DELTA, -DELTA, 1.0f - DELTA};

/* The grid: entry i of point k is (IQ1_GRID[k] >> 2i & 3) - 1 — the values
 * of ggml's iq1s_grid, which holds them as eight int8 bytes (ggml's
 * quantizer builds the same points from these codes, kgrid_1bit_2048). */
static const uint16_t IQ1_GRID[N_GRID] = {
    0x0000, 0x0002, 0x0005, 0x0008, 0x000a, 0x0011, 0x0015, 0x0020, 0x0022, 0x0028, 0x002a, 0x0045,
    0x0051, 0x0054, 0x0056, 0x0065, 0x0080, 0x0082, 0x0088, 0x008a, 0x0095, 0x00a0, 0x00a2, 0x00a8,
    0x00aa, 0x0104, 0x0105, 0x0111, 0x0114, 0x0116, 0x0119, 0x011a, 0x0125, 0x0141, 0x0146, 0x0149,
    0x0152, 0x0155, 0x015a, 0x0161, 0x0164, 0x0166, 0x0168, 0x0185, 0x0191, 0x0194, 0x0196, 0x01a5,
    0x0200, 0x0202, 0x0208, 0x020a, 0x0215, 0x0220, 0x0222, 0x0228, 0x022a, 0x0245, 0x0251, 0x0259,
    0x0264, 0x0269, 0x0280, 0x0282, 0x0288, 0x028a, 0x0291, 0x0295, 0x0299, 0x02a0, 0x02a2, 0x02a8,
    0x02aa, 0x0411, 0x0414, 0x0416, 0x0425, 0x0441, 0x0449, 0x0455, 0x045a, 0x0464, 0x0465, 0x0491,
    0x0499, 0x04a5, 0x0501, 0x0504, 0x0505, 0x0506, 0x0515, 0x0518, 0x051a, 0x0529, 0x0540, 0x0545,
    0x054a, 0x0550, 0x0551, 0x0554, 0x0555, 0x0556, 0x0559, 0x0560, 0x0562, 0x0565, 0x0568, 0x056a,
    0x0581, 0x0591, 0x0595, 0x0598, 0x059a, 0x05a1, 0x05a4, 0x05a5, 0x05a6, 0x05a9, 0x0614, 0x0619,
    0x0641, 0x0644, 0x0650, 0x0652, 0x0655, 0x0658, 0x0660, 0x0661, 0x0666, 0x0669, 0x0685, 0x0691,
    0x0694, 0x0699, 0x0800, 0x0802, 0x0808, 0x080a, 0x0815, 0x0820, 0x0822, 0x0828, 0x082a, 0x0845,
    0x0851, 0x0856, 0x0865, 0x0880, 0x0882, 0x0888, 0x088a, 0x0895, 0x08a0, 0x08a2, 0x08a8, 0x08aa,
    0x0905, 0x0911, 0x0914, 0x0919, 0x0924, 0x0925, 0x0941, 0x0950, 0x0951, 0x0955, 0x0961, 0x0964,
    0x0969, 0x0991, 0x0994, 0x0996, 0x0999, 0x09a5, 0x0a00, 0x0a02, 0x0a08, 0x0a0a, 0x0a15, 0x0a20,
    0x0a22, 0x0a28, 0x0a2a, 0x0a45, 0x0a51, 0x0a59, 0x0a61, 0x0a65, 0x0a80, 0x0a82, 0x0a85, 0x0a88,
    0x0a8a, 0x0a95, 0x0aa0, 0x0aa2, 0x0aa8, 0x0aaa, 0x1010, 0x1011, 0x1014, 0x1019, 0x1024, 0x1025,
    0x1041, 0x1044, 0x1050, 0x1055, 0x1058, 0x1061, 0x1064, 0x1065, 0x1069, 0x1091, 0x1094, 0x1096,
    0x10a1, 0x10a5, 0x1101, 0x1104, 0x1106, 0x1109, 0x1110, 0x1112, 0x1115, 0x1118, 0x1121, 0x1124,
    0x1129, 0x1145, 0x114a, 0x1150, 0x1151, 0x1152, 0x1154, 0x1155, 0x1156, 0x1159, 0x1160, 0x1165,
    0x1184, 0x1192, 0x1195, 0x11a1, 0x11a4, 0x1211, 0x1214, 0x1216, 0x1225, 0x1240, 0x1246, 0x1249,
    0x1252, 0x1255, 0x1258, 0x125a, 0x1264, 0x1266, 0x1285, 0x1291, 0x1294, 0x1296, 0x12a5, 0x1401,
    0x1406, 0x1409, 0x1414, 0x1415, 0x1418, 0x1419, 0x1421, 0x1426, 0x1441, 0x1445, 0x1446, 0x1448,
    0x144a, 0x1451, 0x1454, 0x1455, 0x1456, 0x1459, 0x1462, 0x1465, 0x1468, 0x1484, 0x1489, 0x1490,
    0x1494, 0x1495, 0x1498, 0x1499, 0x149a, 0x14a1, 0x14a4, 0x14a5, 0x14a9, 0x1502, 0x1505, 0x150a,
    0x1511, 0x1514, 0x1515, 0x1516, 0x1519, 0x1520, 0x1522, 0x1525, 0x1528, 0x152a, 0x1541, 0x1544,
    0x1545, 0x1546, 0x1551, 0x1552, 0x1554, 0x1555, 0x1556, 0x1559, 0x155a, 0x1561, 0x1564, 0x1565,
    0x1566, 0x1569, 0x1580, 0x1582, 0x1584, 0x1585, 0x1588, 0x158a, 0x1590, 0x1591, 0x1594, 0x1595,
    0x1596, 0x1599, 0x159a, 0x15a0, 0x15a2, 0x15a5, 0x1601, 0x1604, 0x1605, 0x1606, 0x1615, 0x1616,
    0x1618, 0x161a, 0x1621, 0x1626, 0x1640, 0x1642, 0x1644, 0x1645, 0x1648, 0x164a, 0x1651, 0x1655,
    0x1656, 0x1658, 0x1659, 0x1661, 0x1664, 0x1665, 0x1668, 0x1669, 0x166a, 0x1686, 0x168a, 0x1692,
    0x1695, 0x16a4, 0x16a9, 0x1811, 0x1816, 0x1825, 0x1841, 0x1844, 0x1846, 0x1849, 0x1850, 0x1855,
    0x1858, 0x185a, 0x1860, 0x1861, 0x1864, 0x1866, 0x1869, 0x1885, 0x1891, 0x1894, 0x18a5, 0x1910,
    0x1912, 0x1915, 0x191a, 0x1921, 0x1925, 0x1942, 0x1944, 0x1945, 0x1948, 0x1951, 0x1954, 0x1955,
    0x1956, 0x1959, 0x195a, 0x1960, 0x1965, 0x196a, 0x1989, 0x1991, 0x1992, 0x1995, 0x1998, 0x19a1,
    0x19a6, 0x19a9, 0x1a09, 0x1a16, 0x1a24, 0x1a26, 0x1a44, 0x1a46, 0x1a49, 0x1a50, 0x1a52, 0x1a55,
    0x1a58, 0x1a61, 0x1a66, 0x1a69, 0x1a85, 0x1a91, 0x1a96, 0x1a9a, 0x2000, 0x2002, 0x2008, 0x200a,
    0x2015, 0x2020, 0x2022, 0x2025, 0x2028, 0x202a, 0x2045, 0x2051, 0x2059, 0x2061, 0x2065, 0x2080,
    0x2082, 0x2088, 0x208a, 0x2095, 0x20a0, 0x20a2, 0x20a5, 0x20a8, 0x20aa, 0x2105, 0x2111, 0x2114,
    0x2119, 0x2125, 0x2142, 0x2144, 0x2149, 0x2155, 0x2158, 0x215a, 0x2161, 0x2164, 0x2165, 0x2166,
    0x2185, 0x2190, 0x2196, 0x2199, 0x21a5, 0x2201, 0x2208, 0x220a, 0x2211, 0x2215, 0x2220, 0x2222,
    0x2228, 0x222a, 0x2245, 0x2251, 0x2256, 0x2259, 0x2265, 0x2281, 0x2288, 0x228a, 0x2291, 0x2295,
    0x22a0, 0x22a2, 0x22a8, 0x22aa, 0x2405, 0x2414, 0x2416, 0x2419, 0x2425, 0x2444, 0x2445, 0x2446,
    0x2449, 0x2452, 0x2455, 0x2458, 0x245a, 0x2466, 0x2485, 0x2491, 0x2494, 0x2499, 0x24a1, 0x24a5,
    0x2509, 0x2515, 0x2521, 0x2529, 0x2540, 0x2545, 0x2548, 0x2551, 0x2554, 0x2555, 0x2559, 0x2562,
    0x2565, 0x2568, 0x2589, 0x2590, 0x2594, 0x2595, 0x2598, 0x259a, 0x25a1, 0x25a4, 0x25a6, 0x25a9,
    0x2605, 0x2610, 0x2612, 0x2619, 0x2625, 0x2641, 0x2649, 0x2655, 0x2660, 0x2661, 0x2669, 0x2684,
    0x2686, 0x2690, 0x269a, 0x2800, 0x2802, 0x2808, 0x280a, 0x2815, 0x2820, 0x2822, 0x2828, 0x282a,
    0x2845, 0x2851, 0x2854, 0x2865, 0x2880, 0x2882, 0x2888, 0x288a, 0x28a0, 0x28a2, 0x28a8, 0x28aa,
    0x2909, 0x2911, 0x2914, 0x2919, 0x2925, 0x2946, 0x2949, 0x2952, 0x2955, 0x2961, 0x2964, 0x2966,
    0x2969, 0x2985, 0x2990, 0x2996, 0x2999, 0x29a4, 0x29a5, 0x2a00, 0x2a02, 0x2a08, 0x2a0a, 0x2a20,
    0x2a22, 0x2a28, 0x2a2a, 0x2a45, 0x2a51, 0x2a56, 0x2a59, 0x2a65, 0x2a80, 0x2a82, 0x2a88, 0x2a8a,
    0x2a95, 0x2aa0, 0x2aa2, 0x2aa8, 0x2aaa, 0x4005, 0x4011, 0x4016, 0x4025, 0x4049, 0x4052, 0x4055,
    0x4058, 0x405a, 0x4061, 0x4064, 0x4066, 0x4094, 0x4099, 0x40a1, 0x40a6, 0x4100, 0x4101, 0x4104,
    0x4106, 0x4109, 0x4112, 0x4115, 0x4116, 0x4118, 0x411a, 0x4121, 0x4126, 0x4129, 0x4145, 0x4148,
    0x414a, 0x4151, 0x4154, 0x4155, 0x4156, 0x4159, 0x415a, 0x4165, 0x4168, 0x416a, 0x4181, 0x4184,
    0x4186, 0x4190, 0x4192, 0x4195, 0x41a0, 0x41a1, 0x41a2, 0x4205, 0x4211, 0x4214, 0x4216, 0x4225,
    0x4241, 0x4252, 0x4255, 0x425a, 0x4264, 0x4269, 0x4289, 0x4294, 0x42a5, 0x4401, 0x4415, 0x4419,
    0x4429, 0x4445, 0x4448, 0x444a, 0x4451, 0x4454, 0x4455, 0x4456, 0x4461, 0x4462, 0x4465, 0x4468,
    0x446a, 0x4481, 0x4486, 0x4489, 0x4490, 0x4492, 0x4495, 0x44a0, 0x44a1, 0x44a9, 0x4501, 0x4502,
    0x4505, 0x450a, 0x4511, 0x4514, 0x4515, 0x4516, 0x4519, 0x4520, 0x4525, 0x452a, 0x4541, 0x4544,
    0x4545, 0x4546, 0x4549, 0x4550, 0x4551, 0x4554, 0x4555, 0x4556, 0x4558, 0x4559, 0x4561, 0x4564,
    0x4565, 0x4566, 0x4569, 0x4582, 0x4584, 0x4585, 0x4588, 0x4591, 0x4594, 0x4595, 0x4596, 0x4599,
    0x459a, 0x45a5, 0x45a8, 0x45aa, 0x4601, 0x4605, 0x4609, 0x4614, 0x4615, 0x4618, 0x461a, 0x4621,
    0x4624, 0x4629, 0x4640, 0x4642, 0x4645, 0x4648, 0x4650, 0x4651, 0x4652, 0x4655, 0x4656, 0x4659,
    0x4662, 0x4665, 0x4668, 0x4681, 0x4685, 0x468a, 0x4694, 0x4695, 0x46a1, 0x46a4, 0x46a6, 0x4805,
    0x4811, 0x4815, 0x481a, 0x4825, 0x4842, 0x4849, 0x4850, 0x4855, 0x4858, 0x4861, 0x4864, 0x4866,
    0x4869, 0x4885, 0x4891, 0x4894, 0x4896, 0x4899, 0x48a5, 0x4901, 0x4905, 0x4906, 0x490a, 0x4910,
    0x4914, 0x4915, 0x4918, 0x4921, 0x4924, 0x4926, 0x4940, 0x4945, 0x494a, 0x4951, 0x4952, 0x4954,
    0x4955, 0x4956, 0x4959, 0x4960, 0x4962, 0x4965, 0x4966, 0x496a, 0x4986, 0x4989, 0x4992, 0x4995,
    0x4996, 0x4998, 0x49a1, 0x49a4, 0x49a6, 0x49a9, 0x4a16, 0x4a44, 0x4a46, 0x4a49, 0x4a55, 0x4a58,
    0x4a5a, 0x4a64, 0x4a69, 0x4a94, 0x4aa5, 0x5001, 0x5004, 0x5005, 0x5006, 0x5009, 0x5012, 0x5015,
    0x501a, 0x5021, 0x5024, 0x5029, 0x5040, 0x5045, 0x5048, 0x5051, 0x5054, 0x5055, 0x5056, 0x5059,
    0x5065, 0x5068, 0x5086, 0x5089, 0x5095, 0x5098, 0x50a0, 0x50a1, 0x50a6, 0x50a9, 0x5105, 0x5108,
    0x5109, 0x510a, 0x5111, 0x5114, 0x5115, 0x5116, 0x5118, 0x5119, 0x5120, 0x5125, 0x5126, 0x5128,
    0x512a, 0x5141, 0x5144, 0x5145, 0x5146, 0x5149, 0x5150, 0x5151, 0x5152, 0x5154, 0x5155, 0x5156,
    0x5158, 0x5159, 0x515a, 0x5161, 0x5164, 0x5165, 0x5166, 0x5169, 0x5182, 0x5185, 0x5191, 0x5194,
    0x5195, 0x5196, 0x5199, 0x51a0, 0x51a5, 0x51aa, 0x5201, 0x5206, 0x5212, 0x5215, 0x521a, 0x5221,
    0x5224, 0x5242, 0x5245, 0x524a, 0x5251, 0x5254, 0x5255, 0x5256, 0x5259, 0x5262, 0x5265, 0x5285,
    0x5290, 0x5292, 0x5295, 0x5299, 0x529a, 0x52a4, 0x5404, 0x5405, 0x5411, 0x5414, 0x5415, 0x5416,
    0x5418, 0x5419, 0x5421, 0x5425, 0x5428, 0x542a, 0x5441, 0x5444, 0x5445, 0x5446, 0x5449, 0x544a,
    0x5450, 0x5451, 0x5454, 0x5455, 0x5456, 0x5458, 0x5459, 0x545a, 0x5461, 0x5462, 0x5464, 0x5465,
    0x5466, 0x5469, 0x5480, 0x5488, 0x548a, 0x5491, 0x5494, 0x5495, 0x5496, 0x5499, 0x54a1, 0x54a4,
    0x54a5, 0x54aa, 0x5501, 0x5502, 0x5504, 0x5505, 0x5506, 0x5509, 0x5510, 0x5511, 0x5512, 0x5514,
    0x5515, 0x5516, 0x5519, 0x551a, 0x5521, 0x5524, 0x5525, 0x5526, 0x5529, 0x5540, 0x5541, 0x5542,
    0x5544, 0x5545, 0x5546, 0x5548, 0x5549, 0x5550, 0x5551, 0x5552, 0x5554, 0x5555, 0x5556, 0x5558,
    0x5559, 0x555a, 0x5560, 0x5561, 0x5564, 0x5565, 0x5566, 0x5568, 0x5569, 0x556a, 0x5581, 0x5584,
    0x5585, 0x5589, 0x558a, 0x5590, 0x5591, 0x5594, 0x5595, 0x5596, 0x5598, 0x5599, 0x55a1, 0x55a4,
    0x55a5, 0x55a6, 0x55a9, 0x5600, 0x5601, 0x5602, 0x5604, 0x5606, 0x5608, 0x5609, 0x5611, 0x5614,
    0x5615, 0x5618, 0x5619, 0x5620, 0x5621, 0x5622, 0x5624, 0x5625, 0x5626, 0x5628, 0x5629, 0x5641,
    0x5645, 0x5646, 0x5648, 0x5649, 0x564a, 0x5650, 0x5651, 0x5652, 0x5654, 0x5655, 0x5656, 0x5658,
    0x5659, 0x565a, 0x5661, 0x5664, 0x5665, 0x5669, 0x5682, 0x5685, 0x5686, 0x5688, 0x5689, 0x568a,
    0x5691, 0x5695, 0x569a, 0x56a2, 0x56a5, 0x56a6, 0x56a8, 0x56a9, 0x5804, 0x5805, 0x5806, 0x5809,
    0x5810, 0x5815, 0x5818, 0x5821, 0x582a, 0x5845, 0x5848, 0x584a, 0x5851, 0x5854, 0x5855, 0x5856,
    0x5858, 0x5859, 0x5860, 0x5862, 0x5864, 0x5865, 0x5882, 0x5889, 0x5890, 0x5892, 0x5895, 0x5898,
    0x58a1, 0x58a9, 0x5901, 0x5902, 0x5905, 0x590a, 0x5911, 0x5914, 0x5915, 0x5916, 0x5919, 0x5925,
    0x5941, 0x5944, 0x5945, 0x5946, 0x5949, 0x5950, 0x5951, 0x5952, 0x5954, 0x5955, 0x5956, 0x5958,
    0x5959, 0x595a, 0x5961, 0x5964, 0x5965, 0x5966, 0x5969, 0x5981, 0x5985, 0x5989, 0x5991, 0x5994,
    0x5995, 0x5996, 0x5998, 0x5999, 0x59a5, 0x5a04, 0x5a08, 0x5a15, 0x5a1a, 0x5a20, 0x5a25, 0x5a26,
    0x5a29, 0x5a45, 0x5a48, 0x5a49, 0x5a51, 0x5a55, 0x5a56, 0x5a58, 0x5a59, 0x5a62, 0x5a65, 0x5a68,
    0x5a6a, 0x5a81, 0x5a8a, 0x5a92, 0x5a95, 0x5a96, 0x5a98, 0x5a9a, 0x5aa1, 0x6005, 0x6014, 0x6016,
    0x6019, 0x6025, 0x6044, 0x6050, 0x6055, 0x6056, 0x6058, 0x605a, 0x6061, 0x6064, 0x6066, 0x6069,
    0x6081, 0x6096, 0x60a5, 0x6101, 0x6104, 0x6106, 0x6109, 0x6112, 0x6115, 0x6121, 0x6122, 0x6126,
    0x6129, 0x6145, 0x6149, 0x6151, 0x6155, 0x6156, 0x6159, 0x6165, 0x6166, 0x616a, 0x6184, 0x618a,
    0x6192, 0x6195, 0x61a1, 0x61a6, 0x61a9, 0x6211, 0x6216, 0x6219, 0x6240, 0x6241, 0x6246, 0x6255,
    0x6256, 0x6258, 0x6260, 0x6285, 0x6291, 0x6296, 0x62a5, 0x6411, 0x6412, 0x6415, 0x6416, 0x641a,
    0x6421, 0x6426, 0x6429, 0x6440, 0x6442, 0x6445, 0x6448, 0x644a, 0x6451, 0x6454, 0x6455, 0x6456,
    0x6459, 0x645a, 0x6460, 0x6462, 0x6465, 0x6484, 0x6485, 0x6489, 0x6490, 0x6492, 0x6494, 0x6495,
    0x6496, 0x6498, 0x649a, 0x64a1, 0x64a4, 0x64a9, 0x6505, 0x6508, 0x650a, 0x6511, 0x6515, 0x6516,
    0x6519, 0x6544, 0x6545, 0x6546, 0x6549, 0x6550, 0x6551, 0x6554, 0x6555, 0x6556, 0x6559, 0x6561,
    0x6564, 0x6565, 0x6566, 0x6569, 0x6586, 0x6589, 0x658a, 0x6591, 0x6595, 0x6596, 0x6599, 0x659a,
    0x65a2, 0x65a5, 0x65a6, 0x65a8, 0x6602, 0x6609, 0x6615, 0x6620, 0x6626, 0x6628, 0x6629, 0x6640,
    0x6645, 0x6648, 0x664a, 0x6651, 0x6654, 0x6655, 0x6656, 0x6658, 0x665a, 0x6660, 0x6665, 0x6668,
    0x6680, 0x6682, 0x6685, 0x668a, 0x6694, 0x6696, 0x6698, 0x6699, 0x66a0, 0x66a4, 0x66a6, 0x66aa,
    0x6816, 0x6819, 0x6825, 0x6841, 0x6852, 0x6855, 0x685a, 0x6861, 0x6869, 0x6885, 0x6891, 0x6898,
    0x68a6, 0x6901, 0x6904, 0x6910, 0x6915, 0x6921, 0x6924, 0x6926, 0x6929, 0x6940, 0x6941, 0x6945,
    0x6946, 0x6948, 0x6951, 0x6954, 0x6955, 0x6956, 0x6959, 0x6960, 0x6965, 0x696a, 0x6982, 0x6984,
    0x698a, 0x6995, 0x69a1, 0x69a4, 0x69a5, 0x69a9, 0x6a11, 0x6a16, 0x6a18, 0x6a41, 0x6a44, 0x6a49,
    0x6a50, 0x6a55, 0x6a58, 0x6a5a, 0x6a64, 0x6a65, 0x6a69, 0x6a86, 0x6a94, 0x6a98, 0x6a9a, 0x6aa6,
    0x8000, 0x8002, 0x8008, 0x800a, 0x8020, 0x8022, 0x8028, 0x802a, 0x8045, 0x8050, 0x8051, 0x8054,
    0x8056, 0x8059, 0x8065, 0x8080, 0x8082, 0x8088, 0x808a, 0x8095, 0x80a0, 0x80a2, 0x80a8, 0x80aa,
    0x8105, 0x8111, 0x8114, 0x8116, 0x8119, 0x8125, 0x8141, 0x8144, 0x8149, 0x8150, 0x8152, 0x8155,
    0x8156, 0x8158, 0x8159, 0x8164, 0x8166, 0x8169, 0x8185, 0x8189, 0x8194, 0x8196, 0x8199, 0x81a5,
    0x8200, 0x8202, 0x8208, 0x820a, 0x8215, 0x8220, 0x8222, 0x8228, 0x822a, 0x8251, 0x8254, 0x8259,
    0x8265, 0x8280, 0x8282, 0x8288, 0x828a, 0x8295, 0x82a0, 0x82a2, 0x82a8, 0x82aa, 0x8414, 0x8419,
    0x8441, 0x8444, 0x8451, 0x8455, 0x845a, 0x8461, 0x8464, 0x8469, 0x8494, 0x8499, 0x8501, 0x8509,
    0x8512, 0x8515, 0x851a, 0x8526, 0x8529, 0x8540, 0x8541, 0x8545, 0x8548, 0x8551, 0x8554, 0x8555,
    0x8556, 0x8559, 0x855a, 0x8565, 0x8566, 0x8568, 0x856a, 0x8581, 0x8584, 0x8586, 0x8589, 0x8590,
    0x8592, 0x8595, 0x8598, 0x85a6, 0x8611, 0x8616, 0x8619, 0x8625, 0x8641, 0x8644, 0x8649, 0x864a,
    0x8650, 0x8655, 0x8659, 0x865a, 0x8661, 0x8666, 0x866a, 0x8685, 0x8691, 0x869a, 0x86a4, 0x8800,
    0x8802, 0x8808, 0x880a, 0x8815, 0x8820, 0x8822, 0x8828, 0x882a, 0x8841, 0x8845, 0x8851, 0x8854,
    0x8859, 0x8865, 0x8869, 0x8880, 0x8882, 0x8888, 0x888a, 0x8895, 0x88a0, 0x88a2, 0x88a8, 0x88aa,
    0x8905, 0x8906, 0x8911, 0x8914, 0x8916, 0x8925, 0x8941, 0x8944, 0x8946, 0x8949, 0x8950, 0x8952,
    0x8955, 0x895a, 0x8961, 0x8964, 0x8985, 0x8996, 0x8999, 0x89a5, 0x8a00, 0x8a02, 0x8a08, 0x8a0a,
    0x8a15, 0x8a20, 0x8a22, 0x8a28, 0x8a2a, 0x8a45, 0x8a51, 0x8a54, 0x8a56, 0x8a80, 0x8a82, 0x8a88,
    0x8a8a, 0x8a95, 0x8aa0, 0x8aa2, 0x8aa8, 0x8aaa, 0x9005, 0x9011, 0x9016, 0x9018, 0x9019, 0x9025,
    0x9041, 0x9046, 0x9049, 0x9055, 0x9058, 0x905a, 0x9069, 0x906a, 0x9085, 0x9091, 0x9094, 0x9096,
    0x9099, 0x90a5, 0x9101, 0x9104, 0x9106, 0x9109, 0x9110, 0x9115, 0x9118, 0x911a, 0x9121, 0x9124,
    0x9126, 0x9129, 0x9140, 0x9145, 0x9150, 0x9151, 0x9154, 0x9155, 0x9156, 0x9159, 0x9162, 0x9165,
    0x9184, 0x9186, 0x9192, 0x9195, 0x9198, 0x91a1, 0x91a4, 0x91a6, 0x91a9, 0x9205, 0x9211, 0x9214,
    0x9219, 0x9225, 0x9244, 0x9246, 0x9249, 0x9250, 0x9252, 0x9255, 0x9258, 0x9266, 0x9269, 0x9285,
    0x9294, 0x9296, 0x92a9, 0x9401, 0x9404, 0x9406, 0x9410, 0x9415, 0x9418, 0x9426, 0x9440, 0x944a,
    0x9451, 0x9454, 0x9455, 0x9456, 0x9458, 0x9459, 0x9460, 0x9461, 0x9462, 0x9465, 0x9484, 0x9486,
    0x9492, 0x9494, 0x9495, 0x9498, 0x94a1, 0x94a9, 0x9500, 0x9505, 0x9508, 0x950a, 0x9510, 0x9511,
    0x9514, 0x9515, 0x9516, 0x9519, 0x9521, 0x9525, 0x9529, 0x952a, 0x9541, 0x9544, 0x9545, 0x9546,
    0x9549, 0x9550, 0x9551, 0x9552, 0x9554, 0x9555, 0x9556, 0x9558, 0x9559, 0x955a, 0x9561, 0x9564,
    0x9565, 0x9566, 0x9569, 0x9581, 0x9585, 0x9588, 0x9591, 0x9592, 0x9594, 0x9595, 0x9596, 0x9599,
    0x959a, 0x95a0, 0x95a2, 0x95a5, 0x95a8, 0x95aa, 0x9601, 0x9604, 0x9610, 0x9615, 0x9619, 0x9620,
    0x9626, 0x9629, 0x9645, 0x9648, 0x9649, 0x9651, 0x9652, 0x9655, 0x9656, 0x9659, 0x9665, 0x9668,
    0x9682, 0x9684, 0x9689, 0x968a, 0x9692, 0x9694, 0x9695, 0x96a4, 0x96a6, 0x96a9, 0x9805, 0x9816,
    0x9819, 0x9825, 0x9841, 0x9846, 0x9850, 0x9852, 0x9855, 0x9856, 0x985a, 0x9864, 0x9865, 0x9885,
    0x9891, 0x9896, 0x9899, 0x98a5, 0x9904, 0x9906, 0x9909, 0x9910, 0x9912, 0x9915, 0x9918, 0x991a,
    0x9920, 0x9921, 0x9924, 0x9926, 0x9940, 0x9942, 0x9945, 0x9948, 0x994a, 0x9951, 0x9954, 0x9955,
    0x9956, 0x9959, 0x9962, 0x9965, 0x9966, 0x996a, 0x9981, 0x9984, 0x9990, 0x9992, 0x9995, 0x999a,
    0x99a1, 0x99a6, 0x9a05, 0x9a15, 0x9a25, 0x9a44, 0x9a46, 0x9a49, 0x9a50, 0x9a55, 0x9a58, 0x9a61,
    0x9a85, 0x9a91, 0x9a94, 0x9a95, 0x9a96, 0xa000, 0xa002, 0xa008, 0xa00a, 0xa015, 0xa020, 0xa022,
    0xa028, 0xa02a, 0xa045, 0xa051, 0xa054, 0xa056, 0xa059, 0xa080, 0xa082, 0xa088, 0xa08a, 0xa095,
    0xa0a0, 0xa0a2, 0xa0a8, 0xa0aa, 0xa105, 0xa109, 0xa111, 0xa114, 0xa116, 0xa119, 0xa11a, 0xa146,
    0xa149, 0xa151, 0xa155, 0xa158, 0xa15a, 0xa161, 0xa164, 0xa185, 0xa190, 0xa192, 0xa196, 0xa199,
    0xa202, 0xa208, 0xa20a, 0xa210, 0xa219, 0xa222, 0xa228, 0xa22a, 0xa245, 0xa251, 0xa256, 0xa259,
    0xa265, 0xa280, 0xa282, 0xa288, 0xa28a, 0xa295, 0xa2a0, 0xa2a2, 0xa2a8, 0xa2aa, 0xa419, 0xa425,
    0xa441, 0xa444, 0xa450, 0xa454, 0xa455, 0xa458, 0xa45a, 0xa461, 0xa465, 0xa466, 0xa468, 0xa469,
    0xa485, 0xa506, 0xa509, 0xa510, 0xa512, 0xa515, 0xa518, 0xa526, 0xa529, 0xa542, 0xa545, 0xa551,
    0xa554, 0xa555, 0xa556, 0xa559, 0xa565, 0xa56a, 0xa581, 0xa584, 0xa585, 0xa586, 0xa589, 0xa592,
    0xa595, 0xa598, 0xa605, 0xa611, 0xa616, 0xa61a, 0xa621, 0xa625, 0xa644, 0xa646, 0xa64a, 0xa652,
    0xa655, 0xa656, 0xa658, 0xa660, 0xa662, 0xa686, 0xa690, 0xa695, 0xa696, 0xa699, 0xa6a1, 0xa6a4,
    0xa6a6, 0xa800, 0xa802, 0xa808, 0xa80a, 0xa820, 0xa822, 0xa828, 0xa82a, 0xa851, 0xa854, 0xa856,
    0xa859, 0xa880, 0xa882, 0xa888, 0xa88a, 0xa895, 0xa8a0, 0xa8a2, 0xa8a8, 0xa8aa, 0xa905, 0xa914,
    0xa919, 0xa921, 0xa925, 0xa941, 0xa950, 0xa955, 0xa95a, 0xa961, 0xa966, 0xa969, 0xa990, 0xa996,
    0xaa00, 0xaa02, 0xaa08, 0xaa0a, 0xaa20, 0xaa22, 0xaa28, 0xaa2a, 0xaa51, 0xaa54, 0xaa56, 0xaa80,
    0xaa82, 0xaa88, 0xaa8a, 0xaa95, 0xaaa0, 0xaaa2, 0xaaa8, 0xaaaa,
};

/* Level index (0, 1, 2 for -1, 0, 1) of entry i of grid point g. */
static inline int grid_level(int g, int i)
{
    return IQ1_GRID[g] >> 2 * i & 3;
}

/* ========================================================================
 * Grid neighbours
 * ======================================================================== */

/* A group's levels L[0..7] as a base-3 number, L[0] least significant. */
static int ternary_code(const int8_t L[GROUP])
{
    int t = 0;
    for (int j = GROUP - 1; j >= 0; j--)
        t = 3 * t + L[j];
    return t;
}

/* code_grid[t]: the grid point whose levels have code t, -1 if none.
 * For an off-grid t, nb_list[nb_first[t] .. nb_first[t+1]) lists every
 * grid point at one of the three smallest squared distances from it,
 * ordered by distance, then by index (ggml's iq2xs_init_impl, which sorts
 * (distance, index) pairs — a total order, so no tie question). On-grid
 * codes have empty lists. */
static int16_t  code_grid[N_TERNARY];
static uint32_t nb_first[N_TERNARY + 1];
static uint16_t nb_list[N_NEIGHBOURS];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void build_tables(void)
{
    /* squared distance of two 4-level half-groups by their base-3 codes
     * (ggml measures on points 2g+1, four times these: same order) */
    static uint8_t dist4[81][81];
    for (int a = 0; a < 81; a++) {
        for (int b = 0; b < 81; b++) {
            int d = 0;
            for (int i = 0, ta = a, tb = b; i < 4; i++, ta /= 3, tb /= 3)
                d += (ta % 3 - tb % 3) * (ta % 3 - tb % 3);
            dist4[a][b] = (uint8_t)d;
        }
    }
    static uint8_t lo[N_GRID], hi[N_GRID];
    for (int t = 0; t < N_TERNARY; t++)
        code_grid[t] = -1;
    for (int g = 0; g < N_GRID; g++) {
        int8_t L[GROUP];
        for (int i = 0; i < GROUP; i++)
            L[i] = (int8_t)grid_level(g, i);
        const int t = ternary_code(L);
        code_grid[t] = (int16_t)g;
        lo[g] = (uint8_t)(t % 81);
        hi[g] = (uint8_t)(t / 81);
    }
    uint32_t pos = 0;
    for (int t = 0; t < N_TERNARY; t++) {
        nb_first[t] = pos;
        if (code_grid[t] >= 0)
            continue;
        const uint8_t *dlo = dist4[t % 81], *dhi = dist4[t / 81];
        uint8_t dist[N_GRID];
        uint32_t count[MAX_DIST + 1] = {0};
        for (int g = 0; g < N_GRID; g++) {
            dist[g] = (uint8_t)(dlo[lo[g]] + dhi[hi[g]]);
            count[dist[g]]++;
        }
        /* a counting sort by distance: where each kept shell starts */
        uint32_t next[MAX_DIST + 1];
        int shells = 0;
        for (int d = 0; d <= MAX_DIST; d++) {
            next[d] = UINT32_MAX;
            if (count[d] > 0 && shells < N_SHELLS) {
                next[d] = pos;
                pos += count[d];
                shells++;
            }
        }
        if (pos > N_NEIGHBOURS)
            abort(); /* cannot happen: the total is fixed by the grid */
        for (int g = 0; g < N_GRID; g++)
            if (next[dist[g]] != UINT32_MAX)
                nb_list[next[dist[g]]++] = (uint16_t)g;
    }
    nb_first[N_TERNARY] = pos;
    if (pos != N_NEIGHBOURS)
        abort();
}

/* ggml's iq1_find_best_neighbour2 for an off-grid group t: the neighbour
 * of least Σ w·(scale·lv[g] - x)², the first in list order on ties (strict
 * <). ggml aborts when none is below FLT_MAX (an overflow or NaN); here the
 * nearest neighbour is taken then. */
static int best_neighbour(int t, const float x[GROUP], const float w[GROUP], float scale,
                          const float lv[3])
{
    float best = FLT_MAX;
    int best_g = -1;
    for (uint32_t p = nb_first[t]; p < nb_first[t + 1]; p++) {
        const int g = nb_list[p];
        float d2 = 0.0f;
        for (int i = 0; i < GROUP; i++) {
            const float diff = scale * lv[grid_level(g, i)] - x[i];
            d2 += w[i] * diff * diff; /* (w·diff)·diff */
        }
        if (d2 < best) {
            best = d2;
            best_g = g;
        }
    }
    return best_g >= 0 ? best_g : nb_list[nb_first[t]];
}

/* ========================================================================
 * Shared block steps
 * ======================================================================== */

/* ggml's max of |x| over a block: m = m > |x| ? m : |x| from |x[0]|. */
static float block_absmax(const float *x, int n)
{
    float max = fabsf(x[0]);
    for (int i = 1; i < n; i++)
        max = max > fabsf(x[i]) ? max : fabsf(x[i]);
    return max;
}

typedef struct {
    float v;
    int   i;
} ranked;

/* glibc's qsort (msort_with_tmp) on ranked values with ggml's comparator
 * (-1, 1 or 0 on <, >, neither): halve, sort both halves, merge taking
 * from the left unless left > right. Stable, so equal values stay in index
 * order; replayed rather than called so the order is the same everywhere
 * (the comparator is not a total order on NaN). */
static void merge_sort(ranked *a, int n, ranked *tmp)
{
    if (n <= 1)
        return;
    int n1 = n / 2, n2 = n - n1;
    ranked *b1 = a, *b2 = a + n1, *t = tmp;
    merge_sort(b1, n1, tmp);
    merge_sort(b2, n2, tmp);
    while (n1 > 0 && n2 > 0) {
        if (!(b1->v > b2->v)) {
            *t++ = *b1++;
            n1--;
        } else {
            *t++ = *b2++;
            n2--;
        }
    }
    while (n1 > 0) {
        *t++ = *b1++;
        n1--;
    }
    /* what is left of the right half is already in place */
    memcpy(a, tmp, (size_t)(n - n2) * sizeof *a);
}

/* The indices of x[0..n-1] in ggml's sorted order. */
static void sort_block(const float *x, int n, int *order)
{
    ranked r[S_BLOCK], tmp[S_BLOCK];
    for (int j = 0; j < n; j++) {
        r[j].v = x[j];
        r[j].i = j;
    }
    merge_sort(r, n, tmp);
    for (int j = 0; j < n; j++)
        order[j] = r[j].i;
}

/* Levels L (0, 1, 2) of the block for cut points i1 ≤ i2 in sorted order. */
static void split_levels(const int *order, int n, int i1, int i2, int8_t *L)
{
    for (int j = 0; j < n; j++)
        L[order[j]] = (int8_t)(j < i1 ? 0 : j < i2 ? 1 : 2);
}

/* Step 3 for the groups of a block: each group's grid index, off-grid ones
 * replaced by their best neighbour at scale (group k uses levels lv[k]).
 * Returns true when every group was on the grid. */
static bool grid_indices(const float *xb, const float *w, const int8_t *L, int n_groups,
                         float scale, const float *const lv[], uint16_t *index)
{
    bool on_grid = true;
    for (int k = 0; k < n_groups; k++) {
        const int t = ternary_code(L + GROUP * k);
        int g = code_grid[t];
        if (g < 0) {
            on_grid = false;
            g = best_neighbour(t, xb + GROUP * k, w + GROUP * k, scale, lv[k]);
        }
        index[k] = (uint16_t)g;
    }
    return on_grid;
}

/* The least-squares scale Σ w·q·x / Σ w·q² of the block's grid points,
 * summed over all groups in order with products (w·q)·x and (w·q)·q; the
 * old scale unless both sums are positive. */
static float refit_scale(const float *xb, const float *w, int n_groups, const float *const lv[],
                         const uint16_t *index, float scale)
{
    float sumqx = 0.0f, sumq2 = 0.0f;
    for (int k = 0; k < n_groups; k++) {
        for (int j = 0; j < GROUP; j++) {
            const float wj = w[GROUP * k + j];
            const float q = lv[k][grid_level(index[k], j)];
            sumqx += wj * q * xb[GROUP * k + j];
            sumq2 += wj * q * q;
        }
    }
    return sumqx > 0.0f && sumq2 > 0.0f ? sumqx / sumq2 : scale;
}

/* The weights of a super-block (step 1); qw NULL: x². σ² is summed left to
 * right in float and formed as 2·Σx²/256 (as ggml). */
static void superblock_weights(const float *x, const float *qw, float w[GGUF_QK_K])
{
    if (!qw) {
        for (int i = 0; i < GGUF_QK_K; i++)
            w[i] = x[i] * x[i];
        return;
    }
    float sumx2 = 0.0f;
    for (int i = 0; i < GGUF_QK_K; i++)
        sumx2 += x[i] * x[i];
    const float sigma2 = 2.0f * sumx2 / (float)GGUF_QK_K;
    for (int i = 0; i < GGUF_QK_K; i++)
        w[i] = qw[i] * sqrtf(sigma2 + x[i] * x[i]);
}

/* Step 4's integer block scale: round((id·s - 1)/2) clamped to 0..7. */
static int block_scale_level(float id, float s)
{
    const int l = round_half_even(0.5f * (id * s - 1.0f));
    return l < 0 ? 0 : l > 7 ? 7 : l;
}

/* ========================================================================
 * iq1_s
 * ======================================================================== */

/* Steps 2-3 for one block of 32: false (nothing stored, index 0, shift
 * +δ) for an all-zero block or when no split fits. Otherwise the scale
 * (≥ 0) in *scale, the shift's sign in *neg, the four grid indices. */
static bool iq1_s_block(const float *xb, const float *w, float *scale_out, bool *neg,
                        uint16_t index[S_BLOCK / GROUP])
{
    const float max = block_absmax(xb, S_BLOCK);
    if (max < IQ1_S_EPS)
        return false;
    int order[S_BLOCK];
    sort_block(xb, S_BLOCK, order);
    /* prefix sums of w·x and w in sorted order: the split search's sums
     * are differences of these (ggml's sumx and sumw) */
    float sumx[S_BLOCK + 1], sumw[S_BLOCK + 1];
    sumx[0] = sumw[0] = 0.0f;
    for (int j = 0; j < S_BLOCK; j++) {
        const int i = order[j];
        sumx[j + 1] = sumx[j] + w[i] * xb[i];
        sumw[j + 1] = sumw[j] + w[i];
    }
    float best = -FLT_MAX, scale = max;
    int best1 = -1, best2 = -1, best_shift = 0;
    for (int i1 = 0; i1 <= S_BLOCK; i1++) {
        for (int i2 = i1; i2 <= S_BLOCK; i2++) {
            for (int s = 0; s < 2; s++) { /* +δ, then -δ */
                const float *lv = s ? LEVELS_NEG : LEVELS_POS;
                /* three terms added left to right, each (ΔS·lv) and
                 * (ΔW·lv)·lv, as ggml writes them */
                const float sumqx = (sumx[i1] - sumx[0]) * lv[0] +
                                    (sumx[i2] - sumx[i1]) * lv[1] +
                                    (sumx[S_BLOCK] - sumx[i2]) * lv[2];
                const float sumq2 = (sumw[i1] - sumw[0]) * lv[0] * lv[0] +
                                    (sumw[i2] - sumw[i1]) * lv[1] * lv[1] +
                                    (sumw[S_BLOCK] - sumw[i2]) * lv[2] * lv[2];
                /* (Σqx)²/Σq² beats the best, compared without dividing */
                if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    best1 = i1;
                    best2 = i2;
                    best_shift = s ? -1 : 1;
                }
            }
        }
    }
    if (best_shift == 0)
        return false;
    int8_t L[S_BLOCK];
    split_levels(order, S_BLOCK, best1, best2, L);
    if (scale < 0.0f) { /* mirror: -s·(g + δ) = s·(-g - δ) */
        for (int j = 0; j < S_BLOCK; j++)
            L[j] = (int8_t)(2 - L[j]);
        scale = -scale;
        best_shift = -best_shift;
    }
    const float *lv = best_shift == 1 ? LEVELS_POS : LEVELS_NEG;
    const float *const lvs[S_BLOCK / GROUP] = {lv, lv, lv, lv};
    if (!grid_indices(xb, w, L, S_BLOCK / GROUP, scale, lvs, index))
        scale = refit_scale(xb, w, S_BLOCK / GROUP, lvs, index, scale);
    *scale_out = scale;
    *neg = best_shift == -1;
    return true;
}

static void iq1_s_superblock(const float *x, const float *qw, gguf_block_iq1_s *b)
{
    memset(b, 0, sizeof *b); /* d = +0 */
    float w[GGUF_QK_K];
    superblock_weights(x, qw, w);
    float scales[GGUF_QK_K / S_BLOCK];
    bool neg[GGUF_QK_K / S_BLOCK];
    float max_scale = 0.0f;
    for (int ib = 0; ib < GGUF_QK_K / S_BLOCK; ib++) {
        uint16_t index[S_BLOCK / GROUP] = {0};
        scales[ib] = 0.0f;
        neg[ib] = false;
        if (!iq1_s_block(x + S_BLOCK * ib, w + S_BLOCK * ib, &scales[ib], &neg[ib], index))
            continue;
        uint16_t h = 0;
        for (int k = 0; k < S_BLOCK / GROUP; k++) {
            b->qs[(S_BLOCK / GROUP) * ib + k] = (uint8_t)(index[k] & 255);
            h |= (uint16_t)((index[k] >> 8) << 3 * k);
        }
        b->qh[ib] = h;
        max_scale = max_scale > scales[ib] ? max_scale : scales[ib];
    }
    if (max_scale == 0.0f)
        return;
    const float d = max_scale / 15.0f;
    b->d = gguf_f32_to_f16(d * 1.125f);
    const float id = 1.0f / d;
    for (int ib = 0; ib < GGUF_QK_K / S_BLOCK; ib++) {
        int l = block_scale_level(id, scales[ib]);
        if (neg[ib])
            l |= 8;
        b->qh[ib] |= (uint16_t)(l << 12);
    }
}

void gguf_iq1_s_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    pthread_once(&tables_once, build_tables);
    gguf_block_iq1_s *b = y;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++)
        iq1_s_superblock(x + i * GGUF_QK_K, qw + i * GGUF_QK_K, &b[i]);
}

void gguf_iq1_s_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_iq1_s *b = x;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        const float d = gguf_f16_to_f32(b[i].d);
        for (int ib = 0; ib < GGUF_QK_K / S_BLOCK; ib++) {
            const unsigned qh = b[i].qh[ib];
            const float dl = d * (float)(2 * (qh >> 12 & 7) + 1);
            const float delta = qh & 0x8000 ? -DELTA : DELTA;
            for (int k = 0; k < S_BLOCK / GROUP; k++, y += GROUP) {
                const int g = b[i].qs[(S_BLOCK / GROUP) * ib + k] | (int)(qh >> 3 * k & 7) << 8;
                for (int j = 0; j < GROUP; j++)
                    y[j] = dl * ((float)(grid_level(g, j) - 1) + delta);
            }
        }
    }
}

/* ========================================================================
 * iq1_m
 * ======================================================================== */

/* The four shift choices of an iq1_m block, numbered as ggml stores them:
 * bit 1 set = first group -δ, bit 0 set = second group -δ. */
static inline bool config_neg(int config, int group)
{
    return group == 0 ? config >> 1 & 1 : config & 1;
}

/* qh bits of a block's shift choice: 0x08 first group -δ, 0x80 second. */
static const uint8_t CONFIG_MASK[4] = {0x00, 0x80, 0x08, 0x88};

/* Steps 2-3 for one block of 16, as iq1_s_block, with one of four shift
 * choices (*config) instead of one sign.
 *
 * ggml forms each split's four sums afresh: over the sorted values in
 * order, the terms of level 0 (before i1), level 1 (i1 .. i2-1), level 2
 * (from i2). The sums of the first two runs are running prefixes in i1 and
 * then in i2, so they are carried along here; only the tail is added per
 * split. Every sum still sees the same terms in the same order. */
static bool iq1_m_block(const float *xb, const float *w, float *scale_out, int *config,
                        uint16_t index[M_BLOCK / GROUP])
{
    const float max = block_absmax(xb, M_BLOCK);
    if (max < IQ1_M_EPS)
        return false;
    int order[M_BLOCK];
    sort_block(xb, M_BLOCK, order);
    /* the terms ggml adds for sorted value j at level g with shift sign s:
     * (w·lv)·x and (w·lv)·lv */
    float tx[3][2][M_BLOCK], tq[3][2][M_BLOCK];
    int half[M_BLOCK]; /* which group of the block value j is in */
    for (int j = 0; j < M_BLOCK; j++) {
        const int i = order[j];
        half[j] = i >= GROUP;
        for (int g = 0; g < 3; g++) {
            tx[g][0][j] = w[i] * LEVELS_POS[g] * xb[i];
            tx[g][1][j] = w[i] * LEVELS_NEG[g] * xb[i];
            tq[g][0][j] = w[i] * LEVELS_POS[g] * LEVELS_POS[g];
            tq[g][1][j] = w[i] * LEVELS_NEG[g] * LEVELS_NEG[g];
        }
    }
    float best = -FLT_MAX, scale = max;
    int best1 = -1, best2 = -1, best_c = -1;
    float head_x[4] = {0}, head_q[4] = {0}; /* level-0 run, j < i1 */
    for (int i1 = 0; i1 <= M_BLOCK; i1++) {
        if (i1 > 0) {
            const int j = i1 - 1;
            for (int c = 0; c < 4; c++) {
                const int s = config_neg(c, half[j]);
                head_x[c] += tx[0][s][j];
                head_q[c] += tq[0][s][j];
            }
        }
        float mid_x[4], mid_q[4]; /* plus the level-1 run, i1 ≤ j < i2 */
        memcpy(mid_x, head_x, sizeof mid_x);
        memcpy(mid_q, head_q, sizeof mid_q);
        for (int i2 = i1; i2 <= M_BLOCK; i2++) {
            if (i2 > i1) {
                const int j = i2 - 1;
                for (int c = 0; c < 4; c++) {
                    const int s = config_neg(c, half[j]);
                    mid_x[c] += tx[1][s][j];
                    mid_q[c] += tq[1][s][j];
                }
            }
            for (int c = 0; c < 4; c++) {
                float sumqx = mid_x[c], sumq2 = mid_q[c];
                for (int j = i2; j < M_BLOCK; j++) { /* the level-2 tail */
                    const int s = config_neg(c, half[j]);
                    sumqx += tx[2][s][j];
                    sumq2 += tq[2][s][j];
                }
                if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    best1 = i1;
                    best2 = i2;
                    best_c = c;
                }
            }
        }
    }
    if (best_c < 0)
        return false;
    int8_t L[M_BLOCK];
    split_levels(order, M_BLOCK, best1, best2, L);
    if (scale < 0.0f) { /* mirror, flipping both signs */
        for (int j = 0; j < M_BLOCK; j++)
            L[j] = (int8_t)(2 - L[j]);
        scale = -scale;
        best_c = 3 - best_c;
    }
    const float *const lvs[M_BLOCK / GROUP] = {
        config_neg(best_c, 0) ? LEVELS_NEG : LEVELS_POS,
        config_neg(best_c, 1) ? LEVELS_NEG : LEVELS_POS,
    };
    if (!grid_indices(xb, w, L, M_BLOCK / GROUP, scale, lvs, index))
        scale = refit_scale(xb, w, M_BLOCK / GROUP, lvs, index, scale);
    *scale_out = scale;
    *config = best_c;
    return true;
}

static void iq1_m_superblock(const float *x, const float *qw, gguf_block_iq1_m *b)
{
    memset(b, 0, sizeof *b);
    float w[GGUF_QK_K];
    superblock_weights(x, qw, w);
    float scales[GGUF_QK_K / M_BLOCK];
    int configs[GGUF_QK_K / M_BLOCK];
    float max_scale = 0.0f;
    for (int ib = 0; ib < GGUF_QK_K / M_BLOCK; ib++) {
        uint16_t index[M_BLOCK / GROUP] = {0};
        scales[ib] = 0.0f;
        configs[ib] = 0;
        if (!iq1_m_block(x + M_BLOCK * ib, w + M_BLOCK * ib, &scales[ib], &configs[ib], index))
            continue;
        b->qs[2 * ib + 0] = (uint8_t)(index[0] & 255);
        b->qs[2 * ib + 1] = (uint8_t)(index[1] & 255);
        b->qh[ib] = (uint8_t)(index[0] >> 8 | (index[1] >> 8) << 4);
        max_scale = max_scale > scales[ib] ? max_scale : scales[ib];
    }
    if (max_scale == 0.0f)
        return;
    /* step 4: integer block scales, then d refitted to them over the whole
     * super-block, each block's grid points times 2l+1; sums in block,
     * group, value order with products (w·q)·x and (w·q)·q */
    float d = max_scale / 15.0f;
    const float id = 1.0f / d;
    uint16_t sc[4] = {0};
    float sumqx = 0.0f, sumq2 = 0.0f;
    for (int ib = 0; ib < GGUF_QK_K / M_BLOCK; ib++) {
        const int l = block_scale_level(id, scales[ib]);
        sc[ib / 4] |= (uint16_t)(l << 3 * (ib % 4));
        b->qh[ib] |= CONFIG_MASK[configs[ib]];
        const float m = (float)(2 * l + 1);
        for (int k = 0; k < M_BLOCK / GROUP; k++) {
            const float *lv = config_neg(configs[ib], k) ? LEVELS_NEG : LEVELS_POS;
            const int g = b->qs[2 * ib + k] | (b->qh[ib] >> 4 * k & 7) << 8;
            const float *xg = x + M_BLOCK * ib + GROUP * k;
            const float *wg = w + M_BLOCK * ib + GROUP * k;
            for (int j = 0; j < GROUP; j++) {
                const float q = lv[grid_level(g, j)] * m;
                sumqx += wg[j] * q * xg[j];
                sumq2 += wg[j] * q * q;
            }
        }
    }
    if (sumq2 > 0.0f)
        d = sumqx / sumq2;
    const uint16_t dh = gguf_f32_to_f16(d * 1.1125f);
    /* one nibble of d on top of each u16, least significant first */
    for (int k = 0; k < 4; k++) {
        sc[k] |= (uint16_t)((dh >> 4 * k & 0xF) << 12);
        b->scales[2 * k] = (uint8_t)(sc[k] & 0xFF);
        b->scales[2 * k + 1] = (uint8_t)(sc[k] >> 8);
    }
}

void gguf_iq1_m_quantize(const float *x, void *y, int64_t n)
{
    pthread_once(&tables_once, build_tables);
    gguf_block_iq1_m *b = y;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++)
        iq1_m_superblock(x + i * GGUF_QK_K, NULL, &b[i]);
}

/* The weights of super-block i are qw[256i ..], σ² the super-block's own. */
void gguf_iq1_m_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    pthread_once(&tables_once, build_tables);
    gguf_block_iq1_m *b = y;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++)
        iq1_m_superblock(x + i * GGUF_QK_K, qw + i * GGUF_QK_K, &b[i]);
}

void gguf_iq1_m_dequantize(const void *x, float *y, int64_t n)
{
    const gguf_block_iq1_m *b = x;
    for (int64_t i = 0; i < n / GGUF_QK_K; i++) {
        unsigned sc[4];
        for (int k = 0; k < 4; k++)
            sc[k] = (unsigned)(b[i].scales[2 * k] | b[i].scales[2 * k + 1] << 8);
        const gguf_half dh = (gguf_half)(sc[0] >> 12 | (sc[1] >> 8 & 0x00F0) |
                                         (sc[2] >> 4 & 0x0F00) | (sc[3] & 0xF000));
        const float d = gguf_f16_to_f32(dh);
        for (int ib = 0; ib < GGUF_QK_K / M_BLOCK; ib++) {
            const float dl = d * (float)(2 * (sc[ib / 4] >> 3 * (ib % 4) & 7) + 1);
            const unsigned qh = b[i].qh[ib];
            for (int k = 0; k < M_BLOCK / GROUP; k++, y += GROUP) {
                const float delta = qh >> 4 * k & 0x08 ? -DELTA : DELTA;
                const int g = b[i].qs[2 * ib + k] | (int)(qh >> 4 * k & 7) << 8;
                for (int j = 0; j < GROUP; j++)
                    y[j] = dl * ((float)(grid_level(g, j) - 1) + delta);
            }
        }
    }
}

/* ========================================================================
 * The grid as bytes (gguf_iq_grid): ggml's iq1s_grid, int8 -1, 0, 1
 * ======================================================================== */

static int8_t GRID_BYTES[N_GRID * 8];
static pthread_once_t bytes_once = PTHREAD_ONCE_INIT;

static void init_bytes(void)
{
    for (int k = 0; k < N_GRID; k++)
        for (int i = 0; i < 8; i++)
            GRID_BYTES[8 * k + i] = (int8_t)((IQ1_GRID[k] >> 2 * i & 3) - 1);
}

const uint8_t *gguf_iq1_grid_bytes(uint32_t *n)
{
    pthread_once(&bytes_once, init_bytes);
    *n = N_GRID;
    return (const uint8_t *)GRID_BYTES;
}
