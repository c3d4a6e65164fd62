/* linalg.c: double-precision BLAS/LAPACK wrappers of linalg.h. LAPACK is column-major; the
 * symmetric matrices here are their own transposes, and a row-major (m, n) right-hand side is a
 * column-major (n, m) one, so no copies are needed. */
#include "linalg.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda,
            double *b, const int *ldb, int *info);
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
             double *w, double *work, const int *lwork, int *iwork, const int *liwork, int *info);

void dgemm_rm(bool ta, bool tb, int M, int N, int K, double alpha, const double *A, int lda,
              const double *B, int ldb, double beta, double *C, int ldc) {
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M,
                N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void solve_spd_right(double *B, const double *S, int m, int n) {
    double *a = xmalloc(sizeof(double) * n * n), *b = xmalloc(sizeof(double) * m * n);
    double trace = 0;
    for (int i = 0; i < n; i++) trace += S[i * n + i];
    for (double ridge = 0; ; ridge = ridge ? ridge * 1e3 : 1e-12 * (trace > 0 ? trace : 1) / n) {
        memcpy(a, S, sizeof(double) * n * n);
        memcpy(b, B, sizeof(double) * m * n);
        for (int i = 0; i < n; i++) a[i * n + i] += ridge;
        int info;
        dposv_("U", &n, &m, a, &n, b, &n, &info);
        if (info == 0) break;
        CHECK(info > 0 && ridge < trace, "dposv failed (info %d)", info);
    }
    memcpy(B, b, sizeof(double) * m * n);
    free(a), free(b);
}

static void syevd(const char *jobz, double *A, int n, double *w) {
    int info, lwork = -1, liwork = -1, iwq;
    double wq;
    dsyevd_(jobz, "U", &n, A, &n, w, &wq, &lwork, &iwq, &liwork, &info);
    lwork = (int)wq, liwork = iwq;
    double *work = xmalloc(sizeof(double) * lwork);
    int *iwork = xmalloc(sizeof(int) * liwork);
    dsyevd_(jobz, "U", &n, A, &n, w, work, &lwork, iwork, &liwork, &info);
    CHECK(info == 0, "dsyevd failed (info %d)", info);
    free(work), free(iwork);
}

void sym_eigenvalues(double *A, int n, double *w) {
    syevd("N", A, n, w);
    for (int i = 0; i < n / 2; i++) {  // LAPACK gives them ascending
        double t = w[i];
        w[i] = w[n - 1 - i], w[n - 1 - i] = t;
    }
}

void sym_eigen(double *A, int n, double *w) {
    syevd("V", A, n, w);  // column j of the column-major result = row j of A here
    for (int i = 0; i < n / 2; i++) {
        int j = n - 1 - i;
        double t = w[i];
        w[i] = w[j], w[j] = t;
        for (int c = 0; c < n; c++) {
            t = A[(size_t)i * n + c];
            A[(size_t)i * n + c] = A[(size_t)j * n + c], A[(size_t)j * n + c] = t;
        }
    }
}
