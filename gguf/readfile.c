/*
 * readfile.c — read a small file whole, never past a limit (readfile.h).
 */
#include "readfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int gguf_read_file(const char *path, size_t limit, uint8_t **buf, size_t *len, gguf_error *err)
{
    *buf = NULL;
    *len = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return gguf_error_setc(err, GGUF_ERR_IO, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(fp);
        return gguf_error_setc(err, GGUF_ERR_IO, "is a directory");
    }
    size_t cap = 0, n = 0;
    uint8_t *b = NULL;
    int rc = 0;
    for (;;) {
        if (n > limit) {
            rc = gguf_error_setc(err, GGUF_ERR_LIMIT, "larger than %zu MiB (the limit for this kind of file)",
                                limit >> 20);
            break;
        }
        if (n + 1 >= cap) { /* room for one more byte and the NUL */
            size_t want = cap ? 2 * cap : 1 << 16;
            want = want > limit + 2 ? limit + 2 : want; /* limit + 1 bytes show it is too large */
            uint8_t *nb = realloc(b, want);
            if (!nb) {
                rc = gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
                break;
            }
            b = nb;
            cap = want;
        }
        size_t got = fread(b + n, 1, cap - 1 - n, fp);
        n += got;
        if (got == 0) {
            if (ferror(fp))
                rc = gguf_error_setc(err, GGUF_ERR_IO, "read error: %s", strerror(errno));
            break;
        }
    }
    fclose(fp);
    if (rc) {
        free(b);
        return -1;
    }
    if (!b && !(b = malloc(1)))
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    b[n] = 0;
    *buf = b;
    *len = n;
    return 0;
}
