/* strbuf.c: the growable string of strbuf.h. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

void strbuf_reserve(StrBuf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    b->cap = 2 * (b->len + extra + 1);
    b->s = xrealloc(b->s, b->cap);
}

void strbuf_addn(StrBuf *b, const char *s, size_t n) {
    strbuf_reserve(b, n);
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void strbuf_add(StrBuf *b, const char *s) { strbuf_addn(b, s, strlen(s)); }

void strbuf_addc(StrBuf *b, char c) { strbuf_addn(b, &c, 1); }

void strbuf_addf(StrBuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    CHECK(n >= 0, "cannot format '%s'", fmt);
    strbuf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void strbuf_free(StrBuf *b) {
    free(b->s);
    *b = (StrBuf){0};
}
