/* shares.c: the shares of shares.h. */
#include "shares.h"

#include <omp.h>

#include "check.h"

void shares_plan(ShareSpan *spans, int nt, int n, int least) {
    for (int t = 0; t < nt; t++) {
        const int first = (int)((long)n * t / nt), end = (int)((long)n * (t + 1) / nt);
        const int floor = (end - first) / 48 > least ? (end - first) / 48 : least;
        int *start = spans[t].start, c = 0;
        start[0] = first;
        for (int at = first; at < end; c++) {
            // a quarter of what is left down to floor: at most 17 chunks
            CHECK(c < SHARES_MAX_CHUNKS, "a share of %d items cut into more than %d chunks",
                  end - first, SHARES_MAX_CHUNKS);
            int size = (end - at) / 4 > floor ? (end - at) / 4 : floor;
            at = at + size < end ? at + size : end;
            start[c + 1] = at;
        }
        spans[t].left = (uint64_t)c << 32;  // chunks [0, c) left
    }
}

/* Takes a chunk of the share whose span is *left: its front one (the owner) or its back one. */
static bool take_chunk(uint64_t *left, bool front, int *chunk) {
    uint64_t v = __atomic_load_n(left, __ATOMIC_RELAXED);
    for (;;) {
        uint32_t f = (uint32_t)v, b = (uint32_t)(v >> 32);
        if (f >= b) return false;
        uint64_t next = front ? v + 1 : v - ((uint64_t)1 << 32);
        if (__atomic_compare_exchange_n(left, &v, next, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            *chunk = (int)(front ? f : b - 1);
            return true;
        }
    }
}

bool shares_next(ShareSpan *spans, int nt, int t, int *visit, int *i0, int *i1) {
    for (; *visit < nt; ++*visit) {
        ShareSpan *s = &spans[(t + *visit) % nt];
        int c;
        if (take_chunk(&s->left, *visit == 0, &c)) {
            *i0 = s->start[c], *i1 = s->start[c + 1];
            return true;
        }
    }
    return false;
}

void shares_for(int n, int least, bool parallel, void (*body)(void *arg, int i0, int i1),
                void *arg) {
    const int nt = parallel && !omp_in_parallel() ? omp_get_max_threads() : 1;
    ShareSpan spans[nt];
    shares_plan(spans, nt, n, least);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int t = omp_get_thread_num();
        for (int visit = 0, i0, i1; shares_next(spans, nt, t, &visit, &i0, &i1);)
            body(arg, i0, i1);
    }
}
