/* ffn.c: the feed-forward block of ffn.h. */
#include "ffn.h"

#include <string.h>

void ffn_forward(const Ctx *c, const FfnParams *p, float *h, float *y, const float *x, int N, int D,
                 int F, float dropout, int site) {
    linear_relu_dropout_forward(c, h, x, p->w_1, p->b_1, N, D, F, dropout_make(c, dropout, site));
    linear_forward(c, y, h, p->w_2, p->b_2, N, F, D);
}

void ffn_backward(const Ctx *c, const FfnParams *p, const FfnParams *g, float *dx, float beta_dx,
                  float *dh, const float *dy, const float *h, const float *x, int N, int D, int F,
                  float dropout, int site) {
    // y = h W_2^T + b_2:  dW_2 += dy^T h, db_2 += colsum(dy), dh = dy W_2
    c->gemm->sgemm(true, false, D, F, N, 1.0f, dy, D, h, F, 1.0f, g->w_2, F);
    colsum_add(g->b_2, dy, N, D);
    c->gemm->sgemm(false, false, N, F, D, 1.0f, dy, D, p->w_2, F, 0.0f, dh, F);
    relu_dropout_backward(dh, h, (long)N * F, dropout_make(c, dropout, site));  // d(pre-act.)
    linear_backward(c, dx, beta_dx, g->w_1, g->b_1, dh, x, p->w_1, N, D, F);
}
