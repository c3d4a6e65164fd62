/* bench.h: the benchmarks behind `nmt bench <what>`. Each prints a readable table, or one JSON
 * object per line with --json, and returns an exit code. */
#ifndef NMT_BENCH_H
#define NMT_BENCH_H

int bench_gemm(int argc, char **argv);
int bench_train(int argc, char **argv);
int bench_decode(int argc, char **argv);

#endif
