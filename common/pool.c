/* SPDX-License-Identifier: MIT */
/*
 * pool.c — the worker pool of pool.h.
 *
 * A loop ("job") is published as a generation number plus one range of
 * units per thread. Each range lives in one 64-bit word, tagged with the
 * job's generation: tag (20 bits) | next unit (22) | end (22). Units are
 * taken by compare-and-swap on that word, so a worker that wakes late (or
 * was descheduled for a long time) and still believes an old job runs can
 * never take a unit of the wrong job: its swap fails on the tag. A worker
 * reads the job's function and argument only after it took a unit, when
 * the job cannot have ended (its unit is not done). Should the 20-bit tag
 * come round again while a worker sleeps, the unit it takes belongs to the
 * job that is running, and it runs that job's function on it: still right.
 *
 * The caller counts finished units in `done` and returns when all are in;
 * a worker adds its count once it finds no unit left. Waiting (an idle
 * worker for a job, the caller for the last units) spins for a few
 * microseconds, then sleeps on a futex; the other side wakes it only when
 * it said it sleeps (a store and a load each side, sequentially
 * consistent, so one of the two always sees the other).
 */
#define _GNU_SOURCE
#include "pool.h"

#include "args.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TAG_BITS  20
#define UNIT_BITS 22
#define UNIT_MASK ((UINT64_C(1) << UNIT_BITS) - 1)
#define TAG_MASK  ((UINT32_C(1) << TAG_BITS) - 1)
#define WINDOW    ((int64_t)UNIT_MASK) /* units per published job */

typedef struct {
    _Alignas(64) _Atomic uint64_t range;
} slot;

static struct {
    slot slots[POOL_MAX_THREADS];
    _Alignas(64) _Atomic uint32_t gen;      /* the job; idle workers sleep on it */
    _Atomic uint32_t              sleepers; /* workers asleep on gen */
    _Atomic uint32_t              stop;
    _Alignas(64) _Atomic uint32_t done;     /* units finished; the caller sleeps on it */
    _Atomic uint32_t              caller_sleeps;
    _Alignas(64) _Atomic(pool_fn) fn;
    _Atomic(void *)               ctx;
    _Atomic int64_t               base;  /* the job's first unit of the whole loop */
    _Atomic uint32_t              units; /* units in the job */
    int                           n;     /* threads, the caller counted */
    bool                          started;
    pthread_t                     th[POOL_MAX_THREADS];
    uint32_t                      start_gen[POOL_MAX_THREADS]; /* gen when worker i was started */
} P;

/* the thread's index while it runs units, else -1: a unit that calls
 * pool_for runs the inner loop inline on its own thread */
static _Thread_local int unit_thread = -1;

static long spin_ns(void)
{
    static _Atomic long ns = -1; /* read by every thread; set once, to the same value */
    long v = atomic_load_explicit(&ns, memory_order_relaxed);
    if (v < 0) {
        /* GGUFKIT_SPIN_US: how long a waiting thread spins before it
         * sleeps (benchmarks only; 0..10000) */
        const char *e = getenv("GGUFKIT_SPIN_US");
        char *end;
        long us = e ? strtol(e, &end, 10) : -1;
        v = e && *e && !*end && us >= 0 && us <= 10000 ? us * 1000 : 20000;
        atomic_store_explicit(&ns, v, memory_order_relaxed);
    }
    return v;
}

static void futex_wait(_Atomic uint32_t *w, uint32_t v)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w, int n)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins until *w differs from v or the spin time is over; true if it did. */
static bool spin_while(_Atomic uint32_t *w, uint32_t v)
{
    const long budget = spin_ns();
    if (atomic_load_explicit(w, memory_order_acquire) != v)
        return true;
    if (budget == 0)
        return false;
    const int64_t t0 = now_ns();
    for (;;) {
        for (int i = 0; i < 32; i++) {
            relax();
            if (atomic_load_explicit(w, memory_order_acquire) != v)
                return true;
        }
        if (now_ns() - t0 > budget)
            return false;
    }
}

/* One unit from slot t of job tag, from its front or its back; -1 if the
 * slot is empty or belongs to another job. */
static int64_t take(int t, uint32_t tag, bool front)
{
    _Atomic uint64_t *r = &P.slots[t].range;
    uint64_t v = atomic_load_explicit(r, memory_order_acquire);
    for (;;) {
        const uint64_t lo = v >> UNIT_BITS & UNIT_MASK, hi = v & UNIT_MASK;
        if ((uint32_t)(v >> (2 * UNIT_BITS)) != tag || lo >= hi)
            return -1;
        const uint64_t nv = front ? v + (UINT64_C(1) << UNIT_BITS) : v - 1;
        if (atomic_compare_exchange_weak_explicit(r, &v, nv, memory_order_acquire,
                                                  memory_order_acquire))
            return (int64_t)(front ? lo : hi - 1);
    }
}

/* The next unit for thread self: from its own range, else from the back
 * of the fullest one; -1 when none is left. */
static int64_t next_unit(int self, uint32_t tag)
{
    int64_t u = take(self, tag, true);
    if (u >= 0)
        return u;
    for (;;) {
        int best = -1;
        uint64_t most = 0;
        for (int t = 0; t < P.n; t++) {
            const uint64_t v = atomic_load_explicit(&P.slots[t].range, memory_order_relaxed);
            const uint64_t lo = v >> UNIT_BITS & UNIT_MASK, hi = v & UNIT_MASK;
            if ((uint32_t)(v >> (2 * UNIT_BITS)) == tag && hi > lo && hi - lo > most) {
                most = hi - lo;
                best = t;
            }
        }
        if (best < 0)
            return -1;
        if ((u = take(best, tag, false)) >= 0)
            return u;
    }
}

/* Runs units of job tag until none is left; returns how many it ran. */
static uint32_t work(int self, uint32_t tag)
{
    uint32_t n = 0;
    unit_thread = self;
    for (int64_t u; (u = next_unit(self, tag)) >= 0; n++) {
        /* the job cannot end before this unit is counted: its function,
         * argument and base are the ones that go with the unit */
        const pool_fn fn = atomic_load_explicit(&P.fn, memory_order_relaxed);
        void *ctx = atomic_load_explicit(&P.ctx, memory_order_relaxed);
        fn(ctx, atomic_load_explicit(&P.base, memory_order_relaxed) + u, self);
    }
    unit_thread = -1;
    return n;
}

static void *worker(void *arg)
{
    /* the generation as the pool saw it when it started this worker: a
     * stop or a job published before the worker first runs is not missed */
    const int self = (int)(intptr_t)arg;
    uint32_t seen = P.start_gen[self];
    for (;;) {
        if (!spin_while(&P.gen, seen)) {
            atomic_fetch_add(&P.sleepers, 1);
            while (atomic_load(&P.gen) == seen)
                futex_wait(&P.gen, seen);
            atomic_fetch_sub(&P.sleepers, 1);
        }
        seen = atomic_load_explicit(&P.gen, memory_order_acquire);
        if (atomic_load(&P.stop))
            return NULL;
        const uint32_t k = work(self, seen & TAG_MASK);
        if (k) {
            const uint32_t total = atomic_load_explicit(&P.units, memory_order_relaxed);
            if (atomic_fetch_add(&P.done, k) + k == total && atomic_load(&P.caller_sleeps))
                futex_wake(&P.done, 1);
        }
    }
}

static void stop_workers(void)
{
    if (P.n <= 1)
        return;
    atomic_store(&P.stop, 1);
    atomic_fetch_add(&P.gen, 1);
    futex_wake(&P.gen, INT_MAX);
    for (int i = 1; i < P.n; i++)
        pthread_join(P.th[i], NULL);
    atomic_store(&P.stop, 0);
    P.n = 1;
}

int pool_set_threads(int n)
{
    if (!P.started) {
        P.started = true;
        P.n = 1;
        atexit(stop_workers);
    }
    if (n < 1)
        n = 1;
    if (n > POOL_MAX_THREADS)
        n = POOL_MAX_THREADS;
    if (n == P.n)
        return 0;
    stop_workers();
    /* workers take no signals: the tools' handlers run on the main thread */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = 0;
    for (int i = 1; i < n; i++) {
        P.start_gen[i] = atomic_load(&P.gen);
        if (pthread_create(&P.th[i], NULL, worker, (void *)(intptr_t)i)) {
            rc = -1;
            break;
        }
        P.n = i + 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int pool_threads(void)
{
    if (!P.started)
        pool_set_threads(cli_default_threads());
    return P.n;
}

static void run_job(int64_t base, uint32_t units, pool_fn fn, void *ctx)
{
    atomic_store_explicit(&P.fn, fn, memory_order_relaxed);
    atomic_store_explicit(&P.ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&P.base, base, memory_order_relaxed);
    atomic_store_explicit(&P.units, units, memory_order_relaxed);
    atomic_store_explicit(&P.done, 0, memory_order_relaxed);
    const uint32_t g = atomic_load_explicit(&P.gen, memory_order_relaxed) + 1, tag = g & TAG_MASK;
    for (int t = 0; t < P.n; t++) {
        const uint64_t lo = (uint64_t)units * (uint64_t)t / (uint64_t)P.n;
        const uint64_t hi = (uint64_t)units * (uint64_t)(t + 1) / (uint64_t)P.n;
        atomic_store_explicit(&P.slots[t].range, (uint64_t)tag << (2 * UNIT_BITS) | lo << UNIT_BITS | hi,
                              memory_order_release);
    }
    atomic_store(&P.gen, g);
    if (atomic_load(&P.sleepers))
        futex_wake(&P.gen, INT_MAX);

    const uint32_t mine = work(0, tag);
    if (atomic_fetch_add(&P.done, mine) + mine == units)
        return;
    /* units still running on workers */
    for (;;) {
        const uint32_t d = atomic_load_explicit(&P.done, memory_order_acquire);
        if (d == units)
            return;
        if (spin_while(&P.done, d))
            continue;
        atomic_store(&P.caller_sleeps, 1);
        uint32_t e;
        while ((e = atomic_load(&P.done)) != units)
            futex_wait(&P.done, e);
        atomic_store(&P.caller_sleeps, 0);
        return;
    }
}

/* Whether the loops run better on the caller alone. With another busy
 * process on the machine, a worker that is descheduled while it holds a
 * unit makes the caller wait a time slice, and two threads can then be
 * slower than one. So the pool measures, for each kind of loop apart (its
 * function, its unit count and the class the caller set, pool_set_class:
 * a prompt's product and one token's are different loops): that kind's
 * loops are timed in windows of ADAPT_JOBS of them, and now and then a
 * window runs the other way (alone if the pool is using its workers, with
 * them if not); when it took less than ADAPT_GAIN of the window before
 * it, that kind switches. A probe that confirms the current way doubles
 * the gap to the next (2, 4, .. ADAPT_MAX windows); a switch starts again
 * at 2. On an idle machine the probes cost one window in ADAPT_MAX run
 * alone. (One window across every kind compared windows of different
 * loops — a layer's expert products against its attention — and sent a
 * MoE model's prompt alone a good part of the time, 20% slower.) A loop's
 * time is the real clock's, or, for tests, a cost model's
 * (pool_set_cost_model): the decisions then depend on nothing but the
 * loops. */
#define ADAPT_JOBS  32 /* a kind's loops per window: a few tokens' */
#define ADAPT_MAX   64
#define ADAPT_GAIN  0.9
#define ADAPT_KINDS 64 /* kinds kept; a new kind takes the least recently used slot */
#define ADAPT_PROBE 8  /* slots a kind may sit in (open addressing) */

typedef struct {
    pool_fn  fn; /* the key (fn NULL: a free slot) */
    int64_t  units;
    int      cls;
    bool     solo, probing;
    int      jobs, wait, gap; /* windows until the next probe; the gap after it */
    int64_t  len, last;       /* this window's loop time; the last regular window's */
    uint64_t used;            /* the table's tick at its last loop */
} adapt_kind;

static struct {
    bool         off;  /* pool_set_adaptive(false): always the workers */
    pool_cost_fn cost; /* pool_set_cost_model: loops take its time */
    void        *cost_user;
    int          cls;  /* pool_set_class */
    uint64_t     tick;
    adapt_kind  *last; /* the last loop's kind (pool_runs_alone) */
    adapt_kind   k[ADAPT_KINDS];
} A;

/* Back to the start: every kind forgotten (on the workers, first probe
 * after two windows). */
static void adapt_reset(void)
{
    memset(A.k, 0, sizeof A.k);
    A.last = NULL;
    A.tick = 0;
}

static adapt_kind *adapt_kind_of(pool_fn fn, int64_t units)
{
    uint64_t h = (uint64_t)(uintptr_t)fn * UINT64_C(0x9e3779b97f4a7c15);
    h ^= (uint64_t)units * UINT64_C(0xc2b2ae3d27d4eb4f) + (uint64_t)(uint32_t)A.cls;
    h ^= h >> 29;
    adapt_kind *old = NULL;
    for (int i = 0; i < ADAPT_PROBE; i++) {
        adapt_kind *k = &A.k[(h + (uint64_t)i) % ADAPT_KINDS];
        if (k->fn == fn && k->units == units && k->cls == A.cls)
            return k;
        if (!old || k->used < old->used)
            old = k; /* a free slot has used 0 */
    }
    *old = (adapt_kind){ .fn = fn, .units = units, .cls = A.cls, .wait = 2, .gap = 2 };
    return old;
}

/* A loop of kind k took len. */
static void adapt_done(adapt_kind *k, int64_t len)
{
    k->len += len;
    k->jobs++;
    /* a probe that is already far behind the window before it ends early
     * (a quarter in, at 1.5 times the pace): losing probes cost little */
    const bool lost = k->probing && k->last > 0 && k->jobs >= ADAPT_JOBS / 4 &&
                      (double)k->len * ADAPT_JOBS > 1.5 * (double)k->last * k->jobs;
    if (k->jobs < ADAPT_JOBS && !lost)
        return;
    const int64_t win = k->len;
    k->jobs = 0;
    k->len = 0;
    if (k->probing) {
        k->probing = false;
        if (!lost && k->last > 0 && (double)win < ADAPT_GAIN * (double)k->last) {
            k->solo = !k->solo;
            k->gap = 2;
        } else if (k->gap < ADAPT_MAX) {
            k->gap *= 2;
        }
        k->wait = k->gap;
        k->last = 0; /* the next regular window sets the baseline again */
    } else {
        k->last = win;
        k->probing = --k->wait <= 0;
    }
}

void pool_set_adaptive(bool on)
{
    A.off = !on;
    adapt_reset();
}

void pool_set_cost_model(pool_cost_fn cost, void *user)
{
    A.cost = cost;
    A.cost_user = user;
    adapt_reset();
}

void pool_set_class(int cls)
{
    A.cls = cls;
}

bool pool_runs_alone(void)
{
    return !A.off && A.last && A.last->solo;
}

void pool_for(int64_t units, pool_fn fn, void *ctx)
{
    if (units <= 0)
        return;
    const int inner = unit_thread;
    bool alone = inner >= 0 || pool_threads() == 1 || units == 1;
    adapt_kind *k = NULL;
    if (!alone && !A.off) {
        k = A.last = adapt_kind_of(fn, units);
        k->used = ++A.tick;
        alone = k->solo != k->probing;
    }
    const int64_t t0 = k && !A.cost ? now_ns() : 0;
    if (alone) {
        /* on this thread; a loop inside one of these units runs inline too */
        const int self = inner >= 0 ? inner : 0;
        unit_thread = self;
        for (int64_t u = 0; u < units; u++)
            fn(ctx, u, self);
        unit_thread = inner;
    } else {
        for (int64_t base = 0; base < units; base += WINDOW)
            run_job(base, (uint32_t)(units - base < WINDOW ? units - base : WINDOW), fn, ctx);
    }
    if (k)
        adapt_done(k, A.cost ? A.cost(units, alone, A.cost_user) : now_ns() - t0);
}
