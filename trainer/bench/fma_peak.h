/* fma_peak.h: the FP32 FMA peak of this CPU, measured with a register-only loop of independent
 * FMA chains on the widest vector unit the CPU has (AVX-512, else AVX2+FMA, else plain C), so
 * GEMM throughput can be reported as a fraction of what the cores can do. */
#ifndef NMT_FMA_PEAK_H
#define NMT_FMA_PEAK_H

typedef struct FmaPeak {
    double gflops;    // FP32 GFLOP/s of all threads together (an FMA counts 2)
    const char *isa;  // "avx512", "avx2", "scalar"
    double spread;    // how much longer the slowest thread took than the fastest (0.1 = 10%),
                      // median over the rounds: a host that runs virtual CPUs at different
                      // speeds shows here, and it moves every multi-threaded timing
} FmaPeak;

/* Runs the loop on `threads` threads at once for about a second in total; the best of a few
 * timed rounds. */
FmaPeak fma_peak_measure(int threads);

/* The loops, one per ISA (each built with its own flags, on x86 only): `iters` iterations of independent FMA
 * chains started from `seed`; return the FLOPs done and store a result in *sink so the work
 * cannot be optimized away. */
double fma_loop_avx512(long iters, float seed, float *sink);  // fma_peak_avx512.c
double fma_loop_avx2(long iters, float seed, float *sink);    // fma_peak_avx2.c

#endif
