/*
 * llhash.h — `gguf-inspect --hash` with --xxh64, --sha1, --sha256, --uuid,
 * --all, --no-layer or -c/--hash-check MANIFEST: llama.cpp's llama-gguf-hash
 * (e21cdc11), line for line.
 *
 * Each tensor's data bytes (its ggml size, no padding), in the order of
 * the tensor infos, give one line per chosen hash ("xxh64     HEX  FILE:NAME",
 * the type left-aligned in 8 columns, two spaces, the hash, two spaces, the
 * name); then the whole model's: the same hashes over every tensor's bytes in
 * that order, and --uuid's UUIDv5 (SHA-1 of llama.cpp's namespace
 * ef001206-dadc-5f6d-a15f-3359e577d4e5 then of those bytes, version and
 * variant bits set). With a manifest (lines "TYPE HASH NAME", as these
 * lines are), each line ends in "  -  Ok", "  -  Mismatch" or "  -  Not
 * Found", after a first line naming the manifest's hash types, and a last
 * one with the outcome; with no hash chosen, the manifest's strongest
 * (sha256, sha1, xxh64, uuid) is used; with neither, xxh64.
 *
 * Libraries: libxxhash for xxh64 and nettle for SHA-1 (Debian's, see
 * docs/design.md); SHA-256 is libgguf's.
 */
#ifndef INSPECT_LLHASH_H
#define INSPECT_LLHASH_H

#include <stdbool.h>
#include <stddef.h>

#include <ggufkit/gguf.h>

/* The hash types, in llama-gguf-hash's line order */
enum { LLHASH_XXH64, LLHASH_SHA1, LLHASH_SHA256, LLHASH_UUID, LLHASH_TYPES };

/* A manifest: its lines of a known type, sorted by type and name (then by
 * line: the first line of a type and name is the one that counts) */
typedef struct llhash_entry {
    int         type; /* LLHASH_* */
    const char *hash, *name;
    size_t      line;
} llhash_entry;

typedef struct llhash_manifest {
    char         *text;
    llhash_entry *e;
    size_t        n;
    bool          has[LLHASH_TYPES]; /* a line of that type, named or not */
} llhash_manifest;

/* Parses n bytes of manifest text (copied): 0, or -1 with err (NUL bytes,
 * no line of a known type, out of memory). */
int llhash_manifest_parse(llhash_manifest *m, const char *data, size_t n, gguf_error *err);
void llhash_manifest_free(llhash_manifest *m);

/* The manifest's word on `hash` of `type` for `name`: -1 no line, 0 it
 * differs, 1 it matches. */
int llhash_manifest_verify(const llhash_manifest *m, int type, const char *name, const char *hash);

typedef struct llhash_opts {
    bool        xxh64, sha1, sha256, uuid, no_layer;
    const char *manifest; /* NULL: no verification */
} llhash_opts;

/* Exit statuses of a verification, as llama-gguf-hash's: every listed hash
 * matched (or none was listed for the model and every tensor's matched);
 * a hash differs; no line of the manifest names this file or its tensors. */
enum { LLHASH_OK = 0, LLHASH_MISMATCH = 1, LLHASH_MISSING = 3 };

/* Prints the lines for f, opened from `name` (the name the lines carry).
 * Returns an exit status: LLHASH_* when verifying (0 otherwise), or 1
 * after printing an error (the manifest unreadable or without a known hash
 * type, out of memory). */
int llhash_run(const gguf_file *f, const char *name, llhash_opts o);

#endif
