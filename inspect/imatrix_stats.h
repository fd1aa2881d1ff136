/*
 * imatrix_stats.h — llama-imatrix's --show-statistics for an importance
 * matrix file (either format), and what it does not show: the matrices and
 * experts no activation reached.
 *
 * The tables are llama-imatrix e21cdc11's, line for line and with its
 * arithmetic (float sums in its order): per tensor Σ(Act²), min, max, mean,
 * standard deviation, share active (|x| > 1e-5), elements, entropy and its
 * share of the maximum, the share above one standard deviation (ZD) and the
 * cosine similarity with the same tensor of the block before; then per
 * block the element-weighted Σ(Act²), ZD and cosine similarity. Where
 * llama-imatrix only logs an error (a matrix without activations) a line
 * says so; after the tables, the coverage: every matrix with experts (or
 * all of it) that no row reached.
 *
 * Not for: reading or writing the file (libgguf's gguf_imatrix_*).
 */
#ifndef INSPECT_IMATRIX_STATS_H
#define INSPECT_IMATRIX_STATS_H

#include <stdio.h>

#include <ggufkit/quants.h>

/* The statistics of im (loaded from path, named so in the header) on out.
 * Legacy .dat entries are scaled as llama-imatrix reads them, with its
 * default chunk of 512 tokens. 0, or -1 when out of memory. */
int imatrix_stats_write(FILE *out, const char *path, const gguf_imatrix *im);

#endif
