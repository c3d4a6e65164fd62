/* cmd_average.c: `nmt average -o OUT CKPT...` or `nmt average --last N -o OUT RUN_DIR`: the
 * element-wise mean of the parameters of several checkpoints of one model (fairseq's
 * average_checkpoints), written as a weights-only checkpoint with the config and SentencePiece
 * model of the first. */
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "check.h"
#include "average.h"
#include "cmd.h"
#include "status.h"

static void usage(FILE *out) {
    fprintf(out, "usage: nmt average -o OUTPUT CHECKPOINT CHECKPOINT [...]\n"
                 "       nmt average -o OUTPUT --last N RUN_DIR\n\n"
                 "Averages the parameters of checkpoints of the same model (same tensor names and\n"
                 "shapes, same SentencePiece model), e.g. the last few checkpoint.uN of a run.\n"
                 "  -o, --output FILE   the average (a weights-only checkpoint)\n"
                 "  --last N            the newest N checkpoint.uN of RUN_DIR (by update number);\n"
                 "                      an error when it holds fewer\n");
}

int cmd_average(int argc, char **argv) {
    const char *cmd = "average", *output = NULL;
    const char *inputs[argc];  // the positional arguments; on the stack, so an error exit leaks none
    int n = 0, last = 0;
    for (int i = 1; i < argc; i++) {
        if (args_wants_help(argv[i])) {
            usage(stdout);
            return 0;
        } else if (args_is(argv[i], "-o", "--output")) {
            output = args_value(cmd, argc, argv, &i);
        } else if (args_is(argv[i], NULL, "--last")) {
            const char *flag = argv[i];
            last = args_int(cmd, flag, args_value(cmd, argc, argv, &i), 1, 100000);
        } else if (argv[i][0] == '-') {
            args_usage_error(cmd, "unknown option '%s'", argv[i]);
        } else {
            inputs[n++] = argv[i];
        }
    }
    if (last && (!output || n != 1))
        args_usage_error(cmd, "--last N needs -o OUTPUT and one run directory");
    if (!output || n < 1) args_usage_error(cmd, "-o OUTPUT and at least one checkpoint are needed");
    char **paths = NULL;
    if (last) {
        paths = checkpoint_last_paths(inputs[0], last);
        if (!paths) FATAL("%s", status_message());
        n = last;
    }
    size_t params;
    bool ok = !checkpoint_average(paths ? (const char *const *)paths : inputs, n, output, &params);
    if (ok) {
        fprintf(stderr, "[average] %d checkpoints", n);
        for (int i = 0; paths && i < n; i++) fprintf(stderr, "%s %s", i ? "," : ":", paths[i]);
        fprintf(stderr, ", %zu parameters -> %s\n", params, output);
    }
    for (int i = 0; paths && i < n; i++) free(paths[i]);
    free(paths);
    if (!ok) FATAL("%s", status_message());
    return 0;
}
