/*
 * qplan.h — llama-quantize's plan of one model, shared by gguf-quantize
 * and gguf-convert's one pass to a quantization preset: the model facts
 * the per-tensor rules read, each tensor's type (policy.h, preset.h,
 * recipe.h), the importance matrix it takes and when one is required, and
 * the keys a quantized file gets. Both tools plan from names, shapes and
 * metadata only, so a one-pass conversion writes what converting and then
 * quantizing would.
 */
#ifndef COMMON_QPLAN_H
#define COMMON_QPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggufkit/arch.h>
#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>

#include "policy.h"
#include "preset.h"
#include "recipe.h"

/* A row whose largest magnitude reaches this is read back once quantized
 * and checked finite (gguf-quantize, one-pass gguf-convert): a value of
 * f16 above 65504 is Inf, and so is an f16 block scale above it. Below,
 * no type can overflow: every codec's scales are a block's largest
 * magnitude over a level or a small multiple of it. */
#define QPLAN_CHECK_OUT_FROM 256.0f

/* A registered architecture's facts from its hyper-parameters. */
void qplan_facts_hparams(policy_model *m, const gguf_hparams *hp);

/* The facts from the tensor names (attn_v / attn_qkv count, output) and
 * the architecture's name: name(ctx, i) for i < n. */
void qplan_facts_names(policy_model *m, const char *arch,
                       const char *(*name)(const void *ctx, uint64_t i), const void *ctx, uint64_t n);

/* Whether a tensor counts as attn_v to the rules (attn_v, fused attn_qkv;
 * MLA's attn_kv_b in an unregistered architecture). a: the registered
 * architecture or NULL. */
bool qplan_is_attention_wv(const gguf_arch *a, const char *name);

/* The type llama-quantize gives one tensor (stored as `type`, n_dims and
 * ne as stored): `type` itself when it is not quantizable (or the preset
 * is COPY), else the rules' type, a --tensor-type rule first. why gets a
 * fallback note. 0, or -1 with err (a recipe error). */
int qplan_tensor_type(const policy_model *m, policy_state *st, const policy_opts *pol,
                      const recipe *rec, const preset *pr, const char *name, uint32_t n_dims,
                      const int64_t *ne, uint32_t type, uint32_t *out, char *why,
                      size_t why_size, gguf_error *err);

/* A tensor converted to `type` without any importance matrix given
 * (have_file false): llama.cpp e21cdc11's tensor_requires_imatrix refuses
 * some types (-1 with err; with dry_run *needs is set instead). */
int qplan_require_imatrix(bool have_file, const char *name, uint32_t type, int ftype,
                          bool dry_run, bool *needs, gguf_error *err);

/* The importance weights of a tensor converted to `type` (im: the loaded
 * matrix or NULL; selected: --include/--exclude-weights keep its name):
 * *w the weights or NULL. Refused (-1 with err; with dry_run a missing
 * matrix sets *needs instead): a matrix of another size than ne[0] ×
 * ne[2] (token_embd's is ignored), and a codec that quantizes only with
 * weights when there are none. */
int qplan_imatrix(const gguf_imatrix *im, bool selected, const char *name, const int64_t *ne,
                  uint32_t type, bool dry_run, const float **w, bool *needs, gguf_error *err);

/* general.quantization_version 2 and general.file_type, each removed and
 * set again (last), as llama-quantize's gguf_set_val does. */
int qplan_set_type_keys(gguf_writer *w, uint32_t file_type);

/* quantize.imatrix.file (as given), .dataset (when the matrix names one),
 * .entries_count, .chunks_count (when known). */
int qplan_set_imatrix_keys(gguf_writer *w, const char *path, const gguf_imatrix *im, int entries);

#endif
