/* test_spm.c: the SentencePiece shim on a small synthetic corpus: training (unigram and BPE),
 * the project's special ids, encode/decode round trips including characters never seen in
 * training (byte fallback), sampled encodings, vocabulary queries, loading from a file and from
 * bytes, thread-safe parallel encoding, error returns instead of exceptions, and hypotheses of
 * byte pieces detokenized to one line of valid UTF-8 (translator_decode). */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spm.h"
#include "status.h"
#include "test_files.h"
#include "translator.h"
#include "test_util.h"

enum { NSENT = 3000 };

typedef struct Corpus {
    char *sent[NSENT];
    int next;
} Corpus;

/* Sentences of 3..12 words built from a few dozen syllables, deterministic. */
static void corpus_make(Corpus *c) {
    static const char *syl[] = {"ka", "ro",  "mi", "ten", "sa", "lu", "vo", "dre", "ni", "pha",
                                "ge", "stu", "bi", "an",  "er", "ol", "ür", "ßa",  "qu", "ix"};
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < NSENT; i++) {
        char buf[512];
        size_t used = 0;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int words = 3 + (int)(x % 10);
        for (int w = 0; w < words; w++) {
            if (w) buf[used++] = ' ';
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int parts = 1 + (int)(x % 3);
            if (w == 0 && i % 4 == 0) buf[used++] = 'Z';
            for (int k = 0; k < parts; k++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                const char *s = syl[x % 20];
                memcpy(buf + used, s, strlen(s));
                used += strlen(s);
            }
        }
        buf[used] = '\0';
        c->sent[i] = strdup(buf);
    }
    c->next = 0;
}

static int corpus_next(void *ctx, const char **text, size_t *len) {
    Corpus *c = ctx;
    if (c->next == NSENT) return 0;
    *text = c->sent[c->next];
    *len = strlen(c->sent[c->next++]);
    return 1;
}

static SpmModel *train(Corpus *c, const char *type, int vocab, char **bytes, size_t *len) {
    SpmTrainOptions opt = {.vocab_size = vocab,
                           .model_type = type,
                           .character_coverage = 1.0,
                           .input_sentences = 0,
                           .seed = 1,
                           .threads = 2};
    c->next = 0;
    int st = spm_train(&opt, corpus_next, c, bytes, len);
    EXPECT(st == 0, "training %s: %s", type, status_message());
    if (st) return NULL;
    SpmModel *m = NULL;
    EXPECT(spm_load_bytes(&m, *bytes, *len) == 0, "load %s: %s", type, status_message());
    return m;
}

/* decode(encode(text)) must be text, with no <unk>. Returns the number of ids. */
static int expect_round_trip(const SpmModel *m, const char *text, SpmIds *ids) {
    size_t len = strlen(text);
    EXPECT(spm_encode(m, text, len, ids) == 0, "encode [%s]: %s", text, status_message());
    for (int i = 0; i < ids->n; i++)
        EXPECT(ids->ids[i] != SPM_UNK_ID && ids->ids[i] > SPM_EOS_ID,
               "[%s] encodes to special id %d at %d", text, ids->ids[i], i);
    char *out = NULL;
    size_t out_len = 0;
    EXPECT(spm_decode(m, ids->ids, ids->n, &out, &out_len) == 0, "decode: %s", status_message());
    EXPECT(out && out_len == len && !strcmp(out, text), "round trip [%s] -> [%s]", text,
           out ? out : "(null)");
    free(out);
    return ids->n;
}

static void test_model(Corpus *c, const char *type, const char *dir) {
    char *bytes = NULL;
    size_t len = 0;
    SpmModel *m = train(c, type, 400, &bytes, &len);
    if (!m) return;
    EXPECT(spm_vocab_size(m) == 400, "%s: vocab %d, want 400", type, spm_vocab_size(m));
    const char *specials[4] = {"<pad>", "<unk>", "<s>", "</s>"};
    for (int id = 0; id < 4; id++)
        EXPECT(
            !strcmp(spm_id_to_piece(m, id), specials[id]) && spm_piece_to_id(m, specials[id]) == id,
            "%s: special id %d is '%s'", type, id, spm_id_to_piece(m, id));
    int mismatched = 0;
    for (int id = 0; id < 400; id++) mismatched += spm_piece_to_id(m, spm_id_to_piece(m, id)) != id;
    EXPECT(mismatched == 0, "%s: %d ids do not survive id -> piece -> id", type, mismatched);
    EXPECT(spm_piece_to_id(m, "no such piece") == SPM_UNK_ID, "unknown piece should map to unk");
    EXPECT(spm_id_to_piece(m, 400) == NULL && spm_id_to_piece(m, -1) == NULL,
           "out-of-range ids have no piece");
    EXPECT(!strcmp(spm_id_to_piece(m, 4), "<0x00>"), "%s: id 4 is '%s', want the first byte piece",
           type, spm_id_to_piece(m, 4));

    SpmIds ids = {0};
    long total_ids = 0;
    for (int i = 0; i < NSENT; i++) total_ids += expect_round_trip(m, c->sent[i], &ids);
    EXPECT(total_ids > NSENT * 3, "%s: %ld ids for %d sentences of >= 3 words", type, total_ids,
           NSENT);
    // Characters never seen in training come back through byte pieces.
    const char *unseen = "Ωμέγα 日本語 \xF0\x9F\x98\x80 na\xC3\xAFve {x} 12345";
    expect_round_trip(m, unseen, &ids);
    bool has_byte_piece = false;
    for (int i = 0; i < ids.n; i++)
        has_byte_piece |= !strncmp(spm_id_to_piece(m, ids.ids[i]), "<0x", 3);
    EXPECT(has_byte_piece, "%s: unseen characters should use byte pieces", type);
    expect_round_trip(m, "", &ids);
    EXPECT(ids.n == 0, "the empty string encodes to %d ids", ids.n);

    // A hypothesis of byte pieces is still one line of valid UTF-8 (translator_decode): line
    // breaks and NUL become spaces, a byte that starts no valid sequence U+FFFD.
    const char *pieces[] = {"<0x61>", "<0x0A>", "<0x62>", "<0xC3>", "<0x0D>", "<0x00>", "<0x63>"};
    int32_t hyp[7];
    for (int i = 0; i < 7; i++) hyp[i] = spm_piece_to_id(m, pieces[i]);
    char *line = translator_decode(m, hyp, 7);
    EXPECT(!strcmp(line, "a b\xEF\xBF\xBD  c"), "%s: byte pieces decode to [%s]", type, line);
    free(line);

    // BOS/EOS/PAD decode to nothing.
    expect_round_trip(m, c->sent[7], &ids);
    int n = ids.n;
    int32_t *framed = malloc(sizeof *framed * (size_t)(n + 4));
    framed[0] = SPM_BOS_ID;
    memcpy(framed + 1, ids.ids, sizeof *framed * (size_t)n);
    framed[n + 1] = SPM_EOS_ID;
    framed[n + 2] = SPM_PAD_ID;
    framed[n + 3] = SPM_PAD_ID;
    char *out = NULL;
    size_t out_len;
    EXPECT(spm_decode(m, framed, n + 4, &out, &out_len) == 0 && !strcmp(out, c->sent[7]),
           "%s: specials should decode to nothing: [%s]", type, out);
    free(out);
    framed[1] = 400;
    out = NULL;
    EXPECT(spm_decode(m, framed, n + 4, &out, &out_len) != 0 && out == NULL &&
               strstr(status_message(), "outside the vocabulary"),
           "decoding id 400 must fail: %s", status_message());
    free(framed);

    // Sampled segmentations differ from each other but all decode to the text.
    const char *text = c->sent[11];
    int distinct = 0;
    int32_t first[256];
    int first_n = -1;
    for (int s = 0; s < 50; s++) {
        EXPECT(spm_sample_encode(m, text, strlen(text), -1, 0.5f, &ids) == 0, "sample: %s",
               status_message());
        if (first_n < 0) {
            first_n = ids.n;
            memcpy(first, ids.ids, sizeof *first * (size_t)ids.n);
        } else if (ids.n != first_n || memcmp(first, ids.ids, sizeof *first * (size_t)ids.n)) {
            distinct++;
        }
        char *dec = NULL;
        spm_decode(m, ids.ids, ids.n, &dec, &out_len);
        EXPECT(dec && !strcmp(dec, text), "%s: sample %d decodes to [%s]", type, s, dec);
        free(dec);
    }
    EXPECT(distinct > 0, "%s: 50 samples of [%s] were all the same", type, text);

    // Loading from a file gives the same model as loading from bytes.
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.model", dir, type);
    test_write_file(path, bytes, len);
    SpmModel *from_file = NULL;
    EXPECT(spm_load_file(&from_file, path) == 0, "load file: %s", status_message());
    SpmIds a = {0}, b = {0};
    int differ = 0;
    for (int i = 0; from_file && i < NSENT; i += 7) {
        spm_encode(m, c->sent[i], strlen(c->sent[i]), &a);
        spm_encode(from_file, c->sent[i], strlen(c->sent[i]), &b);
        differ += a.n != b.n || memcmp(a.ids, b.ids, sizeof *a.ids * (size_t)a.n);
    }
    EXPECT(differ == 0, "%s: file and bytes models differ on %d sentences", type, differ);

    // Concurrent encoding on one model equals serial encoding.
    uint64_t *serial = calloc(NSENT, sizeof *serial), *parallel = calloc(NSENT, sizeof *parallel);
    for (int i = 0; i < NSENT; i++) {
        spm_encode(m, c->sent[i], strlen(c->sent[i]), &a);
        for (int k = 0; k < a.n; k++) serial[i] = serial[i] * 31 + (uint64_t)a.ids[k];
    }
#pragma omp parallel
    {
        SpmIds mine = {0};
#pragma omp for schedule(dynamic, 8)
        for (int i = 0; i < NSENT; i++) {
            spm_encode(m, c->sent[i], strlen(c->sent[i]), &mine);
            for (int k = 0; k < mine.n; k++) parallel[i] = parallel[i] * 31 + (uint64_t)mine.ids[k];
        }
        spm_ids_free(&mine);
    }
    EXPECT(!memcmp(serial, parallel, sizeof *serial * NSENT), "%s: parallel encoding differs",
           type);
    free(serial);
    free(parallel);
    spm_ids_free(&a);
    spm_ids_free(&b);
    spm_ids_free(&ids);
    spm_free(from_file);
    spm_free(m);
    free(bytes);
}

static void test_errors(Corpus *c, const char *dir) {
    SpmModel *m = NULL;
    int st = spm_load_bytes(&m, "definitely not a model", 22);
    EXPECT(st != 0 && m == NULL && strstr(status_message(), "cannot load SentencePiece model"),
           "bad bytes: status %d, %s", st, status_message());
    st = spm_load_bytes(&m, "", 0);
    EXPECT(st != 0 && m == NULL, "empty bytes must not load (status %d)", st);
    char path[4096];
    snprintf(path, sizeof path, "%s/missing.model", dir);
    st = spm_load_file(&m, path);
    EXPECT(st != 0 && m == NULL && strstr(status_message(), "missing.model"),
           "missing file: status %d, %s", st, status_message());

    char *bytes = NULL;
    size_t len = 0;
    SpmTrainOptions opt = {.vocab_size = 100000,
                           .model_type = "unigram",
                           .character_coverage = 1.0,
                           .seed = 1,
                           .threads = 1};
    c->next = 0;
    st = spm_train(&opt, corpus_next, c, &bytes, &len);
    EXPECT(st != 0 && bytes == NULL && strstr(status_message(), "Vocabulary size"),
           "too large a vocabulary: status %d, %s", st, status_message());
    opt.vocab_size = 400;
    opt.model_type = "wordpiece";
    c->next = 0;
    st = spm_train(&opt, corpus_next, c, &bytes, &len);
    EXPECT(st != 0 && bytes == NULL && strstr(status_message(), "wordpiece"),
           "unknown model type: status %d, %s", st, status_message());
}

int main(void) {
    char *dir = test_tempdir();
    Corpus c;
    corpus_make(&c);
    test_errors(&c, dir);
    test_model(&c, "unigram", dir);
    test_model(&c, "bpe", dir);
    for (int i = 0; i < NSENT; i++) free(c.sent[i]);
    test_remove_tree(dir);
    free(dir);
    return test_finish();
}
