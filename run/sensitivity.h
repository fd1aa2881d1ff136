/*
 * sensitivity.h — gguf-run --sensitivity: how much each tensor's
 * quantization moves the model's output.
 *
 * For every matrix of the model (the token embedding and the output
 * included) and every candidate type, the tensor alone is quantized as
 * gguf-quantize would write it (libgguf's codecs, the importance matrix's
 * weights when one is given), put in place of the model's, and the
 * calibration text's chunks are run against the unquantized model's
 * log-probabilities: the mean KL divergence is that tensor's cost at that
 * type. gguf-quantize --target-bpw reads the table to choose each tensor's
 * type for a size (quantize/target.c).
 *
 * The file is text, one line per tensor and type:
 *   # comment lines
 *   NAME <TAB> TYPE <TAB> BYTES <TAB> MEAN_KLD
 *
 * Not for: choosing the types (gguf-quantize), the KL divergence itself
 * (eval.c).
 */
#ifndef RUN_SENSITIVITY_H
#define RUN_SENSITIVITY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include "forward.h"
#include "model.h"

/* The types tried when none are named, first_fit: q4_K, or q4_0 for rows
 * q4_K's blocks do not fit (gguf-quantize estimates the other types from
 * the importance matrix, scaled by this measurement: quantize/target.h). */
#define RUN_SENSITIVITY_TYPES "q4_K,q4_0"

/* Measures every matrix of f (loaded as m) at each of the n_types types
 * (a type whose blocks do not fit a tensor's rows is left out for it; with
 * first_fit only the first that fits is measured) over the first
 * max_chunks chunks (0: all) of tokens, writing the table to out. im (may
 * be NULL): the importance matrix to quantize with. -1 with err. */
int run_sensitivity(run_state *s, run_model *m, const gguf_file *f, const int32_t *tokens,
                    int n_tokens, int32_t bos, int max_chunks, const uint32_t *types, int n_types,
                    bool first_fit, const gguf_imatrix *im, FILE *out, gguf_error *err);

/* The widest activation row the products by every matrix of f at each of
 * the types take (for run_model.extra_act_row, before the state is made). */
size_t run_sensitivity_act_row(run_model *m, const gguf_file *f, const uint32_t *types,
                               int n_types);

#endif
