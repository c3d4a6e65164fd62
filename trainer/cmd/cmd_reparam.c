/* cmd_reparam.c: `nmt reparam -m CONCAT --dk R -o COLLAB`: converts a trained concat model to
 * collaborative attention of width R (reparam.h). The result can be evaluated as it is or
 * fine-tuned with `nmt train --set train.init_from=COLLAB` and the collab config. */
#include <stdio.h>

#include "args.h"
#include "check.h"
#include "cmd.h"
#include "loaded_model.h"
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
    int seed = 1;
    const ArgsOption opts[] = {ARGS_OPT_STRING("-m", "--model", &in),
                               ARGS_OPT_STRING("-o", "--output", &out),
                               ARGS_OPT_INT(NULL, "--dk", &o.rank, 1, 65536),
                               ARGS_OPT_INT(NULL, "--iters", &o.max_iter, 1, 1000000),
                               ARGS_OPT_DOUBLE(NULL, "--tol", &o.tol),
                               ARGS_OPT_INT(NULL, "--seed", &seed, 0, 2147483647)};
    if (!args_parse(cmd, argc, argv, opts, ARGS_COUNT(opts), NULL, NULL, usage)) return 0;
    if (!in || !out || !o.rank) args_usage_error(cmd, "-m, --dk and -o are required");
    o.seed = (uint64_t)seed;
    CheckpointParams src;
    checkpoint_params_open(&src, in);
    if (src.cfg.model.attention != ATTENTION_CONCAT)
        FATAL("%s has %s attention; reparam converts concat models", in,
              attention_mode_name(src.cfg.model.attention));
    double t0 = now_seconds();
    size_t params;
    double worst = reparam_checkpoint(&src, &o, out, report, NULL, &params);
    printf("%s: collab attention, D~k = %d, %zu parameters (concat: %zu); largest relative error "
           "%.5f; %.1f s\n", out, o.rank, params, params_count(&src.pt), worst, now_seconds() - t0);
    checkpoint_params_close(&src);
    return 0;
}
