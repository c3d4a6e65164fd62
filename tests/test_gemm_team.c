/* test_gemm_team.c: run with OMP_NUM_THREADS=2 and OMP_THREAD_LIMIT=1 (see CMakeLists.txt), so
 * that the blocked GEMM asks for two threads and its parallel regions get one. Each threaded path
 * must still compute every element of C, bit for bit as sgemm_serial does: a tall C split by rows
 * (shares of absent threads are taken by the others), with B packed once too, a weight gradient's
 * two K halves, a C shared through claimed chunks and a short C split by columns. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "rng.h"
#include "test_util.h"

typedef struct Shape {
    const char *what;
    bool ta, packed;
    int M, N, K;
} Shape;

static void check(const GemmImpl *g, Shape s, Rng *r) {
    const int lda = s.ta ? s.M : s.K;
    float *A = malloc(sizeof(float) * s.M * s.K), *B = malloc(sizeof(float) * s.K * s.N);
    float *C = malloc(sizeof(float) * s.M * s.N), *want = malloc(sizeof(float) * s.M * s.N);
    fill_uniform(A, (long)s.M * s.K, 1.0f, r), fill_uniform(B, (long)s.K * s.N, 1.0f, r);
    fill_uniform(C, (long)s.M * s.N, 1.0f, r);
    memcpy(want, C, sizeof(float) * s.M * s.N);
    g->sgemm_serial(s.ta, false, s.M, s.N, s.K, 0.5f, A, lda, B, s.N, 0.3f, want, s.N);
    if (s.packed) {
        GemmPackedB p = {0};
        gemm_pack_b(&p, g, false, s.K, s.N, B, s.N);
        sgemm_packed(&p, s.M, 0.5f, A, lda, 0.3f, C, s.N, NULL);
        gemm_packed_b_free(&p);
    } else {
        g->sgemm(s.ta, false, s.M, s.N, s.K, 0.5f, A, lda, B, s.N, 0.3f, C, s.N);
    }
    long bad = 0;
    for (long i = 0; i < (long)s.M * s.N; i++) bad += memcmp(&C[i], &want[i], sizeof(float)) != 0;
    EXPECT(bad == 0, "%s: %s %dx%dx%d: %ld of %ld elements differ from sgemm_serial", g->detail,
           s.what, s.M, s.N, s.K, bad, (long)s.M * s.N);
    free(A), free(B), free(C), free(want);
}

int main(void) {
    int team = 0;
#pragma omp parallel
    team = omp_get_num_threads();
    EXPECT(omp_get_max_threads() >= 2 && team == 1,
           "run me with OMP_NUM_THREADS=2 OMP_THREAD_LIMIT=1 (asks %d threads, gets %d)",
           omp_get_max_threads(), team);
    const Shape shapes[] = {
        {"tall C, B small", false, false, 4100, 256, 256},
        {"tall C, B packed once", false, true, 4100, 256, 256},
        {"weight gradient (K halves)", true, false, 256, 256, 4100},
        {"C shared through claimed chunks", false, false, 1500, 300, 200},
        {"short C by columns", true, false, 40, 1000, 1100},
    };
    const char *variants[] = {"blocked-avx512", "blocked-avx2", "blocked-portable"};
    Rng r = rng_init(5, 0);
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        const GemmImpl *g = gemm_lookup(variants[v]);
        if (!g) continue;  // not on this CPU
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) check(g, shapes[i], &r);
    }
    return test_finish();
}
