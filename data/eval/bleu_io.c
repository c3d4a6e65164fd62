/* bleu_io.c: reading hypothesis and reference files the way sacreBLEU does: UTF-8 text (gzip when
 * the name ends in .gz), one segment per '\n'-terminated line, every line rstripped with Python's
 * notion of whitespace. Standard input follows Python's universal newlines instead. */
#include "bleu_io.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check.h"
#include "status.h"
#include "unicode.h"

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* The whole content of a file (decompressed for .gz) in *data (NUL-terminated), *len bytes.
 * 0, or -1 (status_fail). */
static int read_all(const char *path, char **data, size_t *len) {
    size_t cap = 1 << 16, n = 0;
    char *buf = xmalloc(cap);
    if (ends_with(path, ".gz")) {
        gzFile gz = gzopen(path, "rb");
        if (!gz) {
            free(buf);
            return status_fail("cannot open '%s': %s", path, strerror(errno));
        }
        for (;;) {
            if (cap - n < (1 << 16)) buf = xrealloc(buf, cap *= 2);
            int got = gzread(gz, buf + n, (unsigned)(cap - n - 1));
            if (got < 0) {
                int code;
                const char *msg = gzerror(gz, &code);
                int rc = status_fail("cannot read gzip file '%s': %s", path, msg);
                gzclose(gz);
                free(buf);
                return rc;
            }
            if (got == 0) break;
            n += (size_t)got;
        }
        gzclose(gz);
    } else {
        FILE *f = fopen(path, "rb");
        if (!f) {
            free(buf);
            return status_fail("cannot open '%s': %s", path, strerror(errno));
        }
        for (;;) {
            if (cap - n < (1 << 16)) buf = xrealloc(buf, cap *= 2);
            size_t got = fread(buf + n, 1, cap - n - 1, f);
            n += got;
            if (got == 0) break;
        }
        bool bad = ferror(f);
        fclose(f);
        if (bad) {
            free(buf);
            return status_fail("cannot read '%s': %s", path, strerror(errno));
        }
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

char *bleu_rstrip(char *s) {
    size_t len = strlen(s);
    uint32_t *cps = xmalloc((len + 1) * sizeof *cps);
    size_t n = utf8_decode_lenient(s, len, cps);
    size_t keep = n;
    while (keep > 0 && unicode_is_space(cps[keep - 1])) keep--;
    size_t bytes = 0;
    char enc[4];
    for (size_t i = 0; i < keep; i++) bytes += (size_t)utf8_encode(cps[i], enc);
    if (keep < n) s[bytes] = '\0';
    free(cps);
    return s;
}

static void lines_push(BleuLines *l, size_t *cap, const char *s, size_t len) {
    if ((size_t)l->n == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        l->lines = xrealloc(l->lines, *cap * sizeof *l->lines);
    }
    char *line = xmalloc(len + 1);
    memcpy(line, s, len);
    line[len] = '\0';
    l->lines[l->n++] = line;
}

int bleu_check_line(const char *name, long lineno, const char *s, size_t len) {
    const char *nul = memchr(s, '\0', len);
    if (nul)
        return status_fail("%s: line %ld: contains a NUL byte (at byte %zu)", name, lineno,
                           (size_t)(nul - s) + 1);
    uint32_t *cps = xmalloc((len + 1) * sizeof *cps);
    size_t bad;
    long n = utf8_decode(s, len, cps, &bad);
    free(cps);
    if (n < 0)
        return status_fail("%s: line %ld: not valid UTF-8 (byte %zu, value 0x%02X)", name, lineno,
                           bad + 1, (unsigned char)s[bad]);
    return 0;
}

int bleu_read_lines(const char *path, BleuLines *out) {
    memset(out, 0, sizeof *out);
    char *data = NULL;
    size_t len = 0, cap = 0;
    if (read_all(path, &data, &len) < 0) return -1;
    for (size_t start = 0; start < len;) {
        const char *nl = memchr(data + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - data) : len;
        if (bleu_check_line(path, out->n + 1, data + start, end - start) < 0) {
            free(data);
            bleu_lines_free(out);
            return -1;
        }
        lines_push(out, &cap, data + start, end - start);
        bleu_rstrip(out->lines[out->n - 1]);
        start = end + 1;
    }
    free(data);
    return 0;
}

int bleu_read_stream_lines(FILE *f, const char *name, BleuLines *out) {
    memset(out, 0, sizeof *out);
    size_t cap = 1 << 16, len = 0, lines_cap = 0;
    char *data = xmalloc(cap);
    for (;;) {
        if (cap - len < (1 << 15)) data = xrealloc(data, cap *= 2);
        size_t got = fread(data + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        free(data);
        return status_fail("cannot read %s: %s", name, strerror(errno));
    }
    for (size_t start = 0; start < len;) {
        size_t end = start;
        while (end < len && data[end] != '\n' && data[end] != '\r') end++;
        if (bleu_check_line(name, out->n + 1, data + start, end - start) < 0) {
            free(data);
            bleu_lines_free(out);
            return -1;
        }
        lines_push(out, &lines_cap, data + start, end - start);
        if (end + 1 < len && data[end] == '\r' && data[end + 1] == '\n') end++;
        start = end + 1;
    }
    free(data);
    return 0;
}

void bleu_lines_free(BleuLines *l) {
    for (long i = 0; i < l->n; i++) free(l->lines[i]);
    free(l->lines);
    l->lines = NULL;
    l->n = 0;
}
