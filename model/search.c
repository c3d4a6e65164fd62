/* search.c: greedy and beam search (search.h). */
#include "search.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "vecmath.h"

int search_max_len(const SearchOptions *o, int src_len) {
    if (o->fixed_len > 0) return o->fixed_len;
    int n = (int)(o->max_len_a * src_len) + o->max_len_b;
    return n < 1 ? 1 : n;
}

int search_batch_len(const SearchOptions *o, const int *src_len, int sents) {
    int T = 1;
    for (int s = 0; s < sents; s++) {
        int n = search_max_len(o, src_len[s]);
        T = n > T ? n : T;
    }
    return T;
}

static double length_penalty(const SearchOptions *o, int len) {
    if (o->lenpen == 0.0f) return 1.0;
    return o->gnmt ? pow((5.0 + len) / 6.0, o->lenpen) : pow((double)len, o->lenpen);
}

typedef struct Candidate {
    double score;
    int row;  // parent row within the sentence (0..beam-1)
    int32_t token;
} Candidate;

/* Per-sentence search state. */
typedef struct SentState {
    int index;        // position in the caller's batch
    int max_len;
    int alive;        // live hypotheses, in rows 0..alive-1 of the sentence
    int finished;     // finished hypotheses so far
    bool done;
    double score[256];           // (beam) live scores
    int kept;                    // finished hypotheses kept in the result, at most nbest
    double best[256];            // (kept) their normalized scores, descending
} SentState;

/* Keeps the finished hypothesis h[0..t) (+ its last token when len > t) of sentence q if it is
 * among the nbest so far; equal scores keep the earlier one first. */
static void keep_finished(SentState *q, SearchResult *res, const int32_t *h, int t, int len,
                          int32_t last, double norm) {
    const int N = res->nbest;
    if (q->kept == N && norm <= q->best[N - 1]) return;
    int i = q->kept < N ? q->kept++ : N - 1;
    int32_t *tok = res->tokens + (size_t)q->index * N * res->stride;
    int *lens = res->len + (size_t)q->index * N;
    float *score = res->score + (size_t)q->index * N;
    for (; i > 0 && q->best[i - 1] < norm; i--) {
        q->best[i] = q->best[i - 1], lens[i] = lens[i - 1], score[i] = score[i - 1];
        memcpy(tok + (size_t)i * res->stride, tok + (size_t)(i - 1) * res->stride,
               sizeof(int32_t) * lens[i]);
    }
    q->best[i] = norm, lens[i] = len, score[i] = (float)norm;
    memcpy(tok + (size_t)i * res->stride, h, sizeof(int32_t) * t);
    if (len > t) tok[(size_t)i * res->stride + t] = last;
    if (res->count) res->count[q->index] = q->kept;
}

/* The next-token scores of row `row` of every model: z (V) to add to the hypothesis score after
 * subtracting *lse. One model: its logits and their log-sum-exp; an ensemble: the mean of the
 * logits (written over the first model's) and the mean of the log-sum-exps. */
static float *row_scores(DecodeState *const *st, int n, size_t row, int V, bool no_eos,
                         double *lse) {
    float *z = st[0]->logits + row * V;
    *lse = 0.0;
    for (int e = 0; e < n; e++) {
        float *ze = st[e]->logits + row * V;
        if (no_eos) ze[TOKEN_EOS] = -INFINITY;
        *lse += vec_logsumexp(ze, V);
        if (e > 0)
            for (int v = 0; v < V; v++) z[v] += ze[v];
    }
    if (n > 1) {
        for (int v = 0; v < V; v++) z[v] /= (float)n;
        *lse /= n;
    }
    return z;
}

/* Inserts c into the top-n list (sorted by score, descending). */
static void topn_insert(Candidate *top, int *count, int n, Candidate c) {
    if (*count == n && c.score <= top[n - 1].score) return;
    int i = *count < n ? (*count)++ : n - 1;
    while (i > 0 && top[i - 1].score < c.score) top[i] = top[i - 1], i--;
    top[i] = c;
}

/* The threshold a logit must pass to enter a full top list, rounded down so that float
 * comparisons never drop a candidate the double comparison would keep. */
static float entry_threshold(const Candidate *top, int n, int want, double base) {
    return n < want ? -INFINITY : nextafterf((float)(top[n - 1].score - base), -INFINITY);
}

/* Candidates base + z[v] of one row into the top list; chunks whose maximum cannot enter are
 * skipped without looking at their elements. */
static void select_row(Candidate *top, int *n, int want, const float *z, int V, double base,
                       int row) {
    float thr = entry_threshold(top, *n, want, base);
    enum { CHUNK = 32 };
    for (int v0 = 0; v0 < V; v0 += CHUNK) {
        int v1 = v0 + CHUNK < V ? v0 + CHUNK : V;
        if (vec_max(z + v0, v1 - v0) <= thr) continue;
        for (int v = v0; v < v1; v++)
            if (z[v] > thr) {
                topn_insert(top, n, want, (Candidate){base + z[v], row, v});
                thr = entry_threshold(top, *n, want, base);
            }
    }
}

void search_batch(DecodeState *st, const Ctx *c, const SearchOptions *o, const int32_t *src,
                  const int *src_len, int sents, int S, SearchResult *res) {
    search_ensemble(&st, 1, c, o, src, src_len, sents, S, res);
}

void search_ensemble(DecodeState *const *models, int nm, const Ctx *c, const SearchOptions *o,
                     const int32_t *src, const int *src_len, int sents, int S, SearchResult *res) {
    DecodeState *st = models[0];
    const int k = o->beam, V = st->m->V, T = search_batch_len(o, src_len, sents), N = res->nbest;
    for (int e = 0; e < nm; e++)
        CHECK(k == models[e]->beam && k <= 256 && models[e]->m->V == V,
              "search beam %d and vocabulary %d do not match decoder state %d (beam %d, "
              "vocabulary %d)", k, V, e, models[e]->beam, models[e]->m->V);
    CHECK(N >= 1 && N <= k, "%d best hypotheses asked of a beam of %d", N, k);
    CHECK(T <= res->stride, "search results hold %d tokens per sentence, %d needed", res->stride, T);
    const int R = sents * k;
    SentState *ss = xcalloc(sents, sizeof(SentState));
    int32_t *tokens = st->tokens, *hist = st->hist, *hist_next = st->hist_next;
    int *parent = st->parent;
    bool *keep = xmalloc(sizeof(bool) * sents);
    for (int s = 0; s < sents; s++) {
        ss[s].index = s, ss[s].alive = 1;
        ss[s].max_len = search_max_len(o, src_len[s]);
        for (int i = 0; i < N; i++) res->len[s * N + i] = 0, res->score[s * N + i] = 0.0f;
        if (res->count) res->count[s] = 0;
    }
    for (int r = 0; r < R; r++) tokens[r] = TOKEN_BOS;
    for (int e = 0; e < nm; e++) decode_begin(models[e], c, src, src_len, sents, S, T);
    int active = sents;  // sentences still in the decoder state, in order
    for (int t = 0; t < T && active > 0; t++) {
        for (int e = 0; e < nm; e++) decode_step(models[e], c, tokens, t, models[e]->logits);
#pragma omp parallel for schedule(dynamic) if ((long)active * k * V * nm >= OMP_MIN_WORK)
        for (int a = 0; a < active; a++) {
            SentState *q = &ss[a];
            bool last = t + 1 >= q->max_len;
            int want = k - q->finished, n = 0;
            Candidate top[256];
            for (int j = 0; j < q->alive; j++) {
                double lse;
                float *z = row_scores(models, nm, (size_t)(a * k + j), V, o->fixed_len > 0, &lse);
                double base = q->score[j] - lse;
                if (last && o->fixed_len <= 0) {  // the last position: EOS is forced
                    topn_insert(top, &n, want, (Candidate){base + z[TOKEN_EOS], j, TOKEN_EOS});
                    continue;
                }
                z[TOKEN_PAD] = z[TOKEN_BOS] = -INFINITY;  // never generated
                select_row(top, &n, want, z, V, base, j);
            }
            int alive = 0;
            int32_t *h_next = hist_next + (size_t)a * k * T;
            for (int i = 0; i < n; i++) {
                const int32_t *h = hist + (size_t)(a * k + top[i].row) * T;
                bool eos = top[i].token == TOKEN_EOS || (last && o->fixed_len > 0);
                if (eos) {
                    int len = top[i].token == TOKEN_EOS ? t : t + 1;  // tokens before EOS
                    double norm = top[i].score / length_penalty(o, t + 1);
                    keep_finished(q, res, h, t, len, top[i].token, norm);
                    q->finished++;
                } else {
                    memcpy(h_next + (size_t)alive * T, h, sizeof(int32_t) * t);
                    h_next[(size_t)alive * T + t] = top[i].token;
                    parent[a * k + alive] = a * k + top[i].row;
                    q->score[alive] = top[i].score;
                    tokens[a * k + alive] = top[i].token;
                    alive++;
                }
            }
            for (int j = alive; j < k; j++) parent[a * k + j] = a * k + j, tokens[a * k + j] = TOKEN_PAD;
            q->alive = alive;
            // stop when no live hypothesis can beat the n-th best finished one
            double bound = -DBL_MAX, lp_max = length_penalty(o, q->max_len);
            for (int j = 0; j < alive; j++) bound = fmax(bound, q->score[j] / lp_max);
            q->done = alive == 0 || q->finished >= k || (q->kept == N && bound <= q->best[N - 1]);
        }
        int32_t *swap = hist;
        hist = hist_next, hist_next = swap;
        for (int e = 0; e < nm; e++) decode_reorder(models[e], parent, t);
        int n = 0;
        for (int a = 0; a < active; a++) keep[a] = !ss[a].done;
        for (int a = 0; a < active; a++) n += keep[a];
        if (n < active) {  // drop finished sentences from the batch
            for (int e = 0; e < nm; e++) decode_keep_sentences(models[e], keep, t);
            int w = 0;
            for (int a = 0; a < active; a++) {
                if (!keep[a]) continue;
                if (w != a) {
                    ss[w] = ss[a];
                    memcpy(hist + (size_t)w * k * T, hist + (size_t)a * k * T, sizeof(int32_t) * k * T);
                    memcpy(tokens + w * k, tokens + a * k, sizeof(int32_t) * k);
                }
                w++;
            }
            active = n;
        }
    }
    free(ss), free(keep);
}
