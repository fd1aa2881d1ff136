/*
 * outfile.c — temp file + fsync + rename, so outputs appear whole or not at all.
 */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir_of(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return NULL;
    char *d = strdup(dirname(copy));
    free(copy);
    return d;
}

int outfile_open(outfile *o, const char *path, gguf_error *err)
{
    memset(o, 0, sizeof *o);
    char *dir = dir_of(path), *copy = strdup(path);
    if (!dir || !copy) {
        free(dir);
        free(copy);
        return gguf_error_set(err, "out of memory");
    }
    const char *base = basename(copy);
    size_t n = strlen(dir) + strlen(base) + 32;
    o->tmp_path = malloc(n);
    o->path = strdup(path);
    int fd = -1;
    if (o->tmp_path && o->path) {
        snprintf(o->tmp_path, n, "%s/.%s.tmp.XXXXXX", dir, base);
        fd = mkstemp(o->tmp_path);
    }
    free(dir);
    free(copy);
    if (!o->tmp_path || !o->path) {
        outfile_discard(o);
        return gguf_error_set(err, "out of memory");
    }
    if (fd < 0) {
        int e = errno;
        free(o->tmp_path);
        o->tmp_path = NULL;
        outfile_discard(o);
        return gguf_error_set(err, "cannot create a temporary file next to %s: %s", path, strerror(e));
    }
    /* mkstemp makes 0600; give the file the mode open(2) would have. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        close(fd);
        outfile_discard(o);
        return gguf_error_set(err, "cannot open temporary file: %s", strerror(errno));
    }
    return 0;
}

int outfile_write(outfile *o, const void *data, size_t n, gguf_error *err)
{
    if (n && fwrite(data, 1, n, o->fp) != n)
        return gguf_error_set(err, "write to %s failed: %s", o->path, strerror(errno));
    return 0;
}

int outfile_sync(outfile *o, gguf_error *err)
{
    if (fflush(o->fp) != 0 || fsync(fileno(o->fp)) != 0)
        return gguf_error_set(err, "write to %s failed: %s", o->path, strerror(errno));
    return 0;
}

int outfile_commit(outfile *o, gguf_error *err)
{
    if (outfile_sync(o, err))
        goto fail;
    FILE *fp = o->fp;
    o->fp = NULL;
    if (fclose(fp) != 0) {
        gguf_error_set(err, "write to %s failed: %s", o->path, strerror(errno));
        goto fail;
    }
    if (rename(o->tmp_path, o->path) != 0) {
        gguf_error_set(err, "cannot rename into %s: %s", o->path, strerror(errno));
        goto fail;
    }
    char *dir = dir_of(o->path);
    int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY) : -1;
    if (dfd >= 0) {
        fsync(dfd); /* best effort: makes the rename durable */
        close(dfd);
    }
    free(dir);
    free(o->tmp_path);
    o->tmp_path = NULL;
    outfile_discard(o);
    return 0;
fail:
    outfile_discard(o);
    return -1;
}

void outfile_discard(outfile *o)
{
    if (o->fp) {
        fclose(o->fp);
        o->fp = NULL;
    }
    if (o->tmp_path) {
        unlink(o->tmp_path);
        free(o->tmp_path);
        o->tmp_path = NULL;
    }
    free(o->path);
    o->path = NULL;
}
