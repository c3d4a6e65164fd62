/* test_fma_peak.c: the FMA peak loops do the work they report. Each chain iterates
 * a <- a*x + y from its seed, so after n steps it holds L + (a0 - L) x^n with L = y / (1 - x);
 * the loops' results must match that closed form and their FLOP counts 2 * chains * lanes * n.
 * fma_peak_measure must report the loop of the widest ISA the CPU has and the build allows, and
 * how far apart its threads' own times were (none for one thread).
 * The CPU probes must report the CPU's features capped at the build's NMT_ARCH level (none of
 * them off x86), and the blocked GEMM must offer the AVX-512 micro-kernel exactly when they
 * report AVX-512; off x86, `auto` is OpenBLAS. */
#include <math.h>
#include <string.h>

#include "cpu.h"
#include "fma_peak.h"
#include "gemm.h"
#include "test_util.h"

#if CPU_X86
/* lanes * sum over chains c of the closed form, chain c seeded with seed + c. */
static double expected_sum(int chains, int lanes, long n, float seed) {
    const double x = 0.999f, y = 0.001f, L = y / (1.0 - x);
    double sum = 0.0;
    for (int c = 0; c < chains; c++) sum += L + (seed + c - L) * pow(x, (double)n);
    return lanes * sum;
}

static void check_loop(const char *isa, double (*loop)(long, float, float *), int chains,
                       int lanes) {
    const long n = 1000;
    float sink = 0.0f;
    double flops = loop(n, 3.0f, &sink), want = expected_sum(chains, lanes, n, 3.0f);
    EXPECT(flops == 2.0 * chains * lanes * n, "%s loop reports %.0f FLOPs, expected %.0f", isa,
           flops, 2.0 * chains * lanes * n);
    EXPECT(fabs(sink - want) <= 1e-3 * fabs(want), "%s loop result %.6g, closed form %.6g", isa,
           sink, want);
}
#endif

static void check_probes(void) {
#if CPU_X86
    __builtin_cpu_init();
    bool avx512 = __builtin_cpu_supports("avx512f");
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    bool capped = !strcmp(cpu_build_arch(), "x86-64-v3");
    EXPECT(cpu_has_avx512() == (avx512 && !capped), "AVX-512 reported %d: CPU %d, build %s",
           cpu_has_avx512(), avx512, cpu_build_arch());
    EXPECT(cpu_has_avx2_fma() == avx2, "AVX2+FMA reported %d, CPU %d", cpu_has_avx2_fma(), avx2);
#else
    EXPECT(!cpu_has_avx512() && !cpu_has_avx2_fma(), "x86 features reported off x86");
    const GemmAutoChoice *choice = gemm_auto_choice();
    for (int k = 0; k < GEMM_CLASSES; k++)
        EXPECT(choice->backend[k] == gemm_lookup("openblas"), "auto's %s class is %s off x86",
               gemm_class_names[k], choice->backend[k]->name);
#endif
    EXPECT((gemm_lookup("blocked-avx512") != NULL) == cpu_has_avx512(),
           "the AVX-512 micro-kernel is %soffered, AVX-512 %sreported",
           gemm_lookup("blocked-avx512") ? "" : "not ", cpu_has_avx512() ? "" : "not ");
    EXPECT((gemm_lookup("blocked-avx2") != NULL) == cpu_has_avx2_fma(),
           "the AVX2 micro-kernel is %soffered, AVX2 %sreported",
           gemm_lookup("blocked-avx2") ? "" : "not ", cpu_has_avx2_fma() ? "" : "not ");
}

int main(void) {
    check_probes();
#if CPU_X86  // the loops exist on x86 only
    if (cpu_has_avx512()) check_loop("avx512", fma_loop_avx512, 16, 16);
    if (cpu_has_avx2_fma()) check_loop("avx2", fma_loop_avx2, 12, 8);
#endif
    FmaPeak peak = fma_peak_measure(1);
    const char *want = cpu_has_avx512() ? "avx512" : cpu_has_avx2_fma() ? "avx2" : "scalar";
    EXPECT(!strcmp(peak.isa, want), "peak measured with the %s loop, expected %s", peak.isa, want);
    EXPECT(peak.gflops > 0.0, "peak %.3g GFLOP/s", peak.gflops);  // any speed: also under an emulator
    // one thread is its own slowest and fastest; two take any times, but each is measured
    EXPECT(peak.spread == 0.0, "one thread's spread %g", peak.spread);
    FmaPeak two = fma_peak_measure(2);
    EXPECT(two.spread >= 0.0 && isfinite(two.spread), "two threads' spread %g", two.spread);
    return test_finish();
}
