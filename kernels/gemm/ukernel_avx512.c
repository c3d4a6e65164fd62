/* ukernel_avx512.c: the 12 x 32 AVX-512 micro-kernel and its packers.
 * 24 zmm accumulators; per k step two B vectors and twelve broadcast A elements (the mirror of
 * BLIS's 32 x 12 skx kernel for row-major C). The driver keeps the 12 x kc A micro-panel in L1
 * and streams B micro-panels from L2; the kernel prefetches what the driver reads next.
 * The strided entry (small products, no packing) takes up to 14 rows (28 accumulators), so a
 * 25-row attention product is two tiles, is specialised on the row count so partial tiles cost
 * only their rows, and uses masked loads so B and C need no padding. Packing a transposed
 * operand goes through 16 x 16 in-register transposes.
 * Only this file is compiled with -mavx512f. */
#include <immintrin.h>
#include <stddef.h>

#include "ukernel.h"

enum { MR = 12, NR = 32, KB = 16, MR_STRIDED = 14 };

#define INLINE static inline __attribute__((always_inline))

static int min_i(int a, int b) { return a < b ? a : b; }

/* Lanes [0, n) of a 16-lane vector, n clamped to 0..16. */
static __mmask16 lanes(int n) {
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

/* Prefetch the lines of k steps [p, p+KB) of an unpacked A tile (element (i, p) at
 * a + i*rsa + p*csa), which the strided kernel reads two k blocks later: attention-sized
 * products stream their operands from memory, faster than the hardware prefetchers follow. */
INLINE void prefetch_a_ahead(const int rows, const float *a, long rsa, long csa, int p, int k) {
    if (p >= k) return;
    if (csa == 1)  // rows of A: one line per row
        for (int i = 0; i < rows; i++) _mm_prefetch((const char *)(a + i * rsa + p), _MM_HINT_T0);
    else  // columns of a transposed A: one row of `rows` floats per k step
        for (int q = p; q < min_i(k, p + KB); q++)
            _mm_prefetch((const char *)(a + q * csa), _MM_HINT_T0);
}

/* acc[i] += a_i * (b0, b1) for the `rows` broadcast A elements a_i = a_row(i). */
#define FMA_ROWS(a_row)                                                                            \
    UNROLL(14) for (int i = 0; i < rows; i++) {                                                    \
        __m512 ai = _mm512_set1_ps(a_row(i));                                                      \
        acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);                                                \
        if (wide) acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);                                      \
    }

/* The tile computation; `rows`, `wide` (two B vectors, else one) and `packed` (A and B packed;
 * else A through strides and B rows through masked loads) are compile-time constants in every
 * instance. */
INLINE void tile(const int rows, const bool wide, const bool packed, int k, const float *a,
                 long rsa, long csa, const float *b, long rsb, float *c, long ldc, int n,
                 float alpha, float beta, const PrefetchSpan *pf) {
    __mmask16 k0 = lanes(n), k1 = lanes(n - 16);
    __m512 acc0[MR_STRIDED], acc1[MR_STRIDED];
    UNROLL(14)
    for (int i = 0; i < rows; i++) acc0[i] = acc1[i] = _mm512_setzero_ps();
    if (packed) {  // element (i, p) of k block p/KB at a + i*KB + p%KB: immediate offsets
        PrefetchCursor pfc = prefetch_start(pf, k);
        for (int p0 = 0; p0 < k; p0 += KB, a += KB * MR) {
            prefetch_step(&pfc);
            const float *ap = a;
            for (int p = p0; p < min_i(k, p0 + KB); p++, ap++, b += rsb) {
                __m512 b0 = _mm512_loadu_ps(b), b1 = wide ? _mm512_loadu_ps(b + 16) : b0;
#define PACKED_A(i) ap[(i) * KB]
                FMA_ROWS(PACKED_A)
#undef PACKED_A
            }
        }
    } else {  // element (i, p) at a + i*rsa + p*csa; row 3q + r at base[q] + r*rsa, so the
              // broadcasts share one stride register instead of an address register per row
        const float *base[(MR_STRIDED + 2) / 3];
        UNROLL(5)
        for (int q = 0; q < (rows + 2) / 3; q++) base[q] = a + 3 * q * rsa;
        PrefetchCursor pfc = prefetch_start(pf, k);
        for (int p0 = 0; p0 < k; p0 += KB) {
            prefetch_step(&pfc);
            prefetch_a_ahead(rows, a, rsa, csa, p0 + 2 * KB, k);
            for (int p = p0; p < min_i(k, p0 + KB); p++, b += rsb) {
                __m512 b0 = _mm512_maskz_loadu_ps(k0, b);
                __m512 b1 = wide ? _mm512_maskz_loadu_ps(k1, b + 16) : b0;
#define STRIDED_A(i) base[(i) / 3][(i) % 3 * rsa]
                FMA_ROWS(STRIDED_A)
#undef STRIDED_A
                UNROLL(5)
                for (int q = 0; q < (rows + 2) / 3; q++) base[q] += csa;
            }
        }
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    UNROLL(14)
    for (int i = 0; i < rows; i++) {
        float *ci = c + i * ldc;
        __m512 r0 = _mm512_mul_ps(va, acc0[i]);
        if (beta != 0.0f) r0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(k0, ci), r0);
        _mm512_mask_storeu_ps(ci, k0, r0);
        if (wide) {
            __m512 r1 = _mm512_mul_ps(va, acc1[i]);
            if (beta != 0.0f) r1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(k1, ci + 16), r1);
            _mm512_mask_storeu_ps(ci + 16, k1, r1);
        }
    }
}

/* One instance per row count: `packed` A and B, or strided A and B with one or two B vectors. */
#define PACKED_ROWS(call)                                                                          \
    call(1) call(2) call(3) call(4) call(5) call(6) call(7) call(8) call(9) call(10) call(11)    \
        call(12)
#define STRIDED_ROWS(call) PACKED_ROWS(call) call(13) call(14)
#define PACKED_CASE(r)                                                                             \
    case r:                                                                                        \
        tile(r, true, true, k, a, 0, 0, b, NR, c, ldc, n, alpha, beta, pf);                     \
        break;
#define STRIDED_CASE(r)                                                                            \
    case r:                                                                                        \
        if (n > 16)                                                                                \
            tile(r, true, false, k, a, rsa, csa, b, rsb, c, ldc, n, alpha, beta, pf);            \
        else                                                                                       \
            tile(r, false, false, k, a, rsa, csa, b, rsb, c, ldc, n, alpha, beta, pf);           \
        break;

/* In-place transpose of the 16 x 16 matrix whose rows are r[0..15]. */
INLINE void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {  // pairs of rows interleaved within 128-bit lanes
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {  // 4 x 4 blocks transposed within each 128-bit lane
        __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
        __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
        r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    // r[4g + q], lane L now holds column 4L + q of rows 4g..4g+3: transpose the 4 x 4 lane grid.
    for (int q = 0; q < 4; q++) {
        t[q] = _mm512_shuffle_f32x4(r[q], r[4 + q], 0x88);
        t[q + 4] = _mm512_shuffle_f32x4(r[q], r[4 + q], 0xDD);
        t[q + 8] = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0x88);
        t[q + 12] = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0xDD);
    }
    for (int q = 0; q < 4; q++) {
        r[q] = _mm512_shuffle_f32x4(t[q], t[q + 8], 0x88);
        r[q + 8] = _mm512_shuffle_f32x4(t[q], t[q + 8], 0xDD);
        r[q + 4] = _mm512_shuffle_f32x4(t[q + 4], t[q + 12], 0x88);
        r[q + 12] = _mm512_shuffle_f32x4(t[q + 4], t[q + 12], 0xDD);
    }
}

/* Rows [0, nrows) of a 16 x 16 block read from src (row stride ld, w valid columns), zero
 * elsewhere, transposed into r: r[q] is column q. */
INLINE void load_transposed(__m512 r[16], const float *src, long ld, int nrows, int w) {
    if (w % 4) {  // masked loads, which never touch the missing columns
        __mmask16 cols = lanes(w);
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++)
            r[i] = i < nrows ? _mm512_maskz_loadu_ps(cols, src + i * ld) : _mm512_setzero_ps();
        transpose16(r);
        return;
    }
    // Whole 4-column pieces: x[g][L] gathers in its 128-bit lane k the columns 4L..4L+3 of row
    // g + 4k, by broadcasts from memory (load ports), so only the 4 x 4 transposes within the
    // lanes below need the shuffle port.
    __m512 x[4][4];
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++)
#pragma GCC unroll 4
        for (int L = 0; L < 4; L++) x[g][L] = _mm512_setzero_ps();
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++, src += ld) {  // row i = g + 4k
        if (i >= nrows) break;
#pragma GCC unroll 4
        for (int L = 0; L < 4; L++)
            if (4 * L < w)
                x[i % 4][L] = _mm512_mask_broadcast_f32x4(
                    x[i % 4][L], (__mmask16)(0xF << (4 * (i / 4))), _mm_loadu_ps(src + 4 * L));
    }
#pragma GCC unroll 4
    for (int L = 0; L < 4; L++) {
        __m512 t0 = _mm512_unpacklo_ps(x[0][L], x[1][L]), t1 = _mm512_unpackhi_ps(x[0][L], x[1][L]);
        __m512 t2 = _mm512_unpacklo_ps(x[2][L], x[3][L]), t3 = _mm512_unpackhi_ps(x[2][L], x[3][L]);
        __m512d a = _mm512_castps_pd(t0), b = _mm512_castps_pd(t1);
        __m512d c = _mm512_castps_pd(t2), d = _mm512_castps_pd(t3);
        r[4 * L] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[4 * L + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[4 * L + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        r[4 * L + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
}

/* The transpose of a 16 x 16 block read as in load_transposed, its column q stored as the
 * NR-float row q of dst (columns past w are not stored). Stored with constant indices, so the
 * block stays in registers. */
INLINE void transpose_block(float *dst, const float *src, long ld, int nrows, int w) {
    __m512 r[16];
    load_transposed(r, src, ld, nrows, w);
#pragma GCC unroll 16
    for (int q = 0; q < 16; q++)
        if (q < w) _mm512_store_ps(dst + q * NR, r[q]);
}

#define VEC __m512
#define VEC_ZERO() _mm512_setzero_ps()
#define VEC_STORE(dst, v) _mm512_store_ps(dst, v)
#define MASK __mmask16
#define LANES lanes
#define VEC_LOAD_MASKED(src, m) _mm512_maskz_loadu_ps(m, src)
#define LOAD_TRANSPOSED load_transposed
#define PACK_A_UNROLL
#include "ukernel_simd.h"

static void pack_b_32(const Ukernel *uk, int kc, int nc, const float *b, long ldb, bool tb,
                      float *out) {
    (void)uk;  // NR: this file's constant
    if (!tb) {  // each source row p walked left to right across all micro-panels
        for (int p = 0; p < kc; p++) {
            const float *src = b + (size_t)p * ldb;
            for (int j0 = 0; j0 < nc; j0 += NR) {
                float *dst = out + (size_t)j0 * kc + (size_t)p * NR;
                prefetch_b_row_ahead(src + j0, ldb, p, kc, NR);
                _mm512_store_ps(dst, _mm512_maskz_loadu_ps(lanes(nc - j0), src + j0));
                _mm512_store_ps(dst + 16, _mm512_maskz_loadu_ps(lanes(nc - j0 - 16), src + j0 + 16));
            }
        }
        return;
    }
    for (int j0 = 0; j0 < nc; j0 += 16) {  // 16 rows j at a time, transposed 16 x 16
        float *dst = out + (size_t)(j0 / NR) * NR * kc + j0 % NR;  // (kc, NR) panel, half j0 % NR
        int rows = min_i(16, nc - j0);
        for (int p0 = 0; p0 < kc; p0 += 16) {
            int wp = min_i(16, kc - p0);
            const float *src = b + (size_t)j0 * ldb + p0;
            prefetch_b_next_rows(src, ldb, 16);  // 16 floats: a line
            if (rows == 16 && wp == 16)  // the whole block: no row or column tests
                transpose_block(dst + (size_t)p0 * NR, src, ldb, 16, 16);
            else
                transpose_block(dst + (size_t)p0 * NR, src, ldb, rows, wp);
        }
        if (j0 + 16 >= nc && j0 % NR == 0)  // a panel's zero right half
            for (int p = 0; p < kc; p++)
                _mm512_store_ps(dst + (size_t)p * NR + 16, _mm512_setzero_ps());
    }
}

/* Blocking: KC 512 keeps the 12 x 512 A micro-panel (24 KB) in half of a 48 KB L1 and updates C
 * half as often over a long K as KC 256 did: the weight gradients (`nmt bench gemm --shapes
 * wgrad_proj_d256,wgrad_ffn_d256 --threads 1`) went from 76-77% to 83-86% of the FMA peak on a
 * Zen 5 EPYC. NC 768 makes a 1.5 MB B block (in the 2 MB L2 of recent Xeons; on Zen 5, 1 MB, NC
 * 384 measured no faster).
 * A short C no wider than tall is split by rows: the weight gradients of square weights
 * (`nmt bench gemm --shapes wgrad_proj_d256,wgrad_proj_d512 --threads 2`) ran 2-7% faster so
 * on a Zen 5 EPYC, where this kernel's transposing pack of all of A per thread costs more than
 * copying all of B; the AVX2 kernel measured 2-4% slower so and splits by columns. */
const Ukernel ukernel_avx512 = {"avx512 12x32", MR, NR, MR_STRIDED, KB, 4096, 512, 768, true,
                                packed_entry, strided_entry, pack_a, pack_b_32};
