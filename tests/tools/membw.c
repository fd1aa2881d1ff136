/*
 * membw.c — the machine's memory read bandwidth, for bench/run.sh's
 * bandwidth-bound column: THREADS threads each stream their share of a
 * 512 MiB buffer (twice the size of any cache here) with vector loads; the
 * best of 5 passes, in GB/s (10^9 bytes per second), on stdout.
 *
 *   membw [THREADS]
 *
 * A benchmark helper, not a test.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BYTES ((size_t)512 << 20)

typedef struct {
    const uint64_t *p;
    size_t          n;
    uint64_t        sum;
} share;

/* Eight independent sums (the compiler makes them vector lanes; AVX2
 * where the CPU has it, so that the loads, not the adds, are the limit). */
#define READER_BODY                                              \
    share *s = arg;                                              \
    uint64_t acc[8] = { 0 };                                     \
    for (size_t i = 0; i + 8 <= s->n; i += 8)                    \
        for (int k = 0; k < 8; k++)                              \
            acc[k] += s->p[i + k];                               \
    for (int k = 0; k < 8; k++)                                  \
        s->sum += acc[k];                                        \
    return NULL;

static void *reader(void *arg) { READER_BODY }

#if defined(__x86_64__) && defined(__clang__)
__attribute__((target("avx2"))) static void *reader_avx2(void *arg) { READER_BODY }
#elif defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"), optimize("tree-vectorize"))) static void *reader_avx2(void *arg) { READER_BODY }
#else
#define reader_avx2 reader
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const long threads = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
    if (threads < 1 || threads > 256) {
        fprintf(stderr, "usage: membw [THREADS 1..256]\n");
        return 2;
    }
    uint64_t *buf = aligned_alloc(64, BYTES);
    if (!buf) {
        fprintf(stderr, "membw: out of memory\n");
        return 1;
    }
    memset(buf, 1, BYTES);
    const size_t words = BYTES / 8, per = words / (size_t)threads;
    double best = 0;
    uint64_t total = 0;
    void *(*fn)(void *) = reader;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2"))
        fn = reader_avx2;
#endif
    for (int pass = 0; pass < 5; pass++) {
        pthread_t th[256];
        share sh[256];
        const double t0 = now();
        for (long t = 0; t < threads; t++) {
            sh[t] = (share){ buf + (size_t)t * per, per, 0 };
            if (pthread_create(&th[t], NULL, fn, &sh[t])) {
                fprintf(stderr, "membw: cannot start a thread\n");
                return 1;
            }
        }
        for (long t = 0; t < threads; t++) {
            pthread_join(th[t], NULL);
            total += sh[t].sum;
        }
        const double gbs = (double)(per * (size_t)threads * 8) / (now() - t0) / 1e9;
        best = gbs > best ? gbs : best;
    }
    printf("%.1f\n", best);
    free(buf);
    return total == 0; /* keeps the sums */
}
