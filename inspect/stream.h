/*
 * stream.h — reading big spans of a mapped GGUF (tensor data, a data
 * section) with bounded memory: in pieces of STREAM_CHUNK bytes, each
 * piece's pages released (gguf_release_range) once the next one is asked
 * for or the walk ends. Without it, every page read stays resident and a
 * 4 GiB tensor costs 4 GiB of RSS.
 *
 *     stream s;
 *     const uint8_t *p;
 *     size_t n;
 *     stream_begin(&s, f, t->data, t->nbytes);
 *     while ((n = stream_next(&s, &p)) > 0)
 *         use(p, n);        // s.pos is p's offset from the start
 *     stream_end(&s);       // only needed when leaving the loop early
 *
 * Long metadata arrays (a vocabulary of millions of tokens) are walked
 * element by element instead; stream_release_elems() releases the file
 * bytes of the elements already walked.
 */
#ifndef INSPECT_STREAM_H
#define INSPECT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include <ggufkit/gguf.h>

/* 64 MiB: large enough that the release calls cost nothing, small enough
 * that two files read side by side (diff) stay far below a model's size; a
 * multiple of every element size, so pieces never split an element. */
#define STREAM_CHUNK ((uint64_t)64 << 20)

typedef struct stream {
    const gguf_file *f;
    const uint8_t   *data;
    uint64_t         size;
    uint64_t         pos; /* offset of the piece last handed out */
    size_t           len; /* its length (0 before the first) */
} stream;

/* Starts a walk over [data, data + size) of f's mapping. */
void stream_begin(stream *s, const gguf_file *f, const void *data, uint64_t size);

/* Releases the previous piece and hands out the next one in *p; returns its
 * length, or 0 at the end. */
size_t stream_next(stream *s, const uint8_t **p);

/* Releases the piece handed out last (after leaving a walk early). */
void stream_end(stream *s);

/* Elements between two releases of an array being walked (about 1 MB of a
 * typical token list). */
#define STREAM_ELEMS 65536

/* Releases the file bytes of elements [a, b) of array kv of f (b is clamped
 * to the array's length); they are read back from the file if needed again. */
void stream_release_elems(const gguf_file *f, const gguf_kv *kv, uint64_t a, uint64_t b);

#endif
