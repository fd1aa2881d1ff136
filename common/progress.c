/*
 * progress.c — terminal progress bar and thread-count default.
 */
#include "progress.h"

#include <string.h>
#include <unistd.h>

void progress_start(progress *p, const char *label, uint64_t total, bool enabled)
{
    memset(p, 0, sizeof *p);
    p->out = enabled && isatty(STDERR_FILENO) ? stderr : NULL;
    p->total = total ? total : 1;
    p->last_pct = -1;
    snprintf(p->label, sizeof p->label, "%s", label);
    progress_add(p, 0);
}

void progress_add(progress *p, uint64_t n)
{
    p->done += n;
    if (!p->out)
        return;
    int pct = (int)(p->done * 100 / p->total);
    if (pct > 100)
        pct = 100;
    if (pct == p->last_pct)
        return;
    p->last_pct = pct;
    char bar[41];
    int fill = pct * 40 / 100;
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, '.', (size_t)(40 - fill));
    bar[40] = '\0';
    fprintf(p->out, "\r%s [%s] %3d%%", p->label, bar, pct);
    fflush(p->out);
}

void progress_end(progress *p)
{
    if (p->out) {
        fprintf(p->out, "\r%*s\r", (int)strlen(p->label) + 48, "");
        fflush(p->out);
    }
    p->out = NULL;
}

