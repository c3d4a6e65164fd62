/* test_search.c: decoding.
 *  - incremental decoding (KV caches, cross keys projected once) equals recomputing the decoder
 *    over the whole prefix, in both attention modes and both norm orders;
 *  - beam 1 is exactly greedy search (argmax of the recomputed decoder at every step);
 *  - batched decoding equals decoding one sentence at a time;
 *  - reordering the beams' caches gives every row its parent's keys and values (swaps, cycles,
 *    rows copied twice, rows left alone), and dropping a sentence moves the later ones up;
 *  - with a beam wide enough to keep every prefix, beam search returns the exhaustive optimum
 *    under both length penalties (the stopping rule never stops too early);
 *  - ensembles (of models of different architectures) follow the mean of the models'
 *    log-probabilities: greedy at every step, and the n best of beam search are the exhaustive n
 *    best; a model ensembled with a copy of itself is bit-identical to the model alone;
 *  - the first of the n best is the 1-best, and the n scores are in order;
 *  - a tiny model trained here on a copy task translates held-out sequences perfectly (beam 4). */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "model.h"
#include "optimizer.h"
#include "rng.h"
#include "search.h"
#include "test_util.h"

enum { MAXT = 12 };
static const GemmImpl *gemm;

static void build(Model *m, AttentionMode mode, NormPlacement norm, int V, int layers,
                  float sharpen) {
    ModelConfig cfg = {0};
    cfg.d_model = 32, cfg.heads = 4, cfg.ffn = 64, cfg.enc_layers = layers, cfg.dec_layers = layers;
    cfg.norm = norm, cfg.attention = mode, cfg.dk = 16, cfg.collab_bias = COLLAB_BIAS_CONTENT;
    model_build(m, &cfg, V);
    model_init_params(m, 11);
    for (size_t i = 0; i < m->params.numel; i++) m->params.param[i] *= sharpen;
    model_plan(m, 16 * MAXT, MAXT);
}

/* Logits (V) of the next token after prefix[0..t) for one source, by a full decoder pass. */
static void full_logits(Model *m, const int32_t *src, int slen, const int32_t *prefix, int t,
                        float *out) {
    int32_t tin[MAXT], tout[MAXT] = {0};
    tin[0] = TOKEN_BOS;
    for (int i = 0; i < t; i++) tin[i + 1] = prefix[i];
    int tl = t + 1;
    ModelBatch b = {1, slen, tl, src, tin, tout, &slen, &tl};
    Ctx c = {.gemm = gemm};
    model_forward(m, &c, &b);
    float *all = malloc(sizeof(float) * tl * m->V);
    model_logits(m, &c, all);
    memcpy(out, all + (size_t)t * m->V, sizeof(float) * m->V);
    free(all);
}

static void decoder(DecodeState *st, Model *m, int sents, int beam, int S, int T) {
    DecodeCapacity cap = {sents, beam, sents * S, sents * beam * T, S > T ? S : T};
    decode_init(st, m, &cap);
}

static void random_src(Rng *r, int32_t *src, int len, int V) {
    for (int i = 0; i < len - 1; i++) src[i] = 4 + (int32_t)rng_below(r, V - 4);
    src[len - 1] = TOKEN_EOS;
}

/* n random sources (n, S) of 2 to S tokens (incl. EOS) of a vocabulary of 40, from seed. */
static void random_batch(uint64_t seed, int32_t *src, int *slen, int n, int S) {
    Rng r = rng_init(seed, 0);
    for (int s = 0; s < n; s++) slen[s] = 2 + (int)rng_below(&r, S - 1), random_src(&r, src + s * S, slen[s], 40);
}

static void check_incremental(AttentionMode mode, NormPlacement norm) {
    Model m;
    build(&m, mode, norm, 40, 2, 1.0f);
    DecodeState st;
    decoder(&st, &m, 3, 1, MAXT, MAXT);
    Rng r = rng_init(2, 0);
    int32_t src[3 * 7] = {0}, tgt[3][MAXT];
    int slen[3] = {7, 4, 6};
    for (int s = 0; s < 3; s++) {
        random_src(&r, src + s * 7, slen[s], 40);
        for (int t = 0; t < MAXT; t++) tgt[s][t] = 4 + (int32_t)rng_below(&r, 36);
    }
    Ctx c = {.gemm = gemm};
    float *logits = malloc(sizeof(float) * 3 * m.V), *want = malloc(sizeof(float) * m.V);
    decode_begin(&st, &c, src, slen, 3, 7, MAXT);
    int32_t tok[3] = {TOKEN_BOS, TOKEN_BOS, TOKEN_BOS};
    for (int t = 0; t < 8; t++) {
        decode_step(&st, &c, tok, t, logits);
        for (int s = 0; s < 3; s++) {
            full_logits(&m, src + s * 7, slen[s], tgt[s], t, want);
            char label[96];
            snprintf(label, sizeof label, "%s %s-LN step %d sentence %d", attention_mode_name(mode),
                     norm_placement_name(norm), t, s);
            check_close(label, logits + (size_t)s * m.V, want, m.V, 1e-5, 1e-5);
            tok[s] = tgt[s][t];
        }
        // the full pass reused the model's buffers: the decoder state must not depend on them
    }
    free(logits), free(want);
    decode_free(&st);
    model_free(&m);
}

/* The self-attention caches of row r, positions 0..t, as one vector: keys (W, t+1), values
 * (t+1, D), collab scales (t+1, H); n floats, layer after layer. */
static float *row_caches(const DecodeState *st, int r, int t, int *n) {
    const Model *m = st->m;
    const int W = m->ad.W, D = m->D, H = m->H, T = st->T, per = (W + D + H) * (t + 1);
    float *v = malloc(sizeof(float) * per * m->n_dec), *o = v;
    for (int l = 0; l < m->n_dec; l++) {
        const DecodeLayerCache *L = &st->layers[l];
        for (int i = 0; i < W; i++, o += t + 1)
            memcpy(o, L->self_k + ((size_t)r * W + i) * T, sizeof(float) * (t + 1));
        memcpy(o, L->self_v + (size_t)r * T * D, sizeof(float) * (t + 1) * D), o += (t + 1) * D;
        memcpy(o, L->self_cs + (size_t)r * T * H, sizeof(float) * (t + 1) * H), o += (t + 1) * H;
    }
    *n = per * m->n_dec;
    return v;
}

static void check_reorder(AttentionMode mode) {
    Model m;
    build(&m, mode, NORM_PRE, 40, 2, 1.0f);
    enum { N = 3, S = 7, K = 4, R = N * K, STEPS = 3 };
    int32_t src[N * S] = {0}, tok[R];
    int slen[N], n = 0;
    random_batch(5, src, slen, N, S);
    DecodeState st;
    decoder(&st, &m, N, K, S, MAXT);
    Ctx c = {.gemm = gemm};
    decode_begin(&st, &c, src, slen, N, S, MAXT);
    for (int t = 0; t < STEPS; t++) {  // a different token in every row: rows differ
        for (int r = 0; r < R; r++) tok[r] = t == 0 ? TOKEN_BOS : 4 + (r * 7 + t) % 36;
        decode_step(&st, &c, tok, t, st.logits);
    }
    const int t = STEPS - 1;
    // sentence 0: a swap and a row copied twice; 1: a cycle of three and a copy; 2: unchanged
    const int parent[R] = {1, 0, 0, 3, 5, 6, 4, 4, 8, 9, 10, 11};
    float *before[R];
    for (int r = 0; r < R; r++) before[r] = row_caches(&st, r, t, &n);
    decode_reorder(&st, parent, t);
    for (int r = 0; r < R; r++) {
        float *got = row_caches(&st, r, t, &n);
        EXPECT(!memcmp(got, before[parent[r]], sizeof(float) * n),
               "%s: after reordering, row %d does not hold row %d's caches",
               attention_mode_name(mode), r, parent[r]);
        free(got);
    }
    // dropping sentence 1: sentence 2's rows move up to 4..7, sentence 0's stay
    float *kept[R];
    for (int r = 0; r < R; r++) kept[r] = row_caches(&st, r, t, &n);
    bool keep[N] = {true, false, true};
    decode_keep_sentences(&st, keep, t);
    EXPECT(st.sents == 2, "%d sentences after dropping one of 3", st.sents);
    for (int r = 0; r < 2 * K; r++) {
        int from = r < K ? r : r + K;
        float *got = row_caches(&st, r, t, &n);
        EXPECT(!memcmp(got, kept[from], sizeof(float) * n),
               "%s: after dropping a sentence, row %d does not hold row %d's caches",
               attention_mode_name(mode), r, from);
        free(got);
    }
    for (int r = 0; r < R; r++) free(before[r]), free(kept[r]);
    decode_free(&st);
    model_free(&m);
}

static void check_batched(AttentionMode mode) {
    Model m;
    build(&m, mode, NORM_PRE, 40, 2, 2.0f);
    enum { N = 6, S = 7, K = 4 };
    int32_t src[N * S] = {0};
    int slen[N];
    random_batch(4, src, slen, N, S);
    SearchOptions o = {K, 0.6f, true, 1.5f, 2, 0};
    DecodeState st;
    decoder(&st, &m, N, K, S, MAXT);
    int32_t out[N * MAXT], one[MAXT];
    int len[N], one_len;
    float score[N], one_score;
    SearchResult res = {out, MAXT, len, score, 1, NULL},
                 res1 = {one, MAXT, &one_len, &one_score, 1, NULL};
    Ctx c = {.gemm = gemm};
    search_batch(&st, &c, &o, src, slen, N, S, &res);
    for (int s = 0; s < N; s++) {
        search_batch(&st, &c, &o, src + s * S, &slen[s], 1, slen[s], &res1);
        EXPECT(one_len == len[s] && !memcmp(one, out + s * MAXT, sizeof(int32_t) * one_len) &&
                   one_score == score[s],
               "%s: sentence %d decoded alone differs from the batch", attention_mode_name(mode),
               s);
    }
    decode_free(&st);
    model_free(&m);
}

/* An output of the search: its tokens (without EOS) and normalized score. */
typedef struct Output {
    double score;
    int len;
    int32_t tok[MAXT];
} Output;

/* The next-token log-probabilities (V) after prefix[0..t) of the ensemble models[nm]: the mean
 * of the models' log-softmax, each from a full decoder pass, in double precision. */
static void ensemble_logprobs(Model *const *models, int nm, const int32_t *src, int slen,
                              const int32_t *prefix, int t, double *lp) {
    const int V = models[0]->V;
    float *z = malloc(sizeof(float) * V);
    for (int v = 0; v < V; v++) lp[v] = 0;
    for (int e = 0; e < nm; e++) {
        full_logits(models[e], src, slen, prefix, t, z);
        double mx = -INFINITY, sum = 0;
        for (int v = 0; v < V; v++)  // a comparison, not fmax (see test_gradcheck's max_abs_diff)
            if (z[v] > mx) mx = z[v];
        for (int v = 0; v < V; v++) sum += exp(z[v] - mx);
        for (int v = 0; v < V; v++) lp[v] += (z[v] - mx - log(sum)) / nm;
    }
    free(z);
}

/* Appends every output of at most max_len tokens (incl. EOS) that continues prefix[0..t) (of
 * log-probability score) to all[*n]. */
static void enumerate(Model *const *models, int nm, const int32_t *src, int slen, int32_t *prefix,
                      int t, double score, int max_len, const SearchOptions *o, Output *all,
                      int *n) {
    double lp[8];
    ensemble_logprobs(models, nm, src, slen, prefix, t, lp);
    for (int v = 0; v < models[0]->V; v++) {
        if (v == TOKEN_PAD || v == TOKEN_BOS) continue;
        double s = score + lp[v];
        if (v == TOKEN_EOS) {
            double lpen = o->lenpen == 0 ? 1 : o->gnmt ? pow((5.0 + t + 1) / 6.0, o->lenpen)
                                                       : pow(t + 1.0, o->lenpen);
            Output *out = &all[(*n)++];
            out->score = s / lpen, out->len = t;
            memcpy(out->tok, prefix, sizeof(int32_t) * t);
        } else if (t + 1 < max_len) {
            prefix[t] = v;
            enumerate(models, nm, src, slen, prefix, t + 1, s, max_len, o, all, n);
        }
    }
}

static int by_score(const void *a, const void *b) {
    double x = ((const Output *)a)->score, y = ((const Output *)b)->score;
    return (x < y) - (x > y);
}

/* Every output of the ensemble for src, best first; returns how many. */
static int exhaustive(Model *const *models, int nm, const int32_t *src, int slen, int max_len,
                      const SearchOptions *o, Output *all) {
    int32_t prefix[MAXT];
    int n = 0;
    enumerate(models, nm, src, slen, prefix, 0, 0.0, max_len, o, all, &n);
    qsort(all, (size_t)n, sizeof *all, by_score);
    return n;
}

static void check_exhaustive(bool gnmt, float alpha) {
    Model m, *models[1] = {&m};
    build(&m, ATTENTION_CONCAT, NORM_POST, 6, 1, 0.7f);  // words 1 (UNK), 4, 5 and EOS
    enum { K = 32, S = 3 };
    int32_t src[S] = {4, 5, TOKEN_EOS};
    int slen = S;
    SearchOptions o = {K, alpha, gnmt, 0.0f, 5, 0};
    DecodeState st;
    decoder(&st, &m, 1, K, S, MAXT);
    int32_t out[MAXT];
    int len;
    float score;
    static Output all[512];
    SearchResult res = {out, MAXT, &len, &score, 1, NULL};
    Ctx c = {.gemm = gemm};
    search_batch(&st, &c, &o, src, &slen, 1, S, &res);
    exhaustive(models, 1, src, slen, 5, &o, all);
    EXPECT(len == all[0].len && !memcmp(out, all[0].tok, sizeof(int32_t) * len) &&
               fabs(score - all[0].score) < 1e-5,
           "%s %g: beam search found length %d score %g, the optimum is length %d score %g",
           gnmt ? "gnmt" : "fairseq", alpha, len, score, all[0].len, all[0].score);
    decode_free(&st);
    model_free(&m);
}

/* The n best outputs of an ensemble of two models of different architectures (concat post-LN,
 * collab pre-LN) with a beam that keeps every prefix: exactly the n best of all outputs under
 * the mean of the two models' log-probabilities, in order; and the search of one of them
 * with a copy of itself is its search alone, bit for bit. */
static void check_ensemble_nbest(bool gnmt, float alpha) {
    Model a, b, *models[2] = {&a, &b};
    build(&a, ATTENTION_CONCAT, NORM_POST, 5, 1, 0.7f);  // words 1 (UNK), 4 and EOS
    build(&b, ATTENTION_COLLAB, NORM_PRE, 5, 2, 0.9f);
    enum { K = 32, S = 3, N = 8, MAX_LEN = 5 };
    int32_t src[S] = {4, 1, TOKEN_EOS};
    int slen = S;
    SearchOptions o = {K, alpha, gnmt, 0.0f, MAX_LEN, 0};
    DecodeState st[2], *states[2] = {&st[0], &st[1]};
    decoder(&st[0], &a, 1, K, S, MAXT), decoder(&st[1], &b, 1, K, S, MAXT);
    int32_t out[N * MAXT];
    int len[N], count;
    float score[N];
    static Output all[512];
    SearchResult res = {out, MAXT, len, score, N, &count};
    Ctx c = {.gemm = gemm};
    search_ensemble(states, 2, &c, &o, src, &slen, 1, S, &res);
    int n = exhaustive(models, 2, src, slen, MAX_LEN, &o, all);
    EXPECT(n >= N && count == N, "ensemble: %d hypotheses of %d outputs, %d asked", count, n, N);
    for (int i = 0; i < N && i < count; i++)
        EXPECT(len[i] == all[i].len && !memcmp(out + i * MAXT, all[i].tok, sizeof(int32_t) * len[i]) &&
                   fabs(score[i] - all[i].score) < 1e-5,
               "ensemble %s %g: hypothesis %d has length %d score %g, the exhaustive one length "
               "%d score %g", gnmt ? "gnmt" : "fairseq", alpha, i, len[i], score[i], all[i].len,
               all[i].score);
    // b with a copy of itself
    DecodeState twin[2], *pair[2] = {&twin[0], &twin[1]};
    decoder(&twin[0], &b, 1, K, S, MAXT), decoder(&twin[1], &b, 1, K, S, MAXT);
    int32_t out2[N * MAXT] = {0};
    int len2[N], count2;
    float score2[N];
    SearchResult res2 = {out2, MAXT, len2, score2, N, &count2};
    search_ensemble(pair, 2, &c, &o, src, &slen, 1, S, &res2);
    search_ensemble(&states[1], 1, &c, &o, src, &slen, 1, S, &res);
    EXPECT(count == count2 && !memcmp(len, len2, sizeof len) && !memcmp(score, score2, sizeof score),
           "a model with a copy of itself differs from the model alone");
    for (int i = 0; i < count && i < count2; i++)
        EXPECT(!memcmp(out + i * MAXT, out2 + i * MAXT, sizeof(int32_t) * len[i]),
               "a model with a copy of itself: hypothesis %d differs", i);
    for (int e = 0; e < 2; e++) decode_free(&st[e]), decode_free(&twin[e]);
    model_free(&a), model_free(&b);
}

/* Greedy search of the ensemble models[nm] (one model when nm = 1): at every step the argmax of
 * the mean of the models' log-probabilities, each recomputed by a full decoder pass. */
static void check_greedy_search(Model *const *models, int nm, uint64_t seed, const char *what) {
    enum { N = 5, S = 6 };
    int32_t src[N * S] = {0};
    int slen[N];
    random_batch(seed, src, slen, N, S);
    SearchOptions o = {1, 0.6f, true, 1.0f, 3, 0};
    DecodeState st[2], *states[2] = {&st[0], &st[1]};
    for (int e = 0; e < nm; e++) decoder(&st[e], models[e], N, 1, S, MAXT);
    int32_t out[N * MAXT];
    int len[N];
    float score[N];
    SearchResult res = {out, MAXT, len, score, 1, NULL};
    Ctx c = {.gemm = gemm};
    search_ensemble(states, nm, &c, &o, src, slen, N, S, &res);
    const int V = models[0]->V;
    double *lp = malloc(sizeof(double) * V);
    for (int s = 0; s < N; s++) {
        int32_t want[MAXT];
        int n = 0, max_len = search_max_len(&o, slen[s]);
        for (int t = 0; t < max_len; t++) {
            ensemble_logprobs(models, nm, src + s * S, slen[s], want, t, lp);
            int best = TOKEN_EOS;
            for (int v = 0; v < V; v++)
                if (v != TOKEN_PAD && v != TOKEN_BOS && lp[v] > lp[best]) best = v;
            if (t + 1 == max_len) best = TOKEN_EOS;
            if (best == TOKEN_EOS) break;
            want[n++] = best;
        }
        EXPECT(len[s] == n && !memcmp(out + s * MAXT, want, sizeof(int32_t) * n),
               "%s: beam 1 differs from greedy for sentence %d (lengths %d, %d)", what, s, len[s],
               n);
    }
    free(lp);
    for (int e = 0; e < nm; e++) decode_free(&st[e]);
}

static void check_greedy(AttentionMode mode) {
    Model m, *one[1] = {&m};
    build(&m, mode, NORM_POST, 40, 2, 2.0f);
    check_greedy_search(one, 1, 3, attention_mode_name(mode));
    model_free(&m);
}

static void check_ensemble_greedy(void) {
    Model a, b, *models[2] = {&a, &b};
    build(&a, ATTENTION_COLLAB, NORM_POST, 40, 2, 2.0f);
    build(&b, ATTENTION_CONCAT, NORM_PRE, 40, 1, 2.0f);
    check_greedy_search(models, 2, 6, "ensemble of collab post-LN and concat pre-LN");
    model_free(&a), model_free(&b);
}

/* With n best kept, the first of a sentence is its 1-best search; the n scores are in order. */
static void check_nbest_first(void) {
    Model m;
    build(&m, ATTENTION_CONCAT, NORM_PRE, 40, 2, 2.0f);
    enum { N = 6, S = 7, K = 5, NB = 3 };
    int32_t src[N * S] = {0};
    int slen[N];
    random_batch(7, src, slen, N, S);
    SearchOptions o = {K, 1.0f, false, 1.5f, 2, 0};
    DecodeState st;
    decoder(&st, &m, N, K, S, MAXT);
    int32_t one[N * MAXT], many[N * NB * MAXT];
    int one_len[N], many_len[N * NB], count[N];
    float one_score[N], many_score[N * NB];
    SearchResult res1 = {one, MAXT, one_len, one_score, 1, NULL};
    SearchResult res = {many, MAXT, many_len, many_score, NB, count};
    Ctx c = {.gemm = gemm};
    search_batch(&st, &c, &o, src, slen, N, S, &res1);
    search_batch(&st, &c, &o, src, slen, N, S, &res);
    for (int s = 0; s < N; s++) {
        EXPECT(count[s] == NB, "sentence %d: %d hypotheses, %d asked", s, count[s], NB);
        EXPECT(many_len[s * NB] == one_len[s] && many_score[s * NB] == one_score[s] &&
                   !memcmp(many + s * NB * MAXT, one + s * MAXT, sizeof(int32_t) * one_len[s]),
               "sentence %d: the first of the n best is not the 1-best", s);
        for (int j = 1; j < count[s]; j++)
            EXPECT(many_score[s * NB + j] <= many_score[s * NB + j - 1],
                   "sentence %d: n-best scores out of order at %d", s, j);
    }
    decode_free(&st);
    model_free(&m);
}

static void check_copy_task(void) {
    enum { V = 14, B = 64, L = 8, STEPS = 1000 };
    ModelConfig cfg = {0};
    cfg.d_model = 32, cfg.heads = 4, cfg.ffn = 64, cfg.enc_layers = 2, cfg.dec_layers = 2;
    cfg.norm = NORM_PRE, cfg.attention = ATTENTION_COLLAB, cfg.dk = 16;
    cfg.collab_bias = COLLAB_BIAS_CONTENT;
    Model m;
    model_build(&m, &cfg, V);
    model_init_params(&m, 1);
    model_plan(&m, B * (L + 3), L + 3);
    static int32_t src[B * (L + 1)], tin[B * (L + 1)], tout[B * (L + 1)];
    static int slen[B], tlen[B];
    Rng r = rng_init(5, 0);
    AdamHyper h = {0.9, 0.98, 1e-9, 0.0};
    Ctx c = {.gemm = gemm, .seed = 1, .train = true};
    double loss = 0;
    for (int step = 1; step <= STEPS; step++) {
        memset(src, 0, sizeof src), memset(tin, 0, sizeof tin), memset(tout, 0, sizeof tout);
        for (int b = 0; b < B; b++) {
            int n = 2 + (int)rng_below(&r, L - 2);
            for (int i = 0; i < n; i++) {
                int32_t w = 4 + (int32_t)rng_below(&r, V - 4);
                src[b * (L + 1) + i] = w, tin[b * (L + 1) + i + 1] = w, tout[b * (L + 1) + i] = w;
            }
            src[b * (L + 1) + n] = TOKEN_EOS, tin[b * (L + 1)] = TOKEN_BOS;
            tout[b * (L + 1) + n] = TOKEN_EOS;
            slen[b] = tlen[b] = n + 1;
        }
        ModelBatch batch = {B, L + 1, L + 1, src, tin, tout, slen, tlen};
        params_zero_grad(&m.params);
        LossStats st = {0};
        c.step = (uint64_t)step;
        model_step(&m, &c, &batch, &st, true, 0.0f);
        grads_scale(&m.params, 1.0f / (float)st.ntok);
        grads_clip(&m.params, 1.0);
        adam_step(&m.params, &h, step < 100 ? 4e-3 * step / 100 : 4e-3 * sqrt(100.0 / step), step);
        loss = st.nll / st.ntok;
    }
    EXPECT(loss < 0.05, "copy task: training NLL still %g", loss);
    enum { N = 40, K = 4 };
    SearchOptions o = {K, 0.6f, true, 1.0f, 2, 0};
    DecodeState st;
    decoder(&st, &m, N, K, L + 1, L + 3);
    int32_t test[N * (L + 1)], out[N * (L + 3)];
    int tl[N], len[N], right = 0;
    float score[N];
    memset(test, 0, sizeof test);
    for (int s = 0; s < N; s++) {
        tl[s] = 3 + (int)rng_below(&r, L - 2);
        random_src(&r, test + s * (L + 1), tl[s], V);
    }
    SearchResult res = {out, L + 3, len, score, 1, NULL};
    Ctx eval = {.gemm = gemm};
    search_batch(&st, &eval, &o, test, tl, N, L + 1, &res);
    for (int s = 0; s < N; s++) {
        bool ok = len[s] == tl[s] - 1 &&
                  !memcmp(out + s * (L + 3), test + s * (L + 1), sizeof(int32_t) * len[s]);
        right += ok;
        if (!ok) {
            fprintf(stderr, "  copy task: source");
            for (int i = 0; i < tl[s]; i++) fprintf(stderr, " %d", test[s * (L + 1) + i]);
            fprintf(stderr, ", output");
            for (int i = 0; i < len[s]; i++) fprintf(stderr, " %d", out[s * (L + 3) + i]);
            fputc('\n', stderr);
        }
    }
    EXPECT(right == N, "copy task: %d of %d held-out sequences copied exactly", right, N);
    decode_free(&st);
    model_free(&m);
}

int main(void) {
    gemm = gemm_lookup("blocked");
    const AttentionMode modes[] = {ATTENTION_CONCAT, ATTENTION_COLLAB};
    const NormPlacement norms[] = {NORM_POST, NORM_PRE};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) check_incremental(modes[i], norms[j]);
    for (int i = 0; i < 2; i++) check_greedy(modes[i]), check_batched(modes[i]);
    for (int i = 0; i < 2; i++) check_reorder(modes[i]);
    check_exhaustive(true, 0.6f);
    check_exhaustive(false, 1.0f);
    check_exhaustive(false, 0.0f);
    check_ensemble_nbest(true, 0.6f);
    check_ensemble_nbest(false, 1.0f);
    check_ensemble_greedy();
    check_nbest_first();
    check_copy_task();
    return test_finish();
}
