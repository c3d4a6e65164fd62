/* check.c: the fatal-error reporter and the checked libc wrappers of check.h. */
#include "check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void (*fatal_hook)(void);

void nmt_fatal_set_hook(void (*hook)(void)) { fatal_hook = hook; }

void nmt_fatal(const char *file, int line, const char *cond, const char *fmt, ...) {
    fflush(stdout);
    fprintf(stderr, "nmt: error: ");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cond)
        fprintf(stderr, "\n  (check `%s` failed at %s:%d)\n", cond, file, line);
    else
        fprintf(stderr, "\n  (at %s:%d)\n", file, line);
    if (fatal_hook) fatal_hook();
    exit(EXIT_FAILURE);
}

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    CHECK(p, "out of memory allocating %zu bytes", n);
    return p;
}

void *xcalloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size ? size : 1);
    CHECK(p, "out of memory allocating %zu x %zu bytes", count, size);
    return p;
}

void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    CHECK(q, "out of memory reallocating to %zu bytes", n);
    return q;
}

char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = xmalloc(n);
    memcpy(d, s, n);
    return d;
}

FILE *xfopen(const char *path, const char *mode) {
    FILE *f = fopen(path, mode);
    if (!f) FATAL("cannot open '%s' (mode %s): %s", path, mode, strerror(errno));
    return f;
}
