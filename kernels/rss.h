/* rss.h: this process's resident memory as Linux reports it in /proc/self/status, for the logs of
 * long stages and the benchmarks: the current and the peak (high-water mark) resident set; and
 * giving pages back to the kernel. */
#ifndef NMT_RSS_H
#define NMT_RSS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* Takes the whole pages inside [p, p + bytes) out of the resident set (MADV_DONTNEED): private
 * anonymous pages read zero afterwards, pages of a mapped file are read again from the page cache.
 * False if the kernel refused. */
static inline bool rss_release(void *p, size_t bytes) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t begin = ((uintptr_t)p + page - 1) / page * page;
    uintptr_t end = ((uintptr_t)p + bytes) / page * page;
    return end <= begin || madvise((void *)begin, end - begin, MADV_DONTNEED) == 0;
}

#endif
