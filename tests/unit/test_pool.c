/*
 * test_pool.c — common/pool.c: every unit of a loop runs exactly once, on a
 * thread index below the pool's size, whatever the pool's size (more
 * threads than units included), across many short loops in a row (the
 * generations of the work ranges), past one published job's 2^22 units,
 * from inside a unit (inline), and after the pool is resized; and how the
 * pool adapts to slow workers, on a cost model instead of the clock.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

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

/* The adaptation (pool.c: for each kind of loop, windows of 32 of its
 * loops, a probe the other way now and then, a switch when the probe
 * window took less than 0.9 of the one before), on a cost model instead of the clock: each loop takes the time
 * the test says, so the decisions are the same on an idle machine and on a
 * busy one. The units still run, alone or on the workers as decided. */
#define WINDOW_LOOPS 32
#define MAX_LOOPS    (WINDOW_LOOPS * 48)

typedef struct {
    int64_t alone_ns, shared_ns; /* per unit, alone on the caller / on every thread */
    int64_t other_units;         /* loops of this many units cost the other way round */
    int     n;                   /* loops so far */
    bool    alone[MAX_LOOPS];    /* how each ran */
} cost_model;

static int64_t model_cost(int64_t units, bool alone, void *user)
{
    cost_model *m = user;
    ck_assert_int_lt(m->n, MAX_LOOPS);
    m->alone[m->n++] = alone;
    if (units == m->other_units)
        alone = !alone;
    return units * (alone ? m->alone_ns : m->shared_ns);
}

typedef struct {
    _Atomic uint32_t threads; /* bit t: thread t ran a unit */
    _Atomic int      units;
} record_job;

static void record_unit(void *ctx, int64_t u, int thread)
{
    (void)u;
    record_job *j = ctx;
    atomic_fetch_or(&j->threads, 1u << thread);
    atomic_fetch_add(&j->units, 1);
}

/* Runs n loops of 8 units on 2 threads under m; each loop runs all its
 * units, and a loop run alone runs them on the caller (thread 0) only. */
static void run_loops(cost_model *m, int n)
{
    for (int i = 0; i < n; i++) {
        record_job j = { 0, 0 };
        const int k = m->n;
        pool_for(8, record_unit, &j);
        ck_assert_int_eq(m->n, k + 1);
        ck_assert_int_eq(j.units, 8);
        if (m->alone[k])
            ck_assert_msg(j.threads == 1, "loop %d ran alone, but on threads %#x", k, j.threads);
    }
}

static int count_alone(const cost_model *m, int from, int to)
{
    int n = 0;
    for (int i = from; i < to; i++)
        n += m->alone[i];
    return n;
}

static cost_model *start_model(int64_t alone_ns, int64_t shared_ns)
{
    static cost_model m;
    m = (cost_model){ alone_ns, shared_ns, 0, 0, { false } };
    ck_assert_int_eq(pool_set_threads(2), 0);
    pool_set_cost_model(model_cost, &m);
    pool_set_adaptive(true);
    ck_assert(!pool_runs_alone());
    return &m;
}

/* A worker that is slow at every unit (as one descheduled by another busy
 * process): a loop of 8 units takes 1.6 ms alone and 2.2 ms with the
 * worker. Windows 1 and 2 run on the workers; window 3 is the probe, alone,
 * and took 0.73 of window 2: from loop 64 on, every loop runs alone. */
START_TEST(test_adapts_to_slow_workers)
{
    cost_model *m = start_model(200000, 275000);
    run_loops(m, 4 * WINDOW_LOOPS);
    for (int i = 0; i < m->n; i++)
        ck_assert_msg(m->alone[i] == (i >= 2 * WINDOW_LOOPS), "loop %d ran %s", i,
                      m->alone[i] ? "alone" : "on the workers");
    ck_assert_msg(pool_runs_alone(), "the pool still uses its slow worker");
    pool_set_adaptive(false);
    ck_assert(!pool_runs_alone());
}
END_TEST

/* Alone only 5% faster: not worth a switch (10%). The probes that confirm
 * the workers come at doubling gaps: 2, 4, 8, 16, ... up to 64 windows. */
START_TEST(test_no_switch_below_the_gain)
{
    cost_model *m = start_model(200000, 210000);
    for (int w = 0; w < 40; w++) {
        run_loops(m, WINDOW_LOOPS);
        ck_assert_msg(!pool_runs_alone(), "switched in window %d", w + 1);
    }
    /* the probes are windows 3, 8 (4 regular windows after the probe window
     * 3), 17 and 34 (counted from 1) */
    for (int i = 0; i < m->n; i++) {
        const int w = i / WINDOW_LOOPS; /* from 0 */
        const bool probe = w == 2 || w == 7 || w == 16 || w == 33;
        ck_assert_msg(m->alone[i] == probe, "loop %d ran %s", i, m->alone[i] ? "alone" : "on the workers");
    }
}
END_TEST

/* Workers slow, then fast again (the other process ended): alone after
 * three windows, back on the workers at the next probe, three windows on. */
START_TEST(test_back_to_the_workers)
{
    cost_model *m = start_model(200000, 275000);
    run_loops(m, 4 * WINDOW_LOOPS);
    ck_assert(pool_runs_alone());
    m->shared_ns = 100000; /* twice as fast as alone */
    run_loops(m, 3 * WINDOW_LOOPS);
    ck_assert_msg(!pool_runs_alone(), "still alone with workers twice as fast");
    ck_assert_int_eq(count_alone(m, m->n - WINDOW_LOOPS + 1, m->n), 0);
}
END_TEST

/* A probe far behind (alone twice as slow) ends a quarter into its window,
 * after 8 loops, not 32. */
START_TEST(test_losing_probe_ends_early)
{
    cost_model *m = start_model(400000, 200000);
    run_loops(m, 6 * WINDOW_LOOPS);
    ck_assert(!pool_runs_alone());
    ck_assert_int_eq(count_alone(m, 0, 2 * WINDOW_LOOPS), 0);
    ck_assert_int_eq(count_alone(m, 2 * WINDOW_LOOPS, 2 * WINDOW_LOOPS + WINDOW_LOOPS / 4), WINDOW_LOOPS / 4);
    ck_assert_int_eq(count_alone(m, 2 * WINDOW_LOOPS + WINDOW_LOOPS / 4, 6 * WINDOW_LOOPS), 0);
}
END_TEST

/* Two kinds of loop, one after the other (as a layer's expert products and
 * its attention): loops of 8 units are slower on the workers, loops of 16
 * faster. Each kind is measured against its own windows: the 8-unit loops
 * go alone, the 16-unit loops stay on the workers. */
START_TEST(test_kinds_adapt_apart)
{
    cost_model *m = start_model(200000, 275000);
    m->other_units = 16;
    bool alone8[MAX_LOOPS / 2], alone16[MAX_LOOPS / 2];
    int n = 0;
    for (int i = 0; i < 8 * WINDOW_LOOPS; i++) {
        record_job j = { 0, 0 };
        const int k = m->n;
        pool_for(8 + 8 * (i & 1), record_unit, &j);
        ck_assert_int_eq(j.units, 8 + 8 * (i & 1));
        if (i & 1)
            alone16[n++] = m->alone[k];
        else
            alone8[n] = m->alone[k];
    }
    /* each kind's four windows: 1 and 2 on the workers, the probe window 3
     * alone; then the 8-unit loops stay alone, the 16-unit loops go back to
     * the workers */
    for (int i = 0; i < n; i++) {
        ck_assert_msg(alone8[i] == (i >= 2 * WINDOW_LOOPS), "8-unit loop %d ran %s", i,
                      alone8[i] ? "alone" : "on the workers");
        const int w = i / WINDOW_LOOPS;
        ck_assert_msg(alone16[i] == (w == 2), "16-unit loop %d ran %s", i,
                      alone16[i] ? "alone" : "on the workers");
    }
}
END_TEST

/* The same function and unit count in another class (pool_set_class: a
 * prompt's batch, one token) is another kind: the class-1 loops, slower on
 * the workers, go alone; the class-0 loops between them never saw a
 * window of their own that favoured that and stay on the workers. */
START_TEST(test_classes_adapt_apart)
{
    cost_model *m = start_model(200000, 275000);
    for (int i = 0; i < 4 * WINDOW_LOOPS; i++) {
        pool_set_class(1);
        run_loops(m, 1);
        pool_set_class(0);
    }
    ck_assert(pool_runs_alone());
    m->shared_ns = 100000;
    for (int i = 0; i < 3 * WINDOW_LOOPS; i++)
        run_loops(m, 1);
    ck_assert_int_eq(count_alone(m, 4 * WINDOW_LOOPS, 6 * WINDOW_LOOPS), 0);
    ck_assert(!pool_runs_alone());
    pool_set_class(1);
    run_loops(m, 1);
    ck_assert_msg(pool_runs_alone(), "the class-1 kind was forgotten");
    pool_set_class(0);
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
    tcase_add_test(tc, test_no_switch_below_the_gain);
    tcase_add_test(tc, test_back_to_the_workers);
    tcase_add_test(tc, test_losing_probe_ends_early);
    tcase_add_test(tc, test_kinds_adapt_apart);
    tcase_add_test(tc, test_classes_adapt_apart);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
