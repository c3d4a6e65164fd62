/* paths.c: directories on disk and path names (paths.h). */
#include "paths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"

/* mkdir -p of the first n bytes of path. */
static bool make_dirs_prefix(const char *path, size_t n) {
    if (n == 0) return true;
    char *dir = xmalloc(n + 1);
    memcpy(dir, path, n);
    dir[n] = '\0';
    bool ok = true;
    for (char *p = dir + 1;; p++) {
        bool end = *p == '\0';
        if (*p == '/' || end) {
            *p = '\0';
            if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
                ok = false;
                break;
            }
            if (end) break;
            *p = '/';
        }
    }
    int err = errno;
    free(dir);
    errno = err;
    return ok;
}

bool make_dirs(const char *dir) {
    if (!*dir) {
        errno = ENOENT;
        return false;
    }
    return make_dirs_prefix(dir, strlen(dir));
}

bool make_parent_dirs(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? make_dirs_prefix(path, (size_t)(slash - path)) : true;
}

char *path_join(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = xmalloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    return path;
}
