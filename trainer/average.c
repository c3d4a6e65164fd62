/* average.c: checkpoint averaging (average.h), the sum in double precision. */
#include "average.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "checkpoint.h"
#include "loaded_model.h"
#include "params.h"
#include "paths.h"
#include "status.h"
#include "strbuf.h"

/* Adds the tensors of checkpoint c (input k) to sum, read through pt. 0, or -1 (status_fail).
 * Its SentencePiece model must be the first's: the rows of the embedding are token ids of it. */
static int add_checkpoint(const Checkpoint *c, const Checkpoint *first, const char *const *inputs,
                          int k, ParamTable *pt, double *sum) {
    if (!checkpoint_same_spm(c, first))
        return status_fail("%s and %s were trained with different SentencePiece models (%zu and "
                           "%zu bytes): the same token id means another piece in each, so their "
                           "parameters cannot be averaged",
                           inputs[0], inputs[k], first->spm_len, c->spm_len);
    if (checkpoint_restore(c, pt, false, NULL)) {
        char why[4096];
        snprintf(why, sizeof why, "%s", status_message());
        return status_fail("%s does not match %s: %s", inputs[k], inputs[0], why);
    }
    if (c->nparams != pt->count)
        return status_fail("%s has %d tensors, %s has %d", inputs[k], c->nparams, inputs[0],
                           pt->count);
    for (size_t i = 0; i < pt->numel; i++) sum[i] += pt->param[i];
    return 0;
}

int checkpoint_average(const char *const *inputs, int n, const char *output, size_t *params) {
    Checkpoint first;
    if (checkpoint_load(inputs[0], &first)) return -1;
    // the mean goes into a parameter table laid out like the first checkpoint
    ParamTable pt;
    params_init(&pt);
    for (int t = 0; t < first.nparams; t++)
        params_declare(&pt, first.tensors[t].name, first.tensors[t].rows, first.tensors[t].cols,
                       INIT_ZERO, 0.0f, false);
    params_finalize(&pt);
    double *sum = xcalloc(pt.numel, sizeof(double));  // (numel)
    int rc = add_checkpoint(&first, &first, inputs, 0, &pt, sum);
    for (int k = 1; k < n && !rc; k++) {
        Checkpoint ck;
        rc = checkpoint_load(inputs[k], &ck);
        if (rc) break;
        rc = add_checkpoint(&ck, &first, inputs, k, &pt, sum);
        checkpoint_free(&ck);
    }
    if (!rc) {
        for (size_t i = 0; i < pt.numel; i++) pt.param[i] = (float)(sum[i] / n);
        CheckpointData d = {first.config, first.spm, first.spm_len, &pt, false, NULL, NULL};
        checkpoint_save(output, &d);
        *params = params_count(&pt);
    }
    free(sum);
    params_free(&pt);
    checkpoint_free(&first);
    return rc;
}

char **checkpoint_last_paths(const char *run_dir, int n) {
    long *updates;  // (count) the N of every checkpoint.uN, oldest first
    int count;
    if (checkpoint_periodic(run_dir, &updates, &count)) return NULL;
    char **paths = NULL;
    if (count < n) {
        StrBuf have = {0};
        for (int i = 0; i < count; i++) strbuf_addf(&have, "%s u%ld", i ? "," : ":", updates[i]);
        status_fail("%s holds %d checkpoint.uN%s, fewer than the %d asked (train.save_freq "
                    "writes them, train.keep_checkpoints keeps the newest)", run_dir, count,
                    have.len ? have.s : "", n);
        strbuf_free(&have);
    } else {
        paths = xmalloc(sizeof(char *) * (size_t)n);
        for (int i = 0; i < n; i++) {
            char name[64];
            snprintf(name, sizeof name, "checkpoint.u%ld", updates[count - n + i]);
            paths[i] = path_join(run_dir, name);
        }
    }
    free(updates);
    return paths;
}
