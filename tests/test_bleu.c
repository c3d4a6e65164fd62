/* test_bleu.c: BLEU and chrF against sacreBLEU 2.6.0: every row of
 * $NMT_SHARED/bleu-fixtures/expected.tsv (BLEU: score, p1..p4, bp, ratio, lengths, signature) and
 * expected_chrf.tsv (chrF/chrF++: score, signature), to 1e-9 relative. The README there describes
 * the hypotheses (perturbations of newstest2013 and Multi30K references). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bleu.h"
#include "bleu_io.h"
#include "status.h"
#include "test_util.h"

static bool close_rel(double got, double want) { return fabs(got - want) <= 1e-9 * fabs(want); }

/* ---- the sacreBLEU fixtures ---- */

enum { MAX_FIELDS = 16 };

static int split_tabs(char *line, char **fields) {
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < MAX_FIELDS;) {
        fields[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

static bool read_fixture(const char *dir, const char *name, BleuLines *out) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    bool ok = bleu_read_lines(path, out) == 0;
    EXPECT(ok, "%s", status_message());
    return ok;
}

/* Scores one fixture row (hyp, ref, options) with the metric the options describe. */
static bool score_row(const char *dir, char **f, const BleuMetric *m, BleuScore *s, int *nrefs) {
    BleuLines hyp, ref;
    if (!read_fixture(dir, f[0], &hyp)) return false;
    if (!read_fixture(dir, f[1], &ref)) {
        bleu_lines_free(&hyp);
        return false;
    }
    EXPECT(hyp.n == ref.n, "%s has %ld lines, %s %ld", f[0], hyp.n, f[1], ref.n);
    const char *const *refs[1] = {(const char *const *)ref.lines};
    BleuCorpusStats stats;
    bool ok = hyp.n == ref.n &&
              bleu_corpus_stats(m, (const char *const *)hyp.lines, refs, 1, hyp.n, &stats);
    EXPECT(ok, "%s against %s could not be scored", f[0], f[1]);
    if (ok) {
        int64_t sums[3 * CHRF_MAX_ORDERS];
        bleu_corpus_stats_sum(&stats, sums);
        *s = bleu_score(m, sums);
        *nrefs = stats.nrefs;
        bleu_corpus_stats_free(&stats);
    }
    bleu_lines_free(&hyp);
    bleu_lines_free(&ref);
    return ok;
}

/* Calls check(dir, fields) for every row of the fixture table `file` (header skipped), whose
 * rows must have nfields columns; returns the number of rows. */
static int for_each_row(const char *dir, const char *file, int nfields,
                        void (*check)(const char *dir, char **fields)) {
    char path[1200], line[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    EXPECT(f != NULL, "cannot open %s (set NMT_SHARED)", path);
    if (!f) return 0;
    int rows = 0;
    EXPECT(fgets(line, sizeof line, f) != NULL, "%s is empty", path);
    while (fgets(line, sizeof line, f)) {
        char *c[MAX_FIELDS];
        rows++;
        if (split_tabs(line, c) != nfields) EXPECT(false, "%s: row %d is malformed", path, rows);
        else check(dir, c);
    }
    fclose(f);
    return rows;
}

/* expected.tsv: hyp ref options bleu p1 p2 p3 p4 bp ratio sys_len ref_len signature */
static void check_bleu_row(const char *dir, char **c) {
    const char *opt = c[2];
    BleuTokenize tok = strstr(opt, "--tokenize intl")   ? BLEU_TOKENIZE_INTL
                       : strstr(opt, "--tokenize none") ? BLEU_TOKENIZE_NONE
                                                        : BLEU_TOKENIZE_13A;
    BleuMetric m = bleu_metric_bleu(tok, strstr(opt, "--lowercase") != NULL);
    BleuScore s;
    int nrefs;
    if (!score_row(dir, c, &m, &s, &nrefs)) return;
    EXPECT(close_rel(s.score, atof(c[3])), "%s %s: BLEU %.17g, want %s", c[0], opt, s.score,
           c[3]);
    for (int n = 0; n < 4; n++)
        EXPECT(close_rel(s.precisions[n], atof(c[4 + n])), "%s %s: p%d %.17g, want %s", c[0], opt,
               n + 1, s.precisions[n], c[4 + n]);
    EXPECT(close_rel(s.bp, atof(c[8])), "%s %s: bp %.17g, want %s", c[0], opt, s.bp, c[8]);
    EXPECT(close_rel(s.ratio, atof(c[9])), "%s %s: ratio %.17g, want %s", c[0], opt, s.ratio,
           c[9]);
    EXPECT(s.sys_len == atoll(c[10]) && s.ref_len == atoll(c[11]),
           "%s %s: lengths %lld/%lld, want %s/%s", c[0], opt, (long long)s.sys_len,
           (long long)s.ref_len, c[10], c[11]);
    char sig[256];
    bleu_signature(&m, nrefs, false, 0, NULL, sig, sizeof sig);
    EXPECT(!strcmp(sig, c[12]), "%s %s: signature %s, want %s", c[0], opt, sig, c[12]);
}

/* expected_chrf.tsv: hyp ref options chrf signature */
static void check_chrf_row(const char *dir, char **c) {
    const char *opt = c[2];
    BleuMetric m = bleu_metric_chrf(strstr(opt, "--chrf-word-order 2") ? 2 : 0,
                                    strstr(opt, "--chrf-lowercase") != NULL);
    BleuScore s;
    int nrefs;
    if (!score_row(dir, c, &m, &s, &nrefs)) return;
    EXPECT(close_rel(s.score, atof(c[3])), "%s %s: chrF %.17g, want %s", c[0], opt, s.score,
           c[3]);
    char sig[256];
    bleu_signature(&m, nrefs, false, 0, NULL, sig, sizeof sig);
    EXPECT(!strcmp(sig, c[4]), "%s %s: signature %s, want %s", c[0], opt, sig, c[4]);
}

int main(void) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/bleu-fixtures", test_shared_dir());
    int bleu_rows = for_each_row(dir, "expected.tsv", 13, check_bleu_row);
    int chrf_rows = for_each_row(dir, "expected_chrf.tsv", 5, check_chrf_row);
    EXPECT(bleu_rows == 88 && chrf_rows == 66, "fixture rows: %d BLEU, %d chrF (want 88, 66)",
           bleu_rows, chrf_rows);
    return test_finish();
}
