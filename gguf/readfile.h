/*
 * readfile.h — a whole small file into memory, with a limit.
 *
 * For the side files a tool reads whole (tokenizer.json, tokenizer.model,
 * config.json, importance matrices, recipes): a file larger than the
 * caller's limit, or an endless stream (a FIFO, /dev/zero), is an error
 * after reading at most limit + 1 bytes, never all of memory. Models are
 * mapped instead (gguf_open).
 */
#ifndef GGUF_READFILE_H
#define GGUF_READFILE_H

#include <stddef.h>
#include <stdint.h>

#include <ggufkit/gguf.h>

/* Reads path into *buf (malloc'd, one NUL byte past the end so text can be
 * used as a string) and its length into *len. 0, or -1 with err: "cannot
 * open: REASON", "read error: REASON", "is a directory", "larger than N MiB
 * (the limit for this kind of file)", "out of memory". */
int gguf_read_file(const char *path, size_t limit, uint8_t **buf, size_t *len, gguf_error *err);

#endif
