/* atomic.c: temp file + fsync + rename (atomic.h). */
#include "atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

void atomic_open(AtomicFile *a, const char *path) {
    a->path = xstrdup(path);
    size_t n = strlen(path) + 32;
    a->tmp_path = xmalloc(n);
    snprintf(a->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
    a->f = xfopen(a->tmp_path, "wb");
}

void atomic_write(AtomicFile *a, const void *data, size_t bytes) {
    if (bytes && fwrite(data, 1, bytes, a->f) != bytes)
        FATAL("cannot write '%s': %s", a->tmp_path, strerror(errno));
}

static void fsync_directory_of(const char *path) {
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir] = '\0';  // keep "/" for files in the root
    else
        strcpy(dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);  // best effort: some file systems refuse fsync on directories
        close(fd);
    }
    free(dir);
}

static void atomic_release(AtomicFile *a) {
    free(a->path);
    free(a->tmp_path);
    *a = (AtomicFile){0};
}

void atomic_commit(AtomicFile *a) {
    if (fflush(a->f) != 0 || fsync(fileno(a->f)) != 0)
        FATAL("cannot flush '%s' to disk: %s", a->tmp_path, strerror(errno));
    if (fclose(a->f) != 0) FATAL("cannot close '%s': %s", a->tmp_path, strerror(errno));
    if (rename(a->tmp_path, a->path) != 0)
        FATAL("cannot rename '%s' to '%s': %s", a->tmp_path, a->path, strerror(errno));
    fsync_directory_of(a->path);
    atomic_release(a);
}

void atomic_write_file(const char *path, const void *data, size_t bytes) {
    AtomicFile a;
    atomic_open(&a, path);
    atomic_write(&a, data, bytes);
    atomic_commit(&a);
}
