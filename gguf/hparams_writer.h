/*
 * hparams_writer.h — a model's hyper-parameters from a GGUF being written
 * (private: read by the tools through libgguf.a, never installed).
 *
 * gguf_hparams_read over a gguf_writer's keys and tensors instead of an
 * open file's: the same derivations, so a tool that plans from the file it
 * is about to write (gguf-convert's one pass to a quantization preset)
 * sees what a tool reading that file later would.
 */
#ifndef GGUF_HPARAMS_WRITER_H
#define GGUF_HPARAMS_WRITER_H

#include <ggufkit/arch.h>
#include <ggufkit/gguf.h>

/* 0, or -1 with err (*hp NULL); free with gguf_hparams_free. */
int gguf_hparams_read_writer(const gguf_writer *w, gguf_hparams **hp, gguf_error *err);

#endif
