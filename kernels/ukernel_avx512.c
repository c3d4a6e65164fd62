/* ukernel_avx512.c: the 12 x 32 AVX-512 micro-kernel (24 zmm accumulators, two B vectors and a
 * broadcast A element per step), the mirror of BLIS's 32 x 12 skx kernel for row-major C.
 * Edge columns use masked loads and stores, so attention-sized products need no padding of C.
 * Only this file is compiled with -mavx512f. */
#include <immintrin.h>

#include "ukernel.h"

enum { MR = 12, NR = 32 };

static inline __attribute__((always_inline)) void tile_12x32(int k, const float *a, long rsa,
                                                               long csa, const float *bp, float *c,
                                                               long ldc, int m, int n, float alpha,
                                                               float beta) {
    __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) acc0[i] = acc1[i] = _mm512_setzero_ps();
    for (int p = 0; p < k; p++) {
        __m512 b0 = _mm512_load_ps(bp), b1 = _mm512_load_ps(bp + 16);
#pragma GCC unroll 12
        for (int i = 0; i < MR; i++) {
            __m512 ai = _mm512_set1_ps(a[i * rsa]);
            acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
            acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
        }
        a += csa;
        bp += NR;
    }
    __mmask16 k0 = n >= 16 ? 0xFFFF : (__mmask16)((1u << n) - 1);
    __mmask16 k1 = n >= 32 ? 0xFFFF : n > 16 ? (__mmask16)((1u << (n - 16)) - 1) : 0;
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) {
        if (i >= m) break;
        float *ci = c + i * ldc;
        __m512 r0 = _mm512_mul_ps(va, acc0[i]), r1 = _mm512_mul_ps(va, acc1[i]);
        if (beta != 0.0f) {
            r0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(k0, ci), r0);
            r1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(k1, ci + 16), r1);
        }
        _mm512_mask_storeu_ps(ci, k0, r0);
        _mm512_mask_storeu_ps(ci + 16, k1, r1);
    }
}

static void packed_12x32(int k, const float *a, long rsa, long csa, const float *bp, float *c,
                         long ldc, int m, int n, float alpha, float beta) {
    (void)rsa, (void)csa;
    tile_12x32(k, a, 1, MR, bp, c, ldc, m, n, alpha, beta);
}

static void strided_12x32(int k, const float *a, long rsa, long csa, const float *bp, float *c,
                          long ldc, int m, int n, float alpha, float beta) {
    tile_12x32(k, a, rsa, csa, bp, c, ldc, m, n, alpha, beta);
}

const Ukernel ukernel_avx512 = {"avx512 12x32", MR, NR, 192, 384, 3072, packed_12x32,
                                strided_12x32};
