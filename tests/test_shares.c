/* test_shares.c: the shares of a loop (kernels/shares.h). A plan cuts each thread's share (the
 * items of a static schedule) into chunks that cover it in order, shrink toward its end and are
 * no shorter than asked but for a share's last; shares_next gives a thread its own chunks front to
 * back, then the others' from their backs, never a chunk twice; shares_for runs every item once
 * at any team size, also inside a parallel region. */
#include <omp.h>
#include <string.h>

#include "shares.h"
#include "test_util.h"

enum { MAX_ITEMS = 5000, MAX_THREADS = 8 };

/* The plan of n items among nt threads, chunks of at least `least`. */
static void check_plan(int n, int nt, int least) {
    ShareSpan spans[MAX_THREADS];
    shares_plan(spans, nt, n, least);
    for (int t = 0; t < nt; t++) {
        const int first = (int)((long)n * t / nt), end = (int)((long)n * (t + 1) / nt);
        const int chunks = (int)(spans[t].left >> 32), *start = spans[t].start;
        EXPECT((uint32_t)spans[t].left == 0 && chunks <= SHARES_MAX_CHUNKS,
               "n=%d nt=%d: share %d plans chunks [%u, %d)", n, nt, t, (uint32_t)spans[t].left,
               chunks);
        EXPECT(start[0] == first && start[chunks] == end,
               "n=%d nt=%d least=%d: share %d covers [%d, %d), not [%d, %d)", n, nt, least, t,
               start[0], start[chunks], first, end);
        for (int c = 0; c < chunks; c++) {
            int size = start[c + 1] - start[c];
            EXPECT(size > 0, "n=%d nt=%d: share %d chunk %d is empty", n, nt, t, c);
            if (c + 1 < chunks) {
                EXPECT(size >= least, "n=%d nt=%d least=%d: share %d chunk %d has %d items", n, nt,
                       least, t, c, size);
                EXPECT(c == 0 || size <= start[c] - start[c - 1],
                       "n=%d nt=%d: share %d chunk %d (%d items) is longer than the one before", n,
                       nt, t, c, size);
            }
        }
    }
}

/* Thread 1 of 2, its own share done, takes thread 0's chunks from the back while thread 0 takes
 * them from the front: each item once, thread 0's in order from its first item, thread 1's from
 * the share's last. One thread plays both in turn, so the order of the takes is fixed. */
static void check_stealing(void) {
    enum { N = 1000 };
    ShareSpan spans[2];
    shares_plan(spans, 2, N, 4);
    int seen[N] = {0}, i0 = 0, i1 = 0, v0 = 0, v1 = 0, own = 0, stolen = 0;
    bool t0 = true, t1;
    while ((t1 = shares_next(spans, 2, 1, &v1, &i0, &i1)) && v1 == 0) {  // its own share
        own += i1 - i0;
        for (int x = i0; x < i1; x++) seen[x]++;
    }
    EXPECT(t1 && own == N - N / 2 && i1 == N / 2,
           "thread 1 took %d items of its own share, then [%d, %d), not share 0's last chunk",
           own, i0, i1);
    int front = 0, back = N / 2;  // thread 0's next item, the first item thread 1 took of share 0
    for (; t1 || t0; t1 = t1 && shares_next(spans, 2, 1, &v1, &i0, &i1)) {
        if (t1) {
            EXPECT(i1 == back, "thread 1 stole [%d, %d), which does not end at %d", i0, i1, back);
            back = i0, stolen += i1 - i0;
            for (int x = i0; x < i1; x++) seen[x]++;
        }
        if (t0 && (t0 = shares_next(spans, 2, 0, &v0, &i0, &i1))) {
            EXPECT(v0 == 0 && i0 == front, "thread 0 took [%d, %d) of share %d, not from %d", i0,
                   i1, v0, front);
            front = i1;
            for (int x = i0; x < i1; x++) seen[x]++;
        }
    }
    int wrong = 0;
    for (int x = 0; x < N; x++) wrong += seen[x] != 1;
    EXPECT(wrong == 0 && stolen > 0 && front == back,
           "%d items not taken once, %d stolen, thread 0 stopped at %d, thread 1 at %d", wrong,
           stolen, front, back);
}

typedef struct Visits {
    int *count;  // (n) how often each item ran
} Visits;

static void count_items(void *arg, int i0, int i1) {
    const Visits *v = arg;
    for (int i = i0; i < i1; i++) __atomic_fetch_add(&v->count[i], 1, __ATOMIC_RELAXED);
}

/* shares_for at `threads` threads (inside a parallel region of two when `nested`). */
static void check_for(int n, int threads, bool nested) {
    static int count[MAX_ITEMS];
    memset(count, 0, sizeof(int) * (size_t)n);
    Visits v = {count};
    omp_set_num_threads(threads);
    if (nested) {
#pragma omp parallel num_threads(2)
#pragma omp single
        shares_for(n, 3, true, count_items, &v);
    } else {
        shares_for(n, 3, true, count_items, &v);
    }
    int wrong = 0;
    for (int i = 0; i < n; i++) wrong += count[i] != 1;
    EXPECT(wrong == 0, "shares_for of %d items at %d threads%s: %d items not run once", n, threads,
           nested ? " in a parallel region" : "", wrong);
}

int main(void) {
    const int sizes[] = {0, 1, 3, 7, 100, 257, 4100, MAX_ITEMS};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int nt = 1; nt <= MAX_THREADS; nt++) {
            check_plan(sizes[s], nt, 1);
            check_plan(sizes[s], nt, 4);
        }
    check_stealing();
    const int teams[] = {1, 2, 5};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int t = 0; t < 3; t++) check_for(sizes[s], teams[t], false);
    check_for(4100, 2, true);
    return test_finish();
}
