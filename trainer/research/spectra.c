/* spectra.c: singular value spectra of attention key/query projections (spectra.h). */
#include "spectra.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "linalg.h"
#include "rng.h"

int spectra_energy_rank(const double *s2, int n, double frac) {
    double total = 0, acc = 0;
    for (int i = 0; i < n; i++) total += s2[i];
    for (int i = 0; i < n; i++)
        if ((acc += s2[i]) >= frac * total) return i + 1;
    return n;
}

/* Singular values squared (descending) from a symmetric PSD Gram matrix (destroyed). */
static void spectrum(double *gram, int n, double *s2) {
    sym_eigenvalues(gram, n, s2);
    for (int i = 0; i < n; i++) s2[i] = s2[i] > 0 ? s2[i] : 0;
}

void module_spectra(const float *wq, const float *wk, QkShape sh, ModuleSpectra *s) {
    const int H = sh.H, D = sh.D, Dk = sh.Dk, d = sh.d;
    double *A = xmalloc(sizeof(double) * D * Dk), *B = xmalloc(sizeof(double) * D * Dk); // (Dk, D)
    for (size_t e = 0; e < (size_t)Dk * D; e++) A[e] = wq[e], B[e] = wk[e];
    double *ga = xmalloc(sizeof(double) * d * d), *gb = xmalloc(sizeof(double) * d * d); // (d, d)
    double *evec = xmalloc(sizeof(double) * d * d), *ev = xmalloc(sizeof(double) * d);
    double *half = xmalloc(sizeof(double) * d * d), *t = xmalloc(sizeof(double) * d * d);
    for (int w = 0; w < 3; w++) s->heads[w] = xmalloc(sizeof(double) * H * d);
    for (int h = 0; h < H; h++) {
        const double *Ah = A + (size_t)h * d * D, *Bh = B + (size_t)h * d * D;
        dgemm_rm(false, true, d, d, D, 1.0, Ah, D, Ah, D, 0.0, ga, d); // A_h A_h^T
        dgemm_rm(false, true, d, d, D, 1.0, Bh, D, Bh, D, 0.0, gb, d);
        // sigma(P_h)^2 = eig(ga^1/2 gb ga^1/2)
        memcpy(evec, ga, sizeof(double) * d * d);
        sym_eigen(evec, d, ev);
        memset(half, 0, sizeof(double) * d * d);
        for (int r = 0; r < d; r++) {
            double sq = ev[r] > 0 ? sqrt(ev[r]) : 0;
            for (int a = 0; a < d; a++)
                for (int b = 0; b < d; b++)
                    half[a * d + b] += sq * evec[r * d + a] * evec[r * d + b];
        }
        dgemm_rm(false, false, d, d, d, 1.0, half, d, gb, d, 0.0, t, d);
        dgemm_rm(false, false, d, d, d, 1.0, t, d, half, d, 0.0, evec, d);
        spectrum(evec, d, s->heads[2] + h * d);
        spectrum(ga, d, s->heads[0] + h * d);
        spectrum(gb, d, s->heads[1] + h * d);
    }
    // concatenated: W_Q and W_K through their (Dk, Dk) Grams; [P_1|...|P_H] through the (D, D)
    // matrix sum_h A_h^T (B_h B_h^T) A_h
    s->catn[0] = s->catn[1] = Dk < D ? Dk : D, s->catn[2] = D;
    for (int w = 0; w < 3; w++) s->cat[w] = xmalloc(sizeof(double) * (w == 2 ? D : Dk));
    double *gq = xmalloc(sizeof(double) * Dk * Dk); // (Dk, Dk)
    double *X = xmalloc(sizeof(double) * Dk * D),
           *G = xmalloc(sizeof(double) * D * D); // (Dk, D), (D, D)
    dgemm_rm(false, true, Dk, Dk, D, 1.0, A, D, A, D, 0.0, gq, Dk);
    spectrum(gq, Dk, s->cat[0]);
    dgemm_rm(false, true, Dk, Dk, D, 1.0, B, D, B, D, 0.0, gq, Dk);
    for (int a = 0; a < Dk; a++) // keep the heads' diagonal blocks of B B^T
        for (int b = 0; b < Dk; b++)
            if (a / d != b / d) gq[a * Dk + b] = 0;
    dgemm_rm(false, false, Dk, D, Dk, 1.0, gq, Dk, A, D, 0.0, X, D);
    dgemm_rm(true, false, D, D, Dk, 1.0, A, D, X, D, 0.0, G, D);
    spectrum(G, D, s->cat[2]);
    dgemm_rm(false, true, Dk, Dk, D, 1.0, B, D, B, D, 0.0, gq, Dk);
    spectrum(gq, Dk, s->cat[1]);
    free(A), free(B), free(ga), free(gb), free(evec), free(ev), free(half), free(t), free(gq),
        free(X), free(G);
}

void module_spectra_free(ModuleSpectra *s) {
    for (int w = 0; w < 3; w++) free(s->heads[w]), free(s->cat[w]);
}

/* The reference row: what the same analysis gives for W_Q, W_K of i.i.d. Gaussian entries (the
 * spectrum of an untrained, randomly initialized module), so a trained module's ranks can be
 * read as "lower than chance" or not. */
void spectra_gaussian_projections(QkShape sh, float *wq, float *wk) { // (Dk, D) each
    Rng rng = rng_init(1, 0);
    for (size_t e = 0; e < (size_t)sh.Dk * sh.D; e++) wq[e] = (float)rng_normal(&rng);
    for (size_t e = 0; e < (size_t)sh.Dk * sh.D; e++) wk[e] = (float)rng_normal(&rng);
}
