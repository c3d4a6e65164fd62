/* fma_peak_avx512.c: the AVX-512 loop of the FMA peak (fma_peak.h): 16 independent zmm FMA
 * chains, enough to cover the FMA latency on both 512-bit FMA ports. Only this file is compiled
 * with -mavx512f. */
#include <immintrin.h>

#include "fma_peak.h"

enum { CHAINS = 16, LANES = 16 };

double fma_loop_avx512(long iters, float seed, float *sink) {
    // a = a*x + y converges to y / (1 - x): the values stay finite and normal.
    const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(0.001f);
    __m512 a[CHAINS];
#pragma GCC unroll 16
    for (int c = 0; c < CHAINS; c++) a[c] = _mm512_set1_ps(seed + (float)c);
    for (long n = 0; n < iters; n++) {
#pragma GCC unroll 16
        for (int c = 0; c < CHAINS; c++) a[c] = _mm512_fmadd_ps(a[c], x, y);
    }
    __m512 s = a[0];
#pragma GCC unroll 16
    for (int c = 1; c < CHAINS; c++) s = _mm512_add_ps(s, a[c]);
    *sink = _mm512_reduce_add_ps(s);
    return 2.0 * CHAINS * LANES * (double)iters;
}
