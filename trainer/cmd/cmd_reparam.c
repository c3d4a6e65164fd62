/* cmd_reparam.c: `nmt reparam -m CONCAT --dk R -o COLLAB`: converts a trained concat model to
 * collaborative attention of width R (reparam.h). The result can be evaluated as it is or
 * fine-tuned with `nmt train --set train.init_from=COLLAB` and the collab config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "check.h"
#include "loaded_model.h"
#include "cmd.h"
#include "model.h"
#include "reparam.h"
#include "timer.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt reparam -m CONCAT_CKPT --dk R -o COLLAB_CKPT [--iters 500] [--tol 1e-7]\n"
            "                   [--seed 1]\n\n"
            "Converts every attention module of a concat model to collaborative attention with\n"
            "shared key/query width R: R = D_k copies exactly (block one-hot mixing), other R\n"
            "use the CP decomposition (alternating least squares in double precision) of the\n"
            "heads' W_Q W_K^T products. Prints each module's relative reconstruction error.\n");
}

static void report(const char *module, const CpResult *r, void *ctx) {
    (void)ctx;
    if (r->iterations)
        printf("%-22s relative error %.5f after %d ALS sweeps\n", module, r->rel_error, r->iterations);
    else
        printf("%-22s exact copy (R = D_k)\n", module);
}

int cmd_reparam(int argc, char **argv) {
    const char *cmd = "reparam", *in = NULL, *out = NULL;
    CpOptions o = {0, 500, 1e-7, 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (args_wants_help(a)) {
            usage(stdout);
            return 0;
        } else if (args_is(a, "-m", "--model")) {
            in = args_value(cmd, argc, argv, &i);
        } else if (args_is(a, "-o", "--output")) {
            out = args_value(cmd, argc, argv, &i);
        } else if (args_is(a, NULL, "--dk")) {
            o.rank = args_int(cmd, a, args_value(cmd, argc, argv, &i), 1, 65536);
        } else if (args_is(a, NULL, "--iters")) {
            o.max_iter = args_int(cmd, a, args_value(cmd, argc, argv, &i), 1, 1000000);
        } else if (args_is(a, NULL, "--tol")) {
            o.tol = args_double(cmd, a, args_value(cmd, argc, argv, &i));
        } else if (args_is(a, NULL, "--seed")) {
            o.seed = (uint64_t)args_int(cmd, a, args_value(cmd, argc, argv, &i), 0, 2147483647);
        } else {
            args_usage_error(cmd, "unknown option '%s'", a);
        }
    }
    if (!in || !out || !o.rank) args_usage_error(cmd, "-m, --dk and -o are required");
    CheckpointParams src;
    checkpoint_params_open(&src, in);
    if (src.cfg.model.attention != ATTENTION_CONCAT)
        FATAL("%s has %s attention; reparam converts concat models", in,
              attention_mode_name(src.cfg.model.attention));
    Config dst_cfg;
    reparam_config(&dst_cfg, &src.cfg, o.rank);
    ParamTable dst;
    params_init(&dst);
    model_declare(&dst, &dst_cfg.model, src.ck.tensors[0].rows);
    params_finalize(&dst);
    double t0 = now_seconds();
    double worst = reparam_params(&dst, &src.pt, &src.cfg.model, &o, report, NULL);
    char *text = config_dump_string(&dst_cfg);
    CheckpointData d = {text, src.ck.spm, src.ck.spm_len, &dst, false, NULL};
    checkpoint_save(out, &d);
    printf("%s: collab attention, D~k = %d, %zu parameters (concat: %zu); largest relative error "
           "%.5f; %.1f s\n", out, o.rank, params_count(&dst), params_count(&src.pt), worst,
           now_seconds() - t0);
    free(text);
    params_free(&dst);
    config_free(&dst_cfg);
    checkpoint_params_close(&src);
    return 0;
}
