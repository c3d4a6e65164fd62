/* test_determinism.c: a training step gives bit-identical gradients when repeated, and - with
 * our blocked GEMM, whose sums do not depend on how rows are split over threads - with 1, 2 and
 * 5 OpenMP threads (more than the cores: threads the OS pauses leave rows to the others), in both
 * attention modes with dropout on. The batch is large enough for every row loop to run on the
 * threads. */
#include <omp.h>
#include <string.h>

#include "model.h"
#include "rng.h"
#include "test_util.h"

static void step_grads(Model *m, const ModelBatch *b, int threads, float *out) {
    omp_set_num_threads(threads);
    Ctx c = {.gemm = gemm_lookup("blocked"), .seed = 42, .step = 7, .train = true};
    params_zero_grad(&m->params);
    LossStats st = {0};
    model_step(m, &c, b, &st, true, 0.1f);
    memcpy(out, m->params.grad, sizeof(float) * m->params.numel);
}

static void check_mode(AttentionMode mode) {
    ModelConfig cfg = {0};
    cfg.d_model = 64, cfg.heads = 4, cfg.ffn = 128, cfg.enc_layers = 2, cfg.dec_layers = 2;
    cfg.norm = NORM_POST, cfg.attention = mode, cfg.dk = 32, cfg.collab_bias = COLLAB_BIAS_CONTENT;
    cfg.dropout = cfg.attention_dropout = cfg.ffn_dropout = 0.1;
    Model m;
    model_build(&m, &cfg, 300);
    model_init_params(&m, 5);
    enum { B = 28, S = 17, T = 19 };  // 532 rows of 64: above OMP_MIN_WORK
    omp_set_num_threads(5);  // the most threads a step below runs: the plan sizes their tiles
    model_plan(&m, B * T, T);
    static int32_t src[B * S], tin[B * T], tout[B * T];
    static int slen[B], tlen[B];
    Rng r = rng_init(3, 0);
    for (int b = 0; b < B; b++) {
        slen[b] = 1 + (int)rng_below(&r, S), tlen[b] = 1 + (int)rng_below(&r, T);
        for (int t = 0; t < S; t++) src[b * S + t] = t < slen[b] ? 4 + (int)rng_below(&r, 296) : 0;
        for (int t = 0; t < T; t++) {
            tin[b * T + t] = t < tlen[b] ? 4 + (int)rng_below(&r, 296) : 0;
            tout[b * T + t] = t < tlen[b] ? 4 + (int)rng_below(&r, 296) : 0;
        }
    }
    ModelBatch b = {B, S, T, src, tin, tout, slen, tlen};
    size_t n = m.params.numel;
    float *g1 = malloc(4 * n), *g1b = malloc(4 * n), *gt = malloc(4 * n);
    step_grads(&m, &b, 1, g1);
    step_grads(&m, &b, 1, g1b);
    EXPECT(!memcmp(g1, g1b, 4 * n), "%s: a repeated step gives different gradients",
           attention_mode_name(mode));
    for (int threads = 2; threads <= 5; threads += 3) {
        step_grads(&m, &b, threads, gt);
        long diff = 0;
        for (size_t i = 0; i < n; i++) diff += memcmp(&g1[i], &gt[i], 4) != 0;
        EXPECT(diff == 0, "%s: %ld gradient values differ between 1 and %d threads",
               attention_mode_name(mode), diff, threads);
    }
    free(g1), free(g1b), free(gt);
    model_free(&m);
}

int main(void) {
    check_mode(ATTENTION_CONCAT);
    check_mode(ATTENTION_COLLAB);
    return test_finish();
}
