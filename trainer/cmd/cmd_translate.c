/* cmd_translate.c: `nmt translate -m CKPT`: raw text in, detokenized translations out, one line
 * per input line, in input order. */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmd.h"
#include "files.h"
#include "status.h"
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
    const ArgsOption opts[] = {ARGS_OPT_STRING("-i", "--input", &input),
                               ARGS_OPT_STRING("-o", "--output", &output)};
    if (!args_parse(cmd, argc, argv, opts, ARGS_COUNT(opts), &ma, NULL, usage)) return 0;
    LoadedModel lm;
    args_model_open(cmd, &ma, &lm);
    long n;
    char **lines = translator_read_lines(input, &n);
    if (!lines) FATAL("%s", status_message());
    Ctx c = loaded_model_ctx(&lm);
    char **hyp = loaded_model_translate(&lm, &c, lines, n, strcmp(input, "-") ? input : "<stdin>",
                                        NULL);
    FILE *out = strcmp(output, "-") ? fopen(output, "w") : stdout;
    if (!out) args_usage_error(cmd, "cannot write %s", output);
    for (long i = 0; i < n; i++) fprintf(out, "%s\n", hyp[i]);
    if (out != stdout) fclose(out);
    file_free_lines(lines, n);
    file_free_lines(hyp, n);
    loaded_model_close(&lm);
    return 0;
}
