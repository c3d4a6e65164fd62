/* analyze.c: the spectra, energy ranks and CP errors of every attention module (analyze.h). */
#include "analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "cp_als.h"

const char *const analyze_matrix_names[ANALYZE_MATRICES] = {"W_Q", "W_K", "P"};

QkShape analyze_shape(const ModelConfig *m) {
    QkShape sh = {m->heads, m->d_model, config_model_dk(m), 0};
    sh.d = sh.Dk / sh.H;
    return sh;
}

/* The spectra, ranks and CP errors of the module with projections wq, wk (Dk, D). */
static void analyze_module(ModuleAnalysis *a, const char *name, const float *wq, const float *wk,
                           QkShape sh, const int *ranks, int nranks) {
    static const double fracs[ANALYZE_FRACTIONS] = {0.90, 0.95, 0.99};
    const int H = sh.H, d = sh.d;
    a->name = name;
    module_spectra(wq, wk, sh, &a->s);
    for (int w = 0; w < ANALYZE_MATRICES; w++) {
        int n = a->s.catn[w];
        for (int f = 0; f < ANALYZE_FRACTIONS; f++) {
            double rank = 0;
            for (int h = 0; h < H; h++)
                rank += spectra_energy_rank(a->s.heads[w] + h * d, d, fracs[f]);
            a->head_rank[w][f] = rank / H;
            a->head_pct[w][f] = 100 * rank / H / d;
            a->cat_rank[w][f] = spectra_energy_rank(a->s.cat[w], n, fracs[f]);
            a->cat_pct[w][f] = 100.0 * a->cat_rank[w][f] / n;
        }
    }
    a->cp_error = xmalloc(sizeof(double) * (nranks ? nranks : 1));
    for (int k = 0; k < nranks; k++) {
        int R = ranks[k];
        double *Wq = xmalloc(sizeof(double) * sh.D * R),  // (D, R)
            *M = xmalloc(sizeof(double) * H * R),         // (H, R)
            *Wk = xmalloc(sizeof(double) * sh.D * R);     // (D, R)
        CpOptions o = {R, 300, 1e-7, 1};
        a->cp_error[k] = cp_als(wq, wk, H, d, sh.D, &o, Wq, M, Wk).rel_error;
        free(Wq), free(M), free(Wk);
    }
}

static void analysis_free(ModuleAnalysis *a) {
    module_spectra_free(&a->s);
    free(a->cp_error);
}

void analyze_modules(const ParamTable *pt, QkShape sh, const int *ranks, int nranks,
                     void (*fn)(const ModuleAnalysis *a, bool reference, void *ctx), void *ctx) {
    ModuleAnalysis a;
    for (int i = 0; i < pt->count; i++) {
        const char *name = pt->info[i].name;
        size_t len = strlen(name);
        if (len < 4 || strcmp(name + len - 4, ".w_q") || !strstr(name, "_attn")) continue;
        char prefix[96], kname[112];
        snprintf(prefix, sizeof prefix, "%.*s", (int)(len - 4), name);
        snprintf(kname, sizeof kname, "%s.w_k", prefix);
        const float *wq = params_view(pt, name, pt->param), *wk = params_view(pt, kname, pt->param);
        analyze_module(&a, prefix, wq, wk, sh, ranks, nranks);
        fn(&a, false, ctx);
        analysis_free(&a);
    }
    float *gq = xmalloc(sizeof(float) * sh.Dk * sh.D),  // (Dk, D)
        *gk = xmalloc(sizeof(float) * sh.Dk * sh.D);    // (Dk, D)
    spectra_gaussian_projections(sh, gq, gk);
    analyze_module(&a, "gaussian", gq, gk, sh, ranks, nranks);
    fn(&a, true, ctx);
    analysis_free(&a);
    free(gq), free(gk);
}
