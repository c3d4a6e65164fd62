/* test_spm.c: the SentencePiece shim on a small synthetic corpus: training (unigram and BPE),
 * the project's special ids, encode/decode round trips including characters never seen in
 * training (byte fallback), sampled encodings, vocabulary queries, loading from a file and from
 * bytes, thread-safe parallel encoding, error returns instead of exceptions, and hypotheses of
 * byte pieces detokenized to one line of valid UTF-8 (translator_decode), and unigram.h's encoder
 * against the library on edge cases (test_prepare_data.c holds it to the library on real text). */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spm.h"
#include "status.h"
#include "test_files.h"
#include "translator.h"
#include "test_util.h"
#include "unigram.h"

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

static bool same_ids(const SpmIds *a, const SpmIds *b) {
    return a->n == b->n && (a->n == 0 || !memcmp(a->ids, b->ids, sizeof(int32_t) * (size_t)a->n));
}

/* unigram.h's encoder exists for the unigram model only, and gives the library's ids on the corpus
 * and on whitespace, U+2581, NUL, unseen characters and long input; it declines invalid UTF-8. */
static void expect_fast_encoder(const Corpus *c, const SpmModel *m, const char *type,
                                const char *bytes, size_t len) {
    UnigramEncoder *fast = unigram_encoder_new(bytes, len);
    bool unigram = !strcmp(type, "unigram");
    EXPECT((fast != NULL) == unigram, "%s: unigram_encoder_new gave %s", type,
           fast ? "an encoder" : "NULL");
    EXPECT(unigram_encoder_new(bytes, len / 2) == NULL, "%s: a truncated model gave an encoder",
           type);
    if (!fast) return;
    static char long_text[8192];
    size_t long_len = 0;
    for (int i = 0; long_len + 64 < sizeof long_text; i++)
        long_len += (size_t)snprintf(long_text + long_len, sizeof long_text - long_len, "%s  ",
                                     c->sent[i]);
#define TEXT(s) {s, sizeof(s) - 1}  // with its length, so NUL can be inside
    const struct { const char *text; size_t len; } edge[] = {
        TEXT(""), TEXT(" "), TEXT("   "), TEXT("ka"), TEXT(" ka"), TEXT("ka "),
        TEXT("  ka  ro  mi "), TEXT("ka\tro"), TEXT("\t"), TEXT("ka\xe2\x96\x81ro"),
        TEXT("\xe2\x96\x81"), TEXT("\xe2\x96\x81\xe2\x96\x81"), TEXT("ka \xe2\x96\x81"),
        TEXT("\xe2\x96\x81ka"), TEXT("ka\0ro"), TEXT("\0"),
        TEXT("日本語 \xF0\x9F\x98\x80 Ωμέγα"), TEXT("kakakakakakakakakakakaka rororororo"),
        TEXT("12345 678, ZZZZ!"),
        {long_text, long_len}};
    SpmIds a = {0}, b = {0};
    int differ = 0;
    for (size_t i = 0; i < sizeof edge / sizeof edge[0] + NSENT; i++) {
        bool is_edge = i < sizeof edge / sizeof edge[0];
        const char *text = is_edge ? edge[i].text : c->sent[i - sizeof edge / sizeof edge[0]];
        size_t n = is_edge ? edge[i].len : strlen(text);
        bool encoded = unigram_encode(fast, text, n, &a);
        EXPECT(encoded && spm_encode_library(m, text, n, &b) == 0, "%s: text %zu", type, i);
        bool same = encoded && same_ids(&a, &b);
        if (!same && differ++ < 5)
            EXPECT(0, "%s: [%.*s]: %d ids, the library %d", type, (int)n, text, a.n, b.n);
    }
#undef TEXT
    EXPECT(differ == 0, "%s: %d texts encode differently from the library", type, differ);
    EXPECT(!unigram_encode(fast, "ka\xffro", 5, &a), "invalid UTF-8 should go to the library");
    spm_ids_free(&a);
    spm_ids_free(&b);
    unigram_encoder_free(fast);
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

    expect_fast_encoder(c, m, type, bytes, len);

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

/* A serialized ModelProto written by hand (protobuf wire format), to give the encoder the cases a
 * trained model does not: equal-scoring segmentations, a character that only occurs inside longer
 * pieces, an unused piece. */
typedef struct Proto {
    uint8_t b[16384];
    size_t n;
} Proto;

static void proto_varint(Proto *p, uint64_t v) {
    do {
        p->b[p->n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

static void proto_bytes(Proto *p, int field, const void *bytes, size_t len) {
    proto_varint(p, (uint64_t)field << 3 | 2);
    proto_varint(p, len);
    memcpy(p->b + p->n, bytes, len);
    p->n += len;
}

static void proto_piece(Proto *p, const char *text, float score, int type) {
    Proto piece = {.n = 0};
    proto_bytes(&piece, 1, text, strlen(text));
    uint32_t bits;
    memcpy(&bits, &score, sizeof bits);
    proto_varint(&piece, 2 << 3 | 5);
    for (int i = 0; i < 4; i++) piece.b[piece.n++] = (uint8_t)(bits >> (8 * i));
    proto_varint(&piece, 3 << 3 | 0);
    proto_varint(&piece, (uint64_t)type);
    proto_bytes(p, 1, piece.b, piece.n);
}

static void test_handmade_model(void) {
    enum { NORMAL = 1, UNKNOWN = 2, CONTROL = 3, UNUSED = 5, BYTE = 6 };
    Proto *p = calloc(1, sizeof *p);
    proto_piece(p, "<pad>", 0, CONTROL);
    proto_piece(p, "<unk>", 0, UNKNOWN);
    proto_piece(p, "<s>", 0, CONTROL);
    proto_piece(p, "</s>", 0, CONTROL);
    for (int b = 0; b < 256; b++) {
        char piece[8];
        snprintf(piece, sizeof piece, "<0x%02X>", b);
        proto_piece(p, piece, 0, BYTE);
    }
    const struct { const char *text; float score; int type; } pieces[] = {
        {"\xe2\x96\x81", -1, NORMAL}, {"a", -2, NORMAL}, {"b", -2, NORMAL},
        {"\xe2\x96\x81" "a", -3, NORMAL}, {"ab", -3, NORMAL},
        {"\xe2\x96\x81" "ab", -5, NORMAL},  // ties with ▁a + b: the earlier start wins
        {"xy", -5, NORMAL}, {"y", -1, NORMAL}, {"yz", -1, NORMAL}, {"z", -1, NORMAL},  // no "x"
        {"bc", -0.5f, UNUSED}, {"c", -2, NORMAL}};
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++)
        proto_piece(p, pieces[i].text, pieces[i].score, pieces[i].type);
    Proto spec = {.n = 0};  // TrainerSpec: unigram, byte fallback
    proto_varint(&spec, 3 << 3 | 0);
    proto_varint(&spec, 1);
    proto_varint(&spec, 35 << 3 | 0);
    proto_varint(&spec, 1);
    proto_bytes(p, 2, spec.b, spec.n);
    spec.n = 0;  // NormalizerSpec: identity
    proto_bytes(&spec, 1, "identity", 8);
    proto_bytes(p, 3, spec.b, spec.n);

    SpmModel *m = NULL;
    EXPECT(spm_load_bytes(&m, p->b, p->n) == 0, "the handmade model: %s", status_message());
    UnigramEncoder *fast = unigram_encoder_new(p->b, p->n);
    EXPECT(fast != NULL, "the handmade model should have an encoder");
    const char *texts[] = {"ab", "a b ab", "xyz", "xy", "x", "bc", "abc", "zyx ab xyzab"};
    SpmIds a = {0}, b = {0};
    for (size_t i = 0; m && fast && i < sizeof texts / sizeof texts[0]; i++) {
        unigram_encode(fast, texts[i], strlen(texts[i]), &a);
        spm_encode_library(m, texts[i], strlen(texts[i]), &b);
        bool same = same_ids(&a, &b);
        EXPECT(same, "handmade model, [%s]: %d ids (first %d), the library %d (first %d)",
               texts[i], a.n, a.n ? a.ids[0] : -1, b.n, b.n ? b.ids[0] : -1);
    }
    spm_ids_free(&a);
    spm_ids_free(&b);
    unigram_encoder_free(fast);
    spm_free(m);
    free(p);
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
    test_handmade_model();
    for (int i = 0; i < NSENT; i++) free(c.sent[i]);
    test_remove_tree(dir);
    free(dir);
    return test_finish();
}
