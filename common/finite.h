/*
 * finite.h — the scans that keep non-finite numbers out of gguf-convert's
 * and gguf-quantize's outputs.
 *
 * Each returns the index of the first element (or block) that is not
 * finite, or -1. They test the exponent bits only — all ones is Inf or
 * NaN: the 16-bit ones by adding one to the exponent field, which carries
 * into the sign bit exactly then, the f32 one by the largest magnitude's
 * bits (at least 0x7f800000 exactly then), one and and one add-or or max
 * per element over the whole span, 16 or 32 bytes at a time (AVX2 where
 * the CPU has it); the exact index is looked for only when the span has
 * one. gguf-convert's writer runs them on each row it has just converted,
 * gguf-quantize on each row it reads, while the row is still in the
 * first-level cache.
 */
#ifndef COMMON_FINITE_H
#define COMMON_FINITE_H

#include <stdbool.h>
#include <stdint.h>

/* f32 values: Inf or NaN. */
int64_t nonfinite_f32(const float *x, int64_t n);

/* f32 values: Inf or NaN, as nonfinite_f32, and in *amax the largest
 * magnitude before it (of all n when there is none; 0 for none): one read
 * of the span. */
int64_t nonfinite_amax_f32(const float *x, int64_t n, float *amax);

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
