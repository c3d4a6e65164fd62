/* grad_sync.h: the gradient sum of a data-parallel update. Armed before the last backward of
 * an update, it takes the spans of parameters that backward finishes (model.h, grads_done),
 * merges neighbours until a bucket holds GRAD_SYNC_BUCKET_FLOATS, and starts each bucket's sum
 * over the ranks (dist.h) at once, so the sums overlap the rest of backward; grad_sync_finish
 * starts what is left and waits. Without overlap the whole arena is summed after backward. With
 * one rank nothing is armed and finish returns at once. */
#ifndef NMT_GRAD_SYNC_H
#define NMT_GRAD_SYNC_H

#include <stdbool.h>

#include "model.h"

enum { GRAD_SYNC_BUCKET_FLOATS = 1 << 18 };  // 1 MB buckets

typedef struct GradSync {
    Model *m;
    bool overlap;
    ParamRange pending;  // finished spans not yet started, merged
    double wait_s;       // seconds waited for sums (accumulated; the caller resets)
} GradSync;

void grad_sync_init(GradSync *g, Model *m, bool overlap);
/* The next backward is the last of the update: hook its finished spans. */
void grad_sync_arm(GradSync *g);
/* After that backward: the summed gradient is in m->params.grad on every rank. */
void grad_sync_finish(GradSync *g);

#endif
