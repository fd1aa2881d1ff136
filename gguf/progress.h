/*
 * progress.h — a progress bar on a terminal, silence otherwise; and the
 * thread-count default every tool shares.
 */
#ifndef GGUF_PROGRESS_H
#define GGUF_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct progress {
    FILE    *out;     /* NULL when not a terminal (or disabled) */
    uint64_t total, done;
    int      last_pct;
    char     label[48];
} progress;

/* Starts a bar on stderr when it is a terminal and `enabled`. */
void progress_start(progress *p, const char *label, uint64_t total, bool enabled);

/* Advances by n units and redraws when the percentage changed. */
void progress_add(progress *p, uint64_t n);

/* Finishes the bar (clears the line). */
void progress_end(progress *p);

/* Number of threads to use: n when > 0, else the number of online CPUs. */
int default_threads(int n);

#endif
