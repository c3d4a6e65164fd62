/* cmd_analyze.c: `nmt analyze -m CKPT`: how redundant are the key/query projections?
 * For every attention module, the spectra of spectra.h and the ranks reaching 90, 95 and 99 % of
 * the explained energy (uncentered: the operator spectrum), then the same for Gaussian W_Q, W_K as
 * a reference; optionally the CP reconstruction error for a list of ranks. A table on stdout;
 * --json writes every spectrum for scripts/plot-analyze.py. */
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
#include "json.h"
#include "model.h"
#include "spectra.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt analyze -m CHECKPOINT [--json FILE] [--cp R1,R2,...]\n\n"
            "Spectra of the key/query projections of every attention module: per head and\n"
            "concatenated W_Q, W_K, and the per-head products W_Q^h W_K^h^T side by side;\n"
            "the ranks that keep 90/95/99%% of the energy. --cp adds the CP reconstruction error\n"
            "of each module at the given ranks (what `nmt reparam --dk R` would reach).\n");
}

static void json_spectrum(FILE *f, const double *s2, int n) {
    fputc('[', f);
    for (int i = 0; i < n; i++) fprintf(f, "%s%.9g", i ? "," : "", sqrt(s2[i]));
    fputc(']', f);
}

static const char *const matrix_names[3] = {"W_Q", "W_K", "P"};

/* Six table rows: per head (the mean rank over heads) and concatenated, with the CP
 * reconstruction error at each of ranks[] on the [P_1..P_H] row. */
static void print_module(const char *name, const ModuleSpectra *s, QkShape sh, const float *wq,
                         const float *wk, const int *ranks, int nranks) {
    const int H = sh.H, d = sh.d;
    static const double fracs[3] = {0.90, 0.95, 0.99};
    for (int w = 0; w < 3; w++) { // per head: the mean rank over heads
        printf("%-22s %-10s %6d", name, matrix_names[w], d);
        for (int f = 0; f < 3; f++) {
            double rank = 0;
            for (int h = 0; h < H; h++)
                rank += spectra_energy_rank(s->heads[w] + h * d, d, fracs[f]);
            printf(" %8.1f (%5.1f%%)", rank / H, 100 * rank / H / d);
        }
        printf("\n");
    }
    for (int w = 0; w < 3; w++) {
        int n = s->catn[w];
        printf("%-22s %-10s %6d", name, w == 2 ? "[P_1..P_H]" : w ? "W_K concat" : "W_Q concat", n);
        for (int f = 0; f < 3; f++) {
            int rank = spectra_energy_rank(s->cat[w], n, fracs[f]);
            printf(" %8d (%5.1f%%)", rank, 100.0 * rank / n);
        }
        for (int k = 0; w == 2 && k < nranks; k++) {
            int R = ranks[k];
            double *Wq = xmalloc(sizeof(double) * sh.D * R), *M = xmalloc(sizeof(double) * H * R),
                   *Wk = xmalloc(sizeof(double) * sh.D * R);
            CpOptions o = {R, 300, 1e-7, 1};
            CpResult res = cp_als(wq, wk, H, d, sh.D, &o, Wq, M, Wk);
            printf("   %15.4f", res.rel_error);
            free(Wq), free(M), free(Wk);
        }
        printf("\n");
    }
    fflush(stdout);
}

static void json_module(FILE *f, const char *name, const ModuleSpectra *s, QkShape sh) {
    fprintf(f, "{\"module\":\"%s\",\"head_dim\":%d", name, sh.d);
    for (int w = 0; w < 3; w++) {
        fprintf(f, ",\"heads_%s\":[", matrix_names[w]);
        for (int h = 0; h < sh.H; h++) {
            if (h) fputc(',', f);
            json_spectrum(f, s->heads[w] + h * sh.d, sh.d);
        }
        fprintf(f, "],\"concat_%s\":", matrix_names[w]);
        json_spectrum(f, s->cat[w], s->catn[w]);
    }
    fputc('}', f);
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
    if (cfg->model.attention != ATTENTION_CONCAT)
        FATAL("%s has %s attention; analyze studies the per-head projections of concat models",
              model, attention_mode_name(cfg->model.attention));
    int ranks[32], nranks = 0;
    for (const char *p = cp_list; p && *p && nranks < 32;) {
        ranks[nranks++] = atoi(p);
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    QkShape sh = {cfg->model.heads, cfg->model.d_model, config_model_dk(&cfg->model), 0};
    sh.d = sh.Dk / sh.H;
    FILE *jf = json ? fopen(json, "w") : NULL;
    if (json && !jf) FATAL("cannot write %s", json);
    if (jf) {
        fputs("{\"model\":", jf);
        json_print_string(jf, model, 0);
        fprintf(jf, ",\"d_model\":%d,\"heads\":%d,\"dk\":%d,\"modules\":[", sh.D, sh.H, sh.Dk);
    }
    printf("%-22s %-10s %6s %17s %17s %17s", "module", "matrix", "dim", "rank@90%", "rank@95%",
           "rank@99%");
    for (int k = 0; k < nranks; k++) printf("   CP err R=%-4d", ranks[k]);
    printf("\n");
    int modules = 0;
    for (int i = 0; i < pt->count; i++) {
        const char *name = pt->info[i].name;
        size_t len = strlen(name);
        if (len < 4 || strcmp(name + len - 4, ".w_q") || !strstr(name, "_attn")) continue;
        char prefix[96], kname[112];
        snprintf(prefix, sizeof prefix, "%.*s", (int)(len - 4), name);
        snprintf(kname, sizeof kname, "%s.w_k", prefix);
        const float *wq = params_view(pt, name, pt->param), *wk = params_view(pt, kname, pt->param);
        ModuleSpectra s;
        module_spectra(wq, wk, sh, &s);
        print_module(prefix, &s, sh, wq, wk, ranks, nranks);
        if (jf) fputs(modules ? "," : "", jf), json_module(jf, prefix, &s, sh);
        module_spectra_free(&s);
        modules++;
    }
    float *gq = xmalloc(sizeof(float) * sh.Dk * sh.D), *gk = xmalloc(sizeof(float) * sh.Dk * sh.D);
    spectra_gaussian_projections(sh, gq, gk);
    ModuleSpectra s;
    module_spectra(gq, gk, sh, &s);
    printf("reference: the same for W_Q, W_K with i.i.d. Gaussian entries (a random, untrained "
           "module)\n");
    print_module("gaussian", &s, sh, gq, gk, ranks, nranks);
    if (jf)
        fputs("],\"reference\":", jf), json_module(jf, "gaussian", &s, sh), fputs("}\n", jf),
            fclose(jf);
    module_spectra_free(&s);
    free(gq), free(gk);
    checkpoint_params_close(&cp);
    return 0;
}
