/* args.c: command-line helpers of args.h. */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "gemm.h"
#include "loaded_model.h"
#include "status.h"
#include "translator.h"

bool args_is(const char *arg, const char *short_name, const char *long_name) {
    return (short_name && !strcmp(arg, short_name)) || (long_name && !strcmp(arg, long_name));
}

bool args_wants_help(const char *arg) { return args_is(arg, "-h", "--help"); }

void args_usage_error(const char *cmd, const char *fmt, ...) {
    fprintf(stderr, "nmt %s: ", cmd);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nRun 'nmt %s --help' for usage.\n", cmd);
    exit(2);
}

const char *args_value(const char *cmd, int argc, char **argv, int *i) {
    if (*i + 1 >= argc) args_usage_error(cmd, "option %s needs a value", argv[*i]);
    return argv[++*i];
}

int args_int(const char *cmd, const char *opt, const char *text, long lo, long hi) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        args_usage_error(cmd, "option %s expects an integer in [%ld, %ld], got '%s'", opt, lo, hi,
                         text);
    return (int)v;
}

double args_double(const char *cmd, const char *opt, const char *text) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(v))
        args_usage_error(cmd, "option %s expects a finite number, got '%s'", opt, text);
    return v;
}

/* `-c FILE` (a config merged over what is loaded so far; counted in *files) or `--set
 * key=value` at argv[*i]; false for any other argument. */
static bool args_config(const char *cmd, Config *cfg, int argc, char **argv, int *i, int *files) {
    if (args_is(argv[*i], "-c", "--config")) {
        if (config_load_file(cfg, args_value(cmd, argc, argv, i))) goto bad;
        ++*files;
        return true;
    }
    if (args_is(argv[*i], NULL, "--set")) {
        if (config_set(cfg, args_value(cmd, argc, argv, i))) goto bad;
        return true;
    }
    return false;
bad:
    fprintf(stderr, "nmt %s: %s\n", cmd, status_message());
    exit(2);
}

void args_config_finish(const char *cmd, Config *cfg) {
    if (config_check(cfg)) {
        fprintf(stderr, "nmt %s: %s\n", cmd, status_message());
        exit(2);
    }
    if (cfg->train.threads > 0) gemm_set_threads(cfg->train.threads);
}

const char *const args_decode_help =
    "  --beam N            beam size; 1 = greedy (default: the model's decode.beam)\n"
    "  --lenpen A          length penalty exponent (decode.lenpen)\n"
    "  --lenpen-form F     gnmt: score/((5+len)/6)^A, fairseq: score/len^A (decode.lenpen_form)\n"
    "  --max-len-a A       longest output = A * source length + B (decode.max_len_a)\n"
    "  --max-len-b B       (decode.max_len_b)\n"
    "  --batch-tokens N    source tokens per batch (decode.batch_tokens)\n"
    "  --max-src-len N     longest source in tokens; longer lines are cut, with a warning\n"
    "                      naming the line (decode.max_src_len)\n"
    "  Each takes the values and ranges of its decode.* key ('nmt train --help').\n";

/* The decoding options and the decode keys they set. */
static const struct {
    const char *flag, *key;
} decode_flags[] = {
    {"--beam", "decode.beam"},
    {"--lenpen", "decode.lenpen"},
    {"--lenpen-form", "decode.lenpen_form"},
    {"--max-len-a", "decode.max_len_a"},
    {"--max-len-b", "decode.max_len_b"},
    {"--batch-tokens", "decode.batch_tokens"},
    {"--max-src-len", "decode.max_src_len"},
};

/* A decoding option at argv[*i] (args_decode_help) set in cfg through its decode key, with the
 * key's checks (a bad value is a usage error); false for any other argument. */
static bool args_decode(const char *cmd, Config *cfg, int argc, char **argv, int *i) {
    for (size_t k = 0; k < sizeof decode_flags / sizeof decode_flags[0]; k++) {
        if (strcmp(argv[*i], decode_flags[k].flag)) continue;
        const char *v = args_value(cmd, argc, argv, i);
        if (config_set_key(cfg, decode_flags[k].key, v, decode_flags[k].flag))
            args_usage_error(cmd, "%s", status_message());
        return true;
    }
    return false;
}

const char *const args_model_help =
    "  -m, --model CKPT    checkpoint (checkpoint.best, checkpoint.last, an average ...) or\n"
    "                      export (nmt export: a .safetensors file)\n"
    "  --threads N         OpenMP threads (default: all cores)\n";

const char *const args_ensemble_help =
    "  -m CKPT -m CKPT ... an ensemble: the models' log-probabilities are averaged at every\n"
    "                      step; they may differ in architecture but must share one\n"
    "                      SentencePiece model; decoding follows the first one's decode config\n";

/* A model option at argv[*i] into ma; false for any other. */
static bool args_model(const char *cmd, ModelArgs *ma, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    if (args_is(a, "-m", "--model")) {
        ma->models = xrealloc(ma->models, sizeof(char *) * (ma->n_models + 1));
        ma->models[ma->n_models++] = args_value(cmd, argc, argv, i);
        return true;
    }
    if (args_is(a, NULL, "--threads")) {
        ma->threads = args_int(cmd, a, args_value(cmd, argc, argv, i), 1, 1024);
        return true;
    }
    Config scratch;  // the value is checked now and applied once the model is loaded
    config_init(&scratch);
    int start = *i;
    bool decode = args_decode(cmd, &scratch, argc, argv, i);
    config_free(&scratch);
    if (!decode) return false;
    ma->decode_opts = xrealloc(ma->decode_opts, sizeof(char *) * (ma->ndecode + 2));
    for (int j = start; j <= *i; j++) ma->decode_opts[ma->ndecode++] = argv[j];
    return true;
}

int args_models_open(const char *cmd, ModelArgs *ma, LoadedModel **lms) {
    if (!ma->n_models) args_usage_error(cmd, "-m CHECKPOINT is required");
    if (ma->threads) gemm_set_threads(ma->threads);
    int n = ma->n_models;
    *lms = xmalloc(sizeof(LoadedModel) * n);
    loaded_models_open(*lms, ma->models, n);
    for (int e = 0; e < n; e++)
        for (int j = 0; j < ma->ndecode; j++)
            args_decode(cmd, &(*lms)[e].cfg, ma->ndecode, ma->decode_opts, &j);
    free(ma->decode_opts), free(ma->models);
    ma->decode_opts = NULL, ma->ndecode = 0, ma->models = NULL, ma->n_models = 0;
    return n;
}

/* The option of the table at argv[*i], its value stored; false if none has that spelling. */
static bool args_option(const char *cmd, int argc, char **argv, int *i, const ArgsOption *opts,
                        int nopts) {
    const char *a = argv[*i];
    for (int k = 0; k < nopts; k++) {
        const ArgsOption *o = &opts[k];
        if (!args_is(a, o->short_name, o->long_name)) continue;
        switch (o->kind) {
        case ARGS_STRING:
            *(const char **)o->value = args_value(cmd, argc, argv, i);
            break;
        case ARGS_INT:
            *(int *)o->value = args_int(cmd, a, args_value(cmd, argc, argv, i), o->lo, o->hi);
            break;
        case ARGS_DOUBLE:
            *(double *)o->value = args_double(cmd, a, args_value(cmd, argc, argv, i));
            break;
        case ARGS_FLAG:
            *(bool *)o->value = true;
            break;
        }
        return true;
    }
    return false;
}

/* args_parse, counting the config files in *files. */
static bool parse(const char *cmd, int argc, char **argv, const ArgsOption *opts, int nopts,
                  ModelArgs *ma, Config *cfg, void (*usage)(FILE *out), int *files) {
    for (int i = 1; i < argc; i++) {
        if (args_wants_help(argv[i])) {
            usage(stdout);
            return false;
        }
        if (!args_option(cmd, argc, argv, &i, opts, nopts) &&
            !(ma && args_model(cmd, ma, argc, argv, &i)) &&
            !(cfg && args_config(cmd, cfg, argc, argv, &i, files)))
            args_usage_error(cmd, "unknown option '%s'", argv[i]);
    }
    return true;
}

bool args_config_only(const char *cmd, Config *cfg, int argc, char **argv,
                      void (*usage)(FILE *out)) {
    int files = 0;
    if (!parse(cmd, argc, argv, NULL, 0, NULL, cfg, usage, &files)) return false;
    if (!files) args_usage_error(cmd, "no config given (-c FILE)");
    args_config_finish(cmd, cfg);
    return true;
}

bool args_parse(const char *cmd, int argc, char **argv, const ArgsOption *opts, int nopts,
                ModelArgs *ma, Config *cfg, void (*usage)(FILE *out)) {
    int files = 0;
    return parse(cmd, argc, argv, opts, nopts, ma, cfg, usage, &files);
}

int args_open_test_set(const char *cmd, ModelArgs *ma, bool ensemble, const char *src_path,
                       const char *ref_path, LoadedModel **lms, char ***src, char ***ref,
                       long *n) {
    if (!src_path || !ref_path) args_usage_error(cmd, "--src and --ref are required");
    if (!ensemble && ma->n_models > 1)
        args_usage_error(cmd, "-m is given %d times; this command takes one model", ma->n_models);
    int n_models = args_models_open(cmd, ma, lms);
    if (translator_read_parallel(src_path, ref_path, src, ref, n)) FATAL("%s", status_message());
    return n_models;
}

void args_subcommand_usage(FILE *out, const SubcommandTable *t) {
    fputs(t->head, out);
    for (int i = 0; i < t->n; i++)
        fprintf(out, "  %-*s %s\n", t->width, t->list[i].name, t->list[i].summary);
    fputs(t->tail, out);
}

int args_subcommand_run(const SubcommandTable *t, int argc, char **argv) {
    if (argc < 2) {
        args_subcommand_usage(stderr, t);
        return 2;
    }
    if (args_wants_help(argv[1])) {
        args_subcommand_usage(stdout, t);
        return 0;
    }
    for (int i = 0; i < t->n; i++)
        if (!strcmp(argv[1], t->list[i].name)) return t->list[i].run(argc - 1, argv + 1);
    return ARGS_UNKNOWN_SUBCOMMAND;
}
