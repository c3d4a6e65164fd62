/* replay_main.c: the main() of the fuzz targets outside the fuzz build. It runs the target's
 * LLVMFuzzerTestOneInput once on every file of the corpus directories (or single files) given,
 * in name order, as libFuzzer would replay them; a crash or sanitizer report fails the test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "files.h"
#include "paths.h"
#include "status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs the target on the file at path; exits on a file that cannot be read. */
static void replay(const char *path) {
    size_t len;
    char *data = file_read(path, &len);
    if (!data) FATAL("%s", status_message());
    LLVMFuzzerTestOneInput((const uint8_t *)data, len);
    free(data);
}

int main(int argc, char **argv) {
    if (argc < 2) FATAL("usage: %s CORPUS_DIR_OR_FILE...", argv[0]);
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    long total = 0;
    for (int a = 1; a < argc; a++) {
        struct stat st;
        if (stat(argv[a], &st) != 0) FATAL("cannot stat '%s'", argv[a]);
        if (!S_ISDIR(st.st_mode)) {
            replay(argv[a]);
            total++;
            continue;
        }
        DIR *dir = opendir(argv[a]);
        if (!dir) FATAL("cannot open directory '%s'", argv[a]);
        long n = 0, cap = 64;
        char **names = xmalloc(sizeof *names * (size_t)cap);
        for (struct dirent *e; (e = readdir(dir));) {
            if (e->d_name[0] == '.') continue;
            if (n == cap) names = xrealloc(names, sizeof *names * (size_t)(cap *= 2));
            names[n++] = xstrdup(e->d_name);
        }
        closedir(dir);
        qsort(names, (size_t)n, sizeof *names, by_name);
        for (long i = 0; i < n; i++) {
            char *path = path_join(argv[a], names[i]);
            replay(path);
            free(path), free(names[i]);
        }
        free(names);
        if (n == 0) FATAL("no inputs in '%s'", argv[a]);
        total += n;
    }
    printf("replayed %ld inputs\n", total);
    return 0;
}
