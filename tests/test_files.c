/* test_files.c: whole-file reading, line splitting and path joining in kernels (files.h,
 * paths.h): a missing file's message names the path, CRLF keeps its "\r", a last line without
 * "\n" counts, long lines and empty files. */
#include <errno.h>
#include <string.h>

#include "files.h"
#include "paths.h"
#include "status.h"
#include "test_files.h"
#include "test_util.h"

static void test_read(const char *dir) {
    const char *missing = test_path(dir, "no-such-file");
    size_t len = 7;
    char *bytes = file_read(missing, &len);
    EXPECT(!bytes && strstr(status_message(), missing) && strstr(status_message(), "cannot open"),
           "a missing file: [%s]", status_message());
    long n = 5;
    char **lines = file_read_lines(missing, &n);
    EXPECT(!lines && strstr(status_message(), missing), "lines of a missing file: [%s]",
           status_message());
    bytes = file_read(dir, &len);
    EXPECT(!bytes && strstr(status_message(), dir), "a directory: [%s]", status_message());

    const char *path = test_path(dir, "bin");
    test_write_file(path, "a\0b\n", 4);
    bytes = file_read(path, &len);
    EXPECT(bytes && len == 4 && !memcmp(bytes, "a\0b\n", 5), "binary bytes and a final NUL");
    free(bytes);

    path = test_path(dir, "empty");
    test_write_file(path, "", 0);
    bytes = file_read(path, &len);
    EXPECT(bytes && len == 0 && bytes[0] == '\0', "an empty file");
    free(bytes);
    lines = file_read_lines(path, &n);
    EXPECT(lines && n == 0, "an empty file has no lines (%ld)", n);
    file_free_lines(lines, n);
}

static void expect_lines(const char *dir, const char *text, size_t len, const char *const *want,
                         long nwant, const char *what) {
    const char *path = test_path(dir, "lines");
    test_write_file(path, text, len);
    long n = -1;
    char **lines = file_read_lines(path, &n);
    EXPECT(lines && n == nwant, "%s: %ld lines, want %ld", what, n, nwant);
    for (long i = 0; lines && i < n && i < nwant; i++)
        EXPECT(!strcmp(lines[i], want[i]), "%s: line %ld is [%s], want [%s]", what, i, lines[i],
               want[i]);
    if (lines) file_free_lines(lines, n);
}

static void test_lines(const char *dir) {
    const char *crlf[] = {"one\r", "two\r", ""};
    expect_lines(dir, "one\r\ntwo\r\n\n", 11, crlf, 3, "CRLF");
    const char *open_end[] = {"a", "", "last"};
    expect_lines(dir, "a\n\nlast", 7, open_end, 3, "no final newline");
    const char *nul[] = {"x", "after"};
    expect_lines(dir, "x\0y\nafter\n", 10, nul, 2, "a NUL inside a line");

    enum { LONG = 300000 };
    char *text = malloc(2 * LONG + 3);
    memset(text, 'a', LONG), text[LONG] = '\n';
    memset(text + LONG + 1, 'b', LONG), text[2 * LONG + 1] = '\n';
    char *a = strndup(text, LONG), *b = strndup(text + LONG + 1, LONG);
    const char *long_lines[] = {a, b};
    expect_lines(dir, text, 2 * LONG + 2, long_lines, 2, "two 300000-byte lines");
    free(a), free(b), free(text);
}

static void test_join(void) {
    char *p = path_join("dir/sub", "spm.model");
    EXPECT(!strcmp(p, "dir/sub/spm.model"), "path_join: %s", p);
    free(p);
}

int main(void) {
    char *dir = test_tempdir();
    test_read(dir);
    test_lines(dir);
    test_join();
    test_remove_tree(dir);
    free(dir);
    return test_finish();
}
