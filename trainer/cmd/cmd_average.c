/* cmd_average.c: `nmt average -o OUT CKPT...`: the element-wise mean of the parameters of
 * several checkpoints of one model (fairseq's average_checkpoints), written as a weights-only
 * checkpoint with the config and SentencePiece model of the first. */
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "check.h"
#include "average.h"
#include "cmd.h"
#include "status.h"

static void usage(FILE *out) {
    fprintf(out, "usage: nmt average -o OUTPUT CHECKPOINT CHECKPOINT [...]\n\n"
                 "Averages the parameters of checkpoints of the same model (same tensor names and\n"
                 "shapes, same SentencePiece model), e.g. the last few checkpoint.uN of a run.\n");
}

int cmd_average(int argc, char **argv) {
    const char *cmd = "average", *output = NULL;
    const char **inputs = xmalloc(sizeof(char *) * (size_t)argc);
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (args_wants_help(argv[i])) {
            usage(stdout);
            free(inputs);
            return 0;
        } else if (args_is(argv[i], "-o", "--output")) {
            output = args_value(cmd, argc, argv, &i);
        } else if (argv[i][0] == '-') {
            args_usage_error(cmd, "unknown option '%s'", argv[i]);
        } else {
            inputs[n++] = argv[i];
        }
    }
    if (!output || n < 1) args_usage_error(cmd, "-o OUTPUT and at least one checkpoint are needed");
    size_t params;
    if (checkpoint_average(inputs, n, output, &params)) FATAL("%s", status_message());
    fprintf(stderr, "[average] %d checkpoints, %zu parameters -> %s\n", n, params, output);
    free(inputs);
    return 0;
}
