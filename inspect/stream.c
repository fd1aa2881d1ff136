/*
 * stream.c — walking a span of a mapped file in released pieces, and
 * releasing the walked part of a metadata array (see stream.h).
 */
#include "stream.h"

void stream_begin(stream *s, const gguf_file *f, const void *data, uint64_t size)
{
    s->f = f;
    s->data = data;
    s->size = size;
    s->pos = 0;
    s->len = 0;
}

void stream_end(stream *s)
{
    if (s->len)
        gguf_release_range(s->f, s->data + s->pos, s->len);
    s->pos += s->len;
    s->len = 0;
}

size_t stream_next(stream *s, const uint8_t **p)
{
    stream_end(s);
    uint64_t left = s->size - s->pos;
    s->len = (size_t)(left < STREAM_CHUNK ? left : STREAM_CHUNK);
    *p = s->data + s->pos;
    return s->len;
}

void stream_release_elems(const gguf_file *f, const gguf_kv *kv, uint64_t a, uint64_t b)
{
    b = kv && b > kv->n ? kv->n : b;
    if (!kv || kv->type != GGUF_VT_ARR || a >= b)
        return;
    if (kv->elem_type == GGUF_VT_STR) {
        /* the strings lie one after the other in the file */
        const gguf_str *s = kv->strs;
        gguf_release_range(f, s[a].ptr, (uint64_t)(s[b - 1].ptr - s[a].ptr) + s[b - 1].len);
    } else {
        uint64_t size = gguf_vtype_size(kv->elem_type);
        gguf_release_range(f, (const uint8_t *)kv->data + a * size, (b - a) * size);
    }
}
