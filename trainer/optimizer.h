/* optimizer.h: AdamW over the flat parameter arenas (params.h), gradient scaling and clipping,
 * and the learning-rate schedules. The update follows PyTorch's AdamW step exactly (decoupled
 * weight decay on tensors marked `decay`, bias-corrected moments), so a PyTorch reference run
 * can be matched step by step. Everything is element-wise: results do not depend on threads. */
#ifndef NMT_OPTIMIZER_H
#define NMT_OPTIMIZER_H

#include "params.h"
#include "train_config.h"

typedef struct AdamHyper {
    double beta1, beta2, eps, weight_decay;
} AdamHyper;

/* One step (step counts from 1) with learning rate lr. */
void adam_step(ParamTable *pt, const AdamHyper *h, double lr, long step);
void grads_scale(ParamTable *pt, float s);  // grad *= s
/* Scales the gradient to global norm max_norm when it is larger (torch.nn.utils.clip_grad_norm_:
 * factor max_norm / (norm + 1e-6)); max_norm <= 0 only measures. Returns the norm before. */
double grads_clip(ParamTable *pt, double max_norm);

/* The exponential moving average of the values (train.ema_decay): after update `update`
 * (1-based), avg += (1 - d) (param - avg) with d = min(decay, (1 + update) / (10 + update)), so the
 * average follows the parameters closely while they move fast. avg has the arenas' layout. */
double ema_decay_at(double decay, long update);
void ema_update(const ParamTable *pt, float *avg, double decay, long update);

/* Learning rate at update `step` (1-based):
 *   inverse_sqrt: linear warmup from warmup_init_lr to lr, then lr * sqrt(warmup / step)
 *   noam:         lr * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
 *   constant:     lr */
double schedule_lr(const TrainConfig *t, int d_model, long step);

#endif
