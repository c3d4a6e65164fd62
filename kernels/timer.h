/* timer.h: the monotonic clock used by logs, benchmarks and the training time limit, and the
 * process's CPU time (all threads), which logs give beside wall time on a shared machine. */
#ifndef NMT_TIMER_H
#define NMT_TIMER_H

#include <time.h>

static inline double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
