/* test_tokcache.c: token cache round trip (random pairs, empty sides, an empty cache), atomic
 * writing, and rejection of corrupted files: flipped bytes anywhere, wrong magic or version,
 * truncation, trailing bytes, wrong vocabulary size or model fingerprint. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "test_files.h"
#include "test_util.h"
#include "tokcache.h"

enum { NPAIRS = 3000, VOCAB = 5000 };
static const uint64_t FINGERPRINT = 0x0123456789ABCDEFull;

typedef struct Pairs {
    int32_t *src[NPAIRS], *tgt[NPAIRS];
    int ns[NPAIRS], nt[NPAIRS];
} Pairs;

static uint64_t next_random(uint64_t *x) {
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

static void make_pairs(Pairs *p) {
    uint64_t x = 12345;
    for (int i = 0; i < NPAIRS; i++) {
        p->ns[i] = i % 97 == 0 ? 0 : (int)(next_random(&x) % 80);
        p->nt[i] = i % 89 == 0 ? 0 : (int)(next_random(&x) % 80);
        p->src[i] = malloc(sizeof(int32_t) * (size_t)(p->ns[i] + 1));
        p->tgt[i] = malloc(sizeof(int32_t) * (size_t)(p->nt[i] + 1));
        for (int k = 0; k < p->ns[i]; k++) p->src[i][k] = (int32_t)(next_random(&x) % VOCAB);
        for (int k = 0; k < p->nt[i]; k++) p->tgt[i][k] = (int32_t)(next_random(&x) % VOCAB);
    }
}

static void write_cache(const char *path, const Pairs *p, int n) {
    TokCacheWriter w;
    tokcache_writer_open(&w, path, VOCAB, FINGERPRINT);
    for (int i = 0; i < n; i++) tokcache_writer_add(&w, p->src[i], p->ns[i], p->tgt[i], p->nt[i]);
    tokcache_writer_commit(&w);
}

static void test_round_trip(const char *dir, const Pairs *p) {
    const char *path = test_path(dir, "train.tok");
    write_cache(path, p, NPAIRS);
    TokCache c;
    EXPECT(tokcache_open(&c, path, VOCAB, FINGERPRINT) == 0, "open: %s", status_message());
    EXPECT(c.npairs == NPAIRS, "npairs %ld", c.npairs);
    long src_tokens = 0, tgt_tokens = 0, bad = 0;
    int max_src = 0, max_tgt = 0;
    for (int i = 0; i < NPAIRS && c.npairs == NPAIRS; i++) {
        src_tokens += p->ns[i];
        tgt_tokens += p->nt[i];
        max_src = p->ns[i] > max_src ? p->ns[i] : max_src;
        max_tgt = p->nt[i] > max_tgt ? p->nt[i] : max_tgt;
        bad += tokcache_src_len(&c, i) != p->ns[i] || tokcache_tgt_len(&c, i) != p->nt[i] ||
               memcmp(tokcache_src(&c, i), p->src[i], sizeof(int32_t) * (size_t)p->ns[i]) ||
               memcmp(tokcache_tgt(&c, i), p->tgt[i], sizeof(int32_t) * (size_t)p->nt[i]);
    }
    EXPECT(bad == 0, "%ld pairs differ after the round trip", bad);
    EXPECT(c.src_tokens == src_tokens && c.tgt_tokens == tgt_tokens, "token totals %ld %ld",
           c.src_tokens, c.tgt_tokens);
    EXPECT(c.max_src_len == max_src && c.max_tgt_len == max_tgt, "max lengths %d %d", c.max_src_len,
           c.max_tgt_len);
    EXPECT(c.vocab_size == VOCAB && c.spm_fingerprint == FINGERPRINT, "header model fields");
    tokcache_close(&c);

    // Atomic write: nothing but the final files is left in the directory.
    char listing[256];
    snprintf(listing, sizeof listing, "ls %s | grep -c tmp", dir);
    FILE *ls = popen(listing, "r");
    int tmp_files = -1;
    if (ls && fscanf(ls, "%d", &tmp_files) == 1) pclose(ls);
    EXPECT(tmp_files == 0, "%d temp files left behind", tmp_files);

    write_cache(test_path(dir, "empty.tok"), p, 0);
    EXPECT(tokcache_open(&c, test_path(dir, "empty.tok"), VOCAB, FINGERPRINT) == 0 &&
               c.npairs == 0 && c.src_tokens == 0,
           "empty cache: %s", status_message());
    tokcache_close(&c);
}

/* Writes a modified copy of the good cache and checks that opening it fails with `expect`. */
static void expect_rejected(const char *dir, const char *what, const char *bytes, size_t len,
                            int vocab, uint64_t fingerprint, const char *expect) {
    const char *path = test_path(dir, "bad.tok");
    test_write_file(path, bytes, len);
    TokCache c;
    int st = tokcache_open(&c, path, vocab, fingerprint);
    EXPECT(st == -1 && strstr(status_message(), expect) && strstr(status_message(), "bad.tok"),
           "%s: status %d, message [%s], want one naming the file and saying '%s'", what, st,
           status_message(), expect);
    if (st == 0) tokcache_close(&c);
}

static void test_corruption(const char *dir) {
    size_t len = 0;
    char *good = test_read_file(test_path(dir, "train.tok"), &len);
    char *bad = malloc(len + 8);
    const TokCacheHeader *h = (const TokCacheHeader *)good;
    size_t ids_at = sizeof(TokCacheHeader);
    size_t offsets_at = ids_at + ((4 * (size_t)(h->src_tokens + h->tgt_tokens) + 7) & ~(size_t)7);

    // One flipped bit anywhere in the data: ids, offsets, lengths, the stored CRC itself.
    const size_t spots[] = {ids_at, ids_at + 4 * 1000 + 2, offsets_at + 8 * 17, len - 20, len - 1};
    for (size_t i = 0; i < sizeof spots / sizeof spots[0]; i++) {
        memcpy(bad, good, len);
        bad[spots[i]] ^= 0x10;
        char what[64];
        snprintf(what, sizeof what, "bit flip at byte %zu of %zu", spots[i], len);
        expect_rejected(dir, what, bad, len, VOCAB, FINGERPRINT, "CRC-32");
    }
    // Header fields: each is caught by its own check before the CRC.
    memcpy(bad, good, len);
    bad[0] = 'X';
    expect_rejected(dir, "magic", bad, len, VOCAB, FINGERPRINT, "not an nmt token cache");
    memcpy(bad, good, len);
    ((TokCacheHeader *)bad)->version = TOKCACHE_VERSION + 1;
    expect_rejected(dir, "version", bad, len, VOCAB, FINGERPRINT, "version 2 token cache");
    memcpy(bad, good, len);
    ((TokCacheHeader *)bad)->npairs += 1;
    expect_rejected(dir, "pair count", bad, len, VOCAB, FINGERPRINT, "truncated or corrupt");
    memcpy(bad, good, len);
    ((TokCacheHeader *)bad)->spm_fingerprint ^= 1;
    expect_rejected(dir, "fingerprint field", bad, len, VOCAB, FINGERPRINT, "CRC-32");
    // Size changes.
    expect_rejected(dir, "truncated by 4", good, len - 4, VOCAB, FINGERPRINT,
                    "truncated or corrupt");
    expect_rejected(dir, "half", good, len / 2, VOCAB, FINGERPRINT, "truncated or corrupt");
    expect_rejected(dir, "header only", good, 40, VOCAB, FINGERPRINT, "shorter than its header");
    memcpy(bad, good, len);
    memset(bad + len, 0, 8);
    expect_rejected(dir, "8 extra bytes", bad, len + 8, VOCAB, FINGERPRINT, "truncated or corrupt");
    // An intact file for another model.
    expect_rejected(dir, "wrong vocabulary size", good, len, VOCAB + 1, FINGERPRINT,
                    "5000-piece vocabulary");
    expect_rejected(dir, "wrong model", good, len, VOCAB, FINGERPRINT + 1,
                    "different SentencePiece model");

    TokCache c;
    EXPECT(tokcache_open(&c, test_path(dir, "none.tok"), VOCAB, FINGERPRINT) == -1 &&
               strstr(status_message(), "none.tok"),
           "missing file: %s", status_message());
    free(good);
    free(bad);
}

static void write_bad_id(void *path) {
    TokCacheWriter w;
    int32_t ids[2] = {7, VOCAB};
    tokcache_writer_open(&w, path, VOCAB, FINGERPRINT);
    tokcache_writer_add(&w, ids, 2, ids, 1);
}

int main(void) {
    char *dir = test_tempdir();
    Pairs p;
    make_pairs(&p);
    test_round_trip(dir, &p);
    test_corruption(dir);
    char err[4096];
    char path[4096];
    snprintf(path, sizeof path, "%s/ids.tok", dir);
    int status = test_run_child(write_bad_id, path, err, sizeof err);
    EXPECT(status == 1 && strstr(err, "id 5000 of pair 0 is outside the vocabulary"),
           "an out-of-vocabulary id must be fatal: status %d, %s", status, err);
    for (int i = 0; i < NPAIRS; i++) {
        free(p.src[i]);
        free(p.tgt[i]);
    }
    test_remove_tree(dir);
    free(dir);
    return test_finish();
}
