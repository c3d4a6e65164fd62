/* loss.c: the chunked output projection + log-softmax + label-smoothed cross-entropy of loss.h. */
#include "loss.h"

#include <math.h>
#include <string.h>

#include "shares.h"
#include "vecmath.h"

/* Up to 512 rows, within 64 MiB of logits: the weight gradient of the output layer is a product
 * with K = the chunk's rows, which runs near the GEMM's full speed only from a few hundred on
 * (transformer-base, V = 32000, 2 threads of an AVX2 EPYC: the output layer took 3.26 s per step
 * with 512-row chunks against 4.09 s with 131, medians of 3 alternating runs). */
int loss_chunk_rows(int V) {
    int rows = (16 << 20) / (V > 0 ? V : 1);
    return rows < 16 ? 16 : rows > 512 ? 512 : rows;
}

/* Rows [*r0, *r0 + *n) of chunk k of N rows cut into near-equal chunks of at most
 * loss_chunk_rows(V): 4100 rows make 9 chunks of 455-456, not 8 of 512 and one of 4, whose
 * products would stream the packed embedding and the output layer's gradient for 4 rows. */
static int chunk_count(int N, int V) {
    const int C = loss_chunk_rows(V);
    return (N + C - 1) / C;
}

static void chunk_rows(int N, int chunks, int k, int *r0, int *n) {
    *r0 = (int)((long)N * k / chunks);
    *n = (int)((long)N * (k + 1) / chunks) - *r0;
}

size_t loss_work_floats(int V) {
    int C = loss_chunk_rows(V);
    return (size_t)C * V + 4 * (size_t)C + 32;  // logits + (C, 2) doubles per row
}

size_t loss_packed_bytes(int D, int V) {
    return gemm_packed_b_bytes(D, V) + gemm_packed_b_bytes(V, D);  // emb^T (D, V), emb (V, D)
}

/* The rows of a chunk of logits: their loss terms, and with `grad` their gradients in place. */
typedef struct LossRows {
    float *z;           // (n, V) the logits, then their gradient
    double *row;        // (n, 2) loss and nll per row
    const int32_t *tgt;  // (n)
    int V, pad;
    double eps, eps_i;  // label smoothing; the smoothed target's weight on each other token
    bool grad;
} LossRows;

static void loss_rows(void *arg, int i0, int i1) {
    const LossRows *l = arg;
    const int V = l->V;
    const double eps_i = l->eps_i, w_target = 1.0 - l->eps;
    for (int i = i0; i < i1; i++) {
        float *zi = l->z + (size_t)i * V;
        double *row = l->row + 2 * i;
        int y = l->tgt[i];
        if (y == l->pad) {
            row[0] = row[1] = 0.0;
            if (l->grad) memset(zi, 0, sizeof(float) * V);
            continue;
        }
        float sum_zf, mx = vec_max_sum(zi, V, &sum_zf);
        double sum_z = sum_zf, z_y = zi[y];
        float sum_e = vec_exp_shift(zi, V, mx);  // zi = exp(z - max)
        double lse = mx + log((double)sum_e);
        double nll = lse - z_y, sum_logp = sum_z - (double)V * lse;
        row[0] = (1.0 - l->eps - eps_i) * nll - eps_i * sum_logp;
        row[1] = nll;
        if (l->grad) {  // d loss / d z_v = p_v - q_v
            float inv = 1.0f / sum_e, e_i = (float)eps_i;
#pragma omp simd
            for (int v = 0; v < V; v++) zi[v] = zi[v] * inv - e_i;
            zi[y] -= (float)(w_target - eps_i);
        }
    }
}

void loss_forward_backward(const Ctx *c, LossStats *st, float *dh, float *demb, const float *h,
                           const int32_t *tgt, const float *emb, int N, int D, int V, float eps,
                           int pad, float *work, GemmPackedB packed[2]) {
    const int C = loss_chunk_rows(V), chunks = chunk_count(N, V);
    float *z = work;                                      // (C, V) logits, then their gradient
    double *row = (double *)(work + (size_t)C * V + 16);  // (C, 2) loss and nll per row
    row = (double *)(((uintptr_t)row + 7) & ~(uintptr_t)7);
    const double eps_i = V > 1 ? eps / (V - 1) : 0.0;
    GemmPackedB *emb_t = &packed[0], *emb_n = &packed[1];  // op(B) = emb^T (D, V), emb (V, D)
    gemm_pack_b(emb_t, c->gemm, true, D, V, emb, D);
    if (dh) gemm_pack_b(emb_n, c->gemm, false, V, D, emb, D);
    for (int k = 0; k < chunks; k++) {
        int r0, n;
        chunk_rows(N, chunks, k, &r0, &n);
        const float *hc = h + (size_t)r0 * D;
        sgemm_packed(emb_t, n, 1.0f, hc, D, 0.0f, z, V, NULL);
        LossRows l = {z, row, tgt + r0, V, pad, eps, eps_i, dh != NULL};
        shares_for(n, 1, (long)n * V >= OMP_MIN_WORK, loss_rows, &l);
        for (int i = 0; i < n; i++) {
            st->loss += row[2 * i];
            st->nll += row[2 * i + 1];
            st->ntok += tgt[r0 + i] != pad;
        }
        if (dh) {
            sgemm_packed(emb_n, n, 1.0f, z, V, 0.0f, dh + (size_t)r0 * D, D, NULL);
            c->gemm->sgemm(true, false, V, D, n, 1.0f, z, V, hc, D, 1.0f, demb, D);
        }
    }
}

void loss_target_logprobs(const Ctx *c, double *logp, const float *h, const int32_t *tgt,
                          const float *emb, int N, int D, int V, int pad, float *work) {
    const int chunks = chunk_count(N, V);
    for (int k = 0; k < chunks; k++) {
        int r0, n;
        chunk_rows(N, chunks, k, &r0, &n);
        c->gemm->sgemm(false, true, n, V, D, 1.0f, h + (size_t)r0 * D, D, emb, D, 0.0f, work, V);
#pragma omp parallel for schedule(static) if ((long)n * V >= OMP_MIN_WORK)
        for (int i = 0; i < n; i++) {
            const float *zi = work + (size_t)i * V;
            int y = tgt[r0 + i];
            logp[r0 + i] = y == pad ? 0.0 : zi[y] - vec_logsumexp(zi, V);
        }
    }
}
