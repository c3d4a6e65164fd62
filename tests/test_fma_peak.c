/* test_fma_peak.c: the FMA peak loops do the work they report. Each chain iterates
 * a <- a*x + y from its seed, so after n steps it holds L + (a0 - L) x^n with L = y / (1 - x);
 * the loops' results must match that closed form and their FLOP counts 2 * chains * lanes * n.
 * fma_peak_measure must report the loop of the widest ISA the CPU has. */
#include <math.h>
#include <string.h>

#include "cpu.h"
#include "fma_peak.h"
#include "test_util.h"

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

int main(void) {
    if (cpu_has_avx512()) check_loop("avx512", fma_loop_avx512, 16, 16);
    if (cpu_has_avx2_fma()) check_loop("avx2", fma_loop_avx2, 12, 8);
    FmaPeak peak = fma_peak_measure(1);
    const char *want = cpu_has_avx512() ? "avx512" : cpu_has_avx2_fma() ? "avx2" : "scalar";
    EXPECT(!strcmp(peak.isa, want), "peak measured with the %s loop, expected %s", peak.isa, want);
    EXPECT(peak.gflops > 0.1, "peak %.3g GFLOP/s", peak.gflops);
    return test_finish();
}
