/* test_tokcache_resident.c: training reads a memory-mapped token cache without making it
 * resident. A 122 MB cache (800k pairs of 20 + 20 ids) is opened and validated, a training-mode
 * batcher is built over it and 2 batches (about 400 pairs) are drawn, checked id by id. The
 * resident part of the ids in the cache's mapping (the Rss in /proc/self/smaps of its first
 * region, which the random-access advice makes one of its own) is nothing after opening, and
 * nothing after the batches, which release the pages of their pairs once copied; reading the
 * pairs directly leaves their pages (even where the kernel maps 16 pages around each fault), a
 * fraction of the file, until tokcache_release. Sizes, not timings: the bounds hold anywhere. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batcher.h"
#include "status.h"
#include "test_files.h"
#include "test_util.h"
#include "tokcache.h"

enum { NPAIRS = 800000, LEN = 20, VOCAB = 32000 };
static const uint64_t FINGERPRINT = 0x5EEDull;

static int32_t id_of(long pair, int side, int k) {
    return (int32_t)(((uint64_t)pair * 131 + (uint64_t)side * 17 + (uint64_t)k) % VOCAB);
}

/* The resident MB of this process's mapping of path (the Rss of its line in /proc/self/smaps). */
static double mapped_resident_mb(const char *path) {
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[4096];
    double kb = -1;
    bool ours = false;
    size_t n = strlen(path);
    while (f && fgets(line, sizeof line, f)) {
        size_t len = strcspn(line, "\n");
        if (strchr(line, '-') && len > n && strchr(line, '/'))  // a mapping's header line
            ours = !strncmp(line + len - n, path, n);
        else if (ours && sscanf(line, "Rss: %lf kB", &kb) == 1)
            break;
    }
    if (f) fclose(f);
    return kb / 1024;
}

int main(void) {
    char *dir = test_tempdir();
    const char *path = test_path(dir, "train.tok");
    TokCacheWriter w;
    tokcache_writer_open(&w, path, VOCAB, FINGERPRINT);
    int32_t src[LEN], tgt[LEN];  // (LEN) each
    for (long i = 0; i < NPAIRS; i++) {
        for (int k = 0; k < LEN; k++) src[k] = id_of(i, 0, k), tgt[k] = id_of(i, 1, k);
        tokcache_writer_add(&w, src, LEN, tgt, LEN - (int)(i % 7));
    }
    tokcache_writer_commit(&w);
    struct stat st;
    stat(path, &st);
    double cache_mb = (double)st.st_size / (1 << 20), tables_mb = 12.0 * NPAIRS / (1 << 20);

    TokCache cache;
    EXPECT(tokcache_open(&cache, path, VOCAB, FINGERPRINT) == 0, "%s", status_message());
    double opened = mapped_resident_mb(path);
    EXPECT(opened >= 0 && opened < tables_mb + 1,
           "opening a %.0f MB cache made %.1f MB of it resident (tables: %.1f MB)", cache_mb,
           opened, tables_mb);

    Batcher b;
    batcher_init(&b, &cache, &(BatcherOptions){.batch_tokens = 4096, .sort_pool = 20000,
                                               .seed = 7, .shuffle = true});
    long pairs = 0, wrong = 0;
    for (int n = 0; n < 2; n++) {
        const Batch *batch = batcher_next(&b);
        for (int i = 0; i < batch->B; i++, pairs++) {
            long pair = batch->index[i];
            for (int k = 0; k < LEN; k++) wrong += batch->src[(size_t)i * batch->S + k] != id_of(pair, 0, k);
            for (int k = 0; k < LEN - (int)(pair % 7); k++)
                wrong += batch->tgt_out[(size_t)i * batch->T + k] != id_of(pair, 1, k);
        }
    }
    EXPECT(wrong == 0, "%ld ids of %ld pairs read back wrong", wrong, pairs);
    double batched = mapped_resident_mb(path);
    EXPECT(batched < tables_mb + 1, "%ld pairs batched from a %.0f MB cache: %.1f MB of it resident",
           pairs, cache_mb, batched);
    // Pairs read directly, the way validation reads sources: their pages stay until released.
    long sum = 0;
    for (long i = 0; i < pairs; i++) sum += tokcache_src(&cache, (i * 7919) % NPAIRS)[0];
    double read = mapped_resident_mb(path);
    EXPECT(read > batched + 1 && read < tables_mb + pairs * 64.0 / 1024 && read < cache_mb / 3,
           "%ld pairs read from a %.0f MB cache (id sum %ld): %.1f MB of it resident", pairs,
           cache_mb, sum, read);
    tokcache_release(&cache);
    double released = mapped_resident_mb(path);
    EXPECT(released < tables_mb + 1, "after tokcache_release %.1f MB of the cache is resident",
           released);
    printf("cache %.0f MB: %.1f MB of it resident after opening, %.1f MB after batching %ld pairs, "
           "%.1f MB after reading them, %.1f MB after releasing\n",
           cache_mb, opened, batched, pairs, read, released);
    batcher_free(&b);
    tokcache_close(&cache);
    test_remove_tree(dir);
    free(dir);
    return test_finish();
}
