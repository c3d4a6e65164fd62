/* arena.h: 64-byte aligned memory, allocated once and reused.
 * Fresh pages are slow to touch on our machines (about 1.4 GB/s first touch against 25 GB/s reuse),
 * so every large buffer (parameters, activations, packing panels) is allocated up front, advised
 * for transparent huge pages and reused for the lifetime of the run. A large buffer is a mapping
 * of its own whose pages become resident when first touched: a buffer planned for the worst case
 * (or the gradients and optimizer moments of a model that only translates) costs only what the
 * run uses.
 * An Arena is a bump allocator; in measure mode (arena_init_measure) it hands out NULL and only
 * records how much a code path would take, so a worst case can be planned and then allocated. */
#ifndef NMT_ARENA_H
#define NMT_ARENA_H

#include <stdbool.h>
#include <stddef.h>

#define NMT_ALIGN 64

/* Zeroed, 64-byte aligned, huge-page advised (from 2 MiB). Free with aligned_free. */
void *aligned_alloc_zeroed(size_t bytes);
void aligned_free(void *p);

typedef struct Arena {
    char *base;   // NULL in measure mode
    size_t cap;   // bytes available (0 in measure mode)
    size_t used;  // bytes handed out so far (always a multiple of NMT_ALIGN)
    size_t peak;  // high-water mark of used
} Arena;

void arena_init(Arena *a, size_t cap);  // allocates cap bytes (zeroed)
void arena_init_measure(Arena *a);      // no memory: allocations return NULL, peak is recorded
void arena_free(Arena *a);
/* Gives the arena's pages back to the kernel (MADV_DONTNEED) while its allocations stay valid:
 * the next touch faults in zeroed pages, as after arena_init. For an arena left idle for a while,
 * whose memory something else needs meanwhile. */
void arena_release(Arena *a);
void *arena_alloc(Arena *a, size_t bytes);         // 64-byte aligned; contents unspecified
float *arena_floats(Arena *a, size_t n);           // n floats, contents unspecified
static inline size_t arena_mark(const Arena *a) { return a->used; }
static inline void arena_reset(Arena *a, size_t mark) { a->used = mark; }
static inline bool arena_measuring(const Arena *a) { return a->base == NULL; }

#endif
