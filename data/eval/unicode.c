/* unicode.c: the Python-compatible character classes and lowercasing declared in
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
