/* test_spectra.c: the spectra behind `nmt analyze`.
 *  - every spectrum computed through small Gram matrices equals the eigenvalues of the Gram of
 *    the explicitly formed matrix (W_Q^h, P_h = W_Q^h W_K^h^T, W_Q concatenated, [P_1 .. P_H]);
 *  - projections of known rank r give energy rank r and no more;
 *  - the energy rank of a hand-made spectrum;
 *  - analyze_modules visits every attention module of a concat model, then the Gaussian
 *    reference, with ranks that grow with the energy kept and CP errors that shrink with R. */
#include <math.h>
#include <string.h>

#include "analyze.h"
#include "linalg.h"
#include "model.h"
#include "rng.h"
#include "spectra.h"
#include "test_util.h"

enum { H = 2, d = 3, Dk = H * d, D = 8 };

/* max_i |got_i - want_i| <= 1e-9 * want_0 over n values (want descending). */
static void expect_spectrum(const char *label, const double *got, const double *want, int n) {
    double worst = 0;
    for (int i = 0; i < n; i++) worst = fmax(worst, fabs(got[i] - want[i]));
    EXPECT(worst <= 1e-9 * want[0], "%s: max difference %g (largest value %g)", label, worst,
           want[0]);
}

/* Eigenvalues (descending) of X^T X for X (rows, D) stored in double. */
static void gram_eigenvalues(const double *X, int rows, double *w) {
    double G[D * D]; // (D, D)
    dgemm_rm(true, false, D, D, rows, 1.0, X, D, X, D, 0.0, G, D);
    sym_eigenvalues(G, D, w);
}

static void check_against_explicit(void) {
    Rng r = rng_init(3, 0);
    float wq[Dk * D], wk[Dk * D]; // (Dk, D)
    for (int i = 0; i < Dk * D; i++) wq[i] = (float)rng_normal(&r), wk[i] = (float)rng_normal(&r);
    ModuleSpectra s;
    module_spectra(wq, wk, (QkShape){H, D, Dk, d}, &s);
    double P[H][D * D];       // P_h = W_Q^h^T W_K^h as (D, D): P[q][k]
    double Pcat_t[H * D * D]; // [P_1 .. P_H]^T: (H D, D)
    double Wq[Dk * D], w[D];
    for (int i = 0; i < Dk * D; i++) Wq[i] = wq[i];
    for (int h = 0; h < H; h++) {
        for (int q = 0; q < D; q++)
            for (int k = 0; k < D; k++) {
                double t = 0;
                for (int j = h * d; j < (h + 1) * d; j++)
                    t += (double)wq[j * D + q] * wk[j * D + k];
                P[h][q * D + k] = t;
                Pcat_t[(h * D + k) * D + q] = t;
            }
        double Pt[D * D]; // P_h^T, so that the Gram below is P_h P_h^T
        for (int q = 0; q < D; q++)
            for (int k = 0; k < D; k++) Pt[k * D + q] = P[h][q * D + k];
        gram_eigenvalues(Pt, D, w);
        expect_spectrum("P_h", s.heads[2] + h * d, w, d);
        EXPECT(w[d] <= 1e-9 * w[0], "P_h has rank d");
        gram_eigenvalues(Wq + h * d * D, d, w);
        expect_spectrum("W_Q^h", s.heads[0] + h * d, w, d);
    }
    gram_eigenvalues(Wq, Dk, w);
    expect_spectrum("W_Q concat", s.cat[0], w, s.catn[0]);
    EXPECT(s.catn[0] == Dk && s.catn[2] == D, "concat dims %d %d", s.catn[0], s.catn[2]);
    gram_eigenvalues(Pcat_t, H * D, w);
    expect_spectrum("[P_1..P_H]", s.cat[2], w, D);
    module_spectra_free(&s);
}

static void check_low_rank(void) {
    enum { rank = 2 };
    Rng r = rng_init(4, 0);
    double U[Dk * rank], V[rank * D];
    for (int i = 0; i < Dk * rank; i++) U[i] = rng_normal(&r);
    for (int i = 0; i < rank * D; i++) V[i] = rng_normal(&r);
    float wq[Dk * D], wk[Dk * D]; // W_Q = U V has rank 2; W_K full
    for (int j = 0; j < Dk; j++)
        for (int c = 0; c < D; c++) {
            double t = 0;
            for (int q = 0; q < rank; q++) t += U[j * rank + q] * V[q * D + c];
            wq[j * D + c] = (float)t, wk[j * D + c] = (float)rng_normal(&r);
        }
    ModuleSpectra s;
    module_spectra(wq, wk, (QkShape){H, D, Dk, d}, &s);
    // every P_h = W_Q^h^T W_K^h lives in the row space of V: [P_1 .. P_H] has rank 2 too
    EXPECT(spectra_energy_rank(s.cat[0], s.catn[0], 0.999999) == rank, "W_Q concat rank %d",
           spectra_energy_rank(s.cat[0], s.catn[0], 0.999999));
    EXPECT(spectra_energy_rank(s.cat[2], D, 0.999999) == rank, "[P_1..P_H] rank %d",
           spectra_energy_rank(s.cat[2], D, 0.999999));
    EXPECT(spectra_energy_rank(s.cat[1], s.catn[1], 0.999999) == Dk, "W_K concat is full rank");
    module_spectra_free(&s);
}

static void check_energy_rank(void) {
    const double s2[4] = {4, 1, 0, 0}; // E = 0.8, 1, 1, 1
    EXPECT(spectra_energy_rank(s2, 4, 0.8) == 1, "E(1) = 0.8 reaches 0.8");
    EXPECT(spectra_energy_rank(s2, 4, 0.9) == 2, "0.9 needs 2");
    EXPECT(spectra_energy_rank(s2, 4, 1.0) == 2, "all energy in 2");
}

typedef struct Seen {
    int modules, references;
    bool reference_last;
} Seen;

static void seen(const ModuleAnalysis *a, bool reference, void *ctx) {
    Seen *s = ctx;
    s->modules += !reference, s->references += reference;
    s->reference_last = reference && s->modules == 3;
    for (int w = 0; w < ANALYZE_MATRICES; w++)
        for (int f = 1; f < ANALYZE_FRACTIONS; f++)
            EXPECT(a->head_rank[w][f - 1] <= a->head_rank[w][f] &&
                       a->cat_rank[w][f - 1] <= a->cat_rank[w][f] && a->cat_rank[w][0] >= 1,
                   "%s %s: ranks grow with the energy kept", a->name, analyze_matrix_names[w]);
    EXPECT(a->cp_error[0] >= 0 && a->cp_error[1] <= a->cp_error[0] + 1e-9,
           "%s: CP error %g at R 1, %g at R 4", a->name, a->cp_error[0], a->cp_error[1]);
}

static void check_analyze(void) {
    ModelConfig cfg = {0};
    cfg.d_model = D, cfg.heads = H, cfg.ffn = 16, cfg.enc_layers = 1, cfg.dec_layers = 1;
    cfg.norm = NORM_POST, cfg.attention = ATTENTION_CONCAT;
    ParamTable pt;
    params_init(&pt);
    model_declare(&pt, &cfg, 10);
    params_finalize(&pt);
    Rng r = rng_init(4, 0);
    for (size_t i = 0; i < pt.numel; i++) pt.param[i] = (float)rng_normal(&r);
    QkShape sh = analyze_shape(&cfg);
    EXPECT(sh.H == H && sh.D == D && sh.Dk == D && sh.d == D / H, "the shape of the model");
    const int ranks[2] = {1, 4};
    Seen s = {0};
    analyze_modules(&pt, sh, ranks, 2, seen, &s);
    EXPECT(s.modules == 3 && s.references == 1 && s.reference_last,
           "3 attention modules then the reference (%d, %d)", s.modules, s.references);
    params_free(&pt);
}

int main(void) {
    check_analyze();
    check_against_explicit();
    check_low_rank();
    check_energy_rank();
    return test_finish();
}
