/*
 * importance.h — gguf-run --imatrix: importance matrices collected as
 * llama-imatrix (llama.cpp c392e50) collects them.
 *
 * For every weight matrix of the layers (blk.*; output.weight too with
 * --process-output when it is not tied to token_embd), each product whose
 * input has at least RUN_IMPORTANCE_MIN_BATCH rows adds, per input column j,
 * the squares of the f32 activations fed to it:
 *
 *   sum[j] += x[r][j]^2 for every row r,  count += rows,  ncall += 1
 *
 * A stacked expert matrix (MoE) gets, for every row routed to expert e,
 * sum[e][j] += x[j]^2 and counts[e] += 1, from products of any size (as
 * llama-imatrix collects mul_mat_id); its GGUF entry holds the n_expert
 * rows of sums and the n_expert counts.
 *
 * The GGUF file (the default, as llama-imatrix e21cdc11 writes it) stores
 * per matrix sum[j] (NAME.in_sum2) and count (NAME.counts), the chunk count
 * and size and the text file's name. The legacy .dat stores, per matrix,
 * ncall and sum[j] / count * ncall (what c392e50's save_imatrix writes; in
 * f32 as it computes it), then the largest ncall as the chunk count and the
 * text file's name. The text is
 * cut into chunks of n_ctx tokens with BOS first, as for --perplexity.
 * (Named importance, not imatrix: the file format is libgguf's imatrix.c.)
 *
 * Not for: the file format (gguf/imatrix.c, declared in <ggufkit/quants.h>),
 * the forward pass (forward.h).
 */
#ifndef RUN_IMPORTANCE_H
#define RUN_IMPORTANCE_H

#include <stdbool.h>
#include <stdint.h>

#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include "forward.h"
#include "model.h"

/* llama-imatrix ignores products over fewer rows (single-token decodes). */
#define RUN_IMPORTANCE_MIN_BATCH 16

typedef struct run_importance_entry {
    const run_matrix *w;     /* the matrix, as the forward pass passes it */
    char             name[64];
    int               ncols;
    float            *sum;   /* (ncols,) sums of squares, f32 as llama.cpp keeps them;
                              * experts: (n_mat, ncols) */
    int64_t           count; /* rows added (the same for every column) */
    int32_t           ncall; /* products added */
    int               n_mat; /* 1, or the experts of a stacked matrix */
    int64_t          *counts;/* experts: rows added per expert (n_mat), else NULL */
    bool              loaded;/* has data from a --in-file file */
} run_importance_entry;

typedef struct run_importance {
    int                   n;
    run_importance_entry *e;
    int                   cap;        /* entries e has room for */
    char                **datasets;   /* of the --in-file files, in their order */
    int                   n_datasets;
    bool                  loaded;     /* a file was loaded: files are written as
                                       * llama-imatrix e21cdc11 writes them */
} run_importance;

/* One entry per matrix of m's layers (q, k, v, o, gate, up, down), plus
 * output.weight when with_output and the model has its own. -1 with err. */
int run_importance_init(run_importance *im, const run_model *m, bool with_output,
                        gguf_error *err);

void run_importance_free(run_importance *im);

/* Adds nb rows of e->ncols activations to e (no batch-size test). */
void run_importance_add(run_importance_entry *e, const float *x, int nb);

/* The forward pass's hook (run_act_hook): user is a run_importance; adds x
 * to w's entry when w has one and nb >= RUN_IMPORTANCE_MIN_BATCH. */
void run_importance_hook(void *user, const run_matrix *w, const float *x, int nb);

/* Value j of an entry as the file stores it: sum[j] / count * ncall. */
float run_importance_value(const run_importance_entry *e, int j);

/* Writes the entries that saw data (llama-imatrix skips the others) and
 * the dataset name to path: with gguf, in llama-imatrix e21cdc11's GGUF
 * format (raw sums and row counts; chunk count = largest count / n_ctx,
 * chunk size n_ctx), else in the legacy .dat format (values as above; chunk
 * count = largest ncall). -1 with err. */
int run_importance_save(const run_importance *im, const char *path, const char *dataset,
                        bool gguf, int n_ctx, gguf_error *err);

/* Adds the importance matrix in path (either format) to im as
 * llama-imatrix e21cdc11's --in-file does: by name, a GGUF entry's sums
 * added in f32 and its counts (rounded to whole numbers) in integers, a
 * legacy .dat entry's values times chunk_size and its ncall times
 * chunk_size to every count (the .dat keeps per-chunk means); an entry of
 * a name im does not have is added; its datasets are appended to
 * im->datasets. A size that disagrees with the entry of that name (or
 * with the model's matrix), a count too large to be one, or a sum that
 * overflows is an error (-1 with err; im may hold part of the file then). */
int run_importance_load(run_importance *im, const char *path, uint32_t chunk_size,
                        gguf_error *err);

/* The entries of a file already read (run_importance_load without the
 * datasets; the fuzzer's entry point). */
int run_importance_merge(run_importance *im, const gguf_imatrix *f, uint32_t chunk_size,
                         gguf_error *err);

/* The entries of the --in-file files alone, combined and written as
 * llama-imatrix e21cdc11 writes them (gguf: its GGUF file with every
 * file's datasets; else its legacy .dat: per matrix ncall = the largest
 * count / chunk_size rounded up and values = sum / count * ncall, chunk
 * count = largest count / chunk_size, the last dataset). With text
 * (collected over it too), its name is the last dataset. -1 with err. */
int run_importance_save_loaded(const run_importance *im, const char *path, const char *text,
                               bool gguf, uint32_t chunk_size, gguf_error *err);

/* Runs the text's first max_chunks (0: all) chunks of s->n_ctx tokens
 * (bos >= 0: replacing each chunk's first token) through m with the hook
 * on; *n_chunk gets the chunks run. The text needs 2 * n_ctx tokens, as
 * llama-imatrix asks. */
int run_importance_collect(run_importance *im, run_state *s, const run_model *m,
                           const int32_t *tokens, int n_tokens, int32_t bos, int max_chunks,
                           bool all_logits, int *n_chunk, gguf_error *err);

#endif
