/* test_json.c: the growable string (kernels/strbuf.h) and the JSON writer and reader
 * (kernels/json.h): each writer style's exact bytes for quotes, backslashes, control characters,
 * non-ASCII and invalid UTF-8; the reader's paths, unescaping and grammar errors. */
#include <string.h>

#include "json.h"
#include "status.h"
#include "strbuf.h"
#include "test_util.h"

static void test_strbuf(void) {
    StrBuf b = {0};
    EXPECT(b.s == NULL && b.len == 0, "an empty StrBuf holds nothing");
    strbuf_add(&b, "");
    EXPECT(b.s && b.s[0] == '\0' && b.len == 0, "adding \"\" gives an empty string");
    for (int i = 0; i < 1000; i++) strbuf_addf(&b, "%d,", i % 10);
    EXPECT(b.len == 2000 && b.s[b.len] == '\0' && !strncmp(b.s, "0,1,2,", 6) &&
               !strcmp(b.s + 1994, "7,8,9,"),
           "1000 formatted pieces: len %zu", b.len);
    strbuf_addn(&b, "x\0y", 3);
    strbuf_addc(&b, '!');
    EXPECT(b.len == 2004 && !memcmp(b.s + 2000, "x\0y!", 5), "addn keeps NULs, addc one byte");
    strbuf_free(&b);
    EXPECT(b.s == NULL && b.len == 0 && b.cap == 0, "free empties the buffer");
}

/* The JSON text of s in style. */
static void expect_json(const char *s, unsigned style, const char *want) {
    StrBuf b = {0};
    json_add_string(&b, s, style);
    EXPECT(b.s && !strcmp(b.s, want), "style %u of [%s]: got [%s] want [%s]", style, s,
           b.s ? b.s : "(null)", want);
    strbuf_free(&b);
}

static void test_writer(void) {
    const char *controls = "a\"b\\c\n\r\t\b\f\x01\x1f\x7f";
    expect_json(controls, 0, "\"a\\\"b\\\\c\\u000a\\u000d\\u0009\\u0008\\u000c\\u0001\\u001f\x7f\"");
    expect_json(controls, JSON_ESCAPE_NEWLINE,
                "\"a\\\"b\\\\c\\n\\u000d\\u0009\\u0008\\u000c\\u0001\\u001f\x7f\"");
    expect_json(controls, JSON_ESCAPE_SHORT,
                "\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\"");
    expect_json(controls, JSON_ESCAPE_SHORT | JSON_ENSURE_ASCII,
                "\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\\u007f\"");
    expect_json("", 0, "\"\"");
    expect_json("/path/to", 0, "\"/path/to\"");

    const char *text = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";  // café € 😀
    expect_json(text, 0, "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"");
    expect_json(text, JSON_ENSURE_ASCII, "\"caf\\u00e9 \\u20ac \\ud83d\\ude00\"");

    const char *bad = "a\xFF" "b\xC3";  // a stray byte, a truncated sequence
    expect_json(bad, 0, "\"a\xFF" "b\xC3\"");
    expect_json(bad, JSON_REPLACE_INVALID, "\"a\xEF\xBF\xBD" "b\xEF\xBF\xBD\"");
    expect_json(bad, JSON_REPLACE_INVALID | JSON_ENSURE_ASCII, "\"a\\ufffdb\\ufffd\"");
    expect_json(bad, JSON_ENSURE_ASCII, "\"a\xFF" "b\xC3\"");
}

/* The string at path in doc, or NULL (the status message then goes to *err). */
static char *get(const char *doc, const char *path) {
    char *out = (char *)"unset";
    int rc = json_get_string(doc, strlen(doc), path, &out);
    EXPECT((rc == 0) == (out != NULL), "%s: rc %d disagrees with the output", path, rc);
    return rc == 0 ? out : NULL;
}

static void expect_get(const char *doc, const char *path, const char *want) {
    char *got = get(doc, path);
    EXPECT(got && !strcmp(got, want), "%s in [%s]: got [%s] want [%s] (%s)", path, doc,
           got ? got : "(null)", want, got ? "" : status_message());
    free(got);
}

static void expect_error(const char *doc, const char *path, const char *message_part) {
    char *got = get(doc, path);
    EXPECT(!got && strstr(status_message(), message_part),
           "%s in [%s]: want an error with [%s], got [%s] / [%s]", path, doc, message_part,
           got ? got : "(null)", status_message());
    free(got);
}

static void test_reader(void) {
    const char *doc =
        "{\n  \"format\": \"m\", \"version\": 1,\n"
        "  \"config\": {\"data.vocab_size\": 8000, \"data.max_len_ratio\": -1.5e+3, \"x\": null},\n"
        "  \"spm\": {\"file\": \"spm.model\", \"fingerprint\": \"00ff\", \"reused\": false},\n"
        "  \"splits\": {\"train\": {\"corpora\": [{\"src\": \"a\\\\b\"}, [], [1, true]]}},\n"
        "  \"fingerprint\": \"top\"\n}\n";
    expect_get(doc, "format", "m");
    expect_get(doc, "spm.fingerprint", "00ff");
    expect_get(doc, "fingerprint", "top");
    expect_error(doc, "spm.missing", "no string at 'spm.missing'");
    expect_error(doc, "version", "no string at 'version'");
    expect_error(doc, "spm", "no string at 'spm'");
    expect_get("{\"k\": \"\"}", "k", "");
    expect_get("{\"k\": \"q\\\"b\\\\s\\/n\\nt\\tu\\u00e9\\ud83d\\ude00\"}", "k",
               "q\"b\\s/n\nt\tu\xC3\xA9\xF0\x9F\x98\x80");
    expect_get("{\"k\": \"raw \xC3\xA9\"}", "k", "raw \xC3\xA9");
    expect_get("{\"a.b\": \"no\", \"a\": {\"b\": \"yes\"}}", "a.b", "yes");

    /* What the writer writes reads back as it was. */
    const char *tricky = "q\"b\\s\n\x01 caf\xC3\xA9 \xF0\x9F\x98\x80";
    unsigned styles[] = {0, JSON_ESCAPE_NEWLINE, JSON_ESCAPE_SHORT, JSON_ENSURE_ASCII};
    for (int i = 0; i < 4; i++) {
        StrBuf b = {0};
        strbuf_add(&b, "{\"v\": ");
        json_add_string(&b, tricky, styles[i]);
        strbuf_add(&b, "}");
        expect_get(b.s, "v", tricky);
        strbuf_free(&b);
    }

    expect_error("", "k", "not valid JSON");
    expect_error("{\"k\": \"v\"", "k", "not valid JSON");
    expect_error("{\"k\": \"v\",}", "k", "not valid JSON at byte 11");
    expect_error("{\"k\": \"v\"} x", "k", "expected the end of the document");
    expect_error("{\"k\": \"a\nb\"}", "k", "control character");
    expect_error("{\"k\": \"\\x\"}", "k", "not valid JSON at byte 9");
    expect_error("{\"k\": \"\\ud800\"}", "k", "surrogate");
    expect_error("{\"k\": 01}", "k", "not valid JSON");
    expect_error("{\"k\": tru}", "k", "expected a value");
    expect_error("{k: \"v\"}", "k", "expected a string as the key");
    expect_error("{\"k\" \"v\"}", "k", "expected ':'");
    expect_error("{\"n\": [1 2], \"k\": \"v\"}", "k", "expected ',' or ']'");
    char deep[2100];
    memset(deep, '[', 2000), deep[2000] = '\0';
    expect_error(deep, "k", "nesting is too deep");
}

/* json_each's record of what it met: "key=value;" per member ("-" for an array's elements). */
static int record(void *ctx, const char *key, const char *value, size_t n) {
    StrBuf *b = ctx;
    strbuf_addf(b, "%s=%.*s;", key ? key : "-", (int)n, value);
    return strstr(b->s, "stop") ? status_fail("stopped at %s", key) : 0;
}

static void test_each(void) {
    StrBuf b = {0};
    const char *doc = " {\"a.b\" : [1, 2] ,\"c\\n\":{\"d\":\"x\"}, \"e\":-1.5e3} ";
    EXPECT(json_each(doc, strlen(doc), record, &b) == 0 &&
               !strcmp(b.s, "a.b=[1, 2];c\n={\"d\":\"x\"};e=-1.5e3;"),
           "members with their raw values: %s", b.s);
    b.len = 0;
    EXPECT(json_each("[1,\"s\",[]]", 10, record, &b) == 0 && !strcmp(b.s, "-=1;-=\"s\";-=[];"),
           "array elements: %s", b.s);
    b.len = 0;
    EXPECT(json_each("{}", 2, record, &b) == 0 && b.len == 0, "an empty object");
    EXPECT(json_each("{\"a\":1,}", 8, record, &b) == -1 && strstr(status_message(), "byte 8"),
           "a syntax error is reported before any member: %s", status_message());
    EXPECT(b.len == 0, "no member was met");
    EXPECT(json_each("\"s\"", 3, record, &b) == -1, "a string is neither object nor array");
    EXPECT(json_each("{\"stop\":1,\"z\":2}", 16, record, &b) == -1 &&
               !strcmp(status_message(), "stopped at stop") && !strstr(b.s, "z="),
           "the callback stops the walk: %s", b.s);
    strbuf_free(&b);
}

int main(void) {
    test_strbuf();
    test_each();
    test_writer();
    test_reader();
    return test_finish();
}
