/*
 * write.h — from a src_model to a GGUF file, one tensor at a time.
 *
 * The output types follow llama.cpp's converter: 1-D tensors, norms and
 * non-".weight" tensors stay f32; the rest get the --outtype, with q8_0
 * falling back to f16 for rows that are not a multiple of 32. Peak memory is
 * a few chunks of encoded rows and a row of f32 per thread, never the model.
 *
 * No output holds Inf or NaN: every row is checked as it is encoded, and a
 * value that is not finite — in the checkpoint, or made so by the
 * conversion (a finite f32 beyond f16's range, a q8_0 block whose scale
 * overflows f16) — fails the conversion, naming the checkpoint file, the
 * tensor there and the element.
 */
#ifndef CONVERT_WRITE_H
#define CONVERT_WRITE_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"
#include "model.h"

enum outtype { OUT_F32, OUT_F16, OUT_BF16, OUT_Q8_0, OUT_AUTO };

typedef struct convert_options {
    int         outtype;        /* enum outtype; OUT_AUTO resolved by convert_resolve_outtype */
    const char *out_path;
    bool        dry_run;
    bool        vocab_only;
    bool        quiet;
    uint64_t    split_max_tensors, split_max_bytes;
    const json_value *metadata; /* --metadata overrides of general.* keys (override.h), or NULL */
    /* One pass to a quantization preset (preset.h; outtype is then
     * OUT_BF16): the bf16 conversion quantized as gguf-quantize PRESET
     * [--imatrix imatrix_path] would, tensors in its order. NULL: none. */
    const struct preset *preset;
    const char *imatrix_path;
    const char *const *inputs;  /* every path the run reads (outpath_check), n_inputs of them */
    size_t      n_inputs;
} convert_options;

/* convert_write's status when the output (not the input) is at fault:
 * a path that may not be written, a full disk, a failed read-back. */
#define CONVERT_ERR_OUTPUT (-2)

/* llama.cpp's "auto": f16 when the first checkpoint tensor is f16, else
 * bf16. */
int convert_resolve_outtype(const src_model *m, int outtype);

/* general.file_type of an outtype (llama_ftype). */
uint32_t convert_file_type(int outtype);

/* "F32", "F16", "BF16", "Q8_0". */
const char *convert_outtype_name(int outtype);

/* Total elements of all tensors (llama.cpp's parameter count). */
uint64_t convert_param_count(const src_model *m);

/* "5.2M": llama.cpp's rounded notation of a parameter count. */
void convert_count_notation(uint64_t params, char *out, size_t size);

/* general.size_label as llama.cpp's converter computes it: the rounded
 * parameter count ("5.2M"), or for a model with expert tensors
 * ("…_exps.…", 3 dimensions) "{experts}x{shared + one expert}" ("4x698K"). */
void convert_size_label(const src_model *m, char *out, size_t size);

/* Writes (or with dry_run prints) the GGUF. 0, or -1 with err (the input
 * is at fault, a value not finite among them) or CONVERT_ERR_OUTPUT (the output is); a failed write
 * leaves no output file. Before the output is renamed into place it is read
 * back and compared with what was encoded (readback.h). */
int convert_write(src_model *m, const convert_options *o, gguf_error *err);

#endif
