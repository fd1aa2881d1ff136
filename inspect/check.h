/*
 * check.h — `gguf-inspect --check`: is this file sound?
 *
 * Structure: whatever gguf_open() rejected (it validates the whole layout).
 * Data: every f32, f16, bf16 and f64 tensor is scanned for NaN and Inf,
 * decoding the bit patterns directly (exponent all ones: NaN when the
 * mantissa is non-zero, Inf otherwise). Quantized tensors are not decoded.
 * llama.cpp: what llama.cpp e21cdc11's loader refuses in a file the model
 * rules accept (gguf-run runs it): a deepseek2 whose layer count does not
 * match its "lite" switch (check_llama_loader).
 * Not for: metadata semantics (a model that loads may still be wrong).
 */
#ifndef INSPECT_CHECK_H
#define INSPECT_CHECK_H

#include "emit.h"
#include <ggufkit/gguf.h>

/* llama.cpp e21cdc11's deepseek2 loader reads attention.q_lora_rank only
 * for a file that is not "lite", which it takes to be 26 or 27 blocks, or
 * 48 with a 128256-token vocabulary (DeepSeek-V2-Lite, GigaChat3,
 * Kanana-2), whatever the file says: a non-lite file without the key
 * (q_lora -1: absent) is refused (key not found), and a lite one with a
 * q_lora_rank above 0 is loaded without attn_q_a / attn_q_b, wanting
 * attn_q, which it does not have. 1 with the finding in msg (arch: the
 * architecture's name, for the key), else 0. */
int check_deepseek2_lite(const char *arch, int64_t blocks, int64_t vocab, int64_t q_lora, char *msg,
                         size_t size);

/* What llama.cpp e21cdc11's loader refuses in f beyond the model rules: 1
 * with the finding in msg, else 0. */
int check_llama_loader(const gguf_file *f, char *msg, size_t size);

/* Writes the check report for path. f is the opened file, or NULL when
 * gguf_open() failed with open_error. Returns the number of problems found
 * (0: the file is sound), or -1 on out of memory. */
int check_write(emit *e, const char *path, const gguf_file *f, const char *open_error);

#endif
