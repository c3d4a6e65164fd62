/* test_atomic.c: atomic files (kernels/atomic.h): a committed file holds exactly what was
 * written and no temporary is left; the recoverable form fails with a message naming the path
 * and errno set, leaving no temporary file, where the directory cannot take the file; an abort
 * keeps the old file. A process that ends with temporaries open (a fatal error, SIGTERM, SIGINT,
 * a file size limit) removes them and ends as it would have otherwise; an ignored signal stays
 * ignored; atomic_remove_stale removes the temporaries of dead processes only. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check.h"

#include "atomic.h"
#include "status.h"
#include "test_files.h"
#include "test_util.h"

/* Entries of dir other than . and .. */
static int entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void test_commit(const char *dir) {
    const char *path = test_path(dir, "out.bin");
    EXPECT(atomic_try_write_file(path, "hello", 5) == 0, "write: %s", status_message());
    size_t len = 0;
    char *back = test_read_file(path, &len);
    EXPECT(back && len == 5 && !memcmp(back, "hello", 5), "the file holds what was written");
    free(back);
    EXPECT(entries(dir) == 1, "one file and no temporary: %d entries", entries(dir));

    AtomicFile a;
    EXPECT(atomic_try_open(&a, path) == 0, "open: %s", status_message());
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    EXPECT(a.tmp_path && !strcmp(a.tmp_path, tmp) && access(tmp, F_OK) == 0,
           "the temporary is <path>.tmp.<pid>");
    fprintf(a.f, "%s", "replaced");
    atomic_abort(&a);
    back = test_read_file(path, &len);
    EXPECT(back && len == 5 && access(tmp, F_OK) != 0, "abort keeps the old file, drops the temp");
    free(back);

    EXPECT(atomic_try_open(&a, path) == 0, "open: %s", status_message());
    fprintf(a.f, "%s", "replaced");
    EXPECT(atomic_try_commit(&a) == 0, "commit: %s", status_message());
    back = test_read_file(path, &len);
    EXPECT(back && len == 8 && !memcmp(back, "replaced", 8), "commit replaces the file");
    free(back);
    EXPECT(entries(dir) == 1, "still no temporary: %d entries", entries(dir));
}

static void test_unwritable(const char *dir) {
    /* A directory path that runs through a plain file: no user (root included) can create it. */
    const char *plain = test_path(dir, "plain");
    test_write_text(plain, "x");
    const char *under = test_path(plain, "out.bin");
    int before = entries(dir);
    errno = 0;
    EXPECT(atomic_try_write_file(under, "data", 4) == -1, "writing under a plain file failed");
    EXPECT(errno == ENOTDIR, "errno is ENOTDIR, got %d", errno);
    EXPECT(strstr(status_message(), under) != NULL, "the message names the path: [%s]",
           status_message());
    EXPECT(entries(dir) == before, "no temporary file left (%d entries, was %d)", entries(dir),
           before);

    const char *missing = test_path(dir, "missing-dir/out.bin");
    EXPECT(atomic_try_write_file(missing, "data", 4) == -1 && errno == ENOENT,
           "a missing directory fails with ENOENT (errno %d)", errno);
    EXPECT(entries(dir) == before, "nothing was created (%d entries)", entries(dir));
}

/* How a child ends that opens two atomic files in dir, writes 64 KB to one and then does `end`. */
enum End { END_FATAL, END_SIGTERM, END_SIGINT, END_FILE_LIMIT, END_IGNORED_SIGTERM };

static int child_status(const char *dir, enum End end) {
    fflush(stdout), fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(99);
        if (end == END_IGNORED_SIGTERM) signal(SIGTERM, SIG_IGN);
        if (end == END_FILE_LIMIT) setrlimit(RLIMIT_FSIZE, &(struct rlimit){8192, 8192});
        AtomicFile a, b;
        atomic_open(&a, test_path(dir, "a.out"));
        atomic_open(&b, test_path(dir, "b.out"));
        static char block[65536];
        atomic_write(&a, block, sizeof block);
        atomic_commit(&a);
        if (end == END_FATAL) FATAL("failing with %s open", b.tmp_path);
        raise(end == END_SIGINT ? SIGINT : SIGTERM);
        exit(0);  // only an ignored SIGTERM gets here
    }
    int status;
    waitpid(pid, &status, 0);
    return status;
}

static void test_cleanup_at_the_end(const char *dir) {
    int status = child_status(dir, END_FATAL);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 1, "a fatal error exits 1 (status %d)",
           status);
    EXPECT(entries(dir) == 1 && access(test_path(dir, "a.out"), F_OK) == 0,
           "a fatal error leaves the committed file and no temporary: %d entries", entries(dir));
    const struct { enum End end; int sig; const char *what; } signals[] = {
        {END_SIGTERM, SIGTERM, "SIGTERM"},
        {END_SIGINT, SIGINT, "SIGINT"},
        {END_FILE_LIMIT, SIGXFSZ, "a file size limit (SIGXFSZ)"},
    };
    for (size_t i = 0; i < sizeof signals / sizeof *signals; i++) {
        unlink(test_path(dir, "a.out"));
        status = child_status(dir, signals[i].end);
        EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == signals[i].sig,
               "%s still ends the process by that signal (status %d)", signals[i].what, status);
        int want = signals[i].end == END_FILE_LIMIT ? 0 : 1;  // a.out is 64 KB, over the limit
        EXPECT(entries(dir) == want, "%s leaves no temporary: %d entries", signals[i].what,
               entries(dir));
    }
    unlink(test_path(dir, "a.out"));
    status = child_status(dir, END_IGNORED_SIGTERM);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0 && entries(dir) == 1,
           "an ignored SIGTERM stays ignored, and exit removes the temporary (%d entries)",
           entries(dir));
    unlink(test_path(dir, "a.out"));
}

static void test_remove_stale(const char *dir) {
    fflush(stdout), fflush(stderr);
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, NULL, 0);
    pid_t live = fork();
    if (live == 0) {
        pause();
        _exit(0);
    }
    char name[64];
    const char *keep[] = {"a.tmp.", "b.tmp.x1", "c.tmp.", "plain", "d.tmp.12abc"};
    snprintf(name, sizeof name, "x.tmp.%ld", (long)dead);
    test_write_text(test_path(dir, name), "partial");
    snprintf(name, sizeof name, "checkpoint.u6.tmp.%ld", (long)dead);
    test_write_text(test_path(dir, name), "partial");
    snprintf(name, sizeof name, "live.tmp.%ld", (long)live);
    test_write_text(test_path(dir, name), "partial");
    snprintf(name, sizeof name, "mine.tmp.%ld", (long)getpid());
    test_write_text(test_path(dir, name), "partial");
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
        test_write_text(test_path(dir, keep[i]), "other");
    int before = entries(dir);
    EXPECT(atomic_remove_stale(dir, "[test]") == 2 && entries(dir) == before - 2,
           "the two temporaries of the dead process go, %d entries of %d stay", entries(dir),
           before);
    snprintf(name, sizeof name, "live.tmp.%ld", (long)live);
    EXPECT(access(test_path(dir, name), F_OK) == 0, "a live process's temporary stays");
    kill(live, SIGKILL);
    waitpid(live, NULL, 0);
    EXPECT(atomic_remove_stale(dir, "[test]") == 1, "and goes once the process is gone");
    EXPECT(atomic_remove_stale(test_path(dir, "missing"), "[test]") == 0, "a missing directory");
}

int main(void) {
    char *dir = test_tempdir();
    test_commit(dir);
    test_unwritable(dir);
    test_remove_tree(dir);
    free(dir);
    dir = test_tempdir();
    test_cleanup_at_the_end(dir);
    test_remove_stale(dir);
    test_remove_tree(dir);
    free(dir);
    return test_finish();
}
