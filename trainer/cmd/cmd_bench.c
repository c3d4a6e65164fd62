/* cmd_bench.c: `nmt bench <what> [options]`, the dispatcher of the benchmarks. */
#include "args.h"
#include "bench.h"
#include "cmd.h"

static const Subcommand benches[] = {
    {"gemm", "GFLOP/s of our blocked GEMM and OpenBLAS on transformer shapes", bench_gemm},
    {"train", "tokens/s, ms per phase and peak memory of a training step", bench_train},
    {"decode", "sentences/s of greedy and beam search", bench_decode},
};

static const SubcommandTable table = {"usage: nmt bench <what> [options]\n\nbenchmarks:\n", benches,
                                      sizeof benches / sizeof benches[0], 8,
                                      "\nRun 'nmt bench <what> --help' for its options.\n"};

int cmd_bench(int argc, char **argv) {
    int rc = args_subcommand_run(&table, argc, argv);
    if (rc == ARGS_UNKNOWN_SUBCOMMAND) args_usage_error("bench", "unknown benchmark '%s'", argv[1]);
    return rc;
}
