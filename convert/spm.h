/*
 * spm.h — SentencePiece tokenizer.model files (protobuf), read natively.
 *
 * Only what a GGUF vocabulary needs: each piece's text, score and type
 * (ModelProto.pieces = 1: SentencePiece { piece = 1, score = 2, type = 3 }),
 * plus the trainer's model type and byte fallback. Unknown fields of any
 * wire type are skipped; groups, truncated fields and lengths past the end
 * are errors.
 */
#ifndef CONVERT_SPM_H
#define CONVERT_SPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggufkit/gguf.h>

/* SentencePiece.Type */
enum spm_type {
    SPM_NORMAL = 1, SPM_UNKNOWN = 2, SPM_CONTROL = 3, SPM_USER_DEFINED = 4, SPM_UNUSED = 5,
    SPM_BYTE = 6
};

typedef struct spm_piece {
    char  *text; /* NUL-terminated UTF-8 */
    size_t len;
    float  score;
    int    type; /* enum spm_type */
} spm_piece;

typedef struct spm_model {
    spm_piece *pieces;
    size_t     n;
    int        model_type;    /* TrainerSpec.model_type: 1 unigram, 2 BPE, ... (default 1) */
    bool       byte_fallback; /* TrainerSpec.byte_fallback */
    int64_t    unk_id, bos_id, eos_id, pad_id; /* TrainerSpec 40-43 (defaults 0, 1, 2, -1) */
} spm_model;

int spm_parse(const uint8_t *data, size_t size, spm_model *m, gguf_error *err);
int spm_load(const char *path, spm_model *m, gguf_error *err);
void spm_free(spm_model *m);

#endif
