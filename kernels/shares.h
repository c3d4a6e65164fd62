/* shares.h: a team's split of a loop over n items into each thread's contiguous share (the items
 * an OpenMP static schedule gives it, whose data its cache holds from the loops before), walked
 * front to back in chunks that shrink toward its end; a thread done with its own share takes the
 * chunks left at the back of the others'. While the cores run at the same speed each thread does
 * its own share; a core the host slows gives its last chunks to a faster one. The chunks and
 * the items in them are the same whichever thread runs them. */
#ifndef NMT_SHARES_H
#define NMT_SHARES_H

#include <stdbool.h>
#include <stdint.h>

enum { SHARES_MAX_CHUNKS = 64 };

/* One thread's share: the chunks left, [front, back) in the low and high 32 bits, on a cache
 * line of its own (its owner takes from the front without disturbing the others), and where each
 * chunk starts: chunk c is items [start[c], start[c + 1]). */
typedef struct ShareSpan {
    _Alignas(64) uint64_t left;
    int start[SHARES_MAX_CHUNKS + 1];
} ShareSpan;

/* Plans the shares of items [0, n) among nt threads into spans (nt), chunks of at least `least`
 * items (or a 48th of the share, if more) except a share's last: a quarter of what is left each. */
void shares_plan(ShareSpan *spans, int nt, int n, int least);

/* The next chunk [*i0, *i1) for thread t of the team sharing spans (at most nt threads; fewer
 * take the shares of absent ones): its own share's from the front, then the others' from the
 * back, owner by owner (*visit starts at 0); false when none is left. */
bool shares_next(ShareSpan *spans, int nt, int t, int *visit, int *i0, int *i1);

/* body(arg, i0, i1) on chunks of items [0, n) by the OpenMP team (the current maximum of threads;
 * one if !parallel or inside a parallel region), planned with shares_plan(n, least). */
void shares_for(int n, int least, bool parallel, void (*body)(void *arg, int i0, int i1),
                void *arg);

#endif
