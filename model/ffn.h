/* ffn.h: the position-wise feed-forward block  y = dropout(relu(x W_1^T + b_1)) W_2^T + b_2.
 * The hidden layer h is saved; it alone gives backward the ReLU's and the dropout's masks (h > 0
 * where the unit was positive and kept), so no mask is regenerated.
 * Backward writes or adds into dx (beta_dx 0 or 1) and adds into the parameter gradients. */
#ifndef NMT_FFN_H
#define NMT_FFN_H

#include "ops.h"

typedef struct FfnParams {
    float *w_1, *b_1;  // (F, D), (F)
    float *w_2, *b_2;  // (D, F), (D)
} FfnParams;

/* h (N,F) the hidden layer, saved; y (N,D) written */
void ffn_forward(const Ctx *c, const FfnParams *p, float *h, float *y, const float *x, int N, int D,
                 int F, float dropout, int site);
/* dh (N,F) workspace; h (N,F) as ffn_forward saved it; dx (N,D) = beta_dx * dx + the input's
 * gradient */
void ffn_backward(const Ctx *c, const FfnParams *p, const FfnParams *g, float *dx, float beta_dx,
                  float *dh, const float *dy, const float *h, const float *x, int N, int D, int F,
                  float dropout, int site);

#endif
