/* fuzz_translate.c: the input side of `nmt translate` (trainer/translator.h): the input is the
 * source file, read with translator_read_lines and encoded with translator_encode by a small
 * SentencePiece model trained once at start-up (unigram, 300 pieces, byte fallback, on
 * generated sentences). An input translator_read_lines refuses (invalid UTF-8, a NUL byte,
 * broken SGM markup) must be refused with a message, not a crash. Every encoded line must decode
 * back to its normalized text without <unk> (data/spm.h: byte fallback makes every valid UTF-8
 * string round-trip), and its ids (data/unigram.h's encoder) must be the ones SentencePiece's own
 * Encode gives. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clean.h"
#include "files.h"
#include "fuzz_util.h"
#include "spm.h"
#include "status.h"
#include "translator.h"

enum { SENTENCES = 400 };

static SpmModel *spm;

typedef struct Sentences {
    char text[128];
    int next;
    uint64_t x;
} Sentences;

/* SENTENCES sentences of 2..9 words made of a few syllables (ASCII, German letters, a sign). */
static int next_sentence(void *ctx, const char **text, size_t *len) {
    static const char *syl[] = {"der", "an", "ko", "mä", "ßen", "lu", "tri", "ö", "st", "€"};
    Sentences *s = ctx;
    if (s->next++ == SENTENCES) return 0;
    size_t used = 0;
    s->x ^= s->x << 13, s->x ^= s->x >> 7, s->x ^= s->x << 17;
    for (int w = 0, words = 2 + (int)(s->x % 8); w < words; w++) {
        if (w) s->text[used++] = ' ';
        for (int k = 0; k < 1 + w % 3; k++) {
            s->x ^= s->x << 13, s->x ^= s->x >> 7, s->x ^= s->x << 17;
            const char *p = syl[s->x % 10];
            memcpy(s->text + used, p, strlen(p));
            used += strlen(p);
        }
    }
    *text = s->text;
    *len = used;
    return 1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    SpmTrainOptions opt = {.vocab_size = 300, .model_type = "unigram", .character_coverage = 1.0,
                           .seed = 1, .threads = 1};
    Sentences s = {.x = 0x9E3779B97F4A7C15ull};
    char *bytes;
    size_t len;
    CHECK(spm_train(&opt, next_sentence, &s, &bytes, &len) == 0 &&
              spm_load_bytes(&spm, bytes, len) == 0,
          "the fuzzer's SentencePiece model: %s", status_message());
    free(bytes);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *path = fuzz_write(data, size, ".txt");
    long n;
    char **lines = translator_read_lines(path, &n);
    fuzz_remove(path);
    if (!lines) return 0;  // refused with a message: not UTF-8, a NUL, a broken SGM tag ...
    int32_t **ids = xmalloc(sizeof *ids * (size_t)(n ? n : 1));
    int *len = xmalloc(sizeof *len * (size_t)(n ? n : 1));
    translator_encode(spm, lines, n, ids, len, "fuzz");
    SpmIds library = {0};
    for (long i = 0; i < n; i++) {
        size_t l = strlen(lines[i]);
        clean_normalize(lines[i], &l);
        bool same = spm_encode_library(spm, lines[i], l, &library) == 0 && library.n == len[i] &&
                    (len[i] == 0 ||
                     !memcmp(library.ids, ids[i], sizeof(int32_t) * (size_t)len[i]));
        FUZZ_ASSERT(same, "line %ld: [%s] has %d ids, SentencePiece's Encode %d", i + 1, lines[i],
                    len[i], library.n);
        for (int k = 0; k < len[i]; k++)
            FUZZ_ASSERT(ids[i][k] > SPM_EOS_ID && ids[i][k] < spm_vocab_size(spm),
                        "line %ld: id %d", i + 1, ids[i][k]);
        char *text = translator_decode(spm, ids[i], len[i]);
        FUZZ_ASSERT(!strcmp(text, lines[i]), "line %ld: [%s] decodes as [%s]", i + 1, lines[i],
                    text);
        free(text), free(ids[i]);
    }
    spm_ids_free(&library);
    file_free_lines(lines, n);
    free(ids), free(len);
    return 0;
}
