/* args.c: command-line helpers of args.h. */
#include "args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gemm.h"

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
    if (errno || end == text || *end)
        args_usage_error(cmd, "option %s expects a number, got '%s'", opt, text);
    return v;
}

bool args_config(const char *cmd, Config *cfg, int argc, char **argv, int *i) {
    ConfigError err;
    if (args_is(argv[*i], "-c", "--config")) {
        if (config_load_file(cfg, args_value(cmd, argc, argv, i), &err)) goto bad;
        return true;
    }
    if (args_is(argv[*i], NULL, "--set")) {
        if (config_set(cfg, args_value(cmd, argc, argv, i), &err)) goto bad;
        return true;
    }
    return false;
bad:
    fprintf(stderr, "nmt %s: %s\n", cmd, err.msg);
    exit(2);
}

const GemmImpl *args_config_finish(const char *cmd, Config *cfg) {
    ConfigError err;
    if (config_check(cfg, &err)) {
        fprintf(stderr, "nmt %s: %s\n", cmd, err.msg);
        exit(2);
    }
    if (cfg->train.threads > 0) gemm_set_threads(cfg->train.threads);
    return gemm_select(cfg->train.gemm);
}
