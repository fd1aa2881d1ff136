/*
 * memory.c — `gguf-inspect --memory` (see memory.h).
 *
 * Sizes are llama.cpp e21cdc11's (src/llama-context.cpp, llama-model.cpp
 * create_memory, llama-kv-cache.cpp, llama-kv-cache-iswa.cpp,
 * llama-memory-recurrent.cpp, llama-hparams.cpp), for one sequence on the
 * CPU with its default batch sizes and flash attention on:
 *
 *   n_ctx     PAD(context, 256)                  (llama_context)
 *   n_ubatch  min(context, n_batch 2048, 512)
 *   kv        every block that is not sliding, not recurrent and owns its
 *             KV: K rows of head_count_kv × key_length, V rows of
 *             head_count_kv × value_length (the block's own), n_ctx cells
 *   kv-swa    the sliding blocks: PAD(min(n_ctx, n_swa + n_ubatch), 256) cells
 *   recurrent one cell per block, f32 whatever the cache types: R of
 *             (conv_kernel - 1) × (inner_size + 2 × group_count × state_size),
 *             S of state_size × inner_size (the delta rule's matrices)
 *
 * Blocks past block_count - shared_kv_layers own no cache (they read the
 * last own block of their kind, llama.cpp's reuse rule). A cache of ggml
 * type T holds ne / block_size × type_size bytes per row.
 */
#include "memory.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/arch.h>

/* llama.cpp's defaults that size the caches (common.h, llama-context.cpp) */
enum { CTX_PAD = 256, N_BATCH = 2048, N_UBATCH = 512 };

/* The most one cache may take (2^60 bytes, an exbibyte): past it the file's
 * sizes are refused, so that no sum of the report can wrap. */
#define MAX_CACHE_BYTES (UINT64_C(1) << 60)

/* common/arg.cpp kv_cache_types, in its order */
static const uint32_t cache_types[] = {
    GGUF_DT_F32, GGUF_DT_F16, GGUF_DT_BF16, GGUF_DT_Q8_0, GGUF_DT_Q4_0,
    GGUF_DT_Q4_1, GGUF_DT_IQ4_NL, GGUF_DT_Q5_0, GGUF_DT_Q5_1,
};
#define N_CACHE_TYPES (sizeof cache_types / sizeof cache_types[0])

/* The roles whose tensors hold one slice per expert (the router and the
 * shared expert are dense: every token reads them). */
static const int expert_roles[] = {
    GGUF_ROLE_FFN_GATE_EXPS, GGUF_ROLE_FFN_UP_EXPS, GGUF_ROLE_FFN_DOWN_EXPS,
    GGUF_ROLE_FFN_GATE_EXPS_BIAS, GGUF_ROLE_FFN_UP_EXPS_BIAS, GGUF_ROLE_FFN_DOWN_EXPS_BIAS,
    GGUF_ROLE_FFN_GATE_UP_EXPS, GGUF_ROLE_FFN_DOWN_EXPS_SCALE,
};

bool memory_cache_type_ok(int type)
{
    for (size_t i = 0; i < N_CACHE_TYPES; i++)
        if ((int)cache_types[i] == type)
            return true;
    return false;
}

const char *memory_cache_type_names(void)
{
    static char buf[128];
    if (!buf[0]) {
        size_t o = 0;
        for (size_t i = 0; i < N_CACHE_TYPES; i++)
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? ", " : "",
                                  gguf_dtype_name(cache_types[i]));
    }
    return buf;
}

static uint64_t pad(uint64_t n, uint64_t to)
{
    return (n + to - 1) / to * to;
}

uint64_t memory_ctx_cells(int64_t n_ctx)
{
    return pad((uint64_t)n_ctx, CTX_PAD);
}

uint64_t memory_ubatch(int64_t n_ctx)
{
    uint64_t b = (uint64_t)n_ctx < N_BATCH ? (uint64_t)n_ctx : N_BATCH;
    return b < N_UBATCH ? b : N_UBATCH;
}

uint64_t memory_swa_cells(int64_t n_ctx, int64_t n_swa)
{
    uint64_t base = memory_ctx_cells(n_ctx), want = (uint64_t)n_swa + memory_ubatch(n_ctx);
    return pad(want < base ? want : base, CTX_PAD);
}

uint64_t memory_row_bytes(uint32_t type, int64_t n)
{
    const gguf_dtype_traits *t = gguf_dtype_get(type);
    if (!t || !t->valid || n < 0 || (uint64_t)n % t->blck_size)
        return 0;
    return (uint64_t)n / t->blck_size * t->type_size;
}

static bool is_expert(const gguf_arch *a, const char *name)
{
    int block;
    const gguf_arch_tensor *t = gguf_arch_match(a, name, &block);
    if (!t)
        return false;
    int role = gguf_arch_tensor_role(t);
    for (size_t i = 0; i < sizeof expert_roles / sizeof expert_roles[0]; i++)
        if (expert_roles[i] == role)
            return true;
    return false;
}

static void weights(const gguf_file *f, const gguf_arch *a, memory_plan *p)
{
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        bool exp = is_expert(a, t->name);
        p->tensors[t->type]++;
        (exp ? p->experts : p->dense)[t->type] += t->nbytes;
        *(exp ? &p->expert_bytes : &p->dense_bytes) += t->nbytes;
    }
}

static int64_t hp_int(const gguf_hparams *hp, int id)
{
    int64_t v = 0;
    gguf_hparams_get_int(hp, id, &v);
    return v;
}

/* The widest row counted: 2^52 elements (with 2^24 cells, 2^76 bytes
 * would wrap; add_rows refuses past 2^60 first). */
#define MAX_ROW (UINT64_C(1) << 52)

/* Adds one block's K and V rows of width k, v to cache c, the block's bytes
 * to *bytes; -1 (err set) when a width is unknown, a row is not whole
 * blocks of the type, or the cache would pass MAX_CACHE_BYTES. A width of
 * 0 is no row (a recurrent block with a convolution of one tap). */
static int add_rows(memory_cache *c, int64_t il, int64_t k, int64_t v, uint64_t *bytes,
                    gguf_error *err)
{
    if (k < 0 || v < 0)
        return gguf_error_set(err, "block %" PRId64 ": no %s width (the model's keys give none)",
                              il, k < 0 ? "K" : "V");
    uint64_t kb = memory_row_bytes(c->type_k, k), vb = memory_row_bytes(c->type_v, v);
    if ((k && !kb) || (v && !vb)) {
        bool bad_k = k && !kb;
        const gguf_dtype_traits *t = gguf_dtype_get(bad_k ? c->type_k : c->type_v);
        return gguf_error_set(err, "block %" PRId64 ": a %s cache row of %" PRId64 " elements "
                              "is not whole blocks of %s (%u elements): choose another cache "
                              "type", il, bad_k ? "K" : "V", bad_k ? k : v, t->name,
                              t->blck_size);
    }
    /* kb, vb < 2^60 (widths are below 2^52); cells <= 2^24 */
    uint64_t room = MAX_CACHE_BYTES - c->k_bytes - c->v_bytes;
    if (kb + vb > room / c->cells)
        return gguf_error_set(err, "block %" PRId64 ": the %s cache would pass 2^60 bytes", il,
                              c->name);
    c->layers++;
    c->k_bytes += kb * c->cells;
    c->v_bytes += vb * c->cells;
    *bytes = (kb + vb) * c->cells;
    return 0;
}

/* The context: the one asked, else the model's context_length. */
static int context(const gguf_hparams *hp, const memory_opts *o, memory_plan *p,
                   gguf_error *err)
{
    p->n_ctx_asked = o->n_ctx ? o->n_ctx : hp_int(hp, GGUF_HP_CONTEXT_LENGTH);
    if (p->n_ctx_asked < 1 || p->n_ctx_asked > MEMORY_MAX_CTX)
        return gguf_error_set(err, "context_length %" PRId64 " is out of range for --memory "
                              "(1 to %" PRId64 "): give one with --ctx-size", p->n_ctx_asked,
                              MEMORY_MAX_CTX);
    p->n_ctx = memory_ctx_cells(p->n_ctx_asked);
    p->n_ubatch = memory_ubatch(p->n_ctx_asked);
    return 0;
}

/* The block whose KV a shared block reads (llama.cpp's reuse rule: the last
 * own block, or the one before it for a sliding block). */
static int64_t shared_source(const gguf_hparams *hp, int64_t n_layer, bool sliding)
{
    int64_t n_own = 0;
    for (int64_t j = 0; j < n_layer; j++)
        n_own += gguf_hparams_layer_in(hp, GGUF_LAYERS_OWN_KV, j);
    return n_own - (sliding ? 2 : 1);
}

static int caches(const gguf_hparams *hp, const memory_opts *o, memory_plan *p,
                  gguf_error *err)
{
    const gguf_arch *a = gguf_hparams_arch(hp);
    int64_t n_layer = hp_int(hp, GGUF_HP_BLOCK_COUNT);
    /* gguf-run's rule: a window only for a family with a sliding pattern */
    p->n_swa = gguf_arch_hparam_of(a, GGUF_HP_SWA_PATTERN) ? hp_int(hp, GGUF_HP_SLIDING_WINDOW)
                                                            : 0;
    bool any_swa = false, any_rec = false;
    for (int64_t il = 0; il < n_layer; il++) {
        any_swa |= p->n_swa > 0 && gguf_hparams_layer_in(hp, GGUF_LAYERS_SLIDING, il);
        any_rec |= gguf_hparams_layer_in(hp, GGUF_LAYERS_RECURRENT, il);
    }
    memory_cache *kv = &p->caches[p->n_caches++], *swa = NULL, *rec = NULL;
    *kv = (memory_cache){ "kv", p->n_ctx, 0, o->type_k, o->type_v, 0, 0 };
    if (any_swa) {
        swa = &p->caches[p->n_caches++];
        *swa = (memory_cache){ "kv-swa", memory_swa_cells(p->n_ctx_asked, p->n_swa), 0,
                               o->type_k, o->type_v, 0, 0 };
    }
    if (any_rec) {
        rec = &p->caches[p->n_caches++];
        *rec = (memory_cache){ "recurrent", 1, 0, GGUF_DT_F32, GGUF_DT_F32, 0, 0 };
    }
    if (n_layer < 1 || n_layer > GGUF_MODEL_MAX_BLOCKS) /* the registry's range */
        return gguf_error_set(err, "block_count %" PRId64 " is out of range", n_layer);
    p->layers = calloc((size_t)n_layer, sizeof *p->layers);
    if (!p->layers)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    p->n_layers = n_layer;
    for (int64_t il = 0; il < n_layer; il++) {
        memory_layer *l = &p->layers[il];
        l->from = -1;
        bool sliding = p->n_swa > 0 && gguf_hparams_layer_in(hp, GGUF_LAYERS_SLIDING, il);
        if (gguf_hparams_layer_in(hp, GGUF_LAYERS_RECURRENT, il)) {
            int64_t conv = hp_int(hp, GGUF_HP_SSM_CONV_KERNEL), inner =
                hp_int(hp, GGUF_HP_SSM_INNER_SIZE), state = hp_int(hp, GGUF_HP_SSM_STATE_SIZE),
                groups = hp_int(hp, GGUF_HP_SSM_GROUP_COUNT);
            l->kind = MEMORY_RECURRENT;
            /* each key is at most 2^24 (the registry's range): the sums
             * stay below 2^50, the products are checked */
            uint64_t chans = (uint64_t)inner + 2 * (uint64_t)groups * (uint64_t)state;
            uint64_t taps = conv > 0 ? (uint64_t)conv - 1 : 0;
            if (taps && chans > MAX_ROW / taps)
                return gguf_error_set(err, "block %" PRId64 ": a recurrent state row of %" PRIu64
                                      " × %" PRIu64 " is too large", il, taps, chans);
            l->k_width = (int64_t)(taps * chans);
            l->v_width = state * inner;
            if (add_rows(rec, il, l->k_width, l->v_width, &l->bytes, err))
                return -1;
        } else {
            l->k_width = gguf_hparams_layer_dim(hp, GGUF_DIM_K, il);
            /* multi-head latent attention keeps the latent and the rope
             * key (key_length wide, one "head") and no V: llama.cpp's
             * kv cache has no V tensor when the model is MLA */
            l->v_width = gguf_arch_has(a, GGUF_FEAT_MLA)
                             ? 0 : gguf_hparams_layer_dim(hp, GGUF_DIM_V, il);
            if (!gguf_hparams_layer_in(hp, GGUF_LAYERS_OWN_KV, il)) {
                l->kind = MEMORY_SHARED;
                l->from = shared_source(hp, n_layer, sliding);
                continue;
            }
            l->kind = sliding ? MEMORY_SLIDING : MEMORY_FULL;
            if (add_rows(sliding ? swa : kv, il, l->k_width, l->v_width, &l->bytes, err))
                return -1;
        }
    }
    return 0;
}

/* The compute buffer, estimated (llama.cpp reserves its graph for a batch
 * of n_ubatch tokens, n_ubatch outputs, and its allocator reuses a tensor's
 * memory once nothing reads it). Two peaks, the larger counts:
 *   - in the blocks: the attention mask, built in f32 and copied to f16 for
 *     flash attention (6 bytes a cell a token; measured: +180 MiB from 4096
 *     to 65536 cells at 512 tokens on every fixture), with a block's
 *     activations, 4 bytes × (3 × embedding_length + 2 × the widest of
 *     feed-forward, q and the experts used) a token;
 *   - at the output: the logits, 4 bytes × (n_vocab + 3 × embedding_length)
 *     a token, once the mask is freed.
 * docs/gguf-inspect.md gives its accuracy on the fixtures. */
static uint64_t compute_estimate(const gguf_hparams *hp, const memory_plan *p)
{
    int64_t embd = gguf_hparams_dim(hp, GGUF_DIM_EMBD), wide = 0, used = p->n_expert_used;
    for (int64_t il = 0; il < p->n_layers; il++) {
        int64_t w[] = { gguf_hparams_layer_dim(hp, GGUF_DIM_FF, il),
                        gguf_hparams_layer_dim(hp, GGUF_DIM_Q, il),
                        used > 0 ? used * gguf_hparams_layer_dim(hp, GGUF_DIM_FF_EXP, il) : 0 };
        for (size_t d = 0; d < sizeof w / sizeof w[0]; d++)
            wide = w[d] > wide ? w[d] : wide;
    }
    int64_t vocab = gguf_hparams_dim(hp, GGUF_DIM_VOCAB);
    uint64_t e = (uint64_t)(embd > 0 ? embd : 0), n = p->n_ubatch;
    uint64_t blocks = 6 * n * p->n_ctx + 4 * n * (3 * e + 2 * (uint64_t)wide);
    uint64_t output = 4 * n * ((uint64_t)(vocab > 0 ? vocab : 0) + 3 * e);
    return blocks > output ? blocks : output;
}

int memory_plan_make(const gguf_file *f, const memory_opts *o, memory_plan *p,
                     gguf_error *err)
{
    memset(p, 0, sizeof *p);
    gguf_hparams *hp = NULL;
    if (!memory_cache_type_ok((int)o->type_k) || !memory_cache_type_ok((int)o->type_v))
        return gguf_error_set(err, "cache type %s is not one llama.cpp takes (%s)",
                              gguf_dtype_name(memory_cache_type_ok((int)o->type_k) ? o->type_v
                                                                                   : o->type_k),
                              memory_cache_type_names());
    if (gguf_hparams_read(f, &hp, err))
        return -1;
    const gguf_arch *a = gguf_hparams_arch(hp);
    int rc = context(hp, o, p, err);
    if (!rc)
        rc = caches(hp, o, p, err);
    if (!rc) {
        weights(f, a, p);
        p->n_expert = hp_int(hp, GGUF_HP_EXPERT_COUNT);
        p->n_expert_used = hp_int(hp, GGUF_HP_EXPERT_USED_COUNT);
        p->compute_bytes = compute_estimate(hp, p);
    }
    gguf_hparams_free(hp);
    if (rc)
        memory_plan_free(p);
    return rc;
}

void memory_plan_free(memory_plan *p)
{
    free(p->layers);
    p->layers = NULL;
    p->n_layers = 0;
}

/* ------------------------------------------------------------------------
 * The report
 * ------------------------------------------------------------------------ */

static const char *const kind_names[] = { "full", "sliding", "recurrent", "shared" };

static emit_value bytes(uint64_t n)
{
    return ev_unit(ev_uint(n), EU_BYTES);
}

static void summary(emit *e, const gguf_file *f, const char *path, const memory_plan *p)
{
    uint64_t cache = 0, state = 0, weights_all = p->dense_bytes + p->expert_bytes;
    for (int i = 0; i < p->n_caches; i++)
        *(strcmp(p->caches[i].name, "recurrent") ? &cache : &state) +=
            p->caches[i].k_bytes + p->caches[i].v_bytes;
    gguf_str arch = { 0 };
    gguf_kv_str(gguf_lookup_kv(f, GGUF_KEY_ARCHITECTURE), &arch);
    emit_map_begin(e, "memory", NULL, 0);
    emit_field(e, "file", NULL, ev_str(path));
    emit_field(e, "architecture", NULL, ev_strn(arch.ptr, (size_t)arch.len));
    emit_field(e, "context", NULL, ev_int(p->n_ctx_asked));
    emit_field(e, "n_ctx", "cells", ev_uint(p->n_ctx));
    emit_field(e, "n_ubatch", "ubatch", ev_uint(p->n_ubatch));
    emit_field(e, "n_swa", "sliding window", p->n_swa > 0 ? ev_int(p->n_swa) : ev_absent());
    emit_field(e, "type_k", "cache type K", ev_str(gguf_dtype_name(p->caches[0].type_k)));
    emit_field(e, "type_v", "cache type V", ev_str(gguf_dtype_name(p->caches[0].type_v)));
    emit_field(e, "weights", NULL, bytes(weights_all));
    if (p->expert_bytes) {
        emit_field(e, "weights_dense", "  dense", bytes(p->dense_bytes));
        emit_field(e, "weights_experts", "  experts", bytes(p->expert_bytes));
        emit_field(e, "n_expert", "  expert count", ev_int(p->n_expert));
        emit_field(e, "n_expert_used", "  used per token", ev_int(p->n_expert_used));
        uint64_t active = p->dense_bytes;
        if (p->n_expert > 0)
            active += p->expert_bytes / (uint64_t)p->n_expert * (uint64_t)p->n_expert_used;
        emit_field(e, "weights_active", "  read per token", bytes(active));
    }
    emit_field(e, "kv_cache", "KV cache", bytes(cache));
    if (state)
        emit_field(e, "recurrent_state", "recurrent state", bytes(state));
    emit_field(e, "compute_estimate", "compute (estimate)", bytes(p->compute_bytes));
    emit_field(e, "total", NULL, bytes(weights_all + cache + state + p->compute_bytes));
    emit_map_end(e);
}

static void weight_table(emit *e, const memory_plan *p)
{
    static const emit_column cols[] = {
        { "type", NULL, 0 },
        { "tensors", NULL, EMIT_COL_RIGHT },
        { "dense", NULL, EMIT_COL_RIGHT },
        { "experts", NULL, EMIT_COL_RIGHT },
        { "bytes", NULL, EMIT_COL_RIGHT },
    };
    emit_table_begin(e, "weights", "weights", cols, 5, EMIT_KEYED);
    for (uint32_t t = 0; t < GGUF_DT_COUNT; t++) {
        if (!p->tensors[t])
            continue;
        emit_value row[] = {
            ev_str(gguf_dtype_name(t)), ev_uint(p->tensors[t]), ev_uint(p->dense[t]),
            ev_uint(p->experts[t]), ev_uint(p->dense[t] + p->experts[t]),
        };
        emit_row(e, row);
    }
    emit_table_end(e);
}

static void cache_table(emit *e, const memory_plan *p)
{
    static const emit_column cols[] = {
        { "cache", NULL, 0 },
        { "layers", NULL, EMIT_COL_RIGHT },
        { "cells", NULL, EMIT_COL_RIGHT },
        { "type_k", "K/R TYPE", 0 },
        { "k_bytes", "K/R BYTES", EMIT_COL_RIGHT },
        { "type_v", "V/S TYPE", 0 },
        { "v_bytes", "V/S BYTES", EMIT_COL_RIGHT },
        { "bytes", NULL, EMIT_COL_RIGHT },
        { "mib", "MIB", EMIT_COL_RIGHT },
    };
    emit_table_begin(e, "caches", "caches (as llama.cpp e21cdc11 allocates them)", cols, 9,
                     EMIT_KEYED);
    for (int i = 0; i < p->n_caches; i++) {
        const memory_cache *c = &p->caches[i];
        char mib[32];
        /* llama.cpp's log line: a float of MiB to two places */
        snprintf(mib, sizeof mib, "%.2f", (double)((float)(c->k_bytes + c->v_bytes) /
                                                   (1024.0f * 1024.0f)));
        emit_value row[] = {
            ev_str(c->name), ev_uint(c->layers), ev_uint(c->cells),
            ev_str(gguf_dtype_name(c->type_k)), ev_uint(c->k_bytes),
            ev_str(gguf_dtype_name(c->type_v)), ev_uint(c->v_bytes),
            ev_uint(c->k_bytes + c->v_bytes), ev_str(mib),
        };
        emit_row(e, row);
    }
    emit_table_end(e);
}

static void layer_table(emit *e, const memory_plan *p)
{
    static const emit_column cols[] = {
        { "layer", NULL, EMIT_COL_RIGHT },
        { "kind", NULL, 0 },
        { "kv_from", "KV OF", EMIT_COL_RIGHT },
        { "k_width", "K/R WIDTH", EMIT_COL_RIGHT },
        { "v_width", "V/S WIDTH", EMIT_COL_RIGHT },
        { "bytes", NULL, EMIT_COL_RIGHT },
    };
    emit_table_begin(e, "layers", "layers", cols, 6, 0);
    for (int64_t il = 0; il < p->n_layers; il++) {
        const memory_layer *l = &p->layers[il];
        emit_value row[] = {
            ev_int(il), ev_str(kind_names[l->kind]),
            l->from >= 0 ? ev_int(l->from) : ev_absent(), ev_int(l->k_width),
            ev_int(l->v_width), ev_uint(l->bytes),
        };
        emit_row(e, row);
    }
    emit_table_end(e);
}

int memory_write(emit *e, const gguf_file *f, const char *path, const memory_opts *o,
                 gguf_error *err)
{
    memory_plan p;
    if (memory_plan_make(f, o, &p, err))
        return err->code == GGUF_ERR_NOMEM ? -1 : 1;
    summary(e, f, path, &p);
    weight_table(e, &p);
    cache_table(e, &p);
    layer_table(e, &p);
    memory_plan_free(&p);
    return 0;
}
