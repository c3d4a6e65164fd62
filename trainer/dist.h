/* dist.h: the ranks of a data-parallel run. A process started by `mpirun -np N` joins its job
 * (Open MPI, dist_mpi.c); any other process, and every process of a build without MPI
 * (dist_none.c), is rank 0 of 1 and every call below is a no-op on it.
 *
 * All calls are made from the main thread, outside OpenMP regions (MPI_THREAD_FUNNELED), and by
 * every rank in the same order. Every wait polls with a deadline (dist_init's timeout): a rank
 * that hangs makes the others stop with a message naming the collective instead of waiting for
 * ever; a rank that dies makes mpirun end the job. After dist_init, a fatal error on any rank
 * (check.h) aborts the whole job. */
#ifndef NMT_DIST_H
#define NMT_DIST_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { DIST_SUM, DIST_MAX } DistOp;

/* Joins the job when started by mpirun (nothing otherwise); timeout_s bounds every wait
 * (0: no bound). Returns the number of ranks. */
int dist_init(double timeout_s);
void dist_finalize(void);
int dist_rank(void);
int dist_size(void);
/* "Open MPI 4.1.4 ..." or "none" (a build without MPI). */
const char *dist_library(void);

/* v[0..n) combined over the ranks, in place, the same on every rank. */
void dist_allreduce(double *v, int n, DistOp op, const char *what);
/* buf[0..bytes) of rank `root` on every rank. */
void dist_bcast(void *buf, size_t bytes, int root, const char *what);
/* Waits for every rank; unbounded (a rank still preparing data, say) when `bounded` is false. */
void dist_barrier(bool bounded, const char *what);

/* Gradient reduction in buckets: dist_grads_start begins the sum over the ranks of g[0..n),
 * in place, and returns at once; dist_grads_progress lets started sums advance (call it between
 * pieces of other work); dist_grads_wait completes them all and returns the seconds it waited.
 * The sums are identical on every rank. */
void dist_grads_start(float *g, size_t n);
void dist_grads_progress(void);
double dist_grads_wait(void);

#endif
