/* cmd_bleu.c: `nmt bleu REF [REF ...] [-i HYP [HYP ...]]`, a drop-in for the sacrebleu 2.6.0
 * command line on plain files: BLEU (13a/intl/none tokenization, optional lowercasing), chrF and
 * chrF++, text or JSON output, several systems in a table, and the paired bootstrap test against a
 * baseline. The options are parsed here; the files and stdin columns are read and checked by
 * data/eval/bleu_inputs.h, scored through data/eval/bleu.h, and what sacrebleu prints is printed
 * here, errors included ("nmt bleu: MESSAGE", exit 1, or 17 after sacreBLEU's FATAL ones). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "args.h"
#include "bleu.h"
#include "bleu_inputs.h"
#include "check.h"
#include "cmd.h"
#include "status.h"

enum { MAX_METRICS = 2, DEFAULT_PAIRED_BS_N = 1000 };

typedef struct BleuCli {
    const char **refs; /* reference files, in order */
    int nref_files;
    const char **inputs; /* -i files; NULL: systems come tab-separated on stdin */
    int ninputs;
    const char *metric_names[MAX_METRICS]; /* "bleu" / "chrf" in the order given */
    int nmetrics;
    BleuTokenize tokenize;
    bool lowercase, force;
    int chrf_char_order, chrf_word_order, chrf_beta;
    bool chrf_lowercase, chrf_whitespace;
    BleuFormat format;
    int width, num_refs, paired_bs_n;
    bool score_only, short_form, paired_bs, no_color;
} BleuCli;

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt bleu REF [REF ...] [-i HYP [HYP ...]] [options]\n\n"
            "Scores hypotheses against references exactly as sacrebleu %s does (same options,\n"
            "same numbers, same output). Without -i, systems are read from stdin, one per\n"
            "tab-separated column.\n\n"
            "options:\n"
            "  -i, --input FILE...        system output(s); several for a table or --paired-bs\n"
            "  -m, --metrics M...         bleu and/or chrf (default: bleu)\n"
            "  -tok, --tokenize T         13a (default), intl or none\n"
            "  -lc, --lowercase           case-insensitive BLEU\n"
            "  --force                    no warning about tokenized-looking input\n"
            "  -cc, --chrf-char-order N   character n-gram order (default 6)\n"
            "  -cw, --chrf-word-order N   word n-gram order (default 0; 2 is chrF++)\n"
            "  --chrf-beta N              recall weight (default 2)\n"
            "  --chrf-whitespace          keep whitespace in character n-grams\n"
            "  --chrf-lowercase           case-insensitive chrF\n"
            "  -nr, --num-refs N          N tab-separated references per line of one REF file\n"
            "  -f, --format F             json (default, or $SACREBLEU_FORMAT) or text\n"
            "  -w, --width N              decimals of the scores (default 1)\n"
            "  -b, --score-only           print only the score\n"
            "  -sh, --short               abbreviated signature\n"
            "  -pbs, --paired-bs          paired bootstrap test, the first -i file the baseline\n"
            "  -pbsn, --paired-bs-n N     bootstrap resamples (default 1000; seed $SACREBLEU_SEED "
            "or 12345)\n"
            "  -nc, --no-color            no colors in tables ($NO_COLOR too)\n"
            "  -q, --quiet                (accepted; nmt bleu prints only warnings and errors)\n"
            "  -V, --version              print the sacreBLEU version reproduced\n",
            BLEU_SACREBLEU_VERSION);
}

/* Options of sacrebleu that nmt bleu does not reproduce. */
static const char *const unsupported_options[] = {
    "-t", "--test-set", "-l", "--language-pair", "-ol", "--origlang", "--subset", "--download",
    "--echo", "--list", "--citation", "--cite", "-sl", "--sentence-level", "-s",
    "--smooth-method", "-sv", "--smooth-value", "--chrf-eps-smoothing", "-ci", "--confidence",
    "-cin", "--confidence-n", "-par", "--paired-ar", "-parn", "--paired-ar-n", "-d", "--detail",
    "--ter-case-sensitive", "--ter-asian-support", "--ter-no-punct", "--ter-normalized"};

static bool is_option(const char *arg) { return arg[0] == '-' && arg[1] != '\0'; }

/* The values after a list option (argparse nargs='*' / '+'): up to the next option. */
static int list_values(int argc, char **argv, int *i, const char ***values) {
    int start = *i + 1, end = start;
    while (end < argc && !is_option(argv[end])) end++;
    *values = (const char **)argv + start;
    *i = end - 1;
    return end - start;
}

/* argv with every --option=value split into --option value (argparse accepts both). */
static char **split_equals(int argc, char **argv, int *out_argc) {
    char **out = xcalloc(2 * (size_t)argc + 1, sizeof *out);
    int n = 0;
    for (int i = 0; i < argc; i++) {
        char *eq = !strncmp(argv[i], "--", 2) ? strchr(argv[i], '=') : NULL;
        if (!eq) {
            out[n++] = xstrdup(argv[i]);
            continue;
        }
        out[n] = xstrdup(argv[i]); /* the option name: cut at the '=' */
        out[n++][eq - argv[i]] = '\0';
        out[n++] = xstrdup(eq + 1);
    }
    *out_argc = n;
    return out;
}

static void parse_args(int argc, char **argv, BleuCli *a) {
    *a = (BleuCli){.tokenize = BLEU_TOKENIZE_13A,
                   .chrf_char_order = 6,
                   .chrf_word_order = 0,
                   .chrf_beta = 2,
                   .format = BLEU_FORMAT_JSON,
                   .width = 1,
                   .num_refs = 1,
                   .paired_bs_n = DEFAULT_PAIRED_BS_N,
                   .metric_names = {"bleu"},
                   .nmetrics = 1};
    a->refs = xcalloc((size_t)argc, sizeof *a->refs);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v;
        if (!is_option(arg)) {
            a->refs[a->nref_files++] = arg;
        } else if (args_wants_help(arg)) {
            usage(stdout);
            exit(0);
        } else if (args_is(arg, "-V", "--version")) {
            printf("nmt bleu (sacreBLEU %s)\n", BLEU_SACREBLEU_VERSION);
            exit(0);
        } else if (args_is(arg, "-i", "--input")) {
            a->ninputs = list_values(argc, argv, &i, &a->inputs);
        } else if (args_is(arg, "-m", "--metrics")) {
            const char **names;
            int n = list_values(argc, argv, &i, &names);
            if (n == 0) args_usage_error("bleu", "option %s needs at least one metric", arg);
            a->nmetrics = 0;
            for (int k = 0; k < n; k++) {
                if (!strcmp(names[k], "ter"))
                    args_usage_error("bleu", "metric 'ter' is not supported (bleu, chrf)");
                if (strcmp(names[k], "bleu") && strcmp(names[k], "chrf"))
                    args_usage_error("bleu", "argument -m/--metrics: invalid choice '%s' "
                                             "(choose from bleu, chrf)", names[k]);
                bool dup = false;
                for (int j = 0; j < a->nmetrics; j++) dup |= !strcmp(a->metric_names[j], names[k]);
                if (!dup) a->metric_names[a->nmetrics++] = names[k];
            }
        } else if (args_is(arg, "-tok", "--tokenize")) {
            v = args_value("bleu", argc, argv, &i);
            if (!strcmp(v, "13a")) a->tokenize = BLEU_TOKENIZE_13A;
            else if (!strcmp(v, "intl")) a->tokenize = BLEU_TOKENIZE_INTL;
            else if (!strcmp(v, "none")) a->tokenize = BLEU_TOKENIZE_NONE;
            else args_usage_error("bleu", "tokenizer '%s' is not supported (13a, intl, none)", v);
        } else if (args_is(arg, "-lc", "--lowercase")) {
            a->lowercase = true;
        } else if (args_is(arg, NULL, "--force")) {
            a->force = true;
        } else if (args_is(arg, "-cc", "--chrf-char-order")) {
            a->chrf_char_order =
                args_int("bleu", arg, args_value("bleu", argc, argv, &i), 1, CHRF_MAX_ORDERS);
        } else if (args_is(arg, "-cw", "--chrf-word-order")) {
            a->chrf_word_order =
                args_int("bleu", arg, args_value("bleu", argc, argv, &i), 0, CHRF_MAX_ORDERS - 1);
        } else if (args_is(arg, NULL, "--chrf-beta")) {
            a->chrf_beta = args_int("bleu", arg, args_value("bleu", argc, argv, &i), 0, 1000);
        } else if (args_is(arg, NULL, "--chrf-whitespace")) {
            a->chrf_whitespace = true;
        } else if (args_is(arg, NULL, "--chrf-lowercase")) {
            a->chrf_lowercase = true;
        } else if (args_is(arg, "-nr", "--num-refs")) {
            a->num_refs = args_int("bleu", arg, args_value("bleu", argc, argv, &i), 1, 1000);
        } else if (args_is(arg, "-f", "--format")) {
            v = args_value("bleu", argc, argv, &i);
            if (!strcmp(v, "json")) a->format = BLEU_FORMAT_JSON;
            else if (!strcmp(v, "text")) a->format = BLEU_FORMAT_TEXT;
            else args_usage_error("bleu", "format '%s' is not supported (json, text)", v);
        } else if (args_is(arg, "-w", "--width")) {
            a->width = args_int("bleu", arg, args_value("bleu", argc, argv, &i), 0, 100);
        } else if (args_is(arg, "-b", "--score-only")) {
            a->score_only = true;
        } else if (args_is(arg, "-sh", "--short")) {
            a->short_form = true;
        } else if (args_is(arg, "-pbs", "--paired-bs")) {
            a->paired_bs = true;
        } else if (args_is(arg, "-pbsn", "--paired-bs-n")) {
            a->paired_bs_n =
                args_int("bleu", arg, args_value("bleu", argc, argv, &i), -1000000000, 1000000000);
        } else if (args_is(arg, "-nc", "--no-color")) {
            a->no_color = true;
        } else if (args_is(arg, "-q", "--quiet")) {
        } else if (args_is(arg, "-j", "--paired-jobs")) {
            args_int("bleu", arg, args_value("bleu", argc, argv, &i), 0, 1 << 20);
        } else if (args_is(arg, "-e", "--encoding")) {
            v = args_value("bleu", argc, argv, &i);
            if (strcasecmp(v, "utf-8") && strcasecmp(v, "utf8"))
                args_usage_error("bleu", "only UTF-8 input is supported, not '%s'", v);
        } else {
            for (size_t k = 0; k < sizeof unsupported_options / sizeof *unsupported_options; k++)
                if (!strcmp(arg, unsupported_options[k]))
                    args_usage_error("bleu", "sacrebleu option %s is not supported by nmt bleu",
                                     arg);
            args_usage_error("bleu", "unknown option '%s'", arg);
        }
    }
    const char *env_format = getenv("SACREBLEU_FORMAT");
    if (env_format && !strcasecmp(env_format, "json")) a->format = BLEU_FORMAT_JSON;
    if (env_format && !strcasecmp(env_format, "text")) a->format = BLEU_FORMAT_TEXT;
}

/* sacreBLEU's exit codes: 1 for an error, 17 after a FATAL message on malformed input. */
enum { EXIT_ERROR = 1, EXIT_SACREBLEU_FATAL = 17 };

/* Prints the failure status_fail() left, as sacrebleu words it, and returns the exit code. */
static int failed(int code) {
    fprintf(stderr, "nmt bleu: %s%s\n", code == EXIT_SACREBLEU_FATAL ? "FATAL: " : "",
            status_message());
    return code;
}

/* The checks sacrebleu makes of its arguments before reading anything. 0, or -1 (status_fail). */
static int check_args(const BleuCli *a) {
    if (a->nref_files == 0)
        return status_fail("I need reference files: give them before the -i/--input argument "
                           "(sacreBLEU test sets (-t) are not supported).");
    if (a->num_refs != 1 && a->nref_files > 1)
        return status_fail("The --num-refs argument allows you to provide any number of "
                           "tab-delimited references in a single file; you cannot then provide "
                           "multiple reference files.");
    return 0;
}

/* The reference streams; returns 0 or the exit code after printing the error. */
static int read_refs(const BleuCli *a, BleuRefs *r) {
    if (bleu_refs_read(r, a->refs, a->nref_files) < 0) return failed(EXIT_ERROR);
    if (a->num_refs != 1 && bleu_refs_split_columns(r, a->num_refs) < 0)
        return failed(EXIT_SACREBLEU_FATAL);
    return 0;
}

/* The systems: one per -i file, or the tab-separated columns of stdin; returns 0 or the exit
 * code after printing the error. */
static int read_systems(const BleuCli *a, BleuSystems *s) {
    if (!a->inputs) {
        BleuLines in;
        if (bleu_read_stream_lines(stdin, "<stdin>", &in) < 0) return failed(EXIT_ERROR);
        int rc = bleu_systems_from_columns(s, &in, "<stdin>");
        bleu_lines_free(&in);
        return rc < 0 ? failed(EXIT_SACREBLEU_FATAL) : 0;
    }
    for (int f = 0; f < a->ninputs; f++) {
        const char *name = a->inputs[f];
        if (a->paired_bs && s->n && !strcmp(name, s->names[0])) {
            fprintf(stderr, "nmt bleu: Ignoring '%s' as it was also given as the baseline.\n",
                    name);
            continue;
        }
        if (bleu_systems_add_file(s, name) < 0) return failed(EXIT_ERROR);
    }
    return 0;
}

/* What sacrebleu requires of the systems given. 0, or -1 (status_fail). */
static int check_systems(const BleuCli *a, const BleuSystems *s) {
    if (s->n == 0) return status_fail("-i/--input needs at least one file.");
    if (a->paired_bs && s->n == 1)
        return status_fail("Paired tests require multiple input systems given to --input (-i).");
    return 0;
}

static BleuMetric make_metric(const BleuCli *a, const char *name) {
    if (!strcmp(name, "bleu")) return bleu_metric_bleu(a->tokenize, a->lowercase);
    BleuMetric m = bleu_metric_chrf(a->chrf_word_order, a->chrf_lowercase);
    m.char_order = a->chrf_char_order;
    m.beta = a->chrf_beta;
    m.whitespace = a->chrf_whitespace;
    return m;
}

/* sacreBLEU's warning when many hypotheses end in a tokenized period (BLEU, without --force). */
static void warn_tokenized(const BleuLines *hyps) {
    long count = 0;
    for (long i = 0; i < hyps->n; i++) {
        size_t len = strlen(hyps->lines[i]);
        count += len >= 2 && !strcmp(hyps->lines[i] + len - 2, " .");
    }
    if (count < 100) return;
    fprintf(stderr, "nmt bleu: That's 100 lines that end in a tokenized period ('.')\n"
                    "nmt bleu: It looks like you forgot to detokenize your test data, which may "
                    "hurt your score.\n"
                    "nmt bleu: If you insist your data is detokenized, or don't care, you can "
                    "suppress this message with the `force` parameter.\n");
}

static void corpus_stats(const BleuCli *a, const BleuMetric *m, const BleuLines *hyps,
                         const BleuRefs *r, BleuCorpusStats *out) {
    if (m->kind == BLEU_METRIC_BLEU && !a->force) warn_tokenized(hyps);
    /* Every reference stream has a line for every segment here, so there is always one. */
    CHECK(bleu_corpus_stats(m, (const char *const *)hyps->lines,
                            (const char *const *const *)r->lines, r->nstreams, hyps->n, out),
          "segment %ld has no reference", out->no_reference + 1);
}

/* The seed of the bootstrap ($SACREBLEU_SEED, 12345 by default; "none" draws one) in *seed and
 * as the signature shows it in text. 0, or -1 (status_fail) for a malformed $SACREBLEU_SEED. */
static int bootstrap_seed(uint64_t *seed, char *text, size_t cap) {
    const char *env = getenv("SACREBLEU_SEED");
    if (!env) env = "12345";
    if (!strcasecmp(env, "none")) {
        snprintf(text, cap, "none");
        FILE *f = xfopen("/dev/urandom", "rb");
        CHECK(fread(seed, sizeof *seed, 1, f) == 1, "cannot read /dev/urandom");
        fclose(f);
        return 0;
    }
    char *end;
    unsigned long long value = strtoull(env, &end, 10);
    if (end == env || *end || env[0] == '-')
        return status_fail("SACREBLEU_SEED must be a non-negative integer or 'none', not '%s'",
                           env);
    snprintf(text, cap, "%llu", value);
    *seed = value;
    return 0;
}

/* The metrics in the order they are reported: sorted by name (BLEU before chrF) as sacreBLEU
 * prints single systems and plain tables, or as given for the paired test. Returns the count. */
static int metric_order(const BleuCli *a, bool as_given, const char **order) {
    if (as_given) {
        memcpy(order, a->metric_names, (size_t)a->nmetrics * sizeof *order);
        return a->nmetrics;
    }
    int n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < a->nmetrics; k++)
            if (!strcmp(a->metric_names[k], pass ? "chrf" : "bleu"))
                order[n++] = a->metric_names[k];
    return n;
}

static int run_single(const BleuCli *a, const BleuSystems *s, const BleuRefs *r) {
    const char *order[MAX_METRICS];
    int n = metric_order(a, false, order);
    char *lines[MAX_METRICS];
    for (int k = 0; k < n; k++) {
        BleuMetric m = make_metric(a, order[k]);
        BleuCorpusStats stats;
        corpus_stats(a, &m, &s->lines[0], r, &stats);
        int64_t sums[3 * CHRF_MAX_ORDERS];
        bleu_corpus_stats_sum(&stats, sums);
        BleuScore score = bleu_score(&m, sums);
        char sig[256];
        bleu_signature(&m, stats.nrefs, a->short_form && a->format != BLEU_FORMAT_JSON, 0, NULL,
                       sig, sizeof sig);
        lines[k] = bleu_format_score(&m, &score, sig, a->width, a->score_only, a->format);
        bleu_corpus_stats_free(&stats);
    }
    bleu_print_single(stdout, lines, n, a->format);
    for (int k = 0; k < n; k++) free(lines[k]);
    return 0;
}

/* Several systems: a table of scores, or with --paired-bs the bootstrap test drawn from seed
 * (seed_text as the signature shows it). */
static int run_systems(const BleuCli *a, const BleuSystems *s, const BleuRefs *r, uint64_t seed,
                       const char *seed_text) {
    const char *order[MAX_METRICS];
    int nm = metric_order(a, a->paired_bs, order);
    int n_samples = a->paired_bs_n > 0 ? a->paired_bs_n : DEFAULT_PAIRED_BS_N;

    char names[MAX_METRICS][32], sigs[MAX_METRICS][256];
    const char *name_ptrs[MAX_METRICS], *sig_ptrs[MAX_METRICS];
    BleuPairedResult *results = xcalloc((size_t)(nm * s->n), sizeof *results);
    char **scores = xcalloc((size_t)(nm * s->n), sizeof *scores);
    BleuCorpusStats *stats = xcalloc((size_t)s->n, sizeof *stats);
    for (int k = 0; k < nm; k++) {
        BleuMetric m = make_metric(a, order[k]);
        for (int j = 0; j < s->n; j++) corpus_stats(a, &m, &s->lines[j], r, &stats[j]);
        bleu_metric_name(&m, names[k], sizeof names[k]);
        bleu_signature(&m, stats[0].nrefs, a->short_form, a->paired_bs ? n_samples : 0, seed_text,
                       sigs[k], sizeof sigs[k]);
        name_ptrs[k] = names[k];
        sig_ptrs[k] = sigs[k];
        if (a->paired_bs) {
            const BleuCorpusStats *systems[s->n];
            for (int j = 0; j < s->n; j++) systems[j] = &stats[j];
            bleu_paired_bootstrap(&m, systems, s->n, n_samples, seed, results + k * s->n);
        } else {
            for (int j = 0; j < s->n; j++) {
                int64_t sums[3 * CHRF_MAX_ORDERS];
                bleu_corpus_stats_sum(&stats[j], sums);
                BleuScore score = bleu_score(&m, sums);
                scores[k * s->n + j] =
                    bleu_format_score(&m, &score, "", a->width, true, BLEU_FORMAT_TEXT);
            }
        }
        for (int j = 0; j < s->n; j++) bleu_corpus_stats_free(&stats[j]);
    }
    const char *no_color = getenv("NO_COLOR");
    BleuSystemsReport report = {
        .nsystems = s->n,
        .nmetrics = nm,
        .system_names = (const char *const *)s->names,
        .metric_names = name_ptrs,
        .signatures = sig_ptrs,
        .results = a->paired_bs ? results : NULL,
        .scores = (const char *const *)scores,
        .width = a->width,
        .paired_bs_n = a->paired_bs_n,
        .color = !a->no_color && !(no_color && *no_color) && isatty(fileno(stdout)),
    };
    bleu_print_systems(stdout, &report, a->format);
    for (int i = 0; i < nm * s->n; i++) free(scores[i]);
    free(scores);
    free(results);
    free(stats);
    return 0;
}

/* Reads, checks and scores what the arguments name; returns the exit code. */
static int run(const BleuCli *a, BleuRefs *refs, BleuSystems *systems) {
    if (check_args(a) < 0) return failed(EXIT_ERROR);
    int rc = read_refs(a, refs);
    if (!rc) rc = read_systems(a, systems);
    if (rc) return rc;
    if (check_systems(a, systems) < 0) return failed(EXIT_ERROR);
    if (a->paired_bs) bleu_systems_name_paired(systems);
    if (bleu_systems_check(systems, refs) < 0) return failed(EXIT_ERROR);
    if (systems->n == 1) return run_single(a, systems, refs);
    char seed_text[32] = "";
    uint64_t seed = 0;
    if (a->paired_bs && bootstrap_seed(&seed, seed_text, sizeof seed_text) < 0)
        return failed(EXIT_ERROR);
    return run_systems(a, systems, refs, seed, seed_text);
}

int cmd_bleu(int argc, char **argv) {
    int nargs;
    char **args = split_equals(argc, argv, &nargs);
    BleuCli a;
    parse_args(nargs, args, &a);
    BleuRefs refs = {0};
    BleuSystems systems = {0};
    int rc = run(&a, &refs, &systems);
    bleu_systems_free(&systems);
    bleu_refs_free(&refs);
    free(a.refs);
    for (int i = 0; i < nargs; i++) free(args[i]);
    free(args);
    return rc;
}
