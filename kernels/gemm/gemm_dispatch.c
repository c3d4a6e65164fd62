/* gemm_dispatch.c: backend lookup by name, the NMT_GEMM override ("auto" is gemm_auto.c), and
 * B operands packed once for many products. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "check.h"
#include "gemm_auto.h"
#include "gemm_backends.h"

const GemmImpl *gemm_lookup(const char *name) {
    if (!strcmp(name, "ref")) return &gemm_ref;
    if (!strcmp(name, "openblas")) return gemm_openblas_get();
    if (!strcmp(name, "blocked")) return gemm_blocked_best();
    if (!strncmp(name, "blocked-", 8)) return gemm_blocked_variant(name + 8);
    if (!strcmp(name, "auto")) return gemm_auto_get();
    return NULL;
}

const GemmImpl *gemm_select(const char *name) {
    const char *env = getenv("NMT_GEMM");
    const char *want = env && *env ? env : name ? name : "auto";
    const GemmImpl *g = gemm_lookup(want);
    if (!g)
        FATAL("unknown GEMM backend '%s'%s; expected one of: auto, blocked, openblas, ref (or blocked-avx512, blocked-avx2, blocked-portable to force a micro-kernel this CPU supports)", want,
              env && *env ? " (from NMT_GEMM)" : "");
    static const GemmImpl *logged;
    if (logged != g) {
        fprintf(stderr,
                strcmp(g->name, "auto") ? "[gemm] backend %s (%s)%s\n"
                                        : "[gemm] backend %s -> %s%s\n",  // the choice per class
                g->name, g->detail, env && *env ? ", set by NMT_GEMM" : "");
        const char *warning = gemm_warning(g);
        if (warning) fprintf(stderr, "[gemm] warning: %s\n", warning);
        logged = g;
    }
    return g;
}

const char *gemm_warning(const GemmImpl *g) {
    bool uses_openblas = g == gemm_openblas_get();
    if (!strcmp(g->name, "auto"))
        for (int k = 0; k < GEMM_CLASSES; k++)
            uses_openblas |= gemm_auto_choice()->backend[k] == gemm_openblas_get();
    return uses_openblas ? gemm_openblas_warning() : NULL;
}

void gemm_set_threads(int n) {
    omp_set_num_threads(n);
    gemm_openblas_set_threads(n);
    gemm_auto_threads_changed(n);
}

void gemm_pack_b(GemmPackedB *p, const GemmImpl *g, bool tb, int K, int N, const float *B,
                 int ldb) {
    p->by = g, p->tb = tb, p->K = K, p->N = N, p->B = B, p->ldb = ldb;
    if (g->pack_b) g->pack_b(p);
}

float *gemm_packed_b_reserve(GemmPackedB *p, size_t floats) {
    if (floats > p->cap) {
        aligned_free(p->packed);
        p->packed = aligned_alloc_zeroed(floats * sizeof(float));
        p->cap = floats;
    }
    return p->packed;
}

void sgemm_packed(const GemmPackedB *p, int M, float alpha, const float *A, int lda, float beta,
                  float *C, int ldc, const GemmEpilogue *ep) {
    if (p->by->sgemm_packed)
        p->by->sgemm_packed(p, M, alpha, A, lda, beta, C, ldc, ep);
    else
        sgemm_ep(p->by, false, p->tb, M, p->N, p->K, alpha, A, lda, p->B, p->ldb, beta, C, ldc,
                 ep);
}

enum { EPILOGUE_THREADED_WORK = 1 << 15 };  // elements of C from which threads share the pass

/* ep applied to all of C (M, N), rows ldc apart, a row at a time: the fallback of sgemm_ep. */
static void epilogue_pass(const GemmEpilogue *ep, float *C, int M, int N, int ldc) {
#pragma omp parallel for schedule(static) if ((long)M * N >= EPILOGUE_THREADED_WORK)
    for (int i = 0; i < M; i++) ep->apply(ep, C + (size_t)i * ldc, ldc, i, 0, 1, N);
}

void sgemm_ep(const GemmImpl *g, bool ta, bool tb, int M, int N, int K, float alpha,
              const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc,
              const GemmEpilogue *ep) {
    if (ep && g->sgemm_ep) {
        g->sgemm_ep(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ep);
        return;
    }
    g->sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (ep) epilogue_pass(ep, C, M, N, ldc);
}

void gemm_packed_b_free(GemmPackedB *p) {
    aligned_free(p->packed);
    *p = (GemmPackedB){0};
}
