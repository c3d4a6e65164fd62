/* cpu.h: CPU features (for picking GEMM micro-kernels at run time), the build's ISA level and the
 * OpenMP thread count. The feature probes answer what this build may use: the CPU's features
 * capped at the NMT_ARCH level it was built for (a build for x86-64-v3 reports no AVX-512, even
 * on a CPU that has it), and none of them on a CPU other than x86. */
#ifndef NMT_CPU_H
#define NMT_CPU_H

#include <stdbool.h>

/* 1 on x86, where the AVX2 and AVX-512 micro-kernels and FMA loops exist (kernels/CMakeLists.txt
 * builds them only there); elsewhere the portable micro-kernel and OpenBLAS. */
#if defined(__x86_64__) || defined(__i386__)
#define CPU_X86 1
#else
#define CPU_X86 0
#endif

bool cpu_has_avx512(void);        // AVX-512 F (the sgemm kernel needs only F)
bool cpu_has_avx2_fma(void);      // AVX2 and FMA3
const char *cpu_build_arch(void); // NMT_ARCH of this build: "native", "x86-64-v3", ...
int cpu_threads(void);            // threads an OpenMP parallel region will use

/* A hint in spin-wait loops that this thread is waiting (x86 pause, arm64 yield). */
static inline void cpu_relax(void) {
#if CPU_X86
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

#endif
