/* cmd.h: the `nmt` subcommands. Each lives in its own trainer/cmd/cmd_<name>.c and takes the
 * arguments after the program name (argv[0] is the command name). A command returns its exit
 * code: 0 on success, 1 on failure, 2 on a usage error. */
#ifndef NMT_CMD_H
#define NMT_CMD_H

int cmd_bench(int argc, char **argv);
int cmd_prepare(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_average(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_reparam(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_bleu(int argc, char **argv);

#endif
