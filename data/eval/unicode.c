/* unicode.c: UTF-8 coding and the Python-compatible character classes and lowercasing declared in
 * unicode.h, answered from the generated range tables in unicode_tables.c. */
#include "unicode.h"

static bool in_ranges(const UnicodeRange *r, int count, uint32_t cp) {
    int lo = 0, hi = count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < r[mid].lo) hi = mid - 1;
        else if (cp > r[mid].hi) lo = mid + 1;
        else return true;
    }
    return false;
}

bool unicode_is_space(uint32_t cp) {
    if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
    return in_ranges(unicode_space_ranges, unicode_space_ranges_count, cp);
}

bool unicode_is_punct(uint32_t cp) {
    return in_ranges(unicode_punct_ranges, unicode_punct_ranges_count, cp);
}

bool unicode_is_symbol(uint32_t cp) {
    return in_ranges(unicode_symbol_ranges, unicode_symbol_ranges_count, cp);
}

bool unicode_is_number(uint32_t cp) {
    return in_ranges(unicode_number_ranges, unicode_number_ranges_count, cp);
}

/* Lowercase of one code point when it is a single code point (all but the specials). */
static uint32_t lower_single(uint32_t cp) {
    if (cp < 0x80) return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
    int lo = 0, hi = unicode_lower_runs_count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const UnicodeLowerRun *r = &unicode_lower_runs[mid];
        if (cp < r->lo) hi = mid - 1;
        else if (cp > r->hi) lo = mid + 1;
        else return (cp - r->lo) % (uint32_t)r->stride == 0 ? cp + (uint32_t)r->delta : cp;
    }
    return cp;
}

enum { CAPITAL_SIGMA = 0x3A3, SMALL_SIGMA = 0x3C3, FINAL_SIGMA = 0x3C2 };

static bool case_ignorable(uint32_t cp) {
    return in_ranges(unicode_case_ignorable_ranges, unicode_case_ignorable_ranges_count, cp);
}

/* CPython's Final_Sigma test for the capital sigma at in[i]: a cased letter before it and none
 * after it, case-ignorable characters skipped on both sides. */
static bool is_final_sigma(const uint32_t *in, size_t n, size_t i) {
    size_t j = i;
    while (j > 0 && case_ignorable(in[j - 1])) j--;
    if (j == 0 || !in_ranges(unicode_cased_ranges, unicode_cased_ranges_count, in[j - 1]))
        return false;
    for (j = i + 1; j < n && case_ignorable(in[j]); j++) {
    }
    return j == n || !in_ranges(unicode_cased_ranges, unicode_cased_ranges_count, in[j]);
}

size_t unicode_lower(const uint32_t *in, size_t n, uint32_t *out) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t cp = in[i];
        if (cp == CAPITAL_SIGMA) {
            out[m++] = is_final_sigma(in, n, i) ? FINAL_SIGMA : SMALL_SIGMA;
            continue;
        }
        bool special = false;
        for (int s = 0; s < unicode_lower_specials_count && cp >= 0x80; s++) {
            if (unicode_lower_specials[s].cp != cp) continue;
            for (int k = 0; k < unicode_lower_specials[s].n; k++)
                out[m++] = unicode_lower_specials[s].lower[k];
            special = true;
        }
        if (!special) out[m++] = lower_single(cp);
    }
    return m;
}

/* Length of the valid UTF-8 sequence at s[0..len) and its code point, or 0 if invalid. */
static int utf8_sequence(const unsigned char *s, size_t len, uint32_t *cp) {
    unsigned char b = s[0];
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    int n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (b >= 0xC2 && b <= 0xDF) {
        n = 2;
        *cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        *cp = b & 0x0F;
        if (b == 0xE0) lo = 0xA0;
        if (b == 0xED) hi = 0x9F; /* no surrogates */
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        *cp = b & 0x07;
        if (b == 0xF0) lo = 0x90;
        if (b == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if ((size_t)n > len || s[1] < lo || s[1] > hi) return 0;
    for (int k = 1; k < n; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        *cp = (*cp << 6) | (s[k] & 0x3F);
    }
    return n;
}

long utf8_decode(const char *s, size_t len, uint32_t *out, size_t *bad_offset) {
    const unsigned char *u = (const unsigned char *)s;
    long m = 0;
    for (size_t i = 0; i < len;) {
        int k = utf8_sequence(u + i, len - i, &out[m]);
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
    const unsigned char *u = (const unsigned char *)s;
    size_t m = 0;
    for (size_t i = 0; i < len;) {
        int k = utf8_sequence(u + i, len - i, &out[m]);
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
