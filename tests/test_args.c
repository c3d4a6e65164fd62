/* test_args.c: the command-line helpers of args.h: an option table fills strings, integers,
 * numbers and flags by either spelling and keeps the model options for later; --help stops the
 * parse; unknown options and out-of-range values are usage errors (exit 2); a subcommand table
 * runs the named entry with argv shifted, reports an unknown name and prints its usage. */
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "test_util.h"

static void no_usage(FILE *out) { fputs("usage\n", out); }

static int count(char **argv) {
    int argc = 0;
    while (argv[argc]) argc++;
    return argc;
}

/* args_parse of argv in a child process (stderr silenced); its exit status. */
static int parse_status(char **argv) {
    fflush(stdout), fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        int n = 0;
        const ArgsOption opts[] = {ARGS_OPT_INT("-n", "--num", &n, 1, 9)};
        ModelArgs ma = {0};
        _exit(args_parse("t", count(argv), argv, opts, ARGS_COUNT(opts), &ma, NULL, no_usage)
                  ? 0 : 3);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void parse_table(void) {
    const char *name = NULL;
    int num = 0;
    double x = 0;
    bool flag = false;
    const ArgsOption opts[] = {ARGS_OPT_STRING("-s", "--string", &name),
                               ARGS_OPT_INT(NULL, "--num", &num, -5, 5),
                               ARGS_OPT_DOUBLE(NULL, "--x", &x), ARGS_OPT_FLAG(NULL, "--flag", &flag)};
    ModelArgs ma = {0};
    char *argv[] = {"t", "--num", "-3", "-s", "abc", "--beam", "4", "--x", "2.5", "--flag",
                    "-m", "ckpt", "--threads", "2", "--lenpen", "0.7", "--model", "b", NULL};
    EXPECT(args_parse("t", count(argv), argv, opts, ARGS_COUNT(opts), &ma, NULL, no_usage),
           "a full command line parses");
    EXPECT(name && !strcmp(name, "abc") && num == -3 && x == 2.5 && flag, "the table's values");
    EXPECT(ma.n_models == 2 && !strcmp(ma.models[0], "ckpt") && !strcmp(ma.models[1], "b") &&
               ma.threads == 2, "-m (twice, in order) and --threads");
    EXPECT(ma.ndecode == 4 && !strcmp(ma.decode_opts[0], "--beam") &&
               !strcmp(ma.decode_opts[3], "0.7"),
           "the decoding options are kept as given (%d)", ma.ndecode);
    free(ma.decode_opts), free(ma.models);

    char *help[] = {"t", "--help", "--bogus", NULL};
    EXPECT(parse_status(help) == 3, "--help stops before a later unknown option");
    char *ok[] = {"t", "--num", "9", NULL};
    EXPECT(parse_status(ok) == 0, "an integer at the top of its range");
    char *high[] = {"t", "-n", "10", NULL};
    EXPECT(parse_status(high) == 2, "an integer above its range is a usage error");
    char *word[] = {"t", "--num", "x", NULL};
    EXPECT(parse_status(word) == 2, "a word for an integer is a usage error");
    char *missing[] = {"t", "--num", NULL};
    EXPECT(parse_status(missing) == 2, "an option without its value is a usage error");
    char *unknown[] = {"t", "--bogus", NULL};
    EXPECT(parse_status(unknown) == 2, "an unknown option is a usage error");
    char *beam[] = {"t", "--beam", "0", NULL};
    EXPECT(parse_status(beam) == 2, "a decoding option out of range is a usage error");
}

static int last_argc;
static const char *last_arg0;
static int sub_a(int argc, char **argv) {
    last_argc = argc, last_arg0 = argv[0];
    return 7;
}
static int sub_b(int argc, char **argv) {
    (void)argc, (void)argv;
    return 1;
}

static void subcommands(void) {
    static const Subcommand list[] = {{"alpha", "the first", sub_a}, {"beta", "the second", sub_b}};
    const SubcommandTable t = {"head\n", list, 2, 6, "tail\n"};
    char *run_a[] = {"prog", "alpha", "x", "y", NULL};
    EXPECT(args_subcommand_run(&t, 4, run_a) == 7 && last_argc == 3 && !strcmp(last_arg0, "alpha"),
           "the named entry runs with argv from its name on");
    char *run_b[] = {"prog", "beta", NULL};
    EXPECT(args_subcommand_run(&t, 2, run_b) == 1, "the entry's exit code is returned");
    char *unknown[] = {"prog", "gamma", NULL};
    EXPECT(args_subcommand_run(&t, 2, unknown) == ARGS_UNKNOWN_SUBCOMMAND, "an unknown name");
    char buf[256] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    args_subcommand_usage(f, &t);
    fclose(f);
    EXPECT(!strcmp(buf, "head\n  alpha  the first\n  beta   the second\ntail\n"), "usage: '%s'",
           buf);
}

int main(void) {
    parse_table();
    subcommands();
    return test_finish();
}
