/* progress.c: the stderr progress line (progress.h). */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "timer.h"

Progress progress_start(const char *label, const char *unit) {
    double now = now_seconds();
    return (Progress){label, unit, now, now, isatty(STDERR_FILENO) != 0};
}

void progress_tick(Progress *p, long done, long total) {
    double now = now_seconds(), interval = p->tty ? 0.5 : 30.0;
    if (now - p->last < interval) return;
    p->last = now;
    fprintf(stderr, "%s%s: %ld", p->tty ? "\r" : "", p->label, done);
    if (total > 0) fprintf(stderr, "/%ld", total);
    fprintf(stderr, " %s (%.0f %s/s)%s", p->unit, done / (now - p->start), p->unit,
            p->tty ? "\033[K" : "\n");
}

void progress_end(const Progress *p) {
    if (p->tty && p->last > p->start) fprintf(stderr, "\r\033[K");
}
