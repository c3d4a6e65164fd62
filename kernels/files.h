/* files.h: reading whole files. file_read gives a file's bytes, file_read_lines its lines. Both
 * are for files read in one piece (models, references, manifests); corpora stream through
 * data/text.h instead. Failures return NULL with status_message() naming the path. */
#ifndef NMT_FILES_H
#define NMT_FILES_H

#include <stddef.h>

/* The bytes of path (xmalloc'd, NUL-terminated after *len bytes), or NULL with the reason in
 * status_message(): "cannot open '<path>': <errno text>" or "cannot read '<path>': ...". */
char *file_read(const char *path, size_t *len);

/* The lines of path: *n lines (xmalloc'd array of xmalloc'd NUL-terminated strings, free with
 * file_free_lines), split at "\n" only: a "\r" before it stays part of the line, and a last line
 * without "\n" counts. NULL on failure, as file_read. */
char **file_read_lines(const char *path, long *n);
void file_free_lines(char **lines, long n);

#endif
