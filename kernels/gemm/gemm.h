/* gemm.h: the one matrix-multiply interface through which all heavy compute goes.
 *
 * BLAS semantics on row-major matrices:  C = alpha * op(A) * op(B) + beta * C
 *   op(A) is M x K (A is M x K with lda >= K, or K x M with lda >= M when ta),
 *   op(B) is K x N (B is K x N with ldb >= N, or N x K with ldb >= K when tb),
 *   C is M x N with ldc >= N. beta == 0 means C is write-only: its old contents (even NaN) are
 *   never read.
 * Backends: "ref" (naive loops, the test oracle), "blocked" (ours: BLIS-style packing and SIMD
 * micro-kernels), "openblas" (cblas_sgemm of the OpenMP build), and "auto" (the default), which
 * sends each product to blocked or openblas by its shape class, as measured on this machine
 * (gemm_auto.c). A backend is chosen once by name (config or the NMT_GEMM environment variable)
 * and logged. "blocked-avx512", "blocked-avx2" and "blocked-portable" force one micro-kernel (for
 * tests and benchmarks).
 * Two entry points per backend:
 *   sgemm         may use every OpenMP thread: call it outside parallel regions;
 *   sgemm_serial  never spawns threads: safe inside `omp parallel` loops (attention per head). */
#ifndef NMT_GEMM_H
#define NMT_GEMM_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*SgemmFn)(bool ta, bool tb, int M, int N, int K, float alpha, const float *A,
                        int lda, const float *B, int ldb, float beta, float *C, int ldc);

/* Elementwise work fused into a product (a bias, an activation): `apply` gets the final values of
 * C a tile at a time, while they are in cache, and may change them; the m x n tile at c (rows ldc
 * apart) is rows [i, i + m) and columns [j, j + n) of C. Every element is passed exactly once, in
 * tiles whose placement depends on the backend and the threads, so the result of an element may
 * depend on its coordinates and value only. `arg` is the caller's. */
typedef struct GemmEpilogue GemmEpilogue;
struct GemmEpilogue {
    void (*apply)(const GemmEpilogue *e, float *c, long ldc, int i, int j, int m, int n);
    const void *arg;
};

struct GemmPackedB;

typedef struct GemmImpl {
    const char *name;     // "ref" | "blocked" | "openblas"
    const char *detail;   // e.g. the micro-kernel the blocked backend picked
    SgemmFn sgemm;
    SgemmFn sgemm_serial;
    /* sgemm with an epilogue fused (see sgemm_ep); NULL: the backend cannot fuse one. */
    void (*sgemm_ep)(bool ta, bool tb, int M, int N, int K, float alpha, const float *A, int lda,
                     const float *B, int ldb, float beta, float *C, int ldc,
                     const GemmEpilogue *ep);
    /* Packing B once for many products (gemm_pack_b); NULL: the backend reads B itself. */
    void (*pack_b)(struct GemmPackedB *p);
    void (*sgemm_packed)(const struct GemmPackedB *p, int M, float alpha, const float *A,
                         int lda, float beta, float *C, int ldc, const GemmEpilogue *ep);
} GemmImpl;

/* g's sgemm, then ep (NULL: none) applied to all of C: fused into the product by a backend that
 * can (blocked), else in a pass over C after it. */
void sgemm_ep(const GemmImpl *g, bool ta, bool tb, int M, int N, int K, float alpha,
              const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc,
              const GemmEpilogue *ep);

/* An operand op(B) (K, N) prepared once for many products C = alpha A op(B) + beta C that share
 * it, such as the decoder's weights, used step after step: the blocked backends pack it in their
 * micro-kernel's layout (each product then skips packing B, with bit-identical results), the
 * others keep a reference. B must not change while the packed copy is in use. */
typedef struct GemmPackedB {
    const GemmImpl *by;  // the backend that prepared it, which computes the products
    bool tb;
    int K, N;
    const float *B;      // the operand itself
    int ldb;
    float *packed;       // `by`'s packed copy, or NULL (products read B)
    size_t cap;          // floats allocated at packed, kept for the next gemm_pack_b
} GemmPackedB;

/* Prepares op(B) for products by backend g (for "auto", the backend of the packed class); reuses
 * p's memory from an earlier call. Zero-initialise p before its first use. */
void gemm_pack_b(GemmPackedB *p, const GemmImpl *g, bool tb, int K, int N, const float *B,
                 int ldb);
/* C (M, N) = alpha A op(B) + beta C with op(B) from p and A (M, K), lda apart, then ep (NULL:
 * none) as sgemm_ep applies it: like sgemm, may use every OpenMP thread. */
void sgemm_packed(const GemmPackedB *p, int M, float alpha, const float *A, int lda, float beta,
                  float *C, int ldc, const GemmEpilogue *ep);
void gemm_packed_b_free(GemmPackedB *p);
/* The most memory gemm_pack_b allocates for a (K, N) operand, whatever the backend. */
size_t gemm_packed_b_bytes(int K, int N);

/* The classes of products "auto" decides for, each with its own backend:
 *   attention  M*N*K <= GEMM_SMALL_WORK: the per-(sentence, head) products, which attention runs
 *              through sgemm_serial inside its own parallel loop;
 *   wgrad      TN with K >= M and K >= N: weight gradients, summed over the tokens;
 *   large      all other products: projections, FFN, the output layer;
 *   packed     products with a B packed once (gemm_pack_b): a decoding step's weights, a few
 *              hundred rows of A each, the blocked backend without packing B against OpenBLAS
 *              packing it every time. gemm_class never returns it: gemm_pack_b decides. */
typedef enum {
    GEMM_CLASS_LARGE,
    GEMM_CLASS_WGRAD,
    GEMM_CLASS_ATTENTION,
    GEMM_CLASS_PACKED,
    GEMM_CLASSES
} GemmClass;
extern const char *const gemm_class_names[GEMM_CLASSES];  // "large", "wgrad", "attention", ...
GemmClass gemm_class(bool ta, bool tb, int M, int N, int K);

/* What "auto" runs at a thread count, and how that was decided. */
typedef struct GemmAutoChoice {
    const GemmImpl *backend[GEMM_CLASSES];  // blocked or openblas, per class
    double ms[GEMM_CLASSES][2];             // measured ms of blocked and of openblas; 0: none
    int threads;                            // the thread count it holds for
    const char *source;                     // "measured", "cached" or "default"
    char note[768];                         // how, for the log: timing, cache file, or why none
} GemmAutoChoice;

/* The choice "auto" makes at the current thread count (decided on first use, see gemm_auto.c). */
const GemmAutoChoice *gemm_auto_choice(void);

/* The backend called `name` ("auto", "ref", "blocked", "openblas", "blocked-<ukernel>"); NULL if
 * unknown or not runnable on this CPU.
 * Does not consult the environment and does not log. */
const GemmImpl *gemm_lookup(const char *name);

/* The backend for a run: NMT_GEMM if set, else `name` (NULL means "auto"). Logs the choice to
 * stderr once; an unknown name is a fatal error listing the valid ones. */
const GemmImpl *gemm_select(const char *name);

/* A warning when backend g runs far below what this CPU allows, with the remedy (OpenBLAS on a
 * fallback kernel set for a CPU it does not recognise); NULL when there is none. */
const char *gemm_warning(const GemmImpl *g);

/* Threads for the next `sgemm` calls of every backend (OpenMP and OpenBLAS's pool); "auto", once
 * in use, then takes its choice for that thread count. Call it outside parallel regions. */
void gemm_set_threads(int n);

#endif
