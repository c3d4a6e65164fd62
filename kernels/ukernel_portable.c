/* ukernel_portable.c: the 4 x 16 micro-kernel in plain C, for CPUs without AVX2; the compiler
 * vectorizes the inner loop for whatever the baseline ISA offers. */
#include "ukernel.h"

enum { MR = 4, NR = 16 };

static inline __attribute__((always_inline)) void tile_4x16(int k, const float *a, long rsa,
                                                              long csa, const float *bp, float *c,
                                                              long ldc, int m, int n, float alpha,
                                                              float beta) {
    float acc[MR][NR] = {{0}};
    for (int p = 0; p < k; p++) {
        for (int i = 0; i < MR; i++) {
            float ai = a[i * rsa];
            for (int j = 0; j < NR; j++) acc[i][j] += ai * bp[j];
        }
        a += csa;
        bp += NR;
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float *cij = c + i * ldc + j;
            *cij = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *cij;
        }
}

static void packed_4x16(int k, const float *a, long rsa, long csa, const float *bp, float *c,
                        long ldc, int m, int n, float alpha, float beta) {
    (void)rsa, (void)csa;
    tile_4x16(k, a, 1, MR, bp, c, ldc, m, n, alpha, beta);
}

static void strided_4x16(int k, const float *a, long rsa, long csa, const float *bp, float *c,
                         long ldc, int m, int n, float alpha, float beta) {
    tile_4x16(k, a, rsa, csa, bp, c, ldc, m, n, alpha, beta);
}

const Ukernel ukernel_portable = {"portable 4x16", MR, NR, 128, 256, 2048, packed_4x16,
                                  strided_4x16};
