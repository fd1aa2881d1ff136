/*
 * memory.h — `gguf-inspect --memory`: what running a model takes.
 *
 * Weights (bytes per ggml type, experts apart from the dense tensors), the
 * KV cache at a context for each kind of block (full attention, sliding
 * window, a recurrent state; blocks that share an earlier block's KV own
 * none), and an estimate of the compute buffer. The caches are sized as
 * llama.cpp e21cdc11 allocates them on the CPU for one sequence with its
 * defaults (n_batch 2048, n_ubatch 512, flash attention on, as "auto"
 * resolves on the CPU, SWA cache not full-size): the context padded to
 * 256 cells; a sliding cache of PAD(min(context, n_swa + n_ubatch), 256)
 * cells; a recurrent state of one cell in f32. Which block is of which kind
 * comes from the registry (gguf_hparams_layer_in) and gguf-run's rule for
 * the sliding window (the family has a sliding_window_pattern row and a
 * window > 0). Reads only the header: no tensor data is touched.
 *
 * Not for: GPU offload, several sequences, a model not in the registry.
 */
#ifndef INSPECT_MEMORY_H
#define INSPECT_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "emit.h"
#include <ggufkit/gguf.h>

/* The largest context --memory takes: llama.cpp's n_ctx is a uint32_t, and
 * 2^24 cells is past any model's training context. */
#define MEMORY_MAX_CTX (INT64_C(1) << 24)

typedef struct memory_opts {
    int64_t  n_ctx;          /* the context asked; 0: the model's context_length */
    uint32_t type_k, type_v; /* the cache types (memory_cache_type_ok) */
} memory_opts;

/* What a block keeps between tokens. */
enum memory_kind {
    MEMORY_FULL,      /* K and V of every position, in the main cache */
    MEMORY_SLIDING,   /* K and V of the window, in the sliding cache */
    MEMORY_RECURRENT, /* a convolution window and a delta-rule state */
    MEMORY_SHARED     /* reads an earlier block's K and V: owns nothing */
};

/* One cache as llama.cpp allocates it. For the recurrent state, k is the
 * convolution state (llama.cpp's R) and v the delta-rule state (S). */
typedef struct memory_cache {
    const char *name;          /* "kv", "kv-swa", "recurrent" */
    uint64_t    cells;
    uint32_t    layers;
    uint32_t    type_k, type_v;
    uint64_t    k_bytes, v_bytes;
} memory_cache;

typedef struct memory_layer {
    uint8_t  kind;        /* enum memory_kind */
    int64_t  from;        /* MEMORY_SHARED: the block whose KV it reads; else -1 */
    int64_t  k_width, v_width; /* elements per cell (recurrent: per state row) */
    uint64_t bytes;
} memory_layer;

typedef struct memory_plan {
    int64_t       n_ctx_asked;   /* the context asked, or the model's */
    uint64_t      n_ctx;         /* cells of the main cache */
    uint64_t      n_ubatch;
    int64_t       n_swa;         /* the sliding window (0: none) */
    memory_cache  caches[3];
    int           n_caches;
    memory_layer *layers;
    int64_t       n_layers;
    /* weights: per type, dense and expert bytes; tensor counts */
    uint64_t      dense[GGUF_DT_COUNT], experts[GGUF_DT_COUNT], tensors[GGUF_DT_COUNT];
    uint64_t      dense_bytes, expert_bytes;
    int64_t       n_expert, n_expert_used;
    uint64_t      compute_bytes; /* the estimate (see memory_compute_estimate) */
} memory_plan;

/* Whether llama.cpp e21cdc11 takes type for the K or V cache (its
 * kv_cache_types: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1). */
bool memory_cache_type_ok(int type);
/* Those types' names, ", "-separated, for messages. */
const char *memory_cache_type_names(void);

/* llama.cpp's cells: the context padded to 256; the sliding cache's. */
uint64_t memory_ctx_cells(int64_t n_ctx);
uint64_t memory_ubatch(int64_t n_ctx);
uint64_t memory_swa_cells(int64_t n_ctx, int64_t n_swa);

/* Bytes of n elements of type (whole blocks), 0 when n is not a whole
 * number of blocks. */
uint64_t memory_row_bytes(uint32_t type, int64_t n);

/* The plan for f. 0, or -1 with the message in err (a model not in the
 * registry, a cache type whose blocks do not divide a row, out of memory).
 * Free with memory_plan_free. */
int memory_plan_make(const gguf_file *f, const memory_opts *o, memory_plan *p,
                     gguf_error *err);
void memory_plan_free(memory_plan *p);

/* Writes the report. Returns 0, 1 after an error about the file (in err),
 * or -1 on out of memory. */
int memory_write(emit *e, const gguf_file *f, const char *path, const memory_opts *o,
                 gguf_error *err);

#endif
