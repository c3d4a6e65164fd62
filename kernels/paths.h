/* paths.h: directories on disk and path names: mkdir -p and joining a directory and a name. */
#ifndef NMT_PATHS_H
#define NMT_PATHS_H

#include <stdbool.h>

/* mkdir -p: creates dir and every missing parent (mode 0777 before the umask); true when dir
 * exists afterwards, else false with errno set (ENOENT for an empty name). */
bool make_dirs(const char *dir);

/* make_dirs of the directory part of path (nothing when path has no '/'). */
bool make_parent_dirs(const char *path);

/* "<dir>/<name>" (xmalloc'd). */
char *path_join(const char *dir, const char *name);

#endif
