/* cmd_score.c: `nmt score -m CKPT --src F --ref F [--json]`: forced decoding. For every pair the
 * log-probability of the reference (natural log, EOS included) and its token count, in input
 * order on stdout; the corpus NLL per token and perplexity on stderr (Marian's scorer). With
 * --json, one JSON object per pair (token ids, per-token log-probabilities, sum, length) and a
 * summary object, at full double precision. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "check.h"
#include "cmd.h"
#include "files.h"
#include "loaded_model.h"
#include "score.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt score -m CHECKPOINT --src FILE --ref FILE [--batch-tokens N]\n"
            "                 [--max-src-len N] [--json]\n\n"
            "Prints \"log-probability<TAB>tokens\" of each reference given its source (EOS\n"
            "included), then the corpus NLL per token and perplexity on stderr.\n\n"
            "  --batch-tokens N    padded tokens per scoring batch (decode.batch_tokens; the\n"
            "                      scores do not depend on it beyond rounding)\n"
            "  --max-src-len N     longest sentence in tokens, either side; a longer pair is\n"
            "                      refused, naming its line (decode.max_src_len)\n"
            "  --json              instead, one JSON object per line and pair:\n"
            "                      {\"line\":1,\"ids\":[...],\"logprobs\":[...],\"logprob\":S,\n"
            "                      \"length\":N} (ids and log-probabilities of the reference's\n"
            "                      tokens, EOS last), then {\"sentences\":..,\"tokens\":..,\n"
            "                      \"logprob\":..,\"nll_per_token\":..,\"perplexity\":..} (%%.17g)\n");
    fputs(args_model_help, out);
}

int cmd_score(int argc, char **argv) {
    const char *cmd = "score", *src_path = NULL, *ref_path = NULL;
    ModelArgs ma = {0};
    bool json = false;
    const ArgsOption opts[] = {ARGS_OPT_STRING(NULL, "--src", &src_path),
                               ARGS_OPT_STRING(NULL, "--ref", &ref_path),
                               ARGS_OPT_FLAG(NULL, "--json", &json)};
    if (!args_parse(cmd, argc, argv, opts, ARGS_COUNT(opts), &ma, NULL, usage)) return 0;
    LoadedModel *lm;
    long n;
    char **src, **ref;
    args_open_test_set(cmd, &ma, false, src_path, ref_path, &lm, &src, &ref, &n);
    double *logp = xmalloc(sizeof(double) * (size_t)(n ? n : 1));  // (n)
    int *tokens = xmalloc(sizeof(int) * (size_t)(n ? n : 1));      // (n)
    ScoreTokens detail;
    ScoreTotal total = score_lines(lm, src, ref, n, src_path, ref_path, logp, tokens,
                                   json ? &detail : NULL);
    double nll = total.tokens ? -total.logp / total.tokens : 0;
    for (long i = 0; i < n && !json; i++) printf("%.6f\t%d\n", logp[i], tokens[i]);
    for (long i = 0; i < n && json; i++) {
        printf("{\"line\":%ld,\"ids\":[", i + 1);
        for (int t = 0; t < tokens[i]; t++) printf(t ? ",%d" : "%d", (int)detail.ids[i][t]);
        fputs("],\"logprobs\":[", stdout);
        for (int t = 0; t < tokens[i]; t++) printf(t ? ",%.17g" : "%.17g", detail.logp[i][t]);
        printf("],\"logprob\":%.17g,\"length\":%d}\n", logp[i], tokens[i]);
    }
    if (json) {
        printf("{\"sentences\":%ld,\"tokens\":%ld,\"logprob\":%.17g,\"nll_per_token\":%.17g,"
               "\"perplexity\":%.17g}\n",
               n, total.tokens, total.logp, nll, exp(nll));
        score_tokens_free(&detail, n);
    }
    fprintf(stderr, "[score] %ld sentences, %ld target tokens: NLL %.4f per token, perplexity %.3f\n",
            n, total.tokens, nll, exp(nll));
    free(logp), free(tokens);
    file_free_lines(src, n), file_free_lines(ref, n);
    loaded_model_close(lm);
    free(lm);
    return 0;
}
