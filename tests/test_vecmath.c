/* test_vecmath.c: the SIMD-friendly expf against libm over the float range (relative error), its
 * special values, the row helpers (exp with shift and sum, log-sum-exp, max, sum, both in one
 * pass, sum of squared deviations, dot) against double-precision loops, for lengths around the
 * 16-lane vector width, with a value after each row that no helper may read or write, and the
 * partial vector loads and stores (exactly n lanes, nothing beyond). */
#include <math.h>

#include "rng.h"
#include "test_util.h"
#include "vecmath.h"

static void check_partial(void) {
    float src[VF_LANES], dst[VF_LANES + 1];
    for (int i = 0; i < VF_LANES; i++) src[i] = (float)(i + 1);
    for (int n = 0; n <= VF_LANES; n++) {
        vfloat v = vf_load_partial(src, n);
        for (int i = 0; i < VF_LANES; i++)
            EXPECT(v[i] == (i < n ? src[i] : 0.0f), "vf_load_partial n=%d: lane %d is %g", n, i,
                   v[i]);
        for (int i = 0; i <= VF_LANES; i++) dst[i] = -1.0f;
        vf_store_partial(dst, v + 100.0f, n);
        for (int i = 0; i <= VF_LANES; i++)
            EXPECT(dst[i] == (i < n ? src[i] + 100.0f : -1.0f),
                   "vf_store_partial n=%d: element %d is %g", n, i, dst[i]);
    }
}

/* max of x[0..n) without element skip, by the plain loop */
static double vec_max_skipping(const float *x, int n, int skip) {
    double mx = -INFINITY;
    for (int i = 0; i < n; i++)
        if (i != skip) mx = fmax(mx, x[i]);
    return mx;
}

static float exp_lane0(float x) {
    vfloat v = {x};
    return vf_exp(v)[0];
}

int main(void) {
    check_partial();
    double worst = 0;
    for (double x = -87.0; x <= 88.0; x += 0.000731) {
        double want = exp((double)(float)x), got = exp_lane0((float)x);
        worst = fmax(worst, fabs(got - want) / want);
    }
    EXPECT(worst < 4e-7, "vf_exp relative error %g", worst);
    EXPECT(exp_lane0(-INFINITY) == 0.0f && exp_lane0(-100.0f) == 0.0f, "underflow to 0");
    EXPECT(isinf(exp_lane0(100.0f)) && isinf(exp_lane0(INFINITY)), "overflow to inf");
    EXPECT(isnan(exp_lane0(NAN)), "NaN stays NaN");
    EXPECT(exp_lane0(0.0f) == 1.0f, "exp(0) = %.9g", exp_lane0(0.0f));
    Rng r = rng_init(3, 0);
    float x[71], y[71], w[71];
    const int lens[] = {1, 15, 16, 17, 33, 70};
    for (int k = 0; k < 6; k++) {
        int n = lens[k];
        double mx = -INFINITY, sum = 0, lse = 0, dot = 0, sq_dev = 0;
        for (int i = 0; i < n; i++) {
            x[i] = y[i] = (float)(20 * rng_next_double(&r) - 10), mx = fmax(mx, x[i]);
            w[i] = (float)rng_next_double(&r);
        }
        x[n] = w[n] = 1e30f;  // past the row: read, it would win the max and swamp the sums
        for (int i = 0; i < n; i++) sum += x[i], lse += exp((double)x[i] - mx), dot += x[i] * w[i];
        lse = mx + log(lse);
        for (int i = 0; i < n; i++) sq_dev += (x[i] - 0.5) * (x[i] - 0.5);
        EXPECT(vec_max(x, n) == (float)mx, "vec_max n=%d", n);
        EXPECT(fabs(vec_sum(x, n) - sum) < 1e-4, "vec_sum n=%d", n);
        float both_sum, both_max = vec_max_sum(x, n, &both_sum);
        EXPECT(both_max == (float)mx && fabs(both_sum - sum) < 1e-4, "vec_max_sum n=%d", n);
        EXPECT(fabs(vec_sum_sq_dev(x, 0.5f, n) - sq_dev) < 1e-5 * sq_dev, "vec_sum_sq_dev n=%d", n);
        EXPECT(fabs(vec_dot(x, w, n) - dot) < 1e-4, "vec_dot n=%d: %g vs %g", n, vec_dot(x, w, n),
               dot);
        x[n / 2] = NAN;  // passed over by the max
        EXPECT(vec_max(x, n) == (n > 1 ? (float)vec_max_skipping(x, n, n / 2) : -INFINITY),
               "vec_max n=%d with a NaN", n);
        x[n / 2] = y[n / 2];
        EXPECT(fabs(vec_logsumexp(x, n) - lse) < 1e-5, "vec_logsumexp n=%d: %g vs %g", n,
               vec_logsumexp(x, n), lse);
        y[n] = -1.0f;  // past the row: the tail's partial vector must leave it
        double es = vec_exp_shift(y, n, (float)mx), want = 0;
        EXPECT(y[n] == -1.0f, "vec_exp_shift n=%d wrote past the row", n);
        long bad = 0;
        for (int i = 0; i < n; i++) {
            double e = exp((double)(x[i] - (float)mx));  // of the float difference it computes
            want += e;
            bad += !(fabs(y[i] - e) <= 4e-7 * e + 1e-30);
        }
        EXPECT(bad == 0 && fabs(es - want) < 1e-5 * want, "vec_exp_shift n=%d: %ld bad", n, bad);
    }
    return test_finish();
}
