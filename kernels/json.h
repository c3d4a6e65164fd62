/* json.h: JSON strings in and out. The writer appends one string value, quoted and escaped, in
 * one of the styles the project's outputs use (so each keeps its bytes); the reader checks a
 * whole document against the JSON grammar (RFC 8259) and fetches one string value by its path
 * of object keys, or walks the members of its top-level object or array. Used for the prepare manifest, the safetensors header, the scorer's JSON
 * output and the JSON the commands print. */
#ifndef NMT_JSON_H
#define NMT_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "strbuf.h"

/* Writer styles, or-ed. Style 0: '"' and '\\' get a backslash, every other control character
 * (below 0x20) is \u00XX (lower-case hex), all other bytes are copied as they are. */
enum {
    JSON_ESCAPE_NEWLINE = 1,   // "\n" as \n (other control characters stay \u00XX)
    JSON_ESCAPE_SHORT = 2,     // \b \f \n \r \t as two-character escapes, as Python's json.dumps
    JSON_ENSURE_ASCII = 4,     // every code point past U+007E as \uXXXX (UTF-16 pairs past U+FFFF)
    JSON_REPLACE_INVALID = 8,  // a byte that starts no valid UTF-8 sequence becomes U+FFFD
};

/* Appends s (NUL-terminated) to b as a quoted JSON string in the given style. */
void json_add_string(StrBuf *b, const char *s, unsigned style);
/* The same, written to f. */
void json_print_string(FILE *f, const char *s, unsigned style);

/* The string at path in the JSON document doc[0 .. len): path is a dot-separated chain of object
 * keys from the top-level object ("spm.fingerprint"). Returns 0 with *out set to the unescaped
 * value (xmalloc'd, NUL-terminated); -1 with status_message() set if the document is not valid
 * JSON (naming the byte offset) or holds no string at path. */
int json_get_string(const char *doc, size_t len, const char *path, char **out);

/* Called by json_each for each member of an object (key unescaped, NUL-terminated) or element of
 * an array (key NULL), with the member's raw JSON text value[0 .. n); returns 0 to go on, or -1
 * (after status_fail) to stop. */
typedef int (*JsonEachFn)(void *ctx, const char *key, const char *value, size_t n);
/* Checks the document doc[0 .. len) against the grammar, then calls fn for each member of its
 * top-level object or element of its top-level array, in document order. Returns 0; -1 with
 * status_message() set if the document is not valid JSON, is neither an object nor an array, or
 * fn returned -1. */
int json_each(const char *doc, size_t len, JsonEachFn fn, void *ctx);

#endif
