/*
 * finite.h — the scans that keep non-finite numbers out of gguf-convert's
 * outputs.
 *
 * Each returns the index of the first element (or block) that is not
 * finite, or -1. They test the exponent bits only — all ones is Inf or
 * NaN — by adding one to the exponent field, which carries into the sign
 * bit exactly then: an and, an add and an or per element over the whole
 * span, 16 or 32 bytes at a time (AVX2 where the CPU has it), and the
 * exact index is looked for only when the span has one. The writer runs them on each row it has just
 * converted, while the row is still in the first-level cache.
 */
#ifndef CONVERT_FINITE_H
#define CONVERT_FINITE_H

#include <stdbool.h>
#include <stdint.h>

/* f32 values: Inf or NaN. */
int64_t nonfinite_f32(const float *x, int64_t n);

/* The largest magnitude of n finite f32 values (0 for none). */
float finite_amax(const float *x, int64_t n);

/* IEEE binary16 bits: exponent 0x1f (Inf or NaN). */
int64_t nonfinite_f16(const uint16_t *x, int64_t n);

/* bfloat16 bits: exponent 0xff (Inf or NaN). */
int64_t nonfinite_bf16(const uint16_t *x, int64_t n);

/* nb GGML q8_0 blocks (an f16 scale, 32 int8): the first whose scale is
 * Inf or NaN. */
int64_t nonfinite_q8_0(const void *blocks, int64_t nb);

/* E8M0 scale bytes (MXFP4): 0xff is NaN in that format. */
int64_t nonfinite_e8m0(const uint8_t *x, int64_t n);

/* Tests: with on, the scans take their 16-byte (SSE2) loops where the CPU
 * has AVX2 too, so both are tested. */
void nonfinite_force_generic(bool on);

#endif
