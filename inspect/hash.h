/*
 * hash.h — `gguf-inspect --hash`: SHA-256 of every tensor's data and of each
 * shard's whole data section.
 *
 * The text form is sha256sum's ("HEX  NAME"), so two files' listings can be
 * compared with diff(1), and the values match the "sha256" fields of the
 * reference manifests. Not for: comparing files (diff.c compares bytes).
 */
#ifndef INSPECT_HASH_H
#define INSPECT_HASH_H

#include "emit.h"
#include <ggufkit/gguf.h>

/* Writes the hash listing of f. Returns 0, or -1 on out of memory. */
int hash_write(emit *e, const gguf_file *f);

#endif
