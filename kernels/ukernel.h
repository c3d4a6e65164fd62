/* ukernel.h: the micro-kernel contract of the blocked GEMM (BLIS style).
 *
 *   C[0:m, 0:n] = alpha * A_tile * B_panel + beta * C[0:m, 0:n]      (m <= MR, n <= NR)
 *
 * B_panel is a packed k x NR micro-panel (row p at bp + p*NR, zero-padded past n).
 * A_tile is MR x k, read through strides: element (i, p) at a[i*rsa + p*csa]. A packed MR x k
 * micro-panel has rsa = 1, csa = MR; an unpacked row-major A has rsa = lda, csa = 1 (or the
 * transpose). All MR rows of A must be readable (the driver packs edge rows into a zero-padded
 * panel); only rows i < m and columns j < n of C are written.
 * C is row-major with leading dimension ldc; beta == 0 means C is not read. */
#ifndef NMT_UKERNEL_H
#define NMT_UKERNEL_H

typedef void (*UkernelFn)(int k, const float *a, long rsa, long csa, const float *bp, float *c,
                          long ldc, int m, int n, float alpha, float beta);

typedef struct Ukernel {
    const char *name;
    int MR, NR;              // register tile
    int MC, KC, NC;          // cache blocking: A block MC x KC (L2), B panel KC x NC (L3)
    UkernelFn packed;        // specialised for a packed A (rsa = 1, csa = MR)
    UkernelFn strided;       // any A strides (the small-problem path, no A packing)
} Ukernel;

extern const Ukernel ukernel_avx512;  // 12 x 32, ukernel_avx512.c (built with -mavx512f)
extern const Ukernel ukernel_avx2;    // 6 x 16,  ukernel_avx2.c (built with -mavx2 -mfma)
extern const Ukernel ukernel_portable;// 4 x 16,  ukernel_portable.c

#endif
