/* search.h: greedy and beam search over batches of sentences (incremental decoding, decode.h).
 * Beam search as Marian: each sentence starts with a beam of k; every step keeps the best
 * (k - finished) expansions of its live hypotheses, a hypothesis ending in EOS is finished and
 * shrinks the beam, so k = 1 is exactly greedy search. Scores are sums of log-probabilities;
 * finished hypotheses are compared after the length penalty
 *   gnmt:    score / ((5 + len) / 6)^alpha        fairseq (Marian): score / len^alpha
 * with len counting the EOS. A sentence stops when no live hypothesis can still beat its best
 * finished one (a live score can only fall, so its best normalized value is score / lp(max_len)),
 * or when its maximum length a * src_len + b is reached (EOS is then forced). PAD and BOS are
 * never generated. */
#ifndef NMT_SEARCH_H
#define NMT_SEARCH_H

#include <stdint.h>

#include "decode.h"

typedef struct SearchOptions {
    int beam;
    float lenpen;     // alpha
    bool gnmt;        // length penalty form
    float max_len_a;  // maximum output length a * src_len + b (tokens incl. EOS)
    int max_len_b;
    int fixed_len;    // > 0: never stop at EOS, emit exactly this many tokens (benchmarks)
} SearchOptions;

typedef struct SearchResult {
    int32_t *tokens;  // (sents, stride) best hypothesis per sentence, without EOS
    int stride;       // >= the batch's output positions (search_batch_len)
    int *len;         // (sents)
    float *score;     // (sents) its normalized score
} SearchResult;

/* Translates src (sents, S) with the decoder state st (decode_init with beam = o->beam), which
 * must fit the batch (decode_fits with T = search_batch_len). */
void search_batch(DecodeState *st, const Ctx *c, const SearchOptions *o, const int32_t *src,
                  const int *src_len, int sents, int S, SearchResult *res);

/* The maximum output length (incl. EOS) for a source of src_len tokens, at least 1. */
int search_max_len(const SearchOptions *o, int src_len);
/* Output positions a batch needs: the largest search_max_len of its sentences. */
int search_batch_len(const SearchOptions *o, const int *src_len, int sents);

#endif
