/*
 * arches.h — `gguf-inspect --arches`: libgguf's architecture registry as a
 * report (every architecture, its features, keys and tensor table).
 */
#ifndef INSPECT_ARCHES_H
#define INSPECT_ARCHES_H

#include "emit.h"

/* Writes the registry to e. */
void arches_write(emit *e);

#endif
