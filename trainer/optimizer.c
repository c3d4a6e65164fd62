/* optimizer.c: AdamW, gradient scaling and clipping, schedules (optimizer.h). */
#include "optimizer.h"

#include <math.h>
#include <string.h>

#include "check.h"

void adam_step(ParamTable *pt, const AdamHyper *h, double lr, long step) {
    const float b1 = (float)h->beta1, b2 = (float)h->beta2, one_b1 = (float)(1.0 - h->beta1),
                one_b2 = (float)(1.0 - h->beta2), eps = (float)h->eps;
    const float step_size = (float)(lr / (1.0 - pow(h->beta1, (double)step)));
    const float bc2_sqrt = (float)sqrt(1.0 - pow(h->beta2, (double)step));
    const float decay = (float)(1.0 - lr * h->weight_decay);
#pragma omp parallel
    for (int t = 0; t < pt->count; t++) {
        const ParamInfo *info = &pt->info[t];
        float *p = pt->param + info->offset, *g = pt->grad + info->offset;
        float *m = pt->adam_m + info->offset, *v = pt->adam_v + info->offset;
        bool wd = info->decay && h->weight_decay > 0;
        long n = (long)info->numel;
#pragma omp for schedule(static) nowait
        for (long i = 0; i < n; i++) {
            if (wd) p[i] *= decay;
            m[i] = m[i] * b1 + one_b1 * g[i];
            v[i] = v[i] * b2 + one_b2 * g[i] * g[i];
            float denom = sqrtf(v[i]) / bc2_sqrt + eps;
            p[i] -= step_size * (m[i] / denom);
        }
    }
}

void grads_scale(ParamTable *pt, float s) {
    float *g = pt->grad;
    long n = (long)pt->numel;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) g[i] *= s;
}

double grads_clip(ParamTable *pt, double max_norm) {
    double norm = params_grad_norm(pt);
    if (max_norm > 0) {
        double factor = max_norm / (norm + 1e-6);
        if (factor < 1.0) grads_scale(pt, (float)factor);
    }
    return norm;
}

double ema_decay_at(double decay, long update) {
    return fmin(decay, (1.0 + (double)update) / (10.0 + (double)update));
}

void ema_update(const ParamTable *pt, float *avg, double decay, long update) {
    const float rate = (float)(1.0 - ema_decay_at(decay, update));
    const float *p = pt->param;
    long n = (long)pt->numel;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) avg[i] += rate * (p[i] - avg[i]);
}

double schedule_lr(const TrainConfig *t, int d_model, long step) {
    CHECK(step >= 1, "schedule_lr: step %ld", step);
    double s = (double)step, w = (double)t->warmup;
    switch (t->schedule) {
    case SCHEDULE_CONSTANT: return t->lr;
    case SCHEDULE_NOAM:
        return t->lr / sqrt((double)d_model) * fmin(1.0 / sqrt(s), s * pow(w, -1.5));
    case SCHEDULE_INVERSE_SQRT: // fairseq
        if (t->warmup > 0 && step < t->warmup)
            return t->warmup_init_lr + (t->lr - t->warmup_init_lr) * s / w;
        return t->warmup > 0 ? t->lr * sqrt(w / s) : t->lr;
    }
    FATAL("%d is not a learning-rate schedule", (int)t->schedule);
}
