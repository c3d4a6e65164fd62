/* test_unicode.c: the Python-compatible Unicode layer of data/eval/unicode.h: strict UTF-8 decoding,
 * Python's whitespace, the P/S/N categories and str.lower(). Expected values are what Python
 * 3.11 (Unicode 14.0) answers for the same input. */
#include <string.h>

#include "test_util.h"
#include "unicode.h"

/* Decodes a (valid) UTF-8 literal into cps; returns the count. */
static size_t decode(const char *s, uint32_t *cps) {
    size_t bad = 0;
    long n = utf8_decode(s, strlen(s), cps, &bad);
    EXPECT(n >= 0, "literal '%s' failed to decode at byte %zu", s, bad);
    return n < 0 ? 0 : (size_t)n;
}

static void test_utf8(void) {
    uint32_t cps[16];
    size_t n = decode("a\u00e9\u20ac\U0001F600", cps);
    EXPECT(n == 4 && cps[0] == 'a' && cps[1] == 0xE9 && cps[2] == 0x20AC && cps[3] == 0x1F600,
           "decoded %zu code points", n);
    char enc[4];
    EXPECT(utf8_encode(0x1F600, enc) == 4 && !memcmp(enc, "\xF0\x9F\x98\x80", 4), "encode 4-byte");
    EXPECT(utf8_encode(0x7FF, enc) == 2 && !memcmp(enc, "\xDF\xBF", 2), "encode 2-byte");

    /* Sequences Python's strict decoder rejects, and where. */
    const struct {
        const char *bytes;
        size_t bad_offset;
    } invalid[] = {
        {"ab\xC0\x80", 2},         /* overlong NUL */
        {"\xE0\x80\xAF", 0},       /* overlong '/' */
        {"x\xED\xA0\x80", 1},      /* UTF-16 surrogate */
        {"\xF4\x90\x80\x80", 0},   /* beyond U+10FFFF */
        {"abc\xE2\x82", 3},        /* truncated */
        {"\x80", 0},               /* stray continuation byte */
        {"ok\xFF", 2},
    };
    for (size_t i = 0; i < sizeof invalid / sizeof *invalid; i++) {
        size_t bad = 99;
        long r = utf8_decode(invalid[i].bytes, strlen(invalid[i].bytes), cps, &bad);
        EXPECT(r == -1 && bad == invalid[i].bad_offset,
               "invalid sequence %zu: got %ld at offset %zu, want -1 at %zu", i, r, bad,
               invalid[i].bad_offset);
    }
    n = utf8_decode_lenient("a\xFF" "b", 3, cps);
    EXPECT(n == 3 && cps[1] == 0xFFFD && cps[2] == 'b', "lenient decoding replaces bad bytes");
}

static void test_classes(void) {
    /* Every code point Python's str.split() separates on (str.isspace()). */
    const uint32_t spaces[] = {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20,
                               0x85, 0xA0, 0x1680, 0x2000, 0x2005, 0x200A, 0x2028, 0x2029,
                               0x202F, 0x205F, 0x3000};
    for (size_t i = 0; i < sizeof spaces / sizeof *spaces; i++)
        EXPECT(unicode_is_space(spaces[i]), "U+%04X should be whitespace", spaces[i]);
    const uint32_t not_spaces[] = {0x00, 0x08, 0x200B, 0xFEFF, 0x180E, 'a', 0x2060};
    for (size_t i = 0; i < sizeof not_spaces / sizeof *not_spaces; i++)
        EXPECT(!unicode_is_space(not_spaces[i]), "U+%04X should not be whitespace", not_spaces[i]);

    /* General categories (unicodedata.category). */
    const struct {
        uint32_t cp;
        char cat; /* 'P', 'S', 'N' or '-' for none of them */
    } cats[] = {{'!', 'P'}, {'-', 'P'}, {0x201E, 'P'}, {0x2013, 'P'}, {0xFF0C, 'P'},
                {0x2026, 'P'}, {'$', 'S'}, {'+', 'S'}, {0x20AC, 'S'}, {0x2122, 'S'},
                {0x1F600, 'S'}, {'^', 'S'}, {'7', 'N'}, {0xBD, 'N'}, {0x663, 'N'},
                {0xFF11, 'N'}, {0x216B, 'N'}, {'a', '-'}, {' ', '-'}, {0xE9, '-'},
                {0x0301, '-'}, {0x4E00, '-'}};
    for (size_t i = 0; i < sizeof cats / sizeof *cats; i++) {
        uint32_t c = cats[i].cp;
        char got = unicode_is_punct(c) ? 'P' : unicode_is_symbol(c) ? 'S'
                                              : unicode_is_number(c) ? 'N' : '-';
        EXPECT(got == cats[i].cat, "U+%04X: category %c, want %c", c, got, cats[i].cat);
    }
}

static void expect_lower(const char *in, const char *want) {
    uint32_t src[64], got[64 * UNICODE_LOWER_MAX_EXPANSION], exp[64];
    size_t n = decode(in, src), wn = decode(want, exp);
    size_t m = unicode_lower(src, n, got);
    EXPECT(m == wn && !memcmp(got, exp, m * sizeof *got), "lower('%s') differs from '%s'", in,
           want);
}

static void test_lower(void) {
    expect_lower("HeLLo ÀÉÎ ŸŹ", "hello àéî ÿź");
    /* U+0130 becomes two code points; capital sigma is final at the end of a word, also before
     * case-ignorable characters like the apostrophe or a combining accent. */
    expect_lower("İSTANBUL ΣΟΦΟΣ ΟΔΟΣ. Σ ΑΣ' ẞ Ǆ ǅ ΣΑΣ",
                 "i\u0307stanbul σοφος οδος. σ ας' ß ǆ ǆ σας");
    expect_lower("ΑΣ\u0301 ΑΣ\u0301Α", "ας\u0301 ασ\u0301α");
    expect_lower("Ωmega Ⅻ Ⓐ \U00010400 \u13F8", "ωmega ⅻ ⓐ \U00010428 \u13F8");
}

int main(void) {
    test_utf8();
    test_classes();
    test_lower();
    return test_finish();
}
