/* ffn.h: the position-wise feed-forward block  y = dropout(relu(x W_1^T + b_1)) W_2^T + b_2.
 * Only the pre-activation is saved; backward regenerates the hidden layer (and its dropout mask)
 * from it, in one (N, F) workspace that then holds the hidden layer's gradient.
 * Backward writes or adds into dx (beta_dx 0 or 1) and adds into the parameter gradients. */
#ifndef NMT_FFN_H
#define NMT_FFN_H

#include "ops.h"

typedef struct FfnParams {
    float *w_1, *b_1;  // (F, D), (F)
    float *w_2, *b_2;  // (D, F), (D)
} FfnParams;

/* pre (N,F) saved; h (N,F) workspace; y (N,D) written */
void ffn_forward(const Ctx *c, const FfnParams *p, float *pre, float *h, float *y,
                 const float *x, int N, int D, int F, float dropout, int site);
/* h (N,F) workspace; dx (N,D) = beta_dx * dx + the input's gradient */
void ffn_backward(const Ctx *c, const FfnParams *p, const FfnParams *g, float *dx, float beta_dx,
                  float *h, const float *dy, const float *pre, const float *x, int N, int D, int F,
                  float dropout, int site);

#endif
