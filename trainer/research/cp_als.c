/* cp_als.c: CP-ALS for key-query tensors (cp_als.h), after collab-attention.md §4.3.
 * With WQ = w_q^T and WK = w_k^T (D x Dk) and h(j) the head of column j:
 *   mode q:  Wq = [WQ (C o M_h)] [(M^T M) o (Wk^T Wk)]^-1          C  = WK^T Wk   (Dk x R)
 *   mode h:  M[h, r] = sum_{j in h} Pq[j, r] C[j, r], times [(Wq^T Wq) o (Wk^T Wk)]^-1,
 *                                                                 Pq = WQ^T Wq   (Dk x R)
 *   mode k:  Wk = [WK (Pq o M_h)] [(Wq^T Wq) o (M^T M)]^-1
 * where (X o M_h)[j, r] = X[j, r] M[h(j), r]; the error uses the last MTTKRP:
 *   ||T - [[.]]||^2 = ||T||^2 + sum (Gq o Gm o Gk) - 2 <N_k, Wk>. */
#include "cp_als.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "linalg.h"
#include "rng.h"

typedef struct Work {
    double *wq, *wk;   // (Dk, D) the weights in double
    double *C, *Pq;    // (Dk, R)
    double *G;         // (Dk, R) scaled copy
    double *N;         // (D, R) MTTKRP
    double *Gq, *Gm, *Gk, *V;  // (R, R) Gram matrices and the system
} Work;

static void gram(double *out, const double *X, int rows, int R) {  // X^T X
    dgemm_rm(true, false, R, R, rows, 1.0, X, R, X, R, 0.0, out, R);
}

static void hadamard(double *out, const double *a, const double *b, int n) {
    for (int i = 0; i < n; i++) out[i] = a[i] * b[i];
}

/* out[j, r] = X[j, r] * M[h(j), r] */
static void scale_by_head(double *out, const double *X, const double *M, int Dk, int d, int R) {
    for (int j = 0; j < Dk; j++)
        for (int r = 0; r < R; r++) out[j * R + r] = X[j * R + r] * M[(j / d) * R + r];
}

double cp_tensor_norm2(const float *w_q, const float *w_k, int H, int d, int D) {
    // ||T||^2 = sum_h trace((A_h^T A_h)(B_h^T B_h)) with A_h^T A_h the d x d block of w_q w_q^T
    double total = 0;
    for (int h = 0; h < H; h++)
        for (int a = 0; a < d; a++)
            for (int b = 0; b < d; b++) {
                const float *qa = w_q + (size_t)(h * d + a) * D, *qb = w_q + (size_t)(h * d + b) * D;
                const float *ka = w_k + (size_t)(h * d + a) * D, *kb = w_k + (size_t)(h * d + b) * D;
                double gq = 0, gk = 0;
                for (int i = 0; i < D; i++) gq += (double)qa[i] * qb[i], gk += (double)ka[i] * kb[i];
                total += gq * gk;
            }
    return total;
}

static Work work_alloc(const float *w_q, const float *w_k, int Dk, int D, int R) {
    Work w;
    w.wq = xmalloc(sizeof(double) * Dk * D), w.wk = xmalloc(sizeof(double) * Dk * D);
    for (size_t i = 0; i < (size_t)Dk * D; i++) w.wq[i] = w_q[i], w.wk[i] = w_k[i];
    w.C = xmalloc(sizeof(double) * Dk * R), w.Pq = xmalloc(sizeof(double) * Dk * R);
    w.G = xmalloc(sizeof(double) * Dk * R), w.N = xmalloc(sizeof(double) * D * R);
    w.Gq = xmalloc(sizeof(double) * R * R), w.Gm = xmalloc(sizeof(double) * R * R);
    w.Gk = xmalloc(sizeof(double) * R * R), w.V = xmalloc(sizeof(double) * R * R);
    return w;
}

static void work_free(Work *w) {
    free(w->wq), free(w->wk), free(w->C), free(w->Pq), free(w->G), free(w->N);
    free(w->Gq), free(w->Gm), free(w->Gk), free(w->V);
}

/* Mode h: M = [sum_{j in h} Pq o C] [(Wq^T Wq) o (Wk^T Wk)]^-1, with w->Pq and w->C current;
 * leaves Gq and Gk of the factors in w. */
static void update_mixing(Work *w, double *M, const double *Wq, const double *Wk, int H, int d,
                          int D, int R) {
    const int Dk = H * d;
    memset(M, 0, sizeof(double) * H * R);
    for (int j = 0; j < Dk; j++)
        for (int r = 0; r < R; r++) M[(j / d) * R + r] += w->Pq[j * R + r] * w->C[j * R + r];
    gram(w->Gq, Wq, D, R), gram(w->Gk, Wk, D, R);
    hadamard(w->V, w->Gq, w->Gk, R * R);
    solve_spd_right(M, w->V, H, R);
}

/* HOSVD start: Wq, Wk = the leading R eigenvectors of the mode-q and mode-k unfoldings' Gram
 * matrices, sum_h A_h (B_h^T B_h) A_h^T and sum_h B_h (A_h^T A_h) B_h^T (D x D), scaled by the
 * fourth root of their eigenvalues; a small seeded perturbation breaks ties. */
static void init_factors(Work *w, int H, int d, int D, int R, uint64_t seed, double *Wq,
                         double *Wk) {
    const int Dk = H * d;
    double *GA = xcalloc((size_t)Dk * Dk, sizeof(double)), *GB = xcalloc((size_t)Dk * Dk, sizeof(double));
    dgemm_rm(false, true, Dk, Dk, D, 1.0, w->wq, D, w->wq, D, 0.0, GA, Dk);  // A^T A blocks
    dgemm_rm(false, true, Dk, Dk, D, 1.0, w->wk, D, w->wk, D, 0.0, GB, Dk);
    for (int i = 0; i < Dk; i++)  // keep each head's d x d diagonal block only
        for (int j = 0; j < Dk; j++)
            if (i / d != j / d) GA[(size_t)i * Dk + j] = GB[(size_t)i * Dk + j] = 0;
    double *X = xmalloc(sizeof(double) * Dk * D), *S = xmalloc(sizeof(double) * D * D),
           *ev = xmalloc(sizeof(double) * D);
    Rng rng = rng_init(seed, 77);
    for (int side = 0; side < 2; side++) {
        const double *own = side ? w->wk : w->wq, *G = side ? GA : GB;
        double *F = side ? Wk : Wq;
        dgemm_rm(false, false, Dk, D, Dk, 1.0, G, Dk, own, D, 0.0, X, D);   // (B^T B) A^T per head
        dgemm_rm(true, false, D, D, Dk, 1.0, own, D, X, D, 0.0, S, D);      // sum_h A (B^T B) A^T
        sym_eigen(S, D, ev);
        for (int r = 0; r < R; r++) {
            double scale = r < D && ev[r] > 0 ? pow(ev[r], 0.25) : 0;
            for (int i = 0; i < D; i++)
                F[i * R + r] = (r < D ? S[(size_t)r * D + i] : 0) * scale + 1e-3 * rng_normal(&rng);
        }
    }
    free(GA), free(GB), free(X), free(S), free(ev);
}

CpResult cp_als(const float *w_q, const float *w_k, int H, int d, int D, const CpOptions *o,
                double *Wq, double *M, double *Wk) {
    const int Dk = H * d, R = o->rank;
    Work w = work_alloc(w_q, w_k, Dk, D, R);
    double t2 = cp_tensor_norm2(w_q, w_k, H, d, D);
    CHECK(t2 > 0, "the key-query tensor is zero");
    init_factors(&w, H, d, D, R, o->seed, Wq, Wk);
    // M from the first two factors (the mode-h update), then sweeps over q, h, k
    dgemm_rm(false, false, Dk, R, D, 1.0, w.wk, D, Wk, R, 0.0, w.C, R);
    dgemm_rm(false, false, Dk, R, D, 1.0, w.wq, D, Wq, R, 0.0, w.Pq, R);
    update_mixing(&w, M, Wq, Wk, H, d, D, R);
    CpResult res = {1.0, 0};
    double prev = INFINITY;
    for (int it = 1; it <= o->max_iter; it++) {
        // mode q
        dgemm_rm(false, false, Dk, R, D, 1.0, w.wk, D, Wk, R, 0.0, w.C, R);  // C = WK^T Wk
        scale_by_head(w.G, w.C, M, Dk, d, R);
        dgemm_rm(true, false, D, R, Dk, 1.0, w.wq, D, w.G, R, 0.0, Wq, R);   // WQ G
        gram(w.Gm, M, H, R), gram(w.Gk, Wk, D, R);
        hadamard(w.V, w.Gm, w.Gk, R * R);
        solve_spd_right(Wq, w.V, D, R);
        // mode h
        dgemm_rm(false, false, Dk, R, D, 1.0, w.wq, D, Wq, R, 0.0, w.Pq, R);  // Pq = WQ^T Wq
        update_mixing(&w, M, Wq, Wk, H, d, D, R);
        // mode k
        scale_by_head(w.G, w.Pq, M, Dk, d, R);
        dgemm_rm(true, false, D, R, Dk, 1.0, w.wk, D, w.G, R, 0.0, w.N, R);  // WK G
        gram(w.Gm, M, H, R);
        hadamard(w.V, w.Gq, w.Gm, R * R);
        memcpy(Wk, w.N, sizeof(double) * D * R);
        solve_spd_right(Wk, w.V, D, R);
        // error from the mode-k MTTKRP: <T, [[.]]> = <N, Wk>
        gram(w.Gk, Wk, D, R);
        double model2 = 0, ip = 0;
        for (int i = 0; i < R * R; i++) model2 += w.Gq[i] * w.Gm[i] * w.Gk[i];
        for (int i = 0; i < D * R; i++) ip += w.N[i] * Wk[i];
        double err = sqrt(fabs(t2 + model2 - 2 * ip) / t2);
        res.rel_error = err, res.iterations = it;
        if (fabs(prev - err) < o->tol) break;
        prev = err;
    }
    // each rank-1 component's three factors to the same norm (good for fine-tuning with Adam)
    for (int r = 0; r < R; r++) {
        double nq = 0, nm = 0, nk = 0;
        for (int i = 0; i < D; i++) nq += Wq[i * R + r] * Wq[i * R + r], nk += Wk[i * R + r] * Wk[i * R + r];
        for (int h = 0; h < H; h++) nm += M[h * R + r] * M[h * R + r];
        nq = sqrt(nq), nm = sqrt(nm), nk = sqrt(nk);
        if (nq == 0 || nm == 0 || nk == 0) continue;
        double c = cbrt(nq * nm * nk);
        for (int i = 0; i < D; i++) Wq[i * R + r] *= c / nq, Wk[i * R + r] *= c / nk;
        for (int h = 0; h < H; h++) M[h * R + r] *= c / nm;
    }
    work_free(&w);
    return res;
}
