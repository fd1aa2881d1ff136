/*
 * float16.h — the two 16-bit float formats of GGUF tensors.
 *
 * binary16 (f16) and bfloat16 (bf16) to and from float, bit for bit as
 * ggml converts them (round to nearest even; NaN handling as ggml's
 * reference conversions). Used by the codecs, the converter and the runner.
 */
#ifndef GGUF_FLOAT16_H
#define GGUF_FLOAT16_H

#include <stdint.h>

typedef uint16_t gguf_half; /* IEEE 754 binary16 bits */

/* binary16 → float: exact; Inf and NaN payloads preserved. */
float gguf_f16_to_f32(gguf_half h);

/* float → binary16, round to nearest even; overflow to Inf; any NaN becomes
 * the quiet NaN 0x7e00 with the sign kept (ggml's software conversion). */
gguf_half gguf_f32_to_f16(float f);

/* bfloat16 → float: exact. */
float gguf_bf16_to_f32(uint16_t h);

/* float → bfloat16, round to nearest even; a NaN is truncated and forced
 * quiet (ggml_compute_fp32_to_bf16). */
uint16_t gguf_f32_to_bf16(float f);

/* The same conversions over n values (x and y must not overlap). */
void gguf_f16_to_f32_row(const gguf_half *x, float *y, int64_t n);
void gguf_f32_to_f16_row(const float *x, gguf_half *y, int64_t n);
void gguf_bf16_to_f32_row(const uint16_t *x, float *y, int64_t n);
void gguf_f32_to_bf16_row(const float *x, uint16_t *y, int64_t n);

#endif
