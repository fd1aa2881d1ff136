/*
 * llhash.c — llama-gguf-hash's listing and manifest check (see llhash.h).
 *
 * Tensor bytes are read once, in released pieces (stream.h), each piece
 * feeding the tensor's hashes and the model's. A manifest is read whole
 * (at most MANIFEST_MAX bytes), its lines sorted by type and name so that
 * each lookup is a binary search; the first line of a type and name wins,
 * as in llama-gguf-hash, which reads the file top down.
 */
#include "llhash.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/sha1.h>
#include <xxhash.h>

#include "readfile.h"
#include "stream.h"

#define TOOL "gguf-inspect"
#define MANIFEST_MAX ((size_t)1 << 30)

enum { H_XXH64 = LLHASH_XXH64, H_SHA1 = LLHASH_SHA1, H_SHA256 = LLHASH_SHA256, H_UUID = LLHASH_UUID,
       H_N = LLHASH_TYPES };
static const char *const type_name[H_N] = { "xxh64", "sha1", "sha256", "uuid" };

/* llama.cpp's UUIDv5 namespace: uuid5(NAMESPACE_URL, 'en.wikipedia.org/wiki/Llama.cpp') */
static const uint8_t uuid_namespace[16] = { 0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d,
                                            0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5 };

/* ------------------------------------------------------------------------
 * The manifest
 * ------------------------------------------------------------------------ */

static int cmp_entry(const void *a, const void *b)
{
    const llhash_entry *x = a, *y = b;
    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

int llhash_manifest_parse(llhash_manifest *m, const char *data, size_t n, gguf_error *err)
{
    memset(m, 0, sizeof *m);
    if (memchr(data, 0, n))
        return gguf_error_set(err, "not a hash manifest (it holds NUL bytes)");
    size_t lines = 1;
    for (size_t i = 0; i < n; i++)
        lines += data[i] == '\n';
    m->text = malloc(n + 1);
    m->e = malloc(lines * sizeof *m->e);
    if (!m->text || !m->e) {
        llhash_manifest_free(m);
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    }
    memcpy(m->text, data, n);
    m->text[n] = 0;
    /* "TYPE HASH NAME" per line, words separated by blanks; the rest of a
     * line is ignored, as llama-gguf-hash's >> reads it */
    char *next = m->text;
    for (size_t line = 1; next; line++) {
        char *l = next, *nl = strchr(l, '\n'), *save = NULL;
        if (nl)
            *nl = 0;
        next = nl ? nl + 1 : NULL;
        char *t = strtok_r(l, " \t\r\v\f", &save);
        char *h = t ? strtok_r(NULL, " \t\r\v\f", &save) : NULL;
        char *nm = h ? strtok_r(NULL, " \t\r\v\f", &save) : NULL;
        for (int k = 0; t && k < LLHASH_TYPES; k++)
            if (!strcmp(t, type_name[k])) {
                m->has[k] = true;
                if (nm)
                    m->e[m->n++] = (llhash_entry){ k, h, nm, line };
            }
    }
    if (!m->has[H_XXH64] && !m->has[H_SHA1] && !m->has[H_SHA256] && !m->has[H_UUID]) {
        llhash_manifest_free(m);
        return gguf_error_set(err, "no line of the manifest has a known hash type "
                              "(xxh64, sha1, sha256, uuid)");
    }
    qsort(m->e, m->n, sizeof *m->e, cmp_entry);
    return 0;
}

void llhash_manifest_free(llhash_manifest *m)
{
    free(m->text);
    free(m->e);
    memset(m, 0, sizeof *m);
}

int llhash_manifest_verify(const llhash_manifest *m, int type, const char *name, const char *hash)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const llhash_entry *e = &m->e[mid];
        int c = e->type != type ? (e->type < type ? -1 : 1) : strcmp(e->name, name);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == m->n || m->e[lo].type != type || strcmp(m->e[lo].name, name))
        return -1;
    return !strcmp(m->e[lo].hash, hash);
}

/* Reads and parses the manifest at path; 1 after printing an error. */
static int manifest_load(llhash_manifest *m, const char *path)
{
    memset(m, 0, sizeof *m);
    gguf_error err = { 0 };
    uint8_t *buf = NULL;
    size_t n = 0;
    int rc = 1;
    if (gguf_read_file(path, MANIFEST_MAX, &buf, &n, &err)) {
        const char *msg = err.msg;
        if (!strncmp(msg, "cannot open: ", 13))
            fprintf(stderr, TOOL ": error: %s: cannot open the manifest: %s\n", path, msg + 13);
        else
            fprintf(stderr, TOOL ": error: %s: cannot read the manifest: %s\n", path, msg);
    } else if (llhash_manifest_parse(m, (const char *)buf, n, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", path, err.msg);
    } else {
        rc = 0;
    }
    free(buf);
    return rc;
}

/* ------------------------------------------------------------------------
 * Hashing
 * ------------------------------------------------------------------------ */

typedef struct hashes {
    XXH64_state_t     *xxh;
    struct sha1_ctx    sha1;
    gguf_sha256_ctx    sha256;
} hashes;

static void hashes_init(hashes *h, const bool on[H_N])
{
    if (on[H_XXH64])
        XXH64_reset(h->xxh, 0);
    if (on[H_SHA1])
        sha1_init(&h->sha1);
    if (on[H_SHA256])
        gguf_sha256_init(&h->sha256);
}

static void hashes_update(hashes *h, const bool on[H_N], const uint8_t *p, size_t n)
{
    if (on[H_XXH64])
        XXH64_update(h->xxh, p, n);
    if (on[H_SHA1])
        sha1_update(&h->sha1, n, p);
    if (on[H_SHA256])
        gguf_sha256_update(&h->sha256, p, n);
}

static void to_hex(const uint8_t *b, size_t n, char *hex)
{
    for (size_t i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", b[i]);
}

/* The hex digest of hash k (H_XXH64, H_SHA1, H_SHA256) */
static void hashes_final(hashes *h, int k, char hex[65])
{
    uint8_t d[32];
    if (k == H_XXH64) {
        XXH64_hash_t v = XXH64_digest(h->xxh);
        for (int i = 0; i < 8; i++)
            d[i] = (uint8_t)(v >> (8 * (7 - i)));
        to_hex(d, 8, hex);
    } else if (k == H_SHA1) {
        sha1_digest(&h->sha1, SHA1_DIGEST_SIZE, d);
        to_hex(d, SHA1_DIGEST_SIZE, hex);
    } else {
        gguf_sha256_final(&h->sha256, d);
        to_hex(d, 32, hex);
    }
}

/* What the lines found in the manifest, for the exit status. */
typedef struct tally {
    bool layer_in, layer_bad, model_in, model_bad;
} tally;

static void line(const llhash_manifest *m, tally *t, bool model, int type, const char *hex, const char *name)
{
    if (!m) {
        printf("%-8s  %s  %s\n", type_name[type], hex, name);
        return;
    }
    int r = llhash_manifest_verify(m, type, name, hex);
    if (r >= 0) {
        *(model ? &t->model_in : &t->layer_in) = true;
        if (r == 0)
            *(model ? &t->model_bad : &t->layer_bad) = true;
    }
    printf("%-8s  %s  %s  -  %s\n", type_name[type], hex, name,
           r < 0 ? "Not Found" : r ? "Ok" : "Mismatch");
}

int llhash_run(const gguf_file *f, const char *name, llhash_opts o)
{
    llhash_manifest m;
    bool on[H_N] = { o.xxh64, o.sha1, o.sha256, o.uuid };
    const bool verify = o.manifest != NULL;
    int rc = 1;
    hashes layer = { 0 }, model = { 0 };
    struct sha1_ctx uuid;
    char *tname = NULL;
    if (verify) {
        if (manifest_load(&m, o.manifest))
            goto done;
        printf("manifest  %s", o.manifest);
        static const int order[] = { H_SHA256, H_SHA1, H_XXH64, H_UUID };
        for (int i = 0; i < H_N; i++)
            if (m.has[order[i]])
                printf("  %s", type_name[order[i]]);
        printf("\n");
        if (!on[H_XXH64] && !on[H_SHA1] && !on[H_SHA256] && !on[H_UUID])
            for (int i = 0; i < H_N; i++)
                if (m.has[order[i]]) {
                    on[order[i]] = true;
                    break;
                }
    }
    if (!on[H_XXH64] && !on[H_SHA1] && !on[H_SHA256] && !on[H_UUID])
        on[H_XXH64] = true;
    layer.xxh = XXH64_createState();
    model.xxh = XXH64_createState();
    size_t name_len = strlen(name), cap = name_len + 2;
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        size_t l = name_len + 2 + strlen(gguf_tensor_at(f, i)->name);
        cap = l > cap ? l : cap;
    }
    tname = malloc(cap);
    if (!layer.xxh || !model.xxh || !tname) {
        fprintf(stderr, TOOL ": error: out of memory\n");
        goto done;
    }
    hashes_init(&model, on);
    if (on[H_UUID]) {
        sha1_init(&uuid);
        sha1_update(&uuid, sizeof uuid_namespace, uuid_namespace);
    }
    tally t = { 0 };
    const bool per_layer = !o.no_layer;
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *ten = gguf_tensor_at(f, i);
        if (per_layer)
            hashes_init(&layer, on);
        stream st;
        const uint8_t *p;
        size_t len;
        stream_begin(&st, f, ten->data, ten->nbytes);
        while ((len = stream_next(&st, &p)) > 0) {
            if (per_layer)
                hashes_update(&layer, on, p, len);
            hashes_update(&model, on, p, len);
            if (on[H_UUID])
                sha1_update(&uuid, len, p);
        }
        if (!per_layer)
            continue;
        snprintf(tname, cap, "%s:%s", name, ten->name);
        for (int k = H_XXH64; k <= H_SHA256; k++)
            if (on[k]) {
                char hex[65];
                hashes_final(&layer, k, hex);
                line(verify ? &m : NULL, &t, false, k, hex, tname);
            }
    }
    for (int k = H_XXH64; k <= H_SHA256; k++)
        if (on[k]) {
            char hex[65];
            hashes_final(&model, k, hex);
            line(verify ? &m : NULL, &t, true, k, hex, name);
        }
    if (on[H_UUID]) {
        uint8_t d[SHA1_DIGEST_SIZE];
        sha1_digest(&uuid, SHA1_DIGEST_SIZE, d);
        d[6] = (uint8_t)((d[6] & 0x0F) | 0x50);
        d[8] = (uint8_t)((d[8] & 0x3F) | 0x80);
        char s[37];
        snprintf(s, sizeof s,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", d[0],
                 d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11], d[12], d[13],
                 d[14], d[15]);
        line(verify ? &m : NULL, &t, true, H_UUID, s, name);
    }
    rc = 0;
    if (verify) {
        if (!t.model_in)
            rc = !t.layer_in ? LLHASH_MISSING : t.layer_bad ? LLHASH_MISMATCH : LLHASH_OK;
        else
            rc = t.layer_bad || t.model_bad ? LLHASH_MISMATCH : LLHASH_OK;
        printf("\nVerification results for %s - %s\n", o.manifest,
               rc == LLHASH_OK ? "Success" : rc == LLHASH_MISSING ? "Manifest Missing Entry" : "Failure");
    }
done:
    if (verify)
        llhash_manifest_free(&m);
    XXH64_freeState(layer.xxh);
    XXH64_freeState(model.xxh);
    free(tname);
    return rc;
}
