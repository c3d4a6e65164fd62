/* bleu_metrics.c: the metrics of bleu.h. BLEU and chrF/chrF++ segment statistics (each segment
 * preprocessed by bleu_tokenize.c and its n-grams matched in bleu_ngram.c tables, the best of
 * several references chosen as sacreBLEU chooses it), corpus statistics as rows of those, and the
 * BLEU and chrF formulas on summed statistics, with the same floating-point operations in the same
 * order as sacreBLEU's Python so that scores agree to the last bit. */
#include "bleu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bleu_internal.h"
#include "bleu_ngram.h"
#include "bleu_tokenize.h"
#include "check.h"

/* ---- buffers ---- */

/* Buffers reused across segments. */
typedef struct Workspace {
    TextBuf buf;          /* the line being preprocessed */
    U32Vec *seqs;         /* (1 + nrefs) token ids or characters of hyp and each reference */
    U32Vec *words;        /* (1 + nrefs) chrF++ word ids */
    int nseqs;
    TokenTable tokens;
    NgramTable ref_counts, ref_one, hyp_counts;
} Workspace;

static void workspace_init(Workspace *w, int nseqs) {
    memset(w, 0, sizeof *w);
    w->nseqs = nseqs;
    w->seqs = xcalloc((size_t)nseqs, sizeof *w->seqs);
    w->words = xcalloc((size_t)nseqs, sizeof *w->words);
}

static void workspace_free(Workspace *w) {
    text_buf_free(&w->buf);
    for (int i = 0; i < w->nseqs; i++) {
        free(w->seqs[i].v);
        free(w->words[i].v);
    }
    free(w->seqs);
    free(w->words);
    token_table_free(&w->tokens);
    ngram_table_free(&w->ref_counts);
    ngram_table_free(&w->ref_one);
    ngram_table_free(&w->hyp_counts);
}

/* ---- metrics ---- */

BleuMetric bleu_metric_bleu(BleuTokenize tokenize, bool lowercase) {
    return (BleuMetric){.kind = BLEU_METRIC_BLEU, .lowercase = lowercase, .tokenize = tokenize};
}

BleuMetric bleu_metric_chrf(int word_order, bool lowercase) {
    return (BleuMetric){.kind = BLEU_METRIC_CHRF,
                        .lowercase = lowercase,
                        .char_order = 6,
                        .word_order = word_order,
                        .beta = 2};
}

int bleu_metric_nstats(const BleuMetric *m) {
    return m->kind == BLEU_METRIC_BLEU ? BLEU_NSTATS : 3 * (m->char_order + m->word_order);
}

void bleu_metric_name(const BleuMetric *m, char *buf, size_t cap) {
    if (m->kind == BLEU_METRIC_BLEU) {
        snprintf(buf, cap, "BLEU");
        return;
    }
    int k = snprintf(buf, cap, "chrF%d", m->beta);
    for (int i = 0; i < m->word_order && k + 1 < (int)cap; i++) buf[k++] = '+';
    if (k < (int)cap) buf[k] = '\0';
}

/* ---- BLEU ---- */

/* The reference length BLEU compares against: the closest to the hypothesis, the shorter on
 * ties. */
static int64_t closest_ref_len(int64_t hyp_len, const int64_t *ref_lens, int nrefs) {
    int64_t best_diff = -1, best_len = -1;
    for (int r = 0; r < nrefs; r++) {
        int64_t diff = llabs(hyp_len - ref_lens[r]);
        if (best_diff == -1 || diff < best_diff) {
            best_diff = diff;
            best_len = ref_lens[r];
        } else if (diff == best_diff && ref_lens[r] < best_len) {
            best_len = ref_lens[r];
        }
    }
    return best_len;
}

/* Segment statistics against nrefs references (sacreBLEU clips each n-gram by its
 * largest count in any one reference). */
static void bleu_segment(Workspace *w, const BleuMetric *m, const char *hyp,
                         const char *const *refs, int nrefs, int64_t *st) {
    int64_t ref_lens[nrefs];
    size_t max_ngrams = 0;
    for (int r = 0; r < nrefs; r++) {
        bleu_prepare_text(&w->buf, m, refs[r]);
        split_words(&w->buf.text, &w->tokens, &w->seqs[1 + r]);
        ref_lens[r] = (int64_t)w->seqs[1 + r].n;
        max_ngrams += ngram_bound(w->seqs[1 + r].n, BLEU_MAX_NGRAM_ORDER);
    }
    ngram_table_reset(&w->ref_counts, max_ngrams);
    for (int r = 0; r < nrefs; r++) {
        const U32Vec *ids = &w->seqs[1 + r];
        if (nrefs == 1) {
            ngram_table_add_all(&w->ref_counts, ids->v, ids->n, BLEU_MAX_NGRAM_ORDER);
            continue;
        }
        ngram_table_reset(&w->ref_one, ngram_bound(ids->n, BLEU_MAX_NGRAM_ORDER));
        ngram_table_add_all(&w->ref_one, ids->v, ids->n, BLEU_MAX_NGRAM_ORDER);
        for (size_t i = 0; i < w->ref_one.nused; i++) {
            const NgramSlot *e = &w->ref_one.slots[w->ref_one.used[i]];
            NgramSlot *best = ngram_table_get(&w->ref_counts, e->seq, e->n, e->hash, true);
            if (e->count > best->count) best->count = e->count;
        }
    }
    bleu_prepare_text(&w->buf, m, hyp);
    U32Vec *ids = &w->seqs[0];
    split_words(&w->buf.text, &w->tokens, ids);
    memset(st, 0, BLEU_NSTATS * sizeof *st);
    st[0] = (int64_t)ids->n;
    st[1] = closest_ref_len(st[0], ref_lens, nrefs);
    ngram_match(&w->hyp_counts, &w->ref_counts, ids->v, ids->n, BLEU_MAX_NGRAM_ORDER,
                st + 2 + BLEU_MAX_NGRAM_ORDER, st + 2);
}

/* math.log floored as sacreBLEU's my_log: log(0) counts as -9999999999. */
static double my_log(double x) {
    return x == 0.0 ? -9999999999.0 : log(x);
}

/* Python's sum() of floats: left to right, as CPython up to 3.11 adds (3.12 added Neumaier
 * compensation, which moves the last bits of some scores; the reference scores were made with
 * plain addition, and this matches them bit for bit). */
static double python_sum(const double *x, int n) {
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += x[i];
    return sum;
}

/* An intermediate result as sacreBLEU holds it: a Python float (double), or a NumPy float32
 * scalar when the statistics came from a float32 array. Rounding the double result of one
 * + - * / of float32 operands to float32 gives exactly the float32 operation (53 >= 2 * 24 + 2),
 * so one code path serves both. */
static double held(double x, bool float32) {
    return float32 ? (double)(float)x : x;
}

/* BLEU.compute_bleu with 'exp' smoothing. */
static BleuScore bleu_compute(const double *st, bool float32) {
    BleuScore s = {0};
    const double *correct = st + 2, *total = st + 2 + BLEU_MAX_NGRAM_ORDER;
    s.sys_len = (int64_t)st[0];
    s.ref_len = (int64_t)st[1];
    s.ratio = s.ref_len ? (double)s.sys_len / (double)s.ref_len : 0.0;
    if (s.sys_len < s.ref_len)
        s.bp = s.sys_len > 0 ? exp(1.0 - (double)s.ref_len / (double)s.sys_len) : 0.0;
    else s.bp = 1.0;
    bool any_correct = false;
    for (int n = 0; n < BLEU_MAX_NGRAM_ORDER; n++) any_correct |= correct[n] != 0;
    if (!any_correct) return s;
    double smooth = 1.0;
    for (int n = 0; n < BLEU_MAX_NGRAM_ORDER; n++) {
        if (total[n] == 0) break;
        if (correct[n] == 0) {
            smooth *= 2;
            s.precisions[n] = held(100.0 / held(smooth * total[n], float32), float32);
        } else {
            s.precisions[n] = held(held(100.0 * correct[n], float32) / total[n], float32);
        }
    }
    double logs[BLEU_MAX_NGRAM_ORDER];
    for (int n = 0; n < BLEU_MAX_NGRAM_ORDER; n++) logs[n] = my_log(s.precisions[n]);
    s.score = s.bp * exp(python_sum(logs, BLEU_MAX_NGRAM_ORDER) / BLEU_MAX_NGRAM_ORDER);
    return s;
}

/* CHRF._compute_f_score without eps smoothing: precision and recall averaged over the orders
 * that have both hypothesis and reference n-grams, then F-beta, in percent. The Python float 0.0
 * it returns for a zero score is flagged in *python_zero (it makes NumPy's array float64). */
static double chrf_compute(const double *st, int norders, int beta, bool float32,
                           bool *python_zero) {
    const int factor = beta * beta;
    double avg_prec = 0.0, avg_rec = 0.0;
    int effective_order = 0;
    for (int i = 0; i < norders; i++) {
        double n_hyp = st[3 * i], n_ref = st[3 * i + 1], n_match = st[3 * i + 2];
        if (n_hyp > 0 && n_ref > 0) {
            avg_prec = held(avg_prec + held(n_match / n_hyp, float32), float32);
            avg_rec = held(avg_rec + held(n_match / n_ref, float32), float32);
            effective_order++;
        }
    }
    *python_zero = true;
    if (effective_order == 0) return 0.0;
    avg_prec = held(avg_prec / effective_order, float32);
    avg_rec = held(avg_rec / effective_order, float32);
    if (held(avg_prec + avg_rec, float32) == 0.0) return 0.0;
    *python_zero = false;
    double score = held(held((1 + factor) * avg_prec, float32) * avg_rec, float32);
    score = held(score / held(held(factor * avg_prec, float32) + avg_rec, float32), float32);
    return held(100 * score, float32);
}

BleuScore bleu_score_held(const BleuMetric *m, const double *sums, bool float32,
                          bool *python_zero) {
    *python_zero = false;
    if (m->kind == BLEU_METRIC_BLEU) return bleu_compute(sums, float32);
    int norders = m->char_order + m->word_order;
    return (BleuScore){.score = chrf_compute(sums, norders, m->beta, float32, python_zero)};
}

/* Matches one sequence kind (characters or words) of orders 1..max_order into st (3 per order:
 * hyp n-grams, ref n-grams, matches; hyp n-grams count only where the reference has some). */
static void chrf_match(Workspace *w, const U32Vec *hyp, const U32Vec *ref, int max_order,
                       int64_t *st) {
    ngram_table_reset(&w->ref_counts, ngram_bound(ref->n, max_order));
    ngram_table_add_all(&w->ref_counts, ref->v, ref->n, max_order);
    int64_t hyp_total[CHRF_MAX_ORDERS] = {0}, matched[CHRF_MAX_ORDERS] = {0};
    ngram_match(&w->hyp_counts, &w->ref_counts, hyp->v, hyp->n, max_order, hyp_total, matched);
    for (int n = 1; n <= max_order; n++) {
        int64_t ref_total = ref->n >= (size_t)n ? (int64_t)(ref->n - (size_t)n + 1) : 0;
        st[3 * (n - 1)] = ref_total ? hyp_total[n - 1] : 0;
        st[3 * (n - 1) + 1] = ref_total;
        st[3 * (n - 1) + 2] = matched[n - 1];
    }
}

/* Segment statistics of the reference with the best chrF (the first on ties). */
static void chrf_segment(Workspace *w, const BleuMetric *m, const char *hyp,
                         const char *const *refs, int nrefs, int64_t *st) {
    int nstats = bleu_metric_nstats(m);
    for (int r = 0; r < nrefs; r++)
        chrf_prepare(&w->buf, &w->tokens, m, refs[r], &w->seqs[1 + r], &w->words[1 + r]);
    chrf_prepare(&w->buf, &w->tokens, m, hyp, &w->seqs[0], &w->words[0]);
    double best = -1.0;
    int64_t cand[3 * CHRF_MAX_ORDERS];
    for (int r = 0; r < nrefs; r++) {
        chrf_match(w, &w->seqs[0], &w->seqs[1 + r], m->char_order, cand);
        if (m->word_order > 0)
            chrf_match(w, &w->words[0], &w->words[1 + r], m->word_order,
                       cand + 3 * m->char_order);
        double counts[3 * CHRF_MAX_ORDERS];
        for (int j = 0; j < nstats; j++) counts[j] = (double)cand[j];
        bool python_zero;
        double f =
            chrf_compute(counts, m->char_order + m->word_order, m->beta, false, &python_zero);
        if (f > best) {
            best = f;
            memcpy(st, cand, (size_t)nstats * sizeof *st);
        }
    }
}

/* ---- corpus ---- */

bool bleu_corpus_stats(const BleuMetric *m, const char *const *hyps,
                       const char *const *const *refs, int nrefs, long n, BleuCorpusStats *out) {
    CHECK(m->kind == BLEU_METRIC_BLEU || (m->char_order >= 1 && m->word_order >= 0 &&
                                          m->char_order + m->word_order <= CHRF_MAX_ORDERS),
          "chrF orders must satisfy 1 <= char_order, 0 <= word_order, sum <= %d",
          CHRF_MAX_ORDERS);
    CHECK(nrefs >= 1, "need at least one reference stream");
    memset(out, 0, sizeof *out);
    out->nsegments = n;
    out->nstats = bleu_metric_nstats(m);
    out->no_reference = -1;
    /* How many references each segment has (NULL ones are missing). */
    int seen_nrefs = 0;
    for (long i = 0; i < n; i++) {
        int k = 0;
        for (int r = 0; r < nrefs; r++) k += refs[r][i] != NULL;
        if (k == 0) {
            out->no_reference = i;
            return false;
        }
        if (i == 0) seen_nrefs = k;
        else if (k != seen_nrefs) seen_nrefs = -1;
    }
    out->nrefs = seen_nrefs;
    out->seg = xcalloc((size_t)(n ? n : 1) * (size_t)out->nstats, sizeof *out->seg);
    Workspace w;
    workspace_init(&w, 1 + nrefs);
    const char *present[nrefs];
    for (long i = 0; i < n; i++) {
        int k = 0;
        for (int r = 0; r < nrefs; r++)
            if (refs[r][i]) present[k++] = refs[r][i];
        int64_t *st = out->seg + i * out->nstats;
        if (m->kind == BLEU_METRIC_BLEU) bleu_segment(&w, m, hyps[i], present, k, st);
        else chrf_segment(&w, m, hyps[i], present, k, st);
    }
    workspace_free(&w);
    return true;
}

void bleu_corpus_stats_free(BleuCorpusStats *s) {
    free(s->seg);
    s->seg = NULL;
}

void bleu_corpus_stats_sum(const BleuCorpusStats *s, int64_t *sums) {
    memset(sums, 0, (size_t)s->nstats * sizeof *sums);
    for (long i = 0; i < s->nsegments; i++)
        for (int j = 0; j < s->nstats; j++) sums[j] += s->seg[i * s->nstats + j];
}

BleuScore bleu_score(const BleuMetric *m, const int64_t *sums) {
    double exact[3 * CHRF_MAX_ORDERS]; /* Python ints, exact in double below 2^53 */
    for (int j = 0; j < bleu_metric_nstats(m); j++) exact[j] = (double)sums[j];
    bool python_zero;
    return bleu_score_held(m, exact, false, &python_zero);
}

bool bleu_corpus_score(const BleuMetric *m, const char *const *hyps, const char *const *refs,
                       long n, BleuScore *out) {
    BleuCorpusStats stats;
    if (!bleu_corpus_stats(m, hyps, &refs, 1, n, &stats)) return false;
    int64_t sums[3 * CHRF_MAX_ORDERS];
    bleu_corpus_stats_sum(&stats, sums);
    *out = bleu_score(m, sums);
    bleu_corpus_stats_free(&stats);
    return true;
}
