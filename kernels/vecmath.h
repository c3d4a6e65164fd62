/* vecmath.h: float math that the compiler vectorizes inside `#pragma omp simd` loops.
 * glibc's vector expf is only reachable with -ffast-math, which would loosen every other float
 * operation too; this expf is the Cephes range reduction and polynomial (relative error below
 * 2e-7 over the whole float range), written with plain float arithmetic. Underflow gives 0
 * (also for -inf), overflow +inf. */
#ifndef NMT_VECMATH_H
#define NMT_VECMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#pragma omp declare simd
static inline float fast_expf(float x) {
    const float hi = 88.3762626647949f, lo = -87.3365447504f;
    float under = x < lo ? 0.0f : 1.0f;
    float over = x > hi ? INFINITY : 1.0f;
    x = x < lo ? lo : x > hi ? hi : x;
    float t = x * 1.44269504088896341f + 0.5f;  // n = floor(t) = round(x / ln 2)
    float fx = (float)(int32_t)t;               // truncation (SSE2 has no floor) ...
    fx -= fx > t ? 1.0f : 0.0f;                 // ... corrected for negative t
    x -= fx * 0.693359375f;                               // x - n ln 2, in two parts
    x -= fx * -2.12194440e-4f;
    float z = x * x;
    float y = 1.9875691500e-4f;
    y = y * x + 1.3981999507e-3f;
    y = y * x + 8.3334519073e-3f;
    y = y * x + 4.1665795894e-2f;
    y = y * x + 1.6666665459e-1f;
    y = y * x + 5.0000001201e-1f;
    y = y * z + x + 1.0f;
    int32_t e = ((int32_t)fx + 127) << 23;  // 2^n
    float scale;
    memcpy(&scale, &e, sizeof scale);
    return y * scale * under * (over == 1.0f ? 1.0f : over);
}

/* max of x[0..n) */
static inline float vec_max(const float *x, int n) {
    float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
    for (int i = 0; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    return mx;
}

/* sum of x[0..n) */
static inline float vec_sum(const float *x, int n) {
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int i = 0; i < n; i++) s += x[i];
    return s;
}

/* x[i] = exp(x[i] - shift); returns the sum */
static inline float vec_exp_shift(float *x, int n, float shift) {
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int i = 0; i < n; i++) {
        x[i] = fast_expf(x[i] - shift);
        s += x[i];
    }
    return s;
}

/* log(sum(exp(x))) without changing x */
static inline double vec_logsumexp(const float *x, int n) {
    float mx = vec_max(x, n), s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int i = 0; i < n; i++) s += fast_expf(x[i] - mx);
    return mx + log((double)s);
}

#endif
