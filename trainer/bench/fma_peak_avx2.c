/* fma_peak_avx2.c: the AVX2+FMA loop of the FMA peak (fma_peak.h): 12 independent ymm FMA
 * chains. Only this file is compiled with -mavx2 -mfma. */
#include <immintrin.h>

#include "fma_peak.h"

#define VEC __m256
#define LANES 8
#define CHAINS 12
#define VEC_SET1 _mm256_set1_ps
#define VEC_FMADD _mm256_fmadd_ps
#define VEC_ADD _mm256_add_ps
#include "fma_peak_loop.h"

double fma_loop_avx2(long iters, float seed, float *sink) {
    return fma_chains(iters, seed, sink);
}
