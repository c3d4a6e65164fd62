/* bleu.h: corpus-level BLEU and chrF/chrF++ computed exactly as sacreBLEU 2.6.0 computes them,
 * for `nmt bleu` (a drop-in for the sacrebleu command line), validation during training and
 * `nmt eval`.
 *
 * Hypotheses and references are UTF-8 lines in memory. Scoring goes through per-segment
 * sufficient statistics (BleuCorpusStats), which are summed into a score (bleu_score) or resampled
 * by the paired bootstrap test (bleu_paired_bootstrap, sacreBLEU's significance.py including its
 * NumPy random stream and float32 arithmetic). The bleu_format_* / bleu_print_* functions print
 * what the sacrebleu command prints, as text or JSON.
 *
 * Files: bleu_metrics.c (segment statistics, scores), bleu_tokenize.c (sacreBLEU's
 * preprocessing and tokenizers), bleu_ngram.c (token and n-gram tables), bleu_paired.c
 * (bootstrap test), bleu_format.c (signatures and output). Reading files: bleu_io.h; the
 * references and systems of a command-line run: bleu_inputs.h. */
#ifndef NMT_BLEU_H
#define NMT_BLEU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BLEU_SACREBLEU_VERSION "2.6.0"
#define BLEU_MAX_NGRAM_ORDER 4
/* Per-segment BLEU statistics: sys_len, ref_len, correct[4], total[4]. */
#define BLEU_NSTATS (2 + 2 * BLEU_MAX_NGRAM_ORDER)
/* Largest char_order + word_order accepted for chrF (3 statistics per order). */
#define CHRF_MAX_ORDERS 32

typedef enum BleuTokenize {
    BLEU_TOKENIZE_13A,
    BLEU_TOKENIZE_INTL,
    BLEU_TOKENIZE_NONE
} BleuTokenize;

typedef enum BleuMetricKind { BLEU_METRIC_BLEU, BLEU_METRIC_CHRF } BleuMetricKind;

/* One metric with its options (sacreBLEU's BLEU(...) or CHRF(...) object). */
typedef struct BleuMetric {
    BleuMetricKind kind;
    bool lowercase;
    BleuTokenize tokenize; /* BLEU only */
    int char_order;        /* chrF: character n-gram order (6) */
    int word_order;        /* chrF: word n-gram order (0; 2 is chrF++) */
    int beta;              /* chrF: recall weight (2) */
    bool whitespace;       /* chrF: keep whitespace inside character n-grams */
} BleuMetric;

BleuMetric bleu_metric_bleu(BleuTokenize tokenize, bool lowercase);
BleuMetric bleu_metric_chrf(int word_order, bool lowercase);
int bleu_metric_nstats(const BleuMetric *m);
/* "BLEU", "chrF2", "chrF2++". */
void bleu_metric_name(const BleuMetric *m, char *buf, size_t cap);

/* A corpus scored segment by segment against its references. */
typedef struct BleuCorpusStats {
    long nsegments;
    int nstats;
    int64_t *seg;         /* (nsegments, nstats) */
    int nrefs;            /* references per segment, or -1 when it varies ("nrefs:var") */
    long no_reference;    /* first segment whose references are all NULL (error), or -1 */
} BleuCorpusStats;

/* Statistics of hyps[0..n) against nrefs reference streams refs[r][0..n). An empty string is an
 * (empty) reference; NULL is a missing one, for a variable number of references per segment
 * (sacreBLEU's None). A segment without any is an error: returns false with out->no_reference
 * set (nothing else to free). */
bool bleu_corpus_stats(const BleuMetric *m, const char *const *hyps,
                       const char *const *const *refs, int nrefs, long n, BleuCorpusStats *out);
void bleu_corpus_stats_free(BleuCorpusStats *s);
/* Column sums of the segment statistics (sums has nstats entries). */
void bleu_corpus_stats_sum(const BleuCorpusStats *s, int64_t *sums);

typedef struct BleuScore {
    double score; /* 0..100 */
    /* BLEU only: */
    double precisions[BLEU_MAX_NGRAM_ORDER]; /* percent, exp-smoothed */
    double bp, ratio;
    int64_t sys_len, ref_len;
} BleuScore;

/* The score of summed statistics (sacreBLEU's _compute_score_from_stats). */
BleuScore bleu_score(const BleuMetric *m, const int64_t *sums);
/* One reference per segment; false if one is NULL (*out untouched). */
bool bleu_corpus_score(const BleuMetric *m, const char *const *hyps, const char *const *refs,
                       long n, BleuScore *out);

/* The line as sacreBLEU's metric sees it after preprocessing: for BLEU lowercased (optionally),
 * rstripped and tokenized, tokens joined by single spaces; for chrF lowercased (optionally).
 * Returns a malloc'ed string. */
char *bleu_preprocess(const BleuMetric *m, const char *line);

/* ---- paired bootstrap resampling (bleu_paired.c) ---- */

typedef struct BleuPairedResult {
    double score;   /* the actual corpus score */
    double mean;    /* bootstrap estimate of the true mean */
    double ci;      /* half width of the 95% confidence interval */
    double p_value; /* NAN for the baseline */
} BleuPairedResult;

/* sacreBLEU's paired bootstrap test of systems[1..nsystems) against the baseline systems[0] for
 * one metric: n_samples resamples drawn by numpy.random.default_rng(seed).choice, scored with
 * NumPy's float32 arithmetic. results[s] for every system (the baseline gets mean and ci). */
void bleu_paired_bootstrap(const BleuMetric *m, const BleuCorpusStats *const *systems,
                           int nsystems, int n_samples, uint64_t seed,
                           BleuPairedResult *results);
/* Python's statistics of the bootstrap: pairwise summation as numpy.sum does it. */
double bleu_numpy_pairwise_sum(const double *a, long n);
float bleu_numpy_pairwise_sum_f32(const float *a, long n);

/* ---- output (bleu_format.c) ---- */

typedef enum BleuFormat { BLEU_FORMAT_JSON, BLEU_FORMAT_TEXT } BleuFormat;

/* The signature, e.g. "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0";
 * short_form uses sacreBLEU's abbreviations (--short). bootstrap_n > 0 adds "bs:N|seed:SEED". */
void bleu_signature(const BleuMetric *m, int nrefs, bool short_form, int bootstrap_n,
                    const char *seed, char *buf, size_t cap);
/* Score.format: "NAME|SIGNATURE = 20.8 54.4/26.6/14.9/8.7 (BP = ...)" as text, the JSON object,
 * or with score_only just "20.8". Returns a malloc'ed string. */
char *bleu_format_score(const BleuMetric *m, const BleuScore *s, const char *signature, int width,
                        bool score_only, BleuFormat format);
/* print_single_results: the score lines of one system aligned on " = ", or a JSON list. */
void bleu_print_single(FILE *out, char *const *lines, int n, BleuFormat format);
/* Python's repr() of a double (shortest round-trip form), as json.dumps writes floats. */
void bleu_python_repr(double x, char *buf, size_t cap);

/* The multi-system report (print_results_table): a fancy_grid table or JSON list with one row per
 * system and one column per metric, then the paired-test explanation and the signatures. */
typedef struct BleuSystemsReport {
    int nsystems, nmetrics;
    const char *const *system_names; /* (nsystems), the first one "Baseline: ..." when paired */
    const char *const *metric_names; /* (nmetrics) */
    const char *const *signatures;   /* (nmetrics) */
    /* Paired test: results[m * nsystems + s]; NULL for plain scores. */
    const BleuPairedResult *results;
    /* Plain multi-system mode: scores[m * nsystems + s], already formatted. */
    const char *const *scores;
    int width;
    int paired_bs_n; /* as given on the command line (printed in the explanation) */
    bool color;      /* ANSI colors as sacreBLEU uses on a terminal */
} BleuSystemsReport;

void bleu_print_systems(FILE *out, const BleuSystemsReport *r, BleuFormat format);

#endif
