/* cmd_analyze.c: `nmt analyze -m CKPT`: how redundant are the key/query projections? The
 * analysis of analyze.h as a table on stdout; --json writes every spectrum for
 * scripts/plot-analyze.py. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze.h"
#include "args.h"
#include "check.h"
#include "cmd.h"
#include "json.h"
#include "loaded_model.h"

enum { MAX_RANKS = 32 };  // of --cp

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt analyze -m CHECKPOINT [--json FILE] [--cp R1,R2,...]\n\n"
            "Spectra of the key/query projections of every attention module: per head and\n"
            "concatenated W_Q, W_K, and the per-head products W_Q^h W_K^h^T side by side;\n"
            "the ranks that keep 90/95/99%% of the energy. --cp adds the CP reconstruction error\n"
            "of each module at the given ranks (what `nmt reparam --dk R` would reach): up to %d\n"
            "integers, each from 1 to the model's key width d_k (model.dk, or d_model when it is\n"
            "0), the rank at which the decomposition is exact.\n",
            MAX_RANKS);
}

/* What the printing of each module needs. */
typedef struct Report {
    QkShape sh;
    int nranks;
    FILE *json;   // NULL without --json
    int modules;  // modules written so far
} Report;

static void json_spectrum(FILE *f, const double *s2, int n) {
    fputc('[', f);
    for (int i = 0; i < n; i++) fprintf(f, "%s%.9g", i ? "," : "", sqrt(s2[i]));
    fputc(']', f);
}

/* Six table rows: per head (the mean rank over heads) and concatenated, with the CP
 * reconstruction errors on the [P_1..P_H] row. */
static void print_module(const ModuleAnalysis *a, const Report *r) {
    for (int w = 0; w < ANALYZE_MATRICES; w++) {
        printf("%-22s %-10s %6d", a->name, analyze_matrix_names[w], r->sh.d);
        for (int f = 0; f < ANALYZE_FRACTIONS; f++)
            printf(" %8.1f (%5.1f%%)", a->head_rank[w][f], a->head_pct[w][f]);
        printf("\n");
    }
    for (int w = 0; w < ANALYZE_MATRICES; w++) {
        printf("%-22s %-10s %6d", a->name, w == 2 ? "[P_1..P_H]" : w ? "W_K concat" : "W_Q concat",
               a->s.catn[w]);
        for (int f = 0; f < ANALYZE_FRACTIONS; f++)
            printf(" %8d (%5.1f%%)", a->cat_rank[w][f], a->cat_pct[w][f]);
        for (int k = 0; w == 2 && k < r->nranks; k++) printf("   %15.4f", a->cp_error[k]);
        printf("\n");
    }
    fflush(stdout);
}

static void json_module(FILE *f, const ModuleAnalysis *a, QkShape sh) {
    fprintf(f, "{\"module\":\"%s\",\"head_dim\":%d", a->name, sh.d);
    for (int w = 0; w < ANALYZE_MATRICES; w++) {
        fprintf(f, ",\"heads_%s\":[", analyze_matrix_names[w]);
        for (int h = 0; h < sh.H; h++) {
            if (h) fputc(',', f);
            json_spectrum(f, a->s.heads[w] + h * sh.d, sh.d);
        }
        fprintf(f, "],\"concat_%s\":", analyze_matrix_names[w]);
        json_spectrum(f, a->s.cat[w], a->s.catn[w]);
    }
    fputc('}', f);
}

static void report(const ModuleAnalysis *a, bool reference, void *ctx) {
    Report *r = ctx;
    if (reference)
        printf("reference: the same for W_Q, W_K with i.i.d. Gaussian entries (a random, untrained "
               "module)\n");
    print_module(a, r);
    if (!r->json) return;
    if (reference)
        fputs("],\"reference\":", r->json), json_module(r->json, a, r->sh), fputs("}\n", r->json);
    else
        fputs(r->modules++ ? "," : "", r->json), json_module(r->json, a, r->sh);
}

/* The comma-separated ranks of --cp, each an integer in [1, dk]; a usage error otherwise.
 * Returns their count. */
static int parse_ranks(const char *cmd, const char *list, int dk, int *ranks) {
    int n = 0;
    for (const char *p = list;; p++) {
        char *end;
        errno = 0;
        long r = strtol(p, &end, 10);
        if (errno || end == p || (*end && *end != ',') || r < 1 || r > dk || n == MAX_RANKS)
            args_usage_error(cmd, "--cp expects up to %d comma-separated integers from 1 to %d "
                             "(the model's key width d_k), got '%s'", MAX_RANKS, dk, list);
        ranks[n++] = (int)r;
        if (!*end) return n;
        p = end;
    }
}

int cmd_analyze(int argc, char **argv) {
    const char *cmd = "analyze", *model = NULL, *json = NULL, *cp_list = NULL;
    const ArgsOption opts[] = {ARGS_OPT_STRING("-m", "--model", &model),
                               ARGS_OPT_STRING(NULL, "--json", &json),
                               ARGS_OPT_STRING(NULL, "--cp", &cp_list)};
    if (!args_parse(cmd, argc, argv, opts, ARGS_COUNT(opts), NULL, NULL, usage)) return 0;
    if (!model) args_usage_error(cmd, "-m CHECKPOINT is required");
    CheckpointParams cp;
    checkpoint_params_open(&cp, model);
    if (cp.cfg.model.attention != ATTENTION_CONCAT)
        FATAL("%s has %s attention; analyze studies the per-head projections of concat models",
              model, attention_mode_name(cp.cfg.model.attention));
    QkShape sh = analyze_shape(&cp.cfg.model);
    int ranks[MAX_RANKS], nranks = cp_list ? parse_ranks(cmd, cp_list, sh.Dk, ranks) : 0;
    Report r = {sh, nranks, json ? fopen(json, "w") : NULL, 0};
    if (json && !r.json) FATAL("cannot write %s", json);
    if (r.json) {
        fputs("{\"model\":", r.json);
        json_print_string(r.json, model, 0);
        fprintf(r.json, ",\"d_model\":%d,\"heads\":%d,\"dk\":%d,\"modules\":[", r.sh.D, r.sh.H,
                r.sh.Dk);
    }
    printf("%-22s %-10s %6s %17s %17s %17s", "module", "matrix", "dim", "rank@90%", "rank@95%",
           "rank@99%");
    for (int k = 0; k < nranks; k++) printf("   CP err R=%-4d", ranks[k]);
    printf("\n");
    analyze_modules(&cp.pt, r.sh, ranks, nranks, report, &r);
    if (r.json) fclose(r.json);
    checkpoint_params_close(&cp);
    return 0;
}
