/*
 * sha256.c — straightforward SHA-256 after FIPS 180-4, section 6.2.
 */
#include <ggufkit/gguf.h>

#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t s[8], const uint8_t p[64])
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    s[0] += a; s[1] += b; s[2] += c; s[3] += d; s[4] += e; s[5] += f; s[6] += g; s[7] += h;
}

void gguf_sha256_init(gguf_sha256_ctx *c)
{
    static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    memcpy(c->state, iv, sizeof iv);
    c->nbytes = 0;
    c->buflen = 0;
}

void gguf_sha256_update(gguf_sha256_ctx *c, const void *data, size_t n)
{
    const uint8_t *p = data;
    c->nbytes += n;
    if (c->buflen) {
        size_t take = 64 - c->buflen < n ? 64 - c->buflen : n;
        memcpy(c->buf + c->buflen, p, take);
        c->buflen += (uint32_t)take;
        p += take;
        n -= take;
        if (c->buflen < 64)
            return;
        compress(c->state, c->buf);
        c->buflen = 0;
    }
    for (; n >= 64; p += 64, n -= 64)
        compress(c->state, p);
    memcpy(c->buf, p, n);
    c->buflen = (uint32_t)n;
}

void gguf_sha256_final(gguf_sha256_ctx *c, uint8_t digest[32])
{
    uint64_t bits = c->nbytes * 8;
    uint8_t pad = 0x80;
    gguf_sha256_update(c, &pad, 1);
    pad = 0;
    while (c->buflen != 56)
        gguf_sha256_update(c, &pad, 1);
    uint8_t len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(bits >> (56 - 8 * i));
    gguf_sha256_update(c, len, 8);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(c->state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(c->state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(c->state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)c->state[i];
    }
}

void gguf_sha256_to_hex(const uint8_t digest[32], char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[64] = '\0';
}

void gguf_sha256_hex(const void *data, size_t n, char hex[65])
{
    gguf_sha256_ctx c;
    uint8_t d[32];
    gguf_sha256_init(&c);
    gguf_sha256_update(&c, data, n);
    gguf_sha256_final(&c, d);
    gguf_sha256_to_hex(d, hex);
}
