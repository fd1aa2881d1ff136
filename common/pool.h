/* SPDX-License-Identifier: MIT */
/*
 * pool.h — the tools' worker threads: one process-wide pool that runs a
 * loop of independent units on every thread, the calling thread included.
 *
 * For: the forward pass (gguf-run, a few hundred short loops per token) and
 * gguf-quantize (a loop per tensor). Not for: nested loops (a unit may not
 * call pool_for), or work whose result depends on which thread runs a unit.
 *
 * Why not OpenMP: its idle threads spin-wait at every barrier, and with one
 * other busy process on a 2-core machine a spinning worker takes the core
 * the thread with the work needs — decode fell from 170 to 10 tok/s. Here an
 * idle worker spins a few microseconds, then sleeps on a futex; the caller
 * never waits for a worker that has not started (it takes the units
 * itself), only for units a worker is computing; units are handed out one
 * at a time from per-thread ranges, and a thread that runs dry takes from
 * the back of the fullest range, so a slow or descheduled thread costs one
 * unit, not its share. And when the loops keep finishing sooner on the
 * caller alone, they run there (pool_for).
 */
#ifndef GGUFKIT_POOL_H
#define GGUFKIT_POOL_H

#include <stdbool.h>
#include <stdint.h>

/* One unit of a loop; thread is 0 for the caller, 1..n-1 for the workers
 * (an index into per-thread scratch: a thread runs one unit at a time). */
typedef void (*pool_fn)(void *ctx, int64_t unit, int thread);

/* Sets the pool's thread count (1..POOL_MAX_THREADS, the caller counted):
 * starts or stops workers as needed. Before the first call the pool has
 * cli_default_threads() threads. Not to be called while a loop runs.
 * Returns 0, or -1 if a thread could not be started (the pool then has as
 * many as did start, at least the caller). */
int pool_set_threads(int n);

/* Threads in the pool, the caller counted. */
int pool_threads(void);

/* fn(ctx, u, thread) for every u in [0, units), each exactly once, spread
 * over the pool's threads; returns when all are done. The pool measures
 * whether its loops finish sooner on the caller alone (another busy
 * process on the machine can make two threads slower than one), each kind
 * of loop apart, and runs them so while that holds, probing now and then
 * (pool.c). */
void pool_for(int64_t units, pool_fn fn, void *ctx);

/* Adaptive (the default) or always on every thread (tests of the sharing).
 * Either way the adaptation starts again from its beginning (on every
 * thread, first probe after two windows). */
void pool_set_adaptive(bool on);

/* For tests of the adaptation: how long a loop of `units` units takes,
 * alone on the caller or on every thread, in the adaptation's time. */
typedef int64_t (*pool_cost_fn)(int64_t units, bool alone, void *user);

/* With a cost model the adaptation measures its windows on a clock that
 * only the loops it decides move, each by cost(units, alone, user) once it
 * has run (the units still run as decided, on the real threads); NULL: the
 * real clock (CLOCK_MONOTONIC, the default). Its decisions then follow from
 * the model alone, never from how busy the machine is. Resets the
 * adaptation as pool_set_adaptive does. */
void pool_set_cost_model(pool_cost_fn cost, void *user);

/* The class of the loops that follow (0 at the start): loops of the same
 * function and unit count but another class are measured apart by the
 * adaptation (gguf-run sets a batch's size class, so that a prompt's
 * products and one token's are not compared). */
void pool_set_class(int cls);

/* Whether the adaptive pool ran the kind of the last loop on the caller
 * alone (false before any loop). */
bool pool_runs_alone(void);

#define POOL_MAX_THREADS 256

#endif
