/* attn_collab.c: AttnImpl "collab", collaborative multi-head attention (Cordonnier, Loukas and
 * Jaggi 2020; collab-attention.md §2.5). All heads share Q~ (B, Tq, W) and K~ (B, kvs, W),
 * W = D~k; head h mixes the queries with m_h, row h of M (H, W):
 *   S_h = scale * (Q~ ∘ 1 m_h^T) K~^T  [+ scale * 1 (Y u_h)^T]        scale = 1/sqrt(D/H)
 * Mixing on the query side means a decoder cache holds K~ only. Biases: either the content bias
 * U (H, D) on the key side (paper/GLUE form), or b~_q and b~_k (fairseq form; b~_k cancels in
 * the softmax but is kept so parameter counts match §3.3).
 * The fused core of attention.c scores head h with the mixed queries Q~ ∘ 1 m_h against all W
 * columns of K~. Mixing gradients are summed per sentence, then over sentences in order, so they
 * do not depend on the number of threads. */
#include <math.h>
#include <stdio.h>

#include "attention.h"

static void collab_declare(ParamTable *pt, const char *prefix, const AttnDims *d,
                           const ModelConfig *cfg) {
    char n[64];
    float gain = d->W == d->D ? 1.0f / sqrtf(2.0f) : 1.0f;  // fairseq's qkv_same_dim rule
    float bound = gain * sqrtf(6.0f / (float)(d->D + d->W)), bias = 1.0f / sqrtf((float)d->D);
    bool content = cfg->collab_bias == COLLAB_BIAS_CONTENT;
    snprintf(n, sizeof n, "%s.w_q", prefix), params_declare(pt, n, d->W, d->D, INIT_UNIFORM, bound, true);
    if (!content) snprintf(n, sizeof n, "%s.b_q", prefix), params_declare(pt, n, d->W, 0, INIT_UNIFORM, bias, false);
    snprintf(n, sizeof n, "%s.w_k", prefix), params_declare(pt, n, d->W, d->D, INIT_UNIFORM, bound, true);
    if (!content) snprintf(n, sizeof n, "%s.b_k", prefix), params_declare(pt, n, d->W, 0, INIT_UNIFORM, bias, false);
    snprintf(n, sizeof n, "%s.mix", prefix);
    params_declare(pt, n, d->H, d->W, INIT_UNIFORM, sqrtf(6.0f / (float)(d->H + d->W)), false);
    if (content) snprintf(n, sizeof n, "%s.u", prefix), params_declare(pt, n, d->H, d->D, INIT_UNIFORM, bias, false);
}

static float *optional_view(const ParamTable *pt, const char *prefix, const char *leaf,
                            float *base) {
    char n[64];
    snprintf(n, sizeof n, "%s.%s", prefix, leaf);
    return params_find(pt, n) >= 0 ? params_view(pt, n, base) : NULL;
}

static void collab_bind(AttnParams *p, const ParamTable *pt, const char *prefix, float *base) {
    char n[64];
    snprintf(n, sizeof n, "%s.w_q", prefix), p->w_q = params_view(pt, n, base);
    snprintf(n, sizeof n, "%s.w_k", prefix), p->w_k = params_view(pt, n, base);
    snprintf(n, sizeof n, "%s.mix", prefix), p->mix = params_view(pt, n, base);
    p->b_q = optional_view(pt, prefix, "b_q", base);
    p->b_k = optional_view(pt, prefix, "b_k", base);
    p->u = optional_view(pt, prefix, "u", base);
}

/* cs (Nk, H) = Y U^T: the content score of every key for every head. */
static void collab_kv_extra_forward(const Ctx *c, const AttnDims *d, const AttnParams *p,
                                    float *cs, const float *xkv, int Nk) {
    if (p->u) linear_forward(c, cs, xkv, p->u, NULL, Nk, d->D, d->H);
}

static void collab_kv_extra_backward(const Ctx *c, const AttnDims *d, const AttnParams *p,
                                     const AttnParams *g, float *dxkv, const float *dcs,
                                     const float *xkv, int Nk) {
    if (p->u) linear_backward(c, dxkv, 1.0f, g->u, NULL, dcs, xkv, p->u, Nk, d->D, d->H);
}

/* The content score of a key, y U^T: (1, D) x (D, H). */
static double collab_kv_extra_flops(const AttnDims *d, const AttnParams *p) {
    return p->u ? 2.0 * d->D * d->H : 0.0;
}

/* Every head scores all W shared columns. */
static void collab_head_span(const AttnDims *d, int h, int *col, int *width) {
    (void)h;
    *col = 0, *width = d->W;
}

/* qm (n, W): row i = q_i ∘ m_h */
static const float *collab_head_queries(const AttnDims *d, const AttnParams *p, float *qm,
                                        const float *q, int n, int h) {
    const int W = d->W;
    const float *mh = p->mix + (size_t)h * W;
    for (int i = 0; i < n; i++) {
        float *dst = qm + (size_t)i * W;
        const float *qi = q + (size_t)i * W;
        for (int r = 0; r < W; r++) dst[r] = qi[r] * mh[r];
    }
    return qm;
}

/* dq_i += gq_i ∘ m_h ;  the sentence's mixing gradient (H, W): row h += gq_i ∘ q_i */
static void collab_head_queries_backward(const AttnDims *d, const AttnParams *p, float *dq,
                                         float *sent, const float *gq, const float *q, int n,
                                         int h) {
    const int W = d->W;
    const float *mh = p->mix + (size_t)h * W;
    float *dmh = sent + (size_t)h * W;
    for (int i = 0; i < n; i++) {
        const float *gi = gq + (size_t)i * W, *qi = q + (size_t)i * W;
        float *dqi = dq + (size_t)i * W;
        for (int r = 0; r < W; r++) {
            dqi[r] += gi[r] * mh[r];
            dmh[r] += gi[r] * qi[r];
        }
    }
}

static size_t collab_sentence_floats(const AttnDims *d) { return (size_t)d->H * d->W; }

/* g->mix (H, W) += the sentences' mixing gradients, summed in sentence order. */
static void collab_sentence_grads_finish(const AttnDims *d, const AttnParams *g,
                                         const float *sent, int B) {
    const int HW = d->H * d->W;
#pragma omp parallel for schedule(static) if ((long)B * HW >= OMP_MIN_WORK)
    for (int e = 0; e < HW; e++) {
        float s = 0.0f;
        for (int b = 0; b < B; b++) s += sent[(size_t)b * HW + e];
        g->mix[e] += s;
    }
}

const AttnImpl attn_collab = {
    .declare = collab_declare,
    .bind = collab_bind,
    .kv_extra_forward = collab_kv_extra_forward,
    .kv_extra_backward = collab_kv_extra_backward,
    .kv_extra_flops = collab_kv_extra_flops,
    .head_span = collab_head_span,
    .head_queries = collab_head_queries,
    .head_queries_backward = collab_head_queries_backward,
    .sentence_floats = collab_sentence_floats,
    .sentence_grads_finish = collab_sentence_grads_finish,
};
