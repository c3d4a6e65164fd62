/* clean.c: UTF-8 validation, whitespace normalization, duplicate detection and the length
 * filters of clean.h. */
#include "clean.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hash.h"
#include "utf8.h"

static const char *const drop_reason_names[DROP_REASONS] = {
    [KEEP_PAIR] = "kept",
    [DROP_INVALID_UTF8] = "invalid_utf8",
    [DROP_CONTROL_CHAR] = "control_char",
    [DROP_EMPTY] = "empty",
    [DROP_DUPLICATE] = "duplicate",
    [DROP_TOO_SHORT] = "too_short",
    [DROP_TOO_LONG] = "too_long",
    [DROP_LENGTH_RATIO] = "length_ratio",
};

const char *drop_reason_name(DropReason reason) { return drop_reason_names[reason]; }

static bool is_space(uint32_t cp) {
    if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
    return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 ||
           cp == 0x2581;
}

static bool is_control(uint32_t cp) {  // called only on non-whitespace code points
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

CleanStatus clean_normalize(char *text, size_t *len) {
    unsigned char *s = (unsigned char *)text;
    size_t n = *len, in = 0, out = 0;
    bool control = false, space_pending = false;
    while (in < n) {
        uint32_t cp = s[in];
        int width = 1;
        if (cp >= 0x80 && !(width = utf8_next(text + in, n - in, &cp))) {
            *len = in;
            return CLEAN_INVALID_UTF8;
        }
        if (is_space(cp)) {
            space_pending = out > 0;  // leading whitespace is dropped
        } else {
            control |= is_control(cp);
            if (space_pending) s[out++] = ' ';
            space_pending = false;
            for (int i = 0; i < width; i++) s[out++] = s[in + i];  // out <= in: never overtakes
        }
        in += (size_t)width;
    }
    s[out] = '\0';  // trailing whitespace is dropped with space_pending
    *len = out;
    return control ? CLEAN_HAS_CONTROL : CLEAN_OK;
}

void dedup_init(PairDedup *d) {
    d->cap = 1 << 16;
    d->count = 0;
    d->slots = xcalloc(d->cap, sizeof *d->slots);
}

void dedup_free(PairDedup *d) {
    free(d->slots);
    *d = (PairDedup){0};
}

/* Inserts h (never 0) into slots; returns false if it was already there. */
static bool slots_insert(uint64_t *slots, size_t cap, uint64_t h) {
    for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (slots[i] == h) return false;
        if (slots[i] == 0) {
            slots[i] = h;
            return true;
        }
    }
}

/* True if the pair hash h was not seen before (and remembers it). */
static bool dedup_insert(PairDedup *d, uint64_t h) {
    if (h == 0) h = 1;                  // 0 marks an empty slot
    if (2 * (d->count + 1) > d->cap) {  // keep the load under 1/2
        size_t cap = 2 * d->cap;
        uint64_t *slots = xcalloc(cap, sizeof *slots);
        for (size_t i = 0; i < d->cap; i++)
            if (d->slots[i]) slots_insert(slots, cap, d->slots[i]);
        free(d->slots);
        d->slots = slots;
        d->cap = cap;
    }
    bool fresh = slots_insert(d->slots, d->cap, h);
    d->count += fresh;
    return fresh;
}

DropReason clean_train_pair(PairDedup *seen, char *src, size_t *src_len, char *tgt,
                            size_t *tgt_len) {
    CleanStatus s = clean_normalize(src, src_len), t = clean_normalize(tgt, tgt_len);
    if (s == CLEAN_INVALID_UTF8 || t == CLEAN_INVALID_UTF8) return DROP_INVALID_UTF8;
    if (s == CLEAN_HAS_CONTROL || t == CLEAN_HAS_CONTROL) return DROP_CONTROL_CHAR;
    if (*src_len == 0 || *tgt_len == 0) return DROP_EMPTY;
    uint64_t h = hash64(tgt, *tgt_len, hash64(src, *src_len, 0x243F6A8885A308D3ull));
    if (!dedup_insert(seen, h)) return DROP_DUPLICATE;
    return KEEP_PAIR;
}

DropReason clean_check_lengths(const LengthLimits *limits, int src_tokens, int tgt_tokens) {
    int shorter = src_tokens < tgt_tokens ? src_tokens : tgt_tokens;
    int longer = src_tokens < tgt_tokens ? tgt_tokens : src_tokens;
    if (shorter < limits->min_len) return DROP_TOO_SHORT;
    if (limits->max_len > 0 && longer > limits->max_len) return DROP_TOO_LONG;
    if (limits->max_ratio > 0 && longer > limits->max_ratio * shorter) return DROP_LENGTH_RATIO;
    return KEEP_PAIR;
}
