/* test_prepare_data.c (integration): `prepare` on the real corpora in NMT_DATA: Multi30k
 * train/val/test2016 plus the WMT news test sets 2008-2013 as extra test corpora, one joint 8k
 * unigram model. The raw files are read here independently (zlib gzgets), the expected training
 * pairs are recomputed (string-compared duplicates, this test's own length rules), and then:
 * every cached pair must be the library's encoding of its normalized line (prepare encodes with
 * unigram.h's encoder, so this holds it to the library) and decode back to it exactly,
 * on every line of every split; the text copies must be the normalized lines; the manifest must
 * hold the right counts (line counts from shared/data/README.md); a second run must reuse; a
 * changed length filter must re-encode with the same model. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "clean.h"
#include "prepare.h"
#include "spm.h"
#include "status.h"
#include "test_files.h"
#include "test_util.h"
#include "tokcache.h"
#include "unigram.h"

typedef struct Lines {
    char **line;
    long n, cap;
} Lines;

/* The lines of a (gzip or plain) file, without their "\n", normalized. */
static Lines read_normalized(const char *path) {
    Lines l = {0};
    gzFile gz = gzopen(path, "rb");
    EXPECT(gz != NULL, "cannot open %s", path);
    if (!gz) return l;
    static char buf[1 << 16];
    while (gzgets(gz, buf, sizeof buf)) {
        size_t len = strlen(buf);
        EXPECT(len > 0 && buf[len - 1] == '\n', "%s: line %ld is too long for this test", path,
               l.n + 1);
        buf[--len] = '\0';
        CleanStatus st = clean_normalize(buf, &len);
        EXPECT(st != CLEAN_INVALID_UTF8, "%s:%ld is not UTF-8", path, l.n + 1);
        if (l.n == l.cap) {
            l.cap = l.cap ? 2 * l.cap : 1024;
            l.line = realloc(l.line, sizeof *l.line * (size_t)l.cap);
        }
        l.line[l.n++] = strdup(buf);
    }
    gzclose(gz);
    return l;
}

static void lines_free(Lines *l) {
    for (long i = 0; i < l->n; i++) free(l->line[i]);
    free(l->line);
}

/* A set of strings (open addressing, compared with strcmp): this test's duplicate detector. */
typedef struct StringSet {
    char **slot;
    size_t cap;
} StringSet;

static bool set_insert(StringSet *s, char *key) {
    size_t h = 5381;
    for (const char *c = key; *c; c++) h = h * 33 + (unsigned char)*c;
    for (size_t i = h % s->cap;; i = (i + 1) % s->cap) {
        if (!s->slot[i]) {
            s->slot[i] = key;
            return true;
        }
        if (!strcmp(s->slot[i], key)) return false;
    }
}

typedef struct Model {
    SpmModel *spm;
    uint64_t fingerprint;
} Model;

static Model load_model(const char *dir) {
    Model m = {0};
    size_t len = 0;
    char *bytes = test_read_file(test_path(dir, PREPARE_SPM_MODEL), &len);
    EXPECT(bytes && spm_load_bytes(&m.spm, bytes, len) == 0, "load model: %s", status_message());
    m.fingerprint = tokcache_fingerprint(bytes, len);
    free(bytes);
    return m;
}

/* Cached pair i must decode to (src, tgt) and, if given, hold the encodings (a, b).
 * Returns the number of sides that differ. */
static long check_pair(const Model *m, const TokCache *c, long i, const char *src, const char *tgt,
                       const SpmIds *a, const SpmIds *b) {
    long bad = 0;
    for (int side = 0; side < 2; side++) {
        const char *text = side ? tgt : src;
        const SpmIds *want = side ? b : a;
        const int32_t *cached = side ? tokcache_tgt(c, i) : tokcache_src(c, i);
        int n = side ? tokcache_tgt_len(c, i) : tokcache_src_len(c, i);
        char *decoded = NULL;
        size_t len = 0;
        spm_decode(m->spm, cached, n, &decoded, &len);
        bool same =
            decoded && !strcmp(decoded, text) &&
            (!want || (want->n == n && !memcmp(want->ids, cached, sizeof *cached * (size_t)n)));
        if (!same && bad < 3)
            fprintf(stderr, "  pair %ld side %d: [%s] decodes as [%s]\n", i, side, text, decoded);
        bad += !same;
        free(decoded);
    }
    return bad;
}

/* The test's own length rules (clean.h): min, then max, then ratio. */
static int length_verdict(const DataConfig *spec, int ns, int nt) {
    int shorter = ns < nt ? ns : nt, longer = ns < nt ? nt : ns;
    if (shorter < spec->min_len) return 1;
    if (spec->max_len && longer > spec->max_len) return 2;
    if (spec->max_len_ratio && longer > spec->max_len_ratio * shorter) return 3;
    return 0;
}

/* Train: recompute the kept pairs from the raw files and compare with the cache and manifest. */
static void check_train(const DataConfig *spec, const Model *m) {
    Lines en = read_normalized(spec->train.items[0].src);
    Lines de = read_normalized(spec->train.items[0].tgt);
    EXPECT(en.n == 29000 && de.n == 29000, "Multi30k train has %ld/%ld lines, want 29000", en.n,
           de.n);
    TokCache c;
    EXPECT(tokcache_open(&c, test_path(spec->dir, "train.tok"), spm_vocab_size(m->spm),
                         m->fingerprint) == 0,
           "train.tok: %s", status_message());
    long n = en.n == de.n ? en.n : 0;
    // Text stage, in order: empty sides, then exact duplicates of an earlier pair.
    StringSet seen = {calloc(4 * (size_t)n + 1, sizeof(char *)), 4 * (size_t)n + 1};
    char **pairs = calloc((size_t)n + 1, sizeof *pairs);
    long dropped[4] = {0}, empty = 0, duplicate = 0, kept = 0, bad = 0;
    for (long i = 0; i < n; i++) {
        if (!*en.line[i] || !*de.line[i]) {
            empty++;
            continue;
        }
        size_t len = strlen(en.line[i]) + strlen(de.line[i]) + 2;
        pairs[i] = malloc(len);
        snprintf(pairs[i], len, "%s\t%s", en.line[i], de.line[i]);
        if (!set_insert(&seen, pairs[i])) {
            duplicate++;
            free(pairs[i]);
            pairs[i] = NULL;
        }
    }
    // Subword stage: encode the survivors (in parallel), judge their lengths, number the kept.
    SpmIds *enc = calloc(2 * (size_t)n + 1, sizeof *enc);
    int *verdict = calloc((size_t)n + 1, sizeof *verdict);
    long *slot = calloc((size_t)n + 1, sizeof *slot);
#pragma omp parallel for schedule(dynamic, 64)
    for (long i = 0; i < n; i++) {
        if (!pairs[i]) continue;
        spm_encode_library(m->spm, en.line[i], strlen(en.line[i]), &enc[2 * i]);
        spm_encode_library(m->spm, de.line[i], strlen(de.line[i]), &enc[2 * i + 1]);
        verdict[i] = length_verdict(spec, enc[2 * i].n, enc[2 * i + 1].n);
    }
    for (long i = 0; i < n; i++) {
        if (!pairs[i]) continue;
        dropped[verdict[i]]++;
        slot[i] = verdict[i] == 0 ? kept++ : -1;
    }
    if (kept == c.npairs) {
#pragma omp parallel for reduction(+ : bad) schedule(dynamic, 64)
        for (long i = 0; i < n; i++)
            if (pairs[i] && slot[i] >= 0)
                bad += check_pair(m, &c, slot[i], en.line[i], de.line[i], &enc[2 * i],
                                  &enc[2 * i + 1]);
    }
    EXPECT(kept == c.npairs && bad == 0, "train.tok: %ld pairs, want %ld; %ld sides differ",
           c.npairs, kept, bad);
    char *manifest = test_read_file(test_path(spec->dir, PREPARE_MANIFEST), NULL);
    const struct {
        const char *key;
        long want;
    } counts[] = {
        {"pairs_read", 29000},     {"pairs_kept", kept},     {"invalid_utf8", 0},
        {"control_char", 0},       {"empty", empty},         {"duplicate", duplicate},
        {"too_short", dropped[1]}, {"too_long", dropped[2]}, {"length_ratio", dropped[3]}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        EXPECT(test_manifest_count(manifest, "train", counts[i].key) == counts[i].want,
               "manifest train %s = %ld, want %ld", counts[i].key,
               test_manifest_count(manifest, "train", counts[i].key), counts[i].want);
    printf(
        "train: %ld kept; dropped: %ld empty, %ld duplicate, %ld too short, %ld too long, "
        "%ld ratio\n",
        kept, empty, duplicate, dropped[1], dropped[2], dropped[3]);
    free(manifest);
    for (long i = 0; i < n; i++) {
        free(pairs[i]);
        spm_ids_free(&enc[2 * i]);
        spm_ids_free(&enc[2 * i + 1]);
    }
    free(pairs);
    free(enc);
    free(verdict);
    free(slot);
    free(seen.slot);
    tokcache_close(&c);
    lines_free(&en);
    lines_free(&de);
}

/* Valid/test: nothing dropped, the text copies are the normalized lines, the cache holds the
 * library's encoding of them and decodes to them. Returns the pairs of the split. */
static long check_eval_split(const DataConfig *spec, const Model *m, Split split,
                             const CorpusList *list, const long *want_lines) {
    char *copy_path[2] = {prepare_split_path(spec->dir, split, "src"),
                          prepare_split_path(spec->dir, split, "tgt")};
    Lines copy[2] = {read_normalized(copy_path[0]), read_normalized(copy_path[1])};
    char *cache_path = prepare_split_path(spec->dir, split, "tok");
    TokCache c;
    EXPECT(tokcache_open(&c, cache_path, spm_vocab_size(m->spm), m->fingerprint) == 0, "%s: %s",
           cache_path, status_message());
    long pair = 0, bad = 0, copy_bad = 0;
    for (int k = 0; k < list->count; k++) {
        Lines en = read_normalized(list->items[k].src), de = read_normalized(list->items[k].tgt);
        EXPECT(en.n == want_lines[k] && de.n == want_lines[k], "%s: %ld/%ld lines, want %ld",
               list->items[k].src, en.n, de.n, want_lines[k]);
        long first = pair, n = en.n < de.n ? en.n : de.n;
        if (first + n > c.npairs || first + n > copy[0].n || first + n > copy[1].n) n = 0;
#pragma omp parallel for reduction(+ : bad, copy_bad) schedule(dynamic, 64)
        for (long i = 0; i < n; i++) {
            copy_bad += strcmp(copy[0].line[first + i], en.line[i]) ||
                        strcmp(copy[1].line[first + i], de.line[i]);
            SpmIds want[2] = {{0}, {0}};
            spm_encode_library(m->spm, en.line[i], strlen(en.line[i]), &want[0]);
            spm_encode_library(m->spm, de.line[i], strlen(de.line[i]), &want[1]);
            bad += check_pair(m, &c, first + i, en.line[i], de.line[i], &want[0], &want[1]);
            spm_ids_free(&want[0]);
            spm_ids_free(&want[1]);
        }
        pair += en.n < de.n ? en.n : de.n;
        lines_free(&en);
        lines_free(&de);
    }
    EXPECT(c.npairs == pair && copy[0].n == pair && copy[1].n == pair,
           "%s: cache %ld pairs, copies %ld/%ld lines, want %ld", split_name(split), c.npairs,
           copy[0].n, copy[1].n, pair);
    EXPECT(bad == 0 && copy_bad == 0, "%s: %ld cached sides and %ld copied lines differ",
           split_name(split), bad, copy_bad);
    char *manifest = test_read_file(test_path(spec->dir, PREPARE_MANIFEST), NULL);
    EXPECT(test_manifest_count(manifest, split_name(split), "pairs_read") == pair &&
               test_manifest_count(manifest, split_name(split), "pairs_kept") == pair,
           "manifest %s counts", split_name(split));
    free(manifest);
    tokcache_close(&c);
    for (int side = 0; side < 2; side++) {
        lines_free(&copy[side]);
        free(copy_path[side]);
    }
    free(cache_path);
    return pair;
}

int main(void) {
    const char *data = test_data_dir();
    char paths[20][1024];
    const char *m30k[3] = {"train", "val", "test2016"};
    for (int i = 0; i < 3; i++)
        for (int side = 0; side < 2; side++)
            snprintf(paths[2 * i + side], sizeof paths[0], "%s/multi30k/%s.%s.gz", data, m30k[i],
                     side ? "de" : "en");
    const char *news[7] = {"news-test2008", "newssyscomb2009", "newstest2009", "newstest2010",
                           "newstest2011",  "newstest2012",    "newstest2013"};
    const long news_lines[8] = {1000, 2051, 502, 2525, 2489, 3003, 3003, 3000};
    for (int i = 0; i < 7; i++)
        for (int side = 0; side < 2; side++)
            snprintf(paths[6 + 2 * i + side], sizeof paths[0], "%s/wmt14/%s.%s", data, news[i],
                     side ? "de" : "en");
    CorpusPair train = {paths[0], paths[1]}, valid = {paths[2], paths[3]}, test[8];
    test[0] = (CorpusPair){paths[4], paths[5]};
    for (int i = 0; i < 7; i++) test[1 + i] = (CorpusPair){paths[6 + 2 * i], paths[7 + 2 * i]};

    char *dir = test_tempdir();
    DataConfig spec = {
        .dir = dir,
        .train = {&train, 1},
        .valid = {&valid, 1},
        .test = {test, 8},
        .vocab_size = 8000,
        .spm_model_type = SPM_MODEL_UNIGRAM,
        .character_coverage = 1.0,
        .spm_input_sentences = 30000,
        .max_len = 100,
        .max_len_ratio = 1.5,
        .min_len = 1,
        .seed = 1,
    };
    EXPECT(prepare_run(&spec) == PREPARE_BUILT, "first run builds");
    Model m = load_model(dir);
    size_t model_len = 0;
    char *model_bytes = test_read_file(test_path(dir, PREPARE_SPM_MODEL), &model_len);
    UnigramEncoder *fast = model_bytes ? unigram_encoder_new(model_bytes, model_len) : NULL;
    EXPECT(fast != NULL, "prepare's unigram model should be encoded by unigram.h, not the library");
    unigram_encoder_free(fast);
    free(model_bytes);
    if (m.spm) {
        EXPECT(spm_vocab_size(m.spm) == 8000, "vocabulary %d", spm_vocab_size(m.spm));
        check_train(&spec, &m);
        const long val_lines = 1014;
        check_eval_split(&spec, &m, SPLIT_VALID, &spec.valid, &val_lines);
        long test_pairs = check_eval_split(&spec, &m, SPLIT_TEST, &spec.test, news_lines);
        EXPECT(test_pairs == 17573, "test pairs %ld, want 17573", test_pairs);
    }

    ino_t spm_inode = test_inode(test_path(dir, PREPARE_SPM_MODEL));
    ino_t train_inode = test_inode(test_path(dir, "train.tok"));
    EXPECT(prepare_run(&spec) == PREPARE_REUSED, "second run reuses");
    EXPECT(test_inode(test_path(dir, "train.tok")) == train_inode, "reuse rewrote train.tok");
    spec.max_len = 40;
    EXPECT(prepare_run(&spec) == PREPARE_REENCODED, "a new data.max_len re-encodes");
    EXPECT(test_inode(test_path(dir, PREPARE_SPM_MODEL)) == spm_inode, "spm.model was retrained");
    EXPECT(test_inode(test_path(dir, "train.tok")) != train_inode, "train.tok was not rewritten");
    if (m.spm) check_train(&spec, &m);
    spm_free(m.spm);
    test_remove_tree(dir);
    free(dir);
    return test_finish();
}
