/* test_prepare.c: `prepare` end to end on synthetic corpora written here (plain, gzip, SGM).
 * Every drop reason occurs a known number of times (the subword-stage counts are recomputed here
 * from the trained model and the rules of clean.h); the caches must hold exactly the expected
 * encodings; valid/test text copies and decodings must equal the hand-normalized lines; reuse,
 * partial rebuild (re-encode with the same SentencePiece model) and full rebuild are chosen
 * correctly; bad input is fatal with a message naming the file, line or key. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prepare.h"
#include "spm.h"
#include "status.h"
#include "test_files.h"
#include "test_util.h"
#include "tokcache.h"

enum { GOOD = 2000, VOCAB = 400, VOCAB2 = 380 };

typedef struct Text {
    char *s;
    size_t len, cap;
} Text;

static void text_add(Text *t, const char *line) {
    size_t n = strlen(line);
    if (t->len + n + 2 > t->cap) {
        t->cap = 2 * (t->len + n + 2);
        t->s = realloc(t->s, t->cap);
    }
    memcpy(t->s + t->len, line, n);
    t->len += n;
    t->s[t->len++] = '\n';
    t->s[t->len] = '\0';
}

typedef struct Expected {  // the training pairs that pass the text stage, normalized, in order
    char *src[GOOD + 16], *tgt[GOOD + 16];
    int n;
} Expected;

static uint64_t next_random(uint64_t *x) {
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

/* A sentence of `words` syllable words; the German side: "ge" + each word + "en". */
static void make_sentence(uint64_t *x, int words, char *en, char *de) {
    static const char *syl[] = {"ka", "ro",  "mi", "ten", "sa", "lu", "vo", "dre", "ni", "pha",
                                "ge", "stu", "bi", "an",  "er", "ol", "ür", "ßa",  "qu", "ix"};
    char *e = en, *d = de;
    for (int w = 0; w < words; w++) {
        char word[32] = "";
        int parts = 1 + (int)(next_random(x) % 3);
        for (int k = 0; k < parts; k++) strcat(word, syl[next_random(x) % 20]);
        e += sprintf(e, "%s%s", w ? " " : "", word);
        d += sprintf(d, "%sge%sen", w ? " " : "", word);
    }
}

static void expect_pair(Expected *ex, const char *src, const char *tgt) {
    ex->src[ex->n] = strdup(src);
    ex->tgt[ex->n++] = strdup(tgt);
}

/* text with every space widened to tab + NBSP, and whitespace around it: normalizes to text. */
static void make_messy(const char *text, char *out) {
    out += sprintf(out, "\t ");
    for (; *text; text++)
        out += *text == ' ' ? sprintf(out, " \t\xC2\xA0") : sprintf(out, "%c", *text);
    sprintf(out, " \xE3\x80\x80");
}

/* Writes the train corpora (train1 plain, train2 gzip) and fills the expected kept pairs. */
static void write_train(const char *in, Expected *ex) {
    Text en[2] = {{0}}, de[2] = {{0}};
    uint64_t x = 2024;
    char a[1024], b[1024], messy[4096];
    for (int i = 0; i < GOOD; i++) {
        int c = i < GOOD / 2 ? 0 : 1;
        make_sentence(&x, 3 + (int)(next_random(&x) % 10), a, b);
        make_messy(a, messy);
        text_add(&en[c], i % 50 == 3 ? messy : a);
        text_add(&de[c], b);
        expect_pair(ex, a, b);
        // The text-stage rejects, spread over both corpora.
        if (i == 10) text_add(&en[c], "bad \xC3 utf8"), text_add(&de[c], "gut");
        if (i == 1500) text_add(&en[c], "fine"), text_add(&de[c], "kaputt \xED\xA0\x80");
        if (i == 20) text_add(&en[c], "bell \x07"), text_add(&de[c], "Glocke");
        if (i == 21) text_add(&en[c], "c1"), text_add(&de[c], "\xC2\x84quote");
        if (i == 1400) text_add(&en[c], "esc \x1b[0m"), text_add(&de[c], "escape");
        if (i == 30) text_add(&en[c], ""), text_add(&de[c], "leer");
        if (i == 31) text_add(&en[c], "empty"), text_add(&de[c], " \t ");
        if (i == 1300) text_add(&en[c], "\xC2\xA0"), text_add(&de[c], "nbsp");
        if (i == 1301) text_add(&en[c], "\xE3\x80\x80"), text_add(&de[c], "\xE2\x80\x89");
    }
    // Duplicates of earlier pairs: exact copies in the other corpus, and whitespace variants.
    for (int k = 0; k < 3; k++) text_add(&en[1], ex->src[k * 7]), text_add(&de[1], ex->tgt[k * 7]);
    make_messy(ex->src[500], messy);
    text_add(&en[0], messy), text_add(&de[0], ex->tgt[500]);
    make_messy(ex->tgt[1999], messy);
    text_add(&en[1], ex->src[1999]), text_add(&de[1], messy);
    // Subword-stage rejects under min_len 3, max_len 64 (or 40), max_len_ratio 3: a one-letter
    // source (at most 2 pieces), 100-word sides (at least 100 pieces), and 3 one-letter words
    // (at most 6 pieces) against 20 (20 to 40 pieces).
    char long_en[400] = "", long_de[400] = "", letters[64] = "";
    for (int w = 0; w < 100; w++)
        strcat(long_en, w ? " ka" : "ka"), strcat(long_de, w ? " ro" : "ro");
    for (int w = 0; w < 20; w++) strcat(letters, w ? " q" : "q");
    const char *special[3][2] = {{"x", "y z w"}, {long_en, long_de}, {"a b c", letters}};
    for (int k = 0; k < 3; k++) {
        text_add(&en[1], special[k][0]);
        text_add(&de[1], special[k][1]);
        expect_pair(ex, special[k][0], special[k][1]);
    }
    test_write_file(test_path(in, "train1.en"), en[0].s, en[0].len);
    test_write_file(test_path(in, "train1.de"), de[0].s, de[0].len);
    test_write_gz(test_path(in, "train2.en.gz"), en[1].s, en[1].len);
    test_write_gz(test_path(in, "train2.de.gz"), de[1].s, de[1].len);
    for (int c = 0; c < 2; c++) {
        free(en[c].s);
        free(de[c].s);
    }
}

/* Valid: a plain corpus with awkward lines (kept, normalized) and an SGM corpus. */
static const char *const valid_en[] = {
    "kami roten",   "with  spaces\xC2\xA0here ", "",
    "ctl\x01 kept", "Fish & Chips <b>",          "na\xC3\xAFve \xE6\x97\xA5"};
static const char *const valid_de[] = {"imak netor", "mit Leerzeichen",      "nicht leer",
                                       "Steuer",     "Fisch \"und\" Pommes", "\xF0\x9F\x98\x80"};
static const char *const valid_en_norm[] = {
    "kami roten",   "with spaces here", "",
    "ctl\x01 kept", "Fish & Chips <b>", "na\xC3\xAFve \xE6\x97\xA5"};

static void write_valid(const char *in) {
    Text en = {0}, de = {0};
    for (int i = 0; i < 4; i++) text_add(&en, valid_en[i]), text_add(&de, valid_de[i]);
    test_write_file(test_path(in, "valid1.en"), en.s, en.len);
    test_write_gz(test_path(in, "valid1.de.gz"), de.s, de.len);
    test_write_text(test_path(in, "valid2.en.sgm"),
                    "<refset><doc docid=\"a\">\n<seg id=\"1\">Fish &amp; Chips &lt;b&gt;</seg>\n"
                    "<seg id=\"2\">na&#xEF;ve &#26085;</seg>\n</doc></refset>\n");
    test_write_text(test_path(in, "valid2.de.sgm"),
                    "<refset><doc docid=\"a\">\n<seg id=\"1\">Fisch &quot;und&quot; Pommes</seg>\n"
                    "<seg id=\"2\">&#x1F600;</seg>\n</doc></refset>\n");
    free(en.s);
    free(de.s);
}

typedef struct Setup {
    char in[1024], out[1024];
    char paths[12][4096];
    CorpusPair train[2], valid[2];
    DataConfig spec;
} Setup;

static void setup_init(Setup *s, const char *dir) {
    snprintf(s->in, sizeof s->in, "%s/in", dir);
    snprintf(s->out, sizeof s->out, "%s/out/nested", dir);
    mkdir(s->in, 0777);
    const char *names[8] = {"train1.en", "train1.de",    "train2.en.gz",  "train2.de.gz",
                            "valid1.en", "valid1.de.gz", "valid2.en.sgm", "valid2.de.sgm"};
    for (int i = 0; i < 8; i++) snprintf(s->paths[i], sizeof s->paths[i], "%s/%s", s->in, names[i]);
    for (int c = 0; c < 2; c++) {
        s->train[c] = (CorpusPair){s->paths[2 * c], s->paths[2 * c + 1]};
        s->valid[c] = (CorpusPair){s->paths[4 + 2 * c], s->paths[5 + 2 * c]};
    }
    s->spec = (DataConfig){
        .dir = s->out,
        .train = {s->train, 2},
        .valid = {s->valid, 2},
        .test = {NULL, 0},
        .vocab_size = VOCAB,
        .spm_model_type = SPM_MODEL_UNIGRAM,
        .character_coverage = 1.0,
        .spm_input_sentences = 3000,
        .max_len = 64,
        .max_len_ratio = 3.0,
        .min_len = 3,
        .seed = 5,
    };
}

static const char *out_file(const Setup *s, const char *name) { return test_path(s->out, name); }

/* Checks the train cache and the manifest counts against expectations recomputed from the
 * model: the text-stage counts are known by construction. */
static void check_train(const Setup *s, const Expected *ex) {
    SpmModel *m = NULL;
    EXPECT(spm_load_file(&m, out_file(s, PREPARE_SPM_MODEL)) == 0, "load: %s", status_message());
    if (!m) return;
    size_t model_len = 0;
    char *model = test_read_file(out_file(s, PREPARE_SPM_MODEL), &model_len);
    uint64_t fingerprint = tokcache_fingerprint(model, model_len);
    free(model);
    TokCache c;
    char *path = prepare_split_path(s->out, SPLIT_TRAIN, "tok");
    EXPECT(tokcache_open(&c, path, spm_vocab_size(m), fingerprint) == 0, "open: %s",
           status_message());
    free(path);
    long short_n = 0, long_n = 0, ratio_n = 0, kept = 0, wrong = 0;
    SpmIds a = {0}, b = {0};
    for (int i = 0; i < ex->n; i++) {
        spm_encode(m, ex->src[i], strlen(ex->src[i]), &a);
        spm_encode(m, ex->tgt[i], strlen(ex->tgt[i]), &b);
        int shorter = a.n < b.n ? a.n : b.n, longer = a.n < b.n ? b.n : a.n;
        if (shorter < s->spec.min_len) {
            short_n++;
        } else if (longer > s->spec.max_len) {
            long_n++;
        } else if (longer > s->spec.max_len_ratio * shorter) {
            ratio_n++;
        } else {
            bool same = kept < c.npairs && tokcache_src_len(&c, kept) == a.n &&
                        tokcache_tgt_len(&c, kept) == b.n &&
                        !memcmp(tokcache_src(&c, kept), a.ids, sizeof(int32_t) * (size_t)a.n) &&
                        !memcmp(tokcache_tgt(&c, kept), b.ids, sizeof(int32_t) * (size_t)b.n);
            wrong += !same;
            kept++;
        }
    }
    EXPECT(short_n >= 1 && long_n >= 1 && ratio_n >= 1,
           "the designed rejects should trigger every length rule: %ld %ld %ld", short_n, long_n,
           ratio_n);
    EXPECT(kept == c.npairs && wrong == 0, "train cache: %ld pairs, want %ld; %ld differ", c.npairs,
           kept, wrong);
    char *manifest = test_read_file(out_file(s, PREPARE_MANIFEST), NULL);
    const struct {
        const char *key;
        long want;
    } counts[] = {
        {"pairs_read", GOOD + 2 + 3 + 4 + 5 + 3},
        {"pairs_kept", kept},
        {"invalid_utf8", 2},
        {"control_char", 3},
        {"empty", 4},
        {"duplicate", 5},
        {"too_short", short_n},
        {"too_long", long_n},
        {"length_ratio", ratio_n},
        {"src_tokens", c.src_tokens},
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        EXPECT(test_manifest_count(manifest, "train", counts[i].key) == counts[i].want,
               "manifest train %s = %ld, want %ld", counts[i].key,
               test_manifest_count(manifest, "train", counts[i].key), counts[i].want);
    free(manifest);
    tokcache_close(&c);
    spm_ids_free(&a);
    spm_ids_free(&b);
    spm_free(m);
}

/* valid.src/.tgt must be the normalized lines, and decoding valid.tok must give them back. */
static void check_valid(const Setup *s) {
    char *src = test_read_file(out_file(s, "valid.src"), NULL);
    char *tgt = test_read_file(out_file(s, "valid.tgt"), NULL);
    Text want_src = {0}, want_tgt = {0};
    for (int i = 0; i < 6; i++) {
        text_add(&want_src, valid_en_norm[i]);
        text_add(&want_tgt, valid_de[i]);
    }
    EXPECT(src && !strcmp(src, want_src.s), "valid.src:\n%s\nwant:\n%s", src, want_src.s);
    EXPECT(tgt && !strcmp(tgt, want_tgt.s), "valid.tgt:\n%s\nwant:\n%s", tgt, want_tgt.s);
    SpmModel *m = NULL;
    spm_load_file(&m, out_file(s, PREPARE_SPM_MODEL));
    size_t model_len = 0;
    char *model = test_read_file(out_file(s, PREPARE_SPM_MODEL), &model_len);
    TokCache c;
    EXPECT(tokcache_open(&c, out_file(s, "valid.tok"), VOCAB,
                         tokcache_fingerprint(model, model_len)) == 0,
           "valid.tok: %s", status_message());
    EXPECT(c.npairs == 6, "valid.tok has %ld pairs, want 6 (never dropped)", c.npairs);
    for (long i = 0; i < c.npairs && i < 6; i++) {
        char *dec = NULL;
        size_t len;
        spm_decode(m, tokcache_src(&c, i), tokcache_src_len(&c, i), &dec, &len);
        EXPECT(dec && !strcmp(dec, valid_en_norm[i]), "valid pair %ld decodes to [%s]", i, dec);
        free(dec);
    }
    char *manifest = test_read_file(out_file(s, PREPARE_MANIFEST), NULL);
    EXPECT(test_manifest_count(manifest, "valid", "pairs_read") == 6 &&
               test_manifest_count(manifest, "valid", "pairs_kept") == 6 &&
               test_manifest_count(manifest, "valid", "control_char_pairs_kept") == 1,
           "manifest valid counts");
    EXPECT(test_manifest_count(manifest, "test", "pairs_read") == 0, "manifest test counts");
    tokcache_close(&c);
    EXPECT(tokcache_open(&c, out_file(s, "test.tok"), VOCAB,
                         tokcache_fingerprint(model, model_len)) == 0 &&
               c.npairs == 0,
           "test.tok should exist and be empty: %s", status_message());
    tokcache_close(&c);
    free(manifest);
    free(model);
    spm_free(m);
    free(src);
    free(tgt);
    free(want_src.s);
    free(want_tgt.s);
}

static void check_reuse(Setup *s, const Expected *ex) {
    ino_t spm = test_inode(out_file(s, PREPARE_SPM_MODEL));
    ino_t train = test_inode(out_file(s, "train.tok"));
    EXPECT(prepare_run(&s->spec) == PREPARE_REUSED, "an unchanged second run must reuse");
    EXPECT(test_inode(out_file(s, PREPARE_SPM_MODEL)) == spm &&
               test_inode(out_file(s, "train.tok")) == train,
           "a reusing run must not rewrite files");

    s->spec.max_len = 40;  // only a length filter changed: same model, new caches
    EXPECT(prepare_run(&s->spec) == PREPARE_REENCODED, "changing data.max_len must re-encode");
    EXPECT(test_inode(out_file(s, PREPARE_SPM_MODEL)) == spm, "spm.model must be kept");
    EXPECT(test_inode(out_file(s, "train.tok")) != train, "train.tok must be rewritten");
    check_train(s, ex);

    // A damaged cache is noticed and rebuilt.
    size_t len;
    char *bytes = test_read_file(out_file(s, "valid.tok"), &len);
    bytes[len / 2] ^= 1;
    test_write_file(out_file(s, "valid.tok"), bytes, len);
    free(bytes);
    EXPECT(prepare_run(&s->spec) == PREPARE_REENCODED, "a corrupt cache must be rebuilt");
    check_valid(s);

    s->spec.vocab_size = VOCAB2;  // the model changes: everything is rebuilt
    EXPECT(prepare_run(&s->spec) == PREPARE_BUILT, "changing data.vocab_size must rebuild");
    EXPECT(test_inode(out_file(s, PREPARE_SPM_MODEL)) != spm, "spm.model must be retrained");
    char *manifest = test_read_file(out_file(s, PREPARE_MANIFEST), NULL);
    EXPECT(manifest && strstr(manifest, "\"data.vocab_size\": 380"), "manifest config");
    free(manifest);
    s->spec.vocab_size = VOCAB;
    EXPECT(prepare_run(&s->spec) == PREPARE_BUILT, "changing it back rebuilds again");

    // Changed input content (same train files, one more valid pair): re-encode.
    FILE *f = fopen(s->paths[4], "a");
    fputs("one more\n", f);
    fclose(f);
    const char *de = "imak netor\nmit Leerzeichen\nnicht leer\nSteuer\nnoch eins\n";
    test_write_gz(s->paths[5], de, strlen(de));
    EXPECT(prepare_run(&s->spec) == PREPARE_REENCODED, "a changed valid input must re-encode");
    manifest = test_read_file(out_file(s, PREPARE_MANIFEST), NULL);
    EXPECT(test_manifest_count(manifest, "valid", "pairs_kept") == 7, "valid now has 7 pairs");
    free(manifest);
}

/* ---- fatal errors, each in a child process ---- */

static void run_prepare(void *spec) { prepare_run(spec); }

static void expect_fatal(const char *what, DataConfig *spec, const char *want1,
                         const char *want2) {
    char err[8192];
    int status = test_run_child(run_prepare, spec, err, sizeof err);
    EXPECT(status == 1 && strstr(err, want1) && (!want2 || strstr(err, want2)),
           "%s: exit status %d, stderr [%s], want [%s] and [%s]", what, status, err, want1,
           want2 ? want2 : "");
}

static void test_fatal_errors(Setup *s) {
    DataConfig spec = s->spec;
    spec.vocab_size = 100;
    expect_fatal("small vocabulary", &spec, "data.vocab_size is 100", NULL);
    spec = s->spec;
    spec.spm_model_type = (SpmModelType)7;  // only a caller that bypasses the config can
    expect_fatal("model type", &spec, "7 is not a value of SpmModelType", NULL);
    spec = s->spec;
    spec.max_len_ratio = 0.5;
    expect_fatal("ratio", &spec, "data.max_len_ratio is 0.5", NULL);
    spec = s->spec;
    spec.train.count = 0;
    expect_fatal("no train corpora", &spec, "data.train lists no corpora", NULL);

    char path[3][4096];
    snprintf(path[0], sizeof path[0], "%s/bad.en", s->in);
    snprintf(path[1], sizeof path[1], "%s/bad.de", s->in);
    snprintf(path[2], sizeof path[2], "%s/short.de", s->in);
    test_write_text(path[0], "one\ntwo\nthr\xC3\xA9\xC3 e\nfour\n");
    test_write_text(path[1], "eins\nzwei\ndrei\nvier\n");
    test_write_text(path[2], "eins\nzwei\n");
    CorpusPair bad_valid = {path[0], path[1]};
    spec = s->spec;
    spec.valid = (CorpusList){&bad_valid, 1};
    expect_fatal("invalid UTF-8 in valid", &spec, "bad.en:3: invalid UTF-8 at byte 6",
                 "data.valid");
    CorpusPair mismatched[2] = {s->train[0], {path[0], path[2]}};
    spec = s->spec;
    spec.train = (CorpusList){mismatched, 2};
    expect_fatal("mismatched train corpus", &spec, "bad.en' has 4 lines", "short.de' has 2 lines");
    CorpusPair missing = {s->paths[0], "/nonexistent/x.de"};
    spec = s->spec;
    spec.test = (CorpusList){&missing, 1};
    expect_fatal("missing input", &spec, "/nonexistent/x.de", NULL);
    snprintf(path[0], sizeof path[0], "%s/empty.txt", s->in);
    test_write_text(path[0], "\n \n");
    CorpusPair empty_only = {path[0], path[0]};
    spec = s->spec;
    spec.train = (CorpusList){&empty_only, 1};
    expect_fatal("nothing left", &spec, "no training pair is left after cleaning", NULL);
}

/* The outputs must not depend on the number of threads: one thread gives the same bytes. */
static void test_thread_independence(Setup *s) {
    DataConfig one = s->spec;
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/../one-thread", s->out);
    one.dir = dir;
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    EXPECT(prepare_run(&one) == PREPARE_BUILT, "one-thread run builds");
    omp_set_num_threads(threads);
    const char *files[] = {PREPARE_SPM_MODEL, "train.tok", "valid.tok", "valid.src", "valid.tgt"};
    for (int i = 0; i < 5; i++) {
        size_t na = 0, nb = 0;
        char *a = test_read_file(test_path(s->out, files[i]), &na);
        char *b = test_read_file(test_path(dir, files[i]), &nb);
        EXPECT(a && b && na == nb && !memcmp(a, b, na),
               "%s differs between %d threads and 1 thread", files[i], threads);
        free(a);
        free(b);
    }
}

int main(void) {
    char *dir = test_tempdir();
    Setup s;
    setup_init(&s, dir);
    Expected ex = {0};
    write_train(s.in, &ex);
    write_valid(s.in);
    test_fatal_errors(&s);  // before any OpenMP region runs in this process

    EXPECT(prepare_run(&s.spec) == PREPARE_BUILT, "the first run builds");
    check_train(&s, &ex);
    check_valid(&s);
    test_thread_independence(&s);
    check_reuse(&s, &ex);
    for (int i = 0; i < ex.n; i++) {
        free(ex.src[i]);
        free(ex.tgt[i]);
    }
    test_remove_tree(dir);
    free(dir);
    return test_finish();
}
