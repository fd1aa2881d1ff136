/*
 * bench/kernels.c — speed of run/kernels.h's kern_matmul per weight type:
 * a 4096 × 4096 matrix times nb = 1 and nb = 32 activation rows, scalar
 * reference kernels and SIMD kernels, in GFLOP/s per core
 * (2·rows·cols·nb / CPU seconds summed over threads) on common/pool.c's
 * threads, as many as the second argument says (1, bench/kernels.sh's
 * default, for the plainest figure).
 *
 * Built and run by bench/kernels.sh; never part of make test. The matrix is
 * 256 distinct quantized rows repeated (quantizing 16M weights with the
 * k-quant searches would take longer than the measurement); every row is
 * still read from memory, which is what a matmul of this size is bound by.
 * Types that models pack (kern_pack) get a second line, "packed", with
 * the packed layout's SIMD speeds.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels.h"
#include "pool.h"
#include <ggufkit/quants.h>
#include <ggufkit/gguf.h>

#define ROWS 4096
#define COLS 4096
#define DISTINCT 256
#define NB_MAX 32

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU seconds (all threads) per kern_matmul call, repeated until min_time
 * of wall time has passed. On a machine shared with other jobs CPU time is
 * the steadier measure: it counts only the time our threads ran. */
static void product(uint32_t t, const void *w, size_t rb, bool packed, const void *xq, int nb,
                    float *y)
{
    if (packed)
        kern_matmul_packed(t, w, ROWS, COLS, xq, nb, y);
    else
        kern_matmul(t, w, rb, ROWS, COLS, xq, nb, y);
}

static double time_matmul(uint32_t t, const void *w, size_t rb, bool packed, const void *xq,
                          int nb, float *y, double min_time)
{
    product(t, w, rb, packed, xq, nb, y); /* warm-up */
    int reps = 0;
    const double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    do {
        product(t, w, rb, packed, xq, nb, y);
        reps++;
    } while (clock_s(CLOCK_MONOTONIC) - w0 < min_time);
    return (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0) / reps;
}

int main(int argc, char **argv)
{
    const double min_time = argc > 1 ? atof(argv[1]) : 0.3;
    const int threads = argc > 2 ? atoi(argv[2]) : 1;
    const int only = argc > 3 ? gguf_dtype_from_name(argv[3]) : -1; /* one type, when named */
    if (threads < 1 || pool_set_threads(threads)) {
        fprintf(stderr, "kernels: cannot run on %s threads\n", argv[2]);
        return 1;
    }
    const uint32_t types[] = { GGUF_DT_F32,  GGUF_DT_F16,  GGUF_DT_BF16, GGUF_DT_Q4_0, GGUF_DT_Q4_1,
                               GGUF_DT_Q5_0, GGUF_DT_Q5_1, GGUF_DT_Q8_0, GGUF_DT_Q2_K, GGUF_DT_Q3_K,
                               GGUF_DT_Q4_K, GGUF_DT_Q5_K, GGUF_DT_Q6_K, GGUF_DT_MXFP4, GGUF_DT_IQ4_XS };
    float *src = malloc(sizeof(float) * DISTINCT * COLS), *x = malloc(sizeof(float) * NB_MAX * COLS);
    float *y = malloc(sizeof(float) * NB_MAX * ROWS);
    srand(1);
    for (size_t i = 0; i < (size_t)DISTINCT * COLS; i++)
        src[i] = (float)((double)rand() / RAND_MAX - 0.5);
    for (size_t i = 0; i < (size_t)NB_MAX * COLS; i++)
        x[i] = (float)((double)rand() / RAND_MAX - 0.5);

    printf("%-6s %10s %12s %12s %12s %12s %8s %8s\n", "type", "MiB", "scalar nb=1", "simd nb=1",
           "scalar nb=32", "simd nb=32", "x nb=1", "x nb=32");
    for (size_t k = 0; k < sizeof types / sizeof *types; k++) {
        const uint32_t t = types[k];
        if (only >= 0 && t != (uint32_t)only)
            continue;
        uint64_t rb;
        gguf_row_size(t, COLS, &rb, NULL);
        uint8_t *w = malloc(rb * ROWS);
        gguf_quantize_rows(t, src, w, DISTINCT, COLS, NULL, NULL);
        for (int r = DISTINCT; r < ROWS; r++)
            memcpy(w + r * rb, w + (r % DISTINCT) * rb, rb);
        const size_t xb = kern_act_row_size(t, COLS);
        uint8_t *xq = malloc(xb * NB_MAX);
        for (int b = 0; b < NB_MAX; b++)
            kern_quantize_act(t, x + (size_t)b * COLS, xq + b * xb, COLS);

        double gf[4];
        const int nbs[2] = { 1, NB_MAX };
        for (int s = 0; s < 2; s++) {
            kern_force_scalar(s == 0);
            for (int j = 0; j < 2; j++) {
                const double sec = time_matmul(t, w, rb, false, xq, nbs[j], y, min_time);
                gf[2 * j + s] = 2.0 * ROWS * COLS * nbs[j] / sec * 1e-9;
            }
        }
        kern_force_scalar(false);
        printf("%-6s %10.1f %12.2f %12.2f %12.2f %12.2f %8.1f %8.1f\n", gguf_dtype_name(t),
               rb * ROWS / 1048576.0, gf[0], gf[1], gf[2], gf[3], gf[1] / gf[0], gf[3] / gf[2]);
        if (kern_pack_usable(t, ROWS, COLS)) { /* the layout models use where they can */
            uint8_t *p = malloc(rb * ROWS);
            kern_pack(t, w, rb, ROWS, COLS, p);
            for (int j = 0; j < 2; j++)
                gf[2 * j + 1] = 2.0 * ROWS * COLS * nbs[j] /
                                time_matmul(t, p, rb, true, xq, nbs[j], y, min_time) * 1e-9;
            printf("%-6s %10s %12s %12.2f %12s %12.2f %8.1f %8.1f\n", "packed", "", "", gf[1], "",
                   gf[3], gf[1] / gf[0], gf[3] / gf[2]);
            free(p);
        }
        fflush(stdout);
        free(w);
        free(xq);
    }
    printf("(GFLOP/s per core = 2*4096*4096*nb / CPU seconds per kern_matmul)\n");
    free(src);
    free(x);
    free(y);
    return 0;
}
