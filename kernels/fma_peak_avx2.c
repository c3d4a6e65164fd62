/* fma_peak_avx2.c: the AVX2+FMA loop of the FMA peak (fma_peak.h): 12 independent ymm FMA
 * chains, enough to cover the FMA latency on both FMA ports. Only this file is compiled with
 * -mavx2 -mfma. */
#include <immintrin.h>

#include "fma_peak.h"

enum { CHAINS = 12, LANES = 8 };

double fma_loop_avx2(long iters, float seed, float *sink) {
    // a = a*x + y converges to y / (1 - x): the values stay finite and normal.
    const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(0.001f);
    __m256 a[CHAINS];
#pragma GCC unroll 12
    for (int c = 0; c < CHAINS; c++) a[c] = _mm256_set1_ps(seed + (float)c);
    for (long n = 0; n < iters; n++) {
#pragma GCC unroll 12
        for (int c = 0; c < CHAINS; c++) a[c] = _mm256_fmadd_ps(a[c], x, y);
    }
    __m256 s = a[0];
#pragma GCC unroll 12
    for (int c = 1; c < CHAINS; c++) s = _mm256_add_ps(s, a[c]);
    float lanes[LANES];
    _mm256_storeu_ps(lanes, s);
    *sink = 0.0f;
    for (int l = 0; l < LANES; l++) *sink += lanes[l];
    return 2.0 * CHAINS * LANES * (double)iters;
}
