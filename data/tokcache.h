/* tokcache.h: the binary token cache of one split, written once by `prepare` and memory-mapped
 * by training and evaluation.
 *
 * File layout (native little-endian, every section 8-byte aligned):
 *   TokCacheHeader                          64 bytes: magic, version, vocabulary size, the
 *                                           fingerprint of the SentencePiece model, counts
 *   int32_t  ids[src_tokens + tgt_tokens]   pair i: its source ids, then its target ids (no
 *                                           BOS/EOS), starting at offsets[i]; zero-padded to 8
 *   uint64_t offsets[npairs + 1]            offsets[npairs] == src_tokens + tgt_tokens
 *   uint32_t src_len[npairs]                source ids of pair i; the target has the rest
 *                                           (zero-padded to 8 bytes)
 *   uint32_t crc32                          zlib CRC-32 of every byte before it
 * The writer streams ids to a temp file (only offsets and lengths stay in memory) and renames it
 * into place after fsync. tokcache_open refuses a file whose magic, version, size, CRC,
 * vocabulary size or model fingerprint does not match, whose offsets are inconsistent, whose
 * longest sides are not the header's max_src_len and max_tgt_len, or that holds an id outside the
 * vocabulary, with a message naming the file. It reads the ids for these checks through read(),
 * not the mapping, and advises random access on the ids (no read-ahead), so an open cache is not
 * resident: a reader maps the offset tables (12 bytes a pair) and the pages around the pairs it
 * has used (Linux maps up to 64 KB around a fault from the page cache), clean file pages that the
 * kernel can drop again under memory pressure, and that tokcache_release drops at once. */
#ifndef NMT_DATA_TOKCACHE_H
#define NMT_DATA_TOKCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "atomic.h"

#define TOKCACHE_MAGIC "NMTTOKC"  // 7 chars + NUL
enum { TOKCACHE_VERSION = 1 };

typedef struct TokCacheHeader {
    char magic[8];
    uint32_t version;
    uint32_t vocab_size;
    uint64_t spm_fingerprint;  // tokcache_fingerprint() of the .model bytes
    uint64_t npairs;
    uint64_t src_tokens, tgt_tokens;
    uint32_t max_src_len, max_tgt_len;  // longest sides, in ids
    uint64_t file_bytes;
} TokCacheHeader;

/* The fingerprint of a SentencePiece model: a 64-bit hash of its serialized bytes. */
uint64_t tokcache_fingerprint(const void *model_bytes, size_t len);

typedef struct TokCache {
    char *path;
    void *map;  // the whole file, read-only
    size_t map_bytes;
    long npairs;
    long src_tokens, tgt_tokens;
    int max_src_len, max_tgt_len;
    int vocab_size;
    uint64_t spm_fingerprint;
    const int32_t *ids;       // (src_tokens + tgt_tokens)
    const uint64_t *offsets;  // (npairs + 1)
    const uint32_t *src_len;  // (npairs)
} TokCache;

/* 0, or -1 with the reason in status_message(). */
int tokcache_open(TokCache *c, const char *path, int vocab_size, uint64_t spm_fingerprint);
void tokcache_close(TokCache *c);
/* Takes the pages of the ids out of this process's resident set: they stay in the page cache,
 * and the next read maps them again without I/O. The batcher calls it after copying each batch,
 * so a training run keeps the offset tables resident, not every pair it has used. */
void tokcache_release(const TokCache *c);

static inline int tokcache_src_len(const TokCache *c, long i) { return (int)c->src_len[i]; }
static inline int tokcache_tgt_len(const TokCache *c, long i) {
    return (int)(c->offsets[i + 1] - c->offsets[i] - c->src_len[i]);
}
static inline const int32_t *tokcache_src(const TokCache *c, long i) {
    return c->ids + c->offsets[i];
}
static inline const int32_t *tokcache_tgt(const TokCache *c, long i) {
    return c->ids + c->offsets[i] + c->src_len[i];
}

typedef struct TokCacheWriter {
    AtomicFile file;
    TokCacheHeader header;
    uint32_t body_crc;  // CRC-32 of the bytes after the header written so far
    uint64_t *offsets;  // (cap + 1)
    uint32_t *src_len;  // (cap)
    long cap;
} TokCacheWriter;

void tokcache_writer_open(TokCacheWriter *w, const char *path, int vocab_size,
                          uint64_t spm_fingerprint);
/* Appends a pair; every id must be in [0, vocab_size). */
void tokcache_writer_add(TokCacheWriter *w, const int32_t *src, int src_len, const int32_t *tgt,
                         int tgt_len);
void tokcache_writer_commit(TokCacheWriter *w);  // writes the tables and renames into place

#endif
