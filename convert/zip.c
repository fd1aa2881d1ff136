/*
 * zip.c — see zip.h. Layout (APPNOTE 6.3): local headers and data, then
 * the central directory, then (ZIP64) the zip64 end record and its
 * locator, then the end-of-central-directory record, possibly followed by
 * a comment of up to 65535 bytes.
 */
#include "zip.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

#define SIG_EOCD   0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64  0x07064b50u
#define SIG_CDIR   0x02014b50u
#define SIG_LOCAL  0x04034b50u

/* Applies a ZIP64 extra field to the values stored as 0xffffffff. */
static int zip64_extra(const uint8_t *x, size_t len, uint64_t *size, uint64_t *comp,
                       uint64_t *offset, gguf_error *err)
{
    while (len >= 4) {
        uint16_t id = le16(x), n = le16(x + 2);
        if ((size_t)n + 4 > len)
            break;
        if (id == 0x0001) {
            const uint8_t *p = x + 4, *end = x + 4 + n;
            uint64_t *fields[3] = { size, comp, offset };
            for (int i = 0; i < 3; i++) {
                if (*fields[i] != 0xffffffffu)
                    continue;
                if (end - p < 8)
                    return gguf_error_set(err, "short ZIP64 extra field");
                *fields[i] = le64(p);
                p += 8;
            }
            return 0;
        }
        x += 4 + n;
        len -= 4 + (size_t)n;
    }
    return 0;
}

int zip_parse(const uint8_t *data, size_t size, zip_archive *z, gguf_error *err)
{
    memset(z, 0, sizeof *z);
    z->data = data;
    z->size = size;
    /* the end record: 22 bytes, searched backwards over a possible comment */
    size_t eocd = SIZE_MAX;
    for (size_t back = 22; back <= size && back <= 22 + 65535; back++)
        if (le32(data + size - back) == SIG_EOCD) {
            eocd = size - back;
            break;
        }
    if (eocd == SIZE_MAX)
        return gguf_error_set(err, "not a zip archive (no end-of-directory record)");
    uint64_t count = le16(data + eocd + 10), cd_size = le32(data + eocd + 12),
             cd_off = le32(data + eocd + 16);
    if (eocd >= 20 && le32(data + eocd - 20) == SIG_LOC64) {
        uint64_t e64 = le64(data + eocd - 20 + 8);
        if (size < 56 || e64 > size - 56 || le32(data + e64) != SIG_EOCD64)
            return gguf_error_set(err, "byte %zu: bad ZIP64 end record locator", eocd - 20);
        count = le64(data + e64 + 32);
        cd_size = le64(data + e64 + 40);
        cd_off = le64(data + e64 + 48);
    }
    if (cd_off > size || cd_size > size - cd_off)
        return gguf_error_set(err, "central directory [%" PRIu64 ", +%" PRIu64 ") lies outside "
                              "the file", cd_off, cd_size);
    if (count > cd_size / 46)
        return gguf_error_set(err, "%" PRIu64 " entries cannot fit a %" PRIu64 "-byte directory",
                              count, cd_size);
    if (!(z->entries = calloc(count ? count : 1, sizeof *z->entries)))
        return gguf_error_set(err, "out of memory");
    const uint8_t *p = data + cd_off, *end = data + cd_off + cd_size;
    for (uint64_t i = 0; i < count; i++) {
        size_t at = (size_t)(p - data);
        if (end - p < 46 || le32(p) != SIG_CDIR) {
            gguf_error_set(err, "byte %zu: bad central directory entry %" PRIu64, at, i);
            goto fail;
        }
        uint16_t method = le16(p + 10), name_len = le16(p + 28), extra_len = le16(p + 30),
                 comment_len = le16(p + 32);
        uint64_t comp = le32(p + 20), usize = le32(p + 24), local = le32(p + 42);
        if ((size_t)(end - p) < 46u + name_len + extra_len + comment_len) {
            gguf_error_set(err, "byte %zu: central directory entry runs past its end", at);
            goto fail;
        }
        zip_entry *e = &z->entries[z->n];
        if (!(e->name = strndup((const char *)p + 46, name_len))) {
            gguf_error_set(err, "out of memory");
            goto fail;
        }
        z->n++;
        if (zip64_extra(p + 46 + name_len, extra_len, &usize, &comp, &local, err))
            goto fail;
        e->method = method;
        e->crc = le32(p + 16);
        e->comp_size = comp;
        e->size = usize;
        if (method != 0 && method != 8) {
            gguf_error_set(err, "entry %s: unsupported compression method %u", e->name, method);
            goto fail;
        }
        if (local > size || size - local < 30 || le32(data + local) != SIG_LOCAL) {
            gguf_error_set(err, "entry %s: bad local header offset %" PRIu64, e->name, local);
            goto fail;
        }
        uint64_t start = local + 30 + le16(data + local + 26) + le16(data + local + 28);
        if (start > size || comp > size - start) {
            gguf_error_set(err, "entry %s: data runs past the end of the file", e->name);
            goto fail;
        }
        if (method == 0 && comp != usize) {
            gguf_error_set(err, "entry %s: stored with %" PRIu64 " bytes but %" PRIu64 " declared",
                           e->name, comp, usize);
            goto fail;
        }
        e->comp = data + start;
        p += 46 + name_len + extra_len + comment_len;
    }
    return 0;
fail:
    zip_free(z);
    return -1;
}

void zip_free(zip_archive *z)
{
    for (size_t i = 0; i < z->n; i++) {
        free(z->entries[i].name);
        free(z->entries[i].inflated);
    }
    free(z->entries);
    memset(z, 0, sizeof *z);
}

zip_entry *zip_find(zip_archive *z, const char *name)
{
    for (size_t i = 0; i < z->n; i++)
        if (!strcmp(z->entries[i].name, name))
            return &z->entries[i];
    return NULL;
}

/* zlib's crc32 takes a uInt length: feed large entries in pieces. */
static uint32_t crc_of(const uint8_t *p, uint64_t n)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    while (n > 0) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = crc32(crc, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return (uint32_t)crc;
}

int zip_recheck(const zip_archive *z, gguf_error *err)
{
    for (size_t i = 0; i < z->n; i++) {
        const zip_entry *e = &z->entries[i];
        if (e->inflated && e->checked && crc_of(e->inflated, e->size) != e->crc)
            return gguf_error_set(err, "entry %s changed in memory while converting (CRC "
                                  "mismatch on re-check): output not written", e->name);
    }
    return 0;
}

const uint8_t *zip_data(zip_entry *e, gguf_error *err)
{
    const uint8_t *out = e->method == 0 ? e->comp : e->inflated;
    if (e->method == 8 && !e->inflated) {
        /* deflate expands at most ~1032:1: a larger declared size is a lie,
         * refused before allocating it */
        if (e->size > (1ull << 32) || e->comp_size > UINT32_MAX ||
            e->size > e->comp_size * 1032 + 1024) {
            gguf_error_set(err, "entry %s: implausible size %" PRIu64 " for %" PRIu64
                           " deflated bytes", e->name, e->size, e->comp_size);
            return NULL;
        }
        uint8_t *buf = malloc(e->size ? (size_t)e->size : 1);
        if (!buf) {
            gguf_error_set(err, "out of memory");
            return NULL;
        }
        z_stream s;
        memset(&s, 0, sizeof s);
        if (inflateInit2(&s, -MAX_WBITS) != Z_OK) {
            free(buf);
            gguf_error_set(err, "out of memory");
            return NULL;
        }
        s.next_in = (Bytef *)e->comp;
        s.avail_in = (uInt)e->comp_size;
        s.next_out = buf;
        s.avail_out = (uInt)e->size;
        int rc = inflate(&s, Z_FINISH);
        uint64_t got = s.total_out;
        inflateEnd(&s);
        if (rc != Z_STREAM_END || got != e->size) {
            free(buf);
            gguf_error_set(err, "entry %s: corrupt deflate data", e->name);
            return NULL;
        }
        e->inflated = buf;
        out = buf;
    }
    if (!e->checked) {
        if (crc_of(out, e->size) != e->crc) {
            gguf_error_set(err, "entry %s: CRC mismatch (damaged archive)", e->name);
            return NULL;
        }
        e->checked = 1;
    }
    return out;
}
