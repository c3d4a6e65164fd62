/* test_bleu_edges.c: the parts of data/eval/bleu.h that the corpus fixtures do not pin down one by one:
 *  - tokenizer edge cases (entities, digits with . , -, Unicode spaces, leading spaces with intl,
 *    Unicode punctuation and symbols, lowercasing) with the outputs of sacreBLEU's regular
 *    expressions run in Python (re / regex);
 *  - corpus edge cases worked out by hand: empty lines, an all-empty hypothesis, exp smoothing,
 *    empty and missing references, several references, chrF++ punctuation splitting;
 *  - reading files (rstrip, line endings, invalid UTF-8), Python's float repr and signatures. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bleu.h"
#include "bleu_io.h"
#include "status.h"
#include "test_util.h"

static bool close_rel(double got, double want) { return fabs(got - want) <= 1e-9 * fabs(want); }

/* ---- tokenizers ---- */

static void expect_tokens(BleuTokenize tok, bool lowercase, const char *in, const char *want) {
    BleuMetric m = bleu_metric_bleu(tok, lowercase);
    char *got = bleu_preprocess(&m, in);
    EXPECT(!strcmp(got, want), "tokenize(%d) '%s': got '%s', want '%s'", (int)tok, in, got, want);
    free(got);
}

static void test_tokenizers(void) {
    const BleuTokenize T13A = BLEU_TOKENIZE_13A, INTL = BLEU_TOKENIZE_INTL;
    expect_tokens(T13A, false, "Hello, world!", "Hello , world !");
    /* Entities are un-escaped one after the other: &amp;quot; only becomes &quot;. */
    expect_tokens(T13A, false, "a &amp;quot; b &lt;tag&gt; &quot;x&quot; AT&amp;T",
                  "a & quot ; b < tag > \" x \" AT & T");
    /* . and , stay between digits, - splits after a digit only. */
    expect_tokens(T13A, false, "Preis: 1.000,50 Euro - 3.5% 12-13 a.b,c 2,000,000 (1.5%).",
                  "Preis : 1.000,50 Euro - 3.5 % 12 - 13 a . b , c 2,000,000 ( 1.5 % ) .");
    expect_tokens(T13A, false, "x.y 1.x x.1 -- 3- -3 1-2-3 5.-",
                  "x . y 1 . x x . 1 -- 3 - -3 1 - 2 - 3 5 . -");
    expect_tokens(T13A, false, "It's a don't-care ... end.", "It's a don't-care . . . end .");
    expect_tokens(T13A, false, "<skipped> foo<skipped>bar", "foobar");
    /* Words split on any Unicode whitespace; trailing whitespace goes, leading too for 13a. */
    expect_tokens(T13A, false, "NBSP\u00a0thin\u2009narrow\u202fideo\u3000en\u2002tab\tend",
                  "NBSP thin narrow ideo en tab end");
    expect_tokens(T13A, false, "  leading spaces and trailing \t \u3000",
                  "leading spaces and trailing");
    expect_tokens(T13A, false, "", "");
    /* 13a leaves non-ASCII punctuation alone, and fullwidth digits are not digits to it. */
    expect_tokens(T13A, false, "„Zitat“ – 10 € … ’s", "„Zitat“ – 10 € … ’s");
    expect_tokens(T13A, false, "１，０００ und １,５", "１，０００ und １ , ５");
    expect_tokens(T13A, true, "İSTANBUL Straße", "i\u0307stanbul straße");

    /* intl: no padding, so a quote opening the line stays attached to a number... */
    expect_tokens(INTL, false, "\"1805 test", "\"1805 test");
    /* ...but not after leading spaces (only trailing whitespace is stripped). */
    expect_tokens(INTL, false, "  \"1805 test", "\" 1805 test");
    expect_tokens(INTL, false, "Preis: 1.000,50 € (5%) – „Zitat“ 12-13 a.b 3.5.",
                  "Preis : 1.000,50 € ( 5 % ) – „ Zitat “ 12-13 a . b 3.5.");
    expect_tokens(INTL, false, "emoji 😀 and ™ symbols $5 and 5$ x+y=z",
                  "emoji 😀 and ™ symbols $ 5 and 5 $ x + y = z");
    expect_tokens(INTL, false, "１，０００ fullwidth ，", "１，０００ fullwidth ，");
    expect_tokens(INTL, false, "1805. end 2.5 U.S.A.", "1805 . end 2.5 U . S . A .");
    expect_tokens(INTL, false, "a\u00a0b\u3000c  ", "a b c");
    expect_tokens(BLEU_TOKENIZE_NONE, false, "a, b\u00a0c. ", "a, b c.");
}

/* ---- corpus edge cases ---- */

static BleuScore corpus(const BleuMetric *m, const char *const *hyps, const char *const *refs,
                        long n) {
    BleuScore s = {.score = -1};
    EXPECT(bleu_corpus_score(m, hyps, refs, n, &s), "corpus could not be scored");
    return s;
}

static void test_corpus_edges(void) {
    BleuMetric bleu = bleu_metric_bleu(BLEU_TOKENIZE_13A, false);
    /* All-empty hypothesis: no n-grams at all, BP 0, BLEU 0 (as sacreBLEU's allempty). */
    const char *empty_hyps[] = {"", ""}, *refs2[] = {"a b c", "d e"};
    BleuScore s = corpus(&bleu, empty_hyps, refs2, 2);
    EXPECT(s.score == 0 && s.bp == 0 && s.sys_len == 0 && s.ref_len == 5 && s.ratio == 0 &&
               s.precisions[0] == 0,
           "all-empty hypothesis: BLEU %g bp %g lens %lld/%lld", s.score, s.bp,
           (long long)s.sys_len, (long long)s.ref_len);

    /* One empty hypothesis line among others: 4 hyp words against refs of 3 and 2 words. */
    const char *hyps[] = {"a b c", ""}, *refs[] = {"a b c", "d e"};
    s = corpus(&bleu, hyps, refs, 2);
    /* p1 = 3/3, p2 = 2/2, p3 = 1/1, p4: no 4-grams -> the loop stops, p4 stays 0, BLEU 0. */
    EXPECT(s.sys_len == 3 && s.ref_len == 5 && s.precisions[0] == 100 &&
               s.precisions[2] == 100 && s.precisions[3] == 0 && s.score == 0,
           "empty line: lens %lld/%lld p %g/%g/%g/%g BLEU %g", (long long)s.sys_len,
           (long long)s.ref_len, s.precisions[0], s.precisions[1], s.precisions[2],
           s.precisions[3], s.score);

    /* exp smoothing: the k-th order without matches gets 100 / (2^k * total). */
    const char *h3[] = {"a x b y c"}, *r3[] = {"a b c"};
    s = corpus(&bleu, h3, r3, 1);
    EXPECT(s.precisions[0] == 60 && s.precisions[1] == 100.0 / (2 * 4) &&
               s.precisions[2] == 100.0 / (4 * 3) && s.precisions[3] == 100.0 / (8 * 2),
           "smoothed precisions %g %g %g %g", s.precisions[0], s.precisions[1], s.precisions[2],
           s.precisions[3]);
    double want = exp((log(60.0) + log(12.5) + log(100.0 / 12) + log(6.25)) / 4);
    EXPECT(close_rel(s.score, want), "smoothed BLEU %.17g, want %.17g", s.score, want);

    /* An empty reference line is an empty reference (sacreBLEU >= 2.3): "x" adds a hyp word
     * and nothing to the reference length. 1-grams 2/3, 2-grams 1/1, no 3-grams: BLEU 0. */
    const char *eh[] = {"a b", "x"}, *er[] = {"a b", ""};
    s = corpus(&bleu, eh, er, 2);
    EXPECT(s.sys_len == 3 && s.ref_len == 2 && close_rel(s.precisions[0], 200.0 / 3) &&
               s.precisions[1] == 100 && s.score == 0,
           "empty reference: lens %lld/%lld p1 %.17g", (long long)s.sys_len, (long long)s.ref_len,
           s.precisions[0]);
    /* A NULL reference is a missing one; a segment without any cannot be scored. */
    const char *no_refs[] = {"a", NULL};
    BleuScore untouched = {.score = 42};
    EXPECT(!bleu_corpus_score(&bleu, hyps, no_refs, 2, &untouched) && untouched.score == 42,
           "a segment without references must be rejected");

    /* Two references: n-grams clipped by their largest count in one reference, the closest
     * reference length (shorter on ties), and nrefs:var when one reference is missing. */
    const char *mh[] = {"the the the", "x y"};
    const char *ra[] = {"the cat", "x y z w"}, *rb[] = {"the the dog", NULL};
    const char *const *mrefs[] = {ra, rb};
    BleuCorpusStats st;
    EXPECT(bleu_corpus_stats(&bleu, mh, mrefs, 2, 2, &st), "two references");
    const int64_t *s0 = st.seg, *s1 = st.seg + BLEU_NSTATS;
    EXPECT(s0[0] == 3 && s0[1] == 3 && s0[2] == 2 && s0[6] == 3 && s0[3] == 1 && s0[7] == 2,
           "clipping against two references: len %lld ref %lld 1-gram %lld/%lld 2-gram %lld/%lld",
           (long long)s0[0], (long long)s0[1], (long long)s0[2], (long long)s0[6],
           (long long)s0[3], (long long)s0[7]);
    EXPECT(s1[1] == 4 && st.nrefs == -1, "second segment: ref_len %lld nrefs %d",
           (long long)s1[1], st.nrefs);
    bleu_corpus_stats_free(&st);
    const char *tie_refs_a[] = {"a b c d"}, *tie_refs_b[] = {"a b"}, *tie_hyp[] = {"a b c"};
    const char *const *tie_refs[] = {tie_refs_a, tie_refs_b};
    EXPECT(bleu_corpus_stats(&bleu, tie_hyp, tie_refs, 2, 1, &st) && st.seg[1] == 2 &&
               st.nrefs == 2,
           "reference length ties go to the shorter reference");
    bleu_corpus_stats_free(&st);

    /* chrF++ splits one punctuation mark off a word's end, else off its start: "(hi)" is
     * "(hi" + ")", so "hi" shares no word with it; with itself all 3 word n-grams match. */
    BleuMetric chrfpp = bleu_metric_chrf(2, false);
    const char *wh[] = {"(hi)", "hi"}, *wr[] = {"(hi)", "(hi)"};
    const char *const *wrefs[] = {wr};
    EXPECT(bleu_corpus_stats(&chrfpp, wh, wrefs, 1, 2, &st), "chrF++ corpus");
    const int64_t *w0 = st.seg + 3 * 6, *w1 = st.seg + st.nstats + 3 * 6;
    EXPECT(w0[0] == 2 && w0[1] == 2 && w0[2] == 2 && w0[3] == 1 && w0[4] == 1 && w0[5] == 1,
           "chrF++ words of (hi) vs (hi): %lld %lld %lld / %lld %lld %lld", (long long)w0[0],
           (long long)w0[1], (long long)w0[2], (long long)w0[3], (long long)w0[4],
           (long long)w0[5]);
    EXPECT(w1[0] == 1 && w1[2] == 0 && w1[3] == 0 && w1[4] == 1,
           "chrF++ words of hi vs (hi): %lld %lld %lld %lld", (long long)w1[0], (long long)w1[2],
           (long long)w1[3], (long long)w1[4]);
    /* "(hi)" has 4 characters: 2 trigrams, 1 four-gram, no 5-gram (so no hyp 5-grams count). */
    EXPECT(st.seg[0] == 4 && st.seg[3 * 2] == 2 && st.seg[3 * 3 + 1] == 1 && st.seg[3 * 4 + 1] == 0,
           "character n-gram counts of (hi)");
    bleu_corpus_stats_free(&st);

    /* chrF of an all-empty hypothesis is 0; a perfect one is 100. */
    BleuMetric chrf = bleu_metric_chrf(0, false);
    s = corpus(&chrf, empty_hyps, refs2, 2);
    EXPECT(s.score == 0, "chrF of empty output %g", s.score);
    s = corpus(&chrf, refs2, refs2, 2);
    EXPECT(s.score == 100, "chrF of the reference itself %.17g", s.score);
}

/* ---- files and formatting ---- */

static void test_read_lines(void) {
    char path[] = "/tmp/test_bleu_XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0, "mkstemp failed");
    if (fd < 0) return;
    const char text[] = "one \t\r\n two\xc2\xa0\n\nthree\rfour\xe3\x80\x80\nlast";
    EXPECT(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1), "write failed");
    close(fd);
    BleuLines l;
    EXPECT(bleu_read_lines(path, &l) == 0, "%s", status_message());
    /* '\n' separates lines; '\r' and Unicode spaces at the end are stripped, leading kept. */
    const char *want[] = {"one", " two", "", "three\rfour", "last"};
    EXPECT(l.n == 5, "read %ld lines, want 5", l.n);
    for (long i = 0; i < l.n && i < 5; i++)
        EXPECT(!strcmp(l.lines[i], want[i]), "line %ld: '%s', want '%s'", i + 1, l.lines[i],
               want[i]);
    bleu_lines_free(&l);

    /* Standard input follows universal newlines: \r and \r\n end lines too. */
    FILE *f = fopen(path, "rb");
    EXPECT(bleu_read_stream_lines(f, "<stdin>", &l) == 0, "%s", status_message());
    fclose(f);
    EXPECT(l.n == 6 && !strcmp(l.lines[3], "three") && !strcmp(l.lines[0], "one \t"),
           "stream: %ld lines", l.n);
    bleu_lines_free(&l);

    f = fopen(path, "wb");
    fputs("fine\nbad \xff byte\n", f);
    fclose(f);
    EXPECT(bleu_read_lines(path, &l) < 0 && strstr(status_message(), path) &&
               strstr(status_message(), "line 2") && strstr(status_message(), "UTF-8"),
           "invalid UTF-8 must name file and line: '%s'", status_message());
    unlink(path);
    EXPECT(bleu_read_lines(path, &l) < 0 && strstr(status_message(), path),
           "missing file must be named: '%s'", status_message());
}

static void test_python_repr(void) {
    const struct {
        double x;
        const char *want;
    } cases[] = {{59.8, "59.8"},
                 {100.00000000000004, "100.00000000000004"},
                 {0.1 + 0.2, "0.30000000000000004"},
                 {1e-05, "1e-05"},
                 {0.0001, "0.0001"},
                 {1e16, "1e+16"},
                 {1234567890123456.0, "1234567890123456.0"},
                 {21.0, "21.0"},
                 {1.0184128967600863e-06, "1.0184128967600863e-06"},
                 {0.000999000999000999, "0.000999000999000999"},
                 {-2.5, "-2.5"},
                 {5e-324, "5e-324"},
                 {0.0, "0.0"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[64];
        bleu_python_repr(cases[i].x, buf, sizeof buf);
        EXPECT(!strcmp(buf, cases[i].want), "repr %.17g: got %s, want %s", cases[i].x, buf,
               cases[i].want);
    }
}

static void test_signatures(void) {
    char sig[256];
    BleuMetric m = bleu_metric_bleu(BLEU_TOKENIZE_INTL, true);
    bleu_signature(&m, 1, true, 0, NULL, sig, sizeof sig);
    EXPECT(!strcmp(sig, "#:1|c:lc|e:no|tok:intl|s:exp|v:2.6.0"), "short BLEU signature %s", sig);
    m = bleu_metric_chrf(2, false);
    bleu_signature(&m, -1, false, 1000, "12345", sig, sizeof sig);
    EXPECT(!strcmp(sig, "nrefs:var|bs:1000|seed:12345|case:mixed|eff:yes|nc:6|nw:2|space:no|"
                        "version:2.6.0"),
           "bootstrap chrF++ signature %s", sig);
    char name[16];
    bleu_metric_name(&m, name, sizeof name);
    EXPECT(!strcmp(name, "chrF2++"), "chrF++ name %s", name);
}

int main(void) {
    test_tokenizers();
    test_corpus_edges();
    test_read_lines();
    test_python_repr();
    test_signatures();
    return test_finish();
}
