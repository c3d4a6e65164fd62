/* cmd_analyze.c: `nmt analyze -m CKPT`: how redundant are the key/query projections?
 * For every attention module (collab-attention.md §6): the singular values of each head's W_Q^h,
 * W_K^h and P_h = W_Q^h W_K^h^T, of the concatenated W_Q and W_K, and of [P_1 | ... | P_H]; their
 * explained-energy curves E(r) = sum_{j<=r} s_j^2 / sum_j s_j^2 and the ranks reaching 90, 95 and
 * 99 % energy (uncentered: the operator spectrum). Optionally the CP reconstruction error for a
 * list of ranks. A table on stdout; --json writes every spectrum for scripts/plot-analyze.py.
 * All in double precision: Gram matrices and symmetric eigenproblems (LAPACK), never the
 * D x (H D) matrices themselves. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "check.h"
#include "loaded_model.h"
#include "cmd.h"
#include "config.h"
#include "cp_als.h"
#include "linalg.h"
#include "model.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt analyze -m CHECKPOINT [--json FILE] [--cp R1,R2,...]\n\n"
            "Spectra of the key/query projections of every attention module: per head and\n"
            "concatenated W_Q, W_K, and the per-head products W_Q^h W_K^h^T side by side;\n"
            "the ranks that keep 90/95/99%% of the energy. --cp adds the CP reconstruction error\n"
            "of each module at the given ranks (what `nmt reparam --dk R` would reach).\n");
}

/* Singular values squared (descending) from a symmetric PSD Gram matrix (destroyed). */
static void spectrum(double *gram, int n, double *s2) {
    sym_eigenvalues(gram, n, s2);
    for (int i = 0; i < n; i++) s2[i] = s2[i] > 0 ? s2[i] : 0;
}

/* Smallest r with E(r) >= frac. */
static int energy_rank(const double *s2, int n, double frac) {
    double total = 0, acc = 0;
    for (int i = 0; i < n; i++) total += s2[i];
    for (int i = 0; i < n; i++)
        if ((acc += s2[i]) >= frac * total) return i + 1;
    return n;
}

typedef struct Spec {
    const char *what;  // "W_Q", "W_K", "P"
    bool per_head;
    double *s2;        // (heads or 1, n)
    int n;
} Spec;

static void json_spectrum(FILE *f, const double *s2, int n) {
    fputc('[', f);
    for (int i = 0; i < n; i++) fprintf(f, "%s%.9g", i ? "," : "", sqrt(s2[i]));
    fputc(']', f);
}

int cmd_analyze(int argc, char **argv) {
    const char *cmd = "analyze", *model = NULL, *json = NULL, *cp_list = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (args_wants_help(a)) {
            usage(stdout);
            return 0;
        } else if (args_is(a, "-m", "--model")) {
            model = args_value(cmd, argc, argv, &i);
        } else if (args_is(a, NULL, "--json")) {
            json = args_value(cmd, argc, argv, &i);
        } else if (args_is(a, NULL, "--cp")) {
            cp_list = args_value(cmd, argc, argv, &i);
        } else {
            args_usage_error(cmd, "unknown option '%s'", a);
        }
    }
    if (!model) args_usage_error(cmd, "-m CHECKPOINT is required");
    CheckpointParams cp;
    checkpoint_params_open(&cp, model);
    const Config *cfg = &cp.cfg;
    const ParamTable *pt = &cp.pt;
    if (strcmp(cfg->model.attention, "concat"))
        FATAL("%s has %s attention; analyze studies the per-head projections of concat models",
              model, cfg->model.attention);
    int ranks[32], nranks = 0;
    for (const char *p = cp_list; p && *p && nranks < 32;) {
        ranks[nranks++] = atoi(p);
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    const int H = cfg->model.heads, D = cfg->model.d_model, Dk = config_model_dk(&cfg->model),
              d = Dk / H;
    FILE *jf = json ? fopen(json, "w") : NULL;
    if (json && !jf) FATAL("cannot write %s", json);
    if (jf) fprintf(jf, "{\"model\":\"%s\",\"d_model\":%d,\"heads\":%d,\"dk\":%d,\"modules\":[", model, D, H, Dk);
    printf("%-22s %-10s %6s %17s %17s %17s", "module", "matrix", "dim", "rank@90%", "rank@95%", "rank@99%");
    for (int k = 0; k < nranks; k++) printf("   CP err R=%-4d", ranks[k]);
    printf("\n");
    double *A = xmalloc(sizeof(double) * D * Dk), *B = xmalloc(sizeof(double) * D * Dk);
    double *G = xmalloc(sizeof(double) * D * D), *X = xmalloc(sizeof(double) * D * D);
    double *ga = xmalloc(sizeof(double) * d * d), *gb = xmalloc(sizeof(double) * d * d);
    double *evec = xmalloc(sizeof(double) * d * d), *ev = xmalloc(sizeof(double) * (D > d ? D : d));
    int modules = 0;
    for (int i = 0; i < pt->count; i++) {
        const char *name = pt->info[i].name;
        size_t len = strlen(name);
        if (len < 4 || strcmp(name + len - 4, ".w_q") || !strstr(name, "_attn")) continue;
        char prefix[96], kname[112];
        snprintf(prefix, sizeof prefix, "%.*s", (int)(len - 4), name);
        snprintf(kname, sizeof kname, "%s.w_k", prefix);
        const float *wq = params_view(pt, name, pt->param), *wk = params_view(pt, kname, pt->param);
        for (size_t e = 0; e < (size_t)Dk * D; e++) A[e] = wq[e], B[e] = wk[e];  // rows: columns of W_Q
        double *heads[3] = {xmalloc(sizeof(double) * H * d), xmalloc(sizeof(double) * H * d),
                            xmalloc(sizeof(double) * H * d)};
        for (int h = 0; h < H; h++) {
            const double *Ah = A + (size_t)h * d * D, *Bh = B + (size_t)h * d * D;
            dgemm_rm(false, true, d, d, D, 1.0, Ah, D, Ah, D, 0.0, ga, d);  // A_h^T A_h
            dgemm_rm(false, true, d, d, D, 1.0, Bh, D, Bh, D, 0.0, gb, d);
            // sigma(P_h)^2 = eig(ga^1/2 gb ga^1/2)
            memcpy(evec, ga, sizeof(double) * d * d);
            sym_eigen(evec, d, ev);
            double *half = xcalloc((size_t)d * d, sizeof(double)), *t = xmalloc(sizeof(double) * d * d);
            for (int r = 0; r < d; r++) {
                double s = ev[r] > 0 ? sqrt(ev[r]) : 0;
                for (int a = 0; a < d; a++)
                    for (int b = 0; b < d; b++) half[a * d + b] += s * evec[r * d + a] * evec[r * d + b];
            }
            dgemm_rm(false, false, d, d, d, 1.0, half, d, gb, d, 0.0, t, d);
            dgemm_rm(false, false, d, d, d, 1.0, t, d, half, d, 0.0, evec, d);
            spectrum(evec, d, heads[2] + h * d);
            spectrum(ga, d, heads[0] + h * d);
            spectrum(gb, d, heads[1] + h * d);
            free(half), free(t);
        }
        // concatenated: W_Q (D x Dk) and W_K through the Dk x Dk Gram; [P_1|...|P_H] through
        // sum_h A_h (B_h^T B_h) A_h^T (D x D)
        double *cat[3] = {xmalloc(sizeof(double) * Dk), xmalloc(sizeof(double) * Dk), xmalloc(sizeof(double) * D)};
        double *gq = xmalloc(sizeof(double) * Dk * Dk);
        dgemm_rm(false, true, Dk, Dk, D, 1.0, A, D, A, D, 0.0, gq, Dk);
        spectrum(gq, Dk, cat[0]);
        dgemm_rm(false, true, Dk, Dk, D, 1.0, B, D, B, D, 0.0, gq, Dk);
        for (int a = 0; a < Dk; a++)  // keep the heads' diagonal blocks of B^T B
            for (int b = 0; b < Dk; b++)
                if (a / d != b / d) gq[a * Dk + b] = 0;
        dgemm_rm(false, false, Dk, D, Dk, 1.0, gq, Dk, A, D, 0.0, X, D);  // (B^T B)_h A_h^T
        dgemm_rm(true, false, D, D, Dk, 1.0, A, D, X, D, 0.0, G, D);
        spectrum(G, D, cat[2]);
        dgemm_rm(false, true, Dk, Dk, D, 1.0, B, D, B, D, 0.0, gq, Dk);
        spectrum(gq, Dk, cat[1]);
        free(gq);
        static const char *what[3] = {"W_Q", "W_K", "P"};
        const int catn[3] = {Dk < D ? Dk : D, Dk < D ? Dk : D, D};
        for (int w = 0; w < 3; w++) {  // per head: the mean rank over heads
            double r90 = 0, r95 = 0, r99 = 0;
            for (int h = 0; h < H; h++) {
                r90 += energy_rank(heads[w] + h * d, d, 0.90), r95 += energy_rank(heads[w] + h * d, d, 0.95);
                r99 += energy_rank(heads[w] + h * d, d, 0.99);
            }
            printf("%-22s %-10s %6d %8.1f (%5.1f%%) %8.1f (%5.1f%%) %8.1f (%5.1f%%)\n", prefix, what[w], d,
                   r90 / H, 100 * r90 / H / d, r95 / H, 100 * r95 / H / d, r99 / H, 100 * r99 / H / d);
        }
        for (int w = 0; w < 3; w++) {
            int n = catn[w], r90 = energy_rank(cat[w], n, 0.9), r95 = energy_rank(cat[w], n, 0.95),
                r99 = energy_rank(cat[w], n, 0.99);
            printf("%-22s %-10s %6d %8d (%5.1f%%) %8d (%5.1f%%) %8d (%5.1f%%)", prefix,
                   w == 2 ? "[P_1..P_H]" : w ? "W_K concat" : "W_Q concat", n, r90, 100.0 * r90 / n,
                   r95, 100.0 * r95 / n, r99, 100.0 * r99 / n);
            if (w == 2)
                for (int k = 0; k < nranks; k++) {
                    int R = ranks[k];
                    double *Wq = xmalloc(sizeof(double) * D * R), *M = xmalloc(sizeof(double) * H * R),
                           *Wk = xmalloc(sizeof(double) * D * R);
                    CpOptions o = {R, 300, 1e-7, 1};
                    CpResult res = cp_als(wq, wk, H, d, D, &o, Wq, M, Wk);
                    printf("   %15.4f", res.rel_error);
                    free(Wq), free(M), free(Wk);
                }
            printf("\n");
            fflush(stdout);
        }
        if (jf) {
            fprintf(jf, "%s{\"module\":\"%s\",\"head_dim\":%d", modules ? "," : "", prefix, d);
            for (int w = 0; w < 3; w++) {
                fprintf(jf, ",\"heads_%s\":[", what[w]);
                for (int h = 0; h < H; h++) {
                    if (h) fputc(',', jf);
                    json_spectrum(jf, heads[w] + h * d, d);
                }
                fprintf(jf, "],\"concat_%s\":", what[w]);
                json_spectrum(jf, cat[w], catn[w]);
            }
            fputc('}', jf);
        }
        modules++;
        for (int w = 0; w < 3; w++) free(heads[w]), free(cat[w]);
    }
    if (jf) fprintf(jf, "]}\n"), fclose(jf);
    free(A), free(B), free(G), free(X), free(ga), free(gb), free(evec), free(ev);
    checkpoint_params_close(&cp);
    return 0;
}
