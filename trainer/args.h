/* args.h: the small command-line helpers shared by every subcommand. A usage error prints the
 * problem and the command's --help hint to stderr and exits with code 2. */
#ifndef NMT_ARGS_H
#define NMT_ARGS_H

#include <stdbool.h>

/* True if arg is one of the spellings (e.g. args_is(a, "-m", "--model")); long may be NULL. */
bool args_is(const char *arg, const char *short_name, const char *long_name);
bool args_wants_help(const char *arg);
/* The value after option argv[*i] (advancing *i), or a usage error naming the option. */
const char *args_value(const char *cmd, int argc, char **argv, int *i);
int args_int(const char *cmd, const char *opt, const char *text, long lo, long hi);
double args_double(const char *cmd, const char *opt, const char *text);
_Noreturn void args_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
