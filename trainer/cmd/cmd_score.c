/* cmd_score.c: `nmt score -m CKPT --src F --ref F`: forced decoding. For every pair the log-
 * probability of the reference (natural log, EOS included) and its token count, in input order
 * on stdout; the corpus NLL per token and perplexity on stderr (Marian's scorer). */
#include <math.h>
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
            "usage: nmt score -m CHECKPOINT --src FILE --ref FILE [--batch-tokens N]\n\n"
            "Prints \"log-probability<TAB>tokens\" of each reference given its source (EOS\n"
            "included), then the corpus NLL per token and perplexity on stderr.\n");
    fputs(args_model_help, out);
}

int cmd_score(int argc, char **argv) {
    const char *cmd = "score", *src_path = NULL, *ref_path = NULL;
    ModelArgs ma = {0};
    const ArgsOption opts[] = {ARGS_OPT_STRING(NULL, "--src", &src_path),
                               ARGS_OPT_STRING(NULL, "--ref", &ref_path)};
    if (!args_parse(cmd, argc, argv, opts, ARGS_COUNT(opts), &ma, NULL, usage)) return 0;
    LoadedModel lm;
    long n;
    char **src, **ref;
    args_open_test_set(cmd, &ma, src_path, ref_path, &lm, &src, &ref, &n);
    double *logp = xmalloc(sizeof(double) * (size_t)(n ? n : 1));  // (n)
    int *tokens = xmalloc(sizeof(int) * (size_t)(n ? n : 1));      // (n)
    ScoreTotal total = score_lines(&lm, src, ref, n, src_path, ref_path, logp, tokens);
    for (long i = 0; i < n; i++) printf("%.6f\t%d\n", logp[i], tokens[i]);
    double nll = total.tokens ? -total.logp / total.tokens : 0;
    fprintf(stderr, "[score] %ld sentences, %ld target tokens: NLL %.4f per token, perplexity %.3f\n",
            n, total.tokens, nll, exp(nll));
    free(logp), free(tokens);
    file_free_lines(src, n), file_free_lines(ref, n);
    loaded_model_close(&lm);
    return 0;
}
