/* bleu_format.c: what the sacrebleu command prints: signatures, score lines (Score.format), the
 * aligned single-system output, the multi-system fancy_grid table of tabulate with the paired-test
 * explanation, and JSON as Python's json.dumps writes it (including repr() of floats). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bleu.h"
#include "check.h"
#include "json.h"
#include "strbuf.h"
#include "unicode.h"

/* ---- growable strings (strbuf.h) ---- */

static void str_repeat(StrBuf *b, const char *s, int times) {
    for (int i = 0; i < times; i++) strbuf_add(b, s);
}

/* ---- Python float formatting ---- */

void bleu_python_repr(double x, char *buf, size_t cap) {
    if (x == 0) {
        snprintf(buf, cap, signbit(x) ? "-0.0" : "0.0");
        return;
    }
    if (isnan(x) || isinf(x)) {
        snprintf(buf, cap, isnan(x) ? "NaN" : (x > 0 ? "Infinity" : "-Infinity"));
        return;
    }
    /* The shortest digit string that reads back as x (what repr() prints). */
    char tmp[40];
    int prec;
    for (prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, x);
        if (strtod(tmp, NULL) == x) break;
    }
    char digits[20];
    int nd = 0;
    const char *p = tmp + (tmp[0] == '-');
    for (; *p != 'e'; p++)
        if (*p != '.') digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = '\0';
    int decpt = atoi(p + 1) + 1; /* x = 0.DIGITS * 10^decpt */
    StrBuf out = {0};
    if (x < 0) strbuf_add(&out, "-");
    if (decpt <= -4 || decpt > 16) {
        strbuf_addf(&out, "%c", digits[0]);
        if (nd > 1) strbuf_addf(&out, ".%s", digits + 1);
        strbuf_addf(&out, "e%c%02d", decpt - 1 < 0 ? '-' : '+', abs(decpt - 1));
    } else if (decpt <= 0) {
        strbuf_add(&out, "0.");
        str_repeat(&out, "0", -decpt);
        strbuf_add(&out, digits);
    } else if (decpt < nd) {
        strbuf_addf(&out, "%.*s.%s", decpt, digits, digits + decpt);
    } else {
        strbuf_add(&out, digits);
        str_repeat(&out, "0", decpt - nd);
        strbuf_add(&out, ".0");
    }
    snprintf(buf, cap, "%s", out.s);
    free(out.s);
}

/* json.dumps of a string: ensure_ascii escapes everything outside printable ASCII as \uXXXX
 * (UTF-16 surrogate pairs above U+FFFF); invalid UTF-8 reads as U+FFFD. */
static void json_string(StrBuf *b, const char *s, bool ensure_ascii) {
    json_add_string(b, s,
                    JSON_ESCAPE_SHORT | JSON_REPLACE_INVALID | (ensure_ascii ? JSON_ENSURE_ASCII : 0));
}

static void json_number(StrBuf *b, double x) {
    char buf[40];
    bleu_python_repr(x, buf, sizeof buf);
    strbuf_add(b, buf);
}

/* ---- signatures and score lines ---- */

void bleu_signature(const BleuMetric *m, int nrefs, bool short_form, int bootstrap_n,
                    const char *seed, char *buf, size_t cap) {
    StrBuf b = {0};
    char nrefs_text[16];
    if (nrefs < 0) snprintf(nrefs_text, sizeof nrefs_text, "var");
    else snprintf(nrefs_text, sizeof nrefs_text, "%d", nrefs);
    strbuf_addf(&b, "%s:%s", short_form ? "#" : "nrefs", nrefs_text);
    if (bootstrap_n > 0)
        strbuf_addf(&b, "|bs:%d|%s:%s", bootstrap_n, short_form ? "rs" : "seed", seed);
    const char *lc = m->lowercase ? "lc" : "mixed";
    if (m->kind == BLEU_METRIC_BLEU) {
        static const char *const tokenizers[] = {"13a", "intl", "none"};
        strbuf_addf(&b, short_form ? "|c:%s|e:no|tok:%s|s:exp" : "|case:%s|eff:no|tok:%s|smooth:exp",
                 lc, tokenizers[m->tokenize]);
    } else {
        strbuf_addf(&b,
                 short_form ? "|c:%s|e:yes|nc:%d|nw:%d|s:%s"
                            : "|case:%s|eff:yes|nc:%d|nw:%d|space:%s",
                 lc, m->char_order, m->word_order, m->whitespace ? "yes" : "no");
    }
    strbuf_addf(&b, "|%s:%s", short_form ? "v" : "version", BLEU_SACREBLEU_VERSION);
    snprintf(buf, cap, "%s", b.s);
    free(b.s);
}

char *bleu_format_score(const BleuMetric *m, const BleuScore *s, const char *signature, int width,
                        bool score_only, BleuFormat format) {
    StrBuf sc = {0};
    strbuf_addf(&sc, "%.*f", width, s->score);
    if (score_only) return sc.s;
    char name[32];
    bleu_metric_name(m, name, sizeof name);
    StrBuf verbose = {0};
    if (m->kind == BLEU_METRIC_BLEU) {
        for (int n = 0; n < BLEU_MAX_NGRAM_ORDER; n++)
            strbuf_addf(&verbose, "%s%.1f", n ? "/" : "", s->precisions[n]);
        strbuf_addf(&verbose, " (BP = %.3f ratio = %.3f hyp_len = %lld ref_len = %lld)", s->bp,
                 s->ratio, (long long)s->sys_len, (long long)s->ref_len);
    }
    StrBuf out = {0};
    if (format == BLEU_FORMAT_TEXT) {
        strbuf_add(&out, name);
        if (signature[0]) strbuf_addf(&out, "|%s", signature);
        strbuf_addf(&out, " = %s", sc.s);
        if (verbose.s) strbuf_addf(&out, " %s", verbose.s);
    } else {
        strbuf_add(&out, "{\n \"name\": ");
        json_string(&out, name, false);
        strbuf_add(&out, ",\n \"score\": ");
        json_number(&out, strtod(sc.s, NULL));
        strbuf_add(&out, ",\n \"signature\": ");
        json_string(&out, signature, false);
        if (verbose.s) {
            strbuf_add(&out, ",\n \"verbose_score\": ");
            json_string(&out, verbose.s, false);
        }
        /* Every "key:value" of the signature as its own string field. */
        char *sig = xstrdup(signature), *save = NULL;
        for (char *kv = strtok_r(sig, "|", &save); kv; kv = strtok_r(NULL, "|", &save)) {
            char *colon = strchr(kv, ':');
            if (!colon) continue;
            *colon = '\0';
            strbuf_add(&out, ",\n ");
            json_string(&out, kv, false);
            strbuf_add(&out, ": ");
            json_string(&out, colon + 1, false);
        }
        free(sig);
        strbuf_add(&out, "\n}");
    }
    free(sc.s);
    free(verbose.s);
    return out.s;
}

void bleu_print_single(FILE *out, char *const *lines, int n, BleuFormat format) {
    if (format == BLEU_FORMAT_JSON) {
        if (n > 1) fprintf(out, "[\n");
        for (int i = 0; i < n; i++) fprintf(out, "%s%s", lines[i], i + 1 < n ? ",\n" : "\n");
        if (n > 1) fprintf(out, "]\n");
        return;
    }
    if (n == 1) {
        fprintf(out, "%s\n", lines[0]);
        return;
    }
    /* Right-align the part before " = " (score-only lines have none and print as they come). */
    int width = 0;
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(lines[i], '=');
        if (!eq) fprintf(out, "%s\n", lines[i]);
        else if ((int)(eq - lines[i]) - 1 > width) width = (int)(eq - lines[i]) - 1;
    }
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(lines[i], '=');
        if (eq) fprintf(out, "%*.*s%s\n", width, (int)(eq - lines[i]) - 1, lines[i], eq - 1);
    }
}

/* ---- the multi-system table ---- */

enum { ANSI_NONE, ANSI_RED, ANSI_GREEN, ANSI_YELLOW, ANSI_CYAN };

/* Color.format: the text wrapped in a colorama color when colors are on. */
static void colored(StrBuf *b, const char *text, int color, bool enabled) {
    static const char *const codes[] = {"", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[36m"};
    if (!enabled || color == ANSI_NONE) {
        strbuf_add(b, text);
        return;
    }
    strbuf_addf(b, "%s%s\x1b[0m", codes[color], text);
}

/* One table cell: up to two lines of plain text, each with its color. */
typedef struct Cell {
    char *lines[2];
    int colors[2];
    int nlines;
} Cell;

static long visible_width(const char *s) {
    long n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* str.strip() of Python whitespace, as tabulate strips right- and center-aligned cells. */
static char *strip_copy(const char *s) {
    size_t len = strlen(s);
    uint32_t *cps = xmalloc((len + 1) * sizeof *cps);
    size_t n = utf8_decode_lenient(s, len, cps), lo = 0, hi = n;
    while (lo < hi && unicode_is_space(cps[lo])) lo++;
    while (hi > lo && unicode_is_space(cps[hi - 1])) hi--;
    char *out = xmalloc(4 * (hi - lo) + 1);
    size_t k = 0;
    for (size_t i = lo; i < hi; i++) k += (size_t)utf8_encode(cps[i], out + k);
    out[k] = '\0';
    free(cps);
    return out;
}

/* A line padded to width: right-aligned, or centered with the odd space on the right. */
static void padded(StrBuf *b, const char *text, int color, long width, bool right, bool color_on) {
    long pad = width - visible_width(text);
    long left = right ? pad : pad / 2;
    str_repeat(b, " ", (int)left);
    colored(b, text, color, color_on);
    str_repeat(b, " ", (int)(pad - left));
}

static void rule(StrBuf *b, const long *widths, int ncols, const char *l, const char *fill,
                 const char *mid, const char *r) {
    strbuf_add(b, l);
    for (int c = 0; c < ncols; c++) {
        str_repeat(b, fill, (int)widths[c] + 2);
        strbuf_add(b, c + 1 < ncols ? mid : r);
    }
    strbuf_add(b, "\n");
}

/* tabulate(..., tablefmt='fancy_grid', colalign=('right',), stralign='center'). */
static void fancy_grid(StrBuf *b, Cell *header, Cell *cells, int nrows, int ncols, bool color_on) {
    long *widths = xcalloc((size_t)ncols, sizeof *widths); /* (ncols) text width of each column */
    for (int c = 0; c < ncols; c++) {
        widths[c] = visible_width(header[c].lines[0]) + 2; /* tabulate's MIN_PADDING */
        for (int r = 0; r < nrows; r++)
            for (int k = 0; k < cells[r * ncols + c].nlines; k++) {
                long w = visible_width(cells[r * ncols + c].lines[k]);
                if (w > widths[c]) widths[c] = w;
            }
    }
    rule(b, widths, ncols, "╒", "═", "╤", "╕");
    for (int r = -1; r < nrows; r++) {
        Cell *row = r < 0 ? header : cells + r * ncols;
        int nlines = 1;
        for (int c = 0; c < ncols; c++)
            if (row[c].nlines > nlines) nlines = row[c].nlines;
        for (int k = 0; k < nlines; k++) {
            strbuf_add(b, "│");
            for (int c = 0; c < ncols; c++) {
                strbuf_add(b, " ");
                if (k < row[c].nlines)
                    padded(b, row[c].lines[k], row[c].colors[k], widths[c], c == 0, color_on);
                else str_repeat(b, " ", (int)widths[c]);
                strbuf_add(b, " │");
            }
            strbuf_add(b, "\n");
        }
        if (r < 0) rule(b, widths, ncols, "╞", "═", "╪", "╡");
        else if (r + 1 < nrows) rule(b, widths, ncols, "├", "─", "┼", "┤");
    }
    rule(b, widths, ncols, "╘", "═", "╧", "╛");
    free(widths);
}

static Cell cell_text(const char *text, int color) {
    return (Cell){.lines = {xstrdup(text), NULL}, .colors = {color, ANSI_NONE}, .nlines = 1};
}

static void paired_explanation(StrBuf *b, const BleuSystemsReport *r, const char *baseline_name) {
    bool c = r->color;
    StrBuf msg = {0}, bline = {0}, bline_name = {0}, null_hyp = {0}, null_lower = {0}, red = {0};
    strbuf_addf(&msg, "Paired bootstrap resampling test with %d resampling trials", r->paired_bs_n);
    colored(&bline, "baseline", ANSI_YELLOW, c);
    colored(&bline_name, baseline_name, ANSI_YELLOW, c);
    colored(&null_hyp, "Null hypothesis", ANSI_GREEN, c);
    colored(&null_lower, "null hypothesis", ANSI_GREEN, c);
    colored(&red, "highlighted in red", ANSI_RED, c);
    long dashes = visible_width(msg.s);
    str_repeat(b, "-", (int)dashes);
    strbuf_addf(b, "\n%s\n", msg.s);
    str_repeat(b, "-", (int)dashes);
    strbuf_addf(b, "\n - Each system is pairwise compared to %s.\n", bline_name.s);
    strbuf_add(b, "   Actual system score / bootstrap estimated true mean / 95% CI are provided for "
               "each metric.\n\n");
    strbuf_addf(b, " - %s: the system and the %s translations are essentially\n", null_hyp.s, bline.s);
    strbuf_addf(b, "   generated by the same underlying process. For a given system and the %s,\n",
             bline.s);
    strbuf_add(b, "   the p-value is roughly the probability of the absolute score difference "
               "(delta)\n");
    strbuf_addf(b, "   or higher occurring due to chance, under the assumption that the %s is "
                "correct.\n\n", null_lower.s);
    strbuf_addf(b, " - Assuming a significance threshold of 0.05, the %s can be rejected\n",
             null_lower.s);
    strbuf_add(b, "   for p-values < 0.05 (marked with \"*\"). This means that the delta is unlikely "
               "to be attributed\n");
    strbuf_addf(b, "   to chance, hence the system is significantly \"different\" than the %s.\n",
             bline.s);
    strbuf_addf(b, "   Otherwise, the p-values are %s.\n\n", red.s);
    strbuf_addf(b, " - NOTE: Significance does not tell whether a system is \"better\" than the %s "
                "but rather\n", bline.s);
    strbuf_add(b, "   emphasizes the \"difference\" of the systems in terms of the replicability of "
               "the delta.\n\n");
    free(msg.s);
    free(bline.s);
    free(bline_name.s);
    free(null_hyp.s);
    free(null_lower.s);
    free(red.s);
}

static void print_table(StrBuf *b, const BleuSystemsReport *r) {
    int ncols = 1 + r->nmetrics, nrows = r->nsystems;
    bool paired = r->results != NULL;
    Cell header[ncols];
    Cell *cells = xcalloc((size_t)(nrows * ncols), sizeof *cells);
    /* The baseline row and every header are highlighted (print_results_table). */
    bool has_baseline = !strncmp(r->system_names[0], "Baseline:", 9);
    header[0] = cell_text("System", ANSI_CYAN);
    for (int m = 0; m < r->nmetrics; m++) {
        StrBuf h = {0};
        strbuf_addf(&h, "%s%s", r->metric_names[m], paired ? " (μ ± 95% CI)" : "");
        header[1 + m] = cell_text(h.s, ANSI_CYAN);
        free(h.s);
    }
    for (int s = 0; s < nrows; s++) {
        int row_color = s == 0 && has_baseline ? ANSI_YELLOW : ANSI_NONE;
        char *name = strip_copy(r->system_names[s]);
        cells[s * ncols] = cell_text(name, row_color);
        free(name);
        for (int m = 0; m < r->nmetrics; m++) {
            Cell *cell = &cells[s * ncols + 1 + m];
            if (!paired) {
                *cell = cell_text(r->scores[m * r->nsystems + s], row_color);
                continue;
            }
            const BleuPairedResult *res = &r->results[m * r->nsystems + s];
            StrBuf line = {0};
            strbuf_addf(&line, "%.*f (%.*f ± %.*f)", r->width, res->score, r->width, res->mean,
                     r->width, res->ci);
            *cell = cell_text(line.s, row_color);
            free(line.s);
            if (!isnan(res->p_value)) {
                StrBuf p = {0};
                strbuf_addf(&p, "(p = %.4f)%s", res->p_value, res->p_value > 0.05 ? "" : "*");
                cell->lines[1] = p.s;
                cell->colors[1] = res->p_value > 0.05 ? ANSI_RED : ANSI_NONE;
                cell->nlines = 2;
            }
        }
    }
    fancy_grid(b, header, cells, nrows, ncols, r->color);
    strbuf_add(b, "\n");
    if (paired) paired_explanation(b, r, has_baseline ? r->system_names[0] : "");
    strbuf_add(b, "-----------------\nMetric signatures\n-----------------\n");
    for (int m = 0; m < r->nmetrics; m++)
        strbuf_addf(b, " - %-10s %s\n", r->metric_names[m], r->signatures[m]);
    for (int i = 0; i < nrows * ncols; i++) {
        free(cells[i].lines[0]);
        free(cells[i].lines[1]);
    }
    for (int c = 0; c < ncols; c++) free(header[c].lines[0]);
    free(cells);
}

/* json.dumps(rows, indent=4): a list with one object per system. */
static void print_systems_json(StrBuf *b, const BleuSystemsReport *r) {
    strbuf_add(b, "[\n");
    for (int s = 0; s < r->nsystems; s++) {
        strbuf_add(b, "    {\n        \"system\": ");
        json_string(b, r->system_names[s], true);
        for (int m = 0; m < r->nmetrics; m++) {
            strbuf_add(b, ",\n        ");
            json_string(b, r->metric_names[m], true);
            strbuf_add(b, ": ");
            if (!r->results) {
                json_string(b, r->scores[m * r->nsystems + s], true);
                continue;
            }
            const BleuPairedResult *res = &r->results[m * r->nsystems + s];
            strbuf_add(b, "{\n            \"score\": ");
            json_number(b, res->score);
            strbuf_add(b, ",\n            \"p_value\": ");
            if (isnan(res->p_value)) strbuf_add(b, "null");
            else json_number(b, res->p_value);
            strbuf_add(b, ",\n            \"mean\": ");
            json_number(b, res->mean);
            strbuf_add(b, ",\n            \"ci\": ");
            json_number(b, res->ci);
            strbuf_add(b, "\n        }");
        }
        strbuf_addf(b, "\n    }%s\n", s + 1 < r->nsystems ? "," : "");
    }
    strbuf_add(b, "]\n");
}

void bleu_print_systems(FILE *out, const BleuSystemsReport *r, BleuFormat format) {
    StrBuf b = {0};
    if (format == BLEU_FORMAT_JSON) print_systems_json(&b, r);
    else print_table(&b, r);
    fputs(b.s, out);
    free(b.s);
}
