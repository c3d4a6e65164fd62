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
            "Exit status: 0 when a stopping rule ended the run (max_updates, max_epochs,\n"
            "max_time, patience); %d when SIGINT or SIGTERM interrupted it (checkpoint.last is\n"
            "saved; run the same command to resume); 1 on an error; 2 on a usage error.\n"
            "Keys (section.key, type, default, meaning):\n",
            TRAIN_INTERRUPTED);
    config_help(out, NULL);
}

int cmd_train(int argc, char **argv) {
    const char *cmd = "train";
    Config cfg;
    config_init(&cfg);
    if (!args_config_only(cmd, &cfg, argc, argv, usage)) {
        config_free(&cfg);
        return 0;
    }
    int rc = train_run(&cfg);
    config_free(&cfg);
    return rc;
}
