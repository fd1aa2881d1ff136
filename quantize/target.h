/*
 * target.h — gguf-quantize --sensitivity: each tensor's type chosen for a
 * file size from measured costs.
 *
 * The table is gguf-run --sensitivity's (run/sensitivity.h): per tensor
 * and type, the bytes and the mean KL divergence that quantizing that
 * tensor alone puts on the model's output. Taking the costs as adding up
 * over tensors, the mix that fits the size with the least summed KLD is a
 * multiple-choice knapsack, solved here as llama.cpp users' recipes are
 * argued for but by measurement: a Lagrange multiplier λ (each tensor takes
 * the type minimising kld + λ · bytes; λ bisected to the smallest whose mix
 * fits), then the bytes left filled by the upgrades of most KLD saved per
 * byte. When the stock mix's own summed cost is no worse, it is kept.
 *
 * Not for: measuring (gguf-run), writing the file (main.c).
 */
#ifndef QUANTIZE_TARGET_H
#define QUANTIZE_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include <ggufkit/gguf.h>

typedef struct target_row {
    char    *name;
    uint32_t type;
    uint64_t bytes;
    double   kld;
} target_row;

typedef struct target_table {
    target_row *rows;
    size_t      n;
} target_table;

/* The largest table read (a line per tensor and type). */
#define TARGET_TABLE_MAX (64u << 20)

/* Parses the text of a table (comments '#', rows NAME TAB TYPE TAB BYTES
 * TAB KLD; types known, bytes > 0, KLD finite, no row twice). 0, or -1
 * with err naming the line. */
int target_table_parse(const char *data, size_t len, target_table *t, gguf_error *err);

/* Reads path (at most TARGET_TABLE_MAX bytes) and parses it. */
int target_table_load(const char *path, target_table *t, gguf_error *err);

void target_table_free(target_table *t);

/* Sorts the rows of t by tensor and type; a row twice is an error. */
int target_table_index(target_table *t, gguf_error *err);

/* One tensor to choose a type for: its name, its rows' width and count
 * (for the bytes of each type), the type the preset gives it; chosen is
 * set. */
typedef struct target_item {
    const char        *name;
    int64_t            ne0;
    uint64_t           n_rows;
    uint32_t           stock;
    uint32_t           chosen;
    /* for target_estimate: the tensor (its data mapped), its importance
     * weights (ne0 per expert, or NULL), its experts (1: a matrix) */
    const gguf_tensor *t;
    const float       *imatrix;
    int                n_experts;
} target_item;

typedef struct target_result {
    uint64_t bytes, stock_bytes; /* of the items: the mix chosen, the stock mix */
    double   kld, stock_kld;     /* summed costs; stock_kld < 0 when a stock type has no row */
    int      n_changed;          /* items whose type differs from the stock */
    int      kept_stock;         /* 1: the stock mix was kept (its cost no worse) */
} target_result;

/* Chooses every item's type among its table rows so that their bytes are
 * at most budget, with the least summed KLD; items the table has no row
 * for keep their stock type (their bytes count). A row whose bytes differ
 * from the tensor's at that type, or no mix fitting the budget, is an
 * error. */
int target_allocate(target_item *items, size_t n, const target_table *t, uint64_t budget,
                    target_result *res, gguf_error *err);

/* An estimated table (estimate.c), for target_table_fill: for every item
 * and each of types that fits its rows (and its stock type), the bytes and
 * the relative output error the importance matrix predicts (the
 * noise-to-signal ratio of the tensor's product, sampled rows quantized as
 * the file would be) in the KLD's place. Runs on the pool. 0, or -1 with
 * err. */
int target_estimate(const target_item *items, size_t n, const uint32_t *types, int n_types,
                    target_table *t, gguf_error *err);

/* Completes a measured table t with the estimate est: a tensor t has rows
 * for gets the types only est has, each at its estimated cost times the
 * tensor's measured-over-estimated ratio on the types both have (0 when
 * the measured costs are not above 0); tensors t has no row for stay
 * without. 0, or -1 with err. */
int target_table_fill(target_table *t, const target_table *est, gguf_error *err);

#endif
