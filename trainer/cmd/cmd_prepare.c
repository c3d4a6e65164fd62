/* cmd_prepare.c: `nmt prepare`, raw corpora to everything training reads (data/prepare.h),
 * driven by the `data:` section of the config. */
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "cmd.h"
#include "config.h"
#include "prepare.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt prepare -c CONFIG [-c MORE] [--set data.key=value]\n\n"
            "Reads the corpora of data.train, data.valid and data.test (plain, .gz or WMT .sgm),\n"
            "cleans and filters them (counting every dropped pair), trains the joint\n"
            "SentencePiece model and writes token caches, normalized text and a manifest into\n"
            "data.dir. Running it again reuses what is up to date.\n");
    config_help(out, "data");
}

int cmd_prepare(int argc, char **argv) {
    const char *cmd = "prepare";
    Config cfg;
    config_init(&cfg);
    if (!args_config_only(cmd, &cfg, argc, argv, usage)) {
        config_free(&cfg);
        return 0;
    }
    if (!*cfg.data.dir) args_usage_error(cmd, "data.dir is not set (the output directory)");
    PrepareOutcome outcome = prepare_run(&cfg.data);
    static const char *what[] = {"everything was up to date",
                                 "encoded again with the same SentencePiece model", "built"};
    fprintf(stderr, "[prepare] %s: %s\n", cfg.data.dir, what[outcome]);
    config_free(&cfg);
    return 0;
}
