/* cpu.c: feature detection via the compiler's cpuid support, capped at the build's ISA level
 * (NMT_ISA_MAX_AVX2: NMT_ARCH=x86-64-v3, see CMakeLists.txt). */
#include "cpu.h"

#include <omp.h>

bool cpu_has_avx512(void) {
#if CPU_X86 && !defined(NMT_ISA_MAX_AVX2)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
#else
    return false;
#endif
}

bool cpu_has_avx2_fma(void) {
#if CPU_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

const char *cpu_build_arch(void) { return NMT_ARCH; }

int cpu_threads(void) { return omp_get_max_threads(); }
