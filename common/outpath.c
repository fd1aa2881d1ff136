/*
 * outpath.c — refuse outputs that would replace a device, a directory or
 * one of the run's own inputs (see outpath.h).
 */
#include "outpath.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "outfile.h"

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* True when a regular file directly inside directory `dir` is `target`;
 * its name goes into `hit`. */
static bool dir_holds(const char *dir, const struct stat *target, char *hit, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[4096];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        if (stat(path, &st) == 0 && same_file(&st, target)) {
            snprintf(hit, cap, "%s", path);
            found = true;
        }
    }
    closedir(d);
    return found;
}

int outpath_check(const char *out, const char *const *inputs, size_t n, gguf_error *err)
{
    struct stat os;
    if (!out || !*out)
        return gguf_error_set(err, "empty output path");
    if (stat(out, &os) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0; /* a new file: nothing to protect (the directory is checked on create) */
        return gguf_error_set(err, "cannot check the output: %s", strerror(errno));
    }
    if (!S_ISREG(os.st_mode))
        return gguf_error_set(err, "is %s, not a regular file: refusing to write over it",
                              gguf_outfile_kind(os.st_mode));
    for (size_t i = 0; i < n; i++) {
        struct stat is;
        if (!inputs[i] || stat(inputs[i], &is) != 0)
            continue;
        char hit[4096];
        if (same_file(&is, &os))
            return strcmp(inputs[i], out) ? gguf_error_set(err, "is the input %s: refusing to "
                                                           "overwrite it", inputs[i])
                                          : gguf_error_set(err, "is an input of this run: refusing "
                                                           "to overwrite it");
        if (S_ISDIR(is.st_mode) && dir_holds(inputs[i], &os, hit, sizeof hit))
            return gguf_error_set(err, "is the input %s: refusing to overwrite it", hit);
    }
    return 0;
}
