/* json.c: the JSON string writer and the validating path reader of json.h. */
#include "json.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "status.h"
#include "utf8.h"

/* ---- writing ---- */

static void add_code_unit(StrBuf *b, uint32_t u) { strbuf_addf(b, "\\u%04x", (unsigned)u); }

void json_add_string(StrBuf *b, const char *s, unsigned style) {
    bool short_escapes = style & JSON_ESCAPE_SHORT;
    bool decode = style & (JSON_ENSURE_ASCII | JSON_REPLACE_INVALID);
    strbuf_addc(b, '"');
    for (size_t i = 0, n = strlen(s); i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            i++;
            const char *esc = NULL;
            if (c == '"') esc = "\\\"";
            else if (c == '\\') esc = "\\\\";
            else if (c == '\n' && (style & (JSON_ESCAPE_NEWLINE | JSON_ESCAPE_SHORT))) esc = "\\n";
            else if (short_escapes && c == '\r') esc = "\\r";
            else if (short_escapes && c == '\t') esc = "\\t";
            else if (short_escapes && c == '\b') esc = "\\b";
            else if (short_escapes && c == '\f') esc = "\\f";
            if (esc) strbuf_add(b, esc);
            else if (c < 0x20 || (c == 0x7F && (style & JSON_ENSURE_ASCII))) add_code_unit(b, c);
            else strbuf_addc(b, (char)c);
            continue;
        }
        uint32_t cp;
        int k = decode ? utf8_next(s + i, n - i, &cp) : 0;
        if (!decode || (k == 0 && !(style & JSON_REPLACE_INVALID))) {
            strbuf_addc(b, (char)c);  // copied as it is
            i++;
            continue;
        }
        if (k == 0) cp = 0xFFFD, k = 1;
        if (!(style & JSON_ENSURE_ASCII)) {
            char enc[4];
            strbuf_addn(b, enc, (size_t)utf8_encode(cp, enc));
        } else if (cp <= 0xFFFF) {
            add_code_unit(b, cp);
        } else {
            add_code_unit(b, 0xD800 + ((cp - 0x10000) >> 10));
            add_code_unit(b, 0xDC00 + ((cp - 0x10000) & 0x3FF));
        }
        i += (size_t)k;
    }
    strbuf_addc(b, '"');
}

void json_print_string(FILE *f, const char *s, unsigned style) {
    StrBuf b = {0};
    json_add_string(&b, s, style);
    fwrite(b.s, 1, b.len, f);
    strbuf_free(&b);
}

/* ---- reading ---- */

enum { MAX_DEPTH = 512 };

typedef struct Reader {
    const char *s;
    size_t len, pos;
    int depth;
    bool failed;   // a syntax error was reported
    bool found;    // *value holds the string at the path
    StrBuf value;  // the string at the path, unescaped
} Reader;

static bool syntax_error(Reader *r, const char *what) {
    if (!r->failed) {
        if (r->pos < r->len)
            status_fail("not valid JSON at byte %zu: %s", r->pos + 1, what);
        else
            status_fail("not valid JSON: the document ends where %s", what);
    }
    r->failed = true;
    return false;
}

static void skip_space(Reader *r) {
    while (r->pos < r->len && strchr(" \t\r\n", r->s[r->pos]) && r->s[r->pos]) r->pos++;
}

static bool at(Reader *r, char c) { return r->pos < r->len && r->s[r->pos] == c; }

static int hex4(Reader *r) {
    if (r->len - r->pos < 4) return -1;
    int v = 0;
    for (int k = 0; k < 4; k++) {
        char c = r->s[r->pos + (size_t)k];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return -1;
        v = 16 * v + d;
    }
    r->pos += 4;
    return v;
}

/* A string at r->pos (the opening quote); its unescaped bytes go to out when out is not NULL. */
static bool read_string(Reader *r, StrBuf *out) {
    r->pos++;  // '"'
    for (;;) {
        if (r->pos >= r->len) return syntax_error(r, "a string is still open");
        unsigned char c = (unsigned char)r->s[r->pos];
        if (c == '"') {
            r->pos++;
            if (out) strbuf_addn(out, "", 0);  // "" reads back as an empty, non-NULL string
            return true;
        }
        if (c < 0x20) return syntax_error(r, "a control character must be escaped in a string");
        if (c != '\\') {
            if (out) strbuf_addc(out, (char)c);
            r->pos++;
            continue;
        }
        r->pos++;
        if (r->pos >= r->len) return syntax_error(r, "an escape is still open");
        char e = r->s[r->pos++];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            static const char unescaped[] = "\"\\/\b\f\n\r\t";
            if (out) strbuf_addc(out, unescaped[simple - "\"\\/bfnrt"]);
            continue;
        }
        if (e != 'u') {
            r->pos--;
            return syntax_error(r, "expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
        }
        int u = hex4(r);
        if (u < 0) return syntax_error(r, "expected four hex digits after \\u");
        uint32_t cp = (uint32_t)u;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return syntax_error(r, "a lone low surrogate");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (r->len - r->pos < 2 || r->s[r->pos] != '\\' || r->s[r->pos + 1] != 'u')
                return syntax_error(r, "a high surrogate must be followed by a low one");
            r->pos += 2;
            int lo = hex4(r);
            if (lo < 0xDC00 || lo > 0xDFFF)
                return syntax_error(r, "a high surrogate must be followed by a low one");
            cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
        }
        char enc[4];
        if (out) strbuf_addn(out, enc, (size_t)utf8_encode(cp, enc));
    }
}

static bool read_digits(Reader *r) {
    size_t start = r->pos;
    while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9') r->pos++;
    return r->pos > start || syntax_error(r, "expected a digit");
}

static bool read_number(Reader *r) {
    if (at(r, '-')) r->pos++;
    if (at(r, '0')) r->pos++;
    else if (!read_digits(r)) return false;
    if (at(r, '.')) {
        r->pos++;
        if (!read_digits(r)) return false;
    }
    if (at(r, 'e') || at(r, 'E')) {
        r->pos++;
        if (at(r, '+') || at(r, '-')) r->pos++;
        if (!read_digits(r)) return false;
    }
    return true;
}

static bool read_value(Reader *r, const char *path);

/* An object at r->pos; path (NULL when not looking) is the key chain still to follow. */
static bool read_object(Reader *r, const char *path) {
    r->pos++;  // '{'
    skip_space(r);
    if (at(r, '}')) {
        r->pos++;
        return true;
    }
    size_t want = path ? strcspn(path, ".") : 0;
    StrBuf key = {0};
    bool ok = true;
    for (;;) {
        skip_space(r);
        if (!at(r, '"')) {
            ok = syntax_error(r, "expected a string as the key");
            break;
        }
        key.len = 0;
        if (!(ok = read_string(r, &key))) break;
        skip_space(r);
        if (!at(r, ':')) {
            ok = syntax_error(r, "expected ':' after the key");
            break;
        }
        r->pos++;
        bool match = path && !r->found && key.len == want && !memcmp(key.s, path, want);
        const char *rest = match ? (path[want] ? path + want + 1 : "") : NULL;
        if (!(ok = read_value(r, rest))) break;
        skip_space(r);
        if (at(r, ',')) {
            r->pos++;
            continue;
        }
        if (!at(r, '}')) ok = syntax_error(r, "expected ',' or '}' in an object");
        else r->pos++;
        break;
    }
    strbuf_free(&key);
    return ok;
}

static bool read_array(Reader *r) {
    r->pos++;  // '['
    skip_space(r);
    if (at(r, ']')) {
        r->pos++;
        return true;
    }
    for (;;) {
        if (!read_value(r, NULL)) return false;
        skip_space(r);
        if (at(r, ',')) {
            r->pos++;
            continue;
        }
        if (!at(r, ']')) return syntax_error(r, "expected ',' or ']' in an array");
        r->pos++;
        return true;
    }
}

static bool read_literal(Reader *r, const char *word) {
    size_t n = strlen(word);
    if (r->len - r->pos < n || memcmp(r->s + r->pos, word, n))
        return syntax_error(r, "expected a value");
    r->pos += n;
    return true;
}

/* A value at r->pos; path: NULL when not looking, "" when this value is the one looked for, else
 * the keys still to follow. */
static bool read_value(Reader *r, const char *path) {
    skip_space(r);
    if (r->pos >= r->len) return syntax_error(r, "a value was expected");
    if (++r->depth > MAX_DEPTH) return syntax_error(r, "nesting is too deep");
    bool wanted = path && !*path, ok;
    char c = r->s[r->pos];
    if (c == '"') {
        ok = read_string(r, wanted ? &r->value : NULL);
        r->found |= ok && wanted;
    } else if (c == '{') {
        ok = read_object(r, wanted ? NULL : path);
    } else if (c == '[') {
        ok = read_array(r);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        ok = read_number(r);
    } else {
        ok = read_literal(r, c == 't' ? "true" : c == 'f' ? "false" : "null");
    }
    r->depth--;
    return ok;
}

int json_get_string(const char *doc, size_t len, const char *path, char **out) {
    Reader r = {.s = doc, .len = len};
    *out = NULL;
    bool ok = read_value(&r, path);
    if (ok) {
        skip_space(&r);
        if (r.pos < r.len) ok = syntax_error(&r, "expected the end of the document");
    }
    if (ok && !r.found) {
        status_fail("no string at '%s'", path);
        ok = false;
    }
    if (!ok) {
        strbuf_free(&r.value);
        return -1;
    }
    *out = r.value.s;
    return 0;
}

int json_each(const char *doc, size_t len, JsonEachFn fn, void *ctx) {
    Reader r = {.s = doc, .len = len};
    bool ok = read_value(&r, NULL);
    if (ok) {
        skip_space(&r);
        if (r.pos < r.len) ok = syntax_error(&r, "expected the end of the document");
    }
    if (!ok) return -1;
    r.pos = 0;
    skip_space(&r);
    bool object = at(&r, '{');
    if (!object && !at(&r, '[')) return status_fail("not a JSON object or array");
    // the document is valid: walk its top level without further error checks
    StrBuf key = {0};
    int rc = 0;
    r.pos++;
    for (skip_space(&r); rc == 0 && !at(&r, '}') && !at(&r, ']'); skip_space(&r)) {
        if (object) {
            key.len = 0;
            read_string(&r, &key);
            skip_space(&r);
            r.pos++;  // ':'
            skip_space(&r);
        }
        size_t start = r.pos;
        read_value(&r, NULL);
        rc = fn(ctx, object ? key.s : NULL, doc + start, r.pos - start);
        skip_space(&r);
        if (at(&r, ',')) r.pos++;
    }
    strbuf_free(&key);
    return rc;
}
