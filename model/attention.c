/* attention.c: the shared half of multi-head attention (attention.h): projections, the fused
 * core (scores, masking, softmax, dropout on the probabilities and P·V, forward and backward) and
 * the output projection. The core runs one task per (sentence, head) forward and per sentence
 * backward; every task writes its own slices, so nothing races and the result does not depend on
 * the number of threads. */
#include "attention.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "check.h"
#include "rng.h"
#include "shares.h"
#include "timer.h"
#include "vecmath.h"

const AttnImpl *attn_impl(AttentionMode mode) {
    switch (mode) {
    case ATTENTION_CONCAT: return &attn_concat;
    case ATTENTION_COLLAB: return &attn_collab;
    }
    FATAL("%d is not an attention mode", (int)mode);
}

AttnDims attn_dims(const ModelConfig *cfg) {
    AttnDims d;
    d.D = cfg->d_model, d.H = cfg->heads, d.Dh = cfg->d_model / cfg->heads;
    d.W = cfg->dk ? cfg->dk : cfg->d_model;
    d.scale = 1.0f / sqrtf((float)d.Dh);
    d.dropout = (float)cfg->attention_dropout;
    return d;
}

static void pname(char *out, size_t n, const char *prefix, const char *leaf) {
    snprintf(out, n, "%s.%s", prefix, leaf);
}

void attention_declare(ParamTable *pt, const char *prefix, const AttnDims *d,
                       const AttnImpl *impl, const ModelConfig *cfg) {
    char n[64];
    impl->declare(pt, prefix, d, cfg);
    // fairseq init: V with xavier gain 1/sqrt(2) when the key width equals D (the qkv_same_dim
    // rule), else gain 1; the output projection xavier with a zero bias.
    float gain = d->W == d->D ? 1.0f / sqrtf(2.0f) : 1.0f;
    float xavier_dd = sqrtf(6.0f / (2.0f * d->D));
    pname(n, sizeof n, prefix, "w_v"), params_declare(pt, n, d->D, d->D, INIT_UNIFORM, gain * xavier_dd, true);
    pname(n, sizeof n, prefix, "b_v"), params_declare(pt, n, d->D, 0, INIT_UNIFORM, 1.0f / sqrtf((float)d->D), false);
    pname(n, sizeof n, prefix, "w_o"), params_declare(pt, n, d->D, d->D, INIT_UNIFORM, xavier_dd, true);
    pname(n, sizeof n, prefix, "b_o"), params_declare(pt, n, d->D, 0, INIT_ZERO, 0.0f, false);
}

static void bind_vo(AttnParams *p, const ParamTable *pt, const char *prefix, float *base) {
    char n[64];
    pname(n, sizeof n, prefix, "w_v"), p->w_v = params_view(pt, n, base);
    pname(n, sizeof n, prefix, "b_v"), p->b_v = params_view(pt, n, base);
    pname(n, sizeof n, prefix, "w_o"), p->w_o = params_view(pt, n, base);
    pname(n, sizeof n, prefix, "b_o"), p->b_o = params_view(pt, n, base);
}

void attention_bind(Attention *a, const ParamTable *pt, const char *prefix, const AttnDims *d,
                    const AttnImpl *impl, int site) {
    a->d = *d, a->impl = impl, a->site = site, a->core_seconds = NULL;
    impl->bind(&a->p, pt, prefix, pt->param);
    impl->bind(&a->g, pt, prefix, pt->grad);
    bind_vo(&a->p, pt, prefix, pt->param);
    bind_vo(&a->g, pt, prefix, pt->grad);
}

void attention_cache_alloc(AttnCache *s, Arena *arena, const AttnDims *d, int B, int Tq, int Tk) {
    s->q = arena_floats(arena, (size_t)B * Tq * d->W);
    s->k = arena_floats(arena, (size_t)B * Tk * d->W);
    s->cs = arena_floats(arena, (size_t)B * Tk * d->H);
    s->v = arena_floats(arena, (size_t)B * Tk * d->D);
    s->p = arena_floats(arena, (size_t)B * d->H * Tq * Tk);
}

/* ---------------------------------------------------------------- the fused core
 * Per (sentence, head) and per block of ROWS query rows, one pass computes the block's scores,
 * masks them, turns them into probabilities (stored: backward needs them), drops them out with
 * the regenerated mask and multiplies by V; backward walks the same blocks. A block's scores,
 * probabilities and gradients stay in this thread's tiles (ROWS x Tk), the head's transposed keys
 * or values in another (width x Tk); causal and padded blocks stop at their last visible key.
 * Each (sentence, head) first prefetches the next one's slices of the activations, which the
 * projections and the rest of the step leave out of cache (the core's time in a training step of
 * bench-small fell by 16-17% so, on 2 cores of a Zen 5 EPYC).
 * The products are tile_mm: every element is summed in order of the inner index by the same
 * instructions wherever it lies, so results depend neither on the thread count nor on the mode's
 * column layout (collab with one-hot mixing reproduces concat exactly). */

/* tile_mm's micro-tile is at most (MR, NR): NV vectors per row and MR rows. Its sums are
 * independent chains of FMAs, 8 at least to keep two FMA pipes of 4 cycles' latency busy, and as
 * many as the registers leave room for: 16 of 32 with 16-float vectors (two per row: a 25-key row
 * of scores is one partial tile, not a whole one and a partial one), 12 of 16 with 8-float ones.
 * A lone row takes RB column blocks at once, 64 columns (a head's width). */
enum { NR = VF_LANES >= 16 ? 32 : 16, NV = NR / VF_LANES };
enum { MR = VF_LANES >= 16 ? 8 : VF_LANES == 8 ? 6 : 4 };
enum { ROWS = 32 };  // query rows per block
enum { RB = 64 / NR };
_Static_assert((int)NR <= (int)ATTN_KEY_SLACK, "tile_mm reads transposed keys in blocks of NR");

static size_t align16(size_t n) { return (n + 15) / 16 * 16; }  // floats: keeps 64-byte alignment
static int min_i(int a, int b) { return a < b ? a : b; }

/* c[ii] += A[ii*ars + r*acs] * b for ii < mr: step r of micro_tile. */
static inline __attribute__((always_inline)) void fma_rows(const int mr, vfloat c[MR][NV],
                                                           const float *A, long ars, long acs,
                                                           int r, const vfloat b[NV]) {
    for (int ii = 0; ii < mr; ii++) {
        vfloat a = vf_splat(A[ii * ars + r * acs]);
        for (int v = 0; v < NV; v++) c[ii][v] += a * b[v];
    }
}

/* acc[ii] (ii < mr) = sum over r < k, in order, of A[ii*ars + r*acs] * B[r*ldb + 0..NR), where
 * only the first nb < NR columns of B are read when nb < NR (the others count as 0). The sums
 * run in a local tile, which the compiler keeps in registers, and whole or partial loads of B
 * in loops of their own. */
static inline __attribute__((always_inline)) void micro_tile(const int mr, vfloat acc[MR][NV],
                                                             int k, const float *A, long ars,
                                                             long acs, const float *B, long ldb,
                                                             int nb) {
    vfloat c[MR][NV], b[NV];
    for (int ii = 0; ii < mr; ii++)
        for (int v = 0; v < NV; v++) c[ii][v] = (vfloat){0};
    if (nb >= NR) {
        for (int r = 0; r < k; r++) {
            for (int v = 0; v < NV; v++) b[v] = vf_load(B + r * ldb + v * VF_LANES);
            fma_rows(mr, c, A, ars, acs, r, b);
        }
    } else {  // the last columns of an unpadded B
        int lanes[NV];
        for (int v = 0; v < NV; v++)
            lanes[v] = nb <= v * VF_LANES ? 0 : min_i(VF_LANES, nb - v * VF_LANES);
        for (int r = 0; r < k; r++) {
            for (int v = 0; v < NV; v++)
                b[v] = vf_load_partial(B + r * ldb + v * VF_LANES, lanes[v]);
            fma_rows(mr, c, A, ars, acs, r, b);
        }
    }
    for (int ii = 0; ii < mr; ii++)
        for (int v = 0; v < NV; v++) acc[ii][v] = c[ii][v];
}

/* acc (RB * NR) = sum over r < k, in order, of A[r*acs] * B[r*ldb + 0..RB*NR): one row against
 * RB column blocks at once. A lone row's sums are chains of dependent FMAs; RB of them interleave
 * (the decoder's queries come one row per sentence). Each element is summed as micro_tile sums
 * it. */
static inline __attribute__((always_inline)) void micro_row(vfloat acc[RB * NV], int k,
                                                            const float *A, long acs,
                                                            const float *B, long ldb) {
    vfloat c[RB * NV];  // local, as in micro_tile
    for (int v = 0; v < RB * NV; v++) c[v] = (vfloat){0};
    for (int r = 0; r < k; r++) {
        const float *br = B + r * ldb;
        vfloat a = vf_splat(A[r * acs]);
        for (int v = 0; v < RB * NV; v++) c[v] += a * vf_load(br + v * VF_LANES);
    }
    for (int v = 0; v < RB * NV; v++) acc[v] = c[v];
}

/* c[0..w) = alpha * acc (nv vectors, w <= nv * VF_LANES), or += when add. */
static inline __attribute__((always_inline)) void store_row(float *c, const vfloat *acc, int nv,
                                                            int w, float alpha, bool add) {
    for (int v = 0; v < nv; v++) {
        const int j0 = v * VF_LANES, lanes = min_i(VF_LANES, w - j0);
        if (lanes <= 0) break;
        vfloat x = acc[v] * alpha;
        if (lanes == VF_LANES) {
            if (add) x += vf_load(c + j0);
            memcpy(c + j0, &x, sizeof(vfloat));
        } else {
            if (add) x += vf_load_partial(c + j0, lanes);
            vf_store_partial(c + j0, x, lanes);
        }
    }
}

/* C (m, n) = alpha * A B, or += when add. A (m, k) is read as A[i*ars + r*acs] (either layout),
 * B (k, n) has rows ldb apart of which nb >= n columns may be read (padding B to whole NR-column
 * blocks keeps every load whole), C has rows ldc apart. */
static void tile_mm(int m, int n, int k, float alpha, const float *A, long ars, long acs,
                    const float *B, long ldb, int nb, float *C, long ldc, bool add) {
    // rows in near-equal tiles of at most MR (25 rows: 7 + 6 + 6 + 6, not 8 + 8 + 8 + 1, whose
    // lone row would be a chain of dependent FMAs); a lone row is left only when m is 1
    const int tiles = (m + MR - 1) / MR;
    for (int t = 0, i0 = 0; t < tiles; t++) {
        const int mr = (int)((long)m * (t + 1) / tiles) - i0;
        const float *Ai = A + i0 * ars;
        int j0 = 0;
        if (mr == 1)
            for (; j0 + RB * NR <= nb && j0 < n; j0 += RB * NR) {
                vfloat acc[RB * NV];
                micro_row(acc, k, Ai, acs, B + j0, ldb);
                store_row(C + i0 * ldc + j0, acc, RB * NV, min_i(RB * NR, n - j0), alpha, add);
            }
        for (; j0 < n; j0 += NR) {
            vfloat acc[MR][NV];
            const float *Bj = B + j0;
            switch (mr) {  // (cases above MR never occur; they compile to MR's tile)
#define TILE_CASE(r) \
    case r: micro_tile(r <= MR ? r : MR, acc, k, Ai, ars, acs, Bj, ldb, nb - j0); break;
                TILE_CASE(8) TILE_CASE(7) TILE_CASE(6) TILE_CASE(5)
                TILE_CASE(4) TILE_CASE(3) TILE_CASE(2)
#undef TILE_CASE
            default: micro_tile(1, acc, k, Ai, ars, acs, Bj, ldb, nb - j0); break;
            }
            const int w = min_i(NR, n - j0);
            for (int ii = 0; ii < mr; ii++)
                store_row(C + (i0 + ii) * ldc + j0, acc[ii], NV, w, alpha, add);
        }
        i0 += mr;
    }
}

typedef float quad __attribute__((vector_size(16)));  // 4 floats, on every target

static inline quad quad_load(const float *p) {
    quad v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* t (w, ld) = x^T for x (n, w) with rows ldx apart; columns n..ld of t are zeroed. Whole 4 x 4
 * blocks are transposed in registers: 4 loads, 8 shuffles and 4 stores for 16 elements. */
static void transpose_pad(float *t, int ld, const float *x, long ldx, int n, int w) {
    for (int r = 0; r < w; r++) memset(t + (size_t)r * ld + n, 0, sizeof(float) * (ld - n));
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        const float *xj = x + j * ldx;  // (4, w): keys j..j+3
        int r = 0;
        for (; r + 4 <= w; r += 4) {
            quad a = quad_load(xj + r), b = quad_load(xj + ldx + r);
            quad c = quad_load(xj + 2 * ldx + r), d = quad_load(xj + 3 * ldx + r);
            quad ab01 = __builtin_shufflevector(a, b, 0, 4, 1, 5);  // a0 b0 a1 b1
            quad ab23 = __builtin_shufflevector(a, b, 2, 6, 3, 7);
            quad cd01 = __builtin_shufflevector(c, d, 0, 4, 1, 5);
            quad cd23 = __builtin_shufflevector(c, d, 2, 6, 3, 7);
            quad col[4] = {__builtin_shufflevector(ab01, cd01, 0, 1, 4, 5),   // a0 b0 c0 d0
                           __builtin_shufflevector(ab01, cd01, 2, 3, 6, 7),   // a1 b1 c1 d1
                           __builtin_shufflevector(ab23, cd23, 0, 1, 4, 5),
                           __builtin_shufflevector(ab23, cd23, 2, 3, 6, 7)};
            for (int q = 0; q < 4; q++) memcpy(t + (size_t)(r + q) * ld + j, &col[q], sizeof(quad));
        }
        for (; r < w; r++)
            for (int q = 0; q < 4; q++) t[(size_t)r * ld + j + q] = xj[q * ldx + r];
    }
    for (; j < n; j++)
        for (int r = 0; r < w; r++) t[(size_t)r * ld + j] = x[j * ldx + r];
}

/* One thread's tiles; ld = Tk rounded up to NR. */
typedef struct CoreTiles {
    float *kt;  // (W, ld) the head's keys transposed
    float *vt;  // (Dh, ld) the head's values transposed (backward)
    float *f;   // (rows, Tk) a block's dropout factors (with dropout on)
    float *pd;  // (rows, ld) a block's dropped probabilities
    float *ds;  // (rows, ld) their gradient, then the scores' (backward)
    float *qm;  // (rows, W) the head's queries when the mode mixes them
    float *gq;  // (rows, W) the gradient of the head's queries (backward)
} CoreTiles;

/* Workspace of attention_core: the threads' tiles, then per-sentence parameter gradients. */
typedef struct CoreWork {
    float *tiles;  // (nthreads, tile_floats)
    float *sent;   // (B, impl->sentence_floats)
    size_t tile_floats;
} CoreWork;

static size_t tiles_layout(CoreTiles *t, float *base, const AttnDims *d, int Tq, int Tk) {
    const size_t ld = align16(Tk), rows = min_i(ROWS, Tq);
    size_t sizes[] = {d->W * ld, d->Dh * ld, rows * Tk,  rows * ld,
                      rows * ld, rows * d->W, rows * d->W};
    float **slots[] = {&t->kt, &t->vt, &t->f, &t->pd, &t->ds, &t->qm, &t->gq};
    size_t at = 0;
    for (int i = 0; i < 7; i++) {
        *slots[i] = base ? base + at : NULL;
        at += align16(sizes[i]);
    }
    return at;
}

static size_t core_layout(CoreWork *w, float *base, const Attention *a, int B, int Tq, int Tk,
                          int nthreads) {
    CoreTiles unused;
    size_t tile = tiles_layout(&unused, NULL, &a->d, Tq, Tk), all = nthreads * tile;
    if (w) w->tiles = base, w->sent = base ? base + all : NULL, w->tile_floats = tile;
    return all + align16((size_t)B * a->impl->sentence_floats(&a->d));
}

static CoreTiles thread_tiles(const CoreWork *w, const AttnDims *d, int Tq, int Tk) {
    CoreTiles t;
    tiles_layout(&t, w->tiles + (size_t)omp_get_thread_num() * w->tile_floats, d, Tq, Tk);
    return t;
}

size_t attention_core_work_floats(const Attention *a, int B, int Tq, int Tk, int nthreads) {
    return core_layout(NULL, NULL, a, B, Tq, Tk, nthreads);
}

/* Workspace of forward and backward: the gradient buffers, then attention_core's workspace. */
typedef struct AttnWork {
    float *o;        // (B, Tq, D) the heads' outputs
    float *d_o;      // (B, Tq, D)
    float *dq, *dk;  // (B, Tq, W), (B, Tk, W)
    float *dv;       // (B, Tk, D)
    float *dcs;      // (B, Tk, H)
    float *core;
} AttnWork;

static size_t work_layout(AttnWork *w, float *base, const Attention *a, int B, int Tq, int Tk,
                          int nthreads) {
    AttnWork unused;
    if (!w) w = &unused;  // measuring only
    const AttnDims *d = &a->d;
    size_t sizes[] = {(size_t)B * Tq * d->D, (size_t)B * Tq * d->D, (size_t)B * Tq * d->W,
                      (size_t)B * Tk * d->W, (size_t)B * Tk * d->D, (size_t)B * Tk * d->H};
    float **slots[] = {&w->o, &w->d_o, &w->dq, &w->dk, &w->dv, &w->dcs};
    size_t at = 0;
    for (int i = 0; i < 6; i++) {
        *slots[i] = base ? base + at : NULL;
        at += align16(sizes[i]);
    }
    w->core = base ? base + at : NULL;
    return at + core_layout(NULL, NULL, a, B, Tq, Tk, nthreads);
}

size_t attention_work_floats(const Attention *a, int B, int Tq, int Tk, int nthreads) {
    return work_layout(NULL, NULL, a, B, Tq, Tk, nthreads);
}

void attention_project_q(const Ctx *c, const Attention *a, float *q, const float *xq, int Nq) {
    linear_forward(c, q, xq, a->p.w_q, a->p.b_q, Nq, a->d.D, a->d.W);
}

void attention_project_kv(const Ctx *c, const Attention *a, float *k, float *v, float *cs,
                          const float *xkv, int Nk) {
    linear_forward(c, k, xkv, a->p.w_k, a->p.b_k, Nk, a->d.D, a->d.W);
    linear_forward(c, v, xkv, a->p.w_v, a->p.b_v, Nk, a->d.D, a->d.D);
    if (a->impl->kv_extra_forward) a->impl->kv_extra_forward(c, &a->d, &a->p, cs, xkv, Nk);
}

static int visible_keys(AttnMask m, int b, int q, int Tk) {
    int n = m.kv_len ? m.kv_len[b] : Tk;
    if (m.causal && q + m.q_offset + 1 < n) n = q + m.q_offset + 1;
    return n < Tk ? n : Tk;
}

/* Row softmax over the first n entries of s (length Tk); the rest become 0. */
static void softmax_prefix(float *s, int n, int Tk) {
    float sum = n ? vec_exp_shift(s, n, vec_max(s, n)) : 0.0f;
    float inv = n ? 1.0f / sum : 0.0f;
#pragma omp simd
    for (int k = 0; k < n; k++) s[k] *= inv;
    for (int k = n; k < Tk; k++) s[k] = 0.0f;
}

/* A block's dropped probabilities (rb, nk), rows *ldp apart: pi (rows Tk apart) itself without
 * dropout, else pi times the mask regenerated from index `first` (of pi's first element) in the
 * thread's tile. The block's factors are made at once, in index order (its rows are Tk apart in
 * the mask as in pi), and stay in t->f for backward. Forward and backward both read them from
 * here, so their masks agree. */
static const float *dropped_block(const CoreTiles *t, const float *pi, int rb, int nk, int Tk,
                                  uint64_t first, const Dropout *drop, long *ldp) {
    *ldp = Tk;
    if (!drop->key) return pi;
    const int ld = (int)align16(Tk);
    const long n = (long)(rb - 1) * Tk + nk;  // up to the last row's last visible key
    for (long c0 = 0; c0 < n; c0 += DROPOUT_CHUNK)
        dropout_factors(t->f + c0, first + (uint64_t)c0, dropout_chunk_len(c0, n), drop);
    for (int i = 0; i < rb; i++) {
        const float *fi = t->f + (size_t)i * Tk, *p_i = pi + (size_t)i * Tk;
        float *pdi = t->pd + (size_t)i * ld;
#pragma omp simd
        for (int j = 0; j < nk; j++) pdi[j] = p_i[j] * fi[j];
    }
    *ldp = ld;
    return t->pd;
}

/* The lines of `rows` rows of n floats from p, rows ld floats apart. Always inlined: GCC drops
 * calls to a function made only of prefetches. */
static inline __attribute__((always_inline)) void prefetch_rows(const float *p, long ld, int rows,
                                                                int n) {
    for (int r = 0; r < rows; r++) {
        for (int o = 0; o < n; o += 16) __builtin_prefetch(p + r * ld + o);
        __builtin_prefetch(p + r * ld + n - 1);
    }
}

/* What the core reads and writes of the (sentence, head) after (b, h), the next one of this
 * thread's but at the end of its share: its slices of q, k (the head's span, Tk keys), v, o, p
 * and, in backward, d_o (NULL in forward), which the projections or the rest of the step left out
 * of cache, prefetched while (b, h) runs. The activations are laid out as attention_core takes
 * them: q (B, Tq, W), k (B, kvs, W) or transposed (B, W, kvs), v (B, kvs, D), o and d_o
 * (B, Tq, D), p (B, H, Tq, Tk). */
static void prefetch_next_head(const Attention *a, int b, int h, int B, int Tq, int Tk, int kvs,
                               const float *q, const float *k, bool k_transposed,
                               const float *v, const float *o, const float *d_o,
                               const float *p) {
    const AttnDims *d = &a->d;
    if (++h == d->H) h = 0, b++;
    if (b == B) return;
    const size_t head = (size_t)h * d->Dh;
    int col, width;
    a->impl->head_span(d, h, &col, &width);
    prefetch_rows(q + (size_t)b * Tq * d->W + col, d->W, Tq, width);
    if (k_transposed)
        prefetch_rows(k + ((size_t)b * d->W + col) * kvs, kvs, width, Tk);
    else
        prefetch_rows(k + (size_t)b * kvs * d->W + col, d->W, Tk, width);
    prefetch_rows(v + (size_t)b * kvs * d->D + head, d->D, Tk, d->Dh);
    prefetch_rows(o + (size_t)b * Tq * d->D + head, d->D, Tq, d->Dh);
    if (d_o) prefetch_rows(d_o + (size_t)b * Tq * d->D + head, d->D, Tq, d->Dh);
    prefetch_rows(p + ((size_t)b * d->H + h) * Tq * Tk, 0, 1, Tq * Tk);
}

/* The (sentence, head) tasks of attention_core. */
typedef struct CoreForward {
    const Attention *a;
    const CoreWork *w;
    Dropout drop;
    float *o, *p;                 // (B, Tq, D), (B, H, Tq, Tk)
    const float *q, *k, *v, *cs;  // as attention_core takes them
    bool k_transposed;
    AttnMask mask;
    int B, Tq, Tk, kvs;
} CoreForward;

/* Tasks [n0, n1) of attention_core, task n = b * H + h the head h of sentence b. */
static void core_forward_tasks(void *arg, int n0, int n1) {
    const CoreForward *f = arg;
    const Attention *a = f->a;
    const AttnDims *d = &a->d;
    const int H = d->H, D = d->D, Dh = d->Dh, W = d->W, Tq = f->Tq, Tk = f->Tk, kvs = f->kvs;
    const int ld = (int)align16(Tk);
    const float *q = f->q, *k = f->k;
    CoreTiles t = thread_tiles(f->w, d, Tq, Tk);
    // the sentence and first column of the keys t.kt holds (a mode's span width follows from its
    // column): heads that share a span, as all of collab's do, transpose it once
    int held_b = -1, held_col = -1;
    for (int n = n0; n < n1; n++) {
        const int b = n / H, h = n % H;
        prefetch_next_head(a, b, h, f->B, Tq, Tk, kvs, q, k, f->k_transposed, f->v, f->o, NULL,
                           f->p);
        int col, width;
        a->impl->head_span(d, h, &col, &width);
        const float *kt = t.kt;  // (width, Tk) the head's keys transposed, rows ldk apart
        long ldk = ld;
        if (f->k_transposed)
            kt = k + ((size_t)b * W + col) * kvs, ldk = kvs;
        else if (b != held_b || col != held_col) {
            transpose_pad(t.kt, ld, k + (size_t)b * kvs * W + col, W, Tk, width);
            held_b = b, held_col = col;
        }
        const float *vh = f->v + (size_t)b * kvs * D + h * Dh;  // (Tk, Dh), rows D apart
        const float *csh = f->cs + (size_t)b * kvs * H + h;    // (Tk), H apart
        uint64_t first = ((uint64_t)b * H + h) * Tq * Tk;      // mask index of p[b, h, 0, 0]
        for (int i0 = 0; i0 < Tq; i0 += ROWS) {
            const int rb = min_i(ROWS, Tq - i0);
            const int nk = visible_keys(f->mask, b, i0 + rb - 1, Tk);
            float *pi = f->p + ((size_t)b * H + h) * Tq * Tk + (size_t)i0 * Tk;  // (rb, Tk)
            const float *qh =
                a->impl->head_queries(d, &a->p, t.qm, q + ((size_t)b * Tq + i0) * W, rb, h);
            // keys read in place: in whole NR blocks (ATTN_KEY_SLACK); t.kt is padded
            tile_mm(rb, nk, width, d->scale, qh, W, 1, kt, ldk,
                    f->k_transposed ? (nk + NR - 1) / NR * NR : ld, pi, Tk, false);
            for (int i = 0; i < rb; i++) {
                float *row = pi + (size_t)i * Tk;
                if (a->p.u)  // the content term of collab's key-side bias
                    for (int j = 0; j < nk; j++) row[j] += d->scale * csh[(size_t)j * H];
                softmax_prefix(row, visible_keys(f->mask, b, i0 + i, Tk), Tk);
            }
            long ldp;
            const float *pd =
                dropped_block(&t, pi, rb, nk, Tk, first + (uint64_t)i0 * Tk, &f->drop, &ldp);
            tile_mm(rb, Dh, nk, 1.0f, pd, ldp, 1, vh, D, Dh,
                    f->o + ((size_t)b * Tq + i0) * D + h * Dh, D, false);
        }
    }
}

void attention_core(const Ctx *c, const Attention *a, float *o, float *p, const float *q,
                    const float *k, bool k_transposed, const float *v, const float *cs,
                    AttnMask mask, int B, int Tq, int Tk, int kvs, float *work) {
    const AttnDims *d = &a->d;
    CoreWork w;
    core_layout(&w, work, a, B, Tq, Tk, omp_get_max_threads());
    CoreForward f = {a,   &w, dropout_make(c, d->dropout, a->site), o, p, q, k, v, cs,
                     k_transposed, mask, B, Tq, Tk, kvs};
    shares_for(B * d->H, 1, (long)B * d->H * Tq * Tk * d->Dh >= OMP_MIN_WORK, core_forward_tasks,
               &f);
}

/* The sentence tasks of core_backward. */
typedef struct CoreBackward {
    const Attention *a;
    const AttnCache *s;
    const AttnWork *w;
    const CoreWork *cw;
    Dropout drop;
    AttnMask mask;
    int B, Tq, Tk;
} CoreBackward;

/* Sentences [b0, b1) of core_backward. */
static void core_backward_sentences(void *arg, int b0, int b1) {
    const CoreBackward *cb = arg;
    const Attention *a = cb->a;
    const AttnCache *s = cb->s;
    const AttnWork *w = cb->w;
    const AttnDims *d = &a->d;
    const int H = d->H, D = d->D, Dh = d->Dh, W = d->W, B = cb->B, Tq = cb->Tq, Tk = cb->Tk;
    const int ld = (int)align16(Tk);
    const size_t sf = a->impl->sentence_floats(d);
    const AttnMask mask = cb->mask;
    const Dropout drop = cb->drop;
    CoreTiles t = thread_tiles(cb->cw, d, Tq, Tk);
    for (int b = b0; b < b1; b++) {
        float *sent = cb->cw->sent + (size_t)b * sf;
        memset(sent, 0, sizeof(float) * sf);
        memset(w->dq + (size_t)b * Tq * W, 0, sizeof(float) * Tq * W);
        memset(w->dk + (size_t)b * Tk * W, 0, sizeof(float) * Tk * W);
        memset(w->dv + (size_t)b * Tk * D, 0, sizeof(float) * Tk * D);
        memset(w->dcs + (size_t)b * Tk * H, 0, sizeof(float) * Tk * H);
        const float *qb = s->q + (size_t)b * Tq * W;  // (Tq, W)
        for (int h = 0; h < H; h++) {
            prefetch_next_head(a, b, h, B, Tq, Tk, Tk, s->q, s->k, false, s->v, w->o, w->d_o,
                               s->p);
            int col, width;
            a->impl->head_span(d, h, &col, &width);
            const float *vh = s->v + (size_t)b * Tk * D + h * Dh;  // (Tk, Dh), rows D apart
            const float *kh = s->k + (size_t)b * Tk * W + col;     // (Tk, width), rows W apart
            float *dvh = w->dv + (size_t)b * Tk * D + h * Dh, *dkh = w->dk + (size_t)b * Tk * W + col;
            float *dcsh = w->dcs + (size_t)b * Tk * H + h;         // (Tk), H apart
            transpose_pad(t.vt, ld, vh, D, Tk, Dh);
            uint64_t first = ((uint64_t)b * H + h) * Tq * Tk;
            for (int i0 = 0; i0 < Tq; i0 += ROWS) {
                const int rb = min_i(ROWS, Tq - i0), nk = visible_keys(mask, b, i0 + rb - 1, Tk);
                const float *pi = s->p + ((size_t)b * H + h) * Tq * Tk + (size_t)i0 * Tk;
                long ldp;
                const float *pd =
                    dropped_block(&t, pi, rb, nk, Tk, first + (uint64_t)i0 * Tk, &drop, &ldp);
                const size_t ro = (size_t)b * Tq + i0;        // first row of the block
                const float *doh = w->d_o + ro * D + h * Dh;  // (rb, Dh), rows D apart
                // o = pd v (for dW_o) ;  d pd = d_o v^T ;  dv += pd^T d_o
                tile_mm(rb, Dh, nk, 1.0f, pd, ldp, 1, vh, D, Dh, w->o + ro * D + h * Dh, D, false);
                tile_mm(rb, nk, Dh, 1.0f, doh, D, 1, t.vt, ld, ld, t.ds, ld, false);
                tile_mm(nk, Dh, rb, 1.0f, pd, 1, ldp, doh, D, Dh, dvh, D, true);
                // through dropout (the block's factors in t.f), then softmax:
                // dS = p * (dp - rowsum(dp * p)); masked p are 0
                for (int i = 0; i < rb; i++) {
                    const float *p_i = pi + (size_t)i * Tk, *fi = t.f + (size_t)i * Tk;
                    float *dsi = t.ds + (size_t)i * ld;
                    if (drop.key)
#pragma omp simd
                        for (int j = 0; j < nk; j++) dsi[j] *= fi[j];
                    const float dot = vec_dot(dsi, p_i, nk);
#pragma omp simd
                    for (int j = 0; j < nk; j++) dsi[j] = p_i[j] * (dsi[j] - dot);
                    if (a->p.u)
                        for (int j = 0; j < nk; j++) dcsh[(size_t)j * H] += d->scale * dsi[j];
                }
                // S = scale q^ k^T:  gq = scale dS k^ ;  dk^ += scale dS^T q^
                const float *qrows = qb + (size_t)i0 * W;
                const float *qh = a->impl->head_queries(d, &a->p, t.qm, qrows, rb, h);
                tile_mm(rb, width, nk, d->scale, t.ds, ld, 1, kh, W, width, t.gq, W, false);
                a->impl->head_queries_backward(d, &a->p, w->dq + ro * W, sent, t.gq, qrows, rb, h);
                tile_mm(nk, width, rb, d->scale, t.ds, 1, ld, qh, W, width, dkh, W, true);
            }
        }
    }
}

/* The core's backward from d_o (B, Tq, D): o (B, Tq, D) recomputed, and dq, dk, dv, dcs and the
 * per-sentence parameter gradients written. One task per sentence: it zeroes the sentence's rows
 * of them, then its heads add into them (in collab they share the rows of dq and dk). */
static void core_backward(const Ctx *c, const Attention *a, const AttnCache *s, const AttnWork *w,
                          AttnMask mask, int B, int Tq, int Tk) {
    const AttnDims *d = &a->d;
    CoreWork cw;
    core_layout(&cw, w->core, a, B, Tq, Tk, omp_get_max_threads());
    CoreBackward cb = {a, s, w, &cw, dropout_make(c, d->dropout, a->site), mask, B, Tq, Tk};
    shares_for(B, 1, (long)B * d->H * Tq * Tk * d->Dh >= OMP_MIN_WORK, core_backward_sentences,
               &cb);
    if (a->impl->sentence_grads_finish) a->impl->sentence_grads_finish(d, &a->g, cw.sent, B);
}

/* Adds the wall time since t0 to the core's clock, if it has one. */
static void core_clock(const Attention *a, double t0) {
    if (a->core_seconds) *a->core_seconds += now_seconds() - t0;
}

void attention_forward(const Ctx *c, const Attention *a, AttnCache *s, float *out,
                       const float *xq, const float *xkv, AttnMask mask, int B, int Tq, int Tk,
                       float *work) {
    attention_project_q(c, a, s->q, xq, B * Tq);
    attention_project_kv(c, a, s->k, s->v, s->cs, xkv, B * Tk);
    AttnWork w;
    work_layout(&w, work, a, B, Tq, Tk, omp_get_max_threads());
    double t0 = now_seconds();
    attention_core(c, a, w.o, s->p, s->q, s->k, false, s->v, s->cs, mask, B, Tq, Tk, Tk, w.core);
    core_clock(a, t0);
    linear_forward(c, out, w.o, a->p.w_o, a->p.b_o, B * Tq, a->d.D, a->d.D);
}

void attention_backward(const Ctx *c, const Attention *a, const AttnCache *s, float *dxq,
                        float beta_q, float *dxkv, const float *dout, const float *xq,
                        const float *xkv, AttnMask mask, int B, int Tq, int Tk, float *work) {
    const AttnDims *d = &a->d;
    const AttnParams *p = &a->p;
    const AttnParams *g = &a->g;
    const int D = d->D, W = d->W;
    AttnWork w;
    work_layout(&w, work, a, B, Tq, Tk, omp_get_max_threads());
    // out = o W_o^T + b_o: d_o = dout W_o now; dW_o once the core has recomputed o
    c->gemm->sgemm(false, false, B * Tq, D, D, 1.0f, dout, D, p->w_o, D, 0.0f, w.d_o, D);
    double t0 = now_seconds();
    core_backward(c, a, s, &w, mask, B, Tq, Tk);
    core_clock(a, t0);
    c->gemm->sgemm(true, false, D, D, B * Tq, 1.0f, dout, D, w.o, D, 1.0f, g->w_o, D);
    colsum_add(g->b_o, dout, B * Tq, D);
    linear_backward(c, dxq, beta_q, g->w_q, g->b_q, w.dq, xq, p->w_q, B * Tq, D, W);
    if (a->impl->kv_extra_backward)
        a->impl->kv_extra_backward(c, d, p, &a->g, dxkv, w.dcs, xkv, B * Tk);
    linear_backward(c, dxkv, 1.0f, g->w_k, g->b_k, w.dk, xkv, p->w_k, B * Tk, D, W);
    linear_backward(c, dxkv, 1.0f, g->w_v, g->b_v, w.dv, xkv, p->w_v, B * Tk, D, D);
}
