/*
 * lora.h — LoRA adapters (GGUF files of general.type "adapter", adapter.type
 * "lora", as convert_lora_to_gguf.py writes them) applied to a model at run
 * time, as llama.cpp e21cdc11's llama_adapter_lora_init checks them and its
 * graph (build_lora_mm, build_lora_mm_id, build_inp_embd) adds them.
 *
 * run_lora_attach() opens each adapter, checks it against the loaded model
 * (architecture, pairs, shapes, types) and hangs its pairs on the model's
 * matrices (run_matrix.lora; the token embedding's on run_model.lora_embd),
 * each with its scale: the user's × adapter.lora.alpha / rank (alpha 0 or
 * absent: the user's). The tensors stay in the adapter's mapping in their
 * stored type (llama.cpp copies them into a CPU buffer as stored, never
 * repacked); the forward pass multiplies by them with the same kernels as
 * by any weight. An adapter of scale 0 is checked but not applied (as
 * llama.cpp leaves it out), so the model's results stay its own bits.
 *
 * Not for: the products (forward.c), converting adapters (gguf-convert),
 * merging them into the weights (gguf-edit).
 */
#ifndef RUN_LORA_H
#define RUN_LORA_H

#include <ggufkit/gguf.h>
#include "model.h"

/* The adapters applied to one model: their files and pairs (owned). */
typedef struct run_lora_set {
    gguf_file **files;
    int         n_files;
    run_lora   *pairs;
    size_t      n_pairs;
} run_lora_set;

/* The largest |scale| a user may give (a bound on what is sensible, far
 * beyond any adapter's use). */
#define RUN_LORA_MAX_SCALE 1e4

/* Opens the n adapters paths[i] and applies each at scales[i] to m, loaded
 * from the model file mf; pairs on one matrix are added in the reverse of
 * their order in paths (what llama.cpp's adapter map gives for two on
 * libstdc++). On failure returns -1 with a message that begins with the
 * adapter's path, leaves m as it was and set empty. */
int run_lora_attach(run_lora_set *set, run_model *m, const gguf_file *mf, const char *const *paths,
                    const float *scales, int n, gguf_error *err);

/* run_lora_attach on adapters already open: files[0..n) (a malloc'd array,
 * owned by set from here on, also on failure), names[i] the name messages
 * give files[i]. */
int run_lora_attach_files(run_lora_set *set, run_model *m, const gguf_file *mf, gguf_file **files,
                          const char *const *names, const float *scales, int n, gguf_error *err);

/* Takes the adapters off m (its matrices' pairs) and frees them. */
void run_lora_free(run_lora_set *set, run_model *m);

#endif
