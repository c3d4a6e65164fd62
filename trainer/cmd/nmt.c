/* nmt.c: the `nmt` executable: dispatches `nmt <command> [args]` to trainer/cmd/cmd_<command>.c. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

typedef struct Command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} Command;

static const Command commands[] = {
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
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt <command> [options]\n\n"
            "A neural machine translation trainer (Transformer, concat or collaborative "
            "attention).\n\ncommands:\n");
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nRun 'nmt <command> --help' for the options of one command.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "nmt: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
