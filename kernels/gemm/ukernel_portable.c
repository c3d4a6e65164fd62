/* ukernel_portable.c: the 4 x 16 micro-kernel in plain C, for CPUs without AVX2; the compiler
 * vectorizes the inner loop for whatever the baseline ISA offers. */
#include "ukernel.h"

enum { MR = 4, NR = 16 };

/* rows <= MR rows of A and cols <= NR columns of B are read; the packed entry passes constants. */
static inline __attribute__((always_inline)) void tile(int rows, int cols, int k, const float *a,
                                                         long rsa, long csa, const float *b,
                                                         long rsb, float *c, long ldc, int m,
                                                         int n, float alpha, float beta,
                                                         const PrefetchSpan *pf) {
    float acc[MR][NR] = {{0}};
    PrefetchCursor pfc = prefetch_start(pf, k);
    for (int p = 0; p < k; p++) {
        if (p % PREFETCH_CHUNK == 0) prefetch_step(&pfc);
        for (int i = 0; i < rows; i++) {
            float ai = a[i * rsa];
            for (int j = 0; j < cols; j++) acc[i][j] += ai * b[j];
        }
        a += csa;
        b += rsb;
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float *cij = c + i * ldc + j;
            *cij = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *cij;
        }
}

static void packed_4x16(int k, const float *a, long rsa, long csa, const float *b, long rsb,
                        float *c, long ldc, int m, int n, float alpha, float beta,
                        const PrefetchSpan *pf) {
    (void)rsa, (void)csa, (void)rsb;
    tile(MR, NR, k, a, 1, MR, b, NR, c, ldc, m, n, alpha, beta, pf);
}

static void strided_4x16(int k, const float *a, long rsa, long csa, const float *b, long rsb,
                         float *c, long ldc, int m, int n, float alpha, float beta,
                         const PrefetchSpan *pf) {
    tile(m, n, k, a, rsa, csa, b, rsb, c, ldc, m, n, alpha, beta, pf);
}

const Ukernel ukernel_portable = {"portable 4x16", MR, NR, MR, 1, 4096, 256, 512, false,
                                  packed_4x16, strided_4x16, pack_a_scalar, pack_b_scalar};
