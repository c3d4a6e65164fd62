/* utf8.h: the one UTF-8 decoder and encoder. Decoding is strict, as Python's: overlong forms,
 * surrogates (U+D800..U+DFFF), code points past U+10FFFF, stray continuation bytes and truncated
 * sequences are invalid. Used by the cleaner (data/clean.c), the scorer (data/eval), the SGM
 * entity decoder (data/text.c) and the JSON writer (json.h). */
#ifndef NMT_UTF8_H
#define NMT_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The valid sequence at s[0 .. len) (len > 0): its length 1..4 with its code point in *cp, or 0
 * if the bytes there do not start a valid sequence. */
int utf8_next(const char *s, size_t len, uint32_t *cp);

/* Whether s[0 .. len) is valid UTF-8; if not, *bad_offset is the byte offset of the first invalid
 * sequence. */
bool utf8_valid(const char *s, size_t len, size_t *bad_offset);

/* Decodes len bytes into out (capacity len code points). Returns the number of code points, or
 * -1 with *bad_offset set to the byte offset of the first invalid sequence. */
long utf8_decode(const char *s, size_t len, uint32_t *out, size_t *bad_offset);
/* Like utf8_decode, but replaces every byte that starts no valid sequence with U+FFFD. */
size_t utf8_decode_lenient(const char *s, size_t len, uint32_t *out);

/* Writes the UTF-8 encoding of cp (at most 4 bytes, no NUL) to out; returns the byte count. */
int utf8_encode(uint32_t cp, char *out);

#endif
