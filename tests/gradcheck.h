/* gradcheck.h: central finite differences against analytic gradients.
 * The checked function returns a scalar accumulated in double (typically sum(out * R) for a
 * fixed random R, or the model's loss). For sampled coordinates of each tensor the test compares
 * (f(x + eps) - f(x - eps)) / 2eps with the analytic gradient:
 *     |fd - an| <= floor + atol * max|an| over the tensor + rtol * max(|fd|, |an|).
 * floor is the absolute noise level of the finite difference itself (rounding of f in fp32):
 * gradients below it can only be checked to be below it.
 * A coordinate whose perturbation changes a kink signature (e.g. the sign pattern of ReLU inputs)
 * is skipped, as is any coordinate where the signature function says so. */
#ifndef NMT_GRADCHECK_H
#define NMT_GRADCHECK_H

#include <math.h>
#include <stdint.h>

#include "rng.h"
#include "test_util.h"

typedef double (*GcFn)(void *ctx);
typedef uint64_t (*GcKinkFn)(void *ctx);  // signature of the current kink pattern, or NULL

typedef struct GcTensor {
    const char *name;
    float *x;         // (n) the values perturbed in place
    const float *g;   // (n) analytic gradient
    long n;
} GcTensor;

typedef struct GcOptions {
    float eps;
    int samples;      // coordinates per tensor (all when n is smaller)
    double rtol, atol;
    double floor;
} GcOptions;

/* Returns the number of failing coordinates (each also counted as a failed EXPECT). */
static inline int gradcheck(const char *label, GcFn f, GcKinkFn kink, void *ctx,
                            const GcTensor *t, int nt, GcOptions o) {
    int failures = 0;
    uint64_t sig0 = kink ? (f(ctx), kink(ctx)) : 0;
    for (int k = 0; k < nt; k++) {
        double gmax = 0;
        for (long i = 0; i < t[k].n; i++) {
            double v = fabs(t[k].g[i]);
            // a comparison, not fmax: GCC 12.2 for arm64 crashes vectorizing fmax of widened floats
            if (v > gmax) gmax = v;
        }
        Rng r = rng_init(4242, (uint64_t)k);
        int checked = 0, skipped = 0, bad = 0;
        long count = t[k].n < o.samples ? t[k].n : o.samples;
        for (long s = 0; s < count; s++) {
            long i = t[k].n <= o.samples ? s : (long)rng_below(&r, (uint64_t)t[k].n);
            float orig = t[k].x[i];
            t[k].x[i] = orig + o.eps;
            double fp = f(ctx);
            uint64_t sp = kink ? kink(ctx) : 0;
            t[k].x[i] = orig - o.eps;
            double fm = f(ctx);
            uint64_t sm = kink ? kink(ctx) : 0;
            t[k].x[i] = orig;
            if (kink && (sp != sig0 || sm != sig0)) {
                skipped++;
                continue;
            }
            double fd = (fp - fm) / (2.0 * o.eps), an = t[k].g[i];
            double tol = o.floor + o.atol * gmax + o.rtol * fmax(fabs(fd), fabs(an));
            checked++;
            if (!(fabs(fd - an) <= tol)) {
                if (bad < 3)
                    fprintf(stderr, "  %s %s[%ld]: finite difference %.7g, analytic %.7g\n",
                            label, t[k].name, i, fd, an);
                bad++;
            }
        }
        EXPECT(bad == 0, "%s: %s: %d of %d coordinates differ (%d skipped at kinks)", label,
               t[k].name, bad, checked, skipped);
        EXPECT(checked > 0, "%s: %s: no coordinate checked", label, t[k].name);
        failures += bad;
    }
    if (kink) f(ctx);  // leave the state of the unperturbed point
    return failures;
}

static inline double dot_double(const float *a, const float *b, long n) {
    double s = 0;
    for (long i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

#endif
