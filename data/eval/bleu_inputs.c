/* bleu_inputs.c: assembling the reference streams and the systems of a scoring run from files,
 * tab-separated reference columns (--num-refs) and tab-separated system columns on standard
 * input, with sacreBLEU's checks and messages, and naming the systems as its reports do. */
#include "bleu_inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "status.h"

/* Splits line in place at its first max - 1 tabs into fields[0..max) (the last field keeps any
 * further tabs); returns how many fields the line has when split at every tab. Fields past that
 * count are left unset. */
static int split_tabs(char *line, char **fields, int max) {
    int total = 1;
    for (const char *p = line; *p; p++) total += *p == '\t';
    int k = 0;
    fields[k++] = line;
    for (char *p = line; k < max && (p = strchr(p, '\t'));) {
        *p++ = '\0';
        fields[k++] = p;
    }
    return total;
}

int bleu_refs_read(BleuRefs *r, const char *const *paths, int npaths) {
    memset(r, 0, sizeof *r);
    CHECK(npaths >= 1, "need at least one reference file");
    r->files = xcalloc((size_t)npaths, sizeof *r->files);
    for (; r->nfiles < npaths; r->nfiles++)
        if (bleu_read_lines(paths[r->nfiles], &r->files[r->nfiles]) < 0) return -1;
    r->nstreams = npaths;
    r->lines = xcalloc((size_t)npaths, sizeof *r->lines);
    r->names = xcalloc((size_t)npaths, sizeof *r->names);
    for (int f = 0; f < npaths; f++) {
        r->lines[f] = (const char **)r->files[f].lines;
        r->names[f] = paths[f];
    }
    r->n = r->files[0].n;
    return 0;
}

int bleu_refs_split_columns(BleuRefs *r, int num_refs) {
    CHECK(r->nfiles == 1 && r->nstreams == 1 && num_refs >= 1,
          "reference columns come from exactly one file");
    const char *name = r->names[0];
    BleuLines *src = &r->files[0];
    free(r->lines);
    free(r->names);
    r->nstreams = num_refs;
    r->columns = true;
    r->lines = xcalloc((size_t)num_refs, sizeof *r->lines);
    r->names = xcalloc((size_t)num_refs, sizeof *r->names);
    for (int k = 0; k < num_refs; k++) {
        r->lines[k] = xcalloc((size_t)(src->n ? src->n : 1), sizeof **r->lines);
        r->names[k] = name;
    }
    char **fields = xmalloc((size_t)num_refs * sizeof *fields); /* (num_refs) into the line */
    for (long i = 0; i < src->n; i++) {
        int found = split_tabs(src->lines[i], fields, num_refs);
        if (found < num_refs) {
            free(fields);
            return status_fail("%s: line %ld: expected %d fields, but found %d.", name, i + 1,
                               num_refs, found);
        }
        for (int k = 0; k < num_refs; k++) r->lines[k][i] = fields[k];
    }
    free(fields);
    return 0;
}

void bleu_refs_free(BleuRefs *r) {
    if (r->columns)
        for (int k = 0; k < r->nstreams; k++) free(r->lines[k]);
    for (int f = 0; f < r->nfiles; f++) bleu_lines_free(&r->files[f]);
    free(r->files);
    free(r->lines);
    free(r->names);
    memset(r, 0, sizeof *r);
}

/* Makes room for system s->n (zeroed). */
static void systems_grow(BleuSystems *s) {
    size_t n = (size_t)s->n + 1;
    s->names = xrealloc(s->names, n * sizeof *s->names);
    s->files = xrealloc(s->files, n * sizeof *s->files);
    s->lines = xrealloc(s->lines, n * sizeof *s->lines);
    s->names[s->n] = NULL;
    s->files[s->n] = NULL;
    s->lines[s->n] = (BleuLines){0};
}

int bleu_systems_add_file(BleuSystems *s, const char *path) {
    for (int k = 0; k < s->n; k++)
        if (!strcmp(s->names[k], path))
            return status_fail("'%s' already used to name a system.", path);
    systems_grow(s);
    if (bleu_read_lines(path, &s->lines[s->n]) < 0) return -1;
    s->names[s->n] = xstrdup(path);
    s->files[s->n++] = path;
    return 0;
}

int bleu_systems_from_columns(BleuSystems *s, BleuLines *in, const char *name) {
    char empty[1] = "";
    char *only = empty; /* readline() of an empty stream is one empty line */
    char **lines = in->n ? in->lines : &only;
    long nlines = in->n ? in->n : 1;
    /* The first line fixes the number of systems; its fields are not rstripped, later ones are. */
    bleu_rstrip(lines[0]);
    int n = 1;
    for (const char *p = lines[0]; *p; p++) n += *p == '\t';
    s->columns = true;
    for (int k = 0; k < n; k++) {
        systems_grow(s);
        char label[32];
        snprintf(label, sizeof label, "System %d", k + 1);
        s->names[s->n] = xstrdup(label);
        s->files[s->n] = name;
        s->lines[s->n++].lines = xcalloc((size_t)nlines, sizeof(char *));
    }
    char **fields = xmalloc((size_t)n * sizeof *fields); /* (n) into the line */
    for (long i = 0; i < nlines; i++) {
        char *line = i ? bleu_rstrip(lines[i]) : lines[i];
        int found = split_tabs(line, fields, n);
        if (found != n) {
            free(fields);
            return status_fail("the number of tab-delimited fields in the input stream differ "
                               "across lines (line %ld has %d, the first line %d).",
                               i + 1, found, n);
        }
        for (int k = 0; k < n; k++) {
            char *copy = xstrdup(fields[k]);
            s->lines[k].lines[i] = i ? bleu_rstrip(copy) : copy;
            s->lines[k].n = i + 1;
        }
    }
    free(fields);
    return 0;
}

void bleu_systems_name_paired(BleuSystems *s) {
    if (!s->columns) {
        char *named = xmalloc(strlen(s->names[0]) + 11);
        sprintf(named, "Baseline: %s", s->names[0]);
        free(s->names[0]);
        s->names[0] = named;
        return;
    }
    for (int k = 0; k < s->n; k++) {
        char name[32];
        if (k) snprintf(name, sizeof name, "System %d", k);
        else snprintf(name, sizeof name, "Baseline");
        free(s->names[k]);
        s->names[k] = xstrdup(name);
    }
}

int bleu_systems_check(const BleuSystems *s, const BleuRefs *r) {
    for (int k = 0; k < s->n; k++) {
        if (s->lines[k].n == 0) return status_fail("%s contains no sentence.", s->files[k]);
        for (int j = 0; j < r->nstreams; j++)
            if (s->lines[k].n != r->n)
                return status_fail("System and reference streams have different lengths: %s has "
                                   "%ld lines, %s has %ld.",
                                   s->files[k], s->lines[k].n, r->names[j], r->n);
    }
    return 0;
}

void bleu_systems_free(BleuSystems *s) {
    for (int k = 0; k < s->n; k++) {
        bleu_lines_free(&s->lines[k]);
        free(s->names[k]);
    }
    free(s->names);
    free(s->files);
    free(s->lines);
    memset(s, 0, sizeof *s);
}
