/* strbuf.h: the growable string of the project. A StrBuf owns one heap buffer that grows by
 * doubling (through xrealloc) and is always NUL-terminated once something was added; {0} is an
 * empty buffer (s == NULL). Used to build manifests, JSON headers, reports and reuse keys. */
#ifndef NMT_STRBUF_H
#define NMT_STRBUF_H

#include <stddef.h>

typedef struct StrBuf {
    char *s;     // (cap) bytes; s[len] == '\0' once anything was added; NULL while empty
    size_t len;  // bytes held, without the NUL
    size_t cap;  // bytes allocated
} StrBuf;

void strbuf_reserve(StrBuf *b, size_t extra);  // room for extra more bytes and the NUL
void strbuf_add(StrBuf *b, const char *s);
void strbuf_addn(StrBuf *b, const char *s, size_t n);  // n bytes of s (may hold NULs)
void strbuf_addc(StrBuf *b, char c);
void strbuf_addf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_free(StrBuf *b);  // releases the buffer and leaves b empty

#endif
