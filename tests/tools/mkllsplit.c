/*
 * mkllsplit.c — splits a GGUF file the way llama.cpp's llama-gguf-split
 * (e21cdc11, tools/gguf-split/gguf-split.cpp, --split) lays out its shards,
 * so the tests can check that gguf-edit merges what llama-gguf-split makes
 * and splits the way it does, without llama.cpp on the machine.
 *
 *   mkllsplit IN OUTPREFIX (--split-max-tensors N | --split-max-size N[M|G])
 *             [--no-tensor-first-split]
 *
 * Its layout, written here byte by byte (not with libgguf's writer, which
 * is what is being checked): every shard is GGUF v3 (gguf_init_empty);
 * shard 1 holds all of IN's keys in order and then split.no (u16),
 * split.tensors.count (i32) and split.count (u16) (set to 0 first and set
 * again at the end, which moves it last); the other shards hold only
 * those three; tensor offsets advance by each tensor's size padded
 * to 32; the header is zero-padded to 32, also with no tensors; each
 * tensor's data is followed by zeros to a multiple of 32. A shard ends
 * before the tensor whose padded size would take the shard's padded
 * tensor bytes past N bytes (M = 10^6, G = 10^9), or every N tensors.
 * IN is read with libgguf's reader and must have alignment 32.
 *
 * Not for: anything but tests (no atomic output, no path checks).
 */
#include <ggufkit/gguf.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 32

static uint64_t pad32(uint64_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

static void put(FILE *fp, const void *p, size_t n) { fwrite(p, 1, n, fp); }
static void put_u16(FILE *fp, uint16_t v) { put(fp, &v, 2); }
static void put_u32(FILE *fp, uint32_t v) { put(fp, &v, 4); }
static void put_u64(FILE *fp, uint64_t v) { put(fp, &v, 8); }
static void put_str(FILE *fp, const char *s, uint64_t n)
{
    put_u64(fp, n);
    put(fp, s, (size_t)n);
}
static void put_zeros(FILE *fp, uint64_t n)
{
    while (n--)
        fputc(0, fp);
}

/* One kv as gguf_set_kv copies it: key, type, value. */
static void put_kv(FILE *fp, const gguf_kv *kv)
{
    put_str(fp, kv->key, kv->key_len);
    put_u32(fp, kv->type);
    if (kv->type == GGUF_VT_ARR) {
        put_u32(fp, kv->elem_type);
        put_u64(fp, kv->n);
    }
    if (kv->elem_type == GGUF_VT_STR)
        for (uint64_t i = 0; i < kv->n; i++)
            put_str(fp, kv->strs[i].ptr, kv->strs[i].len);
    else
        put(fp, kv->data, (size_t)(kv->n * gguf_vtype_size(kv->elem_type)));
}

static void put_split_keys(FILE *fp, uint16_t no, uint16_t count, int32_t total)
{
    put_str(fp, "split.no", 8);
    put_u32(fp, GGUF_VT_U16);
    put_u16(fp, no);
    put_str(fp, "split.tensors.count", 19);
    put_u32(fp, GGUF_VT_I32);
    put(fp, &total, 4);
    put_str(fp, "split.count", 11); /* gguf-split sets it again once known: last */
    put_u32(fp, GGUF_VT_U16);
    put_u16(fp, count);
}

int main(int argc, char **argv)
{
    const char *in = NULL, *prefix = NULL;
    uint64_t max_tensors = 0, max_bytes = 0;
    bool no_first = false;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--split-max-tensors") && i + 1 < argc) {
            max_tensors = strtoull(argv[++i], &end, 10);
            if (*end || !max_tensors)
                goto usage;
        } else if (!strcmp(argv[i], "--split-max-size") && i + 1 < argc) {
            max_bytes = strtoull(argv[++i], &end, 10);
            if (!strcmp(end, "M"))
                max_bytes *= 1000ull * 1000;
            else if (!strcmp(end, "G"))
                max_bytes *= 1000ull * 1000 * 1000;
            else
                goto usage;
        } else if (!strcmp(argv[i], "--no-tensor-first-split")) {
            no_first = true;
        } else if (!in) {
            in = argv[i];
        } else if (!prefix) {
            prefix = argv[i];
        } else {
            goto usage;
        }
    }
    if (!in || !prefix || !max_tensors == !max_bytes)
        goto usage;

    gguf_error err = { 0 };
    gguf_file *f = gguf_open(in, GGUF_OPEN_NO_SPLIT, &err);
    if (!f) {
        fprintf(stderr, "mkllsplit: error: %s: %s\n", in, err.msg);
        return 1;
    }
    if (gguf_alignment(f) != ALIGN) {
        fprintf(stderr, "mkllsplit: error: %s: alignment %u, only 32 is reproduced\n", in,
                gguf_alignment(f));
        return 1;
    }
    const uint64_t nt = gguf_n_tensors(f);
    /* first[s]: index of shard s's first tensor; shards hold consecutive tensors */
    uint64_t *first = calloc(nt + 3, sizeof *first);
    uint32_t n_shards = 1;
    uint64_t in_shard = 0, curr = 0;
    if (!first)
        return 1;
    first[0] = 0;
    if (no_first)
        first[n_shards++] = 0;
    for (uint64_t i = 0; i < nt; i++) {
        const uint64_t nb = pad32(gguf_tensor_at(f, i)->nbytes), next = curr + nb;
        const bool split = max_bytes ? next > max_bytes : i > 0 && i % max_tensors == 0;
        if (split) {
            if (in_shard == 0) {
                fprintf(stderr, "error: one of splits have 0 tensors. Maybe size or tensors "
                        "limit is too small\n");
                return 1;
            }
            first[n_shards++] = i;
            in_shard = 0;
            curr = nb;
        } else {
            curr = next;
        }
        in_shard++;
    }
    first[n_shards] = nt;

    for (uint32_t s = 0; s < n_shards; s++) {
        char path[4096];
        snprintf(path, sizeof path, "%s-%05u-of-%05u.gguf", prefix, s + 1, n_shards);
        FILE *fp = fopen(path, "wb");
        if (!fp) {
            fprintf(stderr, "mkllsplit: error: %s: %s\n", path, strerror(errno));
            return 1;
        }
        const uint64_t lo = (no_first && s == 0) ? 0 : first[s];
        const uint64_t hi = (no_first && s == 0) ? 0 : first[s + 1];
        put(fp, "GGUF", 4);
        put_u32(fp, 3);
        put_u64(fp, hi - lo);
        put_u64(fp, (s == 0 ? gguf_n_kv(f) : 0) + 3);
        for (uint64_t k = 0; s == 0 && k < gguf_n_kv(f); k++)
            put_kv(fp, gguf_kv_at(f, k));
        put_split_keys(fp, (uint16_t)s, (uint16_t)n_shards, (int32_t)nt);
        uint64_t off = 0;
        for (uint64_t i = lo; i < hi; i++) {
            const gguf_tensor *t = gguf_tensor_at(f, i);
            put_str(fp, t->name, strlen(t->name));
            put_u32(fp, t->n_dims);
            for (uint32_t j = 0; j < t->n_dims; j++)
                put_u64(fp, (uint64_t)t->ne[j]);
            put_u32(fp, t->type);
            put_u64(fp, off);
            off += pad32(t->nbytes);
        }
        put_zeros(fp, pad32((uint64_t)ftell(fp)) - (uint64_t)ftell(fp));
        for (uint64_t i = lo; i < hi; i++) {
            const gguf_tensor *t = gguf_tensor_at(f, i);
            put(fp, t->data, (size_t)t->nbytes);
            put_zeros(fp, pad32(t->nbytes) - t->nbytes);
        }
        if (ferror(fp) | fclose(fp)) {
            fprintf(stderr, "mkllsplit: error: %s: write failed\n", path);
            return 1;
        }
    }
    printf("mkllsplit: %u shards\n", n_shards);
    free(first);
    gguf_close(f);
    return 0;
usage:
    fprintf(stderr, "usage: mkllsplit IN OUTPREFIX (--split-max-tensors N | --split-max-size N[M|G]) "
            "[--no-tensor-first-split]\n");
    return 2;
}
