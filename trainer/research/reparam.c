/* reparam.c: concat -> collab conversion of a parameter table (reparam.h). */
#include "reparam.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model.h"
#include "status.h"

void reparam_config(Config *dst, const Config *src, int R) {
    char *text = config_dump_string(src);
    config_init(dst);
    CHECK(config_load_string(dst, text, strlen(text), "source checkpoint") == 0, "%s",
          status_message());
    char set[64];
    snprintf(set, sizeof set, "model.dk=%d", R);
    CHECK(config_set(dst, "model.attention=collab") == 0 && config_set(dst, set) == 0 &&
              config_set(dst, "model.collab_bias=content") == 0,
          "%s", status_message());
    free(text);
}

static const float *src_view(const ParamTable *pt, const char *prefix, const char *leaf) {
    char n[160];
    snprintf(n, sizeof n, "%s.%s", prefix, leaf);
    return params_view(pt, n, pt->param);
}

static float *dst_view(ParamTable *pt, const char *prefix, const char *leaf) {
    char n[160];
    snprintf(n, sizeof n, "%s.%s", prefix, leaf);
    return params_view(pt, n, pt->param);
}

/* One attention module: w_q, w_k, mix, u of dst from w_q, b_q, w_k of src. */
static CpResult convert_module(ParamTable *dst, const ParamTable *src, const char *prefix, int H,
                               int d, int D, const CpOptions *o) {
    const int Dk = H * d, R = o->rank;
    const float *wq = src_view(src, prefix, "w_q"), *bq = src_view(src, prefix, "b_q"),
                *wk = src_view(src, prefix, "w_k");
    float *nq = dst_view(dst, prefix, "w_q"), *nk = dst_view(dst, prefix, "w_k"),
          *mix = dst_view(dst, prefix, "mix"), *u = dst_view(dst, prefix, "u");
    for (int h = 0; h < H; h++)  // u_h = W_K^h b_Q^h
        for (int j = 0; j < D; j++) {
            double s = 0;
            for (int c = h * d; c < (h + 1) * d; c++) s += (double)wk[(size_t)c * D + j] * bq[c];
            u[h * D + j] = (float)s;
        }
    CpResult res = {0.0, 0};
    if (R == Dk) {  // exact: the same projections, head h mixes its own slice
        memcpy(nq, wq, sizeof(float) * Dk * D);
        memcpy(nk, wk, sizeof(float) * Dk * D);
        for (int h = 0; h < H; h++)
            for (int r = 0; r < R; r++) mix[h * R + r] = r / d == h ? 1.0f : 0.0f;
        return res;
    }
    double *Wq = xmalloc(sizeof(double) * D * R), *M = xmalloc(sizeof(double) * H * R),
           *Wk = xmalloc(sizeof(double) * D * R);
    res = cp_als(wq, wk, H, d, D, o, Wq, M, Wk);
    for (int r = 0; r < R; r++)  // (out, in) layout: row r is column r of the paper's factor
        for (int j = 0; j < D; j++) nq[r * D + j] = (float)Wq[j * R + r], nk[r * D + j] = (float)Wk[j * R + r];
    for (int i = 0; i < H * R; i++) mix[i] = (float)M[i];
    free(Wq), free(M), free(Wk);
    return res;
}

double reparam_params(ParamTable *dst, const ParamTable *src, const ModelConfig *concat,
                      const CpOptions *o,
                      void (*report)(const char *module, const CpResult *r, void *ctx), void *ctx) {
    CHECK(concat->attention == ATTENTION_CONCAT,
          "the source model has %s attention; reparam "
          "converts concat attention",
          attention_mode_name(concat->attention));
    const int H = concat->heads, D = concat->d_model, Dk = config_model_dk(concat), d = Dk / H;
    CHECK(o->rank >= 1, "the collab width must be positive");
    double worst = 0;
    for (int i = 0; i < dst->count; i++) {  // everything that is not Q/K-side is copied by name
        const ParamInfo *p = &dst->info[i];
        const char *leaf = strrchr(p->name, '.') + 1;
        bool attention_qk = strstr(p->name, "_attn.") &&
                            (!strcmp(leaf, "w_q") || !strcmp(leaf, "w_k") || !strcmp(leaf, "mix") ||
                             !strcmp(leaf, "u"));
        if (attention_qk) continue;
        int k = params_find(src, p->name);
        CHECK(k >= 0 && src->info[k].numel == p->numel, "the source model has no %s", p->name);
        memcpy(dst->param + p->offset, src->param + src->info[k].offset, sizeof(float) * p->numel);
    }
    for (int i = 0; i < dst->count; i++) {
        const char *name = dst->info[i].name, *leaf = strrchr(name, '.') + 1;
        if (!strstr(name, "_attn.") || strcmp(leaf, "mix")) continue;
        char prefix[96];
        snprintf(prefix, sizeof prefix, "%.*s", (int)(leaf - 1 - name), name);
        CpResult r = convert_module(dst, src, prefix, H, d, D, o);
        if (report) report(prefix, &r, ctx);
        worst = r.rel_error > worst ? r.rel_error : worst;
    }
    return worst;
}

double reparam_checkpoint(const CheckpointParams *src, const CpOptions *o, const char *out,
                          void (*report)(const char *module, const CpResult *r, void *ctx),
                          void *ctx, size_t *params) {
    Config dst_cfg;
    reparam_config(&dst_cfg, &src->cfg, o->rank);
    ParamTable dst;
    params_init(&dst);
    model_declare(&dst, &dst_cfg.model, src->ck.tensors[0].rows);
    params_finalize(&dst);
    double worst = reparam_params(&dst, &src->pt, &src->cfg.model, o, report, ctx);
    char *text = config_dump_string(&dst_cfg);
    CheckpointData d = {text, src->ck.spm, src->ck.spm_len, &dst, false, NULL, NULL};
    checkpoint_save(out, &d);
    *params = params_count(&dst);
    free(text);
    params_free(&dst);
    config_free(&dst_cfg);
    return worst;
}
