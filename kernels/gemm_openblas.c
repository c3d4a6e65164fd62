/* gemm_openblas.c: cblas_sgemm of OpenBLAS's OpenMP build. That build runs single-threaded when
 * called inside an OpenMP parallel region, so the same call serves as the serial entry point. */
#include <cblas.h>

#include "gemm_backends.h"

static void sgemm_openblas(bool ta, bool tb, int M, int N, int K, float alpha, const float *A,
                           int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M,
                N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

const GemmImpl gemm_openblas = {"openblas", "OpenMP build," OPENBLAS_VERSION,
                                sgemm_openblas, sgemm_openblas};
