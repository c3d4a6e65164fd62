/* cmd_translate.c: `nmt translate -m CKPT`: raw text in, detokenized translations out, one line
 * per input line, in input order. */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmd.h"
#include "files.h"
#include "loaded_model.h"
#include "translator.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt translate -m CHECKPOINT [-i INPUT] [-o OUTPUT] [options] < src > hyp\n\n"
            "Translates raw text (plain, .gz or WMT .sgm; standard input by default), one output\n"
            "line per input line (an empty line for an empty one). Progress goes to stderr.\n"
            "  -i, --input FILE    source text (default: standard input)\n"
            "  -o, --output FILE   translations (default: standard output)\n");
    fputs(args_model_help, out);
    fputs(args_decode_help, out);
}

int cmd_translate(int argc, char **argv) {
    const char *cmd = "translate", *input = "-", *output = "-";
    ModelArgs ma = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (args_wants_help(a)) {
            usage(stdout);
            return 0;
        } else if (args_is(a, "-i", "--input")) {
            input = args_value(cmd, argc, argv, &i);
        } else if (args_is(a, "-o", "--output")) {
            output = args_value(cmd, argc, argv, &i);
        } else if (!args_model(cmd, &ma, argc, argv, &i)) {
            args_usage_error(cmd, "unknown option '%s'", a);
        }
    }
    LoadedModel lm;
    args_model_open(cmd, &ma, &lm);
    const DecodeConfig *dc = &lm.cfg.decode;
    long n;
    char **lines = translator_read_lines(input, &n);
    Ctx c = {gemm_select(gemm_backend_name(lm.cfg.train.gemm)), 0, 0, false};
    SearchOptions o = translator_options(dc, dc->beam);
    char **hyp = translate_lines(&lm.m, lm.spm, &c, &o, dc->batch_tokens, lines, n, true, NULL);
    FILE *out = strcmp(output, "-") ? fopen(output, "w") : stdout;
    if (!out) args_usage_error(cmd, "cannot write %s", output);
    for (long i = 0; i < n; i++) fprintf(out, "%s\n", hyp[i]);
    if (out != stdout) fclose(out);
    file_free_lines(lines, n);
    file_free_lines(hyp, n);
    loaded_model_close(&lm);
    return 0;
}
