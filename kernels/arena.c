/* arena.c: aligned allocation with huge-page advice, and the bump arena of arena.h. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "rss.h"

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

void *aligned_alloc_zeroed(size_t bytes) {
    const size_t huge = (size_t)2 << 20;
    size_t align = bytes >= huge ? huge : NMT_ALIGN;  // 2 MiB alignment lets THP back the buffer
    size_t n = round_up(bytes ? bytes : 1, NMT_ALIGN);
    void *p = NULL;
    int rc = posix_memalign(&p, align, n);
    CHECK(rc == 0 && p, "out of memory allocating %zu bytes", bytes);
#ifdef MADV_HUGEPAGE
    if (n >= huge) madvise(p, n, MADV_HUGEPAGE);
#endif
    memset(p, 0, n);
    return p;
}

void aligned_free(void *p) { free(p); }

void arena_init(Arena *a, size_t cap) {
    cap = round_up(cap, NMT_ALIGN);
    a->base = aligned_alloc_zeroed(cap);
    a->cap = cap;
    a->used = a->peak = 0;
}

void arena_init_measure(Arena *a) { *a = (Arena){0}; }

void arena_free(Arena *a) {
    aligned_free(a->base);
    *a = (Arena){0};
}

void arena_release(Arena *a) {
    if (a->base)
        CHECK(rss_release(a->base, a->cap), "cannot release %zu bytes of memory", a->cap);
}

void *arena_alloc(Arena *a, size_t bytes) {
    size_t n = round_up(bytes, NMT_ALIGN);
    size_t at = a->used;
    if (a->base)
        CHECK(at + n <= a->cap, "arena exhausted: %zu bytes requested, %zu of %zu in use", bytes,
              at, a->cap);
    a->used = at + n;
    if (a->used > a->peak) a->peak = a->used;
    return a->base ? a->base + at : NULL;
}

float *arena_floats(Arena *a, size_t n) { return arena_alloc(a, n * sizeof(float)); }
