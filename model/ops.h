/* ops.h: the primitive layers of the Transformer as forward/backward pairs with mirrored
 * signatures (outputs, saved state, inputs, weights, dims).
 * Rules: every *_backward ADDS (+=) into its input-gradient and parameter-gradient arguments;
 * forward outputs are written (=). Weights are stored (out, in) like nn.Linear. Dropout masks are
 * never stored: they are regenerated from the counter-based RNG keyed by (seed, step, site).
 * Parallel loops partition outputs (rows, or columns for reductions over rows), so results do not
 * depend on the number of threads. */
#ifndef NMT_OPS_H
#define NMT_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm.h"

typedef struct Ctx {
    const GemmImpl *gemm;
    uint64_t seed;  // run seed: dropout masks
    uint64_t step;  // micro-batch counter: a new mask per forward pass
    bool train;     // dropout on
} Ctx;

/* The RNG key of dropout site `site` for the current step; 0 when dropout is off. */
uint64_t ctx_dropout_key(const Ctx *c, float p, int site);

/* y(N,out) = x(N,in) W^T + b */
void linear_forward(const Ctx *c, float *y, const float *x, const float *w, const float *b, int N,
                    int in, int out);
/* dx(N,in) += dy W ; dw(out,in) += dy^T x ; db(out) += column sums of dy (dx, db may be NULL) */
void linear_backward(const Ctx *c, float *dx, float *dw, float *db, const float *dy,
                     const float *x, const float *w, int N, int in, int out);

/* db(D) += column sums of x(N, D), each column summed over rows in order. */
void colsum_add(float *db, const float *x, int N, int D);

/* y = (x - mean) * rstd * g + b over rows of D; mean, rstd (N) saved for backward. */
void layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *g,
                       const float *b, int N, int D);
/* y = (x - mean) * rstd * g + b with saved statistics: recomputes a forward output exactly. */
void layernorm_apply(float *y, const float *x, const float *mean, const float *rstd,
                     const float *g, const float *b, int N, int D);
void layernorm_backward(float *dx, float *dg, float *db, const float *dy, const float *x,
                        const float *mean, const float *rstd, const float *g, int N, int D);

/* y = x * keep / (1 - p), keep[i] = uniform(key, i) >= p; key 0 means identity. In place is fine. */
void dropout_forward(float *y, const float *x, long n, float p, uint64_t key);
/* dx += dy * keep / (1 - p) */
void dropout_backward(float *dx, const float *dy, long n, float p, uint64_t key);
/* Multiplies x by the mask in place (the forward and the gradient of dropout are the same map). */
void dropout_apply(float *x, long n, float p, uint64_t key);

/* out = x + dropout(f) */
void residual_forward(float *out, const float *x, const float *f, long n, float p, uint64_t key);

/* h = relu(x) in place, then dropout; the pre-activation x must be kept by the caller. */
void relu_dropout_forward(float *h, const float *x, long n, float p, uint64_t key);
/* In place: dh *= relu'(x) * keep / (1 - p), turning d(hidden) into d(pre-activation x). */
void relu_dropout_backward(float *dh, const float *x, long n, float p, uint64_t key);

/* x(B,T,D) = emb[tok] * scale + pe[pos_offset + t] */
void embedding_forward(float *x, const int32_t *tok, const float *emb, const float *pe, int B,
                       int T, int D, float scale, int pos_offset);
/* demb(V,D) += scale * dx rows scattered to their tokens */
void embedding_backward(float *demb, const float *dx, const int32_t *tok, int N, int D,
                        float scale);
/* pe(P, D): the sinusoidal position encodings (Vaswani et al.: sin on even, cos on odd dims). */
void position_table_fill(float *pe, int P, int D);

#endif
