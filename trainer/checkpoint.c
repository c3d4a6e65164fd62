/* checkpoint.c: atomic, checksummed checkpoint files (checkpoint.h). */
#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"

#define CKPT_MAGIC "NMTCKPT1"
enum { CKPT_VERSION = 1, HEADER_BYTES = 8 + 4 + 4 + 8 + 4 };
enum { TAG_CONFIG = 1, TAG_SPM = 2, TAG_INDEX = 3, TAG_VALUES = 4, TAG_ADAM_M = 5, TAG_ADAM_V = 6,
       TAG_STATE = 7 };

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- writing: a growable buffer of sections ---- */

typedef struct Buf {
    char *p;
    size_t len, cap;
} Buf;

static void buf_put(Buf *b, const void *data, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void buf_section(Buf *b, uint32_t tag, const void *data, size_t n) {
    uint64_t len = n;
    buf_put(b, &tag, 4);
    buf_put(b, &len, 8);
    buf_put(b, data, n);
}

/* Each tensor's floats, concatenated in table order (alignment padding dropped). */
static void put_tensors(Buf *b, uint32_t tag, const ParamTable *pt, const float *arena) {
    uint64_t len = sizeof(float) * params_count(pt);
    buf_put(b, &tag, 4);
    buf_put(b, &len, 8);
    for (int i = 0; i < pt->count; i++)
        buf_put(b, arena + pt->info[i].offset, sizeof(float) * pt->info[i].numel);
}

static void state_text(Buf *b, const TrainState *s) {
    char t[1024];
    int n = snprintf(t, sizeof t,
                     "update %ld\nmicro_step %ld\nepoch %d\nbatch_in_epoch %ld\nbest_metric %.17g\n"
                     "has_best %d\nstalls %d\ntrain_seconds %.17g\ntokens %ld\nskipped %ld\n",
                     s->update, s->micro_step, s->epoch, s->batch_in_epoch, s->best_metric,
                     s->has_best, s->stalls, s->train_seconds, s->tokens, s->skipped);
    buf_section(b, TAG_STATE, t, (size_t)n);
}

static int write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        c += w, n -= (size_t)w;
    }
    return 0;
}

int checkpoint_save(const char *path, const CheckpointData *d, char *err, size_t errlen) {
    Buf b = {0};
    const ParamTable *pt = d->params;
    buf_section(&b, TAG_CONFIG, d->config, strlen(d->config));
    if (d->spm) buf_section(&b, TAG_SPM, d->spm, d->spm_len);
    Buf idx = {0};
    uint32_t count = (uint32_t)pt->count;
    buf_put(&idx, &count, 4);
    for (int i = 0; i < pt->count; i++) {
        const ParamInfo *p = &pt->info[i];
        uint32_t shape[2] = {(uint32_t)p->shape[0], (uint32_t)p->shape[1]};
        buf_put(&idx, p->name, sizeof p->name);
        buf_put(&idx, shape, sizeof shape);
    }
    buf_section(&b, TAG_INDEX, idx.p, idx.len);
    free(idx.p);
    put_tensors(&b, TAG_VALUES, pt, pt->param);
    if (d->with_optimizer) {
        put_tensors(&b, TAG_ADAM_M, pt, pt->adam_m);
        put_tensors(&b, TAG_ADAM_V, pt, pt->adam_v);
    }
    if (d->state) state_text(&b, d->state);

    char header[HEADER_BYTES];
    uint32_t version = CKPT_VERSION, sections = 0, crc = (uint32_t)crc32(0L, Z_NULL, 0);
    for (size_t at = 0; at < b.len; sections++) {  // count sections
        uint64_t len;
        memcpy(&len, b.p + at + 4, 8);
        at += 12 + len;
    }
    uint64_t payload = b.len;
    for (size_t at = 0; at < b.len;) {  // zlib's crc32 takes at most 4 GiB at a time
        uInt n = (uInt)(b.len - at > (1u << 30) ? (1u << 30) : b.len - at);
        crc = (uint32_t)crc32(crc, (const Bytef *)b.p + at, n);
        at += n;
    }
    memcpy(header, CKPT_MAGIC, 8);
    memcpy(header + 8, &version, 4);
    memcpy(header + 12, &sections, 4);
    memcpy(header + 16, &payload, 8);
    memcpy(header + 24, &crc, 4);

    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = -1;
    if (fd < 0) {
        fail(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
    } else if (write_all(fd, header, sizeof header) || write_all(fd, b.p, b.len) || fsync(fd)) {
        fail(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
    } else if (close(fd) || rename(tmp, path)) {
        fail(err, errlen, "cannot move %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
    } else {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY);
        if (dfd >= 0) fsync(dfd), close(dfd);  // make the rename itself durable
        rc = 0;
    }
    free(b.p);
    return rc;
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
                     "has_best %d\nstalls %d\ntrain_seconds %lf\ntokens %ld\nskipped %ld\n",
                     &s->update, &s->micro_step, &s->epoch, &s->batch_in_epoch, &s->best_metric,
                     &s->has_best, &s->stalls, &s->train_seconds, &s->tokens, &s->skipped);
    return got == 10 ? 0 : -1;
}

int checkpoint_load(const char *path, Checkpoint *ck, char *err, size_t errlen) {
    memset(ck, 0, sizeof *ck);
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, errlen, "cannot open checkpoint %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char header[HEADER_BYTES];
    if (size < HEADER_BYTES || fread(header, 1, HEADER_BYTES, f) != HEADER_BYTES ||
        memcmp(header, CKPT_MAGIC, 8)) {
        fclose(f);
        return fail(err, errlen, "%s is not an nmt checkpoint (bad magic)", path);
    }
    uint32_t version, sections, crc;
    uint64_t payload;
    memcpy(&version, header + 8, 4), memcpy(&sections, header + 12, 4);
    memcpy(&payload, header + 16, 8), memcpy(&crc, header + 24, 4);
    if (version != CKPT_VERSION) {
        fclose(f);
        return fail(err, errlen, "%s: checkpoint version %u, this nmt reads version %d", path,
                    version, CKPT_VERSION);
    }
    if ((uint64_t)size != HEADER_BYTES + payload) {
        fclose(f);
        return fail(err, errlen, "%s is truncated or damaged: %ld bytes, the header says %llu",
                    path, size, (unsigned long long)(HEADER_BYTES + payload));
    }
    ck->blob = xmalloc(payload ? payload : 1);
    ck->size = payload;
    size_t got = fread(ck->blob, 1, payload, f);
    fclose(f);
    if (got != payload) {
        checkpoint_free(ck);
        return fail(err, errlen, "cannot read %s", path);
    }
    uint32_t actual = (uint32_t)crc32(0L, Z_NULL, 0);
    for (size_t at = 0; at < payload;) {
        uInt n = (uInt)(payload - at > (1u << 30) ? (1u << 30) : payload - at);
        actual = (uint32_t)crc32(actual, (const Bytef *)ck->blob + at, n);
        at += n;
    }
    if (actual != crc) {
        checkpoint_free(ck);
        return fail(err, errlen, "%s is corrupted: checksum %08x, expected %08x", path, actual, crc);
    }
    const char *index = NULL;
    const float *arenas[3] = {NULL, NULL, NULL};
    for (size_t at = 0; at < payload;) {
        uint32_t tag;
        uint64_t len;
        memcpy(&tag, ck->blob + at, 4), memcpy(&len, ck->blob + at + 4, 8);
        const char *data = ck->blob + at + 12;
        if (at + 12 + len > payload) {
            checkpoint_free(ck);
            return fail(err, errlen, "%s: section %u overruns the file", path, tag);
        }
        switch (tag) {
        case TAG_CONFIG:
            ck->config = xmalloc(len + 1);
            memcpy(ck->config, data, len);
            ck->config[len] = 0;
            break;
        case TAG_SPM: ck->spm = data, ck->spm_len = len; break;
        case TAG_INDEX: index = data; break;
        case TAG_VALUES: arenas[0] = (const float *)data; break;
        case TAG_ADAM_M: arenas[1] = (const float *)data; break;
        case TAG_ADAM_V: arenas[2] = (const float *)data; break;
        case TAG_STATE:
            if (parse_state(data, len, &ck->state)) {
                checkpoint_free(ck);
                return fail(err, errlen, "%s: unreadable training state", path);
            }
            ck->has_state = true;
            break;
        default: break;  // sections of newer writers are skipped
        }
        at += 12 + len;
    }
    if (!ck->config || !index || !arenas[0]) {
        checkpoint_free(ck);
        return fail(err, errlen, "%s: missing config, index or parameters", path);
    }
    ck->has_optimizer = arenas[1] && arenas[2];
    uint32_t count;
    memcpy(&count, index, 4);
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
        t->rows = (int)shape[0], t->cols = (int)shape[1];
        t->numel = (size_t)t->rows * (t->cols ? t->cols : 1);
        t->value = arenas[0] + offset;
        if (ck->has_optimizer) t->adam_m = arenas[1] + offset, t->adam_v = arenas[2] + offset;
        offset += t->numel;
    }
    return 0;
}

void checkpoint_free(Checkpoint *ck) {
    free(ck->blob), free(ck->config), free(ck->tensors);
    memset(ck, 0, sizeof *ck);
}

int checkpoint_restore(const Checkpoint *ck, ParamTable *pt, bool optimizer, char *err,
                       size_t errlen) {
    if (optimizer && !ck->has_optimizer)
        return fail(err, errlen, "the checkpoint has no optimizer state");
    for (int i = 0; i < pt->count; i++) {
        const ParamInfo *p = &pt->info[i];
        const struct CkptTensor *t = NULL;
        for (int j = 0; j < ck->nparams && !t; j++)
            if (!strcmp(ck->tensors[j].name, p->name)) t = &ck->tensors[j];
        if (!t) return fail(err, errlen, "the checkpoint has no tensor '%s'", p->name);
        if (t->rows != p->shape[0] || t->cols != p->shape[1])
            return fail(err, errlen, "tensor '%s' is %dx%d in the checkpoint, the model wants %dx%d",
                        p->name, t->rows, t->cols, p->shape[0], p->shape[1]);
        memcpy(pt->param + p->offset, t->value, sizeof(float) * p->numel);
        if (optimizer) {
            memcpy(pt->adam_m + p->offset, t->adam_m, sizeof(float) * p->numel);
            memcpy(pt->adam_v + p->offset, t->adam_v, sizeof(float) * p->numel);
        }
    }
    return 0;
}
