/* attn_concat.c: AttnImpl "concat", standard multi-head attention (Vaswani et al. 2017).
 * Head h scores the column slice [h*dk, (h+1)*dk) of Q (B, Tq, W) against the same slice of
 * K (B, kvs, W), dk = W / H; W < D gives the reduced-key baseline of the D~k sweeps, with the
 * scale kept at 1/sqrt(D/H). The key bias b_k cancels in the softmax (zero gradient up to
 * rounding) but is kept so parameter counts and checkpoints match nn.Linear and fairseq. */
#include <math.h>
#include <stdio.h>

#include "attention.h"

static void concat_declare(ParamTable *pt, const char *prefix, const AttnDims *d,
                           const ModelConfig *cfg) {
    (void)cfg;
    char n[64];
    float gain = d->W == d->D ? 1.0f / sqrtf(2.0f) : 1.0f;  // fairseq's qkv_same_dim rule
    float bound = gain * sqrtf(6.0f / (float)(d->D + d->W)), bias = 1.0f / sqrtf((float)d->D);
    snprintf(n, sizeof n, "%s.w_q", prefix), params_declare(pt, n, d->W, d->D, INIT_UNIFORM, bound, true);
    snprintf(n, sizeof n, "%s.b_q", prefix), params_declare(pt, n, d->W, 0, INIT_UNIFORM, bias, false);
    snprintf(n, sizeof n, "%s.w_k", prefix), params_declare(pt, n, d->W, d->D, INIT_UNIFORM, bound, true);
    snprintf(n, sizeof n, "%s.b_k", prefix), params_declare(pt, n, d->W, 0, INIT_UNIFORM, bias, false);
}

static void concat_bind(AttnParams *p, const ParamTable *pt, const char *prefix, float *base) {
    char n[64];
    snprintf(n, sizeof n, "%s.w_q", prefix), p->w_q = params_view(pt, n, base);
    snprintf(n, sizeof n, "%s.b_q", prefix), p->b_q = params_view(pt, n, base);
    snprintf(n, sizeof n, "%s.w_k", prefix), p->w_k = params_view(pt, n, base);
    snprintf(n, sizeof n, "%s.b_k", prefix), p->b_k = params_view(pt, n, base);
    p->mix = p->u = NULL;
}

static size_t concat_work_floats(const AttnDims *d, int B, int Tq, int Tk, int nthreads) {
    (void)d, (void)B, (void)Tq, (void)Tk, (void)nthreads;
    return 0;
}

/* Head h: (Tq, W/H) x (W/H, Tk) per sentence. */
static double concat_scores_flops(const AttnDims *d, int B, int Tq, int Tk) {
    return 2.0 * B * Tq * Tk * d->W;
}

static double concat_kv_extra_flops(const AttnDims *d, const AttnParams *p) {
    (void)d, (void)p;
    return 0.0;
}

static void concat_scores_forward(const Ctx *c, const AttnDims *d, const AttnParams *p, float *S,
                                  const float *q, const float *k, const float *cs, int B, int Tq,
                                  int Tk, int kvs, float *work) {
    (void)p, (void)cs, (void)work;
    const int H = d->H, W = d->W, dk = W / H;
#pragma omp parallel for collapse(2) schedule(static) if ((long)B * Tq * Tk * W >= OMP_MIN_WORK)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)  // S_bh (Tq, Tk) = scale * q_bh (Tq, dk) k_bh^T
            c->gemm->sgemm_serial(false, true, Tq, Tk, dk, d->scale,
                                  q + (size_t)b * Tq * W + h * dk, W,
                                  k + (size_t)b * kvs * W + h * dk, W, 0.0f,
                                  S + ((size_t)b * H + h) * Tq * Tk, Tk);
}

static void concat_scores_backward(const Ctx *c, const AttnDims *d, const AttnParams *p,
                                   const AttnParams *g, float *dq, float *dk, float *dcs,
                                   const float *dS, const float *q, const float *k, int B,
                                   int Tq, int Tk, int kvs, float *work) {
    (void)p, (void)g, (void)dcs, (void)work;
    const int H = d->H, W = d->W, dkh = W / H;
#pragma omp parallel for collapse(2) schedule(static) if ((long)B * Tq * Tk * W >= OMP_MIN_WORK)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const float *ds = dS + ((size_t)b * H + h) * Tq * Tk;  // (Tq, Tk)
            size_t qo = (size_t)b * Tq * W + h * dkh, ko = (size_t)b * kvs * W + h * dkh;
            // dq_bh += scale * dS k_bh ;  dk_bh += scale * dS^T q_bh
            c->gemm->sgemm_serial(false, false, Tq, dkh, Tk, d->scale, ds, Tk, k + ko, W, 1.0f,
                                  dq + qo, W);
            c->gemm->sgemm_serial(true, false, Tk, dkh, Tq, d->scale, ds, Tk, q + qo, W, 1.0f,
                                  dk + ko, W);
        }
}

const AttnImpl attn_concat = {
    .name = "concat",
    .declare = concat_declare,
    .bind = concat_bind,
    .kv_extra_forward = NULL,
    .kv_extra_backward = NULL,
    .scores_flops = concat_scores_flops,
    .kv_extra_flops = concat_kv_extra_flops,
    .work_floats = concat_work_floats,
    .scores_forward = concat_scores_forward,
    .scores_backward = concat_scores_backward,
};
