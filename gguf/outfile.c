/*
 * outfile.c — temp file + fsync + rename, so outputs appear whole or not at all.
 */
#define _GNU_SOURCE /* copy_file_range */
#include "outfile.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
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

/* "DIR/NAME" with DIR the directory part of `of`; NAME alone when `of`
 * has none. */
static char *beside(const char *of, const char *name)
{
    if (!strchr(of, '/'))
        return strdup(name); /* no "./" added to what messages show */
    char *dir = dir_of(of);
    if (!dir)
        return NULL;
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    free(dir);
    return p;
}

/* The file a write to `path` lands on: symbolic links followed to the end
 * of the chain, a relative one read against the directory of the link that
 * holds it (joined, not simplified, so that ".." means what the kernel
 * means by it). The last name need not exist: a dangling link gives the
 * path it names. NULL with errno set (ELOOP, ENAMETOOLONG, ENOMEM, or
 * readlink's). */
static char *follow_links(const char *path)
{
    enum { MAX_HOPS = 40 }; /* the kernel's own limit */
    char *cur = strdup(path);
    for (int hops = 0; cur; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return cur; /* the end of the chain (or a name that cannot be looked at: open says why) */
        char buf[PATH_MAX];
        ssize_t k = hops < MAX_HOPS ? readlink(cur, buf, sizeof buf) : -1;
        int e = hops < MAX_HOPS ? errno : ELOOP;
        if (k >= (ssize_t)sizeof buf)
            k = -1, e = ENAMETOOLONG;
        if (k <= 0) {
            free(cur);
            errno = k == 0 ? ENOENT : e;
            return NULL;
        }
        buf[k] = '\0';
        char *next = buf[0] == '/' ? strdup(buf) : beside(cur, buf);
        free(cur);
        cur = next;
        if (cur && strlen(cur) >= PATH_MAX) {
            free(cur);
            errno = ENAMETOOLONG;
            return NULL;
        }
    }
    errno = ENOMEM;
    return NULL;
}

/* Gives the temporary file `fd` what the file it replaces had: its owner
 * and group where this process may set them, and its mode. Returns the
 * mode the output is to have: the old one, less what would now reach
 * other people — setuid when the owner could not be kept; setgid and any
 * group permission beyond what "others" had when the group could not. */
static mode_t keep_owner(int fd, const struct stat *old)
{
    struct stat now;
    bool uid_kept = true, gid_kept = true;
    if (fstat(fd, &now) == 0 && (now.st_uid != old->st_uid || now.st_gid != old->st_gid)) {
        if (fchown(fd, old->st_uid, old->st_gid) != 0) {
            /* not root: the owner stays ours; the group may still be one of ours */
            uid_kept = now.st_uid == old->st_uid;
            gid_kept = now.st_gid == old->st_gid || fchown(fd, (uid_t)-1, old->st_gid) == 0;
        }
    }
    mode_t m = old->st_mode & 07777;
    if (!uid_kept)
        m &= ~(mode_t)S_ISUID;
    if (!gid_kept)
        m = (m & ~(mode_t)(S_ISGID | S_IRWXG)) | (m & S_IRWXG & (mode_t)((m & S_IRWXO) << 3));
    return m;
}

int gguf_outfile_open(gguf_outfile *o, const char *path, gguf_error *err)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
    char *target = follow_links(path);
    if (!target) {
        if (errno == ENOMEM)
            return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        return gguf_error_setc(err, GGUF_ERR_IO, "%s: cannot follow the symbolic link: %s", path, strerror(errno));
    }
    struct stat st;
    const bool replaces = stat(target, &st) == 0;
    if (replaces && !S_ISREG(st.st_mode)) {
        free(target);
        return gguf_error_setc(err, GGUF_ERR_IO, "%s is %s, not a regular file: refusing to write over it", path,
                              gguf_outfile_kind(st.st_mode));
    }
    char *dir = dir_of(target), *copy = strdup(target);
    o->target = target;
    if (!dir || !copy) {
        free(dir);
        free(copy);
        gguf_outfile_discard(o);
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
        if (strcmp(o->target, path))
            gguf_error_setc(err, GGUF_ERR_IO, "cannot create a temporary file next to %s (where the link %s "
                            "points): %s", o->target, path, strerror(e));
        else
            gguf_error_setc(err, GGUF_ERR_IO, "cannot create a temporary file next to %s: %s", path,
                            strerror(e));
        gguf_outfile_discard(o);
        return -1;
    }
    if (replaces) {
        /* the replaced file's owner, group and mode (keep_owner); the
         * owner may read and write while the file is written (a tool reads
         * its output back), the exact mode comes at commit */
        o->mode = keep_owner(fd, &st);
        o->keep_mode = true;
        fchmod(fd, o->mode | S_IRUSR | S_IWUSR);
    } else {
        /* mkstemp makes 0600; give the file the mode open(2) would have. */
        mode_t mask = umask(0);
        umask(mask);
        fchmod(fd, 0666 & ~mask);
    }
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
    if (o->keep_mode && fchmod(fileno(o->fp), o->mode) != 0) {
        gguf_error_setc(err, GGUF_ERR_IO, "cannot set the mode of %s: %s", o->path, strerror(errno));
        goto fail;
    }
    if (gguf_outfile_sync(o, err))
        goto fail;
    FILE *fp = o->fp;
    o->fp = NULL;
    if (fclose(fp) != 0) {
        gguf_error_setc(err, GGUF_ERR_IO, "write to %s failed: %s", o->path, strerror(errno));
        goto fail;
    }
    struct stat st;
    if (stat(o->target, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* it became one while we wrote */
        gguf_error_setc(err, GGUF_ERR_IO, "%s is %s, not a regular file: refusing to write over it", o->path,
                       gguf_outfile_kind(st.st_mode));
        goto fail;
    }
    if (rename(o->tmp_path, o->target) != 0) {
        gguf_error_setc(err, GGUF_ERR_IO, "cannot rename into %s: %s", o->target, strerror(errno));
        goto fail;
    }
    char *dir = dir_of(o->target);
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
    free(o->target);
    o->target = NULL;
}
