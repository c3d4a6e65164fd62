/* rss.h: this process's resident memory as Linux reports it in /proc/self/status, for the logs of
 * long stages and the benchmarks: the current and the peak (high-water mark) resident set. */
#ifndef NMT_RSS_H
#define NMT_RSS_H

#include <stdio.h>
#include <string.h>

/* The value of a "Vm...:" line of /proc/self/status in MB, or 0 where there is none. */
static inline double rss_status_mb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    double kb = 0;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, n) && line[n] == ':' && sscanf(line + n + 1, "%lf", &kb) == 1) break;
    fclose(f);
    return kb / 1024.0;
}

static inline double rss_peak_mb(void) { return rss_status_mb("VmHWM"); }
static inline double rss_now_mb(void) { return rss_status_mb("VmRSS"); }

#endif
