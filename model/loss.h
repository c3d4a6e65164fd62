/* loss.h: the fused output layer: projection onto the tied embedding, log-softmax and
 * label-smoothed cross-entropy over non-pad target tokens, processed in chunks of rows so the
 * (N, V) logits never exist at once. Losses are SUMS over tokens; the caller divides once per
 * update by the update's target-token count (so accumulation equals a bigger batch).
 * Label smoothing as fairseq: eps_i = eps / (V - 1), target weight 1 - eps, others eps_i;
 * loss = -sum_v q_v log p_v, nll = -log p_target. */
#ifndef NMT_LOSS_H
#define NMT_LOSS_H

#include <stddef.h>
#include <stdint.h>

#include "ops.h"

typedef struct LossStats {
    double loss;  // label-smoothed loss, summed over target tokens (nats)
    double nll;   // negative log-likelihood, summed (nats)
    long ntok;    // non-pad target tokens
} LossStats;

/* Rows of the logits chunk buffer for vocabulary V (at most 512, at most 64 MiB of logits). */
int loss_chunk_rows(int V);

/* Adds the loss of h(N, D) against tgt(N) to st; with dh != NULL also writes dh(N,D) = and adds
 * demb(V,D) += the gradients of the summed loss. work holds loss_chunk_rows(V) x V floats plus
 * that many doubles. packed: where emb^T (D, V) and, with dh, emb (V, D) are packed once for all
 * the chunks' products (zero-initialised before the first call, reused by the next ones, freed
 * by the caller with gemm_packed_b_free). */
void loss_forward_backward(const Ctx *c, LossStats *st, float *dh, float *demb, const float *h,
                           const int32_t *tgt, const float *emb, int N, int D, int V, float eps,
                           int pad, float *work, GemmPackedB packed[2]);
size_t loss_work_floats(int V);
/* The most memory the two packed operands take (both forms, whatever the backend). */
size_t loss_packed_bytes(int D, int V);

/* Per-row log-probability of the target (N) (0 for pad rows), for scoring; same work buffer. */
void loss_target_logprobs(const Ctx *c, double *logp, const float *h, const int32_t *tgt,
                          const float *emb, int N, int D, int V, int pad, float *work);

#endif
