/* cpu.c: feature detection via the compiler's cpuid support. */
#include "cpu.h"

#include <omp.h>

bool cpu_has_avx512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}

bool cpu_has_avx2_fma(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

int cpu_threads(void) { return omp_get_max_threads(); }
