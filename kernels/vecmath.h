/* vecmath.h: float math in a form the compiler turns into SIMD code for the target CPU.
 * expf: the Cephes range reduction and polynomial (relative error below 2e-7 over the float
 * range; 0 below -87.3 and for -inf, +inf above 88.4, NaN stays NaN), written once for a GCC
 * vector as wide as the target's registers (16 floats with AVX-512, 8 with AVX, else 4); a row's
 * last elements go through it as one partial vector. The width must match the registers: GCC
 * lowers the comparisons of a wider vector one lane at a time (16-float vectors on AVX2 ran exp at
 * 5 ns per element).
 * glibc's vector expf would need -ffast-math, which loosens every other float operation too. */
#ifndef NMT_VECMATH_H
#define NMT_VECMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
#define VF_BYTES 64
#elif defined(__AVX__)
#define VF_BYTES 32
#else
#define VF_BYTES 16
#endif
enum { VF_LANES = VF_BYTES / 4 };

typedef float vfloat __attribute__((vector_size(VF_BYTES)));
typedef int32_t vint __attribute__((vector_size(VF_BYTES)));

static inline vfloat vf_select(vint mask, vfloat a, vfloat b) {  // mask ? a : b, lane by lane
    return (vfloat)(((vint)a & mask) | ((vint)b & ~mask));
}

/* x in every lane: one broadcast (from memory when x comes from there). `(vfloat){0} + x` would
 * add zero first, which the compiler must keep (it turns -0 into +0), and a loop over the lanes
 * becomes one masked broadcast per lane. */
static inline vfloat vf_splat(float x) {
#if defined(__AVX512F__)
    return (vfloat)_mm512_set1_ps(x);
#elif defined(__AVX__)
    return (vfloat)_mm256_set1_ps(x);
#else
    return (vfloat){x, x, x, x};
#endif
}

static inline vfloat vf_load(const float *p) {
    vfloat v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The first n lanes (0 <= n <= VF_LANES) of p, the others 0; and their store. Nothing past n
 * lanes is touched (masked loads and stores where the ISA has them: a memcpy of variable length
 * would become a slow string copy). */
#if defined(__AVX512F__)
static inline vfloat vf_load_partial(const float *p, int n) {
    return (vfloat)_mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), p);
}
static inline void vf_store_partial(float *p, vfloat x, int n) {
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1), (__m512)x);
}
#elif defined(__AVX__)
static inline __m256i vf_lane_mask(int n) {
    static const int32_t ones_then_zeros[16] = {-1, -1, -1, -1, -1, -1, -1, -1};
    return _mm256_loadu_si256((const __m256i *)(ones_then_zeros + 8 - n));
}
static inline vfloat vf_load_partial(const float *p, int n) {
    return (vfloat)_mm256_maskload_ps(p, vf_lane_mask(n));
}
static inline void vf_store_partial(float *p, vfloat x, int n) {
    _mm256_maskstore_ps(p, vf_lane_mask(n), (__m256)x);
}
#else
static inline vfloat vf_load_partial(const float *p, int n) {
    vfloat v = {0};
    for (int i = 0; i < n; i++) v[i] = p[i];
    return v;
}
static inline void vf_store_partial(float *p, vfloat x, int n) {
    for (int i = 0; i < n; i++) p[i] = x[i];
}
#endif

static inline float vf_sum(vfloat v) {
    float s = 0.0f;
    for (int i = 0; i < VF_LANES; i++) s += v[i];
    return s;
}

static inline vfloat vf_exp(vfloat x) {
    const float hi = 88.3762626647949f, lo = -87.3365447504f;
    const vfloat zero = {0}, one = zero + 1.0f;
    vfloat c = vf_select(x < lo, zero + lo, x);
    c = vf_select(c > hi, zero + hi, c);
    vfloat t = c * 1.44269504088896341f + 0.5f;   // n = floor(t) = round(c / ln 2)
    vfloat n = __builtin_convertvector(__builtin_convertvector(t, vint), vfloat);
    n -= vf_select(n > t, one, zero);             // truncation corrected for negative t
    vfloat r = c - n * 0.693359375f;              // c - n ln 2, in two parts
    r -= n * -2.12194440e-4f;
    vfloat y = zero + 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * (r * r) + r + 1.0f;
    vfloat e = y * (vfloat)((__builtin_convertvector(n, vint) + 127) << 23);  // y * 2^n
    e = vf_select(x < lo, zero, e);
    return vf_select(x > hi, zero + INFINITY, e);
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
    vfloat acc = {0};
    int i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) {
        vfloat e = vf_exp(vf_load(x + i) - shift);
        memcpy(x + i, &e, sizeof e);
        acc += e;
    }
    float s = vf_sum(acc);
    if (i < n) {  // the tail in one vector, summed in order as single elements
        vfloat e = vf_exp(vf_load_partial(x + i, n - i) - shift);
        vf_store_partial(x + i, e, n - i);
        for (; i < n; i++) s += x[i];
    }
    return s;
}

/* log(sum(exp(x))) without changing x */
static inline double vec_logsumexp(const float *x, int n) {
    float mx = vec_max(x, n);
    vfloat acc = {0};
    int i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) acc += vf_exp(vf_load(x + i) - mx);
    float s = vf_sum(acc);
    if (i < n) {  // as in vec_exp_shift
        vfloat e = vf_exp(vf_load_partial(x + i, n - i) - mx);
        for (int j = 0; j < n - i; j++) s += e[j];
    }
    return mx + log((double)s);
}

#endif
