/* timer.h: the monotonic clock used by logs, benchmarks and the training time limit. */
#ifndef NMT_TIMER_H
#define NMT_TIMER_H

#include <time.h>

static inline double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
