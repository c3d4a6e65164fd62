/* bench_gemm.c: `nmt bench gemm`, GFLOP/s of each GEMM backend on the products of transformer
 * training, side by side in one run.
 *   large shapes (4096 tokens; d_model 512/ffn 2048 and 256/1024): projections, FFN up and down in
 *   NN/NT/TN, and the weight gradients (TN), through the threaded `sgemm`;
 *   attention shapes: a batch of 1312 independent (sentence, head) products, OpenMP over the
 *   batch with `sgemm_serial` inside, as attention calls them.
 * The header says what "auto" runs per shape class at each thread count; `auto` is a backend
 * name like the others, to compare it side by side.
 * Backends run interleaved within each repetition, so machine noise hits all of them alike; the
 * reported figure is the median over repetitions, and the ratio first/second backend is taken
 * from those medians. The FP32 FMA peak measured at each thread count puts the first backend's
 * figures in proportion, and summary lines give the median ratio per shape group and thread
 * count. The attention batches stream their operands (megabytes per pass) and can be
 * memory-bound: their rows also give a roofline bound, the operand bytes of a pass at the read
 * bandwidth measured on those same buffers, capped by the FMA peak. With --resident N they cycle
 * over the operands of N products instead, which stay in cache: the kernels without the memory
 * traffic. With --copies the large shapes at more than one thread also run as that many
 * independent copies at once, one per thread (sgemm_serial, operands of their own): what the
 * threads reach together without sharing a product, the ceiling of the first backend's split of
 * one product (shared caches and memory, and the host's scheduling of the threads, included). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "args.h"
#include "bench.h"
#include "bench_setup.h"
#include "fma_peak.h"
#include "gemm.h"
#include "timer.h"

typedef struct {
    const char *name;
    int m, n, k;
    bool ta, tb;
    int batch;  // > 1: independent products, OpenMP over the batch, sgemm_serial inside
    const char *group;  // "d512", "d256", "attn"
} Shape;

enum { MAX_SHAPES = 64, MAX_REPS = 101, MAX_BACKENDS = 4, MAX_THREADS = 8, ATTN_BATCH = 1312 };

static int add_model_shapes(Shape *s, int n, int d, int ffn, const char *tag) {
    static char names[MAX_SHAPES][32];
    const struct { const char *what; int m, n, k; } base[] = {
        {"proj", 4096, d, d}, {"ffn1", 4096, ffn, d}, {"ffn2", 4096, d, ffn}};
    const bool tr[3][2] = {{0, 0}, {0, 1}, {1, 0}};  // NN, NT, TN
    for (int b = 0; b < 3; b++)
        for (int t = 0; t < 3; t++) {
            snprintf(names[n], sizeof names[n], "%s_%s", base[b].what, tag);
            s[n] = (Shape){names[n], base[b].m, base[b].n, base[b].k, tr[t][0], tr[t][1], 1, tag};
            n++;
        }
    const struct { const char *what; int m, n; } wg[] = {{"wgrad_proj", d, d}, {"wgrad_ffn", d, ffn}};
    for (int b = 0; b < 2; b++) {
        snprintf(names[n], sizeof names[n], "%s_%s", wg[b].what, tag);
        s[n] = (Shape){names[n], wg[b].m, wg[b].n, 4096, true, false, 1, tag};
        n++;
    }
    return n;
}

static int add_attention_shapes(Shape *s, int n) {
    s[n++] = (Shape){"attn_qk_64", 25, 25, 64, false, true, ATTN_BATCH, "attn"};
    s[n++] = (Shape){"attn_pv_64", 25, 64, 25, false, false, ATTN_BATCH, "attn"};
    s[n++] = (Shape){"attn_qk_128", 25, 25, 128, false, true, ATTN_BATCH, "attn"};
    s[n++] = (Shape){"attn_qk_256", 25, 25, 256, false, true, ATTN_BATCH, "attn"};
    return n;
}

typedef struct {
    float *A, *B, *C;  // one operand set per distinct product, back to back
    size_t sa, sb, sc; // floats per product
    int distinct;      // operand sets
    int resident;      // > 0: each thread cycles over its own `resident` sets; 0: one per element
} Operands;

/* Operands for the shape's batch on `threads` threads: one set per element, or with resident > 0
 * that many per thread, used in turn (threads never share a C). */
static Operands operands_make(const Shape *s, int resident, int threads) {
    Operands o;
    o.sa = (size_t)s->m * s->k, o.sb = (size_t)s->k * s->n, o.sc = (size_t)s->m * s->n;
    o.resident = s->batch > 1 && resident > 0 && (long)resident * threads < s->batch ? resident : 0;
    o.distinct = o.resident ? o.resident * threads : s->batch;
    o.A = aligned_alloc_zeroed(o.sa * o.distinct * sizeof(float));
    o.B = aligned_alloc_zeroed(o.sb * o.distinct * sizeof(float));
    o.C = aligned_alloc_zeroed(o.sc * o.distinct * sizeof(float));
    for (size_t i = 0; i < o.sa * o.distinct; i++) o.A[i] = (float)((i * 7919) % 2001) / 1000.0f - 1;
    for (size_t i = 0; i < o.sb * o.distinct; i++) o.B[i] = (float)((i * 104729) % 1999) / 999.0f - 1;
    return o;
}

static void operands_free(Operands *o) {
    aligned_free(o->A), aligned_free(o->B), aligned_free(o->C);
}

/* GB/s of reading the operands of all batch elements (A, B and C, as one pass of the products
 * touches them) on the current thread count: the median of `reps` passes after a warm one. */
static double read_bandwidth(const Operands *o, int reps) {
    const uint64_t *buf[3] = {(const uint64_t *)o->A, (const uint64_t *)o->B, (const uint64_t *)o->C};
    long words[3] = {(long)(o->sa * o->distinct / 2), (long)(o->sb * o->distinct / 2),
                     (long)(o->sc * o->distinct / 2)};  // (sa*distinct/2,) ... uint64 words
    double times[MAX_REPS];
    uint64_t sink = 0;
    for (int r = -1; r < reps; r++) {
        double t0 = now_seconds();
        for (int q = 0; q < 3; q++) {
            uint64_t x = 0;
#pragma omp parallel for schedule(static) reduction(^ : x)
            for (long i = 0; i < words[q]; i++) x ^= buf[q][i];
            sink ^= x;
        }
        if (r >= 0) times[r] = now_seconds() - t0;
    }
    volatile uint64_t keep = sink;  // the sums must be computed
    (void)keep;
    return 2.0 * 4 * (words[0] + words[1] + words[2]) / bench_median(times, reps) / 1e9;
}

static double run_once(const GemmImpl *g, const Shape *s, const Operands *o) {
    int lda = s->ta ? s->m : s->k, ldb = s->tb ? s->k : s->n;
    double t0 = now_seconds();
    if (s->batch == 1) {
        g->sgemm(s->ta, s->tb, s->m, s->n, s->k, 1.0f, o->A, lda, o->B, ldb, 0.0f, o->C, s->n);
    } else {
#pragma omp parallel for schedule(static)
        for (int b = 0; b < s->batch; b++) {
            size_t set = o->resident ? (size_t)omp_get_thread_num() * o->resident + b % o->resident
                                     : (size_t)b;
            g->sgemm_serial(s->ta, s->tb, s->m, s->n, s->k, 1.0f, o->A + set * o->sa, lda,
                            o->B + set * o->sb, ldb, 0.0f, o->C + set * o->sc, s->n);
        }
    }
    return now_seconds() - t0;
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt bench gemm [--shapes d512,d256,attn] [--backends blocked,openblas]\n"
            "                      [--threads 1,2] [--reps N] [--resident N] [--copies]\n"
            "                      [--json]\n\n"
            "Median GFLOP/s per shape, backend and thread count, with the ratio of the first\n"
            "backend to the second measured in the same run (backends interleaved per repetition),\n"
            "the first backend's share of the measured FP32 FMA peak at that thread count, and the\n"
            "median ratio per shape group (large: d512 and d256; attention) and thread count.\n"
            "The header says which backend `auto` runs per shape class at each thread count.\n"
            "Attention rows also give a roofline bound: the operand bytes of a pass at the read\n"
            "bandwidth measured on the same buffers, capped by the FMA peak (GFLOP/s).\n"
            "  --shapes    groups (d512, d256, attn) or shape names (e.g. ffn1_d512: its NN, NT\n"
            "              and TN rows) to run (default d512,d256,attn)\n"
            "  --backends  comma-separated GEMM backends: blocked, openblas, auto, ref,\n"
            "              blocked-<isa> (default blocked,openblas)\n"
            "  --threads   comma-separated thread counts (default 1 and all cores)\n"
            "  --reps      repetitions per measurement, median reported (default 7)\n"
            "  --resident  attention batches cycle over the operands of N products, which stay in\n"
            "              cache: the kernels without memory traffic (no bound; default 0: every\n"
            "              product its own operands)\n"
            "  --copies    large shapes at more than one thread also run as one independent copy\n"
            "              per thread at once, each computed by its thread alone: the GFLOP/s\n"
            "              the threads reach without sharing a product, and the first backend's\n"
            "              share of it (its split's cost), per shape and as a median\n"
            "  --json      one JSON object per line instead of the table\n");
}

static int split_list(char *text, char **items, int max) {
    int n = 0;
    for (char *tok = strtok(text, ","); tok && n < max; tok = strtok(NULL, ",")) items[n++] = tok;
    return n;
}

/* The shapes a --shapes list names (groups or shape names), in the order of the full table. */
static int select_shapes(char *list, Shape *out) {
    Shape all[MAX_SHAPES];
    int nall = add_model_shapes(all, 0, 512, 2048, "d512");
    nall = add_model_shapes(all, nall, 256, 1024, "d256");
    nall = add_attention_shapes(all, nall);
    char *want[MAX_SHAPES];
    int nwant = split_list(list, want, MAX_SHAPES), n = 0;
    for (int w = 0; w < nwant; w++) {
        bool known = false;
        for (int i = 0; i < nall; i++)
            known |= !strcmp(want[w], all[i].group) || !strcmp(want[w], all[i].name);
        if (!known)
            args_usage_error("bench gemm",
                             "unknown shape group or shape '%s' (groups: d512, d256, attn; "
                             "shapes such as ffn1_d512, attn_qk_64)",
                             want[w]);
    }
    for (int i = 0; i < nall; i++)
        for (int w = 0; w < nwant; w++)
            if (!strcmp(want[w], all[i].group) || !strcmp(want[w], all[i].name)) {
                out[n++] = all[i];
                break;
            }
    return n;
}

/* The median of `n` ratios (ratio[i] < 0: not measured). */
static double median_ratio(const double *ratio, int n, int *count) {
    double v[MAX_SHAPES];
    *count = 0;
    for (int i = 0; i < n; i++)
        if (ratio[i] >= 0) v[(*count)++] = ratio[i];
    return *count ? bench_median(v, *count) : 0.0;
}

int bench_gemm(int argc, char **argv) {
    char shapes_arg[512] = "d512,d256,attn", backends_arg[128] = "blocked,openblas",
         threads_arg[64] = "";
    int reps = 7, resident = 0;
    bool json = false, copies = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (args_wants_help(a)) {
            usage(stdout);
            return 0;
        } else if (args_is(a, NULL, "--shapes"))
            snprintf(shapes_arg, sizeof shapes_arg, "%s", args_value("bench gemm", argc, argv, &i));
        else if (args_is(a, NULL, "--backends"))
            snprintf(backends_arg, sizeof backends_arg, "%s", args_value("bench gemm", argc, argv, &i));
        else if (args_is(a, NULL, "--threads"))
            snprintf(threads_arg, sizeof threads_arg, "%s", args_value("bench gemm", argc, argv, &i));
        else if (args_is(a, NULL, "--reps"))
            reps = args_int("bench gemm", a, args_value("bench gemm", argc, argv, &i), 1, MAX_REPS);
        else if (args_is(a, NULL, "--resident"))
            resident = args_int("bench gemm", a, args_value("bench gemm", argc, argv, &i), 0, 1 << 20);
        else if (args_is(a, NULL, "--copies"))
            copies = true;
        else if (args_is(a, NULL, "--json"))
            json = true;
        else
            args_usage_error("bench gemm", "unknown option '%s'", a);
    }
    int all = omp_get_max_threads();
    if (!*threads_arg) snprintf(threads_arg, sizeof threads_arg, all > 1 ? "1,%d" : "1", all);

    Shape shapes[MAX_SHAPES];
    int nshapes = select_shapes(shapes_arg, shapes);
    char *tnames[MAX_THREADS];
    int nthreads = split_list(threads_arg, tnames, MAX_THREADS), threads[MAX_THREADS];
    for (int t = 0; t < nthreads; t++)
        threads[t] = args_int("bench gemm", "--threads", tnames[t], 1, 1024);
    char *bnames[MAX_BACKENDS];
    int nb = split_list(backends_arg, bnames, MAX_BACKENDS);
    if (!nshapes || !nb || !nthreads)
        args_usage_error("bench gemm", "--shapes, --backends and --threads need at least one item");
    gemm_set_threads(threads[0]);  // "auto" decides at the first thread count first
    const GemmImpl *backends[MAX_BACKENDS];
    for (int b = 0; b < nb; b++) {
        backends[b] = gemm_lookup(bnames[b]);
        if (!backends[b]) args_usage_error("bench gemm", "unknown GEMM backend '%s'", bnames[b]);
    }
    GemmAutoChoice autoc[MAX_THREADS];  // what "auto" runs at each thread count
    for (int t = 0; t < nthreads; t++) {
        gemm_set_threads(threads[t]);
        autoc[t] = *gemm_auto_choice();
    }
    FmaPeak peak[MAX_THREADS];
    for (int t = 0; t < nthreads; t++) peak[t] = fma_peak_measure(threads[t]);
    if (json) {
        for (int t = 0; t < nthreads; t++)
            printf("{\"bench\":\"gemm\",\"shape\":\"peak\",\"threads\":%d,\"isa\":\"%s\","
                   "\"gflops\":%.2f,\"thread_spread_pct\":%.1f}\n",
                   threads[t], peak[t].isa, peak[t].gflops, 100.0 * peak[t].spread);
        for (int t = 0; t < nthreads; t++) {
            printf("{\"bench\":\"gemm\",\"auto\":\"%s\",\"threads\":%d", autoc[t].source,
                   threads[t]);
            for (int k = 0; k < GEMM_CLASSES; k++) {
                printf(",\"%s\":\"%s\"", gemm_class_names[k], autoc[t].backend[k]->name);
                if (autoc[t].ms[k][0] > 0)
                    printf(",\"%s_ms_blocked\":%.3f,\"%s_ms_openblas\":%.3f", gemm_class_names[k],
                           autoc[t].ms[k][0], gemm_class_names[k], autoc[t].ms[k][1]);
            }
            printf("}\n");
        }
        for (int b = 0; b < nb; b++)
            printf("{\"bench\":\"gemm\",\"backend\":\"%s\",\"detail\":\"%s\"}\n", bnames[b],
                   strcmp(backends[b]->name, "auto") ? backends[b]->detail : "per shape class");
    } else {
        printf("# FP32 FMA peak (%s loop):", peak[0].isa);
        for (int t = 0; t < nthreads; t++) {
            printf("%s %.1f GFLOP/s at %d thread%s", t ? "," : "", peak[t].gflops, threads[t],
                   threads[t] > 1 ? "s" : "");
            if (threads[t] > 1) printf(" (%.0f%% apart)", 100.0 * peak[t].spread);
        }
        for (int t = 0; t < nthreads; t++) {
            printf("\n# auto:");
            for (int k = 0; k < GEMM_CLASSES; k++)
                printf("%s %s: %s", k ? "," : "", gemm_class_names[k], autoc[t].backend[k]->name);
            printf(" (%s)", autoc[t].note);
        }
        printf("\n# backends:");
        for (int b = 0; b < nb; b++)
            printf("%s %s (%s)", b ? "," : "", bnames[b],
                   strcmp(backends[b]->name, "auto") ? backends[b]->detail
                                                     : "per shape class, as above");
        printf("\n# GFLOP/s, median of %d repetitions; %%peak: %s against the FMA peak at the "
               "row's thread count\n",
               reps, bnames[0]);
    }
    for (int b = 0; b < nb; b++) {
        const char *warning = gemm_warning(backends[b]);
        if (warning) fprintf(json ? stderr : stdout, "# warning: %s\n", warning);
    }
    if (!json) {
        printf("%-16s %5s %5s %5s %2s %3s", "shape", "m", "n", "k", "op", "thr");
        for (int b = 0; b < nb; b++) printf(" %10s", bnames[b]);
        printf(" %6s", "%peak");
        if (nb >= 2) printf(" %8s", "ratio");
        printf(" %7s", "bound");
        if (copies) printf(" %8s %6s", "copies", "split");
        printf("\n");
    }
    static double ratio[MAX_THREADS][MAX_SHAPES];  // first / second backend; -1: none
    static double ratio_bound[MAX_THREADS][MAX_SHAPES];  // roofline bound / second backend
    static double split[MAX_THREADS][MAX_SHAPES];  // first backend / its copies; -1: none
    for (int t = 0; t < nthreads; t++) {
        gemm_set_threads(threads[t]);
        for (int si = 0; si < nshapes; si++) {
            const Shape *s = &shapes[si];
            Operands o = operands_make(s, resident, threads[t]);
            double flops = 2.0 * s->m * s->n * s->k * s->batch, times[MAX_BACKENDS][MAX_REPS];
            double gf[MAX_BACKENDS] = {0};
            // the copies: one product per thread, as a batch of sgemm_serial products
            const bool run_copies = copies && s->batch == 1 && threads[t] > 1;
            Shape cs = *s;
            cs.batch = threads[t];
            Operands oc = run_copies ? operands_make(&cs, 0, threads[t]) : (Operands){0};
            double copy_times[MAX_REPS], gf_copies = 0;
            for (int b = 0; b < nb; b++) run_once(backends[b], s, &o);  // warm up
            if (run_copies) run_once(backends[0], &cs, &oc);
            for (int r = 0; r < reps; r++) {
                for (int b = 0; b < nb; b++) times[b][r] = run_once(backends[b], s, &o);
                if (run_copies) copy_times[r] = run_once(backends[0], &cs, &oc);
            }
            for (int b = 0; b < nb; b++) gf[b] = flops / bench_median(times[b], reps) / 1e9;
            if (run_copies) gf_copies = flops * cs.batch / bench_median(copy_times, reps) / 1e9;
            split[t][si] = run_copies ? gf[0] / gf_copies : -1.0;
            double pct_peak = 100.0 * gf[0] / peak[t].gflops;
            ratio[t][si] = nb >= 2 ? gf[0] / gf[1] : -1.0;
            double bw = 0, bound = 0;  // GB/s, GFLOP/s; batched shapes only
            if (s->batch > 1 && !o.resident) {
                bw = read_bandwidth(&o, reps);
                double bytes = 4.0 * (o.sa + o.sb + o.sc) * s->batch;
                bound = flops / bytes * bw;
                if (bound > peak[t].gflops) bound = peak[t].gflops;
            }
            ratio_bound[t][si] = nb >= 2 && bound > 0 ? bound / gf[1] : -1.0;
            if (json) {
                for (int b = 0; b < nb; b++) {
                    printf("{\"bench\":\"gemm\",\"shape\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d,"
                           "\"ta\":%d,\"tb\":%d,\"batch\":%d,\"threads\":%d,\"backend\":\"%s\","
                           "\"gflops\":%.2f,\"pct_peak\":%.1f",
                           s->name, s->m, s->n, s->k, s->ta, s->tb, s->batch, threads[t],
                           bnames[b], gf[b], 100.0 * gf[b] / peak[t].gflops);
                    if (nb >= 2 && b == 0) printf(",\"ratio_vs_%s\":%.3f", bnames[1], ratio[t][si]);
                    if (run_copies && b == 0)
                        printf(",\"copies_gflops\":%.2f,\"ratio_vs_copies\":%.3f", gf_copies,
                               split[t][si]);
                    if (bound > 0) printf(",\"read_gbps\":%.1f,\"bound_gflops\":%.2f", bw, bound);
                    if (o.resident) printf(",\"resident\":%d", o.resident);
                    printf("}\n");
                }
            } else {
                printf("%-16s %5d %5d %5d %c%c %3d", s->name, s->m, s->n, s->k, s->ta ? 'T' : 'N',
                       s->tb ? 'T' : 'N', threads[t]);
                for (int b = 0; b < nb; b++) printf(" %10.1f", gf[b]);
                printf(" %5.1f%%", pct_peak);
                if (nb >= 2) printf(" %8.3f", ratio[t][si]);
                if (bound > 0)
                    printf(" %7.1f", bound);
                else
                    printf(" %7s", "-");
                if (run_copies)
                    printf(" %8.1f %6.3f", gf_copies, split[t][si]);
                else if (copies)
                    printf(" %8s %6s", "-", "-");
                printf("\n");
            }
            fflush(stdout);
            operands_free(&o);
            if (run_copies) operands_free(&oc);
        }
    }
    for (int t = 0; t < nthreads; t++) {
        int count;
        double med = median_ratio(split[t], nshapes, &count);
        if (!count) continue;
        if (json)
            printf("{\"bench\":\"gemm\",\"summary\":\"copies\",\"threads\":%d,\"shapes\":%d,"
                   "\"median_ratio_vs_copies\":%.3f}\n",
                   threads[t], count, med);
        else
            printf("# median %s/copies over the %d large shapes at %d threads: %.3f\n", bnames[0],
                   count, threads[t], med);
    }
    if (nb < 2) return 0;
    for (int large = 1; large >= 0; large--)
        for (int t = 0; t < nthreads; t++) {
            double group_ratio[MAX_SHAPES];
            for (int si = 0; si < nshapes; si++) {
                bool is_large = strcmp(shapes[si].group, "attn") != 0;
                group_ratio[si] = is_large == large ? ratio[t][si] : -1;
            }
            int count;
            double med = median_ratio(group_ratio, nshapes, &count);
            if (!count) continue;
            const char *group = large ? "large" : "attention";
            int bounded;  // the median ratio the roofline bounds would allow, where there are any
            double med_bound = median_ratio(ratio_bound[t], nshapes, &bounded);
            if (json) {
                printf("{\"bench\":\"gemm\",\"summary\":\"%s\",\"threads\":%d,\"shapes\":%d,"
                       "\"median_ratio_vs_%s\":%.3f",
                       group, threads[t], count, bnames[1], med);
                if (!large && bounded == count) printf(",\"median_bound_ratio\":%.3f", med_bound);
                printf("}\n");
            } else {
                printf("# median %s/%s over the %d %s shapes at %d thread%s: %.3f", bnames[0],
                       bnames[1], count, group, threads[t], threads[t] > 1 ? "s" : "", med);
                if (!large && bounded == count)
                    printf(" (the bounds allow at most %.3f)", med_bound);
                printf("\n");
            }
        }
    return 0;
}
