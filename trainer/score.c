/* score.c: forced decoding in batches sorted by length (score.h). */
#include "score.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "translator.h"

ScoreTotal score_ids(Model *m, const Ctx *c, int batch_tokens, const int32_t *const *sid,
                     const int *slen, const int32_t *const *rid, const int *rlen, long n,
                     double *logp, double *const *token_logp) {
    size_t cnt = (size_t)(n ? n : 1);
    ByLength *order = xmalloc(sizeof(ByLength) * cnt);  // len: max(source, target) + 1
    int longest = 1;
    for (long i = 0; i < n; i++) {
        int l = (slen[i] > rlen[i] ? slen[i] : rlen[i]) + 1;
        order[i] = (ByLength){i, l};
        longest = l > longest ? l : longest;
        logp[i] = 0;
    }
    translator_sort_by_length(order, n);
    const int budget = batch_tokens > longest ? batch_tokens : longest;
    model_plan(m, budget, longest);
    // one batch: B sentences padded to S source and T target tokens, B * max(S, T) <= budget
    double *rows = xmalloc(sizeof(double) * budget);  // (B, T) log-probabilities
    int32_t *bs = xmalloc(sizeof(int32_t) * budget),  // (B, S) sources + EOS
        *bin = xmalloc(sizeof(int32_t) * budget),     // (B, T) BOS + references
        *bout = xmalloc(sizeof(int32_t) * budget);    // (B, T) references + EOS
    int *bsl = xmalloc(sizeof(int) * budget), *btl = xmalloc(sizeof(int) * budget);  // (B)
    float *work = xmalloc(sizeof(float) * loss_work_floats(m->V));
    ScoreTotal total = {0, 0};
    for (long first = 0; first < n;) {
        long end = first + 1;
        while (end < n && (end + 1 - first) * order[end].len <= budget) end++;
        int B = (int)(end - first), S = 1, T = 1;
        for (long k = first; k < end; k++) {
            long i = order[k].index;
            S = slen[i] + 1 > S ? slen[i] + 1 : S;
            T = rlen[i] + 1 > T ? rlen[i] + 1 : T;
        }
        memset(bs, 0, sizeof(int32_t) * B * S), memset(bin, 0, sizeof(int32_t) * B * T);
        memset(bout, 0, sizeof(int32_t) * B * T);
        for (int b = 0; b < B; b++) {
            long i = order[first + b].index;
            memcpy(bs + b * S, sid[i], sizeof(int32_t) * slen[i]);
            bs[b * S + slen[i]] = TOKEN_EOS;
            bin[b * T] = TOKEN_BOS;
            memcpy(bin + b * T + 1, rid[i], sizeof(int32_t) * rlen[i]);
            memcpy(bout + b * T, rid[i], sizeof(int32_t) * rlen[i]);
            bout[b * T + rlen[i]] = TOKEN_EOS;
            bsl[b] = slen[i] + 1, btl[b] = rlen[i] + 1;
        }
        ModelBatch mb = {B, S, T, bs, bin, bout, bsl, btl};
        model_forward(m, c, &mb);
        loss_target_logprobs(c, rows, m->dec_out, bout, m->emb, B * T, m->D, m->V, TOKEN_PAD, work);
        for (int b = 0; b < B; b++) {
            long i = order[first + b].index;
            for (int t = 0; t < T; t++) logp[i] += rows[b * T + t];
            if (token_logp) memcpy(token_logp[i], rows + b * T, sizeof(double) * btl[b]);
            total.tokens += btl[b];
            total.logp += logp[i];
        }
        first = end;
    }
    free(order), free(rows), free(bs), free(bin), free(bout), free(bsl), free(btl), free(work);
    return total;
}

ScoreTotal score_lines(LoadedModel *lm, char *const *src, char *const *ref, long n,
                       const char *src_what, const char *ref_what, double *logp, int *ref_tokens,
                       ScoreTokens *detail) {
    size_t cnt = (size_t)(n ? n : 1);
    int32_t **sid = xmalloc(sizeof(int32_t *) * cnt), **rid = xmalloc(sizeof(int32_t *) * cnt);
    int *slen = xmalloc(sizeof(int) * cnt), *rlen = xmalloc(sizeof(int) * cnt);
    translator_encode(lm->spm, src, n, sid, slen, src_what);
    translator_encode(lm->spm, ref, n, rid, rlen, ref_what);
    // A cut pair's score would not be its score; an uncut one plans memory for its length.
    const int limit = lm->cfg.decode.max_src_len;
    for (long i = 0; i < n; i++)
        if (slen[i] > limit || rlen[i] > limit)
            FATAL("%s: line %ld has %d tokens, more than decode.max_src_len (%d): remove the pair "
                  "or raise --max-src-len", slen[i] > limit ? src_what : ref_what, i + 1,
                  slen[i] > limit ? slen[i] : rlen[i], limit);
    if (detail) {
        detail->ids = xmalloc(sizeof(int32_t *) * cnt), detail->logp = xmalloc(sizeof(double *) * cnt);
        for (long i = 0; i < n; i++) {
            detail->ids[i] = xmalloc(sizeof(int32_t) * (size_t)(rlen[i] + 1));
            memcpy(detail->ids[i], rid[i], sizeof(int32_t) * (size_t)rlen[i]);
            detail->ids[i][rlen[i]] = TOKEN_EOS;
            detail->logp[i] = xmalloc(sizeof(double) * (size_t)(rlen[i] + 1));
        }
    }
    Ctx c = loaded_model_ctx(lm);
    ScoreTotal total = score_ids(&lm->m, &c, lm->cfg.decode.batch_tokens,
                                 (const int32_t *const *)sid, slen, (const int32_t *const *)rid,
                                 rlen, n, logp, detail ? detail->logp : NULL);
    for (long i = 0; i < n; i++) {
        ref_tokens[i] = rlen[i] + 1;
        free(sid[i]), free(rid[i]);
    }
    free(sid), free(rid), free(slen), free(rlen);
    return total;
}

void score_tokens_free(ScoreTokens *d, long n) {
    for (long i = 0; i < n; i++) free(d->ids[i]), free(d->logp[i]);
    free(d->ids), free(d->logp);
}
