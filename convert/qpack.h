/*
 * qpack.h — the integer-packed quantized sources llama.cpp e21cdc11's
 * ModelBase.dequant_model turns into float32: compressed-tensors
 * "pack-quantized" (weight_packed / weight_scale / weight_zero_point /
 * weight_shape), GPTQ (qweight / qzeros / scales / g_idx) and BitNet
 * ternary weights (quant_method "bitnet": weight / weight_scale).
 *
 * These are the kernels and the shape checks, one output row at a time (so
 * a converter streams: one row of float32 resident, the packed tensors
 * mapped). Each value is produced as dequant_model's torch code produces
 * it: the integer difference (code − zero) exactly, converted to float32,
 * times the float32 of the scale (one rounding).
 *
 * Refused as dequant_model refuses or cannot do (the check functions fill
 * err): compressed-tensors bits outside 1..8, a column count not a whole
 * number of groups, a weight_shape not 2-D, packed words too few for the
 * row, scale / zero-point shapes that do not broadcast; GPTQ bits other
 * than 2, 4, 8 (3 is NotImplementedError there), qweight / qzeros not
 * int32, rows not a whole number of words, scale / zero shapes that do
 * not match, g_idx entries outside [0, groups) (torch would wrap negative
 * ones; we refuse them); BitNet weights not U8 / I8 or not 2-D, a
 * weight_scale of more than one factor, a factor that is 0 or not finite
 * (every value would be infinite or NaN).
 */
#ifndef CONVERT_QPACK_H
#define CONVERT_QPACK_H

#include <stdbool.h>
#include <stdint.h>

#include <ggufkit/gguf.h>

#include "fp8.h"
#include "json.h"

/* Values per int32 word for a code width: torch.arange(0, 32 - (bits - 1),
 * bits) shifts (4 bits: 8, 8 bits: 4, 3 bits: 10). */
int qpack_per_word(int bits);

/* compressed-tensors pack-quantized, strategy "group". */
typedef struct ct_pack {
    int     bits;
    int     per_word;
    int64_t rows, cols;   /* weight_shape: the output weight */
    int64_t words;        /* int32 words per packed row */
    int64_t group;        /* group_size */
    int64_t groups;       /* cols / group */
    bool    zero;         /* a weight_zero_point (else symmetric: 1 << (bits-1)) */
    int64_t zrows;        /* zero_point rows (packed along dim 0) */
} ct_pack;

/* Checks the parts' shapes: shape (weight_shape's values), the packed
 * tensor's [rows, words], the scale's, and the zero point's (zdims 0:
 * none). name: the weight, for messages. 0, or -1 with err. */
int ct_pack_check(ct_pack *p, const char *name, int bits, int64_t group_size,
                  const int64_t *shape, int shape_dims, const int64_t *wshape, int wdims,
                  const int64_t *sshape, int sdims, const int64_t *zshape, int zdims,
                  gguf_error *err);

/* Row r: words = the row's packed int32 words (little-endian, maybe
 * unaligned), scales = the row's `groups` factors as float32, zp = the
 * whole zero-point tensor (int32 LE, [zrows, groups]) or NULL. out: cols. */
void ct_pack_row(const ct_pack *p, int64_t r, const uint8_t *words, const float *scales,
                 const uint8_t *zp, float *out);

/* GPTQ (checkpoint_format "gptq": zeros stored minus one; "gptq_v2": as
 * they are). The output weight is [out, in] (the transpose of qweight's
 * unpacked [in, out]). */
typedef struct gptq_pack {
    int     bits;
    int     per_word;
    int64_t in, out, groups;
    int     zero_add;     /* 1 for "gptq", 0 for "gptq_v2" */
} gptq_pack;

/* qweight [in / per_word, out], qzeros [groups, out / per_word], scales
 * [groups, out], g_idx [in]. 0, or -1 with err. */
int gptq_check(gptq_pack *g, const char *name, int bits, bool v2,
               const int64_t *qwshape, int qwdims, const int64_t *qzshape, int qzdims,
               const int64_t *sshape, int sdims, const int64_t *gshape, int gdims,
               gguf_error *err);

/* g_idx entries checked: each in [0, groups). 0, or -1 with err. */
int gptq_check_gidx(const gptq_pack *g, const char *name, const uint8_t *gidx, gguf_error *err);

/* Output row n (in values): qweight, qzeros, g_idx whole (int32 LE);
 * scale(ctx, group, n) gives scales[group][n] as float32. */
void gptq_row(const gptq_pack *g, int64_t n, const uint8_t *qweight, const uint8_t *qzeros,
              const uint8_t *gidx, float (*scale)(const void *ctx, int64_t grp, int64_t n),
              const void *ctx, float *out);

/* Output rows [n0, n0 + nb) (nb <= GPTQ_BLOCK, n0 + nb <= out) into out,
 * nb rows of in values: the values gptq_row gives, with qweight read a
 * row of words at a time (k-major) and each group's scales and zeros
 * looked up once a row. tab: room for min(groups, GPTQ_TAB_GROUPS) × nb
 * floats and as many int32 (the groups' scales and zeros); with more
 * groups they are looked up where the group changes. */
#define GPTQ_BLOCK      16
#define GPTQ_TAB_GROUPS 1024
void gptq_block(const gptq_pack *g, int64_t n0, int nb, const uint8_t *qweight, const uint8_t *qzeros,
                const uint8_t *gidx, float (*scale)(const void *ctx, int64_t grp, int64_t n),
                const void *ctx, float *stab, int32_t *ztab, float *out);

/* BitNet b1.58 (quant_method "bitnet", Falcon3-*-1.58bit): a uint8 weight
 * [prows, cols] holds four 2-bit codes a byte; output row s × prows + r
 * (s = 0..3) is bits 2s..2s+1 of byte row r, and its value (code − 1) /
 * scale, the one factor of weight_scale being the inverse of the weight's
 * (dequant_bitnet: one float32 division). The output is [4 × prows, cols]. */
typedef struct bitnet_pack {
    int64_t prows;        /* packed rows */
    int64_t rows, cols;   /* the output weight: rows = 4 × prows */
} bitnet_pack;

/* The packed weight's shape and the scale's (one element, any number of
 * dimensions). 0, or -1 with err. */
int bitnet_check(bitnet_pack *b, const char *name, const int64_t *wshape, int wdims,
                 const int64_t *sshape, int sdims, gguf_error *err);

/* The factor itself: finite and not 0. 0, or -1 with err. */
int bitnet_check_scale(const char *name, float scale, gguf_error *err);

/* Output row r (0 ≤ r < rows) of the packed bytes `packed` (the whole
 * weight), divided by scale. out: cols. */
void bitnet_row(const bitnet_pack *b, int64_t r, const uint8_t *packed, float scale, float *out);

/* ------------------------------------------------------------------------
 * The wiring into a Hugging Face checkpoint (hf.c), as dequant_model does
 * it: config.json's quantization_config read once; X.weight_packed (with
 * X.weight_scale, X.weight_shape and maybe X.weight_zero_point) or
 * X.qweight (with X.qzeros, X.scales, X.g_idx) become X.weight, produced
 * row by row while the writer streams (the parts stay mapped). Like
 * dequant_model, these weights come after every other tensor of the
 * checkpoint, in the order of their packed tensors.
 * ------------------------------------------------------------------------ */

enum qpack_kind { QPACK_NONE, QPACK_CT, QPACK_GPTQ, QPACK_BITNET };

typedef struct qpack_plan {
    int     kind;         /* enum qpack_kind */
    int     bits;
    int64_t group;        /* compressed-tensors group_size */
    bool    v2;           /* GPTQ checkpoint_format gptq_v2 */
} qpack_plan;

/* Reads config.json's quantization_config (config: the parsed file) for
 * quant_method "compressed-tensors" (format "pack-quantized"), "gptq" or
 * "bitnet";
 * any other method (and compressed-tensors "float-quantized", fp8.h's)
 * leaves p->kind QPACK_NONE. Refused (err names
 * config.json): what dequant_model refuses or cannot do. 0, or -1. */
int qpack_plan_read(qpack_plan *p, const json_value *config, gguf_error *err);

/* compressed-tensors "float-quantized", "int-quantized" and
 * "naive-quantized" (fp8.h takes them): checks its one
 * config group's weights (strategy channel or block, no group_size) and
 * gives block_structure in block (0 0: none). 0, or -1 with err. */
int ct_float_plan(const json_value *qc, int64_t block[2], gguf_error *err);

/* Checks the checkpoint's tensors (by the index fp8_plan_read made) against
 * the plan: every part beside its packed tensor, no part without one, no
 * packed tensor without a plan. 0, or -1 with err naming the shard. */
int qpack_plan_check(const qpack_plan *p, const fp8_plan *index, gguf_error *err);

/* True for a tensor the plan turns into a weight or consumes: the caller
 * skips it in its pass over the checkpoint and adds the weights after
 * (qpack_is_main). */
bool qpack_consumed(const qpack_plan *p, const char *name);
/* True for X.weight_packed / X.qweight; then weight gets "X.weight". */
bool qpack_is_main(const qpack_plan *p, const char *name, char *weight, size_t size);

/* True for a BitNet weight (X.weight with an X.weight_scale beside it):
 * dequant_model replaces it where it stands, so the caller takes it
 * (qpack_take with its own name) in its main pass, in the checkpoint's
 * order. */
bool qpack_in_place(const qpack_plan *p, const fp8_plan *index, const char *name);

/* One weight's source, attached to its src_tensor (src_tensor.qp, freed
 * with the model). */
typedef struct qpack_src {
    int            kind;
    ct_pack        ct;
    gptq_pack      gq;
    int64_t        rows, cols;    /* the output weight [rows, cols] */
    const uint8_t *packed, *scale, *zero, *gidx;
    uint8_t        sdtype;        /* the scale's: SRC_F32, SRC_F16 or SRC_BF16 */
    bitnet_pack    bn;
    float          inv;           /* BitNet: the weight_scale's one factor */
    const uint8_t *part[4];       /* every part, for dropping pages */
    uint64_t       part_bytes[4];
    int            n_part;
    bool           mapped;        /* every part lies in a file mapping */
    /* Stacked experts (DeepseekV2Model's torch.stack of the dequantized
     * experts): n_slice sources of rows × cols each, expert e's output
     * elements [e × rows × cols, (e + 1) × rows × cols); rows and cols are
     * one slice's, and the fields above slice 0's. NULL: one weight. */
    struct qpack_src *slice;
    int            n_slice;
} qpack_src;

/* The source of the packed tensor `name` (X.weight_packed, X.qweight, or a
 * BitNet X.weight):
 * checks its parts' dtypes, shapes and values (scales finite, g_idx in
 * range). 0, or -1 with err naming the shard and the tensor. */
int qpack_take(const qpack_plan *p, const fp8_plan *index, const char *name, qpack_src **out,
               gguf_error *err);

/* The stack of n expert slices (taken with qpack_take, in expert order;
 * every slice's weight_shape the same): one source [n, rows, cols]. The
 * slices are moved into it (the array's entries set to NULL), also on
 * failure, when they are freed. name: the stacked tensor, for messages.
 * 0, or -1 with err naming the slice that differs. */
int qpack_stack(qpack_src **slices, int n, const char *name, qpack_src **out, gguf_error *err);

/* Frees a source (and a stack's slices). */
void qpack_src_free(qpack_src *q);

/* Calls drop(data, bytes) for every packed part of q (every slice's). */
void qpack_parts(const qpack_src *q, void (*drop)(const void *data, uint64_t bytes));

/* n values of the output weight from element `at` on (row-major [rows,
 * cols], or [n_slice, rows, cols]) as float32. The whole rows among them
 * are decoded together (GPTQ: GPTQ_BLOCK rows at a time, straight into
 * out). */
void qpack_span(const qpack_src *q, float *out, int64_t n, int64_t at);

/* Rows from[0..nr) of the output weight (of its n_slice × rows for a
 * stack), whole, into out (nr × cols): the writer's rows in its own order
 * (a permutation, a row map). A run of GPTQ_BLOCK or more consecutive rows
 * is decoded as qpack_span decodes it; any other GPTQ row with its block,
 * which is decoded once for all the rows of it among the next 256 asked.
 * The values are qpack_span's, bit for bit. */
void qpack_rows(const qpack_src *q, const int64_t *from, int64_t nr, float *out);

/* Rows a reader asks of qpack_rows at a time: two GPTQ blocks, so that rows
 * of a rotary permutation (which interleaves two runs of source rows) are
 * each decoded once. */
#define QPACK_LOAD_ROWS (2 * GPTQ_BLOCK)
/* How the source's shape came from its parts, for messages ("" or ", …"). */
void qpack_origin(const qpack_src *q, char *out, size_t size);

/* The value of element i, exactly as qpack_span gives it. */
float qpack_value(const qpack_src *q, int64_t i);

#endif
