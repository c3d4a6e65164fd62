/* fma_peak_loop.h: the body of the FMA peak loops (fma_peak.h), included by each ISA's file after
 * it defines VEC (the vector type), LANES, CHAINS (independent FMA chains, enough to cover the
 * FMA latency on every FMA port), VEC_SET1, VEC_FMADD (a*b + c) and VEC_ADD. */
static double fma_chains(long iters, float seed, float *sink) {
    // a = a*x + y converges to y / (1 - x): the values stay finite and normal.
    const VEC x = VEC_SET1(0.999f), y = VEC_SET1(0.001f);
    VEC a[CHAINS];
#pragma GCC unroll 16
    for (int c = 0; c < CHAINS; c++) a[c] = VEC_SET1(seed + (float)c);
    for (long n = 0; n < iters; n++) {
#pragma GCC unroll 16
        for (int c = 0; c < CHAINS; c++) a[c] = VEC_FMADD(a[c], x, y);
    }
    VEC s = a[0];
#pragma GCC unroll 16
    for (int c = 1; c < CHAINS; c++) s = VEC_ADD(s, a[c]);
    float lanes[LANES];
    __builtin_memcpy(lanes, &s, sizeof lanes);
    *sink = 0.0f;
    for (int l = 0; l < LANES; l++) *sink += lanes[l];
    return 2.0 * CHAINS * LANES * (double)iters;
}
