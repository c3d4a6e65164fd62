/* test_bleu_paired.c: the paired bootstrap test against NumPy itself. The reference values in
 * tests/fixtures were produced by scripts/gen_numpy_fixtures.py with NumPy:
 *  - numpy_rng.txt: SeedSequence states and default_rng(seed).choice(n) streams, compared draw
 *    for draw (several seeds, n from 1 to 2^32 including heavy rejection ranges);
 *  - numpy_bootstrap.txt: ndarray.sum() of float64/float32 arrays (pairwise summation, exact),
 *    and sacreBLEU's paired bootstrap (score, mean, 95% CI, p-value) of synthetic BLEU and chrF++
 *    statistics of five systems, including an empty system and one whose resamples often score
 *    0 (NumPy then holds its chrF scores as float64 instead of float32). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bleu.h"
#include "numpy_random.h"
#include "test_util.h"

static FILE *open_fixture(const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/%s", NMT_SOURCE_DIR, name);
    FILE *f = fopen(path, "r");
    EXPECT(f != NULL, "cannot open %s", path);
    return f;
}

/* Reads the next whitespace-separated token of f into buf (false at end of file). */
static bool token(FILE *f, char *buf, size_t cap) {
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (c == '#') {
            while ((c = fgetc(f)) != EOF && c != '\n') {
            }
        } else if (c > ' ') {
            break;
        }
    }
    if (c == EOF) return false;
    size_t n = 0;
    do {
        if (n + 1 < cap) buf[n++] = (char)c;
    } while ((c = fgetc(f)) != EOF && c > ' ');
    buf[n] = '\0';
    return true;
}

static unsigned long long next_u64(FILE *f) {
    char buf[64];
    EXPECT(token(f, buf, sizeof buf), "fixture ended early");
    return strtoull(buf, NULL, 10);
}

static double next_double(FILE *f) {
    char buf[64];
    EXPECT(token(f, buf, sizeof buf), "fixture ended early");
    return strtod(buf, NULL);
}

static void test_rng(void) {
    FILE *f = open_fixture("numpy_rng.txt");
    if (!f) return;
    char kind[32];
    int seedseqs = 0, streams = 0;
    while (token(f, kind, sizeof kind)) {
        uint64_t seed = next_u64(f);
        if (!strcmp(kind, "seedseq")) {
            uint32_t words[8];
            numpy_seed_sequence(seed, words, 8);
            for (int i = 0; i < 8; i++) {
                unsigned long long want = next_u64(f);
                EXPECT(words[i] == want, "SeedSequence(%llu) word %d: %u, want %llu",
                       (unsigned long long)seed, i, words[i], want);
            }
            seedseqs++;
            continue;
        }
        EXPECT(!strcmp(kind, "choice"), "unknown fixture line '%s'", kind);
        uint64_t n = next_u64(f), count = next_u64(f);
        NumpyPcg64 rng;
        numpy_pcg64_seed(&rng, seed);
        long bad = 0;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t want = next_u64(f), got = numpy_pcg64_below(&rng, n);
            if (got != want && bad++ < 3)
                fprintf(stderr, "  seed %llu n %llu draw %llu: %llu, want %llu\n",
                        (unsigned long long)seed, (unsigned long long)n, (unsigned long long)i,
                        (unsigned long long)got, (unsigned long long)want);
        }
        EXPECT(bad == 0, "default_rng(%llu).choice(%llu): %ld of %llu draws differ",
               (unsigned long long)seed, (unsigned long long)n, bad, (unsigned long long)count);
        streams++;
    }
    fclose(f);
    EXPECT(seedseqs == 6 && streams == 9, "read %d seed sequences and %d streams", seedseqs,
           streams);
}

static void check_sum(FILE *f, bool f32) {
    long n = (long)next_u64(f);
    double *v = malloc((size_t)n * sizeof *v);
    float *vf = malloc((size_t)n * sizeof *vf);
    for (long i = 0; i < n; i++) {
        v[i] = next_double(f);
        vf[i] = (float)v[i];
    }
    double want = next_double(f);
    double got = f32 ? bleu_numpy_pairwise_sum_f32(vf, n) : bleu_numpy_pairwise_sum(v, n);
    EXPECT(got == want, "pairwise sum of %ld %s: %.17g, want %.17g", n, f32 ? "float32" : "float64",
           got, want);
    free(v);
    free(vf);
}

static bool close_rel(double got, double want) {
    return fabs(got - want) <= 1e-12 * fabs(want);
}

/* One "metric" block: statistics of every system, then the expected results. */
static void check_bootstrap(FILE *f) {
    char name[32], key[32];
    EXPECT(token(f, name, sizeof name), "metric name");
    int nstats = 0, nsamples = 0, nsystems = 0;
    long nsegments = 0;
    uint64_t seed = 0;
    for (int k = 0; k < 5; k++) {
        EXPECT(token(f, key, sizeof key), "metric header");
        unsigned long long v = next_u64(f);
        if (!strcmp(key, "nstats")) nstats = (int)v;
        else if (!strcmp(key, "nsegments")) nsegments = (long)v;
        else if (!strcmp(key, "nsamples")) nsamples = (int)v;
        else if (!strcmp(key, "seed")) seed = v;
        else if (!strcmp(key, "nsystems")) nsystems = (int)v;
    }
    BleuMetric m = !strcmp(name, "bleu") ? bleu_metric_bleu(BLEU_TOKENIZE_13A, false)
                                         : bleu_metric_chrf(2, false);
    EXPECT(bleu_metric_nstats(&m) == nstats, "%s: %d statistics per segment, want %d", name,
           bleu_metric_nstats(&m), nstats);
    BleuCorpusStats *stats = calloc((size_t)nsystems, sizeof *stats);
    const BleuCorpusStats **systems = calloc((size_t)nsystems, sizeof *systems);
    for (int s = 0; s < nsystems; s++) {
        stats[s] = (BleuCorpusStats){.nsegments = nsegments, .nstats = nstats, .nrefs = 1,
                                     .no_reference = -1};
        stats[s].seg = malloc((size_t)(nsegments * nstats) * sizeof *stats[s].seg);
        for (long i = 0; i < nsegments * nstats; i++) stats[s].seg[i] = (int64_t)next_u64(f);
        systems[s] = &stats[s];
    }
    BleuPairedResult *res = calloc((size_t)nsystems, sizeof *res);
    bleu_paired_bootstrap(&m, systems, nsystems, nsamples, seed, res);
    for (int s = 0; s < nsystems; s++) {
        char tag[32], dtype[32];
        EXPECT(token(f, tag, sizeof tag) && !strcmp(tag, "expect"), "expect line");
        EXPECT((int)next_u64(f) == s, "expect line order");
        double score = next_double(f), mean = next_double(f), ci = next_double(f),
               p = next_double(f);
        EXPECT(token(f, dtype, sizeof dtype), "dtype");
        EXPECT(close_rel(res[s].score, score), "%s system %d: score %.17g, want %.17g", name, s,
               res[s].score, score);
        EXPECT(close_rel(res[s].mean, mean), "%s system %d (%s): mean %.17g, want %.17g", name, s,
               dtype, res[s].mean, mean);
        EXPECT(close_rel(res[s].ci, ci), "%s system %d (%s): ci %.17g, want %.17g", name, s,
               dtype, res[s].ci, ci);
        EXPECT(isnan(p) ? isnan(res[s].p_value) : res[s].p_value == p,
               "%s system %d: p %.17g, want %.17g", name, s, res[s].p_value, p);
    }
    for (int s = 0; s < nsystems; s++) free(stats[s].seg);
    free(stats);
    free(systems);
    free(res);
}

static void test_bootstrap(void) {
    FILE *f = open_fixture("numpy_bootstrap.txt");
    if (!f) return;
    char kind[32];
    int metrics = 0, sums = 0;
    while (token(f, kind, sizeof kind)) {
        if (!strcmp(kind, "metric")) {
            check_bootstrap(f);
            metrics++;
        } else if (!strcmp(kind, "sum64") || !strcmp(kind, "sum32")) {
            check_sum(f, kind[3] == '3');
            sums++;
        } else {
            EXPECT(false, "unknown fixture line '%s'", kind);
            break;
        }
    }
    fclose(f);
    EXPECT(metrics == 2 && sums == 14, "read %d metric blocks and %d sums", metrics, sums);
}

int main(void) {
    test_rng();
    test_bootstrap();
    return test_finish();
}
