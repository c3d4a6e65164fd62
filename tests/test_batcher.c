/* test_batcher.c: token-budget batches over a synthetic token cache: contents and padding of every
 * row, the budget, every pair exactly once per epoch, determinism for a seed, a different order per
 * epoch and per seed, exact resume from a saved cursor (across an epoch boundary), a pair longer
 * than the budget alone in its batch, length sorting, and evaluation mode. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batcher.h"
#include "spm.h"
#include "status.h"
#include "test_files.h"
#include "test_util.h"

enum { NPAIRS = 4000, VOCAB = 1000, BUDGET = 512 };

static uint64_t next_random(uint64_t *x) {
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

/* Pair i has source ids 4 + (i + k) % 900 and a target of related length; pairs 100 and 2500
 * are longer than the budget. */
static void write_cache(const char *path) {
    TokCacheWriter w;
    tokcache_writer_open(&w, path, VOCAB, 42);
    uint64_t x = 99;
    int32_t src[800], tgt[800];
    for (int i = 0; i < NPAIRS; i++) {
        int ns = (int)(next_random(&x) % 60);
        int nt = ns + (int)(next_random(&x) % 11) - 5;
        if (nt < 0) nt = 0;
        if (i == 100) ns = 700;
        if (i == 2500) nt = 600;
        for (int k = 0; k < ns; k++) src[k] = 4 + (i + k) % 900;
        for (int k = 0; k < nt; k++) tgt[k] = 4 + (3 * i + k) % 900;
        tokcache_writer_add(&w, src, ns, tgt, nt);
    }
    tokcache_writer_commit(&w);
}

/* Checks one batch's shape, budget and row contents against the cache; marks its pairs in seen. */
static void check_batch(const TokCache *c, const Batch *b, int *seen, long budget) {
    int S = 0, T = 0;
    long ntgt = 0;
    for (int i = 0; i < b->B; i++) {
        long pair = b->index[i];
        if (pair < 0 || pair >= c->npairs) {
            EXPECT(0, "index %ld out of range", pair);
            return;
        }
        seen[pair]++;
        int ns = tokcache_src_len(c, pair), nt = tokcache_tgt_len(c, pair);
        S = ns + 1 > S ? ns + 1 : S;
        T = nt + 1 > T ? nt + 1 : T;
        ntgt += nt + 1;
        EXPECT(b->src_len[i] == ns + 1 && b->tgt_len[i] == nt + 1, "pair %ld lengths %d %d", pair,
               b->src_len[i], b->tgt_len[i]);
        const int32_t *src = b->src + (size_t)i * b->S, *in = b->tgt_in + (size_t)i * b->T,
                      *out = b->tgt_out + (size_t)i * b->T;
        int bad = 0;
        for (int t = 0; t < b->S; t++)
            bad += src[t] != (t < ns    ? tokcache_src(c, pair)[t]
                              : t == ns ? SPM_EOS_ID
                                        : SPM_PAD_ID);
        for (int t = 0; t < b->T; t++) {
            bad += in[t] != (t == 0    ? SPM_BOS_ID
                             : t <= nt ? tokcache_tgt(c, pair)[t - 1]
                                       : SPM_PAD_ID);
            bad += out[t] != (t < nt    ? tokcache_tgt(c, pair)[t]
                              : t == nt ? SPM_EOS_ID
                                        : SPM_PAD_ID);
        }
        EXPECT(bad == 0, "pair %ld: %d wrong ids in its rows", pair, bad);
    }
    EXPECT(b->S == S && b->T == T, "batch S,T = %d,%d, want %d,%d", b->S, b->T, S, T);
    EXPECT(b->ntgt == ntgt, "ntgt %ld, want %ld", b->ntgt, ntgt);
    long width = S > T ? S : T;
    EXPECT(b->B == 1 || b->B * width <= budget, "batch of %d x %ld exceeds the budget %ld", b->B,
           width, budget);
}

/* Runs one epoch; returns the number of batches, fills order (pair indices in batch order). */
static long run_epoch(Batcher *b, const TokCache *c, long *order) {
    int *seen = calloc((size_t)c->npairs, sizeof *seen);
    long batches = 0, n = 0, real = 0, padded = 0;
    const Batch *batch;
    while ((batch = batcher_next(b))) {
        check_batch(c, batch, seen, b->opt.batch_tokens);
        for (int i = 0; i < batch->B; i++) order[n++] = batch->index[i];
        for (int i = 0; i < batch->B; i++)
            real += batch->src_len[i] > batch->tgt_len[i] ? batch->src_len[i] : batch->tgt_len[i];
        padded += (long)batch->B * (batch->S > batch->T ? batch->S : batch->T);
        batches++;
    }
    long missing = 0, repeated = 0;
    for (long i = 0; i < c->npairs; i++) {
        missing += seen[i] == 0;
        repeated += seen[i] > 1;
    }
    EXPECT(missing == 0 && repeated == 0 && n == c->npairs,
           "epoch: %ld pairs missing, %ld repeated, %ld produced", missing, repeated, n);
    EXPECT((double)real / (double)padded > 0.8,
           "length-sorted batches should be mostly real tokens: %ld of %ld", real, padded);
    free(seen);
    return batches;
}

static bool same_order(const long *a, const long *b, long n) {
    return !memcmp(a, b, sizeof *a * (size_t)n);
}

static void test_training_mode(const TokCache *c) {
    BatcherOptions opt = {.batch_tokens = BUDGET, .sort_pool = 600, .seed = 7, .shuffle = true};
    Batcher a, b;
    batcher_init(&a, c, &opt);
    batcher_init(&b, c, &opt);
    long n = c->npairs;
    long *a0 = malloc(sizeof(long) * (size_t)n), *a1 = malloc(sizeof(long) * (size_t)n);
    long *b0 = malloc(sizeof(long) * (size_t)n), *b1 = malloc(sizeof(long) * (size_t)n);
    long na0 = run_epoch(&a, c, a0), na1 = run_epoch(&a, c, a1);
    run_epoch(&b, c, b0);
    run_epoch(&b, c, b1);
    EXPECT(same_order(a0, b0, n) && same_order(a1, b1, n), "same seed, different batches");
    EXPECT(!same_order(a0, a1, n), "epochs 0 and 1 produced the same order");
    EXPECT(na0 > NPAIRS / 40 && na1 > NPAIRS / 40, "too few batches: %ld, %ld", na0, na1);
    EXPECT(a.cursor.epoch == 2 && a.cursor.batch == 0, "cursor after two epochs: (%ld, %ld)",
           a.cursor.epoch, a.cursor.batch);
    BatcherOptions other = opt;
    other.seed = 8;
    Batcher d;
    batcher_init(&d, c, &other);
    long *d0 = malloc(sizeof(long) * (size_t)n);
    run_epoch(&d, c, d0);
    EXPECT(!same_order(a0, d0, n), "seeds 7 and 8 produced the same order");

    // The batch order is shuffled: widths do not rise pool by pool as they were cut.
    batcher_seek(&d, (BatchCursor){3, 0});
    const Batch *batch;
    long descents = 0, batches = 0, last = 0;
    while ((batch = batcher_next(&d))) {
        long width = batch->S > batch->T ? batch->S : batch->T;
        descents += width < last;
        last = width;
        batches++;
    }
    EXPECT(descents > batches / 4, "only %ld of %ld batches are narrower than the previous one",
           descents, batches);

    // Resume: a continues 37 batches into epoch 2 and saves its cursor; a fresh batcher seeks
    // to it; both must then produce the same 300 batches, across the end of epoch 2.
    for (int i = 0; i < 37; i++) batcher_next(&a);
    BatchCursor saved = batcher_cursor(&a);
    Batcher r;
    batcher_init(&r, c, &opt);
    batcher_seek(&r, saved);
    long mismatches = 0, ends = 0;
    for (int i = 0; i < 300; i++) {
        const Batch *x = batcher_next(&a), *y = batcher_next(&r);
        if (!x || !y) {
            mismatches += (x == NULL) != (y == NULL);
            ends += x == NULL;
            continue;
        }
        mismatches += x->B != y->B || memcmp(x->index, y->index, sizeof(long) * (size_t)x->B) ||
                      memcmp(x->src, y->src, sizeof(int32_t) * (size_t)x->B * (size_t)x->S);
    }
    EXPECT(mismatches == 0, "resumed batcher differs in %ld of 300 batches", mismatches);
    EXPECT(ends == 1, "the 300 batches should cross one epoch end (crossed %ld)", ends);

    // The long pairs (100: 700 source ids, 2500: 600 target ids) each get a batch of their own.
    int alone = 0;
    batcher_seek(&r, (BatchCursor){5, 0});
    const int32_t *buffer = r.batch.src;
    while ((batch = batcher_next(&r))) {
        for (int i = 0; i < batch->B; i++)
            if (batch->index[i] == 100 || batch->index[i] == 2500) alone += batch->B == 1;
        EXPECT(batch->src == buffer, "batch buffers must be reused, not reallocated");
    }
    EXPECT(alone == 2, "%d of the 2 over-budget pairs were alone in a batch", alone);
    batcher_free(&a);
    batcher_free(&b);
    batcher_free(&d);
    batcher_free(&r);
    free(d0);
    free(a0);
    free(a1);
    free(b0);
    free(b1);
}

static void test_eval_mode(const TokCache *c) {
    BatcherOptions opt = {.batch_tokens = BUDGET, .shuffle = false};
    Batcher e;
    batcher_init(&e, c, &opt);
    long n = c->npairs;
    long *p0 = malloc(sizeof(long) * (size_t)n), *p1 = malloc(sizeof(long) * (size_t)n);
    run_epoch(&e, c, p0);
    run_epoch(&e, c, p1);
    EXPECT(same_order(p0, p1, n), "evaluation passes must be identical");
    // Batches come in non-decreasing order of their width.
    batcher_seek(&e, (BatchCursor){0, 0});
    const Batch *b;
    int last = 0, unsorted = 0;
    while ((b = batcher_next(&e))) {
        int width = b->S > b->T ? b->S : b->T;
        unsorted += width < last;
        last = width;
    }
    EXPECT(unsorted == 0, "%d evaluation batches are narrower than the one before", unsorted);
    batcher_free(&e);
    free(p0);
    free(p1);
}

static void seek_past_end(void *arg) {
    Batcher b;
    BatcherOptions opt = {.batch_tokens = BUDGET, .sort_pool = 600, .seed = 7, .shuffle = true};
    batcher_init(&b, arg, &opt);
    batcher_seek(&b, (BatchCursor){0, 1000000});
}

int main(void) {
    char *dir = test_tempdir();
    const char *path = test_path(dir, "b.tok");
    write_cache(path);
    TokCache c;
    EXPECT(tokcache_open(&c, path, VOCAB, 42) == 0, "open: %s", status_message());
    char err[4096];
    int status = test_run_child(seek_past_end, &c, err, sizeof err);
    EXPECT(status == 1 && strstr(err, "batch cursor (epoch 0, batch 1000000) is past"),
           "seeking past the end must be fatal: status %d, %s", status, err);
    test_training_mode(&c);
    test_eval_mode(&c);
    tokcache_close(&c);
    test_remove_tree(dir);
    free(dir);
    return test_finish();
}
