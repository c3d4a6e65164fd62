/* progress.h: a progress line on stderr for long loops (prepare, translate): items done, their
 * rate and the time left. On a terminal one
 * line is rewritten in place at most twice a second; into a log file a plain line is written at
 * most every 30 seconds, so logs stay readable. */
#ifndef NMT_PROGRESS_H
#define NMT_PROGRESS_H

#include <stdbool.h>

typedef struct Progress {
    const char *label; // e.g. "prepare: encode train"
    const char *unit;  // e.g. "pairs"
    double start, last;
    bool tty;
} Progress;

Progress progress_start(const char *label, const char *unit);
/* Reports `done` items (of `total`, or 0 when unknown) and their rate if the interval has
 * passed; with a total, also the time left at that rate ("ETA"). */
void progress_tick(Progress *p, long done, long total);
/* The same for work whose total count is unknown but whose done fraction (0..1) is, e.g. the
 * bytes read of a file: the ETA comes from the fraction. */
void progress_tick_fraction(Progress *p, long done, double fraction);
/* Clears the terminal line. */
void progress_end(const Progress *p);

#endif
