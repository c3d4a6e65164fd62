/* grad_sync.c: bucketed, overlapped gradient sums (grad_sync.h). */
#include "grad_sync.h"

#include "dist.h"

enum { ALIGN_FLOATS = 16 };  // the arenas align tensors to 64 bytes: gaps of padding (zeros)

static void start_pending(GradSync *g) {
    if (!g->pending.count) return;
    dist_grads_start(g->m->params.grad + g->pending.offset, g->pending.count);
    g->pending.count = 0;
}

/* model.h's grads_done: spans come in from the end of the arena towards its start, mostly
 * adjacent (a span that is not, such as a final LayerNorm's, starts a new bucket). */
static void on_grads_done(void *arg, ParamRange span) {
    GradSync *g = arg;
    ParamRange *p = &g->pending;
    size_t end = span.offset + span.count;
    if (p->count && end <= p->offset && p->offset - end < ALIGN_FLOATS)
        p->count += p->offset - span.offset, p->offset = span.offset;
    else
        start_pending(g), *p = span;
    if (p->count >= GRAD_SYNC_BUCKET_FLOATS) start_pending(g);
    dist_grads_progress();
}

void grad_sync_init(GradSync *g, Model *m, bool overlap) {
    *g = (GradSync){.m = m, .overlap = overlap};
}

void grad_sync_arm(GradSync *g) {
    if (dist_size() == 1 || !g->overlap) return;
    g->m->grads_done = on_grads_done, g->m->grads_done_arg = g;
}

void grad_sync_finish(GradSync *g) {
    if (dist_size() == 1) return;
    Model *m = g->m;
    if (m->grads_done)
        start_pending(g);
    else
        dist_grads_start(m->params.grad, m->params.numel);
    m->grads_done = NULL, m->grads_done_arg = NULL;
    g->wait_s += dist_grads_wait();
}
