/* ops.c: the primitive layers of ops.h. */
#include "ops.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#include "rng.h"
#include "shares.h"
#include "vecmath.h"

Dropout dropout_make(const Ctx *c, float p, int site) {
    Dropout d = {0, 0, 1.0f};
    if (!c->train || p <= 0.0f) return d;
    d.key = rng_key(c->seed, c->step, (uint64_t)site, 0x64726F70ull);
    d.key += !d.key;
    d.threshold = (uint32_t)lrintf(p * 65536.0f);
    d.scale = 65536.0f / (float)(65536u - d.threshold);
    return d;
}

/* The packed copy of weight w (out, in) in c, or NULL. */
static const GemmPackedB *packed_weight(const Ctx *c, const float *w, int in, int out) {
    for (int i = 0; c->packed && i < c->packed->n; i++) {
        const GemmPackedB *p = &c->packed->w[i];
        if (p->B == w && p->K == in && p->N == out) return p;
    }
    return NULL;
}

/* What a linear layer adds to the product x W^T, fused into it (GemmEpilogue): the bias b (out),
 * then with `relu` the ReLU and dropout d of element i * out + j (each as the layer alone would
 * compute it, so the result does not depend on how the product is tiled). */
typedef struct LinearEpilogue {
    const float *b;
    int out;
    bool relu;
    Dropout d;
} LinearEpilogue;

static void linear_epilogue_tile(const GemmEpilogue *e, float *c, long ldc, int i, int j, int m,
                                 int n) {
    const LinearEpilogue *l = e->arg;
    const float *b = l->b + j;
    for (int r = 0; r < m; r++) {
        float *cr = c + r * ldc;  // (n) of row i + r, from column j
        if (!l->relu) {
#pragma omp simd
            for (int t = 0; t < n; t++) cr[t] += b[t];
            continue;
        }
#pragma omp simd
        for (int t = 0; t < n; t++) {
            float v = cr[t] + b[t];
            cr[t] = v > 0.0f ? v : 0.0f;
        }
        if (l->d.key)  // the element index of cr[0] is (i + r) * out + j
            dropout_mul(cr, cr, n, (uint64_t)(i + r) * l->out + j, &l->d);
    }
}

/* y (N, out) = x (N, in) w^T, then l's epilogue (NULL: none), by w's packed copy if c has one. */
static void linear_product(const Ctx *c, float *y, const float *x, const float *w, int N, int in,
                           int out, const LinearEpilogue *l) {
    const GemmEpilogue ep = {linear_epilogue_tile, l}, *e = l ? &ep : NULL;
    const GemmPackedB *packed = packed_weight(c, w, in, out);
    if (packed)
        sgemm_packed(packed, N, 1.0f, x, in, 0.0f, y, out, e);
    else
        sgemm_ep(c->gemm, false, true, N, out, in, 1.0f, x, in, w, in, 0.0f, y, out, e);
}

void linear_forward(const Ctx *c, float *y, const float *x, const float *w, const float *b, int N,
                    int in, int out) {
    const LinearEpilogue l = {b, out, false, {0, 0, 1.0f}};
    linear_product(c, y, x, w, N, in, out, b ? &l : NULL);
}

void linear_relu_dropout_forward(const Ctx *c, float *h, const float *x, const float *w,
                                 const float *b, int N, int in, int out, Dropout d) {
    const LinearEpilogue l = {b, out, true, d};
    linear_product(c, h, x, w, N, in, out, &l);
}

void linear_backward(const Ctx *c, float *dx, float beta_dx, float *dw, float *db,
                     const float *dy, const float *x, const float *w, int N, int in, int out) {
    if (dx) c->gemm->sgemm(false, false, N, in, out, 1.0f, dy, out, w, in, beta_dx, dx, in);
    c->gemm->sgemm(true, false, out, in, N, 1.0f, dy, out, x, in, 1.0f, dw, in);
    if (db) colsum_add(db, dy, N, out);
}

enum { COLSUM_WIDTH = 64 };  // columns summed at once, in registers

/* Threads own column ranges and sum the rows in order, COLSUM_WIDTH columns at a time from zero,
 * then add the sums: deterministic, race-free, and free of the loads and stores of db that a sum
 * straight into it would repeat every row. */
void colsum_add(float *db, const float *x, int N, int D) {
#pragma omp parallel if ((long)N * D >= OMP_MIN_WORK)
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        int j0 = (int)((long)D * t / nt), j1 = (int)((long)D * (t + 1) / nt);
        for (int c0 = j0; c0 < j1; c0 += COLSUM_WIDTH) {
            int w = j1 - c0 < COLSUM_WIDTH ? j1 - c0 : COLSUM_WIDTH;
            float sb[COLSUM_WIDTH] = {0};
            for (int i = 0; i < N; i++) {
                const float *xi = x + (long)i * D + c0;
#pragma omp simd
                for (int j = 0; j < w; j++) sb[j] += xi[j];
            }
            for (int j = 0; j < w; j++) db[c0 + j] += sb[j];
        }
    }
}

/* Rows a thread takes at least at once from the shares of a row loop (shares.h). */
enum { ROWS_LEAST = 4 };

/* One row of D: y_i = (x_i - mean) * rstd * g + b. */
static inline void layernorm_row(float *yi, const float *xi, float m, float r, const float *g,
                                 const float *b, int D) {
    for (int j = 0; j < D; j++) yi[j] = (xi[j] - m) * r * g[j] + b[j];
}

/* One row of D normalized while it is in cache: its statistics into *mean, *rstd, then y_i. */
static inline void layernorm_row_forward(float *yi, float *mean, float *rstd, const float *xi,
                                         const float *g, const float *b, int D) {
    float m = vec_sum(xi, D) / D;
    float r = (float)(1.0 / sqrt((double)vec_sum_sq_dev(xi, m, D) / D + 1e-5));
    *mean = m, *rstd = r;
    layernorm_row(yi, xi, m, r, g, b, D);
}

/* The rows of layernorm_forward: y and the statistics from x. */
typedef struct LayerNormRows {
    float *y, *mean, *rstd;  // (N, D), (N), (N)
    const float *x, *g, *b;  // (N, D), (D), (D)
    int D;
} LayerNormRows;

static void layernorm_forward_rows(void *arg, int i0, int i1) {
    const LayerNormRows *l = arg;
    for (int i = i0; i < i1; i++)
        layernorm_row_forward(l->y + (long)i * l->D, l->mean + i, l->rstd + i,
                              l->x + (long)i * l->D, l->g, l->b, l->D);
}

void layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *g,
                       const float *b, int N, int D) {
    LayerNormRows l = {y, mean, rstd, x, g, b, D};
    shares_for(N, ROWS_LEAST, (long)N * D >= OMP_MIN_WORK, layernorm_forward_rows, &l);
}

/* The rows of layernorm_apply: y from x and the saved statistics. */
typedef struct LayerNormApply {
    float *y;                             // (N, D)
    const float *x, *mean, *rstd, *g, *b;  // (N, D), (N), (N), (D), (D)
    int D;
} LayerNormApply;

static void layernorm_apply_rows(void *arg, int i0, int i1) {
    const LayerNormApply *l = arg;
    for (int i = i0; i < i1; i++)
        layernorm_row(l->y + (long)i * l->D, l->x + (long)i * l->D, l->mean[i], l->rstd[i], l->g,
                      l->b, l->D);
}

void layernorm_apply(float *y, const float *x, const float *mean, const float *rstd,
                     const float *g, const float *b, int N, int D) {
    LayerNormApply l = {y, x, mean, rstd, g, b, D};
    shares_for(N, ROWS_LEAST, (long)N * D >= OMP_MIN_WORK, layernorm_apply_rows, &l);
}

/* The rows of layernorm_backward, in blocks of LN_GRAD_ROWS. */
typedef struct LayerNormGrad {
    float *dx, *df, *partial;  // (N, D), (N, D) or NULL, (blocks, 2, D)
    Dropout drop;
    const float *dy, *res, *x, *mean, *rstd, *g;  // (N, D), (N, D) or NULL, (N, D), (N), (N), (D)
    int N, D;
} LayerNormGrad;

/* Blocks [k0, k1) of LN_GRAD_ROWS rows of layernorm_backward. */
static void layernorm_backward_blocks(void *arg, int k0, int k1) {
    const LayerNormGrad *l = arg;
    const int D = l->D;
    const float *g = l->g;
    for (int k = k0; k < k1; k++) {
        float *sb = l->partial + (size_t)k * 2 * D, *sg = sb + D;  // (D), (D) the block's sums
        memset(sb, 0, sizeof(float) * 2 * D);
        const int i1 = (k + 1) * LN_GRAD_ROWS < l->N ? (k + 1) * LN_GRAD_ROWS : l->N;
        for (int i = k * LN_GRAD_ROWS; i < i1; i++) {
            const float *dyi = l->dy + (long)i * D, *xi = l->x + (long)i * D;
            float *dxi = l->dx + (long)i * D;
            const float *resi = l->res ? l->res + (long)i * D : NULL;
            float m = l->mean[i], r = l->rstd[i];
            // the sums of dy*g and of dy*g*xhat, in vectors (short rows: latency-bound)
            vfloat s_dyg = {0}, s_dyg_xhat = {0};
            for (int j = 0; j < D; j += VF_LANES) {
                int n = D - j < VF_LANES ? D - j : VF_LANES;
                vfloat dyg = vf_load_partial(dyi + j, n) * vf_load_partial(g + j, n);
                s_dyg += dyg;
                s_dyg_xhat += dyg * ((vf_load_partial(xi + j, n) - m) * r);  // 0 where dyg is
            }
            float a = vf_sum(s_dyg) / D, bb = vf_sum(s_dyg_xhat) / D;
#pragma omp simd
            for (int j = 0; j < D; j++) {
                float xhat = (xi[j] - m) * r;
                dxi[j] = (resi ? resi[j] : 0.0f) + r * (dyi[j] * g[j] - a - xhat * bb);
                sb[j] += dyi[j];
                sg[j] += dyi[j] * xhat;
            }
            if (l->df && l->drop.key)
                dropout_mul(l->df + (long)i * D, dxi, D, (uint64_t)i * D, &l->drop);
            else if (l->df)
                memcpy(l->df + (long)i * D, dxi, sizeof(float) * D);
        }
    }
}

void layernorm_backward(float *dx, float *df, Dropout drop, float *dg, float *db, const float *dy,
                        const float *res, const float *x, const float *mean, const float *rstd,
                        const float *g, int N, int D, float *partial) {
    // dx = res + rstd * (dy*g - mean(dy*g) - xhat * mean(dy*g*xhat))
    const int blocks = (N + LN_GRAD_ROWS - 1) / LN_GRAD_ROWS;
    LayerNormGrad l = {dx, df, partial, drop, dy, res, x, mean, rstd, g, N, D};
    shares_for(blocks, 1, (long)N * D >= OMP_MIN_WORK, layernorm_backward_blocks, &l);
    float *sum = partial + (size_t)blocks * 2 * D;  // (2D) the blocks' sums, in order
    memset(sum, 0, sizeof(float) * 2 * D);
    colsum_add(sum, partial, blocks, 2 * D);
    for (int j = 0; j < D; j++) db[j] += sum[j], dg[j] += sum[D + j];
}

/* With dropout on, the elementwise layers below walk their n elements in chunks of DROPOUT_CHUNK:
 * the chunk at c0 has m = chunk_factors(factor, c0, n, &d) elements and their dropout factors.
 * With dropout off (decoding, validation) each has a loop without factors. */
static int chunk_factors(float *factor, long c0, long n, const Dropout *d) {
    int m = dropout_chunk_len(c0, n);
    dropout_factors(factor, (uint64_t)c0, m, d);
    return m;
}

/* out[e] = x[e] + dropout(f)[e] for the n elements from element `first` on. */
static void residual_span(float *out, const float *x, const float *f, long first, long n,
                          const Dropout *d) {
    if (!d->key) {
        for (long e = 0; e < n; e++) out[e] = x[e] + f[e];
        return;
    }
    for (long c0 = 0; c0 < n; c0 += DROPOUT_CHUNK) {
        float factor[DROPOUT_CHUNK];
        int m = chunk_factors(factor, first + c0, first + n, d);
        for (int e = 0; e < m; e++) out[c0 + e] = x[c0 + e] + f[c0 + e] * factor[e];
    }
}

/* The elements of dropout_apply (f NULL) or residual_forward with dropout on, by chunks of
 * DROPOUT_CHUNK: out (n) = dropout(x), or x + dropout(f). */
typedef struct DropoutChunks {
    float *out;
    const float *x, *f;
    long n;
    Dropout d;
} DropoutChunks;

static int dropout_chunks(long n) { return (int)((n + DROPOUT_CHUNK - 1) / DROPOUT_CHUNK); }

static void dropout_apply_chunks(void *arg, int c0, int c1) {
    const DropoutChunks *k = arg;
    for (long e0 = (long)c0 * DROPOUT_CHUNK; e0 < (long)c1 * DROPOUT_CHUNK; e0 += DROPOUT_CHUNK) {
        const int m = dropout_chunk_len(e0, k->n);
        if (k->f)
            residual_span(k->out + e0, k->x + e0, k->f + e0, e0, m, &k->d);
        else
            dropout_mul(k->out + e0, k->x + e0, m, (uint64_t)e0, &k->d);
    }
}

void dropout_apply(float *out, const float *x, long n, Dropout d) {
    if (!d.key) {
        if (out == x) return;
#pragma omp parallel for simd schedule(static) if (n >= OMP_MIN_WORK)
        for (long e = 0; e < n; e++) out[e] = x[e];
        return;
    }
    DropoutChunks k = {out, x, NULL, n, d};
    shares_for(dropout_chunks(n), 1, n >= OMP_MIN_WORK, dropout_apply_chunks, &k);
}

void residual_forward(float *out, const float *x, const float *f, long n, Dropout d) {
    if (!d.key) {
#pragma omp parallel for simd schedule(static) if (n >= OMP_MIN_WORK)
        for (long e = 0; e < n; e++) out[e] = x[e] + f[e];
        return;
    }
    DropoutChunks k = {out, x, f, n, d};
    shares_for(dropout_chunks(n), 1, n >= OMP_MIN_WORK, dropout_apply_chunks, &k);
}

/* The rows of residual_layernorm_forward: the sum, then its LayerNorm. */
typedef struct ResidualLayerNorm {
    float *y, *sum, *mean, *rstd;  // (N, D), (N, D), (N), (N)
    const float *x, *f, *g, *b;    // (N, D), (N, D), (D), (D)
    int D;
    Dropout d;
} ResidualLayerNorm;

static void residual_layernorm_rows(void *arg, int i0, int i1) {
    const ResidualLayerNorm *l = arg;
    for (int i = i0; i < i1; i++) {
        const long row = (long)i * l->D;
        residual_span(l->sum + row, l->x + row, l->f + row, row, l->D, &l->d);
        layernorm_row_forward(l->y + row, l->mean + i, l->rstd + i, l->sum + row, l->g, l->b,
                              l->D);
    }
}

void residual_layernorm_forward(float *y, float *sum, float *mean, float *rstd, const float *x,
                                const float *f, const float *g, const float *b, int N, int D,
                                Dropout d) {
    ResidualLayerNorm l = {y, sum, mean, rstd, x, f, g, b, D, d};
    shares_for(N, ROWS_LEAST, (long)N * D >= OMP_MIN_WORK, residual_layernorm_rows, &l);
}

/* The elements of relu_dropout_backward. */
typedef struct ReluDropoutGrad {
    float *dh;       // (n)
    const float *h;  // (n)
    long n;
    float scale;
} ReluDropoutGrad;

/* Elements [c0 * DROPOUT_CHUNK, c1 * DROPOUT_CHUNK) of relu_dropout_backward. */
static void relu_dropout_backward_chunks(void *arg, int c0, int c1) {
    const ReluDropoutGrad *r = arg;
    const long e1 = (long)c1 * DROPOUT_CHUNK < r->n ? (long)c1 * DROPOUT_CHUNK : r->n;
    float *dh = r->dh;
    const float *h = r->h;
    const float scale = r->scale;
#pragma omp simd
    for (long e = (long)c0 * DROPOUT_CHUNK; e < e1; e++) dh[e] = h[e] > 0.0f ? dh[e] * scale : 0.0f;
}

void relu_dropout_backward(float *dh, const float *h, long n, Dropout d) {
    ReluDropoutGrad r = {dh, h, n, d.scale};  // a scale of 1 with dropout off
    shares_for(dropout_chunks(n), 1, n >= OMP_MIN_WORK, relu_dropout_backward_chunks, &r);
}

void position_table_fill(float *pe, int P, int D) {
    for (int pos = 0; pos < P; pos++)
        for (int i = 0; i < D; i++) {
            double angle = pos / pow(10000.0, (double)(i / 2 * 2) / D);
            pe[(long)pos * D + i] = (float)(i % 2 ? cos(angle) : sin(angle));
        }
}

void embedding_forward(float *x, const int32_t *tok, const float *emb, const float *pe, int B,
                       int T, int D, float scale, int pos_offset) {
#pragma omp parallel for collapse(2) schedule(static) if ((long)B * T * D >= OMP_MIN_WORK)
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const float *e = emb + (long)tok[b * T + t] * D;
            const float *pt = pe + (long)(pos_offset + t) * D;
            float *xi = x + ((long)b * T + t) * D;
            for (int j = 0; j < D; j++) xi[j] = e[j] * scale + pt[j];
        }
}

void embedding_backward(float *demb, const float *dx, const int32_t *tok, int N, int D,
                        float scale) {
    // Threads own column ranges of the table, so rows shared by many tokens never race.
#pragma omp parallel if ((long)N * D >= OMP_MIN_WORK)
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        int j0 = (int)((long)D * t / nt), j1 = (int)((long)D * (t + 1) / nt);
        for (int i = 0; i < N; i++) {
            float *e = demb + (long)tok[i] * D;
            const float *g = dx + (long)i * D;
            for (int j = j0; j < j1; j++) e[j] += scale * g[j];
        }
    }
}
