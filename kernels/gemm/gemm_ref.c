/* gemm_ref.c: the naive GEMM, the oracle every other backend is tested against.
 * Accumulates each dot product in double so it is more accurate than what it checks. */
#include <stddef.h>

#include "gemm_backends.h"

static void sgemm_ref(bool ta, bool tb, int M, int N, int K, float alpha, const float *A, int lda,
                      const float *B, int ldb, float beta, float *C, int ldc) {
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int p = 0; p < K; p++) {
                float a = ta ? A[(size_t)p * lda + i] : A[(size_t)i * lda + p];
                float b = tb ? B[(size_t)j * ldb + p] : B[(size_t)p * ldb + j];
                acc += (double)a * (double)b;
            }
            float *c = &C[(size_t)i * ldc + j];
            *c = beta == 0.0f ? alpha * (float)acc : alpha * (float)acc + beta * *c;
        }
    }
}

const GemmImpl gemm_ref = {"ref", "naive loops, double accumulation", sgemm_ref, sgemm_ref,
                           NULL, NULL, NULL};
