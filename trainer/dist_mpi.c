/* dist_mpi.c: dist.h over Open MPI. Nonblocking collectives completed by polling MPI_Testall
 * (which also drives MPI's progress) against a deadline. */
#include "dist.h"

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "timer.h"

enum { SPINS_BEFORE_SLEEP = 2000 };

static struct {
    bool joined;
    int rank, size;
    double timeout;           // seconds; 0 = unbounded
    MPI_Request *grads;       // (ngrads) started gradient sums
    int ngrads, grads_cap;
    char library[256];
} D = {.size = 1, .library = "Open MPI (not started by mpirun)"};

/* mpirun (Open MPI, or a PMI launcher) puts these into every rank's environment. */
static bool started_by_mpirun(void) {
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

static void abort_job(void) { MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE); }

int dist_init(double timeout_s) {
    D.timeout = timeout_s;
    if (D.joined || !started_by_mpirun()) return D.size;
    int provided;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    CHECK(provided >= MPI_THREAD_FUNNELED, "MPI does not support calls from the main thread of an "
          "OpenMP program (MPI_THREAD_FUNNELED)");
    MPI_Comm_rank(MPI_COMM_WORLD, &D.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &D.size);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    version[strcspn(version, ",\n")] = 0;
    snprintf(D.library, sizeof D.library, "%s", version);
    D.joined = true;
    nmt_fatal_set_hook(abort_job);
    return D.size;
}

void dist_finalize(void) {
    if (!D.joined) return;
    nmt_fatal_set_hook(NULL);
    MPI_Finalize();
    free(D.grads);
    D.joined = false;
}

int dist_rank(void) { return D.rank; }
int dist_size(void) { return D.size; }
const char *dist_library(void) { return D.library; }

/* Completes reqs[0..n), polling; stops the job when `bounded` and the deadline passes. */
static void wait_all(MPI_Request *reqs, int n, bool bounded, const char *what) {
    const double t0 = now_seconds();
    for (long spins = 0;; spins++) {
        int done;
        MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
        if (done) return;
        if (bounded && D.timeout > 0 && now_seconds() - t0 > D.timeout)
            FATAL("rank %d of %d: no answer from the other ranks for %.0f s in %s; a rank is "
                  "stuck or gone (the bound is train.dist_timeout)", D.rank, D.size, D.timeout, what);
        if (spins > SPINS_BEFORE_SLEEP) nanosleep(&(struct timespec){0, 50000}, NULL);
    }
}

void dist_allreduce(double *v, int n, DistOp op, const char *what) {
    if (!D.joined) return;
    MPI_Request r;
    MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, op == DIST_SUM ? MPI_SUM : MPI_MAX,
                   MPI_COMM_WORLD, &r);
    wait_all(&r, 1, true, what);
}

void dist_bcast(void *buf, size_t bytes, int root, const char *what) {
    if (!D.joined) return;
    CHECK(bytes <= INT_MAX, "%s: %zu bytes is more than one broadcast carries", what, bytes);
    MPI_Request r;
    MPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD, &r);
    wait_all(&r, 1, true, what);
}

void dist_barrier(bool bounded, const char *what) {
    if (!D.joined) return;
    MPI_Request r;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    wait_all(&r, 1, bounded, what);
}

void dist_grads_start(float *g, size_t n) {
    if (!D.joined) return;
    CHECK(n <= INT_MAX, "a gradient bucket of %zu floats is more than one reduction carries", n);
    if (D.ngrads == D.grads_cap) {
        D.grads_cap = D.grads_cap ? 2 * D.grads_cap : 64;
        D.grads = xrealloc(D.grads, sizeof *D.grads * (size_t)D.grads_cap);
    }
    MPI_Iallreduce(MPI_IN_PLACE, g, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &D.grads[D.ngrads++]);
}

void dist_grads_progress(void) {
    if (!D.ngrads) return;
    int done;
    MPI_Testall(D.ngrads, D.grads, &done, MPI_STATUSES_IGNORE);
}

double dist_grads_wait(void) {
    if (!D.ngrads) return 0.0;
    double t0 = now_seconds();
    wait_all(D.grads, D.ngrads, true, "the gradient sum");
    D.ngrads = 0;
    return now_seconds() - t0;
}
