/* dist_none.c: dist.h without MPI: one rank, and every collective leaves its data as it is. */
#include "dist.h"

int dist_init(double timeout_s) {
    (void)timeout_s;
    return 1;
}
void dist_finalize(void) {}
int dist_rank(void) { return 0; }
int dist_size(void) { return 1; }
const char *dist_library(void) { return "none"; }

void dist_allreduce(double *v, int n, DistOp op, const char *what) { (void)v, (void)n, (void)op, (void)what; }
void dist_bcast(void *buf, size_t bytes, int root, const char *what) {
    (void)buf, (void)bytes, (void)root, (void)what;
}
void dist_barrier(bool bounded, const char *what) { (void)bounded, (void)what; }

void dist_grads_start(float *g, size_t n) { (void)g, (void)n; }
void dist_grads_progress(void) {}
double dist_grads_wait(void) { return 0.0; }
