/* linalg.h: the double-precision dense linear algebra of the analysis tools (CP decomposition,
 * spectra): row-major GEMM, a symmetric positive definite solve and symmetric eigenvalues,
 * through OpenBLAS's BLAS and LAPACK. Training never uses these. */
#ifndef NMT_LINALG_H
#define NMT_LINALG_H

#include <stdbool.h>

/* C(M,N) = alpha op(A) op(B) + beta C, row-major (cblas_dgemm). */
void dgemm_rm(bool ta, bool tb, int M, int N, int K, double alpha, const double *A, int lda,
              const double *B, int ldb, double beta, double *C, int ldc);

/* X S = B for symmetric positive (semi)definite S (n, n): B (m, n) is replaced by
 * X = B S^-1. When S is singular a ridge of 1e-12 * trace(S) / n makes it definite.
 * S is not modified. */
void solve_spd_right(double *B, const double *S, int m, int n);

/* Eigenvalues of the symmetric A (n, n), descending into w (n); A is overwritten. */
void sym_eigenvalues(double *A, int n, double *w);
/* Eigenvalues descending into w (n) and, replacing A, the eigenvectors as rows in that order. */
void sym_eigen(double *A, int n, double *w);

#endif
