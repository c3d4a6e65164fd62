/* atomic.c: temp file + fsync + rename (atomic.h), recoverable and fatal forms. */
#include "atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "status.h"

static void atomic_release(AtomicFile *a) {
    free(a->path);
    free(a->tmp_path);
    *a = (AtomicFile){0};
}

void atomic_abort(AtomicFile *a) {
    int err = errno;
    if (a->f) fclose(a->f);
    if (a->tmp_path) unlink(a->tmp_path);
    atomic_release(a);
    errno = err;
}

/* Fails with the message and errno of the failing call, leaving no temporary file. */
static int fail_and_abort(AtomicFile *a, const char *msg) {
    int err = errno;
    status_fail("%s", msg);
    if (a->f) fclose(a->f);
    a->f = NULL;
    atomic_abort(a);
    errno = err;
    return -1;
}

int atomic_try_open(AtomicFile *a, const char *path) {
    a->path = xstrdup(path);
    size_t n = strlen(path) + 32;
    a->tmp_path = xmalloc(n);
    snprintf(a->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
    a->f = fopen(a->tmp_path, "wb");
    if (a->f) return 0;
    int err = errno;
    status_fail("cannot open '%s' (mode wb): %s", a->tmp_path, strerror(err));
    atomic_release(a);
    errno = err;
    return -1;
}

int atomic_try_write(AtomicFile *a, const void *data, size_t bytes) {
    if (!bytes || fwrite(data, 1, bytes, a->f) == bytes) return 0;
    char msg[1024];
    snprintf(msg, sizeof msg, "cannot write '%s': %s", a->tmp_path, strerror(errno));
    return fail_and_abort(a, msg);
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

int atomic_try_commit(AtomicFile *a) {
    char msg[1024];
    if (fflush(a->f) != 0 || ferror(a->f) || fsync(fileno(a->f)) != 0) {
        if (!errno) errno = EIO;  // ferror without a failing flush
        snprintf(msg, sizeof msg, "cannot flush '%s' to disk: %s", a->tmp_path, strerror(errno));
        return fail_and_abort(a, msg);
    }
    FILE *f = a->f;
    a->f = NULL;
    if (fclose(f) != 0) {
        snprintf(msg, sizeof msg, "cannot close '%s': %s", a->tmp_path, strerror(errno));
        return fail_and_abort(a, msg);
    }
    if (rename(a->tmp_path, a->path) != 0) {
        snprintf(msg, sizeof msg, "cannot rename '%s' to '%s': %s", a->tmp_path, a->path,
                 strerror(errno));
        return fail_and_abort(a, msg);
    }
    fsync_directory_of(a->path);
    atomic_release(a);
    return 0;
}

int atomic_try_write_file(const char *path, const void *data, size_t bytes) {
    AtomicFile a;
    if (atomic_try_open(&a, path) || atomic_try_write(&a, data, bytes)) return -1;
    return atomic_try_commit(&a);
}

void atomic_open(AtomicFile *a, const char *path) {
    if (atomic_try_open(a, path)) FATAL("%s", status_message());
}

void atomic_write(AtomicFile *a, const void *data, size_t bytes) {
    if (atomic_try_write(a, data, bytes)) FATAL("%s", status_message());
}

void atomic_commit(AtomicFile *a) {
    if (atomic_try_commit(a)) FATAL("%s", status_message());
}

void atomic_write_file(const char *path, const void *data, size_t bytes) {
    if (atomic_try_write_file(path, data, bytes)) FATAL("%s", status_message());
}
