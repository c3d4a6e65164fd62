/* decode.h: incremental decoding, one target position at a time for a batch of hypotheses.
 * Rows are hypotheses: sentence s owns rows s*beam .. s*beam+beam-1. Per decoder layer the
 * self-attention keys and values of every past position are cached per row; cross-attention
 * keys and values are projected once per sentence from the encoder output (for collab attention
 * that is the shared K~ of width D~k, never per head: the mixing is on the query side). The beam
 * rows of one sentence are the Tq = beam queries of one cross-attention call.
 * All buffers are allocated once by decode_init for a capacity; each batch then lays its caches
 * out for its own number of output positions, so short sentences can come in large batches and
 * long ones in small batches within the same memory. */
#ifndef NMT_DECODE_H
#define NMT_DECODE_H

#include "model.h"

typedef struct DecodeCapacity {
    int sents;       // sentences in a batch
    int beam;        // rows per sentence
    int src_tokens;  // sentences x padded source length of a batch
    int row_steps;   // rows x output positions of a batch
    int max_len;     // the longest source and the longest output
} DecodeCapacity;

typedef struct DecodeLayerCache {
    // keys transposed per row or sentence: attention_core reads them in place
    float *self_k, *self_v, *self_cs;     // (rows, W, T), (rows, T, D), (rows, T, H)
    float *cross_k, *cross_v, *cross_cs;  // (sentences, W, S), (sentences, S, D), (.., S, H)
} DecodeLayerCache;

typedef struct DecodeState {
    Model *m;
    DecodeCapacity cap;
    int beam;
    int sents, S, T;            // current batch: sentences, padded source length, positions
    int *src_len;               // (sentences)
    DecodeLayerCache *layers;   // (n_dec)
    Arena arena;
    float *x, *fin, *f, *saved, *out;  // (rows, D) per-step workspace
    float *mean, *rstd;                // (rows)
    float *q, *k, *v, *cs, *o;         // (rows, W), (rows, W), (rows, D), (rows, H), (rows, D)
    float *p;                          // (rows, H, max(T, S)) probabilities
    float *ffn_h;                      // (rows, F)
    float *attn_work;                  // attention_core workspace
    float *tmp;                        // (rows, T, W + D + H) reordering buffer
    int *row_map;                      // (rows) source row of each row when compacting
    int *staged;                       // (rows) a row's slot in tmp while reordering, or -1
    // search bookkeeping (search.c)
    float *logits;                     // (rows, V)
    PackedWeights packed;              // the weights decode_step multiplies by, and the output
                                       // projection (emb): packed per batch by decode_begin
    int32_t *tokens;                   // (rows) the tokens fed at the next step
    int32_t *hist, *hist_next;         // (rows, T) token histories
    int *parent;                       // (rows) row each row continues after a step
} DecodeState;

/* The model must be planned for cap->src_tokens tokens and cap->max_len positions. */
void decode_init(DecodeState *st, Model *m, const DecodeCapacity *cap);
size_t decode_state_bytes(Model *m, const DecodeCapacity *cap);  // what decode_init allocates
void decode_free(DecodeState *st);
/* Encodes the batch src (sents, S), projects every layer's cross-attention keys/values, lays
 * the caches out for T output positions and packs the weights for the steps (which must not
 * change until the batch is done). */
void decode_begin(DecodeState *st, const Ctx *c, const int32_t *src, const int *src_len,
                  int sents, int S, int T);
/* Whether a batch of sents sentences, S source and T output positions fits the capacity. */
bool decode_fits(const DecodeState *st, int sents, int S, int T);
/* Feeds tokens (sents*beam) at position t (all rows at the same position) and writes the
 * next-token logits (sents*beam, V). */
void decode_step(DecodeState *st, const Ctx *c, const int32_t *tokens, int t, float *logits);
/* After a beam step: row r continues the history of row parent[r] (same sentence). */
void decode_reorder(DecodeState *st, const int *parent, int t);
/* Keeps only the sentences whose keep flag is set, in order (rows follow). */
void decode_keep_sentences(DecodeState *st, const bool *keep, int t);

#endif
