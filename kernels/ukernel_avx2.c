/* ukernel_avx2.c: the 6 x 16 AVX2+FMA micro-kernel (12 ymm accumulators), BLIS's haswell shape.
 * The strided entry is specialised on the row count and reads B through masked loads; partial
 * column tiles go through a small buffer. Only this file is compiled with -mavx2 -mfma. */
#include <immintrin.h>

#include "ukernel.h"

enum { MR = 6, NR = 16 };

#define INLINE static inline __attribute__((always_inline))

/* Lanes [0, n) of an 8-lane vector as a maskload mask, n clamped to 0..8. */
static __m256i lanes8(int n) {
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
}

/* `rows` and `packed` (B rows complete and zero-padded: plain loads) are compile-time constants
 * in every instance. */
INLINE void tile(const int rows, const bool packed, int k, const float *a, long rsa, long csa,
                 const float *b, long rsb, float *c, long ldc, int n, float alpha, float beta,
                 const PrefetchSpan *pf) {
    __m256i k0 = lanes8(n), k1 = lanes8(n - 8);
    __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int i = 0; i < rows; i++) acc0[i] = acc1[i] = _mm256_setzero_ps();
    PrefetchCursor pfc = prefetch_start(pf, k);
    for (int p = 0; p < k; p++) {
        if (p % PREFETCH_CHUNK == 0) prefetch_step(&pfc);
        __m256 b0 = packed ? _mm256_loadu_ps(b) : _mm256_maskload_ps(b, k0);
        __m256 b1 = packed ? _mm256_loadu_ps(b + 8) : _mm256_maskload_ps(b + 8, k1);
#pragma GCC unroll 6
        for (int i = 0; i < rows; i++) {
            __m256 ai = _mm256_broadcast_ss(a + i * rsa);
            acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);
            acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);
        }
        a += csa;
        b += rsb;
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    if (n == NR) {
#pragma GCC unroll 6
        for (int i = 0; i < rows; i++) {
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
    float t[NR];
#pragma GCC unroll 6
    for (int i = 0; i < rows; i++) {
        _mm256_storeu_ps(t, acc0[i]);
        _mm256_storeu_ps(t + 8, acc1[i]);
        for (int j = 0; j < n; j++) {
            float *cij = c + i * ldc + j;
            *cij = beta == 0.0f ? alpha * t[j] : alpha * t[j] + beta * *cij;
        }
    }
}

#define ROWS_CASE(r)                                                                               \
    case r:                                                                                        \
        tile(r, false, k, a, rsa, csa, b, rsb, c, ldc, n, alpha, beta, pf);                        \
        break;

static void strided_6x16(int k, const float *a, long rsa, long csa, const float *b, long rsb,
                         float *c, long ldc, int m, int n, float alpha, float beta,
                         const PrefetchSpan *pf) {
    switch (m) { ROWS_CASE(1) ROWS_CASE(2) ROWS_CASE(3) ROWS_CASE(4) ROWS_CASE(5) ROWS_CASE(6) }
}

static void packed_6x16(int k, const float *a, long rsa, long csa, const float *b, long rsb,
                        float *c, long ldc, int m, int n, float alpha, float beta,
                        const PrefetchSpan *pf) {
    (void)rsa, (void)csa, (void)rsb;
    if (m < MR)
        strided_6x16(k, a, 1, MR, b, NR, c, ldc, m, n, alpha, beta, pf);
    else
        tile(MR, true, k, a, 1, MR, b, NR, c, ldc, n, alpha, beta, pf);
}

const Ukernel ukernel_avx2 = {"avx2 6x16", MR, NR, MR, 1, 4096, 256, 512,
                              packed_6x16, strided_6x16, pack_a_scalar, pack_b_scalar};
