/*
 * tiktoken.c — Kimi K2's tiktoken.model vocabulary (see tiktoken.h).
 *
 * e21cdc11 (DeepseekV2Model.set_vocab, tokpre "kimi-k2"): the ranks come
 * from tiktoken's load_tiktoken_bpe; vocab[token_bytes_to_string(token)] =
 * rank; for each multi-byte token in file order, QwenModel.bpe(ranks,
 * token, max_rank=rank) — start from single bytes, merge the adjacent pair
 * of lowest rank (the leftmost on ties) while that rank is below the
 * token's own — and a result of exactly two parts is the merge "A B". The
 * tokenizer's special_tokens are the ids from len(ranks) on, 258 of them
 * (num_reserved_special_tokens + 2), each named by added_tokens_decoder or
 * "<|reserved_token_i|>"; ids up to vocab_size are written, control.
 */
#include "tiktoken.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/arch.h>

#include "readfile.h"
#include "unicode.h"

#define MAX_RANK (16 * 1024 * 1024)
#define N_KIMI_SPECIAL (256 + 2)
#define MAX_TOKEN_BYTES 1024

/* Python's str.split() whitespace within a line (never the NUL byte) */
static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

void tiktoken_free(tiktoken_ranks *t)
{
    free(t->bytes);
    free(t->off);
    free(t->len);
    free(t->rank);
    memset(t, 0, sizeof *t);
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decodes n base64 characters (padded to a multiple of 4) into out; the
 * byte count, or -1 when they are not base64. */
static long b64_decode(const char *s, size_t n, uint8_t *out)
{
    if (n == 0 || n % 4)
        return -1;
    size_t w = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4], pad = 0;
        for (int k = 0; k < 4; k++) {
            unsigned char c = (unsigned char)s[i + k];
            if (c == '=' && i + 4 == n && k >= 2) {
                v[k] = 0;
                pad++;
            } else if (pad || (v[k] = b64_value(c)) < 0) {
                return -1;
            }
        }
        uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        out[w++] = (uint8_t)(x >> 16);
        if (pad < 2)
            out[w++] = (uint8_t)(x >> 8);
        if (pad < 1)
            out[w++] = (uint8_t)x;
    }
    return (long)w;
}

/* ---- a byte string -> rank table (open addressing) -------------------------- */

typedef struct rank_map {
    const tiktoken_ranks *t;
    int64_t *slot; /* token index + 1, 0 empty */
    size_t   mask;
} rank_map;

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* The index of the token with these bytes, or -1. */
static int64_t map_find(const rank_map *m, const uint8_t *p, size_t n)
{
    for (size_t h = (size_t)hash_bytes(p, n) & m->mask;; h = (h + 1) & m->mask) {
        int64_t e = m->slot[h];
        if (!e)
            return -1;
        size_t i = (size_t)e - 1;
        if (m->t->len[i] == n && !memcmp(m->t->bytes + m->t->off[i], p, n))
            return (int64_t)i;
    }
}

/* Builds the map; the index of a token already in it (a duplicate), -1 when
 * none, -2 when out of memory. */
static int64_t map_build(rank_map *m, const tiktoken_ranks *t)
{
    size_t cap = 16;
    while (cap < 2 * t->n + 1)
        cap *= 2;
    m->t = t;
    m->mask = cap - 1;
    if (!(m->slot = calloc(cap, sizeof *m->slot)))
        return -2;
    for (size_t i = 0; i < t->n; i++) {
        const uint8_t *p = t->bytes + t->off[i];
        if (map_find(m, p, t->len[i]) >= 0)
            return (int64_t)i;
        size_t h = (size_t)hash_bytes(p, t->len[i]) & m->mask;
        while (m->slot[h])
            h = (h + 1) & m->mask;
        m->slot[h] = (int64_t)i + 1;
    }
    return -1;
}

/* ---- parsing ---------------------------------------------------------------- */

int tiktoken_parse(tiktoken_ranks *t, const char *name, const char *data, size_t len,
                   gguf_error *err)
{
    memset(t, 0, sizeof *t);
    size_t n_lines = 1;
    for (size_t i = 0; i < len; i++)
        n_lines += data[i] == '\n';
    t->bytes = malloc(len + 1);
    t->off = malloc(n_lines * sizeof *t->off);
    t->len = malloc(n_lines * sizeof *t->len);
    t->rank = malloc(n_lines * sizeof *t->rank);
    if (!t->bytes || !t->off || !t->len || !t->rank) {
        tiktoken_free(t);
        return gguf_error_set(err, "out of memory");
    }
    size_t w = 0, line = 0;
    for (size_t pos = 0; pos < len; ) {
        const char *ln = data + pos, *nl = memchr(ln, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - ln) : len - pos;
        pos += n + (nl != NULL);
        line++;
        /* whitespace-separated fields, as line.split() */
        const char *f[3];
        size_t fl[3];
        int nf = 0;
        for (size_t i = 0; i < n;) {
            while (i < n && is_space(ln[i]))
                i++;
            if (i == n)
                break;
            size_t s = i;
            while (i < n && !is_space(ln[i]))
                i++;
            if (nf < 3) {
                f[nf] = ln + s;
                fl[nf] = i - s;
            }
            nf++;
        }
        if (nf == 0)
            continue;
        if (nf != 2) {
            tiktoken_free(t);
            return gguf_error_set(err, "%s line %zu: not a base64 token and a rank", name, line);
        }
        long nb = b64_decode(f[0], fl[0], t->bytes + w);
        if (nb <= 0) {
            tiktoken_free(t);
            return gguf_error_set(err, "%s line %zu: the token '%.*s' is not base64", name, line,
                                  (int)(fl[0] > 40 ? 40 : fl[0]), f[0]);
        }
        /* the merges' rebuild takes time cubic in a token's length: real
         * vocabularies' tokens are a few hundred bytes at most */
        if (nb > MAX_TOKEN_BYTES) {
            tiktoken_free(t);
            return gguf_error_set(err, "%s line %zu: a token of %ld bytes (at most %d)", name, line, nb,
                                  MAX_TOKEN_BYTES);
        }
        int64_t r = 0;
        for (size_t i = 0; i < fl[1]; i++) {
            if (f[1][i] < '0' || f[1][i] > '9' || r >= MAX_RANK) {
                tiktoken_free(t);
                return gguf_error_set(err, "%s line %zu: the rank '%.*s' is not a number below %d",
                                      name, line, (int)(fl[1] > 20 ? 20 : fl[1]), f[1], MAX_RANK);
            }
            r = r * 10 + (f[1][i] - '0');
        }
        if (r >= MAX_RANK) {
            tiktoken_free(t);
            return gguf_error_set(err, "%s line %zu: the rank '%.*s' is not a number below %d",
                                  name, line, (int)(fl[1] > 20 ? 20 : fl[1]), f[1], MAX_RANK);
        }
        t->off[t->n] = w;
        t->len[t->n] = (size_t)nb;
        t->rank[t->n++] = r;
        w += (size_t)nb;
    }
    if (!t->n) {
        tiktoken_free(t);
        return gguf_error_set(err, "%s: no tokens", name);
    }
    return 0;
}

/* ---- the vocabulary ---------------------------------------------------------- */

/* bytes in GPT-2's byte alphabet (2 bytes of UTF-8 at most per byte) */
static size_t byte_string(const uint8_t *p, size_t n, char *out)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        char u[4];
        size_t k = gguf_utf8_encode(gguf_byte_to_cp(p[i]), u);
        memcpy(out + w, u, k);
        w += k;
    }
    out[w] = 0;
    return w;
}

/* QwenModel.bpe(ranks, token, max_rank): the part count; the split point
 * (bytes of the first part) in *first when it is 2. */
static size_t bpe_parts(const rank_map *m, const tiktoken_ranks *t, const uint8_t *p, size_t n,
                        int64_t max_rank, size_t *cut, size_t *first)
{
    /* cut[k]: where part k starts; n_parts parts */
    size_t n_parts = n;
    for (size_t k = 0; k < n; k++)
        cut[k] = k;
    cut[n] = n;
    for (;;) {
        int64_t best = -1;
        size_t at = 0;
        for (size_t k = 0; k + 1 < n_parts; k++) {
            int64_t i = map_find(m, p + cut[k], cut[k + 2] - cut[k]);
            if (i >= 0 && (best < 0 || t->rank[i] < best)) {
                best = t->rank[i];
                at = k;
            }
        }
        if (best < 0 || best >= max_rank)
            break;
        memmove(cut + at + 1, cut + at + 2, (n_parts - at - 1) * sizeof *cut);
        n_parts--;
    }
    *first = cut[1];
    return n_parts;
}

int vocab_from_tiktoken_ranks(vocab *v, const tiktoken_ranks *t, const json_value *tok_config,
                              int64_t n_vocab, gguf_error *err)
{
    memset(v, 0, sizeof *v);
    if (n_vocab <= 0 || n_vocab > MAX_RANK)
        return gguf_error_set(err, "config.json: a tiktoken.model vocabulary needs vocab_size "
                              "(1 to %d)", MAX_RANK);
    rank_map m = { 0 };
    int64_t dup = map_build(&m, t);
    if (dup == -2) {
        free(m.slot);
        return gguf_error_set(err, "out of memory");
    }
    if (dup >= 0) {
        free(m.slot);
        return gguf_error_set(err, "tiktoken.model: token %zu (rank %" PRId64 ") appears twice",
                              (size_t)dup, t->rank[dup]);
    }
    int rc = -1;
    size_t longest = 0;
    for (size_t i = 0; i < t->n; i++)
        longest = t->len[i] > longest ? t->len[i] : longest;
    char *buf = malloc(2 * longest + 2);
    size_t *cut = malloc((longest + 1) * sizeof *cut);
    int64_t *by_rank = malloc((size_t)n_vocab * sizeof *by_rank);
    v->n = n_vocab;
    v->unk_id = v->bos_id = v->eos_id = v->pad_id = -1;
    v->tokens = calloc((size_t)n_vocab + 1, sizeof *v->tokens);
    v->lens = calloc((size_t)n_vocab + 1, sizeof *v->lens);
    v->types = calloc((size_t)n_vocab + 1, sizeof *v->types);
    v->merges = calloc(t->n, sizeof *v->merges);
    v->merge_lens = calloc(t->n, sizeof *v->merge_lens);
    if (!buf || !cut || !by_rank || !v->tokens || !v->lens || !v->types || !v->merges ||
        !v->merge_lens)
        goto oom;
    v->bpe = true;
    v->pre = "kimi-k2";
    for (int64_t i = 0; i < n_vocab; i++)
        by_rank[i] = -1;
    for (size_t i = 0; i < t->n; i++) {
        if (t->rank[i] < n_vocab && by_rank[t->rank[i]] >= 0) {
            gguf_error_set(err, "tiktoken.model: rank %" PRId64 " is given twice", t->rank[i]);
            goto done;
        }
        if (t->rank[i] < n_vocab)
            by_rank[t->rank[i]] = (int64_t)i;
    }
    /* the merges, in file order */
    for (size_t i = 0; i < t->n; i++) {
        const uint8_t *p = t->bytes + t->off[i];
        size_t first;
        if (t->len[i] < 2 || bpe_parts(&m, t, p, t->len[i], t->rank[i], cut, &first) != 2)
            continue;
        size_t a = byte_string(p, first, buf);
        buf[a] = ' ';
        size_t b = byte_string(p + first, t->len[i] - first, buf + a + 1);
        if (!(v->merges[v->n_merges] = strdup(buf)))
            goto oom;
        v->merge_lens[v->n_merges++] = a + 1 + b;
    }
    /* the tokens: ranks, Kimi's specials, padding */
    const json_value *dec = json_get(tok_config, "added_tokens_decoder");
    const int64_t base = (int64_t)t->n;
    for (int64_t id = 0; id < n_vocab; id++) {
        char name[48];
        const char *text = NULL;
        size_t len = 0;
        if (by_rank[id] >= 0 && id < base) {
            size_t i = (size_t)by_rank[id];
            len = byte_string(t->bytes + t->off[i], t->len[i], buf);
            text = buf;
            v->types[id] = GGUF_TOKEN_NORMAL;
        } else if (id >= base && id < base + N_KIMI_SPECIAL) {
            snprintf(name, sizeof name, "%" PRId64, id);
            text = json_str(json_get(json_get(dec, name), "content"));
            if (!text) {
                snprintf(name, sizeof name, "<|reserved_token_%" PRId64 "|>", id);
                text = name;
            }
            len = strlen(text);
            v->types[id] = GGUF_TOKEN_CONTROL;
        } else if (by_rank[id] >= 0) { /* a rank past the specials' start */
            size_t i = (size_t)by_rank[id];
            len = byte_string(t->bytes + t->off[i], t->len[i], buf);
            text = buf;
            v->types[id] = GGUF_TOKEN_NORMAL;
        } else {
            len = (size_t)snprintf(name, sizeof name, "[PAD%" PRId64 "]", id);
            text = name;
            v->types[id] = GGUF_TOKEN_UNUSED;
        }
        if (vocab_set(v, id, text, len))
            goto oom;
    }
    rc = 0;
    goto done;
oom:
    gguf_error_set(err, "out of memory");
done:
    if (rc)
        vocab_free(v);
    free(m.slot);
    free(buf);
    free(cut);
    free(by_rank);
    return rc;
}

int vocab_from_tiktoken(vocab *v, const char *path, const json_value *tok_config, int64_t n_vocab,
                        gguf_error *err)
{
    uint8_t *data;
    size_t len;
    if (gguf_read_file(path, (size_t)256 << 20, &data, &len, err)) {
        gguf_error_prefix(err, "tiktoken.model: ");
        return -1;
    }
    tiktoken_ranks t;
    int rc = tiktoken_parse(&t, "tiktoken.model", (const char *)data, len, err);
    free(data);
    if (rc)
        return -1;
    rc = vocab_from_tiktoken_ranks(v, &t, tok_config, n_vocab, err);
    tiktoken_free(&t);
    return rc;
}
