/* text.c: the line, gzip and SGM readers and the parallel corpus iterator of text.h. */
#define _GNU_SOURCE  // memmem
#include "text.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "status.h"
#include "utf8.h"

enum { TEXT_CHUNK = 1 << 18 };

static bool has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

static bool is_sgm_name(const char *path) {
    return has_suffix(path, ".sgm") || has_suffix(path, ".xml") || has_suffix(path, ".sgm.gz") ||
           has_suffix(path, ".xml.gz");
}

int text_open(TextReader *r, const char *path) {
    *r = (TextReader){0};
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return status_fail("cannot read '%s': it is a directory, not a corpus file", path);
    errno = 0;
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return status_fail("cannot open '%s': %s", path, errno ? strerror(errno) : "out of memory");
    gzbuffer(gz, TEXT_CHUNK);
    r->path = xstrdup(path);
    r->gz = gz;
    r->sgm = is_sgm_name(path);
    r->chunk = xmalloc(TEXT_CHUNK);
    r->text_cap = 256;
    r->text = xmalloc(r->text_cap);
    return 0;
}

void text_close(TextReader *r) {
    if (r->gz) gzclose(r->gz);
    free(r->path);
    free(r->chunk);
    free(r->text);
    free(r->record);
    *r = (TextReader){0};
}

static void text_reserve(TextReader *r, size_t need) {
    if (need <= r->text_cap) return;
    while (r->text_cap < need) r->text_cap *= 2;
    r->text = xrealloc(r->text, r->text_cap);
}

/* Refills the chunk; 1 if bytes are available, 0 at a clean end, -1 on a gzip error. */
static int fill_chunk(TextReader *r) {
    if (r->at_eof) return 0;
    int n = gzread(r->gz, r->chunk, TEXT_CHUNK);
    int zerr = Z_OK;
    const char *msg = gzerror(r->gz, &zerr);
    if (n < 0 || (zerr != Z_OK && zerr != Z_STREAM_END))
        return status_fail(
            "'%s': cannot read past line %ld: %s (the gzip file is truncated or corrupt)", r->path,
            r->line, msg);
    r->chunk_len = (size_t)n;
    r->chunk_pos = 0;
    if (n == 0) r->at_eof = true;
    return n > 0;
}

/* Appends the next physical line (without its "\n") at text + text_len.
 * 1 if a line was read, 0 at the end of the file, -1 on error. */
static int append_line(TextReader *r) {
    bool any = false;
    for (;;) {
        if (r->chunk_pos == r->chunk_len) {
            int st = fill_chunk(r);
            if (st < 0) return -1;
            if (st == 0) break;
        }
        const char *start = r->chunk + r->chunk_pos;
        size_t avail = r->chunk_len - r->chunk_pos;
        const char *nl = memchr(start, '\n', avail);
        size_t take = nl ? (size_t)(nl - start) : avail;
        text_reserve(r, r->text_len + take + 1);
        memcpy(r->text + r->text_len, start, take);
        r->text_len += take;
        r->chunk_pos += take + (nl != NULL);
        any = true;
        if (nl) break;
    }
    r->text[r->text_len] = '\0';
    if (!any) return 0;
    if (r->line == 0 && r->text_len >= 3 && !memcmp(r->text, "\xEF\xBB\xBF", 3)) {
        memmove(r->text, r->text + 3, r->text_len - 2);  // skip the byte order mark (and keep NUL)
        r->text_len -= 3;
    }
    r->line++;
    return 1;
}

static int digit_value(char c, bool hex) {
    if (c >= '0' && c <= '9') return c - '0';
    char lower = (char)(c | 0x20);
    if (hex && lower >= 'a' && lower <= 'f') return lower - 'a' + 10;
    return -1;
}

/* Decodes the entity starting at s[0] == '&' (at most n bytes) into out. Returns the bytes of
 * input consumed and sets *written, or 0 if it is not a known entity (the '&' is then literal). */
static size_t unescape_entity(const char *s, size_t n, char *out, size_t *written) {
    static const struct {
        const char *name;
        char c;
    } named[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        size_t len = strlen(named[i].name);
        if (n >= len && !memcmp(s, named[i].name, len)) {
            out[0] = named[i].c;
            *written = 1;
            return len;
        }
    }
    if (n < 4 || s[1] != '#') return 0;
    bool hex = s[2] == 'x' || s[2] == 'X';
    size_t i = hex ? 3 : 2;
    uint32_t cp = 0;
    size_t digits = 0;
    for (; i < n && digits < 8; i++, digits++) {
        int d = digit_value(s[i], hex);
        if (d < 0) break;
        cp = cp * (hex ? 16 : 10) + (uint32_t)d;
    }
    bool valid_cp = cp > 0 && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (digits == 0 || i >= n || s[i] != ';' || !valid_cp) return 0;
    *written = (size_t)utf8_encode(cp, out);
    return i + 1;
}

/* Copies the <seg> content [s, s + n) into r->record, unescaping entities; returns its length. */
static size_t set_record_unescaped(TextReader *r, const char *s, size_t n) {
    if (r->record_cap < n + 1) {
        r->record_cap = n + 1;
        r->record = xrealloc(r->record, r->record_cap);
    }
    size_t out = 0;  // every entity is at least as long as its UTF-8 expansion, so out <= n
    for (size_t i = 0; i < n;) {
        size_t written = 0;
        size_t used = s[i] == '&' ? unescape_entity(s + i, n - i, r->record + out, &written) : 0;
        if (used) {
            out += written;
            i += used;
        } else {
            r->record[out++] = s[i++];
        }
    }
    r->record[out] = '\0';
    return out;
}

static long count_newlines(const char *s, const char *end) {
    long n = 0;
    for (; s < end; s++) n += *s == '\n';
    return n;
}

/* The line of p in the window of next_seg that ends at end. */
static long line_of(const TextReader *r, const char *p, const char *end) {
    return r->line - count_newlines(p, end);
}

/* The first "<seg" in [s, end) that opens an element ("<seg>" or "<seg attr=...>"), or NULL. */
static const char *find_seg_open(const char *s, const char *end) {
    while ((s = memmem(s, (size_t)(end - s), "<seg", 4))) {
        if (s + 4 == end) return s;
        char c = s[4];
        if (c == '>' || c == ' ' || c == '\t' || c == '\r' || c == '\n') return s;
        s += 4;
    }
    return NULL;
}

/* The first "</seg" in [s, end) that closes an element or tries to ("</seg>", or "</seg"
 * followed by anything but a name character: a broken closing tag), or NULL. */
static const char *find_seg_close(const char *s, const char *end) {
    while ((s = memmem(s, (size_t)(end - s), "</seg", 5))) {
        if (s + 5 == end) return s;
        char c = s[5];
        if (!(c == '-' || c == '_' || c == '.' || c == ':' || (c >= '0' && c <= '9') ||
              ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')))
            return s;
        s += 5;
    }
    return NULL;
}

/* The next <seg> content. r->text is a window of whole physical lines, the last of which is line
 * r->line; r->scan is where the search continues. An element spanning lines grows the window.
 * Markup that would leak into the data is an error naming its line: a </seg> outside an element,
 * a <seg> tag without its '>', a broken </seg> tag, a <seg> inside a <seg>. */
static int next_seg(TextReader *r, char **rec, size_t *len) {
    for (;;) {
        const char *w = r->text, *end = r->text + r->text_len;
        const char *seg = find_seg_open(w + r->scan, end);
        const char *stray = find_seg_close(w + r->scan, seg ? seg : end);
        if (stray)
            return status_fail("'%s':%ld: </seg> without an opening <seg>", r->path,
                               line_of(r, stray, end));
        const char *open_end = seg ? memchr(seg, '>', (size_t)(end - seg)) : NULL;
        if (seg && memchr(seg + 1, '<', (size_t)((open_end ? open_end : end) - seg - 1)))
            return status_fail("'%s':%ld: broken <seg> tag (no '>' before the next '<')",
                               r->path, line_of(r, seg, end));
        const char *close = open_end ? find_seg_close(open_end, end) : NULL;
        const char *inner = open_end ? find_seg_open(open_end, close ? close : end) : NULL;
        if (inner)
            return status_fail("'%s':%ld: <seg> inside the <seg> of line %ld (nested, or the "
                               "first is not closed by </seg>)",
                               r->path, line_of(r, inner, end), line_of(r, seg, end));
        if (close && close + 5 < end && close[5] != '>')
            return status_fail("'%s':%ld: broken </seg> tag", r->path, line_of(r, close, end));
        if (close && close + 5 < end) {
            r->record_line = line_of(r, seg, end);
            *len = set_record_unescaped(r, open_end + 1, (size_t)(close - open_end - 1));
            *rec = r->record;
            r->scan = (size_t)(close + 6 - w);
            r->records++;
            return 1;
        }
        long seg_line = seg ? line_of(r, seg, end) : 0;
        if (seg) {  // an element is open: keep it and append the next line
            size_t keep_from = (size_t)(seg - w);
            memmove(r->text, seg, r->text_len - keep_from);
            r->text_len -= keep_from;
            text_reserve(r, r->text_len + 2);
            r->text[r->text_len++] = '\n';
        } else {
            r->text_len = 0;
        }
        r->scan = 0;
        int st = append_line(r);
        if (st < 0) return -1;
        if (st == 0) {
            if (!seg) return 0;
            return status_fail(
                "'%s':%ld: <seg> element is not closed by </seg> before the end of "
                "the file",
                r->path, seg_line);
        }
    }
}

int text_next(TextReader *r, char **rec, size_t *len) {
    if (r->sgm) return next_seg(r, rec, len);
    r->text_len = 0;
    int st = append_line(r);
    if (st <= 0) return st;
    r->record_line = r->line;
    r->records++;
    *rec = r->text;
    *len = r->text_len;
    return 1;
}

int parallel_open(ParallelReader *p, const CorpusPair *corpora, int ncorpora) {
    *p = (ParallelReader){.corpora = corpora, .ncorpora = ncorpora};
    if (ncorpora == 0) return 0;
    if (text_open(&p->src, corpora[0].src) < 0) return -1;
    if (text_open(&p->tgt, corpora[0].tgt) < 0) {
        text_close(&p->src);
        return -1;
    }
    return 0;
}

void parallel_close(ParallelReader *p) {
    if (p->corpus < p->ncorpora) {
        text_close(&p->src);
        text_close(&p->tgt);
    }
    p->corpus = p->ncorpora;
}

static const char *record_unit(const TextReader *r) { return r->sgm ? "segments" : "lines"; }

/* Reads r to its end to count its records, for the mismatch message. */
static long count_remaining(TextReader *r) {
    char *rec;
    size_t len;
    int st;
    while ((st = text_next(r, &rec, &len)) > 0) {
    }
    return st < 0 ? -1 : r->records;
}

int parallel_next(ParallelReader *p, char **src, size_t *src_len, char **tgt, size_t *tgt_len) {
    while (p->corpus < p->ncorpora) {
        int s = text_next(&p->src, src, src_len);
        int t = s < 0 ? -1 : text_next(&p->tgt, tgt, tgt_len);
        if (s < 0 || t < 0) return -1;
        if (s && t) {
            p->pairs++;
            return 1;
        }
        if (s != t) {
            long ns = s ? count_remaining(&p->src) : p->src.records;
            long nt = t ? count_remaining(&p->tgt) : p->tgt.records;
            if (ns < 0 || nt < 0) return -1;
            return status_fail(
                "parallel corpus mismatch: '%s' has %ld %s but '%s' has %ld %s "
                "(record i of one side must be the translation of record i of the "
                "other)",
                p->src.path, ns, record_unit(&p->src), p->tgt.path, nt, record_unit(&p->tgt));
        }
        text_close(&p->src);
        text_close(&p->tgt);
        if (++p->corpus < p->ncorpora) {
            const CorpusPair *c = &p->corpora[p->corpus];
            if (text_open(&p->src, c->src) < 0) {
                p->corpus = p->ncorpora;
                return -1;
            }
            if (text_open(&p->tgt, c->tgt) < 0) {
                text_close(&p->src);
                p->corpus = p->ncorpora;
                return -1;
            }
        }
    }
    return 0;
}
