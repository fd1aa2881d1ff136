/*
 * outfile.h — output files that are never left half-written.
 *
 * gguf_outfile_open() creates a unique temporary file in the destination's
 * directory (the directory of the file a link leads to, below);
 * gguf_outfile_commit() flushes, fsyncs and renames it over the destination
 * (then fsyncs the directory); gguf_outfile_discard() removes it.
 * Every tool writes its outputs through this.
 *
 * A destination that is a symbolic link is followed to the end of its
 * chain (relative links against their own directory): the temporary file
 * is made beside the file the chain ends at and renamed over it, so the
 * link stays a link and its target is what is replaced (a Hugging Face
 * snapshot's link into blobs/). A dangling link is written through: its
 * target is created, as open(2) would, if that directory exists.
 *
 * A destination that exists and is not a regular file (a device, a FIFO, a
 * socket, a directory) is refused: renaming over /dev/null as root would
 * replace the device. One that is a regular file gives the output its mode,
 * and its owner and group where the process may set them (root may; others
 * may keep a group they belong to). Whatever cannot be kept never makes
 * the output more open than the file was: without the owner, the setuid
 * bit goes; without the group, the setgid bit and every group permission
 * "others" did not have. Hard links to the replaced file are not followed:
 * they keep the old contents. A new file gets 0666 & ~umask.
 *
 * Open temporary files are remembered so that gguf_outfile_remove_temps()
 * can delete them from a signal handler.
 */
#ifndef GGUF_OUTFILE_H
#define GGUF_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ggufkit/gguf.h>

typedef struct gguf_outfile {
    FILE *fp;        /* buffered stream on the temporary file */
    char *path;      /* destination as given (named in messages) */
    char *target;    /* what it resolves to, symlinks followed: renamed over */
    char *tmp_path;  /* temporary file, in target's directory */
    int   slot;      /* index in the table of live temporary files, or -1 */
    int64_t kicked;  /* bytes [0, kicked) have been handed to writeback */
    int64_t waited;  /* bytes [0, waited) have reached the disk */
    unsigned mode;   /* the replaced file's mode, kept at commit ... */
    bool keep_mode;  /* ... when there was one */
} gguf_outfile;

/* Creates the temporary file for destination `path`. 0 or -1 with err. */
int gguf_outfile_open(gguf_outfile *o, const char *path, gguf_error *err);

/* Writes n bytes; -1 with err on failure (disk full, ...). */
int gguf_outfile_write(gguf_outfile *o, const void *data, size_t n, gguf_error *err);

/* Appends n bytes of in_fd from offset off: in the kernel where it can
 * (copy_file_range, which may share the filesystem's extents), else read
 * and written. 0, or -1 with err. */
int gguf_outfile_copy_fd(gguf_outfile *o, int in_fd, uint64_t off, uint64_t n, gguf_error *err);

/* Flushes and fsyncs the temporary file, keeping it open for commit. */
int gguf_outfile_sync(gguf_outfile *o, gguf_error *err);

/* Syncs (if not yet), closes and renames into place. 0 or -1 with err; on
 * failure the temporary file is removed. */
int gguf_outfile_commit(gguf_outfile *o, gguf_error *err);

/* Closes and removes the temporary file; safe to call twice. */
void gguf_outfile_discard(gguf_outfile *o);

/* What st_mode names: "a regular file", "a directory", "a character
 * device", "a block device", "a FIFO", "a socket". */
const char *gguf_outfile_kind(unsigned mode);

/* Unlinks every temporary file still open in this process. Only
 * async-signal-safe calls: for a handler of SIGINT/SIGTERM that then ends
 * the process (common/signals.c). */
void gguf_outfile_remove_temps(void);

#endif
