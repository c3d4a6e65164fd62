/* test_flops.c: the analytic FLOP counts of model/flops.h equal the work actually issued. A
 * counting GEMM backend (the reference GEMM behind a wrapper that adds 2*M*N*K per call, from any
 * thread) runs a training step (forward and loss, then also backward) and a beam and a greedy
 * search with a fixed output length; every count must match model_step_flops /
 * model_decode_flops exactly (but for the attention core, which runs its own kernel and is
 * checked against a count by hand), for concat attention (reduced and full key width), collab with
 * the content bias and with the query bias, post- and pre-LN, and unequal source and target
 * lengths with padding. A product the formulas miss, or one they count that is not computed,
 * makes the totals differ. */
#include <string.h>

#include "flops.h"
#include "rng.h"
#include "search.h"
#include "test_util.h"

static long long counted;  // FLOPs issued through the counting backend

static void count(int M, int N, int K) {
    __atomic_fetch_add(&counted, 2LL * M * N * K, __ATOMIC_RELAXED);
}

static void counting_sgemm(bool ta, bool tb, int M, int N, int K, float alpha, const float *A,
                           int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    count(M, N, K);
    gemm_lookup("ref")->sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

static void counting_sgemm_serial(bool ta, bool tb, int M, int N, int K, float alpha,
                                  const float *A, int lda, const float *B, int ldb, float beta,
                                  float *C, int ldc) {
    count(M, N, K);
    gemm_lookup("ref")->sgemm_serial(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

static const GemmImpl counting = {"counting", "ref, counting FLOPs", counting_sgemm,
                                  counting_sgemm_serial, NULL, NULL, NULL};

typedef struct Case {
    AttentionMode attention;
    CollabBias collab_bias;
    NormPlacement norm;
    int dk, enc_layers, dec_layers;
} Case;

enum { V = 53, B = 3, S = 7, T = 5, MAXLEN = 9 };

static void build(Model *m, const Case *k) {
    ModelConfig cfg = {0};
    cfg.d_model = 32, cfg.heads = 4, cfg.ffn = 48, cfg.enc_layers = k->enc_layers;
    cfg.dec_layers = k->dec_layers, cfg.norm = k->norm, cfg.attention = k->attention;
    cfg.dk = k->dk, cfg.collab_bias = k->collab_bias;
    cfg.dropout = cfg.attention_dropout = cfg.ffn_dropout = 0.1;
    model_build(m, &cfg, V);
    model_init_params(m, 3);
    model_plan(m, B * MAXLEN, MAXLEN);
}

static void expect_count(const char *what, const Case *k, double want) {
    EXPECT(counted > 0 && (double)counted == want,
           "%s, %s attention (dk %d, %s bias, %s-LN): %lld FLOPs issued, %.0f counted", what,
           attention_mode_name(k->attention), k->dk, collab_bias_name(k->collab_bias),
           norm_placement_name(k->norm), counted, want);
}

/* The attention core's count of a step (it runs its own kernel, not the GEMM interface), by hand:
 * per call, scores over the columns the heads score (W in all for concat, W per head for collab)
 * and P·V over D; backward 3x the scores and 4x P·V. */
static void expect_core(const Case *k, const Model *m, double got, bool backward) {
    const double W = m->ad.W, D = m->ad.D, H = m->ad.H;
    const double scored = k->attention == ATTENTION_COLLAB ? W * H : W;
    const double pairs = k->enc_layers * (double)S * S + k->dec_layers * ((double)T * T + (double)T * S);
    const double scores = 2.0 * B * pairs * scored, pv = 2.0 * B * pairs * D;
    const double want = backward ? 3.0 * scores + 4.0 * pv : scores + pv;
    EXPECT(got == want, "%s attention (dk %d) core: %.0f FLOPs counted, %.0f by hand",
           attention_mode_name(k->attention), k->dk, got, want);
}

static void check_step(const Case *k) {
    Model m;
    build(&m, k);
    int32_t src[B * S], tin[B * T], tout[B * T];
    int slen[B] = {S, 4, 6}, tlen[B] = {3, T, 2};
    Rng r = rng_init(4, 0);
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < S; t++) src[b * S + t] = t < slen[b] ? 4 + (int)rng_below(&r, V - 4) : 0;
        for (int t = 0; t < T; t++) {
            tin[b * T + t] = t < tlen[b] ? 4 + (int)rng_below(&r, V - 4) : 0;
            tout[b * T + t] = t < tlen[b] ? 4 + (int)rng_below(&r, V - 4) : 0;
        }
    }
    ModelBatch batch = {B, S, T, src, tin, tout, slen, tlen};
    Ctx c = {.gemm = &counting, .seed = 7, .step = 1, .train = true};
    for (int backward = 0; backward < 2; backward++) {
        LossStats st = {0};
        params_zero_grad(&m.params);
        counted = 0;
        model_step(&m, &c, &batch, &st, backward, 0.1f);
        ModelFlops f = model_step_flops(&m, B, S, T, backward);
        expect_count(backward ? "training step" : "forward and loss", k,
                     model_flops_total(f) - f.attention_core);
        expect_core(k, &m, f.attention_core, backward);
    }
    model_free(&m);
}

static void check_decode(const Case *k, int beam) {
    Model m;
    build(&m, k);
    int32_t src[B * S];
    int slen[B] = {S, 5, 3};
    Rng r = rng_init(5, 0);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < S; t++) src[b * S + t] = t < slen[b] ? 4 + (int)rng_below(&r, V - 4) : 0;
    DecodeCapacity cap = {B, beam, B * S, B * beam * T, MAXLEN};
    DecodeState st;
    decode_init(&st, &m, &cap);
    SearchOptions o = {beam, 0.6f, true, 0.0f, T, T};  // exactly T tokens, EOS never chosen
    int32_t out[B * T];
    int out_len[B];
    float score[B];
    SearchResult res = {out, T, out_len, score, 1, NULL};
    Ctx c = {.gemm = &counting};
    counted = 0;
    search_batch(&st, &c, &o, src, slen, B, S, &res);
    for (int b = 0; b < B; b++) EXPECT(out_len[b] == T, "sentence %d: %d tokens, not %d", b, out_len[b], T);
    ModelFlops f = model_decode_flops(&m, B, S, T, beam);
    expect_count(beam == 1 ? "greedy search" : "beam search", k, model_flops_total(f) - f.attention_core);
    decode_free(&st);
    model_free(&m);
}

int main(void) {
    const Case cases[] = {
        {ATTENTION_CONCAT, COLLAB_BIAS_CONTENT, NORM_POST, 16, 2, 1},
        {ATTENTION_CONCAT, COLLAB_BIAS_CONTENT, NORM_PRE, 0, 1, 2},
        {ATTENTION_COLLAB, COLLAB_BIAS_CONTENT, NORM_POST, 24, 2, 1},
        {ATTENTION_COLLAB, COLLAB_BIAS_QUERY, NORM_PRE, 8, 1, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        check_step(&cases[i]);
        check_decode(&cases[i], 1);
        check_decode(&cases[i], 3);
    }
    return test_finish();
}
