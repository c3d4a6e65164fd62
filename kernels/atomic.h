/* atomic.h: files that appear complete or not at all. atomic_open writes to "<path>.tmp.<pid>";
 * atomic_commit flushes, fsyncs, renames it over <path> and fsyncs the directory, so a crash
 * leaves either the old file or the new one, never a torn mix.
 * Two forms share one implementation:
 * - atomic_try_*: recoverable. They return 0, or -1 with status_message() naming the path and
 *   errno left as the failing call set it; after a failure the temporary file is removed and
 *   the AtomicFile released (call nothing more on it). For best-effort files such as caches.
 * - atomic_open/write/commit: I/O errors are fatal and name the path (for outputs we create,
 *   not inputs a caller could fix).
 * A temporary file never outlives its process unless the process is killed with SIGKILL: it is
 * removed when a write fails, when the process exits with it still open (FATAL, CHECK, exit), and
 * on SIGHUP, SIGINT, SIGQUIT, SIGTERM and SIGXFSZ, for which the first atomic_try_open installs a
 * handler that removes the open temporaries and then dies of the signal as before (exit status
 * 128 + signal). It only takes signals still at their default action: ignored ones stay ignored,
 * and a handler installed earlier (or later, like training's graceful stop) is left in charge.
 * What SIGKILL leaves, atomic_remove_stale removes on the next run in the directory. */
#ifndef NMT_ATOMIC_H
#define NMT_ATOMIC_H

#include <stddef.h>
#include <stdio.h>

typedef struct AtomicFile {
    FILE *f;         // open on tmp_path for writing
    char *path;      // final name (xmalloc'd)
    char *tmp_path;  // "<path>.tmp.<pid>" (xmalloc'd)
} AtomicFile;

int atomic_try_open(AtomicFile *a, const char *path);
int atomic_try_write(AtomicFile *a, const void *data, size_t bytes);
/* Also fails if an earlier write through a->f (fprintf, fwrite) failed. */
int atomic_try_commit(AtomicFile *a);
/* Closes and removes the temporary file, leaving path as it was. */
void atomic_abort(AtomicFile *a);

void atomic_open(AtomicFile *a, const char *path);
void atomic_write(AtomicFile *a, const void *data, size_t bytes);
void atomic_commit(AtomicFile *a);

/* Writes bytes to path atomically in one call. */
int atomic_try_write_file(const char *path, const void *data, size_t bytes);
void atomic_write_file(const char *path, const void *data, size_t bytes);

/* Removes path (a missing one is not an error) and fsyncs its directory, so that after a crash
 * the file is gone for good before anything written next appears; I/O errors are fatal. For a
 * file that vouches for others, such as prepare's manifest, before they are rewritten. */
void atomic_remove(const char *path);

/* Removes the temporaries "<name>.tmp.<pid>" (regular files) in dir whose process no longer
 * exists (kill(pid, 0) fails with ESRCH; never a live process's, nor this one's), printing
 * "<who> removed <dir>/<name>, ..." on stderr for each; returns how many. For a directory the
 * caller writes its own outputs into (a run directory, data.dir, a cache); a missing or
 * unreadable directory holds nothing to remove. */
int atomic_remove_stale(const char *dir, const char *who);

#endif
