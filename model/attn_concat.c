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

static double concat_kv_extra_flops(const AttnDims *d, const AttnParams *p) {
    (void)d, (void)p;
    return 0.0;
}

/* Head h scores its own slice of dk = W / H columns. */
static void concat_head_span(const AttnDims *d, int h, int *col, int *width) {
    *width = d->W / d->H, *col = h * *width;
}

static const float *concat_head_queries(const AttnDims *d, const AttnParams *p, float *qm,
                                        const float *q, int n, int h) {
    (void)p, (void)qm, (void)n;
    return q + h * (d->W / d->H);
}

/* dq_h (n, dk) += gq */
static void concat_head_queries_backward(const AttnDims *d, const AttnParams *p, float *dq,
                                         float *sent, const float *gq, const float *q, int n,
                                         int h) {
    (void)p, (void)sent, (void)q;
    const int W = d->W, dk = W / d->H;
    for (int i = 0; i < n; i++) {
        float *dqi = dq + (size_t)i * W + h * dk;
        const float *gi = gq + (size_t)i * W;
        for (int r = 0; r < dk; r++) dqi[r] += gi[r];
    }
}

static size_t concat_sentence_floats(const AttnDims *d) {
    (void)d;
    return 0;
}

const AttnImpl attn_concat = {
    .declare = concat_declare,
    .bind = concat_bind,
    .kv_extra_forward = NULL,
    .kv_extra_backward = NULL,
    .kv_extra_flops = concat_kv_extra_flops,
    .head_span = concat_head_span,
    .head_queries = concat_head_queries,
    .head_queries_backward = concat_head_queries_backward,
    .sentence_floats = concat_sentence_floats,
    .sentence_grads_finish = NULL,
};
