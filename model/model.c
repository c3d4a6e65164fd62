/* model.c: building, planning, forward and backward of the Transformer of model.h.
 * A layer is a chain of residual blocks; each block wraps a branch function f (attention or FFN)
 * with its LayerNorm in one of two orders:
 *   post-LN:  out = LN(x + dropout(f(x)))      saved: ln_in = x + dropout(f(x)), mean, rstd, out
 *   pre-LN:   out = x + dropout(f(LN(x)))      saved: f_in = LN(x), mean, rstd, out
 * block_in / block_out do the forward halves around f; block_out_backward / block_in_backward
 * undo them around f's backward. */
#include "model.h"

#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ffn.h"

enum { SITE_SRC_EMB = 1, SITE_TGT_EMB = 2, SITE_LAYERS = 16, SITES_PER_LAYER = 8 };

static const char *pname(char *buf, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return buf;
}

/* ---------------------------------------------------------------- parameters */

static void declare_norm(ParamTable *pt, const char *prefix, int D) {
    char n[64];
    params_declare(pt, pname(n, sizeof n, "%s.g", prefix), D, 0, INIT_ONE, 0.0f, false);
    params_declare(pt, pname(n, sizeof n, "%s.b", prefix), D, 0, INIT_ZERO, 0.0f, false);
}

static void bind_norm(NormParams *p, NormParams *g, const ParamTable *pt, const char *prefix) {
    char n[64];
    p->g = params_view(pt, pname(n, sizeof n, "%s.g", prefix), pt->param);
    p->b = params_view(pt, pname(n, sizeof n, "%s.b", prefix), pt->param);
    g->g = params_view(pt, pname(n, sizeof n, "%s.g", prefix), pt->grad);
    g->b = params_view(pt, pname(n, sizeof n, "%s.b", prefix), pt->grad);
}

static void declare_ffn(ParamTable *pt, const char *prefix, int D, int F) {
    char n[64];
    float xavier = sqrtf(6.0f / (float)(D + F));
    params_declare(pt, pname(n, sizeof n, "%s.w_1", prefix), F, D, INIT_UNIFORM, xavier, true);
    params_declare(pt, pname(n, sizeof n, "%s.b_1", prefix), F, 0, INIT_ZERO, 0.0f, false);
    params_declare(pt, pname(n, sizeof n, "%s.w_2", prefix), D, F, INIT_UNIFORM, xavier, true);
    params_declare(pt, pname(n, sizeof n, "%s.b_2", prefix), D, 0, INIT_ZERO, 0.0f, false);
}

static void bind_ffn(FfnParams *p, FfnParams *g, const ParamTable *pt, const char *prefix) {
    char n[64];
    const char *leaf[] = {"w_1", "b_1", "w_2", "b_2"};
    float **pv[] = {&p->w_1, &p->b_1, &p->w_2, &p->b_2}, **gv[] = {&g->w_1, &g->b_1, &g->w_2, &g->b_2};
    for (int i = 0; i < 4; i++) {
        pname(n, sizeof n, "%s.%s", prefix, leaf[i]);
        *pv[i] = params_view(pt, n, pt->param);
        *gv[i] = params_view(pt, n, pt->grad);
    }
}

void model_declare(ParamTable *pt, const ModelConfig *cfg, int V) {
    const int D = cfg->d_model;
    const AttnImpl *impl = attn_impl_lookup(cfg->attention);
    CHECK(impl, "unknown attention mode '%s'", cfg->attention);
    CHECK(D % cfg->heads == 0, "d_model %d is not divisible by heads %d", D, cfg->heads);
    AttnDims ad = attn_dims(cfg);
    char n[64];
    params_declare(pt, "emb.shared", V, D, INIT_NORMAL, 1.0f / sqrtf((float)D), true);
    for (int l = 0; l < cfg->enc_layers; l++) {
        attention_declare(pt, pname(n, sizeof n, "enc.%d.self_attn", l), &ad, impl, cfg);
        declare_norm(pt, pname(n, sizeof n, "enc.%d.ln1", l), D);
        declare_ffn(pt, pname(n, sizeof n, "enc.%d.ffn", l), D, cfg->ffn);
        declare_norm(pt, pname(n, sizeof n, "enc.%d.ln2", l), D);
    }
    for (int l = 0; l < cfg->dec_layers; l++) {
        attention_declare(pt, pname(n, sizeof n, "dec.%d.self_attn", l), &ad, impl, cfg);
        declare_norm(pt, pname(n, sizeof n, "dec.%d.ln1", l), D);
        attention_declare(pt, pname(n, sizeof n, "dec.%d.cross_attn", l), &ad, impl, cfg);
        declare_norm(pt, pname(n, sizeof n, "dec.%d.ln2", l), D);
        declare_ffn(pt, pname(n, sizeof n, "dec.%d.ffn", l), D, cfg->ffn);
        declare_norm(pt, pname(n, sizeof n, "dec.%d.ln3", l), D);
    }
    if (!strcmp(cfg->norm, "pre")) {
        declare_norm(pt, "enc.final_ln", D);
        declare_norm(pt, "dec.final_ln", D);
    }
}

void model_build(Model *m, const ModelConfig *cfg, int vocab) {
    memset(m, 0, sizeof *m);
    m->V = vocab > 0 ? vocab : cfg->vocab_size;
    CHECK(m->V > TOKEN_EOS, "model vocabulary size %d is too small (is data.dir prepared?)", m->V);
    m->D = cfg->d_model, m->H = cfg->heads, m->F = cfg->ffn;
    m->n_enc = cfg->enc_layers, m->n_dec = cfg->dec_layers;
    m->pre_norm = !strcmp(cfg->norm, "pre");
    m->dropout = (float)cfg->dropout, m->ffn_dropout = (float)cfg->ffn_dropout;
    ParamTable *pt = &m->params;
    params_init(pt);
    model_declare(pt, cfg, m->V);
    params_finalize(pt);
    m->impl = attn_impl_lookup(cfg->attention);
    m->ad = attn_dims(cfg);
    char n[64];

    m->emb = params_view(pt, "emb.shared", pt->param);
    m->demb = params_view(pt, "emb.shared", pt->grad);
    m->enc = xcalloc(m->n_enc ? m->n_enc : 1, sizeof(EncLayer));
    m->dec = xcalloc(m->n_dec, sizeof(DecLayer));
    for (int l = 0; l < m->n_enc; l++) {
        EncLayer *L = &m->enc[l];
        L->site = SITE_LAYERS + SITES_PER_LAYER * l;
        attention_bind(&L->self_attn, pt, pname(n, sizeof n, "enc.%d.self_attn", l), &m->ad, m->impl, L->site);
        bind_norm(&L->ln1, &L->dln1, pt, pname(n, sizeof n, "enc.%d.ln1", l));
        bind_ffn(&L->ffn, &L->dffn, pt, pname(n, sizeof n, "enc.%d.ffn", l));
        bind_norm(&L->ln2, &L->dln2, pt, pname(n, sizeof n, "enc.%d.ln2", l));
    }
    for (int l = 0; l < m->n_dec; l++) {
        DecLayer *L = &m->dec[l];
        L->site = SITE_LAYERS + SITES_PER_LAYER * (m->n_enc + l);
        attention_bind(&L->self_attn, pt, pname(n, sizeof n, "dec.%d.self_attn", l), &m->ad, m->impl, L->site);
        bind_norm(&L->ln1, &L->dln1, pt, pname(n, sizeof n, "dec.%d.ln1", l));
        attention_bind(&L->cross_attn, pt, pname(n, sizeof n, "dec.%d.cross_attn", l), &m->ad, m->impl, L->site + 2);
        bind_norm(&L->ln2, &L->dln2, pt, pname(n, sizeof n, "dec.%d.ln2", l));
        bind_ffn(&L->ffn, &L->dffn, pt, pname(n, sizeof n, "dec.%d.ffn", l));
        bind_norm(&L->ln3, &L->dln3, pt, pname(n, sizeof n, "dec.%d.ln3", l));
    }
    if (m->pre_norm) {
        bind_norm(&m->enc_final, &m->denc_final, pt, "enc.final_ln");
        bind_norm(&m->dec_final, &m->ddec_final, pt, "dec.final_ln");
    }
}

void model_free(Model *m) {
    params_free(&m->params);
    free(m->enc), free(m->dec);
    aligned_free(m->pe);
    arena_free(&m->acts), arena_free(&m->work);
    memset(m, 0, sizeof *m);
}

void model_init_params(Model *m, uint64_t seed) {
    params_initialize(&m->params, seed);
    memset(m->emb + (size_t)TOKEN_PAD * m->D, 0, sizeof(float) * m->D);
}

/* ---------------------------------------------------------------- planning */

static void block_alloc(Block *b, Arena *a, int N, int D, bool pre_norm) {
    b->ln_in = pre_norm ? NULL : arena_floats(a, (size_t)N * D);
    b->f_in = pre_norm ? arena_floats(a, (size_t)N * D) : NULL;
    b->mean = arena_floats(a, (size_t)N);
    b->rstd = arena_floats(a, (size_t)N);
    b->out = arena_floats(a, (size_t)N * D);
}

/* Binds every activation pointer for shape (B, S, T) from `a` (NULL pointers in measure mode). */
static void acts_layout(Model *m, Arena *a, int B, int S, int T) {
    const int D = m->D, F = m->F, Ns = B * S, Nt = B * T, Nmax = Ns > Nt ? Ns : Nt;
    m->enc_x0 = arena_floats(a, (size_t)Ns * D);
    m->dec_x0 = arena_floats(a, (size_t)Nt * D);
    for (int l = 0; l < m->n_enc; l++) {
        EncLayer *L = &m->enc[l];
        attention_cache_alloc(&L->att, a, &m->ad, B, S, S);
        block_alloc(&L->b_att, a, Ns, D, m->pre_norm);
        L->ffn_pre = arena_floats(a, (size_t)Ns * F);
        block_alloc(&L->b_ffn, a, Ns, D, m->pre_norm);
    }
    for (int l = 0; l < m->n_dec; l++) {
        DecLayer *L = &m->dec[l];
        attention_cache_alloc(&L->self, a, &m->ad, B, T, T);
        block_alloc(&L->b_self, a, Nt, D, m->pre_norm);
        attention_cache_alloc(&L->cross, a, &m->ad, B, T, S);
        block_alloc(&L->b_cross, a, Nt, D, m->pre_norm);
        L->ffn_pre = arena_floats(a, (size_t)Nt * F);
        block_alloc(&L->b_ffn, a, Nt, D, m->pre_norm);
    }
    if (m->pre_norm) {
        block_alloc(&m->enc_fin, a, Ns, D, false);
        block_alloc(&m->dec_fin, a, Nt, D, false);
    }
    m->d_a = arena_floats(a, (size_t)Nmax * D);
    m->d_b = arena_floats(a, (size_t)Nmax * D);
    m->d_enc = arena_floats(a, (size_t)Ns * D);
}

static size_t max_z(size_t a, size_t b) { return a > b ? a : b; }

static void work_layout(Model *m, Arena *a, int B, int S, int T) {
    const int D = m->D, F = m->F, Nmax = B * (S > T ? S : T);
    struct ModelWork *w = &m->w;
    w->f = arena_floats(a, (size_t)Nmax * D);
    w->df = arena_floats(a, (size_t)Nmax * D);
    w->dfin = arena_floats(a, (size_t)Nmax * D);
    w->dmid = arena_floats(a, (size_t)Nmax * D);
    w->h = arena_floats(a, (size_t)Nmax * F);
    w->dh = arena_floats(a, (size_t)Nmax * F);
    const Attention *att = m->n_dec ? &m->dec[0].self_attn : NULL;
    size_t big = loss_work_floats(m->V);
    big = max_z(big, attention_work_floats(att, B, S, S, m->nthreads));
    big = max_z(big, attention_work_floats(att, B, T, T, m->nthreads));
    big = max_z(big, attention_work_floats(att, B, T, S, m->nthreads));
    w->big = arena_floats(a, big);
}

void model_plan(Model *m, int max_tokens, int max_len) {
    CHECK(max_tokens > 0 && max_len > 0, "model_plan: bad sizes %d, %d", max_tokens, max_len);
    arena_free(&m->acts), arena_free(&m->work);
    aligned_free(m->pe);
    m->nthreads = omp_get_max_threads();
    m->max_tokens = max_tokens > max_len ? max_tokens : max_len;
    m->max_len = max_len;
    m->pe = aligned_alloc_zeroed(sizeof(float) * max_len * m->D);
    position_table_fill(m->pe, max_len, m->D);
    // Memory grows with rows B*L and with attention B*L*L; for a budget B*L <= max_tokens the
    // worst case is a square batch at some length L.
    size_t acts = 0, work = 0;
    for (int L = 1; L <= max_len; L++) {
        int B = m->max_tokens / L;
        if (B < 1) break;
        Arena a;
        arena_init_measure(&a);
        acts_layout(m, &a, B, L, L);
        acts = max_z(acts, a.peak);
        arena_init_measure(&a);
        work_layout(m, &a, B, L, L);
        work = max_z(work, a.peak);
    }
    arena_init(&m->acts, acts);
    arena_init(&m->work, work);
    m->B = m->S = m->T = 0;
}

size_t model_planned_bytes(const Model *m) {
    return m->acts.cap + m->work.cap + sizeof(float) * (size_t)m->max_len * m->D;
}

static void bind_batch(Model *m, const ModelBatch *b) {
    int L = b->S > b->T ? b->S : b->T;
    CHECK(m->acts.base, "model_plan was not called");
    CHECK(b->S <= m->max_len && b->T <= m->max_len && (long)b->B * L <= m->max_tokens,
          "batch %dx(%d,%d) exceeds the planned %d tokens / length %d", b->B, b->S, b->T,
          m->max_tokens, m->max_len);
    CHECK(omp_get_max_threads() <= m->nthreads, "thread count grew after model_plan");
    if (b->B == m->B && b->S == m->S && b->T == m->T) return;
    arena_reset(&m->acts, 0);
    acts_layout(m, &m->acts, b->B, b->S, b->T);
    arena_reset(&m->work, 0);
    work_layout(m, &m->work, b->B, b->S, b->T);
    m->B = b->B, m->S = b->S, m->T = b->T;
}

/* ---------------------------------------------------------------- residual blocks */

/* The input of the branch function: LN(x) for pre-LN, x itself for post-LN. */
static const float *block_in(const Model *m, Block *blk, const NormParams *ln, const float *x,
                             int N) {
    if (!m->pre_norm) return x;
    layernorm_forward(blk->f_in, blk->mean, blk->rstd, x, ln->g, ln->b, N, m->D);
    return blk->f_in;
}

static void block_out(const Model *m, const Ctx *c, Block *blk, const NormParams *ln,
                      const float *x, const float *f, int N, int site) {
    uint64_t key = ctx_dropout_key(c, m->dropout, site);
    if (m->pre_norm) {
        residual_forward(blk->out, x, f, (long)N * m->D, m->dropout, key);
    } else {
        residual_forward(blk->ln_in, x, f, (long)N * m->D, m->dropout, key);
        layernorm_forward(blk->out, blk->mean, blk->rstd, blk->ln_in, ln->g, ln->b, N, m->D);
    }
}

/* From d_out: dx = the residual path's gradient (written), df = the branch output's (written). */
static void block_out_backward(const Model *m, const Ctx *c, const Block *blk,
                               const NormParams *ln, const NormParams *dln, float *dx, float *df,
                               const float *d_out, int N, int site) {
    long n = (long)N * m->D;
    uint64_t key = ctx_dropout_key(c, m->dropout, site);
    if (m->pre_norm) {
        memcpy(dx, d_out, sizeof(float) * n);
    } else {
        memset(dx, 0, sizeof(float) * n);
        layernorm_backward(dx, dln->g, dln->b, d_out, blk->ln_in, blk->mean, blk->rstd, ln->g, N, m->D);
    }
    memset(df, 0, sizeof(float) * n);
    dropout_backward(df, dx, n, m->dropout, key);
}

/* Where the branch backward accumulates the gradient of its input: dx itself (post-LN), or a
 * zeroed workspace that block_in_backward then takes through the LayerNorm (pre-LN). */
static float *block_fin_grad(Model *m, float *dx, int N) {
    if (!m->pre_norm) return dx;
    memset(m->w.dfin, 0, sizeof(float) * N * m->D);
    return m->w.dfin;
}

static void block_in_backward(const Model *m, const Block *blk, const NormParams *ln,
                              const NormParams *dln, float *dx, const float *dfin,
                              const float *x, int N) {
    if (m->pre_norm)
        layernorm_backward(dx, dln->g, dln->b, dfin, x, blk->mean, blk->rstd, ln->g, N, m->D);
}

/* ---------------------------------------------------------------- layers */

static const float *enc_layer_forward(Model *m, const Ctx *c, EncLayer *L, const float *x,
                                      const ModelBatch *b) {
    const int N = b->B * b->S;
    AttnMask mask = {b->src_len, false, 0};
    const float *fin = block_in(m, &L->b_att, &L->ln1, x, N);
    attention_forward(c, &L->self_attn, &L->att, m->w.f, fin, fin, mask, b->B, b->S, b->S, m->w.big);
    block_out(m, c, &L->b_att, &L->ln1, x, m->w.f, N, L->site + 1);
    const float *x2 = L->b_att.out;
    fin = block_in(m, &L->b_ffn, &L->ln2, x2, N);
    ffn_forward(c, &L->ffn, L->ffn_pre, m->w.h, m->w.f, fin, N, m->D, m->F, m->ffn_dropout, L->site + 2);
    block_out(m, c, &L->b_ffn, &L->ln2, x2, m->w.f, N, L->site + 3);
    return L->b_ffn.out;
}

/* dx (written) = gradient of the layer input x, from d_out. */
static void enc_layer_backward(Model *m, const Ctx *c, EncLayer *L, float *dx, const float *d_out,
                               const float *x, const ModelBatch *b) {
    const int N = b->B * b->S;
    AttnMask mask = {b->src_len, false, 0};
    struct ModelWork *w = &m->w;
    const float *x2 = L->b_att.out;
    // FFN block
    block_out_backward(m, c, &L->b_ffn, &L->ln2, &L->dln2, w->dmid, w->df, d_out, N, L->site + 3);
    float *dfin = block_fin_grad(m, w->dmid, N);
    const float *fin = m->pre_norm ? L->b_ffn.f_in : x2;
    ffn_backward(c, &L->ffn, &L->dffn, dfin, w->h, w->dh, w->df, L->ffn_pre, fin, N, m->D, m->F,
                 m->ffn_dropout, L->site + 2);
    block_in_backward(m, &L->b_ffn, &L->ln2, &L->dln2, w->dmid, dfin, x2, N);
    // self-attention block
    block_out_backward(m, c, &L->b_att, &L->ln1, &L->dln1, dx, w->df, w->dmid, N, L->site + 1);
    dfin = block_fin_grad(m, dx, N);
    fin = m->pre_norm ? L->b_att.f_in : x;
    attention_backward(c, &L->self_attn, &L->att, dfin, dfin, w->df, fin, fin, mask, b->B, b->S,
                       b->S, w->big);
    block_in_backward(m, &L->b_att, &L->ln1, &L->dln1, dx, dfin, x, N);
}

static const float *dec_layer_forward(Model *m, const Ctx *c, DecLayer *L, const float *x,
                                      const ModelBatch *b) {
    const int N = b->B * b->T;
    AttnMask self_mask = {b->tgt_len, true, 0}, cross_mask = {b->src_len, false, 0};
    const float *fin = block_in(m, &L->b_self, &L->ln1, x, N);
    attention_forward(c, &L->self_attn, &L->self, m->w.f, fin, fin, self_mask, b->B, b->T, b->T, m->w.big);
    block_out(m, c, &L->b_self, &L->ln1, x, m->w.f, N, L->site + 1);
    const float *x2 = L->b_self.out;
    fin = block_in(m, &L->b_cross, &L->ln2, x2, N);
    attention_forward(c, &L->cross_attn, &L->cross, m->w.f, fin, m->enc_out, cross_mask, b->B,
                      b->T, b->S, m->w.big);
    block_out(m, c, &L->b_cross, &L->ln2, x2, m->w.f, N, L->site + 3);
    const float *x3 = L->b_cross.out;
    fin = block_in(m, &L->b_ffn, &L->ln3, x3, N);
    ffn_forward(c, &L->ffn, L->ffn_pre, m->w.h, m->w.f, fin, N, m->D, m->F, m->ffn_dropout, L->site + 4);
    block_out(m, c, &L->b_ffn, &L->ln3, x3, m->w.f, N, L->site + 5);
    return L->b_ffn.out;
}

static void dec_layer_backward(Model *m, const Ctx *c, DecLayer *L, float *dx, const float *d_out,
                               const float *x, const ModelBatch *b) {
    const int N = b->B * b->T;
    AttnMask self_mask = {b->tgt_len, true, 0}, cross_mask = {b->src_len, false, 0};
    struct ModelWork *w = &m->w;
    const float *x2 = L->b_self.out, *x3 = L->b_cross.out;
    // FFN block: d_out -> dx (as the gradient of x3)
    block_out_backward(m, c, &L->b_ffn, &L->ln3, &L->dln3, dx, w->df, d_out, N, L->site + 5);
    float *dfin = block_fin_grad(m, dx, N);
    const float *fin = m->pre_norm ? L->b_ffn.f_in : x3;
    ffn_backward(c, &L->ffn, &L->dffn, dfin, w->h, w->dh, w->df, L->ffn_pre, fin, N, m->D, m->F,
                 m->ffn_dropout, L->site + 4);
    block_in_backward(m, &L->b_ffn, &L->ln3, &L->dln3, dx, dfin, x3, N);
    // cross-attention block: dx -> dmid (the gradient of x2)
    block_out_backward(m, c, &L->b_cross, &L->ln2, &L->dln2, w->dmid, w->df, dx, N, L->site + 3);
    dfin = block_fin_grad(m, w->dmid, N);
    fin = m->pre_norm ? L->b_cross.f_in : x2;
    attention_backward(c, &L->cross_attn, &L->cross, dfin, m->d_enc, w->df, fin, m->enc_out,
                       cross_mask, b->B, b->T, b->S, w->big);
    block_in_backward(m, &L->b_cross, &L->ln2, &L->dln2, w->dmid, dfin, x2, N);
    // self-attention block: dmid -> dx (the gradient of x)
    block_out_backward(m, c, &L->b_self, &L->ln1, &L->dln1, dx, w->df, w->dmid, N, L->site + 1);
    dfin = block_fin_grad(m, dx, N);
    fin = m->pre_norm ? L->b_self.f_in : x;
    attention_backward(c, &L->self_attn, &L->self, dfin, dfin, w->df, fin, fin, self_mask, b->B,
                       b->T, b->T, w->big);
    block_in_backward(m, &L->b_self, &L->ln1, &L->dln1, dx, dfin, x, N);
}

/* ---------------------------------------------------------------- the model */

static const float *final_norm(Model *m, Block *blk, const NormParams *ln, const float *x, int N) {
    if (!m->pre_norm) return x;
    layernorm_forward(blk->out, blk->mean, blk->rstd, x, ln->g, ln->b, N, m->D);
    return blk->out;
}

void model_forward(Model *m, const Ctx *c, const ModelBatch *b) {
    bind_batch(m, b);
    const int Ns = b->B * b->S, Nt = b->B * b->T;
    const float scale = sqrtf((float)m->D);
    embedding_forward(m->enc_x0, b->src, m->emb, m->pe, b->B, b->S, m->D, scale, 0);
    dropout_apply(m->enc_x0, (long)Ns * m->D, m->dropout, ctx_dropout_key(c, m->dropout, SITE_SRC_EMB));
    const float *x = m->enc_x0;
    for (int l = 0; l < m->n_enc; l++) x = enc_layer_forward(m, c, &m->enc[l], x, b);
    m->enc_out = final_norm(m, &m->enc_fin, &m->enc_final, x, Ns);

    embedding_forward(m->dec_x0, b->tgt_in, m->emb, m->pe, b->B, b->T, m->D, scale, 0);
    dropout_apply(m->dec_x0, (long)Nt * m->D, m->dropout, ctx_dropout_key(c, m->dropout, SITE_TGT_EMB));
    x = m->dec_x0;
    for (int l = 0; l < m->n_dec; l++) x = dec_layer_forward(m, c, &m->dec[l], x, b);
    m->dec_out = final_norm(m, &m->dec_fin, &m->dec_final, x, Nt);
}

void model_loss(Model *m, const Ctx *c, const ModelBatch *b, LossStats *st, bool backward,
                float label_smoothing) {
    const int Nt = b->B * b->T;
    if (backward) memset(m->d_a, 0, sizeof(float) * Nt * m->D);
    loss_forward_backward(c, st, backward ? m->d_a : NULL, m->demb, m->dec_out, b->tgt_out,
                          m->emb, Nt, m->D, m->V, label_smoothing, TOKEN_PAD, m->w.big);
}

/* d (written) = gradient of a final LayerNorm's input from d_out (pre-LN); d_out itself (post). */
static void final_norm_backward(Model *m, const Block *blk, const NormParams *ln,
                                const NormParams *dln, float *d, const float *d_out,
                                const float *x, int N) {
    if (!m->pre_norm) {
        memcpy(d, d_out, sizeof(float) * N * m->D);
        return;
    }
    memset(d, 0, sizeof(float) * N * m->D);
    layernorm_backward(d, dln->g, dln->b, d_out, x, blk->mean, blk->rstd, ln->g, N, m->D);
}

static void embedding_input_backward(Model *m, const Ctx *c, const float *d_x0,
                                     const int32_t *tok, int N, int site) {
    float *d = m->w.df;  // through the embedding dropout
    memset(d, 0, sizeof(float) * N * m->D);
    dropout_backward(d, d_x0, (long)N * m->D, m->dropout, ctx_dropout_key(c, m->dropout, site));
    embedding_backward(m->demb, d, tok, N, m->D, sqrtf((float)m->D));
}

void model_backward(Model *m, const Ctx *c, const ModelBatch *b) {
    const int Ns = b->B * b->S, Nt = b->B * b->T;
    // decoder, from the loss's gradient in d_a; each layer writes its input's gradient to `spare`
    const float *last = m->n_dec ? m->dec[m->n_dec - 1].b_ffn.out : m->dec_x0;
    final_norm_backward(m, &m->dec_fin, &m->dec_final, &m->ddec_final, m->d_b, m->d_a, last, Nt);
    float *d = m->d_b, *spare = m->d_a, *t;
    memset(m->d_enc, 0, sizeof(float) * Ns * m->D);
    for (int l = m->n_dec - 1; l >= 0; l--) {
        const float *x = l ? m->dec[l - 1].b_ffn.out : m->dec_x0;
        dec_layer_backward(m, c, &m->dec[l], spare, d, x, b);
        t = d, d = spare, spare = t;
    }
    embedding_input_backward(m, c, d, b->tgt_in, Nt, SITE_TGT_EMB);
    // encoder, from d_enc, where every cross-attention left its key/value gradient
    last = m->n_enc ? m->enc[m->n_enc - 1].b_ffn.out : m->enc_x0;
    final_norm_backward(m, &m->enc_fin, &m->enc_final, &m->denc_final, m->d_a, m->d_enc, last, Ns);
    d = m->d_a, spare = m->d_b;
    for (int l = m->n_enc - 1; l >= 0; l--) {
        const float *x = l ? m->enc[l - 1].b_ffn.out : m->enc_x0;
        enc_layer_backward(m, c, &m->enc[l], spare, d, x, b);
        t = d, d = spare, spare = t;
    }
    embedding_input_backward(m, c, d, b->src, Ns, SITE_SRC_EMB);
}

void model_step(Model *m, const Ctx *c, const ModelBatch *b, LossStats *st, bool backward,
                float label_smoothing) {
    model_forward(m, c, b);
    model_loss(m, c, b, st, backward, label_smoothing);
    if (backward) model_backward(m, c, b);
}

void model_logits(Model *m, const Ctx *c, float *logits) {
    const int Nt = m->B * m->T;
    c->gemm->sgemm(false, true, Nt, m->V, m->D, 1.0f, m->dec_out, m->D, m->emb, m->D, 0.0f,
                   logits, m->V);
}
