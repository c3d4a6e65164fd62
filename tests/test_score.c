/* test_score.c: forced decoding (score.h) is independent of batching: the log-probabilities of
 * pairs of mixed lengths scored in one padded batch equal those scored one pair at a time, come
 * back in input order, are negative, and the totals (and each pair's per-token log-probabilities)
 * add up. */
#include <stdint.h>

#include "gemm.h"
#include "model.h"
#include "rng.h"
#include "score.h"
#include "test_util.h"

enum { N = 7, V = 20 };

int main(void) {
    ModelConfig cfg = {0};
    cfg.d_model = 16, cfg.heads = 2, cfg.ffn = 32, cfg.enc_layers = 1, cfg.dec_layers = 1;
    cfg.norm = NORM_POST, cfg.attention = ATTENTION_CONCAT;
    Model m;
    model_build(&m, &cfg, V);
    model_init_params(&m, 5);
    Ctx c = {.gemm = gemm_select("ref")};
    Rng r = rng_init(11, 0);
    int32_t sbuf[N][9], rbuf[N][9];  // (N, up to 9) ids of the pairs
    const int32_t *src[N], *ref[N];
    int slen[N], rlen[N];
    for (int i = 0; i < N; i++) {
        slen[i] = 1 + (int)rng_below(&r, 9), rlen[i] = (int)rng_below(&r, 9);
        for (int t = 0; t < 9; t++)
            sbuf[i][t] = 4 + (int32_t)rng_below(&r, V - 4), rbuf[i][t] = 4 + (int32_t)rng_below(&r, V - 4);
        src[i] = sbuf[i], ref[i] = rbuf[i];
    }
    double batched[N], single[N];
    double tok_buf[N][10], *tok[N];
    for (int i = 0; i < N; i++) tok[i] = tok_buf[i];
    ScoreTotal all = score_ids(&m, &c, 1000, src, slen, ref, rlen, N, batched, tok);
    for (int i = 0; i < N; i++) {
        double s = 0;
        for (int t = 0; t <= rlen[i]; t++) s += tok[i][t];
        EXPECT(s == batched[i] && tok[i][rlen[i]] < 0, "pair %d: its tokens sum to its score", i);
    }
    long tokens = 0;
    double sum = 0;
    for (int i = 0; i < N; i++) {
        ScoreTotal one = score_ids(&m, &c, 1, &src[i], &slen[i], &ref[i], &rlen[i], 1, &single[i], NULL);
        EXPECT(one.tokens == rlen[i] + 1 && one.logp == single[i], "pair %d alone: its totals", i);
        EXPECT(single[i] < 0, "pair %d: a log-probability (%g)", i, single[i]);
        EXPECT(fabs(batched[i] - single[i]) <= 1e-4 * fabs(single[i]),
               "pair %d: batched %.8f, alone %.8f", i, batched[i], single[i]);
        tokens += rlen[i] + 1, sum += single[i];
    }
    EXPECT(all.tokens == tokens, "total tokens %ld, want %ld", all.tokens, tokens);
    EXPECT(fabs(all.logp - sum) <= 1e-4 * fabs(sum), "total %.8f, want %.8f", all.logp, sum);
    model_free(&m);
    return test_finish();
}
