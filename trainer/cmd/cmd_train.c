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
            "Only checkpoint.last holds the training state (checkpoint.uN and checkpoint.best\n"
            "hold parameters only): a damaged one stops the run, left as it is, and the message\n"
            "names the newest intact checkpoint to go on from with train.init_from in a new\n"
            "train.run_dir (a fresh optimizer and schedule); nothing resumes silently from an\n"
            "older state.\n"
            "Keys (section.key, type, default, meaning):\n");
    config_help(out, NULL);
}

int cmd_train(int argc, char **argv) {
    const char *cmd = "train";
    Config cfg;
    config_init(&cfg);
    int rc = args_config_only(cmd, &cfg, argc, argv, usage) ? train_run(&cfg) : 0;
    config_free(&cfg);
    return rc;
}
