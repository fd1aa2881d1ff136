/*
 * quants_iq2.c — the 2-bit lattice formats iq2_xxs, iq2_xs and iq2_s.
 *
 * All three code groups of 8 magnitudes as one point of a fixed grid, plus
 * sign bits, under per-group-of-16-or-32 scales and one f16 scale per
 * super-block of 256:
 *
 *   iq2_xxs  66 bytes: f16 d; per 32: four 8-bit indices into a 256-point
 *            grid, four 7-bit sign masks (the 8th sign makes the count of
 *            negatives even) and a 4-bit scale s: x ≈ d·(0.5+s)/4 · g · ±1
 *   iq2_xs   74 bytes: f16 d; per 8: 9-bit index into 512 points and a
 *            7-bit sign mask; a 4-bit scale per 16
 *   iq2_s    82 bytes: f16 d; per 8: 10-bit index into 1024 points, a full
 *            8-bit sign mask; a 4-bit scale per 16
 *
 * A grid point has 8 levels l in 0..3 (iq2_xxs and iq2_xs use 0..2), the
 * magnitudes 8, 25, 43, 62 when dequantized and 2l+1 while quantizing.
 * Quantizing (ggml's quantize_row_iq2_{xxs,xs,s}_impl): per group, fold
 * signs into the magnitudes (for the 7-bit masks flipping the least
 * important element back when the count of negatives is odd), try 13 or
 * 19 inverse scales, round each 8 to levels and, when that point is off
 * the grid, take the best of its precomputed nearest grid points; keep the
 * trial whose weighted least-squares scale removes the most error; redo
 * the groups that were off the grid at that scale; finally quantize the
 * group scales against d = max/31. The weights are the importance matrix
 * times sqrt(σ² + x²) (iq2_s without one: σ²/4 + x² with σ² doubled);
 * iq2_xxs and iq2_xs have no weight-less path in ggml.
 *
 * The neighbour lists: for a point not on the grid, the grid points at the
 * nwant smallest squared distances (2 for iq2_xxs/xs, 1 for iq2_s), in
 * order of distance then index — what ggml's iq2xs_init_impl builds, made
 * here once per grid (pthread_once) for the 3^8 points the searches can
 * reach instead of all 4^8.
 *
 * The bytes must be ggml's (quants.h): float arithmetic in ggml's order,
 * no fused multiply-add, first-found on ties.
 *
 * Not for: iq1 and iq3 (their own grids, quants_iq1.c, quants_iq3.c).
 */
#include <float.h>
#include <stddef.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "quants_impl.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define QK 256
#define MAX_Q 3 /* kMaxQ: levels 0..2 in the searches */

/* The grids as 8 two-bit levels each (element i in bits 2i, 2i+1): the
 * points of ggml's iq2xxs_grid, iq2xs_grid and iq2s_grid, whose bytes are
 * the levels' magnitudes 8, 25, 43, 62. */
static const uint16_t CODES_XXS[256] = {
        0,     2,     5,     8,    10,    17,    20,    32,    34,    40,    42,    65,
       68,    80,    88,    97,   100,   128,   130,   138,   162,   257,   260,   272,
      277,   320,   388,   408,   512,   514,   546,   642,  1025,  1028,  1040,  1057,
     1060,  1088,  1090,  1096,  1120,  1153,  1156,  1168,  1188,  1280,  1282,  1288,
     1312,  1350,  1385,  1408,  1425,  1545,  1552,  1600,  1668,  1700,  2048,  2053,
     2056,  2068,  2088,  2113,  2116,  2128,  2130,  2184,  2308,  2368,  2562,  2580,
     4097,  4100,  4112,  4129,  4160,  4192,  4228,  4240,  4245,  4352,  4360,  4384,
     4432,  4442,  4480,  4644,  4677,  5120,  5128,  5152,  5157,  5193,  5248,  5400,
     5474,  5632,  5654,  6145,  6148,  6160,  6208,  6273,  6400,  6405,  6560,  6737,
     8192,  8194,  8202,  8260,  8289,  8320,  8322,  8489,  8520,  8704,  8706,  9217,
     9220,  9232,  9280,  9302,  9472,  9537,  9572,  9872, 10248, 10272, 10388, 10820,
    16385, 16388, 16400, 16408, 16417, 16420, 16448, 16456, 16470, 16480, 16513, 16516,
    16528, 16640, 16672, 16737, 16768, 16773, 16897, 16912, 16968, 16982, 17000, 17408,
    17416, 17440, 17536, 17561, 17682, 17700, 17920, 18433, 18436, 18448, 18496, 18501,
    18688, 18776, 18785, 18818, 19013, 19088, 20480, 20488, 20497, 20505, 20512, 20608,
    20616, 20740, 20802, 20900, 21137, 21648, 21650, 21770, 22017, 22100, 22528, 22545,
    22553, 22628, 22848, 23048, 24580, 24592, 24640, 24680, 24832, 24917, 25112, 25184,
    25600, 25605, 25872, 25874, 25988, 26690, 32768, 32770, 32778, 32833, 32898, 33028,
    33048, 33088, 33297, 33793, 33796, 33808, 33813, 33856, 33888, 34048, 34118, 34196,
    34313, 34368, 34400, 34818, 35076, 35345, 36868, 36880, 36900, 36928, 37025, 37142,
    37248, 37445, 37888, 37922, 37956, 38225, 39041, 39200, 40962, 41040, 41093, 41225,
    41472, 42008, 43088, 43268,
};
static const uint16_t CODES_XS[512] = {
        0,     2,     5,     8,    10,    17,    20,    22,    25,    32,    34,    37,
       40,    65,    68,    70,    73,    80,    82,    85,    88,    97,   100,   128,
      130,   133,   136,   145,   148,   153,   160,   257,   260,   262,   265,   272,
      274,   277,   280,   282,   289,   292,   320,   322,   325,   328,   337,   340,
      352,   360,   385,   388,   400,   512,   514,   517,   520,   529,   532,   544,
      577,   580,   592,   597,   640,   650,  1025,  1028,  1030,  1033,  1040,  1042,
     1045,  1048,  1057,  1060,  1088,  1090,  1093,  1096,  1105,  1108,  1110,  1120,
     1153,  1156,  1168,  1280,  1282,  1285,  1288,  1297,  1300,  1312,  1345,  1348,
     1360,  1377,  1408,  1537,  1540,  1552,  1574,  1600,  1602,  1668,  2048,  2050,
     2053,  2056,  2058,  2065,  2068,  2080,  2085,  2113,  2116,  2128,  2136,  2176,
     2208,  2218,  2305,  2308,  2320,  2368,  2433,  2441,  2560,  2592,  2600,  2710,
     2720,  4097,  4100,  4102,  4105,  4112,  4114,  4117,  4120,  4129,  4132,  4160,
     4162,  4165,  4168,  4177,  4180,  4192,  4202,  4225,  4228,  4240,  4352,  4354,
     4357,  4360,  4369,  4372,  4384,  4417,  4420,  4432,  4480,  4500,  4502,  4609,
     4612,  4614,  4624,  4672,  4704,  5120,  5122,  5125,  5128,  5137,  5140,  5152,
     5185,  5188,  5193,  5200,  5220,  5248,  5377,  5380,  5392,  5440,  5632,  5652,
     5705,  6145,  6148,  6160,  6162,  6208,  6228,  6278,  6400,  6405,  6502,  6737,
     6825,  8192,  8194,  8197,  8200,  8202,  8209,  8212,  8224,  8257,  8260,  8272,
     8320,  8352,  8449,  8452,  8464,  8512,  8520,  8549,  8704,  8738,  8832,  8872,
     9217,  9220,  9232,  9257,  9280,  9472,  9537,  9554,  9625,  9729,  9754,  9894,
    10240, 10248, 10250, 10272, 10325, 10376, 10402, 10600, 10640, 10760, 10784, 10882,
    10888, 10890, 16385, 16388, 16390, 16393, 16400, 16402, 16405, 16408, 16417, 16420,
    16448, 16450, 16453, 16456, 16458, 16465, 16468, 16480, 16485, 16513, 16516, 16528,
    16640, 16642, 16645, 16648, 16657, 16660, 16672, 16705, 16708, 16720, 16768, 16773,
    16802, 16897, 16900, 16912, 16914, 16937, 16960, 17408, 17410, 17413, 17416, 17425,
    17428, 17433, 17440, 17473, 17476, 17488, 17536, 17556, 17665, 17668, 17680, 17700,
    17728, 17818, 17920, 17930, 17988, 18000, 18433, 18436, 18448, 18496, 18501, 18516,
    18530, 18688, 18705, 18756, 18768, 18793, 18948, 20480, 20482, 20485, 20488, 20497,
    20500, 20512, 20520, 20545, 20548, 20560, 20608, 20737, 20740, 20752, 20757, 20800,
    20802, 20992, 21060, 21162, 21505, 21508, 21520, 21537, 21568, 21600, 21633, 21665,
    21760, 21768, 21888, 21896, 22049, 22120, 22177, 22528, 22548, 22593, 22608, 22681,
    22810, 22848, 22850, 23173, 24577, 24580, 24592, 24640, 24660, 24674, 24710, 24745,
    24832, 25124, 25162, 25234, 25600, 25622, 25872, 25920, 25925, 26020, 26625, 26730,
    26917, 27142, 27220, 27234, 32768, 32770, 32773, 32776, 32785, 32788, 32800, 32810,
    32833, 32836, 32848, 32896, 32898, 32936, 32938, 33025, 33028, 33030, 33040, 33088,
    33105, 33113, 33280, 33312, 33408, 33410, 33440, 33448, 33793, 33796, 33808, 33810,
    33813, 33856, 33888, 33929, 34048, 34116, 34213, 34328, 34410, 34816, 34824, 34853,
    34906, 34944, 34946, 34984, 35078, 35362, 35456, 35464, 35478, 35496, 36865, 36868,
    36880, 36928, 36950, 36996, 37120, 37154, 37220, 37462, 37513, 37888, 37893, 37956,
    37968, 37976, 38185, 38288, 38290, 38465, 38993, 39078, 39241, 39445, 39520, 40960,
    40962, 40968, 40970, 40992, 41002, 41120, 41297, 41305, 41382, 41472, 41474, 41480,
    41514, 41600, 41632, 42048, 42133, 42597, 42648, 43018, 43040, 43042, 43048, 43168,
    43176, 43268, 43396, 43398, 43560, 43562, 43665, 43690,
};
static const uint16_t CODES_S[1024] = {
        0,     2,     5,     8,    10,    17,    20,    22,    25,    32,    34,    37,
       40,    65,    68,    70,    73,    80,    82,    85,    88,    97,   100,   102,
      105,   128,   130,   133,   136,   145,   148,   160,   165,   170,   257,   260,
      262,   265,   272,   274,   277,   280,   289,   292,   320,   322,   325,   328,
      337,   340,   342,   345,   352,   357,   360,   385,   388,   400,   402,   405,
      417,   420,   512,   514,   517,   520,   529,   532,   544,   554,   577,   580,
      582,   585,   592,   597,   640,   645,   650,   660,   674,  1025,  1028,  1030,
     1033,  1040,  1042,  1045,  1048,  1057,  1060,  1062,  1065,  1088,  1090,  1093,
     1096,  1098,  1105,  1108,  1110,  1113,  1120,  1122,  1125,  1153,  1156,  1158,
     1161,  1168,  1173,  1176,  1185,  1188,  1280,  1282,  1285,  1288,  1290,  1297,
     1300,  1302,  1305,  1312,  1317,  1320,  1345,  1348,  1350,  1353,  1360,  1362,
     1365,  1368,  1377,  1380,  1408,  1410,  1413,  1416,  1425,  1428,  1440,  1537,
     1540,  1542,  1545,  1552,  1557,  1600,  1605,  1608,  1617,  1620,  1632,  1665,
     1668,  1680,  2048,  2050,  2053,  2056,  2065,  2068,  2070,  2073,  2080,  2085,
     2090,  2113,  2116,  2118,  2121,  2128,  2130,  2133,  2136,  2145,  2148,  2176,
     2181,  2196,  2218,  2305,  2308,  2320,  2322,  2325,  2328,  2337,  2368,  2373,
     2376,  2385,  2388,  2400,  2433,  2448,  2560,  2577,  2580,  2594,  2600,  2602,
     2640,  2713,  4097,  4100,  4102,  4105,  4112,  4114,  4117,  4120,  4129,  4132,
     4134,  4160,  4162,  4165,  4168,  4177,  4180,  4182,  4185,  4192,  4194,  4197,
     4200,  4225,  4228,  4230,  4240,  4245,  4248,  4257,  4260,  4352,  4354,  4357,
     4360,  4362,  4369,  4372,  4374,  4377,  4384,  4386,  4389,  4392,  4417,  4420,
     4422,  4425,  4432,  4434,  4437,  4440,  4449,  4452,  4480,  4482,  4485,  4488,
     4497,  4500,  4609,  4612,  4617,  4624,  4629,  4641,  4644,  4672,  4677,  4689,
     4692,  4737,  4740,  4752,  5120,  5122,  5125,  5128,  5137,  5140,  5142,  5145,
     5152,  5157,  5160,  5185,  5188,  5190,  5193,  5200,  5202,  5205,  5208,  5217,
     5220,  5248,  5250,  5253,  5256,  5265,  5268,  5280,  5377,  5380,  5382,  5385,
     5392,  5394,  5397,  5400,  5409,  5412,  5440,  5442,  5445,  5448,  5457,  5460,
     5472,  5505,  5508,  5520,  5632,  5637,  5640,  5649,  5652,  5664,  5697,  5700,
     5712,  5760,  5802,  6145,  6148,  6150,  6153,  6160,  6165,  6168,  6177,  6208,
     6210,  6213,  6216,  6225,  6228,  6240,  6273,  6276,  6400,  6402,  6405,  6408,
     6417,  6420,  6432,  6465,  6468,  6480,  6505,  6562,  6660,  6672,  6720,  6742,
     8192,  8194,  8197,  8200,  8209,  8212,  8214,  8217,  8224,  8229,  8234,  8257,
     8260,  8272,  8274,  8277,  8292,  8320,  8330,  8340,  8362,  8449,  8452,  8464,
     8466,  8469,  8481,  8512,  8514,  8517,  8529,  8532,  8544,  8577,  8580,  8592,
     8704,  8714,  8738,  8744,  8746,  8772,  8784,  8840,  8842,  8872,  9217,  9220,
     9222,  9225,  9232,  9237,  9240,  9249,  9252,  9280,  9282,  9285,  9288,  9297,
     9300,  9312,  9345,  9348,  9360,  9472,  9477,  9480,  9489,  9492,  9504,  9537,
     9540,  9552,  9574,  9600,  9729,  9732,  9744,  9792,  9817, 10240, 10245, 10257,
    10260, 10305, 10308, 10320, 10378, 10410, 10497, 10500, 10512, 10645, 10762, 10786,
    10852, 10888, 10890, 16385, 16388, 16390, 16393, 16400, 16402, 16405, 16408, 16410,
    16417, 16420, 16422, 16448, 16450, 16453, 16456, 16458, 16465, 16468, 16470, 16473,
    16480, 16482, 16485, 16513, 16516, 16528, 16533, 16536, 16545, 16548, 16640, 16642,
    16645, 16648, 16657, 16660, 16662, 16665, 16672, 16674, 16677, 16705, 16708, 16710,
    16713, 16720, 16722, 16725, 16728, 16737, 16740, 16768, 16770, 16773, 16776, 16785,
    16788, 16800, 16897, 16900, 16912, 16914, 16917, 16920, 16932, 16960, 16965, 16968,
    16977, 16980, 16992, 17025, 17028, 17408, 17410, 17413, 17416, 17418, 17425, 17428,
    17430, 17433, 17440, 17442, 17445, 17448, 17473, 17476, 17478, 17481, 17488, 17490,
    17493, 17496, 17505, 17508, 17536, 17538, 17541, 17544, 17553, 17556, 17568, 17665,
    17668, 17670, 17673, 17680, 17682, 17685, 17688, 17697, 17700, 17728, 17730, 17733,
    17736, 17745, 17748, 17760, 17770, 17793, 17796, 17808, 17920, 17922, 17925, 17928,
    17937, 17940, 17952, 17985, 17988, 18000, 18048, 18085, 18433, 18436, 18441, 18448,
    18450, 18453, 18456, 18465, 18468, 18496, 18498, 18501, 18504, 18513, 18516, 18528,
    18564, 18576, 18688, 18690, 18693, 18696, 18705, 18708, 18720, 18753, 18756, 18768,
    18816, 18838, 18945, 18948, 18960, 19008, 20480, 20482, 20485, 20488, 20497, 20500,
    20502, 20505, 20512, 20514, 20517, 20520, 20545, 20548, 20550, 20553, 20560, 20562,
    20565, 20568, 20577, 20580, 20608, 20610, 20613, 20616, 20625, 20628, 20737, 20740,
    20742, 20745, 20752, 20754, 20757, 20760, 20769, 20772, 20800, 20802, 20805, 20808,
    20817, 20820, 20832, 20865, 20868, 20880, 20992, 20997, 21000, 21009, 21012, 21024,
    21057, 21060, 21072, 21097, 21120, 21505, 21508, 21510, 21513, 21520, 21522, 21525,
    21528, 21537, 21540, 21568, 21570, 21573, 21576, 21585, 21588, 21600, 21633, 21636,
    21648, 21760, 21762, 21765, 21768, 21777, 21780, 21792, 21825, 21828, 21840, 21888,
    22017, 22020, 22032, 22054, 22080, 22528, 22530, 22533, 22536, 22545, 22548, 22560,
    22593, 22596, 22608, 22618, 22656, 22785, 22788, 22800, 22848, 23040, 23065, 23173,
    23208, 24577, 24580, 24582, 24592, 24594, 24597, 24600, 24609, 24612, 24640, 24645,
    24648, 24657, 24660, 24672, 24708, 24720, 24832, 24834, 24837, 24840, 24849, 24852,
    24864, 24897, 24900, 24912, 24960, 24985, 25092, 25104, 25152, 25174, 25249, 25600,
    25605, 25608, 25617, 25620, 25632, 25665, 25668, 25680, 25728, 25857, 25860, 25872,
    25920, 25930, 25960, 26002, 26112, 26260, 26625, 26628, 26640, 26725, 26776, 26880,
    26922, 27202, 27297, 32768, 32770, 32773, 32776, 32785, 32788, 32793, 32800, 32805,
    32833, 32836, 32848, 32850, 32853, 32856, 32865, 32896, 32901, 32913, 32916, 33025,
    33028, 33033, 33040, 33042, 33045, 33048, 33057, 33060, 33088, 33090, 33093, 33096,
    33105, 33108, 33153, 33156, 33168, 33193, 33280, 33285, 33290, 33297, 33300, 33345,
    33348, 33360, 33793, 33796, 33798, 33801, 33808, 33810, 33813, 33816, 33825, 33856,
    33858, 33861, 33864, 33873, 33876, 33888, 33921, 33924, 33936, 34048, 34050, 34053,
    34056, 34065, 34068, 34080, 34113, 34116, 34128, 34176, 34186, 34305, 34308, 34320,
    34345, 34368, 34816, 34821, 34833, 34836, 34881, 34884, 34896, 34978, 35073, 35076,
    35136, 35173, 35362, 35416, 35418, 35458, 35490, 36865, 36868, 36873, 36880, 36882,
    36885, 36888, 36900, 36928, 36930, 36933, 36936, 36945, 36948, 36960, 36993, 36996,
    37008, 37120, 37125, 37137, 37140, 37185, 37188, 37200, 37210, 37377, 37380, 37392,
    37440, 37542, 37888, 37890, 37893, 37896, 37905, 37908, 37920, 37953, 37956, 37968,
    38016, 38038, 38145, 38148, 38160, 38208, 38296, 38305, 38400, 38470, 38500, 38913,
    38916, 38928, 38950, 38976, 39081, 39168, 39241, 39250, 39568, 40960, 40965, 40970,
    40980, 40994, 41002, 41025, 41028, 41040, 41122, 41130, 41280, 41317, 41474, 41482,
    41506, 41512, 41514, 41602, 41608, 41610, 41640, 41985, 41988, 42000, 42048, 42121,
    42148, 42240, 42265, 42577, 43018, 43048, 43170, 43348, 43398, 43528, 43530, 43552,
    43554, 43560, 43656, 43690,
};

static const uint8_t MAGNITUDE[4] = { 0x08, 0x19, 0x2b, 0x3e };

/* ------------------------------------------------------------------------
 * Grids, maps and neighbour lists
 * ------------------------------------------------------------------------ */

#define N_CODES 65536 /* 8 two-bit levels */

typedef struct grid {
    const uint16_t *codes;
    int             size, nwant;
    pthread_once_t  once;
    int32_t        *map;        /* code → index ≥ 0, or -(offset + 1) into neighbours */
    uint16_t       *neighbours; /* count, then that many grid indices; 8 zeros after the last */
    bool            failed;     /* out of memory at init */
    int32_t        *codes32;    /* codes[] widened, for AVX2 gathers */
} grid;

static grid GRID_XXS = { CODES_XXS, 256, 2, PTHREAD_ONCE_INIT, NULL, NULL, false, NULL };
static grid GRID_XS = { CODES_XS, 512, 2, PTHREAD_ONCE_INIT, NULL, NULL, false, NULL };
static grid GRID_S = { CODES_S, 1024, 1, PTHREAD_ONCE_INIT, NULL, NULL, false, NULL };

static int level_of(uint16_t code, int i) { return (code >> 2 * i) & 3; }

/* Whether every level of code is at most MAX_Q - 1: the codes the
 * searches produce. */
static bool reachable(int code)
{
    for (int i = 0; i < 8; i++)
        if (level_of((uint16_t)code, i) > MAX_Q - 1)
            return false;
    return true;
}

/* Fills out[] with the grid points at the g->nwant smallest distances from
 * code, nearest first and by index among equals (ggml sorts (d², index)
 * pairs); returns their count. */
static int nearest_points(const grid *g, int code, int *d2, uint16_t *out)
{
    int best[3] = { INT32_MAX, INT32_MAX, INT32_MAX }; /* the nwant smallest distinct d² */
    for (int j = 0; j < g->size; j++) {
        int d = 0;
        for (int i = 0; i < 8; i++) {
            /* ggml's points are 2l+1 */
            int diff = (2 * level_of(g->codes[j], i) + 1) - (2 * level_of((uint16_t)code, i) + 1);
            d += diff * diff;
        }
        d2[j] = d;
        for (int k = 0; k < g->nwant; k++) {
            if (d == best[k])
                break;
            if (d < best[k]) {
                memmove(best + k + 1, best + k, (size_t)(g->nwant - 1 - k) * sizeof *best);
                best[k] = d;
                break;
            }
        }
    }
    int n = 0;
    for (int k = 0; k < g->nwant && best[k] != INT32_MAX; k++)
        for (int j = 0; j < g->size; j++)
            if (d2[j] == best[k])
                out[n++] = (uint16_t)j;
    return n;
}

static void init_grid(grid *g)
{
    int *d2 = malloc((size_t)g->size * sizeof *d2);
    uint16_t *near = malloc((size_t)g->size * sizeof *near);
    g->map = malloc(N_CODES * sizeof *g->map);
    g->codes32 = malloc((size_t)g->size * sizeof *g->codes32);
    size_t cap = 0, used = 0;
    if (!d2 || !near || !g->map || !g->codes32)
        goto fail;
    for (int j = 0; j < g->size; j++)
        g->codes32[j] = g->codes[j];
    for (int c = 0; c < N_CODES; c++)
        g->map[c] = INT32_MIN; /* unreachable: never looked up */
    for (int j = 0; j < g->size; j++)
        g->map[g->codes[j]] = j;
    for (int c = 0; c < N_CODES; c++) {
        if (g->map[c] >= 0 || !reachable(c))
            continue;
        int n = nearest_points(g, c, d2, near);
        if (used + (size_t)n + 1 + 8 > cap) { /* 8 spare for the lanes' loads */
            size_t ncap = cap ? 2 * cap : 65536;
            uint16_t *more = realloc(g->neighbours, ncap * sizeof *more);
            if (!more)
                goto fail;
            g->neighbours = more;
            cap = ncap;
        }
        g->map[c] = -(int32_t)used - 1;
        g->neighbours[used++] = (uint16_t)n;
        memcpy(g->neighbours + used, near, (size_t)n * sizeof *near);
        used += (size_t)n;
    }
    if (g->neighbours)
        memset(g->neighbours + used, 0, 8 * sizeof *g->neighbours);
    free(d2);
    free(near);
    return;
fail:
    free(d2);
    free(near);
    g->failed = true;
}

static void init_xxs(void) { init_grid(&GRID_XXS); }
static void init_xs(void) { init_grid(&GRID_XS); }
static void init_s(void) { init_grid(&GRID_S); }

/* The grid, initialized; NULL when its tables could not be allocated. */
static const grid *get_grid(grid *g, void (*init)(void))
{
    pthread_once(&g->once, init);
    return g->failed ? NULL : g;
}

/* ------------------------------------------------------------------------
 * The search
 * ------------------------------------------------------------------------ */

/* ggml's iq2_find_best_neighbour: of the neighbour list of an off-grid
 * point, the grid point of least weighted error for these 8 magnitudes at
 * scale; its levels go to L. Returns its index. */
static int best_neighbour(const grid *g, const uint16_t *list, const float *xval, const float *w,
                          float scale, int8_t *L)
{
    float best = FLT_MAX;
    int index = list[1];
    for (int j = 1; j <= list[0]; j++) {
        const uint16_t code = g->codes[list[j]];
        float d2 = 0.0f;
        for (int i = 0; i < 8; i++) {
            float q = (float)(2 * level_of(code, i) + 1);
            float diff = scale * q - xval[i];
            d2 += w[i] * diff * diff;
        }
        if (d2 < best) {
            best = d2;
            index = list[j];
        }
    }
    for (int i = 0; i < 8; i++)
        L[i] = (int8_t)level_of(g->codes[index], i);
    return index;
}

/* Levels of 8 magnitudes at inverse scale id: round((id·x - 1)/2) clamped
 * to 0..MAX_Q-1, as a code. */
static uint16_t round_group(const float *xval, float id, int8_t *L)
{
    uint16_t u = 0;
    for (int i = 0; i < 8; i++) {
        int l = round_half_even(0.5f * (id * xval[i] - 1));
        l = l < 0 ? 0 : l > MAX_Q - 1 ? MAX_Q - 1 : l;
        L[i] = (int8_t)l;
        u |= (uint16_t)(l << 2 * i);
    }
    return u;
}

static bool snap_group_scalar(const grid *g, const float *xval, const float *waux, float id,
                              float scale, int8_t *L)
{
    uint16_t u = round_group(xval, id, L);
    if (g->map[u] >= 0)
        return true;
    best_neighbour(g, g->neighbours - g->map[u] - 1, xval, waux, scale, L);
    return false;
}

/* ------------------------------------------------------------------------
 * AVX2: round_group on 8 elements at once and best_neighbour on 8
 * neighbours at once (one per lane), each lane doing exactly the scalar
 * float operations in the scalar order (no fused multiply-add), the
 * first-minimum chosen with the scalar tie rule (strictly less keeps the
 * earlier neighbour). gguf_quants_force_scalar(true) keeps the scalar code,
 * which the tests hold these to.
 * ------------------------------------------------------------------------ */
#if GGUF_X86
#include <immintrin.h>

#define LANE_FN static inline __attribute__((always_inline)) GGUF_TARGET_AVX2

LANE_FN uint16_t round_group8(const float *xval, float id, int8_t *L)
{
    const __m256 x = _mm256_loadu_ps(xval);
    const __m256 v = _mm256_mul_ps(_mm256_set1_ps(0.5f),
                                   _mm256_sub_ps(_mm256_mul_ps(_mm256_set1_ps(id), x),
                                                 _mm256_set1_ps(1.0f)));
    const __m256i bits = _mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(12582912.0f)));
    __m256i l = _mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)),
                                 _mm256_set1_epi32(0x00400000));
    l = _mm256_min_epi32(_mm256_max_epi32(l, _mm256_setzero_si256()), _mm256_set1_epi32(MAX_Q - 1));
    const __m256i b = _mm256_shuffle_epi8(
        l, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8,
                            12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
    uint64_t x8 = (uint64_t)(uint32_t)_mm_cvtsi128_si32(_mm256_castsi256_si128(b)) |
                  (uint64_t)(uint32_t)_mm_cvtsi128_si32(_mm256_extracti128_si256(b, 1)) << 32;
    memcpy(L, &x8, 8);
    x8 = (x8 | x8 >> 6) & 0x000F000F000F000Full;
    x8 = (x8 | x8 >> 12) & 0x000000FF000000FFull;
    x8 = (x8 | x8 >> 24) & 0xFFFFull;
    return (uint16_t)x8;
}

/* The neighbour's d² is a left-to-right sum over i of terms that depend
 * only on i and the neighbour's level l there: w[i]·(scale·q - x[i])² with
 * q = 2l+1. So each term is computed once per level (lane l of t[i], the
 * scalar's operations exactly) and each lane (a neighbour) picks its term
 * by its level, adding in the scalar order. */
LANE_FN void best_neighbour8(const grid *g, const uint16_t *list, const float *xval,
                             const float *w, float scale, int8_t *L)
{
    const int n = list[0];
    const __m256 sq = _mm256_mul_ps(_mm256_set1_ps(scale),
                                    _mm256_setr_ps(1.0f, 3.0f, 5.0f, 7.0f, 1.0f, 1.0f, 1.0f, 1.0f));
    __m256 t[8];
    for (int i = 0; i < 8; i++) {
        const __m256 diff = _mm256_sub_ps(sq, _mm256_set1_ps(xval[i]));
        t[i] = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(w[i]), diff), diff);
    }
    const __m256i three = _mm256_set1_epi32(3);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i vn = _mm256_set1_epi32(n);
    __m256 best = _mm256_set1_ps(FLT_MAX);
    __m256i bpos = _mm256_set1_epi32(INT32_MAX);
    for (int j = 0; j < n; j += 8) {
        const __m256i pos = _mm256_add_epi32(_mm256_set1_epi32(j), lane);
        const __m256i valid = _mm256_cmpgt_epi32(vn, pos);
        __m256i idx = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(list + 1 + j)));
        idx = _mm256_and_si256(idx, valid);
        __m256i code = _mm256_i32gather_epi32(g->codes32, idx, 4);
        __m256 d2 = _mm256_setzero_ps();
        for (int i = 0; i < 8; i++) {
            d2 = _mm256_add_ps(d2, _mm256_permutevar8x32_ps(t[i], _mm256_and_si256(code, three)));
            code = _mm256_srli_epi32(code, 2);
        }
        const __m256 lt = _mm256_and_ps(_mm256_cmp_ps(d2, best, _CMP_LT_OQ), _mm256_castsi256_ps(valid));
        best = _mm256_blendv_ps(best, d2, lt);
        bpos = _mm256_castps_si256(
            _mm256_blendv_ps(_mm256_castsi256_ps(bpos), _mm256_castsi256_ps(pos), lt));
    }
    /* The least d² (no NaN can be in best), then the first position with it. */
    __m256 m = _mm256_min_ps(best, _mm256_permute2f128_ps(best, best, 1));
    m = _mm256_min_ps(m, _mm256_shuffle_ps(m, m, 0x4E));
    m = _mm256_min_ps(m, _mm256_shuffle_ps(m, m, 0xB1));
    const __m256i eq = _mm256_castps_si256(_mm256_cmp_ps(best, m, _CMP_EQ_OQ));
    __m256i p = _mm256_blendv_epi8(_mm256_set1_epi32(INT32_MAX), bpos, eq);
    p = _mm256_min_epi32(p, _mm256_permute2x128_si256(p, p, 1));
    p = _mm256_min_epi32(p, _mm256_shuffle_epi32(p, 0x4E));
    p = _mm256_min_epi32(p, _mm256_shuffle_epi32(p, 0xB1));
    const int32_t pmin = _mm256_cvtsi256_si32(p);
    const int index = list[1 + (pmin == INT32_MAX ? 0 : pmin)];
    for (int i = 0; i < 8; i++)
        L[i] = (int8_t)level_of(g->codes[index], i);
}

GGUF_TARGET_AVX2 static bool snap_group_avx2(const grid *g, const float *xval, const float *waux,
                                             float id, float scale, int8_t *L)
{
    uint16_t u = round_group8(xval, id, L);
    if (g->map[u] >= 0)
        return true;
    best_neighbour8(g, g->neighbours - g->map[u] - 1, xval, waux, scale, L);
    return false;
}

static bool use_lanes(void)
{
    return gguf_cpu_avx2() && !gguf_quants_scalar_forced();
}
#else
static bool use_lanes(void) { return false; }
static bool snap_group_avx2(const grid *g, const float *xval, const float *waux, float id,
                            float scale, int8_t *L)
{
    return snap_group_scalar(g, xval, waux, id, scale, L);
}
#endif

/* Rounds 8 magnitudes at id and puts them on the grid (the best neighbour
 * at scale when off it). Returns whether they were on it. fast: the AVX2
 * path (use_lanes()). */
static inline bool snap_group(const grid *g, bool fast, const float *xval, const float *waux,
                              float id, float scale, int8_t *L)
{
    return fast ? snap_group_avx2(g, xval, waux, id, scale, L)
                : snap_group_scalar(g, xval, waux, id, scale, L);
}

/* The grid index of 8 levels (on the grid by construction). */
static int index_of(const grid *g, const int8_t *L)
{
    uint16_t u = 0;
    for (int i = 0; i < 8; i++)
        u |= (uint16_t)(L[i] << 2 * i);
    return g->map[u];
}

/* Σ w·x·q and Σ w·q² over n magnitudes with levels L (q = 2l+1). */
static void fit(int n, const float *xval, const float *w, const int8_t *L, float *sumqx, float *sumq2)
{
    float qx = 0.0f, q2 = 0.0f;
    for (int i = 0; i < n; i++) {
        float q = (float)(2 * L[i] + 1);
        qx += w[i] * xval[i] * q;
        q2 += w[i] * q * q;
    }
    *sumqx = qx;
    *sumq2 = q2;
}

/* Folds the signs of 8 values into magnitudes. With parity (7-bit masks)
 * an odd count of negatives flips the element of least w·x² back to its
 * signed value. Returns the sign mask. */
static uint8_t fold_signs(const float *xb, const float *w, float *xval, bool parity)
{
    int nflip = 0;
    uint8_t s = 0;
    for (int i = 0; i < 8; i++) {
        if (xb[i] >= 0) {
            xval[i] = xb[i];
        } else {
            xval[i] = -xb[i];
            nflip++;
            s |= (uint8_t)(1u << i);
        }
    }
    if (parity && nflip % 2) {
        int imin = 0;
        float min = w[0] * xb[0] * xb[0];
        for (int i = 1; i < 8; i++) {
            float ax = w[i] * xb[i] * xb[i];
            if (ax < min) {
                min = ax;
                imin = i;
            }
        }
        xval[imin] = -xval[imin];
        s ^= (uint8_t)(1u << imin);
    }
    return parity ? s & 127 : s;
}

static float sum_squares(const float *x)
{
    float s = 0.0f;
    for (int i = 0; i < QK; i++)
        s += x[i] * x[i];
    return s;
}

static float max_of(const float *x, int n)
{
    float m = x[0];
    for (int i = 1; i < n; i++)
        m = m > x[i] ? m : x[i];
    return m;
}

/* ------------------------------------------------------------------------
 * iq2_xxs: groups of 32
 * ------------------------------------------------------------------------ */

/* One group of 32: levels into L, sign masks into signs, the scale into
 * *scale. False when ggml leaves the group out (all zero, or no positive
 * scale): index 0, no signs, scale 0. */
static bool xxs_group(const grid *g, bool fast, const float *xb, const float *qw, float sigma2, int8_t *L,
                      uint8_t signs[4], float *scale_out)
{
    float weight[32], waux[32], xval[32];
    int8_t Laux[32];
    for (int i = 0; i < 32; i++)
        weight[i] = qw[i] * sqrtf(sigma2 + xb[i] * xb[i]);
    for (int i = 0; i < 32; i++)
        waux[i] = sqrtf(weight[i]);
    for (int k = 0; k < 4; k++)
        signs[k] = fold_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k, true);
    *scale_out = 0.0f;
    if (max_of(xval, 32) < ALL_ZERO_EPS)
        return false;
    float scale = gguf_search_positive(32, MAX_Q + 1, xval, (uint8_t *)L, weight);
    float eff_max = scale * MAX_Q;
    if (eff_max <= 0)
        return false;
    float best = 0.0f;
    for (int is = -6; is <= 6; is++) {
        float id = (2 * MAX_Q - 1 + is * 0.1f) / eff_max;
        float this_scale = 1 / id;
        for (int k = 0; k < 4; k++)
            snap_group(g, fast, xval + 8 * k, waux + 8 * k, id, this_scale, Laux + 8 * k);
        float sumqx, sumq2;
        fit(32, xval, weight, Laux, &sumqx, &sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            memcpy(L, Laux, 32);
        }
    }
    if (scale > 0) {
        float id = 1 / scale;
        for (int k = 0; k < 4; k++)
            snap_group(g, fast, xval + 8 * k, waux + 8 * k, id, scale, L + 8 * k);
        float sumqx, sumq2;
        fit(32, xval, weight, L, &sumqx, &sumq2);
        if (sumq2 > 0)
            scale = sumqx / sumq2;
    }
    if (scale < 0) { /* cannot happen with positive magnitudes; ggml guards it */
        scale = -scale;
        for (int k = 0; k < 4; k++)
            signs[k] = (uint8_t)(~signs[k] & 127);
    }
    *scale_out = scale;
    return true;
}

/* Byte offsets in the block structs of quants.h. */
#define XXS_SIZE   sizeof(gguf_block_iq2_xxs)
#define XXS_QS     offsetof(gguf_block_iq2_xxs, qs)
#define XS_SIZE    sizeof(gguf_block_iq2_xs)
#define XS_QS      offsetof(gguf_block_iq2_xs, qs)
#define XS_SCALES  offsetof(gguf_block_iq2_xs, scales)
#define S_SIZE     sizeof(gguf_block_iq2_s)
#define S_QS       offsetof(gguf_block_iq2_s, qs)
#define S_QH       offsetof(gguf_block_iq2_s, qh)
#define S_SCALES   offsetof(gguf_block_iq2_s, scales)

static void xxs_row(const grid *g, const float *x, uint8_t *y, int64_t n, const float *qw)
{
    const bool fast = use_lanes();
    for (int64_t ibl = 0; ibl < n / QK; ibl++, x += QK, qw += QK, y += XXS_SIZE) {
        uint32_t q2[16] = { 0 };
        float scales[8], max_scale = 0.0f;
        const float sigma2 = sum_squares(x) / QK;
        for (int ib = 0; ib < 8; ib++) {
            int8_t L[32];
            uint8_t signs[4];
            if (!xxs_group(g, fast, x + 32 * ib, qw + 32 * ib, sigma2, L, signs, &scales[ib]))
                continue;
            for (int k = 0; k < 4; k++) {
                q2[2 * ib] |= (uint32_t)index_of(g, L + 8 * k) << 8 * k;
                q2[2 * ib + 1] |= (uint32_t)signs[k] << 7 * k;
            }
            max_scale = max_scale > scales[ib] ? max_scale : scales[ib];
        }
        gguf_half d0 = gguf_f32_to_f16(0.0f);
        if (max_scale == 0.0f) {
            memcpy(y, &d0, 2);
            memset(y + XXS_QS, 0, sizeof ((gguf_block_iq2_xxs *)0)->qs);
            continue;
        }
        float d = max_scale / 31;
        gguf_half dh = gguf_f32_to_f16(d);
        memcpy(y, &dh, 2);
        float id = 1 / d;
        for (int ib = 0; ib < 8; ib++) {
            int l = round_half_even(0.5f * (id * scales[ib] - 1));
            l = l < 0 ? 0 : l > 15 ? 15 : l;
            q2[2 * ib + 1] |= (uint32_t)l << 28;
        }
        memcpy(y + XXS_QS, q2, sizeof q2);
    }
}

/* ------------------------------------------------------------------------
 * iq2_xs and iq2_s: groups of 16
 * ------------------------------------------------------------------------ */

/* What tells the two apart. */
typedef struct xs_kind {
    bool  parity; /* 7-bit sign masks (iq2_xs) or 8-bit (iq2_s) */
    float eps;    /* a group below this maximum is all zero */
} xs_kind;

static const xs_kind KIND_XS = { true, ALL_ZERO_EPS };
static const xs_kind KIND_S = { false, 1e-8f /* ggml's GROUP_MAX_EPS_IQ2_S */ };

/* One group of 16, as xxs_group; qw NULL: iq2_s's weights σ²/4 + x². */
static bool xs_group(const grid *g, bool fast, const xs_kind *kind, const float *xb, const float *qw,
                     float sigma2, int8_t *L, uint8_t signs[2], float *scale_out)
{
    float weight[16], waux[16], xval[16];
    int8_t Laux[16];
    bool on_grid[2], on_grid_aux[2];
    if (qw) {
        for (int i = 0; i < 16; i++)
            weight[i] = qw[i] * sqrtf(sigma2 + xb[i] * xb[i]);
    } else {
        for (int i = 0; i < 16; i++)
            weight[i] = 0.25f * sigma2 + xb[i] * xb[i];
    }
    for (int i = 0; i < 16; i++)
        waux[i] = sqrtf(weight[i]);
    for (int k = 0; k < 2; k++)
        signs[k] = fold_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k, kind->parity);
    const float max = max_of(xval, 16);
    memset(L, 0, 16);
    *scale_out = 0.0f;
    if (max < kind->eps)
        return false;
    float best = 0.0f;
    float scale = max / (2 * MAX_Q - 1);
    on_grid[0] = on_grid[1] = true;
    for (int is = -9; is <= 9; is++) {
        float id = (2 * MAX_Q - 1 + is * 0.1f) / max;
        float this_scale = 1 / id;
        for (int k = 0; k < 2; k++)
            on_grid_aux[k] = snap_group(g, fast, xval + 8 * k, waux + 8 * k, id, this_scale, Laux + 8 * k);
        float sumqx, sumq2;
        fit(16, xval, weight, Laux, &sumqx, &sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            memcpy(L, Laux, 16);
            on_grid[0] = on_grid_aux[0];
            on_grid[1] = on_grid_aux[1];
        }
    }
    if ((!on_grid[0] || !on_grid[1]) && scale > 0) {
        float id = 1 / scale;
        for (int k = 0; k < 2; k++)
            if (!on_grid[k])
                snap_group(g, fast, xval + 8 * k, waux + 8 * k, id, scale, L + 8 * k);
        float sumqx, sumq2;
        fit(16, xval, weight, L, &sumqx, &sumq2);
        if (sumq2 > 0)
            scale = sumqx / sumq2;
    }
    if (scale < 0) {
        scale = -scale;
        for (int k = 0; k < 2; k++)
            signs[k] = (uint8_t)(kind->parity ? ~signs[k] & 127 : ~signs[k]);
    }
    *scale_out = scale;
    return true;
}

/* The 4-bit group scales against d = max/31, two per byte. */
static void pack_scales(const float *scales, float d, uint8_t *out)
{
    float id = 1 / d;
    for (int ib = 0; ib < 16; ib++) {
        int l = round_half_even(0.5f * (id * scales[ib] - 1));
        l = l < 0 ? 0 : l > 15 ? 15 : l;
        if (ib % 2 == 0)
            out[ib / 2] = (uint8_t)l;
        else
            out[ib / 2] |= (uint8_t)(l << 4);
    }
}

static void xs_row(const grid *g, const float *x, uint8_t *y, int64_t n, const float *qw)
{
    const bool fast = use_lanes();
    for (int64_t ibl = 0; ibl < n / QK; ibl++, x += QK, qw += QK, y += XS_SIZE) {
        uint16_t q2[32] = { 0 };
        float scales[16], max_scale = 0.0f;
        const float sigma2 = sum_squares(x) / QK;
        memset(y, 0, XS_SIZE);
        for (int ib = 0; ib < 16; ib++) {
            int8_t L[16];
            uint8_t signs[2];
            if (!xs_group(g, fast, &KIND_XS, x + 16 * ib, qw + 16 * ib, sigma2, L, signs, &scales[ib]))
                continue;
            for (int k = 0; k < 2; k++)
                q2[2 * ib + k] = (uint16_t)(index_of(g, L + 8 * k) | signs[k] << 9);
            max_scale = max_scale > scales[ib] ? max_scale : scales[ib];
        }
        if (max_scale == 0.0f)
            continue; /* d 0, zero indices and scales */
        float d = max_scale / 31;
        gguf_half dh = gguf_f32_to_f16(d);
        memcpy(y, &dh, 2);
        pack_scales(scales, d, y + XS_SCALES);
        memcpy(y + XS_QS, q2, sizeof q2);
    }
}

static void s_row(const grid *g, const float *x, uint8_t *y, int64_t n, const float *qw)
{
    const bool fast = use_lanes();
    for (int64_t ibl = 0; ibl < n / QK; ibl++, x += QK, y += S_SIZE) {
        float scales[16], max_scale = 0.0f;
        const float sigma2 = 2 * sum_squares(x) / QK;
        uint8_t *qs = y + S_QS, *qh = y + S_QH;
        memset(y, 0, S_SIZE);
        for (int ib = 0; ib < 16; ib++) {
            int8_t L[16];
            uint8_t signs[2];
            const float *w = qw ? qw + QK * ibl + 16 * ib : NULL;
            if (!xs_group(g, fast, &KIND_S, x + 16 * ib, w, sigma2, L, signs, &scales[ib]))
                continue;
            for (int k = 0; k < 2; k++) {
                const int i8 = 2 * ib + k, gi = index_of(g, L + 8 * k);
                qs[i8] = (uint8_t)(gi & 255);
                qh[i8 / 4] |= (uint8_t)((gi >> 8) << 2 * (i8 % 4));
                qs[QK / 8 + i8] = signs[k];
            }
            max_scale = max_scale > scales[ib] ? max_scale : scales[ib];
        }
        if (max_scale == 0.0f)
            continue;
        float d = max_scale / 31;
        gguf_half dh = gguf_f32_to_f16(d * 0.9875f);
        memcpy(y, &dh, 2);
        pack_scales(scales, d, y + S_SCALES);
    }
}

/* ------------------------------------------------------------------------
 * Dequantizing
 * ------------------------------------------------------------------------ */

/* 8 values of grid point code at scale db with sign mask signs (bit i:
 * element i negative). */
static void put8(float *y, uint16_t code, float db, uint8_t signs)
{
    for (int j = 0; j < 8; j++)
        y[j] = db * (float)MAGNITUDE[level_of(code, j)] * (signs >> j & 1 ? -1.0f : 1.0f);
}

/* A 7-bit mask and its parity bit: the 8th sign makes the count even
 * (ggml's ksigns_iq2xs). */
static uint8_t signs7(uint32_t s)
{
    s &= 127;
    return (uint8_t)(s | (uint32_t)__builtin_parity(s) << 7);
}

static float half_at(const uint8_t *p)
{
    gguf_half h;
    memcpy(&h, p, 2);
    return gguf_f16_to_f32(h);
}

void gguf_iq2_xxs_dequantize(const void *vx, float *y, int64_t n)
{
    const uint8_t *x = vx;
    for (int64_t ibl = 0; ibl < n / QK; ibl++, x += XXS_SIZE) {
        const float d = half_at(x);
        for (int ib = 0; ib < 8; ib++) {
            uint32_t aux[2];
            memcpy(aux, x + XXS_QS + 8 * ib, 8);
            const float db = d * (0.5f + (float)(aux[1] >> 28)) * 0.25f;
            for (int l = 0; l < 4; l++, y += 8)
                put8(y, CODES_XXS[aux[0] >> 8 * l & 255], db, signs7(aux[1] >> 7 * l));
        }
    }
}

void gguf_iq2_xs_dequantize(const void *vx, float *y, int64_t n)
{
    const uint8_t *x = vx;
    for (int64_t ibl = 0; ibl < n / QK; ibl++, x += XS_SIZE) {
        const float d = half_at(x);
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t sc = x[XS_SCALES + ib];
            const float db[2] = { d * (0.5f + (float)(sc & 0xf)) * 0.25f,
                                  d * (0.5f + (float)(sc >> 4)) * 0.25f };
            for (int l = 0; l < 4; l++, y += 8) {
                uint16_t q;
                memcpy(&q, x + XS_QS + 2 * (4 * ib + l), 2);
                put8(y, CODES_XS[q & 511], db[l / 2], signs7(q >> 9));
            }
        }
    }
}

void gguf_iq2_s_dequantize(const void *vx, float *y, int64_t n)
{
    const uint8_t *x = vx;
    for (int64_t ibl = 0; ibl < n / QK; ibl++, x += S_SIZE) {
        const float d = half_at(x);
        const uint8_t *qs = x + S_QS, *signs = x + S_QS + QK / 8, *qh = x + S_QH,
                      *sc = x + S_SCALES;
        for (int ib = 0; ib < 8; ib++, qs += 4, signs += 4) {
            const float db[2] = { d * (0.5f + (float)(sc[ib] & 0xf)) * 0.25f,
                                  d * (0.5f + (float)(sc[ib] >> 4)) * 0.25f };
            for (int l = 0; l < 4; l++, y += 8)
                put8(y, CODES_S[qs[l] | (qh[ib] << (8 - 2 * l) & 0x300)], db[l / 2], signs[l]);
        }
    }
}

/* ------------------------------------------------------------------------
 * Entry points
 * ------------------------------------------------------------------------ */

void gguf_iq2_xxs_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    const grid *g = get_grid(&GRID_XXS, init_xxs);
    if (g)
        xxs_row(g, x, y, n, qw);
}

void gguf_iq2_xs_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    const grid *g = get_grid(&GRID_XS, init_xs);
    if (g)
        xs_row(g, x, y, n, qw);
}

void gguf_iq2_s_quantize(const float *x, void *y, int64_t n)
{
    const grid *g = get_grid(&GRID_S, init_s);
    if (g)
        s_row(g, x, y, n, NULL);
}

void gguf_iq2_s_quantize_weighted(const float *x, void *y, int64_t n, const float *qw)
{
    const grid *g = get_grid(&GRID_S, init_s);
    if (g)
        s_row(g, x, y, n, qw);
}

/* ------------------------------------------------------------------------
 * The grids as bytes (gguf_iq_grid)
 * ------------------------------------------------------------------------ */

static uint8_t BYTES_XXS[256 * 8], BYTES_XS[512 * 8], BYTES_S[1024 * 8];
static pthread_once_t bytes_once = PTHREAD_ONCE_INIT;

static void fill_bytes(const uint16_t *codes, int n, uint8_t *out)
{
    for (int k = 0; k < n; k++)
        for (int i = 0; i < 8; i++)
            out[8 * k + i] = MAGNITUDE[level_of(codes[k], i)];
}

static void init_bytes(void)
{
    fill_bytes(CODES_XXS, 256, BYTES_XXS);
    fill_bytes(CODES_XS, 512, BYTES_XS);
    fill_bytes(CODES_S, 1024, BYTES_S);
}

const uint8_t *gguf_iq2_grid_bytes(uint32_t type, uint32_t *n)
{
    pthread_once(&bytes_once, init_bytes);
    switch (type) {
    case GGUF_DT_IQ2_XXS: *n = 256; return BYTES_XXS;
    case GGUF_DT_IQ2_XS: *n = 512; return BYTES_XS;
    case GGUF_DT_IQ2_S: *n = 1024; return BYTES_S;
    default: return NULL;
    }
}
