/* utf8.c: the strict UTF-8 decoder and the encoder of utf8.h. */
#include "utf8.h"

int utf8_next(const char *s, size_t len, uint32_t *cp) {
    const unsigned char *u = (const unsigned char *)s;
    unsigned char b = u[0];
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    int n;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b >= 0xC2 && b <= 0xDF) {
        n = 2;
        *cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        *cp = b & 0x0F;
        if (b == 0xE0) lo = 0xA0;  // no overlong forms
        if (b == 0xED) hi = 0x9F;  // no surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        *cp = b & 0x07;
        if (b == 0xF0) lo = 0x90;  // no overlong forms
        if (b == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
    } else {
        return 0;
    }
    if ((size_t)n > len || u[1] < lo || u[1] > hi) return 0;
    for (int k = 1; k < n; k++) {
        if ((u[k] & 0xC0) != 0x80) return 0;
        *cp = (*cp << 6) | (u[k] & 0x3F);
    }
    return n;
}

bool utf8_valid(const char *s, size_t len, size_t *bad_offset) {
    uint32_t cp;
    for (size_t i = 0, k; i < len; i += k)
        if (!(k = (size_t)utf8_next(s + i, len - i, &cp))) {
            *bad_offset = i;
            return false;
        }
    return true;
}

long utf8_decode(const char *s, size_t len, uint32_t *out, size_t *bad_offset) {
    long m = 0;
    for (size_t i = 0; i < len;) {
        int k = utf8_next(s + i, len - i, &out[m]);
        if (k == 0) {
            *bad_offset = i;
            return -1;
        }
        m++;
        i += (size_t)k;
    }
    return m;
}

size_t utf8_decode_lenient(const char *s, size_t len, uint32_t *out) {
    size_t m = 0;
    for (size_t i = 0; i < len;) {
        int k = utf8_next(s + i, len - i, &out[m]);
        if (k == 0) {
            out[m] = 0xFFFD;
            k = 1;
        }
        m++;
        i += (size_t)k;
    }
    return m;
}

int utf8_encode(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}
