/* gemm_blocked.c: our GEMM, the BLIS/GotoBLAS five-loop algorithm mirrored for row-major C
 * (B is the vector operand of the micro-kernel, A the broadcast one):
 *
 *   ic (MC rows) -> pc (K block of about KC) -> jc (NC columns) -> pack B block (KC x NC, L2)
 *     -> ir (MR rows: one packed A micro-panel in L1) -> jr (NR: B micro-panels from L2)
 *     -> micro-kernel
 *
 * The A micro-panels are packed as the ir loop reaches them: the next one piece by piece after
 * each kernel call, whose k loop prefetches that piece's source lines. They go to two slots used
 * in turn, or, when later column blocks reuse them, to the thread's whole A panel.
 * Packing absorbs the transposes (one driver for NN/NT/TN/TT) and zero-pads partial panels;
 * beta is applied with the first K block only. The K blocks depend on K alone and every element
 * of C is summed in the same order whatever the path or the thread split: results are
 * bit-identical across thread counts.
 * Threads split the rows of C: they claim B micro-panels to pack and chunks of row tiles to
 * compute through shared counters, and wait only for claimed work still unfinished, never for a
 * thread's arrival (see packed_product); when C has few rows (too few row tiles, or a weight
 * gradient's short C over a few K blocks) they split it and run independently: its columns, or,
 * for a short C no wider than tall and kernels that prefer it (Ukernel.short_c_rows), its rows.
 * They also split a tall C's rows, each thread doing its share alone, when B is packed once or
 * small beside each share, and a thread done with its share takes the last row chunks of the
 * others' (tall_rows_product); but a B packed once that is larger than a core's L2 and much wider
 * than A is tall (the output layer's embedding) is split by columns, so each thread reads its half
 * of B once rather than all of it once per row chunk.
 * A short C over four K blocks or more is summed in two K halves, half of the threads starting on
 * each, then helping with the other's rows that are left (k_halves): a summation order that depends
 * on the shape, never on the threads.
 * Small products (attention-sized) take no threads and no packing of A, and pack B only to
 * transpose it: the micro-kernel reads the operands through their strides.
 * A B operand packed once (gemm_pack_b) holds every K block's micro-panels over all of N, in the
 * layout of the B blocks: products with it read their blocks there and skip packing B.
 * An epilogue (sgemm_ep) takes C a row tile of a column block at a time as the micro-kernel
 * finishes it (its last K block), while it is in L1; a product summed in K halves, the rows of C
 * their sum finishes.
 * Packing buffers are allocated once per thread and reused: fresh memory is slow to touch. */
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "check.h"
#include "cpu.h"
#include "gemm_backends.h"
#include "shares.h"
#include "ukernel.h"

static int min_i(int a, int b) { return a < b ? a : b; }
static int div_up(int n, int d) { return (n + d - 1) / d; }
static int round_up_i(int n, int to) { return div_up(n, to) * to; }

/* A buffer that only grows; its contents do not survive growth. */
typedef struct GrowBuf {
    void *p;
    size_t cap;  // bytes
} GrowBuf;

static void *growbuf_reserve(GrowBuf *g, size_t bytes) {
    if (bytes > g->cap) {
        aligned_free(g->p);
        g->p = aligned_alloc_zeroed(bytes);
        g->cap = bytes;
    }
    return g->p;
}

static float *floats(GrowBuf *g, size_t n) { return growbuf_reserve(g, n * sizeof(float)); }

/* Zeroed ints, for the work counters of one product. */
static int *zeroed_ints(GrowBuf *g, size_t n) {
    return memset(growbuf_reserve(g, n * sizeof(int)), 0, n * sizeof(int));
}

/* The buffers of one packed product's Work (see work_make): B blocks, A panels, counters. */
typedef struct WorkBufs {
    GrowBuf b, a, counters;
} WorkBufs;

/* Each thread's buffers: its A micro-panel slots, and, working alone, its Work's, the second K
 * half's C and its copy of a whole packed B. Freed when the thread exits (OpenMP runtimes end
 * threads when teams shrink). */
typedef struct ThreadBufs {
    GrowBuf slots, half_c, whole_b;
    WorkBufs alone;
} ThreadBufs;

static pthread_key_t thread_bufs_key;
static pthread_once_t thread_bufs_once = PTHREAD_ONCE_INIT;

static void thread_bufs_free(void *p) {
    ThreadBufs *t = p;
    aligned_free(t->slots.p), aligned_free(t->half_c.p), aligned_free(t->whole_b.p);
    aligned_free(t->alone.b.p), aligned_free(t->alone.a.p), aligned_free(t->alone.counters.p);
    free(t);
}

static void thread_bufs_key_make(void) {
    CHECK(pthread_key_create(&thread_bufs_key, thread_bufs_free) == 0, "no thread-specific key");
}

static ThreadBufs *thread_bufs(void) {
    pthread_once(&thread_bufs_once, thread_bufs_key_make);
    ThreadBufs *t = pthread_getspecific(thread_bufs_key);
    if (!t) {
        t = xcalloc(1, sizeof *t);
        CHECK(pthread_setspecific(thread_bufs_key, t) == 0, "cannot set thread-specific data");
    }
    return t;
}

// A team's Works (one per K half of a short C, the first for any other shared product) and the
// second K half's C.
static WorkBufs team_work[2];
static GrowBuf team_half_c;

/* One product C = alpha op(A) op(B) + beta C as the drivers see it. */
typedef struct Product {
    const Ukernel *uk;
    bool ta, tb;
    int M, N, K;
    float alpha, beta;
    const float *A;  // op(A) is (M, K)
    long lda;
    const float *B;  // op(B) is (K, N)
    long ldb;
    // op(B) packed whole once (gemm_pack_b), or NULL: the K block at pc, from column j on, is
    // at B_packed + pc * padded_N + (packed_j0 + j) * kc
    const float *B_packed;
    long padded_N;
    int packed_j0;
    float *C;        // (M, N)
    long ldc;
    int kb0, kb1;    // the K blocks summed: [kb0, kb1) of k_blocks
    // applied to C's tiles as their last K block leaves them (NULL: none); C is rows [ep_i, ..)
    // and columns [ep_j, ..) of the caller's C, whose coordinates the epilogue gets
    const GemmEpilogue *ep;
    int ep_i, ep_j;
} Product;

static const float *a_at(const Product *g, int i, int p) {
    return g->ta ? g->A + (size_t)p * g->lda + i : g->A + (size_t)i * g->lda + p;
}
static const float *b_at(const Product *g, int p, int j) {
    return g->tb ? g->B + (size_t)j * g->ldb + p : g->B + (size_t)p * g->ldb + j;
}

/* The epilogue, if any, on the m x n tile of C at row i, column j (of g's C). */
static void epilogue_tile(const Product *g, int i, int j, int m, int n) {
    if (g->ep && m > 0 && n > 0)
        g->ep->apply(g->ep, g->C + (size_t)i * g->ldc + j, g->ldc, g->ep_i + i, g->ep_j + j, m,
                     n);
}

static const float *packed_b_block(const Product *g, int pc, int kc, int j) {
    return g->B_packed + (size_t)pc * g->padded_N + (size_t)(g->packed_j0 + j) * kc;
}

/* K is cut into k_blocks(K) near-equal blocks of at most KC, but an odd count from five on
 * loses one (blocks of at most 1.25 KC): the two K halves of k_halves are then equal, where
 * 4100 tokens cut into 9 blocks gave one thread 5 of them and the other 4. Block kb starts at
 * k_start. A product sums blocks [kb0, kb1) of them, beta applied with the first. */
static int k_blocks(const Product *g) {
    int n = div_up(g->K, g->uk->KC);
    return n >= 5 ? n - n % 2 : n;
}
static int k_start(const Product *g, int nkb, int kb) { return (int)((long)g->K * kb / nkb); }

/* Width of the blocks a length n is cut into: near-equal, at most `cap` (rounded up to `unit`),
 * a multiple of `unit`. */
static int block_width(int n, int cap, int unit) {
    return round_up_i(div_up(n, div_up(n, cap)), unit);
}

/* The lines of `rows` rows of `row_bytes` bytes, the first at p, `ld` bytes apart. */
static PrefetchSpan prefetch_span(const void *p, long ld, int rows, int row_bytes) {
    int skew = (int)((uintptr_t)p % 64);
    return (PrefetchSpan){(const char *)p - skew, ld, rows, div_up(skew + row_bytes, 64)};
}

/* Packs columns [p0, p1) (p0 a multiple of KB) of the A micro-panel for op(A) rows [i, i+m) of
 * the K block at pc into the micro-panel at a; a_piece_source is the span of lines that reads. */
static void pack_a_piece(const Product *g, float *a, int i, int m, int pc, int p0, int p1) {
    if (p1 > p0)
        g->uk->pack_a(g->uk, m, p1 - p0, a_at(g, i, pc + p0), g->lda, g->ta,
                      a + (size_t)p0 * g->uk->MR);
}
static PrefetchSpan a_piece_source(const Product *g, int i, int m, int pc, int p0, int p1) {
    long ld = g->lda * (long)sizeof(float);
    const float *src = a_at(g, i, pc + p0);
    return g->ta ? prefetch_span(src, ld, p1 - p0, m * (int)sizeof(float))
                 : prefetch_span(src, ld, m, (p1 - p0) * (int)sizeof(float));
}

/* Prefetch the m x n tile of C at c (n <= NR, 64-byte lines), which the next kernel call reads
 * and writes. Always inlined: GCC drops calls to a function made only of prefetches. */
static inline __attribute__((always_inline)) void prefetch_c_tile(const float *c, long ldc, int m,
                                                                   int n) {
    for (int i = 0; i < m; i++) {
        __builtin_prefetch(c + i * ldc, 1, 3);
        __builtin_prefetch(c + i * ldc + n - 1, 1, 3);
    }
}

/* Rows [r0, r1) of C[:, jc:jc+nc] for one K block, B packed in bp: the ir loop keeps an A
 * micro-panel in L1 while the jr loop streams the B micro-panels from L2.
 * With `pack`, the next A micro-panel is packed piece by piece (a range of k blocks) after each
 * kernel call, which prefetches that piece's source lines. With `keep`, ap is the A panel from row
 * r0 on, kept for later column blocks, else two micro-panel slots used in turn; without `pack`
 * ap already holds the panel, and the kernel calls prefetch its next micro-panel. With `last` (the
 * product's last K block), each row tile's MR x nc of C then goes through the epilogue, mostly
 * from L1: the whole row at once rather than each micro-tile as the kernel leaves it, whose masked
 * stores the epilogue's loads would wait for. */
static void multiply_block(const Product *g, float *ap, bool keep, bool pack, int r0, int r1,
                           int pc, int kc, float beta, const float *bp, int jc, int nc,
                           bool last) {
    const Ukernel *uk = g->uk;
    const int MR = uk->MR, NR = uk->NR, KB = uk->KB, kp = round_up_i(kc, KB);
    const int calls = div_up(nc, NR), blocks = kp / KB;
    float *a = ap;  // (kp/KB, MR, KB)
    if (pack) pack_a_piece(g, a, r0, min_i(MR, r1 - r0), pc, 0, kc);
    for (int ir = r0; ir < r1; ir += MR) {
        int m = min_i(MR, r1 - ir), next_m = min_i(MR, r1 - ir - MR);
        float *next = keep ? a + (size_t)MR * kp : a == ap ? ap + (size_t)MR * kp : ap;
        float *c = g->C + (size_t)ir * g->ldc + jc;
        for (int jr = 0, call = 0; jr < nc; jr += NR, call++) {
            int p0 = KB * (blocks * call / calls);
            int p1 = min_i(kc, KB * (blocks * (call + 1) / calls));
            PrefetchSpan pf = {0};
            if (next_m > 0 && p1 > p0)
                pf = pack ? a_piece_source(g, ir + MR, next_m, pc, p0, p1)
                          : prefetch_span(next + (size_t)p0 * MR, 0, 1,
                                          (p1 - p0) * MR * (int)sizeof(float));
            prefetch_c_tile(c + jr, g->ldc, m, min_i(NR, nc - jr));
            uk->packed(kc, a, 0, 0, bp + (size_t)jr * kc, 0, c + jr, g->ldc, m,
                       min_i(NR, nc - jr), g->alpha, beta, &pf);
            if (pack && next_m > 0) pack_a_piece(g, next, ir + MR, next_m, pc, p0, p1);
        }
        if (last) epilogue_tile(g, ir, jc, m, nc);
        a = next;
    }
}

/* The shared state of the packed product (see packed_product). Blocks b are numbered in order of
 * (A panel, K block, B block); a step is an (A panel, K block) pair, numbered in order too. */
typedef struct Work {
    int mcb, ncb, chunk;  // rows of an A panel, columns of a B block, MR tiles per row chunk
    float *bp[2];         // packed B blocks, block b in bp[b % 2]: (ncb/NR, kc, NR)
    float *ap[2];         // with more than one B block per K block, the packed A panel of step s
                          // in ap[s % 2]: (mcb/MR, kc/KB, MR, KB); else NULL
                          // (kc: the widest K block)
    int *counters;        // per block, WORK_COUNTERS of them
    int *chunk_gen;       // per row chunk: 1 + the step whose A the A panel holds
    int *chunk_done;      // per row chunk and B block: 1 + the last step computed there
} Work;

enum { B_CLAIMED, B_PACKED, ROWS_CLAIMED, ROWS_DONE, WORK_COUNTERS };

static int claim(int *counter) { return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED); }
static void publish(int *counter, int amount) {
    __atomic_fetch_add(counter, amount, __ATOMIC_RELEASE);
}

/* Until *counter >= target: spin briefly, then give the core away (the thread we wait for may
 * be waiting for it). */
static void wait_for(const int *counter, int target) {
    for (int spins = 0; __atomic_load_n(counter, __ATOMIC_ACQUIRE) < target; spins++) {
        if (spins < 2000)
            cpu_relax();
        else
            sched_yield();
    }
}

/* The packed five-loop product, run by any of the current team's threads, each of which may
 * start it at any time (or by one thread alone): one that starts late passes the blocks already
 * done and claims what is left. The blocks (A panel, K block, B block) are done in order; within
 * a block the threads claim B micro-panels to pack, wait until all are packed, then claim chunks
 * of row tiles to compute. Nothing waits for a thread's arrival, only for work it claimed and has
 * not finished, so a thread the OS pauses holds the others up by one piece at most. A chunk of C
 * is updated K block after K block, in order. B blocks alternate between two buffers (the block
 * two back must be done before its buffer is refilled); so do shared A panels, which chunks of
 * later B blocks read once the chunk that packed them is done. */
/* Until block b's rows are all computed (its B buffer may then be refilled). */
static void wait_block_done(const Product *g, const Work *w, int b) {
    int blocks_per_panel = (g->kb1 - g->kb0) * div_up(g->N, w->ncb);
    int rows = min_i(w->mcb, g->M - b / blocks_per_panel * w->mcb);  // of b's A panel
    wait_for(&w->counters[b * WORK_COUNTERS + ROWS_DONE], rows);
}

static void packed_product(const Product *g, const Work *w) {
    const Ukernel *uk = g->uk;
    const int MR = uk->MR, NR = uk->NR, nkb = k_blocks(g), nj = div_up(g->N, w->ncb);
    const bool keep = nj > 1;  // A is reused by later B blocks of its K block
    for (int ic = 0, b = 0, gen = 0; ic < g->M; ic += w->mcb) {
        int mc = min_i(w->mcb, g->M - ic), chunks = div_up(div_up(mc, MR), w->chunk);
        for (int kb = g->kb0; kb < g->kb1; kb++, gen++) {
            int pc = k_start(g, nkb, kb), kc = k_start(g, nkb, kb + 1) - pc;
            int kp = round_up_i(kc, uk->KB);
            float beta = kb == g->kb0 ? g->beta : 1.0f, *apanel = w->ap[gen % 2];
            // The A panel of the step 2 back is refilled: all its blocks must be done (a chunk
            // may finish its last block before the others, so the last alone does not tell).
            if (keep && gen >= 2)
                for (int q = b - 2 * nj; q < b - nj; q++) wait_block_done(g, w, q);
            for (int jc = 0, j = 0; jc < g->N; jc += w->ncb, j++, b++) {
                int nc = min_i(w->ncb, g->N - jc), panels = div_up(nc, NR);
                int *cnt = w->counters + b * WORK_COUNTERS;
                const float *bp = w->bp[b % 2];
                if (g->B_packed) {
                    bp = packed_b_block(g, pc, kc, jc);
                } else {
                    if (b >= 2) wait_block_done(g, w, b - 2);
                    for (int q; (q = claim(&cnt[B_CLAIMED])) < panels;
                         publish(&cnt[B_PACKED], 1))
                        uk->pack_b(uk, kc, min_i(NR, nc - q * NR), b_at(g, pc, jc + q * NR),
                                   g->ldb, g->tb, w->bp[b % 2] + (size_t)q * NR * kc);
                    wait_for(&cnt[B_PACKED], panels);
                }
                for (int c; (c = claim(&cnt[ROWS_CLAIMED])) < chunks;) {
                    int r0 = ic + c * w->chunk * MR, r1 = min_i(ic + mc, r0 + w->chunk * MR);
                    float *a = keep ? apanel + (size_t)(r0 - ic) * kp
                                    : floats(&thread_bufs()->slots,
                                             (size_t)2 * MR * kp);  // (2, kp/KB, MR, KB)
                    int *done = &w->chunk_done[c * nj + j];
                    wait_for(done, gen);  // the previous K block's update of these rows
                    if (keep && j > 0) wait_for(&w->chunk_gen[c], gen + 1);
                    multiply_block(g, a, keep, j == 0, r0, r1, pc, kc, beta, bp, jc, nc,
                                   kb == g->kb1 - 1);
                    if (keep && j == 0)
                        __atomic_store_n(&w->chunk_gen[c], gen + 1, __ATOMIC_RELEASE);
                    __atomic_store_n(done, gen + 1, __ATOMIC_RELEASE);
                    publish(&cnt[ROWS_DONE], r1 - r0);
                }
            }
        }
    }
}

/* Row chunks of a shared packed product that no thread has claimed yet, over all its blocks. */
static int chunks_unclaimed(const Product *g, const Work *w) {
    const int nkb = g->kb1 - g->kb0, nj = div_up(g->N, w->ncb), MR = g->uk->MR;
    int left = 0;
    for (int ic = 0, b = 0; ic < g->M; ic += w->mcb) {
        const int chunks = div_up(div_up(min_i(w->mcb, g->M - ic), MR), w->chunk);
        for (int q = 0; q < nkb * nj; q++, b++) {
            int claimed = __atomic_load_n(&w->counters[b * WORK_COUNTERS + ROWS_CLAIMED],
                                          __ATOMIC_RELAXED);
            left += claimed < chunks ? chunks - claimed : 0;
        }
    }
    return left;
}

/* The state of a packed product whose A panels are cut into `chunks` row chunks for the threads
 * to claim (1: one thread computes it alone), in `bufs`. */
static Work work_make(const Product *g, int chunks, WorkBufs *bufs) {
    const Ukernel *uk = g->uk;
    Work w;
    w.mcb = block_width(g->M, uk->MC, uk->MR);
    w.ncb = block_width(g->N, uk->NC, uk->NR);
    int tiles = div_up(w.mcb, uk->MR), kc = div_up(g->K, k_blocks(g)), slots = chunks > 1 ? 2 : 1;
    w.chunk = div_up(tiles, chunks);
    int nkb = g->kb1 - g->kb0, nj = div_up(g->N, w.ncb);
    int blocks = div_up(g->M, w.mcb) * nkb * nj;
    size_t b_floats = (size_t)kc * round_up_i(w.ncb, uk->NR);
    size_t a_floats = (size_t)round_up_i(w.mcb, uk->MR) * round_up_i(kc, uk->KB);
    float *b = g->B_packed ? NULL : floats(&bufs->b, slots * b_floats);
    w.bp[0] = b, w.bp[1] = b ? b + (slots - 1) * b_floats : NULL;
    w.ap[0] = w.ap[1] = NULL;
    if (nj > 1) {
        float *a = floats(&bufs->a, slots * a_floats);
        w.ap[0] = a, w.ap[1] = a + (slots - 1) * a_floats;
    }
    int row_chunks = div_up(tiles, w.chunk);
    int *counters = zeroed_ints(&bufs->counters,
                                (size_t)blocks * WORK_COUNTERS + (size_t)row_chunks * (1 + nj));
    w.counters = counters, w.chunk_gen = counters + (size_t)blocks * WORK_COUNTERS;
    w.chunk_done = w.chunk_gen + row_chunks;
    return w;
}

/* The packed product computed by this thread alone, in its own buffers. */
static void alone_product(const Product *g) {
    Work w = work_make(g, 1, &thread_bufs()->alone);
    packed_product(g, &w);
}

/* Rows [i0, i1) of g, a product of their own. */
static Product rows_of(const Product *g, int i0, int i1) {
    Product p = *g;
    p.M = i1 - i0, p.A = a_at(g, i0, 0), p.C = g->C + (size_t)i0 * g->ldc, p.ep_i = g->ep_i + i0;
    return p;
}

/* The whole product without packing A: the micro-kernel broadcasts A through its strides and
 * reads B rows in place, or from a transposed copy when tb. */
static void small_product(const Product *g) {
    const Ukernel *uk = g->uk;
    const int NR = uk->NR, rows = block_width(g->M, uk->MR_strided, 1);  // 25 rows: 13 + 12
    long rsa = g->ta ? 1 : g->lda, csa = g->ta ? g->lda : 1;
    int nkb = k_blocks(g);
    for (int kb = g->kb0; kb < g->kb1; kb++) {
        int pc = k_start(g, nkb, kb), kc = k_start(g, nkb, kb + 1) - pc;
        float beta = kb == g->kb0 ? g->beta : 1.0f;
        const float *b = b_at(g, pc, 0);
        long rsb = g->ldb, panel_stride = NR;  // B column panel jp at b + jp*panel_stride
        if (g->B_packed) {
            b = packed_b_block(g, pc, kc, 0);
            rsb = NR, panel_stride = (long)kc * NR;
        } else if (g->tb) {
            float *bp = floats(&thread_bufs()->alone.b,
                               (size_t)kc * round_up_i(g->N, NR));  // (N/NR, kc, NR)
            uk->pack_b(uk, kc, g->N, b, g->ldb, true, bp);
            b = bp, rsb = NR, panel_stride = (long)kc * NR;
        }
        for (int ir = 0; ir < g->M; ir += rows) {
            const float *a = a_at(g, ir, pc);
            float *c = g->C + (size_t)ir * g->ldc;
            for (int jr = 0, jp = 0; jr < g->N; jr += NR, jp++)
                uk->strided(kc, a, rsa, csa, b + jp * panel_stride, rsb, c + jr, g->ldc,
                            min_i(rows, g->M - ir), min_i(NR, g->N - jr), g->alpha, beta, NULL);
        }
    }
    epilogue_tile(g, 0, 0, g->M, g->N);
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

static Product product_make(const Ukernel *uk, bool ta, bool tb, int M, int N, int K,
                            float alpha, const float *A, int lda, const float *B, int ldb,
                            float beta, float *C, int ldc) {
    Product g = {.uk = uk, .ta = ta, .tb = tb, .M = M, .N = N, .K = K, .alpha = alpha,
                 .beta = beta, .A = A, .lda = lda, .B = B, .ldb = ldb, .C = C, .ldc = ldc};
    g.kb1 = k_blocks(&g);
    return g;
}

/* A short C over a long K (weight gradients: up to HALVES_ROWS rows, K the batch's tokens) is
 * summed in two halves of its K blocks, the first into C, the second into a scratch C added to it
 * at the end. Each half is a product of its own, so two threads compute one each with no operand
 * packed twice and never wait for each other, where splitting C instead has each thread pack all
 * of one operand, and sharing it meets at every K block; a thread done with its half claims row
 * chunks of the other's. Whether to split depends on the shape alone: one thread sums the same
 * halves. Up to 1024 rows: the weight gradient of the second FFN layer of bench-small (1024 x 256
 * over 4100 tokens), whose row tiles the threads shared K block after K block, took 32-33 ms a
 * step instead of 38-40 (AVX-512 kernel, 2 threads of a Zen 5 EPYC, three alternating pairs of
 * runs; the AVX2 kernel: 59-68 ms either way). */
static bool k_halves(const Product *g) {
    return g->M <= GEMM_HALVES_ROWS && k_blocks(g) >= 4;
}

/* The halves of g, the second into half_c (M, N). */
static void halves_make(const Product *g, float *half_c, Product half[2]) {
    int mid = (g->kb0 + g->kb1) / 2;
    half[0] = *g, half[0].kb1 = mid, half[0].ep = NULL;
    half[1] = *g, half[1].kb0 = mid, half[1].beta = 0.0f, half[1].C = half_c, half[1].ldc = g->N;
    half[1].ep = NULL;
}

// C rows [i0, i1) += the second half's, then the epilogue on them
static void halves_add(const Product *g, const float *half_c, int i0, int i1) {
    for (int i = i0; i < i1; i++) {
        float *c = g->C + (size_t)i * g->ldc;
        const float *h = half_c + (size_t)i * g->N;
#pragma omp simd
        for (int j = 0; j < g->N; j++) c[j] += h[j];
    }
    epilogue_tile(g, i0, 0, i1 - i0, g->N);
}

static void blocks_product(const Product *g) {
    if ((double)g->M * g->N * g->K <= GEMM_SMALL_WORK) {
        small_product(g);
    } else {
        alone_product(g);
    }
}

static void serial_product(const Product *g) {
    if (g->M <= 0 || g->N <= 0) return;
    if (g->K <= 0 || g->alpha == 0.0f) {
        scale_c(g->M, g->N, g->beta, g->C, (int)g->ldc);
        epilogue_tile(g, 0, 0, g->M, g->N);
        return;
    }
    if (!k_halves(g)) {
        blocks_product(g);
        return;
    }
    Product half[2];
    halves_make(g, floats(&thread_bufs()->half_c, (size_t)g->M * g->N), half);
    blocks_product(&half[0]);
    blocks_product(&half[1]);
    halves_add(g, half[1].C, 0, g->M);
}

/* Part `part` of `parts` of the product, by near-equal numbers of MR row tiles or NR column
 * panels, computed by this thread alone. */
static void product_part_alone(const Product *g, bool by_rows, int part, int parts) {
    const Ukernel *uk = g->uk;
    const int unit = by_rows ? uk->MR : uk->NR, n = by_rows ? g->M : g->N, units = div_up(n, unit);
    const int i0 = min_i(n, units * part / parts * unit);
    const int i1 = min_i(n, units * (part + 1) / parts * unit);
    if (i1 <= i0) return;
    Product p = *g;
    if (by_rows) {
        p = rows_of(g, i0, i1);
    } else {
        p.N = i1 - i0, p.B = b_at(g, 0, i0), p.C = g->C + i0, p.packed_j0 = g->packed_j0 + i0;
        p.ep_j = g->ep_j + i0;
    }
    alone_product(&p);
}

/* op(B) (K, N), whole, into out in uk's B panel layout: K block at pc, (padded N / NR, kc, NR),
 * at pc * padded N; the K blocks are the products' own, so each product reads its B blocks
 * there. By the team's threads, or by the calling thread inside a parallel region. */
static void pack_b_all(const Ukernel *uk, bool tb, int K, int N, const float *B, int ldb,
                       float *out) {
    const int NR = uk->NR, padded_N = round_up_i(N, NR), panels = padded_N / NR;
    Product g = product_make(uk, false, tb, 0, N, K, 1.0f, NULL, 0, B, ldb, 0.0f, NULL, 0);
    const int nkb = k_blocks(&g);
#pragma omp parallel for collapse(2) schedule(static)
    for (int kb = 0; kb < nkb; kb++)
        for (int q = 0; q < panels; q++) {
            int pc = k_start(&g, nkb, kb), kc = k_start(&g, nkb, kb + 1) - pc;
            uk->pack_b(uk, kc, min_i(NR, N - q * NR), b_at(&g, pc, q * NR), ldb, tb,
                       out + (size_t)pc * padded_N + (size_t)q * NR * kc);
        }
}

/* A tall C split by rows between threads that run alone, by shares of row tiles (shares.h):
 * thread t's share is the rows of part t (product_part_alone), cut into chunks that shrink
 * toward its end. It computes its own chunks front to back, then takes the other threads' from
 * their backs: each computes the rows that the elementwise loops around the product give it as
 * long as the cores run at the same speed, and a core that runs slower (a busy host's) gives its
 * last chunks to a faster one. Every chunk sums all of K for its rows in order, with B packed
 * whole (once per thread, or once for all): the results do not depend on which thread computes a
 * chunk. */
static void tall_rows_product(const Product *g, int nt) {
    const int MR = g->uk->MR;
    // Chunks of row tiles down to LEAST_CHUNK, so that packing their first A micro-panel, which
    // no kernel call overlaps, costs little (greedy decoding, a few tiles per thread: one-tile
    // chunks ran 8% slower than a whole share).
    enum { LEAST_CHUNK = 4 };
    ShareSpan spans[nt];
    shares_plan(spans, nt, div_up(g->M, MR), LEAST_CHUNK);
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num();  // of nt or fewer: others take an absent one's share
        Product p = *g;
        if (!g->B_packed) {
            float *whole = floats(&thread_bufs()->whole_b,
                                  (size_t)g->K * round_up_i(g->N, g->uk->NR));
            pack_b_all(g->uk, g->tb, g->K, g->N, g->B, (int)g->ldb, whole);
            p.B_packed = whole, p.padded_N = round_up_i(g->N, g->uk->NR), p.packed_j0 = 0;
        }
        for (int visit = 0, c0, c1; shares_next(spans, nt, t, &visit, &c0, &c1);) {
            const Product part = rows_of(&p, c0 * MR, min_i(g->M, c1 * MR));
            alone_product(&part);
        }
    }
}

static void parallel_product(const Product *g) {
    const Ukernel *uk = g->uk;
    const int M = g->M, N = g->N;
    int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
    if (nt == 1 || (double)M * N * g->K < GEMM_THREADED_WORK || g->alpha == 0.0f) {
        serial_product(g);
        return;
    }
    // A short C over a long K: each thread starts on one of the two K halves, then helps with the
    // other's rows when two chunks or more are left, so a core that runs slower (a busy host's)
    // leaves some of its half to a faster one. Two row chunks per K block and thread: fewer
    // starts of a chunk, whose first A micro-panel is packed before the kernel runs (four chunks
    // per thread ran 0.1-0.9% slower than the halves done alone, in the training step of
    // bench-small on 2 cores of a Zen 5 EPYC when they ran at the same speed; two, within 0.3%).
    if (k_halves(g)) {
        Product half[2];
        halves_make(g, floats(&team_half_c, (size_t)M * N), half);
        const int chunks = 2 * div_up(nt, 2);  // per K block of a half
        Work work[2] = {work_make(&half[0], chunks, &team_work[0]),
                        work_make(&half[1], chunks, &team_work[1])};
#pragma omp parallel num_threads(nt)
        {
            int t = omp_get_thread_num(), n = omp_get_num_threads(), h = 2 * t / n;
            packed_product(&half[h], &work[h]);
            // the other half: all of it in a team of one, else its chunks that are left
            if (n == 1 || chunks_unclaimed(&half[1 - h], &work[1 - h]) >= 2)
                packed_product(&half[1 - h], &work[1 - h]);
#pragma omp barrier
            halves_add(g, half[1].C, M * t / n, M * (t + 1) / n);
        }
        return;
    }
    // Short C over a few K blocks (weight gradients of small batches) is split between threads
    // that then run alone, where sharing would meet at every K block: by columns (each thread
    // packs all of A, a transpose in a weight gradient), or, with kernels where that measured
    // slower, by rows when B is no wider than A is tall (each packs all of B, a copy).
    // A C of too few row tiles to share is split by columns too.
    // A tall C whose B is packed once, or with so many rows per thread that packing all of B
    // costs each little, is split by rows: each thread computes the rows that the elementwise
    // loops around the product give it (in order, as OpenMP's static schedule splits them), so
    // the activations it reads and writes stay in its own cache. In the training step of
    // bench-small (2 threads, Zen 5 EPYC) that ran 2-4% faster than sharing each block, which
    // balances a slower core but moves rows between the cores' caches. A B small enough to pack
    // whole lets a thread done with its rows take the last chunks of the others'
    // (tall_rows_product): with the cores 10-50% apart, steps 7-10% faster.
    // Each row chunk streams all of B through the cache, though: a B packed once that is larger
    // than a core's L2 and at least 4 times wider than A is tall, whose column halves cost each
    // thread little more than packing all of A, is split by columns instead (the output layer's
    // 512 x 8000 x 256 forward products of bench-small, 2 threads of a Zen 5 EPYC: 41-49 ms a step
    // instead of 49-60, six alternating pairs of runs).
    bool wide_b = g->B_packed && (double)g->K * N > GEMM_WHOLE_B_FLOATS && N >= 4 * M;
    bool short_c = M <= GEMM_SHORT_C_ROWS && k_blocks(g) > 1 && div_up(N, uk->NR) >= 4 * nt;
    bool tall = div_up(M, uk->MR) >= 2 * nt && !short_c && !wide_b;
    if (tall && !g->B_packed && M < GEMM_ALONE_ROWS * nt) {
        Work w = work_make(g, 8 * nt, &team_work[0]);  // chunks small enough to balance
#pragma omp parallel num_threads(nt)
        packed_product(g, &w);
    } else if (tall && (g->B_packed || (double)g->K * N <= GEMM_WHOLE_B_FLOATS)) {
        tall_rows_product(g, nt);
    } else {
        bool by_rows = tall || (short_c && uk->short_c_rows && N <= M);
#pragma omp parallel num_threads(nt)
        product_part_alone(g, by_rows, omp_get_thread_num(), omp_get_num_threads());
    }
}

/* op(B) of p, whole, in uk's B panel layout (see pack_b_all). */
static void pack_b_whole(const Ukernel *uk, GemmPackedB *p) {
    float *out = gemm_packed_b_reserve(p, (size_t)p->K * round_up_i(p->N, uk->NR));
    pack_b_all(uk, p->tb, p->K, p->N, p->B, p->ldb, out);
}

static void packed_b_product(const Ukernel *uk, const GemmPackedB *p, int M, float alpha,
                             const float *A, int lda, float beta, float *C, int ldc,
                             const GemmEpilogue *ep) {
    Product g = product_make(uk, false, p->tb, M, p->N, p->K, alpha, A, lda, p->B, p->ldb, beta,
                             C, ldc);
    g.B_packed = p->packed, g.padded_N = round_up_i(p->N, uk->NR), g.ep = ep;
    parallel_product(&g);
}

/* The entry points of each micro-kernel. */
#define BLOCKED_VARIANT(tag, kernel, detail)                                                        \
    static void tag##_serial(bool ta, bool tb, int M, int N, int K, float alpha, const float *A,  \
                             int lda, const float *B, int ldb, float beta, float *C, int ldc) {   \
        Product g = product_make(&kernel, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);  \
        serial_product(&g);                                                                        \
    }                                                                                              \
    static void tag##_parallel_ep(bool ta, bool tb, int M, int N, int K, float alpha,            \
                                  const float *A, int lda, const float *B, int ldb, float beta,   \
                                  float *C, int ldc, const GemmEpilogue *ep) {                    \
        Product g = product_make(&kernel, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);  \
        g.ep = ep;                                                                                 \
        parallel_product(&g);                                                                      \
    }                                                                                              \
    static void tag##_parallel(bool ta, bool tb, int M, int N, int K, float alpha,               \
                               const float *A, int lda, const float *B, int ldb, float beta,      \
                               float *C, int ldc) {                                               \
        tag##_parallel_ep(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, NULL);             \
    }                                                                                              \
    static void tag##_pack_b(GemmPackedB *p) { pack_b_whole(&kernel, p); }                        \
    static void tag##_packed(const GemmPackedB *p, int M, float alpha, const float *A, int lda,   \
                             float beta, float *C, int ldc, const GemmEpilogue *ep) {             \
        packed_b_product(&kernel, p, M, alpha, A, lda, beta, C, ldc, ep);                         \
    }                                                                                              \
    static const GemmImpl tag = {"blocked",        detail,       tag##_parallel, tag##_serial,  \
                                 tag##_parallel_ep, tag##_pack_b, tag##_packed};

#if CPU_X86
BLOCKED_VARIANT(blocked_avx512, ukernel_avx512, "avx512 12x32 micro-kernel")
BLOCKED_VARIANT(blocked_avx2, ukernel_avx2, "avx2+fma 6x16 micro-kernel")
#endif
BLOCKED_VARIANT(blocked_portable, ukernel_portable, "portable C 4x16 micro-kernel")

const GemmImpl *gemm_blocked_variant(const char *ukernel) {
#if CPU_X86
    if (!strcmp(ukernel, "avx512")) return cpu_has_avx512() ? &blocked_avx512 : NULL;
    if (!strcmp(ukernel, "avx2")) return cpu_has_avx2_fma() ? &blocked_avx2 : NULL;
#endif
    if (!strcmp(ukernel, "portable")) return &blocked_portable;
    return NULL;
}

size_t gemm_packed_b_bytes(int K, int N) {
    const Ukernel *kernels[] = {
#if CPU_X86
        &ukernel_avx512, &ukernel_avx2,
#endif
        &ukernel_portable};
    size_t most = 0;
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++) {
        size_t bytes = (size_t)K * round_up_i(N, kernels[i]->NR) * sizeof(float);
        most = bytes > most ? bytes : most;
    }
    return most;
}

const GemmImpl *gemm_blocked_best(void) {
#if CPU_X86
    if (cpu_has_avx512()) return &blocked_avx512;
    if (cpu_has_avx2_fma()) return &blocked_avx2;
#endif
    return &blocked_portable;
}
