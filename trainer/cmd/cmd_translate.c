/* cmd_translate.c: `nmt translate -m CKPT [-m CKPT ...]`: raw text in, detokenized translations
 * out, one line per input line (or the n best per line with --nbest), in input order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "check.h"
#include "cmd.h"
#include "files.h"
#include "status.h"
#include "loaded_model.h"
#include "translator.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt translate -m CHECKPOINT [-m CHECKPOINT ...] [-i INPUT] [-o OUTPUT]\n"
            "                     [--nbest N] [options] < src > hyp\n\n"
            "Translates raw text (plain, .gz or WMT .sgm; standard input by default), one output\n"
            "line per input line (an empty line for an empty one). Progress goes to stderr.\n"
            "  -i, --input FILE    source text (default: standard input)\n"
            "  -o, --output FILE   translations (default: standard output)\n"
            "  --nbest N           the N best hypotheses of each line (N <= beam), best first,\n"
            "                      as `I ||| HYPOTHESIS ||| SCORE` lines (Moses' n-best format):\n"
            "                      I the input line from 0, SCORE the length-normalized\n"
            "                      log-probability the search ranks by; fewer than N only when\n"
            "                      the search cannot find as many (one for an empty line)\n");
    fputs(args_model_help, out);
    fputs(args_ensemble_help, out);
    fputs(args_decode_help, out);
}

int cmd_translate(int argc, char **argv) {
    const char *cmd = "translate", *input = "-", *output = "-";
    int nbest = 0;
    ModelArgs ma = {0};
    const ArgsOption opts[] = {ARGS_OPT_STRING("-i", "--input", &input),
                               ARGS_OPT_STRING("-o", "--output", &output),
                               ARGS_OPT_INT(NULL, "--nbest", &nbest, 1, 256)};
    if (!args_parse(cmd, argc, argv, opts, ARGS_COUNT(opts), &ma, NULL, usage)) return 0;
    LoadedModel *lms;
    int n_models = args_models_open(cmd, &ma, &lms);
    if (nbest > lms[0].cfg.decode.beam)
        args_usage_error(cmd, "--nbest %d exceeds the beam (%d): set --beam to at least %d",
                         nbest, lms[0].cfg.decode.beam, nbest);
    long n;
    char **lines = translator_read_lines(input, &n);
    if (!lines) FATAL("%s", status_message());
    Ctx c = loaded_model_ctx(&lms[0]);
    Translations tr;
    loaded_model_translate(lms, n_models, &c, lines, n, strcmp(input, "-") ? input : "<stdin>",
                           nbest ? nbest : 1, &tr);
    FILE *out = strcmp(output, "-") ? fopen(output, "w") : stdout;
    if (!out) args_usage_error(cmd, "cannot write %s", output);
    for (long i = 0; i < n && !nbest; i++) fprintf(out, "%s\n", tr.text[i]);
    for (long i = 0; i < n && nbest; i++)
        for (int j = 0; j < tr.count[i]; j++)
            fprintf(out, "%ld ||| %s ||| %.6f\n", i, tr.text[i * nbest + j],
                    tr.score[i * nbest + j]);
    if (out != stdout) fclose(out);
    file_free_lines(lines, n);
    translations_free(&tr);
    for (int e = 0; e < n_models; e++) loaded_model_close(&lms[e]);
    free(lms);
    return 0;
}
