/* test_arena.c: a large buffer of aligned_alloc_zeroed (kernels/arena.h) reads zero and becomes
 * resident only as it is touched; arena_release gives an arena's pages back, so the resident set
 * shrinks by them, and leaves its allocations usable, reading zero as after arena_init. */
#include <stddef.h>

#include "arena.h"
#include "rss.h"
#include "test_util.h"

/* 256 MiB: resident after the touch of every page, not before; aligned_free gives it back. */
static void test_resident_when_touched(void) {
    const size_t n = (size_t)64 << 20;
    double before = rss_now_mb();
    float *x = aligned_alloc_zeroed(n * sizeof(float));  // (n)
    double allocated = rss_now_mb();
    EXPECT(allocated - before < 16, "allocating 256 MiB took the resident set from %.0f to %.0f MB",
           before, allocated);
    EXPECT(((size_t)x % NMT_ALIGN) == 0, "a buffer at %p is not %d-byte aligned", (void *)x,
           NMT_ALIGN);
    size_t nonzero = 0;
    for (size_t i = 0; i < n; i += 1024) nonzero += x[i] != 0.0f, x[i] = 1.0f;
    double touched = rss_now_mb();
    EXPECT(nonzero == 0, "%zu pages of a fresh buffer are not zero", nonzero);
    EXPECT(touched - before > 240, "touching 256 MiB took the resident set from %.0f to only "
           "%.0f MB", before, touched);
    aligned_free(x);
    double freed = rss_now_mb();
    EXPECT(touched - freed > 240, "freeing 256 MiB took the resident set from %.0f to only %.0f MB",
           touched, freed);
    char *small = aligned_alloc_zeroed(100);  // (100) from malloc, with the same header
    EXPECT(((size_t)small % NMT_ALIGN) == 0 && small[99] == 0, "a small buffer is aligned, zero");
    aligned_free(small);
}

int main(void) {
    test_resident_when_touched();
    const size_t n = (size_t)16 << 20;  // floats: 64 MiB
    Arena a;
    arena_init(&a, n * sizeof(float));
    float *x = arena_floats(&a, n);  // (n) the whole arena
    for (size_t i = 0; i < n; i++) x[i] = 1.0f;
    double before = rss_now_mb();
    arena_release(&a);
    double after = rss_now_mb();
    EXPECT(before - after > 48, "releasing 64 MiB took the resident set from %.0f to %.0f MB", before,
           after);
    size_t nonzero = 0;
    for (size_t i = 1024; i < n - 1024; i++) nonzero += x[i] != 0.0f;  // pages wholly inside
    EXPECT(nonzero == 0, "%zu floats of a released arena are not zero", nonzero);
    x[n / 2] = 2.0f;
    EXPECT(x[n / 2] == 2.0f && arena_floats(&a, 0) != NULL, "a released arena stays usable");
    arena_free(&a);
    return test_finish();
}
