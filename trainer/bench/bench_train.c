/* bench_train.c: `nmt bench train`, the speed and memory of a training step (forward, backward,
 * AdamW) on synthetic batches of the config's token budget: every sentence `--len` tokens on
 * both sides (no padding), batch = round(batch_tokens / len) sentences, as the PyTorch anchor
 * (../shared/peers/torch_transformer_bench.py) does, so the two compare. Reports target
 * tokens/s and ms per step (medians over --steps after --warmup), the split by phase, the
 * step's matrix-product work (model/flops.h) as GFLOP/s and as a share of the FP32 FMA peak
 * measured on the same threads, the time in the products issued through the GEMM interface
 * against everything else, what the same products take alone afterwards (replayed on operands of
 * their own, each at its fastest of a few runs back to back), and the peak RSS of the process;
 * with --products, each kind of product apart (its layout and shape), in the step and alone.
 * Under `mpirun -np N` every rank runs the step on batches of its own and the gradients are
 * summed over the ranks as in training (trainer/grad_sync.h, overlapped with backward unless
 * train.dist_overlap is false): tokens/s are then the job's, and the time waiting for the sums is
 * reported; rank 0 prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "args.h"
#include "bench.h"
#include "bench_setup.h"
#include "check.h"
#include "config.h"
#include "cpu.h"
#include "dist.h"
#include "flops.h"
#include "fma_peak.h"
#include "grad_sync.h"
#include "model.h"
#include "optimizer.h"
#include "rng.h"
#include "rss.h"
#include "timer.h"

/* A product of the step as it was issued (shapes, layouts, whether its B was packed once),
 * listed in the first timed step, timed in every one, and replayed alone afterwards. */
typedef struct Issued {
    bool ta, tb, packed;
    int M, N, K, lda, ldb, ldc;
    float alpha, beta;
    double step_s;   // summed over the timed steps
    double alone_s;  // the fastest of the replay's runs
} Issued;

/* The step's matrix products (every one but the attention core's, which runs its own kernel) go
 * through this wrapper of the chosen backend, which sums their time and work: the share of the
 * step they take, and so what the step would take if nothing else cost anything. A B packed once
 * (gemm_pack_b) is packed by the inner backend and then marked as the wrapper's, so that its
 * products are timed as well; the inner backend that packed it computes them. */
static struct {
    const GemmImpl *inner;      // the backend of train.gemm
    const GemmImpl *packed_by;  // the backend that packs B for it (auto: its packed class's)
    double seconds, flop;       // summed over the products since the last reset
    bool listing, timing;       // append each product to `issued`; add its time to its entry
    Issued *issued;             // (n_issued) the step's products, in order
    int n_issued, cap_issued;
    int next;                   // the entry of the step's next product
} timed;
static const GemmImpl timed_gemm;

/* Whether two products have the same layout and shape. */
static bool same_kind(const Issued *a, const Issued *b) {
    return a->ta == b->ta && a->tb == b->tb && a->packed == b->packed && a->M == b->M &&
           a->N == b->N && a->K == b->K;
}

/* Every step issues the same products in the same order: the first timed step lists them, each
 * timed step adds each one's seconds to its entry. */
static void record(Issued p, double seconds) {
    if (timed.listing) {
        if (timed.n_issued == timed.cap_issued) {
            timed.cap_issued = timed.cap_issued ? 2 * timed.cap_issued : 256;
            timed.issued = xrealloc(timed.issued, sizeof(Issued) * timed.cap_issued);
        }
        timed.issued[timed.n_issued++] = p;
    }
    if (!timed.timing) return;
    CHECK(timed.next < timed.n_issued, "a step issued more products than the first timed step");
    Issued *e = &timed.issued[timed.next++];
    CHECK(same_kind(e, &p), "a step issued other products than the first timed step");
    e->step_s += seconds;
}

/* A product with its epilogue (fused into it, or after it): what the step spends on both. The
 * products replayed alone run without their epilogues. */
static void timed_sgemm_ep(bool ta, bool tb, int M, int N, int K, float alpha, const float *A,
                           int lda, const float *B, int ldb, float beta, float *C, int ldc,
                           const GemmEpilogue *ep) {
    double t0 = now_seconds();
    sgemm_ep(timed.inner, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ep);
    double t = now_seconds() - t0;
    timed.seconds += t, timed.flop += 2.0 * M * N * K;
    record((Issued){ta, tb, false, M, N, K, lda, ldb, ldc, alpha, beta, 0, 0}, t);
}

static void timed_sgemm(bool ta, bool tb, int M, int N, int K, float alpha, const float *A,
                        int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    timed_sgemm_ep(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, NULL);
}

static void timed_sgemm_serial(bool ta, bool tb, int M, int N, int K, float alpha,
                               const float *A, int lda, const float *B, int ldb, float beta,
                               float *C, int ldc) {
    // inside parallel loops, on every thread at once: counted in the phase that runs them
    timed.inner->sgemm_serial(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

static void timed_pack_b(GemmPackedB *p) {
    double t0 = now_seconds();
    gemm_pack_b(p, timed.inner, p->tb, p->K, p->N, p->B, p->ldb);
    timed.packed_by = p->by, p->by = &timed_gemm;
    timed.seconds += now_seconds() - t0;
}

static void timed_sgemm_packed(const GemmPackedB *p, int M, float alpha, const float *A,
                               int lda, float beta, float *C, int ldc, const GemmEpilogue *ep) {
    GemmPackedB q = *p;
    q.by = timed.packed_by;
    double t0 = now_seconds();
    sgemm_packed(&q, M, alpha, A, lda, beta, C, ldc, ep);
    double t = now_seconds() - t0;
    timed.seconds += t, timed.flop += 2.0 * M * p->N * p->K;
    record((Issued){false, p->tb, true, M, p->N, p->K, lda, p->ldb, ldc, alpha, beta, 0, 0}, t);
}

/* Floats a matrix of `rows` x `cols` (or the transpose when t) with leading dimension ld spans. */
static size_t span(bool t, int rows, int cols, int ld) {
    return t ? (size_t)(cols - 1) * ld + rows : (size_t)(rows - 1) * ld + cols;
}

enum { ALONE_RUNS = 3 };  // runs of each product back to back; the fastest counts

/* Seconds the listed products take alone: each run ALONE_RUNS times in a row on operands of
 * its own (so the later runs find them in cache, as far as they fit), the fastest run counted
 * (and kept in its entry).
 * What the step's products would take if nothing else in the step evicted their operands: the
 * most the products can gain from the rest of the step. */
static double issued_alone_seconds(double *flop) {
    size_t na = 1, nb = 1, nc = 1;
    for (int i = 0; i < timed.n_issued; i++) {
        const Issued *p = &timed.issued[i];
        size_t a = span(p->ta, p->M, p->K, p->lda), b = span(p->tb, p->K, p->N, p->ldb);
        size_t c = span(false, p->M, p->N, p->ldc);
        na = a > na ? a : na, nb = b > nb ? b : nb, nc = c > nc ? c : nc;
    }
    // 64-byte aligned, as the step's arena buffers are
    float *A = aligned_alloc_zeroed(sizeof(float) * na);  // (na)
    float *B = aligned_alloc_zeroed(sizeof(float) * nb);  // (nb)
    float *C = aligned_alloc_zeroed(sizeof(float) * nc);  // (nc)
    for (size_t i = 0; i < na; i++) A[i] = rng_uniform(1, i) - 0.5f;
    for (size_t i = 0; i < nb; i++) B[i] = rng_uniform(2, i) - 0.5f;
    GemmPackedB packed = {0};
    double total = 0;
    *flop = 0;
    for (int i = 0; i < timed.n_issued; i++) {
        Issued *p = &timed.issued[i];
        *flop += 2.0 * p->M * p->N * p->K;
        if (p->packed) gemm_pack_b(&packed, timed.inner, p->tb, p->K, p->N, B, p->ldb);
        double best = 0;
        for (int r = 0; r < ALONE_RUNS; r++) {
            double t0 = now_seconds();
            if (p->packed)
                sgemm_packed(&packed, p->M, p->alpha, A, p->lda, p->beta, C, p->ldc, NULL);
            else
                timed.inner->sgemm(p->ta, p->tb, p->M, p->N, p->K, p->alpha, A, p->lda, B,
                                   p->ldb, p->beta, C, p->ldc);
            double t = now_seconds() - t0;
            best = r == 0 || t < best ? t : best;
        }
        p->alone_s = best;
        total += best;
    }
    gemm_packed_b_free(&packed);
    aligned_free(A), aligned_free(B), aligned_free(C);
    return total;
}

static const GemmImpl timed_gemm = {"timed",        "",           timed_sgemm, timed_sgemm_serial,
                                    timed_sgemm_ep, timed_pack_b, timed_sgemm_packed};

/* The step's products of one layout and shape: how many a step issues, and their seconds a step
 * (the mean over the timed steps) and alone (the replay's). */
typedef struct ProductKind {
    const Issued *shape;
    int per_step;
    double step_s, alone_s;
} ProductKind;

static int by_step_time(const void *a, const void *b) {
    double x = ((const ProductKind *)a)->step_s, y = ((const ProductKind *)b)->step_s;
    return (x < y) - (x > y);
}

/* The listed products grouped into kinds, the most time a step first; returns their count. */
static int product_kinds(ProductKind *kinds, int steps) {
    int n = 0;
    for (int i = 0; i < timed.n_issued; i++) {
        const Issued *p = &timed.issued[i];
        int k = 0;
        while (k < n && !same_kind(kinds[k].shape, p)) k++;
        if (k == n) kinds[n++] = (ProductKind){p, 0, 0, 0};
        kinds[k].per_step++, kinds[k].step_s += p->step_s / steps, kinds[k].alone_s += p->alone_s;
    }
    qsort(kinds, n, sizeof *kinds, by_step_time);
    return n;
}

/* --products: each kind's time and rate in the step and alone, against the FMA peak. */
static void print_product_kinds(int steps, double peak_gflops, bool json) {
    ProductKind *kinds = xmalloc(sizeof(ProductKind) * (timed.n_issued + 1));  // (n_issued)
    const int n = product_kinds(kinds, steps);
    if (!json)
        printf("  the products by layout and shape, the most time first (in the step: the mean of "
               "%d steps; alone: each the fastest of %d runs):\n"
               "    op  B packed once      m      n      k  per step   ms/step  GFLOP/s  %%peak"
               "   ms alone  GFLOP/s  %%peak\n",
               steps, ALONE_RUNS);
    for (int k = 0; k < n; k++) {
        const Issued *p = kinds[k].shape;
        const double gflop = 2e-9 * p->M * p->N * p->K * kinds[k].per_step;
        const double step_gflops = gflop / kinds[k].step_s, alone_gflops = gflop / kinds[k].alone_s;
        const char op[3] = {p->ta ? 'T' : 'N', p->tb ? 'T' : 'N', 0};
        if (json)
            printf("{\"bench\":\"train_products\",\"op\":\"%s\",\"b_packed_once\":%s,\"m\":%d,"
                   "\"n\":%d,\"k\":%d,\"per_step\":%d,\"gflop_per_step\":%.6f,"
                   "\"ms_per_step\":%.4f,\"gflops\":%.2f,\"ms_alone\":%.4f,"
                   "\"gflops_alone\":%.2f}\n",
                   op, p->packed ? "true" : "false", p->M, p->N, p->K, kinds[k].per_step, gflop,
                   kinds[k].step_s * 1e3, step_gflops, kinds[k].alone_s * 1e3, alone_gflops);
        else
            printf("    %s  %-13s %6d %6d %6d %9d %9.2f %8.1f %5.1f%% %10.2f %8.1f %5.1f%%\n", op,
                   p->packed ? "yes" : "no", p->M, p->N, p->K, kinds[k].per_step,
                   kinds[k].step_s * 1e3, step_gflops, 100.0 * step_gflops / peak_gflops,
                   kinds[k].alone_s * 1e3, alone_gflops, 100.0 * alone_gflops / peak_gflops);
    }
    free(kinds);
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt bench train -c CONFIG [-c MORE] [--set key=value] [--len 25]\n"
            "                       [--warmup 3] [--steps 10] [--products] [--json]\n\n"
            "Times training steps (forward, backward, AdamW) on synthetic batches of the\n"
            "config's train.batch_tokens with sentences of --len tokens on both sides, and\n"
            "the step's matrix-product work as GFLOP/s and %% of the measured FP32 FMA peak,\n"
            "the time in the matrix products (with the bias and activation fused into\n"
            "them) against everything else, and what the same products take alone (without\n"
            "them), each run a few times in a row (the fastest run counts).\n"
            "  --products  also each kind of product (layout and shape) apart: per step,\n"
            "              ms and GFLOP/s in the step and alone, and shares of the peak\n");
}

int bench_train(int argc, char **argv) {
    const char *cmd = "bench train";
    int len = 25, warmup = 3, steps = 10;
    bool json = false, products = false;
    const ArgsOption opts[] = {ARGS_OPT_INT(NULL, "--len", &len, 2, 4096),
                               ARGS_OPT_INT(NULL, "--warmup", &warmup, 0, 1000),
                               ARGS_OPT_INT(NULL, "--steps", &steps, 1, 1000),
                               ARGS_OPT_FLAG(NULL, "--products", &products),
                               ARGS_OPT_FLAG(NULL, "--json", &json)};
    Config cfg;
    Model m;
    const GemmImpl *gemm;
    if (!bench_setup(cmd, argc, argv, opts, ARGS_COUNT(opts), usage, &cfg, &m, &gemm)) return 0;
    const int nranks = dist_init(cfg.train.dist_timeout), rank = dist_rank();
    GradSync sync;
    grad_sync_init(&sync, &m, cfg.train.dist_overlap);
    const int V = cfg.model.vocab_size, B = (cfg.train.batch_tokens + len / 2) / len;
    model_plan(&m, B * len, len);

    const ModelFlops flops = model_step_flops(&m, B, len, len, true);
    const FmaPeak peak = fma_peak_measure(m.nthreads);

    enum { NBATCH = 4 };  // a few distinct batches, cycled
    int32_t *tok = xmalloc(sizeof(int32_t) * NBATCH * 3 * B * len);
    int *lens = xmalloc(sizeof(int) * B);
    Rng r = rng_init((uint64_t)cfg.train.seed, 99 + (uint64_t)rank);  // each rank its own batches
    for (long i = 0; i < (long)NBATCH * 3 * B * len; i++) tok[i] = 4 + (int32_t)rng_below(&r, V - 4);
    for (int b = 0; b < B; b++) lens[b] = len;
    AdamHyper h = {cfg.train.beta1, cfg.train.beta2, cfg.train.eps, cfg.train.weight_decay};
    timed.inner = gemm;
    Ctx c = {.gemm = &timed_gemm, .seed = (uint64_t)cfg.train.seed, .train = true};
    double *step_s = xcalloc(steps, sizeof(double)), phase[PHASE_COUNT] = {0}, opt_s = 0;
    double *wait_s = xcalloc(steps, sizeof(double));  // (steps) waiting for the gradient sums
    double *products_s = xcalloc(steps, sizeof(double));  // (steps) in the matrix products
    double *rest_s = xcalloc(steps, sizeof(double));      // (steps) everything else
    double products_flop = 0;                              // per step
    for (int it = 0; it < warmup + steps; it++) {
        const int32_t *t = tok + (size_t)(it % NBATCH) * 3 * B * len;
        ModelBatch batch = {B, len, len, t, t + B * len, t + 2 * B * len, lens, lens};
        if (it == warmup) memset(m.seconds, 0, sizeof m.seconds);
        timed.seconds = timed.flop = 0;
        timed.listing = it == warmup, timed.timing = it >= warmup, timed.next = 0;
        double t0 = now_seconds();
        params_zero_grad(&m.params);
        LossStats st = {0};
        c.step = (uint64_t)it;
        grad_sync_arm(&sync);
        model_step(&m, &c, &batch, &st, true, (float)cfg.train.label_smoothing);
        grad_sync_finish(&sync);
        double ntok_all = (double)st.ntok;
        dist_allreduce(&ntok_all, 1, DIST_SUM, "the step's tokens");
        st.ntok = (long)ntok_all;
        double t1 = now_seconds();
        grads_scale(&m.params, 1.0f / (float)st.ntok);
        grads_clip(&m.params, cfg.train.clip_norm);
        adam_step(&m.params, &h, 1e-4, it + 1);
        double t2 = now_seconds();
        if (it >= warmup) {
            const int i = it - warmup;
            step_s[i] = t2 - t0, opt_s += t2 - t1, wait_s[i] = sync.wait_s;
            products_s[i] = timed.seconds, rest_s[i] = step_s[i] - timed.seconds;
            products_flop = timed.flop;
        }
        sync.wait_s = 0;
    }
    for (int p = 0; p < PHASE_COUNT; p++) phase[p] = m.seconds[p] / steps * 1e3;
    opt_s = opt_s / steps * 1e3;
    double med = bench_median(step_s, steps), wait_med = bench_median(wait_s, steps);
    const double products_med = bench_median(products_s, steps);
    const double rest_med = bench_median(rest_s, steps);
    const double products_gflops = products_flop / 1e9 / products_med;
    long ntok = (long)B * len * nranks;
    double params_m = params_count(&m.params) / 1e6, rss = rss_peak_mb();
    timed.listing = timed.timing = false;
    double alone_flop;
    const double alone_ms = issued_alone_seconds(&alone_flop) * 1e3;  // after the peak RSS is read
    const ModelMemory mem = model_memory(&m);
    const double MB = 1 << 20;
    // the job's work and peak: every rank's
    const double gflop = nranks * model_flops_total(flops) / 1e9, gflops = gflop / med;
    const double peak_gflops = nranks * peak.gflops;
    const double phase_gflop[PHASE_COUNT] = {[PHASE_ATTENTION] = flops.attention / 1e9,
                                             [PHASE_ATTN_CORE] = flops.attention_core / 1e9,
                                             [PHASE_FFN] = flops.ffn / 1e9,
                                             [PHASE_LOSS] = flops.loss / 1e9};
    char ranks_text[64] = "";  // the peak RSS is rank 0's
    if (nranks > 1) snprintf(ranks_text, sizeof ranks_text, " x %d ranks", nranks);
    if (rank == 0 && json) {
        printf(
            "{\"bench\":\"train\",\"attention\":\"%s\",\"dk\":%d,\"d_model\":%d,\"params_m\":%.3f,"
            "\"batch\":\"%dx%d\",\"tgt_tokens\":%ld,\"threads\":%d,\"gemm\":\"%s\","
            "\"tokens_per_s\":%.1f,\"ms_per_step\":%.2f,\"ms_min\":%.2f",
            attention_mode_name(cfg.model.attention), config_model_dk(&cfg.model),
            cfg.model.d_model, params_m, B, len, ntok, m.nthreads, gemm->name, ntok / med,
            med * 1e3, step_s[0] * 1e3);
        for (int p = 0; p < PHASE_COUNT; p++) printf(",\"ms_%s\":%.2f", model_phase_names[p], phase[p]);
        printf(",\"ms_optimizer\":%.2f,\"gflop_per_step\":%.4f,\"gflops\":%.2f,\"pct_peak\":%.1f,"
               "\"peak_gflops\":%.2f,\"peak_isa\":\"%s\",\"arch\":\"%s\","
               "\"thread_spread_pct\":%.1f",
               opt_s, gflop, gflops, 100.0 * gflops / peak_gflops, peak_gflops, peak.isa,
               cpu_build_arch(), 100.0 * peak.spread);
        for (int p = 0; p < PHASE_COUNT; p++)
            if (phase_gflop[p] > 0)
                printf(",\"gflops_%s\":%.2f", model_phase_names[p], phase_gflop[p] / (phase[p] / 1e3));
        printf(",\"gflop_products\":%.4f,\"ms_products\":%.2f,\"gflops_products\":%.2f,"
               "\"gflop_products_alone\":%.4f,\"ms_products_alone\":%.2f,\"ms_rest\":%.2f",
               products_flop / 1e9, products_med * 1e3, products_gflops, alone_flop / 1e9,
               alone_ms, rest_med * 1e3);
        if (nranks > 1)
            printf(",\"ranks\":%d,\"overlap\":%s,\"ms_sync_wait\":%.2f", nranks,
                   cfg.train.dist_overlap ? "true" : "false", wait_med * 1e3);
        printf(",\"mb_params\":%.1f,\"mb_grads\":%.1f,\"mb_adam\":%.1f,\"mb_acts\":%.1f,"
               "\"mb_work\":%.1f,\"peak_rss_mb\":%.1f}\n",
               mem.params / MB, mem.grads / MB, mem.adam / MB, mem.acts / MB, mem.work / MB, rss);
    } else if (rank == 0) {
        printf(
            "train step: %s attention (dk %d), %.2fM parameters, batch %dx%d%s = %ld target tokens, "
            "%d threads, gemm %s\n",
            attention_mode_name(cfg.model.attention), config_model_dk(&cfg.model), params_m, B, len,
            ranks_text, ntok, m.nthreads, gemm->name);
        if (nranks > 1)
            printf("  gradient sums over the ranks %s backward: %.1f ms/step waiting (median)\n",
                   cfg.train.dist_overlap ? "overlapped with" : "after", wait_med * 1e3);
        printf("  %.0f target tokens/s   %.1f ms/step (median of %d; best %.1f)   peak RSS %.0f MB\n",
               ntok / med, med * 1e3, steps, step_s[0] * 1e3, rss);
        char mem_text[256];
        model_memory_text(&mem, mem_text, sizeof mem_text);
        printf("  memory: %s; the rest of the peak RSS %.0f MB\n", mem_text,
               rss - (mem.params + mem.grads + mem.adam + mem.acts + mem.work) / MB);
        printf("  ms per step:");
        for (int p = 0; p < PHASE_COUNT; p++) printf(" %s %.1f", model_phase_names[p], phase[p]);
        printf(" optimizer %.1f\n", opt_s);
        printf("  %.2f GFLOP/step (matrix products) = %.1f GFLOP/s = %.1f%% of the FP32 FMA peak "
               "(%.1f GFLOP/s, %s loop, build %s",
               gflop, gflops, 100.0 * gflops / peak_gflops, peak_gflops, peak.isa, cpu_build_arch());
        if (m.nthreads > 1) printf("; threads %.0f%% apart", 100.0 * peak.spread);
        printf(")\n");
        printf("  GFLOP/s by phase:");
        for (int p = 0; p < PHASE_COUNT; p++)
            if (phase_gflop[p] > 0)
                printf(" %s %.1f", model_phase_names[p], phase_gflop[p] / (phase[p] / 1e3));
        printf("\n  matrix products but the attention core's: %.1f ms/step = %.1f GFLOP/s = %.1f%% "
               "of the peak; everything else %.1f ms/step\n",
               products_med * 1e3, products_gflops, 100.0 * products_gflops / peak.gflops,
               rest_med * 1e3);
        const double alone_gflops = alone_flop / 1e6 / alone_ms;
        printf("  the same products alone, each run %d times in a row (the fastest): %.1f ms = "
               "%.1f GFLOP/s = %.1f%% of the peak\n",
               ALONE_RUNS, alone_ms, alone_gflops, 100.0 * alone_gflops / peak.gflops);
    }
    if (rank == 0 && products) print_product_kinds(steps, peak.gflops, json);
    free(tok), free(lens), free(step_s), free(wait_s), free(products_s), free(rest_s);
    free(timed.issued);
    dist_finalize();
    model_free(&m);
    config_free(&cfg);
    return 0;
}
