/* ukernel.h: the micro-kernel contract of the blocked GEMM (BLIS style, mirrored for row-major C).
 *
 *   C[0:m, 0:n] = alpha * A_tile * B_panel + beta * C[0:m, 0:n]
 *
 * with m <= MR (packed entry) or m <= MR_strided (strided entry), n <= NR.
 *
 * The NR-wide B panel is the vector operand: row p (n floats) at b + p*rsb. A packed panel has
 * rsb = NR and is zero-padded past n; an unpacked row-major B has rsb = ldb.
 * A_tile is the broadcast operand, MR x k: a packed micro-panel (layout below) for the packed
 * entry, or read through strides, element (i, p) at a[i*rsa + p*csa], for the strided one
 * (rsa = lda, csa = 1 for an unpacked row-major A, or the transpose).
 * C is row-major with leading dimension ldc; only rows i < m and columns j < n are read or
 * written, and beta == 0 means C is not read.
 * Every element is the k-term sum accumulated in order p = 0..k-1 in fp32 FMAs, then scaled,
 * whichever kernel entry computes it: results do not depend on the path or the thread split.
 *
 * Packing layouts (pack_a, pack_b):
 *   A block mc x kc -> MR-row micro-panels of round_up(kc, KB) * MR floats each, in k blocks of
 *     KB: element (i, p) of panel ip at out + ip*round_up(kc, KB)*MR + (p/KB)*KB*MR + i*KB +
 *     p%KB; rows past mc are zero. With KB = 1 that is column p at + p*MR; a larger KB turns
 *     packing a row-major A into copies of KB-float row pieces. op(A) element (i, p) is
 *     a[i*lda + p], or a[p*lda + i] when ta.
 *   B block kc x nc -> NR-column micro-panels; panel jp at out + jp*NR*kc, element (p, j) of it
 *     at + p*NR + j; columns past nc are zero.  op(B) element (p, j) is b[p*ldb + j], or
 *     b[j*ldb + p] when tb. */
#ifndef NMT_UKERNEL_H
#define NMT_UKERNEL_H

#include <stdbool.h>

/* UNROLL(n): unroll the next loop fully; its trip count is a compile-time constant of at most n
 * (a register tile's rows, a chunk of k steps), so that the accumulators stay in registers.
 * GCC's `unroll n` pragma does it. Clang accepts that pragma but left the AVX-512 tile's row loops
 * rolled, its accumulators on the stack (products 2.3x slower), so it gets its own. */
#define UNROLL_PRAGMA(text) _Pragma(#text)
#if defined(__clang__)
#define UNROLL(n) UNROLL_PRAGMA(clang loop unroll(full))
#else
#define UNROLL(n) UNROLL_PRAGMA(GCC unroll n)
#endif

/* Cache lines a micro-kernel prefetches into L2 during the first half of its k loop, for data
 * the driver reads next (the source of the next A micro-panel): `rows` rows of `row_lines`
 * lines (64 bytes) each, the first at `base` (64-byte aligned), `ld` bytes apart. */
typedef struct PrefetchSpan {
    const char *base;
    long ld;
    int rows, row_lines;
} PrefetchSpan;

/* Walking a PrefetchSpan: the kernels issue `burst` lines every PREFETCH_CHUNK steps of k. */
enum { PREFETCH_CHUNK = 16 };
typedef struct PrefetchCursor {
    const char *row;
    long ld;
    int col, row_lines, left, burst;
} PrefetchCursor;

static inline PrefetchCursor prefetch_start(const PrefetchSpan *pf, int k) {
    int lines = pf ? pf->rows * pf->row_lines : 0;
    if (lines <= 0 || k <= 0) return (PrefetchCursor){0};
    int steps = (k + 2 * PREFETCH_CHUNK - 1) / (2 * PREFETCH_CHUNK);  // chunks in half of k
    return (PrefetchCursor){pf->base, pf->ld, 0, pf->row_lines, lines, (lines + steps - 1) / steps};
}

/* Always inlined: GCC deems a function made of prefetches free of side effects and drops it. */
static inline __attribute__((always_inline)) void prefetch_step(PrefetchCursor *c) {
    for (int q = 0; q < c->burst && c->left > 0; q++, c->left--) {
        __builtin_prefetch(c->row + 64L * c->col, 0, 2);  // into L2
        if (++c->col == c->row_lines) c->col = 0, c->row += c->ld;
    }
}

typedef void (*UkernelFn)(int k, const float *a, long rsa, long csa, const float *b, long rsb,
                          float *c, long ldc, int m, int n, float alpha, float beta,
                          const PrefetchSpan *pf);
struct Ukernel;
typedef void (*PackAFn)(const struct Ukernel *uk, int mc, int kc, const float *a, long lda,
                        bool ta, float *out);
typedef void (*PackBFn)(const struct Ukernel *uk, int kc, int nc, const float *b, long ldb,
                        bool tb, float *out);

typedef struct Ukernel {
    const char *name;
    int MR, NR;       // register tile
    int MR_strided;   // rows the strided entry takes at most (>= MR)
    int KB;           // k block of the packed A layout
    int MC, KC, NC;   // cache blocking: A panel MC x KC (L3), B block KC x NC (L2)
    bool short_c_rows;  // threads split a short C no wider than tall by rows, else by columns
    UkernelFn packed;   // A and B packed (rsa, csa, rsb unused)
    UkernelFn strided;  // A through any strides, B rows through rsb (only n columns read)
                        // (both take pf = NULL for no prefetching)
    PackAFn pack_a;
    PackBFn pack_b;
} Ukernel;

/* Where the blocked driver changes strategy (M*N*K): up to SMALL_WORK a product is computed
 * without packing A; from THREADED_WORK on, sgemm splits it over the threads, by rows, or by
 * columns for a C of at most SHORT_C_ROWS rows over more than one K block; a C of at most
 * HALVES_ROWS rows over four K blocks or more is summed in two K halves. From ALONE_ROWS rows
 * per thread (or with B packed once), each thread computes its share of the rows alone.
 * A B of at most WHOLE_B_FLOATS (2 MB, about a core's L2) is packed whole by each thread of such
 * a row split, so that row chunks can move between threads; a B packed once that is larger and at
 * least 4 times wider than A is tall is split by columns instead. */
enum { GEMM_SMALL_WORK = 1 << 20, GEMM_THREADED_WORK = 1 << 21, GEMM_SHORT_C_ROWS = 512,
       GEMM_HALVES_ROWS = 1024, GEMM_ALONE_ROWS = 1024, GEMM_WHOLE_B_FLOATS = 1 << 19 };

/* Packing a row-major B prefetches PACK_B_AHEAD rows ahead: a micro-panel's rows are a page
 * apart in a weight gradient's activations, where the hardware prefetcher does not follow.
 * Called for row p (of kc) at the nr floats from `row`, rows ldb apart; always inlined, as GCC
 * drops calls to a function made only of prefetches. */
enum { PACK_B_AHEAD = 8 };
static inline __attribute__((always_inline)) void prefetch_b_row_ahead(const float *row, long ldb,
                                                                        int p, int kc, int nr) {
    if (p + PACK_B_AHEAD < kc) {
        __builtin_prefetch(row + PACK_B_AHEAD * ldb);
        __builtin_prefetch(row + PACK_B_AHEAD * ldb + nr - 1);
    }
}

/* Packing a transposed B reads a group of `rows` source rows along k, KB-float pieces at a time
 * (the weights of a forward product, in memory since the optimizer step): at each line of its
 * pieces it prefetches the same line of the next group's rows, which the next group, or the next
 * panel's first, reads: a forward product of bench-small with its weights out of cache ran 2-3%
 * faster so (AVX-512 kernel) and 4% (AVX2), on 2 cores of a Zen 5 EPYC. After the operand's last
 * rows it prefetches lines no one reads: x86 prefetches do not fault. Always inlined, as above. */
static inline __attribute__((always_inline)) void prefetch_b_next_rows(const float *piece,
                                                                        long ldb, int rows) {
    for (int r = rows; r < 2 * rows; r++) __builtin_prefetch(piece + r * ldb);
}

extern const Ukernel ukernel_avx512;   // 12 x 32, ukernel_avx512.c (built with -mavx512f)
extern const Ukernel ukernel_avx2;     // 6 x 16,  ukernel_avx2.c (built with -mavx2 -mfma)
extern const Ukernel ukernel_portable; // 4 x 16,  ukernel_portable.c

/* Scalar packers for any MR, KB, NR, for kernels without vectorized ones (gemm_pack.c). */
void pack_a_scalar(const Ukernel *uk, int mc, int kc, const float *a, long lda, bool ta,
                   float *out);
void pack_b_scalar(const Ukernel *uk, int kc, int nc, const float *b, long ldb, bool tb,
                   float *out);

#endif
