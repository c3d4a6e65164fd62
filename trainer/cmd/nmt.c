/* nmt.c: the `nmt` executable: dispatches `nmt <command> [args]` to trainer/cmd/cmd_<command>.c. */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmd.h"

static const Subcommand commands[] = {
    {"prepare", "clean corpora, train SentencePiece, write token caches", cmd_prepare},
    {"train", "train a model from config files (resumes a run directory)", cmd_train},
    {"translate", "translate raw text with a trained model (beam or greedy search)", cmd_translate},
    {"score", "log-probabilities of references under a model (forced decoding)", cmd_score},
    {"eval", "translate and score a test set: BLEU, chrF, speed as JSON", cmd_eval},
    {"bleu", "BLEU / chrF of system output, a drop-in for the sacrebleu command", cmd_bleu},
    {"average", "average the parameters of several checkpoints", cmd_average},
    {"export", "write a checkpoint's parameters as safetensors", cmd_export},
    {"reparam", "convert concat attention to collab attention (CP decomposition)", cmd_reparam},
    {"analyze", "spectra and explained energy of the key/query projections", cmd_analyze},
    {"bench", "benchmarks: gemm, train, decode", cmd_bench},
};

static const SubcommandTable table = {
    "usage: nmt <command> [options]\n\n"
    "A neural machine translation trainer (Transformer, concat or collaborative attention).\n\n"
    "commands:\n",
    commands, sizeof commands / sizeof commands[0], 10,
    "\nRun 'nmt <command> --help' for the options of one command.\n"};

int main(int argc, char **argv) {
    int rc = args_subcommand_run(&table, argc, argv);
    if (rc != ARGS_UNKNOWN_SUBCOMMAND) return rc;
    if (!strcmp(argv[1], "help")) {
        args_subcommand_usage(stdout, &table);
        return 0;
    }
    fprintf(stderr, "nmt: unknown command '%s'\n\n", argv[1]);
    args_subcommand_usage(stderr, &table);
    return 2;
}
