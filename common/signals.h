/*
 * signals.h — an interrupted tool leaves no temporary file behind, and a
 * file-size limit is an error, not a silent death.
 *
 * Every output is written to a hidden temporary file next to it
 * (".NAME.tmp.XXXXXX", see gguf/outfile.h) and renamed into place only when
 * complete. On SIGINT, SIGTERM or SIGHUP the handler installed here removes
 * every such file the process has open, then lets the signal end the
 * process as it would have (the shell reports 130, 143 or 129). SIGKILL
 * cannot be caught: after `kill -9` (or a power cut) a file matching
 * .NAME.tmp.XXXXXX may remain beside the output; it is never the output
 * itself and can be deleted.
 *
 * A signal of the three that is ignored when the tool starts stays ignored,
 * as shells and nohup expect: a tool started with SIGINT ignored (a
 * background job of a non-interactive shell, `env --ignore-signal=INT`)
 * goes on through SIGINT and finishes its outputs whole.
 *
 * SIGXFSZ is ignored: past a file-size limit (`ulimit -f`) a write fails
 * with EFBIG instead of killing the process, so the tool reports "File too
 * large" naming the output, removes the temporary file and exits 1.
 */
#ifndef COMMON_SIGNALS_H
#define COMMON_SIGNALS_H

/* Installs the handler for SIGINT, SIGTERM and SIGHUP (each unless ignored
 * at entry) and ignores SIGXFSZ. Every tool calls it in main before it
 * writes anything. */
void cli_cleanup_on_signals(void);

#endif
