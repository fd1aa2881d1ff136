/*
 * spm.c — the protobuf wire format, as much as tokenizer.model needs (see
 * spm.h).
 */
#include "spm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"

typedef struct reader {
    const uint8_t *p, *end, *base;
} reader;

static int read_varint(reader *r, uint64_t *out, gguf_error *err)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end)
            return gguf_error_set(err, "byte %zu: truncated varint", (size_t)(r->p - r->base));
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return gguf_error_set(err, "byte %zu: varint longer than 10 bytes", (size_t)(r->p - r->base));
}

/* One field: its number and wire type; for length-delimited fields the
 * payload as a sub-reader, for fixed32 the 4 bytes, for varints the value. */
typedef struct field {
    uint32_t number;
    int      wire;
    uint64_t varint;
    uint32_t fixed32;
    reader   sub;
} field;

static int next_field(reader *r, field *f, gguf_error *err)
{
    uint64_t key, len;
    size_t at = (size_t)(r->p - r->base);
    if (read_varint(r, &key, err))
        return -1;
    f->number = (uint32_t)(key >> 3);
    f->wire = (int)(key & 7);
    if (f->number == 0 || key >> 32)
        return gguf_error_set(err, "byte %zu: bad field key", at);
    switch (f->wire) {
    case 0:
        return read_varint(r, &f->varint, err);
    case 1:
        if (r->end - r->p < 8)
            return gguf_error_set(err, "byte %zu: truncated 64-bit field", at);
        r->p += 8;
        return 0;
    case 5:
        if (r->end - r->p < 4)
            return gguf_error_set(err, "byte %zu: truncated 32-bit field", at);
        f->fixed32 = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
                     (uint32_t)r->p[3] << 24;
        r->p += 4;
        return 0;
    case 2:
        if (read_varint(r, &len, err))
            return -1;
        if (len > (uint64_t)(r->end - r->p))
            return gguf_error_set(err, "byte %zu: field %u length %llu runs past the end", at,
                                  f->number, (unsigned long long)len);
        f->sub = (reader){ r->p, r->p + len, r->base };
        r->p += len;
        return 0;
    default:
        return gguf_error_set(err, "byte %zu: unsupported wire type %d (field %u)", at, f->wire,
                              f->number);
    }
}

static int parse_piece(reader *r, spm_piece *pc, size_t index, gguf_error *err)
{
    pc->type = SPM_NORMAL;
    pc->score = 0.0f;
    const uint8_t *text = (const uint8_t *)"";
    size_t len = 0;
    while (r->p < r->end) {
        field f;
        if (next_field(r, &f, err))
            return -1;
        if (f.number == 1 && f.wire == 2) {
            text = f.sub.p;
            len = (size_t)(f.sub.end - f.sub.p);
        } else if (f.number == 2 && f.wire == 5) {
            memcpy(&pc->score, &f.fixed32, 4);
            if (!isfinite(pc->score)) /* a GGUF vocabulary holds no NaN or Inf */
                return gguf_error_set(err, "byte %zu: piece %zu has a non-finite score (%s)",
                                      (size_t)(r->p - r->base) - 4, index,
                                      isnan(pc->score) ? "NaN" : pc->score > 0 ? "+Inf" : "-Inf");
        } else if (f.number == 3 && f.wire == 0) {
            if (f.varint < SPM_NORMAL || f.varint > SPM_BYTE)
                return gguf_error_set(err, "byte %zu: unknown piece type %llu",
                                      (size_t)(r->p - r->base), (unsigned long long)f.varint);
            pc->type = (int)f.varint;
        }
    }
    if (!(pc->text = malloc(len + 1)))
        return gguf_error_set(err, "out of memory");
    memcpy(pc->text, text, len);
    pc->text[len] = 0;
    pc->len = len;
    return 0;
}

static int parse_trainer(reader *r, spm_model *m, gguf_error *err)
{
    while (r->p < r->end) {
        field f;
        if (next_field(r, &f, err))
            return -1;
        if (f.number == 3 && f.wire == 0)
            m->model_type = (int)f.varint;
        else if (f.number == 35 && f.wire == 0)
            m->byte_fallback = f.varint != 0;
        else if (f.number >= 40 && f.number <= 43 && f.wire == 0) {
            int64_t id = (int32_t)(uint32_t)f.varint; /* int32 fields: -1 is sign-extended */
            *(f.number == 40 ? &m->unk_id : f.number == 41 ? &m->bos_id
              : f.number == 42 ? &m->eos_id : &m->pad_id) = id;
        }
    }
    return 0;
}

int spm_parse(const uint8_t *data, size_t size, spm_model *m, gguf_error *err)
{
    memset(m, 0, sizeof *m);
    m->model_type = 1;
    m->unk_id = 0;
    m->bos_id = 1;
    m->eos_id = 2;
    m->pad_id = -1;
    reader r = { data, data + size, data };
    size_t cap = 0;
    while (r.p < r.end) {
        field f;
        if (next_field(&r, &f, err))
            goto fail;
        if (f.number == 1 && f.wire == 2) {
            if (m->n == cap) {
                cap = cap ? 2 * cap : 1024;
                spm_piece *p = realloc(m->pieces, cap * sizeof *p);
                if (!p) {
                    gguf_error_set(err, "out of memory");
                    goto fail;
                }
                m->pieces = p;
            }
            if (parse_piece(&f.sub, &m->pieces[m->n], m->n, err))
                goto fail;
            m->n++;
        } else if (f.number == 2 && f.wire == 2) {
            if (parse_trainer(&f.sub, m, err))
                goto fail;
        }
    }
    if (m->n == 0) {
        gguf_error_set(err, "no pieces: not a SentencePiece model");
        goto fail;
    }
    return 0;
fail:
    spm_free(m);
    return -1;
}

int spm_load(const char *path, spm_model *m, gguf_error *err)
{
    uint8_t *buf;
    size_t len;
    /* real tokenizer.model files are 0.5-5 MB */
    if (gguf_read_file(path, (size_t)256 << 20, &buf, &len, err))
        return -1;
    int rc = spm_parse(buf, len, m, err);
    char kb[256];
    const char *kind = rc ? gguf_foreign_kind(buf, len, len, kb, sizeof kb) : NULL;
    if (kind)
        gguf_error_set(err, "not a SentencePiece model but %s", kind);
    free(buf);
    return rc;
}

void spm_free(spm_model *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->pieces[i].text);
    free(m->pieces);
    memset(m, 0, sizeof *m);
}
