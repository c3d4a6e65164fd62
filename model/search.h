/* search.h: greedy and beam search over batches of sentences (incremental decoding, decode.h).
 * Beam search as Marian: each sentence starts with a beam of k; every step keeps the best
 * (k - finished) expansions of its live hypotheses, a hypothesis ending in EOS is finished and
 * shrinks the beam, so k = 1 is exactly greedy search. Scores are sums of log-probabilities;
 * finished hypotheses are compared after the length penalty
 *   gnmt:    score / ((5 + len) / 6)^alpha        fairseq (Marian): score / len^alpha
 * with len counting the EOS. A sentence stops when no live hypothesis can still beat its best
 * finished one (a live score can only fall, so its best normalized value is score / lp(max_len)),
 * or when its maximum length a * src_len + b is reached (EOS is then forced). PAD and BOS are
 * never generated.
 * An ensemble searches with one decoder state per model (the same vocabulary, beam and capacity;
 * the architectures may differ): at every step the models' log-probabilities are averaged, as
 * the mean of their logits minus the mean of their log-normalizers, so that two copies of one
 * model give exactly its search. The n best finished hypotheses of a sentence can be kept
 * (n <= beam); the sentence then stops when no live hypothesis can still beat the n-th. */
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
    int32_t *tokens;  // (sents, nbest, stride) hypotheses per sentence, best first, without EOS
    int stride;       // >= the batch's output positions (search_batch_len)
    int *len;         // (sents, nbest)
    float *score;     // (sents, nbest) their normalized scores
    int nbest;        // hypotheses kept per sentence, 1 <= nbest <= beam
    int *count;       // (sents) hypotheses found (fewer than nbest only when the search cannot
                      // produce as many, e.g. a maximum length of 1); may be NULL
} SearchResult;

/* Translates src (sents, S) with the decoder state st (decode_init with beam = o->beam), which
 * must fit the batch (decode_fits with T = search_batch_len). */
void search_batch(DecodeState *st, const Ctx *c, const SearchOptions *o, const int32_t *src,
                  const int *src_len, int sents, int S, SearchResult *res);
/* The same with an ensemble of n models, one decoder state each (st[0] holds the search's
 * bookkeeping); n = 1 is search_batch. */
void search_ensemble(DecodeState *const *st, int n, const Ctx *c, const SearchOptions *o,
                     const int32_t *src, const int *src_len, int sents, int S, SearchResult *res);

/* The maximum output length (incl. EOS) for a source of src_len tokens, at least 1. */
int search_max_len(const SearchOptions *o, int src_len);
/* Output positions a batch needs: the largest search_max_len of its sentences. */
int search_batch_len(const SearchOptions *o, const int *src_len, int sents);

#endif
