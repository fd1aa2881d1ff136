/*
 * sha256.h — SHA-256 (FIPS 180-4), used for tensor hashes and manifests.
 *
 * Streaming interface; no dependency on OpenSSL. Not for: anything
 * security-sensitive beyond content identity.
 */
#ifndef GGUF_SHA256_H
#define GGUF_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256_ctx {
    uint32_t state[8];
    uint64_t nbytes;
    uint8_t  buf[64];
    uint32_t buflen;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
void sha256_final(sha256_ctx *c, uint8_t digest[32]);

/* One-shot hash of a buffer, as 64 lowercase hex digits plus NUL. */
void sha256_hex(const void *data, size_t n, char hex[65]);

/* Formats a digest as lowercase hex. */
void sha256_to_hex(const uint8_t digest[32], char hex[65]);

#endif
