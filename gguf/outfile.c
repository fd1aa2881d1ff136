/*
 * outfile.c — temp file + fsync + rename, so outputs appear whole or not at all.
 */
#define _GNU_SOURCE /* copy_file_range */
#include "outfile.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Live temporary files, for gguf_outfile_remove_temps(). A slot holds the path
 * only while the file exists under that name; the signal handler reads the
 * table without locks, so a slot is cleared before its path is freed. */
#define MAX_TEMPS 1024
static char *volatile temps[MAX_TEMPS];

static int temp_register(char *path)
{
    for (int i = 0; i < MAX_TEMPS; i++)
        if (__sync_bool_compare_and_swap(&temps[i], NULL, path))
            return i;
    return -1; /* table full: the file is still removed on every normal exit path */
}

static void temp_forget(gguf_outfile *o)
{
    if (o->slot >= 0) {
        __sync_bool_compare_and_swap(&temps[o->slot], o->tmp_path, NULL);
        o->slot = -1;
    }
}

void gguf_outfile_remove_temps(void)
{
    for (int i = 0; i < MAX_TEMPS; i++) {
        char *p = temps[i];
        if (p)
            unlink(p);
    }
}

const char *gguf_outfile_kind(unsigned mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    default: return "not a regular file";
    }
}

static char *dir_of(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return NULL;
    char *d = strdup(dirname(copy));
    free(copy);
    return d;
}

int gguf_outfile_open(gguf_outfile *o, const char *path, gguf_error *err)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return gguf_error_setc(err, GGUF_ERR_IO, "%s is %s, not a regular file: refusing to write over it", path,
                              gguf_outfile_kind(st.st_mode));
    char *dir = dir_of(path), *copy = strdup(path);
    if (!dir || !copy) {
        free(dir);
        free(copy);
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    }
    const char *base = basename(copy);
    size_t n = strlen(dir) + strlen(base) + 32;
    o->tmp_path = malloc(n);
    o->path = strdup(path);
    int fd = -1;
    if (o->tmp_path && o->path) {
        snprintf(o->tmp_path, n, "%s/.%s.tmp.XXXXXX", dir, base);
        /* registered before it exists: mkstemp writes each name it tries
         * into the buffer before creating that file, so a signal at any
         * moment finds the file's name there (one that came between
         * creating and registering, as a loaded machine's scheduler can
         * make it, left the file behind: hostile.sh saw it) */
        o->slot = temp_register(o->tmp_path);
        fd = mkstemp(o->tmp_path);
        if (fd < 0)
            temp_forget(o);
    }
    free(dir);
    free(copy);
    if (!o->tmp_path || !o->path) {
        gguf_outfile_discard(o);
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    }
    if (fd < 0) {
        int e = errno;
        free(o->tmp_path);
        o->tmp_path = NULL;
        gguf_outfile_discard(o);
        return gguf_error_setc(err, GGUF_ERR_IO, "cannot create a temporary file next to %s: %s", path, strerror(e));
    }
    /* mkstemp makes 0600; give the file the mode open(2) would have. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        close(fd);
        gguf_outfile_discard(o);
        return gguf_error_setc(err, GGUF_ERR_IO, "cannot open temporary file: %s", strerror(errno));
    }
    return 0;
}

/* Writeback as the file grows: every KICK bytes are handed to the disk at
 * once (sync_file_range, asynchronous), and the writer waits for those
 * more than AHEAD behind the end, so the disk works while the data is
 * produced, dirty memory stays bounded and the final fsync finds little
 * left to do (it used to wait for the whole file at once). Advice only:
 * errors are left to fsync. */
#define KICK  ((int64_t)16 << 20)
#define AHEAD ((int64_t)64 << 20)

static void writeback(gguf_outfile *o, int fd, int64_t end)
{
#ifdef SYNC_FILE_RANGE_WRITE
    if (end - o->kicked < KICK)
        return;
    (void)sync_file_range(fd, o->kicked, end - o->kicked, SYNC_FILE_RANGE_WRITE);
    o->kicked = end;
    if (end - o->waited > 2 * AHEAD) {
        const int64_t to = end - AHEAD;
        (void)sync_file_range(fd, o->waited, to - o->waited,
                              SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                  SYNC_FILE_RANGE_WAIT_AFTER);
        o->waited = to;
    }
#else
    (void)o, (void)fd, (void)end;
#endif
}

int gguf_outfile_write(gguf_outfile *o, const void *data, size_t n, gguf_error *err)
{
    if (n && fwrite(data, 1, n, o->fp) != n)
        return gguf_error_setc(err, GGUF_ERR_IO, "write to %s failed: %s", o->path, strerror(errno));
    const off_t end = ftello(o->fp);
    if (end >= 0 && end - o->kicked >= KICK) {
        if (fflush(o->fp) != 0)
            return gguf_error_setc(err, GGUF_ERR_IO, "write to %s failed: %s", o->path, strerror(errno));
        writeback(o, fileno(o->fp), end);
    }
    return 0;
}

int gguf_outfile_copy_fd(gguf_outfile *o, int in_fd, uint64_t off, uint64_t n, gguf_error *err)
{
    if (fflush(o->fp) != 0)
        return gguf_error_setc(err, GGUF_ERR_IO, "write to %s failed: %s", o->path, strerror(errno));
    const int out_fd = fileno(o->fp);
    loff_t from = (loff_t)off;
    bool in_kernel = true;
    uint8_t *buf = NULL;
    enum { BUF = 1 << 20 };
    int rc = 0;
    while (n > 0) {
        const size_t want = n > (size_t)AHEAD ? (size_t)AHEAD : (size_t)n;
        ssize_t k;
        if (in_kernel) {
            k = copy_file_range(in_fd, &from, out_fd, NULL, want, 0);
            if (k < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
                          errno == EOPNOTSUPP || errno == EPERM)) {
                in_kernel = false; /* another filesystem, an old kernel: copy by hand */
                continue;
            }
        } else {
            if (!buf && !(buf = malloc(BUF))) {
                rc = gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
                break;
            }
            k = pread(in_fd, buf, want < BUF ? want : BUF, (off_t)from);
            for (ssize_t done = 0; k > 0 && done < k;) {
                ssize_t w = write(out_fd, buf + done, (size_t)(k - done));
                if (w < 0 && errno == EINTR)
                    continue;
                if (w < 0) {
                    rc = gguf_error_setc(err, GGUF_ERR_IO, "write to %s failed: %s", o->path,
                                         strerror(errno));
                    break;
                }
                done += w;
            }
            if (rc)
                break;
            if (k > 0)
                from += k;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            rc = k < 0 ? gguf_error_setc(err, GGUF_ERR_IO, "copy to %s failed: %s", o->path, strerror(errno))
                       : gguf_error_setc(err, GGUF_ERR_IO, "copy to %s: the input ended early", o->path);
            break;
        }
        n -= (uint64_t)k;
        const off_t end = lseek(out_fd, 0, SEEK_CUR);
        if (end >= 0)
            writeback(o, out_fd, end);
    }
    free(buf);
    return rc;
}

int gguf_outfile_sync(gguf_outfile *o, gguf_error *err)
{
    if (fflush(o->fp) != 0 || fsync(fileno(o->fp)) != 0)
        return gguf_error_setc(err, GGUF_ERR_IO, "write to %s failed: %s", o->path, strerror(errno));
    return 0;
}

int gguf_outfile_commit(gguf_outfile *o, gguf_error *err)
{
    if (gguf_outfile_sync(o, err))
        goto fail;
    FILE *fp = o->fp;
    o->fp = NULL;
    if (fclose(fp) != 0) {
        gguf_error_setc(err, GGUF_ERR_IO, "write to %s failed: %s", o->path, strerror(errno));
        goto fail;
    }
    struct stat st;
    if (stat(o->path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* it became one while we wrote */
        gguf_error_setc(err, GGUF_ERR_IO, "%s is %s, not a regular file: refusing to write over it", o->path,
                       gguf_outfile_kind(st.st_mode));
        goto fail;
    }
    if (rename(o->tmp_path, o->path) != 0) {
        gguf_error_setc(err, GGUF_ERR_IO, "cannot rename into %s: %s", o->path, strerror(errno));
        goto fail;
    }
    char *dir = dir_of(o->path);
    int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY) : -1;
    if (dfd >= 0) {
        fsync(dfd); /* best effort: makes the rename durable */
        close(dfd);
    }
    free(dir);
    temp_forget(o);
    free(o->tmp_path);
    o->tmp_path = NULL;
    gguf_outfile_discard(o);
    return 0;
fail:
    gguf_outfile_discard(o);
    return -1;
}

void gguf_outfile_discard(gguf_outfile *o)
{
    if (o->fp) {
        fclose(o->fp);
        o->fp = NULL;
    }
    if (o->tmp_path) {
        unlink(o->tmp_path);
        temp_forget(o);
        free(o->tmp_path);
        o->tmp_path = NULL;
    }
    free(o->path);
    o->path = NULL;
}
