/* unicode.h: the slice of Unicode that sacreBLEU's text processing depends on, as Python sees it.
 * UTF-8 decoding and encoding (the strict, Python-compatible decoder of kernels/utf8.h, included
 * here), Python's whitespace (str.split, str.rstrip), the general categories
 * P, S and N (the `intl` tokenizer), and str.lower() with its multi-code-point results and the
 * Final_Sigma rule. The tables live in the generated unicode_tables.c (its header names the
 * Unicode version). */
#ifndef NMT_UNICODE_H
#define NMT_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "utf8.h"

/* str.lower() turns one code point into at most this many. */
#define UNICODE_LOWER_MAX_EXPANSION 3

typedef struct UnicodeRange {
    uint32_t lo, hi; /* inclusive */
} UnicodeRange;

/* Every stride-th code point from lo to hi lowercases to cp + delta. */
typedef struct UnicodeLowerRun {
    uint32_t lo, hi;
    int32_t stride, delta;
} UnicodeLowerRun;

/* A code point whose lowercase is several code points (U+0130 -> "i\u0307"). */
typedef struct UnicodeLowerSpecial {
    uint32_t cp;
    int n;
    uint32_t lower[UNICODE_LOWER_MAX_EXPANSION];
} UnicodeLowerSpecial;

bool unicode_is_space(uint32_t cp);
bool unicode_is_punct(uint32_t cp);  /* \p{P} */
bool unicode_is_symbol(uint32_t cp); /* \p{S} */
bool unicode_is_number(uint32_t cp); /* \p{N} */

/* Python's str.lower() of in[0..n) into out (capacity n * UNICODE_LOWER_MAX_EXPANSION);
 * returns the output length. */
size_t unicode_lower(const uint32_t *in, size_t n, uint32_t *out);

/* The generated tables (unicode_tables.c). */
extern const UnicodeRange unicode_space_ranges[], unicode_punct_ranges[],
    unicode_symbol_ranges[], unicode_number_ranges[], unicode_case_ignorable_ranges[],
    unicode_cased_ranges[];
extern const int unicode_space_ranges_count, unicode_punct_ranges_count,
    unicode_symbol_ranges_count, unicode_number_ranges_count,
    unicode_case_ignorable_ranges_count, unicode_cased_ranges_count;
extern const UnicodeLowerRun unicode_lower_runs[];
extern const int unicode_lower_runs_count;
extern const UnicodeLowerSpecial unicode_lower_specials[];
extern const int unicode_lower_specials_count;

#endif
