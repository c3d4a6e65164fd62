/* atomic.h: files that appear complete or not at all. atomic_open writes to "<path>.tmp.<pid>";
 * atomic_commit flushes, fsyncs, renames it over <path> and fsyncs the directory, so a crash
 * leaves either the old file or the new one, never a torn mix. I/O errors are fatal and name the
 * path (these are outputs we create, not inputs a caller could fix). */
#ifndef NMT_DATA_ATOMIC_H
#define NMT_DATA_ATOMIC_H

#include <stddef.h>
#include <stdio.h>

typedef struct AtomicFile {
    FILE *f;     // open on tmp_path for writing
    char *path;  // final name
    char *tmp_path;
} AtomicFile;

void atomic_open(AtomicFile *a, const char *path);
void atomic_write(AtomicFile *a, const void *data, size_t bytes);
void atomic_commit(AtomicFile *a);

/* Writes bytes to path atomically in one call. */
void atomic_write_file(const char *path, const void *data, size_t bytes);

#endif
