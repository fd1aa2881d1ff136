/*
 * fp8.h — FP8 block-scaled checkpoints (config.json's quantization_config
 * {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [R, C]}: the
 * layout of DeepSeek-V3, Qwen3-FP8 and GLM FP8 releases).
 *
 * Each quantized weight X.weight is F8_E4M3 with a tensor X.weight_scale_inv
 * beside it holding one factor per R × C block (blocks at the right and
 * bottom edges partial); llama.cpp e21cdc11's ModelBase.dequant_model turns
 * it into float32 as weight.float() × scale, the scale repeated over each
 * block and cropped to the weight's shape, and then the outtype's usual
 * rounding applies. gguf-convert does the same per row while it streams the
 * tensor: the weight stays mapped, its scale tensor is read where it lies,
 * and nothing else of the model is held. The scale tensors are consumed
 * (never written).
 *
 * compressed-tensors "float-quantized" checkpoints (FP8 E4M3 weights with
 * X.weight_scale: strategy "channel", one factor per row, or "block" in
 * block_structure's blocks; RedHat's FP8-dynamic releases) take the same
 * path, as dequant_model sends them through the same dequant_simple.
 *
 * Refused, naming the file (config.json or the shard) and the tensor:
 * another quant_method (but mxfp4, a family's own), another fmt, FP8 E5M2
 * tensors, static activation scales (activation_scheme "static",
 * *.input_scale / *.activation_scale tensors: a GGUF has no place for
 * them), a weight without its scale or a scale without its weight, a
 * scale of another shape than the blocks' or of another dtype than
 * F32/F16/BF16, a scale that is not finite.
 */
#ifndef CONVERT_FP8_H
#define CONVERT_FP8_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"
#include "model.h"
#include "safetensors.h"

/* The float32 value of an E4M3 (float8_e4m3fn) byte: bias 7, subnormals at
 * exponent 0, S.1111.111 NaN, no infinities. Exact. */
float fp8_e4m3_to_f32(uint8_t v);

/* The scale of one FP8 src_tensor (src_tensor.fp8, freed with the model).
 * Source element i of the tensor (row-major over the checkpoint's shape:
 * matrices of rows × cols) has the factor of matrix i / (rows × cols),
 * block row (i / cols % rows) / block[0], block column (i % cols) / block[1]
 * of an s_rows × s_cols grid per matrix. */
typedef struct fp8_scale {
    const uint8_t  *data;      /* the scale tensor's bytes, sdtype each, maybe unaligned */
    const uint8_t **parts;     /* stacked experts: one scale tensor per part (matrix); else NULL */
    int             n_parts;
    uint8_t         sdtype;    /* SRC_F32, SRC_F16 or SRC_BF16 */
    int64_t         rows, cols;        /* one matrix of the source */
    int64_t         block[2];
    int64_t         s_rows, s_cols;
    src_origin      from;      /* the scale tensor (matrix 0's), for messages */
    bool            mapped;    /* every scale lies in a file mapping (safe to drop its pages) */
    bool            int8;      /* the codes are int8 (SRC_I8_SCALED), not E4M3 */
} fp8_scale;

/* The factor of source element i. */
float fp8_scale_at(const fp8_scale *s, int64_t i);

/* n FP8 (or int8: s->int8) bytes from source element `at` on → f32 (value
 * × its block's factor, one f32 product, as torch's weight.float() *
 * scale). */
void fp8_dequant_span(const fp8_scale *s, const uint8_t *src, float *out, int64_t n, int64_t at);

/* The scale grid of a weight matrix (rows × cols) in blocks of
 * block[0] × block[1] (block[0] 0: none given — then a scalar scale, or one
 * per row as [rows] or [rows, 1], as torch broadcasts them): checks the
 * scale's shape (lead: the weight's leading dimensions, which the scale
 * repeats) and fills s->rows … s->s_cols. 0, or -1 with err. */
int fp8_scale_shape(fp8_scale *s, const int64_t *wshape, int wdims, const int64_t *sshape,
                    int sdims, const int64_t block[2], gguf_error *err);

/* A checkpoint's quantization, read from config.json before its tensors are
 * taken. */
typedef struct fp8_plan {
    bool     on;            /* quant_method "fp8", or compressed-tensors float-, int- or
                             * naive-quantized */
    bool     int8;          /* compressed-tensors int- or naive-quantized: I8 weights
                             * scale too */
    int64_t  block[2];      /* weight_block_size (block_structure), or 0 0 */
    const char *suffix;     /* the scale tensors': "_scale_inv" (fp8), "_scale"
                             * (compressed-tensors) */
    /* every safetensors tensor of the checkpoint, sorted by name, with
     * its shard's name */
    struct fp8_entry { const st_tensor *t; const char *file; } *index;
    size_t   n_index;
} fp8_plan;

/* The checkpoint's tensor of that name (its shard's name beside it), or
 * NULL. */
const struct fp8_entry *fp8_find(const fp8_plan *p, const char *name);

/* Reads config (config.json) and checks the shards against it: the
 * refusals above that need no tensor's bytes. A checkpoint with no FP8 in
 * it passes untouched (p->on false). 0, or -1 with err (naming the file). */
int fp8_plan_read(fp8_plan *p, const json_value *config, const st_file *shards,
                  const char *const *shard_names, int n_shards, gguf_error *err);

/* True for a tensor the plan consumes (a weight_scale_inv), which the
 * caller skips. */
bool fp8_consumed(const fp8_plan *p, const st_tensor *st);

/* Attaches its scale to every F8_E4M3 tensor of m (by the checkpoint names
 * in src_tensor.from / part_from), checking shapes, dtypes and that every
 * factor is finite. 0, or -1 with err. */
int fp8_attach(const fp8_plan *p, src_model *m, gguf_error *err);

void fp8_plan_free(fp8_plan *p);
void fp8_scale_free(fp8_scale *s);

/* "[a, b, ...]" of shape[0..n) into out (size bytes, cut to fit). */
void shape_text(char *out, size_t size, const int64_t *shape, int n);

#endif
