/* cmd_bleu.c: `nmt bleu REF [REF ...] [-i HYP [HYP ...]]`, a drop-in for the sacrebleu 2.6.0
 * command line on plain files: BLEU (13a/intl/none tokenization, optional lowercasing), chrF and
 * chrF++, text or JSON output, several systems in a table, and the paired bootstrap test against a
 * baseline. It reads and checks the files as sacreBLEU does (bleu_io.c), scores through the
 * data/eval/bleu.h library and prints what sacrebleu prints. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "args.h"
#include "bleu.h"
#include "check.h"
#include "cmd.h"

enum { MAX_METRICS = 2, DEFAULT_PAIRED_BS_N = 1000, ERR_LEN = 1024 };

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
        out[n++] = strndup(argv[i], (size_t)(eq - argv[i]));
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

static _Noreturn void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static _Noreturn void die(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "nmt bleu: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

/* The reference streams (one per file, or -nr tab-separated columns of one file). */
typedef struct RefStreams {
    BleuLines *files;
    int nfiles;
    int nstreams;
    const char ***lines; /* (nstreams) each (n) */
    const char **names;  /* (nstreams) file each stream came from */
    long n;
} RefStreams;

static void read_refs(const BleuCli *a, RefStreams *r) {
    char err[ERR_LEN];
    r->nfiles = a->nref_files;
    r->files = xcalloc((size_t)r->nfiles, sizeof *r->files);
    for (int f = 0; f < r->nfiles; f++)
        if (!bleu_read_lines(a->refs[f], &r->files[f], err, sizeof err)) die(1, "%s", err);
    r->nstreams = a->num_refs > r->nfiles ? a->num_refs : r->nfiles;
    r->lines = xcalloc((size_t)r->nstreams, sizeof *r->lines);
    r->names = xcalloc((size_t)r->nstreams, sizeof *r->names);
    if (a->num_refs == 1) {
        for (int f = 0; f < r->nfiles; f++) {
            r->lines[f] = (const char **)r->files[f].lines;
            r->names[f] = a->refs[f];
        }
        r->n = r->files[0].n;
        return;
    }
    /* One file, each line split on its first num_refs - 1 tabs. */
    BleuLines *src = &r->files[0];
    r->n = src->n;
    for (int k = 0; k < r->nstreams; k++) {
        r->lines[k] = xcalloc((size_t)(src->n ? src->n : 1), sizeof **r->lines);
        r->names[k] = a->refs[0];
    }
    for (long i = 0; i < src->n; i++) {
        char *field = src->lines[i];
        int k = 0;
        for (; k < a->num_refs; k++) {
            r->lines[k][i] = field;
            char *tab = k + 1 < a->num_refs ? strchr(field, '\t') : NULL;
            if (!tab) break;
            *tab = '\0';
            field = tab + 1;
        }
        int found = k < a->num_refs ? k + 1 : a->num_refs;
        if (found != a->num_refs)
            die(17, "FATAL: %s: line %ld: expected %d fields, but found %d.", a->refs[0], i + 1,
                a->num_refs, found);
    }
}

/* The systems: one per -i file, or the tab-separated columns of stdin. */
typedef struct Systems {
    int n;
    char **names;      /* (n) as printed ("Baseline: ..." for the paired baseline) */
    const char **files; /* (n) where each came from, for messages */
    BleuLines *lines;  /* (n) */
} Systems;

static void read_stdin_systems(Systems *s) {
    char err[ERR_LEN];
    BleuLines in;
    if (!bleu_read_stream_lines(stdin, "<stdin>", &in, err, sizeof err)) die(1, "%s", err);
    if (in.n == 0) { /* readline() of an empty stream is one empty line */
        in.lines = xmalloc(sizeof *in.lines);
        in.lines[0] = xstrdup("");
        in.n = 1;
    }
    /* The first line fixes the number of systems; its fields are not rstripped, later ones are. */
    bleu_rstrip(in.lines[0]);
    s->n = 1;
    for (const char *p = in.lines[0]; *p; p++) s->n += *p == '\t';
    s->names = xcalloc((size_t)s->n, sizeof *s->names);
    s->files = xcalloc((size_t)s->n, sizeof *s->files);
    s->lines = xcalloc((size_t)s->n, sizeof *s->lines);
    for (int k = 0; k < s->n; k++) {
        char name[32];
        snprintf(name, sizeof name, "System %d", k + 1);
        s->names[k] = xstrdup(name);
        s->files[k] = "<stdin>";
        s->lines[k].lines = xcalloc((size_t)in.n, sizeof(char *));
    }
    for (long i = 0; i < in.n; i++) {
        char *line = i ? bleu_rstrip(in.lines[i]) : in.lines[i];
        int k = 0;
        for (char *field = line;; k++) {
            char *tab = strchr(field, '\t');
            if (tab) *tab = '\0';
            if (k < s->n) {
                char *copy = xstrdup(field);
                s->lines[k].lines[i] = i ? bleu_rstrip(copy) : copy;
            }
            if (!tab) break;
            field = tab + 1;
        }
        if (k + 1 != s->n)
            die(17, "FATAL: the number of tab-delimited fields in the input stream differ across "
                    "lines (line %ld has %d, the first line %d).", i + 1, k + 1, s->n);
        for (k = 0; k < s->n; k++) s->lines[k].n = i + 1;
    }
    bleu_lines_free(&in);
}

static void read_file_systems(const BleuCli *a, Systems *s) {
    char err[ERR_LEN];
    s->names = xcalloc((size_t)a->ninputs, sizeof *s->names);
    s->files = xcalloc((size_t)a->ninputs, sizeof *s->files);
    s->lines = xcalloc((size_t)a->ninputs, sizeof *s->lines);
    for (int f = 0; f < a->ninputs; f++) {
        const char *name = a->inputs[f];
        bool dup = false;
        for (int k = 0; k < s->n; k++) dup |= !strcmp(s->names[k], name);
        if (dup && a->paired_bs && !strcmp(name, s->names[0])) {
            fprintf(stderr, "nmt bleu: Ignoring '%s' as it was also given as the baseline.\n",
                    name);
            continue;
        }
        if (dup) die(1, "'%s' already used to name a system.", name);
        if (!bleu_read_lines(name, &s->lines[s->n], err, sizeof err)) die(1, "%s", err);
        s->names[s->n] = xstrdup(name);
        s->files[s->n++] = name;
    }
}

static void check_lengths(const Systems *s, const RefStreams *r) {
    for (int k = 0; k < s->n; k++) {
        if (s->lines[k].n == 0) die(1, "%s contains no sentence.", s->files[k]);
        for (int j = 0; j < r->nstreams; j++)
            if (s->lines[k].n != r->n)
                die(1, "System and reference streams have different lengths: %s has %ld lines, "
                       "%s has %ld.", s->files[k], s->lines[k].n, r->names[j], r->n);
    }
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
                         const RefStreams *r, BleuCorpusStats *out) {
    if (m->kind == BLEU_METRIC_BLEU && !a->force) warn_tokenized(hyps);
    /* Every reference stream has a line for every segment here, so there is always one. */
    CHECK(bleu_corpus_stats(m, (const char *const *)hyps->lines,
                            (const char *const *const *)r->lines, r->nstreams, hyps->n, out),
          "segment %ld has no reference", out->no_reference + 1);
}

/* The seed of the bootstrap ($SACREBLEU_SEED, 12345 by default; "none" draws one). */
static uint64_t bootstrap_seed(char *text, size_t cap) {
    const char *env = getenv("SACREBLEU_SEED");
    if (!env) env = "12345";
    if (!strcasecmp(env, "none")) {
        snprintf(text, cap, "none");
        FILE *f = xfopen("/dev/urandom", "rb");
        uint64_t seed = 0;
        CHECK(fread(&seed, sizeof seed, 1, f) == 1, "cannot read /dev/urandom");
        fclose(f);
        return seed;
    }
    char *end;
    unsigned long long seed = strtoull(env, &end, 10);
    if (end == env || *end || env[0] == '-')
        die(1, "SACREBLEU_SEED must be a non-negative integer or 'none', not '%s'", env);
    snprintf(text, cap, "%llu", seed);
    return seed;
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

static int run_single(const BleuCli *a, const Systems *s, const RefStreams *r) {
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

static int run_systems(const BleuCli *a, const Systems *s, const RefStreams *r) {
    const char *order[MAX_METRICS];
    int nm = metric_order(a, a->paired_bs, order);
    int n_samples = a->paired_bs_n > 0 ? a->paired_bs_n : DEFAULT_PAIRED_BS_N;
    char seed_text[32] = "";
    uint64_t seed = a->paired_bs ? bootstrap_seed(seed_text, sizeof seed_text) : 0;

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

int cmd_bleu(int argc, char **argv) {
    int nargs;
    char **args = split_equals(argc, argv, &nargs);
    BleuCli a;
    parse_args(nargs, args, &a);
    if (a.nref_files == 0)
        die(1, "I need reference files: give them before the -i/--input argument "
               "(sacreBLEU test sets (-t) are not supported).");
    if (a.num_refs != 1 && a.nref_files > 1)
        die(1, "The --num-refs argument allows you to provide any number of tab-delimited "
               "references in a single file; you cannot then provide multiple reference files.");
    RefStreams refs = {0};
    read_refs(&a, &refs);
    Systems systems = {0};
    if (a.inputs) read_file_systems(&a, &systems);
    else read_stdin_systems(&systems);
    if (systems.n == 0) die(1, "-i/--input needs at least one file.");
    if (a.paired_bs) {
        if (systems.n == 1)
            die(1, "Paired tests require multiple input systems given to --input (-i).");
        if (a.inputs) {
            char *named = xmalloc(strlen(systems.names[0]) + 11);
            sprintf(named, "Baseline: %s", systems.names[0]);
            free(systems.names[0]);
            systems.names[0] = named;
        } else {
            for (int k = 0; k < systems.n; k++) {
                char name[32];
                if (k) snprintf(name, sizeof name, "System %d", k);
                else snprintf(name, sizeof name, "Baseline");
                free(systems.names[k]);
                systems.names[k] = xstrdup(name);
            }
        }
    }
    check_lengths(&systems, &refs);
    int rc = systems.n == 1 ? run_single(&a, &systems, &refs) : run_systems(&a, &systems, &refs);
    for (int k = 0; k < systems.n; k++) {
        bleu_lines_free(&systems.lines[k]);
        free(systems.names[k]);
    }
    free(systems.names);
    free(systems.files);
    free(systems.lines);
    if (a.num_refs != 1)
        for (int k = 0; k < refs.nstreams; k++) free(refs.lines[k]);
    for (int f = 0; f < refs.nfiles; f++) bleu_lines_free(&refs.files[f]);
    free(refs.files);
    free(refs.lines);
    free(refs.names);
    free(a.refs);
    for (int i = 0; i < nargs; i++) free(args[i]);
    free(args);
    return rc;
}
