/* bench_gemm.c: `nmt bench gemm`, GFLOP/s of each GEMM backend on the products of transformer
 * training, side by side in one run.
 *   large shapes (4096 tokens; d_model 512/ffn 2048 and 256/1024): projections, FFN up and down in
 *   NN/NT/TN, and the weight gradients (TN), through the threaded `sgemm`;
 *   attention shapes: a batch of 1312 independent (sentence, head) products, OpenMP over the
 *   batch with `sgemm_serial` inside, as attention calls them.
 * Backends run interleaved within each repetition, so machine noise hits all of them alike; the
 * reported figure is the median over repetitions, and the ratio blocked/openblas is taken from
 * those medians. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "args.h"
#include "bench.h"
#include "gemm.h"
#include "timer.h"

typedef struct {
    const char *name;
    int m, n, k;
    bool ta, tb;
    int batch;  // > 1: independent products, OpenMP over the batch, sgemm_serial inside
} Shape;

enum { MAX_SHAPES = 64, MAX_REPS = 101, ATTN_BATCH = 1312 };

static int add_model_shapes(Shape *s, int n, int d, int ffn, const char *tag) {
    static char names[MAX_SHAPES][32];
    const struct { const char *what; int m, n, k; } base[] = {
        {"proj", 4096, d, d}, {"ffn1", 4096, ffn, d}, {"ffn2", 4096, d, ffn}};
    const bool tr[3][2] = {{0, 0}, {0, 1}, {1, 0}};  // NN, NT, TN
    for (int b = 0; b < 3; b++)
        for (int t = 0; t < 3; t++) {
            snprintf(names[n], sizeof names[n], "%s_%s", base[b].what, tag);
            s[n] = (Shape){names[n], base[b].m, base[b].n, base[b].k, tr[t][0], tr[t][1], 1};
            n++;
        }
    const struct { const char *what; int m, n; } wg[] = {{"wgrad_proj", d, d}, {"wgrad_ffn", d, ffn}};
    for (int b = 0; b < 2; b++) {
        snprintf(names[n], sizeof names[n], "%s_%s", wg[b].what, tag);
        s[n++] = (Shape){names[n - 1], wg[b].m, wg[b].n, 4096, true, false, 1};
    }
    return n;
}

static int add_attention_shapes(Shape *s, int n) {
    s[n++] = (Shape){"attn_qk_64", 25, 25, 64, false, true, ATTN_BATCH};
    s[n++] = (Shape){"attn_pv_64", 25, 64, 25, false, false, ATTN_BATCH};
    s[n++] = (Shape){"attn_qk_128", 25, 25, 128, false, true, ATTN_BATCH};
    s[n++] = (Shape){"attn_qk_256", 25, 25, 256, false, true, ATTN_BATCH};
    return n;
}

typedef struct {
    float *A, *B, *C;  // one operand set per batch element, back to back
    size_t sa, sb, sc; // floats per batch element
} Operands;

static Operands operands_make(const Shape *s) {
    Operands o;
    o.sa = (size_t)s->m * s->k, o.sb = (size_t)s->k * s->n, o.sc = (size_t)s->m * s->n;
    o.A = aligned_alloc_zeroed(o.sa * s->batch * sizeof(float));
    o.B = aligned_alloc_zeroed(o.sb * s->batch * sizeof(float));
    o.C = aligned_alloc_zeroed(o.sc * s->batch * sizeof(float));
    for (size_t i = 0; i < o.sa * s->batch; i++) o.A[i] = (float)((i * 7919) % 2001) / 1000.0f - 1;
    for (size_t i = 0; i < o.sb * s->batch; i++) o.B[i] = (float)((i * 104729) % 1999) / 999.0f - 1;
    return o;
}

static void operands_free(Operands *o) {
    aligned_free(o->A), aligned_free(o->B), aligned_free(o->C);
}

static double run_once(const GemmImpl *g, const Shape *s, const Operands *o) {
    int lda = s->ta ? s->m : s->k, ldb = s->tb ? s->k : s->n;
    double t0 = now_seconds();
    if (s->batch == 1) {
        g->sgemm(s->ta, s->tb, s->m, s->n, s->k, 1.0f, o->A, lda, o->B, ldb, 0.0f, o->C, s->n);
    } else {
#pragma omp parallel for schedule(static)
        for (int b = 0; b < s->batch; b++)
            g->sgemm_serial(s->ta, s->tb, s->m, s->n, s->k, 1.0f, o->A + b * o->sa, lda,
                            o->B + b * o->sb, ldb, 0.0f, o->C + b * o->sc, s->n);
    }
    return now_seconds() - t0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt bench gemm [--shapes d512,d256,attn] [--backends blocked,openblas]\n"
            "                      [--threads 1,2] [--reps N] [--json]\n\n"
            "Median GFLOP/s per shape, backend and thread count, with the ratio of the first\n"
            "backend to the second measured in the same run (backends interleaved per repetition).\n"
            "  --shapes    groups to run (default d512,d256,attn)\n"
            "  --backends  comma-separated GEMM backends (default blocked,openblas)\n"
            "  --threads   comma-separated thread counts (default 1 and all cores)\n"
            "  --reps      repetitions per measurement, median reported (default 7)\n"
            "  --json      one JSON object per line instead of the table\n");
}

static int split_list(char *text, char **items, int max) {
    int n = 0;
    for (char *tok = strtok(text, ","); tok && n < max; tok = strtok(NULL, ",")) items[n++] = tok;
    return n;
}

int bench_gemm(int argc, char **argv) {
    char shapes_arg[128] = "d512,d256,attn", backends_arg[128] = "blocked,openblas",
         threads_arg[64] = "";
    int reps = 7;
    bool json = false;
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
        else if (args_is(a, NULL, "--json"))
            json = true;
        else
            args_usage_error("bench gemm", "unknown option '%s'", a);
    }
    int all = omp_get_max_threads();
    if (!*threads_arg) snprintf(threads_arg, sizeof threads_arg, all > 1 ? "1,%d" : "1", all);

    Shape shapes[MAX_SHAPES];
    int nshapes = 0;
    char *groups[8];
    int ngroups = split_list(shapes_arg, groups, 8);
    for (int g = 0; g < ngroups; g++) {
        if (!strcmp(groups[g], "d512"))
            nshapes = add_model_shapes(shapes, nshapes, 512, 2048, "d512");
        else if (!strcmp(groups[g], "d256"))
            nshapes = add_model_shapes(shapes, nshapes, 256, 1024, "d256");
        else if (!strcmp(groups[g], "attn"))
            nshapes = add_attention_shapes(shapes, nshapes);
        else
            args_usage_error("bench gemm", "unknown shape group '%s' (d512, d256, attn)", groups[g]);
    }
    char *bnames[4];
    int nb = split_list(backends_arg, bnames, 4);
    const GemmImpl *backends[4];
    for (int b = 0; b < nb; b++) {
        backends[b] = gemm_lookup(bnames[b]);
        if (!backends[b]) args_usage_error("bench gemm", "unknown GEMM backend '%s'", bnames[b]);
    }
    char *tnames[8];
    int nthreads = split_list(threads_arg, tnames, 8), threads[8];
    for (int t = 0; t < nthreads; t++)
        threads[t] = args_int("bench gemm", "--threads", tnames[t], 1, 1024);

    if (!json) {
        printf("# GFLOP/s, median of %d repetitions; backends:", reps);
        for (int b = 0; b < nb; b++) printf(" %s (%s)", backends[b]->name, backends[b]->detail);
        printf("\n%-16s %5s %5s %5s %2s %3s", "shape", "m", "n", "k", "op", "thr");
        for (int b = 0; b < nb; b++) printf(" %10s", bnames[b]);
        if (nb >= 2) printf(" %8s", "ratio");
        printf("\n");
    }
    for (int t = 0; t < nthreads; t++) {
        gemm_set_threads(threads[t]);
        for (int si = 0; si < nshapes; si++) {
            const Shape *s = &shapes[si];
            Operands o = operands_make(s);
            double flops = 2.0 * s->m * s->n * s->k * s->batch, times[4][MAX_REPS], gf[4];
            for (int b = 0; b < nb; b++) run_once(backends[b], s, &o);  // warm up
            for (int r = 0; r < reps; r++)
                for (int b = 0; b < nb; b++) times[b][r] = run_once(backends[b], s, &o);
            for (int b = 0; b < nb; b++) gf[b] = flops / median(times[b], reps) / 1e9;
            if (json) {
                for (int b = 0; b < nb; b++) {
                    printf("{\"bench\":\"gemm\",\"shape\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d,"
                           "\"ta\":%d,\"tb\":%d,\"batch\":%d,\"threads\":%d,\"backend\":\"%s\","
                           "\"gflops\":%.2f",
                           s->name, s->m, s->n, s->k, s->ta, s->tb, s->batch, threads[t],
                           bnames[b], gf[b]);
                    if (nb >= 2 && b == 0) printf(",\"ratio_vs_%s\":%.3f", bnames[1], gf[0] / gf[1]);
                    printf("}\n");
                }
            } else {
                printf("%-16s %5d %5d %5d %c%c %3d", s->name, s->m, s->n, s->k, s->ta ? 'T' : 'N',
                       s->tb ? 'T' : 'N', threads[t]);
                for (int b = 0; b < nb; b++) printf(" %10.1f", gf[b]);
                if (nb >= 2) printf(" %8.3f", gf[0] / gf[1]);
                printf("\n");
            }
            fflush(stdout);
            operands_free(&o);
        }
    }
    return 0;
}
