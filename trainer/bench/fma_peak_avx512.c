/* fma_peak_avx512.c: the AVX-512 loop of the FMA peak (fma_peak.h): 16 independent zmm FMA
 * chains. Only this file is compiled with -mavx512f. */
#include <immintrin.h>

#include "fma_peak.h"

#define VEC __m512
#define LANES 16
#define CHAINS 16
#define VEC_SET1 _mm512_set1_ps
#define VEC_FMADD _mm512_fmadd_ps
#define VEC_ADD _mm512_add_ps
#include "fma_peak_loop.h"

double fma_loop_avx512(long iters, float seed, float *sink) {
    return fma_chains(iters, seed, sink);
}
