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

/* Lanes below n (0 <= n <= VF_LANES) all ones, the others 0: a mask for vf_select. */
static inline vint vf_first_lanes(int n) {
    static const int32_t iota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    vint lane;
    memcpy(&lane, iota, sizeof lane);
    return lane < n;
}

/* The sum of the lanes, added pairwise: halves, then their halves (a chain of log2(lanes) adds,
 * not one of lanes: short rows are all latency). */
static inline float vf_sum(vfloat v) {
#if defined(__AVX512F__)
    return _mm512_reduce_add_ps((__m512)v);
#elif defined(__AVX__)
    __m128 s = _mm_add_ps(_mm256_castps256_ps128((__m256)v), _mm256_extractf128_ps((__m256)v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
#else
    return (v[0] + v[2]) + (v[1] + v[3]);
#endif
}

/* The largest lane (NaN lanes never win, as in vec_max). */
static inline float vf_max(vfloat v) {
#if defined(__AVX512F__)
    return _mm512_reduce_max_ps((__m512)v);
#elif defined(__AVX__)
    __m128 m = _mm_max_ps(_mm256_castps256_ps128((__m256)v), _mm256_extractf128_ps((__m256)v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
#else
    float a = v[0] > v[2] ? v[0] : v[2], b = v[1] > v[3] ? v[1] : v[3];
    return a > b ? a : b;
#endif
}

/* exp(x) lane by lane, to 4e-7 relative: x = n ln 2 + r with |r| <= ln 2 / 2, exp(r) by a
 * polynomial, times 2^n; 0 below lo (so -inf gives 0), inf where it overflows, NaN kept. With
 * AVX-512, roundscale and scalef do the rounding and the scaling (and its overflow), where the
 * portable form needs clamps and selects, which AVX-512's comparisons into mask registers make
 * costly. */
static inline vfloat vf_exp(vfloat x) {
    const float hi = 88.3762626647949f, lo = -87.3365447504f;
#if defined(__AVX512F__)
    const __m512 v = (__m512)x;
    // clamped into [lo, hi + 1]: NaN kept (max and min return their second operand then)
    const __m512 c = _mm512_min_ps(_mm512_set1_ps(hi + 1.0f), _mm512_max_ps(_mm512_set1_ps(lo), v));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(c, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), c);  // c - n ln 2, in two parts
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 y = _mm512_set1_ps(1.9875691500e-4f);
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
    y = _mm512_add_ps(_mm512_fmadd_ps(y, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
    const __mmask16 kept = _mm512_cmp_ps_mask(v, _mm512_set1_ps(lo), _CMP_NLT_UQ);  // not x < lo
    return (vfloat)_mm512_maskz_scalef_ps(kept, y, n);
#else
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
#endif
}

/* The max of x[0..n) (NaN elements are passed over; -inf for n = 0), and in *sum their sum, in one
 * pass: the two chains of dependent operations run side by side. Inlined, an unused result costs
 * nothing: vec_max and vec_sum are this function. */
static inline float vec_max_sum(const float *x, int n, float *sum) {
    vfloat mx = vf_splat(-INFINITY), acc = {0};
    int i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) {
        vfloat v = vf_load(x + i);
        mx = vf_select(v > mx, v, mx);
        acc += v;
    }
    if (i < n) {
        vfloat v = vf_load_partial(x + i, n - i);
        mx = vf_select(vf_first_lanes(n - i) & (v > mx), v, mx);
        acc += v;
    }
    *sum = vf_sum(acc);
    return vf_max(mx);
}

static inline float vec_max(const float *x, int n) {
    float sum;
    return vec_max_sum(x, n, &sum);
}

static inline float vec_sum(const float *x, int n) {
    float sum;
    vec_max_sum(x, n, &sum);
    return sum;
}

/* sum of (x[i] - m)^2 over i < n */
static inline float vec_sum_sq_dev(const float *x, float m, int n) {
    vfloat acc = {0};
    int i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) {
        vfloat d = vf_load(x + i) - m;
        acc += d * d;
    }
    if (i < n) {
        vfloat d = vf_load_partial(x + i, n - i) - m;
        d = vf_select(vf_first_lanes(n - i), d, (vfloat){0});
        acc += d * d;
    }
    return vf_sum(acc);
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
    if (i < n) {  // the tail in one vector
        vfloat e = vf_exp(vf_load_partial(x + i, n - i) - shift);
        vf_store_partial(x + i, e, n - i);
        acc += vf_select(vf_first_lanes(n - i), e, (vfloat){0});
    }
    return vf_sum(acc);
}

/* log(sum(exp(x))) without changing x */
static inline double vec_logsumexp(const float *x, int n) {
    float mx = vec_max(x, n);
    vfloat acc = {0};
    int i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) acc += vf_exp(vf_load(x + i) - mx);
    if (i < n)
        acc += vf_select(vf_first_lanes(n - i), vf_exp(vf_load_partial(x + i, n - i) - mx),
                         (vfloat){0});
    return mx + log((double)vf_sum(acc));
}

/* sum of x[i] y[i] over i < n, in float lanes */
static inline float vec_dot(const float *x, const float *y, int n) {
    vfloat acc = {0};
    int i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) acc += vf_load(x + i) * vf_load(y + i);
    if (i < n) acc += vf_load_partial(x + i, n - i) * vf_load_partial(y + i, n - i);
    return vf_sum(acc);
}

#endif
