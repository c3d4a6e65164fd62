/* flops.h: the floating-point work of a training step and of decoding a batch, counted
 * analytically from the shapes: every matrix product the model computes, 2 FLOPs per
 * multiply-add, forward and backward (weight gradients included), in the phases of model.h.
 * What is counted is what the implementation computes: attention scores and P·V over all Tk keys
 * of a sentence (the fused core skips the key columns past a block's last visible key, which the
 * count does not subtract); backward recomputes the heads' outputs P·V. Elementwise work
 * (softmax, LayerNorm, dropout, biases, collab's query mixing, the optimizer) is not counted.
 * tests/test_flops.c checks both counts, but for the attention core (which runs its own
 * kernel), against the products actually issued through the GEMM interface. */
#ifndef NMT_FLOPS_H
#define NMT_FLOPS_H

#include <stdbool.h>

#include "model.h"

typedef struct ModelFlops {
    double attention;       // the projections of every attention (queries, keys, values, output)
    double attention_core;  // its core: scores and P·V per (sentence, head)
    double ffn;        // both FFN products of every layer
    double loss;       // the output projection (logits) and, in training, its gradients
} ModelFlops;

/* A training step on B sentences of S source and T target positions: forward and loss, plus
 * backward when `backward` (model_step). */
ModelFlops model_step_flops(const Model *m, int B, int S, int T, bool backward);

/* search_batch on `sents` sentences of S source positions, with `beam` rows per sentence for
 * all T output positions (no sentence leaves the batch early, as with a fixed output length):
 * the encoder, the cross-attention keys and values, and T decode_steps. */
ModelFlops model_decode_flops(const Model *m, int sents, int S, int T, int beam);

double model_flops_total(ModelFlops f);

#endif
