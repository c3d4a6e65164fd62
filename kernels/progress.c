/* progress.c: the stderr progress line (progress.h). */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "timer.h"

Progress progress_start(const char *label, const char *unit) {
    double now = now_seconds();
    return (Progress){label, unit, now, now, isatty(STDERR_FILENO) != 0};
}

/* Prints the line if the interval has passed; fraction < 0: no ETA. */
static void report(Progress *p, long done, long total, double fraction) {
    double now = now_seconds(), interval = p->tty ? 0.5 : 30.0;
    if (now - p->last < interval) return;
    p->last = now;
    double elapsed = now - p->start;
    fprintf(stderr, "%s%s: %ld", p->tty ? "\r" : "", p->label, done);
    if (total > 0) fprintf(stderr, "/%ld", total);
    fprintf(stderr, " %s (%.0f %s/s", p->unit, done / elapsed, p->unit);
    if (fraction > 0 && fraction <= 1) {
        long left = (long)(elapsed * (1 - fraction) / fraction + 0.5);
        fprintf(stderr, ", %.0f%%, ETA %ld:%02ld:%02ld", 100 * fraction, left / 3600,
                left / 60 % 60, left % 60);
    }
    fprintf(stderr, ")%s", p->tty ? "\033[K" : "\n");
}

void progress_tick(Progress *p, long done, long total) {
    report(p, done, total, total > 0 ? (double)done / (double)total : -1);
}

void progress_tick_fraction(Progress *p, long done, double fraction) {
    report(p, done, 0, fraction);
}

void progress_end(const Progress *p) {
    if (p->tty && p->last > p->start) fprintf(stderr, "\r\033[K");
}
