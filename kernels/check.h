/* check.h: fail-fast error handling for the whole project.
 * CHECK(cond, fmt, ...) and FATAL(fmt, ...) print file:line, the failed condition and the message,
 * then exit(EXIT_FAILURE) (or run the hook set by nmt_fatal_set_hook). The x* wrappers replace
 * raw libc calls that must not fail silently (data/spm.cc, the C++ shim, uses them too).
 * Boundaries a caller can recover from (config parsing, SentencePiece, checkpoint loading) report
 * through status_fail() (status.h) instead; these macros are for everything else. */
#ifndef NMT_CHECK_H
#define NMT_CHECK_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

void nmt_fatal(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

/* Runs `hook` after the message of a fatal error, instead of the plain exit (a data-parallel run
 * aborts all its ranks there, trainer/dist.h); NULL restores the plain exit. */
void nmt_fatal_set_hook(void (*hook)(void));

#define FATAL(...) nmt_fatal(__FILE__, __LINE__, NULL, __VA_ARGS__)
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) nmt_fatal(__FILE__, __LINE__, #cond, __VA_ARGS__);                            \
    } while (0)

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
FILE *xfopen(const char *path, const char *mode); /* error names the path and errno text */

#ifdef __cplusplus
}
#endif

#endif
