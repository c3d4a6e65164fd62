/* arena.c: aligned allocation with huge-page advice, and the bump arena of arena.h. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "rss.h"

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* Sits in the NMT_ALIGN bytes before every buffer: how to give the buffer back. */
typedef struct AllocHeader {
    void *base;     // malloc's block, or the start of the buffer's own mapping
    size_t mapped;  // the mapping's length; 0 for a malloc block
} AllocHeader;
_Static_assert(sizeof(AllocHeader) <= NMT_ALIGN, "the header fits before the buffer");

void *aligned_alloc_zeroed(size_t bytes) {
    const size_t huge = (size_t)2 << 20;
    size_t n = round_up(bytes ? bytes : 1, NMT_ALIGN);
    char *p;
    AllocHeader h;
    if (n < huge) {
        void *base = NULL;
        int rc = posix_memalign(&base, NMT_ALIGN, NMT_ALIGN + n);
        CHECK(rc == 0 && base, "out of memory allocating %zu bytes", bytes);
        p = (char *)base + NMT_ALIGN;
        memset(p, 0, n);
        h = (AllocHeader){base, 0};
    } else {  // its own mapping: zero pages, resident once touched; 2 MiB aligned for THP
        size_t len = NMT_ALIGN + huge + n;
        char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(map != MAP_FAILED, "out of memory mapping %zu bytes", bytes);
        p = (char *)round_up((uintptr_t)map + NMT_ALIGN, huge);
#ifdef MADV_HUGEPAGE
        madvise(p, n, MADV_HUGEPAGE);
#endif
        h = (AllocHeader){map, len};
    }
    memcpy(p - NMT_ALIGN, &h, sizeof h);
    return p;
}

void aligned_free(void *p) {
    if (!p) return;
    AllocHeader h;
    memcpy(&h, (char *)p - NMT_ALIGN, sizeof h);
    if (h.mapped)
        CHECK(munmap(h.base, h.mapped) == 0, "cannot unmap %zu bytes", h.mapped);
    else
        free(h.base);
}

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
