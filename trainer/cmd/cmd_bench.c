/* cmd_bench.c: `nmt bench <what> [options]`, the dispatcher of the benchmarks. */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "bench.h"
#include "cmd.h"

static const struct {
    const char *name, *summary;
    int (*run)(int argc, char **argv);
} benches[] = {
    {"gemm", "GFLOP/s of our blocked GEMM and OpenBLAS on transformer shapes", bench_gemm},
    {"train", "tokens/s, ms per phase and peak memory of a training step", bench_train},
    {"decode", "sentences/s of greedy and beam search", bench_decode},
};
enum { NBENCHES = sizeof benches / sizeof benches[0] };

static void usage(FILE *out) {
    fprintf(out, "usage: nmt bench <what> [options]\n\nbenchmarks:\n");
    for (int i = 0; i < NBENCHES; i++)
        fprintf(out, "  %-8s %s\n", benches[i].name, benches[i].summary);
    fprintf(out, "\nRun 'nmt bench <what> --help' for its options.\n");
}

int cmd_bench(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (args_wants_help(argv[1])) {
        usage(stdout);
        return 0;
    }
    for (int i = 0; i < NBENCHES; i++)
        if (!strcmp(argv[1], benches[i].name)) return benches[i].run(argc - 1, argv + 1);
    args_usage_error("bench", "unknown benchmark '%s'", argv[1]);
}
