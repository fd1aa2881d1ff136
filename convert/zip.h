/*
 * zip.h — the zip archives torch.save writes (.bin, .pth, .pt).
 *
 * Reads the central directory (ZIP64 too) of a mapped archive. Stored
 * entries are used in place; deflated ones are inflated with zlib on
 * request. Every entry's CRC-32 is checked when its data is first taken,
 * so a damaged archive is an error, not wrong weights.
 */
#ifndef CONVERT_ZIP_H
#define CONVERT_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include <ggufkit/gguf.h>

typedef struct zip_entry {
    char          *name;
    uint16_t       method;       /* 0 stored, 8 deflated */
    uint32_t       crc;
    uint64_t       comp_size, size;
    const uint8_t *comp;         /* compressed bytes in the mapping */
    uint8_t       *inflated;     /* owned, for deflated entries once read */
    int            checked;      /* CRC verified */
} zip_entry;

typedef struct zip_archive {
    zip_entry     *entries;
    size_t         n;
    const uint8_t *data;
    size_t         size;
} zip_archive;

/* Reads the directory of an archive in memory (not copied). 0, or -1. */
int zip_parse(const uint8_t *data, size_t size, zip_archive *z, gguf_error *err);

void zip_free(zip_archive *z);

/* Checks the CRC-32 of every entry inflated into memory once more: the
 * converter's proof, before it renames its output into place, that no heap
 * bytes it read from changed while it worked. 0, or -1 with err. */
int zip_recheck(const zip_archive *z, gguf_error *err);

/* The entry of that name, or NULL. */
zip_entry *zip_find(zip_archive *z, const char *name);

/* The entry's uncompressed bytes (inflating and checking the CRC on first
 * use). NULL with err on a bad entry. */
const uint8_t *zip_data(zip_entry *e, gguf_error *err);

#endif
