/*
 * signals.c — remove temporary outputs on SIGINT/SIGTERM/SIGHUP, then die
 * of the same signal; SIGXFSZ ignored, so a file-size limit is a write
 * error (see signals.h).
 */
#define _GNU_SOURCE
#include "signals.h"

#include <signal.h>
#include <string.h>

#include "outfile.h"

static void on_signal(int sig)
{
    gguf_outfile_remove_temps(); /* async-signal-safe: unlink only */
    signal(sig, SIG_DFL);
    raise(sig);
}

void cli_cleanup_on_signals(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaddset(&sa.sa_mask, sigs[i]);
    /* ulimit -f: write() then fails with EFBIG and the error path reports
     * it and removes the temporary file (the default action killed the
     * process silently and left the file) */
    signal(SIGXFSZ, SIG_IGN);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old;
        /* a signal ignored by the parent (nohup) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
}
