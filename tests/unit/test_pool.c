/*
 * test_pool.c — common/pool.c: every unit of a loop runs exactly once, on a
 * thread index below the pool's size, whatever the pool's size (more
 * threads than units included), across many short loops in a row (the
 * generations of the work ranges), past one published job's 2^22 units,
 * from inside a unit (inline), and after the pool is resized.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "pool.h"
#include "testutil.h"

typedef struct {
    _Atomic uint8_t *hits;
    _Atomic int      bad_thread;
    int              n_threads;
} count_job;

static void count_unit(void *ctx, int64_t u, int thread)
{
    count_job *j = ctx;
    atomic_fetch_add(&j->hits[u], 1);
    if (thread < 0 || thread >= j->n_threads)
        atomic_store(&j->bad_thread, 1);
}

/* Runs a loop of n units on the pool and checks each ran once. */
static void check_loop(int64_t n)
{
    count_job j = { calloc((size_t)n + 1, 1), 0, pool_threads() };
    ck_assert_ptr_nonnull(j.hits);
    pool_for(n, count_unit, &j);
    for (int64_t u = 0; u < n; u++)
        ck_assert_msg(j.hits[u] == 1, "%d threads, %lld units: unit %lld ran %d times", j.n_threads,
                      (long long)n, (long long)u, j.hits[u]);
    ck_assert_int_eq(j.hits[n], 0);
    ck_assert_int_eq(j.bad_thread, 0);
    free((void *)j.hits);
}

START_TEST(test_every_unit_once)
{
    const int sizes[] = { 1, 2, 3, 7, 40 };
    const int64_t units[] = { 0, 1, 2, 3, 5, 64, 1000, 4097 };
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        ck_assert_int_eq(pool_set_threads(sizes[s]), 0);
        ck_assert_int_eq(pool_threads(), sizes[s]);
        for (size_t k = 0; k < sizeof units / sizeof *units; k++)
            check_loop(units[k]);
    }
}
END_TEST

/* Many short loops in a row: a worker late for one loop must not take
 * units of the next (every count would show it). */
START_TEST(test_many_short_loops)
{
    ck_assert_int_eq(pool_set_threads(3), 0);
    for (int i = 0; i < 20000; i++)
        check_loop(1 + i % 9);
}
END_TEST

/* More units than one published job holds (2^22 - 1): several jobs. */
START_TEST(test_past_one_job)
{
    ck_assert_int_eq(pool_set_threads(2), 0);
    check_loop(((int64_t)1 << 22) + 5);
}
END_TEST

typedef struct {
    _Atomic int inner_runs, wrong_thread;
} nest_job;

static void inner_unit(void *ctx, int64_t u, int thread)
{
    (void)u;
    nest_job *j = ctx;
    atomic_fetch_add(&j->inner_runs, 1);
    (void)thread;
}

typedef struct {
    nest_job *n;
    int       outer_thread[8];
} outer_job;

static void outer_unit(void *ctx, int64_t u, int thread)
{
    outer_job *o = ctx;
    o->outer_thread[u] = thread;
    pool_for(10, inner_unit, o->n); /* inline, on this thread */
}

START_TEST(test_nested_runs_inline)
{
    ck_assert_int_eq(pool_set_threads(4), 0);
    nest_job n = { 0, 0 };
    outer_job o = { &n, { 0 } };
    pool_for(8, outer_unit, &o);
    ck_assert_int_eq(n.inner_runs, 80);
    for (int i = 0; i < 8; i++)
        ck_assert(o.outer_thread[i] >= 0 && o.outer_thread[i] < 4);
}
END_TEST

/* Out-of-range sizes are clamped: at least the caller, at most the maximum. */
START_TEST(test_sizes_clamped)
{
    ck_assert_int_eq(pool_set_threads(0), 0);
    ck_assert_int_eq(pool_threads(), 1);
    check_loop(17);
    ck_assert_int_eq(pool_set_threads(POOL_MAX_THREADS + 5), 0);
    ck_assert_int_eq(pool_threads(), POOL_MAX_THREADS);
    check_loop(1000);
    ck_assert_int_eq(pool_set_threads(2), 0);
    check_loop(1000);
}
END_TEST

/* A worker that is slow at every unit (as one descheduled by another busy
 * process): a loop of 8 units takes the caller 1.6 ms alone, and about
 * 2.2 ms when the worker holds one of them. The pool finds the loops finish
 * sooner on the caller alone and runs them there. */
static void busy_us(long us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static void slow_unit(void *ctx, int64_t u, int thread)
{
    (void)ctx, (void)u;
    if (thread != 0) {
        struct timespec ts = { 0, 2000000 }; /* 2 ms */
        nanosleep(&ts, NULL);
    } else {
        busy_us(200);
    }
}

START_TEST(test_adapts_to_slow_workers)
{
    ck_assert_int_eq(pool_set_threads(2), 0);
    pool_set_adaptive(true);
    ck_assert(!pool_runs_alone());
    for (int i = 0; i < 128 * 4; i++)
        pool_for(8, slow_unit, NULL);
    ck_assert_msg(pool_runs_alone(), "the pool still uses its slow worker");
    pool_set_adaptive(false);
    ck_assert(!pool_runs_alone());
}
END_TEST

int main(void)
{
    pool_set_adaptive(false); /* every loop on every thread */
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_unit_once);
    tcase_add_test(tc, test_many_short_loops);
    tcase_add_test(tc, test_past_one_job);
    tcase_add_test(tc, test_nested_runs_inline);
    tcase_add_test(tc, test_sizes_clamped);
    tcase_add_test(tc, test_adapts_to_slow_workers);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
