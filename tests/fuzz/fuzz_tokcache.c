/* fuzz_tokcache.c: the token cache loader (data/tokcache.h) on the input as a file, opened for a
 * 64-piece vocabulary whose model fingerprint is FINGERPRINT (the seeds carry both). The
 * harness rewrites the trailing CRC-32 to match the bytes before it, so that mutations reach
 * the checks behind the checksum (the refusal of a wrong CRC is tested in test_tokcache). An
 * opened cache must hold what its readers rely on: every pair inside the ids, no side longer
 * than the header's maximum, every id in the vocabulary. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_util.h"
#include "tokcache.h"

enum { VOCAB = 64 };
#define FINGERPRINT 0x6E6D742D66757A7Aull  // "nmt-fuzz"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *file = xmalloc(size);
    if (size) memcpy(file, data, size);
    if (size >= sizeof(TokCacheHeader) + 4) {
        uint32_t crc = (uint32_t)crc32_z(0L, file, size - 4);
        memcpy(file + size - 4, &crc, 4);
    }
    char *path = fuzz_write(file, size, ".tok");
    free(file);
    TokCache c;
    if (tokcache_open(&c, path, VOCAB, FINGERPRINT) == 0) {
        long total = c.src_tokens + c.tgt_tokens;
        for (long i = 0; i < c.npairs; i++) {
            int src = tokcache_src_len(&c, i), tgt = tokcache_tgt_len(&c, i);
            FUZZ_ASSERT(src >= 0 && tgt >= 0 && src <= c.max_src_len && tgt <= c.max_tgt_len,
                        "pair %ld: %d + %d ids, the header's longest are %d and %d", i, src, tgt,
                        c.max_src_len, c.max_tgt_len);
            const int32_t *ids = tokcache_src(&c, i);
            FUZZ_ASSERT(ids >= c.ids && ids + src + tgt <= c.ids + total,
                        "pair %ld lies outside the ids", i);
            for (int k = 0; k < src + tgt; k++)
                FUZZ_ASSERT(ids[k] >= 0 && ids[k] < VOCAB, "pair %ld: id %d", i, ids[k]);
        }
        tokcache_close(&c);
    }
    fuzz_remove(path);
    return 0;
}
