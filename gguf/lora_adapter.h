/*
 * lora_adapter.h — LoRA adapter GGUF files (general.type "adapter",
 * adapter.type "lora"), as llama.cpp e21cdc11 reads them, checked against
 * the model they adapt (private to ggufkit: not installed, not exported
 * from libgguf.so; the tools link it from libgguf.a — gguf-edit's merge,
 * and gguf-run's run-time application can share it).
 *
 * An adapter holds pairs BASE.lora_a [in, rank(, experts)] and BASE.lora_b
 * [rank, out(, experts)] for tensors BASE [in, out(, experts)] of the base
 * model, and adapter.lora.alpha; a pair adds scale × B·A to its tensor,
 * with scale = user_scale × alpha / rank (user_scale alone when alpha is
 * 0), as llama.cpp computes it.
 */
#ifndef GGUF_LORA_ADAPTER_H
#define GGUF_LORA_ADAPTER_H

#include <ggufkit/gguf.h>

typedef struct gguf_lora_adapter {
    gguf_file *f;
    float      alpha;   /* adapter.lora.alpha; 0 when absent */
    uint64_t   n_pairs; /* lora_a/lora_b pairs */
} gguf_lora_adapter;

/* Opens path and checks it is a LoRA adapter of base's architecture whose
 * every tensor is half of a pair fitting a tensor of base (names, ranks,
 * shapes); tensors of other names are refused. 0, or -1 with err (naming
 * the tensor or key; the caller names the file). */
int gguf_lora_adapter_open(const char *path, const gguf_file *base, gguf_lora_adapter *a,
                           gguf_error *err);

/* The same over a file already open (taken over: closed on failure or by
 * gguf_lora_adapter_close). */
int gguf_lora_adapter_from(gguf_file *f, const gguf_file *base, gguf_lora_adapter *a,
                           gguf_error *err);

void gguf_lora_adapter_close(gguf_lora_adapter *a);

/* The pair of base tensor `name`, or false when the adapter has none. */
bool gguf_lora_adapter_pair(const gguf_lora_adapter *a, const char *name,
                            const gguf_tensor **lora_a, const gguf_tensor **lora_b);

/* llama.cpp's scale of a pair of rank `rank` (float arithmetic, in its
 * order: user_scale × alpha / rank). */
float gguf_lora_adapter_scale(float alpha, float user_scale, int64_t rank);

#endif
