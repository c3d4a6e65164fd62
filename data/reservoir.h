/* reservoir.h: the uniform sample of training sentences SentencePiece is trained on (Algorithm R,
 * reproducible from a seed). It owns copies of the sentences it holds. */
#ifndef NMT_DATA_RESERVOIR_H
#define NMT_DATA_RESERVOIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rng.h"

typedef struct Reservoir {
    char **text;     // (cap) NUL-terminated sentences, xmalloc'd
    size_t *len;     // (cap)
    long cap;        // sample size; grows without bound when unlimited
    long count;      // sentences held
    bool unlimited;  // size 0: keep every sentence
    uint64_t seen;   // sentences offered
    Rng rng;
    long next;  // iteration position for reservoir_next
} Reservoir;

/* A sample of at most size sentences (0: all of them), drawn with a generator seeded by seed. */
void reservoir_init(Reservoir *r, long size, uint64_t seed);
void reservoir_free(Reservoir *r);
/* Offers s[0 .. len): after n offers, each sentence is held with probability cap / n. */
void reservoir_offer(Reservoir *r, const char *s, size_t len);
/* The sentences held, in slot order (an SpmNextSentence, spm.h): 1 with the next one in *text /
 * *len, 0 after the last. ctx is the Reservoir. */
int reservoir_next(void *ctx, const char **text, size_t *len);

#endif
