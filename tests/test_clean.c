/* test_clean.c: whitespace normalization, UTF-8 validation, control characters, every drop
 * reason of the train filter, and the duplicate set at scale. Expected outputs are written out by
 * hand from the rules in clean.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clean.h"
#include "test_util.h"

typedef struct NormCase {
    const char *in;
    const char *out;  // expected text (for CLEAN_INVALID_UTF8: unused)
    CleanStatus status;
    size_t bad_offset;  // for CLEAN_INVALID_UTF8
} NormCase;

static void test_normalize(void) {
    static const NormCase cases[] = {
        {"plain text", "plain text", CLEAN_OK, 0},
        {"  lead and trail  ", "lead and trail", CLEAN_OK, 0},
        {"a \t\t b\r", "a b", CLEAN_OK, 0},
        {"a\vb\fc\x1c" "d\x1f" "e", "a b c d e", CLEAN_OK, 0},       // Python's isspace set
        {"x\xC2\xA0\xC2\xA0y", "x y", CLEAN_OK, 0},                  // U+00A0 NBSP
        {"\xE3\x80\x80" "a\xE2\x80\x89" "b\xE2\x80\xAF", "a b", CLEAN_OK, 0},  // U+3000 2009 202F
        {"a\xC2\x85" "b", "a b", CLEAN_OK, 0},                        // U+0085 NEL
        {"a\xE2\x80\xA8" "b\xE2\x80\xA9" "c", "a b c", CLEAN_OK, 0},  // U+2028 U+2029
        {"a\xE1\x9A\x80" "b\xE2\x81\x9F" "c", "a b c", CLEAN_OK, 0},  // U+1680 U+205F
        {"a\xE2\x96\x81" "b", "a b", CLEAN_OK, 0},                    // U+2581 (SentencePiece)
        {"zero\xE2\x80\x8Bwidth soft\xC2\xAD" "hyphen",          // U+200B, U+00AD are kept
         "zero\xE2\x80\x8Bwidth soft\xC2\xAD" "hyphen", CLEAN_OK, 0},
        {"Gr\xC3\xBC\xC3\x9F" "e \xF0\x9F\x98\x80", "Gr\xC3\xBC\xC3\x9F" "e \xF0\x9F\x98\x80",
         CLEAN_OK, 0},
        {" \t \xC2\xA0 ", "", CLEAN_OK, 0},
        {"", "", CLEAN_OK, 0},
        {"bell\x07 here", "bell\x07 here", CLEAN_HAS_CONTROL, 0},
        {"del\x7f", "del\x7f", CLEAN_HAS_CONTROL, 0},
        {"c1 \xC2\x93quote\xC2\x94  x", "c1 \xC2\x93quote\xC2\x94 x", CLEAN_HAS_CONTROL, 0},
        {"esc\x1b", "esc\x1b", CLEAN_HAS_CONTROL, 0},
        {"trunc \xC3", NULL, CLEAN_INVALID_UTF8, 6},
        {"ab\xC0\xAF", NULL, CLEAN_INVALID_UTF8, 2},                 // overlong '/'
        {"ab\xE0\x80\xAF", NULL, CLEAN_INVALID_UTF8, 2},             // overlong, 3 bytes
        {"s\xED\xA0\x80", NULL, CLEAN_INVALID_UTF8, 1},              // surrogate U+D800
        {"big\xF4\x90\x80\x80", NULL, CLEAN_INVALID_UTF8, 3},        // U+110000
        {"\x80stray", NULL, CLEAN_INVALID_UTF8, 0},
        {"  x \xF8\x88\x80\x80\x80", NULL, CLEAN_INVALID_UTF8, 4},   // 5-byte form
        {"ok \xE2\x82 x", NULL, CLEAN_INVALID_UTF8, 3},              // truncated 3-byte form
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const NormCase *c = &cases[i];
        size_t len = strlen(c->in);
        char *buf = malloc(len + 1);
        memcpy(buf, c->in, len + 1);
        CleanStatus st = clean_normalize(buf, &len);
        EXPECT(st == c->status, "case %zu [%s]: status %d, want %d", i, c->in, st, c->status);
        if (c->status == CLEAN_INVALID_UTF8) {
            EXPECT(len == c->bad_offset, "case %zu: invalid at %zu, want %zu", i, len,
                   c->bad_offset);
        } else {
            EXPECT(len == strlen(c->out) && !memcmp(buf, c->out, len) && buf[len] == '\0',
                   "case %zu [%s]: got [%.*s] want [%s]", i, c->in, (int)len, buf, c->out);
        }
        free(buf);
    }
}

/* Runs clean_train_pair on copies of src and tgt. */
static DropReason train_pair(PairDedup *seen, const char *src, const char *tgt) {
    char a[256], b[256];
    snprintf(a, sizeof a, "%s", src);
    snprintf(b, sizeof b, "%s", tgt);
    size_t na = strlen(a), nb = strlen(b);
    return clean_train_pair(seen, a, &na, b, &nb);
}

static void test_train_reasons(void) {
    PairDedup seen;
    dedup_init(&seen);
    static const struct {
        const char *src, *tgt;
        DropReason want;
    } pairs[] = {
        {"a house", "ein Haus", KEEP_PAIR},
        {"a  house ", "ein\tHaus", DROP_DUPLICATE},   // equal after normalization
        {"ein Haus", "a house", KEEP_PAIR},           // swapped sides are a different pair
        {"ab", "c", KEEP_PAIR},
        {"a", "bc", KEEP_PAIR},                       // same bytes, other split
        {"bad \xC3", "gut", DROP_INVALID_UTF8},
        {"bad \xC3\x07", "gut", DROP_INVALID_UTF8},   // invalid wins over control
        {"ctl\x01", "gut", DROP_CONTROL_CHAR},
        {"ok", "ctl\xC2\x80", DROP_CONTROL_CHAR},
        {"  ", "nicht leer", DROP_EMPTY},
        {"not empty", "\xC2\xA0", DROP_EMPTY},
        {"", "", DROP_EMPTY},
        {"ctl\x01", "", DROP_CONTROL_CHAR},           // control wins over empty
        {"ab", "c", DROP_DUPLICATE},
        {"a house", "ein Haus", DROP_DUPLICATE},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        DropReason got = train_pair(&seen, pairs[i].src, pairs[i].tgt);
        EXPECT(got == pairs[i].want, "pair %zu (%s | %s): %s, want %s", i, pairs[i].src,
               pairs[i].tgt, drop_reason_name(got), drop_reason_name(pairs[i].want));
    }
    dedup_free(&seen);
}

static void test_lengths(void) {
    LengthLimits lim = {.min_len = 2, .max_len = 10, .max_ratio = 1.5};
    static const struct {
        int ns, nt;
        DropReason want;
    } cases[] = {
        {2, 3, KEEP_PAIR},     {1, 5, DROP_TOO_SHORT},  {5, 1, DROP_TOO_SHORT},
        {10, 10, KEEP_PAIR},   {11, 10, DROP_TOO_LONG}, {1, 11, DROP_TOO_SHORT},
        {10, 15, DROP_TOO_LONG}, {4, 6, KEEP_PAIR},     {4, 7, DROP_LENGTH_RATIO},
        {7, 4, DROP_LENGTH_RATIO}, {6, 9, KEEP_PAIR},   {2, 4, DROP_LENGTH_RATIO},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        DropReason got = clean_check_lengths(&lim, cases[i].ns, cases[i].nt);
        EXPECT(got == cases[i].want, "lengths (%d, %d): %s, want %s", cases[i].ns, cases[i].nt,
               drop_reason_name(got), drop_reason_name(cases[i].want));
    }
    LengthLimits none = {.min_len = 1, .max_len = 0, .max_ratio = 0};
    EXPECT(clean_check_lengths(&none, 1, 5000) == KEEP_PAIR, "0 must disable max_len and ratio");
    EXPECT(clean_check_lengths(&none, 0, 3) == DROP_TOO_SHORT, "min_len 1 drops empty sides");
}

static void test_dedup_scale(void) {
    // 200k distinct pairs across many table growths: none is a duplicate; then all are.
    PairDedup seen;
    dedup_init(&seen);
    enum { N = 200000 };
    long false_dups = 0, missed_dups = 0;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            char src[32], tgt[32];
            snprintf(src, sizeof src, "sentence %d", i);
            snprintf(tgt, sizeof tgt, "Satz %d", i % 1000);
            DropReason r = train_pair(&seen, src, tgt);
            if (round == 0) false_dups += r != KEEP_PAIR;
            if (round == 1) missed_dups += r != DROP_DUPLICATE;
        }
    }
    EXPECT(false_dups == 0, "%ld distinct pairs flagged as duplicates", false_dups);
    EXPECT(missed_dups == 0, "%ld repeated pairs not flagged", missed_dups);
    EXPECT(seen.count == N, "set holds %zu pairs, want %d", seen.count, N);
    dedup_free(&seen);
}

int main(void) {
    test_normalize();
    test_train_reasons();
    test_lengths();
    test_dedup_scale();
    return test_finish();
}
