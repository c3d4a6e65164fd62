/* score.h: forced decoding (`nmt score`, Marian's scorer): the log-probability (natural log, EOS
 * included) of each reference given its source under a trained model. The pairs are sorted by
 * length and cut into batches of at most batch_tokens padded tokens; results come back in input
 * order. */
#ifndef NMT_SCORE_H
#define NMT_SCORE_H

#include <stdint.h>

#include "loaded_model.h"
#include "model.h"

/* The corpus totals: target tokens (EOS included) and their summed log-probability. */
typedef struct ScoreTotal {
    long tokens;
    double logp;
} ScoreTotal;

/* Scores n pairs given as ids (without EOS): logp[i] receives the log-probability of ref[i]
 * given src[i], and token_logp[i][t] (when token_logp is not NULL) that of its token t, EOS the
 * last of ref_len[i] + 1. Plans the model's memory for the longest pair. */
ScoreTotal score_ids(Model *m, const Ctx *c, int batch_tokens, const int32_t *const *src,
                     const int *src_len, const int32_t *const *ref, const int *ref_len, long n,
                     double *logp, double *const *token_logp);

/* Each reference's tokens: ids[i] and logp[i] hold ref_tokens[i] entries (EOS last). */
typedef struct ScoreTokens {
    int32_t **ids;
    double **logp;
} ScoreTokens;
/* The whole job for raw text with the model's decode.batch_tokens: encodes the lines as
 * `prepare` does (errors name src_what or ref_what and the line), scores them; ref_tokens[i]
 * receives the token count of reference i (EOS included); *detail (when not NULL) its tokens,
 * freed with score_tokens_free. */
ScoreTotal score_lines(LoadedModel *lm, char *const *src, char *const *ref, long n,
                       const char *src_what, const char *ref_what, double *logp, int *ref_tokens,
                       ScoreTokens *detail);
void score_tokens_free(ScoreTokens *detail, long n);

#endif
