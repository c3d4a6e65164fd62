/* gemm_blocked.c: our GEMM, the BLIS/GotoBLAS five-loop algorithm.
 *
 *   jc (NC columns of C) -> pc (KC of the inner dimension) -> pack B panel (KC x NC, shared)
 *     -> ic (MC rows) -> pack A block (MC x KC, per thread) -> jr (NR) -> ir (MR) -> micro-kernel
 *
 * Packing absorbs the transposes (one driver for NN/NT/TN/TT) and zero-pads partial micro-panels;
 * beta is applied on the first KC block only. Threads split the rows of C (or, when C has too
 * few rows, its column panels) and share the packed B panel, with a barrier after each pack.
 * Small problems (attention-sized) skip the threads and, when A would be reused by few B panels,
 * skip packing A: the micro-kernel reads it through its strides.
 * Packing buffers are allocated once per thread and reused: fresh memory is slow to touch. */
#include <omp.h>
#include <stddef.h>
#include <string.h>

#include "arena.h"
#include "cpu.h"
#include "gemm_backends.h"
#include "ukernel.h"

static int min_i(int a, int b) { return a < b ? a : b; }
static int round_up_i(int n, int to) { return (n + to - 1) / to * to; }

/* A buffer that only grows; its contents do not survive growth. */
typedef struct GrowBuf {
    float *p;
    size_t cap;  // floats
} GrowBuf;

static float *growbuf_reserve(GrowBuf *g, size_t n) {
    if (n > g->cap) {
        aligned_free(g->p);
        g->p = aligned_alloc_zeroed(n * sizeof(float));
        g->cap = n;
    }
    return g->p;
}

static __thread GrowBuf tls_a, tls_b;  // each thread's packed A block and (serial path) B panel
static GrowBuf shared_b;               // the parallel driver's B panel, packed by all threads

/* Pack panels [jp0, jp1) of the kc x nc block of op(B) starting at `b` into NR-wide micro-panels
 * (panel jp at out + jp*kc*NR, row p of it at + p*NR), zero-padding columns past nc. */
static void pack_b_panels(const Ukernel *uk, int jp0, int jp1, int kc, int nc, const float *b, int ldb, bool tb,
                          float *out) {
    const int NR = uk->NR;
    for (int jp = jp0; jp < jp1; jp++) {
        int j0 = jp * NR, w = min_i(NR, nc - j0);
        float *dst = out + (size_t)jp * kc * NR;
        if (!tb) {
            for (int p = 0; p < kc; p++) {
                const float *src = b + (size_t)p * ldb + j0;
                float *d = dst + (size_t)p * NR;
                memcpy(d, src, (size_t)w * sizeof(float));
                if (w < NR) memset(d + w, 0, (size_t)(NR - w) * sizeof(float));
            }
        } else {
            for (int j = 0; j < w; j++) {
                const float *src = b + (size_t)(j0 + j) * ldb;
                for (int p = 0; p < kc; p++) dst[(size_t)p * NR + j] = src[p];
            }
            if (w < NR)
                for (int p = 0; p < kc; p++)
                    memset(dst + (size_t)p * NR + w, 0, (size_t)(NR - w) * sizeof(float));
        }
    }
}

/* Pack the mc x kc block of op(A) starting at `a` into MR-tall micro-panels (panel ip at
 * out + ip*kc*MR, column p of it at + p*MR), zero-padding rows past mc. */
static void pack_a_block(const Ukernel *uk, int mc, int kc, const float *a, int lda, bool ta, float *out) {
    const int MR = uk->MR;
    for (int i0 = 0; i0 < mc; i0 += MR) {
        int h = min_i(MR, mc - i0);
        float *dst = out + (size_t)i0 * kc;
        if (!ta) {
            for (int i = 0; i < h; i++) {
                const float *src = a + (size_t)(i0 + i) * lda;
                for (int p = 0; p < kc; p++) dst[(size_t)p * MR + i] = src[p];
            }
            if (h < MR)
                for (int p = 0; p < kc; p++)
                    memset(dst + (size_t)p * MR + h, 0, (size_t)(MR - h) * sizeof(float));
        } else {
            for (int p = 0; p < kc; p++) {
                float *d = dst + (size_t)p * MR;
                memcpy(d, a + (size_t)p * lda + i0, (size_t)h * sizeof(float));
                if (h < MR) memset(d + h, 0, (size_t)(MR - h) * sizeof(float));
            }
        }
    }
}

/* C[0:mc, panels jp0..jp1) += op(A block) * packed B, with A packed (ap != NULL) or read through
 * its strides (ap == NULL; partial row tiles are packed into a small panel first). */
static void macro_kernel(const Ukernel *uk, int mc, int nc, int kc, int jp0, int jp1, const float *ap,
                         const float *a, int lda, bool ta, const float *bp, float alpha,
                         float beta, float *c, int ldc) {
    const int MR = uk->MR, NR = uk->NR;
    const long rsa = ta ? 1 : lda, csa = ta ? lda : 1;
    float *edge = NULL;
    int full_rows = mc / MR * MR;
    if (!ap && full_rows < mc) {  // the last, partial row tile of an unpacked A
        edge = growbuf_reserve(&tls_a, (size_t)MR * kc);
        pack_a_block(uk, mc - full_rows, kc, ta ? a + full_rows : a + (size_t)full_rows * lda, lda,
                     ta, edge);
    }
    for (int jp = jp0; jp < jp1; jp++) {
        int j0 = jp * NR, n = min_i(NR, nc - j0);
        const float *b = bp + (size_t)jp * kc * NR;
        for (int i0 = 0; i0 < mc; i0 += MR) {
            int m = min_i(MR, mc - i0);
            float *ct = c + (size_t)i0 * ldc + j0;
            if (ap)
                uk->packed(kc, ap + (size_t)i0 * kc, 1, MR, b, ct, ldc, m, n, alpha, beta);
            else if (m == MR)
                uk->strided(kc, a + i0 * rsa, rsa, csa, b, ct, ldc, m, n, alpha, beta);
            else
                uk->packed(kc, edge, 1, MR, b, ct, ldc, m, n, alpha, beta);
        }
    }
}

/* C = beta * C, for the cases where no product term is left (K == 0 or alpha == 0). */
static void scale_c(int M, int N, float beta, float *C, int ldc) {
    for (int i = 0; i < M; i++) {
        float *c = C + (size_t)i * ldc;
        if (beta == 0.0f)
            memset(c, 0, (size_t)N * sizeof(float));
        else
            for (int j = 0; j < N; j++) c[j] *= beta;
    }
}

static const float *a_at(const float *A, int lda, bool ta, int i, int p) {
    return ta ? A + (size_t)p * lda + i : A + (size_t)i * lda + p;
}
static const float *b_at(const float *B, int ldb, bool tb, int p, int j) {
    return tb ? B + (size_t)j * ldb + p : B + (size_t)p * ldb + j;
}

static void blocked_serial(const Ukernel *uk, bool ta, bool tb, int M, int N, int K, float alpha,
                                 const float *A, int lda, const float *B, int ldb, float beta,
                                 float *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0 || alpha == 0.0f) {
        scale_c(M, N, beta, C, ldc);
        return;
    }
    const int NR = uk->NR, MC = uk->MC, KC = uk->KC, NC = uk->NC;
    for (int jc = 0; jc < N; jc += NC) {
        int nc = min_i(NC, N - jc), npanels = (nc + NR - 1) / NR;
        bool pack_a = npanels > 4;  // A is worth packing only when many B panels reuse it
        for (int pc = 0; pc < K; pc += KC) {
            int kc = min_i(KC, K - pc);
            float beta_k = pc == 0 ? beta : 1.0f;
            float *bp = growbuf_reserve(&tls_b, (size_t)kc * round_up_i(nc, NR));
            pack_b_panels(uk, 0, npanels, kc, nc, b_at(B, ldb, tb, pc, jc), ldb, tb, bp);
            for (int ic = 0; ic < M; ic += MC) {
                int mc = min_i(MC, M - ic);
                const float *a = a_at(A, lda, ta, ic, pc);
                float *ap = NULL;
                if (pack_a) {
                    ap = growbuf_reserve(&tls_a, (size_t)round_up_i(mc, uk->MR) * kc);
                    pack_a_block(uk, mc, kc, a, lda, ta, ap);
                }
                macro_kernel(uk, mc, nc, kc, 0, npanels, ap, a, lda, ta, bp, alpha, beta_k,
                             C + (size_t)ic * ldc + jc, ldc);
            }
        }
    }
}

static void blocked_parallel(const Ukernel *uk, bool ta, bool tb, int M, int N, int K, float alpha, const float *A,
                          int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
    double work = (double)M * N * K;
    if (nt == 1 || work < 1 << 19 || M <= 0 || N <= 0 || K <= 0 || alpha == 0.0f) {
        blocked_serial(uk, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    const int MR = uk->MR, NR = uk->NR, MC = uk->MC, KC = uk->KC, NC = uk->NC;
    float *bp = growbuf_reserve(&shared_b, (size_t)KC * round_up_i(NC, NR));
    bool split_rows = M >= nt * MR * 2;  // else C is short and wide: split its column panels
#pragma omp parallel num_threads(nt)
    {
        int tid = omp_get_thread_num(), nth = omp_get_num_threads();
        int tiles = (M + MR - 1) / MR;
        int m0 = split_rows ? min_i(M, tiles * tid / nth * MR) : 0;
        int m1 = split_rows ? min_i(M, tiles * (tid + 1) / nth * MR) : M;
        for (int jc = 0; jc < N; jc += NC) {
            int nc = min_i(NC, N - jc), npanels = (nc + NR - 1) / NR;
            int jp0 = split_rows ? 0 : npanels * tid / nth;
            int jp1 = split_rows ? npanels : npanels * (tid + 1) / nth;
            for (int pc = 0; pc < K; pc += KC) {
                int kc = min_i(KC, K - pc);
                float beta_k = pc == 0 ? beta : 1.0f;
#pragma omp for schedule(static)
                for (int jp = 0; jp < npanels; jp++)
                    pack_b_panels(uk, jp, jp + 1, kc, nc, b_at(B, ldb, tb, pc, jc), ldb, tb, bp);
                for (int ic = m0; ic < m1; ic += MC) {
                    int mc = min_i(MC, m1 - ic);
                    float *ap = growbuf_reserve(&tls_a, (size_t)round_up_i(mc, MR) * kc);
                    pack_a_block(uk, mc, kc, a_at(A, lda, ta, ic, pc), lda, ta, ap);
                    macro_kernel(uk, mc, nc, kc, jp0, jp1, ap, NULL, lda, ta, bp, alpha, beta_k,
                                 C + (size_t)ic * ldc + jc, ldc);
                }
#pragma omp barrier
            }
        }
    }
}

/* One pair of entry points per micro-kernel. */
#define BLOCKED_VARIANT(tag, kernel, detail)                                                        \
    static void tag##_serial(bool ta, bool tb, int M, int N, int K, float alpha, const float *A,  \
                             int lda, const float *B, int ldb, float beta, float *C, int ldc) {   \
        blocked_serial(&kernel, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);          \
    }                                                                                              \
    static void tag##_parallel(bool ta, bool tb, int M, int N, int K, float alpha,               \
                               const float *A, int lda, const float *B, int ldb, float beta,      \
                               float *C, int ldc) {                                               \
        blocked_parallel(&kernel, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);        \
    }                                                                                              \
    static const GemmImpl tag = {"blocked", detail, tag##_parallel, tag##_serial};

BLOCKED_VARIANT(blocked_avx512, ukernel_avx512, "avx512 12x32 micro-kernel")
BLOCKED_VARIANT(blocked_avx2, ukernel_avx2, "avx2+fma 6x16 micro-kernel")
BLOCKED_VARIANT(blocked_portable, ukernel_portable, "portable C 4x16 micro-kernel")

const GemmImpl *gemm_blocked_variant(const char *ukernel) {
    if (!strcmp(ukernel, "avx512")) return cpu_has_avx512() ? &blocked_avx512 : NULL;
    if (!strcmp(ukernel, "avx2")) return cpu_has_avx2_fma() ? &blocked_avx2 : NULL;
    if (!strcmp(ukernel, "portable")) return &blocked_portable;
    return NULL;
}

const GemmImpl *gemm_blocked_best(void) {
    return cpu_has_avx512() ? &blocked_avx512 : cpu_has_avx2_fma() ? &blocked_avx2 : &blocked_portable;
}
