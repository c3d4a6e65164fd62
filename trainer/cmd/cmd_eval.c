/* cmd_eval.c: `nmt eval -m CKPT --src F --ref F`: translate and score in one go; one JSON object
 * with BLEU and chrF (sacreBLEU-identical, with signatures) and the decoding speed. */
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "bleu.h"
#include "bleu_io.h"
#include "check.h"
#include "cmd.h"
#include "files.h"
#include "json.h"
#include "loaded_model.h"
#include "timer.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt eval -m CHECKPOINT [-m CHECKPOINT ...] --src FILE --ref FILE [-o HYP]\n"
            "                [options]\n\n"
            "Translates --src and prints one JSON object: BLEU and chrF against --ref (sacreBLEU\n"
            "2.6.0: 13a, cased, detokenized) with their signatures, and sentences/s, tokens/s.\n"
            "\"model\" is the first -m, \"models\" every one; \"attention\" and \"dk\" are the\n"
            "first model's, \"params\" and \"attention_params\" the sums over the models.\n"
            "  -o, --output FILE   also write the translations\n");
    fputs(args_model_help, out);
    fputs(args_ensemble_help, out);
    fputs(args_decode_help, out);
}

int cmd_eval(int argc, char **argv) {
    const char *cmd = "eval", *src_path = NULL, *ref_path = NULL, *output = NULL;
    ModelArgs ma = {0};
    const ArgsOption opts[] = {ARGS_OPT_STRING(NULL, "--src", &src_path),
                               ARGS_OPT_STRING(NULL, "--ref", &ref_path),
                               ARGS_OPT_STRING("-o", "--output", &output)};
    if (!args_parse(cmd, argc, argv, opts, ARGS_COUNT(opts), &ma, NULL, usage)) return 0;
    LoadedModel *lms;
    long n;
    char **src, **ref;
    int n_models = args_open_test_set(cmd, &ma, true, src_path, ref_path, &lms, &src, &ref, &n);
    for (long i = 0; i < n; i++) bleu_rstrip(ref[i]);  // as sacreBLEU reads files
    const DecodeConfig *dc = &lms[0].cfg.decode;
    Ctx c = loaded_model_ctx(&lms[0]);
    double t0 = now_seconds();
    Translations tr;
    loaded_model_translate(lms, n_models, &c, src, n, src_path, 1, &tr);
    double secs = now_seconds() - t0;
    char **hyp = tr.text;  // (n) the best hypotheses
    if (output) {
        FILE *f = fopen(output, "w");
        if (!f) FATAL("cannot write %s", output);
        for (long i = 0; i < n; i++) fprintf(f, "%s\n", hyp[i]);
        fclose(f);
    }
    BleuMetric metrics[2] = {bleu_metric_bleu(BLEU_TOKENIZE_13A, false), bleu_metric_chrf(0, false)};
    printf("{\"model\":");
    json_print_string(stdout, lms[0].path, 0);
    printf(",\"models\":[");
    for (int e = 0; e < n_models; e++) {
        if (e) putchar(',');
        json_print_string(stdout, lms[e].path, 0);
    }
    putchar(']');
    printf(",\"src\":");
    json_print_string(stdout, src_path, 0);
    printf(",\"ref\":");
    json_print_string(stdout, ref_path, 0);
    for (int k = 0; k < 2; k++) {
        BleuScore s;
        CHECK(bleu_corpus_score(&metrics[k], (const char *const *)hyp, (const char *const *)ref,
                                n, &s), "scoring");
        char sig[256], name[32];
        bleu_signature(&metrics[k], 1, false, 0, NULL, sig, sizeof sig);
        bleu_metric_name(&metrics[k], name, sizeof name);
        char *text = bleu_format_score(&metrics[k], &s, sig, 1, false, BLEU_FORMAT_TEXT);
        printf(",\"%s\":%.4f,\"%s_signature\":", k ? "chrf" : "bleu", s.score, k ? "chrf" : "bleu");
        json_print_string(stdout, sig, 0);
        printf(",\"%s_verbose\":", k ? "chrf" : "bleu");
        json_print_string(stdout, text, 0);
        free(text);
    }
    size_t params = 0, attention_params = 0;
    for (int e = 0; e < n_models; e++)
        params += params_count(&lms[e].m.params),
            attention_params += loaded_model_attention_params(&lms[e]);
    printf(",\"attention\":\"%s\",\"dk\":%d,\"params\":%zu,\"attention_params\":%zu",
           attention_mode_name(lms[0].cfg.model.attention), config_model_dk(&lms[0].cfg.model),
           params, attention_params);
    printf(",\"beam\":%d,\"lenpen\":%g,\"lenpen_form\":\"%s\",\"sentences\":%ld,\"seconds\":%.3f,"
           "\"sentences_per_s\":%.2f,\"tokens_per_s\":%.1f}\n",
           dc->beam, dc->lenpen, lenpen_form_name(dc->lenpen_form), n, secs, n / secs,
           tr.tokens / secs);
    file_free_lines(src, n), file_free_lines(ref, n);
    translations_free(&tr);
    for (int e = 0; e < n_models; e++) loaded_model_close(&lms[e]);
    free(lms);
    return 0;
}
