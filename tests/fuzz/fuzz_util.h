/* fuzz_util.h: what the fuzz targets share: the input written to a temporary file (as it is or
 * gzip-compressed) for the readers that take a path, a NUL-terminated copy of it, and
 * FUZZ_ASSERT, which aborts (a crash libFuzzer reports and saves) when a reader returned
 * success but broke a promise of its header. */
#ifndef NMT_FUZZ_UTIL_H
#define NMT_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"

#define FUZZ_ASSERT(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz: %s:%d: `%s` failed: ", __FILE__, __LINE__, #cond);             \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A new empty temporary file whose name ends in suffix (e.g. ".sgm.gz"); returns its xmalloc'd
 * path and the open descriptor in *fd. */
static inline char *fuzz_temp_file(const char *suffix, int *fd) {
    const char *dir = getenv("TMPDIR");
    size_t n = strlen(dir && *dir ? dir : "/tmp") + strlen(suffix) + 32;
    char *path = xmalloc(n);
    snprintf(path, n, "%s/nmt-fuzz-XXXXXX%s", dir && *dir ? dir : "/tmp", suffix);
    *fd = mkstemps(path, (int)strlen(suffix));
    CHECK(*fd >= 0, "cannot create the temporary file %s", path);
    return path;
}

/* data[0 .. size) in a new temporary file named *suffix; returns its path (fuzz_remove). */
static inline char *fuzz_write(const uint8_t *data, size_t size, const char *suffix) {
    int fd;
    char *path = fuzz_temp_file(suffix, &fd);
    CHECK(size == 0 || write(fd, data, size) == (ssize_t)size, "cannot write %s", path);
    close(fd);
    return path;
}

/* data[0 .. size) gzip-compressed into a new temporary file named *suffix. */
static inline char *fuzz_write_gzip(const uint8_t *data, size_t size, const char *suffix) {
    int fd;
    char *path = fuzz_temp_file(suffix, &fd);
    gzFile gz = gzdopen(fd, "wb");
    CHECK(gz && (size == 0 || gzwrite(gz, data, (unsigned)size) == (int)size) &&
              gzclose(gz) == Z_OK,
          "cannot write %s", path);
    return path;
}

static inline void fuzz_remove(char *path) {
    unlink(path);
    free(path);
}

/* data[0 .. size) as an xmalloc'd NUL-terminated string (bytes after a NUL are unseen by the
 * string functions, as they would be in a file read as text). */
static inline char *fuzz_string(const uint8_t *data, size_t size) {
    char *s = xmalloc(size + 1);
    if (size) memcpy(s, data, size);
    s[size] = 0;
    return s;
}

#endif
