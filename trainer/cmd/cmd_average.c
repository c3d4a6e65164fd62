/* cmd_average.c: `nmt average -o OUT CKPT...`: the element-wise mean of the parameters of
 * several checkpoints of one model (fairseq's average_checkpoints), written as a weights-only
 * checkpoint with the config and SentencePiece model of the first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "check.h"
#include "checkpoint.h"
#include "cmd.h"
#include "params.h"
#include "status.h"

static void usage(FILE *out) {
    fprintf(out, "usage: nmt average -o OUTPUT CHECKPOINT CHECKPOINT [...]\n\n"
                 "Averages the parameters of checkpoints of the same model (same tensor names and\n"
                 "shapes), e.g. the last few checkpoint.uN of a run.\n");
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
    Checkpoint first;
    if (checkpoint_load(inputs[0], &first)) FATAL("%s", status_message());
    // the mean goes into a parameter table laid out like the first checkpoint
    ParamTable pt;
    params_init(&pt);
    for (int t = 0; t < first.nparams; t++)
        params_declare(&pt, first.tensors[t].name, first.tensors[t].rows, first.tensors[t].cols,
                       INIT_ZERO, 0.0f, false);
    params_finalize(&pt);
    double *sum = xcalloc(pt.numel, sizeof(double));
    for (int k = 0; k < n; k++) {
        Checkpoint ck;
        if (k && checkpoint_load(inputs[k], &ck)) FATAL("%s", status_message());
        const Checkpoint *c = k ? &ck : &first;
        if (checkpoint_restore(c, &pt, false))
            FATAL("%s does not match %s: %s", inputs[k], inputs[0], status_message());
        if (c->nparams != pt.count)
            FATAL("%s has %d tensors, %s has %d", inputs[k], c->nparams, inputs[0], pt.count);
        for (size_t i = 0; i < pt.numel; i++) sum[i] += pt.param[i];
        if (k) checkpoint_free(&ck);
    }
    for (size_t i = 0; i < pt.numel; i++) pt.param[i] = (float)(sum[i] / n);
    CheckpointData d = {first.config, first.spm, first.spm_len, &pt, false, NULL};
    checkpoint_save(output, &d);
    fprintf(stderr, "[average] %d checkpoints, %zu parameters -> %s\n", n, params_count(&pt), output);
    free(sum), free(inputs);
    params_free(&pt);
    checkpoint_free(&first);
    return 0;
}
