/* checkpoint.c: atomic, checksummed checkpoint files (checkpoint.h). */
#include "checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "atomic.h"
#include "check.h"
#include "export.h"
#include "status.h"

#define CKPT_MAGIC "NMTCKPT1"
/* Header: magic, version, sections, payload bytes, CRC, 4 reserved bytes. Sections: tag, 4
 * reserved bytes, length, data padded to 8 bytes, so every tensor is aligned in a mapped file. */
enum { CKPT_VERSION = 1, HEADER_BYTES = 32, SECTION_HEADER = 16 };
enum { TAG_CONFIG = 1, TAG_SPM = 2, TAG_INDEX = 3, TAG_VALUES = 4, TAG_ADAM_M = 5, TAG_ADAM_V = 6,
       TAG_STATE = 7, TAG_TRAINING = 8 };

/* ---- writing: sections streamed to the temporary file, the CRC computed on the way ---- */

typedef struct Writer {
    AtomicFile file;
    uint32_t crc, sections;
    uint64_t payload;
} Writer;

static void put(Writer *w, const void *data, size_t n) {
    atomic_write(&w->file, data, n);
    for (size_t at = 0; at < n;) {  // zlib's crc32 takes an unsigned int length
        uInt chunk = (uInt)(n - at > (1u << 30) ? (1u << 30) : n - at);
        w->crc = (uint32_t)crc32(w->crc, (const Bytef *)data + at, chunk);
        at += chunk;
    }
    w->payload += n;
}

static uint64_t padded(uint64_t n) { return (n + 7) / 8 * 8; }

static void section_start(Writer *w, uint32_t tag, uint64_t len) {
    uint32_t reserved = 0;
    put(w, &tag, 4);
    put(w, &reserved, 4);
    put(w, &len, 8);
    w->sections++;
}

static void section_end(Writer *w, uint64_t len) {
    static const char zeros[8];
    put(w, zeros, padded(len) - len);
}

static void section(Writer *w, uint32_t tag, const void *data, size_t n) {
    section_start(w, tag, n);
    put(w, data, n);
    section_end(w, n);
}

/* Each tensor's floats, concatenated in table order (alignment padding dropped). */
static void tensors_section(Writer *w, uint32_t tag, const ParamTable *pt, const float *arena) {
    uint64_t len = sizeof(float) * params_count(pt);
    section_start(w, tag, len);
    for (int i = 0; i < pt->count; i++)
        put(w, arena + pt->info[i].offset, sizeof(float) * pt->info[i].numel);
    section_end(w, len);
}

static void state_section(Writer *w, const TrainState *s) {
    char t[1024];
    int n = snprintf(t, sizeof t,
                     "update %ld\nmicro_step %ld\nepoch %d\nbatch_in_epoch %ld\nbest_metric %.17g\n"
                     "has_best %d\nstalls %d\ntrain_seconds %.17g\ntokens %ld\nskipped %ld\n"
                     "ranks %d\n",
                     s->update, s->micro_step, s->epoch, s->batch_in_epoch, s->best_metric,
                     s->has_best, s->stalls, s->train_seconds, s->tokens, s->skipped, s->ranks);
    section(w, TAG_STATE, t, (size_t)n);
}

static void write_header(FILE *f, uint32_t sections, uint64_t payload, uint32_t crc) {
    char header[HEADER_BYTES] = {0};
    uint32_t version = CKPT_VERSION;
    memcpy(header, CKPT_MAGIC, 8);
    memcpy(header + 8, &version, 4);
    memcpy(header + 12, &sections, 4);
    memcpy(header + 16, &payload, 8);
    memcpy(header + 24, &crc, 4);
    fwrite(header, 1, sizeof header, f);
}

/* Fault injection for the resume tests: with NMT_FAULT_CHECKPOINT_KILL=N in the environment the
 * process kills itself (SIGKILL) halfway through writing its N-th checkpoint. */
static void fault_point(const char *path) {
    static int saves;
    const char *n = getenv("NMT_FAULT_CHECKPOINT_KILL");
    if (n && ++saves == atoi(n)) {
        fprintf(stderr, "[fault] killed while writing %s\n", path);
        raise(SIGKILL);
    }
}

void checkpoint_save(const char *path, const CheckpointData *d) {
    const ParamTable *pt = d->params;
    Writer w = {.crc = (uint32_t)crc32(0L, Z_NULL, 0)};
    atomic_open(&w.file, path);
    write_header(w.file.f, 0, 0, 0);  // rewritten below, once sizes and checksum are known
    section(&w, TAG_CONFIG, d->config, strlen(d->config));
    if (d->spm) section(&w, TAG_SPM, d->spm, d->spm_len);
    uint64_t index_len = 4 + (uint64_t)pt->count * (64 + 8);
    section_start(&w, TAG_INDEX, index_len);
    uint32_t count = (uint32_t)pt->count;
    put(&w, &count, 4);
    for (int i = 0; i < pt->count; i++) {
        const ParamInfo *p = &pt->info[i];
        uint32_t shape[2] = {(uint32_t)p->shape[0], (uint32_t)p->shape[1]};
        put(&w, p->name, 64);
        put(&w, shape, sizeof shape);
    }
    section_end(&w, index_len);
    tensors_section(&w, TAG_VALUES, pt, d->averaged ? d->averaged : pt->param);
    fault_point(path);
    if (d->with_optimizer) {
        if (d->averaged) tensors_section(&w, TAG_TRAINING, pt, pt->param);
        tensors_section(&w, TAG_ADAM_M, pt, pt->adam_m);
        tensors_section(&w, TAG_ADAM_V, pt, pt->adam_v);
    }
    if (d->state) state_section(&w, d->state);
    CHECK(fseek(w.file.f, 0, SEEK_SET) == 0, "cannot rewind '%s'", w.file.tmp_path);
    write_header(w.file.f, w.sections, w.payload, w.crc);
    atomic_commit(&w.file);
}

static int oldest_first(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int checkpoint_periodic(const char *run_dir, long **updates, int *count) {
    *updates = NULL, *count = 0;
    DIR *d = opendir(run_dir);
    if (!d) return status_fail("cannot read run directory '%s': %s", run_dir, strerror(errno));
    for (struct dirent *e; (e = readdir(d));) {
        long u;
        char extra;
        if (sscanf(e->d_name, "checkpoint.u%ld%c", &u, &extra) == 1 && u >= 0) {
            *updates = xrealloc(*updates, sizeof **updates * (size_t)(*count + 1));
            (*updates)[(*count)++] = u;
        }
    }
    closedir(d);
    if (*count) qsort(*updates, (size_t)*count, sizeof **updates, oldest_first);
    return 0;
}

/* ---- reading ---- */

static int parse_state(const char *text, size_t len, TrainState *s) {
    char buf[1024];
    if (len >= sizeof buf) return -1;
    memcpy(buf, text, len);
    buf[len] = 0;
    memset(s, 0, sizeof *s);
    int got = sscanf(buf,
                     "update %ld\nmicro_step %ld\nepoch %d\nbatch_in_epoch %ld\nbest_metric %lf\n"
                     "has_best %d\nstalls %d\ntrain_seconds %lf\ntokens %ld\nskipped %ld\n"
                     "ranks %d\n",
                     &s->update, &s->micro_step, &s->epoch, &s->batch_in_epoch, &s->best_metric,
                     &s->has_best, &s->stalls, &s->train_seconds, &s->tokens, &s->skipped, &s->ranks);
    if (got == 10) s->ranks = 1;  // written before data-parallel runs
    return got >= 10 ? 0 : -1;
}

/* Where a tensor section goes among the arenas a load finds (values, Adam m, Adam v, training
 * weights); -1 for the other sections. */
static int arena_slot(uint32_t tag) {
    switch (tag) {
    case TAG_VALUES: return 0;
    case TAG_ADAM_M: return 1;
    case TAG_ADAM_V: return 2;
    case TAG_TRAINING: return 3;
    default: return -1;
    }
}

int checkpoint_load(const char *path, Checkpoint *ck) {
    memset(ck, 0, sizeof *ck);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return status_fail("cannot open checkpoint %s: %s", path, strerror(errno));
    struct stat sb;
    long size = fstat(fd, &sb) == 0 ? (long)sb.st_size : -1;
    if (size >= 0 && S_ISDIR(sb.st_mode)) {
        close(fd);
        return status_fail("%s is a directory, not a checkpoint", path);
    }
    const char *header = size >= HEADER_BYTES
                             ? mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0)
                             : MAP_FAILED;
    close(fd);
    if (header != MAP_FAILED && memcmp(header, CKPT_MAGIC, 8) && header[8] == '{') {
        ck->map = header, ck->map_size = (size_t)size;  // a safetensors header: an export
        if (export_read(path, header, (size_t)size, ck) == 0) return 0;
        checkpoint_free(ck);
        return -1;
    }
    if (header == MAP_FAILED || memcmp(header, CKPT_MAGIC, 8)) {
        if (header != MAP_FAILED) munmap((void *)header, (size_t)size);
        return status_fail("%s is neither an nmt checkpoint (bad magic) nor an export", path);
    }
    ck->map = header, ck->map_size = (size_t)size;
    uint32_t version, sections, crc;
    uint64_t payload;
    memcpy(&version, header + 8, 4), memcpy(&sections, header + 12, 4);
    memcpy(&payload, header + 16, 8), memcpy(&crc, header + 24, 4);
    // The CRC covers the payload, not the version: the payload is checked first, so that a
    // damaged version field of a version-1 file is reported as damage (checkpoint.h)
    bool sized = (uint64_t)size == HEADER_BYTES + payload;
    uint32_t actual = (uint32_t)crc32(0L, Z_NULL, 0);
    for (size_t at = 0; sized && at < payload;) {
        uInt n = (uInt)(payload - at > (1u << 30) ? (1u << 30) : payload - at);
        actual = (uint32_t)crc32(actual, (const Bytef *)header + HEADER_BYTES + at, n);
        at += n;
    }
    if (version != CKPT_VERSION) {
        checkpoint_free(ck);
        if (sized && actual == crc)
            return status_fail("%s is corrupted: its header says version %u, but the file verifies "
                               "as a version %d checkpoint (a damaged version field)",
                               path, version, CKPT_VERSION);
        return status_fail("%s: checkpoint version %u, this nmt reads version %d", path, version,
                           CKPT_VERSION);
    }
    if (!sized) {
        checkpoint_free(ck);
        return status_fail("%s is truncated or damaged: %ld bytes, the header says %llu", path,
                           size, (unsigned long long)(HEADER_BYTES + payload));
    }
    ck->blob = header + HEADER_BYTES;
    ck->size = payload;
    if (actual != crc) {
        checkpoint_free(ck);
        return status_fail("%s is corrupted: checksum %08x, expected %08x", path, actual, crc);
    }
    const char *index = NULL;
    uint64_t index_len = 0, arena_len[4] = {0, 0, 0, 0};  // values, Adam m, Adam v, training
    const float *arenas[4] = {NULL, NULL, NULL, NULL};
    uint32_t seen = 0;  // the known tags met so far, one bit each
    for (size_t at = 0; at < payload;) {
        uint32_t tag;
        uint64_t len;
        if (at + SECTION_HEADER > payload) break;
        memcpy(&tag, ck->blob + at, 4), memcpy(&len, ck->blob + at + 8, 8);
        const char *data = ck->blob + at + SECTION_HEADER;
        if (len > payload - at - SECTION_HEADER) {
            checkpoint_free(ck);
            return status_fail("%s: section %u overruns the file (%llu bytes at offset %zu)", path,
                               tag, (unsigned long long)len, HEADER_BYTES + at);
        }
        if (tag >= TAG_CONFIG && tag <= TAG_TRAINING) {
            if (seen & 1u << tag) {
                checkpoint_free(ck);
                return status_fail("%s: section %u appears twice", path, tag);
            }
            seen |= 1u << tag;
        }
        const int slot = arena_slot(tag);
        if (slot >= 0) arenas[slot] = (const float *)data, arena_len[slot] = len;
        switch (tag) {
        case TAG_CONFIG:
            ck->config = xmalloc(len + 1);
            memcpy(ck->config, data, len);
            ck->config[len] = 0;
            break;
        case TAG_SPM: ck->spm = data, ck->spm_len = len; break;
        case TAG_INDEX: index = data, index_len = len; break;
        case TAG_STATE:
            if (parse_state(data, len, &ck->state)) {
                checkpoint_free(ck);
                return status_fail("%s: unreadable training state", path);
            }
            ck->has_state = true;
            break;
        default: break;  // the tensor sections above, and those of newer writers, skipped
        }
        at += SECTION_HEADER + padded(len);
    }
    if (!ck->config || !index || !arenas[0]) {
        checkpoint_free(ck);
        return status_fail("%s: missing config, index or parameters", path);
    }
    ck->has_optimizer = arenas[1] && arenas[2];
    ck->has_training = arenas[3] != NULL;
    uint32_t count = 0;
    if (index_len >= 4) memcpy(&count, index, 4);
    if (index_len < 4 || count > (index_len - 4) / (64 + 8)) {
        checkpoint_free(ck);
        return status_fail("%s: the parameter index (%llu bytes) cannot hold its %u tensors", path,
                           (unsigned long long)index_len, count);
    }
    // Floats every tensor arena holds: the values', the moments' and the training weights'
    // when present.
    uint64_t floats = arena_len[0];
    for (int k = 1; k < 4; k++)
        if (arenas[k] && arena_len[k] < floats) floats = arena_len[k];
    floats /= sizeof(float);
    ck->nparams = (int)count;
    ck->tensors = xcalloc(count ? count : 1, sizeof *ck->tensors);
    size_t offset = 0;
    for (uint32_t i = 0; i < count; i++) {
        struct CkptTensor *t = &ck->tensors[i];
        const char *rec = index + 4 + i * (64 + 8);
        uint32_t shape[2];
        memcpy(t->name, rec, 64);
        t->name[63] = 0;
        memcpy(shape, rec + 64, 8);
        uint64_t numel = (uint64_t)shape[0] * (shape[1] ? shape[1] : 1);
        if (shape[0] > INT32_MAX || shape[1] > INT32_MAX || numel > floats - offset) {
            int rc = status_fail("%s: tensor '%s' (%ux%u) does not fit in the parameter sections "
                                 "(%llu floats)",
                                 path, t->name, shape[0], shape[1], (unsigned long long)floats);
            checkpoint_free(ck);
            return rc;
        }
        t->rows = (int)shape[0], t->cols = (int)shape[1];
        t->numel = (size_t)numel;
        t->value = arenas[0] + offset;
        if (ck->has_optimizer) t->adam_m = arenas[1] + offset, t->adam_v = arenas[2] + offset;
        t->training = ck->has_training ? arenas[3] + offset : t->value;
        offset += t->numel;
    }
    return 0;
}

void checkpoint_free(Checkpoint *ck) {
    if (ck->map) munmap((void *)ck->map, ck->map_size);
    free(ck->config), free(ck->tensors);
    memset(ck, 0, sizeof *ck);
}

int checkpoint_restore(const Checkpoint *ck, ParamTable *pt, bool optimizer, float *averaged) {
    if (optimizer && !ck->has_optimizer)
        return status_fail("the checkpoint has no optimizer state");
    for (int i = 0; i < pt->count; i++) {
        const ParamInfo *p = &pt->info[i];
        const struct CkptTensor *t = NULL;
        for (int j = 0; j < ck->nparams && !t; j++)
            if (!strcmp(ck->tensors[j].name, p->name)) t = &ck->tensors[j];
        if (!t) return status_fail("the checkpoint has no tensor '%s'", p->name);
        if (t->rows != p->shape[0] || t->cols != p->shape[1])
            return status_fail("tensor '%s' is %dx%d in the checkpoint, the model wants %dx%d",
                               p->name, t->rows, t->cols, p->shape[0], p->shape[1]);
        memcpy(pt->param + p->offset, optimizer ? t->training : t->value, sizeof(float) * p->numel);
        if (optimizer) {
            if (averaged) memcpy(averaged + p->offset, t->value, sizeof(float) * p->numel);
            memcpy(pt->adam_m + p->offset, t->adam_m, sizeof(float) * p->numel);
            memcpy(pt->adam_v + p->offset, t->adam_v, sizeof(float) * p->numel);
        }
    }
    return 0;
}
