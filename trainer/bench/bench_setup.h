/* bench_setup.h: what the benchmarks share: the median of repeated timings, and for the
 * config-driven ones (train, decode) their flags (-c/--set and their own options) and the model
 * they time, the config's architecture with random parameters (no checkpoint or data needed). */
#ifndef NMT_BENCH_SETUP_H
#define NMT_BENCH_SETUP_H

#include <stdbool.h>
#include <stdio.h>

#include "args.h"
#include "config.h"
#include "gemm.h"
#include "model.h"

/* Parses the flags (args_parse with -c/--set into *cfg and opts[nopts]); false after --help,
 * with nothing left to free. Otherwise checks the config (args_config_finish), builds its model
 * with model.vocab_size entries (a usage error of cmd when unset) initialised from train.seed
 * into *m, sets *gemm to the backend of train.gemm and returns true. */
bool bench_setup(const char *cmd, int argc, char **argv, const ArgsOption *opts, int nopts,
                 void (*usage)(FILE *out), Config *cfg, Model *m, const GemmImpl **gemm);

/* Sorts v[0..n) (n > 0) and returns its median. */
double bench_median(double *v, int n);

#endif
