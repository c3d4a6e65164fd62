/* test_bleu_cli.c: `nmt bleu` through the built executable, on the sacreBLEU fixtures of
 * $NMT_SHARED/bleu-fixtures. The expected output is assembled from the fixture rows (sacreBLEU's
 * numbers) in sacreBLEU's output formats: the text line, the JSON object, two metrics aligned,
 * stdin input, the error on mismatched line counts, and the shape of the --paired-bs report
 * (table, explanation, signatures) with its JSON form. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

static char fixtures[1024];

/* Runs a shell command; returns its exit code, stdout and stderr (malloc'ed). */
static int run(const char *cmd, char **out, char **err) {
    char err_path[] = "/tmp/test_bleu_cli_err_XXXXXX";
    int fd = mkstemp(err_path);
    close(fd);
    char full[8192];
    snprintf(full, sizeof full, "%s 2>'%s'", cmd, err_path);
    FILE *p = popen(full, "r");
    size_t cap = 1 << 16, n = 0;
    *out = malloc(cap);
    size_t got;
    while ((got = fread(*out + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (cap - n < 4096) *out = realloc(*out, cap *= 2);
    }
    (*out)[n] = '\0';
    int status = pclose(p);
    FILE *e = fopen(err_path, "r");
    *err = calloc(1, 1 << 16);
    size_t en = fread(*err, 1, (1 << 16) - 1, e);
    (*err)[en] = '\0';
    fclose(e);
    unlink(err_path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The fields of the expected.tsv row for (hyp, options). */
typedef struct Row {
    char line[4096];
    char *f[13];
} Row;

static bool find_row(const char *tsv, const char *hyp, const char *options, int nfields, Row *r) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", fixtures, tsv);
    FILE *f = fopen(path, "r");
    EXPECT(f != NULL, "cannot open %s", path);
    if (!f) return false;
    bool found = false;
    while (!found && fgets(r->line, sizeof r->line, f)) {
        r->line[strcspn(r->line, "\n")] = '\0';
        int n = 0;
        for (char *p = r->line; n < nfields; n++) {
            r->f[n] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = '\0';
            p = tab + 1;
        }
        found = !strcmp(r->f[0], hyp) && !strcmp(r->f[2], options);
    }
    fclose(f);
    EXPECT(found, "no fixture row for %s %s in %s", hyp, options, tsv);
    return found;
}

/* sacreBLEU's text line for a BLEU fixture row at width 1. */
static void bleu_text_line(const Row *r, char *buf, size_t cap) {
    snprintf(buf, cap,
             "BLEU|%s = %.1f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %s "
             "ref_len = %s)",
             r->f[12], atof(r->f[3]), atof(r->f[4]), atof(r->f[5]), atof(r->f[6]), atof(r->f[7]),
             atof(r->f[8]), atof(r->f[9]), r->f[10], r->f[11]);
}

static void test_text_and_json(void) {
    Row r;
    if (!find_row("expected.tsv", "hyp.newstest2013.drop20.de", "--tokenize 13a", 13, &r)) return;
    char cmd[4096], want[8192], *out, *err;
    snprintf(cmd, sizeof cmd, "'%s' bleu '%s/ref.newstest2013.de' -i '%s/%s' -f text", NMT_BINARY,
             fixtures, fixtures, r.f[0]);
    int rc = run(cmd, &out, &err);
    bleu_text_line(&r, want, sizeof want);
    strcat(want, "\n");
    EXPECT(rc == 0 && !strcmp(out, want), "text output (exit %d):\n%s\nwant:\n%s\nstderr: %s", rc,
           out, want, err);
    free(out);
    free(err);

    /* The default format is JSON: the rounded score, the signature and its fields. */
    snprintf(cmd, sizeof cmd, "'%s' bleu '%s/ref.newstest2013.de' -i '%s/%s'", NMT_BINARY,
             fixtures, fixtures, r.f[0]);
    rc = run(cmd, &out, &err);
    char line[4096], score[32];
    bleu_text_line(&r, line, sizeof line);
    snprintf(score, sizeof score, "%.1f", atof(r.f[3]));
    int k = snprintf(want, sizeof want,
                     "{\n \"name\": \"BLEU\",\n \"score\": %s,\n \"signature\": \"%s\",\n"
                     " \"verbose_score\": \"%s\"",
                     score, r.f[12], strstr(line, " = ") + 3 + strlen(score) + 1);
    char sig[512];
    snprintf(sig, sizeof sig, "%s", r.f[12]);
    for (char *kv = strtok(sig, "|"); kv; kv = strtok(NULL, "|")) {
        char *colon = strchr(kv, ':');
        *colon = '\0';
        k += snprintf(want + k, sizeof want - (size_t)k, ",\n \"%s\": \"%s\"", kv, colon + 1);
    }
    snprintf(want + k, sizeof want - (size_t)k, "\n}\n");
    EXPECT(rc == 0 && !strcmp(out, want), "JSON output (exit %d):\n%s\nwant:\n%s", rc, out, want);
    free(out);
    free(err);

    /* Two metrics: BLEU first whatever the order given, the " = " aligned; stdin input. */
    Row c;
    if (!find_row("expected_chrf.tsv", "hyp.newstest2013.drop20.de", "-m chrf", 5, &c)) return;
    snprintf(cmd, sizeof cmd, "'%s' bleu '%s/ref.newstest2013.de' -m chrf bleu -f text < '%s/%s'",
             NMT_BINARY, fixtures, fixtures, r.f[0]);
    rc = run(cmd, &out, &err);
    char left_bleu[600], left_chrf[600];
    snprintf(left_bleu, sizeof left_bleu, "BLEU|%s", r.f[12]);
    snprintf(left_chrf, sizeof left_chrf, "chrF2|%s", c.f[4]);
    int w = (int)(strlen(left_bleu) > strlen(left_chrf) ? strlen(left_bleu) : strlen(left_chrf));
    snprintf(want, sizeof want, "%*s%s\n%*s = %.1f\n", w, left_bleu, strstr(line, " = "), w,
             left_chrf, atof(c.f[3]));
    EXPECT(rc == 0 && !strcmp(out, want), "two metrics from stdin (exit %d):\n%s\nwant:\n%s", rc,
           out, want);
    free(out);
    free(err);

    /* --score-only with full double precision. */
    snprintf(cmd, sizeof cmd, "'%s' bleu '%s/ref.newstest2013.de' -i '%s/%s' -b -w 16 -f text",
             NMT_BINARY, fixtures, fixtures, r.f[0]);
    rc = run(cmd, &out, &err);
    snprintf(want, sizeof want, "%.16f\n", atof(r.f[3]));
    EXPECT(rc == 0 && !strcmp(out, want), "score only: '%s', want '%s'", out, want);
    free(out);
    free(err);
}

static void test_length_mismatch(void) {
    char path[] = "/tmp/test_bleu_cli_hyp_XXXXXX";
    int fd = mkstemp(path);
    EXPECT(write(fd, "Ein Satz.\nNoch einer.\n", 22) == 22, "write failed");
    close(fd);
    char cmd[4096], *out, *err;
    snprintf(cmd, sizeof cmd, "'%s' bleu '%s/ref.newstest2013.de' -i '%s' -f text", NMT_BINARY,
             fixtures, path);
    int rc = run(cmd, &out, &err);
    EXPECT(rc != 0 && out[0] == '\0', "mismatched lengths must fail (exit %d, stdout '%s')", rc,
           out);
    EXPECT(strstr(err, path) && strstr(err, "ref.newstest2013.de") && strstr(err, " 2 ") &&
               strstr(err, "3000"),
           "the error must name both files and their line counts: %s", err);
    free(out);
    free(err);
    unlink(path);
}

static size_t count(const char *s, const char *what) {
    size_t n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

static void test_paired(void) {
    const char *hyps[] = {"hyp.multi30k-val.drop30.de", "hyp.multi30k-val.shuffle.de",
                          "hyp.multi30k-val.unrelated.de"};
    Row rows[3];
    for (int s = 0; s < 3; s++)
        if (!find_row("expected.tsv", hyps[s], "--tokenize 13a", 13, &rows[s])) return;
    char cmd[4096], *out, *err, want[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' bleu ref.multi30k-val.de -i %s %s %s --paired-bs",
             fixtures, NMT_BINARY, hyps[0], hyps[1], hyps[2]);
    const char *formats[] = {" -f text", ""};
    for (int f = 0; f < 2; f++) {
        char full[4200];
        snprintf(full, sizeof full, "%s%s", cmd, formats[f]);
        int rc = run(full, &out, &err);
        EXPECT(rc == 0, "--paired-bs failed (exit %d): %s", rc, err);
        if (f == 0) {
            EXPECT(!strncmp(out, "╒═", strlen("╒═")), "table must open the report:\n%s", out);
            EXPECT(strstr(out, "│ Baseline: hyp.multi30k-val.drop30.de │") &&
                       strstr(out, "BLEU (μ ± 95% CI)"),
                   "header and baseline row:\n%s", out);
            for (int s = 0; s < 3; s++) {
                snprintf(want, sizeof want, " %.1f (", atof(rows[s].f[3]));
                EXPECT(count(out, want) >= 1, "system %d score cell '%s' missing:\n%s", s, want,
                       out);
            }
            /* Both systems are far from the baseline: p = 1/1001 and a star, no other p. */
            EXPECT(count(out, "(p = 0.0010)*") == 2 && count(out, "(p = ") == 2,
                   "p-value lines:\n%s", out);
            EXPECT(count(out, "Paired bootstrap resampling test with 1000 resampling trials\n") ==
                       1,
                   "explanation header:\n%s", out);
            snprintf(want, sizeof want, " - BLEU       nrefs:1|bs:1000|seed:12345|%s\n",
                     strstr(rows[0].f[12], "case:"));
            EXPECT(strstr(out, want) != NULL, "signature line '%s' missing:\n%s", want, out);
        } else {
            EXPECT(out[0] == '[' && count(out, "\"system\": ") == 3 &&
                       count(out, "\"p_value\": null") == 1 &&
                       count(out, "\"p_value\": 0.000999000999000999") == 2,
                   "paired JSON:\n%s", out);
            for (int s = 0; s < 3; s++) {
                snprintf(want, sizeof want, "\"score\": %s,", rows[s].f[3]);
                EXPECT(strstr(out, want) != NULL, "JSON score of system %d '%s' missing", s, want);
            }
        }
        free(out);
        free(err);
    }
}

int main(void) {
    snprintf(fixtures, sizeof fixtures, "%s/bleu-fixtures", test_shared_dir());
    test_text_and_json();
    test_length_mismatch();
    test_paired();
    return test_finish();
}
