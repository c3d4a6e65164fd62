/* args.h: the small command-line helpers shared by every subcommand. A usage error prints the
 * problem and the command's --help hint to stderr and exits with code 2. */
#ifndef NMT_ARGS_H
#define NMT_ARGS_H

#include <stdbool.h>
#include <stdio.h>

/* True if arg is one of the spellings (e.g. args_is(a, "-m", "--model")); long may be NULL. */
bool args_is(const char *arg, const char *short_name, const char *long_name);
bool args_wants_help(const char *arg);
/* The value after option argv[*i] (advancing *i), or a usage error naming the option. */
const char *args_value(const char *cmd, int argc, char **argv, int *i);
int args_int(const char *cmd, const char *opt, const char *text, long lo, long hi);
double args_double(const char *cmd, const char *opt, const char *text);
struct Config;
/* Handles `-c FILE` (a config merged over what is loaded so far) and `--set key=value` at
 * argv[*i]; returns false for any other argument. Bad files or values exit with code 2. */
bool args_config(const char *cmd, struct Config *cfg, int argc, char **argv, int *i);
/* For commands that take only config files: parses -c/--set (and --help, printed by usage, which
 * makes this return false), then checks the config as args_config_finish does. */
bool args_config_only(const char *cmd, struct Config *cfg, int argc, char **argv,
                      void (*usage)(FILE *out));
/* Checks the cross-key rules of a fully loaded config (exit 2 on failure) and applies
 * train.threads. */
void args_config_finish(const char *cmd, struct Config *cfg);

struct DecodeConfig;
/* Handles the decoding options (--beam, --lenpen, --lenpen-form, --max-len-a, --max-len-b,
 * --batch-tokens) at argv[*i], overriding d; returns false for any other argument. */
bool args_decode(const char *cmd, struct DecodeConfig *d, int argc, char **argv, int *i);
/* Help text for the options of args_decode. */
extern const char *const args_decode_help;

/* The options of commands that use a trained model: -m CKPT, --threads N and the decoding
 * options, which override the decode config stored in the checkpoint. */
typedef struct ModelArgs {
    const char *model;
    int threads;
    char **decode_opts;  // the decoding options as given, applied once the model is loaded
    int ndecode;
} ModelArgs;
bool args_model(const char *cmd, ModelArgs *ma, int argc, char **argv, int *i);
struct LoadedModel;
/* Opens the checkpoint (-m is required), applies --threads and the decoding options. */
void args_model_open(const char *cmd, ModelArgs *ma, struct LoadedModel *lm);
extern const char *const args_model_help;

_Noreturn void args_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
