/* test_train.c: pieces of the training loop.
 *  - the learning-rate schedules against their formulas (fairseq inverse_sqrt with linear
 *    warmup from warmup_init_lr, Vaswani's noam, constant);
 *  - gradient accumulation: the gradient of two batches summed and divided by their total
 *    target tokens equals the gradient of one batch holding both (the update is normalized once);
 *  - clipping scales to the requested norm and leaves smaller gradients alone;
 *  - the moving average of the parameters against its formula, computed in double: its decay
 *    starts low ((1+u)/(10+u)) and is capped by train.ema_decay. */
#include <math.h>
#include <string.h>

#include "arena.h"
#include "config.h"
#include "model.h"
#include "optimizer.h"
#include "rng.h"
#include "test_util.h"

static void check_schedules(void) {
    Config c;
    config_init(&c);
    TrainConfig *t = &c.train;
    t->lr = 7e-4, t->warmup = 4000, t->warmup_init_lr = 1e-7;
    t->schedule = SCHEDULE_INVERSE_SQRT;
    const long steps[] = {1, 2, 1000, 3999, 4000, 4001, 16000, 100000};
    for (int i = 0; i < 8; i++) {
        double s = (double)steps[i], want = s < 4000 ? 1e-7 + (7e-4 - 1e-7) * s / 4000
                                                     : 7e-4 * sqrt(4000.0) / sqrt(s);
        double got = schedule_lr(t, 512, steps[i]);
        EXPECT(fabs(got - want) <= 1e-15 + 1e-12 * want, "inverse_sqrt(%ld) = %.10g, want %.10g",
               steps[i], got, want);
    }
    EXPECT(fabs(schedule_lr(t, 512, 4000) - 7e-4) < 1e-15, "inverse_sqrt peaks at lr");
    t->schedule = SCHEDULE_NOAM, t->lr = 2.0;
    for (int i = 0; i < 8; i++) {
        double s = (double)steps[i];
        double want = 2.0 * pow(512, -0.5) * fmin(pow(s, -0.5), s * pow(4000, -1.5));
        double got = schedule_lr(t, 512, steps[i]);
        EXPECT(fabs(got - want) <= 1e-12 * want, "noam(%ld) = %.10g, want %.10g", steps[i], got, want);
    }
    t->schedule = SCHEDULE_CONSTANT;
    EXPECT(schedule_lr(t, 512, 77) == 2.0, "constant");
    config_free(&c);
}

typedef struct Sentences {
    int n;
    int32_t src[8][12], tgt[8][12];
    int slen[8], tlen[8];  // words (without EOS / BOS)
} Sentences;

/* A padded batch of sentences first .. first+n-1 (lengths incl. EOS / BOS). */
static void make_batch(const Sentences *s, int first, int n, int32_t *src, int32_t *tin,
                       int32_t *tout, int *sl, int *tl, ModelBatch *b) {
    int S = 1, T = 1;
    for (int i = first; i < first + n; i++) {
        S = s->slen[i] + 1 > S ? s->slen[i] + 1 : S;
        T = s->tlen[i] + 1 > T ? s->tlen[i] + 1 : T;
    }
    memset(src, 0, sizeof(int32_t) * n * S), memset(tin, 0, sizeof(int32_t) * n * T);
    memset(tout, 0, sizeof(int32_t) * n * T);
    for (int k = 0; k < n; k++) {
        const int i = first + k;
        memcpy(src + k * S, s->src[i], sizeof(int32_t) * s->slen[i]);
        src[k * S + s->slen[i]] = TOKEN_EOS;
        tin[k * T] = TOKEN_BOS;
        memcpy(tin + k * T + 1, s->tgt[i], sizeof(int32_t) * s->tlen[i]);
        memcpy(tout + k * T, s->tgt[i], sizeof(int32_t) * s->tlen[i]);
        tout[k * T + s->tlen[i]] = TOKEN_EOS;
        sl[k] = s->slen[i] + 1, tl[k] = s->tlen[i] + 1;
    }
    *b = (ModelBatch){n, S, T, src, tin, tout, sl, tl};
}

static void check_accumulation(void) {
    ModelConfig cfg = {0};
    cfg.d_model = 32, cfg.heads = 4, cfg.ffn = 64, cfg.enc_layers = 2, cfg.dec_layers = 2;
    cfg.norm = NORM_POST, cfg.attention = ATTENTION_COLLAB, cfg.dk = 16;
    cfg.collab_bias = COLLAB_BIAS_CONTENT;
    Model m;
    model_build(&m, &cfg, 40);
    model_init_params(&m, 2);
    model_plan(&m, 8 * 13, 13);
    Sentences s = {.n = 8};
    Rng r = rng_init(6, 0);
    for (int i = 0; i < 8; i++) {
        s.slen[i] = 2 + (int)rng_below(&r, 10), s.tlen[i] = 1 + (int)rng_below(&r, 11);
        for (int j = 0; j < 12; j++) s.src[i][j] = 4 + (int32_t)rng_below(&r, 36), s.tgt[i][j] = 4 + (int32_t)rng_below(&r, 36);
    }
    int32_t src[8 * 13], tin[8 * 13], tout[8 * 13];
    int sl[8], tl[8];
    Ctx c = {.gemm = gemm_lookup("blocked"), .seed = 1};
    ModelBatch b;
    size_t n = m.params.numel;
    // two batches of 3 and 5 sentences, accumulated
    params_zero_grad(&m.params);
    LossStats acc = {0};
    make_batch(&s, 0, 3, src, tin, tout, sl, tl, &b);
    model_step(&m, &c, &b, &acc, true, 0.1f);
    make_batch(&s, 3, 5, src, tin, tout, sl, tl, &b);
    model_step(&m, &c, &b, &acc, true, 0.1f);
    grads_scale(&m.params, 1.0f / (float)acc.ntok);
    float *g_acc = malloc(sizeof(float) * n);
    memcpy(g_acc, m.params.grad, sizeof(float) * n);
    // one batch of all 8
    params_zero_grad(&m.params);
    LossStats one = {0};
    make_batch(&s, 0, 8, src, tin, tout, sl, tl, &b);
    model_step(&m, &c, &b, &one, true, 0.1f);
    grads_scale(&m.params, 1.0f / (float)one.ntok);
    EXPECT(acc.ntok == one.ntok, "target tokens %ld vs %ld", acc.ntok, one.ntok);
    EXPECT(fabs(acc.loss - one.loss) <= 1e-4 * fabs(one.loss), "loss %.7g vs %.7g", acc.loss, one.loss);
    check_close("accumulated gradient", g_acc, m.params.grad, (long)n, 1e-6, 1e-4);
    free(g_acc);
    // the memory plan counts the loss's packed copies of the embedding, allocated by the steps
    ModelMemory mem = model_memory(&m);
    size_t packed = (m.w.emb_packed[0].cap + m.w.emb_packed[1].cap) * sizeof(float);
    EXPECT(packed > 0 && m.work.cap + packed <= mem.work,
           "packed embedding %zu bytes beside a workspace of %zu, planned %zu", packed, m.work.cap,
           mem.work);

    // clipping
    params_zero_grad(&m.params);
    for (int t = 0; t < m.params.count; t++)
        for (size_t i = 0; i < m.params.info[t].numel; i++) m.params.grad[m.params.info[t].offset + i] = 0.01f;
    double norm = params_grad_norm(&m.params), want = 0.01 * sqrt((double)params_count(&m.params));
    EXPECT(fabs(norm - want) < 1e-6 * want, "gradient norm %g, want %g", norm, want);
    EXPECT(grads_clip(&m.params, 2 * norm) == norm && m.params.grad[0] == 0.01f,
           "a gradient below the clip norm is left alone");
    grads_clip(&m.params, 0.5);
    EXPECT(fabs(params_grad_norm(&m.params) - 0.5) < 1e-5, "clipped to norm %g",
           params_grad_norm(&m.params));
    model_free(&m);
}

static void check_moving_average(void) {
    EXPECT(fabs(ema_decay_at(0.999, 1) - 2.0 / 11.0) < 1e-15 && ema_decay_at(0.999, 50000) == 0.999,
           "the decay: (1+u)/(10+u), capped at ema_decay");
    ParamTable pt;
    params_init(&pt);
    params_declare(&pt, "w", 3, 5, INIT_ZERO, 0, true);
    params_declare(&pt, "b", 7, 0, INIT_ZERO, 0, false);
    params_finalize(&pt);
    const long n = (long)pt.numel, updates = 300;
    float *avg = aligned_alloc_zeroed(sizeof(float) * pt.numel);  // (numel)
    double *want = calloc((size_t)n, sizeof *want);                // (numel)
    Rng r = rng_init(9, 0);
    double worst = 0;
    for (long u = 1; u <= updates; u++) {
        for (long i = 0; i < n; i++) pt.param[i] = (float)(rng_normal(&r) + 0.01 * (double)u);
        if (u == 1) {
            memcpy(avg, pt.param, sizeof(float) * pt.numel);  // as at the start of a run
            for (long i = 0; i < n; i++) want[i] = pt.param[i];
        }
        ema_update(&pt, avg, 0.95, u);
        double d = fmin(0.95, (1.0 + (double)u) / (10.0 + (double)u));
        for (long i = 0; i < n; i++) {
            want[i] = d * want[i] + (1 - d) * pt.param[i];
            double e = fabs(avg[i] - want[i]);
            if (e > worst) worst = e;  // not fmax (see test_gradcheck's max_abs_diff)
        }
    }
    EXPECT(worst < 1e-5, "the moving average is off its formula by up to %g", worst);
    free(want), aligned_free(avg);
    params_free(&pt);
}

int main(void) {
    check_schedules();
    check_accumulation();
    check_moving_average();
    return test_finish();
}
