/* test_gradcheck.c: finite differences for every op and block with a hand-written backward:
 * LayerNorm (and its forward fused with the residual, against the two apart), embedding, the
 * label-smoothed loss, FFN (with dropout; ReLU kinks skipped), both attention implementations in
 * self (padded, causal) and cross form with and without dropout (also at sizes that span several
 * of the fused core's row blocks and column tiles, and with lone query rows), and the whole tiny
 * model in both attention modes and both norm orders. */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "attention.h"
#include "ffn.h"
#include "gradcheck.h"
#include "loss.h"
#include "model.h"

static const GemmImpl *gemm;

static float *randv(long n, float scale, Rng *r) {
    float *x = malloc(sizeof(float) * n);
    fill_uniform(x, n, scale, r);
    return x;
}

/* max |a - b| over n elements */
static double max_abs_diff(const float *a, const float *b, long n) {
    double worst = 0;
    for (long i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]);
        // a comparison, not fmax: GCC 12.2 for arm64 crashes vectorizing fmax of widened floats
        if (e > worst) worst = e;
    }
    return worst;
}

/* x (n) set to NaN everywhere: what a pass must write before it reads. */
static void nan_fill(float *x, size_t n) { memset(x, 0xFF, sizeof(float) * n); }

/* (n) NaN everywhere: a gradient buffer that the backward must write, not add to. */
static float *unset(long n) {
    float *x = malloc(sizeof(float) * n);
    nan_fill(x, (size_t)n);
    return x;
}

/* ---------------------------------------------------------------- LayerNorm */

typedef struct { int N, D; float *x, *g, *b, *y, *mean, *rstd, *R; } LnCase;

static double ln_f(void *p) {
    LnCase *t = p;
    layernorm_forward(t->y, t->mean, t->rstd, t->x, t->g, t->b, t->N, t->D);
    return dot_double(t->y, t->R, (long)t->N * t->D);
}

static void check_layernorm(void) {
    Rng r = rng_init(1, 0);
    LnCase t = {.N = 37, .D = 12};  // parameter gradients in blocks of 16 rows: 16 + 16 + 5
    long n = (long)t.N * t.D;
    t.x = randv(n, 2, &r), t.R = randv(n, 1, &r), t.y = randv(n, 0, &r);
    t.g = randv(t.D, 0.5f, &r), t.b = randv(t.D, 1, &r);
    for (int j = 0; j < t.D; j++) t.g[j] += 1.0f;
    t.mean = randv(t.N, 0, &r), t.rstd = randv(t.N, 0, &r);
    float *dx = unset(n), *dg = calloc(t.D, 4), *db = calloc(t.D, 4);  // (N, D), (D), (D)
    float *partial = unset((long)layernorm_grad_floats(t.N, t.D)), *df = unset(n);  // df (N, D)
    Ctx c = {.seed = 4, .step = 1, .train = true};
    Dropout drop = dropout_make(&c, 0.3f, 5);
    ln_f(&t);
    layernorm_backward(dx, df, drop, dg, db, t.R, NULL, t.x, t.mean, t.rstd, t.g, t.N, t.D,
                       partial);
    // df, made in the same pass, is dropout_apply(dx) exactly
    float *dropped = unset(n);  // (N, D)
    dropout_apply(dropped, dx, n, drop);
    EXPECT(max_abs_diff(df, dropped, n) == 0.0, "layernorm_backward's df is not dropout(dx)");
    GcTensor ts[] = {{"x", t.x, dx, n}, {"g", t.g, dg, t.D}, {"b", t.b, db, t.D}};
    gradcheck("layernorm", ln_f, NULL, &t, ts, 3, (GcOptions){1e-2f, 60, 1e-2, 1e-3, 1e-5});
    // with a residual gradient: dx = res + the same gradient (rounded once or twice: FMA)
    float *res = randv(n, 1, &r), *dx_res = unset(n);  // (N, D), (N, D)
    layernorm_backward(dx_res, NULL, drop, dg, db, t.R, res, t.x, t.mean, t.rstd, t.g, t.N, t.D,
                       partial);
    int wrong = 0;
    for (long i = 0; i < n; i++) {
        float sum = res[i] + dx[i], tol = 2 * FLT_EPSILON * (fabsf(res[i]) + fabsf(dx[i]));
        wrong += !(fabsf(dx_res[i] - sum) <= tol);
    }
    EXPECT(wrong == 0, "layernorm_backward with a residual gradient: %d of %ld differ", wrong, n);
    free(t.x), free(t.R), free(t.y), free(t.g), free(t.b), free(t.mean), free(t.rstd);
    free(dx), free(dg), free(db), free(res), free(dx_res), free(partial), free(df), free(dropped);
}

/* ---------------------------------------------------------------- embedding */

typedef struct { int B, T, D; int32_t *tok; float *emb, *pe, *x, *R; } EmbCase;

static double emb_f(void *p) {
    EmbCase *t = p;
    embedding_forward(t->x, t->tok, t->emb, t->pe, t->B, t->T, t->D, 2.5f, 1);
    return dot_double(t->x, t->R, (long)t->B * t->T * t->D);
}

static void check_embedding(void) {
    Rng r = rng_init(2, 0);
    EmbCase t = {.B = 2, .T = 3, .D = 8};
    int32_t tok[] = {4, 1, 4, 0, 9, 4};  // repeated tokens accumulate
    int V = 10;
    t.tok = tok;
    t.emb = randv((long)V * t.D, 1, &r), t.pe = randv(8L * t.D, 0, &r);
    position_table_fill(t.pe, 8, t.D);
    t.x = randv(48, 0, &r), t.R = randv(48, 1, &r);
    float *demb = calloc((size_t)V * t.D, 4);
    embedding_backward(demb, t.R, tok, 6, t.D, 2.5f);
    GcTensor ts[] = {{"emb", t.emb, demb, (long)V * t.D}};
    gradcheck("embedding", emb_f, NULL, &t, ts, 1, (GcOptions){1e-2f, 80, 1e-3, 1e-4, 1e-5});
    free(t.emb), free(t.pe), free(t.x), free(t.R), free(demb);
}

/* ---------------------------------------------------------------- loss */

typedef struct {
    int N, D, V;
    float *h, *emb, *work;
    int32_t *tgt;
    GemmPackedB packed[2];
} LossCase;

static double loss_f(void *p) {
    LossCase *t = p;
    Ctx c = {.gemm = gemm};
    LossStats st = {0};
    loss_forward_backward(&c, &st, NULL, NULL, t->h, t->tgt, t->emb, t->N, t->D, t->V, 0.1f,
                          TOKEN_PAD, t->work, t->packed);
    return st.loss;
}

static void packed_free(GemmPackedB packed[2]) {
    for (int i = 0; i < 2; i++) gemm_packed_b_free(&packed[i]);
}

static void check_loss(void) {
    Rng r = rng_init(3, 0);
    int32_t tgt[] = {5, 7, TOKEN_PAD, 10, 4, 5};
    LossCase t = {.N = 6, .D = 8, .V = 11};
    t.tgt = tgt;
    t.h = randv((long)t.N * t.D, 1, &r), t.emb = randv((long)t.V * t.D, 1, &r);
    t.work = malloc(sizeof(float) * loss_work_floats(t.V));
    float *dh = unset((long)t.N * t.D), *demb = calloc((size_t)t.V * t.D, 4);  // written, added
    Ctx c = {.gemm = gemm};
    LossStats st = {0};
    loss_forward_backward(&c, &st, dh, demb, t.h, tgt, t.emb, t.N, t.D, t.V, 0.1f, TOKEN_PAD,
                          t.work, t.packed);
    EXPECT(st.ntok == 5, "loss counts non-pad tokens: %ld", st.ntok);
    EXPECT(st.loss > st.nll * 0.5 && st.nll > 0, "loss %g nll %g", st.loss, st.nll);
    for (int j = 0; j < t.D; j++) EXPECT(dh[2 * t.D + j] == 0.0f, "pad row has no gradient");
    GcTensor ts[] = {{"h", t.h, dh, (long)t.N * t.D}, {"emb", t.emb, demb, (long)t.V * t.D}};
    gradcheck("loss", loss_f, NULL, &t, ts, 2, (GcOptions){1e-2f, 60, 1e-2, 1e-3, 1e-5});
    free(t.h), free(t.emb), free(t.work), free(dh), free(demb);
    packed_free(t.packed);
}

/* The output layer in chunks of loss_chunk_rows(V) rows equals the same rows one call at a time:
 * a vocabulary large enough for three chunks. */
static void check_loss_chunks(void) {
    Rng r = rng_init(4, 0);
    const int D = 4, V = 70000, rows = loss_chunk_rows(V), N = 2 * rows + rows / 2;
    EXPECT(rows < N / 2, "a 70000-entry vocabulary gives chunks of %d rows", rows);
    int32_t *tgt = malloc(sizeof(int32_t) * N);
    for (int i = 0; i < N; i++) tgt[i] = i % 7 == 3 ? TOKEN_PAD : 4 + (int32_t)rng_below(&r, V - 4);
    float *h = randv((long)N * D, 1, &r), *emb = randv((long)V * D, 1, &r);
    float *work = malloc(sizeof(float) * loss_work_floats(V));
    float *dh = calloc((size_t)N * D, 4), *demb = calloc((size_t)V * D, 4);
    float *dh1 = calloc((size_t)N * D, 4), *demb1 = calloc((size_t)V * D, 4);
    Ctx c = {.gemm = gemm};
    LossStats all = {0}, one = {0};
    GemmPackedB packed[2] = {0};
    loss_forward_backward(&c, &all, dh, demb, h, tgt, emb, N, D, V, 0.1f, TOKEN_PAD, work, packed);
    for (int i = 0; i < N; i++)
        loss_forward_backward(&c, &one, dh1 + (size_t)i * D, demb1, h + (size_t)i * D, tgt + i,
                              emb, 1, D, V, 0.1f, TOKEN_PAD, work, packed);
    packed_free(packed);
    EXPECT(all.ntok == one.ntok, "tokens %ld vs %ld", all.ntok, one.ntok);
    EXPECT(fabs(all.loss - one.loss) <= 1e-9 * fabs(one.loss), "loss %.12g vs %.12g", all.loss, one.loss);
    EXPECT(fabs(all.nll - one.nll) <= 1e-9 * fabs(one.nll), "nll %.12g vs %.12g", all.nll, one.nll);
    double worst = max_abs_diff(dh, dh1, (long)N * D);
    EXPECT(worst <= 1e-5, "dh differs by %g", worst);  // float sums in another order
    worst = max_abs_diff(demb, demb1, (long)V * D);
    EXPECT(worst <= 1e-5, "demb differs by %g", worst);
    free(tgt), free(h), free(emb), free(work), free(dh), free(demb), free(dh1), free(demb1);
}

/* ---------------------------------------------------------------- FFN */

typedef struct { int N, D, F; FfnParams p; float *x, *h, *y, *R; Ctx c; } FfnCase;

static double ffn_f(void *q) {
    FfnCase *t = q;
    ffn_forward(&t->c, &t->p, t->h, t->y, t->x, t->N, t->D, t->F, 0.3f, 7);
    return dot_double(t->y, t->R, (long)t->N * t->D);
}

/* The kept units' ReLU signs: h > 0 exactly where a unit is positive and kept. */
static uint64_t ffn_kinks(void *q) {
    FfnCase *t = q;
    uint64_t h = 1469598103934665603ull;
    for (long i = 0; i < (long)t->N * t->F; i++) h = (h ^ (t->h[i] > 0)) * 1099511628211ull;
    return h;
}

static void check_ffn(void) {
    Rng r = rng_init(4, 0);
    FfnCase t = {.N = 5, .D = 8, .F = 16};
    t.c = (Ctx){.gemm = gemm, .seed = 11, .step = 3, .train = true};
    long nd = (long)t.N * t.D, nf = (long)t.N * t.F;
    t.p = (FfnParams){randv((long)t.F * t.D, 0.5f, &r), randv(t.F, 0.5f, &r),
                      randv((long)t.D * t.F, 0.5f, &r), randv(t.D, 0.5f, &r)};
    FfnParams g = {calloc(t.F * t.D, 4), calloc(t.F, 4), calloc(t.D * t.F, 4), calloc(t.D, 4)};
    t.x = randv(nd, 1, &r), t.R = randv(nd, 1, &r), t.y = randv(nd, 0, &r);
    t.h = randv(nf, 0, &r);
    float *dx = unset(nd), *dh = malloc(4 * nf);  // (N, D) written, (N, F)
    ffn_f(&t);
    ffn_backward(&t.c, &t.p, &g, dx, 0.0f, dh, t.R, t.h, t.x, t.N, t.D, t.F, 0.3f, 7);
    GcTensor ts[] = {{"x", t.x, dx, nd},          {"w_1", t.p.w_1, g.w_1, (long)t.F * t.D},
                     {"b_1", t.p.b_1, g.b_1, t.F}, {"w_2", t.p.w_2, g.w_2, (long)t.D * t.F},
                     {"b_2", t.p.b_2, g.b_2, t.D}};
    gradcheck("ffn (dropout 0.3)", ffn_f, ffn_kinks, &t, ts, 5, (GcOptions){1e-3f, 60, 1e-2, 1e-3, 1e-4});
    free(t.p.w_1), free(t.p.b_1), free(t.p.w_2), free(t.p.b_2);
    free(g.w_1), free(g.b_1), free(g.w_2), free(g.b_2);
    free(t.x), free(t.R), free(t.y), free(t.h), free(dx), free(dh);
}

/* ---------------------------------------------------------------- attention */

typedef struct {
    const char *label;
    AttentionMode mode;
    CollabBias bias;
    int D, H, W, B, Tq, Tk;
    bool self, causal;
    float dropout;
} AttnSpec;

typedef struct {
    AttnSpec s;
    ParamTable pt;
    Attention a;
    AttnCache cache;
    Arena arena;
    float *xq, *xkv, *out, *R, *work;
    int kv_len[4];
    Ctx c;
} AttnCase;

static AttnMask attn_mask(const AttnCase *t) {
    return (AttnMask){t->kv_len, t->s.causal, 0};
}

static double attn_f(void *q) {
    AttnCase *t = q;
    const float *xkv = t->s.self ? t->xq : t->xkv;
    attention_forward(&t->c, &t->a, &t->cache, t->out, t->xq, xkv, attn_mask(t), t->s.B, t->s.Tq,
                      t->s.Tk, t->work);
    return dot_double(t->out, t->R, (long)t->s.B * t->s.Tq * t->s.D);
}

/* fd_floor: the finite differences' noise, which grows with the number of outputs summed in f. */
static void check_attention(AttnSpec s, double fd_floor) {
    AttnCase t = {.s = s};
    Rng r = rng_init(5, (uint64_t)s.W * 31 + s.Tk);
    ModelConfig cfg = {0};
    cfg.d_model = s.D, cfg.heads = s.H, cfg.dk = s.W, cfg.attention = s.mode;
    cfg.collab_bias = s.bias, cfg.attention_dropout = s.dropout;
    AttnDims d = attn_dims(&cfg);
    const AttnImpl *impl = attn_impl(s.mode);
    params_init(&t.pt);
    attention_declare(&t.pt, "att", &d, impl, &cfg);
    params_finalize(&t.pt);
    params_initialize(&t.pt, 9);
    for (size_t i = 0; i < t.pt.numel; i++) t.pt.param[i] *= 2.0f;  // sharper softmax
    attention_bind(&t.a, &t.pt, "att", &d, impl, 5);
    t.c = (Ctx){.gemm = gemm, .seed = 21, .step = 2, .train = s.dropout > 0};
    for (int b = 0; b < s.B; b++) t.kv_len[b] = s.Tk - (b % 3);  // padded keys
    long nq = (long)s.B * s.Tq * s.D, nk = (long)s.B * s.Tk * s.D;
    t.xq = randv(nq, 1, &r), t.xkv = randv(nk, 1, &r), t.R = randv(nq, 1, &r);
    t.out = randv(nq, 0, &r);
    Arena measure;
    arena_init_measure(&measure);
    attention_cache_alloc(&t.cache, &measure, &d, s.B, s.Tq, s.Tk);
    arena_init(&t.arena, measure.peak);
    attention_cache_alloc(&t.cache, &t.arena, &d, s.B, s.Tq, s.Tk);
    const size_t work_floats = attention_work_floats(&t.a, s.B, s.Tq, s.Tk, omp_get_max_threads());
    t.work = aligned_alloc_zeroed(sizeof(float) * work_floats);
    float *dxq = unset(nq), *dxkv = calloc(nk, 4);  // (B, Tq, D) written, (B, Tk, D) added
    attn_f(&t);
    // the backward's workspace starts as NaN: every gradient it reads there it must have written
    nan_fill(t.work, work_floats);
    const float *xkv = s.self ? t.xq : t.xkv;
    attention_backward(&t.c, &t.a, &t.cache, dxq, 0.0f, s.self ? dxq : dxkv, t.R, t.xq, xkv,
                       attn_mask(&t), s.B, s.Tq, s.Tk, t.work);
    GcTensor ts[32];
    int nt = 0;
    ts[nt++] = (GcTensor){"xq", t.xq, dxq, nq};
    if (!s.self) ts[nt++] = (GcTensor){"xkv", t.xkv, dxkv, nk};
    for (int i = 0; i < t.pt.count; i++)
        ts[nt++] = (GcTensor){t.pt.info[i].name, t.pt.param + t.pt.info[i].offset,
                              t.pt.grad + t.pt.info[i].offset, (long)t.pt.info[i].numel};
    gradcheck(s.label, attn_f, NULL, &t, ts, nt, (GcOptions){1e-2f, 40, 1e-2, 2e-3, fd_floor});
    params_free(&t.pt);
    arena_free(&t.arena);
    aligned_free(t.work);
    free(t.xq), free(t.xkv), free(t.R), free(t.out), free(dxq), free(dxkv);
}

/* ---------------------------------------------------------------- whole model */

typedef struct {
    Model m;
    ModelBatch b;
    Ctx c;
} ModelCase;

static double model_f(void *q) {
    ModelCase *t = q;
    LossStats st = {0};
    model_step(&t->m, &t->c, &t->b, &st, false, 0.1f);
    return st.loss;
}

static uint64_t model_kinks(void *q) {
    ModelCase *t = q;
    uint64_t h = 1469598103934665603ull;
    const ModelBatch *b = &t->b;
    const int F = t->m.F;
    for (int l = 0; l < t->m.n_enc + t->m.n_dec; l++) {  // kept ReLU signs of non-pad positions
        bool enc = l < t->m.n_enc;
        const float *hid = enc ? t->m.enc_sub[2 * l + 1].ffn_h
                               : t->m.dec_sub[3 * (l - t->m.n_enc) + 2].ffn_h;
        int L = enc ? b->S : b->T;
        for (int s = 0; s < b->B; s++)
            for (int pos = 0; pos < (enc ? b->src_len[s] : b->tgt_len[s]); pos++)
                for (int j = 0; j < F; j++)
                    h = (h ^ (hid[((long)s * L + pos) * F + j] > 0)) * 1099511628211ull;
    }
    return h;
}

static void check_model(const char *label, AttentionMode mode, CollabBias bias, NormPlacement norm,
                        int dk, float dropout) {
    ModelCase t;
    ModelConfig cfg = {0};
    cfg.d_model = 16, cfg.heads = 4, cfg.ffn = 24, cfg.enc_layers = 2, cfg.dec_layers = 2;
    cfg.norm = norm, cfg.attention = mode, cfg.dk = dk, cfg.collab_bias = bias;
    cfg.dropout = cfg.attention_dropout = cfg.ffn_dropout = dropout;
    model_build(&t.m, &cfg, 13);
    model_init_params(&t.m, 3);
    for (size_t i = 0; i < t.m.params.numel; i++) t.m.params.param[i] *= 1.5f;
    // FFN biases well above zero keep every ReLU input away from its kink, so the finite
    // differences of the whole model are smooth (kinks themselves are covered by check_ffn).
    for (int l = 0; l < 4; l++) {
        FfnParams *f = l < 2 ? &t.m.enc[l].ffn : &t.m.dec[l - 2].ffn;
        for (int j = 0; j < cfg.ffn; j++) f->b_1[j] = 6.0f;
    }
    model_plan(&t.m, 18, 6);
    static const int32_t src[] = {5, 6, 7, 8, 3, 9, 10, 3, 0, 0, 11, 4, 12, 3, 0};
    static const int32_t tin[] = {2, 5, 6, 7, 0, 0, 2, 8, 9, 10, 11, 12, 2, 4, 0, 0, 0, 0};
    static const int32_t tout[] = {5, 6, 7, 3, 0, 0, 8, 9, 10, 11, 12, 3, 4, 3, 0, 0, 0, 0};
    static const int slen[] = {5, 3, 4}, tlen[] = {4, 6, 2};
    t.b = (ModelBatch){3, 5, 6, src, tin, tout, slen, tlen};
    t.c = (Ctx){.gemm = gemm, .seed = 77, .step = 5, .train = dropout > 0};
    params_zero_grad(&t.m.params);
    LossStats st = {0};
    model_step(&t.m, &t.c, &t.b, &st, true, 0.1f);
    EXPECT(st.ntok == 12, "%s: target tokens %ld", label, st.ntok);
    GcTensor ts[128];
    int nt = 0;
    for (int i = 0; i < t.m.params.count; i++) {
        const ParamInfo *p = &t.m.params.info[i];
        ts[nt++] = (GcTensor){p->name, t.m.params.param + p->offset, t.m.params.grad + p->offset,
                              (long)p->numel};
    }
    gradcheck(label, model_f, model_kinks, &t, ts, nt, (GcOptions){1e-2f, 10, 2e-2, 2e-3, 5e-4});
    model_free(&t.m);
}

/* The masks drop a fraction p and keep the expectation: mean(dropout(1)) = 1. */
static void check_dropout_rate(void) {
    const long n = 1 << 20;
    float *x = malloc(sizeof(float) * n);
    for (int site = 0; site < 3; site++) {
        float p = 0.1f + 0.2f * site;
        Ctx c = {.seed = 9, .step = (uint64_t)site, .train = true};
        for (long i = 0; i < n; i++) x[i] = 1.0f;
        dropout_apply(x, x, n, dropout_make(&c, p, site));
        long zeros = 0;
        double sum = 0;
        for (long i = 0; i < n; i++) zeros += x[i] == 0.0f, sum += x[i];
        EXPECT(fabs((double)zeros / n - p) < 0.003, "dropout %g drops %g", p, (double)zeros / n);
        EXPECT(fabs(sum / n - 1.0) < 0.005, "dropout %g: mean %g", p, sum / n);
        Ctx eval = c;
        eval.train = false;
        EXPECT(dropout_make(&eval, p, site).key == 0, "dropout is off outside training");
    }
    free(x);
}

/* The mask as ops.h defines it, one element at a time: kept iff 16 bits of rng_u64(key, i / 4),
 * lane i % 4, are >= threshold. */
static float factor_of(const Dropout *d, uint64_t i) {
    uint32_t bits = (uint32_t)(rng_u64(d->key, i >> 2) >> ((i & 3) * 16)) & 0xFFFFu;
    return bits >= d->threshold ? d->scale : 0.0f;
}

/* dropout_mul and the chunked layers, which hash once per four elements, apply exactly that mask,
 * for every alignment of the run and across chunks. */
static void check_dropout_mul(void) {
    Ctx c = {.seed = 4, .step = 1, .train = true};
    Dropout d = dropout_make(&c, 0.3f, 2);
    enum { N = 2 * DROPOUT_CHUNK + 37 };
    float *x = malloc(sizeof(float) * N), *out = malloc(sizeof(float) * N);  // (N), (N)
    for (int e = 0; e < N; e++) x[e] = 1.0f + 0.25f * (e % 24);
    long wrong = 0;
    for (uint64_t first = 0; first < 9; first++)
        for (int n = 0; n <= 24; n++) {
            dropout_mul(out, x, n, first, &d);
            for (int e = 0; e < n; e++) wrong += out[e] != x[e] * factor_of(&d, first + e);
        }
    dropout_mul(out, x, N, 3, &d);
    for (int e = 0; e < N; e++) wrong += out[e] != x[e] * factor_of(&d, 3 + e);
    memcpy(out, x, sizeof(float) * N);
    dropout_apply(out, out, N, d);  // in place, as the forward
    for (int e = 0; e < N; e++) wrong += out[e] != x[e] * factor_of(&d, e);
    nan_fill(out, N);
    dropout_apply(out, x, N, d);  // written elsewhere, as the backward
    for (int e = 0; e < N; e++) wrong += out[e] != x[e] * factor_of(&d, e);
    EXPECT(wrong == 0, "dropout_mul and dropout_apply differ from the mask in %ld elements", wrong);
    nan_fill(out, N);
    dropout_apply(out, x, N, dropout_make(&(Ctx){.train = false}, 0.3f, 2));  // off: a copy
    EXPECT(memcmp(out, x, sizeof(float) * N) == 0, "dropout_apply without a mask does not copy");
    free(x), free(out);
}

/* residual_layernorm_forward is residual_forward then layernorm_forward, to the bit: rows whose
 * first element is not a multiple of 4 (D = 37) and rows longer than a dropout chunk. */
static void check_residual_layernorm(void) {
    Rng r = rng_init(5, 0);
    Ctx on = {.seed = 4, .step = 1, .train = true}, off = {.train = false};
    const int N = 3, sizes[] = {37, DROPOUT_CHUNK + 37};
    for (int si = 0; si < 2; si++)
        for (int train = 0; train < 2; train++) {
            const int D = sizes[si];
            const long n = (long)N * D;
            Dropout d = dropout_make(train ? &on : &off, 0.3f, 2);
            float *x = randv(n, 2, &r), *f = randv(n, 1, &r), *g = randv(D, 1, &r);
            float *b = randv(D, 1, &r);
            float *sum = unset(n), *y = unset(n), *stats = unset(2 * N);  // (N, D) (N, D) (2, N)
            float *sum_ref = unset(n), *y_ref = unset(n), *stats_ref = unset(2 * N);
            residual_layernorm_forward(y, sum, stats, stats + N, x, f, g, b, N, D, d);
            residual_forward(sum_ref, x, f, n, d);
            layernorm_forward(y_ref, stats_ref, stats_ref + N, sum_ref, g, b, N, D);
            bool same = !memcmp(sum, sum_ref, sizeof(float) * n) &&
                        !memcmp(y, y_ref, sizeof(float) * n) &&
                        !memcmp(stats, stats_ref, sizeof(float) * 2 * N);
            EXPECT(same,
                   "residual_layernorm_forward (D %d, dropout %s) differs from residual_forward "
                   "then layernorm_forward", D, train ? "on" : "off");
            free(x), free(f), free(g), free(b), free(sum), free(y), free(stats);
            free(sum_ref), free(y_ref), free(stats_ref);
        }
}

int main(void) {
    gemm = gemm_select("auto");
    check_dropout_rate();
    check_dropout_mul();
    check_layernorm();
    check_residual_layernorm();
    check_embedding();
    check_loss();
    check_loss_chunks();
    check_ffn();
    AttnSpec specs[] = {
        {"concat self padded", ATTENTION_CONCAT, COLLAB_BIAS_CONTENT, 16, 4, 16, 2, 5, 5, true, false, 0.0f},
        {"concat self causal dropout", ATTENTION_CONCAT, COLLAB_BIAS_CONTENT, 16, 4, 16, 3, 6, 6, true, true, 0.2f},
        {"concat cross reduced dk", ATTENTION_CONCAT, COLLAB_BIAS_CONTENT, 16, 4, 8, 2, 3, 5, false, false, 0.0f},
        {"collab self content", ATTENTION_COLLAB, COLLAB_BIAS_CONTENT, 16, 4, 6, 2, 5, 5, true, false, 0.0f},
        {"collab cross content", ATTENTION_COLLAB, COLLAB_BIAS_CONTENT, 16, 2, 16, 3, 4, 6, false, false, 0.0f},
        {"collab causal query bias dropout", ATTENTION_COLLAB, COLLAB_BIAS_QUERY, 12, 3, 5, 2, 5, 5, true, true, 0.2f},
    };
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) check_attention(specs[i], 1e-4);
    // the fused core's blocking: two query-row blocks (32 + a partial one), keys and head widths
    // spanning whole and partial column tiles (16 or 32 columns), causal and padding masks,
    // dropout, and lone query rows (as in decoding) over 70 keys and an 88-wide head, which take
    // 64 columns at once; f sums thousands of outputs, so its noise floor is higher (the key
    // bias, whose gradient is 0)
    AttnSpec blocks[] = {
        {"core blocks concat causal padded dropout", ATTENTION_CONCAT, COLLAB_BIAS_CONTENT, 40, 2, 40, 3, 37, 37, true, true, 0.2f},
        {"core blocks collab cross content dropout", ATTENTION_COLLAB, COLLAB_BIAS_CONTENT, 24, 3, 20, 2, 35, 18, false, false, 0.2f},
        {"core lone rows concat cross", ATTENTION_CONCAT, COLLAB_BIAS_CONTENT, 176, 2, 176, 2, 1, 70, false, false, 0.0f},
    };
    for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++) check_attention(blocks[i], 5e-4);
    check_model("model concat post-LN", ATTENTION_CONCAT, COLLAB_BIAS_CONTENT, NORM_POST, 0, 0.0f);
    check_model("model concat pre-LN dropout", ATTENTION_CONCAT, COLLAB_BIAS_CONTENT, NORM_PRE, 8, 0.1f);
    check_model("model collab content post-LN", ATTENTION_COLLAB, COLLAB_BIAS_CONTENT, NORM_POST, 8, 0.0f);
    check_model("model collab query pre-LN dropout", ATTENTION_COLLAB, COLLAB_BIAS_QUERY, NORM_PRE, 16, 0.1f);
    return test_finish();
}
