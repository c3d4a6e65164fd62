/* ukernel_avx2.c: the 6 x 16 AVX2+FMA micro-kernel (12 ymm accumulators), BLIS's haswell shape.
 * Edge tiles go through a small buffer. Only this file is compiled with -mavx2 -mfma. */
#include <immintrin.h>

#include "ukernel.h"

enum { MR = 6, NR = 16 };

static inline __attribute__((always_inline)) void tile_6x16(int k, const float *a, long rsa,
                                                              long csa, const float *bp, float *c,
                                                              long ldc, int m, int n, float alpha,
                                                              float beta) {
    __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) acc0[i] = acc1[i] = _mm256_setzero_ps();
    for (int p = 0; p < k; p++) {
        __m256 b0 = _mm256_load_ps(bp), b1 = _mm256_load_ps(bp + 8);
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            __m256 ai = _mm256_broadcast_ss(a + i * rsa);
            acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);
            acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);
        }
        a += csa;
        bp += NR;
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    if (m == MR && n == NR) {
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            float *ci = c + i * ldc;
            __m256 r0 = _mm256_mul_ps(va, acc0[i]), r1 = _mm256_mul_ps(va, acc1[i]);
            if (beta != 0.0f) {
                r0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci), r0);
                r1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8), r1);
            }
            _mm256_storeu_ps(ci, r0);
            _mm256_storeu_ps(ci + 8, r1);
        }
        return;
    }
    float t[MR][NR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
        _mm256_storeu_ps(t[i], acc0[i]);
        _mm256_storeu_ps(t[i] + 8, acc1[i]);
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float *cij = c + i * ldc + j;
            *cij = beta == 0.0f ? alpha * t[i][j] : alpha * t[i][j] + beta * *cij;
        }
}

static void packed_6x16(int k, const float *a, long rsa, long csa, const float *bp, float *c,
                        long ldc, int m, int n, float alpha, float beta) {
    (void)rsa, (void)csa;
    tile_6x16(k, a, 1, MR, bp, c, ldc, m, n, alpha, beta);
}

static void strided_6x16(int k, const float *a, long rsa, long csa, const float *bp, float *c,
                         long ldc, int m, int n, float alpha, float beta) {
    tile_6x16(k, a, rsa, csa, bp, c, ldc, m, n, alpha, beta);
}

const Ukernel ukernel_avx2 = {"avx2 6x16", MR, NR, 168, 256, 3072, packed_6x16, strided_6x16};
