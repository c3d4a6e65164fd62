/* batcher.h: token-budget batches over a mapped token cache.
 *
 * Training mode (shuffle = true), per epoch e, as a pure function of (seed, e): the sentence
 * order is shuffled, cut into pools of sort_pool sentences, each pool is sorted by length and cut
 * greedily into batches with B * max(S, T) <= batch_tokens, and the order of all batches is
 * shuffled (Marian's maxi-batch). Evaluation mode (shuffle = false): every pair once, one pool
 * sorted by length, batches in that order, the same every pass. A pair longer than the budget
 * gets a batch of its own; nothing is ever dropped.
 *
 * The cursor (epoch, batch) names the next batch to produce. Since an epoch's plan depends only
 * on (seed, epoch), batcher_seek to a saved cursor continues with exactly the batch that would
 * have come next. Batch buffers are allocated once for the worst case and reused; a batch is a
 * copy, after which the cache's pages leave the resident set again (tokcache_release).
 * Ids: S counts the source ids plus EOS, T the target ids plus one (BOS in tgt_in, EOS in
 * tgt_out); padding is SPM_PAD_ID. */
#ifndef NMT_DATA_BATCHER_H
#define NMT_DATA_BATCHER_H

#include <stdbool.h>
#include <stdint.h>

#include "tokcache.h"

typedef struct Batch {
    int B, S, T;       // sentences, padded source length, padded target length
    int32_t *src;      // (B, S) source ids + EOS, PAD-padded
    int32_t *tgt_in;   // (B, T) BOS + target ids, PAD-padded
    int32_t *tgt_out;  // (B, T) target ids + EOS, PAD-padded
    int *src_len;      // (B) source ids + 1 (the EOS)
    int *tgt_len;      // (B) target ids + 1 (the BOS, or the EOS)
    long *index;       // (B) index of each pair in its split (the token cache)
    long ntgt;         // non-pad target tokens: the sum of tgt_len
} Batch;

typedef struct BatcherOptions {
    long batch_tokens;  // budget: B * max(S, T) <= batch_tokens
    long sort_pool;     // training: sentences per length-sorted pool
    uint64_t seed;      // training: shuffles of sentences and batches
    bool shuffle;       // true: training mode; false: evaluation mode
} BatcherOptions;

typedef struct BatchCursor {
    long epoch;  // 0-based
    long batch;  // next batch within the epoch
} BatchCursor;

typedef struct Batcher {
    const TokCache *cache;
    BatcherOptions opt;
    BatchCursor cursor;
    long plan_epoch;        // epoch the plan below belongs to (-1: none yet)
    long nbatches;          // batches in the plan
    uint32_t *order;        // (npairs) pair indices, batch after batch
    uint32_t *batch_first;  // (npairs + 1) where batch k starts in order (before shuffling)
    uint32_t *batch_order;  // (npairs) the batches in the order they are produced
    struct BatchKey *keys;  // (pool) sort scratch for one pool
    Batch batch;            // buffers for the largest possible batch
} Batcher;

/* Fails (FATAL) if the options are invalid or the cache has 2^32 pairs or more. */
void batcher_init(Batcher *b, const TokCache *cache, const BatcherOptions *opt);
void batcher_free(Batcher *b);

/* The next batch (valid until the next call), or NULL when the epoch is over: the call after
 * a NULL starts the next epoch (training: a new shuffle; evaluation: the same order again). */
const Batch *batcher_next(Batcher *b);
long batcher_epoch_batches(Batcher *b);  // batches in the cursor's epoch

static inline BatchCursor batcher_cursor(const Batcher *b) { return b->cursor; }
/* Continue from a cursor saved with batcher_cursor (FATAL if it is out of range). */
void batcher_seek(Batcher *b, BatchCursor cursor);

#endif
