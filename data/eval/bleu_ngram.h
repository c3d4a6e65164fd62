/* bleu_ngram.h (internal to data/eval): the containers the scorer counts with. Growable uint32
 * vectors hold code points and token ids; a token table interns equal tokens of one corpus to
 * equal ids; an n-gram table is the multiset of the n-grams of one segment, with the clipped
 * matching of hypothesis n-grams against reference counts that BLEU and chrF share. */
#ifndef NMT_BLEU_NGRAM_H
#define NMT_BLEU_NGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"

/* ---- growable uint32 vectors (code points or token ids) ---- */

typedef struct U32Vec {
    uint32_t *v; /* (cap) owned, the first n in use */
    size_t n, cap;
} U32Vec;

static inline void u32_reserve(U32Vec *b, size_t cap) {
    if (cap <= b->cap) return;
    b->cap = cap < 2 * b->cap ? 2 * b->cap : cap;
    b->v = xrealloc(b->v, b->cap * sizeof *b->v);
}

static inline void u32_push(U32Vec *b, uint32_t x) {
    if (b->n == b->cap) u32_reserve(b, b->n + 16);
    b->v[b->n++] = x;
}

static inline void u32_swap(U32Vec *a, U32Vec *b) {
    U32Vec t = *a;
    *a = *b;
    *b = t;
}

/* ---- token interning: equal tokens get equal ids within one corpus ---- */

typedef struct TokenTable {
    U32Vec text;     /* all distinct tokens back to back */
    size_t *start;   /* (ntokens) offset of each token in text */
    uint32_t *len;   /* (ntokens) */
    uint64_t *hash;  /* (ntokens) */
    uint32_t *slots; /* (nslots) token id + 1, 0 for empty */
    size_t ntokens, cap_tokens, nslots;
} TokenTable;

/* The id of token cps[0..n), a new one if it was not seen before. */
uint32_t token_intern(TokenTable *t, const uint32_t *cps, size_t n);
void token_table_free(TokenTable *t);

/* ---- n-gram multisets of one segment ---- */

typedef struct NgramSlot {
    const uint32_t *seq; /* NULL for an empty slot; borrowed from the sequence counted */
    uint64_t hash;
    int32_t n, count;
} NgramSlot;

typedef struct NgramTable {
    NgramSlot *slots; /* (cap) open addressing, cap a power of two */
    size_t *used;     /* (cap) indices of the occupied slots */
    size_t cap, nused;
} NgramTable;

/* Empties the table and makes room for max_entries n-grams. */
void ngram_table_reset(NgramTable *t, size_t max_entries);
/* The slot of n-gram seq[0..n) (hash h), added with count 0 when add is set, else NULL. */
NgramSlot *ngram_table_get(NgramTable *t, const uint32_t *seq, int n, uint64_t h, bool add);
void ngram_table_free(NgramTable *t);
/* At most this many n-grams of orders 1..max_order in a sequence of len items. */
size_t ngram_bound(size_t len, int max_order);
/* Adds every n-gram of seq[0..len) with 1 <= n <= max_order to the table. */
void ngram_table_add_all(NgramTable *t, const uint32_t *seq, size_t len, int max_order);
/* Counts the n-grams of hyp per order (hyp_total[n-1]) and how many of them the reference
 * multiset covers, each reference n-gram used at most as often as it occurs (matched[n-1]). */
void ngram_match(NgramTable *hyp_counts, NgramTable *ref_counts, const uint32_t *seq, size_t len,
                 int max_order, int64_t *hyp_total, int64_t *matched);

#endif
