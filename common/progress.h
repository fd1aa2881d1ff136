/*
 * progress.h — a progress bar on a terminal, silence otherwise. (The
 * thread-count default lives in the tools' common/args.h.)
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


#endif
