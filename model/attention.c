/* attention.c: the shared half of multi-head attention (attention.h): projections, masking,
 * softmax, dropout on the probabilities, P·V and the output projection, forward and backward.
 * Per (sentence, head) work runs in parallel with sgemm_serial inside; every task writes its own
 * head slice, so nothing races and the result does not depend on the number of threads. */
#include "attention.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "check.h"
#include "rng.h"
#include "timer.h"
#include "vecmath.h"

const AttnImpl *attn_impl_lookup(const char *name) {
    if (!strcmp(name, "concat")) return &attn_concat;
    if (!strcmp(name, "collab")) return &attn_collab;
    return NULL;
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

/* Workspace of attention_core: per-thread probability tiles, then the AttnImpl's own. */
typedef struct CoreWork {
    float *tile;  // (nthreads, 2, Tq, Tk)
    float *impl;
} CoreWork;

static size_t align16(size_t n) { return (n + 15) / 16 * 16; }  // floats: keeps 64-byte alignment

static size_t core_layout(CoreWork *w, float *base, const Attention *a, int B, int Tq, int Tk,
                          int nthreads) {
    size_t tile = align16((size_t)nthreads * 2 * Tq * Tk);
    if (w) w->tile = base, w->impl = base ? base + tile : NULL;  // NULL: measuring only
    return tile + align16(a->impl->work_floats(&a->d, B, Tq, Tk, nthreads));
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
    float *dS;       // (B, H, Tq, Tk)
    CoreWork core;
} AttnWork;

static size_t work_layout(AttnWork *w, float *base, const Attention *a, int B, int Tq, int Tk,
                          int nthreads) {
    AttnWork unused;
    if (!w) w = &unused;  // measuring only
    const AttnDims *d = &a->d;
    size_t sizes[] = {(size_t)B * Tq * d->D, (size_t)B * Tq * d->D, (size_t)B * Tq * d->W,
                      (size_t)B * Tk * d->W, (size_t)B * Tk * d->D, (size_t)B * Tk * d->H,
                      (size_t)B * d->H * Tq * Tk};
    float **slots[] = {&w->o, &w->d_o, &w->dq, &w->dk, &w->dv, &w->dcs, &w->dS};
    size_t at = 0;
    for (int i = 0; i < 7; i++) {
        *slots[i] = base ? base + at : NULL;
        at += align16(sizes[i]);
    }
    return at + core_layout(&w->core, base ? base + at : NULL, a, B, Tq, Tk, nthreads);
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

/* out[e] = p[e] * mask(first + e): the dropped probabilities of one (sentence, head). */
static void dropout_tile(float *out, const float *p, size_t n, uint64_t first, const Dropout *d) {
    for (size_t e = 0; e < n; e++) out[e] = p[e] * dropout_factor(d, first + e);
}

/* Row softmax over the first n entries of s (length Tk); the rest become 0. */
static void softmax_prefix(float *s, int n, int Tk) {
    float sum = n ? vec_exp_shift(s, n, vec_max(s, n)) : 0.0f;
    float inv = n ? 1.0f / sum : 0.0f;
#pragma omp simd
    for (int k = 0; k < n; k++) s[k] *= inv;
    for (int k = n; k < Tk; k++) s[k] = 0.0f;
}

void attention_core(const Ctx *c, const Attention *a, float *o, float *p, const float *q,
                    const float *k, const float *v, const float *cs, AttnMask mask, int B, int Tq,
                    int Tk, int kvs, float *work) {
    const AttnDims *d = &a->d;
    const int H = d->H, D = d->D, Dh = d->Dh;
    int nthreads = omp_get_max_threads();
    CoreWork w;
    core_layout(&w, work, a, B, Tq, Tk, nthreads);
    a->impl->scores_forward(c, d, &a->p, p, q, k, cs, B, Tq, Tk, kvs, w.impl);
    Dropout drop = dropout_make(c, d->dropout, a->site);
#pragma omp parallel for collapse(2) schedule(static) if ((long)B * H * Tq * Tk * Dh >= OMP_MIN_WORK)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            float *pb = p + ((size_t)b * H + h) * Tq * Tk;  // (Tq, Tk)
            for (int i = 0; i < Tq; i++) softmax_prefix(pb + (size_t)i * Tk, visible_keys(mask, b, i, Tk), Tk);
            const float *pd = pb;
            if (drop.key) {  // dropped-out copy in this thread's tile; p keeps the probabilities
                float *tile = w.tile + (size_t)omp_get_thread_num() * 2 * Tq * Tk;
                dropout_tile(tile, pb, (size_t)Tq * Tk, ((uint64_t)b * H + h) * Tq * Tk, &drop);
                pd = tile;
            }
            c->gemm->sgemm_serial(false, false, Tq, Dh, Tk, 1.0f, pd, Tk,
                                  v + (size_t)b * kvs * D + h * Dh, D, 0.0f,
                                  o + (size_t)b * Tq * D + h * Dh, D);
        }
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
    attention_core(c, a, w.o, s->p, s->q, s->k, s->v, s->cs, mask, B, Tq, Tk, Tk, w.core.tile);
    core_clock(a, t0);
    linear_forward(c, out, w.o, a->p.w_o, a->p.b_o, B * Tq, a->d.D, a->d.D);
}

void attention_backward(const Ctx *c, const Attention *a, const AttnCache *s, float *dxq,
                        float *dxkv, const float *dout, const float *xq, const float *xkv,
                        AttnMask mask, int B, int Tq, int Tk, float *work) {
    const AttnDims *d = &a->d;
    const AttnParams *p = &a->p;
    const AttnParams *g = &a->g;
    const int H = d->H, D = d->D, Dh = d->Dh, W = d->W;
    int nthreads = omp_get_max_threads();
    AttnWork w;
    work_layout(&w, work, a, B, Tq, Tk, nthreads);
    memset(w.dq, 0, sizeof(float) * B * Tq * W);
    memset(w.dk, 0, sizeof(float) * B * Tk * W);
    memset(w.dv, 0, sizeof(float) * B * Tk * D);
    memset(w.dcs, 0, sizeof(float) * B * Tk * H);
    // out = o W_o^T + b_o: d_o = dout W_o now; dW_o once the loop has recomputed o
    c->gemm->sgemm(false, false, B * Tq, D, D, 1.0f, dout, D, p->w_o, D, 0.0f, w.d_o, D);
    Dropout drop = dropout_make(c, d->dropout, a->site);
    double t0 = now_seconds();
#pragma omp parallel for collapse(2) schedule(static) if ((long)B * H * Tq * Tk * Dh >= OMP_MIN_WORK)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const float *pb = s->p + ((size_t)b * H + h) * Tq * Tk;  // (Tq, Tk)
            float *tile = w.core.tile + (size_t)omp_get_thread_num() * 2 * Tq * Tk;
            float *dpd = tile + (size_t)Tq * Tk;  // d(dropped probabilities) (Tq, Tk)
            uint64_t base = ((uint64_t)b * H + h) * Tq * Tk;
            const float *pd = pb;
            if (drop.key) {  // regenerate the forward's dropped probabilities
                dropout_tile(tile, pb, (size_t)Tq * Tk, base, &drop);
                pd = tile;
            }
            const float *do_bh = w.d_o + (size_t)b * Tq * D + h * Dh;  // (Tq, Dh), ld D
            const float *v_bh = s->v + (size_t)b * Tk * D + h * Dh;    // (Tk, Dh), ld D
            c->gemm->sgemm_serial(false, false, Tq, Dh, Tk, 1.0f, pd, Tk, v_bh, D, 0.0f,
                                  w.o + (size_t)b * Tq * D + h * Dh, D);
            // o = pd v  =>  d pd = d_o v^T ;  dv += pd^T d_o
            c->gemm->sgemm_serial(false, true, Tq, Tk, Dh, 1.0f, do_bh, D, v_bh, D, 0.0f, dpd, Tk);
            c->gemm->sgemm_serial(true, false, Tk, Dh, Tq, 1.0f, pd, Tk, do_bh, D, 1.0f,
                                  w.dv + (size_t)b * Tk * D + h * Dh, D);
            // through dropout, then softmax: dS = p * (dp - rowsum(dp * p))
            float *ds = w.dS + ((size_t)b * H + h) * Tq * Tk;
            for (int i = 0; i < Tq; i++) {
                const float *pi = pb + (size_t)i * Tk;
                float *dpi = dpd + (size_t)i * Tk, *dsi = ds + (size_t)i * Tk;
                if (drop.key)
                    for (int k = 0; k < Tk; k++) dpi[k] *= dropout_factor(&drop, base + (size_t)i * Tk + k);
                double dot = 0.0;
                for (int k = 0; k < Tk; k++) dot += (double)dpi[k] * pi[k];
                for (int k = 0; k < Tk; k++) dsi[k] = pi[k] * (dpi[k] - (float)dot);
            }
        }
    (void)mask;  // masked entries have p = 0, hence dS = 0: the mask needs no backward
    core_clock(a, t0);
    c->gemm->sgemm(true, false, D, D, B * Tq, 1.0f, dout, D, w.o, D, 1.0f, g->w_o, D);
    colsum_add(g->b_o, dout, B * Tq, D);
    t0 = now_seconds();
    a->impl->scores_backward(c, d, p, &a->g, w.dq, w.dk, w.dcs, w.dS, s->q, s->k, B, Tq, Tk, Tk,
                             w.core.impl);
    core_clock(a, t0);
    if (a->impl->kv_extra_backward)
        a->impl->kv_extra_backward(c, d, p, &a->g, dxkv, w.dcs, xkv, B * Tk);
    linear_backward(c, dxq, g->w_q, g->b_q, w.dq, xq, p->w_q, B * Tq, D, W);
    linear_backward(c, dxkv, g->w_k, g->b_k, w.dk, xkv, p->w_k, B * Tk, D, W);
    linear_backward(c, dxkv, g->w_v, g->b_v, w.dv, xkv, p->w_v, B * Tk, D, D);
}
