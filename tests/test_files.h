/* test_files.h: file helpers for the data tests: a private temp directory (removed at the end),
 * writing plain and gzip files, reading a file (or a count in a prepare manifest) back, and
 * running a function in a child process to check a fatal error's exit status and message.
 * Under AddressSanitizer, the uninstrumented SentencePiece library spends most of its time in
 * unwinding a 30-frame stack for every malloc; the data tests ask for 5 frames by default
 * (ASAN_OPTIONS still overrides), which makes them about 2.5x faster. */
#ifndef NMT_TEST_FILES_H
#define NMT_TEST_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

__attribute__((used)) const char *__asan_default_options(void) { return "malloc_context_size=5"; }

static inline char *test_tempdir(void) {
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/nmt_test_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpl)) {
        perror("mkdtemp");
        exit(EXIT_FAILURE);
    }
    return strdup(tmpl);
}

/* "dir/name", valid until 8 more calls (so a few can be used in one expression). */
static inline const char *test_path(const char *dir, const char *name) {
    static char *ring[8];
    static int next;
    char **slot = &ring[next++ % 8];
    size_t n = strlen(dir) + strlen(name) + 2;
    free(*slot);
    *slot = malloc(n);
    snprintf(*slot, n, "%s/%s", dir, name);
    return *slot;
}

static inline void test_write_file(const char *path, const void *bytes, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(EXIT_FAILURE);
    }
}

static inline void test_write_text(const char *path, const char *text) {
    test_write_file(path, text, strlen(text));
}

static inline void test_write_gz(const char *path, const void *bytes, size_t len) {
    gzFile gz = gzopen(path, "wb");
    if (!gz || gzwrite(gz, bytes, (unsigned)len) != (int)len || gzclose(gz) != Z_OK) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(EXIT_FAILURE);
    }
}

/* The whole file, NUL-terminated (*len without the NUL), or NULL if it cannot be read. */
static inline char *test_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *bytes = malloc((size_t)n + 1);
    size_t got = fread(bytes, 1, (size_t)n, f);
    fclose(f);
    bytes[got] = '\0';
    if (len) *len = got;
    return bytes;
}

/* The integer after "key": inside the object "split": { ... } of a prepare manifest, or -1. */
static inline long test_manifest_count(const char *manifest, const char *split, const char *key) {
    char anchor[64], field[64];
    snprintf(anchor, sizeof anchor, "\"%s\": {", split);
    snprintf(field, sizeof field, "\"%s\": ", key);
    const char *obj = manifest ? strstr(manifest, anchor) : NULL;
    const char *v = obj ? strstr(obj, field) : NULL;
    return v ? strtol(v + strlen(field), NULL, 10) : -1;
}

/* The inode of path (0 if it does not exist): a rewritten (renamed-over) file gets a new one. */
static inline ino_t test_inode(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* Removes dir and everything below it (no symbolic links are followed). */
static inline void test_remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            size_t n = strlen(dir) + strlen(e->d_name) + 2;
            char *path = malloc(n);
            snprintf(path, n, "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                test_remove_tree(path);
            else
                remove(path);
            free(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Runs fn(arg) in a child process with its stderr captured into err (NUL-terminated) and returns
 * the child's exit status (-1 if it did not exit normally). fn returning means exit status 0.
 * Call it before the parent has run an OpenMP parallel region (libgomp is not fork-safe). */
static inline int test_run_child(void (*fn)(void *), void *arg, char *err, size_t err_size) {
    int pipe_fd[2];
    if (pipe(pipe_fd) != 0) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(pipe_fd[0]);
        dup2(pipe_fd[1], STDERR_FILENO);
        if (!freopen("/dev/null", "w", stdout)) _exit(99);
        fn(arg);
        exit(EXIT_SUCCESS);
    }
    close(pipe_fd[1]);
    size_t used = 0;
    ssize_t n;
    char sink[4096];
    while ((n = read(pipe_fd[0], used + 1 < err_size ? err + used : sink,
                     used + 1 < err_size ? err_size - 1 - used : sizeof sink)) > 0)
        if (used + 1 < err_size) used += (size_t)n;
    err[used] = '\0';
    close(pipe_fd[0]);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif
