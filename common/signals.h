/*
 * signals.h — an interrupted tool leaves no temporary file behind.
 *
 * Every output is written to a hidden temporary file next to it
 * (".NAME.tmp.XXXXXX", see gguf/outfile.h) and renamed into place only when
 * complete. On SIGINT, SIGTERM or SIGHUP the handler installed here removes
 * every such file the process has open, then lets the signal end the
 * process as it would have (the shell reports 130, 143 or 129). SIGKILL
 * cannot be caught: after `kill -9` (or a power cut) a file matching
 * .NAME.tmp.XXXXXX may remain beside the output; it is never the output
 * itself and can be deleted.
 */
#ifndef COMMON_SIGNALS_H
#define COMMON_SIGNALS_H

/* Installs the handler for SIGINT, SIGTERM and SIGHUP. */
void cli_cleanup_on_signals(void);

#endif
