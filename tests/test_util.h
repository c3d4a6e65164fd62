/* test_util.h: the tiny harness every test uses: EXPECT counts failures without stopping,
 * check_close compares arrays with |a - b| <= atol + rtol * |b| and reports the first mismatches,
 * fill_uniform fills an array from an Rng (with rng.h included first), and test_finish prints
 * the plain "N passed, N failed" line and sets the exit code.
 * NMT_DATA / NMT_SHARED locate the read-only data beside the repository. */
#ifndef NMT_TEST_UTIL_H
#define NMT_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int test_checks, test_failures;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        __atomic_fetch_add(&test_checks, 1, __ATOMIC_RELAXED);                                     \
        if (!(cond)) {                                                                             \
            __atomic_fetch_add(&test_failures, 1, __ATOMIC_RELAXED);                               \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* Returns the number of mismatching elements (and counts one check). */
static inline long check_close(const char *label, const float *got, const float *want, long n,
                               double atol, double rtol) {
    long bad = 0;
    double worst = 0;
    for (long i = 0; i < n; i++) {
        double g = got[i], w = want[i], err = fabs(g - w), tol = atol + rtol * fabs(w);
        if (!(err <= tol)) {  // also catches NaN
            if (bad < 5) fprintf(stderr, "  %s[%ld]: got %.9g want %.9g\n", label, i, g, w);
            bad++;
        }
        if (err > worst) worst = err;
    }
    EXPECT(bad == 0, "%s: %ld of %ld elements differ (max abs err %.3g)", label, bad, n, worst);
    return bad;
}

#ifdef NMT_RNG_H  // for the tests that include rng.h first
/* x[0..n) uniform in [-scale, scale) from r. */
static inline void fill_uniform(float *x, long n, float scale, Rng *r) {
    for (long i = 0; i < n; i++) x[i] = scale * (float)(2.0 * rng_next_double(r) - 1.0);
}
#endif

static inline int test_finish(void) {
    printf("%d passed, %d failed\n", test_checks - test_failures, test_failures);
    return test_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}

static inline const char *test_data_dir(void) {
    const char *d = getenv("NMT_DATA");
    return d && *d ? d : NMT_DEFAULT_DATA_DIR;
}

/* The shared folder beside the repository (bleu-fixtures/, data/, ...). */
static inline const char *test_shared_dir(void) {
    const char *d = getenv("NMT_SHARED");
    return d && *d ? d : NMT_DEFAULT_SHARED_DIR;
}

#endif
