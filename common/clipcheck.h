/*
 * clipcheck.h — what can be checked of a multimodal projector GGUF
 * (general.architecture "clip", general.type "mmproj", as llama.cpp's
 * convert_hf_to_gguf.py --mmproj writes it for llama-mtmd-cli and
 * llama-server --mmproj) without running it: its clip.vision.* sizes
 * against themselves and against the shapes of its tensors.
 *
 * gguf-convert --mmproj checks what it is about to write; gguf-inspect
 * --check checks a file. Both fill a clip_hparams and a list of tensors.
 */
#ifndef COMMON_CLIPCHECK_H
#define COMMON_CLIPCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggufkit/gguf.h>

/* The clip.vision.* sizes (0: absent) and clip.projector_type. */
typedef struct clip_hparams {
    uint64_t image_size, patch_size, n_embd, n_ff, n_block, n_head, proj_dim;
    const char *projector_type; /* NULL: absent */
} clip_hparams;

/* A tensor as either side sees it: GGUF order (ne[0] the row length). */
typedef struct clip_tensor {
    const char    *name;
    int            n_dims;
    const int64_t *ne;
} clip_tensor;

/* The u32 keys clip_check needs, in the order the converter writes them,
 * with the member of clip_hparams each fills (offsets of uint64_t). */
typedef struct clip_key {
    const char *key;
    size_t      off;
} clip_key;
extern const clip_key clip_keys[];
extern const size_t   clip_n_keys;

/* The projector types clip_check knows the tensors of ("gemma3"). */
bool clip_projector_known(const char *type);

/* Checks the sizes (present, non-zero, image a multiple of the patch,
 * width a multiple of the heads) and the tensors: every vision block's
 * tensors shaped as the sizes say, no block past clip.vision.block_count,
 * and for a known projector type every tensor it needs, none missing.
 * 0, or -1 with err naming the first fault. */
int clip_check(const clip_hparams *hp, const clip_tensor *t, size_t n, gguf_error *err);

/* Whether f's general.architecture is "clip". */
bool clip_file_is_projector(const gguf_file *f);

/* A projector file's keys (clip.vision.* sizes present as u32,
 * clip.projector_type, image_mean and image_std 3 f32 each) and tensors
 * (clip_check). A file without clip.has_vision_encoder true has nothing
 * here to check: 0. 0, or -1 with err. */
int clip_check_file(const gguf_file *f, gguf_error *err);

#endif
