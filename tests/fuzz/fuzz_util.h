/* fuzz_util.h: what the fuzz targets share: the input written to a temporary file (as it is or
 * gzip-compressed) for the readers that take a path, a NUL-terminated copy of it, and
 * FUZZ_ASSERT, which aborts (a crash libFuzzer reports and saves) when a reader returned
 * success but broke a promise of its header. */
#ifndef NMT_FUZZ_UTIL_H
#define NMT_FUZZ_UTIL_H

#include <fcntl.h>
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

/* This process's temporary directory, made on first use and removed at exit. */
static inline void fuzz_dir_remove(void);
static inline const char *fuzz_dir(void) {
    static char dir[4096];
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/nmt-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        CHECK(mkdtemp(dir), "cannot create a temporary directory %s", dir);
        atexit(fuzz_dir_remove);
    }
    return dir;
}
static inline void fuzz_dir_remove(void) { rmdir(fuzz_dir()); }

/* A new empty file "input<suffix>" (e.g. ".sgm.gz") in fuzz_dir(); returns its xmalloc'd path
 * and the open descriptor in *fd. The name is fixed, so that nothing random reaches the
 * comparisons libFuzzer learns from (the readers compare the end of the name). */
static inline char *fuzz_temp_file(const char *suffix, int *fd) {
    size_t n = strlen(fuzz_dir()) + strlen(suffix) + 8;
    char *path = xmalloc(n);
    snprintf(path, n, "%s/input%s", fuzz_dir(), suffix);
    *fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(*fd >= 0, "cannot create the temporary file %s", path);
    return path;
}

/* data[0 .. size) in the temporary file input<suffix>; returns its path (fuzz_remove). */
static inline char *fuzz_write(const uint8_t *data, size_t size, const char *suffix) {
    int fd;
    char *path = fuzz_temp_file(suffix, &fd);
    CHECK(size == 0 || write(fd, data, size) == (ssize_t)size, "cannot write %s", path);
    close(fd);
    return path;
}

/* data[0 .. size) gzip-compressed into the temporary file input<suffix>. */
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
