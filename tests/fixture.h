/* fixture.h: reader of the binary fixtures written by scripts/make_reference.py
 * (magic "NMTREF01", version, then named float32/int32 records). */
#ifndef NMT_FIXTURE_H
#define NMT_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct FixtureRecord {
    char name[96];
    int dtype;  // 0 float32, 1 int32
    int ndim;
    long dims[4], numel;
    void *data;  // (numel) an aligned copy
} FixtureRecord;

typedef struct Fixture {
    FixtureRecord *rec;
    int count;
    char *blob;
} Fixture;

/* Returns 0 on success; on failure prints why. */
static inline int fixture_load(Fixture *fx, const char *path) {
    memset(fx, 0, sizeof *fx);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open fixture %s\n", path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    fx->blob = malloc((size_t)size);
    if (fread(fx->blob, 1, (size_t)size, f) != (size_t)size) size = -1;
    fclose(f);
    uint32_t version, count;
    if (size < 16 || memcmp(fx->blob, "NMTREF01", 8)) {
        fprintf(stderr, "%s: not a reference fixture\n", path);
        return -1;
    }
    memcpy(&version, fx->blob + 8, 4), memcpy(&count, fx->blob + 12, 4);
    fx->rec = calloc(count, sizeof(FixtureRecord));
    fx->count = (int)count;
    char *p = fx->blob + 16, *end = fx->blob + size;
    for (uint32_t i = 0; i < count; i++) {
        FixtureRecord *r = &fx->rec[i];
        uint32_t len, dtype, ndim;
        if (p + 4 > end) return -1;
        memcpy(&len, p, 4), p += 4;
        if (len >= sizeof r->name || p + len + 8 > end) return -1;
        memcpy(r->name, p, len), p += len;
        memcpy(&dtype, p, 4), memcpy(&ndim, p + 4, 4), p += 8;
        if (ndim > 4) return -1;
        r->dtype = (int)dtype, r->ndim = (int)ndim, r->numel = 1;
        for (uint32_t d = 0; d < ndim; d++) {
            uint32_t v;
            memcpy(&v, p, 4), p += 4;
            r->dims[d] = v, r->numel *= v;
        }
        if (p + 4 * r->numel > end) return -1;
        r->data = malloc(4 * (size_t)(r->numel ? r->numel : 1));  // records are not aligned in the file
        memcpy(r->data, p, 4 * (size_t)r->numel);
        p += 4 * r->numel;
    }
    return 0;
}

static inline const FixtureRecord *fixture_find(const Fixture *fx, const char *name) {
    for (int i = 0; i < fx->count; i++)
        if (!strcmp(fx->rec[i].name, name)) return &fx->rec[i];
    return NULL;
}

static inline void fixture_free(Fixture *fx) {
    for (int i = 0; i < fx->count; i++) free(fx->rec[i].data);
    free(fx->rec), free(fx->blob);
    memset(fx, 0, sizeof *fx);
}

#endif
