/* tokcache.c: writing (streamed, atomic) and mapping (validated) token caches; see tokcache.h. */
#include "tokcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "hash.h"
#include "rss.h"
#include "status.h"

_Static_assert(sizeof(TokCacheHeader) == 64, "the header is 64 bytes on disk");

uint64_t tokcache_fingerprint(const void *model_bytes, size_t len) {
    return hash64(model_bytes, len, 0x13198A2E03707344ull);
}

static uint64_t align8(uint64_t bytes) { return (bytes + 7) & ~(uint64_t)7; }

/* Byte offsets of the sections after the header, from the counts in h. */
typedef struct Sections {
    uint64_t ids, offsets, src_len, crc, end;
} Sections;

static Sections sections_of(const TokCacheHeader *h) {
    Sections s;
    s.ids = sizeof(TokCacheHeader);
    s.offsets = s.ids + align8(4 * (h->src_tokens + h->tgt_tokens));
    s.src_len = s.offsets + 8 * (h->npairs + 1);
    s.crc = s.src_len + align8(4 * h->npairs);
    s.end = s.crc + 4;
    return s;
}

static uint32_t crc_update(uint32_t crc, const void *data, size_t bytes) {
    return (uint32_t)crc32_z(crc, data, bytes);
}

/* ---- writer ---- */

/* Writes bytes and continues *crc over them. */
static void write_crc(AtomicFile *f, uint32_t *crc, const void *data, size_t bytes) {
    atomic_write(f, data, bytes);
    *crc = crc_update(*crc, data, bytes);
}

/* Zero bytes from `written` up to the next multiple of 8. */
static void write_pad8(AtomicFile *f, uint32_t *crc, uint64_t written) {
    static const char zeros[8];
    write_crc(f, crc, zeros, (size_t)(align8(written) - written));
}

void tokcache_writer_open(TokCacheWriter *w, const char *path, int vocab_size,
                          uint64_t spm_fingerprint) {
    *w = (TokCacheWriter){0};
    memcpy(w->header.magic, TOKCACHE_MAGIC, sizeof w->header.magic);
    w->header.version = TOKCACHE_VERSION;
    w->header.vocab_size = (uint32_t)vocab_size;
    w->header.spm_fingerprint = spm_fingerprint;
    w->cap = 1024;
    w->offsets = xmalloc(sizeof *w->offsets * (size_t)(w->cap + 1));
    w->src_len = xmalloc(sizeof *w->src_len * (size_t)w->cap);
    w->offsets[0] = 0;
    w->body_crc = crc_update(0, NULL, 0);
    atomic_open(&w->file, path);
    atomic_write(&w->file, &w->header, sizeof w->header);  // placeholder, rewritten at commit
}

static void write_ids(TokCacheWriter *w, const int32_t *ids, int n) {
    for (int i = 0; i < n; i++)
        CHECK(ids[i] >= 0 && (uint32_t)ids[i] < w->header.vocab_size,
              "token cache '%s': id %d of pair %llu is outside the vocabulary [0, %u)",
              w->file.path, ids[i], (unsigned long long)w->header.npairs, w->header.vocab_size);
    write_crc(&w->file, &w->body_crc, ids, sizeof *ids * (size_t)n);
}

void tokcache_writer_add(TokCacheWriter *w, const int32_t *src, int src_len, const int32_t *tgt,
                         int tgt_len) {
    TokCacheHeader *h = &w->header;
    if ((long)h->npairs == w->cap) {
        w->cap *= 2;
        w->offsets = xrealloc(w->offsets, sizeof *w->offsets * (size_t)(w->cap + 1));
        w->src_len = xrealloc(w->src_len, sizeof *w->src_len * (size_t)w->cap);
    }
    write_ids(w, src, src_len);
    write_ids(w, tgt, tgt_len);
    w->src_len[h->npairs] = (uint32_t)src_len;
    w->offsets[h->npairs + 1] = w->offsets[h->npairs] + (uint64_t)src_len + (uint64_t)tgt_len;
    h->npairs++;
    h->src_tokens += (uint64_t)src_len;
    h->tgt_tokens += (uint64_t)tgt_len;
    if ((uint32_t)src_len > h->max_src_len) h->max_src_len = (uint32_t)src_len;
    if ((uint32_t)tgt_len > h->max_tgt_len) h->max_tgt_len = (uint32_t)tgt_len;
}

void tokcache_writer_commit(TokCacheWriter *w) {
    TokCacheHeader *h = &w->header;
    Sections s = sections_of(h);
    h->file_bytes = s.end;
    write_pad8(&w->file, &w->body_crc, 4 * (h->src_tokens + h->tgt_tokens));
    write_crc(&w->file, &w->body_crc, w->offsets, 8 * (size_t)(h->npairs + 1));
    write_crc(&w->file, &w->body_crc, w->src_len, 4 * (size_t)h->npairs);
    write_pad8(&w->file, &w->body_crc, 4 * h->npairs);
    uint32_t header_crc = crc_update(crc_update(0, NULL, 0), h, sizeof *h);
    uint32_t crc = (uint32_t)crc32_combine(header_crc, w->body_crc, (z_off_t)(s.crc - s.ids));
    atomic_write(&w->file, &crc, sizeof crc);
    if (fseek(w->file.f, 0, SEEK_SET) != 0)
        FATAL("cannot seek in '%s': %s", w->file.tmp_path, strerror(errno));
    atomic_write(&w->file, h, sizeof *h);
    atomic_commit(&w->file);
    free(w->offsets);
    free(w->src_len);
    *w = (TokCacheWriter){0};
}

/* ---- reader ---- */

/* The CRC-32 of everything before it and the range of every id, read through fd in blocks rather
 * than through the mapping, so that opening a cache does not make it resident: training then
 * keeps only the pages its batches touch. 0 or -1 (status_fail). */
static int check_contents(const TokCache *c, int fd, const TokCacheHeader *h, const Sections *s) {
    enum { BLOCK = 1 << 20 };
    int32_t *block = xmalloc(BLOCK);  // (BLOCK / 4) file bytes; ids start 4-byte aligned
    uint32_t crc = crc_update(0, NULL, 0);
    uint64_t ids_end = s->ids + 4 * (h->src_tokens + h->tgt_tokens);
    uint64_t bad_at = 0;  // file offset of the first id outside the vocabulary (0: none)
    int32_t bad_id = 0;
    for (uint64_t at = 0; at < s->crc;) {
        size_t want = (size_t)(s->crc - at < BLOCK ? s->crc - at : BLOCK);
        ssize_t got = pread(fd, block, want, (off_t)at);
        if (got != (ssize_t)want) {
            free(block);
            return status_fail("cannot read '%s': %s", c->path,
                               got < 0 ? strerror(errno) : "it shrank while being read");
        }
        crc = crc_update(crc, block, want);
        uint64_t hi = at + want < ids_end ? at + want : ids_end;  // the ids in this block
        for (uint64_t b = at > s->ids ? at : s->ids; !bad_at && b + 4 <= hi; b += 4) {
            int32_t id = block[(b - at) / 4];
            if (id < 0 || (uint32_t)id >= h->vocab_size) bad_at = b, bad_id = id;
        }
        at += want;
    }
    free(block);
    uint32_t stored;
    memcpy(&stored, (const char *)c->map + s->crc, sizeof stored);
    if (stored != crc)  // damage first: a flipped bit is corruption, not a bad id
        return status_fail("'%s' is corrupt: CRC-32 %08x of its contents does not match the "
                           "stored %08x",
                           c->path, crc, stored);
    if (bad_at)
        return status_fail("'%s' is corrupt: id %d (token %llu) is outside the vocabulary [0, %u)",
                           c->path, bad_id, (unsigned long long)((bad_at - s->ids) / 4),
                           h->vocab_size);
    return 0;
}

/* Checks the mapped file against its header and the expected model; 0 or -1 (status_fail). */
static int validate(const TokCache *c, int fd, const TokCacheHeader *h, int vocab_size,
                     uint64_t spm_fingerprint) {
    const char *path = c->path;
    uint64_t size = c->map_bytes;
    if (memcmp(h->magic, TOKCACHE_MAGIC, sizeof h->magic) != 0)
        return status_fail("'%s' is not an nmt token cache (wrong magic bytes)", path);
    if (h->version != TOKCACHE_VERSION)
        return status_fail(
            "'%s' is a version %u token cache; this build reads version %d (run "
            "`nmt prepare` again)",
            path, h->version, TOKCACHE_VERSION);
    // Counts bounded by the file size first, so that the section arithmetic cannot overflow.
    bool counts_fit =
        h->npairs <= size / 12 && h->src_tokens <= size / 4 && h->tgt_tokens <= size / 4;
    if (!counts_fit || h->file_bytes != size || sections_of(h).end != size)
        return status_fail(
            "'%s' is truncated or corrupt: it has %llu bytes, its header describes "
            "%llu pairs, %llu + %llu tokens in %llu bytes",
            path, (unsigned long long)size, (unsigned long long)h->npairs,
            (unsigned long long)h->src_tokens, (unsigned long long)h->tgt_tokens,
            (unsigned long long)h->file_bytes);
    Sections s = sections_of(h);
    if (check_contents(c, fd, h, &s) < 0) return -1;
    if (h->vocab_size != (uint32_t)vocab_size)
        return status_fail(
            "'%s' was encoded with a %u-piece vocabulary but the SentencePiece model "
            "has %d pieces (run `nmt prepare` again)",
            path, h->vocab_size, vocab_size);
    if (h->spm_fingerprint != spm_fingerprint)
        return status_fail(
            "'%s' was encoded with a different SentencePiece model (fingerprint "
            "%016llx, the model's is %016llx; run `nmt prepare` again)",
            path, (unsigned long long)h->spm_fingerprint, (unsigned long long)spm_fingerprint);
    const uint64_t *offsets = (const uint64_t *)((const char *)c->map + s.offsets);
    const uint32_t *src_len = (const uint32_t *)((const char *)c->map + s.src_len);
    bool consistent = offsets[0] == 0 && offsets[h->npairs] == h->src_tokens + h->tgt_tokens;
    uint64_t longest_src = 0, longest_tgt = 0;  // what readers size their buffers by
    for (uint64_t i = 0; consistent && i < h->npairs; i++) {
        consistent = offsets[i + 1] >= offsets[i] + src_len[i];
        uint64_t tgt = offsets[i + 1] - offsets[i] - src_len[i];
        longest_src = src_len[i] > longest_src ? src_len[i] : longest_src;
        longest_tgt = tgt > longest_tgt ? tgt : longest_tgt;
    }
    if (!consistent) return status_fail("'%s' is corrupt: its pair offsets are inconsistent", path);
    if (longest_src != h->max_src_len || longest_tgt != h->max_tgt_len || longest_src > INT32_MAX ||
        longest_tgt > INT32_MAX)
        return status_fail("'%s' is corrupt: its longest pair has %llu + %llu ids, the header says "
                           "%u + %u",
                           path, (unsigned long long)longest_src, (unsigned long long)longest_tgt,
                           h->max_src_len, h->max_tgt_len);
    return 0;
}

int tokcache_open(TokCache *c, const char *path, int vocab_size, uint64_t spm_fingerprint) {
    *c = (TokCache){0};
    int fd = open(path, O_RDONLY);
    if (fd < 0) return status_fail("cannot open token cache '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(TokCacheHeader)) {
        close(fd);
        return status_fail("'%s' is not an nmt token cache (%lld bytes, shorter than its header)",
                         path, (long long)st.st_size);
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        close(fd);
        return status_fail("cannot map '%s': %s", path, strerror(errno));
    }
    c->path = xstrdup(path);
    c->map = map;
    c->map_bytes = (size_t)st.st_size;
    const TokCacheHeader *h = map;
    int valid = validate(c, fd, h, vocab_size, spm_fingerprint);
    close(fd);
    if (valid < 0) {
        tokcache_close(c);
        return -1;
    }
    Sections s = sections_of(h);
    c->npairs = (long)h->npairs;
    c->src_tokens = (long)h->src_tokens;
    c->tgt_tokens = (long)h->tgt_tokens;
    c->max_src_len = (int)h->max_src_len;
    c->max_tgt_len = (int)h->max_tgt_len;
    c->vocab_size = (int)h->vocab_size;
    c->spm_fingerprint = h->spm_fingerprint;
    c->ids = (const int32_t *)((const char *)map + s.ids);
    // Training reads pairs in shuffled order: no read-ahead, so a cache on disk is read a page or
    // so per pair used, not 128 KB (advice only; a refusal changes nothing else).
    size_t page = (size_t)sysconf(_SC_PAGESIZE), ids_start = (size_t)s.ids / page * page;
    madvise((char *)map + ids_start, (size_t)s.offsets - ids_start, MADV_RANDOM);
    c->offsets = (const uint64_t *)((const char *)map + s.offsets);
    c->src_len = (const uint32_t *)((const char *)map + s.src_len);
    return 0;
}

void tokcache_release(const TokCache *c) {
    if (c->ids)  // advice: a refusal leaves the pages resident, nothing else
        rss_release((void *)c->ids, (size_t)(c->src_tokens + c->tgt_tokens) * sizeof *c->ids);
}

void tokcache_close(TokCache *c) {
    if (c->map) munmap(c->map, c->map_bytes);
    free(c->path);
    *c = (TokCache){0};
}
