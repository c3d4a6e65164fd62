/* test_gemm.c: every GEMM backend (each blocked micro-kernel this CPU runs, and OpenBLAS) against
 * the naive ref, for all four transpose combinations, sizes around every block edge of every
 * micro-kernel and every path of the blocked driver, padded leading dimensions, alpha in
 * {1, 0.5}, beta in {0, 1, 0.3}, a NaN-filled C with beta = 0, and sgemm_serial called inside an
 * OpenMP parallel region. Blocked results must be bit-identical across thread counts and paths,
 * B packed once (gemm_pack_b, sgemm_packed) included; the other backends' sgemm_packed must be
 * their sgemm. An epilogue (sgemm_ep, sgemm_packed) must see every element of C once, with its
 * coordinates, after its last K block, on every path of every backend and at any thread count.
 * The tolerance is the fp32 rounding bound of a K-term dot product: c*K*eps*(|alpha| sum|a||b| +
 * |beta c|), from a second ref product on absolute values. */
#include <float.h>
#include <omp.h>
#include <string.h>

#include "cpu.h"
#include "gemm.h"
#include "rng.h"
#include "test_util.h"
#include "ukernel.h"

typedef struct { int M, N, K; } Size;

static void absv(float *dst, const float *src, long n) {
    for (long i = 0; i < n; i++) dst[i] = fabsf(src[i]);
}

/* One product's operands and what ref computes of it: the result and the bound of its error. */
typedef struct Case {
    bool ta, tb;
    Size s;
    float alpha, beta;
    int pad, lda, ldb, ldc;
    float *A, *B, *C0;  // op(A) (M, K), op(B) (K, N) padded; C0 (M, ldc) the C given
    float *W, *bound;   // (M, ldc) ref's result and its product of absolute values
} Case;

static Case case_make(bool ta, bool tb, Size s, float alpha, float beta, int pad, Rng *r) {
    const GemmImpl *ref = gemm_lookup("ref");
    const int M = s.M, N = s.N, K = s.K;
    int rows_a = ta ? K : M, cols_a = ta ? M : K, rows_b = tb ? N : K, cols_b = tb ? K : N;
    Case c = {ta, tb, s, alpha, beta, pad, cols_a + pad, cols_b + pad, N + pad, NULL, NULL, NULL,
              NULL, NULL};
    long na = (long)rows_a * c.lda, nb = (long)rows_b * c.ldb, nc = (long)M * c.ldc;
    c.A = malloc(sizeof(float) * (na + 1)), c.B = malloc(sizeof(float) * (nb + 1));
    c.C0 = malloc(sizeof(float) * (nc + 1)), c.W = malloc(sizeof(float) * (nc + 1));
    c.bound = malloc(sizeof(float) * (nc + 1));
    float *absA = malloc(sizeof(float) * (na + 1)), *absB = malloc(sizeof(float) * (nb + 1));
    fill_uniform(c.A, na, 1.0f, r), fill_uniform(c.B, nb, 1.0f, r), fill_uniform(c.C0, nc, 1.0f, r);
    if (beta == 0.0f)
        for (long i = 0; i < nc; i++) c.C0[i] = NAN;  // must never be read
    memcpy(c.W, c.C0, sizeof(float) * nc);
    ref->sgemm(ta, tb, M, N, K, alpha, c.A, c.lda, c.B, c.ldb, beta, c.W, c.ldc);
    absv(absA, c.A, na), absv(absB, c.B, nb), absv(c.bound, c.C0, nc);
    if (beta == 0.0f) memset(c.bound, 0, sizeof(float) * nc);
    ref->sgemm(ta, tb, M, N, K, fabsf(alpha), absA, c.lda, absB, c.ldb, fabsf(beta), c.bound,
               c.ldc);
    free(absA), free(absB);
    return c;
}

static void case_free(Case *c) { free(c->A), free(c->B), free(c->C0), free(c->W), free(c->bound); }

/* The case's product through `g` (its sgemm, or sgemm_serial) compared with ref's; returns 0
 * when every element is within the bound and the padding between C's rows is untouched. */
static int case_check(const Case *c, const GemmImpl *g, bool serial) {
    const int M = c->s.M, N = c->s.N, K = c->s.K, ldc = c->ldc;
    float *C = malloc(sizeof(float) * ((long)M * ldc + 1));
    memcpy(C, c->C0, sizeof(float) * M * ldc);
    (serial ? g->sgemm_serial : g->sgemm)(c->ta, c->tb, M, N, K, c->alpha, c->A, c->lda, c->B,
                                          c->ldb, c->beta, C, ldc);
    long bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            long at = (long)i * ldc + j;
            double tol = 2.0 * (K + 2) * FLT_EPSILON * c->bound[at] + 1e-30;
            if (!(fabs((double)C[at] - c->W[at]) <= tol)) {
                if (bad < 3)
                    fprintf(stderr, "  C[%d,%d] = %.9g, ref %.9g (tol %.3g)\n", i, j, C[at],
                            c->W[at], tol);
                bad++;
            }
        }
    for (int i = 0; i < M; i++)  // the padding between rows must be untouched
        for (int j = N; j < ldc; j++) {
            long at = (long)i * ldc + j;
            if (memcmp(&C[at], &c->C0[at], sizeof(float))) bad++;
        }
    EXPECT(bad == 0, "%s (%s%s) %s%s M=%d N=%d K=%d alpha=%g beta=%g pad=%d: %ld bad elements",
           g->name, g->detail, serial ? ", serial" : "", c->ta ? "T" : "N", c->tb ? "T" : "N", M,
           N, K, c->alpha, c->beta, c->pad, bad);
    free(C);
    return bad != 0;
}

/* A case of its own through `g`: 0 when it passes. */
static int check_one(const GemmImpl *g, bool serial, bool ta, bool tb, Size s, float alpha,
                     float beta, int pad, Rng *r) {
    Case c = case_make(ta, tb, s, alpha, beta, pad, r);
    int failed = case_check(&c, g, serial);
    case_free(&c);
    return failed;
}

/* Sizes around the block edges of one micro-kernel and the driver's paths (the comments name
 * the path a 2-thread sgemm takes; sgemm_serial takes the same one without threads). */
static int edge_sizes(const Ukernel *u, Size *out) {
    int MR = u->MR, NR = u->NR, KB = u->KB, MC = u->MC, KC = u->KC, NC = u->NC, n = 0;
    int MRS = u->MR_strided;
    // small (A unpacked): partial tiles, the tallest strided tiles, K not a multiple of KB,
    // two K blocks
    out[n++] = (Size){1, 1, 1};
    out[n++] = (Size){MRS, NR + 3, 19};
    out[n++] = (Size){2 * MRS + 1, 9, 2 * KB};
    out[n++] = (Size){MR - 1, NR + 1, 7};
    out[n++] = (Size){MR + 1, NR - 1, KB + 1};
    out[n++] = (Size){MR, NR, KC + 1};
    out[n++] = (Size){2 * MR + 1, 5 * NR + 3, 33};
    out[n++] = (Size){3, NC + 1, 9};
    // packed, serial: more than one A panel (M > MC), more than one B block (N > NC)
    out[n++] = (Size){MC + MR + 1, NR + 1, GEMM_SMALL_WORK / (MC * NR) + 1};
    out[n++] = (Size){2 * MR + 3, 2 * NC + NR + 5, GEMM_SMALL_WORK / (2 * NC * 2 * MR) + 2 * KB + 3};
    // threaded, rows split: partial tiles, three K blocks, A kept for a second B block, two A
    // panels (at 5 threads; at 2, each thread does half alone: GEMM_ALONE_ROWS) (A kept over
    // three K blocks: long_k_size)
    out[n++] = (Size){3 * MR + 5, 3 * NR + 7, 2 * KC + 3};
    out[n++] = (Size){4 * MR + 1, NC + NR + 1, GEMM_THREADED_WORK / (4 * MR * NC) + KB + 1};
    out[n++] = (Size){MC + MR + 1, 4 * NR + 1, GEMM_THREADED_WORK / (MC * 4 * NR) + 2};
    // threaded, columns split: too few row tiles to split, a short C over three K blocks
    out[n++] = (Size){MR + 5, NC + NR + 5, KC + 1};
    out[n++] = (Size){4 * MR + 1, NC + NR + 1, 2 * KC + 1};
    // threaded, rows split with each thread alone: a short C no wider than tall over three K
    // blocks (the weight gradient of a square weight)
    out[n++] = (Size){8 * NR + 3, 8 * NR + 1, 2 * KC + 1};
    // threaded, a short C over five K blocks, made four wider ones: summed in two K halves, a
    // thread or more each
    out[n++] = (Size){8 * NR + 3, 8 * NR + 1, 4 * KC + 1};
    // threaded, the tallest C summed in two K halves (four K blocks)
    out[n++] = (Size){GEMM_HALVES_ROWS, 5, 4 * KC};
    // threaded, one K block, B larger than GEMM_WHOLE_B_FLOATS and 4 times wider than A is tall
    // (the output layer's): B packed once is split by columns, else the rows are shared
    int wide_m = 10 * MR + 1, wide_n = GEMM_WHOLE_B_FLOATS / KC + 1;
    out[n++] = (Size){wide_m, (wide_n > 4 * wide_m ? wide_n : 4 * wide_m) + NR + 3, KC};
    return n;
}

/* Threaded with rows split, for every micro-kernel: A kept for a second B block over three K
 * blocks (both shared A panels in turn), C too tall for the columns split of a short C. Large:
 * checked bit for bit against the serial path only. */
static Size long_k_size(const Ukernel *const *kernels, size_t n) {
    Size s = {GEMM_SHORT_C_ROWS + 1, 0, 0};
    for (size_t k = 0; k < n; k++) {
        if (kernels[k]->NC + kernels[k]->NR + 1 > s.N) s.N = kernels[k]->NC + kernels[k]->NR + 1;
        if (2 * kernels[k]->KC + 1 > s.K) s.K = 2 * kernels[k]->KC + 1;
    }
    return s;
}

/* Blocked results must not depend on the path or the thread count: one product through sgemm
 * at 1, 2 and 5 threads (more threads than cores get preempted, which the team must survive, and
 * the others then take row chunks of the preempted ones' shares or K halves; at 5, a C of more
 * than MC rows is shared by the threads, at 2, done in halves by each alone),
 * sgemm_serial, sgemm_serial on row blocks of 5 (the small path; for a short C only, as the row
 * blocks of a taller C over a long K are short Cs summed in two K halves), and, for A not
 * transposed, with B packed once, at 1 and 5 threads. Only the last two variants for
 * `packed_only` (the backends that do not pack, whose sgemm_packed must be their sgemm at the
 * same thread count). */
static void check_bit_identical(const GemmImpl *g, Size s, bool ta, bool tb, bool packed_only,
                                Rng *r) {
    enum { VARIANTS = 7 };
    int M = s.M, N = s.N, K = s.K, lda = ta ? M : K, ldb = tb ? K : N;
    long na = (long)M * K, nb = (long)K * N, nc = (long)M * N;
    float *A = malloc(sizeof(float) * na), *B = malloc(sizeof(float) * nb);
    float *C0 = malloc(sizeof(float) * nc), *C[VARIANTS];
    fill_uniform(A, na, 1.0f, r), fill_uniform(B, nb, 1.0f, r), fill_uniform(C0, nc, 1.0f, r);
    for (int v = 0; v < VARIANTS; v++)
        C[v] = malloc(sizeof(float) * nc), memcpy(C[v], C0, sizeof(float) * nc);
    int threads = omp_get_max_threads();
    const int team[3] = {1, 2, 5};
    for (int t = 0; t < 3; t++) {
        omp_set_num_threads(team[t]);
        g->sgemm(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 0.3f, C[t], N);
    }
    omp_set_num_threads(threads);
    g->sgemm_serial(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 0.3f, C[3], N);
    for (int i = 0; i < M; i += 5)
        g->sgemm_serial(ta, tb, M - i < 5 ? M - i : 5, N, K, 0.5f, ta ? A + i : A + (long)i * lda,
                        lda, B, ldb, 0.3f, C[4] + (long)i * N, N);
    if (!ta) {
        GemmPackedB packed = {0};
        gemm_pack_b(&packed, g, tb, K, N, B, ldb);
        EXPECT(packed.by == g, "%s: B packed by %s", g->detail, packed.by->detail);
        for (int t = 0; t < 3; t += 2) {
            omp_set_num_threads(team[t]);
            sgemm_packed(&packed, M, 0.5f, A, lda, 0.3f, C[t == 0 ? 5 : 6], N, NULL);
        }
        omp_set_num_threads(threads);
        gemm_packed_b_free(&packed);
    }
    const char *what[VARIANTS] = {"", "2 threads", "5 threads", "sgemm_serial", "row blocks of 5",
                                  "B packed", "B packed, 5 threads"};
    for (int v = packed_only ? 5 : 1; v < (ta ? 5 : VARIANTS); v++) {
        if (v == 4 && M > GEMM_SHORT_C_ROWS) continue;
        int same = packed_only && v == 6 ? 2 : 0;  // OpenBLAS's sum order follows its threads
        EXPECT(!memcmp(C[same], C[v], sizeof(float) * nc),
               "%s %s%s M=%d N=%d K=%d: %s differs from sgemm at %d thread(s)", g->detail,
               ta ? "T" : "N", tb ? "T" : "N", M, N, K, what[v], same + 1);
    }
    free(A), free(B), free(C0);
    for (int v = 0; v < VARIANTS; v++) free(C[v]);
}

/* The test epilogue: c = 2 c + i + j / 1024 (exact in float for these sizes), each element's
 * visits counted. */
typedef struct EpilogueCheck {
    int *visits;  // (M, N)
    int N;
} EpilogueCheck;

static void count_and_mark(const GemmEpilogue *e, float *c, long ldc, int i, int j, int m, int n) {
    const EpilogueCheck *k = e->arg;
    for (int r = 0; r < m; r++)
        for (int t = 0; t < n; t++) {
            __atomic_fetch_add(&k->visits[(long)(i + r) * k->N + j + t], 1, __ATOMIC_RELAXED);
            c[r * ldc + t] = 2.0f * c[r * ldc + t] + (float)(i + r) + (float)(j + t) / 1024.0f;
        }
}

/* sgemm_ep at 1, 2 and 5 threads, and sgemm_packed with the epilogue (A not transposed) at 1 and
 * 5, against sgemm followed by the epilogue's formula (sgemm at the same thread count when the
 * backend's sums depend on it, `by_threads`): the same bits, every element visited once, the
 * padding between C's rows untouched. */
static void check_epilogue(const GemmImpl *g, Size s, bool ta, bool tb, bool by_threads, Rng *r) {
    const int M = s.M, N = s.N, K = s.K, lda = ta ? M : K, ldb = tb ? K : N, ldc = N + 1;
    const long nc = (long)M * ldc;
    float *A = malloc(sizeof(float) * ((long)M * K + 1));
    float *B = malloc(sizeof(float) * ((long)K * N + 1));
    float *C0 = malloc(sizeof(float) * (nc + 1)), *want = malloc(sizeof(float) * (nc + 1));
    float *C = malloc(sizeof(float) * (nc + 1));
    int *visits = malloc(sizeof(int) * ((long)M * N + 1));
    fill_uniform(A, (long)M * K, 1.0f, r), fill_uniform(B, (long)K * N, 1.0f, r);
    fill_uniform(C0, nc, 1.0f, r);
    const EpilogueCheck k = {visits, N};
    const GemmEpilogue ep = {count_and_mark, &k};
    const int threads = omp_get_max_threads(), team[5] = {1, 2, 5, 1, 5};
    for (int v = 0; v < (ta ? 3 : 5); v++) {
        omp_set_num_threads(team[v]);
        if (v == 0 || by_threads) {
            memcpy(want, C0, sizeof(float) * nc);
            g->sgemm(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 0.3f, want, ldc);
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    float *w = &want[(long)i * ldc + j];
                    *w = 2.0f * *w + (float)i + (float)j / 1024.0f;
                }
        }
        memcpy(C, C0, sizeof(float) * nc);
        memset(visits, 0, sizeof(int) * M * N);
        if (v < 3) {
            sgemm_ep(g, ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 0.3f, C, ldc, &ep);
        } else {  // B packed once
            GemmPackedB packed = {0};
            gemm_pack_b(&packed, g, tb, K, N, B, ldb);
            sgemm_packed(&packed, M, 0.5f, A, lda, 0.3f, C, ldc, &ep);
            gemm_packed_b_free(&packed);
        }
        omp_set_num_threads(threads);
        long wrong = 0, not_once = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < ldc; j++) {
                long at = (long)i * ldc + j;
                if (j < N && visits[(long)i * N + j] != 1) not_once++;
                if (memcmp(&C[at], j < N ? &want[at] : &C0[at], sizeof(float))) wrong++;
            }
        EXPECT(wrong == 0 && not_once == 0,
               "%s %s%s M=%d N=%d K=%d, epilogue %s: %ld elements differ, %ld not visited once",
               g->detail, ta ? "T" : "N", tb ? "T" : "N", M, N, K,
               v < 3 ? (v == 0 ? "at 1 thread" : v == 1 ? "at 2 threads" : "at 5 threads")
                     : (v == 3 ? "with B packed" : "with B packed, 5 threads"),
               wrong, not_once);
    }
    free(A), free(B), free(C0), free(want), free(C), free(visits);
}

int main(void) {
    Rng r = rng_init(1234, 0);
    const char *variants[] = {"blocked-avx512", "blocked-avx2", "blocked-portable", "openblas"};
    // the ref backend's epilogue is the fallback pass of every backend that cannot fuse one
    const Size fallback[] = {{7, 9, 5}, {300, 40, 17}};
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < 2; i++)
            check_epilogue(gemm_lookup("ref"), fallback[i], t & 1, t & 2, false, &r);
    bool epilogue_checked = false;
#if CPU_X86
    const Ukernel *kernels[] = {&ukernel_avx512, &ukernel_avx2, &ukernel_portable};
#else
    const Ukernel *kernels[] = {&ukernel_portable};
#endif
    Size sizes[64];  // room for the edges of all three micro-kernels and the extra sizes
    int ns = 0;
    for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) ns += edge_sizes(kernels[k], sizes + ns);
    const Size long_k = long_k_size(kernels, sizeof kernels / sizeof *kernels);
    sizes[ns++] = (Size){25, 25, 64};   // attention scores, one head
    sizes[ns++] = (Size){25, 64, 25};   // attention probabilities times values
    sizes[ns++] = (Size){5, 3, 0};      // K = 0: C = beta * C
    const float alphas[] = {1.0f, 0.5f}, betas[] = {0.0f, 1.0f, 0.3f};

    const GemmImpl *backends[4];
    int nb = 0;
    for (int v = 0; v < 4; v++) {
        if (!(backends[nb] = gemm_lookup(variants[v])))
            printf("skip %s: not supported on this CPU\n", variants[v]);
        else
            nb++;
    }
    // each case against every backend, ref computing it once
    for (int si = 0; si < ns; si++) {
        Size s = sizes[si];
        bool big = (double)s.M * s.N * s.K > GEMM_SMALL_WORK;
        for (int t = 0; t < 4; t++)
            for (int ai = 0; ai < 2; ai++)
                for (int bi = 0; bi < 3; bi++) {
                    if (big && !((ai == 0 && bi == 0) || (ai == 1 && bi == 2))) continue;
                    int pad = (ai + bi + t) % 2 ? 3 : 0;
                    Case c = case_make(t & 1, t & 2, s, alphas[ai], betas[bi], pad, &r);
                    for (int v = 0; v < nb; v++) {
                        case_check(&c, backends[v], false);
                        if (!big) case_check(&c, backends[v], true);
                    }
                    case_free(&c);
                }
    }
    for (int v = 0; v < 4; v++) {
        const GemmImpl *g = gemm_lookup(variants[v]);
        if (!g) continue;
        for (int si = 0; si < ns; si++)  // all variants for blocked, else B packed only
            for (int t = 0; t < 4; t++) check_bit_identical(g, sizes[si], t & 1, t & 2, v == 3, &r);
        for (int t = 0; t < 4; t++)  // against the serial path, which the sizes above check
            check_bit_identical(g, long_k, t & 1, t & 2, v == 3, &r);
        // every path of the blocked driver, which applies the epilogue whatever the micro-kernel
        // (with the first one this CPU runs); OpenBLAS the fallback pass, whatever the size
        const bool driver = v < 3 && !epilogue_checked;
        for (int si = 0; si < (driver ? ns : v == 3 ? 2 : 0); si++)
            for (int t = 0; t < 4; t++) check_epilogue(g, sizes[si], t & 1, t & 2, v == 3, &r);
        for (int t = 0; t < (driver ? 4 : 0); t++)
            check_epilogue(g, long_k, t & 1, t & 2, false, &r);
        epilogue_checked |= driver;
        // sgemm_serial inside a parallel region: independent products, one per iteration.
        int fails = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : fails)
        for (int it = 0; it < 16; it++) {
            Rng rr = rng_init(99, (uint64_t)it);
            Size s = {25 + it % 3, 25 + it % 5, 64 + it};
            fails += check_one(g, true, it & 1, it & 2, s, 1.0f, it % 2 ? 0.3f : 0.0f, it % 2, &rr);
        }
        EXPECT(fails == 0, "%s: sgemm_serial inside omp parallel failed %d times", g->detail,
               fails);
        // sgemm (the threaded entry) called from inside a region must also stay correct.
#pragma omp parallel num_threads(2)
        {
            Rng rr = rng_init(7, (uint64_t)omp_get_thread_num());
            check_one(g, false, false, true, (Size){200, 300, 129}, 1.0f, 0.0f, 1, &rr);
        }
    }
    // "auto" packs B for the backend of its packed class, which then computes the products
    GemmPackedB packed = {0};
    float B[12] = {0};
    gemm_pack_b(&packed, gemm_lookup("auto"), true, 3, 4, B, 3);
    EXPECT(packed.by == gemm_auto_choice()->backend[GEMM_CLASS_PACKED],
           "auto packed B for %s, not for its packed class's backend", packed.by->detail);
    gemm_packed_b_free(&packed);
    return test_finish();
}
