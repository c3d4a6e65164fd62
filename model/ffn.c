/* ffn.c: the feed-forward block of ffn.h. */
#include "ffn.h"

#include <string.h>

void ffn_forward(const Ctx *c, const FfnParams *p, float *pre, float *h, float *y,
                 const float *x, int N, int D, int F, float dropout, int site) {
    linear_forward(c, pre, x, p->w_1, p->b_1, N, D, F);
    relu_dropout_forward(h, pre, (long)N * F, dropout, ctx_dropout_key(c, dropout, site));
    linear_forward(c, y, h, p->w_2, p->b_2, N, F, D);
}

void ffn_backward(const Ctx *c, const FfnParams *p, const FfnParams *g, float *dx, float *h,
                  float *dh, const float *dy, const float *pre, const float *x, int N, int D,
                  int F, float dropout, int site) {
    uint64_t key = ctx_dropout_key(c, dropout, site);
    long nf = (long)N * F;
    relu_dropout_forward(h, pre, nf, dropout, key);  // regenerate the hidden layer
    memset(dh, 0, sizeof(float) * nf);
    linear_backward(c, dh, g->w_2, g->b_2, dy, h, p->w_2, N, F, D);
    memset(h, 0, sizeof(float) * nf);  // reused as the gradient of the pre-activation
    relu_dropout_backward(h, dh, pre, nf, dropout, key);
    linear_backward(c, dx, g->w_1, g->b_1, h, x, p->w_1, N, D, F);
}
