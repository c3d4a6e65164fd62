/* bench_setup.c: flags, config and random model of a benchmark, and the median of timings
 * (bench_setup.h). */
#include "bench_setup.h"

#include <stdlib.h>

bool bench_setup(const char *cmd, int argc, char **argv, const ArgsOption *opts, int nopts,
                 void (*usage)(FILE *out), Config *cfg, Model *m, const GemmImpl **gemm) {
    config_init(cfg);
    cfg->paths_unused = true;  // a benchmark reads no data: ${VAR} in data paths may be unset
    if (!args_parse(cmd, argc, argv, opts, nopts, NULL, cfg, usage)) {
        config_free(cfg);
        return false;
    }
    args_config_finish(cmd, cfg);
    *gemm = gemm_select(gemm_backend_name(cfg->train.gemm));
    if (cfg->model.vocab_size <= 0)  // the vocabulary `nmt prepare` would build
        cfg->model.vocab_size = cfg->data.vocab_size;
    model_build(m, &cfg->model, cfg->model.vocab_size);
    model_init_params(m, (uint64_t)cfg->train.seed);
    return true;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
