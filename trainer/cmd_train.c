/* cmd_train.c: `nmt train -c CONFIG [-c MORE] [--set key=value]` (train.h). */
#include <stdio.h>

#include "args.h"
#include "cmd.h"
#include "config.h"
#include "train.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt train -c CONFIG [-c MORE ...] [--set section.key=value ...]\n\n"
            "Trains a model as configured (files merged in order, --set last). Prepares\n"
            "data.dir first if needed. A train.run_dir that holds checkpoint.last is resumed.\n"
            "Keys (section.key, type, default, meaning):\n");
    config_help(out, NULL);
}

int cmd_train(int argc, char **argv) {
    const char *cmd = "train";
    Config cfg;
    config_init(&cfg);
    for (int i = 1; i < argc; i++) {
        if (args_wants_help(argv[i])) {
            usage(stdout);
            return 0;
        } else if (!args_config(cmd, &cfg, argc, argv, &i)) {
            args_usage_error(cmd, "unknown option '%s'", argv[i]);
        }
    }
    args_config_finish(cmd, &cfg);
    int rc = train_run(&cfg);
    config_free(&cfg);
    return rc;
}
