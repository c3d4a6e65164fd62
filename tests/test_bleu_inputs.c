/* test_bleu_inputs.c: assembling a scoring run's inputs (data/eval/bleu_inputs.h): reference
 * columns of one file (--num-refs), system columns of standard input with sacreBLEU's rstrip rules,
 * the messages naming the line of a ragged row, duplicate system names, the length check and the
 * names of the paired test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bleu_inputs.h"
#include "status.h"
#include "test_util.h"

/* A temporary file holding text; its path is written to path (at least 32 bytes). */
static bool write_temp(char *path, const char *text) {
    strcpy(path, "/tmp/test_bleu_inputs_XXXXXX");
    int fd = mkstemp(path);
    EXPECT(fd >= 0, "mkstemp failed");
    if (fd < 0) return false;
    size_t len = strlen(text);
    bool ok = write(fd, text, len) == (ssize_t)len;
    EXPECT(ok, "write failed");
    close(fd);
    return ok;
}

/* The lines of text as standard input would give them. */
static BleuLines stream_lines(const char *text) {
    BleuLines in = {0};
    FILE *f = fmemopen((void *)text, strlen(text), "rb");
    EXPECT(f && bleu_read_stream_lines(f, "<stdin>", &in) == 0, "reading a stream failed");
    if (f) fclose(f);
    return in;
}

static void test_ref_columns(void) {
    char path[64];
    if (!write_temp(path, "a\tb\nc\td\te\n")) return;
    const char *paths[] = {path};
    BleuRefs r;
    EXPECT(bleu_refs_read(&r, paths, 1) == 0 && bleu_refs_split_columns(&r, 2) == 0, "%s",
           status_message());
    EXPECT(r.nstreams == 2 && r.n == 2, "%d streams of %ld lines, want 2 of 2", r.nstreams, r.n);
    if (r.nstreams == 2 && r.n == 2) {
        EXPECT(!strcmp(r.lines[0][0], "a") && !strcmp(r.lines[1][0], "b") &&
                   !strcmp(r.lines[0][1], "c") && !strcmp(r.lines[1][1], "d\te"),
               "columns: '%s' '%s' / '%s' '%s' (the last column keeps further tabs)",
               r.lines[0][0], r.lines[1][0], r.lines[0][1], r.lines[1][1]);
        EXPECT(!strcmp(r.names[1], path), "stream 2 is named '%s'", r.names[1]);
    }
    bleu_refs_free(&r);

    /* A row with too few fields is named by its line. */
    EXPECT(bleu_refs_read(&r, paths, 1) == 0, "%s", status_message());
    EXPECT(bleu_refs_split_columns(&r, 3) < 0 && strstr(status_message(), path) &&
               strstr(status_message(), "line 1: expected 3 fields, but found 2."),
           "too few reference columns: '%s'", status_message());
    bleu_refs_free(&r);
    unlink(path);

    EXPECT(bleu_refs_read(&r, paths, 1) < 0 && strstr(status_message(), path),
           "a missing reference file must be named: '%s'", status_message());
    bleu_refs_free(&r);
}

static void test_system_columns(void) {
    /* The first line is rstripped as a whole, later lines and each of their fields too. */
    BleuLines in = stream_lines("a \t b \nc \t d \t\r\ne\tf");
    BleuSystems s = {0};
    EXPECT(bleu_systems_from_columns(&s, &in, "<stdin>") == 0, "%s", status_message());
    bleu_lines_free(&in);
    EXPECT(s.n == 2 && s.lines[0].n == 3 && s.lines[1].n == 3, "%d systems", s.n);
    if (s.n == 2 && s.lines[0].n == 3) {
        const char *want[2][3] = {{"a ", "c", "e"}, {" b", " d", "f"}};
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < 3; i++)
                EXPECT(!strcmp(s.lines[k].lines[i], want[k][i]), "system %d line %d: '%s', want '%s'",
                       k + 1, i + 1, s.lines[k].lines[i], want[k][i]);
        EXPECT(!strcmp(s.names[1], "System 2") && !strcmp(s.files[1], "<stdin>"),
               "column 2 is '%s' from '%s'", s.names[1], s.files[1]);
        bleu_systems_name_paired(&s);
        EXPECT(!strcmp(s.names[0], "Baseline") && !strcmp(s.names[1], "System 1"),
               "paired names '%s', '%s'", s.names[0], s.names[1]);
    }
    bleu_systems_free(&s);

    /* A ragged row: the message names its line and both field counts. */
    in = stream_lines("a\tb\nc\td\ne\nf\tg\n");
    EXPECT(bleu_systems_from_columns(&s, &in, "<stdin>") < 0 &&
               strstr(status_message(), "(line 3 has 1, the first line 2)"),
           "ragged row: '%s'", status_message());
    bleu_lines_free(&in);
    bleu_systems_free(&s);

    /* An empty stream is one system with one empty line. */
    in = stream_lines("");
    EXPECT(bleu_systems_from_columns(&s, &in, "<stdin>") == 0 && s.n == 1 &&
               s.lines[0].n == 1 && !strcmp(s.lines[0].lines[0], ""),
           "empty stream: %d systems", s.n);
    bleu_lines_free(&in);
    bleu_systems_free(&s);
}

static void test_system_files(void) {
    char hyp[64], ref[64];
    if (!write_temp(hyp, "one\ntwo\n") || !write_temp(ref, "eins\nzwei\ndrei\n")) return;
    BleuSystems s = {0};
    EXPECT(bleu_systems_add_file(&s, hyp) == 0, "%s", status_message());
    EXPECT(bleu_systems_add_file(&s, hyp) < 0 && strstr(status_message(), hyp) &&
               strstr(status_message(), "already used to name a system"),
           "a repeated system: '%s'", status_message());
    EXPECT(bleu_systems_add_file(&s, "/nonexistent/hyp") < 0 &&
               strstr(status_message(), "/nonexistent/hyp"),
           "a missing system file must be named: '%s'", status_message());
    EXPECT(s.n == 1 && s.lines[0].n == 2 && !strcmp(s.names[0], hyp), "%d systems", s.n);

    const char *paths[] = {ref};
    BleuRefs r;
    EXPECT(bleu_refs_read(&r, paths, 1) == 0, "%s", status_message());
    EXPECT(bleu_systems_check(&s, &r) < 0 && strstr(status_message(), "different lengths") &&
               strstr(status_message(), "has 2 lines") && strstr(status_message(), "has 3."),
           "length mismatch: '%s'", status_message());
    bleu_refs_free(&r);
    paths[0] = hyp;
    EXPECT(bleu_refs_read(&r, paths, 1) == 0 && bleu_systems_check(&s, &r) == 0, "%s",
           status_message());
    bleu_refs_free(&r);

    bleu_systems_name_paired(&s);
    char want[128];
    snprintf(want, sizeof want, "Baseline: %s", hyp);
    EXPECT(!strcmp(s.names[0], want), "paired baseline '%s', want '%s'", s.names[0], want);
    bleu_systems_free(&s);
    unlink(hyp);
    unlink(ref);
}

int main(void) {
    test_ref_columns();
    test_system_columns();
    test_system_files();
    return test_finish();
}
