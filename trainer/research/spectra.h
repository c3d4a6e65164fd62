/* spectra.h: how redundant are the key/query projections of an attention module? The squared
 * singular values of each head's W_Q^h, W_K^h and P_h = W_Q^h W_K^h^T, of W_Q and W_K concatenated
 * over heads and of [P_1 | ... | P_H] (collab-attention.md §6), in double precision through Gram
 * matrices and symmetric eigenproblems, never forming the D x (H D) matrix. Used by `nmt analyze`.
 */
#ifndef NMT_SPECTRA_H
#define NMT_SPECTRA_H

/* The shapes of a model's key/query projections: W_Q, W_K are (Dk, D), head h owns rows
 * h*d .. h*d+d-1. */
typedef struct QkShape {
    int H, D, Dk, d;
} QkShape;

/* Squared singular values (descending) of one attention module's key/query projections. */
typedef struct ModuleSpectra {
    double *heads[3]; // W_Q^h, W_K^h, P_h: (H, d)
    double *cat[3];   // W_Q, W_K concatenated over heads: (min(Dk, D)); [P_1 | ... | P_H]: (D)
    int catn[3];
} ModuleSpectra;

void module_spectra(const float *wq, const float *wk, QkShape sh, ModuleSpectra *s);
void module_spectra_free(ModuleSpectra *s);

/* Smallest r whose explained energy E(r) = sum_{j<=r} s2_j / sum_j s2_j reaches frac
 * (s2: (n) squared singular values, descending). */
int spectra_energy_rank(const double *s2, int n, double frac);

/* W_Q, W_K (Dk, D) of i.i.d. standard normal entries (seeded): the spectra of an untrained,
 * randomly initialized module, the reference a trained one is read against. */
void spectra_gaussian_projections(QkShape sh, float *wq, float *wk);

#endif
