/*
 * hash.c — `gguf-inspect --hash` (see hash.h).
 *
 * Layout: a table "tensors" (sha256, name); a table "arrays" (sha256, key)
 * with the hash of each metadata array's element bytes exactly as stored
 * (strings as u64 length + bytes: the fixtures' manifests hash them so);
 * then the data section's hash: one field "data_sha256" for a single file,
 * or a table of one row per shard for a split model (each shard has its
 * own data section).
 */
#include "hash.h"

#include <stdio.h>

#include "sha256.h"

/* sha256_hex() takes a size_t; a tensor or data section larger than that
 * is hashed in pieces. */
static void hash_bytes(const uint8_t *p, uint64_t n, char hex[65])
{
    sha256_ctx c;
    uint8_t digest[32];
    sha256_init(&c);
    while (n > 0) {
        size_t chunk = n > (SIZE_MAX >> 1) ? (SIZE_MAX >> 1) : (size_t)n;
        sha256_update(&c, p, chunk);
        p += chunk, n -= chunk;
    }
    sha256_final(&c, digest);
    sha256_to_hex(digest, hex);
}

static void tensors(emit *e, const gguf_file *f)
{
    static const emit_column cols[] = {
        { "sha256", NULL, 0 },
        { "name", NULL, 0 },
    };
    emit_table_begin(e, "tensors", NULL, cols, 2, EMIT_BARE);
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        char hex[65];
        hash_bytes(t->data, t->nbytes, hex);
        emit_value row[] = { ev_strn(hex, 64), ev_str(t->name) };
        emit_row(e, row);
    }
    emit_table_end(e);
}

static void arrays(emit *e, const gguf_file *f)
{
    static const emit_column cols[] = {
        { "sha256", NULL, 0 },
        { "key", NULL, 0 },
    };
    emit_table_begin(e, "arrays", NULL, cols, 2, EMIT_BARE);
    for (uint64_t i = 0; i < gguf_n_kv(f); i++) {
        const gguf_kv *kv = gguf_kv_at(f, i);
        if (kv->type != GGUF_VT_ARR)
            continue;
        sha256_ctx c;
        uint8_t digest[32];
        char hex[65];
        sha256_init(&c);
        if (kv->elem_type == GGUF_VT_STR) {
            for (uint64_t j = 0; j < kv->n; j++) {
                uint8_t len[8];
                for (int b = 0; b < 8; b++)
                    len[b] = (uint8_t)(kv->strs[j].len >> (8 * b));
                sha256_update(&c, len, 8);
                sha256_update(&c, kv->strs[j].ptr, (size_t)kv->strs[j].len);
            }
        } else if (kv->n > 0) {
            /* nested arrays have no fixed element size: hashed as empty */
            uint32_t size = gguf_vtype_size(kv->elem_type);
            sha256_update(&c, kv->data, (size_t)(kv->n * size));
        }
        sha256_final(&c, digest);
        sha256_to_hex(digest, hex);
        emit_value row[] = { ev_strn(hex, 64), ev_str(kv->key) };
        emit_row(e, row);
    }
    emit_table_end(e);
}

static void data_sections(emit *e, const gguf_file *f)
{
    uint32_t n = gguf_n_shards(f);
    char hex[65], label[64];
    uint64_t size = 0;
    if (n == 1) {
        const uint8_t *p = gguf_data_section(f, 0, &size);
        hash_bytes(p, size, hex);
        emit_map_begin(e, NULL, NULL, EMIT_BARE);
        emit_field(e, "data_sha256", "(data section)", ev_strn(hex, 64));
        emit_map_end(e);
        return;
    }
    static const emit_column cols[] = {
        { "sha256", NULL, 0 },
        { "section", NULL, 0 },
        { "path", NULL, 0 },
    };
    emit_table_begin(e, "data_sha256", NULL, cols, 3, EMIT_BARE);
    for (uint32_t s = 0; s < n; s++) {
        const uint8_t *p = gguf_data_section(f, s, &size);
        hash_bytes(p, size, hex);
        snprintf(label, sizeof label, "(data section, shard %u of %u)", s + 1, n);
        emit_value row[] = { ev_strn(hex, 64), ev_str(label), ev_str(gguf_shard_path(f, s)) };
        emit_row(e, row);
    }
    emit_table_end(e);
}

int hash_write(emit *e, const gguf_file *f)
{
    tensors(e, f);
    arrays(e, f);
    data_sections(e, f);
    return 0;
}
