/* bleu_ngram.c: the scorer's counting containers (bleu_ngram.h): interning of tokens into ids
 * shared by a corpus' hypotheses and references, and the open-addressing n-gram multisets of one
 * segment with the clipped hypothesis-against-reference matching. Both hash uint32 sequences with
 * the same step function, so an n-gram's hash is extended one item at a time. */
#include "bleu_ngram.h"

#include <stdlib.h>
#include <string.h>

/* ---- hashing of uint32 sequences (tokens, n-grams) ---- */

static const uint64_t HASH_SEED = 0x243F6A8885A308D3ULL;

static uint64_t hash_step(uint64_t h, uint32_t x) {
    h = (h ^ x) * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 29);
}

/* ---- token interning: equal tokens get equal ids within one corpus ---- */

static void token_table_grow(TokenTable *t) {
    size_t nslots = t->nslots ? 2 * t->nslots : 1024;
    uint32_t *slots = xcalloc(nslots, sizeof *slots);
    for (size_t id = 0; id < t->ntokens; id++) {
        size_t s = t->hash[id] & (nslots - 1);
        while (slots[s]) s = (s + 1) & (nslots - 1);
        slots[s] = (uint32_t)id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
}

uint32_t token_intern(TokenTable *t, const uint32_t *cps, size_t n) {
    if (2 * (t->ntokens + 1) > t->nslots) token_table_grow(t);
    uint64_t h = HASH_SEED;
    for (size_t i = 0; i < n; i++) h = hash_step(h, cps[i]);
    size_t s = h & (t->nslots - 1);
    for (; t->slots[s]; s = (s + 1) & (t->nslots - 1)) {
        uint32_t id = t->slots[s] - 1;
        if (t->hash[id] == h && t->len[id] == n &&
            !memcmp(t->text.v + t->start[id], cps, n * sizeof *cps))
            return id;
    }
    if (t->ntokens == t->cap_tokens) {
        t->cap_tokens = t->cap_tokens ? 2 * t->cap_tokens : 1024;
        t->start = xrealloc(t->start, t->cap_tokens * sizeof *t->start);
        t->len = xrealloc(t->len, t->cap_tokens * sizeof *t->len);
        t->hash = xrealloc(t->hash, t->cap_tokens * sizeof *t->hash);
    }
    size_t id = t->ntokens++;
    t->start[id] = t->text.n;
    t->len[id] = (uint32_t)n;
    t->hash[id] = h;
    u32_reserve(&t->text, t->text.n + n);
    memcpy(t->text.v + t->text.n, cps, n * sizeof *cps);
    t->text.n += n;
    t->slots[s] = (uint32_t)id + 1;
    return (uint32_t)id;
}

void token_table_free(TokenTable *t) {
    free(t->text.v);
    free(t->start);
    free(t->len);
    free(t->hash);
    free(t->slots);
}

/* ---- n-gram multisets of one segment ---- */

void ngram_table_reset(NgramTable *t, size_t max_entries) {
    if (2 * max_entries + 1 > t->cap) {
        size_t cap = 64;
        while (cap < 2 * max_entries + 1) cap *= 2;
        free(t->slots);
        free(t->used);
        t->slots = xcalloc(cap, sizeof *t->slots);
        t->used = xmalloc(cap * sizeof *t->used);
        t->cap = cap;
    } else {
        for (size_t i = 0; i < t->nused; i++) t->slots[t->used[i]].seq = NULL;
    }
    t->nused = 0;
}

NgramSlot *ngram_table_get(NgramTable *t, const uint32_t *seq, int n, uint64_t h, bool add) {
    size_t s = h & (t->cap - 1);
    for (; t->slots[s].seq; s = (s + 1) & (t->cap - 1)) {
        NgramSlot *e = &t->slots[s];
        if (e->hash == h && e->n == n && !memcmp(e->seq, seq, (size_t)n * sizeof *seq)) return e;
    }
    if (!add) return NULL;
    CHECK(2 * (t->nused + 1) <= t->cap, "n-gram table over capacity");
    NgramSlot *e = &t->slots[s];
    *e = (NgramSlot){.seq = seq, .hash = h, .n = n, .count = 0};
    t->used[t->nused++] = s;
    return e;
}

void ngram_table_free(NgramTable *t) {
    free(t->slots);
    free(t->used);
}

size_t ngram_bound(size_t len, int max_order) {
    return len * (size_t)max_order;
}

void ngram_table_add_all(NgramTable *t, const uint32_t *seq, size_t len, int max_order) {
    for (size_t i = 0; i < len; i++) {
        uint64_t h = HASH_SEED;
        for (int n = 1; n <= max_order && i + (size_t)n <= len; n++) {
            h = hash_step(h, seq[i + n - 1]);
            ngram_table_get(t, seq + i, n, h, true)->count++;
        }
    }
}

void ngram_match(NgramTable *hyp_counts, NgramTable *ref_counts, const uint32_t *seq, size_t len,
                 int max_order, int64_t *hyp_total, int64_t *matched) {
    ngram_table_reset(hyp_counts, ngram_bound(len, max_order));
    for (size_t i = 0; i < len; i++) {
        uint64_t h = HASH_SEED;
        for (int n = 1; n <= max_order && i + (size_t)n <= len; n++) {
            h = hash_step(h, seq[i + n - 1]);
            NgramSlot *mine = ngram_table_get(hyp_counts, seq + i, n, h, true);
            mine->count++;
            hyp_total[n - 1]++;
            NgramSlot *ref = ngram_table_get(ref_counts, seq + i, n, h, false);
            if (ref && mine->count <= ref->count) matched[n - 1]++;
        }
    }
}
