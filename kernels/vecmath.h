/* vecmath.h: float math in a form the compiler turns into SIMD code for the target CPU.
 * expf: the Cephes range reduction and polynomial (relative error below 2e-7 over the float
 * range; 0 below -87.3 and for -inf, +inf above 88.4, NaN stays NaN), written once for a scalar
 * and once for a GCC vector of 16 floats, which the compiler lowers to AVX-512, AVX2 or SSE2.
 * glibc's vector expf would need -ffast-math, which loosens every other float operation too. */
#ifndef NMT_VECMATH_H
#define NMT_VECMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

// The vectors never cross a function boundary (everything is static inline), so the ABI note
// GCC gives for 64-byte vectors on CPUs without AVX-512 does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

static inline v16f v16_select(v16i mask, v16f a, v16f b) {  // mask ? a : b, lane by lane
    return (v16f)(((v16i)a & mask) | ((v16i)b & ~mask));
}

static inline v16f v16_load(const float *p) {
    v16f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline float v16_sum(v16f v) {
    float s = 0.0f;
    for (int i = 0; i < 16; i++) s += v[i];
    return s;
}

static inline v16f exp16(v16f x) {
    const float hi = 88.3762626647949f, lo = -87.3365447504f;
    const v16f zero = {0}, one = zero + 1.0f;
    v16f c = v16_select(x < lo, zero + lo, x);
    c = v16_select(c > hi, zero + hi, c);
    v16f t = c * 1.44269504088896341f + 0.5f;  // n = floor(t) = round(c / ln 2)
    v16f n = __builtin_convertvector(__builtin_convertvector(t, v16i), v16f);
    n -= v16_select(n > t, one, zero);          // truncation corrected for negative t
    v16f r = c - n * 0.693359375f;              // c - n ln 2, in two parts
    r -= n * -2.12194440e-4f;
    v16f y = zero + 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * (r * r) + r + 1.0f;
    v16f e = y * (v16f)((__builtin_convertvector(n, v16i) + 127) << 23);  // y * 2^n
    e = v16_select(x < lo, zero, e);
    return v16_select(x > hi, zero + INFINITY, e);
}

static inline float fast_expf(float x) {
    v16f v = {x};
    return exp16(v)[0];
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
    v16f acc = {0};
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        v16f e = exp16(v16_load(x + i) - shift);
        memcpy(x + i, &e, sizeof e);
        acc += e;
    }
    float s = v16_sum(acc);
    for (; i < n; i++) s += x[i] = fast_expf(x[i] - shift);
    return s;
}

/* log(sum(exp(x))) without changing x */
static inline double vec_logsumexp(const float *x, int n) {
    float mx = vec_max(x, n);
    v16f acc = {0};
    int i = 0;
    for (; i + 16 <= n; i += 16) acc += exp16(v16_load(x + i) - mx);
    float s = v16_sum(acc);
    for (; i < n; i++) s += fast_expf(x[i] - mx);
    return mx + log((double)s);
}

#pragma GCC diagnostic pop

#endif
