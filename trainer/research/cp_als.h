/* cp_als.h: the CP (PARAFAC) decomposition that turns trained concat attention into collab
 * attention (collab-attention.md §4). For one attention module the per-head key-query products
 * T[q, h, k] = sum_{c in head h} W_Q[q, c] W_K[k, c] (D x H x D; W_Q, W_K of width D_k = H d in
 * paper layout) are approximated by rank R factors: T ~ sum_r Wq[:, r] (x) M[:, r] (x) Wk[:, r].
 * Alternating least squares in double precision, never forming T: every update is a few
 * D x D_k x R GEMMs and an R x R solve (§4.3). */
#ifndef NMT_CP_ALS_H
#define NMT_CP_ALS_H

#include <stdint.h>

typedef struct CpOptions {
    int rank;          // R = D~k
    int max_iter;      // ALS sweeps at most
    double tol;        // stop when the relative error changes by less
    uint64_t seed;     // random initialization
} CpOptions;

typedef struct CpResult {
    double rel_error;  // ||T - [[Wq, M, Wk]]|| / ||T||
    int iterations;
} CpResult;

/* w_q, w_k: (H*d, D) as stored in the model (nn.Linear layout, head h owns rows h*d ..).
 * Out: Wq (D, R), M (H, R), Wk (D, R), with each rank-1 component's three factors rescaled to
 * equal norms. */
CpResult cp_als(const float *w_q, const float *w_k, int H, int d, int D, const CpOptions *o,
                double *Wq, double *M, double *Wk);

/* ||T||^2 of the module. */
double cp_tensor_norm2(const float *w_q, const float *w_k, int H, int d, int D);

#endif
