/* decode.c: the incremental decoder of decode.h. */
#include "decode.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Lays out every buffer of st for its capacity in a (NULL pointers from a measuring arena). */
static void decode_layout(DecodeState *st, Arena *a) {
    const Model *m = st->m;
    const DecodeCapacity *cap = &st->cap;
    const int R = cap->sents * cap->beam, D = m->D, W = m->ad.W, H = m->H, n = m->n_dec;
    const size_t RT = (size_t)cap->row_steps, ST = (size_t)cap->src_tokens;
    const int nthreads = omp_get_max_threads();
    st->src_len = arena_alloc(a, sizeof(int) * cap->sents);
    st->row_map = arena_alloc(a, sizeof(int) * R);
    st->staged = arena_alloc(a, sizeof(int) * R);
    for (int l = 0; l < n; l++) {
        DecodeLayerCache *L = &st->layers[l];
        L->self_k = arena_floats(a, RT * W + ATTN_KEY_SLACK);
        L->self_v = arena_floats(a, RT * D);
        L->self_cs = arena_floats(a, RT * H);
        L->cross_k = arena_floats(a, ST * W + ATTN_KEY_SLACK);
        L->cross_v = arena_floats(a, ST * D);
        L->cross_cs = arena_floats(a, ST * H);
    }
    float **rd[] = {&st->x, &st->fin, &st->f, &st->saved, &st->out, &st->o, &st->v};
    for (size_t i = 0; i < sizeof rd / sizeof *rd; i++) *rd[i] = arena_floats(a, (size_t)R * D);
    st->q = arena_floats(a, (size_t)R * W);
    st->k = arena_floats(a, (size_t)R * W);
    st->cs = arena_floats(a, (size_t)R * H);
    st->mean = arena_floats(a, R);
    st->rstd = arena_floats(a, R);
    st->p = arena_floats(a, (size_t)H * (RT > cap->beam * ST ? RT : cap->beam * ST));
    st->ffn_h = arena_floats(a, (size_t)R * m->F);
    size_t w_self = 0, w_cross = 0;
    if (n) {
        w_self = attention_core_work_floats(&m->dec[0].self_attn, R, 1, cap->max_len, nthreads);
        w_cross = attention_core_work_floats(&m->dec[0].cross_attn, cap->sents, cap->beam,
                                             cap->max_len, nthreads);
    }
    st->attn_work = arena_floats(a, w_self > w_cross ? w_self : w_cross);
    st->tmp = arena_floats(a, RT * (W + D + H) > ST * W ? RT * (W + D + H) : ST * W);
    st->logits = arena_floats(a, (size_t)R * m->V);
    st->tokens = arena_alloc(a, sizeof(int32_t) * R);
    st->hist = arena_alloc(a, sizeof(int32_t) * RT);
    st->hist_next = arena_alloc(a, sizeof(int32_t) * RT);
    st->parent = arena_alloc(a, sizeof(int) * R);
}

/* A weight (out, in) that linear_forward multiplies by. */
typedef struct StepWeight {
    const float *w;
    int in, out;
} StepWeight;

/* Appends weight w (out, in) to list (NULL: only counts it); collab's u may be absent. */
static void add_step_weight(StepWeight *list, int *n, const float *w, int in, int out) {
    if (!w) return;
    if (list) list[*n] = (StepWeight){w, in, out};
    (*n)++;
}

/* The weights of decode_step's products (list may be NULL to count them): each decoder layer's
 * self-attention projections, cross-attention query and output projections and FFN, and the
 * output projection emb (V, D). */
static int step_weights(const Model *m, StepWeight *list) {
    const int D = m->D, W = m->ad.W, H = m->H, F = m->F;
    int n = 0;
    for (int l = 0; l < m->n_dec; l++) {
        const AttnParams *self = &m->dec[l].self_attn.p, *cross = &m->dec[l].cross_attn.p;
        const FfnParams *ffn = m->dec_sub[3 * l + 2].ffn;
        add_step_weight(list, &n, self->w_q, D, W);
        add_step_weight(list, &n, self->w_k, D, W);
        add_step_weight(list, &n, self->w_v, D, D);
        add_step_weight(list, &n, self->w_o, D, D);
        add_step_weight(list, &n, self->u, D, H);
        add_step_weight(list, &n, cross->w_q, D, W);
        add_step_weight(list, &n, cross->w_o, D, D);
        add_step_weight(list, &n, ffn->w_1, D, F);
        add_step_weight(list, &n, ffn->w_2, F, D);
    }
    add_step_weight(list, &n, m->emb, D, m->V);
    return n;
}

/* The bytes decode_layout lays out for a capacity. */
static size_t layout_bytes(Model *m, const DecodeCapacity *cap) {
    DecodeState st = {.m = m, .cap = *cap, .beam = cap->beam};
    st.layers = xcalloc(m->n_dec ? m->n_dec : 1, sizeof(DecodeLayerCache));
    arena_init_measure(&st.arena);
    decode_layout(&st, &st.arena);
    free(st.layers);
    return st.arena.peak;
}

void decode_init(DecodeState *st, Model *m, const DecodeCapacity *cap) {
    memset(st, 0, sizeof *st);
    st->m = m, st->cap = *cap, st->beam = cap->beam;
    CHECK(cap->max_len <= m->max_len, "decoding %d positions needs the model planned for that "
          "length (planned %d)", cap->max_len, m->max_len);
    st->layers = xcalloc(m->n_dec ? m->n_dec : 1, sizeof(DecodeLayerCache));
    arena_init(&st->arena, layout_bytes(m, cap));
    decode_layout(st, &st->arena);
    st->packed.n = step_weights(m, NULL);
    st->packed.w = xcalloc(st->packed.n, sizeof(GemmPackedB));
}

size_t decode_state_bytes(Model *m, const DecodeCapacity *cap) {
    StepWeight w[step_weights(m, NULL)];
    size_t bytes = layout_bytes(m, cap);
    for (int i = 0, n = step_weights(m, w); i < n; i++)
        bytes += gemm_packed_b_bytes(w[i].in, w[i].out);
    return bytes;
}

bool decode_fits(const DecodeState *st, int sents, int S, int T) {
    const DecodeCapacity *c = &st->cap;
    return sents <= c->sents && (long)sents * S <= c->src_tokens &&
           (long)sents * st->beam * T <= c->row_steps && S <= c->max_len && T <= c->max_len;
}

void decode_free(DecodeState *st) {
    for (int i = 0; i < st->packed.n; i++) gemm_packed_b_free(&st->packed.w[i]);
    free(st->packed.w);
    arena_free(&st->arena);
    free(st->layers);
    memset(st, 0, sizeof *st);
}

/* Each of n matrices src_b (rows, cols), rows lds apart, the next src_step floats on, transposed
 * into dst_b (cols, rows), rows ldd apart, the next dst_step floats on: one loop over them all
 * (a step's keys are one column of each row's (W, T) cache, and a parallel region per row would
 * cost more than the copy). Its writes are scattered, a cache line each, so it takes threads from
 * less work than streaming loops do. */
enum { TRANSPOSE_MIN_WORK = OMP_MIN_WORK / 8 };
static void transpose_each(float *dst, size_t dst_step, long ldd, const float *src,
                           size_t src_step, long lds, int n, int rows, int cols) {
    const long work = (long)n * rows * cols;
#pragma omp parallel for collapse(2) schedule(static) if (work >= TRANSPOSE_MIN_WORK)
    for (int b = 0; b < n; b++)
        for (int j = 0; j < cols; j++) {
            float *d = dst + b * dst_step + j * ldd;   // (rows) row j of dst_b
            const float *s = src + b * src_step + j;  // (rows) column j of src_b, lds apart
            for (int i = 0; i < rows; i++) d[i] = s[i * lds];
        }
}

void decode_begin(DecodeState *st, const Ctx *c, const int32_t *src, const int *src_len,
                  int sents, int S, int T) {
    Model *m = st->m;
    CHECK(decode_fits(st, sents, S, T), "decode batch of %d sentences, %d source and %d output "
          "positions exceeds the decoder's capacity", sents, S, T);
    st->sents = sents, st->S = S, st->T = T;
    memcpy(st->src_len, src_len, sizeof(int) * sents);
    model_encode(m, c, src, src_len, sents, S);
    StepWeight w[st->packed.n];
    step_weights(m, w);
    for (int i = 0; i < st->packed.n; i++)  // B = w^T (in, out), as linear_forward multiplies
        gemm_pack_b(&st->packed.w[i], c->gemm, true, w[i].in, w[i].out, w[i].w, w[i].in);
    const int W = m->ad.W;
    for (int l = 0; l < m->n_dec; l++) {
        DecodeLayerCache *L = &st->layers[l];
        attention_project_kv(c, &m->dec[l].cross_attn, st->tmp, L->cross_v, L->cross_cs,
                             m->enc_out, sents * S);
        // keys (S, W) -> (W, S) per sentence
        transpose_each(L->cross_k, (size_t)W * S, S, st->tmp, (size_t)S * W, W, sents, S, W);
    }
}

/* Copies n rows of `width` floats from src (row stride src_ld) to dst (row stride dst_ld). */
static void copy_rows(float *dst, long dst_ld, const float *src, long src_ld, int n, int width) {
    for (int r = 0; r < n; r++)
        memcpy(dst + r * dst_ld, src + r * src_ld, sizeof(float) * width);
}

void decode_step(DecodeState *st, const Ctx *c_in, const int32_t *tokens, int t, float *logits) {
    Model *m = st->m;
    Ctx packed = *c_in;
    packed.packed = &st->packed;
    const Ctx *c = &packed;
    const int R = st->sents * st->beam, D = m->D, W = m->ad.W, H = m->H, T = st->T;
    CHECK(t < T, "decode step %d beyond the planned %d", t, T);
    embedding_forward(st->x, tokens, m->emb, m->pe, R, 1, D, sqrtf((float)D), t);
    const float *x = st->x;
    SubState ss = {st->saved, st->mean, st->rstd};
    Dropout off = {0, 0, 1.0f};
    // the sublayers write their outputs over their inputs from the second on (st->out after
    // LayerNorm, st->saved before it): the residual and the LayerNorm read a row before writing it
    for (int l = 0; l < m->n_dec; l++) {
        DecodeLayerCache *L = &st->layers[l];
        const Sublayer *sub = &m->dec_sub[3 * l];
        const Attention *self = &m->dec[l].self_attn, *cross = &m->dec[l].cross_attn;
        // causal self-attention: append this position's key/value, attend over 0..t
        const float *fin = sublayer_in(m, &sub[0], ss, x, st->fin, R);
        attention_project_q(c, self, st->q, fin, R);
        attention_project_kv(c, self, st->k, st->v, st->cs, fin, R);
        // key column t of each row's (W, T)
        transpose_each(L->self_k + t, (size_t)W * T, T, st->k, W, W, R, 1, W);
        copy_rows(L->self_v + (size_t)t * D, (long)T * D, st->v, D, R, D);
        copy_rows(L->self_cs + (size_t)t * H, (long)T * H, st->cs, H, R, H);
        AttnMask all = {NULL, false, 0};
        attention_core(c, self, st->o, st->p, st->q, L->self_k, true, L->self_v, L->self_cs, all,
                       R, 1, t + 1, T, st->attn_work);
        linear_forward(c, st->f, st->o, self->p.w_o, self->p.b_o, R, D, D);
        x = sublayer_out(m, &sub[0], ss, x, st->f, st->out, R, off);
        // cross-attention: the beam rows of a sentence are its queries
        fin = sublayer_in(m, &sub[1], ss, x, st->fin, R);
        attention_project_q(c, cross, st->q, fin, R);
        AttnMask src = {st->src_len, false, 0};
        attention_core(c, cross, st->o, st->p, st->q, L->cross_k, true, L->cross_v, L->cross_cs,
                       src, st->sents, st->beam, st->S, st->S, st->attn_work);
        linear_forward(c, st->f, st->o, cross->p.w_o, cross->p.b_o, R, D, D);
        x = sublayer_out(m, &sub[1], ss, x, st->f, st->out, R, off);
        // FFN
        fin = sublayer_in(m, &sub[2], ss, x, st->fin, R);
        ffn_forward(c, sub[2].ffn, st->ffn_h, st->f, fin, R, D, m->F, 0.0f, 0);
        x = sublayer_out(m, &sub[2], ss, x, st->f, st->out, R, off);
    }
    if (m->pre_norm) {
        layernorm_forward(st->out, st->mean, st->rstd, x, m->dec_final.g, m->dec_final.b, R, D);
        x = st->out;
    }
    linear_forward(c, logits, x, m->emb, NULL, R, D, m->V);
}

/* Copies `segs` segments of `used` floats, segments dst_seg and src_seg floats apart. */
static void copy_segments(float *dst, size_t dst_seg, const float *src, size_t src_seg, int segs,
                          size_t used) {
    for (int i = 0; i < segs; i++)
        memcpy(dst + i * dst_seg, src + i * src_seg, sizeof(float) * used);
}

/* Row r of a cache takes the contents of row src[r] (a row is `segs` segments `seg` floats apart,
 * of which the first `used` floats are filled). Rows that keep their own are left alone and the
 * others read their source in place, unless staged[] gives it a slot of tmp (stage_sources). */
static void gather_rows(float *cache, float *tmp, const int *staged, int slots, const int *src,
                        int R, int segs, size_t seg, size_t used) {
    const size_t row = segs * seg, live = segs * used;
#pragma omp parallel for schedule(static) if ((long)slots * live >= OMP_MIN_WORK)
    for (int r = 0; r < R; r++)
        if (staged[r] >= 0)
            copy_segments(tmp + staged[r] * live, used, cache + r * row, seg, segs, used);
#pragma omp parallel for schedule(static) if ((long)R * live >= OMP_MIN_WORK)
    for (int r = 0; r < R; r++) {
        int s = src[r];
        if (s == r) continue;
        if (s < R && staged[s] >= 0)
            copy_segments(cache + r * row, seg, tmp + staged[s] * live, used, segs, used);
        else
            copy_segments(cache + r * row, seg, cache + s * row, seg, segs, used);
    }
}

/* The slots of tmp for the sources that rows [0, R) read and that are themselves overwritten
 * (staged[s] >= 0), -1 for every other row; returns how many. A source may be any row >= 0, its
 * index below R when it can be overwritten. */
static int stage_sources(int *staged, const int *src, int R) {
    int slots = 0;
    for (int r = 0; r < R; r++) staged[r] = -1;
    for (int r = 0; r < R; r++)
        if (src[r] != r && src[r] < R && src[src[r]] != src[r] && staged[src[r]] < 0)
            staged[src[r]] = slots++;
    return slots;
}

/* Row r of every self-attention cache becomes row rows[r], positions 0..t. */
static void gather_self_caches(DecodeState *st, const int *rows, int R, int t) {
    const Model *m = st->m;
    const size_t T = st->T, W = m->ad.W, D = m->D, H = m->H;
    const int slots = stage_sources(st->staged, rows, R);
    for (int l = 0; l < m->n_dec; l++) {
        DecodeLayerCache *L = &st->layers[l];
        gather_rows(L->self_k, st->tmp, st->staged, slots, rows, R, W, T, t + 1);  // (W, T) per row
        gather_rows(L->self_v, st->tmp, st->staged, slots, rows, R, 1, T * D, (t + 1) * D);
        gather_rows(L->self_cs, st->tmp, st->staged, slots, rows, R, 1, T * H, (t + 1) * H);
    }
}

void decode_reorder(DecodeState *st, const int *parent, int t) {
    const int R = st->sents * st->beam;
    bool identity = true;
    for (int r = 0; r < R; r++) identity &= parent[r] == r;
    if (!identity) gather_self_caches(st, parent, R, t);
}

void decode_keep_sentences(DecodeState *st, const bool *keep, int t) {
    const Model *m = st->m;
    const int k = st->beam, S = st->S, W = m->ad.W, D = m->D, H = m->H;
    int n = 0, *rows = st->row_map;
    for (int s = 0; s < st->sents; s++) {
        if (!keep[s]) continue;
        for (int j = 0; j < k; j++) rows[n * k + j] = s * k + j;
        if (n != s) {
            st->src_len[n] = st->src_len[s];
            for (int l = 0; l < m->n_dec; l++) {
                DecodeLayerCache *L = &st->layers[l];
                memmove(L->cross_k + (size_t)n * S * W, L->cross_k + (size_t)s * S * W, sizeof(float) * S * W);
                memmove(L->cross_v + (size_t)n * S * D, L->cross_v + (size_t)s * S * D, sizeof(float) * S * D);
                memmove(L->cross_cs + (size_t)n * S * H, L->cross_cs + (size_t)s * S * H, sizeof(float) * S * H);
            }
        }
        n++;
    }
    gather_self_caches(st, rows, n * k, t);
    st->sents = n;
}
