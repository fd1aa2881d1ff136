/*
 * <ggufkit/arch.h> — model architectures and the rules a model must follow.
 */
#ifndef GGUFKIT_ARCH_H
#define GGUFKIT_ARCH_H

#include "gguf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * one semantic validation of a model: hyper-parameters
 * against each other and against the tensor shapes, the vocabulary against
 * itself and against token_embd.
 *
 * gguf_open() proves a file is well-formed GGUF; this proves it describes a
 * model the tools can use, so that no tool writes a file another refuses:
 * gguf-convert runs it on its writer before it writes, gguf-quantize before
 * it reads, gguf-run at load and `gguf-inspect --check` as its model check.
 * Only the header is read (keys, tensor names and shapes), never tensor data.
 *
 * What is checked depends on the file:
 *  - every file: general.architecture and general.type are strings; the
 *    vocabulary when there is one (tokenizer.ggml.*: texts unique, parallel
 *    arrays as long as the token list, token types 0..6, special-token ids
 *    inside the vocabulary, BPE merges naming tokens, SPM byte tokens of the
 *    form <0xNN>, {arch}.vocab_size equal to the token count); token_embd's
 *    rows equal to the token count; no tensor blk.N.* with N >= block_count;
 *  - a model (general.type absent or "model", with tensors) of an
 *    architecture in the table (llama, mistral, qwen2): its hyper-parameters
 *    (present, in range, consistent), and its tensors (each one known, each
 *    required one present in every block, each with the shape the
 *    hyper-parameters give).
 * Other architectures, vocab-only files (general.type "vocab" or no
 * tensors) and other file types (imatrix, adapter) get the checks of every
 * file and nothing else. docs/validation.md lists each rule with its message.
 *
 * Not for: the container (gguf.h validates it), tensor data (NaN/Inf scans
 * are the tools'), or what a tool supports beyond validity (gguf-run's
 * kernels and tensor types).
 */
/* The most blocks a model may have (llama.cpp's LLAMA_MAX_LAYERS). */
#define GGUF_MODEL_MAX_BLOCKS 512
/* The largest width, head count, head size or feed-forward length. */
#define GGUF_MODEL_MAX_DIM (1 << 24)

/* Validates an opened file (split models: the metadata of the first shard,
 * the tensors of all). Returns 0, or -1 with one message naming the key or
 * tensor and the rule it breaks (the first problem found) in err. */
GGUF_API int gguf_model_validate(const gguf_file *f, gguf_error *err);

/* The same rules over a model not yet written: the keys set and tensors
 * declared on w so far (call it after the last gguf_writer_add_tensor and
 * before gguf_writer_begin). Returns 0, or -1 with the message in err. */
GGUF_API int gguf_model_validate_writer(const gguf_writer *w, gguf_error *err);

#ifdef __cplusplus
}
#endif

#endif
