/*
 * onepass.h — gguf-convert SRC --outtype PRESET: the bf16 conversion and
 * gguf-quantize PRESET [--imatrix FILE] in one pass, with no intermediate
 * file.
 *
 * The plan is gguf-quantize's (common/qplan.h, policy, preset): it reads
 * names, shapes and metadata only, here those the bf16 conversion would
 * write (the writer's keys, gguf_hparams_read_writer), so the header is
 * written first. The tensors go out in gguf-quantize's order; each row is
 * converted as for bf16 (its values rounded through bf16 where the bf16
 * file holds them so), then encoded as the plan's type with its importance
 * weights, by write.c's pipeline: memory stays a few rows per thread and a
 * few chunks, whatever the model's size.
 */
#ifndef CONVERT_ONEPASS_H
#define CONVERT_ONEPASS_H

#include <ggufkit/quants.h>

#include "model.h"
#include "write.h"

typedef struct onepass {
    src_model     view;      /* the model's tensors in gguf-quantize's order (shared, not owned) */
    const float **imw;       /* per tensor of view: importance weights or NULL */
    gguf_imatrix  im;
    int           im_entries;
} onepass;

/* view := m with its tensors in llama-quantize's order. 0, or -1 with err. */
int onepass_order(onepass *op, const src_model *m, gguf_error *err);

/* With the bf16 conversion's keys in w and its types in types (view's
 * order): each tensor's type as gguf-quantize PRESET plans it into types,
 * the importance matrix loaded and assigned, and the quantized file's keys
 * (file type, quantization version, quantize.imatrix.*) set in w. 0, or -1
 * with err. */
int onepass_plan(onepass *op, const convert_options *o, gguf_writer *w, uint32_t *types,
                 gguf_error *err);

void onepass_free(onepass *op);

#endif
