/* args.h: the small command-line helpers shared by every subcommand: a table-driven flag parser
 * (with the model and config options many commands share) and the dispatch of `<prog> <name>`
 * over a table of subcommands. A usage error prints the problem and the command's --help hint
 * to stderr and exits with code 2. */
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
/* A finite number (nan and inf are usage errors). */
double args_double(const char *cmd, const char *opt, const char *text);

/* Help text for the decoding options (--beam, --lenpen, --lenpen-form, --max-len-a,
 * --max-len-b, --batch-tokens, --max-src-len), which override the decode config stored in a
 * checkpoint. Each sets its decode.* key through config_set_key, with the key's type and range
 * checks (a bad value is a usage error). */
extern const char *const args_decode_help;

/* The options of commands that use a trained model: -m CKPT (repeated: an ensemble),
 * --threads N and the decoding options, which override the decode config stored in the
 * checkpoint. */
typedef struct ModelArgs {
    const char **models;  // (n_models) the -m options in order
    int n_models;
    int threads;
    char **decode_opts;  // the decoding options as given, applied once the model is loaded
    int ndecode;
} ModelArgs;
struct LoadedModel;
/* Opens every -m (at least one; several are an ensemble: loaded_models_open) into *lms
 * (malloc'd), applies --threads and the decoding options to each and returns how many. */
int args_models_open(const char *cmd, ModelArgs *ma, struct LoadedModel **lms);
extern const char *const args_model_help;
/* The help lines of commands that take several -m (an ensemble), after args_model_help. */
extern const char *const args_ensemble_help;

/* One option of a command's table: its spellings and where its value goes. */
typedef enum ArgsKind { ARGS_STRING, ARGS_INT, ARGS_DOUBLE, ARGS_FLAG } ArgsKind;
typedef struct ArgsOption {
    const char *short_name, *long_name;  // either may be NULL
    ArgsKind kind;
    void *value;  // const char ** (STRING), int * (INT), double * (DOUBLE), bool * (FLAG: set)
    long lo, hi;  // the range of an INT
} ArgsOption;
/* Table entries; the conditional makes the compiler check the type of the value pointer. */
#define ARGS_OPT_STRING(s, l, p) {(s), (l), ARGS_STRING, (void *)(1 ? (p) : (const char **)0), 0, 0}
#define ARGS_OPT_INT(s, l, p, lo, hi) {(s), (l), ARGS_INT, (1 ? (p) : (int *)0), (lo), (hi)}
#define ARGS_OPT_DOUBLE(s, l, p) {(s), (l), ARGS_DOUBLE, (1 ? (p) : (double *)0), 0, 0}
#define ARGS_OPT_FLAG(s, l, p) {(s), (l), ARGS_FLAG, (1 ? (p) : (bool *)0), 0, 0}

/* The entries of an option table (an array). */
#define ARGS_COUNT(opts) ((int)(sizeof(opts) / sizeof((opts)[0])))

struct Config;
/* Parses argv[1..argc-1] of command cmd: -h/--help prints usage to stdout and returns false;
 * the options of opts[nopts]; the model options into *ma (when not NULL); `-c FILE` (a config
 * merged over what is loaded so far) and `--set key=value` into *cfg (when not NULL; a bad file
 * or value exits with code 2). Anything else is a usage error. Returns true to run. */
bool args_parse(const char *cmd, int argc, char **argv, const ArgsOption *opts, int nopts,
                ModelArgs *ma, struct Config *cfg, void (*usage)(FILE *out));
/* For commands that take only config files: args_parse with -c/--set alone (a usage error
 * without any -c), then checks the config as args_config_finish does. False after --help. */
bool args_config_only(const char *cmd, struct Config *cfg, int argc, char **argv,
                      void (*usage)(FILE *out));
/* Checks the cross-key rules of a fully loaded config (exit 2 on failure) and applies
 * train.threads. */
void args_config_finish(const char *cmd, struct Config *cfg);

/* For commands that run a model on a test set: a usage error unless --src and --ref were both
 * given, then opens the models into *lms (malloc'd; several -m only with `ensemble`, else a
 * usage error) and reads the two parallel files (translator_read_parallel: *n records each).
 * Returns the number of models. */
int args_open_test_set(const char *cmd, ModelArgs *ma, bool ensemble, const char *src_path,
                       const char *ref_path, struct LoadedModel **lms, char ***src, char ***ref,
                       long *n);

/* `<prog> <name> [args]` over a table of subcommands. */
typedef struct Subcommand {
    const char *name, *summary;
    int (*run)(int argc, char **argv);  // gets argv from the name on; returns the exit code
} Subcommand;
typedef struct SubcommandTable {
    const char *head;  // the usage text before the list of names
    const Subcommand *list;
    int n;
    int width;         // of the name column
    const char *tail;  // the usage text after the list
} SubcommandTable;
enum { ARGS_UNKNOWN_SUBCOMMAND = -1 };
/* The usage text: head, one "  name summary" line per entry, tail. */
void args_subcommand_usage(FILE *out, const SubcommandTable *t);
/* Without a name: usage to stderr, returns 2. -h/--help: usage to stdout, returns 0. A name of
 * the table: runs it with argv shifted by one and returns its exit code. Any other name:
 * returns ARGS_UNKNOWN_SUBCOMMAND for the caller to report. */
int args_subcommand_run(const SubcommandTable *t, int argc, char **argv);

_Noreturn void args_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
