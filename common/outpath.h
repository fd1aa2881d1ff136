/*
 * outpath.h — the one check every tool makes before it writes a file.
 *
 * An output path is refused when it names something that is not ours to
 * replace: an existing target that is not a regular file (a device, a FIFO,
 * a socket, a directory), or any input of the same run — compared by
 * device and inode after following symlinks, so a symlink or hard link to
 * an input is caught too. A directory given as an input counts as every
 * file directly inside it (a checkpoint folder is read file by file).
 * An output that is a symbolic link is checked as the file its chain ends
 * at, which is where it is written (gguf/outfile.h); a dangling one as a
 * new file.
 *
 * The library's own gguf_outfile_open() refuses non-regular targets as well;
 * tools call this first so that the refusal comes before any work, with
 * the input named.
 */
#ifndef COMMON_OUTPATH_H
#define COMMON_OUTPATH_H

#include <stddef.h>

#include <ggufkit/gguf.h>

/* 0 when `out` may be written, or -1 with err saying why (the message does
 * not repeat `out`: callers print "TOOL: error: OUT: MESSAGE"). `inputs`
 * holds n paths (NULL entries are skipped); an input that does not exist
 * is ignored. */
int outpath_check(const char *out, const char *const *inputs, size_t n, gguf_error *err);

#endif
