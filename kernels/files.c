/* files.c: the whole-file and line readers of files.h. */
#include "files.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "status.h"

char *file_read(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        status_fail("cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t used = 0, cap = 1 << 14, n;
    char *bytes = xmalloc(cap);  // (cap) the bytes read so far, one byte kept for the NUL
    while ((n = fread(bytes + used, 1, cap - used - 1, f)) > 0) {
        used += n;
        if (used + 1 == cap) bytes = xrealloc(bytes, cap *= 2);
    }
    bool failed = ferror(f);
    int err = errno;
    fclose(f);
    if (failed) {
        free(bytes);
        status_fail("cannot read '%s': %s", path, strerror(err));
        return NULL;
    }
    bytes[used] = '\0';
    *len = used;
    return bytes;
}

char **file_read_lines(const char *path, long *n) {
    size_t len;
    char *text = file_read(path, &len);
    if (!text) return NULL;
    long count = 0;
    for (size_t i = 0; i < len; i++) count += text[i] == '\n';
    if (len && text[len - 1] != '\n') count++;
    char **lines = xmalloc(sizeof(char *) * (count ? (size_t)count : 1));  // (count)
    const char *p = text;
    for (long i = 0; i < count; i++) {
        const char *nl = memchr(p, '\n', len - (size_t)(p - text));
        size_t k = nl ? (size_t)(nl - p) : len - (size_t)(p - text);
        lines[i] = xmalloc(k + 1);
        memcpy(lines[i], p, k);
        lines[i][k] = '\0';
        p += k + 1;
    }
    free(text);
    *n = count;
    return lines;
}

void file_free_lines(char **lines, long n) {
    for (long i = 0; i < n; i++) free(lines[i]);
    free(lines);
}
