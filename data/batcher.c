/* batcher.c: epoch plans (shuffle, pool, sort, cut, shuffle batches) and batch assembly; see
 * batcher.h. */
#include "batcher.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "check.h"
#include "rng.h"
#include "spm.h"

enum { STREAM_SENTENCES = 1, STREAM_BATCHES = 2 };
enum { LEN_BITS = 21 };  // each of max(S,T), T, S fits in 21 bits of the sort key

typedef struct BatchKey {
    uint64_t key;  // max(S, T), then T, then S
    uint32_t pair;
} BatchKey;

static int pair_S(const TokCache *c, long i) { return tokcache_src_len(c, i) + 1; }
static int pair_T(const TokCache *c, long i) { return tokcache_tgt_len(c, i) + 1; }
static int max_int(int a, int b) { return a > b ? a : b; }

static int compare_keys(const void *pa, const void *pb) {
    const BatchKey *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->pair < b->pair ? -1 : a->pair > b->pair;  // ties: by index, so the sort is stable
}

void batcher_init(Batcher *b, const TokCache *cache, const BatcherOptions *opt) {
    CHECK(opt->batch_tokens > 0, "batch_tokens must be positive (got %ld)", opt->batch_tokens);
    CHECK(!opt->shuffle || opt->sort_pool > 0, "sort_pool must be positive (got %ld)",
          opt->sort_pool);
    CHECK(cache->npairs < (1l << 32) - 1,
          "token cache '%s' has %ld pairs; the batcher handles "
          "fewer than 2^32",
          cache->path, cache->npairs);
    *b = (Batcher){.cache = cache, .opt = *opt, .plan_epoch = -1};
    long n = cache->npairs;
    int max_S = 1, max_T = 1;
    for (long i = 0; i < n; i++) {
        max_S = max_int(max_S, pair_S(cache, i));
        max_T = max_int(max_T, pair_T(cache, i));
    }
    CHECK(max_S < (1 << LEN_BITS) && max_T < (1 << LEN_BITS),
          "token cache '%s' has a sentence of %d tokens; the batcher handles fewer than %d",
          cache->path, max_int(max_S, max_T), 1 << LEN_BITS);
    b->order = xmalloc(sizeof *b->order * (size_t)(n + 1));
    b->batch_first = xmalloc(sizeof *b->batch_first * (size_t)(n + 1));
    b->batch_order = xmalloc(sizeof *b->batch_order * (size_t)(n + 1));
    long pool = opt->shuffle && opt->sort_pool < n ? opt->sort_pool : n;
    b->keys = xmalloc(sizeof *b->keys * (size_t)(pool + 1));

    // The largest batch: B * max(S, T) <= batch_tokens, or one pair longer than that.
    long max_tokens = opt->batch_tokens;
    if (max_S > max_tokens) max_tokens = max_S;
    if (max_T > max_tokens) max_tokens = max_T;
    long max_B = n < opt->batch_tokens ? (n > 0 ? n : 1) : opt->batch_tokens;
    Batch *batch = &b->batch;
    batch->src = aligned_alloc_zeroed(sizeof(int32_t) * (size_t)max_tokens);
    batch->tgt_in = aligned_alloc_zeroed(sizeof(int32_t) * (size_t)max_tokens);
    batch->tgt_out = aligned_alloc_zeroed(sizeof(int32_t) * (size_t)max_tokens);
    batch->src_len = aligned_alloc_zeroed(sizeof(int) * (size_t)max_B);
    batch->tgt_len = aligned_alloc_zeroed(sizeof(int) * (size_t)max_B);
    batch->index = aligned_alloc_zeroed(sizeof(long) * (size_t)max_B);
}

void batcher_free(Batcher *b) {
    free(b->order);
    free(b->batch_first);
    free(b->batch_order);
    free(b->keys);
    aligned_free(b->batch.src);
    aligned_free(b->batch.tgt_in);
    aligned_free(b->batch.tgt_out);
    aligned_free(b->batch.src_len);
    aligned_free(b->batch.tgt_len);
    aligned_free(b->batch.index);
    *b = (Batcher){0};
}

/* Sorts order[first .. first + m) by length and cuts it into batches appended to the plan. */
static void sort_and_cut_pool(Batcher *b, long first, long m) {
    const TokCache *c = b->cache;
    BatchKey *keys = b->keys;
    for (long j = 0; j < m; j++) {
        uint32_t pair = b->order[first + j];
        uint64_t S = (uint64_t)pair_S(c, pair), T = (uint64_t)pair_T(c, pair);
        uint64_t longest = S > T ? S : T;
        keys[j] = (BatchKey){(longest << (2 * LEN_BITS)) | (T << LEN_BITS) | S, pair};
    }
    qsort(keys, (size_t)m, sizeof *keys, compare_keys);
    long count = 0, widest = 0;  // of the batch being filled
    for (long j = 0; j < m; j++) {
        long longest = (long)(keys[j].key >> (2 * LEN_BITS));
        long wider = longest > widest ? longest : widest;
        if (count == 0 || (count + 1) * wider > b->opt.batch_tokens) {
            b->batch_first[b->nbatches++] = (uint32_t)(first + j);
            count = 0;
            wider = longest;
        }
        b->order[first + j] = keys[j].pair;
        count++;
        widest = wider;
    }
}

/* Builds the plan of epoch: a pure function of (seed, epoch) in training mode. */
static void plan_epoch(Batcher *b, long epoch) {
    long n = b->cache->npairs;
    for (long i = 0; i < n; i++) b->order[i] = (uint32_t)i;
    uint64_t seed = b->opt.seed;
    if (b->opt.shuffle) {
        Rng rng = {rng_key(seed, STREAM_SENTENCES, (uint64_t)epoch, 0), 0};
        rng_shuffle_u32(&rng, b->order, (uint64_t)n);
    }
    long pool = b->opt.shuffle ? b->opt.sort_pool : n;
    b->nbatches = 0;
    for (long first = 0; first < n; first += pool)
        sort_and_cut_pool(b, first, n - first < pool ? n - first : pool);
    b->batch_first[b->nbatches] = (uint32_t)n;
    for (long k = 0; k < b->nbatches; k++) b->batch_order[k] = (uint32_t)k;
    if (b->opt.shuffle) {
        Rng rng = {rng_key(seed, STREAM_BATCHES, (uint64_t)epoch, 0), 0};
        rng_shuffle_u32(&rng, b->batch_order, (uint64_t)b->nbatches);
    }
    b->plan_epoch = epoch;
}

long batcher_epoch_batches(Batcher *b) {
    if (b->plan_epoch != b->cursor.epoch) plan_epoch(b, b->cursor.epoch);
    return b->nbatches;
}

/* Fills b->batch with the pairs of planned batch k. */
static void assemble(Batcher *b, long k) {
    const TokCache *c = b->cache;
    Batch *batch = &b->batch;
    const uint32_t *pairs = b->order + b->batch_first[k];
    int B = (int)(b->batch_first[k + 1] - b->batch_first[k]), S = 0, T = 0;
    for (int i = 0; i < B; i++) {
        S = max_int(S, pair_S(c, pairs[i]));
        T = max_int(T, pair_T(c, pairs[i]));
    }
    batch->B = B;
    batch->S = S;
    batch->T = T;
    batch->ntgt = 0;
    for (int i = 0; i < B; i++) {
        long pair = pairs[i];
        int ns = tokcache_src_len(c, pair), nt = tokcache_tgt_len(c, pair);
        int32_t *src = batch->src + (size_t)i * S;          // (S)
        int32_t *tgt_in = batch->tgt_in + (size_t)i * T;    // (T)
        int32_t *tgt_out = batch->tgt_out + (size_t)i * T;  // (T)
        memcpy(src, tokcache_src(c, pair), sizeof *src * (size_t)ns);
        src[ns] = SPM_EOS_ID;
        for (int t = ns + 1; t < S; t++) src[t] = SPM_PAD_ID;
        tgt_in[0] = SPM_BOS_ID;
        memcpy(tgt_in + 1, tokcache_tgt(c, pair), sizeof *tgt_in * (size_t)nt);
        memcpy(tgt_out, tokcache_tgt(c, pair), sizeof *tgt_out * (size_t)nt);
        tgt_out[nt] = SPM_EOS_ID;
        for (int t = nt + 1; t < T; t++) tgt_in[t] = tgt_out[t] = SPM_PAD_ID;
        batch->src_len[i] = ns + 1;
        batch->tgt_len[i] = nt + 1;
        batch->index[i] = pair;
        batch->ntgt += nt + 1;
    }
}

const Batch *batcher_next(Batcher *b) {
    if (b->cursor.batch >= batcher_epoch_batches(b)) {
        b->cursor = (BatchCursor){b->cursor.epoch + 1, 0};
        return NULL;
    }
    assemble(b, b->batch_order[b->cursor.batch]);
    tokcache_release(b->cache);  // the batch is a copy: its pairs' pages need not stay resident
    b->cursor.batch++;
    return &b->batch;
}

void batcher_seek(Batcher *b, BatchCursor cursor) {
    CHECK(cursor.epoch >= 0 && cursor.batch >= 0, "invalid batch cursor (epoch %ld, batch %ld)",
          cursor.epoch, cursor.batch);
    b->cursor = cursor;
    long nbatches = batcher_epoch_batches(b);
    CHECK(cursor.batch <= nbatches,
          "batch cursor (epoch %ld, batch %ld) is past the %ld batches of that epoch; was the "
          "checkpoint made with other data or batch options?",
          cursor.epoch, cursor.batch, nbatches);
}
