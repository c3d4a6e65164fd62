/* fma_peak.c: measuring the FP32 FMA peak (fma_peak.h): picks the loop for this CPU, calibrates
 * its length and times it on all requested threads at once, and each thread's own run of it. */
#include "fma_peak.h"

#include <omp.h>

#include "bench_setup.h"
#include "cpu.h"
#include "timer.h"

typedef double (*FmaLoop)(long iters, float seed, float *sink);

/* The plain C loop for CPUs without AVX2 (and arm64): 32 independent multiply-add chains, which
 * the compiler turns into 8 NEON (or SSE) vectors: enough to cover the FMA latency. */
static double fma_loop_scalar(long iters, float seed, float *sink) {
    enum { CHAINS = 32 };
    float a[CHAINS];
    for (int c = 0; c < CHAINS; c++) a[c] = seed + (float)c;
    for (long n = 0; n < iters; n++)
        for (int c = 0; c < CHAINS; c++) a[c] = a[c] * 0.999f + 0.001f;
    *sink = 0.0f;
    for (int c = 0; c < CHAINS; c++) *sink += a[c];
    return 2.0 * CHAINS * (double)iters;
}

static volatile float fma_sink;  // the loops' results end here, so the work is not optimized away

/* Seconds for `iters` iterations on each of `threads` threads (all started together), the
 * FLOPs they did in *flops, and the slowest thread's own time over the fastest's, minus 1, in
 * *spread. */
static double time_loops(FmaLoop loop, long iters, int threads, double *flops, double *spread) {
    double total = 0.0, t0 = 0.0, t1 = 0.0, fastest = 1e300, slowest = 0.0;
    float sinks = 0.0f;
#pragma omp parallel num_threads(threads) reduction(+ : total, sinks) \
    reduction(min : fastest) reduction(max : slowest)
    {
        float sink;
#pragma omp barrier
        double start = now_seconds();
        if (omp_get_thread_num() == 0) t0 = start;
        total += loop(iters, (float)omp_get_thread_num(), &sink);
        double own = now_seconds() - start;
        fastest = own < fastest ? own : fastest, slowest = own > slowest ? own : slowest;
        sinks += sink;
#pragma omp barrier
        if (omp_get_thread_num() == 0) t1 = now_seconds();
    }
    fma_sink = sinks;
    *flops = total;
    *spread = fastest > 0.0 ? slowest / fastest - 1.0 : 0.0;
    return t1 - t0;
}

FmaPeak fma_peak_measure(int threads) {
    FmaPeak peak = {0.0, "scalar", 0.0};
    FmaLoop loop = fma_loop_scalar;
#if CPU_X86
    if (cpu_has_avx512())
        loop = fma_loop_avx512, peak.isa = "avx512";
    else if (cpu_has_avx2_fma())
        loop = fma_loop_avx2, peak.isa = "avx2";
#endif
    enum { ROUNDS = 5 };
    double flops, spread[ROUNDS];
    long iters = 1 << 14;
    while (time_loops(loop, iters, threads, &flops, &spread[0]) < 0.05)
        iters *= 2;  // rounds of >= 50 ms
    for (int round = 0; round < ROUNDS; round++) {
        double gflops = flops / time_loops(loop, iters, threads, &flops, &spread[round]) / 1e9;
        if (gflops > peak.gflops) peak.gflops = gflops;
    }
    peak.spread = bench_median(spread, ROUNDS);
    return peak;
}
