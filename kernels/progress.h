/* progress.h: a progress line on stderr for long loops (prepare, translate). On a terminal one
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
/* Reports `done` items (of `total`, or 0 when unknown) if the interval has passed. */
void progress_tick(Progress *p, long done, long total);
/* Clears the terminal line. */
void progress_end(const Progress *p);

#endif
