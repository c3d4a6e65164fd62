/* params.c: the registry and flat arenas of params.h. */
#include "params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "check.h"
#include "rng.h"

void params_init(ParamTable *pt) { memset(pt, 0, sizeof *pt); }

void params_free(ParamTable *pt) {
    free(pt->info);
    aligned_free(pt->param), aligned_free(pt->grad);
    aligned_free(pt->adam_m), aligned_free(pt->adam_v);
    memset(pt, 0, sizeof *pt);
}

int params_declare(ParamTable *pt, const char *name, int rows, int cols, InitKind init,
                   float scale, bool decay) {
    CHECK(!pt->param, "parameter '%s' declared after the arenas were allocated", name);
    CHECK(params_find(pt, name) < 0, "parameter '%s' declared twice", name);
    CHECK(strlen(name) < sizeof pt->info[0].name, "parameter name too long: %s", name);
    CHECK(rows > 0 && cols >= 0, "parameter '%s' has an empty shape (%d, %d)", name, rows, cols);
    if (pt->count == pt->cap) {
        pt->cap = pt->cap ? 2 * pt->cap : 64;
        pt->info = xrealloc(pt->info, sizeof(ParamInfo) * pt->cap);
    }
    ParamInfo *p = &pt->info[pt->count];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->ndim = cols ? 2 : 1;
    p->shape[0] = rows, p->shape[1] = cols;
    p->numel = (size_t)rows * (cols ? cols : 1);
    // Each tensor starts on a 16-float (64-byte) boundary so views are aligned for SIMD.
    p->offset = (pt->numel + 15) / 16 * 16;
    p->init = init, p->scale = scale, p->decay = decay;
    pt->numel = p->offset + p->numel;
    return pt->count++;
}

void params_finalize(ParamTable *pt) {
    size_t bytes = sizeof(float) * (pt->numel ? pt->numel : 1);
    pt->param = aligned_alloc_zeroed(bytes);
    pt->grad = aligned_alloc_zeroed(bytes);
    pt->adam_m = aligned_alloc_zeroed(bytes);
    pt->adam_v = aligned_alloc_zeroed(bytes);
}

size_t params_count(const ParamTable *pt) {
    size_t n = 0;
    for (int i = 0; i < pt->count; i++) n += pt->info[i].numel;
    return n;
}

int params_find(const ParamTable *pt, const char *name) {
    for (int i = 0; i < pt->count; i++)
        if (!strcmp(pt->info[i].name, name)) return i;
    return -1;
}

ParamRange params_prefix_range(const ParamTable *pt, const char *prefix) {
    const size_t n = strlen(prefix);
    int first = -1, last = -1;
    for (int i = 0; i < pt->count; i++) {
        if (strncmp(pt->info[i].name, prefix, n)) continue;
        if (first < 0) first = i;
        CHECK(last < 0 || last == i - 1, "the parameters named %s* are not declared together", prefix);
        last = i;
    }
    CHECK(first >= 0, "no parameter is named %s*", prefix);
    const ParamInfo *a = &pt->info[first], *b = &pt->info[last];
    return (ParamRange){a->offset, b->offset + b->numel - a->offset};
}

float *params_view(const ParamTable *pt, const char *name, float *base) {
    int i = params_find(pt, name);
    CHECK(i >= 0, "no parameter named '%s'", name);
    return base + pt->info[i].offset;
}

void params_initialize(ParamTable *pt, uint64_t seed) {
    for (int t = 0; t < pt->count; t++) {
        const ParamInfo *p = &pt->info[t];
        float *v = pt->param + p->offset;
        Rng r = rng_init(seed, 1000 + (uint64_t)t);
        for (size_t i = 0; i < p->numel; i++) {
            switch (p->init) {
            case INIT_ZERO: v[i] = 0.0f; break;
            case INIT_ONE: v[i] = 1.0f; break;
            case INIT_NORMAL: v[i] = p->scale * (float)rng_normal(&r); break;
            case INIT_UNIFORM: v[i] = p->scale * (float)(2.0 * rng_next_double(&r) - 1.0); break;
            }
        }
    }
}

void params_zero_grad(ParamTable *pt) { memset(pt->grad, 0, sizeof(float) * pt->numel); }

double params_grad_norm(const ParamTable *pt) {
    // Fixed blocks summed in order: the result does not depend on the thread count.
    enum { BLOCK = 1 << 16 };
    size_t nblocks = (pt->numel + BLOCK - 1) / BLOCK;
    double *partial = xcalloc(nblocks ? nblocks : 1, sizeof(double));
    const float *g = pt->grad;
#pragma omp parallel for schedule(static)
    for (size_t blk = 0; blk < nblocks; blk++) {
        size_t end = (blk + 1) * BLOCK < pt->numel ? (blk + 1) * BLOCK : pt->numel;
        double s = 0.0;
#pragma omp simd reduction(+ : s)
        for (size_t i = blk * BLOCK; i < end; i++) s += (double)g[i] * g[i];
        partial[blk] = s;
    }
    double sum = 0.0;
    for (size_t blk = 0; blk < nblocks; blk++) sum += partial[blk];
    free(partial);
    return sqrt(sum);
}

int params_first_nonfinite(const ParamTable *pt, bool values) {
    const float *base = values ? pt->param : pt->grad;
    for (int t = 0; t < pt->count; t++) {
        const float *v = base + pt->info[t].offset;
        for (size_t i = 0; i < pt->info[t].numel; i++)
            if (!isfinite(v[i])) return t;
    }
    return -1;
}
