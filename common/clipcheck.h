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

/* The clip.vision.* sizes (0: absent) and the vision projector's type
 * (clip.projector_type, or clip.vision.projector_type when the file has an
 * audio encoder beside it); with an audio encoder (audio_type non-NULL:
 * clip.audio.projector_type) the clip.audio.* sizes. */
typedef struct clip_hparams {
    uint64_t image_size, patch_size, n_embd, n_ff, n_block, n_head, proj_dim;
    const char *projector_type; /* NULL: absent */
    uint64_t merge;             /* clip.vision.spatial_merge_size (0: absent) */
    uint64_t a_embd, a_ff, a_block, a_head, a_proj, a_mel;
    const char *audio_type;     /* NULL: no audio encoder */
    bool no_vision;             /* an audio encoder alone: the clip.vision.* sizes unchecked */
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
/* The clip.audio.* u32 keys of an audio encoder, in the converter's order
 * (clip.audio.num_mel_bins, written later, is the last). */
extern const clip_key clip_audio_keys[];
extern const size_t   clip_n_audio_keys;

/* The projector types clip_check knows the tensors of: vision ("gemma3",
 * "gemma4v", "pixtral") and audio ("gemma4a"). */
bool clip_projector_known(const char *type);
bool clip_audio_projector_known(const char *type);

/* Checks the sizes (present, non-zero, image a multiple of the patch,
 * width a multiple of the heads; the audio encoder's alike) and the
 * tensors: every block's tensors shaped as the sizes say, no block past
 * clip.vision.block_count (v.blk.N) or clip.audio.block_count (a.blk.N),
 * for a known projector type every tensor it needs, none missing (and a
 * tensor the graph uses only with another, such as Pixtral's patch merger
 * with its norm, not alone; the merger spatial_merge_size² patches wide);
 * for Gemma 4 each clipped linear's bounds one value beside its weight, and
 * the audio convolutions' channels in line. 0, or -1 with err naming the
 * first fault. */
int clip_check(const clip_hparams *hp, const clip_tensor *t, size_t n, gguf_error *err);

/* Whether f's general.architecture is "clip". */
bool clip_file_is_projector(const gguf_file *f);

/* A projector file's keys (with clip.has_vision_encoder true: the
 * clip.vision.* sizes present as u32, clip.projector_type or
 * clip.vision.projector_type, image_mean and image_std 3 f32 each, an
 * optional clip.vision.spatial_merge_size from 1 to 65536; with
 * clip.has_audio_encoder true: the clip.audio.* sizes and
 * clip.audio.projector_type or clip.projector_type) and tensors
 * (clip_check). A file with neither encoder has nothing here to check: 0.
 * 0, or -1 with err. */
int clip_check_file(const gguf_file *f, gguf_error *err);

#endif
