/* test_cp.c: the CP decomposition and the concat -> collab conversion.
 *  - a tensor built from known rank-R factors is recovered (error ~ 0);
 *  - the reported error equals ||T - [[Wq, M, Wk]]|| / ||T|| computed on the explicit tensor;
 *  - the error of random attention weights does not grow with R;
 *  - reparam with R = D_k gives a collab model whose logits equal the concat model's, and with
 *    R < D_k a model close to it. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "cp_als.h"
#include "model.h"
#include "reparam.h"
#include "rng.h"
#include "status.h"
#include "test_util.h"

/* ||T - [[Wq, M, Wk]]|| / ||T|| on the explicit D x H x D tensor. */
static double explicit_error(const float *wq, const float *wk, int H, int d, int D, int R,
                             const double *Wq, const double *M, const double *Wk) {
    double diff = 0, norm = 0;
    for (int q = 0; q < D; q++)
        for (int h = 0; h < H; h++)
            for (int k = 0; k < D; k++) {
                double t = 0, c = 0;
                for (int j = h * d; j < (h + 1) * d; j++) t += (double)wq[j * D + q] * wk[j * D + k];
                for (int r = 0; r < R; r++) c += Wq[q * R + r] * M[h * R + r] * Wk[k * R + r];
                diff += (t - c) * (t - c), norm += t * t;
            }
    return sqrt(diff / norm);
}

static void check_recovery(void) {
    enum { H = 4, R = 6, D = 20 };
    Rng r = rng_init(1, 0);
    double Wq0[D * R], M0[H * R], Wk0[D * R];
    for (int i = 0; i < D * R; i++) Wq0[i] = rng_normal(&r), Wk0[i] = rng_normal(&r);
    for (int i = 0; i < H * R; i++) M0[i] = rng_normal(&r);
    // head h, column c: W_Q = Wq0[:, c] * M0[h, c], W_K = Wk0[:, c]  =>  T is exactly rank R
    float wq[H * R * D], wk[H * R * D];
    for (int h = 0; h < H; h++)
        for (int c = 0; c < R; c++)
            for (int j = 0; j < D; j++) {
                wq[(h * R + c) * D + j] = (float)(Wq0[j * R + c] * M0[h * R + c]);
                wk[(h * R + c) * D + j] = (float)Wk0[j * R + c];
            }
    double Wq[D * R], M[H * R], Wk[D * R];
    CpOptions o = {R, 3000, 1e-12, 3};
    CpResult res = cp_als(wq, wk, H, R, D, &o, Wq, M, Wk);
    EXPECT(res.rel_error < 1e-4, "rank-%d tensor: relative error %g after %d sweeps", R,
           res.rel_error, res.iterations);
    double direct = explicit_error(wq, wk, H, R, D, R, Wq, M, Wk);
    EXPECT(fabs(direct - res.rel_error) < 1e-6, "reported error %g, explicit %g", res.rel_error, direct);
}

static void check_monotone(void) {
    enum { H = 4, d = 4, D = 24 };
    Rng r = rng_init(2, 0);
    float wq[H * d * D], wk[H * d * D];
    for (int i = 0; i < H * d * D; i++) wq[i] = (float)rng_normal(&r), wk[i] = (float)rng_normal(&r);
    double prev = INFINITY;
    const int ranks[] = {1, 2, 4, 8, 12, 16};
    for (int i = 0; i < 6; i++) {
        int R = ranks[i];
        double *Wq = malloc(sizeof(double) * D * R), *M = malloc(sizeof(double) * H * R),
               *Wk = malloc(sizeof(double) * D * R);
        CpOptions o = {R, 400, 1e-9, 5};
        CpResult res = cp_als(wq, wk, H, d, D, &o, Wq, M, Wk);
        double direct = explicit_error(wq, wk, H, d, D, R, Wq, M, Wk);
        EXPECT(fabs(direct - res.rel_error) < 1e-6, "R=%d: reported %g, explicit %g", R,
               res.rel_error, direct);
        EXPECT(res.rel_error <= prev + 1e-3, "R=%d: error %g above the error %g of a smaller rank",
               R, res.rel_error, prev);
        prev = res.rel_error;
        free(Wq), free(M), free(Wk);
    }
    EXPECT(prev < 0.9, "the largest rank still explains little (error %g)", prev);
}

/* Logits of a model on a fixed batch. */
static void logits(Model *m, float *out) {
    static const int32_t src[] = {5, 6, 7, 3, 8, 9, 3, 0}, tin[] = {2, 5, 6, 2, 7, 0},
                         tout[] = {5, 6, 3, 7, 3, 0};
    static const int slen[] = {4, 3}, tlen[] = {3, 2};
    ModelBatch b = {2, 4, 3, src, tin, tout, slen, tlen};
    Ctx c = {.gemm = gemm_lookup("blocked")};
    model_plan(m, 8, 4);
    model_forward(m, &c, &b);
    model_logits(m, &c, out);
}

static void check_reparam(int R, double tol) {
    Config src, dst;
    config_init(&src);
    const char *yaml = "model: {d_model: 16, heads: 4, ffn: 32, enc_layers: 1, dec_layers: 1, "
                       "attention: concat, dk: 8}\n";
    CHECK(config_load_string(&src, yaml, strlen(yaml), "t") == 0, "%s", status_message());
    reparam_config(&dst, &src, R);
    Model a, b;
    model_build(&a, &src.model, 12);
    model_init_params(&a, 4);
    model_build(&b, &dst.model, 12);
    CpOptions o = {R, 2000, 1e-10, 1};
    double worst = reparam_params(&b.params, &a.params, &src.model, &o, NULL, NULL);
    float la[6 * 12], lb[6 * 12];
    logits(&a, la), logits(&b, lb);
    double diff = 0, scale = 0;
    // comparisons, not fmax: GCC 12.2 for arm64 crashes vectorizing fmax of widened floats
    for (int i = 0; i < 6 * 12; i++) {
        double d = fabs(la[i] - lb[i]), s = fabs(la[i]);
        if (d > diff) diff = d;
        if (s > scale) scale = s;
    }
    EXPECT(diff <= tol * scale, "reparam R=%d: logits differ by %g (scale %g; CP error %g)", R, diff,
           scale, worst);
    if (R == 8) EXPECT(worst == 0.0, "R = D_k is an exact copy");
    model_free(&a), model_free(&b);
    config_free(&src), config_free(&dst);
}

int main(void) {
    check_recovery();
    check_monotone();
    check_reparam(8, 1e-5);   // R = D_k: the same function
    check_reparam(6, 0.5);    // a lower rank: close, not equal
    return test_finish();
}
