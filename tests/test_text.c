/* test_text.c: the corpus readers (plain, gzip, SGM), entity unescaping, truncated gzip, the
 * parallel iterator and its mismatch error, on files written here into a temp directory. */
#include <stdint.h>
#include <string.h>

#include "status.h"
#include "test_files.h"
#include "test_util.h"
#include "text.h"

/* Reads every record of path; checks them against want[0 .. n) and their lines against lines. */
static void expect_records(const char *path, const char *const *want, const long *lines, int n) {
    TextReader r;
    EXPECT(text_open(&r, path) == 0, "open %s: %s", path, status_message());
    char *rec;
    size_t len;
    int i = 0, st;
    while ((st = text_next(&r, &rec, &len)) > 0) {
        if (i < n) {
            EXPECT(len == strlen(want[i]) && !memcmp(rec, want[i], len),
                   "%s record %d: got [%.*s] want [%s]", path, i, (int)len, rec, want[i]);
            EXPECT(rec[len] == '\0', "%s record %d is not NUL-terminated", path, i);
            EXPECT(r.record_line == lines[i], "%s record %d: line %ld, want %ld", path, i,
                   r.record_line, lines[i]);
        }
        i++;
    }
    EXPECT(st == 0, "%s: read error: %s", path, status_message());
    EXPECT(i == n, "%s: %d records, want %d", path, i, n);
    text_close(&r);
}

static void test_plain_and_gzip(const char *dir) {
    // A byte order mark, CRLF, an empty line, a UTF-8 line, a NUL byte, no final newline.
    static const char text[] =
        "\xEF\xBB\xBF"
        "Hello world\r\n\nÜber Straße\nnul\0byte\nlast";
    const char *want[] = {"Hello world\r", "", "Über Straße", "nul", "last"};
    const long lines[] = {1, 2, 3, 4, 5};
    test_write_file(test_path(dir, "a.txt"), text, sizeof text - 1);
    test_write_gz(test_path(dir, "a.txt.gz"), text, sizeof text - 1);
    test_write_gz(test_path(dir, "gz-without-suffix"), text, sizeof text - 1);
    // the NUL line: check length and bytes separately (strlen stops at the NUL)
    for (int f = 0; f < 3; f++) {
        const char *name = f == 0 ? "a.txt" : f == 1 ? "a.txt.gz" : "gz-without-suffix";
        TextReader r;
        EXPECT(text_open(&r, test_path(dir, name)) == 0, "open %s", name);
        char *rec;
        size_t len;
        int i = 0;
        while (text_next(&r, &rec, &len) > 0) {
            if (i == 3)
                EXPECT(len == 8 && !memcmp(rec, "nul\0byte", 8), "%s: NUL line has %zu bytes", name,
                       len);
            else
                EXPECT(len == strlen(want[i]) && !memcmp(rec, want[i], len),
                       "%s record %d: [%.*s] want [%s]", name, i, (int)len, rec, want[i]);
            EXPECT(r.record_line == lines[i], "%s: record %d on line %ld", name, i, r.record_line);
            i++;
        }
        EXPECT(i == 5, "%s: %d records, want 5", name, i);
        text_close(&r);
    }
}

static void test_long_lines(const char *dir) {
    // Lines longer than the reader's 256 KiB chunk must come back whole.
    size_t n = 600000;
    char *text = malloc(2 * n + 2);
    for (size_t i = 0; i < n; i++) text[i] = (char)('a' + i % 26);
    text[n] = '\n';
    for (size_t i = 0; i < n; i++) text[n + 1 + i] = (char)('A' + i % 26);
    text[2 * n + 1] = '\n';
    test_write_gz(test_path(dir, "long.gz"), text, 2 * n + 2);
    TextReader r;
    text_open(&r, test_path(dir, "long.gz"));
    char *rec;
    size_t len;
    for (int i = 0; i < 2; i++) {
        EXPECT(text_next(&r, &rec, &len) == 1, "long line %d missing", i);
        EXPECT(len == n && !memcmp(rec, text + i * (n + 1), n), "long line %d differs (len %zu)", i,
               len);
    }
    EXPECT(text_next(&r, &rec, &len) == 0, "more than two long lines");
    text_close(&r);
    free(text);
}

static void test_sgm(const char *dir) {
    const char *sgm =
        "<srcset setid=\"newstest\" srclang=\"any\">\n"
        "<doc sysid=\"ref\" docid=\"d1\" genre=\"news\" origlang=\"en\">\n"
        "<p>\n"
        "<seg id=\"1\">Fish &amp; Chips &lt;b&gt; &quot;quoted&quot; it&apos;s</seg>\n"
        "<seg id=\"2\">&#65;&#x42;&#X43; &#x1F600; caf&#233;</seg>\n"
        "<seg id=\"3\">AT&T &bogus; &#xD800; &#0; &# &#x110000; &amp</seg>\n"
        "<seg id=\"4\"></seg>\n"
        "<seg id=\"5\">spans\ntwo lines</seg>\n"
        "<seg id=\"6\">one</seg><seg id=\"7\">two</seg>\n"
        "<segment>not a seg</segment>\n"
        "</p>\n</doc>\n</srcset>\n";
    const char *want[] = {"Fish & Chips <b> \"quoted\" it's",
                          "ABC \xF0\x9F\x98\x80 caf\xC3\xA9",
                          "AT&T &bogus; &#xD800; &#0; &# &#x110000; &amp",
                          "",
                          "spans\ntwo lines",
                          "one",
                          "two"};
    const long lines[] = {4, 5, 6, 7, 8, 10, 10};
    test_write_text(test_path(dir, "t.sgm"), sgm);
    expect_records(test_path(dir, "t.sgm"), want, lines, 7);
    test_write_gz(test_path(dir, "t.sgm.gz"), sgm, strlen(sgm));
    expect_records(test_path(dir, "t.sgm.gz"), want, lines, 7);

    // The same bytes under a plain name are lines, not segments.
    test_write_text(test_path(dir, "t.txt"), sgm);
    TextReader r;
    text_open(&r, test_path(dir, "t.txt"));
    char *rec;
    size_t len;
    long count = 0;
    while (text_next(&r, &rec, &len) > 0) count++;
    EXPECT(count == 14, "plain reading of the SGM file: %ld lines, want 14", count);
    text_close(&r);

    test_write_text(test_path(dir, "open.sgm"),
                    "<seg id=\"1\">ok</seg>\n\n<seg id=\"2\">never\nclosed\n");
    text_open(&r, test_path(dir, "open.sgm"));
    EXPECT(text_next(&r, &rec, &len) == 1 && !strcmp(rec, "ok"), "first seg of open.sgm");
    EXPECT(text_next(&r, &rec, &len) == -1, "an unclosed <seg> must be an error");
    EXPECT(strstr(status_message(), "open.sgm':3:") && strstr(status_message(), "</seg>"),
           "unclosed seg message should name file:line 3: %s", status_message());
    text_close(&r);
}

static void test_truncated_gzip(const char *dir) {
    // Incompressible-ish text so that the cut lands inside the deflate stream.
    size_t n = 1 << 20, used = 0;
    char *text = malloc(n);
    uint64_t x = 88172645463325252ull;
    while (used + 40 < n) {
        for (int i = 0; i < 30; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            text[used++] = (char)('a' + x % 26);
        }
        text[used++] = '\n';
    }
    test_write_gz(test_path(dir, "full.gz"), text, used);
    size_t gz_len = 0;
    char *gz = test_read_file(test_path(dir, "full.gz"), &gz_len);
    test_write_file(test_path(dir, "cut.gz"), gz, gz_len / 2);
    TextReader r;
    EXPECT(text_open(&r, test_path(dir, "cut.gz")) == 0, "open cut.gz");
    char *rec;
    size_t len;
    long lines = 0;
    int st;
    while ((st = text_next(&r, &rec, &len)) > 0) lines++;
    EXPECT(st == -1, "a truncated gzip file must end in an error, not a clean end (%ld lines)",
           lines);
    EXPECT(lines > 1000, "the readable part should come first (%ld lines)", lines);
    EXPECT(strstr(status_message(), "cut.gz") && strstr(status_message(), "truncated"),
           "message should name the file and say truncated: %s", status_message());
    text_close(&r);

    // A corrupted byte inside the stream: also an error (CRC or data error), never silent.
    gz[gz_len / 2] ^= 0x55;
    test_write_file(test_path(dir, "bad.gz"), gz, gz_len);
    text_open(&r, test_path(dir, "bad.gz"));
    while ((st = text_next(&r, &rec, &len)) > 0) {
    }
    EXPECT(st == -1 && strstr(status_message(), "bad.gz"), "corrupt gzip: st %d, %s", st,
           status_message());
    text_close(&r);
    free(gz);
    free(text);

    EXPECT(text_open(&r, dir) == -1 && strstr(status_message(), "directory"),
           "opening a directory: %s", status_message());
    EXPECT(text_open(&r, test_path(dir, "missing.txt")) == -1 &&
               strstr(status_message(), "missing.txt") &&
               strstr(status_message(), "No such file"),
           "opening a missing file: %s", status_message());
}

static void test_parallel(const char *dir) {
    test_write_text(test_path(dir, "c1.en"), "one\ntwo\n");
    test_write_gz(test_path(dir, "c1.de.gz"), "eins\nzwei\n", 10);
    test_write_text(test_path(dir, "c2.en.sgm"), "<seg id=\"1\">three</seg>\n");
    test_write_text(test_path(dir, "c2.de"), "drei\n");
    CorpusPair corpora[2] = {{test_path(dir, "c1.en"), test_path(dir, "c1.de.gz")},
                             {test_path(dir, "c2.en.sgm"), test_path(dir, "c2.de")}};
    // test_path's ring holds 8 entries: copy the paths before more calls.
    char paths[4][4096];
    for (int i = 0; i < 2; i++) {
        strcpy(paths[2 * i], corpora[i].src);
        strcpy(paths[2 * i + 1], corpora[i].tgt);
        corpora[i] = (CorpusPair){paths[2 * i], paths[2 * i + 1]};
    }
    const char *want[3][2] = {{"one", "eins"}, {"two", "zwei"}, {"three", "drei"}};
    const int want_corpus[3] = {0, 0, 1};
    ParallelReader p;
    EXPECT(parallel_open(&p, corpora, 2) == 0, "parallel_open: %s", status_message());
    char *src, *tgt;
    size_t ns, nt;
    int i = 0, st;
    while ((st = parallel_next(&p, &src, &ns, &tgt, &nt)) > 0) {
        EXPECT(i < 3 && !strcmp(src, want[i][0]) && !strcmp(tgt, want[i][1]) &&
                   p.corpus == want_corpus[i],
               "pair %d: (%s, %s) in corpus %d", i, src, tgt, p.corpus);
        i++;
    }
    EXPECT(st == 0 && i == 3 && p.pairs == 3, "parallel: st %d, %d pairs", st, i);
    parallel_close(&p);

    // Corpus 2 has 3 source lines but 5 target lines: an error naming both files and counts.
    test_write_text(test_path(dir, "m.en"), "a\nb\nc\n");
    test_write_gz(test_path(dir, "m.de.gz"), "A\nB\nC\nD\nE\n", 10);
    strcpy(paths[2], test_path(dir, "m.en"));
    strcpy(paths[3], test_path(dir, "m.de.gz"));
    EXPECT(parallel_open(&p, corpora, 2) == 0, "parallel_open");
    i = 0;
    while ((st = parallel_next(&p, &src, &ns, &tgt, &nt)) > 0) i++;
    const char *msg = status_message();
    EXPECT(st == -1 && i == 5, "mismatch: st %d after %d pairs, want -1 after 5", st, i);
    EXPECT(strstr(msg, "m.en' has 3 lines") && strstr(msg, "m.de.gz' has 5 lines"),
           "mismatch message should name both files and counts: %s", msg);
    parallel_close(&p);

    // The other way round: the target side runs out first.
    strcpy(paths[2], test_path(dir, "m.de.gz"));
    strcpy(paths[3], test_path(dir, "m.en"));
    parallel_open(&p, corpora, 2);
    while ((st = parallel_next(&p, &src, &ns, &tgt, &nt)) > 0) {
    }
    EXPECT(st == -1 && strstr(status_message(), "m.de.gz' has 5 lines") &&
               strstr(status_message(), "m.en' has 3 lines"),
           "reverse mismatch: %s", status_message());
    parallel_close(&p);

    strcpy(paths[2], test_path(dir, "nope.en"));
    parallel_open(&p, corpora, 2);
    while ((st = parallel_next(&p, &src, &ns, &tgt, &nt)) > 0) {
    }
    EXPECT(st == -1 && strstr(status_message(), "nope.en"), "missing second corpus: %s",
           status_message());
    parallel_close(&p);
}

int main(void) {
    char *dir = test_tempdir();
    test_plain_and_gzip(dir);
    test_long_lines(dir);
    test_sgm(dir);
    test_truncated_gzip(dir);
    test_parallel(dir);
    test_remove_tree(dir);
    free(dir);
    return test_finish();
}
