/* test_utf8.c: the one UTF-8 decoder and encoder (kernels/utf8.h): round trips over every scalar
 * value, Python's strict rejections (overlong, surrogates, past U+10FFFF, stray and truncated
 * bytes), the lenient form's U+FFFD, and exhaustive agreement on all 1- to 3-byte inputs with
 * the definition (decode by bit pattern, then reject overlong forms, surrogates and
 * out-of-range values), and utf8_valid on the same cases. */
#include <string.h>

#include "test_util.h"
#include "utf8.h"

/* The definition, written the other way round: decode by bit pattern, then check the value. */
static int reference_next(const unsigned char *s, size_t n, uint32_t *cp) {
    unsigned char c = s[0];
    int len;
    uint32_t min;
    if (c < 0x80) return *cp = c, 1;
    if ((c & 0xE0) == 0xC0) len = 2, min = 0x80, *cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, min = 0x800, *cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, min = 0x10000, *cp = c & 0x07;
    else return 0;
    if (n < (size_t)len) return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        *cp = (*cp << 6) | (s[i] & 0x3F);
    }
    if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return 0;
    return len;
}

static void test_round_trip(void) {
    long bad = 0;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        char enc[4];
        int n = utf8_encode(cp, enc);
        uint32_t back = 0;
        int want = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        if (n != want || utf8_next(enc, (size_t)n, &back) != n || back != cp) bad++;
    }
    EXPECT(bad == 0, "%ld scalar values do not round-trip", bad);
}

static void test_against_reference(void) {
    long bad = 0;
    unsigned char s[4];
    for (unsigned a = 0; a < 256; a++)
        for (unsigned b = 0; b < 256; b++)
            for (unsigned c = 0; c < 256; c++)
                for (size_t n = 1; n <= 4; n++) {
                    s[0] = (unsigned char)a, s[1] = (unsigned char)b, s[2] = (unsigned char)c;
                    s[3] = 0x80;
                    uint32_t x = 0, y = 0;
                    int k = utf8_next((const char *)s, n, &x), r = reference_next(s, n, &y);
                    if (k != r || (k && x != y)) {
                        if (bad++ < 5)
                            fprintf(stderr, "  %02X %02X %02X (n %zu): %d/%X vs %d/%X\n", a, b, c,
                                    n, k, x, r, y);
                    }
                }
    EXPECT(bad == 0, "%ld inputs decode differently from the definition", bad);
}

static void test_invalid(void) {
    const struct {
        const char *bytes;
        size_t bad_offset;
    } invalid[] = {
        {"ab\x80", 2},              // stray continuation byte
        {"\xC0\xAF", 0},            // overlong '/'
        {"x\xE0\x80\xAF", 1},       // overlong, 3 bytes
        {"\xED\xA0\x80", 0},        // surrogate U+D800
        {"\xF4\x90\x80\x80", 0},    // U+110000
        {"\xF5\x80\x80\x80", 0},    // lead byte past F4
        {"ok\xE2\x82", 2},          // truncated
        {"\xC3(", 0},               // bad continuation
    };
    uint32_t cps[8];
    size_t at;
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        at = 99;
        long r = utf8_decode(invalid[i].bytes, strlen(invalid[i].bytes), cps, &at);
        EXPECT(r == -1 && at == invalid[i].bad_offset, "invalid case %zu: %ld at %zu", i, r, at);
        at = 99;
        EXPECT(!utf8_valid(invalid[i].bytes, strlen(invalid[i].bytes), &at) &&
                   at == invalid[i].bad_offset,
               "utf8_valid, invalid case %zu: at %zu", i, at);
    }
    EXPECT(utf8_valid("", 0, &at) && utf8_valid("a\xC3\xA4\xF0\x9F\x98\x80", 7, &at),
           "utf8_valid accepts the empty string and valid text");
    size_t n = utf8_decode_lenient("a\xE2\x82" "b\xF0\x9F\x98\x80", 8, cps);
    EXPECT(n == 5 && cps[0] == 'a' && cps[1] == 0xFFFD && cps[2] == 0xFFFD && cps[3] == 'b' &&
               cps[4] == 0x1F600,
           "lenient: every byte that starts no sequence is one U+FFFD (%zu code points)", n);
    EXPECT(utf8_decode("", 0, cps, &at) == 0, "the empty string has no code points");
}

int main(void) {
    test_round_trip();
    test_against_reference();
    test_invalid();
    return test_finish();
}
