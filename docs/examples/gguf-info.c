/*
 * gguf-info.c — the example program of docs/libgguf.md: opens a GGUF file
 * with libgguf and prints its GGUF version, the library's version, the
 * architecture, the tensor count, and the first tensor's name, type, shape
 * and SHA-256.
 *
 *   cc -o gguf-info gguf-info.c $(pkg-config --cflags --libs libgguf)
 *   ./gguf-info model.gguf
 *
 * tests/e2e/install.sh builds this file against an installed libgguf and
 * checks its output.
 */
#include <ggufkit/gguf.h>

#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gguf-info FILE.gguf\n");
        return 2;
    }
    gguf_error err = { "", 0 };
    gguf_file *f = gguf_open(argv[1], 0, &err);
    if (!f) {
        /* one sentence naming the problem, and what kind of failure it is */
        fprintf(stderr, "gguf-info: %s: %s (%s)\n", argv[1], err.msg, gguf_errcode_name(err.code));
        return 1;
    }
    printf("GGUF version:    %" PRIu32 "\n", gguf_file_version(f));
    printf("libgguf version: %s\n", gguf_version());

    /* A key by name, in O(1); its string points into the file (no NUL). */
    gguf_str arch;
    const gguf_kv *kv = gguf_lookup_kv(f, "general.architecture");
    if (kv && gguf_kv_str(kv, &arch))
        printf("architecture:    %.*s\n", (int)arch.len, arch.ptr);
    else
        printf("architecture:    (none)\n");

    uint64_t n = gguf_n_tensors(f);
    printf("tensors:         %" PRIu64 "\n", n);
    if (n > 0) {
        const gguf_tensor *t = gguf_tensor_at(f, 0);
        printf("first tensor:    %s %s [", t->name, gguf_dtype_name(t->type));
        for (uint32_t d = 0; d < t->n_dims; d++)
            printf("%s%" PRId64, d ? ", " : "", t->ne[d]);
        printf("] %" PRIu64 " bytes\n", t->nbytes);

        /* Hash the tensor's bytes (they are in the read-only mapping) a
         * piece at a time, releasing each piece's pages once hashed so
         * that a large tensor never stays resident as a whole. */
        gguf_sha256_ctx c;
        uint8_t digest[32];
        char hex[65];
        gguf_sha256_init(&c);
        for (uint64_t at = 0; at < t->nbytes;) {
            uint64_t k = t->nbytes - at < (1u << 20) ? t->nbytes - at : (1u << 20);
            gguf_sha256_update(&c, t->data + at, (size_t)k);
            gguf_release_range(f, t->data + at, k);
            at += k;
        }
        gguf_sha256_final(&c, digest);
        gguf_sha256_to_hex(digest, hex);
        printf("sha256:          %s\n", hex);
    }
    gguf_close(f);
    return 0;
}
