/* ops.h: the primitive layers of the Transformer as forward/backward pairs with mirrored
 * signatures (outputs, saved state, inputs, weights, dims).
 * Rules: every *_backward ADDS (+=) into its parameter-gradient arguments, and into its
 * input-gradient ones unless it says it writes them (a beta of 0, a residual gradient);
 * forward outputs are written (=). Weights are stored (out, in) like nn.Linear. Dropout masks are
 * never stored: they are regenerated from the counter-based RNG keyed by (seed, step, site), or
 * read off a saved output (relu_dropout_backward).
 * Parallel loops partition outputs (rows, or columns for reductions over rows), so results do not
 * depend on the number of threads; the row loops of training run by shares (shares.h): each
 * thread its static share, a thread done first taking the last rows of a slower one's. */
#ifndef NMT_OPS_H
#define NMT_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm.h"
#include "rng.h"

/* Loops over fewer elements than this run on one thread: a parallel region costs more. */
enum { OMP_MIN_WORK = 1 << 15 };

/* Weights packed once for many products with them (decoding, decode.h): linear_forward then
 * multiplies by the packed copy of its weight. */
typedef struct PackedWeights {
    GemmPackedB *w;  // (n) each packed as op(B) = w^T (in, out)
    int n;
} PackedWeights;

typedef struct Ctx {
    const GemmImpl *gemm;
    uint64_t seed;                // run seed: dropout masks
    uint64_t step;                // micro-batch counter: a new mask per forward pass
    bool train;                   // dropout on
    const PackedWeights *packed;  // or NULL
} Ctx;

/* A dropout mask: element i is kept iff 16 bits of rng_u64(key, i / 4) are >= threshold (one
 * hash serves four elements), kept elements are multiplied by scale = 1 / P(keep) so the
 * expectation is exact. key 0 means dropout is off. */
typedef struct Dropout {
    uint64_t key;
    uint32_t threshold;  // round(p * 65536)
    float scale;
} Dropout;

/* The mask of dropout site `site` for the current step (off unless training with p > 0). */
Dropout dropout_make(const Ctx *c, float p, int site);

enum { DROPOUT_CHUNK = 1024 };  // elements whose factors are made at once: a multiple of 4

/* Elements of the chunk that starts at c0 of a run of n. */
static inline int dropout_chunk_len(long c0, long n) {
    return n - c0 < DROPOUT_CHUNK ? (int)(n - c0) : DROPOUT_CHUNK;
}

/* f[e] (e < n <= DROPOUT_CHUNK) = the factor of element first + e with dropout on (d->key set):
 * scale where the mask keeps it, else 0. The hashes are made first, then read as 16-bit lanes
 * (lane l of a word is its l-th uint16 on a little-endian CPU), so both loops vectorize. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "dropout_factors reads the lanes of a hash as little-endian 16-bit words"
#endif
static inline void dropout_factors(float *f, uint64_t first, int n, const Dropout *d) {
    const int skip = (int)(first & 3), words = (skip + n + 3) / 4;
    const uint32_t threshold = d->threshold;
    const float scale = d->scale;
    union {
        uint64_t word[DROPOUT_CHUNK / 4 + 1];
        uint16_t lane[DROPOUT_CHUNK + 4];
    } h;
    for (int j = 0; j < words; j++) h.word[j] = rng_u64(d->key, (first >> 2) + (uint64_t)j);
    for (int e = 0; e < n; e++) f[e] = h.lane[skip + e] >= threshold ? scale : 0.0f;
}

/* out[e] = x[e] * factor(first + e) for e < n (out may be x), dropout on. */
static inline void dropout_mul(float *out, const float *x, int n, uint64_t first,
                               const Dropout *d) {
    float f[DROPOUT_CHUNK];
    for (int e0 = 0; e0 < n; e0 += DROPOUT_CHUNK) {
        int m = dropout_chunk_len(e0, n);
        dropout_factors(f, first + (uint64_t)e0, m, d);
        for (int e = 0; e < m; e++) out[e0 + e] = x[e0 + e] * f[e];
    }
}

/* y(N,out) = x(N,in) W^T + b (b may be NULL), the bias added in the product's epilogue */
void linear_forward(const Ctx *c, float *y, const float *x, const float *w, const float *b, int N,
                    int in, int out);
/* h(N,out) = dropout(relu(x W^T + b)), bias, ReLU and dropout in the product's epilogue; d's mask
 * by element index i * out + j (relu_dropout_backward reads it off h) */
void linear_relu_dropout_forward(const Ctx *c, float *h, const float *x, const float *w,
                                 const float *b, int N, int in, int out, Dropout d);
/* dx(N,in) = beta_dx * dx + dy W ; dw(out,in) += dy^T x ; db(out) += column sums of dy
 * (dx, db may be NULL) */
void linear_backward(const Ctx *c, float *dx, float beta_dx, float *dw, float *db,
                     const float *dy, const float *x, const float *w, int N, int in, int out);

/* db(D) += column sums of x(N, D), each column summed over rows in order from zero. */
void colsum_add(float *db, const float *x, int N, int D);

/* y = (x - mean) * rstd * g + b over rows of D; mean, rstd (N) saved for backward. */
void layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *g,
                       const float *b, int N, int D);
/* y = (x - mean) * rstd * g + b with saved statistics: recomputes a forward output exactly. */
void layernorm_apply(float *y, const float *x, const float *mean, const float *rstd,
                     const float *g, const float *b, int N, int D);
/* Rows of a block of layernorm_backward's parameter gradients: a block's column sums are made
 * while its rows are in cache, then the blocks' sums are added in order. */
enum { LN_GRAD_ROWS = 16 };
static inline size_t layernorm_grad_floats(int N, int D) {  // its workspace
    return (size_t)((N + LN_GRAD_ROWS - 1) / LN_GRAD_ROWS + 1) * 2 * D;
}
/* dx (written) = res + the gradient through the LayerNorm of dy; res (N, D) may be NULL (zero),
 * dx != res. dg, db (D) += the parameters' gradients, summed in blocks of LN_GRAD_ROWS rows in
 * `partial` (layernorm_grad_floats(N, D)). With df, also df (N, D) = dropout_apply(dx) under
 * `drop`, in the same pass. */
void layernorm_backward(float *dx, float *df, Dropout drop, float *dg, float *db, const float *dy,
                        const float *res, const float *x, const float *mean, const float *rstd,
                        const float *g, int N, int D, float *partial);

/* out = x * mask, out == x allowed: dropout's forward, and its backward (the same map; the
 * gradient is written, not added). */
void dropout_apply(float *out, const float *x, long n, Dropout d);

/* out = x + dropout(f) */
void residual_forward(float *out, const float *x, const float *f, long n, Dropout d);
/* sum (N, D) = x + dropout(f), then y (N, D) = layernorm_forward(sum) with mean, rstd (N) saved,
 * row by row while each row is in cache: residual_forward and layernorm_forward in one pass, the
 * same values. x, f (N, D), g, b (D); y may be x. */
void residual_layernorm_forward(float *y, float *sum, float *mean, float *rstd, const float *x,
                                const float *f, const float *g, const float *b, int N, int D,
                                Dropout d);

/* In place: d(hidden) into d(pre-activation) from the saved output h = dropout(relu(x)): where
 * h > 0 the unit was positive and kept, dh *= d.scale; elsewhere 0. */
void relu_dropout_backward(float *dh, const float *h, long n, Dropout d);

/* x(B,T,D) = emb[tok] * scale + pe[pos_offset + t] */
void embedding_forward(float *x, const int32_t *tok, const float *emb, const float *pe, int B,
                       int T, int D, float scale, int pos_offset);
/* demb(V,D) += scale * dx rows scattered to their tokens */
void embedding_backward(float *demb, const float *dx, const int32_t *tok, int N, int D,
                        float scale);
/* pe(P, D): the sinusoidal position encodings (Vaswani et al.: sin on even, cos on odd dims). */
void position_table_fill(float *pe, int P, int D);

#endif
