/* cpu.h: CPU features (for picking GEMM micro-kernels at run time) and the OpenMP thread count. */
#ifndef NMT_CPU_H
#define NMT_CPU_H

#include <stdbool.h>

bool cpu_has_avx512(void);    // AVX-512 F (the sgemm kernel needs only F)
bool cpu_has_avx2_fma(void);  // AVX2 and FMA3
int cpu_threads(void);        // threads an OpenMP parallel region will use

#endif
