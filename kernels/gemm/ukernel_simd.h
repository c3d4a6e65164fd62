/* ukernel_simd.h: the parts of a SIMD micro-kernel that do not depend on its ISA: the two kernel
 * entries of ukernel.h (a switch from the run-time row count to the tile instance compiled for
 * it) and packing an A block into MR-row micro-panels in KB-float k blocks, for vectors of KB
 * floats. Included by ukernel_<isa>.c after it defines MR, KB, min_i and:
 *   PACKED_ROWS(call), STRIDED_ROWS(call)  call(r) for every row count r of each entry
 *   PACKED_CASE(r), STRIDED_CASE(r)        `case r:` running its tile instance, and break
 *   VEC                          its vector type (KB floats)
 *   VEC_ZERO()                   a zero vector
 *   VEC_STORE(dst, v)            stores v at dst (a packed panel, KB-float aligned as packed)
 *   MASK, LANES(n)               a load mask and the one of lanes [0, n) (n clamped to 0..KB)
 *   VEC_LOAD_MASKED(src, m)      the lanes of m from src, zero elsewhere
 *   LOAD_TRANSPOSED(r, src, ld, nrows, w)  the KB x KB block at src (row stride ld; rows
 *                                [0, nrows), columns [0, w), zero elsewhere), transposed:
 *                                r[q] is column q
 *   PACK_A_UNROLL                an unroll _Pragma for the MR-row loops, or nothing
 * and defines packed_entry, strided_entry and pack_a with the Ukernel signatures. */

static void packed_entry(int k, const float *a, long rsa, long csa, const float *b, long rsb,
                         float *c, long ldc, int m, int n, float alpha, float beta,
                         const PrefetchSpan *pf) {
    (void)rsa, (void)csa, (void)rsb;
    switch (m) { PACKED_ROWS(PACKED_CASE) }
}

static void strided_entry(int k, const float *a, long rsa, long csa, const float *b, long rsb,
                          float *c, long ldc, int m, int n, float alpha, float beta,
                          const PrefetchSpan *pf) {
    switch (m) { STRIDED_ROWS(STRIDED_CASE) }
}
static void pack_a(const Ukernel *uk, int mc, int kc, const float *a, long lda, bool ta,
                   float *out) {
    (void)uk;  // MR, KB: the including file's constants
    const int kp = (kc + KB - 1) / KB * KB;
    if (ta) {  // KB rows p at a time, walked left to right across all micro-panels
        for (int p0 = 0; p0 < kc; p0 += KB) {
            int w = min_i(KB, kc - p0);
            for (int i0 = 0; i0 < mc; i0 += MR) {
                float *dst = out + (size_t)i0 * kp + (size_t)p0 * MR;  // (MR, KB)
                VEC r[KB];
                LOAD_TRANSPOSED(r, a + (size_t)p0 * lda + i0, lda, w, min_i(MR, mc - i0));
                PACK_A_UNROLL for (int i = 0; i < MR; i++) VEC_STORE(dst + i * KB, r[i]);
            }
        }
        return;
    }
    for (int i0 = 0; i0 < mc; i0 += MR) {  // rows i: KB-float pieces copied as they are
        int h = min_i(MR, mc - i0);
        float *dst = out + (size_t)i0 * kp;  // (kp/KB, MR, KB)
        for (int p0 = 0; p0 < kc; p0 += KB, dst += KB * MR) {
            MASK valid = LANES(kc - p0);
            PACK_A_UNROLL for (int i = 0; i < MR; i++)
                VEC_STORE(dst + i * KB,
                          i < h ? VEC_LOAD_MASKED(a + (size_t)(i0 + i) * lda + p0, valid) : VEC_ZERO());
        }
    }
}
