/*
 * readback.c — sum tensor bytes as written, read the output back, compare
 * (see readback.h).
 */
#include "readback.h"

#include <inttypes.h>
#include <string.h>

#include <ggufkit/gguf.h>

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull

static uint64_t rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t round1(uint64_t acc, uint64_t v)
{
    return rotl(acc + v * P2, 31) * P1;
}

static uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

void data_sum_init(data_sum *s)
{
    memset(s, 0, sizeof *s);
    s->lane[0] = P1 + P2;
    s->lane[1] = P2;
    s->lane[2] = 0;
    s->lane[3] = 0 - P1;
}

static void blocks(data_sum *s, const uint8_t *p, size_t n_blocks)
{
    uint64_t a = s->lane[0], b = s->lane[1], c = s->lane[2], d = s->lane[3];
    for (size_t i = 0; i < n_blocks; i++, p += 32) {
        a = round1(a, load64(p));
        b = round1(b, load64(p + 8));
        c = round1(c, load64(p + 16));
        d = round1(d, load64(p + 24));
    }
    s->lane[0] = a, s->lane[1] = b, s->lane[2] = c, s->lane[3] = d;
}

void data_sum_add(data_sum *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    s->len += n;
    if (s->n_tail) {
        size_t k = 32 - s->n_tail < n ? 32 - s->n_tail : n;
        memcpy(s->tail + s->n_tail, p, k);
        s->n_tail += (uint32_t)k;
        p += k;
        n -= k;
        if (s->n_tail < 32)
            return;
        blocks(s, s->tail, 1);
        s->n_tail = 0;
    }
    blocks(s, p, n / 32);
    p += n / 32 * 32;
    n %= 32;
    memcpy(s->tail, p, n);
    s->n_tail = (uint32_t)n;
}

uint64_t data_sum_final(const data_sum *s)
{
    uint64_t h = rotl(s->lane[0], 1) + rotl(s->lane[1], 7) + rotl(s->lane[2], 12) +
                 rotl(s->lane[3], 18);
    h ^= s->len * P3;
    for (uint32_t i = 0; i < s->n_tail; i++)
        h = rotl(h ^ (s->tail[i] * P3), 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    return h;
}

/* Sums t's bytes a slice at a time, dropping each slice's pages after use,
 * so that reading a large output back never holds more than a slice. */
static uint64_t sum_tensor(const gguf_file *f, const gguf_tensor *t)
{
    enum { SLICE = 64 << 20 };
    data_sum s;
    data_sum_init(&s);
    const uint8_t *p = t->data;
    for (uint64_t done = 0; done < t->nbytes;) {
        size_t k = t->nbytes - done < SLICE ? (size_t)(t->nbytes - done) : SLICE;
        data_sum_add(&s, p + done, k);
        gguf_release_range(f, p + done, k);
        done += k;
    }
    return data_sum_final(&s);
}

int readback_verify(gguf_writer *w, const char *const *names, const uint64_t *sums, uint64_t n,
                    gguf_error *err)
{
    uint64_t k = 0;
    for (uint32_t s = 0; s < gguf_writer_n_shards(w); s++) {
        const char *tmp = gguf_writer_temp_path(w, s);
        gguf_file *f = tmp ? gguf_open(tmp, GGUF_OPEN_NO_SPLIT, err) : NULL;
        if (!f) {
            if (!tmp)
                gguf_error_set(err, "shard %u has no temporary file to read back", s + 1);
            gguf_error_prefix(err, "reading the output back: ");
            return -1;
        }
        for (uint64_t i = 0; i < gguf_n_tensors(f); i++, k++) {
            const gguf_tensor *t = gguf_tensor_at(f, i);
            if (k >= n || strcmp(t->name, names[k])) {
                gguf_error_set(err, "reading the output back: tensor %" PRIu64 " is '%s', "
                               "expected '%s'", k, t->name, k < n ? names[k] : "(none)");
                gguf_close(f);
                return -1;
            }
            if (sum_tensor(f, t) != sums[k]) {
                gguf_error_set(err, "reading the output back: tensor '%s' differs from what "
                               "was encoded", t->name);
                gguf_close(f);
                return -1;
            }
        }
        gguf_close(f);
    }
    if (k != n)
        return gguf_error_set(err, "reading the output back: %" PRIu64 " tensors, expected %"
                              PRIu64, k, n);
    return 0;
}
