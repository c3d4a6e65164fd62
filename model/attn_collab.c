/* attn_collab.c: AttnImpl "collab", collaborative multi-head attention (Cordonnier, Loukas and
 * Jaggi 2020; collab-attention.md §2.5). All heads share Q~ (B, Tq, W) and K~ (B, kvs, W),
 * W = D~k; head h mixes the queries with m_h, row h of M (H, W):
 *   S_h = scale * (Q~ ∘ 1 m_h^T) K~^T  [+ scale * 1 (Y u_h)^T]        scale = 1/sqrt(D/H)
 * Mixing on the query side means a decoder cache holds K~ only. Biases: either the content bias
 * U (H, D) on the key side (paper/GLUE form), or b~_q and b~_k (fairseq form; b~_k cancels in
 * the softmax but is kept so parameter counts match §3.3).
 * Per sentence, the H mixed query blocks are stacked into one (H*Tq, W) matrix so each sentence
 * is one GEMM forward and two backward. Mixing gradients are summed per sentence, then over
 * sentences in order, so they do not depend on the number of threads. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"

static void collab_declare(ParamTable *pt, const char *prefix, const AttnDims *d,
                           const ModelConfig *cfg) {
    char n[64];
    float gain = d->W == d->D ? 1.0f / sqrtf(2.0f) : 1.0f;  // fairseq's qkv_same_dim rule
    float bound = gain * sqrtf(6.0f / (float)(d->D + d->W)), bias = 1.0f / sqrtf((float)d->D);
    bool content = !strcmp(cfg->collab_bias, "content");
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
    if (p->u) linear_backward(c, dxkv, g->u, NULL, dcs, xkv, p->u, Nk, d->D, d->H);
}

/* Every head scores the full width W: (H*Tq, W) x (W, Tk) per sentence. The query mixing is
 * elementwise and not counted. */
static double collab_scores_flops(const AttnDims *d, int B, int Tq, int Tk) {
    return 2.0 * B * d->H * Tq * Tk * d->W;
}

/* The content score of a key, y U^T: (1, D) x (D, H). */
static double collab_kv_extra_flops(const AttnDims *d, const AttnParams *p) {
    return p->u ? 2.0 * d->D * d->H : 0.0;
}

/* Per thread: the stacked mixed queries and their gradient (2, H*Tq, W); then (B, H, W)
 * per-sentence mixing gradients. */
static size_t collab_work_floats(const AttnDims *d, int B, int Tq, int Tk, int nthreads) {
    (void)Tk;
    return (size_t)nthreads * 2 * d->H * Tq * d->W + (size_t)B * d->H * d->W;
}

/* qm (H*Tq, W): row h*Tq + i = q_i ∘ m_h */
static void mix_queries(float *qm, const float *qb, const float *mix, int H, int Tq, int W) {
    for (int h = 0; h < H; h++)
        for (int i = 0; i < Tq; i++) {
            float *dst = qm + ((size_t)h * Tq + i) * W;
            const float *qi = qb + (size_t)i * W, *mh = mix + (size_t)h * W;
            for (int r = 0; r < W; r++) dst[r] = qi[r] * mh[r];
        }
}

static void collab_scores_forward(const Ctx *c, const AttnDims *d, const AttnParams *p, float *S,
                                  const float *q, const float *k, const float *cs, int B, int Tq,
                                  int Tk, int kvs, float *work) {
    const int H = d->H, W = d->W;
#pragma omp parallel for schedule(static) if ((long)B * H * Tq * Tk * W >= OMP_MIN_WORK)
    for (int b = 0; b < B; b++) {
        float *qm = work + (size_t)omp_get_thread_num() * 2 * H * Tq * W;  // (H*Tq, W)
        mix_queries(qm, q + (size_t)b * Tq * W, p->mix, H, Tq, W);
        float *sb = S + (size_t)b * H * Tq * Tk;  // (H*Tq, Tk)
        c->gemm->sgemm_serial(false, true, H * Tq, Tk, W, d->scale, qm, W,
                              k + (size_t)b * kvs * W, W, 0.0f, sb, Tk);
        if (p->u)
            for (int h = 0; h < H; h++)
                for (int i = 0; i < Tq; i++) {
                    float *row = sb + ((size_t)h * Tq + i) * Tk;
                    const float *cb = cs + (size_t)b * kvs * H + h;
                    for (int kk = 0; kk < Tk; kk++) row[kk] += d->scale * cb[(size_t)kk * H];
                }
    }
}

static void collab_scores_backward(const Ctx *c, const AttnDims *d, const AttnParams *p,
                                   const AttnParams *g, float *dq, float *dk, float *dcs,
                                   const float *dS, const float *q, const float *k, int B,
                                   int Tq, int Tk, int kvs, float *work) {
    const int H = d->H, W = d->W;
    float *dmix_b = work + (size_t)omp_get_max_threads() * 2 * H * Tq * W;  // (B, H, W)
#pragma omp parallel for schedule(static) if ((long)B * H * Tq * Tk * W >= OMP_MIN_WORK)
    for (int b = 0; b < B; b++) {
        float *qm = work + (size_t)omp_get_thread_num() * 2 * H * Tq * W;  // (H*Tq, W)
        float *gq = qm + (size_t)H * Tq * W;                                // (H*Tq, W)
        const float *ds = dS + (size_t)b * H * Tq * Tk;                      // (H*Tq, Tk)
        const float *qb = q + (size_t)b * Tq * W, *kb = k + (size_t)b * kvs * W;
        // gq = scale * dS_b K~_b: the gradient of the mixed queries
        c->gemm->sgemm_serial(false, false, H * Tq, W, Tk, d->scale, ds, Tk, kb, W, 0.0f, gq, W);
        float *dqb = dq + (size_t)b * Tq * W, *dm = dmix_b + (size_t)b * H * W;
        memset(dm, 0, sizeof(float) * H * W);
        for (int h = 0; h < H; h++)
            for (int i = 0; i < Tq; i++) {
                const float *gi = gq + ((size_t)h * Tq + i) * W, *qi = qb + (size_t)i * W;
                const float *mh = p->mix + (size_t)h * W;
                float *dqi = dqb + (size_t)i * W, *dmh = dm + (size_t)h * W;
                for (int r = 0; r < W; r++) {
                    dqi[r] += gi[r] * mh[r];
                    dmh[r] += gi[r] * qi[r];
                }
            }
        // dK~_b += scale * dS_b^T (Q~_b ∘ m_h stacked)
        mix_queries(qm, qb, p->mix, H, Tq, W);
        c->gemm->sgemm_serial(true, false, Tk, W, H * Tq, d->scale, ds, Tk, qm, W, 1.0f,
                              dk + (size_t)b * kvs * W, W);
        if (p->u)
            for (int h = 0; h < H; h++)
                for (int i = 0; i < Tq; i++) {
                    const float *row = ds + ((size_t)h * Tq + i) * Tk;
                    float *db = dcs + (size_t)b * kvs * H + h;
                    for (int kk = 0; kk < Tk; kk++) db[(size_t)kk * H] += d->scale * row[kk];
                }
    }
#pragma omp parallel for schedule(static) if ((long)B * H * W >= OMP_MIN_WORK)
    for (int e = 0; e < H * W; e++) {
        float s = 0.0f;
        for (int b = 0; b < B; b++) s += dmix_b[(size_t)b * H * W + e];
        g->mix[e] += s;
    }
}

const AttnImpl attn_collab = {
    .name = "collab",
    .declare = collab_declare,
    .bind = collab_bind,
    .kv_extra_forward = collab_kv_extra_forward,
    .kv_extra_backward = collab_kv_extra_backward,
    .scores_flops = collab_scores_flops,
    .kv_extra_flops = collab_kv_extra_flops,
    .work_floats = collab_work_floats,
    .scores_forward = collab_scores_forward,
    .scores_backward = collab_scores_backward,
};
