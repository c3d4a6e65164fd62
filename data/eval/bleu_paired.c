/* bleu_paired.c: sacreBLEU's paired bootstrap resampling test (significance.py), reproduced with
 * the arithmetic NumPy (>= 2, NEP 50 promotion) performs on it:
 *   - resample indices from numpy.random.default_rng(seed).choice(n, size=(n_samples, n)),
 *     the same draws for the baseline and every system;
 *   - statistics held as float32 and summed row by row in float32 (ndarray.sum(axis=0));
 *   - scores from those float32 sums by bleu_score_held: BLEU precisions in float32 before
 *     Python's math.log and the score a Python float, chrF entirely in float32 (a resample
 *     scoring exactly 0 returns Python's 0.0 instead, which turns that system's score array into
 *     float64);
 *   - means by NumPy's pairwise summation, the 95% interval from the sorted scores, and the
 *     p-value from the centred absolute differences compared in the array's precision. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bleu.h"
#include "bleu_internal.h"
#include "check.h"
#include "numpy_random.h"

enum { PAIRWISE_BLOCK = 128 }; /* NumPy's PW_BLOCKSIZE */

/* numpy's pairwise_sum for one contiguous run: 8 interleaved accumulators up to a block, halves
 * (rounded down to a multiple of 8) beyond. Instantiated for double and float. */
#define DEFINE_PAIRWISE_SUM(name, T)                                                               \
    static T name(const T *a, long n) {                                                            \
        if (n < 8) {                                                                               \
            T res = 0;                                                                             \
            for (long i = 0; i < n; i++) res += a[i];                                              \
            return res;                                                                            \
        }                                                                                          \
        if (n <= PAIRWISE_BLOCK) {                                                                 \
            T r[8];                                                                                \
            for (int j = 0; j < 8; j++) r[j] = a[j];                                               \
            long i;                                                                                \
            for (i = 8; i < n - (n % 8); i += 8)                                                   \
                for (int j = 0; j < 8; j++) r[j] += a[i + j];                                      \
            T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));             \
            for (; i < n; i++) res += a[i];                                                        \
            return res;                                                                            \
        }                                                                                          \
        long n2 = n / 2;                                                                           \
        n2 -= n2 % 8;                                                                              \
        return name(a, n2) + name(a + n2, n - n2);                                                 \
    }

DEFINE_PAIRWISE_SUM(pairwise_sum_f64, double)
DEFINE_PAIRWISE_SUM(pairwise_sum_f32, float)

double bleu_numpy_pairwise_sum(const double *a, long n) { return pairwise_sum_f64(a, n); }
float bleu_numpy_pairwise_sum_f32(const float *a, long n) { return pairwise_sum_f32(a, n); }

/* ---- NumPy arrays of bootstrap scores ---- */

/* One system's resampled scores, as the float32 or float64 array np.array() makes of them. */
typedef struct ScoreArray {
    double *v; /* (n) values (exactly float32 values when is_f32) */
    long n;
    bool is_f32;
} ScoreArray;

/* ndarray.mean(): pairwise sum in the array's dtype, divided by the count in double. */
static double array_mean(const double *v, long n, bool is_f32) {
    if (!is_f32) return pairwise_sum_f64(v, n) / (double)n;
    float *f = xmalloc((size_t)n * sizeof *f);
    for (long i = 0; i < n; i++) f[i] = (float)v[i];
    float sum = pairwise_sum_f32(f, n);
    free(f);
    return (float)((double)sum / (double)n);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* significance.estimate_ci: mean of the sorted scores and half the width of the interval between
 * the n/40-th smallest and largest. */
static void estimate_ci(const ScoreArray *a, double *mean, double *ci) {
    double *sorted = xmalloc((size_t)a->n * sizeof *sorted);
    memcpy(sorted, a->v, (size_t)a->n * sizeof *sorted);
    qsort(sorted, (size_t)a->n, sizeof *sorted, cmp_double);
    long lower = a->n / 40, upper = a->n - lower - 1;
    if (a->is_f32) *ci = (float)(0.5f * (float)((float)sorted[upper] - (float)sorted[lower]));
    else *ci = 0.5 * (sorted[upper] - sorted[lower]);
    *mean = array_mean(sorted, a->n, a->is_f32);
    free(sorted);
}

/* significance._compute_p_value on the paired differences: how often the centred absolute
 * difference of a resample exceeds the actual difference, plus one, over n + 1. */
static double paired_p_value(const ScoreArray *sys, const ScoreArray *base, double actual_diff) {
    long n = sys->n;
    bool is_f32 = sys->is_f32 && base->is_f32;
    double *diffs = xmalloc((size_t)n * sizeof *diffs);
    for (long i = 0; i < n; i++)
        diffs[i] = is_f32 ? fabsf((float)sys->v[i] - (float)base->v[i])
                          : fabs(sys->v[i] - base->v[i]);
    double mean = array_mean(diffs, n, is_f32);
    long count = 0;
    for (long i = 0; i < n; i++) {
        if (is_f32) count += (float)((float)diffs[i] - (float)mean) > (float)actual_diff;
        else count += diffs[i] - mean > actual_diff;
    }
    free(diffs);
    return (double)(count + 1) / (double)(n + 1);
}

void bleu_paired_bootstrap(const BleuMetric *m, const BleuCorpusStats *const *systems,
                           int nsystems, int n_samples, uint64_t seed,
                           BleuPairedResult *results) {
    CHECK(nsystems >= 1 && n_samples >= 1, "paired bootstrap needs systems and samples");
    long n = systems[0]->nsegments;
    int nstats = systems[0]->nstats;
    for (int s = 1; s < nsystems; s++)
        CHECK(systems[s]->nsegments == n && systems[s]->nstats == nstats,
              "system %d has %ld segments, the baseline %ld", s, systems[s]->nsegments, n);
    CHECK(n >= 1 && (uint64_t)n <= ((uint64_t)1 << 32), "cannot resample %ld segments", n);

    ScoreArray *arrays = xcalloc((size_t)nsystems, sizeof *arrays);
    for (int s = 0; s < nsystems; s++) {
        arrays[s].v = xmalloc((size_t)n_samples * sizeof *arrays[s].v);
        arrays[s].n = n_samples;
        arrays[s].is_f32 = m->kind == BLEU_METRIC_CHRF;
    }
    uint32_t *idx = xmalloc((size_t)n * sizeof *idx); /* (n) one resample */
    float *sums = xmalloc((size_t)nstats * sizeof *sums);        /* (nstats) float32 row sums */
    double *held_sums = xmalloc((size_t)nstats * sizeof *held_sums); /* (nstats) the same */
    NumpyPcg64 rng;
    numpy_pcg64_seed(&rng, seed);
    for (int k = 0; k < n_samples; k++) {
        for (long i = 0; i < n; i++) idx[i] = (uint32_t)numpy_pcg64_below(&rng, (uint64_t)n);
        for (int s = 0; s < nsystems; s++) {
            memset(sums, 0, (size_t)nstats * sizeof *sums);
            for (long i = 0; i < n; i++) {
                const int64_t *row = systems[s]->seg + (size_t)idx[i] * (size_t)nstats;
                for (int j = 0; j < nstats; j++) sums[j] += (float)row[j];
            }
            for (int j = 0; j < nstats; j++) held_sums[j] = sums[j];
            bool python_zero;
            arrays[s].v[k] = bleu_score_held(m, held_sums, true, &python_zero).score;
            if (python_zero) arrays[s].is_f32 = false;
        }
    }
    int64_t totals[3 * CHRF_MAX_ORDERS];
    for (int s = 0; s < nsystems; s++) {
        bleu_corpus_stats_sum(systems[s], totals);
        results[s].score = bleu_score(m, totals).score;
        estimate_ci(&arrays[s], &results[s].mean, &results[s].ci);
        results[s].p_value = s == 0 ? NAN
                                    : paired_p_value(&arrays[s], &arrays[0],
                                                     fabs(results[0].score - results[s].score));
    }
    for (int s = 0; s < nsystems; s++) free(arrays[s].v);
    free(arrays);
    free(idx);
    free(sums);
    free(held_sums);
}
