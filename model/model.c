/* model.c: building, planning, forward and backward of the Transformer of model.h.
 * Each stack (encoder, decoder) is a chain of residual sublayers (model.h: Sublayer); one
 * generic forward and one generic backward walk the chain, dispatching on the branch kind
 * (self, causal or cross attention, FFN). */
#include "model.h"

#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ffn.h"
#include "timer.h"

/* Runs the statement(s) and adds their wall time to the model's phase counter. */
#define TIMED(m, phase, ...)                                                                       \
    do {                                                                                           \
        double t0_ = now_seconds();                                                                \
        __VA_ARGS__;                                                                               \
        (m)->seconds[phase] += now_seconds() - t0_;                                                \
    } while (0)

const char *const model_phase_names[PHASE_COUNT] = {"embedding", "attention",
                                                    "attention_core", "ffn", "norm_residual",
                                                    "loss"};

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
    float **pv[] = {&p->w_1, &p->b_1, &p->w_2, &p->b_2},
          **gv[] = {&g->w_1, &g->b_1, &g->w_2, &g->b_2};
    for (int i = 0; i < 4; i++) {
        pname(n, sizeof n, "%s.%s", prefix, leaf[i]);
        *pv[i] = params_view(pt, n, pt->param);
        *gv[i] = params_view(pt, n, pt->grad);
    }
}

void model_declare(ParamTable *pt, const ModelConfig *cfg, int V) {
    const int D = cfg->d_model;
    const AttnImpl *impl = attn_impl(cfg->attention);
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
    if (cfg->norm == NORM_PRE) {
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
    m->pre_norm = cfg->norm == NORM_PRE;
    m->dropout = (float)cfg->dropout, m->ffn_dropout = (float)cfg->ffn_dropout;
    ParamTable *pt = &m->params;
    params_init(pt);
    model_declare(pt, cfg, m->V);
    params_finalize(pt);
    m->impl = attn_impl(cfg->attention);
    m->ad = attn_dims(cfg);
    char n[64];

    m->emb = params_view(pt, "emb.shared", pt->param);
    m->demb = params_view(pt, "emb.shared", pt->grad);
    m->enc = xcalloc(m->n_enc ? m->n_enc : 1, sizeof(EncLayer));
    m->dec = xcalloc(m->n_dec, sizeof(DecLayer));
    m->enc_sub = xcalloc(m->n_enc ? 2 * m->n_enc : 1, sizeof(Sublayer));
    m->dec_sub = xcalloc(3 * m->n_dec, sizeof(Sublayer));
    int site = SITE_LAYERS;
    for (int l = 0; l < m->n_enc; l++) {
        EncLayer *L = &m->enc[l];
        Sublayer *s = &m->enc_sub[2 * l];
        attention_bind(&L->self_attn, pt, pname(n, sizeof n, "enc.%d.self_attn", l), &m->ad, m->impl, site);
        s[0] = (Sublayer){.kind = SUB_SELF_ATTN, .attn = &L->self_attn, .site = site};
        bind_norm(&s[0].ln, &s[0].dln, pt, pname(n, sizeof n, "enc.%d.ln1", l));
        bind_ffn(&L->ffn, &L->dffn, pt, pname(n, sizeof n, "enc.%d.ffn", l));
        s[1] = (Sublayer){.kind = SUB_FFN, .ffn = &L->ffn, .dffn = &L->dffn, .site = site + 2};
        bind_norm(&s[1].ln, &s[1].dln, pt, pname(n, sizeof n, "enc.%d.ln2", l));
        s[0].layer_done = params_prefix_range(pt, pname(n, sizeof n, "enc.%d.", l));
        site += SITES_PER_LAYER;
    }
    for (int l = 0; l < m->n_dec; l++) {
        DecLayer *L = &m->dec[l];
        Sublayer *s = &m->dec_sub[3 * l];
        attention_bind(&L->self_attn, pt, pname(n, sizeof n, "dec.%d.self_attn", l), &m->ad, m->impl, site);
        s[0] = (Sublayer){.kind = SUB_CAUSAL_ATTN, .attn = &L->self_attn, .site = site};
        bind_norm(&s[0].ln, &s[0].dln, pt, pname(n, sizeof n, "dec.%d.ln1", l));
        attention_bind(&L->cross_attn, pt, pname(n, sizeof n, "dec.%d.cross_attn", l), &m->ad, m->impl, site + 2);
        s[1] = (Sublayer){.kind = SUB_CROSS_ATTN, .attn = &L->cross_attn, .site = site + 2};
        bind_norm(&s[1].ln, &s[1].dln, pt, pname(n, sizeof n, "dec.%d.ln2", l));
        bind_ffn(&L->ffn, &L->dffn, pt, pname(n, sizeof n, "dec.%d.ffn", l));
        s[2] = (Sublayer){.kind = SUB_FFN, .ffn = &L->ffn, .dffn = &L->dffn, .site = site + 4};
        bind_norm(&s[2].ln, &s[2].dln, pt, pname(n, sizeof n, "dec.%d.ln3", l));
        s[0].layer_done = params_prefix_range(pt, pname(n, sizeof n, "dec.%d.", l));
        site += SITES_PER_LAYER;
    }
    m->emb_span = params_prefix_range(pt, "emb.shared");
    if (m->pre_norm) {
        bind_norm(&m->enc_final, &m->denc_final, pt, "enc.final_ln");
        bind_norm(&m->dec_final, &m->ddec_final, pt, "dec.final_ln");
        m->enc_final_span = params_prefix_range(pt, "enc.final_ln.");
        m->dec_final_span = params_prefix_range(pt, "dec.final_ln.");
    }
}

void model_free(Model *m) {
    params_free(&m->params);
    free(m->enc), free(m->dec), free(m->enc_sub), free(m->dec_sub);
    aligned_free(m->pe);
    arena_free(&m->acts), arena_free(&m->work);
    for (int i = 0; i < 2; i++) gemm_packed_b_free(&m->w.emb_packed[i]);
    memset(m, 0, sizeof *m);
}

void model_init_params(Model *m, uint64_t seed) {
    params_initialize(&m->params, seed);
    memset(m->emb + (size_t)TOKEN_PAD * m->D, 0, sizeof(float) * m->D);
}

/* ---------------------------------------------------------------- planning */

static void sublayer_alloc(const Model *m, Sublayer *s, Arena *a, int B, int Tq, int Tk) {
    const int N = B * Tq;
    s->saved = arena_floats(a, (size_t)N * m->D);
    s->mean = arena_floats(a, (size_t)N);
    s->rstd = arena_floats(a, (size_t)N);
    if (s->kind == SUB_FFN)
        s->ffn_h = arena_floats(a, (size_t)N * m->F);
    else
        attention_cache_alloc(&s->cache, a, &m->ad, B, Tq, Tk);
}

/* Binds every activation pointer for shape (B, S, T) from `a` (NULL pointers in measure mode). */
static void acts_layout(Model *m, Arena *a, int B, int S, int T) {
    const int D = m->D, Ns = B * S, Nt = B * T;
    m->enc_x0 = arena_floats(a, (size_t)Ns * D);
    m->dec_x0 = arena_floats(a, (size_t)Nt * D);
    m->enc_out = arena_floats(a, (size_t)Ns * D);
    m->dec_out = arena_floats(a, (size_t)Nt * D);
    m->enc_fin_stats = arena_floats(a, 2 * (size_t)Ns);
    m->dec_fin_stats = arena_floats(a, 2 * (size_t)Nt);
    for (int k = 0; k < 2 * m->n_enc; k++) sublayer_alloc(m, &m->enc_sub[k], a, B, S, S);
    for (int k = 0; k < 3 * m->n_dec; k++)
        sublayer_alloc(m, &m->dec_sub[k], a, B, T, m->dec_sub[k].kind == SUB_CROSS_ATTN ? S : T);
}

static size_t max_z(size_t a, size_t b) { return a > b ? a : b; }

static void work_layout(Model *m, Arena *a, int B, int S, int T) {
    const int D = m->D, Ns = B * S, Nmax = B * (S > T ? S : T);
    struct ModelWork *w = &m->w;
    float **nd[] = {&w->f, &w->fin, &w->dfin, &w->xin, &w->d_a, &w->d_b};
    for (size_t i = 0; i < sizeof nd / sizeof *nd; i++) *nd[i] = arena_floats(a, (size_t)Nmax * D);
    // Forward outputs and backward gradients are never alive at the same time.
    w->xout[0] = w->d_a, w->xout[1] = w->d_b;
    w->d_enc = arena_floats(a, (size_t)Ns * D);
    w->h = arena_floats(a, (size_t)Nmax * m->F);
    w->ln_grad = arena_floats(a, layernorm_grad_floats(Nmax, D));
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

void model_release_memory(Model *m) {
    arena_release(&m->acts);
    arena_release(&m->work);
}

ModelMemory model_memory(const Model *m) {
    size_t floats = m->params.numel * sizeof(float);
    return (ModelMemory){floats, floats, 2 * floats, m->acts.cap,
                         m->work.cap + loss_packed_bytes(m->D, m->V)};
}

void model_memory_text(const ModelMemory *mm, char *out, size_t n) {
    const double MB = 1 << 20;
    snprintf(out, n,
             "parameters %.0f MB, gradients %.0f MB, Adam moments %.0f MB, activations %.0f MB, "
             "workspace %.0f MB",
             mm->params / MB, mm->grads / MB, mm->adam / MB, mm->acts / MB, mm->work / MB);
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

/* ---------------------------------------------------------------- sublayers */

/* Rows of a sublayer of the encoder or the decoder, and its attention mask, for batch b. */
static int sub_rows(const ModelBatch *b, bool dec) { return b->B * (dec ? b->T : b->S); }

static AttnMask sub_mask(const Sublayer *s, const ModelBatch *b) {
    if (s->kind == SUB_CAUSAL_ATTN) return (AttnMask){b->tgt_len, true, 0};
    return (AttnMask){b->src_len, false, 0};
}

/* Points the attention of s at the model's core clock; returns the clock's reading. The caller
 * times the whole sublayer under PHASE_ATTENTION and then takes the core's share out of it. */
static double attn_core_clock(Model *m, Sublayer *s) {
    s->attn->core_seconds = &m->seconds[PHASE_ATTN_CORE];
    return m->seconds[PHASE_ATTN_CORE];
}

/* The branch: f(N, D) = attention or FFN of fin. */
static void branch_forward(Model *m, const Ctx *c, Sublayer *s, float *f, const float *fin,
                           const ModelBatch *b, bool dec) {
    const int Tq = dec ? b->T : b->S, N = b->B * Tq;
    if (s->kind == SUB_FFN) {
        TIMED(m, PHASE_FFN,
              ffn_forward(c, s->ffn, s->ffn_h, f, fin, N, m->D, m->F, m->ffn_dropout,
                          s->site));
        return;
    }
    bool cross = s->kind == SUB_CROSS_ATTN;
    double core0 = attn_core_clock(m, s);
    TIMED(m, PHASE_ATTENTION,
          attention_forward(c, s->attn, &s->cache, f, fin, cross ? m->enc_out : fin, sub_mask(s, b),
                            b->B, Tq, cross ? b->S : Tq, m->w.big));
    m->seconds[PHASE_ATTENTION] -= m->seconds[PHASE_ATTN_CORE] - core0;
}

/* dfin = beta * dfin + the branch's input gradient from df; cross-attention adds into d_enc. */
static void branch_backward(Model *m, const Ctx *c, Sublayer *s, float *dfin, float beta,
                            const float *df, const float *fin, const ModelBatch *b, bool dec) {
    const int Tq = dec ? b->T : b->S, N = b->B * Tq;
    if (s->kind == SUB_FFN) {
        TIMED(m, PHASE_FFN,
              ffn_backward(c, s->ffn, s->dffn, dfin, beta, m->w.h, df, s->ffn_h, fin, N, m->D,
                           m->F, m->ffn_dropout, s->site));
        return;
    }
    bool cross = s->kind == SUB_CROSS_ATTN;
    double core0 = attn_core_clock(m, s);
    TIMED(m, PHASE_ATTENTION,
          attention_backward(c, s->attn, &s->cache, dfin, beta, cross ? m->w.d_enc : dfin, df, fin,
                             cross ? m->enc_out : fin, sub_mask(s, b), b->B, Tq,
                             cross ? b->S : Tq, m->w.big));
    m->seconds[PHASE_ATTENTION] -= m->seconds[PHASE_ATTN_CORE] - core0;
}

const float *sublayer_in(const Model *m, const Sublayer *s, SubState st, const float *x,
                         float *fin, int N) {
    if (!m->pre_norm) return x;
    layernorm_forward(fin, st.mean, st.rstd, x, s->ln.g, s->ln.b, N, m->D);
    return fin;
}

const float *sublayer_out(const Model *m, const Sublayer *s, SubState st, const float *x,
                          const float *f, float *out, int N, Dropout mask) {
    if (m->pre_norm) {
        residual_forward(st.saved, x, f, (long)N * m->D, mask);
        return st.saved;
    }
    residual_layernorm_forward(out, st.saved, st.mean, st.rstd, x, f, s->ln.g, s->ln.b, N, m->D,
                               mask);
    return out;
}

/* Returns the sublayer output: in `out` (post-LN) or in s->saved (pre-LN). */
static const float *sublayer_forward(Model *m, const Ctx *c, Sublayer *s, const float *x,
                                     float *out, const ModelBatch *b, bool dec) {
    const int N = sub_rows(b, dec);
    SubState st = {s->saved, s->mean, s->rstd};
    const float *fin, *y;
    TIMED(m, PHASE_NORM, fin = sublayer_in(m, s, st, x, m->w.fin, N));
    branch_forward(m, c, s, m->w.f, fin, b, dec);
    TIMED(m, PHASE_NORM,
          y = sublayer_out(m, s, st, x, m->w.f, out, N, dropout_make(c, m->dropout, s->site + 1)));
    return y;
}

/* The input of sublayer k of a stack, recomputed in `buf` when it was not kept (post-LN). */
static const float *sublayer_input(Model *m, const Sublayer *sub, int k, const float *x0,
                                   float *buf, int N) {
    if (k == 0) return x0;
    const Sublayer *prev = &sub[k - 1];
    if (m->pre_norm) return prev->saved;
    TIMED(m, PHASE_NORM,
          layernorm_apply(buf, prev->saved, prev->mean, prev->rstd, prev->ln.g, prev->ln.b, N, m->D));
    return buf;
}

/* dx (written) = gradient of the sublayer input x, from d_out. */
static void sublayer_backward(Model *m, const Ctx *c, Sublayer *s, float *dx, const float *d_out,
                              const float *x, const ModelBatch *b, bool dec) {
    const int N = sub_rows(b, dec), D = m->D;
    const long n = (long)N * D;
    Dropout mask = dropout_make(c, m->dropout, s->site + 1);
    float *df = m->w.f;
    if (!m->pre_norm) {  // out = LN(x + drop(f(x))): dx = the LayerNorm's gradient, then f's added
        TIMED(m, PHASE_NORM,
              layernorm_backward(dx, df, mask, s->dln.g, s->dln.b, d_out, NULL, s->saved, s->mean,
                                 s->rstd, s->ln.g, N, D, m->w.ln_grad));
        branch_backward(m, c, s, dx, 1.0f, df, x, b, dec);
        return;
    }
    // pre-LN: out = x + drop(f(LN(x))), LN(x) recomputed; dx = d_out + the gradient through LN
    TIMED(m, PHASE_NORM, {
        dropout_apply(df, d_out, n, mask);
        layernorm_apply(m->w.fin, x, s->mean, s->rstd, s->ln.g, s->ln.b, N, D);
    });
    branch_backward(m, c, s, m->w.dfin, 0.0f, df, m->w.fin, b, dec);
    TIMED(m, PHASE_NORM,
          layernorm_backward(dx, NULL, mask, s->dln.g, s->dln.b, m->w.dfin, d_out, x, s->mean,
                             s->rstd, s->ln.g, N, D, m->w.ln_grad));
}

/* Runs a stack from x0; its output (after the final LayerNorm when pre-LN) goes to out. */
static void stack_forward(Model *m, const Ctx *c, Sublayer *sub, int n, const float *x0,
                          const NormParams *final_ln, float *stats, float *out,
                          const ModelBatch *b, bool dec) {
    const int N = b->B * (dec ? b->T : b->S);
    const float *x = x0;
    for (int k = 0; k < n; k++) x = sublayer_forward(m, c, &sub[k], x, m->w.xout[k % 2], b, dec);
    if (m->pre_norm)
        TIMED(m, PHASE_NORM,
              layernorm_forward(out, stats, stats + N, x, final_ln->g, final_ln->b, N, m->D));
    else
        memcpy(out, x, sizeof(float) * N * m->D);
}

static void grads_done(const Model *m, ParamRange span) {
    if (m->grads_done && span.count) m->grads_done(m->grads_done_arg, span);
}

/* From d_out (gradient of the stack output, in one of the ping-pong buffers), leaves the
 * gradient of x0 in one of them and returns it. */
static float *stack_backward(Model *m, const Ctx *c, Sublayer *sub, int n, const float *x0,
                             const NormParams *final_ln, const NormParams *dfinal_ln,
                             ParamRange final_span, const float *stats, const float *d_out,
                             const ModelBatch *b, bool dec) {
    const int N = b->B * (dec ? b->T : b->S);
    float *d = d_out == m->w.d_a ? m->w.d_b : m->w.d_a, *spare, *t;
    if (m->pre_norm) {  // the final LayerNorm, over the last sublayer's output
        const float *last = n ? sub[n - 1].saved : x0;
        TIMED(m, PHASE_NORM,
              layernorm_backward(d, NULL, (Dropout){0, 0, 1.0f}, dfinal_ln->g, dfinal_ln->b,
                                 d_out, NULL, last, stats, stats + N, final_ln->g, N, m->D,
                                 m->w.ln_grad));
        grads_done(m, final_span);
    } else {
        memcpy(d, d_out, sizeof(float) * N * m->D);
    }
    spare = d == m->w.d_a ? m->w.d_b : m->w.d_a;
    for (int k = n - 1; k >= 0; k--) {
        const float *x = sublayer_input(m, sub, k, x0, m->w.xin, N);
        sublayer_backward(m, c, &sub[k], spare, d, x, b, dec);
        grads_done(m, sub[k].layer_done);
        t = d, d = spare, spare = t;
    }
    return d;
}

/* ---------------------------------------------------------------- the model */

static void embed(Model *m, const Ctx *c, float *x, const int32_t *tok, int B, int T, int site) {
    TIMED(m, PHASE_EMBED, {
        embedding_forward(x, tok, m->emb, m->pe, B, T, m->D, sqrtf((float)m->D), 0);
        dropout_apply(x, x, (long)B * T * m->D, dropout_make(c, m->dropout, site));
    });
}

static void embed_backward(Model *m, const Ctx *c, const float *dx, const int32_t *tok, int N,
                           int site) {
    TIMED(m, PHASE_EMBED, {
        float *d = m->w.f;  // through the embedding dropout
        dropout_apply(d, dx, (long)N * m->D, dropout_make(c, m->dropout, site));
        embedding_backward(m->demb, d, tok, N, m->D, sqrtf((float)m->D));
    });
}

void model_forward(Model *m, const Ctx *c, const ModelBatch *b) {
    bind_batch(m, b);
    embed(m, c, m->enc_x0, b->src, b->B, b->S, SITE_SRC_EMB);
    stack_forward(m, c, m->enc_sub, 2 * m->n_enc, m->enc_x0, &m->enc_final, m->enc_fin_stats,
                  m->enc_out, b, false);
    embed(m, c, m->dec_x0, b->tgt_in, b->B, b->T, SITE_TGT_EMB);
    stack_forward(m, c, m->dec_sub, 3 * m->n_dec, m->dec_x0, &m->dec_final, m->dec_fin_stats,
                  m->dec_out, b, true);
}

void model_encode(Model *m, const Ctx *c, const int32_t *src, const int *src_len, int B, int S) {
    ModelBatch b = {B, S, 1, src, NULL, NULL, src_len, NULL};
    bind_batch(m, &b);
    embed(m, c, m->enc_x0, src, B, S, SITE_SRC_EMB);
    stack_forward(m, c, m->enc_sub, 2 * m->n_enc, m->enc_x0, &m->enc_final, m->enc_fin_stats,
                  m->enc_out, &b, false);
}

void model_loss(Model *m, const Ctx *c, const ModelBatch *b, LossStats *st, bool backward,
                float label_smoothing) {
    const int Nt = b->B * b->T;
    TIMED(m, PHASE_LOSS,
          loss_forward_backward(c, st, backward ? m->w.d_a : NULL, m->demb, m->dec_out,
                                b->tgt_out, m->emb, Nt, m->D, m->V, label_smoothing, TOKEN_PAD,
                                m->w.big, m->w.emb_packed));
}

void model_backward(Model *m, const Ctx *c, const ModelBatch *b) {
    // the loss left d(dec_out) in d_a; every cross-attention adds into d_enc
    memset(m->w.d_enc, 0, sizeof(float) * b->B * b->S * m->D);
    const float *d = stack_backward(m, c, m->dec_sub, 3 * m->n_dec, m->dec_x0, &m->dec_final,
                                    &m->ddec_final, m->dec_final_span, m->dec_fin_stats, m->w.d_a,
                                    b, true);
    embed_backward(m, c, d, b->tgt_in, b->B * b->T, SITE_TGT_EMB);
    d = stack_backward(m, c, m->enc_sub, 2 * m->n_enc, m->enc_x0, &m->enc_final, &m->denc_final,
                       m->enc_final_span, m->enc_fin_stats, m->w.d_enc, b, false);
    embed_backward(m, c, d, b->src, b->B * b->S, SITE_SRC_EMB);
    grads_done(m, m->emb_span);
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
