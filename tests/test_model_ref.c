/* test_model_ref.c: the whole model against PyTorch (fixtures of scripts/make_reference.py), in
 * every attention mode and norm order: parameters are loaded by name, then the logits, the
 * label-smoothed loss and NLL, every gradient by name, and the losses of 10 AdamW steps with
 * gradient clipping must match to 1e-5 absolute + 1e-4 relative (fp32). */
#include <string.h>

#include "fixture.h"
#include "model.h"
#include "optimizer.h"
#include "test_util.h"

static const float LS = 0.1f;

static void check_variant(const char *tag, AttentionMode mode, CollabBias bias,
                          NormPlacement norm) {
    char path[512];
    snprintf(path, sizeof path, "%s/tests/data/reference-%s.bin", NMT_SOURCE_DIR, tag);
    Fixture fx;
    if (fixture_load(&fx, path)) {
        EXPECT(0, "%s: cannot load fixture", tag);
        return;
    }
    const int32_t *cfgv = fixture_find(&fx, "config")->data;
    ModelConfig cfg = {0};
    cfg.d_model = cfgv[0], cfg.heads = cfgv[1], cfg.ffn = cfgv[2], cfg.enc_layers = cfgv[3];
    cfg.dec_layers = cfgv[4], cfg.dk = cfgv[6], cfg.attention = mode, cfg.collab_bias = bias;
    cfg.norm = norm;
    Model m;
    model_build(&m, &cfg, cfgv[5]);
    // parameters by name: the fixture holds exactly the registry's tensors
    int loaded = 0;
    for (int i = 0; i < fx.count; i++) {
        if (strncmp(fx.rec[i].name, "param/", 6)) continue;
        int k = params_find(&m.params, fx.rec[i].name + 6);
        EXPECT(k >= 0, "%s: fixture parameter %s is not in the model", tag, fx.rec[i].name);
        if (k < 0) continue;
        EXPECT((long)m.params.info[k].numel == fx.rec[i].numel, "%s: %s shape", tag, fx.rec[i].name);
        memcpy(m.params.param + m.params.info[k].offset, fx.rec[i].data, 4 * fx.rec[i].numel);
        loaded++;
    }
    EXPECT(loaded == m.params.count, "%s: %d of %d parameters in the fixture", tag, loaded,
           m.params.count);

    const FixtureRecord *src = fixture_find(&fx, "batch/src"), *tin = fixture_find(&fx, "batch/tgt_in");
    ModelBatch b = {(int)src->dims[0], (int)src->dims[1], (int)tin->dims[1], src->data, tin->data,
                    fixture_find(&fx, "batch/tgt_out")->data, fixture_find(&fx, "batch/src_len")->data,
                    fixture_find(&fx, "batch/tgt_len")->data};
    model_plan(&m, b.B * (b.S > b.T ? b.S : b.T), b.S > b.T ? b.S : b.T);
    Ctx c = {.gemm = gemm_select("auto"), .seed = 1};
    params_zero_grad(&m.params);
    LossStats st = {0};
    model_step(&m, &c, &b, &st, true, LS);

    char label[160];
    float *logits = malloc(sizeof(float) * b.B * b.T * m.V);
    model_logits(&m, &c, logits);
    snprintf(label, sizeof label, "%s logits", tag);
    check_close(label, logits, fixture_find(&fx, "logits")->data, (long)b.B * b.T * m.V, 1e-5, 1e-4);
    const float *want = fixture_find(&fx, "loss")->data;
    EXPECT(fabs(st.loss - want[0]) <= 1e-5 + 1e-4 * fabs(want[0]) &&
               fabs(st.nll - want[1]) <= 1e-5 + 1e-4 * fabs(want[1]) && st.ntok == (long)want[2],
           "%s: loss %.7g nll %.7g tokens %ld, PyTorch %.7g %.7g %g", tag, st.loss, st.nll,
           st.ntok, want[0], want[1], want[2]);
    for (int i = 0; i < m.params.count; i++) {
        char name[128];
        snprintf(name, sizeof name, "grad/%s", m.params.info[i].name);
        const FixtureRecord *g = fixture_find(&fx, name);
        EXPECT(g != NULL, "%s: no %s in the fixture", tag, name);
        if (!g) continue;
        snprintf(label, sizeof label, "%s %s", tag, name);
        check_close(label, m.params.grad + m.params.info[i].offset, g->data, g->numel, 1e-5, 1e-4);
    }

    // 10 AdamW steps on the same batch, gradient of the mean loss clipped to norm 1
    const FixtureRecord *losses = fixture_find(&fx, "adam_losses");
    AdamHyper h = {0.9, 0.98, 1e-9, 0.01};
    for (int s = 0; s < losses->numel; s++) {
        params_zero_grad(&m.params);
        LossStats sst = {0};
        model_step(&m, &c, &b, &sst, true, LS);
        double mean = sst.loss / sst.ntok, ref = ((const float *)losses->data)[s];
        EXPECT(fabs(mean - ref) <= 1e-5 + 1e-4 * fabs(ref), "%s: AdamW step %d loss %.7g, PyTorch %.7g",
               tag, s + 1, mean, ref);
        grads_scale(&m.params, 1.0f / (float)sst.ntok);
        grads_clip(&m.params, 1.0);
        adam_step(&m.params, &h, 2e-3, s + 1);
    }
    free(logits);
    model_free(&m);
    fixture_free(&fx);
}

int main(void) {
    check_variant("concat-post", ATTENTION_CONCAT, COLLAB_BIAS_CONTENT, NORM_POST);
    check_variant("concat-pre", ATTENTION_CONCAT, COLLAB_BIAS_CONTENT, NORM_PRE);
    check_variant("collab-content-post", ATTENTION_COLLAB, COLLAB_BIAS_CONTENT, NORM_POST);
    check_variant("collab-content-pre", ATTENTION_COLLAB, COLLAB_BIAS_CONTENT, NORM_PRE);
    check_variant("collab-query-post", ATTENTION_COLLAB, COLLAB_BIAS_QUERY, NORM_POST);
    check_variant("collab-query-pre", ATTENTION_COLLAB, COLLAB_BIAS_QUERY, NORM_PRE);
    return test_finish();
}
