/* test_arena.c: arena_release (kernels/arena.h) gives an arena's pages back, so the resident set
 * shrinks by them, and leaves its allocations usable, reading zero as after arena_init. */
#include <stddef.h>

#include "arena.h"
#include "rss.h"
#include "test_util.h"

int main(void) {
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
